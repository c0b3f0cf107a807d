/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_tasks.c -- the pure parts of worker/tasks.c: RunTask validation,
 * building a task's environment, and the bounded output buffer with its
 * drop markers (append, take, unshift after a failed send). Processes and
 * reports are covered end to end by the integration tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "tests/unit/unit.h"
#include "worker/tasks.h"

/* ---- helpers ------------------------------------------------------------- */

static void spec_init(struct mt_run_spec *s, const char *id, size_t argc)
{
    memset(s, 0, sizeof(*s));
    s->task_id = mt_xstrdup(id);
    s->kind = MT_RUN_KIND_COMMAND;
    s->argv = mt_xcalloc(argc + 1, sizeof(*s->argv));
    for (size_t i = 0; i < argc; i++)
        s->argv[i] = mt_xstrdup(i ? "arg" : "/bin/true");
    s->argc = argc;
}

static int check(const struct mt_run_spec *s, char *err)
{
    err[0] = '\0';
    return mt_run_spec_check(s, err, 256);
}

/* "M5|1:aa|2:bb": markers and chunks of a buffer, in order. */
static char *dump(const struct mt_outbuf *ob)
{
    static char out[4096];
    size_t n = 0;

    out[0] = '\0';
    for (const struct mt_outchunk *c = ob->head; c; c = c->next) {
        if (n)
            n += (size_t)snprintf(out + n, sizeof(out) - n, "|");
        if (c->dropped)
            n += (size_t)snprintf(out + n, sizeof(out) - n, "M%llu",
                                  (unsigned long long)c->dropped);
        else
            n += (size_t)snprintf(out + n, sizeof(out) - n, "%u:%.*s", c->fd,
                                  (int)(c->len - c->off),
                                  (const char *)c->data + c->off);
    }
    return out;
}

/* ---- validation ---------------------------------------------------------- */

static void test_id_valid(void)
{
    char id[80];

    CU_ASSERT_TRUE(mt_run_id_valid("a"));
    CU_ASSERT_TRUE(mt_run_id_valid("T-12_ab"));
    CU_ASSERT_FALSE(mt_run_id_valid(""));
    CU_ASSERT_FALSE(mt_run_id_valid(NULL));
    CU_ASSERT_FALSE(mt_run_id_valid("../x"));
    CU_ASSERT_FALSE(mt_run_id_valid("a b"));
    memset(id, 'x', 64);
    id[64] = '\0';
    CU_ASSERT_TRUE(mt_run_id_valid(id));
    id[64] = 'x';
    id[65] = '\0';
    CU_ASSERT_FALSE(mt_run_id_valid(id));
}

static void test_check_kind_and_argv(void)
{
    struct mt_run_spec s;
    char err[256];

    spec_init(&s, "t1", 2);
    CU_ASSERT_EQUAL(check(&s, err), 0);
    s.kind = MT_RUN_KIND_FUNCTION;
    CU_ASSERT_EQUAL(check(&s, err), -MT_EINVAL);
    CU_ASSERT_STRING_EQUAL(err, "function must be \"lib.so:name\" or a "
                                "registered name");
    s.kind = MT_RUN_KIND_UNSPECIFIED;
    CU_ASSERT_EQUAL(check(&s, err), -MT_EINVAL);
    s.kind = MT_RUN_KIND_COMMAND;
    s.argv[0][0] = '\0';
    CU_ASSERT_EQUAL(check(&s, err), -MT_EINVAL);
    CU_ASSERT_STRING_EQUAL(err, "argv must name a program");
    mt_run_spec_release(&s);

    spec_init(&s, "t1", 0);
    CU_ASSERT_EQUAL(check(&s, err), -MT_EINVAL);
    mt_run_spec_release(&s);

    spec_init(&s, "bad/id", 1);
    CU_ASSERT_EQUAL(check(&s, err), -MT_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "task_id"));
    mt_run_spec_release(&s);
}

static void test_check_limits(void)
{
    struct mt_run_spec s;
    char err[256];

    spec_init(&s, "t", MT_RUN_MAX_ARGS);
    CU_ASSERT_EQUAL(check(&s, err), 0);
    mt_run_spec_release(&s);
    spec_init(&s, "t", MT_RUN_MAX_ARGS + 1);
    CU_ASSERT_EQUAL(check(&s, err), -MT_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "too many arguments"));
    mt_run_spec_release(&s);

    /* Two arguments of 512 KiB: just over 1 MiB with the terminators. */
    spec_init(&s, "t", 2);
    for (int i = 0; i < 2; i++) {
        free(s.argv[i]);
        s.argv[i] = mt_xcalloc(512 * 1024 + 1, 1);
        memset(s.argv[i], 'a', 512 * 1024);
    }
    CU_ASSERT_EQUAL(check(&s, err), -MT_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "arguments too large"));
    mt_run_spec_release(&s);

    spec_init(&s, "t", 1);
    s.cwd = mt_xcalloc(MT_RUN_MAX_CWD + 2, 1);
    memset(s.cwd, '/', MT_RUN_MAX_CWD + 1);
    CU_ASSERT_EQUAL(check(&s, err), -MT_EINVAL);
    mt_run_spec_release(&s);
}

