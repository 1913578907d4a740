#include "tls_watch.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "xlb_log.h"

static const char *const h2_only[] = {"h2"};

/* A VIP's server: its provider's pair, ALPN h2, mTLS as asked, the current keys. */
static struct xlb_tls_server *build_server(const struct xlb_bootstrap *b,
                                           const struct xlb_vip_config *vip,
                                           const struct xlb_tls_ticket_keys *keys, char *err,
                                           size_t errlen)
{
    const struct xlb_cert_provider_config *p =
        xlb_bootstrap_cert_provider(b, vip->tls.certificate_provider);
    struct xlb_tls_server_config cfg = {
        .n_certs = 1,
        .ca_certificate_file = p->ca_certificate_file,
        .require_client_certificate = vip->tls.require_client_certificate,
        .n_alpn = 1,
        .ticket_keys = *keys,
    };
    cfg.certs[0].certificate_file = p->certificate_file;
    cfg.certs[0].private_key_file = p->private_key_file;
    for (unsigned i = 0; i < vip->tls.n_sni && cfg.n_certs < XLB_TLS_MAX_CERTS; i++) {
        const struct xlb_cert_provider_config *more =
            xlb_bootstrap_cert_provider(b, vip->tls.sni_certificate_providers[i]);
        cfg.certs[cfg.n_certs].certificate_file = more->certificate_file;
        cfg.certs[cfg.n_certs].private_key_file = more->private_key_file;
        cfg.n_certs++;
    }
    cfg.alpn[0] = h2_only[0];
    struct xlb_tls_server *srv = xlb_tls_server_create(&cfg, err, errlen);
    OPENSSL_cleanse(&cfg.ticket_keys, sizeof(cfg.ticket_keys));
    return srv;
}

/* What a file looks like, folded into h (FNV-1a over its identity, size and change time). */
static uint64_t stamp_file(uint64_t h, const char *path)
{
    struct stat st;
    uint64_t parts[5] = {0};
    if (path != NULL && stat(path, &st) == 0) {
        parts[0] = (uint64_t)st.st_dev;
        parts[1] = (uint64_t)st.st_ino;
        parts[2] = (uint64_t)st.st_size;
        parts[3] = (uint64_t)st.st_mtim.tv_sec;
        parts[4] = (uint64_t)st.st_mtim.tv_nsec;
    }
    const uint8_t *bytes = (const uint8_t *)parts;
    for (size_t i = 0; i < sizeof(parts); i++)
        h = (h ^ bytes[i]) * 1099511628211ull;
    return h;
}

/* Every certificate_providers instance's files: the VIPs' servers and the clusters' upstream
 * TLS (which the LB trees read) both come from them. */
static uint64_t stamp_files(const struct xlb_bootstrap *b)
{
    uint64_t h = 14695981039346656037ull;
    for (unsigned i = 0; i < b->n_cert_providers; i++) {
        const struct xlb_cert_provider_config *p = &b->cert_providers[i];
        h = stamp_file(h, p->certificate_file);
        h = stamp_file(h, p->private_key_file);
        h = stamp_file(h, p->ca_certificate_file);
    }
    return h;
}

/* The shortest refresh_interval of the instances; 0 when there is none. */
static uint64_t look_interval_ms(const struct xlb_bootstrap *b)
{
    uint64_t ms = 0;
    for (unsigned i = 0; i < b->n_cert_providers; i++)
        if (ms == 0 || b->cert_providers[i].refresh_interval_ms < ms)
            ms = b->cert_providers[i].refresh_interval_ms;
    return ms;
}

int xlb_tls_set_build(struct xlb_tls_set *set, const struct xlb_bootstrap *b,
                      const struct xlb_tls_ticket_keys *keys, struct xlb_errors *errs)
{
    memset(set, 0, sizeof(*set));
    /* Stamped before reading: a file changed while it is read is read again next time. */
    set->files_stamp = stamp_files(b);
    int rc = 0;
    for (unsigned v = 0; v < b->n_vips; v++) {
        const struct xlb_vip_config *vip = &b->vips[v];
        if (vip->tls.certificate_provider == NULL)
            continue;
        char err[384], path[64];
        struct xlb_tls_server *srv = build_server(b, vip, keys, err, sizeof(err));
        if (srv == NULL) {
            snprintf(path, sizeof(path), "xlb.vips[%u].tls", v);
            xlb_errors_add(errs, path, "certificate_providers.%s: %s",
                           vip->tls.certificate_provider, err);
            rc = -1;
            continue;
        }
        set->servers[vip->tls.index] = srv;
        set->n = vip->tls.index + 1;
    }
    if (rc != 0)
        xlb_tls_set_free(set);
    return rc;
}

void xlb_tls_set_free(struct xlb_tls_set *set)
{
    for (unsigned i = 0; i < set->n; i++)
        xlb_tls_server_unref(set->servers[i]);
    memset(set, 0, sizeof(*set));
}

int xlb_tls_check(const struct xlb_bootstrap *b, struct xlb_errors *errs)
{
    struct xlb_tls_ticket_keys keys = {0};
    struct xlb_tls_set set;
    if (xlb_bootstrap_tls_vips(b) == 0)
        return 0;
    if (xlb_tls_ticket_keys_rotate(&keys) != 0) {
        xlb_errors_add(errs, "certificate_providers", "no random bytes for ticket keys");
        return -1;
    }
    int rc = xlb_tls_set_build(&set, b, &keys, errs);
    xlb_tls_set_free(&set);
    OPENSSL_cleanse(&keys, sizeof(keys));
    return rc;
}

