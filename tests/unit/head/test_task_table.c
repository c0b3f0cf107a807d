/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_task_table.c -- the head's task table: ids, lookups, terminal
 * states, output trimming with a drop count, listing order, forgetting old
 * finished tasks, and the hash staying consistent through removals.
 */
#include <stdio.h>
#include <string.h>

#include "head/task_table.h"
#include "tests/unit/unit.h"

/* Add a task named name (NULL: none), its def moved into the table. */
static struct mt_head_task *add(struct mt_task_table *t, const char *name,
                                int max_retries, int64_t now)
{
    struct mt_task_def d;

    mt_task_def_init(&d);
    mt_def_set_str(&d.name, name);
    return mt_task_table_add(t, &d, max_retries, now);
}

static void test_new_and_find(void)
{
    struct mt_task_table t;
    struct mt_head_task *a, *b;

    mt_task_table_init(&t, 0x1000);
    a = add(&t, "one", -1, 5);
    b = add(&t, NULL, 0, 6);
    CU_ASSERT_EQUAL(a->num, 0x1000);
    CU_ASSERT_EQUAL(b->num, 0x1001);
    CU_ASSERT_STRING_EQUAL(a->id, "t000000000001000");
    CU_ASSERT_EQUAL(a->state, MT_TASK_PENDING);
    CU_ASSERT_EQUAL(a->max_retries, MT_TASK_DEFAULT_RETRIES);
    CU_ASSERT_EQUAL(b->max_retries, 0);
    CU_ASSERT_PTR_EQUAL(mt_task_table_find(&t, 0x1001), b);
    CU_ASSERT_PTR_EQUAL(mt_task_table_find_id(&t, "t000000000001000"), a);
    CU_ASSERT_PTR_NULL(mt_task_table_find_id(&t, "p000000000001000"));
    CU_ASSERT_PTR_NULL(mt_task_table_find_id(&t, "0000000000001000"));
    CU_ASSERT_PTR_NULL(mt_task_table_find_id(&t, "1000"));
    CU_ASSERT_PTR_NULL(mt_task_table_find_id(&t, "t00000000000100g"));
    CU_ASSERT_PTR_NULL(mt_task_table_find_id(&t, NULL));
    CU_ASSERT_PTR_NULL(mt_task_table_find(&t, 0x999));
    mt_head_task_set_result(a, "xy", 2);
    mt_head_task_set_result(a, "result", 6);
    CU_ASSERT_EQUAL(a->result_len, 6);
    CU_ASSERT_EQUAL(memcmp(a->result, "result", 6), 0);
    mt_head_task_set_result(b, NULL, 0);
    CU_ASSERT_EQUAL(b->result_len, 0);
    CU_ASSERT_PTR_NOT_NULL(b->result);
    CU_ASSERT_STRING_EQUAL(a->def.name, "one");
    CU_ASSERT_PTR_NULL(b->def.name);
    CU_ASSERT_EQUAL(mt_task_table_count(&t, MT_TASK_PENDING), 2);
    mt_task_table_release(&t);
}

static void test_finish(void)
{
    struct mt_task_table t;
    struct mt_head_task *a;

    mt_task_table_init(&t, 1);
    a = add(&t, "x", 2, 1);
    CU_ASSERT_FALSE(mt_head_task_terminal(a));
    a->has_grant = true;
    mt_task_table_finish(&t, a, MT_TASK_FINISHED, 3, NULL, 9);
    CU_ASSERT_TRUE(mt_head_task_terminal(a));
    CU_ASSERT_EQUAL(a->exit_code, 3);
    CU_ASSERT_EQUAL(a->end_ms, 9);
    CU_ASSERT_FALSE(a->has_grant);
    /* A second finish changes nothing. */
    mt_task_table_finish(&t, a, MT_TASK_FAILED, 1, "late", 10);
    CU_ASSERT_EQUAL(a->state, MT_TASK_FINISHED);
    CU_ASSERT_PTR_NULL(a->error);
    CU_ASSERT_STRING_EQUAL(mt_head_task_state_name(MT_TASK_CANCELLED), "CANCELLED");
    CU_ASSERT_STRING_EQUAL(mt_head_task_state_name((enum mt_head_task_state)99),
                           "UNKNOWN");
    mt_task_table_release(&t);
}

static void test_output_trim(void)
{
    static char big[MT_TASK_OUTPUT_MAX / 4];
    struct mt_task_table t;
    struct mt_head_task *a;
    size_t total = 0;

    mt_task_table_init(&t, 1);
    a = add(&t, "x", 0, 1);
    mt_head_task_add_output(a, 1, "hello", 5);
    mt_head_task_add_output(a, 2, "", 0);
    CU_ASSERT_EQUAL(a->out_bytes, 5);
    memset(big, 'b', sizeof(big));
    for (int i = 0; i < 10; i++)
        mt_head_task_add_output(a, 1, big, sizeof(big));
    CU_ASSERT(a->out_bytes <= MT_TASK_OUTPUT_MAX);
    CU_ASSERT_EQUAL(a->out_bytes + a->out_dropped, 5 + 10 * sizeof(big));
    for (struct mt_task_output *o = a->out_head; o; o = o->next)
        total += o->len;
    CU_ASSERT_EQUAL(total, a->out_bytes);
    /* One chunk bigger than the whole buffer keeps its tail. */
    {
        static char huge[MT_TASK_OUTPUT_MAX + 100];
        memset(huge, 'h', sizeof(huge));
        huge[sizeof(huge) - 1] = 'Z';
        mt_head_task_add_output(a, 2, huge, sizeof(huge));
        CU_ASSERT_EQUAL(a->out_bytes, MT_TASK_OUTPUT_MAX);
        CU_ASSERT_EQUAL(a->out_tail->data[a->out_tail->len - 1], 'Z');
    }
    mt_task_table_release(&t);
}