static void test_check_env(void)
{
    struct mt_run_spec s;
    char err[256], key[32];

    spec_init(&s, "t", 1);
    mt_kv_list_set(&s.env, "A", "1");
    mt_kv_list_set(&s.accel_env, "CUDA_VISIBLE_DEVICES", "0");
    CU_ASSERT_EQUAL(check(&s, err), 0);
    mt_kv_list_set(&s.accel_env, "B=C", "1");
    CU_ASSERT_EQUAL(check(&s, err), -MT_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "without '='"));
    mt_run_spec_release(&s);

    spec_init(&s, "t", 1);
    mt_kv_list_set(&s.env, "", "1");
    CU_ASSERT_EQUAL(check(&s, err), -MT_EINVAL);
    mt_run_spec_release(&s);

    /* Spec and request lists count together. */
    spec_init(&s, "t", 1);
    for (int i = 0; i < MT_RUN_MAX_ENV / 2; i++) {
        snprintf(key, sizeof(key), "K%d", i);
        mt_xgrow((void **)&s.env.v, &s.env.cap, s.env.n + 1,
                 sizeof(*s.env.v));
        s.env.v[s.env.n].key = mt_xstrdup(key);
        s.env.v[s.env.n++].value = mt_xstrdup("v");
        mt_xgrow((void **)&s.accel_env.v, &s.accel_env.cap,
                 s.accel_env.n + 1, sizeof(*s.accel_env.v));
        s.accel_env.v[s.accel_env.n].key = mt_xstrdup(key);
        s.accel_env.v[s.accel_env.n++].value = mt_xstrdup("v");
    }
    CU_ASSERT_EQUAL(check(&s, err), 0);
    mt_kv_list_set(&s.env, "ONE_MORE", "v");
    CU_ASSERT_EQUAL(check(&s, err), -MT_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "too many environment"));
    mt_run_spec_release(&s);
}

/* ---- environment --------------------------------------------------------- */

static size_t env_len(char **env)
{
    size_t n = 0;

    while (env[n])
        n++;
    return n;
}

static void test_env_override_order(void)
{
    char *base[] = {"PATH=/bin", "HOME=/root", "BROKEN", "=x", "A=base",
                    NULL};
    struct mt_kv_list spec = {0}, grant = {0}, own = {0};
    const struct mt_kv_list *lists[] = {&spec, &grant, &own};
    char **env;

    mt_kv_list_set(&spec, "A", "spec");
    mt_kv_list_set(&spec, "S", "1");
    mt_kv_list_set(&grant, "A", "grant");
    mt_kv_list_set(&grant, "CUDA_VISIBLE_DEVICES", "1,3");
    mt_kv_list_set(&own, "MANTA_TASK_ID", "t1");
    mt_kv_list_set(&own, "HOME", "");
    env = mt_run_env_build(base, lists, 3);
    CU_ASSERT_EQUAL_FATAL(env_len(env), 6);
    CU_ASSERT_STRING_EQUAL(env[0], "PATH=/bin");
    CU_ASSERT_STRING_EQUAL(env[1], "HOME="); /* replaced in place */
    CU_ASSERT_STRING_EQUAL(env[2], "A=grant");
    CU_ASSERT_STRING_EQUAL(env[3], "S=1");
    CU_ASSERT_STRING_EQUAL(env[4], "CUDA_VISIBLE_DEVICES=1,3");
    CU_ASSERT_STRING_EQUAL(env[5], "MANTA_TASK_ID=t1");
    mt_run_env_free(env);
    mt_kv_list_release(&spec);
    mt_kv_list_release(&grant);
    mt_kv_list_release(&own);
}

