/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.c -- the HTTP/1.x request parser of common/httpd.c (see http.h).
 *
 * DESIGN: the caller accumulates bytes and asks two cheap questions on
 * every read (does it still look like a request: mt_http_check_prefix;
 * has the header block ended: mt_http_headers_end, resumable), and parses
 * the block once, when it is whole (mt_http_parse). Parsing never writes
 * to the buffer: the request is described by views into it. Every length
 * is checked before it is used; the input is hostile (a browser, a
 * scraper, or anyone who can reach the port) and nothing in it reaches an
 * assert.
 *
 * THREAD: any; no state.
 */
#include "common/http.h"

#include <stddef.h>
#include <string.h>

/* ---- characters ---------------------------------------------------------- */

/* RFC 9110 token characters (method names, header names). */
static bool is_tchar(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9') || (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static bool is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

static int lower(int ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch = (char)lower((unsigned char)ch);
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

static struct mt_http_str str(const char *p, size_t n)
{
    struct mt_http_str s = {p, n};

    return s;
}

/* s without leading and trailing blanks. */
static struct mt_http_str trim(struct mt_http_str s)
{
    while (s.n && is_blank(s.p[0])) {
        s.p++;
        s.n--;
    }
    while (s.n && is_blank(s.p[s.n - 1]))
        s.n--;
    return s;
}

bool mt_http_str_eq(struct mt_http_str s, const char *lit, bool nocase)
{
    size_t n = strlen(lit);

    if (s.n != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        int a = (unsigned char)s.p[i], b = (unsigned char)lit[i];

        if (nocase ? lower(a) != lower(b) : a != b)
            return false;
    }
    return true;
}

/* ---- framing ------------------------------------------------------------- */

int mt_http_check_prefix(const char *buf, size_t len)
{
    for (size_t i = 0; i < len && i <= MT_HTTP_MAX_METHOD; i++) {
        if (buf[i] == ' ')
            return i ? 0 : 400;
        if (!is_tchar((unsigned char)buf[i]) || i == MT_HTTP_MAX_METHOD)
            return 400;
    }
    return 0;
}

size_t mt_http_headers_end(const char *buf, size_t len, size_t *from)
{
    for (size_t i = *from; i < len; i++) {
        if (buf[i] != '\n')
            continue;
        if (i + 1 < len && buf[i + 1] == '\n')
            return i + 2;
        if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
            return i + 3;
        if (i + 2 >= len) {
            *from = i; /* "\n", "\n\r": decided by the next bytes */
            return 0;
        }
    }
    *from = len;
    return 0;
}

/* ---- the request line and headers ---------------------------------------- */

/* Like strcspn over n bytes that need not be NUL-terminated. */
static size_t strcspn_n(const char *s, size_t n, const char *reject)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (s[i] && strchr(reject, s[i]))
            break;
    return i;
}

/* "METHOD SP /target SP HTTP/1.x" (without its line end). RET 0 or 400. */
static int parse_request_line(const char *p, size_t n, struct mt_http_req *r)
{
    const char *sp1 = memchr(p, ' ', n), *t, *sp2, *end = p + n, *q;
    struct mt_http_str version;

    if (!sp1 || sp1 == p || sp1 - p > MT_HTTP_MAX_METHOD)
        return 400;
    for (q = p; q < sp1; q++)
        if (!is_tchar((unsigned char)*q))
            return 400;
    t = sp1 + 1;
    sp2 = memchr(t, ' ', (size_t)(end - t));
    if (!sp2 || sp2 == t || *t != '/')
        return 400;
    for (q = t; q < sp2; q++)
        if ((unsigned char)*q <= 0x20 || (unsigned char)*q >= 0x7f)
            return 400;
    version = str(sp2 + 1, (size_t)(end - sp2 - 1));
    if (mt_http_str_eq(version, "HTTP/1.1", false))
        r->minor = 1;
    else if (mt_http_str_eq(version, "HTTP/1.0", false))
        r->minor = 0;
    else
        return 400;
    r->method = str(p, (size_t)(sp1 - p));
    r->target = str(t, (size_t)(sp2 - t));
    r->path = str(t, strcspn_n(t, (size_t)(sp2 - t), "?#"));
    if (r->path.n < r->target.n && t[r->path.n] == '?') {
        q = t + r->path.n + 1;
        r->query = str(q, strcspn_n(q, (size_t)(sp2 - q), "#"));
    }
    return 0;
}

/* "name: value" (without its line end). RET 0 or 400. */
static int parse_header(const char *p, size_t n, struct mt_http_header *h)
{
    const char *colon = memchr(p, ':', n);

    if (!colon || colon == p)
        return 400;
    for (const char *q = p; q < colon; q++)
        if (!is_tchar((unsigned char)*q))
            return 400;
    for (const char *q = colon + 1; q < p + n; q++)
        if (((unsigned char)*q < 0x20 && *q != '\t') || *q == 0x7f)
            return 400;
    h->name = str(p, (size_t)(colon - p));
    h->value = trim(str(colon + 1, (size_t)(p + n - colon - 1)));
    return 0;
}

/* A Content-Length value: 1 to 18 digits. RET 0 or 400. */
static int parse_length(struct mt_http_str v, int64_t *out)
{
    int64_t x = 0;

    if (v.n == 0 || v.n > 18)
        return 400;
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9')
            return 400;
        x = x * 10 + (v.p[i] - '0');
    }
    *out = x;
    return 0;
}

