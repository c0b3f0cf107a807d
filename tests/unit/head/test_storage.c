/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_storage.c -- head state storage (head/storage.h) with the memory
 * backend: picking a backend by spec, put, overwrite, del and scan per
 * table, and the completion callbacks (which the memory backend runs before
 * returning).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "common/error.h"
#include "head/storage.h"
#include "tests/unit/unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_ROWS 8

/* What the callbacks saw. */
struct seen {
    int done_calls;
    int last_err;
    size_t nrows;
    char keys[MAX_ROWS][32];
    char vals[MAX_ROWS][64];
    size_t lens[MAX_ROWS];
};

static void on_done(void *arg, int err)
{
    struct seen *s = arg;

    s->done_calls++;
    s->last_err = err;
}

static void on_row(void *arg, const char *key, const void *val, size_t len)
{
    struct seen *s = arg;

    CU_ASSERT_FATAL(s->nrows < MAX_ROWS);
    CU_ASSERT_FATAL(len < sizeof(s->vals[0]));
    /* rows arrive before the scan completes */
    CU_ASSERT_EQUAL(s->done_calls, 0);
    snprintf(s->keys[s->nrows], sizeof(s->keys[0]), "%s", key);
    memcpy(s->vals[s->nrows], val, len);
    s->vals[s->nrows][len] = '\0';
    s->lens[s->nrows] = len;
    s->nrows++;
}

/* The value stored under key in the last scan, or NULL. */
static const char *scanned(const struct seen *s, const char *key)
{
    for (size_t i = 0; i < s->nrows; i++)
        if (strcmp(s->keys[i], key) == 0)
            return s->vals[i];
    return NULL;
}

static void scan(struct mt_storage *st, const char *table, struct seen *s)
{
    memset(s, 0, sizeof(*s));
    s->last_err = 12345;
    CU_ASSERT_EQUAL(mt_storage_scan(st, table, on_row, on_done, s), 0);
    CU_ASSERT_EQUAL(s->done_calls, 1);
    CU_ASSERT_EQUAL(s->last_err, 0);
}

static void put(struct mt_storage *st, const char *table, const char *key,
                const char *val)
{
    struct seen s = {0};

    s.last_err = 12345;
    CU_ASSERT_EQUAL(
        mt_storage_put(st, table, key, val, strlen(val), on_done, &s), 0);
    CU_ASSERT_EQUAL(s.done_calls, 1);
    CU_ASSERT_EQUAL(s.last_err, 0);
}

/* ---- opening ------------------------------------------------------------- */

static void test_open_specs(void)
{
    static const struct {
        const char *spec;
        int want;
    } cases[] = {
        {"memory", 0},           {"", 0},
        {"memory://", 0},        {"memory:", 0},
        {"memory://ignored", 0},
        /* Redis is checked at open: nothing listens on port 1 */
        {"redis://127.0.0.1:1", -MT_EUNAVAIL},
        {"redis://u:p@127.0.0.1:1/3", -MT_EUNAVAIL},
        {"redis", -MT_EINVAL},   {"redis://host", -MT_EINVAL},
        {"redis://:6379", -MT_EINVAL}, {"redis://h:0", -MT_EINVAL},
        {"redis://h:6379/x", -MT_EINVAL}, {"redis://h:6379x", -MT_EINVAL},
        {"mem", -MT_EINVAL},
        {"memoryx", -MT_EINVAL}, {"Memory", -MT_EINVAL},
        {"://memory", -MT_EINVAL},
        {"file://", -MT_EINVAL}, {"file", -MT_EINVAL},
    };
    uv_loop_t loop;

    CU_ASSERT_EQUAL_FATAL(uv_loop_init(&loop), 0);
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_storage *st = NULL;
        int rc = mt_storage_open(&loop, cases[i].spec, &st);

        CU_ASSERT_EQUAL(rc, cases[i].want);
        if (rc != cases[i].want)
            fprintf(stderr, "mt_storage_open(\"%s\") = %d\n", cases[i].spec,
                    rc);
        if (rc == 0) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(st);
            CU_ASSERT_PTR_EQUAL(st->ops, &mt_storage_memory);
            CU_ASSERT_STRING_EQUAL(st->ops->name, "memory");
        } else {
            CU_ASSERT_PTR_NULL(st); /* untouched on failure */
        }
        mt_storage_close(st);
    }
    {
        struct mt_storage *st = NULL;

        CU_ASSERT_EQUAL(mt_storage_open(&loop, NULL, &st), 0);
        CU_ASSERT_PTR_NOT_NULL(st);
        mt_storage_close(st);
    }
    mt_storage_close(NULL);
    CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
}

