/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_strbuf.c -- the growable string buffer of common/strbuf.h: appends,
 * printf-style appends that outgrow the buffer, release and reuse, and JSON
 * string escaping of quotes, backslashes and control characters, the
 * soft mode that fails instead of aborting, and shell quoting: hostile
 * words go through a real /bin/sh and come back byte for byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/strbuf.h"
#include "tests/unit/unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_empty(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "");
    CU_ASSERT_EQUAL(sb.len, 0);
    mt_strbuf_release(&sb);
    mt_strbuf_release(&sb);
    CU_ASSERT_PTR_NULL(sb.buf);
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "");
}

static void test_add(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    mt_strbuf_adds(&sb, "hello");
    mt_strbuf_add(&sb, ", world!!!", 7);
    mt_strbuf_add(&sb, "ignored", 0);
    mt_strbuf_adds(&sb, "");
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "hello, world");
    CU_ASSERT_EQUAL(sb.len, 12);
    CU_ASSERT_EQUAL(strlen(sb.buf), sb.len);
    CU_ASSERT_TRUE(sb.cap > sb.len);

    /* bytes are copied exactly, NUL included; the buffer stays terminated */
    mt_strbuf_add(&sb, "a\0b", 3);
    CU_ASSERT_EQUAL(sb.len, 15);
    CU_ASSERT_EQUAL(memcmp(sb.buf + 12, "a\0b", 4), 0);

    /* release empties; the buffer is reusable */
    mt_strbuf_release(&sb);
    CU_ASSERT_EQUAL(sb.len, 0);
    CU_ASSERT_EQUAL(sb.cap, 0);
    mt_strbuf_adds(&sb, "again");
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "again");
    mt_strbuf_release(&sb);
}

static void test_growth(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char want[5001];

    for (int i = 0; i < 5000; i++) {
        char c = (char)('a' + i % 26);

        mt_strbuf_add(&sb, &c, 1);
        want[i] = c;
        CU_ASSERT_TRUE_FATAL(sb.cap > sb.len);
    }
    want[5000] = '\0';
    CU_ASSERT_EQUAL(sb.len, 5000);
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), want);
    mt_strbuf_release(&sb);

    /* one append much larger than the first allocation */
    memset(want, 'z', 5000);
    mt_strbuf_adds(&sb, "<");
    mt_strbuf_adds(&sb, want);
    CU_ASSERT_EQUAL(sb.len, 5001);
    CU_ASSERT_EQUAL(sb.buf[0], '<');
    CU_ASSERT_EQUAL(strcmp(sb.buf + 1, want), 0);
    mt_strbuf_release(&sb);
}

static void test_addf(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char big[301];

    mt_strbuf_addf(&sb, "%s", "");
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "");
    CU_ASSERT_EQUAL(sb.len, 0);

    mt_strbuf_addf(&sb, "%d-%s-%.2f", 42, "x", 2.25);
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "42-x-2.25");
    mt_strbuf_addf(&sb, "|%c|", 'q');
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "42-x-2.25|q|");
    CU_ASSERT_EQUAL(sb.len, 12);

    /* printf output that outgrows the buffer several times over */
    memset(big, 'y', 300);
    big[300] = '\0';
    mt_strbuf_addf(&sb, "[%s]%0400d", big, 7);
    CU_ASSERT_EQUAL(sb.len, 12 + 302 + 400);
    CU_ASSERT_EQUAL(strlen(sb.buf), sb.len);
    CU_ASSERT_EQUAL(sb.buf[12], '[');
    CU_ASSERT_EQUAL(sb.buf[313], ']');
    CU_ASSERT_EQUAL(sb.buf[314], '0');
    CU_ASSERT_EQUAL(sb.buf[sb.len - 1], '7');
    mt_strbuf_release(&sb);
}

static void test_json_str(void)
{
    static const struct {
        const char *in;
        const char *want;
    } cases[] = {
        {"", "\"\""},
        {"plain text", "\"plain text\""},
        {"say \"hi\"", "\"say \\\"hi\\\"\""},
        {"C:\\dir\\", "\"C:\\\\dir\\\\\""},
        {"a\nb\rc\td", "\"a\\nb\\rc\\td\""},
        {"\x01", "\"\\u0001\""},
        {"\x1f|\b|\f", "\"\\u001f|\\u0008|\\u000c\""},
        {"\x7f", "\"\x7f\""},
        {"caf\xc3\xa9 /", "\"caf\xc3\xa9 /\""},
        {"\"\\\n", "\"\\\"\\\\\\n\""},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_strbuf sb = MT_STRBUF_INIT;

        mt_strbuf_add_json_str(&sb, cases[i].in);
        CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), cases[i].want);
        CU_ASSERT_EQUAL(sb.len, strlen(cases[i].want));
        mt_strbuf_release(&sb);
    }
}

