/* SPDX-License-Identifier: Apache-2.0 */
/*
 * httpd.c -- the HTTP/1.1 server behind the head's dashboard and the
 * worker's /metrics (see httpd.h for the rules and limits): connections,
 * admission, TLS and the cluster token; the routes are callbacks.
 *
 * DESIGN: one request per connection. A connection reads into a buffer
 * that grows up to MT_HTTPD_MAX_HEADER (plus a form body) until the
 * blank line that ends the headers, answers through the route in one
 * write, shuts its side down and then drains whatever the client still
 * sends until EOF (so a client that sent a body still reads the answer
 * instead of a reset). One timer per connection bounds each phase:
 * reading the request, writing the answer and draining. The request line
 * is checked as bytes arrive, so binary garbage gets its 400 at once
 * rather than after the timeout.
 *
 * Authentication happens per request in serve(), before the method and
 * route are looked at; TLS sits between the socket and the request buffer
 * (tls_in, tls_respond); admission (admit) keeps slow clients from
 * crowding out prompt ones.
 *
 * OWNERSHIP: the server owns its connections; a connection is freed in
 * the close callback of the last of its two handles (socket, timer) and the
 * server in the close callback of the last handle once it is closing.
 * A TLS flush owns its bytes and is freed in its write callback.
 *
 * THREAD: the loop thread only.
 */
#include "common/httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "common/alloc.h"
#include "common/auth.h"
#include "common/error.h"
#include "common/log.h"

#define LISTEN_BACKLOG 511
#define BUF_MIN 2048
#define BUF_MAX (MT_HTTPD_MAX_HEADER + MT_HTTPD_MAX_FORM)

enum conn_state {
    C_READ,   /* waiting for the request headers */
    C_WRITE,  /* answer written, waiting for the write to finish */
    C_DRAIN,  /* our side shut down; reading until EOF */
};

/* One client connection. Guarded by: loop thread. */
struct conn {
    uv_tcp_t tcp;                 /* data = this */
    uv_timer_t timer;             /* bounds the current phase */
    uv_write_t wr;
    uv_shutdown_t sd;
    struct mt_httpd *d;
    struct conn *prev, *next;     /* in d->conns */
    enum conn_state state;
    int open;                     /* handles not yet closed (0..2) */
    bool closing;
    bool eof;                     /* the client will send nothing more */
    struct mt_strbuf head;        /* response status line and headers */
    struct mt_strbuf hdrs;        /* extra response headers (Location...) */
    struct mt_strbuf body;        /* response body */
    size_t len;                   /* bytes in buf */
    size_t scan;                  /* mt_http_headers_end's resume point */
    size_t need;                  /* bytes of head + form body awaited */
    uint32_t addr;                /* peer IPv4 address, network order */
    SSL *ssl;                     /* HTTPS: TLS over memory BIOs; or NULL */
    char *buf;                    /* the request; grows up to BUF_MAX */
    size_t cap;                   /* bytes allocated at buf */
};

/* The server. Guarded by: loop thread. */
struct mt_httpd {
    uv_loop_t *loop;
    char *name;                   /* for log lines */
    char *open_path;              /* NULL: none */
    mt_httpd_route_fn route;
    mt_httpd_route_fn deny;       /* NULL: deny_text */
    void *arg;
    int fd;                       /* listening socket until uv owns it */
    int port;
    bool started;                 /* listener is a uv handle */
    bool closing;
    bool listener_open;
    uv_tcp_t listener;
    struct conn *conns;
    size_t n_conns;               /* in conns, closing ones included */
    size_t max_conns;             /* caps (set_caps) */
    size_t max_per_addr;
    uint64_t rejected;            /* connections refused at a cap */
    uint64_t evicted;             /* closed to make room for new ones */
    char scratch[16 * 1024];      /* what is drained after the answer */
    char *token;                  /* the cluster token; NULL: no auth */
    size_t token_len;
    bool tls;                     /* serving HTTPS */
    SSL_CTX *ssl_ctx;             /* its certificate and key, when tls */
};

/* ---- connections --------------------------------------------------------- */