static void test_env_prefix_keys_and_empty(void)
{
    char *base[] = {"AB=1", "A=2", NULL};
    struct mt_kv_list l = {0};
    const struct mt_kv_list *lists[] = {&l};
    char **env;

    /* "A" must not match "AB". */
    mt_kv_list_set(&l, "A", "3");
    env = mt_run_env_build(base, lists, 1);
    CU_ASSERT_EQUAL_FATAL(env_len(env), 2);
    CU_ASSERT_STRING_EQUAL(env[0], "AB=1");
    CU_ASSERT_STRING_EQUAL(env[1], "A=3");
    mt_run_env_free(env);
    mt_kv_list_release(&l);

    env = mt_run_env_build(NULL, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    CU_ASSERT_PTR_NULL(env[0]);
    mt_run_env_free(env);
}

static void test_env_many(void)
{
    struct mt_kv_list l = {0};
    const struct mt_kv_list *lists[] = {&l, &l};
    char key[32], **env;

    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof(key), "K%d", i);
        mt_xgrow((void **)&l.v, &l.cap, l.n + 1, sizeof(*l.v));
        l.v[l.n].key = mt_xstrdup(key);
        l.v[l.n++].value = mt_xstrdup(key);
    }
    env = mt_run_env_build(NULL, lists, 2);
    CU_ASSERT_EQUAL(env_len(env), 3000);
    CU_ASSERT_STRING_EQUAL(env[2999], "K2999=K2999");
    mt_run_env_free(env);
    mt_kv_list_release(&l);
}

/* Add an unset of key to l (a NULL value). */
static void add_unset(struct mt_kv_list *l, const char *key)
{
    mt_xgrow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v));
    l->v[l->n].key = mt_xstrdup(key);
    l->v[l->n++].value = NULL;
}

/* The layers of a task: environ, spec env, spec unsets, grant env, grant
 * unsets, MANTA_*. A whole-host TPU grant removes the worker's own
 * TPU_VISIBLE_CHIPS; CUDA_VISIBLE_DEVICES="" stays set. */
static void test_env_unsets(void)
{
    char *base[] = {"PATH=/bin", "TPU_VISIBLE_CHIPS=0,1", "DROP=me",
                    "KEEP=1", "CUDA_VISIBLE_DEVICES=0", NULL};
    struct mt_kv_list spec = {0}, sun = {0}, grant = {0}, gun = {0},
                      own = {0};
    const struct mt_kv_list *lists[] = {&spec, &sun, &grant, &gun, &own};
    char **env;

    mt_kv_list_set(&spec, "DROP", "spec");   /* set, then unset by spec */
    mt_kv_list_set(&spec, "TPU_HOST_BOUNDS", "9,9,9");
    add_unset(&sun, "DROP");
    add_unset(&sun, "TPU_HOST_BOUNDS");      /* unset, then the grant's */
    add_unset(&sun, "ABSENT");
    mt_kv_list_set(&grant, "CUDA_VISIBLE_DEVICES", "");
    mt_kv_list_set(&grant, "TPU_HOST_BOUNDS", "1,1,1");
    add_unset(&gun, "TPU_VISIBLE_CHIPS");
    mt_kv_list_set(&own, "MANTA_TASK_ID", "t1");
    env = mt_run_env_build(base, lists, 5);
    CU_ASSERT_EQUAL_FATAL(env_len(env), 5);
    CU_ASSERT_STRING_EQUAL(env[0], "PATH=/bin");
    CU_ASSERT_STRING_EQUAL(env[1], "KEEP=1");
    CU_ASSERT_STRING_EQUAL(env[2], "CUDA_VISIBLE_DEVICES=");
    CU_ASSERT_STRING_EQUAL(env[3], "TPU_HOST_BOUNDS=1,1,1");
    CU_ASSERT_STRING_EQUAL(env[4], "MANTA_TASK_ID=t1");
    mt_run_env_free(env);

    /* An overlay keeps the unsets as bare names, in first-seen order. */
    env = mt_run_env_overlay(lists, 5);
    CU_ASSERT_EQUAL_FATAL(env_len(env), 6);
    CU_ASSERT_STRING_EQUAL(env[0], "DROP");
    CU_ASSERT_STRING_EQUAL(env[1], "TPU_HOST_BOUNDS=1,1,1");
    CU_ASSERT_STRING_EQUAL(env[2], "ABSENT");
    CU_ASSERT_STRING_EQUAL(env[3], "CUDA_VISIBLE_DEVICES=");
    CU_ASSERT_STRING_EQUAL(env[4], "TPU_VISIBLE_CHIPS");
    CU_ASSERT_STRING_EQUAL(env[5], "MANTA_TASK_ID=t1");
    mt_run_env_free(env);

    /* A later set brings an unset variable back. */
    add_unset(&grant, "KEEP");
    mt_kv_list_set(&own, "KEEP", "2");
    env = mt_run_env_build(base, lists, 5);
    CU_ASSERT_EQUAL_FATAL(env_len(env), 5);
    CU_ASSERT_STRING_EQUAL(env[1], "KEEP=2");
    mt_run_env_free(env);
    mt_kv_list_release(&spec);
    mt_kv_list_release(&sun);
    mt_kv_list_release(&grant);
    mt_kv_list_release(&gun);
    mt_kv_list_release(&own);
}

