#!/usr/bin/env bash
# The demo topology: xlbd answers ARP, ND and pings for its VIPs, resolves its gateways,
# reports what it did, and stops cleanly on SIGTERM.
. "$(dirname "$0")/lib.sh"

e2e_setup
e2e_start_xlbd
pass "xlbd started and resolved both gateways"

in_client ping -c 3 -i 0.2 -W 2 198.18.0.100 >/dev/null || fail "IPv4 ping to the VIP"
pass "ping 198.18.0.100"
in_client ping -6 -c 3 -i 0.2 -W 2 2001:2::100 >/dev/null || fail "IPv6 ping to the VIP"
pass "ping -6 2001:2::100"
arping_out=$(in_client arping -c 2 -w 4 -I eth0 198.18.0.100 || true)
grep -q "reply from 198.18.0.100" <<<"$arping_out" || fail "arping to the VIP: $arping_out"
pass "arping 198.18.0.100"
in_client ping -c 1 -W 2 198.18.0.10 >/dev/null || fail "ping to the port address"
pass "ping 198.18.0.10 (port address)"
if in_client ping -c 1 -W 1 198.18.0.99 >/dev/null 2>&1; then
    fail "an address xlb does not own answered"
fi
pass "an address xlb does not own stays silent"

# The client's kernel learned the VIP at xlb's port MAC.
port_mac=$(xlbctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["ports"][0]["mac"].lower())')
neigh=$(in_client ip neigh show 198.18.0.100)
grep -qi "$port_mac" <<<"$neigh" || fail "client's neighbour entry is not xlb's MAC"
pass "client resolved the VIP to $port_mac"

[ "$(counter events.icmp_echo_replies)" -ge 7 ] || fail "echo replies not counted"
[ "$(counter events.arp_replies)" -ge 2 ] || fail "ARP replies not counted"
[ "$(counter events.nd_advertisements)" -ge 1 ] || fail "ND advertisements not counted"
pass "counters show the replies"

status=$(xlbctl status)
grep -q "snapshot generation" <<<"$status" || fail "status output"
grep -Eq "net_af_packet0 +[0-9]+ +up" <<<"$status" || fail "port link not up in status"
xlbctl --json status | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["generation"] >= 2, s["generation"]          # gateways resolved: republished
w = s["workers"][0]
assert w["generation"] == s["generation"], w          # the worker runs the latest generation
assert w["last_quiescent_ms_ago"] is not None and w["last_quiescent_ms_ago"] < 5000, w
assert w["stalled"] is False and w["stalls"] == 0, w   # issue 21: a live worker is no stall
assert s["retired_snapshots"]["waiting_for_stalled"] == 0, s["retired_snapshots"]
assert [v["summary"] for v in s["vips"]] == ["serving gen 1"] * 4, s["vips"]  # static resources
' || fail "status JSON"
pass "status: worker observes the published generation"

e2e_stop_xlbd
pass "SIGTERM: clean exit 0, socket removed"
