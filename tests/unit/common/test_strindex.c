/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_strindex.c -- the index by string key (common/strindex.h): finds
 * what was added, not what was not, and stays right through growth and
 * swap-removals in any order (checked against the array itself after
 * every step of a long pseudo-random run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strindex.h"
#include "tests/unit/unit.h"

#define MAX_KEYS 4000

/* The caller's array: keys in positions 0 .. n-1. */
struct keys {
    char v[MAX_KEYS][16];
    size_t n;
};

static const char *key_of(const void *arr, size_t pos)
{
    return ((const struct keys *)arr)->v[pos];
}

static void push(struct mt_strindex *ix, struct keys *k, unsigned id)
{
    snprintf(k->v[k->n], sizeof(k->v[0]), "k%u", id);
    mt_strindex_add(ix, k);
    k->n++;
}

static void swap_remove(struct mt_strindex *ix, struct keys *k, size_t pos)
{
    mt_strindex_remove(ix, k, pos);
    memcpy(k->v[pos], k->v[k->n - 1], sizeof(k->v[0]));
    k->n--;
}

/* Every key is found at its position. RET the number that were not. */
static size_t misplaced(const struct mt_strindex *ix, const struct keys *k)
{
    size_t bad = 0;

    for (size_t i = 0; i < k->n; i++)
        bad += mt_strindex_find(ix, k, k->v[i]) != i;
    return bad + (ix->n != k->n);
}

static void test_empty(void)
{
    struct mt_strindex ix;
    static struct keys k;

    mt_strindex_init(&ix, key_of);
    CU_ASSERT_EQUAL(mt_strindex_find(&ix, &k, "k0"), MT_STRINDEX_NONE);
    mt_strindex_release(&ix);
}

static void test_add_find(void)
{
    struct mt_strindex ix;
    static struct keys k;

    k.n = 0;
    mt_strindex_init(&ix, key_of);
    for (unsigned i = 0; i < 3000; i++)
        push(&ix, &k, i);
    CU_ASSERT_EQUAL(misplaced(&ix, &k), 0);
    CU_ASSERT(ix.cap >= 2 * ix.n);
    CU_ASSERT_EQUAL(mt_strindex_find(&ix, &k, "k3000"), MT_STRINDEX_NONE);
    CU_ASSERT_EQUAL(mt_strindex_find(&ix, &k, ""), MT_STRINDEX_NONE);
    mt_strindex_release(&ix);
    CU_ASSERT_EQUAL(ix.n, 0);
    CU_ASSERT_EQUAL(mt_strindex_find(&ix, &k, "k1"), MT_STRINDEX_NONE);
}

/* Adds and swap-removals mixed (a fixed LCG): after each step every key
 * is where the array has it, and a removed key is gone. */
static void test_remove_any_order(void)
{
    struct mt_strindex ix;
    static struct keys k;
    char gone[16];
    unsigned next = 0, r = 12345;
    size_t bad = 0, pos;

    k.n = 0;
    mt_strindex_init(&ix, key_of);
    for (int step = 0; step < 20000; step++) {
        r = r * 1103515245u + 12345u;
        if (k.n < 50 || (k.n < MAX_KEYS && (r >> 16) % 3 != 0)) {
            push(&ix, &k, next++);
            continue;
        }
        pos = (r >> 8) % k.n;
        memcpy(gone, k.v[pos], sizeof(gone));
        swap_remove(&ix, &k, pos);
        bad += mt_strindex_find(&ix, &k, gone) != MT_STRINDEX_NONE;
        if (step % 97 == 0)
            bad += misplaced(&ix, &k);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(misplaced(&ix, &k), 0);
    while (k.n)
        swap_remove(&ix, &k, 0);
    CU_ASSERT_EQUAL(mt_strindex_find(&ix, &k, "k1"), MT_STRINDEX_NONE);
    mt_strindex_release(&ix);
}

CU_TestInfo mt_test_strindex[] = {
    {"empty", test_empty},
    {"add_find", test_add_find},
    {"remove_any_order", test_remove_any_order},
    CU_TEST_INFO_NULL,
};
