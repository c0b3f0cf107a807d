/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_task_opts.c -- sdk/task_opts.c: option checks and defaults (the
 * options are a struct mt_task_def), the label selector in text form, the
 * bounded output buffer, the spec a submit sends (a proto/convert view of
 * the def) and each thread's own last error.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/task_opts.h"
#include "manta/pg.h"
#include "proto/convert.h"
#include "tests/unit/unit.h"

static void test_defaults(void)
{
    mt_task_opts_t *o;

    CU_ASSERT_FATAL(mt_task_opts_create(&o) == 0);
    CU_ASSERT_EQUAL(o->def.res.n, 1);
    CU_ASSERT_STRING_EQUAL(o->def.res.v[0].name, "CPU");
    CU_ASSERT_EQUAL(o->def.res.v[0].qty, 10000);
    CU_ASSERT_EQUAL(o->def.max_retries, -1);
    CU_ASSERT_EQUAL(o->output_limit, MT_TASK_OUTPUT_DEFAULT);
    CU_ASSERT_EQUAL(o->def.place, MT_PLACE_DEFAULT);
    CU_ASSERT_EQUAL(o->def.kind, MT_TASK_KIND_COMMAND);
    mt_task_opts_destroy(o);
    mt_task_opts_destroy(NULL);
}

static void test_resources(void)
{
    mt_task_opts_t *o;
    char name[16];

    CU_ASSERT_FATAL(mt_task_opts_create(&o) == 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "GPU", 0.5), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "GPU", 2), 0);
    CU_ASSERT_EQUAL(o->def.res.n, 2); /* replaced, not added */
    CU_ASSERT_EQUAL(o->def.res.v[1].qty, 20000);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "GPU", 1.5), -MT_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(mt_client_last_error(NULL), "whole"));
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "TPU", 4), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "TPU", 3), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "CPU", -1), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "CPU", NAN), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "CPU", 0.00001),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "bad name", 1), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "", 1), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "CPU", 0), 0);
    CU_ASSERT_EQUAL(o->def.res.v[0].qty, 0);
    /* Memory in bytes fits, up to what fixed point holds in an int64. */
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "memory", 0x1p40), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "memory", 1e16),
                    -MT_EINVAL);
    for (int i = 0; o->def.res.n < MT_TASK_MAX_RESOURCES; i++) {
        snprintf(name, sizeof(name), "r%d", i);
        CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, name, 1), 0);
    }
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "one_more", 1), -MT_ERANGE);
    mt_task_opts_destroy(o);
}

static void test_label_matches(void)
{
    const char *two[] = {"a", "b"}, *empty[] = {""};
    mt_task_opts_t *o;

    CU_ASSERT_FATAL(mt_task_opts_create(&o) == 0);
    CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "zone", MT_LABEL_IN, two,
                                                 2), 0);
    CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "spot",
                                                 MT_LABEL_NOT_EXISTS, NULL,
                                                 0), 0);
    CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "zone", MT_LABEL_EQ, two,
                                                 2), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "zone", MT_LABEL_IN, two,
                                                 0), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "zone", MT_LABEL_EXISTS,
                                                 two, 1), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "zone", MT_LABEL_EQ,
                                                 empty, 1), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "bad key", MT_LABEL_EQ,
                                                 two, 1), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "k", (mt_label_op)9,
                                                 two, 1), -MT_EINVAL);
    CU_ASSERT_EQUAL(o->def.sel.n, 2);
    CU_ASSERT_STRING_EQUAL(o->def.sel.v[0].values[1], "b");
    while (o->def.sel.n < MT_TASK_MAX_LABEL_MATCHES)
        CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "k", MT_LABEL_EQ,
                                                     two, 1), 0);
    CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "k", MT_LABEL_EQ, two,
                                                 1), -MT_ERANGE);
    mt_task_opts_destroy(o);
}

