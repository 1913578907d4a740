/*
 * The stateful session filter's config (A55, A60): StatefulSession whose session_state is a
 * CookieBasedSessionState with a cookie name, an optional ttl and an optional path.
 */
#include <stdlib.h>
#include <string.h>

#include "envoy/extensions/filters/http/stateful_session/v3/stateful_session.pb-c.h"
#include "envoy/extensions/http/stateful_session/cookie/v3/cookie.pb-c.h"
#include "http_filters.h"

typedef Envoy__Extensions__Filters__Http__StatefulSession__V3__StatefulSession StatefulSession;
typedef Envoy__Extensions__Http__StatefulSession__Cookie__V3__CookieBasedSessionState CookieState;

void xlb_stateful_session_free(struct xlb_stateful_session *session)
{
    free(session->cookie.name);
    free(session->cookie.path);
    memset(session, 0, sizeof(*session));
}

static bool read_cookie(struct xv_ctx *ctx, const char *path, const CookieState *state,
                        struct xlb_session_cookie *out)
{
    char cpath[XV_PATH_MAX], child[XV_PATH_MAX];
    xv_key(cpath, path, "cookie");
    const Envoy__Type__Http__V3__Cookie *cookie = state->cookie;
    if (cookie == NULL) {
        xv_error(ctx, cpath, "field not present");
        return false;
    }
    bool ok = true;
    if (cookie->name == NULL || cookie->name[0] == '\0') {
        xv_key(child, cpath, "name");
        xv_error(ctx, child, "field not present");
        ok = false;
    }
    if (cookie->ttl != NULL) {
        xv_key(child, cpath, "ttl");
        out->has_ttl = xv_duration(ctx, child, cookie->ttl, &out->ttl);
        ok = ok && out->has_ttl;
    }
    if (!ok)
        return false;
    out->name = xv_strdup(ctx, cpath, cookie->name);
    out->path = xv_strdup(ctx, cpath, cookie->path);
    return out->name != NULL && out->path != NULL;
}

bool xv_stateful_session(struct xv_ctx *ctx, const char *path, const StatefulSession *msg,
                         struct xlb_stateful_session *out)
{
    memset(out, 0, sizeof(*out));
    /* No session_state: gRPC installs the filter but it does nothing. */
    if (msg->session_state == NULL)
        return true;
    char spath[XV_PATH_MAX], tpath[XV_PATH_MAX];
    xv_key(spath, path, "session_state");
    xv_key(tpath, spath, "typed_config");
    const Google__Protobuf__Any *any = msg->session_state->typed_config;
    if (any == NULL) {
        xv_error(ctx, tpath, "field not present");
        return false;
    }
    const char *type = xv_any_type(ctx, tpath, any);
    if (type == NULL)
        return false;
    if (strcmp(type, XV_COOKIE_STATE_TYPE) != 0) {
        xv_error(ctx, tpath, "unsupported session state type \"%.96s\"", type);
        return false;
    }
    CookieState *state = (CookieState *)xv_unpack(
        ctx, tpath, any,
        &envoy__extensions__http__stateful_session__cookie__v3__cookie_based_session_state__descriptor,
        "session state config");
    if (state == NULL)
        return false;
    bool ok = read_cookie(ctx, tpath, state, &out->cookie);
    protobuf_c_message_free_unpacked(&state->base, NULL);
    if (!ok) {
        xlb_stateful_session_free(out);
        return false;
    }
    out->enabled = true;
    return true;
}

bool xv_stateful_session_any(struct xv_ctx *ctx, const char *path, const struct xv_extension *ext,
                             struct xlb_stateful_session *out)
{
    memset(out, 0, sizeof(*out));
    if (ext->any == NULL) {
        xv_error(ctx, path, "could not parse stateful session filter config");
        return false;
    }
    StatefulSession *msg = (StatefulSession *)xv_unpack(
        ctx, path, ext->any,
        &envoy__extensions__filters__http__stateful_session__v3__stateful_session__descriptor,
        "stateful session filter config");
    if (msg == NULL)
        return false;
    bool ok = xv_stateful_session(ctx, path, msg, out);
    protobuf_c_message_free_unpacked(&msg->base, NULL);
    return ok;
}