int xlb_tls_watch_init(struct xlb_tls_watch *w, const struct xlb_bootstrap *b, uint64_t now_ms,
                       struct xlb_errors *errs)
{
    memset(w, 0, sizeof(*w));
    if (xlb_tls_ticket_keys_rotate(&w->keys) != 0) {
        xlb_errors_add(errs, "certificate_providers", "no random bytes for ticket keys");
        return -1;
    }
    w->keys_rotated_ms = now_ms;
    w->next_look_ms = now_ms + look_interval_ms(b);
    w->seen_stamp = stamp_files(b);
    return xlb_tls_set_build(&w->current, b, &w->keys, errs);
}

static void retire(struct xlb_tls_watch *w, struct xlb_tls_server *srv, uint64_t now_ms)
{
    if (srv == NULL)
        return;
    if (w->n_retired == XLB_TLS_RETIRED_MAX) {
        /* Rebuilt more often than handshakes last: the oldest goes first. */
        xlb_tls_server_unref(w->retired[0].server);
        memmove(&w->retired[0], &w->retired[1], (w->n_retired - 1) * sizeof(w->retired[0]));
        w->n_retired--;
    }
    w->retired[w->n_retired].server = srv;
    w->retired[w->n_retired].free_at_ms = now_ms + XLB_TLS_RETIRE_MS;
    w->n_retired++;
}

void xlb_tls_watch_install(struct xlb_tls_watch *w, struct xlb_tls_set *set, uint64_t now_ms)
{
    for (unsigned i = 0; i < w->current.n; i++)
        retire(w, w->current.servers[i], now_ms);
    w->current = *set;
    memset(set, 0, sizeof(*set));
    w->failed_stamp = 0;
}

static void free_retired(struct xlb_tls_watch *w, uint64_t now_ms)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < w->n_retired; i++) {
        if (w->retired[i].free_at_ms <= now_ms)
            xlb_tls_server_unref(w->retired[i].server);
        else
            w->retired[kept++] = w->retired[i];
    }
    w->n_retired = kept;
}

/* Build again from the files; the previous set keeps serving when this one fails. */
static bool rebuild(struct xlb_tls_watch *w, const struct xlb_bootstrap *b, uint64_t now_ms,
                    const char *why)
{
    struct xlb_errors errs = {0};
    struct xlb_tls_set set;
    bool ok = xlb_tls_set_build(&set, b, &w->keys, &errs) == 0;
    if (ok) {
        xlb_tls_watch_install(w, &set, now_ms);
        w->builds++;
        XLB_LOG(NOTICE, CONTROL, "TLS: %s: new handshakes use the servers built now", why);
    } else {
        w->failures++;
        w->failed_stamp = set.files_stamp != 0 ? set.files_stamp : stamp_files(b);
        snprintf(w->last_error, sizeof(w->last_error), "%s",
                 errs.n > 0 ? errs.lines[0] : "unknown");
        for (unsigned i = 0; i < errs.n; i++)
            XLB_LOG(ERR, CONTROL, "TLS: %s: keeping the previous certificates: %s", why,
                    errs.lines[i]);
    }
    xlb_errors_free(&errs);
    return ok;
}

bool xlb_tls_watch_tick(struct xlb_tls_watch *w, const struct xlb_bootstrap *b, uint64_t now_ms)
{
    free_retired(w, now_ms);
    bool tls_vips = xlb_bootstrap_tls_vips(b) > 0;
    if (tls_vips && now_ms - w->keys_rotated_ms >= XLB_TLS_TICKET_ROTATE_MS) {
        struct xlb_tls_ticket_keys before = w->keys;
        w->keys_rotated_ms = now_ms;
        bool ok = xlb_tls_ticket_keys_rotate(&w->keys) == 0 &&
                  rebuild(w, b, now_ms, "ticket keys rotated");
        if (!ok)
            w->keys = before; /* the servers serving still seal with these */
        OPENSSL_cleanse(&before, sizeof(before));
        return ok;
    }
    if (b->n_cert_providers == 0 || now_ms < w->next_look_ms)
        return false;
    w->next_look_ms = now_ms + look_interval_ms(b);
    uint64_t stamp = stamp_files(b);
    if (stamp == w->seen_stamp)
        return false;
    /* The clusters' upstream TLS is read again by the LB trees (files_epoch). */
    w->seen_stamp = stamp;
    w->files_epoch++;
    if (!tls_vips || stamp == w->current.files_stamp || stamp == w->failed_stamp)
        return false;
    return rebuild(w, b, now_ms, "certificate files changed");
}

void xlb_tls_watch_fini(struct xlb_tls_watch *w)
{
    xlb_tls_set_free(&w->current);
    free_retired(w, UINT64_MAX);
    OPENSSL_cleanse(&w->keys, sizeof(w->keys));
}

struct xlb_tls_server *xlb_tls_watch_server(const struct xlb_tls_watch *w, unsigned index)
{
    return index < w->current.n ? w->current.servers[index] : NULL;
}
