/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_tagmap.c -- sdk/tagmap.c: put, find and delete against a reference
 * array over thousands of random operations (growth and backward-shift
 * deletion included), and take of an item that is not there.
 */
#include <stdlib.h>
#include <string.h>

#include "sdk/tagmap.h"
#include "tests/unit/unit.h"

#define N 3000

/* An item with its tag, as the client watch's tasks carry theirs. */
struct item {
    uint64_t tag;
};

static bool find_is(const struct mt__tagmap *m, const struct item *t)
{
    size_t j = mt__tagmap_find(m, t->tag);

    return j != SIZE_MAX && m->slots[j].item == t;
}

static void test_random_ops(void)
{
    static struct item tasks[N];
    static bool in[N];
    struct mt__tagmap m = {0};
    size_t n_in = 0;

    srand(7);
    for (int i = 0; i < N; i++) {
        memset(&tasks[i], 0, sizeof(tasks[i]));
        /* Sequential tags like the client's, plus collisions in the low
         * bits so runs wrap around the table. */
        tasks[i].tag = (uint64_t)(i + 1) * (i % 3 ? 1 : 1024);
        in[i] = false;
    }
    for (int step = 0; step < 20 * N; step++) {
        int i = rand() % N;

        if (!in[i]) {
            CU_ASSERT_EQUAL_FATAL(
                mt__tagmap_put(&m, tasks[i].tag, &tasks[i]), 0);
            in[i] = true;
            n_in++;
        } else if (rand() % 2) {
            CU_ASSERT_TRUE(mt__tagmap_take(&m, tasks[i].tag, &tasks[i]));
            in[i] = false;
            n_in--;
        } else {
            mt__tagmap_del(&m, mt__tagmap_find(&m, tasks[i].tag));
            in[i] = false;
            n_in--;
        }
        if (step % 997 == 0)
            for (int k = 0; k < N; k++)
                CU_ASSERT_EQUAL_FATAL(find_is(&m, &tasks[k]), in[k]);
    }
    CU_ASSERT_EQUAL(m.n, n_in);
    for (int k = 0; k < N; k++)
        CU_ASSERT_EQUAL(find_is(&m, &tasks[k]), in[k]);
    mt__tagmap_release(&m);
    CU_ASSERT_EQUAL(m.n, 0);
}

static void test_empty_and_missing(void)
{
    struct mt__tagmap m = {0};
    struct item a, b;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.tag = 1;
    b.tag = 2;
    CU_ASSERT_EQUAL(mt__tagmap_find(&m, 1), SIZE_MAX);
    CU_ASSERT_FALSE(mt__tagmap_take(&m, a.tag, &a));
    CU_ASSERT_EQUAL(mt__tagmap_put(&m, a.tag, &a), 0);
    CU_ASSERT_FALSE(mt__tagmap_take(&m, b.tag, &b));
    CU_ASSERT_TRUE(mt__tagmap_take(&m, a.tag, &a));
    CU_ASSERT_FALSE(mt__tagmap_take(&m, a.tag, &a));
    CU_ASSERT_EQUAL(m.n, 0);
    mt__tagmap_release(&m);
}

CU_TestInfo mt_test_sdk_tagmap[] = {
    {"random_ops", test_random_ops},
    {"empty_and_missing", test_empty_and_missing},
    CU_TEST_INFO_NULL,
};
