/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_qty.c -- fixed-point quantities and the flag parsers of common/qty.h:
 * numbers, byte sizes, the flat JSON resource map, "k=v" label lists and the
 * two list types they fill.
 *
 * Most tests walk a table of inputs and expected results. Every list a test
 * fills is released before it returns, so ASan and valgrind runs stay clean.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/qty.h"
#include "tests/unit/unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- numbers ------------------------------------------------------------- */

static void test_parse_valid(void)
{
    static const struct {
        const char *in;
        int64_t want;
    } cases[] = {
        {"0", 0},           {"2", 20000},       {"0.25", 2500},
        {"1e3", 10000000},  {"1.5", 15000},     {"0.0001", 1},
        {"0.00004", 0},     {"12.3456", 123456}, {"1000000", 10000000000LL},
        {"0.1", 1000},      {"3.", 30000},      {".5", 5000},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        int64_t q = -42;
        int rc = mt_qty_parse(cases[i].in, &q);

        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL(q, cases[i].want);
        if (rc != 0 || q != cases[i].want)
            fprintf(stderr, "mt_qty_parse(\"%s\") = %d, %lld\n", cases[i].in,
                    rc, (long long)q);
    }
}

static void test_parse_invalid(void)
{
    static const char *const cases[] = {
        "",     " 1",   "1 ",   "abc",  "1x",  "-1",   "-0.5",
        "nan",  "inf",  "1e300", "1,5", "2GiB", "--1", "\t2",
    };
    int64_t q = -42;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        int rc = mt_qty_parse(cases[i], &q);

        CU_ASSERT_EQUAL(rc, -MT_EINVAL);
        if (rc != -MT_EINVAL)
            fprintf(stderr, "mt_qty_parse(\"%s\") accepted\n", cases[i]);
    }
    CU_ASSERT_EQUAL(mt_qty_parse(NULL, &q), -MT_EINVAL);
    /* A failed parse leaves the output alone. */
    CU_ASSERT_EQUAL(q, -42);
}

static void test_from_double(void)
{
    static const struct {
        double in;
        int64_t want;
    } cases[] = {
        {0.0, 0},        {1.0, 10000},  {1.5, 15000},   {0.25, 2500},
        {0.0001, 1},     {0.00004, 0},  {2.00006, 20001}, {-0.5, -1},
        {-1e-9, -1},     {1e300, -1},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
        CU_ASSERT_EQUAL(mt_qty_from_double(cases[i].in), cases[i].want);
    CU_ASSERT_EQUAL(mt_qty_from_double(NAN), -1);
    CU_ASSERT_EQUAL(mt_qty_from_double(INFINITY), -1);
    CU_ASSERT_EQUAL(mt_qty_from_double(-INFINITY), -1);
}

static void test_format(void)
{
    static const struct {
        int64_t in;
        const char *want;
    } cases[] = {
        {0, "0"},           {20000, "2"},        {2500, "0.25"},
        {1, "0.0001"},      {15000, "1.5"},      {1000, "0.1"},
        {12345, "1.2345"},  {10010000, "1001"},  {10000001, "1000.0001"},
        {-15000, "-1.5"},   {-1, "-0.0001"},     {-20000, "-2"},
        {10000000000LL, "1000000"},
    };
    char buf[32];

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        CU_ASSERT_PTR_EQUAL(mt_qty_format(cases[i].in, buf, sizeof(buf)), buf);
        CU_ASSERT_STRING_EQUAL(buf, cases[i].want);
    }
}

/* Every formatted non-negative quantity parses back to itself. */
static void test_format_round_trip(void)
{
    static const int64_t cases[] = {
        0, 1, 9, 10, 99, 1234, 9999, 10000, 10001, 123456789, 4000000000000LL,
    };
    char buf[32];

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        int64_t q = -1;

        mt_qty_format(cases[i], buf, sizeof(buf));
        CU_ASSERT_EQUAL(mt_qty_parse(buf, &q), 0);
        CU_ASSERT_EQUAL(q, cases[i]);
    }
}

