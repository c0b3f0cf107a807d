/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_selector.c -- common/selector.h: the label key rule, checked
 * expressions, copies, and the text form of `--label-selector`.
 */
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/selector.h"
#include "tests/unit/unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_key_rule(void)
{
    char longkey[MT_LABEL_KEY_MAX + 2];

    CU_ASSERT_TRUE(mt_label_key_valid("zone", 4));
    CU_ASSERT_TRUE(mt_label_key_valid("manta.io/node-id", 16));
    CU_ASSERT_TRUE(mt_label_key_valid("a_b.C-9", 7));
    CU_ASSERT_FALSE(mt_label_key_valid("", 0));
    CU_ASSERT_FALSE(mt_label_key_valid(NULL, 3));
    CU_ASSERT_FALSE(mt_label_key_valid("a b", 3));
    CU_ASSERT_FALSE(mt_label_key_valid("a=b", 3));
    CU_ASSERT_FALSE(mt_label_key_valid("a:b", 3));
    CU_ASSERT_TRUE(mt_label_key_valid("a=b", 1)); /* only the first byte */
    memset(longkey, 'k', sizeof(longkey));
    CU_ASSERT_TRUE(mt_label_key_valid(longkey, MT_LABEL_KEY_MAX));
    CU_ASSERT_FALSE(mt_label_key_valid(longkey, MT_LABEL_KEY_MAX + 1));
}

static void test_add_checks(void)
{
    static const char *one[] = {"a"}, *two[] = {"a", "b"}, *empty[] = {""};
    struct mt_selector s = {0};
    char err[128];

    CU_ASSERT_EQUAL(mt_selector_add(&s, "zone", MT_LABEL_EQ, one, 1, err,
                                    sizeof(err)), 0);
    CU_ASSERT_EQUAL(mt_selector_add(&s, "zone", MT_LABEL_EQ, two, 2, err,
                                    sizeof(err)), -MT_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "exactly 1"));
    CU_ASSERT_EQUAL(mt_selector_add(&s, "zone", MT_LABEL_IN, NULL, 0, err,
                                    sizeof(err)), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_selector_add(&s, "zone", MT_LABEL_EXISTS, one, 1,
                                    err, sizeof(err)), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_selector_add(&s, "zone", MT_LABEL_EQ, empty, 1, err,
                                    sizeof(err)), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_selector_add(&s, "bad key", MT_LABEL_EXISTS, NULL, 0,
                                    err, sizeof(err)), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_selector_add(&s, "zone", (enum mt_label_op)42, NULL,
                                    0, err, sizeof(err)), -MT_EINVAL);
    CU_ASSERT_EQUAL(s.n, 1);
    for (int i = 1; i < MT_SEL_MAX_EXPRS; i++)
        CU_ASSERT_EQUAL(mt_selector_add(&s, "k", MT_LABEL_EXISTS, NULL, 0,
                                        NULL, 0), 0);
    CU_ASSERT_EQUAL(mt_selector_add(&s, "k", MT_LABEL_EXISTS, NULL, 0, err,
                                    sizeof(err)), -MT_ERANGE);
    CU_ASSERT_EQUAL(s.n, MT_SEL_MAX_EXPRS);
    mt_selector_release(&s);
    CU_ASSERT_EQUAL(s.n, 0);
}

static void test_copy(void)
{
    static const char *v[] = {"a", "b"};
    struct mt_selector s = {0}, c = {0};

    CU_ASSERT_EQUAL(mt_selector_add(&s, "zone", MT_LABEL_IN, v, 2, NULL, 0),
                    0);
    CU_ASSERT_EQUAL(mt_selector_add(&s, "spot", MT_LABEL_NOT_EXISTS, NULL, 0,
                                    NULL, 0), 0);
    CU_ASSERT_EQUAL(mt_selector_copy(&c, &s), 0);
    mt_selector_release(&s);
    CU_ASSERT_EQUAL(c.n, 2);
    CU_ASSERT_STRING_EQUAL(c.v[0].key, "zone");
    CU_ASSERT_EQUAL(c.v[0].op, MT_LABEL_IN);
    CU_ASSERT_EQUAL(c.v[0].n, 2);
    CU_ASSERT_STRING_EQUAL(c.v[0].values[1], "b");
    CU_ASSERT_EQUAL(c.v[1].op, MT_LABEL_NOT_EXISTS);
    mt_selector_release(&c);
}