/* Pick out the headers the dashboard acts on. RET 0, 400 or 501. */
static int interpret(struct mt_http_req *r)
{
    for (size_t i = 0; i < r->n_headers; i++) {
        const struct mt_http_header *h = &r->headers[i];

        if (mt_http_str_eq(h->name, "transfer-encoding", true))
            return 501;
        if (mt_http_str_eq(h->name, "content-length", true)) {
            if (r->content_length >= 0 ||
                parse_length(h->value, &r->content_length))
                return 400;
        } else if (mt_http_str_eq(h->name, "authorization", true)) {
            if (r->authorization.p)
                return 400; /* two credentials: which one counts? */
            r->authorization = h->value;
        } else if (mt_http_str_eq(h->name, "accept", true) && !r->accept.p) {
            r->accept = h->value;
        }
    }
    return 0;
}

/* The line at p (within end): its length without CR LF, and the next. */
static size_t line_at(const char *p, const char *end, const char **next)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n;

    if (!nl)
        nl = end;
    n = (size_t)(nl - p);
    if (n && p[n - 1] == '\r')
        n--;
    *next = nl < end ? nl + 1 : end;
    return n;
}

int mt_http_parse(const char *buf, size_t len, struct mt_http_req *req)
{
    size_t from = 0, end, n;
    const char *p, *next, *stop;
    int rc;

    if ((rc = mt_http_check_prefix(buf, len)))
        return rc;
    end = mt_http_headers_end(buf, len < MT_HTTP_MAX_HEADER ? len
                                                           : MT_HTTP_MAX_HEADER,
                              &from);
    if (!end)
        return len >= MT_HTTP_MAX_HEADER ? 413 : 0;
    memset(req, 0, offsetof(struct mt_http_req, headers));
    req->content_length = -1;
    req->header_len = end;
    stop = buf + end;
    n = line_at(buf, stop, &next);
    if ((rc = parse_request_line(buf, n, req)))
        return rc;
    for (p = next; p < stop; p = next) {
        n = line_at(p, stop, &next);
        if (n == 0)
            break; /* the empty line */
        if (req->n_headers == MT_HTTP_MAX_HEADERS)
            return 431;
        if ((rc = parse_header(p, n, &req->headers[req->n_headers])))
            return rc;
        req->n_headers++;
    }
    rc = interpret(req);
    return rc ? rc : 200;
}

/* ---- credentials and parameters ------------------------------------------ */

/*
 * Percent-decode src into out ('+' is a space when plus). A bad escape or
 * a decoded NUL makes the whole value invalid. RET true when it fit.
 */
