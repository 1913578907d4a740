#!/usr/bin/env python3
"""The config churn test's driver (test_xds_churn.sh): one process, run in the management
server's namespace, that builds each round's resources, PUTs them to the server's control port
and waits for xlbd to ACK them. It reads one command a line on stdin and answers one line:

    push ROUND [withhold]   PUT that round's configuration (withhold: the new cluster's
                            assignment held back); "ok", or "error ..."
    acked SECONDS           wait until xlbd's ADS stream has ACKed every type at the version
                            last sent, with no NACK; "ok", or "nack ..." / "timeout ..."

Usage: churn_driver.py CONTROL_PORT PAD NODE_ID
"""
import json
import sys
import time
import urllib.request

PORT, PAD, NODE = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]


def resources(rnd, pad, withhold):
    t = "type.googleapis.com/envoy."
    # Make before break, as a management server should: the next cluster is added a round before
    # the route moves to it (round 10k), the old one is removed a round after. Every twentieth
    # round is a single push instead: the new cluster and the route that moves to it come
    # together, and the new cluster's assignment is held back (WITHHOLD) until the test has seen
    # xlb keep serving the last complete configuration (A74: the VIP "stale").
    def name(k):  # a new name for each cluster: none comes back with what xlb knew of it before
        return "echo-%d" % k
    cluster = name(rnd // 10)
    clusters = [cluster]
    if rnd % 10 == 9 and (rnd + 1) % 20 != 0:
        clusters.append(name(rnd // 10 + 1))
    if rnd % 10 == 0 and rnd > 0:
        clusters.append(name(rnd // 10 - 1))
    hcm = {"@type": t + "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
           "rds": {"route_config_name": "l7-routes", "config_source": {"ads": {}}},
           "http_filters": [{"name": "router", "typed_config":
                             {"@type": t + "extensions.filters.http.router.v3.Router"}}]}
    def ep(address, weight, health=None, port=50051):
        e = {"endpoint": {"address": {"socket_address": {"address": address, "port_value": port}}},
             "load_balancing_weight": weight}
        if health:
            e["health_status"] = health
        return e
    def live_endpoints(port):
        live = [ep("198.18.0.21", 1 + rnd % 7, port=port)]
        if rnd % 3 != 1:
            live.append(ep("198.18.0.22", 1 + (rnd * 5) % 11, "DRAINING" if rnd % 6 == 5 else None,
                           port=port))
        if rnd % 4 >= 2:
            live.append(ep("198.18.0.23", 1 + (rnd * 3) % 13, port=port))
        return live
    live = live_endpoints(50051)
    # Never picked (DRAINING), a different set each round: each snapshot is a new compile.
    draining = [ep("198.18.%d.%d" % (100 + (i + rnd) // 250, 1 + (i + rnd) % 250), 1, "DRAINING")
                for i in range(pad)]
    res = [{"@type": t + "config.listener.v3.Listener", "name": "l7",
            "api_listener": {"api_listener": hcm}},
           {"@type": t + "config.route.v3.RouteConfiguration", "name": "l7-routes",
            "virtual_hosts": [{"name": "echo", "domains": ["*"], "routes": [
                {"match": {"prefix": "/"}, "route": {"cluster": cluster}}]}]}
           ] + [{"@type": t + "config.cluster.v3.Cluster", "name": n, "type": "EDS",
                 "eds_cluster_config": {"eds_config": {"ads": {}}}} for n in clusters
           ] + [{"@type": t + "config.endpoint.v3.ClusterLoadAssignment", "cluster_name": n,
                 "endpoints": [{"locality": {"zone": "a"}, "load_balancing_weight": 1,
                                "lb_endpoints": live + draining}]} for n in clusters
                 if not (withhold and n == cluster)
           ] + [{"@type": t + "config.cluster.v3.Cluster", "name": "l4", "type": "EDS",
                 "eds_cluster_config": {"eds_config": {"ads": {}}}},
                {"@type": t + "config.endpoint.v3.ClusterLoadAssignment", "cluster_name": "l4",
                 "endpoints": [{"locality": {"zone": "a"}, "load_balancing_weight": 1,
                                "lb_endpoints": live_endpoints(9001)}]}]
    return {"resources": res}


def control(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (PORT, path), method=method, data=data,
                                 headers={"content-type": "application/json"})
    return urllib.request.urlopen(req, timeout=5).read().decode()


def ack_state():
    """(acked, problem): whether every type is ACKed at the version last sent, else why not."""
    streams = [s for s in json.loads(control("GET", "/streams?kind=ads"))["streams"]
               if s["node_id"] == NODE]
    if len(streams) != 1:
        return False, "%d ADS streams from %s" % (len(streams), NODE)
    for type_url, st in streams[0]["subscriptions"].items():
        if st["last_nack"] is not None:
            return False, "nack %s: %s" % (type_url, st["last_nack"])
        if st["acked_version"] != st["last_sent_version"]:
            return False, "%s: acked %s, sent %s" % (type_url, st["acked_version"],
                                                     st["last_sent_version"])
    return True, ""


def wait_acked(seconds):
    deadline = time.monotonic() + seconds
    while True:
        acked, problem = ack_state()
        if acked:
            return "ok"
        if problem.startswith("nack") or time.monotonic() >= deadline:
            return problem if problem.startswith("nack") else "timeout: " + problem
        time.sleep(0.02)


def answer(words):
    if words[0] == "push":
        control("PUT", "/resources", resources(int(words[1]), PAD, words[2:] == ["withhold"]))
        return "ok"
    if words[0] == "acked":
        return wait_acked(float(words[1]))
    return "error: unknown command " + words[0]


for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    try:
        reply = answer(words)
    except Exception as e:  # one line back, whatever went wrong: the test prints it
        reply = "error: %s" % e
    print(reply.replace("\n", " "), flush=True)
