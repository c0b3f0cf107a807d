/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_defs.c -- common/defs.h: task defs (init, deep copy, the head's
 * rules) and placement group / gang defs.
 */
#include <stdlib.h>
#include <string.h>

#include "common/defs.h"
#include "common/error.h"
#include "tests/unit/unit.h"

/* A function task with a bit of everything. */
static void fill(struct mt_task_def *d)
{
    static const char *cp[] = {"/opt/lib", "/usr/lib"};
    static const char *un[] = {"TPU_VISIBLE_CHIPS"};
    static const char *zones[] = {"a", "b"};
    struct mt_task_arg args[2];

    memset(args, 0, sizeof(args));
    args[0].data = (uint8_t *)"abc";
    args[0].len = 3;
    args[1].is_ref = true;
    memset(args[1].ref.b, 7, MT_OBJECT_ID_LEN);
    mt_task_def_init(d);
    d->kind = MT_TASK_KIND_FUNCTION;
    CU_ASSERT_EQUAL(mt_def_set_str(&d->name, "job"), 0);
    CU_ASSERT_EQUAL(mt_def_set_str(&d->function, "libx.so:f"), 0);
    CU_ASSERT_EQUAL(mt_task_def_set_args(d, args, 2), 0);
    CU_ASSERT_EQUAL(mt_def_set_strv(&d->code_path, &d->n_code_path, cp, 2),
                    0);
    CU_ASSERT_EQUAL(mt_def_set_strv(&d->env_unset, &d->n_env_unset, un, 1),
                    0);
    CU_ASSERT_EQUAL(mt_kv_list_put(&d->env, "A", "1"), 0);
    CU_ASSERT_EQUAL(mt_qty_list_put(&d->res, "CPU", 5000), 0);
    CU_ASSERT_EQUAL(mt_selector_add(&d->sel, "zone", MT_LABEL_IN, zones, 2,
                                    NULL, 0), 0);
    d->place = MT_PLACE_PG;
    CU_ASSERT_EQUAL(mt_def_set_str(&d->pg_id, "00000000000000ab"), 0);
    d->bundle = 2;
    d->hold_result = true;
}

static void test_init_release(void)
{
    struct mt_task_def d;

    mt_task_def_init(&d);
    CU_ASSERT_EQUAL(d.kind, MT_TASK_KIND_COMMAND);
    CU_ASSERT_EQUAL(d.max_retries, -1);
    CU_ASSERT_EQUAL(d.bundle, -1);
    fill(&d);
    mt_task_def_release(&d);
    CU_ASSERT_PTR_NULL(d.function);
    CU_ASSERT_EQUAL(d.nargs, 0);
    CU_ASSERT_EQUAL(d.bundle, -1);
    mt_task_def_release(&d); /* twice is fine */
}

static void test_copy(void)
{
    struct mt_task_def d, c;

    fill(&d);
    mt_task_def_init(&c);
    CU_ASSERT_EQUAL(mt_task_def_copy(&c, &d), 0);
    mt_task_def_release(&d);
    CU_ASSERT_STRING_EQUAL(c.name, "job");
    CU_ASSERT_STRING_EQUAL(c.function, "libx.so:f");
    CU_ASSERT_EQUAL(c.nargs, 2);
    CU_ASSERT_EQUAL(c.args[0].len, 3);
    CU_ASSERT_EQUAL(memcmp(c.args[0].data, "abc", 3), 0);
    CU_ASSERT_TRUE(c.args[1].is_ref);
    CU_ASSERT_EQUAL(c.args[1].ref.b[19], 7);
    CU_ASSERT_EQUAL(c.n_code_path, 2);
    CU_ASSERT_STRING_EQUAL(c.code_path[1], "/usr/lib");
    CU_ASSERT_STRING_EQUAL(c.env_unset[0], "TPU_VISIBLE_CHIPS");
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&c.env, "A"), "1");
    CU_ASSERT_EQUAL(mt_qty_list_get(&c.res, "CPU"), 5000);
    CU_ASSERT_EQUAL(c.sel.n, 1);
    CU_ASSERT_STRING_EQUAL(c.sel.v[0].values[1], "b");
    CU_ASSERT_EQUAL(c.place, MT_PLACE_PG);
    CU_ASSERT_STRING_EQUAL(c.pg_id, "00000000000000ab");
    CU_ASSERT_EQUAL(c.bundle, 2);
    CU_ASSERT_TRUE(c.hold_result);
    /* Copying over a def that holds things frees them first. */
    fill(&d);
    CU_ASSERT_EQUAL(mt_task_def_copy(&c, &d), 0);
    mt_task_def_release(&d);
    mt_task_def_release(&c);
}

