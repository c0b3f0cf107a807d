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
 * none): "Authorization: Bearer <token>", or the manta_token cookie
 * (HttpOnly, SameSite=Strict, Path=/, Secure over TLS). The cookie is set
 * by a 303 answering any GET/HEAD that carries a valid ?token= (to the
 * same URL without it), or by the login page (GET /login shows a form
 * that POSTs token=... to /login, which answers 303 to /). Otherwise:
 * 401 with WWW-Authenticate: Bearer realm="manta"; the body is the login
 * page when the client accepts text/html, else a short JSON (/api/...)
 * or text reason. A wrong token gets the same answer as none; tokens are
 * compared in constant time and never logged.
 *
 * With a certificate and key the dashboard serves HTTPS (OpenSSL over
 * memory BIOs, on the loop); a failed handshake closes the connection.
 *
 * Every connection carries one request and is closed after the answer
 * (Connection: close). Requests are peer input, parsed by head/http.h:
 * headers are limited to MT_DASHBOARD_MAX_HEADER bytes (413 beyond), a
 * login form to MT_DASHBOARD_MAX_FORM; a request not whole within
 * MT_DASHBOARD_HEADER_MS of the accept gets 408; anything that is not
 * HTTP/1.x gets 400, other methods 405, unknown paths 404 (with the
 * token). Connections are capped from RLIMIT_NOFILE (a quarter of it,
 * MT_DASHBOARD_MIN_CONNS..MT_DASHBOARD_MAX_CONNS) and per client address
 * (a quarter of that, at most MT_DASHBOARD_MAX_PER_ADDR); at a cap the
 * oldest connection still reading its request (of that address, when
 * the address is over its share) is closed for the new one. Nothing a
 * client sends can stop the head's rpc from being served.
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

#include "head/http.h"

#define MT_DASHBOARD_MAX_HEADER (16 * 1024)
#define MT_DASHBOARD_HEADER_MS 3000  /* accept to whole request */
#define MT_DASHBOARD_TIMEOUT_MS 5000 /* to write the answer */
#define MT_DASHBOARD_MIN_CONNS 64    /* caps: see set_caps */
#define MT_DASHBOARD_MAX_CONNS 4096
#define MT_DASHBOARD_MAX_PER_ADDR 256
#define MT_DASHBOARD_MAX_FORM 1024 /* POST /login body */

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