static void httpd_free(struct mt_httpd *d)
{
    SSL_CTX_free(d->ssl_ctx);
    free(d->token);
    free(d->name);
    free(d->open_path);
    free(d);
}

static void maybe_free(struct mt_httpd *d)
{
    if (d->closing && !d->listener_open && d->n_conns == 0)
        httpd_free(d);
}

static void on_conn_closed(uv_handle_t *handle)
{
    struct conn *c = handle->data;
    struct mt_httpd *d = c->d;

    if (--c->open > 0)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        d->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    d->n_conns--;
    mt_strbuf_release(&c->head);
    mt_strbuf_release(&c->hdrs);
    mt_strbuf_release(&c->body);
    SSL_free(c->ssl);
    free(c->buf);
    free(c);
    maybe_free(d);
}

static void conn_close(struct conn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    uv_timer_stop(&c->timer);
    uv_close((uv_handle_t *)&c->timer, on_conn_closed);
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static void on_timeout(uv_timer_t *t);

static void on_shutdown(uv_shutdown_t *req, int status)
{
    struct conn *c = req->handle->data;

    if (status < 0 || c->eof)
        conn_close(c);
}

static void on_written(uv_write_t *req, int status)
{
    struct conn *c = req->handle->data;

    if (c->state != C_WRITE)
        return; /* e.g. a TLS flush finishing after a close */
    if (status < 0 || c->closing) {
        conn_close(c);
        return;
    }
    /* Half-close and drain, so the client reads the answer before EOF. */
    c->state = C_DRAIN;
    uv_timer_start(&c->timer, on_timeout, MT_HTTPD_TIMEOUT_MS / 2, 0);
    if (uv_shutdown(&c->sd, (uv_stream_t *)&c->tcp, on_shutdown) < 0)
        conn_close(c);
}

/* ---- TLS ------------------------------------------------------------------ */

/*
 * HTTPS without threads: OpenSSL reads ciphertext from one memory BIO and
 * writes to another; the loop feeds the first with what the socket reads
 * (tls_in) and writes out what the second holds (tls_flush). Each flush
 * is its own uv_write, freed in its callback.
 */
struct tls_write {
    uv_write_t req;
    struct conn *c;
    bool last;                    /* the answer's end: then drain */
    char data[];
};

static void on_written(uv_write_t *req, int status);

static void on_tls_written(uv_write_t *req, int status)
{
    struct tls_write *w = req->data;

    if (w->last)
        on_written(req, status);
    else if (status < 0)
        conn_close(w->c);
    free(w);
}

/* Send what OpenSSL has written. RET 0 or -1 (the caller closes). */
static int tls_flush(struct conn *c, bool last)
{
    BIO *wbio = SSL_get_wbio(c->ssl);
    size_t n = BIO_ctrl_pending(wbio);
    struct tls_write *w;
    uv_buf_t b;

    if (n == 0 && !last)
        return 0;
    w = mt_xmalloc(sizeof(*w) + n + 1);
    w->c = c;
    w->last = last;
    w->req.data = w;
    if (n && BIO_read(wbio, w->data, (int)n) != (int)n) {
        free(w);
        return -1;
    }
    b = uv_buf_init(w->data, (unsigned)n);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_tls_written) < 0) {
        free(w);
        return -1;
    }
    return 0;
}

static void grow(struct conn *c);

/*
 * Feed ciphertext and move the plaintext it yields to c->buf (OpenSSL
 * runs the handshake on the way). RET 0, or -1 on a failed handshake or
 * bad record: the caller closes without an answer.
 */
static int tls_in(struct conn *c, const char *p, size_t n)
{
    int r, e;

    if (BIO_write(SSL_get_rbio(c->ssl), p, (int)n) != (int)n)
        return -1;
    for (;;) {
        grow(c);
        if (c->len == c->cap)
            break; /* full: the parser answers 413 */
        r = SSL_read(c->ssl, c->buf + c->len, (int)(c->cap - c->len));
        if (r > 0) {
            c->len += (size_t)r;
            continue;
        }
        e = SSL_get_error(c->ssl, r);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_ZERO_RETURN)
            break;
        ERR_clear_error();
        return -1;
    }
    return tls_flush(c, false);
}

