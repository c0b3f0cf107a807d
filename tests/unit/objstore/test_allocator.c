/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_allocator.c -- alignment, splitting, coalescing and fragmentation of
 * the arena range allocator.
 */
#include "objstore/allocator.h"

#include "common/error.h"
#include "tests/unit/unit.h"

static void test_alignment(void)
{
    struct mt_allocator a;
    struct mt_block *b[8];
    uint64_t sizes[8] = {0, 1, 63, 64, 65, 100, 4097, 1000};

    CU_ASSERT_FATAL(mt_allocator_init(&a, 4096 + 3, 1 << 20) == 0);
    CU_ASSERT_EQUAL(a.base % 64, 0);
    for (int i = 0; i < 8; i++) {
        CU_ASSERT_FATAL(mt_allocator_alloc(&a, sizes[i], &b[i]) == 0);
        CU_ASSERT_EQUAL(b[i]->offset % 64, 0);
        CU_ASSERT_EQUAL(b[i]->size % 64, 0);
        CU_ASSERT(b[i]->size >= sizes[i]);
        CU_ASSERT(b[i]->offset >= a.base);
        CU_ASSERT(b[i]->offset + b[i]->size <= a.base + a.size);
        for (int j = 0; j < i; j++)
            CU_ASSERT(b[i]->offset >= b[j]->offset + b[j]->size ||
                      b[j]->offset >= b[i]->offset + b[i]->size);
    }
    CU_ASSERT_EQUAL(mt_allocator_round(0), 64);
    CU_ASSERT_EQUAL(mt_allocator_round(65), 128);
    for (int i = 0; i < 8; i++)
        mt_allocator_free(&a, b[i]);
    CU_ASSERT_EQUAL(a.used, 0);
    mt_allocator_release(&a);
}

static void test_coalescing(void)
{
    struct mt_allocator a;
    struct mt_block *b[16];

    CU_ASSERT_FATAL(mt_allocator_init(&a, 0, 16 * 1024) == 0);
    for (int i = 0; i < 16; i++)
        CU_ASSERT_FATAL(mt_allocator_alloc(&a, 1024, &b[i]) == 0);
    CU_ASSERT_EQUAL(a.nfree, 0);
    CU_ASSERT_EQUAL(mt_allocator_largest_free(&a), 0);
    /* Free every other block: eight separate holes. */
    for (int i = 0; i < 16; i += 2)
        mt_allocator_free(&a, b[i]);
    CU_ASSERT_EQUAL(a.nfree, 8);
    CU_ASSERT_EQUAL(mt_allocator_largest_free(&a), 1024);
    /* Freeing the rest merges everything back into one block. */
    for (int i = 1; i < 16; i += 2)
        mt_allocator_free(&a, b[i]);
    CU_ASSERT_EQUAL(a.nfree, 1);
    CU_ASSERT_EQUAL(a.nused, 0);
    CU_ASSERT_EQUAL(mt_allocator_largest_free(&a), 16 * 1024);
    CU_ASSERT_FATAL(mt_allocator_alloc(&a, 16 * 1024, &b[0]) == 0);
    mt_allocator_free(&a, b[0]);
    mt_allocator_release(&a);
}

static void test_fragmentation(void)
{
    struct mt_allocator a;
    struct mt_block *b[16], *big;

    CU_ASSERT_FATAL(mt_allocator_init(&a, 0, 16 * 1024) == 0);
    for (int i = 0; i < 16; i++)
        CU_ASSERT_FATAL(mt_allocator_alloc(&a, 1024, &b[i]) == 0);
    for (int i = 0; i < 16; i += 2)
        mt_allocator_free(&a, b[i]);
    /* 8 KiB free but no 2 KiB hole: external fragmentation is reported. */
    CU_ASSERT_EQUAL(a.size - a.used, 8 * 1024);
    CU_ASSERT_EQUAL(mt_allocator_alloc(&a, 2048, &big), -MT_ENOSPC);
    /* Freeing one neighbour opens a 3 KiB hole (three blocks merged). */
    mt_allocator_free(&a, b[5]);
    CU_ASSERT_EQUAL(mt_allocator_largest_free(&a), 3 * 1024);
    CU_ASSERT_FATAL(mt_allocator_alloc(&a, 2048, &big) == 0);
    CU_ASSERT_EQUAL(big->offset, 4 * 1024);
    /* The 1 KiB tail of the hole is still usable. */
    CU_ASSERT_FATAL(mt_allocator_alloc(&a, 1024, &b[5]) == 0);
    CU_ASSERT_EQUAL(b[5]->offset, 6 * 1024);
    mt_allocator_free(&a, big);
    mt_allocator_free(&a, b[5]);
    for (int i = 1; i < 16; i += 2)
        if (i != 5)
            mt_allocator_free(&a, b[i]);
    CU_ASSERT_EQUAL(a.nfree, 1);
    mt_allocator_release(&a);
}

static void test_too_big_and_full(void)
{
    struct mt_allocator a;
    struct mt_block *b;

    CU_ASSERT_FATAL(mt_allocator_init(&a, 0, 4096) == 0);
    CU_ASSERT_EQUAL(mt_allocator_alloc(&a, 4097, &b), -MT_ETOOBIG);
    CU_ASSERT_EQUAL(mt_allocator_alloc(&a, UINT64_MAX, &b), -MT_ETOOBIG);
    CU_ASSERT_FATAL(mt_allocator_alloc(&a, 4096, &b) == 0);
    CU_ASSERT_EQUAL(mt_allocator_alloc(&a, 1, &b), -MT_ENOSPC);
    mt_allocator_release(&a);
    CU_ASSERT_EQUAL(mt_allocator_init(&a, 10, 20), -MT_EINVAL);
}

/* Random alloc/free against a shadow map: no overlap, full recovery. */
static void test_random(void)
{
    enum { N = 256 };
    struct mt_allocator a;
    struct mt_block *b[N] = {0};
    uint32_t x = 12345;

    CU_ASSERT_FATAL(mt_allocator_init(&a, 64, 1 << 20) == 0);
    for (int step = 0; step < 20000; step++) {
        int i;

        x = x * 1103515245u + 12345u;
        i = (int)((x >> 8) % N);
        if (b[i]) {
            mt_allocator_free(&a, b[i]);
            b[i] = NULL;
        } else if (mt_allocator_alloc(&a, (x >> 16) % 9000, &b[i]) < 0) {
            b[i] = NULL;
        }
    }
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            if (b[i] && b[j])
                CU_ASSERT(b[i]->offset + b[i]->size <= b[j]->offset ||
                          b[j]->offset + b[j]->size <= b[i]->offset);
    for (int i = 0; i < N; i++)
        if (b[i])
            mt_allocator_free(&a, b[i]);
    CU_ASSERT_EQUAL(a.nfree, 1);
    CU_ASSERT_EQUAL(a.used, 0);
    mt_allocator_release(&a);
}

CU_TestInfo mt_test_allocator[] = {
    {"alignment", test_alignment},
    {"coalescing", test_coalescing},
    {"fragmentation", test_fragmentation},
    {"too_big_and_full", test_too_big_and_full},
    {"random", test_random},
    CU_TEST_INFO_NULL,
};
