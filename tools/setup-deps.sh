#!/usr/bin/env bash
# Install the Debian 12 packages xlb builds, runs and tests with, when any is missing, with apt.
# This script installs Debian packages only. The interop tests' peers (@grpc/grpc-js and
# @grpc/grpc-js-xds) come from npm: tests/interop/install.sh installs them with `npm ci` from
# the pinned package-lock.json when the interop tests run (and Debian's nodejs and npm first,
# when missing). Safe to run again: it does nothing when all are present.
set -euo pipefail

PACKAGES=(
    # build
    build-essential meson ninja-build pkg-config
    libdpdk-dev libpcap-dev libelf-dev protobuf-c-compiler libprotobuf-c-dev libnghttp2-dev
    libssl-dev libcjson-dev libcmocka-dev libxxhash-dev libpcre2-dev
    # run and test: DPDK tools, network namespaces, real kernel peers; gRPC peers
    # (tools/lib/grpc_backend.py, grpc_client.py) run on Debian's /usr/bin/python3
    dpdk dpdk-dev iproute2 iputils-ping iputils-arping ethtool procps python3 nghttp2-client
    nghttp2-server curl netcat-openbsd python3-grpcio
    # loss on the test paths (tests/e2e/test_tcp_relay_bulk.sh: nft numgen random drops)
    nftables
    # scale-out with a real BGP speaker (tests/e2e/test_bgp_scale_out.sh)
    bird2
    # benchmarks: the L7 comparison (tools/bench/l7_vs_haproxy.sh)
    haproxy
    # sanitizers and fuzzing
    clang libclang-rt-14-dev
    # the format and static-analysis checks (tools/check-format.sh, tools/check-static.sh)
    clang-format cppcheck
)

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "setup-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