/* The answer, encrypted, then close_notify. RET 0 or -1. */
static int tls_respond(struct conn *c, const uv_buf_t *bufs, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (bufs[i].len && SSL_write(c->ssl, bufs[i].base,
                                     (int)bufs[i].len) <= 0) {
            ERR_clear_error();
            return -1;
        }
    }
    SSL_shutdown(c->ssl);
    return tls_flush(c, true);
}

/* The context for o's PEM certificate chain and key. RET 0 or -MT_EINVAL. */
static int tls_context(const char *cert, const char *key, SSL_CTX **out)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    BIO *cb = BIO_new_mem_buf(cert, -1), *kb = BIO_new_mem_buf(key, -1);
    X509 *x = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    EVP_PKEY *k = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
    int rc = -MT_EINVAL;

    if (!ctx || !x || !k || SSL_CTX_use_certificate(ctx, x) != 1 ||
        SSL_CTX_use_PrivateKey(ctx, k) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1)
        goto out;
    X509_free(x);
    while ((x = PEM_read_bio_X509(cb, NULL, NULL, NULL)))
        if (SSL_CTX_add_extra_chain_cert(ctx, x) != 1)
            goto out; /* the rest of the chain */
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL); /* browsers: no certs */
    *out = ctx;
    ctx = NULL;
    rc = 0;
out:
    ERR_clear_error();
    X509_free(x);
    EVP_PKEY_free(k);
    BIO_free(cb);
    BIO_free(kb);
    SSL_CTX_free(ctx);
    return rc;
}

/* Start TLS on a new connection. RET 0 or -1. */
static int tls_accept(struct conn *c)
{
    BIO *rbio, *wbio;

    c->ssl = SSL_new(c->d->ssl_ctx);
    rbio = BIO_new(BIO_s_mem());
    wbio = BIO_new(BIO_s_mem());
    if (!c->ssl || !rbio || !wbio) {
        BIO_free(rbio);
        BIO_free(wbio);
        return -1;
    }
    SSL_set_bio(c->ssl, rbio, wbio);
    SSL_set_accept_state(c->ssl);
    return 0;
}

const char *mt_httpd_reason(int code)
{
    switch (code) {
    case 200: return "OK";
    case 303: return "See Other";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    default: return "Error";
    }
}

/*
 * Send the answer: code, content type, c->hdrs and c->body (already
 * filled). The body is left out for HEAD, with its length still announced.
 */
static void respond(struct conn *c, int code, const char *type, bool head_only)
{
    uv_buf_t bufs[2];
    unsigned nbufs = 1;

    mt_strbuf_addf(&c->head,
                   "HTTP/1.1 %d %s\r\n"
                   "Content-Type: %s\r\n"
                   "Content-Length: %zu\r\n"
                   "Cache-Control: no-store\r\n"
                   "X-Content-Type-Options: nosniff\r\n"
                   "X-Frame-Options: DENY\r\n"
                   "Referrer-Policy: no-referrer\r\n"
                   "%s%.*s"
                   "Connection: close\r\n\r\n",
                   code, mt_httpd_reason(code), type, c->body.len,
                   code == 405 ? "Allow: GET, HEAD\r\n" : "",
                   (int)c->hdrs.len, c->hdrs.len ? c->hdrs.buf : "");
    bufs[0] = uv_buf_init(c->head.buf, (unsigned)c->head.len);
    if (!head_only && c->body.len)
        bufs[nbufs++] = uv_buf_init(c->body.buf, (unsigned)c->body.len);
    c->state = C_WRITE;
    uv_timer_start(&c->timer, on_timeout, MT_HTTPD_TIMEOUT_MS, 0);
    if (c->ssl ? tls_respond(c, bufs, nbufs) < 0
               : uv_write(&c->wr, (uv_stream_t *)&c->tcp, bufs, nbufs,
                          on_written) < 0)
        conn_close(c);
}

static void respond_error(struct conn *c, int code, bool head_only)
{
    MT_DEBUG("%s: %d for %s", c->d->name, code,
             code == 408 ? "a slow client" : "a bad request");
    mt_strbuf_addf(&c->body, "%d %s\n", code, mt_httpd_reason(code));
    respond(c, code, "text/plain; charset=utf-8", head_only);
}

