/*
 * Session cookie values and Set-Cookie text (see xlb_session_cookie.h).
 */
#include <string.h>

#include <openssl/evp.h>

#include "xlb_lb.h"
#include "xlb_session_cookie.h"

/* The longest plain text whose base64 a pick still reads. */
#define TEXT_MAX (XLB_LB_COOKIE_MAX / 4 * 3)

/* "hp[,hp]...[;cluster]" into text; returns its length or 0 when it does not fit. */
static uint32_t plain_text(char *text, const struct xlb_host_port *where, uint32_t n_where,
                           const char *cluster, uint32_t cluster_len)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < n_where; i++) {
        char hp[XLB_HOST_PORT_STRLEN];
        int len = xlb_host_port_format(&where[i], hp, sizeof(hp));
        uint32_t sep = i > 0 ? 1 : 0;
        if (len <= 0 || sep + (uint32_t)len > TEXT_MAX - n)
            return 0;
        if (sep)
            text[n++] = ',';
        memcpy(text + n, hp, (size_t)len);
        n += (uint32_t)len;
    }
    /* An empty name cannot be read back (A60 cookies name a cluster or none). */
    if (cluster == NULL || cluster_len == 0)
        return n;
    if (1 + cluster_len > TEXT_MAX - n)
        return 0;
    text[n++] = ';';
    memcpy(text + n, cluster, cluster_len);
    return n + cluster_len;
}

uint32_t xlb_session_cookie_encode_list(char *out, uint32_t cap, const struct xlb_host_port *where,
                                        uint32_t n_where, const char *cluster, uint32_t cluster_len)
{
    char text[TEXT_MAX];
    uint32_t n = n_where > 0 ? plain_text(text, where, n_where, cluster, cluster_len) : 0;
    uint32_t encoded = (n + 2) / 3 * 4;
    if (n == 0 || encoded >= cap)
        return 0;
    /* EVP_EncodeBlock: standard alphabet, '=' padding, NUL-terminated, no line breaks. */
    return (uint32_t)EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)text, (int)n);
}

uint32_t xlb_session_cookie_encode(char *out, uint32_t cap, const struct xlb_host_port *where,
                                   const char *cluster)
{
    uint32_t cluster_len = cluster ? (uint32_t)strnlen(cluster, TEXT_MAX) : 0;
    return xlb_session_cookie_encode_list(out, cap, where, 1, cluster, cluster_len);
}

/* Append s (n bytes) at *len if it fits with room for a NUL; false when it does not. */
static bool append(char *out, uint32_t cap, uint32_t *len, const char *s, size_t n)
{
    if (n >= cap - *len)
        return false;
    memcpy(out + *len, s, n);
    *len += (uint32_t)n;
    out[*len] = '\0';
    return true;
}

static bool append_str(char *out, uint32_t cap, uint32_t *len, const char *s)
{
    return append(out, cap, len, s, strlen(s));
}

static bool append_uint(char *out, uint32_t cap, uint32_t *len, uint32_t v)
{
    char rev[10];
    char text[10];
    uint32_t n = 0;
    do {
        rev[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (uint32_t i = 0; i < n; i++)
        text[i] = rev[n - 1 - i];
    return append(out, cap, len, text, n);
}

uint32_t xlb_set_cookie_value(char *out, uint32_t cap, const char *name, const char *value,
                              const char *path, uint32_t max_age_s, bool has_max_age)
{
    uint32_t len = 0;
    bool ok = cap > 0 && append_str(out, cap, &len, name) && append_str(out, cap, &len, "=") &&
              append_str(out, cap, &len, value) && append_str(out, cap, &len, "; HttpOnly");
    if (ok && path != NULL)
        ok = append_str(out, cap, &len, "; Path=") && append_str(out, cap, &len, path);
    if (ok && has_max_age)
        ok = append_str(out, cap, &len, "; Max-Age=") && append_uint(out, cap, &len, max_age_s);
    return ok ? len : 0;
}

uint32_t xlb_set_cookie_of_pick(char *out, uint32_t cap, const struct xlb_lb_trace *trace,
                                const struct xlb_lb_vip *vip)
{
    if (trace->session_cookie == NULL || trace->target >= vip->n_targets)
        return 0;
    const struct xlb_lb_endpoint *e = &trace->cluster->endpoints[trace->endpoint];
    const char *cluster = vip->targets[trace->target].name; /* A60: the route's cluster */
    const struct xlb_lb_cookie_attrs *a = trace->session_attrs;
    char value[XLB_LB_COOKIE_MAX + 1];
    if (xlb_session_cookie_encode(value, sizeof(value), &e->where, cluster) == 0)
        return 0;
    return xlb_set_cookie_value(out, cap, trace->session_cookie, value, a != NULL ? a->path : NULL,
                                a != NULL ? a->max_age_s : 0, a != NULL && a->has_max_age);
}
