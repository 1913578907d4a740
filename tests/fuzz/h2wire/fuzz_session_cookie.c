/*
 * libFuzzer target for session cookies: any value the LB core's decoder accepts, re-encoded
 * by xlb's encoder, decodes again to the same addresses and cluster.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xlb_lb.h"
#include "xlb_session_cookie.h"

static bool same(const struct xlb_lb_session *a, const struct xlb_lb_session *b)
{
    if (a->n_addresses != b->n_addresses || (a->cluster == NULL) != (b->cluster == NULL) ||
        a->cluster_len != b->cluster_len)
        return false;
    for (uint32_t i = 0; i < a->n_addresses; i++)
        if (a->addresses[i].port != b->addresses[i].port ||
            !xlb_addr_equal(&a->addresses[i].addr, &b->addresses[i].addr))
            return false;
    return a->cluster == NULL || memcmp(a->cluster, b->cluster, a->cluster_len) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data,
                           size_t size); /* libFuzzer calls it; no header declares it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char scratch[XLB_LB_COOKIE_MAX], scratch2[XLB_LB_COOKIE_MAX];
    char value[XLB_LB_COOKIE_MAX + 1];
    struct xlb_lb_session first, again;
    if (size > XLB_LB_COOKIE_MAX || xlb_lb_session_decode((const char *)data, (uint32_t)size,
                                                          scratch, sizeof(scratch), &first) != 0)
        return 0;
    uint32_t len = xlb_session_cookie_encode_list(
        value, sizeof(value), first.addresses, first.n_addresses, first.cluster, first.cluster_len);
    if (len == 0 || len > XLB_LB_COOKIE_MAX)
        abort();
    if (xlb_lb_session_decode(value, len, scratch2, sizeof(scratch2), &again) != 0 ||
        !same(&first, &again))
        abort();
    if (first.n_addresses == 1) { /* the one-endpoint form, with a terminated name */
        char cluster[XLB_LB_COOKIE_MAX + 1], one[XLB_LB_COOKIE_MAX + 1];
        if (first.cluster != NULL) {
            memcpy(cluster, first.cluster, first.cluster_len);
            cluster[first.cluster_len] = '\0';
        }
        uint32_t n1 = xlb_session_cookie_encode(one, sizeof(one), &first.addresses[0],
                                                first.cluster ? cluster : NULL);
        if (n1 != len || memcmp(one, value, len) != 0)
            abort();
    }
    return 0;
}