static void on_timeout(uv_timer_t *t)
{
    struct conn *c = t->data;

    /* Mid-handshake there is no channel to answer on. */
    if (c->state == C_READ && !(c->ssl && !SSL_is_init_finished(c->ssl)))
        respond_error(c, 408, false);
    else
        conn_close(c);
}

/* ---- request parsing ----------------------------------------------------- */

/*
 * Look at what has arrived (common/http.h does the parsing). RET 0: need
 * more bytes; 200: a whole request head, described in *req; 4xx/5xx:
 * reject. Garbage is refused on its first bad byte.
 */
static int parse(struct conn *c, struct mt_http_req *req)
{
    int rc = mt_http_check_prefix(c->buf, c->len);

    if (rc)
        return rc;
    if (!mt_http_headers_end(c->buf, c->len, &c->scan))
        return c->len >= MT_HTTP_MAX_HEADER ? 413 : 0;
    return mt_http_parse(c->buf, c->len, req);
}

/* ---- authentication ------------------------------------------------------ */

static bool token_ok(const struct mt_httpd *d, const char *t, size_t n)
{
    return mt_auth_equal(t, n, d->token, d->token_len);
}

/* A valid bearer token or token cookie (a wrong one is as good as none). */
static bool authorized(const struct mt_httpd *d,
                       const struct mt_http_req *req)
{
    char buf[MT_AUTH_TOKEN_MAX + 1];
    struct mt_http_str tok;
    size_t n;

    if (!d->token)
        return true;
    if (mt_http_bearer(req, &tok) && token_ok(d, tok.p, tok.n))
        return true;
    return mt_http_cookie(req, MT_HTTPD_COOKIE, buf, sizeof(buf), &n) &&
           token_ok(d, buf, n);
}

bool mt_httpd_token_ok(const struct mt_httpd *d, struct mt_http_str params)
{
    char buf[MT_AUTH_TOKEN_MAX + 1];
    size_t n;

    return d->token &&
           mt_http_param(params, "token", buf, sizeof(buf), &n) &&
           token_ok(d, buf, n);
}

/* Set-Cookie for the token, percent-encoded. */
static void add_cookie(const struct mt_httpd *d, struct mt_strbuf *hdrs)
{
    mt_strbuf_adds(hdrs, "Set-Cookie: " MT_HTTPD_COOKIE "=");
    mt_strbuf_add_pct(hdrs, d->token, d->token_len);
    mt_strbuf_addf(hdrs, "; Path=/; HttpOnly; SameSite=Strict%s\r\n",
                   d->tls ? "; Secure" : "");
}

void mt_httpd_redirect_in(const struct mt_httpd *d, struct mt_http_str path,
                          struct mt_http_str query, struct mt_httpd_answer *a)
{
    char *rest = mt_xmalloc(query.n + 1);
    size_t n = mt_http_param_strip(query, "token", rest, query.n + 1);

    if (path.n >= 2 && (path.p[1] == '/' || path.p[1] == '\\'))
        path.n = 1;
    if (d->token)
        add_cookie(d, a->hdrs);
    mt_strbuf_addf(a->hdrs, "Location: %.*s%s%s\r\n", (int)path.n, path.p,
                   n ? "?" : "", rest);
    free(rest);
    mt_strbuf_adds(a->body, "303 See Other\n");
    a->code = 303;
    a->type = "text/plain; charset=utf-8";
}

void mt_httpd_error(struct mt_httpd_answer *a, int code)
{
    a->code = code;
    a->type = "text/plain; charset=utf-8";
    mt_strbuf_addf(a->body, "%d %s\n", code, mt_httpd_reason(code));
}

bool mt_httpd_tls(const struct mt_httpd *d)
{
    return d->tls;
}

/* The default 401: a short text reason. */
static void deny_text(void *arg, const struct mt_httpd_request *r,
                      struct mt_httpd_answer *a)
{
    (void)arg;
    (void)r;
    a->code = 401;
    mt_strbuf_adds(a->body, "401 Unauthorized: the cluster token is "
                            "required: send \"Authorization: Bearer "
                            "<token>\"\n");
}