/* ---- output buffer ------------------------------------------------------- */

static void test_outbuf_append_coalesces(void)
{
    struct mt_outbuf ob;

    mt_outbuf_init(&ob, 0);
    CU_ASSERT_TRUE(mt_outbuf_empty(&ob));
    mt_outbuf_append(&ob, 1, "ab", 2);
    mt_outbuf_append(&ob, 1, "cd", 2);
    mt_outbuf_append(&ob, 2, "ef", 2);
    mt_outbuf_append(&ob, 1, "", 0);
    mt_outbuf_append(&ob, 1, "g", 1);
    CU_ASSERT_STRING_EQUAL(dump(&ob), "1:abcd|2:ef|1:g");
    CU_ASSERT_EQUAL(ob.bytes, 7);
    mt_outbuf_release(&ob);
    CU_ASSERT_TRUE(mt_outbuf_empty(&ob));
    CU_ASSERT_EQUAL(ob.bytes, 0);
}

static void test_outbuf_drops_oldest_with_marker(void)
{
    struct mt_outbuf ob;
    char text[64];

    mt_outbuf_init(&ob, 10);
    mt_outbuf_append(&ob, 1, "aaaaaa", 6);
    mt_outbuf_append(&ob, 2, "bbbbbb", 6);
    CU_ASSERT_STRING_EQUAL(dump(&ob), "M2|1:aaaa|2:bbbbbb");
    CU_ASSERT_EQUAL(ob.bytes, 10);
    /* Further drops swallow whole chunks and merge into one marker. */
    mt_outbuf_append(&ob, 1, "cccccc", 6);
    CU_ASSERT_STRING_EQUAL(dump(&ob), "M8|2:bbbb|1:cccccc");
    CU_ASSERT_EQUAL(ob.bytes, 10);
    /* One append larger than the limit keeps only its tail. */
    mt_outbuf_append(&ob, 2, "0123456789XY", 12);
    CU_ASSERT_STRING_EQUAL(dump(&ob), "M20|2:23456789XY");
    CU_ASSERT_EQUAL(ob.bytes, 10);
    CU_ASSERT_EQUAL(mt_outbuf_marker(20, text, sizeof(text)), 36);
    CU_ASSERT_STRING_EQUAL(text, "[manta: 20 bytes of output dropped]\n");
    mt_outbuf_release(&ob);
}

static void test_outbuf_take_splits(void)
{
    struct mt_outbuf ob, into;

    mt_outbuf_init(&ob, 0);
    mt_outbuf_init(&into, 0);
    mt_outbuf_append(&ob, 1, "hello", 5);
    mt_outbuf_append(&ob, 2, "world", 5);
    CU_ASSERT_EQUAL(mt_outbuf_take(&ob, 7, &into), 7);
    CU_ASSERT_STRING_EQUAL(dump(&into), "1:hello|2:wo");
    CU_ASSERT_STRING_EQUAL(dump(&ob), "2:rld");
    CU_ASSERT_EQUAL(ob.bytes, 3);
    CU_ASSERT_EQUAL(into.bytes, 7);
    CU_ASSERT_EQUAL(mt_outbuf_take(&ob, 0, &into), 0);
    CU_ASSERT_EQUAL(mt_outbuf_take(&ob, 100, &into), 3);
    CU_ASSERT_TRUE(mt_outbuf_empty(&ob));
    CU_ASSERT_STRING_EQUAL(dump(&into), "1:hello|2:wo|2:rld");
    /* New output after a take starts a new chunk, still in order. */
    mt_outbuf_append(&ob, 2, "!", 1);
    CU_ASSERT_STRING_EQUAL(dump(&ob), "2:!");
    mt_outbuf_release(&ob);
    mt_outbuf_release(&into);
}