static bool unescape(struct mt_http_str src, bool plus, char *out,
                     size_t outsize, size_t *outlen)
{
    size_t o = 0;

    for (size_t i = 0; i < src.n; i++) {
        int ch = (unsigned char)src.p[i];

        if (ch == '%') {
            int hi, lo;

            if (src.n - i < 3)
                return false;
            hi = hexval(src.p[i + 1]);
            lo = hexval(src.p[i + 2]);
            if (hi < 0 || lo < 0 || (hi | lo) == 0)
                return false;
            ch = hi * 16 + lo;
            i += 2;
        } else if (ch == '+' && plus) {
            ch = ' ';
        }
        if (o + 1 >= outsize)
            return false;
        out[o++] = (char)ch;
    }
    if (outsize == 0)
        return false;
    out[o] = '\0';
    *outlen = o;
    return true;
}

bool mt_http_bearer(const struct mt_http_req *req, struct mt_http_str *tok)
{
    struct mt_http_str v = req->authorization;
    struct mt_http_str t;

    if (v.n <= 7 || !mt_http_str_eq(str(v.p, 6), "bearer", true) ||
        !is_blank(v.p[6]))
        return false;
    t = trim(str(v.p + 7, v.n - 7));
    if (t.n == 0 || memchr(t.p, ' ', t.n) || memchr(t.p, '\t', t.n))
        return false;
    *tok = t;
    return true;
}

/*
 * The next "key=value" of list (separated by sep, blanks around each item
 * trimmed), advancing *list. RET false at the end.
 */
static bool next_item(struct mt_http_str *list, char sep,
                      struct mt_http_str *key, struct mt_http_str *val)
{
    const char *e, *eq;
    struct mt_http_str item;

    while (list->n) {
        e = memchr(list->p, sep, list->n);
        item = str(list->p, e ? (size_t)(e - list->p) : list->n);
        list->p += item.n + (e != NULL);
        list->n -= item.n + (e != NULL);
        item = trim(item);
        if (item.n == 0)
            continue;
        eq = memchr(item.p, '=', item.n);
        *key = str(item.p, eq ? (size_t)(eq - item.p) : item.n);
        *val = eq ? str(eq + 1, (size_t)(item.p + item.n - eq - 1))
                  : str(item.p + item.n, 0);
        return true;
    }
    return false;
}

bool mt_http_cookie(const struct mt_http_req *req, const char *name,
                    char *out, size_t outsize, size_t *outlen)
{
    struct mt_http_str list, k, v;

    for (size_t i = 0; i < req->n_headers; i++) {
        if (!mt_http_str_eq(req->headers[i].name, "cookie", true))
            continue;
        list = req->headers[i].value;
        while (next_item(&list, ';', &k, &v)) {
            if (!mt_http_str_eq(trim(k), name, false))
                continue;
            v = trim(v);
            if (v.n >= 2 && v.p[0] == '"' && v.p[v.n - 1] == '"')
                v = str(v.p + 1, v.n - 2);
            return unescape(v, false, out, outsize, outlen);
        }
    }
    return false;
}

bool mt_http_param(struct mt_http_str params, const char *name, char *out,
                   size_t outsize, size_t *outlen)
{
    struct mt_http_str k, v;

    while (next_item(&params, '&', &k, &v))
        if (mt_http_str_eq(k, name, false))
            return !out || unescape(v, true, out, outsize, outlen);
    return false;
}

bool mt_http_param_uint(struct mt_http_str params, const char *name,
                        uint64_t def, uint64_t max, uint64_t *out)
{
    char buf[24];
    size_t n = 0;
    uint64_t v = 0;

    *out = def;
    if (!mt_http_param(params, name, NULL, 0, NULL))
        return true;
    if (!mt_http_param(params, name, buf, sizeof(buf), &n) || n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] < '0' || buf[i] > '9' || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(buf[i] - '0');
        if (v > max)
            return false;
    }
    *out = v;
    return true;
}

size_t mt_http_param_strip(struct mt_http_str params, const char *name,
                           char *out, size_t outsize)
{
    struct mt_http_str k, v;
    size_t o = 0, n;

    if (outsize == 0)
        return 0;
    while (next_item(&params, '&', &k, &v)) {
        if (mt_http_str_eq(k, name, false))
            continue;
        n = (size_t)(v.p + v.n - k.p); /* the whole item */
        if (o + (o > 0) + n + 1 > outsize)
            return 0;
        if (o)
            out[o++] = '&';
        memcpy(out + o, k.p, n);
        o += n;
    }
    out[o] = '\0';
    return o;
}