/* ---- routes -------------------------------------------------------------- */

/* Run fn (a route or deny) on the request and send what it answers. */
static void answer(struct conn *c, mt_httpd_route_fn fn,
                   const struct mt_httpd_request *r)
{
    struct mt_httpd_answer a = {200, "text/plain; charset=utf-8", &c->hdrs,
                                &c->body};

    fn(c->d->arg, r, &a);
    if (a.code == 401) {
        MT_DEBUG("%s: 401 for %.*s", c->d->name, (int)r->req->path.n,
                 r->req->path.p);
        mt_strbuf_adds(&c->hdrs,
                       "WWW-Authenticate: Bearer realm=\"manta\"\r\n");
    }
    respond(c, a.code, a.type, r->head_only && a.code != 405);
}

/*
 * Every route but open_path needs the token (when there is one): a valid
 * ?token= on a GET is swapped for the cookie by a redirect; otherwise a
 * bearer header or the cookie must be valid. Then the method, then the
 * route.
 */
static void serve(struct conn *c, const struct mt_http_req *req)
{
    const struct mt_httpd *d = c->d;
    struct mt_httpd_request r = {req, {"", 0}, false, authorized(d, req)};
    bool get;

    r.head_only = mt_http_str_eq(req->method, "HEAD", false);
    get = r.head_only || mt_http_str_eq(req->method, "GET", false);
    MT_DEBUG("%s: %.*s %.*s", d->name, (int)req->method.n, req->method.p,
             (int)req->path.n, req->path.p);
    if (d->open_path && mt_http_str_eq(req->path, d->open_path, false)) {
        r.body.p = c->buf + req->header_len;
        r.body.n = c->need > req->header_len ? c->need - req->header_len : 0;
        answer(c, d->route, &r);
    } else if (d->token && get && mt_httpd_token_ok(d, req->query)) {
        struct mt_httpd_answer a = {200, "", &c->hdrs, &c->body};

        mt_httpd_redirect_in(d, req->path, req->query, &a);
        respond(c, a.code, a.type, r.head_only);
    } else if (!r.authorized) {
        answer(c, d->deny ? d->deny : deny_text, &r);
    } else if (!get) {
        respond_error(c, 405, false);
    } else {
        answer(c, d->route, &r);
    }
}

/*
 * How many bytes the request needs before it can be answered: its head,
 * plus the form body of a POST to open_path. RET 200 or 413 (too big).
 */
static int request_size(const struct mt_httpd *d,
                        const struct mt_http_req *req, size_t *need)
{
    *need = req->header_len;
    if (!d->open_path || !mt_http_str_eq(req->method, "POST", false) ||
        !mt_http_str_eq(req->path, d->open_path, false) ||
        req->content_length <= 0)
        return 200;
    if (req->content_length > MT_HTTPD_MAX_FORM)
        return 413;
    *need += (size_t)req->content_length;
    return 200;
}

/* Room for more of the request, when it is full and may still grow. */
static void grow(struct conn *c)
{
    if (c->len < c->cap || c->cap >= BUF_MAX)
        return;
    c->cap = c->cap ? c->cap * 2 : BUF_MIN;
    if (c->cap > BUF_MAX)
        c->cap = BUF_MAX;
    c->buf = mt_xrealloc(c->buf, c->cap);
}

