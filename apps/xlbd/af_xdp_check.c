/*
 * xlbd --check for af_xdp ports. DPDK's own messages for a missing interface come from deep in
 * the vdev probe ("Failed to get interface index"), after EAL has started; this names the
 * argument and the interface at --check time. Only what libc can tell is checked: the
 * interface's existence is a fact of the namespace --check runs in, which is the one xlbd
 * will run in when both are started the same way.
 */
#include "af_xdp_check.h"

#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AF_XDP_DRIVER "net_af_xdp"

/* The value of KEY= in a vdev's comma-separated options, copied into out; 0 when absent. */
static int vdev_option(const char *options, const char *key, char *out, size_t len)
{
    size_t key_len = strlen(key);
    for (const char *p = options; p != NULL && *p != '\0';) {
        const char *end = strchr(p, ',');
        size_t item_len = end ? (size_t)(end - p) : strlen(p);
        if (item_len > key_len && strncmp(p, key, key_len) == 0 && p[key_len] == '=') {
            size_t value_len = item_len - key_len - 1;
            if (value_len >= len)
                value_len = len - 1;
            memcpy(out, p + key_len + 1, value_len);
            out[value_len] = '\0';
            return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

const char *xlbd_af_xdp_problem(const char *arg, unsigned workers, char *buf, size_t len)
{
    const char *vdev = strncmp(arg, "--vdev=", 7) == 0 ? arg + 7 : arg;
    if (strncmp(vdev, AF_XDP_DRIVER, strlen(AF_XDP_DRIVER)) != 0)
        return NULL;
    const char *comma = strchr(vdev, ',');
    int name_len = comma ? (int)(comma - vdev) : (int)strlen(vdev);
    char iface[IF_NAMESIZE + 1];
    if (comma == NULL || !vdev_option(comma + 1, "iface", iface, sizeof(iface))) {
        snprintf(buf, len, "%.*s: no iface= (the interface whose queues xlb takes)", name_len,
                 vdev);
        return buf;
    }
    if (strlen(iface) >= IF_NAMESIZE || if_nametoindex(iface) == 0) {
        snprintf(buf, len, "%.*s: interface %s does not exist in this network namespace", name_len,
                 vdev, iface);
        return buf;
    }
    char count[16];
    unsigned long queues = 1; /* the driver's default */
    if (vdev_option(comma + 1, "queue_count", count, sizeof(count)))
        queues = strtoul(count, NULL, 10);
    if (queues < workers) {
        snprintf(buf, len, "%.*s: queue_count=%lu but %u workers need a queue each", name_len, vdev,
                 queues, workers);
        return buf;
    }
    return NULL;
}
