/*
 * The bootstrap file: gRPC's xDS bootstrap (xds_servers, node) plus xlb's own "xlb" section.
 * Reading never stops at the first problem: every problem becomes one "json.path: reason" line.
 * A key the xlb section does not know is one of them; gRPC's part ignores unknown fields.
 */
#ifndef XLB_BOOTSTRAP_H
#define XLB_BOOTSTRAP_H

#include <stdbool.h>
#include <sys/types.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "config_keys.h"
#include "json_read.h"
#include "xlb_addr.h"
#include "xlb_host_port.h"
#include "xlb_limits.h"

#define XLB_DEFAULT_CONTROL_SOCKET "/run/xlb/xlbd.sock"
/* xlb.mbuf_pool_size not given: xlbd sizes the pool (apps/xlbd/capacity.h). */
#define XLB_MBUF_POOL_AUTO           0
#define XLB_DEFAULT_FLOWS_PER_WORKER 65536
/* TCP endpoint connections per worker: a terminated connection takes two (client and backend
 * side), and a closed backend side stays in TIME-WAIT for 2 s. */
#define XLB_DEFAULT_TCP_CONNECTIONS_PER_WORKER 4096
#define XLB_L7_CONNECTIONS_AUTO                UINT32_MAX
#define XLB_MSS_CLAMP_AUTO                     UINT16_MAX /* no limit beyond the ports' MTUs */
#define XLB_MSS_CLAMP_OFF                      0
#define XLB_DEFAULT_MAX_SERIES                 10000
#define XLB_DEFAULT_CONTROL_IDLE_MS            300000 /* 5 min: control socket and metrics clients */
#define XLB_SOCKET_PATH_MAX                    107    /* sizeof(sun_path) - 1 */

enum xlb_channel_creds { XLB_CREDS_INSECURE, XLB_CREDS_TLS };

struct xlb_xds_server_config {
    char *server_uri;
    enum xlb_channel_creds creds;
    char *ca_certificate_file; /* tls only */
    char *certificate_file;    /* tls only, with private_key_file for mTLS */
    char *private_key_file;
    bool ignore_resource_deletion;
};

struct xlb_node_config {
    char *id;
    char *cluster;
    char *region, *zone, *sub_zone;
    cJSON *metadata; /* owned copy, or NULL */
};

/* The largest MTU xlb's mbufs take without chaining: their 2,048-byte data room less an
 * Ethernet header and two VLAN tags. Jumbo frames are not supported. */
#define XLB_PORT_MTU_MAX 2026

struct xlb_port_config {
    char name[XLB_PORT_NAME_MAX + 1];
    uint16_t mtu; /* 0: the device's default (1500) */
    unsigned n_addresses;
    struct xlb_prefix addresses[XLB_MAX_PORT_PREFIXES];
    unsigned n_gateways;
    struct xlb_addr gateways[XLB_MAX_GATEWAYS];
};

/* A certificate_providers instance (gRPC A29), plugin file_watcher: PEM files re-read every
 * refresh_interval. certificate_file and private_key_file come together; either pair or the CA
 * may be absent, not both. */
#define XLB_MAX_CERT_PROVIDERS      64
#define XLB_DEFAULT_CERT_REFRESH_MS 600000 /* A29's default, 10 minutes */
struct xlb_cert_provider_config {
    char *name;
    char *certificate_file, *private_key_file, *ca_certificate_file; /* NULL: absent */
    unsigned refresh_interval_ms;
};

/* A VIP's "tls" (docs/tls.md); certificate_provider NULL: cleartext. ALPN is always "h2": a
 * client that does not offer it gets a no_application_protocol alert. */
#define XLB_VIP_SNI_MAX 7 /* certificates beside the default, chosen by the client's SNI */
struct xlb_vip_tls_config {
    char *certificate_provider; /* the default certificate */
    unsigned n_sni;
    char *sni_certificate_providers[XLB_VIP_SNI_MAX];
    bool require_client_certificate;
    unsigned index; /* among the TLS VIPs, in order: where workers count its handshakes */
};

struct xlb_vip_config {
    struct xlb_addr address;
    uint16_t port;
    char *target;   /* L7: an xds: URI naming the LDS resource */
    char *cluster;  /* L4: a cluster name */
    bool terminate; /* L4: "l4_mode": "terminate" (xlb's own TCP on both sides), else full NAT */
    bool newreno;   /* "congestion_control": "newreno" (terminate only), else CUBIC */
    bool stream;    /* L7: "l7_mode": "stream" (each request balanced), else splice */
    struct xlb_vip_tls_config tls;
};

struct xlb_bootstrap {
    unsigned n_xds_servers;
    struct xlb_xds_server_config *xds_servers;
    struct xlb_node_config node;
    unsigned n_cert_providers;
    struct xlb_cert_provider_config *cert_providers;