static void on_alloc(uv_handle_t *handle, size_t hint, uv_buf_t *out)
{
    struct conn *c = handle->data;

    /*
     * Once answered, what is drained goes to the shared scratch buffer
     * (the read callback runs right after this one). A request's buffer
     * grows as it arrives, so slow clients cost little memory.
     */
    if (c->state != C_READ || c->ssl) {
        *out = uv_buf_init(c->d->scratch, sizeof(c->d->scratch));
        return;
    }
    grow(c);
    *out = uv_buf_init(c->buf + c->len, (unsigned)(c->cap - c->len));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct conn *c = s->data;
    struct mt_http_req req;
    int rc;

    if (nread < 0) {
        /*
         * The client may half-close after its request: finish the answer
         * (or answer a partial request with 400) before closing.
         */
        uv_read_stop(s);
        c->eof = true;
        if (nread == UV_EOF && c->state == C_READ && c->len && !c->closing)
            respond_error(c, 400, false);
        else if (nread != UV_EOF || c->state != C_WRITE)
            conn_close(c);
        return;
    }
    if (nread == 0 || c->state != C_READ || c->closing)
        return;
    if (!c->ssl) {
        c->len += (size_t)nread;
    } else if (tls_in(c, buf->base, (size_t)nread) < 0) {
        MT_DEBUG("%s: TLS handshake or record failed", c->d->name);
        conn_close(c);
        return;
    }
    if (c->need && c->len < c->need)
        return; /* the rest of a form body */
    rc = parse(c, &req);
    if (rc == 200 && !c->need)
        rc = request_size(c->d, &req, &c->need);
    if (rc == 0 || (rc == 200 && c->len < c->need))
        return;
    if (rc == 200)
        serve(c, &req);
    else
        respond_error(c, rc, false);
}

/* ---- admission ----------------------------------------------------------- */

/* A connection that may be closed to make room: reading or draining. */
static bool evictable(const struct conn *c)
{
    return !c->closing && (c->state == C_READ || c->state == C_DRAIN);
}

/*
 * Make room for c, just accepted, within the caps: an address over its
 * share, or the server over its total, loses its oldest connection
 * that is still reading a request (or draining one already answered).
 * So slow clients cannot keep others out: a client that sends its
 * request at once is answered long before it becomes the oldest.
 * RET true to serve c, false when nothing could be closed for it.
 */
static bool admit(struct mt_httpd *d, struct conn *c)
{
    struct conn *same = NULL, *any = NULL;
    size_t n_same = 0, n_live = 0;

    for (struct conn *o = d->conns; o; o = o->next) {
        if (o == c || o->closing)
            continue;
        n_live++;
        if (o->addr == c->addr)
            n_same++;
        if (evictable(o)) {
            any = o; /* the list is newest first: the last is oldest */
            if (o->addr == c->addr)
                same = o;
        }
    }
    if (n_same >= d->max_per_addr)
        any = same;
    else if (n_live < d->max_conns)
        return true;
    if (!any)
        return false;
    if (d->evicted++ == 0)
        MT_WARN("%s: at a connection cap (%zu in all, %zu per "
                "address): closing the oldest unanswered ones",
                d->name, d->max_conns, d->max_per_addr);
    conn_close(any);
    return true;
}

/* The peer's IPv4 address (0 when unknown: then all such share a cap). */
static uint32_t peer_addr(uv_tcp_t *tcp)
{
    struct sockaddr_storage ss;
    int len = sizeof(ss);

    if (uv_tcp_getpeername(tcp, (struct sockaddr *)&ss, &len) < 0 ||
        ss.ss_family != AF_INET)
        return 0;
    return ((struct sockaddr_in *)&ss)->sin_addr.s_addr;
}

static void on_connection(uv_stream_t *server, int status)
{
    struct mt_httpd *d = server->data;
    struct conn *c;

    if (status < 0) {
        MT_WARN("%s: accept failed: %s", d->name, uv_strerror(status));
        return;
    }
    c = mt_xcalloc(1, sizeof(*c));
    c->d = d;
    c->open = 2;
    uv_tcp_init(d->loop, &c->tcp);
    uv_timer_init(d->loop, &c->timer);
    c->tcp.data = c;
    c->timer.data = c;
    c->next = d->conns;
    if (d->conns)
        d->conns->prev = c;
    d->conns = c;
    d->n_conns++;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0) {
        conn_close(c);
        return;
    }
    c->addr = peer_addr(&c->tcp);
    if (!admit(d, c)) {
        if (d->rejected++ == 0)
            MT_WARN("%s: over %zu connections, dropping new ones",
                    d->name, d->max_conns);
        conn_close(c);
        return;
    }
    if ((d->ssl_ctx && tls_accept(c) < 0) ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) < 0) {
        conn_close(c);
        return;
    }
    uv_timer_start(&c->timer, on_timeout, MT_HTTPD_HEADER_MS, 0);
}

/*
 * Caps from RLIMIT_NOFILE: a quarter of the descriptors for the
 * server (the rest for rpc, workers and files), a quarter of that per
 * client address.
 */
