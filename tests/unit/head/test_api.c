/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_api.c -- the pieces of the dashboard's API (head/api.c) that need
 * no head: task output written as JSON text (valid UTF-8 kept, invalid
 * bytes replaced by U+FFFD, control characters escaped, a character cut
 * by the end of a chunk held back while more may come). The routes are
 * tested against a live head by tests/integration/test_api.py.
 */
#include <string.h>

#include "common/strbuf.h"
#include "head/api.h"
#include "tests/unit/unit.h"

/* mt_json_utf8 of s (n bytes) into a fresh string; RET bytes consumed. */
static size_t utf8(const char *s, size_t n, bool hold, struct mt_strbuf *sb)
{
    sb->len = 0;
    mt_strbuf_adds(sb, "");
    return mt_json_utf8(sb, (const unsigned char *)s, n, hold);
}

static void test_valid_and_escaped(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    static const char s[] = "a\"b\\c\nd\te\x01 \xc3\xa9 \xe2\x82\xac "
                            "\xf0\x9f\x98\x80";

    CU_ASSERT(utf8(s, sizeof(s) - 1, false, &sb) == sizeof(s) - 1);
    CU_ASSERT_STRING_EQUAL(sb.buf, "a\\\"b\\\\c\\nd\\u0009e\\u0001 "
                                   "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    CU_ASSERT(utf8("x\0y", 3, false, &sb) == 3);
    CU_ASSERT_STRING_EQUAL(sb.buf, "x\\u0000y");
    mt_strbuf_release(&sb);
}

static void test_invalid_replaced(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    /* A stray continuation byte, 0xff, an overlong '/', a surrogate,
     * above U+10FFFF, a lead byte followed by ASCII. */
    CU_ASSERT(utf8("\x80", 1, false, &sb) == 1);
    CU_ASSERT_STRING_EQUAL(sb.buf, "\\ufffd");
    CU_ASSERT(utf8("x\xffy", 3, false, &sb) == 3);
    CU_ASSERT_STRING_EQUAL(sb.buf, "x\\ufffdy");
    CU_ASSERT(utf8("\xc0\xaf", 2, false, &sb) == 2);
    CU_ASSERT_STRING_EQUAL(sb.buf, "\\ufffd\\ufffd");
    CU_ASSERT(utf8("\xed\xa0\x80", 3, false, &sb) == 3);
    CU_ASSERT_STRING_EQUAL(sb.buf, "\\ufffd\\ufffd\\ufffd");
    CU_ASSERT(utf8("\xf4\x90\x80\x80", 4, false, &sb) == 4);
    CU_ASSERT(strncmp(sb.buf, "\\ufffd", 6) == 0);
    CU_ASSERT(utf8("\xe2\x82z", 3, false, &sb) == 3);
    CU_ASSERT_STRING_EQUAL(sb.buf, "\\ufffd\\ufffdz");
    mt_strbuf_release(&sb);
}

static void test_tail_held(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    /* A euro sign cut after 2 of its 3 bytes: held while more may come,
     * replaced once the output is complete. */
    CU_ASSERT(utf8("ab\xe2\x82", 4, true, &sb) == 2);
    CU_ASSERT_STRING_EQUAL(sb.buf, "ab");
    CU_ASSERT(utf8("ab\xe2\x82", 4, false, &sb) == 4);
    CU_ASSERT_STRING_EQUAL(sb.buf, "ab\\ufffd\\ufffd");
    /* Only a valid beginning is held: a bad byte at the end is not. */
    CU_ASSERT(utf8("ab\xff", 3, true, &sb) == 3);
    CU_ASSERT_STRING_EQUAL(sb.buf, "ab\\ufffd");
    mt_strbuf_release(&sb);
}

CU_TestInfo mt_test_api[] = {
    {"valid and escaped", test_valid_and_escaped},
    {"invalid replaced", test_invalid_replaced},
    {"tail held", test_tail_held},
    CU_TEST_INFO_NULL,
};
