/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_toml.c -- the TOML subset reader of common/toml.h: every value kind
 * and header in a whole file, string escapes, integers at their limits,
 * TOML's one-definition rules, and for each rejected text the line and
 * the reason it names, including what the subset does not support.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/toml.h"
#include "tests/unit/unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_whole_file(void)
{
    static const char text[] =
        "# a cluster\n"
        "top = 1\n"
        "\n"
        "[cluster]   # the cluster\n"
        "name = \"lab\"\n"
        "port = 6_380\n"
        "quiet = false\n"
        "opts = [\"-i\", '~/.ssh/id',   # key\n"
        "        \"x\",\n"
        "]\n"
        "empty = []\r\n"
        "[[workers]]\n"
        "host = \"10.0.0.2\"\n"
        "[[workers]]\n"
        "  host='10.0.0.3'\n";
    struct mt_toml_doc d;
    struct mt_toml_error e;
    const struct mt_toml_item *it;

    CU_ASSERT_EQUAL_FATAL(mt_toml_parse(text, &d, &e), 0);
    CU_ASSERT_EQUAL_FATAL(d.n, 11);
    it = d.items;
    CU_ASSERT(it[0].kind == MT_TOML_KEY && it[0].v.type == MT_TOML_INT &&
              it[0].v.i == 1 && it[0].line == 2);
    CU_ASSERT(it[1].kind == MT_TOML_TABLE && it[1].line == 4);
    CU_ASSERT_STRING_EQUAL(it[1].name, "cluster");
    CU_ASSERT_STRING_EQUAL(it[2].v.str, "lab");
    CU_ASSERT(it[3].v.type == MT_TOML_INT && it[3].v.i == 6380);
    CU_ASSERT(it[4].v.type == MT_TOML_BOOL && !it[4].v.b);
    CU_ASSERT(it[5].v.type == MT_TOML_STRINGS && it[5].v.n == 3 &&
              it[5].line == 8);
    CU_ASSERT_STRING_EQUAL(it[5].v.strs[1], "~/.ssh/id");
    CU_ASSERT(it[6].v.type == MT_TOML_STRINGS && it[6].v.n == 0 &&
              it[6].line == 11);
    CU_ASSERT(it[7].kind == MT_TOML_TABLE_ARRAY && it[7].line == 12);
    CU_ASSERT(it[9].kind == MT_TOML_TABLE_ARRAY);
    CU_ASSERT_STRING_EQUAL(it[10].v.str, "10.0.0.3");
    CU_ASSERT_EQUAL(it[10].line, 15);
    mt_toml_release(&d);
    CU_ASSERT_EQUAL(d.n, 0);
}

static void test_strings(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"k = \"a\\tb\\n\\\"q\\\"\\\\\"", "a\tb\n\"q\"\\"},
        {"k = \"\\b\\f\\r\"", "\b\f\r"},
        {"k = \"caf\\u00e9 \\U0001F600\"", "caf\xc3\xa9 \xf0\x9f\x98\x80"},
        {"k = 'C:\\path\\n'", "C:\\path\\n"},
        {"k = \"\"", ""},
        {"k = \"tab\there # not a comment\"", "tab\there # not a comment"},
        {"k = \"\xc3\xa9\"", "\xc3\xa9"},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_toml_doc d;
        struct mt_toml_error e;

        CU_ASSERT_EQUAL(mt_toml_parse(cases[i].text, &d, &e), 0);
        if (d.n == 1 && d.items[0].v.type == MT_TOML_STRING) {
            CU_ASSERT_STRING_EQUAL(d.items[0].v.str, cases[i].want);
        } else {
            CU_FAIL("not one string");
        }
        mt_toml_release(&d);
    }
}

static void test_integers(void)
{
    static const struct {
        const char *text;
        long long want;
    } cases[] = {
        {"k = 0", 0},
        {"k = +42", 42},
        {"k = -17", -17},
        {"k = 1_000_000", 1000000},
        {"k = 9223372036854775807", LLONG_MAX},
        {"k = -9223372036854775808", LLONG_MIN},
        {"k = true", 1}, /* a bool: checked below */
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_toml_doc d;
        struct mt_toml_error e;

        CU_ASSERT_EQUAL_FATAL(mt_toml_parse(cases[i].text, &d, &e), 0);
        if (d.items[0].v.type == MT_TOML_BOOL) {
            CU_ASSERT_EQUAL(d.items[0].v.b, cases[i].want);
        } else {
            CU_ASSERT_EQUAL(d.items[0].v.i, cases[i].want);
        }
        mt_toml_release(&d);
    }
}