/* ---- byte sizes ---------------------------------------------------------- */

static void test_bytes_format(void)
{
    static const struct {
        double in;
        const char *want;
    } cases[] = {
        {0, "0B"},
        {1, "1B"},
        {1023, "1023B"},
        {1024, "1.0KiB"},
        {1536, "1.5KiB"},
        {1048576, "1.0MiB"},
        {25769803776.0, "24.0GiB"},
        {1099511627776.0, "1.0TiB"},
        {1125899906842624.0, "1.0PiB"},
        {1152921504606846976.0, "1024.0PiB"}, /* no unit past PiB */
    };
    char buf[32];

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        CU_ASSERT_PTR_EQUAL(mt_bytes_format(cases[i].in, buf, sizeof(buf)),
                            buf);
        CU_ASSERT_STRING_EQUAL(buf, cases[i].want);
    }
}

static void test_bytes_parse_valid(void)
{
    static const struct {
        const char *in;
        uint64_t want;
    } cases[] = {
        {"0", 0},
        {"1024", 1024},
        {"10b", 10},
        {"1k", 1000},
        {"1KB", 1000},
        {"1KiB", 1024},
        {"512MiB", 536870912ULL},
        {"3m", 3000000ULL},
        {"4G", 4000000000ULL},
        {"1.5GiB", 1610612736ULL},
        {"2gb", 2000000000ULL},
        {"2tb", 2000000000000ULL},
        {"1TiB", 1099511627776ULL},
        {"1t", 1000000000000ULL},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        uint64_t b = 42;
        int rc = mt_bytes_parse(cases[i].in, &b);

        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL(b, cases[i].want);
        if (rc != 0 || b != cases[i].want)
            fprintf(stderr, "mt_bytes_parse(\"%s\") = %d, %llu\n",
                    cases[i].in, rc, (unsigned long long)b);
    }
}

static void test_bytes_parse_invalid(void)
{
    static const char *const cases[] = {
        "",     "abc",  "-1",   "-1GiB", "1XB",  "1 GiB", "1GiBs",
        "GiB",  "nan",  "1e30", "inf",   "1PiB", "1gi",   "1.5.5",
    };
    uint64_t b = 42;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        int rc = mt_bytes_parse(cases[i], &b);

        CU_ASSERT_EQUAL(rc, -MT_EINVAL);
        if (rc != -MT_EINVAL)
            fprintf(stderr, "mt_bytes_parse(\"%s\") accepted\n", cases[i]);
    }
    CU_ASSERT_EQUAL(mt_bytes_parse(NULL, &b), -MT_EINVAL);
    CU_ASSERT_EQUAL(b, 42);
}

/* ---- lists --------------------------------------------------------------- */

static void test_qty_list(void)
{
    struct mt_qty_list l = {NULL, 0, 0};
    char name[16];

    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "CPU"), -1);
    mt_qty_list_set(&l, "CPU", 40000);
    mt_qty_list_set(&l, "GPU", 0);
    CU_ASSERT_EQUAL(l.n, 2);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "CPU"), 40000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "GPU"), 0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "cpu"), -1);

    /* set replaces in place; the list owns its copy of the name */
    snprintf(name, sizeof(name), "CPU");
    mt_qty_list_set(&l, name, 5000);
    name[0] = 'X';
    CU_ASSERT_EQUAL(l.n, 2);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "CPU"), 5000);
    CU_ASSERT_STRING_EQUAL(l.v[0].name, "CPU");

    /* growth past the first allocation */
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "r%d", i);
        mt_qty_list_set(&l, name, i);
    }
    CU_ASSERT_EQUAL(l.n, 102);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "r99"), 99);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "CPU"), 5000);

    mt_qty_list_release(&l);
    CU_ASSERT_PTR_NULL(l.v);
    CU_ASSERT_EQUAL(l.n, 0);
    CU_ASSERT_EQUAL(l.cap, 0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "CPU"), -1);
    mt_qty_list_release(&l); /* twice is harmless */

    /* reusable after release */
    mt_qty_list_set(&l, "memory", 1);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "memory"), 1);
    mt_qty_list_release(&l);
}

