/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_arena.c -- the shared layout: header fields, magic and version checks
 * by a second mapper, default capacity.
 */
#include "objstore/arena.h"

#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "objstore/shm_layout.h"
#include "tests/unit/unit.h"

static void test_header(void)
{
    struct mt_arena a;
    const struct mt_shm_header *h;

    CU_ASSERT_FATAL(mt_arena_create(&a, "test", 1 << 20, false) == 0);
    h = (const struct mt_shm_header *)a.base;
    CU_ASSERT_EQUAL(h->magic, MT_SHM_MAGIC);
    CU_ASSERT_EQUAL(memcmp(a.base, "MTTOBSTR", 8), 0);
    CU_ASSERT_EQUAL(h->version, MT_SHM_VERSION);
    CU_ASSERT_EQUAL(h->header_size, MT_SHM_HEADER_SIZE);
    CU_ASSERT_EQUAL(h->arena_size, MT_SHM_HEADER_SIZE + (1 << 20));
    CU_ASSERT_EQUAL(h->data_offset, MT_SHM_HEADER_SIZE);
    CU_ASSERT_EQUAL(h->data_size, 1 << 20);
    CU_ASSERT_EQUAL(h->align, 64);
    CU_ASSERT_EQUAL(h->pid, (uint32_t)getpid());
    CU_ASSERT_EQUAL(mt_arena_check(a.base, a.size), 0);
    mt_arena_release(&a);
}

static void test_version_check(void)
{
    struct mt_arena a, m;
    struct mt_shm_header *h;

    CU_ASSERT_FATAL(mt_arena_create(&a, "test", 64 * 1024, false) == 0);
    h = (struct mt_shm_header *)a.base;
    CU_ASSERT_EQUAL(mt_arena_map(&m, a.fd, false), 0);
    CU_ASSERT_EQUAL(memcmp(m.base, a.base, 64), 0);
    mt_arena_release(&m);

    h->version = MT_SHM_VERSION + 1;
    CU_ASSERT_EQUAL(mt_arena_map(&m, a.fd, false), -MT_EVERSION);
    CU_ASSERT_PTR_NULL(m.base);
    h->version = MT_SHM_VERSION;
    h->magic ^= 1;
    CU_ASSERT_EQUAL(mt_arena_map(&m, a.fd, false), -MT_EVERSION);
    h->magic ^= 1;
    h->data_size += 64;
    CU_ASSERT_EQUAL(mt_arena_check(a.base, a.size), -MT_EVERSION);
    h->data_size -= 64;
    CU_ASSERT_EQUAL(mt_arena_check(a.base, a.size - 64), -MT_EVERSION);
    CU_ASSERT_EQUAL(mt_arena_check(a.base, 100), -MT_EVERSION);
    CU_ASSERT_EQUAL(mt_arena_check(a.base, a.size), 0);
    mt_arena_release(&a);
}

/* A client holding the fd cannot resize the arena under everybody. */
static void test_size_sealed(void)
{
    struct mt_arena a;

    CU_ASSERT_FATAL(mt_arena_create(&a, "test", 64 * 1024, false) == 0);
    CU_ASSERT_NOT_EQUAL(ftruncate(a.fd, 4096), 0);
    CU_ASSERT_NOT_EQUAL(ftruncate(a.fd, (off_t)a.size * 2), 0);
    CU_ASSERT_EQUAL(mt_arena_check(a.base, a.size), 0);
    mt_arena_release(&a);
}

static void test_bad_capacity(void)
{
    struct mt_arena a;

    CU_ASSERT_EQUAL(mt_arena_create(&a, "test", 100, false), -MT_EINVAL);
    mt_arena_release(&a);
}

static void test_default_capacity(void)
{
    uint64_t nocap = mt_arena_default_capacity(NULL);
    uint64_t cap = mt_arena_default_capacity("/dev/shm");

    CU_ASSERT(nocap > 0);
    CU_ASSERT_EQUAL(nocap % 4096, 0);
    CU_ASSERT(cap <= nocap);
    CU_ASSERT(cap > 0);
}

CU_TestInfo mt_test_arena[] = {
    {"header", test_header},
    {"version_check", test_version_check},
    {"size_sealed", test_size_sealed},
    {"bad_capacity", test_bad_capacity},
    {"default_capacity", test_default_capacity},
    CU_TEST_INFO_NULL,
};