static bool collect(void *arg, struct mt_head_task *task)
{
    uint64_t *out = arg;

    out[++out[0]] = task->num;
    return out[0] < 3;
}

static void test_visit_newest(void)
{
    struct mt_task_table t;
    uint64_t got[8] = {0};

    mt_task_table_init(&t, 10);
    for (int i = 0; i < 5; i++)
        add(&t, "x", 0, i);
    mt_task_table_visit_newest(&t, collect, got);
    CU_ASSERT_EQUAL(got[0], 3);
    CU_ASSERT_EQUAL(got[1], 14);
    CU_ASSERT_EQUAL(got[2], 13);
    CU_ASSERT_EQUAL(got[3], 12);
    mt_task_table_release(&t);
}

static bool odd(void *arg, const struct mt_head_task *task)
{
    (void)arg;
    return task->num % 2 == 1;
}

/* Pages of the odd tasks, newest first, against a sort of them all. */
static void test_newest_pages(void)
{
    struct mt_head_task *page[8];
    struct mt_task_table t;
    size_t n, total;

    mt_task_table_init(&t, 10);
    for (int i = 0; i < 200; i++)
        add(&t, "x", 0, i); /* numbers 10 .. 209 */
    total = mt_task_table_newest(&t, odd, NULL, 0, 3, page, &n);
    CU_ASSERT(total == 100 && n == 3);
    CU_ASSERT(page[0]->num == 209 && page[1]->num == 207 &&
              page[2]->num == 205);
    total = mt_task_table_newest(&t, odd, NULL, 10, 8, page, &n);
    CU_ASSERT(total == 100 && n == 8);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT(page[i]->num == 209 - 2 * (10 + i));
    /* The last page is short; past the end is empty. */
    total = mt_task_table_newest(&t, odd, NULL, 97, 8, page, &n);
    CU_ASSERT(total == 100 && n == 3 && page[2]->num == 11);
    total = mt_task_table_newest(&t, odd, NULL, 500, 8, page, &n);
    CU_ASSERT(total == 100 && n == 0);
    total = mt_task_table_newest(&t, odd, NULL, 0, 0, page, &n);
    CU_ASSERT(total == 100 && n == 0);
    mt_task_table_release(&t);
}

/* A table told to keep fewer ended tasks (--keep-finished-tasks) keeps
 * that many, give or take the batch it trims in. */
static void test_keep_done_set(void)
{
    struct mt_task_table t;

    mt_task_table_init(&t, 1);
    CU_ASSERT_EQUAL(t.keep_done, MT_TASK_KEEP_DONE);
    t.keep_done = 200;
    for (size_t i = 0; i < 1000; i++) {
        struct mt_head_task *x = add(&t, "x", 0, 0);
        mt_task_table_finish(&t, x, MT_TASK_FINISHED, 0, NULL, 1);
    }
    CU_ASSERT(t.n_done_kept >= 200 && t.n_done_kept <= 220);
    CU_ASSERT_EQUAL(t.n, t.n_done_kept);
    CU_ASSERT_PTR_NOT_NULL(mt_task_table_find(&t, 1000));
    CU_ASSERT_PTR_NULL(mt_task_table_find(&t, 1));
    mt_task_table_release(&t);
}

static void test_forget_old_finished(void)
{
    struct mt_task_table t;
    size_t n = MT_TASK_KEEP_DONE + MT_TASK_KEEP_DONE / 5;
    struct mt_head_task *live;

    mt_task_table_init(&t, 1);
    live = add(&t, "live", 0, 0);
    for (size_t i = 0; i < n; i++) {
        struct mt_head_task *x = add(&t, "x", 0, 0);
        mt_task_table_finish(&t, x, MT_TASK_FINISHED, 0, NULL, 1);
    }
    CU_ASSERT(t.n < n + 1);
    CU_ASSERT(t.n_done_kept <= MT_TASK_KEEP_DONE + MT_TASK_KEEP_DONE / 10);
    /* The unfinished task and the newest finished one are still there. */
    CU_ASSERT_PTR_EQUAL(mt_task_table_find(&t, live->num), live);
    CU_ASSERT_PTR_NOT_NULL(mt_task_table_find(&t, 1 + n));
    CU_ASSERT_PTR_NULL(mt_task_table_find(&t, 2)); /* the oldest finished */
    /* Every remaining task is still reachable through the hash. */
    for (size_t i = 0; i < t.cap; i++)
        if (t.slots[i])
            CU_ASSERT_PTR_EQUAL(mt_task_table_find(&t, t.slots[i]->num),
                                t.slots[i]);
    mt_task_table_release(&t);
}

CU_TestInfo mt_test_task_table[] = {
    {"new_and_find", test_new_and_find},
    {"finish", test_finish},
    {"output_trim", test_output_trim},
    {"visit_newest", test_visit_newest},
    {"newest pages", test_newest_pages},
    {"forget_old_finished", test_forget_old_finished},
    {"keep_done_set", test_keep_done_set},
    CU_TEST_INFO_NULL,
};