static void test_kv_list(void)
{
    struct mt_kv_list l = {NULL, 0, 0};
    char key[8] = "zone", val[8] = "us-1";

    CU_ASSERT_PTR_NULL(mt_kv_list_get(&l, "zone"));
    mt_kv_list_set(&l, key, val);
    key[0] = val[0] = 'X'; /* the list keeps copies */
    mt_kv_list_set(&l, "empty", "");
    CU_ASSERT_EQUAL(l.n, 2);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&l, "zone"), "us-1");
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&l, "empty"), "");
    CU_ASSERT_PTR_NULL(mt_kv_list_get(&l, "Zone"));

    mt_kv_list_set(&l, "zone", "eu-2");
    CU_ASSERT_EQUAL(l.n, 2);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&l, "zone"), "eu-2");

    mt_kv_list_release(&l);
    CU_ASSERT_PTR_NULL(l.v);
    CU_ASSERT_EQUAL(l.n, 0);
    CU_ASSERT_PTR_NULL(mt_kv_list_get(&l, "zone"));
    mt_kv_list_release(&l);
}

/* ---- the JSON resource map ----------------------------------------------- */

static void test_parse_json_valid(void)
{
    struct mt_qty_list l = {NULL, 0, 0};
    char err[128] = "";

    CU_ASSERT_EQUAL(
        mt_qty_parse_json("{\"GPU\": 2, \"accel\": 0.5}", &l, err, sizeof(err)),
        0);
    CU_ASSERT_EQUAL(l.n, 2);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "GPU"), 20000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "accel"), 5000);
    CU_ASSERT_STRING_EQUAL(err, "");

    /* entries are added to or replace what the list holds */
    CU_ASSERT_EQUAL(mt_qty_parse_json(" \n{\t\"GPU\" :4 ,\"x/y.z\":0 }\n", &l,
                                      err, sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(l.n, 3);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "GPU"), 40000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "accel"), 5000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "x/y.z"), 0);
    mt_qty_list_release(&l);

    /* empty objects */
    CU_ASSERT_EQUAL(mt_qty_parse_json("{}", &l, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(mt_qty_parse_json("  {  }  ", &l, NULL, 0), 0);
    CU_ASSERT_EQUAL(l.n, 0);

    /* a repeated name keeps the last value */
    CU_ASSERT_EQUAL(mt_qty_parse_json("{\"a\":1,\"a\":3}", &l, NULL, 0), 0);
    CU_ASSERT_EQUAL(l.n, 1);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "a"), 30000);

    /* \" \\ and \/ escapes in names, exponents in values */
    CU_ASSERT_EQUAL(
        mt_qty_parse_json("{\"q\\\"t\": 1e2, \"b\\\\s\\/\": 0.0001}", &l,
                          err, sizeof(err)),
        0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "q\"t"), 1000000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&l, "b\\s/"), 1);
    mt_qty_list_release(&l);
}