    unsigned n_eal_args;
    char **eal_args;
    unsigned workers;
    char control_socket[XLB_SOCKET_PATH_MAX + 1];
    unsigned worker_idle_sleep_us;
    /* A worker that reports no quiescent state for this long is stalled (lib/xlb_stall.h). */
    unsigned worker_stall_ms;
    unsigned mbuf_pool_size;
    unsigned n_ports;
    struct xlb_port_config ports[XLB_MAX_PORTS];
    unsigned n_snat;
    struct xlb_addr *snat;
    uint32_t flows_per_worker;              /* NAT flow table entries per worker */
    uint32_t tcp_connections_per_worker;    /* the TCP endpoint's pool (terminated VIPs) */
    uint32_t stream_max_concurrent_streams; /* stream VIPs: SETTINGS_MAX_CONCURRENT_STREAMS */
    uint32_t stream_window_bytes;           /* stream VIPs: the per-stream window to clients */
    /* stream VIPs, per worker: RPCs per client connection in the RPC pool, RPCs waiting for a
     * READY subchannel, RPCs kept for a transparent retry and the DATA each keeps, and
     * subchannels per endpoint (dataplane/stream/stream.h) */
    uint32_t stream_rpcs_per_connection, stream_waiting_rpcs;
    uint32_t stream_retry_buffers, stream_retry_buffer_bytes;
    uint32_t stream_subchannels_per_endpoint;
    uint32_t drain_seconds; /* SIGTERM: how long stream-mode clients may take to finish */
    /* HTTP/2 (L7) connections per worker; XLB_L7_CONNECTIONS_AUTO: when a VIP has a target, a
     * default xlbd sizes from the EAL memory (apps/xlbd/capacity.h), else none. */
    uint32_t l7_connections_per_worker;
    bool aggregate_cluster_backward_compat; /* pre-A75 aggregate clusters */
    /* The largest MSS a forwarded SYN or SYN-ACK may offer: XLB_MSS_CLAMP_AUTO (what the
     * ports' MTUs carry), a lower number, or XLB_MSS_CLAMP_OFF (offers left alone). */
    uint16_t tcp_mss_clamp;
    /* L4 VIPs answer SYNs with SYN cookies and open backend connections only for clients that
     * complete the handshake (off by default; docs/forwarding.md "SYN proxy"). */
    uint8_t l4_syn_proxy;          /* enum xlb_syn_proxy_mode */
    unsigned l4_syn_proxy_percent; /* "auto": the half-open pool's share that turns it on */
    /* xlb.connection_hash_key: ring hash's connection hash keyed with it (SipHash-2-4), the
     * same on every host given it; absent: the unkeyed CRC. */
    bool connection_hash_keyed;
    uint64_t connection_hash_key[2];
    unsigned n_vips;
    struct xlb_vip_config *vips;
    unsigned n_vip6_addresses;           /* distinct IPv6 VIP addresses among them */
    cJSON *static_resources;             /* owned copy, or NULL; parsed by the xDS layer */
    bool metrics_enabled;                /* serve /metrics over HTTP on metrics_listen */
    struct xlb_host_port metrics_listen; /* a loopback address */
    bool control_socket_has_group;       /* control_socket_group given */
    gid_t control_socket_group;          /* may connect and change state */
    unsigned control_idle_timeout_ms;    /* control socket and metrics clients */
    unsigned metrics_max_series;         /* per-entity series cap (neighbours, endpoints) */
};

/* The xlb section's objects and their keys, as the parser reads them (config_keys.h): the
 * section, xlb.ports[], xlb.vips[], xlb.static_resources. NULL-terminated. */
extern const struct xlb_config_object xlb_bootstrap_section_object;
extern const struct xlb_config_object xlb_bootstrap_port_object;
extern const struct xlb_config_object xlb_bootstrap_vip_object;
extern const struct xlb_config_object xlb_bootstrap_static_resources_object;
extern const struct xlb_config_object xlb_bootstrap_vip_tls_object;
extern const struct xlb_config_object *const xlb_bootstrap_objects[];

/* Parse a document; 0 when it is valid, -1 with errs filled otherwise. *out is always freeable. */
int xlb_bootstrap_parse(const char *text, struct xlb_bootstrap *out, struct xlb_errors *errs);
/* Read and parse a file; a read error is reported as "FILE: reason". */
int xlb_bootstrap_load(const char *path, struct xlb_bootstrap *out, struct xlb_errors *errs);
void xlb_bootstrap_free(struct xlb_bootstrap *bootstrap);

/* The certificate_providers instance called name, or NULL. */
const struct xlb_cert_provider_config *xlb_bootstrap_cert_provider(const struct xlb_bootstrap *b,
                                                                   const char *name);
/* How many VIPs have "tls". */
unsigned xlb_bootstrap_tls_vips(const struct xlb_bootstrap *b);

#endif