/* Render s back as "key op v|v,..." for compact comparisons. */
static void render(const struct mt_selector *s, char *out, size_t len)
{
    static const char *ops[] = {"=", "!=", " in ", " notin ", "?", "!?"};
    size_t k = 0;

    out[0] = '\0';
    for (size_t i = 0; i < s->n && k < len; i++) {
        k += (size_t)snprintf(out + k, len - k, "%s%s%s", i ? "," : "",
                              s->v[i].key, ops[s->v[i].op]);
        for (size_t j = 0; j < s->v[i].n && k < len; j++)
            k += (size_t)snprintf(out + k, len - k, "%s%s", j ? "|" : "",
                                  s->v[i].values[j]);
    }
}

static void test_parse(void)
{
    static const struct {
        const char *in;
        const char *want;  /* NULL: refused */
    } cases[] = {
        {"zone=a", "zone=a"},
        {"zone==a", "zone=a"},
        {"zone!=a", "zone!=a"},
        {" zone = a , gpu ", "zone=a,gpu?"},
        {"zone=a|b", "zone in a|b"},
        {"zone!=a|b", "zone notin a|b"},
        {"zone in (a|b)", "zone in a|b"},
        {"zone in (a, b)", "zone in a|b"},
        {"zone notin (a)", "zone notin a"},
        {"!spot", "spot!?"},
        {"! spot,zone", "spot!?,zone?"},
        {"manta.io/tpu-slice-name=s1", "manta.io/tpu-slice-name=s1"},
        {"", NULL},
        {"   ", NULL},
        {"zone=a,", NULL},
        {",zone=a", NULL},
        {"zone=", NULL},
        {"zone in a", NULL},
        {"zone in (a", NULL},
        {"zone in ()", NULL},
        {"!spot=a", NULL},
        {"=a", NULL},
        {"zone ~ a", NULL},
        {"zone=a b", NULL},
        {"zone in (1|2|3|4|5|6|7|8|9)", NULL},
        {"a,b,c,d,e,f,g,h,i", NULL},
        {"a,b,c,d,e,f,g,h", "a?,b?,c?,d?,e?,f?,g?,h?"},
    };
    char got[512], err[256];

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_selector s = {0};
        int rc = mt_selector_parse(cases[i].in, &s, err, sizeof(err));

        if (cases[i].want) {
            CU_ASSERT_EQUAL(rc, 0);
            render(&s, got, sizeof(got));
            CU_ASSERT_STRING_EQUAL(got, cases[i].want);
            if (rc || strcmp(got, cases[i].want))
                fprintf(stderr, "parse(\"%s\") = %d \"%s\" (%s)\n",
                        cases[i].in, rc, got, err);
        } else {
            CU_ASSERT_EQUAL(rc, -MT_EINVAL);
            CU_ASSERT_EQUAL(s.n, 0);
            CU_ASSERT_NOT_EQUAL(err[0], '\0');
        }
        mt_selector_release(&s);
    }
}

/* A failed parse leaves what was there; a good one appends. */
static void test_parse_appends(void)
{
    struct mt_selector s = {0};
    char err[128];

    CU_ASSERT_EQUAL(mt_selector_parse("a=1", &s, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(mt_selector_parse("b=2,c in (", &s, err, sizeof(err)),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(s.n, 1);
    CU_ASSERT_EQUAL(mt_selector_parse("b=2", &s, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(s.n, 2);
    CU_ASSERT_STRING_EQUAL(s.v[1].key, "b");
    mt_selector_release(&s);
}

static void test_parse_messages(void)
{
    struct mt_selector s = {0};
    char err[256];

    mt_selector_parse("zone in (1|2|3|4|5|6|7|8|9)", &s, err, sizeof(err));
    CU_ASSERT_STRING_EQUAL(err, "at most 8 values in one list");
    mt_selector_parse("a,b,c,d,e,f,g,h,i", &s, err, sizeof(err));
    CU_ASSERT_STRING_EQUAL(err, "at most 8 expressions");
    mt_selector_parse("zone ~ a", &s, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "expected =, !=, in (...)"));
    CU_ASSERT_EQUAL(s.n, 0);
}

CU_TestInfo mt_test_selector[] = {
    {"key_rule", test_key_rule},
    {"add_checks", test_add_checks},
    {"copy", test_copy},
    {"parse", test_parse},
    {"parse_appends", test_parse_appends},
    {"parse_messages", test_parse_messages},
    CU_TEST_INFO_NULL,
};
