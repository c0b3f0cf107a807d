/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_parse.c -- the option value parsers of common/parse.h: bounded
 * integers, "host:port" and dotted-quad IPv4 addresses.
 */
#include <limits.h>
#include <stdio.h>

#include "common/parse.h"
#include "tests/unit/unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_parse_int(void)
{
    static const struct {
        const char *in;
        long min, max;
        bool ok;
        long want;
    } cases[] = {
        {"0", 0, 10, true, 0},
        {"10", 0, 10, true, 10},
        {"11", 0, 10, false, 0},
        {"-1", 0, 10, false, 0},
        {"-5", -10, 10, true, -5},
        {"-10", -10, 10, true, -10},
        {"-11", -10, 10, false, 0},
        {"+7", 0, 10, true, 7},
        {"007", 0, 10, true, 7},
        {"65535", 1, 65535, true, 65535},
        {"65536", 1, 65535, false, 0},
        {"9223372036854775807", 0, LONG_MAX, true, LONG_MAX},
        {"9223372036854775808", 0, LONG_MAX, false, 0},
        {"-9223372036854775809", LONG_MIN, 0, false, 0},
        {"99999999999999999999999", LONG_MIN, LONG_MAX, false, 0},
        {"", 0, 10, false, 0},
        {"abc", 0, 10, false, 0},
        {"1x", 0, 10, false, 0},
        {"5 ", 0, 10, false, 0},
        {"1.5", 0, 10, false, 0},
        {"0x5", 0, 10, false, 0},
        {"-", -10, 10, false, 0},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        long v = -4242;
        bool ok = mt_parse_int(cases[i].in, cases[i].min, cases[i].max, &v);

        CU_ASSERT_EQUAL(ok, cases[i].ok);
        /* on failure the output is left alone */
        CU_ASSERT_EQUAL(v, cases[i].ok ? cases[i].want : -4242);
        if (ok != cases[i].ok)
            fprintf(stderr, "mt_parse_int(\"%s\", %ld, %ld) = %d\n",
                    cases[i].in, cases[i].min, cases[i].max, ok);
    }
    {
        long v = -4242;

        CU_ASSERT_FALSE(mt_parse_int(NULL, 0, 10, &v));
        CU_ASSERT_EQUAL(v, -4242);
    }
}

static void test_host_port(void)
{
    static const struct {
        const char *in;
        bool ok;
    } cases[] = {
        {"127.0.0.1:8000", true},
        {"localhost:1", true},
        {"head.example.com:65535", true},
        {"10.0.0.2:6379", true},
        {"[::1]:80", true},
        {"host:0", false},
        {"host:65536", false},
        {"host:-1", false},
        {"host:", false},
        {"host:80x", false},
        {"host:abc", false},
        {":80", false},
        {"host", false},
        {"", false},
        {"80", false},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        bool ok = mt_parse_host_port(cases[i].in);

        CU_ASSERT_EQUAL(ok, cases[i].ok);
        if (ok != cases[i].ok)
            fprintf(stderr, "mt_parse_host_port(\"%s\") = %d\n", cases[i].in,
                    ok);
    }
    CU_ASSERT_FALSE(mt_parse_host_port(NULL));
}

static void test_valid_ipv4(void)
{
    static const struct {
        const char *in;
        bool ok;
    } cases[] = {
        {"127.0.0.1", true},
        {"0.0.0.0", true},
        {"255.255.255.255", true},
        {"10.1.2.3", true},
        {"256.0.0.1", false},
        {"1.2.3", false},
        {"1.2.3.4.5", false},
        {"1.2.3.", false},
        {"a.b.c.d", false},
        {"", false},
        {"::1", false},
        {" 1.2.3.4", false},
        {"1.2.3.4 ", false},
        {"1.2.3.4:80", false},
        {"localhost", false},
        {"-1.2.3.4", false},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        bool ok = mt_valid_ipv4(cases[i].in);

        CU_ASSERT_EQUAL(ok, cases[i].ok);
        if (ok != cases[i].ok)
            fprintf(stderr, "mt_valid_ipv4(\"%s\") = %d\n", cases[i].in, ok);
    }
    CU_ASSERT_FALSE(mt_valid_ipv4(NULL));
}

CU_TestInfo mt_test_parse[] = {
    {"parse_int", test_parse_int},
    {"host_port", test_host_port},
    {"valid_ipv4", test_valid_ipv4},
    CU_TEST_INFO_NULL,
};
