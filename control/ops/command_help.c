#include "command_help.h"

#include <stddef.h>
#include <string.h>

const struct xlb_command_help xlb_command_help[] = {
    {"status", "status", "version, uptime, snapshot generation, workers, ports, VIPs"},
    {"vips", "vips",
     "the VIPs: mode, target or cluster, state; a TLS VIP's certificates (subject, SANs, "
     "expiry) and handshakes, resumptions and failures by reason"},
    {"counters", "counters", "packet counters per worker and in total, drops by reason"},
    {"neighbours", "neighbours", "gateways and neighbours: resolution state and MAC"},
    {"xds", "xds", "xDS server, stream state, backoff, ACK/NACK per type, NACK history"},
    {"clusters", "clusters", "clusters the VIPs reach: type, policy, state, endpoint counts"},
    {"endpoints", "endpoints CLUSTER",
     "a cluster's endpoints: priority, locality, address, weight, health, connectivity, "
     "WRR weight"},
    {"simulate",
     "simulate --vip ADDR:PORT [--path P] [--authority A] [--header K=V]... "
     "[--cookie NAME=VALUE] [--n N] [--seed S] [--connection-id C]",
     "run route matching and N picks on the live snapshot: endpoint histogram and the trace "
     "of one pick"},
    {"flows", "flows [--vip ADDR[:PORT]] [--endpoint ADDR[:PORT]] [--limit N]",
     "the workers' NAT flows: client, VIP, SNAT, backend, state, time left"},
    {"flows_flush", "flows flush --endpoint ADDR[:PORT]",
     "end every flow to a backend (its clients see their connections reset by the backend)"},
    {"tcp", "tcp [--limit N]",
     "the workers' TCP endpoint connections, like ss -ti: addresses, state, cwnd, ssthresh, "
     "srtt/rttvar, rto, mss, windows, queues, out-of-order bytes, retransmits, memory"},
    {"config_dump", "config dump",
     "every xDS resource: type, name, state, version, error, and the resource as proto3 JSON"},
    {"metrics", "metrics", "all counters and state in Prometheus text format"},
    {"log", "log [level COMPONENT LEVEL]",
     "log levels per component, or set one (COMPONENT \"all\" sets every xlb component)"},
    {"help", "help [COMMAND]", "the commands, or one command's usage"},
    {NULL, NULL, NULL},
};

const struct xlb_command_help *xlb_command_help_find(const char *name)
{
    for (const struct xlb_command_help *h = xlb_command_help; h->name != NULL; h++)
        if (strcmp(h->name, name) == 0)
            return h;
    return NULL;
}