static void test_parse_json_invalid(void)
{
    /* want: a piece of the message the user sees */
    static const struct {
        const char *in;
        const char *want;
    } cases[] = {
        {"", "expected a JSON object"},
        {"   ", "expected a JSON object"},
        {"GPU=2", "expected a JSON object"},
        {"[1, 2]", "expected a JSON object"},
        {"2", "expected a JSON object"},
        {"{", "non-empty quoted resource name"},
        {"{\"\": 1}", "non-empty quoted resource name"},
        {"{GPU: 1}", "non-empty quoted resource name"},
        {"{'GPU': 1}", "non-empty quoted resource name"},
        {"{\"GPU\": 1,}", "non-empty quoted resource name"},
        {"{,}", "non-empty quoted resource name"},
        {"{\"GP\\u0055\": 1}", "non-empty quoted resource name"},
        {"{\"a\nb\": 1}", "non-empty quoted resource name"},
        {"{\"GPU", "non-empty quoted resource name"},
        {"{\"GPU\" 1}", "expected ':'"},
        {"{\"GPU\"}", "expected ':'"},
        {"{\"GPU\": -1}", "resource \"GPU\" needs a non-negative number"},
        {"{\"GPU\": -0.5}", "resource \"GPU\" needs a non-negative number"},
        {"{\"GPU\": {\"x\": 1}}", "resource \"GPU\" needs a non-negative"},
        {"{\"GPU\": [1]}", "resource \"GPU\" needs a non-negative number"},
        {"{\"GPU\": \"1\"}", "resource \"GPU\" needs a non-negative number"},
        {"{\"GPU\": true}", "resource \"GPU\" needs a non-negative number"},
        {"{\"GPU\": null}", "resource \"GPU\" needs a non-negative number"},
        {"{\"GPU\": }", "resource \"GPU\" needs a non-negative number"},
        {"{\"GPU\": nan}", "resource \"GPU\" needs a non-negative number"},
        {"{\"GPU\": 1e400}", "resource \"GPU\" needs a non-negative number"},
        {"{\"GPU\": 1e300}", "resource \"GPU\" needs a non-negative number"},
        {"{\"GPU\": 1", "expected ',' or '}'"},
        {"{\"GPU\": 1 \"CPU\": 2}", "expected ',' or '}'"},
        {"{\"GPU\": 1x}", "expected ',' or '}'"},
        {"{\"GPU\": 1} x", "expected ',' or '}'"},
        {"{\"GPU\": 1}}", "expected ',' or '}'"},
        {"{\"GPU\": 1}{}", "expected ',' or '}'"},
        {"{} x", "trailing characters"},
        {"{}{}", "trailing characters"},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_qty_list l = {NULL, 0, 0};
        char err[128] = "";
        int rc = mt_qty_parse_json(cases[i].in, &l, err, sizeof(err));

        CU_ASSERT_EQUAL(rc, -MT_EINVAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].want));
        if (rc != -MT_EINVAL || !strstr(err, cases[i].want))
            fprintf(stderr, "json '%s': rc %d err '%s'\n", cases[i].in, rc,
                    err);
        /* no message buffer at all is fine too */
        CU_ASSERT_EQUAL(mt_qty_parse_json(cases[i].in, &l, NULL, 0),
                        -MT_EINVAL);
        /* entries before the error may have been added: the caller frees */
        mt_qty_list_release(&l);
    }
}

static void test_parse_json_null_and_short_err(void)
{
    struct mt_qty_list l = {NULL, 0, 0};
    char err[8];

    memset(err, 'Z', sizeof(err));
    CU_ASSERT_EQUAL(mt_qty_parse_json(NULL, &l, err, sizeof(err)), -MT_EINVAL);
    /* the message is cut to the buffer and stays NUL-terminated */
    CU_ASSERT_EQUAL(strlen(err), sizeof(err) - 1);
    CU_ASSERT_EQUAL(l.n, 0);
}

/* ---- k=v label lists ----------------------------------------------------- */