static void test_errors(void)
{
    static const struct {
        const char *text;
        int line;
        const char *msg;
    } cases[] = {
        {"k = 1\nk = 2\n", 2, "key 'k' is already set on line 1"},
        {"[a]\nx = 1\n[a]\n", 3, "table [a] is already defined on line 1"},
        {"[[a]]\n[a]\n", 2, "already an array of tables"},
        {"[a]\n[[a]]\n", 2, "table [a] is already defined on line 1"},
        {"a = 1\n[a]\n", 2, "'a' is already a key (line 1)"},
        {"\n\nk = \"open\n", 3, "the string is not closed on its line"},
        {"k = 'open", 1, "the string is not closed on its line"},
        {"k = \"\\q\"", 1, "unknown escape"},
        {"k = \"\\u12\"", 1, "expected 4 hex digits after \\u"},
        {"k = \"\\uD800\"", 1, "is not an allowed character"},
        {"k = \"\\u0000\"", 1, "is not an allowed character"},
        {"k = \"\\U00110000\"", 1, "is not an allowed character"},
        {"k = \"a\x01\"", 1, "control character 0x01"},
        {"k = \"\"\"x\"\"\"", 1, "multi-line strings are not supported"},
        {"k = 1.5", 1, "floating-point numbers are not supported"},
        {"k = 1e3", 1, "floating-point numbers are not supported"},
        {"k = inf", 1, "floating-point numbers are not supported"},
        {"k = 0x10", 1, "hexadecimal, octal and binary"},
        {"k = 012", 1, "leading zeros"},
        {"k = 1__0", 1, "underscore in an integer"},
        {"k = 1_", 1, "underscore in an integer"},
        {"k = 9223372036854775808", 1, "integer out of range"},
        {"k = -9223372036854775809", 1, "integer out of range"},
        {"k = 1979-05-27", 1, "dates and times are not supported"},
        {"k = {a = 1}", 1, "inline tables are not supported"},
        {"k = [1, 2]", 1, "only arrays of strings are supported"},
        {"k = [\"a\" \"b\"]", 1, "expected ',' or ']'"},
        {"k = [\"a\",\n\"b\"\n", 3, "the array is not closed"},
        {"k = yes", 1, "expected a value"},
        {"k = truely", 1, "expected a value"},
        {"k = ", 1, "expected a value"},
        {"k 1", 1, "expected '=' after the key"},
        {"k = 1 2", 1, "expected the end of the line after the value"},
        {"a.b = 1", 1, "dotted keys are not supported"},
        {"\"k\" = 1", 1, "quoted keys are not supported"},
        {"= 1", 1, "expected a key"},
        {"[a.b]", 1, "dotted table names are not supported"},
        {"[a", 1, "expected ']' after the table name"},
        {"[[a]", 1, "expected ']]' after the table name"},
        {"[]", 1, "expected a table name"},
        {"[a] x", 1, "expected the end of the line after the table header"},
        {"k = 1\r", 1, "carriage return must be followed by a line feed"},
        {"k = [\"a\"\r]", 1, "carriage return must be followed by a line"},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_toml_doc d;
        struct mt_toml_error e;
        int rc = mt_toml_parse(cases[i].text, &d, &e);

        CU_ASSERT(rc < 0);
        CU_ASSERT_EQUAL(e.line, cases[i].line);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, cases[i].msg));
        if (rc >= 0 || e.line != cases[i].line ||
            !strstr(e.msg, cases[i].msg))
            fprintf(stderr, "case %zu: rc %d line %d '%s'\n", i, rc, e.line,
                    e.msg);
        mt_toml_release(&d);
    }
}

static void test_empty_and_comments(void)
{
    static const char *const texts[] = {"", "\n\n", "# only\n  # comments",
                                        "  \t\n"};

    for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
        struct mt_toml_doc d;
        struct mt_toml_error e;

        CU_ASSERT_EQUAL(mt_toml_parse(texts[i], &d, &e), 0);
        CU_ASSERT_EQUAL(d.n, 0);
        mt_toml_release(&d);
    }
    CU_ASSERT_STRING_EQUAL(mt_toml_type_name(MT_TOML_STRINGS),
                           "an array of strings");
}

CU_TestInfo mt_test_toml[] = {
    {"whole_file", test_whole_file},
    {"strings", test_strings},
    {"integers", test_integers},
    {"errors", test_errors},
    {"empty_and_comments", test_empty_and_comments},
    CU_TEST_INFO_NULL,
};