static void test_outbuf_unshift_after_failed_send(void)
{
    struct mt_outbuf ob, sent;

    mt_outbuf_init(&ob, 6);
    mt_outbuf_init(&sent, 0);
    mt_outbuf_append(&ob, 1, "aaaaaaaaa", 9);  /* M3|1:aaaaaa */
    CU_ASSERT_EQUAL(mt_outbuf_take(&ob, 4, &sent), 4);
    CU_ASSERT_STRING_EQUAL(dump(&sent), "M3|1:aaaa");
    CU_ASSERT_STRING_EQUAL(dump(&ob), "1:aa");
    /* While the send is out, more output overflows the buffer. */
    mt_outbuf_append(&ob, 2, "bbbbbb", 6);
    CU_ASSERT_STRING_EQUAL(dump(&ob), "M2|2:bbbbbb");
    /* The send failed: its part goes back in front, then the limit holds:
     * 3 + 4 + 2 bytes lost in all, counted by one marker. */
    mt_outbuf_unshift(&ob, &sent);
    CU_ASSERT_TRUE(mt_outbuf_empty(&sent));
    CU_ASSERT_EQUAL(sent.bytes, 0);
    CU_ASSERT_STRING_EQUAL(dump(&ob), "M9|2:bbbbbb");
    CU_ASSERT_EQUAL(ob.bytes, 6);
    mt_outbuf_release(&ob);
}

static void test_outbuf_unshift_keeps_middle_marker(void)
{
    struct mt_outbuf ob, sent;

    mt_outbuf_init(&ob, 8);
    mt_outbuf_init(&sent, 0);
    mt_outbuf_append(&ob, 1, "aaaa", 4);
    CU_ASSERT_EQUAL(mt_outbuf_take(&ob, 4, &sent), 4);
    mt_outbuf_append(&ob, 2, "bbbbbbbbbb", 10);
    CU_ASSERT_STRING_EQUAL(dump(&ob), "M2|2:bbbbbbbb");
    mt_outbuf_unshift(&ob, &sent);
    /* 4 + 8 > 8: the oldest four go and join the marker behind them. */
    CU_ASSERT_STRING_EQUAL(dump(&ob), "M6|2:bbbbbbbb");
    mt_outbuf_release(&ob);

    mt_outbuf_init(&ob, 20);
    mt_outbuf_append(&ob, 1, "aaaa", 4);
    CU_ASSERT_EQUAL(mt_outbuf_take(&ob, 4, &sent), 4);
    ob.limit = 3;
    mt_outbuf_append(&ob, 2, "bbbbb", 5);
    ob.limit = 20;
    CU_ASSERT_STRING_EQUAL(dump(&ob), "M2|2:bbb");
    mt_outbuf_unshift(&ob, &sent);
    /* Under the limit: nothing more is dropped, the marker stays inside. */
    CU_ASSERT_STRING_EQUAL(dump(&ob), "1:aaaa|M2|2:bbb");
    CU_ASSERT_EQUAL(ob.bytes, 7);
    mt_outbuf_release(&ob);
}

static void test_outbuf_large_volume_bounded(void)
{
    struct mt_outbuf ob;
    static char block[65536];
    uint64_t dropped = 0;

    memset(block, 'x', sizeof(block));
    mt_outbuf_init(&ob, MT_OUTPUT_LIMIT);
    for (int i = 0; i < 1600; i++) /* 100 MiB */
        mt_outbuf_append(&ob, (uint32_t)(i % 2) + 1, block, sizeof(block));
    CU_ASSERT_EQUAL(ob.bytes, MT_OUTPUT_LIMIT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ob.head);
    dropped = ob.head->dropped;
    CU_ASSERT_EQUAL(dropped, 1600ull * 65536 - MT_OUTPUT_LIMIT);
    CU_ASSERT_EQUAL(ob.head->next->dropped, 0);
    mt_outbuf_release(&ob);
}

CU_TestInfo mt_test_tasks[] = {
    {"id_valid", test_id_valid},
    {"check_kind_and_argv", test_check_kind_and_argv},
    {"check_limits", test_check_limits},
    {"check_env", test_check_env},
    {"env_override_order", test_env_override_order},
    {"env_prefix_keys_and_empty", test_env_prefix_keys_and_empty},
    {"env_many", test_env_many},
    {"env_unsets", test_env_unsets},
    {"outbuf_append_coalesces", test_outbuf_append_coalesces},
    {"outbuf_drops_oldest_with_marker", test_outbuf_drops_oldest_with_marker},
    {"outbuf_take_splits", test_outbuf_take_splits},
    {"outbuf_unshift_after_failed_send",
     test_outbuf_unshift_after_failed_send},
    {"outbuf_unshift_keeps_middle_marker",
     test_outbuf_unshift_keeps_middle_marker},
    {"outbuf_large_volume_bounded", test_outbuf_large_volume_bounded},
    CU_TEST_INFO_NULL,
};
