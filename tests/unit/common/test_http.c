/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_http.c -- the dashboard's request parser (common/http.c): framing,
 * the request line, headers and their limits, and the credential helpers
 * (bearer token, cookie, query and form parameters, whole numbers).
 */
#include <stdlib.h>
#include <string.h>

#include "common/http.h"
#include "tests/unit/unit.h"

static int parse(const char *s, struct mt_http_req *r)
{
    return mt_http_parse(s, strlen(s), r);
}

static bool eq(struct mt_http_str s, const char *lit)
{
    return mt_http_str_eq(s, lit, false);
}

static void test_request_line(void)
{
    struct mt_http_req r;

    CU_ASSERT_EQUAL_FATAL(
        parse("GET /metrics?x=1&token=ab#f HTTP/1.1\r\nHost: h\r\n\r\n", &r),
        200);
    CU_ASSERT(eq(r.method, "GET") && eq(r.path, "/metrics"));
    CU_ASSERT(eq(r.query, "x=1&token=ab"));
    CU_ASSERT(eq(r.target, "/metrics?x=1&token=ab#f"));
    CU_ASSERT_EQUAL(r.minor, 1);
    CU_ASSERT_EQUAL(r.content_length, -1);
    CU_ASSERT_EQUAL(r.n_headers, 1);
    CU_ASSERT(eq(r.headers[0].name, "Host") && eq(r.headers[0].value, "h"));
    /* bare LF, HTTP/1.0, no query */
    CU_ASSERT_EQUAL_FATAL(parse("HEAD / HTTP/1.0\n\n", &r), 200);
    CU_ASSERT(eq(r.path, "/") && r.query.n == 0 && r.minor == 0);
    CU_ASSERT_EQUAL(r.header_len, strlen("HEAD / HTTP/1.0\n\n"));
}

static void test_bad_requests(void)
{
    static const char *const bad[] = {
        "GET / FOO/9\r\n\r\n",
        "GET metrics HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nno colon here\r\n\r\n",
        "GET / HTTP/1.1\r\n: empty name\r\n\r\n",
        "GET / HTTP/1.1\r\nbad name: x\r\n\r\n",
        "GET / HTTP/1.1\r\n folded: x\r\n\r\n",
        "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",
        "GET  / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1 \r\n\r\n",
        "GET /\x7f HTTP/1.1\r\n\r\n",
        "\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 1234567890123456789\r\n\r\n",
        "GET / HTTP/1.1\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n",
    };
    struct mt_http_req r;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CU_ASSERT_EQUAL(parse(bad[i], &r), 400);
    CU_ASSERT_EQUAL(
        parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &r),
        501);
    CU_ASSERT_EQUAL(mt_http_parse("GET / HTTP/1.1\r\n\0\r\n\r\n", 21, &r),
                    400);
}

static void test_prefix_and_framing(void)
{
    struct mt_http_req r;
    const char *req = "GET / HTTP/1.1\r\nA: b\r\n\r\n";
    size_t from = 0, n = strlen(req), end = 0;

    CU_ASSERT_EQUAL(mt_http_check_prefix("\x16\x03\x01", 3), 400);
    CU_ASSERT_EQUAL(mt_http_check_prefix("\0", 1), 400);
    CU_ASSERT_EQUAL(mt_http_check_prefix(" GET", 4), 400);
    CU_ASSERT_EQUAL(mt_http_check_prefix("GE", 2), 0);
    CU_ASSERT_EQUAL(mt_http_check_prefix("AAAAAAAAAAAAAAAAA", 17), 400);
    CU_ASSERT_EQUAL(mt_http_check_prefix("AAAAAAAAAAAAAAAA ", 17), 0);
    CU_ASSERT_EQUAL(parse("GET / HTTP/1.1\r\nHost: x\r\n", &r), 0);
    /* byte by byte, resuming: the end is found exactly once, at the end */
    for (size_t i = 1; i <= n && !end; i++) {
        end = mt_http_headers_end(req, i, &from);
        CU_ASSERT(end == 0 || i == n);
    }
    CU_ASSERT_EQUAL(end, n);
}

static void test_limits(void)
{
    size_t big = MT_HTTP_MAX_HEADER + 100, n;
    char *buf = malloc(big + 1);
    struct mt_http_req r;

    CU_ASSERT_FATAL(buf != NULL);
    n = (size_t)sprintf(buf, "GET / HTTP/1.1\r\nX-Big: ");
    memset(buf + n, 'a', big - n);
    buf[big] = '\0';
    CU_ASSERT_EQUAL(mt_http_parse(buf, big, &r), 413);
    CU_ASSERT_EQUAL(mt_http_parse(buf, MT_HTTP_MAX_HEADER - 1, &r), 0);
    /* MT_HTTP_MAX_HEADERS lines are fine, one more is not */
    n = (size_t)sprintf(buf, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < MT_HTTP_MAX_HEADERS; i++)
        n += (size_t)sprintf(buf + n, "H%d: v\r\n", i);
    strcpy(buf + n, "\r\n");
    CU_ASSERT_EQUAL(parse(buf, &r), 200);
    CU_ASSERT_EQUAL(r.n_headers, MT_HTTP_MAX_HEADERS);
    strcpy(buf + n, "X: y\r\n\r\n");
    CU_ASSERT_EQUAL(parse(buf, &r), 431);
    free(buf);
}