static void test_kv_parse_valid(void)
{
    struct mt_kv_list l = {NULL, 0, 0};
    char err[128] = "";

    CU_ASSERT_EQUAL(mt_kv_parse("zone=us-1,tier=gold", &l, err, sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(l.n, 2);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&l, "zone"), "us-1");
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&l, "tier"), "gold");
    CU_ASSERT_STRING_EQUAL(err, "");
    mt_kv_list_release(&l);

    /* nothing at all is an empty list */
    CU_ASSERT_EQUAL(mt_kv_parse("", &l, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(mt_kv_parse(NULL, &l, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(l.n, 0);

    /* empty values, '=' inside values, every key character, repeats */
    CU_ASSERT_EQUAL(mt_kv_parse("a=,b=x=y,A.z_9/-k=v,a=2", &l, NULL, 0), 0);
    CU_ASSERT_EQUAL(l.n, 3);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&l, "a"), "2");
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&l, "b"), "x=y");
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&l, "A.z_9/-k"), "v");
    mt_kv_list_release(&l);

    /* a single empty value */
    CU_ASSERT_EQUAL(mt_kv_parse("k=", &l, NULL, 0), 0);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&l, "k"), "");
    mt_kv_list_release(&l);
}

static void test_kv_parse_invalid(void)
{
    static const struct {
        const char *in;
        const char *want;
    } cases[] = {
        {"zone", "bad label \"zone\""},
        {"=v", "bad label \"=v\""},
        {"a=1,", "bad label \"\""},
        {",a=1", "bad label \"\""},
        {"a=1,,b=2", "bad label \"\""},
        {"a b=1", "bad label \"a b=1\""},
        {"k!=v", "bad label \"k!=v\""},
        {" k=v", "bad label \" k=v\""},
        {"a=1,b", "bad label \"b\""},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_kv_list l = {NULL, 0, 0};
        char err[128] = "";
        int rc = mt_kv_parse(cases[i].in, &l, err, sizeof(err));

        CU_ASSERT_EQUAL(rc, -MT_EINVAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].want));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "expected key=value"));
        if (rc != -MT_EINVAL || !strstr(err, cases[i].want))
            fprintf(stderr, "kv '%s': rc %d err '%s'\n", cases[i].in, rc,
                    err);
        CU_ASSERT_EQUAL(mt_kv_parse(cases[i].in, &l, NULL, 0), -MT_EINVAL);
        mt_kv_list_release(&l);
    }
}

CU_TestInfo mt_test_qty[] = {
    {"parse_valid", test_parse_valid},
    {"parse_invalid", test_parse_invalid},
    {"from_double", test_from_double},
    {"format", test_format},
    {"format_round_trip", test_format_round_trip},
    {"bytes_format", test_bytes_format},
    {"bytes_parse_valid", test_bytes_parse_valid},
    {"bytes_parse_invalid", test_bytes_parse_invalid},
    {"qty_list", test_qty_list},
    {"kv_list", test_kv_list},
    {"parse_json_valid", test_parse_json_valid},
    {"parse_json_invalid", test_parse_json_invalid},
    {"parse_json_null_and_short_err", test_parse_json_null_and_short_err},
    {"kv_parse_valid", test_kv_parse_valid},
    {"kv_parse_invalid", test_kv_parse_invalid},
    CU_TEST_INFO_NULL,
};

/* ---- KNOWN BUGS: these fail until the code is fixed ---------------------- */

/*
 * KNOWN BUG (common/qty.c mt_qty_format): a negative quantity is formatted
 * by recursing into an 8-byte scratch buffer, so any magnitude longer than
 * 7 characters is silently cut: -123.4567 prints as "-123.456" and
 * -12345.6789 as "-12345.6". Positive values are fine (test_format).
 */
static void test_bug_format_negative_truncated(void)
{
    static const struct {
        int64_t in;
        const char *want;
    } cases[] = {
        {-1234567, "-123.4567"},
        {-123456789, "-12345.6789"},
        {-100000001, "-10000.0001"},
    };
    char buf[32];

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        mt_qty_format(cases[i].in, buf, sizeof(buf));
        CU_ASSERT_STRING_EQUAL(buf, cases[i].want);
    }
}

CU_TestInfo mt_test_qty_regressions[] = {
    {"format_negative_truncated", test_bug_format_negative_truncated},
    CU_TEST_INFO_NULL,
};
