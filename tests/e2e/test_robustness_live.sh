#!/usr/bin/env bash
# A million hostile frames into a live xlbd: it keeps answering, counts them as drops by
# reason, and still stops cleanly.
. "$(dirname "$0")/lib.sh"

e2e_setup
e2e_start_xlbd
port_mac=$(xlbctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["ports"][0]["mac"])')
rx_before=$(counter rx_packets)

# Frames lost in a full veth or af_packet queue never reach the worker, so inject in paced
# rounds until xlbd has received a million of them (bounded: at most 8 rounds).
settled() {
    local a b
    a=$(counter rx_packets); sleep 0.3; b=$(counter rx_packets)
    [ "$a" = "$b" ]
}
rx=0
for round in $(seq 1 8); do
    in_client timeout 120 "$E2E_BUILD/tools/hostile/xlb-hostile-frames" --iface eth0 \
        --dst-mac "$port_mac" --vip4 198.18.0.100 --src4 198.18.0.2 --count 400000 \
        --pps 150000 --seed "$round" || fail "injector"
    wait_until 40 0.2 settled || fail "xlbd did not settle"
    rx=$(( $(counter rx_packets) - rx_before ))
    [ "$rx" -lt 1000000 ] || break
done
[ "$rx" -ge 1000000 ] || fail "only $rx hostile frames reached xlbd"
pass "xlbd received $rx hostile frames"

in_client ping -c 3 -i 0.2 -W 2 198.18.0.100 >/dev/null || fail "VIP stopped answering"
xlbctl status >/dev/null || fail "control socket stopped answering"
pass "still answering ping and xlbctl"

xlbctl --json counters | python3 -c '
import json, sys
t = json.load(sys.stdin)["total"]
drops = sum(t["drops"].values())
assert drops > 500000, drops
nonzero = [k for k, v in t["drops"].items() if v]
assert len(nonzero) >= 8, nonzero   # many different reasons were exercised
print("drop reasons seen:", ", ".join(sorted(nonzero)))
' || fail "drop counters"
pass "drops counted by reason"

e2e_stop_xlbd
pass "clean exit after the flood"