static void test_headers(void)
{
    struct mt_http_req r;
    struct mt_http_str tok;

    CU_ASSERT_EQUAL_FATAL(parse("POST /login HTTP/1.1\r\n"
                                "content-length: 12\r\n"
                                "AUTHORIZATION:  bearer  s3cret-token \r\n"
                                "Accept: text/html,*/*\r\n\r\n",
                                &r),
                          200);
    CU_ASSERT_EQUAL(r.content_length, 12);
    CU_ASSERT(eq(r.accept, "text/html,*/*"));
    CU_ASSERT_FATAL(mt_http_bearer(&r, &tok));
    CU_ASSERT(eq(tok, "s3cret-token"));
    CU_ASSERT_EQUAL_FATAL(
        parse("GET / HTTP/1.1\r\nAuthorization: Basic eDp5\r\n\r\n", &r), 200);
    CU_ASSERT(!mt_http_bearer(&r, &tok));
    CU_ASSERT_EQUAL_FATAL(
        parse("GET / HTTP/1.1\r\nAuthorization: Bearer a b\r\n\r\n", &r), 200);
    CU_ASSERT(!mt_http_bearer(&r, &tok));
    CU_ASSERT_EQUAL_FATAL(parse("GET / HTTP/1.1\r\n\r\n", &r), 200);
    CU_ASSERT(!mt_http_bearer(&r, &tok));
}

static void test_cookie(void)
{
    struct mt_http_req r;
    char out[16];
    size_t n;

    CU_ASSERT_EQUAL_FATAL(parse("GET / HTTP/1.1\r\n"
                                "Cookie: a=1; manta_tokenx=no\r\n"
                                "Cookie: b=2;  manta_token=\"ab%2Bc\" ; c=3\r\n"
                                "\r\n",
                                &r),
                          200);
    CU_ASSERT_FATAL(mt_http_cookie(&r, "manta_token", out, sizeof(out), &n));
    CU_ASSERT(n == 4 && strcmp(out, "ab+c") == 0);
    CU_ASSERT(mt_http_cookie(&r, "c", out, sizeof(out), &n) && n == 1);
    CU_ASSERT(!mt_http_cookie(&r, "manta", out, sizeof(out), &n));
    /* too long for out, or a bad escape: not found */
    CU_ASSERT(!mt_http_cookie(&r, "manta_token", out, 4, &n));
    CU_ASSERT_EQUAL_FATAL(
        parse("GET / HTTP/1.1\r\nCookie: manta_token=a%zz\r\n\r\n", &r), 200);
    CU_ASSERT(!mt_http_cookie(&r, "manta_token", out, sizeof(out), &n));
}

static struct mt_http_str s(const char *lit)
{
    struct mt_http_str v = {lit, strlen(lit)};

    return v;
}

static void test_params(void)
{
    char out[32];
    size_t n;

    CU_ASSERT(mt_http_param(s("x=1&token=a%41b+c&y"), "token", out,
                            sizeof(out), &n));
    CU_ASSERT(n == 5 && strcmp(out, "aAb c") == 0);
    CU_ASSERT(mt_http_param(s("y&token="), "token", out, sizeof(out), &n) &&
              n == 0);
    CU_ASSERT(!mt_http_param(s("tokens=1"), "token", out, sizeof(out), &n));
    CU_ASSERT(!mt_http_param(s("token=%4"), "token", out, sizeof(out), &n));
    CU_ASSERT(!mt_http_param(s("token=%00"), "token", out, sizeof(out), &n));
    CU_ASSERT(!mt_http_param(s(""), "token", out, sizeof(out), &n));
    CU_ASSERT_EQUAL(mt_http_param_strip(s("x=1&token=ab&&y&token"), "token",
                                        out, sizeof(out)),
                    5);
    CU_ASSERT_STRING_EQUAL(out, "x=1&y");
    CU_ASSERT_EQUAL(mt_http_param_strip(s("token=ab"), "token", out,
                                        sizeof(out)),
                    0);
    CU_ASSERT_STRING_EQUAL(out, "");
    CU_ASSERT_EQUAL(mt_http_param_strip(s("abcdef"), "token", out, 4), 0);
}

/* Whole-number parameters of the dashboard's /api (head/api.c). */
static void test_param_uint(void)
{
    struct mt_http_str q = {"limit=25&offset=&n=abc&big=99999999999999999999"
                            "9&z=007", 0};
    uint64_t v;

    q.n = strlen(q.p);
    CU_ASSERT(mt_http_param_uint(q, "limit", 100, 1000, &v) && v == 25);
    CU_ASSERT(mt_http_param_uint(q, "absent", 100, 1000, &v) && v == 100);
    CU_ASSERT(mt_http_param_uint(q, "z", 0, 10, &v) && v == 7);
    CU_ASSERT(!mt_http_param_uint(q, "offset", 0, 10, &v)); /* empty */
    CU_ASSERT(!mt_http_param_uint(q, "n", 0, 10, &v));
    CU_ASSERT(!mt_http_param_uint(q, "big", 0, UINT64_MAX, &v));
    CU_ASSERT(!mt_http_param_uint(q, "limit", 0, 24, &v)); /* > max */
}

CU_TestInfo mt_test_http[] = {
    {"request line", test_request_line},
    {"bad requests", test_bad_requests},
    {"prefix and framing", test_prefix_and_framing},
    {"limits", test_limits},
    {"headers and bearer", test_headers},
    {"cookie", test_cookie},
    {"params", test_params},
    {"param uint", test_param_uint},
    CU_TEST_INFO_NULL,
};
