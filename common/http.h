/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.h -- the HTTP/1.x request parser of the dashboard and the metrics
 * endpoints (common/httpd.h): pure functions over a
 * byte buffer (no sockets, no loop, no allocation), so that it can be unit
 * tested and fuzzed (tests/unit/common/test_http.c, tests/fuzz/fuzz_http.c).
 *
 * A request is "METHOD SP /target SP HTTP/1.x" CRLF, header lines
 * "name: value" CRLF, then an empty line (bare LF is accepted too). The
 * parser checks the syntax and the limits below, and describes the request
 * with views (struct mt_http_str) into the caller's buffer: nothing is
 * copied, so the views are valid as long as the buffer is and unchanged.
 *
 * Results are HTTP status codes, so the caller can answer with them:
 *   0    not complete yet: read more (the bytes so far may still be valid)
 *   200  a whole request header block, described in *req
 *   400  malformed (bad request line, header, Content-Length, ...)
 *   413  no end of headers within MT_HTTP_MAX_HEADER bytes
 *   431  more than MT_HTTP_MAX_HEADERS header lines
 *   501  Transfer-Encoding (request bodies must have a Content-Length)
 * The request body, if any, follows the header block (req->header_len
 * bytes) and is the caller's business.
 *
 * The helpers below pull credentials out of a parsed request: the bearer
 * token of an Authorization header, a cookie, and a parameter of a query
 * string or of an application/x-www-form-urlencoded body (percent-decoded
 * into a caller buffer of bounded size).
 *
 * THREAD: any; nothing here keeps state.
 */
#ifndef MT_HTTP_H
#define MT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_HTTP_MAX_HEADER (16 * 1024) /* request line + headers + CRLF */
#define MT_HTTP_MAX_HEADERS 64         /* header lines */
#define MT_HTTP_MAX_METHOD 16

/* A view into the parsed buffer: n bytes at p, not NUL-terminated. */
struct mt_http_str {
    const char *p;
    size_t n;
};

/* One header line, name and value (value without surrounding blanks). */
struct mt_http_header {
    struct mt_http_str name;
    struct mt_http_str value;
};

/* A parsed request head. Every view points into the parsed buffer. */
struct mt_http_req {
    struct mt_http_str method;     /* token, e.g. "GET" */
    struct mt_http_str target;     /* "/path?query#frag" as sent */
    struct mt_http_str path;       /* target up to '?' or '#' */
    struct mt_http_str query;      /* after '?' up to '#'; n = 0: none */
    int minor;                     /* HTTP/1.<minor>: 0 or 1 */
    size_t header_len;             /* bytes up to and with the empty line */
    int64_t content_length;        /* -1: no Content-Length header */
    struct mt_http_str authorization; /* first Authorization value */
    struct mt_http_str accept;     /* Accept value; n = 0: none */
    size_t n_headers;
    struct mt_http_header headers[MT_HTTP_MAX_HEADERS];
};

/* ---- parsing ------------------------------------------------------------- */

/*
 * mt_http_check_prefix - whether buf can still be the start of a request:
 * only its method (the first MT_HTTP_MAX_METHOD + 1 bytes at most) is
 * looked at, so calling it on every read costs O(1), and garbage is
 * refused as soon as its first bad byte arrives.
 *
 * RET 0 (plausible so far) or 400
 */
int mt_http_check_prefix(const char *buf, size_t len);

/*
 * mt_http_headers_end - find the empty line that ends the header block.
 *
 * IN     buf, len  the bytes received so far
 * IN/OUT from      where to resume scanning; start at 0 and pass the same
 *                  variable on every call, so each byte is scanned about
 *                  once however the request is split into reads
 * RET the header block's length (through the empty line), or 0: not yet
 */
size_t mt_http_headers_end(const char *buf, size_t len, size_t *from);

/*
 * mt_http_parse - parse the request head at the start of buf.
 *
 * IN  buf, len  the bytes received so far (may include a body after it)
 * OUT req       filled when the result is 200; views into buf
 * RET 0, 200, 400, 413, 431 or 501 (see the top of this file)
 * OWNERSHIP     borrows buf; req's views point into it
 */
int mt_http_parse(const char *buf, size_t len, struct mt_http_req *req);

/* ---- credentials and parameters ------------------------------------------ */

/*
 * mt_http_bearer - the token of "Authorization: Bearer <token>" (the
 * scheme is case-insensitive). RET true with *tok set, false when the
 * request has no such header.
 */
bool mt_http_bearer(const struct mt_http_req *req, struct mt_http_str *tok);

/*
 * mt_http_cookie - the value of cookie name in the request's Cookie
 * headers (the first one that has it), percent-decoded into out.
 *
 * OUT out, *outlen  decoded value, NUL-terminated (outsize includes it)
 * RET true when found and it fit; false otherwise
 */
bool mt_http_cookie(const struct mt_http_req *req, const char *name,
                    char *out, size_t outsize, size_t *outlen);

/*
 * mt_http_param - the value of parameter name in "a=1&b=2" (a query
 * string or a form body), percent-decoded ('+' is a space) into out.
 *
 * OUT out, *outlen  decoded value, NUL-terminated (outsize includes it);
 *                  out NULL: only say whether the parameter is there
 * RET true when found and it fit; false otherwise
 */
bool mt_http_param(struct mt_http_str params, const char *name, char *out,
                   size_t outsize, size_t *outlen);

/*
 * mt_http_param_uint - parameter name of a query string as a whole
 * decimal number (digits only, at most max).
 *
 * OUT out  the value, or def when the parameter is absent
 * RET true, or false when it is there but empty, not a number or > max
 */
bool mt_http_param_uint(struct mt_http_str params, const char *name,
                        uint64_t def, uint64_t max, uint64_t *out);

/*
 * mt_http_param_strip - params without every "name=..." (and without a
 * bare "name"), joined by '&'. out needs at most params.n + 1 bytes.
 *
 * RET the length written (NUL-terminated), or 0 when nothing is left or
 *     out is too small
 */
size_t mt_http_param_strip(struct mt_http_str params, const char *name,
                           char *out, size_t outsize);

/*
 * mt_http_str_eq - s equals the C string lit, case-insensitively when
 * nocase. RET true or false.
 */
bool mt_http_str_eq(struct mt_http_str s, const char *lit, bool nocase);

#endif /* MT_HTTP_H */
