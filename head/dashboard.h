/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dashboard.h -- the head's dashboard: a small HTTP/1.1 server on the head's
 * libuv loop that serves
 *
 *   GET / (/index.html)      the HTML page of nodes and totals, which
 *                            refreshes itself every 2 s
 *   GET /app.js, /style.css  its script and style (head/www/, compiled in)
 *   GET /api/...             the JSON API (api.h): cluster status, history,
 *                            listings, accelerators, logs
 *   GET /metrics             Prometheus text format 0.0.4 (manta_* names)
 *   GET, POST /login         the login page (head/www/login.html)
 *
 * Every route needs the cluster token (unless the head runs with --auth
 * none), as common/httpd.h describes (bearer header, or the manta_token
 * cookie set by a ?token= redirect), except the login page: GET /login
 * shows a form that POSTs token=... to /login, which sets the cookie and
 * answers 303 to /. Without the token the answer is 401; its body is the
 * login page when the client accepts text/html, else a short JSON
 * (/api/...) or text reason. Limits, TLS and connection caps: httpd.h.
 * Other methods get 405, unknown paths 404 (with the token).
 *
 * Life cycle: mt_dashboard_create binds the socket (synchronously, so the
 * head can fail to start cleanly when the port is taken), mt_dashboard_start
 * attaches it to the loop, mt_dashboard_close stops serving and frees it.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_DASHBOARD_H
#define MT_DASHBOARD_H

#include <uv.h>

#include "common/httpd.h"

struct mt_head;
struct mt_dashboard;

/* What the dashboard serves on, and the credentials it asks for. */
struct mt_dashboard_opts {
    const char *host;     /* dotted IPv4 to bind, e.g. "127.0.0.1" */
    int port;             /* 0 picks a free port */
    const char *token;    /* the cluster token; NULL: no auth */
    const char *tls_cert; /* PEM chain; with tls_key: HTTPS. NULL: HTTP */
    const char *tls_key;  /* PEM private key */
};

/*
 * mt_dashboard_create - bind and listen on o->host:o->port (IPv4).
 *
 * IN  o     borrowed (the token is copied)
 * OUT out   the dashboard, not serving yet; free with mt_dashboard_close()
 * OUT bound the port actually bound
 * RET 0, -MT_EINVAL (bad host or port, or a certificate or key OpenSSL
 *     cannot use), -errno (e.g. -EADDRINUSE)
 */
int mt_dashboard_create(const struct mt_dashboard_opts *o,
                        struct mt_dashboard **out, int *bound);

/*
 * mt_dashboard_start - accept connections on loop and answer them from h.
 * Logs the connection caps.
 *
 * IN  h  borrowed; must stay valid until mt_dashboard_close()
 * RET 0 or -MT_EIO; on failure the dashboard serves nothing but must still
 *     be closed with mt_dashboard_close()
 */
int mt_dashboard_start(struct mt_dashboard *d, uv_loop_t *loop,
                       struct mt_head *h);

/*
 * mt_dashboard_close - stop accepting, drop every open connection and free
 * d once its handles are closed (at once when it was never started). h is
 * not used after this returns. Accepts NULL.
 */
void mt_dashboard_close(struct mt_dashboard *d);

#endif /* MT_DASHBOARD_H */
