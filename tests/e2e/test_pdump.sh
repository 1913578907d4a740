#!/usr/bin/env bash
# Packet capture with DPDK's own tool: dpdk-dumpcap attaches to a running xlbd as a secondary
# process (which needs hugepages shared with it) and writes what crosses xlb's port to pcapng.
. "$(dirname "$0")/lib.sh"

command -v dpdk-dumpcap >/dev/null || fail "dpdk-dumpcap is missing (Debian package dpdk-dev)"

# 2 MiB hugepages on a private hugetlbfs mount; the reservation and the mount are undone at exit.
HUGE_BEFORE=$(cat /proc/sys/vm/nr_hugepages)
HUGE_DIR="$E2E_DIR/huge"
restore_hugepages() {
    umount "$HUGE_DIR" 2>/dev/null || true
    echo "$HUGE_BEFORE" >/proc/sys/vm/nr_hugepages
}
E2E_EXTRA_CLEANUP=restore_hugepages
# After a long test run free memory can be too fragmented for 2 MiB pages: compact it first.
[ ! -w /proc/sys/vm/compact_memory ] || echo 1 >/proc/sys/vm/compact_memory
echo $((HUGE_BEFORE + 160)) >/proc/sys/vm/nr_hugepages
mkdir -p "$HUGE_DIR"
mount -t hugetlbfs -o pagesize=2M nodev "$HUGE_DIR" || fail "cannot mount hugetlbfs"
[ "$(grep HugePages_Free /proc/meminfo | awk '{print $2}')" -ge 128 ] ||
    fail "no hugepages available: $(grep -E 'HugePages_(Total|Free)' /proc/meminfo | tr -s ' \n' ' ')"

e2e_setup
e2e_edit_config "
eal = c['xlb']['eal']
eal[eal.index('--no-huge')] = '--huge-dir=$HUGE_DIR'
eal[eal.index('-m') + 1] = '256'  # one worker fits; the 160 pages reserved above hold it"
e2e_start_xlbd
pass "xlbd runs on hugepages"

# A secondary process must map the primary's memory at the same virtual addresses; with
# address-space randomisation (and ASan's shadow memory in the primary) a library of dumpcap's
# can already sit there, and DPDK then refuses to attach. That is DPDK's multi-process limit,
# not xlb's. After such a failure the primary may not answer the next dumpcap's requests, so
# an attach failure, or a dumpcap that timed out without its packets, is retried with a fresh
# xlbd (at most 3 attempts); any other failure fails the test.
capture_once() {
    timeout 40 dpdk-dumpcap --file-prefix="$E2E_PREFIX" -i net_af_packet0 -c 32 -q \
        -w "$E2E_DIR/capture.pcapng" >"$E2E_DIR/dumpcap.log" 2>&1 &
    local dumpcap=$!
    RUN_PIDS+=("$dumpcap")
    # Keep pinging (bounded) until dumpcap has its 32 packets and exits: the first ones may all
    # be xlb resolving its gateways and the VIPs' on-link backends (ARP, ND) after its start.
    for _ in $(seq 1 20); do
        in_client ping -c 2 -i 0.2 -W 1 198.18.0.100 >/dev/null 2>&1 || true
        kill -0 "$dumpcap" 2>/dev/null || break
    done
    wait "$dumpcap"
}
attach_failed() {
    grep -qiE "mmap|attach|address|secondary|memory" <"$E2E_DIR/dumpcap.log"
}
rc=1
for attempt in 1 2 3; do
    rc=0
    capture_once || rc=$?
    [ $rc -eq 0 ] && break
    attach_failed || [ $rc -eq 124 ] || break
    echo "# dumpcap attempt $attempt failed (exit $rc: $(tail -n 1 "$E2E_DIR/dumpcap.log")); again with a fresh xlbd"
    e2e_stop_xlbd
    e2e_start_xlbd
done
[ $rc -eq 0 ] || { cat "$E2E_DIR/dumpcap.log"; fail "dpdk-dumpcap exited with $rc"; }

python3 - "$E2E_DIR/capture.pcapng" <<'PY' || fail "capture contents"
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"\x0a\x0d\x0d\x0a", "not pcapng"
packets, offset = [], 0
while offset + 12 <= len(data):
    kind, length = struct.unpack_from("<II", data, offset)
    if kind == 6:  # enhanced packet block
        captured = struct.unpack_from("<I", data, offset + 20)[0]
        packets.append(data[offset + 28: offset + 28 + captured])
    offset += length
assert len(packets) >= 32, len(packets)
def icmp_type(frame):
    if frame[12:14] != b"\x08\x00" or frame[23] != 1:
        return None
    return frame[14 + (frame[14] & 15) * 4]
types = [icmp_type(p) for p in packets]
assert 8 in types and 0 in types, types  # requests in, xlb's replies out
print("captured", len(packets), "packets, ICMP types", types)
PY
pass "dpdk-dumpcap captured the echo requests and xlb's replies"

e2e_stop_xlbd
pass "clean exit"
