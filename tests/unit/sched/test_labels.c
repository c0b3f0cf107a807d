/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_labels.c -- string interning, label sets and every selector operator,
 * including what a missing key means, plus malformed selectors.
 */
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "sched/labels.h"
#include "tests/unit/unit.h"

static void test_strtab(void)
{
    struct mt_strtab *t;
    char buf[32];
    int64_t first;

    CU_ASSERT_FATAL(mt_strtab_create(&t) == 0);
    first = mt_strtab_intern(t, "zone");
    CU_ASSERT(first >= 1);
    CU_ASSERT_EQUAL(mt_strtab_intern(t, "zone"), first);
    CU_ASSERT_EQUAL(mt_strtab_lookup(t, "zone"), (uint32_t)first);
    CU_ASSERT_EQUAL(mt_strtab_lookup(t, "nope"), 0);
    CU_ASSERT_EQUAL(mt_strtab_intern(t, NULL), -MT_EINVAL);
    for (int i = 0; i < 1000; i++) {
        snprintf(buf, sizeof(buf), "s%d", i);
        CU_ASSERT(mt_strtab_intern(t, buf) > 0);
    }
    CU_ASSERT_STRING_EQUAL(mt_strtab_str(t, (uint32_t)first), "zone");
    CU_ASSERT_STRING_EQUAL(mt_strtab_str(t, mt_strtab_lookup(t, "s999")),
                           "s999");
    mt_strtab_destroy(t);
}

static const char *const v_a[] = {"a"};
static const char *const v_ab[] = {"a", "b"};
static const char *const v_cd[] = {"c", "d"};

static void test_selector_table(void)
{
    static const struct mt_label labels[] = {
        {"zone", "a"}, {"gpu", "h100"},
    };
    static const struct {
        struct mt_label_expr e;
        bool want;
    } rows[] = {
        {{"zone", MT_LABEL_EQ, v_a, 1}, true},
        {{"zone", MT_LABEL_NE, v_a, 1}, false},
        {{"zone", MT_LABEL_IN, v_ab, 2}, true},
        {{"zone", MT_LABEL_IN, v_cd, 2}, false},
        {{"zone", MT_LABEL_NOT_IN, v_cd, 2}, true},
        {{"zone", MT_LABEL_NOT_IN, v_ab, 2}, false},
        {{"zone", MT_LABEL_EXISTS, NULL, 0}, true},
        {{"zone", MT_LABEL_NOT_EXISTS, NULL, 0}, false},
        /* missing key */
        {{"rack", MT_LABEL_EQ, v_a, 1}, false},
        {{"rack", MT_LABEL_NE, v_a, 1}, true},
        {{"rack", MT_LABEL_IN, v_ab, 2}, false},
        {{"rack", MT_LABEL_NOT_IN, v_ab, 2}, true},
        {{"rack", MT_LABEL_EXISTS, NULL, 0}, false},
        {{"rack", MT_LABEL_NOT_EXISTS, NULL, 0}, true},
    };
    struct mt_strtab *t;
    struct mt_labelset ls;

    CU_ASSERT_FATAL(mt_strtab_create(&t) == 0);
    CU_ASSERT_FATAL(mt_labelset_build(t, labels, 2, &ls) == 0);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct mt_label_selector in = {&rows[i].e, 1};
        struct mt_sel sel;

        CU_ASSERT_FATAL(mt_sel_compile(t, &in, &sel) == 0);
        CU_ASSERT_EQUAL(mt_sel_match(&sel, &ls), rows[i].want);
    }
    mt_labelset_release(&ls);
    mt_strtab_destroy(t);
}

static void test_selector_all_must_hold(void)
{
    static const struct mt_label labels[] = {{"zone", "a"}};
    const struct mt_label_expr ex[] = {
        {"zone", MT_LABEL_EQ, v_a, 1},
        {"gpu", MT_LABEL_EXISTS, NULL, 0},
    };
    struct mt_label_selector in = {ex, 2};
    struct mt_strtab *t;
    struct mt_labelset ls;
    struct mt_sel sel, empty;

    CU_ASSERT_FATAL(mt_strtab_create(&t) == 0);
    CU_ASSERT_FATAL(mt_labelset_build(t, labels, 1, &ls) == 0);
    CU_ASSERT_FATAL(mt_sel_compile(t, &in, &sel) == 0);
    CU_ASSERT_FALSE(mt_sel_match(&sel, &ls));
    CU_ASSERT_FATAL(mt_sel_compile(t, NULL, &empty) == 0);
    CU_ASSERT_TRUE(mt_sel_match(&empty, &ls));
    mt_labelset_release(&ls);
    mt_strtab_destroy(t);
}

static void test_bad_selectors(void)
{
    static const struct mt_label_expr bad[] = {
        {"zone", (enum mt_label_op)42, v_a, 1},  /* unknown op */
        {"zone", MT_LABEL_EQ, v_ab, 2},          /* EQ takes one value */
        {"zone", MT_LABEL_IN, NULL, 0},          /* IN needs values */
        {"", MT_LABEL_EXISTS, NULL, 0},          /* empty key */
        {NULL, MT_LABEL_EXISTS, NULL, 0},        /* no key */
    };
    static const struct mt_label dup[] = {{"k", "1"}, {"k", "2"}};
    struct mt_label_expr many[MT_SEL_MAX_EXPRS + 1];
    struct mt_label_selector in;
    struct mt_strtab *t;
    struct mt_labelset ls;
    struct mt_sel sel;

    CU_ASSERT_FATAL(mt_strtab_create(&t) == 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        in.exprs = &bad[i];
        in.n = 1;
        CU_ASSERT_EQUAL(mt_sel_compile(t, &in, &sel), -MT_EINVAL);
    }
    for (size_t i = 0; i < MT_SEL_MAX_EXPRS + 1; i++)
        many[i] = (struct mt_label_expr){"k", MT_LABEL_EXISTS, NULL, 0};
    in.exprs = many;
    in.n = MT_SEL_MAX_EXPRS + 1;
    CU_ASSERT_EQUAL(mt_sel_compile(t, &in, &sel), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_labelset_build(t, dup, 2, &ls), -MT_EINVAL);
    mt_strtab_destroy(t);
}

CU_TestInfo mt_test_labels[] = {
    {"strtab", test_strtab},
    {"selector_table", test_selector_table},
    {"selector_all_must_hold", test_selector_all_must_hold},
    {"bad_selectors", test_bad_selectors},
    CU_TEST_INFO_NULL,
};
