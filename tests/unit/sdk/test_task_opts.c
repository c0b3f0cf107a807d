/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_task_opts.c -- sdk/task_opts.c: option checks and defaults, the
 * bounded output buffer, building the submit request, and each thread's
 * own last error.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/sdk_int.h"
#include "tests/unit/unit.h"

static void test_defaults(void)
{
    mt_task_opts_t *o;

    CU_ASSERT_FATAL(mt_task_opts_create(&o) == 0);
    CU_ASSERT_EQUAL(o->n_res, 1);
    CU_ASSERT_STRING_EQUAL(o->res[0].name, "CPU");
    CU_ASSERT_EQUAL(o->res[0].qty, 10000);
    CU_ASSERT_EQUAL(o->max_retries, -1);
    CU_ASSERT_EQUAL(o->output_limit, MT_TASK_OUTPUT_DEFAULT);
    CU_ASSERT_EQUAL(o->strategy, MT_STRATEGY_DEFAULT);
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
    CU_ASSERT_EQUAL(o->n_res, 2); /* replaced, not added */
    CU_ASSERT_EQUAL(o->res[1].qty, 20000);
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
    CU_ASSERT_EQUAL(o->res[0].qty, 0);
    for (int i = 0; o->n_res < MT_TASK_MAX_RESOURCES; i++) {
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
    CU_ASSERT_EQUAL(o->n_match, 2);
    CU_ASSERT_STRING_EQUAL(o->match[0].values[1], "b");
    while (o->n_match < MT_TASK_MAX_LABEL_MATCHES)
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
    CU_ASSERT_EQUAL(o->n_env, 2);
    CU_ASSERT_STRING_EQUAL(o->env[0].value, "2");
    CU_ASSERT_EQUAL(mt_task_opts_set_env(o, "A=B", "x"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_env(o, "", "x"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, "TPU_VISIBLE_CHIPS"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, "A"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, "A"), 0); /* a repeat */
    CU_ASSERT_EQUAL(o->n_env_unset, 2);
    CU_ASSERT_STRING_EQUAL(o->env_unset[1], "A");
    CU_ASSERT_EQUAL(o->n_env, 2); /* sets and unsets are kept apart */
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, "A=B"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, ""), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, NULL), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_name(o, "job"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_name(o, NULL), 0);
    CU_ASSERT_PTR_NULL(o->name);
    CU_ASSERT_EQUAL(mt_task_opts_set_cwd(o, ""), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_cwd(o, "/tmp"), 0);
    CU_ASSERT_STRING_EQUAL(o->cwd, "/tmp");
    CU_ASSERT_EQUAL(mt_task_opts_set_cwd(o, "sub/dir"), 0);
    CU_ASSERT_EQUAL(o->cwd[0], '/'); /* from the test's working directory */
    CU_ASSERT_PTR_NOT_NULL(strstr(o->cwd, "/sub/dir"));
    CU_ASSERT_EQUAL(mt_task_opts_set_max_retries(o, -2), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_max_retries(o, 0), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_strategy(o, (mt_strategy)7), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_strategy(o, MT_STRATEGY_SPREAD), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_output_limit(o, 65u << 20), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_task_opts_set_output_limit(o, 0), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_priority(o, -5), 0);
    mt_task_opts_destroy(o);
}

static void test_submit_build(void)
{
    const char *argv[] = {"sh", "-c", "echo hi", NULL};
    const char *vals[] = {"a"};
    mt_task_opts_t *o;
    void *msg = NULL;

    CU_ASSERT_FATAL(mt_task_opts_create(&o) == 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "GPU", 1), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_resource(o, "CPU", 0), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_env(o, "K", "V"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_unset_env(o, "U"), 0);
    CU_ASSERT_EQUAL(mt_task_opts_add_label_match(o, "z", MT_LABEL_EQ, vals,
                                                 1), 0);
    CU_ASSERT_EQUAL(mt_task_opts_set_name(o, "n"), 0);
    /* Every piece malloc'd on its own: freeing must be clean (ASan). */
    CU_ASSERT_EQUAL(mt__rpc_submit_build(argv, o, &msg), 0);
    CU_ASSERT_PTR_NOT_NULL(msg);
    mt__rpc_submit_free(msg);
    mt__rpc_submit_free(NULL);
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
    {"submit_build", test_submit_build},
    {"outbuf", test_outbuf},
    {"last_error_per_thread", test_last_error_per_thread},
    CU_TEST_INFO_NULL,
};