static void test_json_str_appends(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    mt_strbuf_adds(&sb, "{");
    mt_strbuf_add_json_str(&sb, "k");
    mt_strbuf_adds(&sb, ":");
    mt_strbuf_add_json_str(&sb, NULL); /* NULL reads as "" */
    mt_strbuf_adds(&sb, "}");
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "{\"k\":\"\"}");
    mt_strbuf_release(&sb);
}

/* A soft buffer works as any other, and one append too big to allocate
 * drops it and every later one instead of aborting. */
static void test_soft(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT_SOFT;

    mt_strbuf_addf(&sb, "%d", 42);
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "42");
    CU_ASSERT_FALSE(sb.failed);
#ifndef __SANITIZE_ADDRESS__ /* ASan aborts on absurd sizes itself */
    mt_strbuf_add(&sb, "x", SIZE_MAX >> 2);
    CU_ASSERT_TRUE(sb.failed);
    mt_strbuf_adds(&sb, "more");
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "42");
#endif
    mt_strbuf_release(&sb);
    CU_ASSERT_FALSE(sb.failed);
}

static void test_pct(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    mt_strbuf_add_pct(&sb, "aZ09-._~ +&=%\xff", 14);
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "aZ09-._~%20%2B%26%3D%25%FF");
    mt_strbuf_release(&sb);
    mt_strbuf_add_pct(&sb, "a\0b", 3); /* n bytes, NUL included */
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), "a%00b");
    mt_strbuf_release(&sb);
}

static void test_sh_forms(void)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"manta", "manta"},
        {"/opt/manta/bin/manta", "/opt/manta/bin/manta"},
        {"--node-ip", "--node-ip"},
        {"127.0.0.1:6380", "127.0.0.1:6380"},
        {"", "''"},
        {"a b", "'a b'"},
        {"it's", "'it'\\''s'"},
        {"'", "''\\'''"},
        {"~/x", "'~/x'"},
        {"a=b", "a=b"},
        {"BatchMode=yes", "BatchMode=yes"},
        {"$HOME", "'$HOME'"},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_strbuf sb = MT_STRBUF_INIT;

        mt_strbuf_add_sh(&sb, cases[i].in);
        CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&sb), cases[i].want);
        mt_strbuf_release(&sb);
    }
}

/* printf '%s|' WORD... through sh: what the shell made of the words. */
static void through_sh(const char *const *words, size_t n,
                       struct mt_strbuf *got)
{
    struct mt_strbuf cmd = MT_STRBUF_INIT;
    char buf[512];
    size_t r;
    FILE *f;

    mt_strbuf_adds(&cmd, "printf '%s|'");
    mt_strbuf_add_sh_words(&cmd, words, n);
    f = popen(mt_strbuf_str(&cmd), "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
        mt_strbuf_add(got, buf, r);
    CU_ASSERT_EQUAL(pclose(f), 0);
    mt_strbuf_release(&cmd);
}

static void test_sh_hostile(void)
{
    static const char *const words[] = {
        "", " ", "'", "''", "\"", "\\", "\\'", "'\\''", "$(touch /x)",
        "`id`", "; rm -rf /", "a && b || c", "x\ny", "tab\there", "*",
        "?", "[a]", "~", "~root", "!", "!!", "#not a comment", "$HOME",
        "${IFS}", "a=b", "-n", "--", "<in", ">out", "|", "&", "(x)",
        "{a,b}", "\xc3\xa9t\xc3\xa9", "\x01\x7f", "end\\",
    };
    struct mt_strbuf want = MT_STRBUF_INIT, got = MT_STRBUF_INIT;

    for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
        mt_strbuf_adds(&want, words[i]);
        mt_strbuf_add(&want, "|", 1);
    }
    through_sh(words, ARRAY_SIZE(words), &got);
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(&got), mt_strbuf_str(&want));
    mt_strbuf_release(&want);
    mt_strbuf_release(&got);
}

CU_TestInfo mt_test_strbuf[] = {
    {"sh_forms", test_sh_forms},
    {"sh_hostile", test_sh_hostile},
    {"pct", test_pct},
    {"empty", test_empty},
    {"add", test_add},
    {"growth", test_growth},
    {"addf", test_addf},
    {"json_str", test_json_str},
    {"json_str_appends", test_json_str_appends},
    {"soft", test_soft},
    CU_TEST_INFO_NULL,
};