static void set_caps(struct mt_httpd *d)
{
    struct rlimit rl;
    size_t n = 1024;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        n = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1 << 20
                ? 1 << 20
                : (size_t)rl.rlim_cur;
    d->max_conns = n / 4;
    if (d->max_conns < MT_HTTPD_MIN_CONNS)
        d->max_conns = MT_HTTPD_MIN_CONNS;
    if (d->max_conns > MT_HTTPD_MAX_CONNS)
        d->max_conns = MT_HTTPD_MAX_CONNS;
    d->max_per_addr = d->max_conns / 4;
    if (d->max_per_addr > MT_HTTPD_MAX_PER_ADDR)
        d->max_per_addr = MT_HTTPD_MAX_PER_ADDR;
}

/* ---- life cycle ---------------------------------------------------------- */

/* A listening IPv4 socket on host:port. RET the fd or -MT_EINVAL/-errno. */
static int listen_on(const char *host, int port, int *bound)
{
    struct sockaddr_in sa;
    socklen_t salen = sizeof(sa);
    int fd, one = 1, rc;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (!host || port < 0 || port > 65535 ||
        inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return -MT_EINVAL;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(fd, LISTEN_BACKLOG) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &salen) < 0) {
        rc = -errno;
        close(fd);
        return rc;
    }
    *bound = ntohs(sa.sin_port);
    return fd;
}

int mt_httpd_create(const struct mt_httpd_opts *o, struct mt_httpd **out,
                    int *bound)
{
    struct mt_httpd *d;
    SSL_CTX *ctx = NULL;
    int fd, port = 0;

    if (!o->route)
        return -MT_EINVAL;
    if (o->tls_cert && o->tls_key &&
        tls_context(o->tls_cert, o->tls_key, &ctx) < 0) {
        MT_ERROR("%s: cannot use the TLS certificate and key",
                 o->name ? o->name : "http");
        return -MT_EINVAL;
    }
    fd = listen_on(o->host, o->port, &port);
    if (fd < 0) {
        SSL_CTX_free(ctx);
        return fd;
    }
    d = mt_xcalloc(1, sizeof(*d));
    d->name = mt_xstrdup(o->name ? o->name : "http");
    d->open_path = o->open_path ? mt_xstrdup(o->open_path) : NULL;
    d->route = o->route;
    d->deny = o->deny;
    d->arg = o->arg;
    d->ssl_ctx = ctx;
    d->tls = ctx != NULL;
    d->fd = fd;
    d->port = port;
    set_caps(d);
    if (o->token) {
        d->token = mt_xstrdup(o->token);
        d->token_len = strlen(o->token);
    }
    *bound = d->port;
    *out = d;
    return 0;
}

int mt_httpd_start(struct mt_httpd *d, uv_loop_t *loop)
{
    int rc;

    d->loop = loop;
    uv_tcp_init(loop, &d->listener);
    d->listener.data = d;
    d->started = true;
    d->listener_open = true;
    rc = uv_tcp_open(&d->listener, d->fd);
    if (rc == 0) {
        d->fd = -1;
        rc = uv_listen((uv_stream_t *)&d->listener, LISTEN_BACKLOG,
                       on_connection);
    }
    if (rc < 0) {
        MT_ERROR("%s: cannot serve on port %d: %s", d->name, d->port,
                 uv_strerror(rc));
        return -MT_EIO;
    }
    MT_INFO("%s: at most %zu connections, %zu per client address", d->name,
            d->max_conns, d->max_per_addr);
    return 0;
}

static void on_listener_closed(uv_handle_t *handle)
{
    struct mt_httpd *d = handle->data;

    d->listener_open = false;
    maybe_free(d);
}

void mt_httpd_close(struct mt_httpd *d)
{
    struct conn *c, *next;

    if (!d || d->closing)
        return;
    d->closing = true;
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
    if (!d->started) {
        httpd_free(d);
        return;
    }
    uv_close((uv_handle_t *)&d->listener, on_listener_closed);
    for (c = d->conns; c; c = next) {
        next = c->next;
        conn_close(c);
    }
}