static void test_set_str(void)
{
    char *s = NULL;

    CU_ASSERT_EQUAL(mt_def_set_str(&s, "x"), 0);
    CU_ASSERT_STRING_EQUAL(s, "x");
    CU_ASSERT_EQUAL(mt_def_set_str(&s, ""), 0); /* "" clears */
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_EQUAL(mt_def_set_str(&s, NULL), 0);
    CU_ASSERT_PTR_NULL(s);
}

static void command(struct mt_task_def *d, const char *prog)
{
    const char *argv[] = {prog};

    mt_task_def_init(d);
    mt_def_set_strv(&d->argv, &d->argc, argv, 1);
}

static void test_check(void)
{
    struct mt_task_def d;
    char *big;

    command(&d, "true");
    CU_ASSERT_PTR_NULL(mt_task_def_check(&d));
    d.kind = MT_TASK_KIND_NONE;
    CU_ASSERT_PTR_NOT_NULL(mt_task_def_check(&d));
    d.kind = MT_TASK_KIND_FUNCTION; /* no function */
    CU_ASSERT_PTR_NOT_NULL(mt_task_def_check(&d));
    mt_def_set_str(&d.function, "f");
    CU_ASSERT_PTR_NULL(mt_task_def_check(&d));
    d.kind = MT_TASK_KIND_ACTOR_METHOD; /* no actor id */
    CU_ASSERT_PTR_NOT_NULL(mt_task_def_check(&d));
    mt_def_set_str(&d.actor_id, "0123456789abcdef");
    CU_ASSERT_PTR_NULL(mt_task_def_check(&d));
    d.max_restarts = -2;
    CU_ASSERT_PTR_NOT_NULL(mt_task_def_check(&d));
    mt_task_def_release(&d);

    command(&d, "");
    CU_ASSERT_STRING_EQUAL(mt_task_def_check(&d), "argv must name a program");
    mt_task_def_release(&d);

    command(&d, "true");
    mt_kv_list_put(&d.env, "A=B", "1");
    CU_ASSERT_PTR_NOT_NULL(mt_task_def_check(&d));
    mt_task_def_release(&d);

    command(&d, "true");
    mt_qty_list_put(&d.res, "CPU", -1);
    CU_ASSERT_STRING_EQUAL(mt_task_def_check(&d),
                           "negative resource quantity");
    mt_task_def_release(&d);

    command(&d, "true");
    mt_qty_list_put(&d.res, "bad name", 1);
    CU_ASSERT_STRING_EQUAL(mt_task_def_check(&d), "bad resource name");
    mt_task_def_release(&d);

    command(&d, "true");
    for (int i = 0; i < MT_TASK_MAX_RES + 1; i++) {
        char n[8];
        n[0] = (char)('a' + i);
        n[1] = '\0';
        mt_qty_list_put(&d.res, n, 1);
    }
    CU_ASSERT_PTR_NOT_NULL(mt_task_def_check(&d));
    mt_task_def_release(&d);

    big = malloc(MT_TASK_MAX_ARGV_BYTES + 2);
    memset(big, 'x', MT_TASK_MAX_ARGV_BYTES + 1);
    big[MT_TASK_MAX_ARGV_BYTES + 1] = '\0';
    command(&d, big);
    CU_ASSERT_PTR_NOT_NULL(mt_task_def_check(&d));
    mt_task_def_release(&d);
    free(big);

    command(&d, "true");
    d.place = (enum mt_task_place)9;
    CU_ASSERT_STRING_EQUAL(mt_task_def_check(&d),
                           "unknown scheduling strategy");
    mt_task_def_release(&d);
}

static void test_pg_gang(void)
{
    struct mt_pg_def p;
    struct mt_gang_def g;
    struct mt_bundle_def *b;

    memset(&p, 0, sizeof(p));
    b = mt_pg_def_add_bundle(&p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    mt_qty_list_put(&b->res, "CPU", 10000);
    b = mt_pg_def_add_bundle(&p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    mt_selector_add(&b->sel, "zone", MT_LABEL_EXISTS, NULL, 0, NULL, 0);
    CU_ASSERT_EQUAL(p.nbundles, 2);
    CU_ASSERT_EQUAL(mt_qty_list_get(&p.bundles[0].res, "CPU"), 10000);
    mt_pg_def_release(&p);
    CU_ASSERT_EQUAL(p.nbundles, 0);

    memset(&g, 0, sizeof(g));
    mt_task_def_init(&g.member);
    mt_def_set_str(&g.pod_type, "v4-16");
    command(&g.member, "python3");
    mt_gang_def_release(&g);
    CU_ASSERT_PTR_NULL(g.pod_type);
    CU_ASSERT_EQUAL(g.member.kind, MT_TASK_KIND_COMMAND);
}

CU_TestInfo mt_test_defs[] = {
    {"init_release", test_init_release},
    {"copy", test_copy},
    {"set_str", test_set_str},
    {"check", test_check},
    {"pg_gang", test_pg_gang},
    CU_TEST_INFO_NULL,
};