/* ---- rows ---------------------------------------------------------------- */

static void test_put_scan(void)
{
    struct mt_storage *st = NULL;
    struct seen s;
    uv_loop_t loop;

    CU_ASSERT_EQUAL_FATAL(uv_loop_init(&loop), 0);
    CU_ASSERT_EQUAL_FATAL(mt_storage_open(&loop, "memory", &st), 0);

    /* an empty table scans to nothing but still completes */
    scan(st, "nodes", &s);
    CU_ASSERT_EQUAL(s.nrows, 0);

    put(st, "nodes", "a", "1");
    put(st, "nodes", "b", "22");
    put(st, "jobs", "a", "job-a");
    scan(st, "nodes", &s);
    CU_ASSERT_EQUAL(s.nrows, 2);
    CU_ASSERT_STRING_EQUAL(scanned(&s, "a"), "1");
    CU_ASSERT_STRING_EQUAL(scanned(&s, "b"), "22");
    scan(st, "jobs", &s);
    CU_ASSERT_EQUAL(s.nrows, 1);
    CU_ASSERT_STRING_EQUAL(scanned(&s, "a"), "job-a");
    scan(st, "other", &s);
    CU_ASSERT_EQUAL(s.nrows, 0);

    /* overwrite replaces the value, longer or shorter, in one table only */
    put(st, "nodes", "a", "a much longer value than before");
    scan(st, "nodes", &s);
    CU_ASSERT_EQUAL(s.nrows, 2);
    CU_ASSERT_STRING_EQUAL(scanned(&s, "a"),
                           "a much longer value than before");
    put(st, "nodes", "a", "");
    scan(st, "nodes", &s);
    CU_ASSERT_EQUAL(s.nrows, 2);
    CU_ASSERT_STRING_EQUAL(scanned(&s, "a"), "");
    scan(st, "jobs", &s);
    CU_ASSERT_STRING_EQUAL(scanned(&s, "a"), "job-a");

    mt_storage_close(st);
    CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
}

/* Values are opaque bytes: embedded NULs and the exact length survive. */
static void test_binary_values(void)
{
    static const char bin[] = {'x', '\0', 'y', '\0', '\xff'};
    struct mt_storage *st = NULL;
    struct seen s;
    uv_loop_t loop;

    CU_ASSERT_EQUAL_FATAL(uv_loop_init(&loop), 0);
    CU_ASSERT_EQUAL_FATAL(mt_storage_open(&loop, "", &st), 0);
    memset(&s, 0, sizeof(s));
    CU_ASSERT_EQUAL(
        mt_storage_put(st, "t", "k", bin, sizeof(bin), on_done, &s), 0);
    CU_ASSERT_EQUAL(s.done_calls, 1);
    scan(st, "t", &s);
    CU_ASSERT_EQUAL_FATAL(s.nrows, 1);
    CU_ASSERT_EQUAL(s.lens[0], sizeof(bin));
    CU_ASSERT_EQUAL(memcmp(s.vals[0], bin, sizeof(bin)), 0);

    /* fire and forget: no callback */
    CU_ASSERT_EQUAL(mt_storage_put(st, "t", "k2", "v", 1, NULL, NULL), 0);
    scan(st, "t", &s);
    CU_ASSERT_EQUAL(s.nrows, 2);
    CU_ASSERT_STRING_EQUAL(scanned(&s, "k2"), "v");

    mt_storage_close(st);
    CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
}

