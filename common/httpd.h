/* SPDX-License-Identifier: Apache-2.0 */
/*
 * httpd.h -- a small HTTP/1.1 server on a libuv loop, shared by the head's
 * dashboard (head/dashboard.c) and the worker's /metrics (worker/worker.c):
 * connections, limits, the cluster token and TLS live here; the routes
 * are the caller's, given as callbacks.
 *
 * Every route needs the cluster token (unless opts.token is NULL), except
 * opts.open_path: "Authorization: Bearer <token>", or the manta_token
 * cookie (HttpOnly, SameSite=Strict, Path=/, Secure over TLS). The cookie
 * is set by a 303 answering any GET/HEAD that carries a valid ?token= (to
 * the same URL without it; mt_httpd_redirect_in does the same for a
 * route). Otherwise the deny callback answers (the default: 401 with a
 * short text reason); every 401 carries WWW-Authenticate: Bearer
 * realm="manta". A wrong token gets the same answer as none; tokens are
 * compared in constant time and never logged. Authorized requests that
 * are not GET or HEAD get 405 (open_path excepted: its route decides).
 *
 * With a certificate and key the server speaks HTTPS (OpenSSL over memory
 * BIOs, on the loop); a failed handshake closes the connection.
 *
 * Every connection carries one request and is closed after the answer
 * (Connection: close). Requests are peer input, parsed by common/http.h:
 * headers are limited to MT_HTTPD_MAX_HEADER bytes (413 beyond), a POST
 * body to open_path to MT_HTTPD_MAX_FORM; a request not whole within
 * MT_HTTPD_HEADER_MS of the accept gets 408; anything that is not
 * HTTP/1.x gets 400. Connections are capped from RLIMIT_NOFILE (a quarter
 * of it, MT_HTTPD_MIN_CONNS..MT_HTTPD_MAX_CONNS) and per client address
 * (a quarter of that, at most MT_HTTPD_MAX_PER_ADDR); at a cap the oldest
 * connection still reading its request (of that address, when the address
 * is over its share) is closed for the new one. Nothing a client sends can
 * stop the daemon's rpc from being served.
 *
 * Life cycle: mt_httpd_create binds the socket (synchronously, so a daemon
 * can fail to start cleanly when the port is taken), mt_httpd_start
 * attaches it to the loop, mt_httpd_close stops serving and frees it.
 *
 * THREAD: the loop thread given to mt_httpd_start only.
 */
#ifndef MT_HTTPD_H
#define MT_HTTPD_H

#include <stdbool.h>
#include <uv.h>

#include "common/http.h"
#include "common/strbuf.h"

#define MT_HTTPD_MAX_HEADER (16 * 1024)
#define MT_HTTPD_HEADER_MS 3000  /* accept to whole request */
#define MT_HTTPD_TIMEOUT_MS 5000 /* to write the answer */
#define MT_HTTPD_MIN_CONNS 64    /* caps: see set_caps */
#define MT_HTTPD_MAX_CONNS 4096
#define MT_HTTPD_MAX_PER_ADDR 256
#define MT_HTTPD_MAX_FORM 1024   /* POST body to open_path */

#define MT_HTTPD_COOKIE "manta_token"

struct mt_httpd;

/* A request as a route sees it. Every view is valid during the call. */
struct mt_httpd_request {
    const struct mt_http_req *req; /* method, path, query, headers */
    struct mt_http_str body;       /* POST body to open_path; else empty */
    bool head_only;                /* HEAD: the body is not sent */
    bool authorized;               /* a valid token (or no token needed) */
};

/*
 * The answer a route fills. code starts at 200 and type at
 * "text/plain; charset=utf-8"; hdrs takes extra header lines, each ending
 * in CRLF (e.g. "Location: /\r\n"); body the bytes to send.
 */
struct mt_httpd_answer {
    int code;
    const char *type;              /* a string literal or one that outlives
                                      the call */
    struct mt_strbuf *hdrs;
    struct mt_strbuf *body;
};

/* A route: answer r by filling a. Must not keep r or a. */
typedef void (*mt_httpd_route_fn)(void *arg, const struct mt_httpd_request *r,
                                  struct mt_httpd_answer *a);

struct mt_httpd_opts {
    const char *name;     /* in log lines, e.g. "dashboard" */
    const char *host;     /* dotted IPv4 to bind, e.g. "127.0.0.1" */
    int port;             /* 0 picks a free port */
    const char *token;    /* the cluster token; NULL: no auth */
    const char *tls_cert; /* PEM chain; with tls_key: HTTPS. NULL: HTTP */
    const char *tls_key;  /* PEM private key */
    const char *open_path; /* served without the token, any method, with
                              its POST body (a login form); NULL: none */
    mt_httpd_route_fn route; /* authorized GET/HEAD requests, and every
                                request to open_path */
    mt_httpd_route_fn deny;  /* requests without a valid token; NULL: the
                                default text 401. Gets the challenge
                                header added after it returns. */
    void *arg;               /* for route and deny */
};

/*
 * mt_httpd_create - bind and listen on o->host:o->port (IPv4).
 *
 * IN  o     borrowed (name, token and open_path are copied)
 * OUT out   the server, not serving yet; free with mt_httpd_close()
 * OUT bound the port actually bound
 * RET 0, -MT_EINVAL (bad host or port, no route, or a certificate or key
 *     OpenSSL cannot use), -errno (e.g. -EADDRINUSE)
 */
int mt_httpd_create(const struct mt_httpd_opts *o, struct mt_httpd **out,
                    int *bound);

/*
 * mt_httpd_start - accept connections on loop and answer them through the
 * routes. Logs the connection caps.
 *
 * RET 0 or -MT_EIO; on failure the server serves nothing but must still
 *     be closed with mt_httpd_close()
 */
int mt_httpd_start(struct mt_httpd *s, uv_loop_t *loop);

/*
 * mt_httpd_close - stop accepting, drop every open connection and free s
 * once its handles are closed (at once when it was never started). The
 * routes are not called after this returns. Accepts NULL.
 */
void mt_httpd_close(struct mt_httpd *s);

/* mt_httpd_tls - whether s serves HTTPS. */
bool mt_httpd_tls(const struct mt_httpd *s);

/* ---- helpers for routes -------------------------------------------------- */

/*
 * mt_httpd_token_ok - whether params (a query or a form body) carry a
 * valid token= for s. RET false when s has no token.
 */
bool mt_httpd_token_ok(const struct mt_httpd *s, struct mt_http_str params);

/*
 * mt_httpd_redirect_in - answer 303 to path?query, the token parameter
 * taken out of query, setting the token cookie. A path that a browser
 * would read as another host ("//host", "/\host") goes to / instead.
 */
void mt_httpd_redirect_in(const struct mt_httpd *s, struct mt_http_str path,
                          struct mt_http_str query, struct mt_httpd_answer *a);

/* mt_httpd_error - answer code with a one-line text body ("404 Not Found"). */
void mt_httpd_error(struct mt_httpd_answer *a, int code);

/* mt_httpd_reason - the reason phrase of code ("Not Found"). */
const char *mt_httpd_reason(int code);

#endif /* MT_HTTPD_H */
