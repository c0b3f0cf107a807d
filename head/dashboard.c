/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dashboard.c -- the head's HTTP dashboard: the page (/, with /app.js and
 * /style.css), the JSON API under /api/ (api.c) and /metrics (see
 * dashboard.h for the routes). The server itself (connections, limits, the token, TLS) is
 * common/httpd.c; this file holds the head's routes and its login page.
 *
 * The page lives in head/www/ (index.html, app.js, style.css, and the
 * login page login.html). At build time cmake/embed.cmake turns each file
 * into a const array in the generated dashboard_www.c (head/CMakeLists.txt),
 * so the head serves it from memory: no file is read at run time and
 * nothing is installed.
 *
 * Everything under /api/ is answered by api.c (JSON); the metrics come
 * from metrics.c.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/dashboard.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/http.h"
#include "common/httpd.h"
#include "common/prom.h"
#include "common/strbuf.h"
#include "head/api.h"
#include "head/head_int.h"
#include "head/metrics.h"
#include "head/rpc_services.h"

#include "dashboard_www.h" /* generated from head/www/ */

/* The dashboard: the server and what its routes read. Guarded by: loop
 * thread. */
struct mt_dashboard {
    struct mt_httpd *srv;
    struct mt_head *h;            /* set by mt_dashboard_start */
    bool token;                   /* the cluster has a token */
};

/* ---- the page ------------------------------------------------------------ */

/*
 * The page and what it loads, from head/www/ (compiled in: see the file
 * top). Everything it needs comes from here, with no external scripts,
 * styles or fonts, so it works on an air-gapped cluster. It polls
 * /api/cluster_status every 2 s.
 */
struct asset {
    const char *path;             /* request path, without the query */
    const char *type;             /* Content-Type */
    const unsigned char *data;    /* the file's bytes (dashboard_www.h) */
    const size_t *len;            /* by address: not a C constant */
};

static const struct asset assets[] = {
    {"/", "text/html; charset=utf-8", mt_www_index_html,
     &mt_www_index_html_len},
    {"/index.html", "text/html; charset=utf-8", mt_www_index_html,
     &mt_www_index_html_len},
    {"/app.js", "text/javascript; charset=utf-8", mt_www_app_js,
     &mt_www_app_js_len},
    {"/style.css", "text/css; charset=utf-8", mt_www_style_css,
     &mt_www_style_css_len},
};
/* /login (login.html) is served by serve_login, without the token. */

static const struct asset *find_asset(struct mt_http_str path)
{
    for (size_t i = 0; i < sizeof(assets) / sizeof(assets[0]); i++)
        if (mt_http_str_eq(path, assets[i].path, false))
            return &assets[i];
    return NULL;
}

/* ---- login and denial ---------------------------------------------------- */

static bool wants_html(const struct mt_http_req *req)
{
    return req->accept.n &&
           memmem(req->accept.p, req->accept.n, "text/html", 9) != NULL;
}

static void login_page(struct mt_httpd_answer *a, int code)
{
    mt_strbuf_add(a->body, (const char *)mt_www_login_html,
                  mt_www_login_html_len);
    a->code = code;
    a->type = "text/html; charset=utf-8";
}

/*
 * 401 (httpd.h adds the challenge): the login page for browsers, a short
 * JSON or text reason for API clients and scrapers.
 */
static void deny(void *arg, const struct mt_httpd_request *r,
                 struct mt_httpd_answer *a)
{
    const struct mt_http_req *req = r->req;

    (void)arg;
    if (wants_html(req)) {
        login_page(a, 401);
    } else if (req->path.n >= 5 && memcmp(req->path.p, "/api/", 5) == 0) {
        mt_strbuf_addf(a->body, "{\"error\":\"unauthorized\","
                                "\"message\":\"%s\"}\n",
                       "the cluster token is required: send "
                       "Authorization: Bearer <token>");
        a->code = 401;
        a->type = "application/json";
    } else {
        mt_strbuf_adds(a->body, "401 Unauthorized: the cluster token is "
                                "required: send \"Authorization: Bearer "
                                "<token>\"\n");
        a->code = 401;
    }
}

/*
 * /login: GET shows the form, which POSTs token=... (httpd reads the
 * whole body); a valid token sets the cookie and goes to /.
 */
static void serve_login(struct mt_dashboard *d,
                        const struct mt_httpd_request *r,
                        struct mt_httpd_answer *a)
{
    static const struct mt_http_str root = {"/", 1}, none = {"", 0};
    const struct mt_http_req *req = r->req;
    bool get = r->head_only || mt_http_str_eq(req->method, "GET", false);

    if (!d->token) {
        mt_strbuf_adds(a->hdrs, "Location: /\r\n");
        a->code = 303;
    } else if (get && !mt_http_param(req->query, "token", NULL, 0, NULL)) {
        login_page(a, 200);
    } else if (get && mt_httpd_token_ok(d->srv, req->query)) {
        mt_httpd_redirect_in(d->srv, root, none, a);
    } else if (!get && !mt_http_str_eq(req->method, "POST", false)) {
        mt_httpd_error(a, 405);
    } else if (!get && mt_httpd_token_ok(d->srv, r->body)) {
        mt_httpd_redirect_in(d->srv, root, none, a);
    } else {
        deny(d, r, a);
    }
}

/* ---- routes -------------------------------------------------------------- */

static void serve_route(void *arg, const struct mt_httpd_request *r,
                        struct mt_httpd_answer *a)
{
    struct mt_dashboard *d = arg;
    struct mt_http_str path = r->req->path;
    struct mt_head *h = d->h;
    const struct asset *as;

    if (mt_http_str_eq(path, "/login", false)) {
        serve_login(d, r, a);
    } else if ((as = find_asset(path))) {
        mt_strbuf_add(a->body, (const char *)as->data, *as->len);
        a->type = as->type;
    } else if (path.n >= 5 && memcmp(path.p, "/api/", 5) == 0) {
        a->code = mt_head_api(h, path, r->req->query, a->body);
        a->type = "application/json";
    } else if (mt_http_str_eq(path, "/metrics", false)) {
        mt_head_metrics(h, a->body);
        a->type = MT_PROM_CONTENT_TYPE;
    } else {
        mt_httpd_error(a, 404);
    }
}

/* ---- life cycle ---------------------------------------------------------- */

int mt_dashboard_create(const struct mt_dashboard_opts *o,
                        struct mt_dashboard **out, int *bound)
{
    struct mt_dashboard *d = mt_xcalloc(1, sizeof(*d));
    struct mt_httpd_opts ho = {
        .name = "dashboard",
        .host = o->host,
        .port = o->port,
        .token = o->token,
        .tls_cert = o->tls_cert,
        .tls_key = o->tls_key,
        .open_path = "/login",
        .route = serve_route,
        .deny = deny,
        .arg = d,
    };
    int rc = mt_httpd_create(&ho, &d->srv, bound);

    if (rc < 0) {
        free(d);
        return rc;
    }
    d->token = o->token != NULL;
    *out = d;
    return 0;
}

int mt_dashboard_start(struct mt_dashboard *d, uv_loop_t *loop,
                       struct mt_head *h)
{
    d->h = h;
    return mt_httpd_start(d->srv, loop);
}

void mt_dashboard_close(struct mt_dashboard *d)
{
    if (!d)
        return;
    mt_httpd_close(d->srv);
    free(d);
}