static void test_strings(void)
{
    mt_task_opts_t *o;

    CU_ASSERT_FATAL(mt_task_opts_create(&o) == 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_env(o, "A", "1"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_env(o, "A", "2"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_env(o, "B", ""), 0);
    CU_ASSERT_EQUAL(o->def.env.n, 2);
    CU_ASSERT_STRING_EQUAL(o->def.env.v[0].value, "2");
    CU_ASSERT_EQUAL(mt_task_opts_set_env(o, "A=B", "x"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_env(o, "", "x"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, "TPU_VISIBLE_CHIPS"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, "A"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, "A"), 0); /* a repeat */
    CU_ASSERT_EQUAL(o->def.n_env_unset, 2);
    CU_ASSERT_STRING_EQUAL(o->def.env_unset[1], "A");
    CU_ASSERT_EQUAL(o->def.env.n, 2); /* sets and unsets are kept apart */
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, "A=B"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, ""), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, NULL), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_name(o, "job"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_name(o, NULL), 0);
    CU_ASSERT_PTR_NULL(o->def.name);
    CU_ASSERT_EQUAL(mt_task_opts_set_cwd(o, ""), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_cwd(o, "/tmp"), 0);
    CU_ASSERT_STRING_EQUAL(o->def.cwd, "/tmp");
    CU_ASSERT_EQUAL(mt_task_opts_set_cwd(o, "sub/dir"), 0);
    /* from the test's working directory */
    CU_ASSERT_EQUAL(o->def.cwd[0], '/');
    CU_ASSERT_PTR_NOT_NULL(strstr(o->def.cwd, "/sub/dir"));
    CU_ASSERT_EQUAL(mt_task_opts_set_max_retries(o, -2), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_max_retries(o, 0), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_strategy(o, (mt_strategy)7), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_strategy(o, MT_STRATEGY_SPREAD), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_output_limit(o, 65u << 20), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_output_limit(o, 0), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_priority(o, -5), 0);
    mt_task_opts_destroy(o);
}

/* The def a submit makes from the options, and the spec view of it. */
static void test_spec_view(void)
{
    const char *vals[] = {"a"};
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    struct mt_task_def *d;
    mt_task_opts_t *o;
    mt_pg_t *pg;
    Manta__TaskSpec s;

    CU_ASSERT_FATAL(mt_task_opts_create(&o) == 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "GPU", 1), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "CPU", 0), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_env(o, "K", "V"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, "U"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "z", MT_LABEL_EQ, vals,
                                                 1), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_name(o, "n"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_strategy(o, MT_STRATEGY_SPREAD), 0);
    CU_ASSERT_FATAL(mt_pg_from_id("0123456789abcdef", &pg) == 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_placement_group(o, pg, 3), 0);
    d = mt__task_def_new(o);
    mt_task_opts_destroy(o); /* the def is a copy */
    mt_pg_release(pg);
    CU_ASSERT_FATAL(d != NULL);
    CU_ASSERT_EQUAL(d->place, MT_PLACE_PG); /* the group wins */
    CU_ASSERT_FATAL(mt_pb_task_spec_view(&a, d, &s) == 0);
    CU_ASSERT_EQUAL(s.n_resources, 2);
    CU_ASSERT_STRING_EQUAL(s.resources[0]->name, "CPU");
    CU_ASSERT_EQUAL(s.resources[0]->quantity, 0);
    CU_ASSERT_EQUAL(s.n_env, 1);
    CU_ASSERT_EQUAL(s.n_env_unset, 1);
    CU_ASSERT_EQUAL(s.n_label_selector, 1);
    CU_ASSERT_STRING_EQUAL(s.name, "n");
    CU_ASSERT_STRING_EQUAL(s.placement_group_id, "0123456789abcdef");
    CU_ASSERT_EQUAL(s.bundle_index, 3);
    CU_ASSERT_EQUAL(s.strategy,
                    MANTA__SCHEDULING_STRATEGY__STRATEGY_PLACEMENT_GROUP);
    mt_pb_arena_release(&a);
    mt__task_def_free(d);
    /* The defaults, without options. */
    CU_ASSERT_FATAL((d = mt__task_def_new(NULL)) != NULL);
    CU_ASSERT_EQUAL(d->res.n, 1);
    CU_ASSERT_EQUAL(d->max_retries, -1);
    mt__task_def_free(d);
    mt__task_def_free(NULL);
}