static void test_del(void)
{
    struct mt_storage *st = NULL;
    struct seen s, d;
    uv_loop_t loop;

    CU_ASSERT_EQUAL_FATAL(uv_loop_init(&loop), 0);
    CU_ASSERT_EQUAL_FATAL(mt_storage_open(&loop, "memory", &st), 0);
    put(st, "nodes", "a", "1");
    put(st, "nodes", "b", "2");
    put(st, "nodes", "c", "3");
    put(st, "jobs", "a", "x");

    memset(&d, 0, sizeof(d));
    d.last_err = 12345;
    CU_ASSERT_EQUAL(mt_storage_del(st, "nodes", "a", on_done, &d), 0);
    CU_ASSERT_EQUAL(d.done_calls, 1);
    CU_ASSERT_EQUAL(d.last_err, 0);
    scan(st, "nodes", &s);
    CU_ASSERT_EQUAL(s.nrows, 2);
    CU_ASSERT_PTR_NULL(scanned(&s, "a"));
    CU_ASSERT_STRING_EQUAL(scanned(&s, "b"), "2");
    CU_ASSERT_STRING_EQUAL(scanned(&s, "c"), "3");
    /* the same key in another table stays */
    scan(st, "jobs", &s);
    CU_ASSERT_STRING_EQUAL(scanned(&s, "a"), "x");

    /* deleting what is not there: the call succeeds, the callback says
     * -MT_ENOENT */
    memset(&d, 0, sizeof(d));
    CU_ASSERT_EQUAL(mt_storage_del(st, "nodes", "a", on_done, &d), 0);
    CU_ASSERT_EQUAL(d.done_calls, 1);
    CU_ASSERT_EQUAL(d.last_err, -MT_ENOENT);
    memset(&d, 0, sizeof(d));
    CU_ASSERT_EQUAL(mt_storage_del(st, "missing", "zz", on_done, &d), 0);
    CU_ASSERT_EQUAL(d.last_err, -MT_ENOENT);

    /* delete the rest, then put again */
    memset(&d, 0, sizeof(d));
    CU_ASSERT_EQUAL(mt_storage_del(st, "nodes", "c", on_done, &d), 0);
    CU_ASSERT_EQUAL(mt_storage_del(st, "nodes", "b", on_done, &d), 0);
    CU_ASSERT_EQUAL(mt_storage_del(st, "jobs", "a", on_done, &d), 0);
    CU_ASSERT_EQUAL(d.done_calls, 3);
    CU_ASSERT_EQUAL(d.last_err, 0);
    scan(st, "nodes", &s);
    CU_ASSERT_EQUAL(s.nrows, 0);
    put(st, "nodes", "b", "back");
    scan(st, "nodes", &s);
    CU_ASSERT_EQUAL(s.nrows, 1);
    CU_ASSERT_STRING_EQUAL(scanned(&s, "b"), "back");

    mt_storage_close(st);
    CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
}

/* Closing with rows still stored frees them (ASan/valgrind check this). */
static void test_close_with_rows(void)
{
    struct mt_storage *st = NULL;
    char key[16];
    uv_loop_t loop;

    CU_ASSERT_EQUAL_FATAL(uv_loop_init(&loop), 0);
    CU_ASSERT_EQUAL_FATAL(mt_storage_open(&loop, "memory", &st), 0);
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        put(st, i % 2 ? "odd" : "even", key, key);
    }
    mt_storage_close(st);
    CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
}

/* Status and logs never show a Redis password. */
static void test_spec_masked(void)
{
    static const char *cases[][2] = {
        {"memory", "memory"},
        {"file:///tmp/manta/head.state", "file:///tmp/manta/head.state"},
        {"redis://127.0.0.1:6379/1", "redis://127.0.0.1:6379/1"},
        {"redis://u:secret@h:6379/1", "redis://u:***@h:6379/1"},
        {"redis://secret@h:6379", "redis://***@h:6379"},
        {"redis://u:p@ss:w@rd@h:1", "redis://u:***@h:1"},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        char *m = mt_storage_spec_masked(cases[i][0]);

        CU_ASSERT_STRING_EQUAL(m, cases[i][1]);
        free(m);
    }
}

/* The memory backend counts its writes, each a batch of its own. */
static void test_memory_stats(void)
{
    struct mt_storage *st = NULL;
    struct mt_storage_stats ss;
    uv_loop_t loop;

    CU_ASSERT_EQUAL_FATAL(uv_loop_init(&loop), 0);
    CU_ASSERT_EQUAL_FATAL(mt_storage_open(&loop, "memory", &st), 0);
    put(st, "t", "a", "1");
    put(st, "t", "a", "2");
    mt_storage_stats(st, &ss);
    CU_ASSERT_STRING_EQUAL(ss.backend, "memory");
    CU_ASSERT_STRING_EQUAL(ss.spec, "memory");
    CU_ASSERT(ss.healthy);
    CU_ASSERT_EQUAL(ss.writes, 2);
    CU_ASSERT_EQUAL(ss.buffered, 0);
    CU_ASSERT_EQUAL(ss.dropped, 0);
    CU_ASSERT_STRING_EQUAL(ss.last_error, "");
    mt_storage_close(st);
    CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
}

CU_TestInfo mt_test_storage[] = {
    {"open_specs", test_open_specs},
    {"put_scan", test_put_scan},
    {"binary_values", test_binary_values},
    {"del", test_del},
    {"close_with_rows", test_close_with_rows},
    {"spec_masked", test_spec_masked},
    {"memory_stats", test_memory_stats},
    CU_TEST_INFO_NULL,
};
