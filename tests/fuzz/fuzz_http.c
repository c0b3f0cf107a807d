/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_http.c -- libFuzzer harness for the dashboard's request parser
 * (common/http.c): the bytes are a request as a client would send it. Every
 * request that parses is then taken apart the way the dashboard does
 * (bearer token, the token cookie, the ?token= parameter and the query
 * without it, a form body), and every view the parser hands out must lie
 * inside the input. Seeds: tests/fuzz/corpus/http/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/http.h"

#define TOKEN_MAX 300

/* A view must be empty or lie within [buf, buf + len). */
static void check_view(struct mt_http_str s, const uint8_t *buf, size_t len)
{
    const char *b = (const char *)buf;

    if (s.n && (s.p < b || s.p + s.n > b + len))
        __builtin_trap();
}

static void check_req(const struct mt_http_req *r, const uint8_t *buf,
                      size_t len)
{
    check_view(r->method, buf, len);
    check_view(r->target, buf, len);
    check_view(r->path, buf, len);
    check_view(r->query, buf, len);
    check_view(r->authorization, buf, len);
    check_view(r->accept, buf, len);
    if (r->header_len > len || r->n_headers > MT_HTTP_MAX_HEADERS ||
        r->path.n == 0 || r->path.p[0] != '/')
        __builtin_trap();
    for (size_t i = 0; i < r->n_headers; i++) {
        check_view(r->headers[i].name, buf, len);
        check_view(r->headers[i].value, buf, len);
    }
}

/* What the dashboard does with a parsed request's credentials. */
static void take_apart(const struct mt_http_req *r, const uint8_t *buf,
                       size_t len)
{
    char out[TOKEN_MAX + 1], *rest;
    struct mt_http_str tok, body;
    size_t n;

    if (mt_http_bearer(r, &tok))
        check_view(tok, buf, len);
    if (mt_http_cookie(r, "manta_token", out, sizeof(out), &n) &&
        (n > TOKEN_MAX || out[n] != '\0'))
        __builtin_trap();
    if (mt_http_param(r->query, "token", out, sizeof(out), &n) &&
        (n > TOKEN_MAX || out[n] != '\0'))
        __builtin_trap();
    rest = malloc(r->query.n + 1);
    if (rest) {
        n = mt_http_param_strip(r->query, "token", rest, r->query.n + 1);
        if (n > r->query.n || rest[n] != '\0')
            __builtin_trap();
        free(rest);
    }
    body.p = (const char *)buf + r->header_len;
    body.n = len - r->header_len;
    mt_http_param(body, "token", out, sizeof(out), &n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes, so ASan sees any read past the end. */
    uint8_t *buf = malloc(size ? size : 1);
    struct mt_http_req *r = malloc(sizeof(*r));
    size_t from = 0;

    if (!buf || !r)
        goto out;
    memcpy(buf, data, size);
    mt_http_check_prefix((const char *)buf, size);
    if (mt_http_headers_end((const char *)buf, size, &from) > size)
        __builtin_trap();
    if (mt_http_parse((const char *)buf, size, r) == 200) {
        check_req(r, buf, size);
        take_apart(r, buf, size);
    }
out:
    free(r);
    free(buf);
    return 0;
}
