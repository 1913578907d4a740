# Test topology in network namespaces, for the demo and the end-to-end tests (source this file).
#
#   PREFIX-sw      a switch: bridge br0, which is also the gateway 198.18.0.1 / 2001:2::1
#   PREFIX-client  198.18.0.2    2001:2::2
#   PREFIX-beN     198.18.0.2N   2001:2::2N   (N = 1..BACKENDS)
#   PREFIX-lb      no kernel addresses: xlbd owns eth0 through DPDK's af_packet driver
#
# Only 198.18.0.0/15 and 2001:2::/48 addresses are used. Everything lives inside namespaces
# this file creates, so removing the namespaces removes every link as well.

TOPO_GATEWAY4=198.18.0.1
TOPO_GATEWAY6=2001:2::1
TOPO_CLIENT4=198.18.0.2
TOPO_CLIENT6=2001:2::2

topo_offloads_off() { # NS IFACE: af_packet needs complete checksums on every frame
    ip netns exec "$1" ethtool -K "$2" rx off tx off tso off gso off gro off >/dev/null 2>&1 || true
}

topo_add_host() { # PREFIX NAME [ADDR4 ADDR6]
    local p=$1 name=$2 ns="$1-$2"
    ip netns add "$ns"
    ip -n "$p-sw" link add "v-$name" type veth peer name eth0 netns "$ns"
    ip -n "$p-sw" link set "v-$name" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    topo_offloads_off "$p-sw" "v-$name"
    topo_offloads_off "$ns" eth0
    if [ -n "${3:-}" ]; then
        ip -n "$ns" addr add "$3/24" dev eth0
        ip -n "$ns" -6 addr add "$4/64" dev eth0 nodad
        ip -n "$ns" route add default via "$TOPO_GATEWAY4"
        ip -n "$ns" -6 route add default via "$TOPO_GATEWAY6"
    fi
}

topo_create() { # PREFIX [BACKENDS=3]
    local p=$1 backends=${2:-3}
    ip netns add "$p-sw"
    ip -n "$p-sw" link add br0 type bridge
    # No MLD snooping: neighbour solicitations to solicited-node groups must reach xlb.
    ip -n "$p-sw" link set br0 type bridge mcast_snooping 0
    # A plain switch: where br_netfilter is loaded, bridged IP frames would otherwise go
    # through the host's iptables, which discards malformed ones before xlb sees them.
    for family in iptables ip6tables arptables; do
        ip netns exec "$p-sw" sysctl -qw "net.bridge.bridge-nf-call-$family=0" 2>/dev/null || true
    done
    ip -n "$p-sw" link set lo up
    ip -n "$p-sw" link set br0 up
    ip -n "$p-sw" addr add "$TOPO_GATEWAY4/24" dev br0
    ip -n "$p-sw" -6 addr add "$TOPO_GATEWAY6/64" dev br0 nodad
    topo_add_host "$p" client "$TOPO_CLIENT4" "$TOPO_CLIENT6"
    for i in $(seq 1 "$backends"); do
        topo_add_host "$p" "be$i" "198.18.0.2$i" "2001:2::2$i"
    done
    topo_add_host "$p" lb
    # The kernel must not answer for anything on xlb's port: no addresses, no IPv6 at all.
    ip netns exec "$p-lb" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1
}

topo_destroy() { # PREFIX
    local p=$1 ns
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^$p-[a-z0-9-]+$"); do
        ip netns del "$ns" 2>/dev/null || true
    done
}