/* The text form goes through common/selector.h: all or nothing. */
static void test_selector_text(void)
{
    mt_task_opts_t *o;

    CU_ASSERT_FATAL(mt_task_opts_create(&o) == 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_label_selector(
                        o, "zone in (a|b),!spot,gpu,x!=y,w notin (c,d)"),
                    0);
    CU_ASSERT_EQUAL(o->def.sel.n, 5);
    CU_ASSERT_EQUAL(o->def.sel.v[0].op, MT_LABEL_IN);
    CU_ASSERT_EQUAL(o->def.sel.v[1].op, MT_LABEL_NOT_EXISTS);
    CU_ASSERT_EQUAL(o->def.sel.v[4].n, 2);
    /* A bad text keeps the selector as it was and says why. */
    CU_ASSERT_EQUAL(mt_task_opts_set_label_selector(o, "zone in (a|b"),
                    -MT_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(mt_client_last_error(NULL), ")"));
    CU_ASSERT_EQUAL(mt_task_opts_set_label_selector(o, "k0,k1,k2,k3,k4,k5,"
                                                       "k6,k7,k8"),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(o->def.sel.n, 5);
    /* A text replaces; NULL clears. */
    CU_ASSERT_EQUAL(mt_task_opts_set_label_selector(o, "a=b"), 0);
    CU_ASSERT_EQUAL(o->def.sel.n, 1);
    CU_ASSERT_EQUAL(mt_task_opts_set_label_selector(o, NULL), 0);
    CU_ASSERT_EQUAL(o->def.sel.n, 0);
    mt_task_opts_destroy(o);
}

static void test_outbuf(void)
{
    struct mt__outbuf b;

    memset(&b, 0, sizeof(b));
    CU_ASSERT_EQUAL(mt__outbuf_append(&b, 8, "abc", 3), 0);
    CU_ASSERT_EQUAL(mt__outbuf_append(&b, 8, "defg", 4), 0);
    CU_ASSERT_EQUAL(b.len, 7);
    CU_ASSERT_EQUAL(mt__outbuf_append(&b, 8, "hij", 3), 0); /* drops "ab" */
    CU_ASSERT_EQUAL(b.len, 8);
    CU_ASSERT_EQUAL(b.dropped, 2);
    CU_ASSERT_EQUAL(memcmp(b.data, "cdefghij", 8), 0);
    CU_ASSERT_EQUAL(mt__outbuf_append(&b, 8, "0123456789", 10), 0);
    CU_ASSERT_EQUAL(b.len, 8);
    CU_ASSERT_EQUAL(b.dropped, 12);
    CU_ASSERT_EQUAL(memcmp(b.data, "23456789", 8), 0);
    CU_ASSERT_EQUAL(mt__outbuf_append(&b, 8, "", 0), 0);
    CU_ASSERT_TRUE(b.cap <= 8);
    free(b.data);
}

static void *other_thread(void *arg)
{
    mt_task_opts_t *o = arg;

    mt_task_opts_set_resource(o, "GPU", 1.5);
    return strstr(mt_client_last_error(NULL), "GPU") ? o : NULL;
}

static void test_last_error_per_thread(void)
{
    mt_task_opts_t *o;
    pthread_t th;
    void *ok = NULL;

    CU_ASSERT_FATAL(mt_task_opts_create(&o) == 0);
    mt_task_opts_set_env(o, "A=B", "x");
    CU_ASSERT_PTR_NOT_NULL(strstr(mt_client_last_error(NULL), "A=B"));
    CU_ASSERT_FATAL(pthread_create(&th, NULL, other_thread, o) == 0);
    pthread_join(th, &ok);
    CU_ASSERT_PTR_NOT_NULL(ok);
    /* The other thread's failure did not replace ours. */
    CU_ASSERT_PTR_NOT_NULL(strstr(mt_client_last_error(NULL), "A=B"));
    mt_task_opts_destroy(o);
}

CU_TestInfo mt_test_sdk_task_opts[] = {
    {"defaults", test_defaults},
    {"resources", test_resources},
    {"label_matches", test_label_matches},
    {"strings", test_strings},
    {"spec_view", test_spec_view},
    {"selector_text", test_selector_text},
    {"outbuf", test_outbuf},
    {"last_error_per_thread", test_last_error_per_thread},
    CU_TEST_INFO_NULL,
};
