/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_store.c -- object lifecycle, pins, eviction order, spilling and
 * restore, accounting, error codes and the visit of what the store holds,
 * of the store library (no sockets).
 */
#include "objstore/store.h"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "tests/unit/unit.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

static mt_object_id oid(uint64_t n)
{
    return mt_object_id_from_u64(n, 0x5157);
}

static struct mt_store *mk(uint64_t cap, const char *spill)
{
    struct mt_store_opts o = {.capacity = cap, .spill_dir = spill};
    struct mt_store *st = NULL;

    CU_ASSERT_FATAL(mt_store_create(&o, &st) == 0);
    return st;
}

/* create + fill with a pattern + seal. */
static int put(struct mt_store *st, uint64_t n, uint64_t size, uint32_t fl)
{
    mt_object_id id = oid(n);
    struct mt_object_info info;
    int rc = mt_store_create_object(st, &id, size, 0, fl, NULL, &info);

    if (rc < 0)
        return rc;
    memset(mt_store_base(st) + info.offset, (int)(n & 0xff), size);
    return mt_store_seal(st, &id);
}

static bool has(struct mt_store *st, uint64_t n)
{
    mt_object_id id = oid(n);

    return mt_store_contains(st, &id) == 0;
}

static void test_lifecycle(void)
{
    struct mt_store *st = mk(64 * KIB, NULL);
    mt_object_id id = oid(1);
    struct mt_object_info info, g;
    struct mt_store_stats s;

    CU_ASSERT_EQUAL(mt_store_create_object(st, &id, 1000, 24, 0, NULL, &info),
                    0);
    CU_ASSERT_EQUAL(info.offset % 64, 0);
    CU_ASSERT(info.offset >= 4096);
    CU_ASSERT_EQUAL(mt_store_contains(st, &id), -MT_EAGAIN);
    CU_ASSERT_EQUAL(mt_store_get(st, &id, &g), -MT_EAGAIN);
    CU_ASSERT_EQUAL(mt_store_create_object(st, &id, 8, 0, 0, NULL, &g),
                    -MT_EEXIST);
    memcpy(mt_store_base(st) + info.offset, "hello", 5);
    CU_ASSERT_EQUAL(mt_store_delete(st, &id), -MT_ESTATE);
    CU_ASSERT_EQUAL(mt_store_seal(st, &id), 0);
    CU_ASSERT_EQUAL(mt_store_seal(st, &id), -MT_ESTATE);
    CU_ASSERT_EQUAL(mt_store_abort(st, &id), -MT_ESTATE);
    CU_ASSERT_EQUAL(mt_store_release(st, &id), -MT_ESTATE);
    CU_ASSERT_EQUAL(mt_store_get(st, &id, &g), 0);
    CU_ASSERT_EQUAL(g.offset, info.offset);
    CU_ASSERT_EQUAL(g.data_size, 1000);
    CU_ASSERT_EQUAL(g.meta_size, 24);
    CU_ASSERT_EQUAL(memcmp(mt_store_base(st) + g.offset, "hello", 5), 0);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.num_pinned, 1);
    CU_ASSERT_EQUAL(s.pinned, 1024);
    CU_ASSERT_EQUAL(s.used, 1024);
    CU_ASSERT_EQUAL(mt_store_release(st, &id), 0);
    CU_ASSERT_EQUAL(mt_store_release(st, &id), -MT_ESTATE);
    CU_ASSERT_EQUAL(mt_store_delete(st, &id), 0);
    CU_ASSERT_EQUAL(mt_store_delete(st, &id), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_store_get(st, &id, &g), -MT_ENOENT);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.used, 0);
    CU_ASSERT_EQUAL(s.num_objects, 0);
    mt_store_destroy(st);
}

static void test_abort_and_unknown(void)
{
    struct mt_store *st = mk(64 * KIB, NULL);
    mt_object_id id = oid(2), nope = oid(99);
    struct mt_object_info info;
    struct mt_store_stats s;

    CU_ASSERT_EQUAL(mt_store_create_object(st, &id, 5000, 0, 0, NULL, &info),
                    0);
    CU_ASSERT_EQUAL(mt_store_abort(st, &id), 0);
    CU_ASSERT_EQUAL(mt_store_abort(st, &id), -MT_ENOENT);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.used, 0);
    CU_ASSERT_EQUAL(s.num_unsealed, 0);
    CU_ASSERT_EQUAL(mt_store_seal(st, &nope), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_store_release(st, &nope), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_store_get(st, &nope, &info), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_store_set_evictable(st, &nope, true), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_store_create_object(st, &id, 8, 0, 0x80, NULL, &info),
                    -MT_EINVAL);
    mt_store_destroy(st);
}

static void test_too_big_and_pinned_full(void)
{
    struct mt_store *st = mk(64 * KIB, NULL);
    mt_object_id id = oid(3);
    struct mt_object_info info;

    CU_ASSERT_EQUAL(mt_store_create_object(st, &id, 64 * KIB + 1, 0, 0, NULL,
                                           &info),
                    -MT_ETOOBIG);
    CU_ASSERT_EQUAL(mt_store_create_object(st, &id, 64 * KIB, 1, 0, NULL,
                                           &info),
                    -MT_ETOOBIG);
    CU_ASSERT_EQUAL(mt_store_create_object(st, &id, UINT64_MAX, 2, 0, NULL,
                                           &info),
                    -MT_ETOOBIG);
    /* Fill with evictable objects, all pinned: no victims, ENOSPC. */
    for (uint64_t i = 10; i < 14; i++) {
        mt_object_id x = oid(i);

        CU_ASSERT_EQUAL(put(st, i, 16 * KIB, MT_OBJ_EVICTABLE), 0);
        CU_ASSERT_EQUAL(mt_store_get(st, &x, &info), 0);
    }
    CU_ASSERT_EQUAL(put(st, 20, 1, MT_OBJ_EVICTABLE), -MT_ENOSPC);
    /* An unpinned one becomes a victim. */
    id = oid(12);
    CU_ASSERT_EQUAL(mt_store_release(st, &id), 0);
    CU_ASSERT_EQUAL(put(st, 20, 1, MT_OBJ_EVICTABLE), 0);
    CU_ASSERT_FALSE(has(st, 12));
    /* Not evictable, no spill dir: never dropped. */
    CU_ASSERT_EQUAL(put(st, 21, 8 * KIB, 0), 0);
    CU_ASSERT_EQUAL(put(st, 22, 8 * KIB, 0), -MT_ENOSPC);
    CU_ASSERT(has(st, 21));
    mt_store_destroy(st); /* frees pinned objects too */
}

static void test_eviction_order(void)
{
    struct mt_store *st = mk(64 * KIB, NULL);
    struct mt_object_info info;
    struct mt_store_stats s;
    mt_object_id id;

    for (uint64_t i = 1; i <= 4; i++)
        CU_ASSERT_EQUAL(put(st, i, 16 * KIB, MT_OBJ_EVICTABLE), 0);
    /* Use 1: it becomes the most recent. */
    id = oid(1);
    CU_ASSERT_EQUAL(mt_store_get(st, &id, &info), 0);
    CU_ASSERT_EQUAL(mt_store_release(st, &id), 0);
    CU_ASSERT_EQUAL(put(st, 5, 16 * KIB, MT_OBJ_EVICTABLE), 0);
    CU_ASSERT_FALSE(has(st, 2));
    CU_ASSERT(has(st, 1) && has(st, 3) && has(st, 4));
    CU_ASSERT_EQUAL(put(st, 6, 16 * KIB, MT_OBJ_EVICTABLE), 0);
    CU_ASSERT_FALSE(has(st, 3));
    /* 4 is not evictable any more: 1 goes next. */
    id = oid(4);
    CU_ASSERT_EQUAL(mt_store_set_evictable(st, &id, false), 0);
    CU_ASSERT_EQUAL(put(st, 7, 16 * KIB, MT_OBJ_EVICTABLE), 0);
    CU_ASSERT_FALSE(has(st, 1));
    CU_ASSERT(has(st, 4));
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.evictions, 3);
    CU_ASSERT_EQUAL(s.evicted_bytes, 48 * KIB);
    CU_ASSERT_EQUAL(s.num_sealed, 4);
    mt_store_destroy(st);
}

/* Eviction must go on until a contiguous hole fits, not stop at byte sums. */
static void test_eviction_contiguous(void)
{
    struct mt_store *st = mk(64 * KIB, NULL);
    struct mt_object_info info;
    mt_object_id id;

    for (uint64_t i = 1; i <= 8; i++)
        CU_ASSERT_EQUAL(put(st, i, 8 * KIB, MT_OBJ_EVICTABLE), 0);
    /* Pin 2, 4, 6, 8 so free holes are never adjacent. Evict order: 1,3,... */
    for (uint64_t i = 2; i <= 8; i += 2) {
        id = oid(i);
        CU_ASSERT_EQUAL(mt_store_get(st, &id, &info), 0);
    }
    CU_ASSERT_EQUAL(put(st, 9, 16 * KIB, MT_OBJ_EVICTABLE), -MT_ENOSPC);
    for (uint64_t i = 2; i <= 8; i += 2) {
        id = oid(i);
        CU_ASSERT_EQUAL(mt_store_release(st, &id), 0);
    }
    CU_ASSERT_EQUAL(put(st, 9, 16 * KIB, MT_OBJ_EVICTABLE), 0);
    mt_store_destroy(st);
}

static void make_dir(char *buf, size_t len)
{
    snprintf(buf, len, "/tmp/mt-spill-XXXXXX");
    CU_ASSERT_FATAL(mkdtemp(buf) != NULL);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    if (!d)
        return -1;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void check_pattern(struct mt_store *st, uint64_t n, uint64_t size)
{
    mt_object_id id = oid(n);
    struct mt_object_info info;
    const uint8_t *p;
    bool ok = true;

    CU_ASSERT_FATAL(mt_store_get(st, &id, &info) == 0);
    p = mt_store_base(st) + info.offset;
    CU_ASSERT_EQUAL(info.data_size, size);
    for (uint64_t i = 0; i < size; i++)
        ok &= p[i] == (uint8_t)n;
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(mt_store_release(st, &id), 0);
}

static void test_spill_and_restore(void)
{
    char dir[64];
    struct mt_store *st;
    struct mt_store_stats s;

    make_dir(dir, sizeof(dir));
    st = mk(64 * KIB, dir);
    for (uint64_t i = 1; i <= 4; i++)
        CU_ASSERT_EQUAL(put(st, i, 16 * KIB, 0), 0);
    /* Full of primary copies: 1 is spilled, not lost. */
    CU_ASSERT_EQUAL(put(st, 5, 16 * KIB, 0), 0);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.spills, 1);
    CU_ASSERT_EQUAL(s.num_spilled, 1);
    CU_ASSERT_EQUAL(s.spilled, 16 * KIB);
    CU_ASSERT_EQUAL(s.evictions, 0);
    CU_ASSERT_EQUAL(count_files(dir), 1);
    CU_ASSERT(has(st, 1));
    /* Getting 1 restores it (spilling the LRU one, 2). */
    check_pattern(st, 1, 16 * KIB);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.restores, 1);
    CU_ASSERT_EQUAL(s.spills, 2);
    CU_ASSERT_EQUAL(s.num_spilled, 1);
    CU_ASSERT_EQUAL(count_files(dir), 1);
    check_pattern(st, 2, 16 * KIB);
    for (uint64_t i = 1; i <= 5; i++)
        check_pattern(st, i, 16 * KIB);
    /* Delete of a spilled object removes its file. */
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.num_objects, 5);
    for (uint64_t i = 1; i <= 5; i++) {
        mt_object_id id = oid(i);

        CU_ASSERT_EQUAL(mt_store_delete(st, &id), 0);
    }
    CU_ASSERT_EQUAL(count_files(dir), 0);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.spilled, 0);
    CU_ASSERT_EQUAL(s.used, 0);
    mt_store_destroy(st);
    rmdir(dir);
}

/* With a spill dir, evictable copies are dropped before primaries spill. */
static void test_drop_before_spill(void)
{
    char dir[64];
    struct mt_store *st;
    struct mt_store_stats s;

    make_dir(dir, sizeof(dir));
    st = mk(64 * KIB, dir);
    CU_ASSERT_EQUAL(put(st, 1, 16 * KIB, 0), 0);                /* primary */
    CU_ASSERT_EQUAL(put(st, 2, 16 * KIB, 0), 0);                /* primary */
    CU_ASSERT_EQUAL(put(st, 3, 16 * KIB, MT_OBJ_EVICTABLE), 0); /* copy */
    CU_ASSERT_EQUAL(put(st, 4, 16 * KIB, MT_OBJ_EVICTABLE), 0); /* copy */
    CU_ASSERT_EQUAL(put(st, 5, 32 * KIB, 0), 0);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.evictions, 2);
    CU_ASSERT_EQUAL(s.spills, 0);
    CU_ASSERT(has(st, 1) && has(st, 2));
    CU_ASSERT(!has(st, 3) && !has(st, 4));
    CU_ASSERT_EQUAL(put(st, 6, 16 * KIB, 0), 0);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.spills, 1);
    CU_ASSERT_EQUAL(s.num_spilled, 1);
    CU_ASSERT(has(st, 1)); /* spilled, still there */
    mt_store_destroy(st);
    rmdir(dir);
}

/* Spill I/O failures are errors, never lost objects or crashes. */
static void test_spill_io_errors(void)
{
    char dir[64], path[128], hex[MT_OBJECT_ID_HEX_LEN + 1];
    struct mt_store *st;
    struct mt_object_info info;
    mt_object_id id = oid(1);

    make_dir(dir, sizeof(dir));
    st = mk(64 * KIB, dir);
    CU_ASSERT_EQUAL(put(st, 1, 32 * KIB, 0), 0);
    CU_ASSERT_EQUAL(put(st, 2, 16 * KIB, 0), 0);
    /* The spill dir vanishes: making room fails with EIO, 1 stays. */
    CU_ASSERT_EQUAL(rmdir(dir), 0);
    CU_ASSERT_EQUAL(put(st, 3, 32 * KIB, 0), -MT_EIO);
    CU_ASSERT(has(st, 1) && has(st, 2));
    check_pattern(st, 1, 32 * KIB);
    /* Back again: spilling works; then the spill file goes missing. */
    CU_ASSERT_EQUAL(mkdir(dir, 0700), 0);
    CU_ASSERT_EQUAL(mt_store_spill(st, &id), 0);
    snprintf(path, sizeof(path), "%s/%s.obj", dir, mt_object_id_hex(&id, hex));
    CU_ASSERT_EQUAL(unlink(path), 0);
    CU_ASSERT_EQUAL(mt_store_get(st, &id, &info), -MT_EIO);
    CU_ASSERT_EQUAL(mt_store_delete(st, &id), 0);
    check_pattern(st, 2, 16 * KIB);
    mt_store_destroy(st);
    rmdir(dir);
}

static void test_spill_explicit_and_cleanup(void)
{
    char dir[64];
    struct mt_store *st;
    mt_object_id id = oid(1);
    struct mt_object_info info;

    make_dir(dir, sizeof(dir));
    st = mk(64 * KIB, dir);
    CU_ASSERT_EQUAL(put(st, 1, 1000, 0), 0);
    CU_ASSERT_EQUAL(mt_store_get(st, &id, &info), 0);
    CU_ASSERT_EQUAL(mt_store_spill(st, &id), -MT_ESTATE);
    CU_ASSERT_EQUAL(mt_store_release(st, &id), 0);
    CU_ASSERT_EQUAL(mt_store_spill(st, &id), 0);
    CU_ASSERT_EQUAL(mt_store_spill(st, &id), -MT_ESTATE);
    CU_ASSERT_EQUAL(count_files(dir), 1);
    mt_store_destroy(st); /* removes spill files */
    CU_ASSERT_EQUAL(count_files(dir), 0);
    rmdir(dir);
    st = mk(64 * KIB, NULL);
    CU_ASSERT_EQUAL(put(st, 1, 1000, 0), 0);
    CU_ASSERT_EQUAL(mt_store_spill(st, &id), -MT_ENOTSUP);
    mt_store_destroy(st);
}

static void test_delete_while_pinned(void)
{
    struct mt_store *st = mk(64 * KIB, NULL);
    mt_object_id id = oid(1);
    struct mt_object_info info;
    struct mt_store_stats s;

    CU_ASSERT_EQUAL(put(st, 1, 1000, 0), 0);
    CU_ASSERT_EQUAL(mt_store_get(st, &id, &info), 0);
    CU_ASSERT_EQUAL(mt_store_get(st, &id, &info), 0);
    CU_ASSERT_EQUAL(mt_store_delete(st, &id), 0);
    CU_ASSERT_EQUAL(mt_store_get(st, &id, &info), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_store_contains(st, &id), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_store_release(st, &id), 0);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.used, 1024);
    CU_ASSERT_EQUAL(mt_store_release(st, &id), 0);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.used, 0);
    CU_ASSERT_EQUAL(s.num_objects, 0);
    mt_store_destroy(st);
}

/* What the node holds (RegisterNode): sealed objects, pinned or not,
 * not one being written nor one deleted while pinned. */
struct seen {
    mt_object_id ids[8];
    size_t n;
};

static void on_visit(void *arg, const mt_object_id *id)
{
    struct seen *s = arg;

    if (s->n < 8)
        s->ids[s->n++] = *id;
}

static bool seen_has(const struct seen *s, uint64_t n)
{
    mt_object_id id = oid(n);

    for (size_t i = 0; i < s->n; i++)
        if (memcmp(&s->ids[i], &id, sizeof(id)) == 0)
            return true;
    return false;
}

static void test_visit(void)
{
    struct mt_store *st = mk(64 * KIB, NULL);
    mt_object_id id2 = oid(2), id3 = oid(3), id4 = oid(4);
    struct mt_object_info info;
    struct seen s = {0};

    CU_ASSERT_EQUAL(mt_store_visit(st, on_visit, &s), 0);
    CU_ASSERT_EQUAL(put(st, 1, 100, 0), 0);
    CU_ASSERT_EQUAL(put(st, 2, 100, MT_OBJ_EVICTABLE), 0);
    CU_ASSERT_EQUAL(put(st, 3, 100, 0), 0);
    CU_ASSERT_EQUAL(mt_store_create_object(st, &id4, 100, 0, 0, NULL, &info),
                    0);
    CU_ASSERT_EQUAL(mt_store_get(st, &id2, &info), 0);
    CU_ASSERT_EQUAL(mt_store_get(st, &id3, &info), 0);
    CU_ASSERT_EQUAL(mt_store_delete(st, &id3), 0); /* pinned: goes later */
    CU_ASSERT_EQUAL(mt_store_visit(st, on_visit, &s), 2);
    CU_ASSERT_EQUAL(s.n, 2);
    CU_ASSERT(seen_has(&s, 1) && seen_has(&s, 2));
    CU_ASSERT(!seen_has(&s, 3) && !seen_has(&s, 4));
    CU_ASSERT_EQUAL(mt_store_release(st, &id2), 0);
    CU_ASSERT_EQUAL(mt_store_release(st, &id3), 0);
    CU_ASSERT_EQUAL(mt_store_abort(st, &id4), 0);
    mt_store_destroy(st);
}

struct events {
    int n[6];              /* count per enum mt_store_event */
    mt_object_id last[6];  /* last id per event */
};

static void on_event(void *arg, enum mt_store_event ev, const mt_object_id *id)
{
    struct events *e = arg;

    e->n[ev]++;
    e->last[ev] = *id;
}

static void test_tensor_and_events(void)
{
    struct mt_store *st = mk(64 * KIB, NULL);
    struct mt_tensor_desc t = {.code = MT_DL_FLOAT, .bits = 32, .lanes = 1,
                               .ndim = 2, .shape = {16, 16}};
    mt_object_id id = oid(1);
    struct mt_object_info info;
    struct events ev = {0}, other = {0};

    CU_ASSERT_EQUAL(mt_store_listen(st, on_event, &ev), 0);
    CU_ASSERT_EQUAL(mt_store_listen(st, on_event, &other), 0);
    CU_ASSERT_EQUAL(mt_store_listen(st, on_event, &other), 0);
    CU_ASSERT_EQUAL(mt_store_listen(st, on_event, &other), 0);
    CU_ASSERT_EQUAL(mt_store_listen(st, on_event, &other), -MT_ENOSPC);
    mt_store_unlisten(st, on_event, &other);
    CU_ASSERT_EQUAL(mt_store_create_object(st, &id, 1023, 0, 0, &t, &info),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_store_create_object(st, &id, 1024, 0, MT_OBJ_TENSOR,
                                           NULL, &info),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_store_create_object(st, &id, 1024, 0, 0, &t, &info), 0);
    CU_ASSERT_EQUAL(ev.n[MT_STORE_SEALED], 0);
    CU_ASSERT_EQUAL(mt_store_seal(st, &id), 0);
    CU_ASSERT_EQUAL(ev.n[MT_STORE_SEALED], 1);
    CU_ASSERT(mt_object_id_eq(&ev.last[MT_STORE_SEALED], &id));
    CU_ASSERT_EQUAL(mt_store_get(st, &id, &info), 0);
    CU_ASSERT(info.flags & MT_OBJ_TENSOR);
    CU_ASSERT_EQUAL(info.tensor.shape[1], 16);
    CU_ASSERT_EQUAL(info.tensor.code, MT_DL_FLOAT);
    CU_ASSERT_EQUAL(mt_store_release(st, &id), 0);
    /* Evict it: an evicted event names it. */
    CU_ASSERT_EQUAL(mt_store_set_evictable(st, &id, true), 0);
    CU_ASSERT_EQUAL(put(st, 2, 64 * KIB - 512, 0), 0);
    CU_ASSERT_EQUAL(ev.n[MT_STORE_EVICTED], 1);
    CU_ASSERT(mt_object_id_eq(&ev.last[MT_STORE_EVICTED], &id));
    id = oid(2);
    CU_ASSERT_EQUAL(mt_store_delete(st, &id), 0);
    CU_ASSERT_EQUAL(ev.n[MT_STORE_DELETED], 1);
    CU_ASSERT_EQUAL(ev.n[MT_STORE_SEALED], 2);
    CU_ASSERT_EQUAL(other.n[MT_STORE_SEALED], 0); /* unlisten took all 3 */
    mt_store_destroy(st);
}

static void test_spill_events(void)
{
    char dir[64];
    struct mt_store *st;
    struct events ev = {0};
    struct mt_object_info info;
    mt_object_id id = oid(1);

    make_dir(dir, sizeof(dir));
    st = mk(64 * KIB, dir);
    CU_ASSERT_EQUAL(mt_store_listen(st, on_event, &ev), 0);
    CU_ASSERT_EQUAL(put(st, 1, 100, 0), 0);
    CU_ASSERT_EQUAL(mt_store_spill(st, &id), 0);
    CU_ASSERT_EQUAL(ev.n[MT_STORE_SPILLED], 1);
    CU_ASSERT_EQUAL(mt_store_get(st, &id, &info), 0);
    CU_ASSERT_EQUAL(ev.n[MT_STORE_RESTORED], 1);
    CU_ASSERT_EQUAL(mt_store_release(st, &id), 0);
    mt_store_destroy(st);
    rmdir(dir);
}

/* ---- prefaulting ---- */

/* Pages of [off, off + len) of the arena that are populated (mincore). */
static uint64_t resident(struct mt_store *st, uint64_t off, uint64_t len)
{
    uint64_t npages = len / 4096, n = 0;
    unsigned char *vec = calloc(npages, 1);

    CU_ASSERT_FATAL(vec != NULL);
    CU_ASSERT_FATAL(mincore(mt_store_base(st) + off, len, vec) == 0);
    for (uint64_t i = 0; i < npages; i++)
        n += vec[i] & 1;
    free(vec);
    return n * 4096;
}

static struct mt_store *mk_prefault(uint64_t cap, int64_t ahead, bool all)
{
    struct mt_store_opts o = {.capacity = cap, .prefault_ahead = ahead,
                              .prefault = all};
    struct mt_store *st = NULL;

    CU_ASSERT_FATAL(mt_store_create(&o, &st) == 0);
    return st;
}

/*
 * The helper keeps `ahead` bytes populated above the highest allocation,
 * no more; freed ranges stay populated (never punched), so an object
 * created again there finds its pages.
 */
static void test_prefault_ahead(void)
{
    struct mt_store *st = mk_prefault(64 * MIB, 8 * MIB, false);
    mt_object_id id = oid(1);
    struct mt_object_info info;
    struct mt_store_stats s;

    mt_store_prefault_sync(st);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.prefaulted, 8 * MIB);
    CU_ASSERT_EQUAL(resident(st, 4096, 8 * MIB), 8 * MIB);
    CU_ASSERT_EQUAL(resident(st, 4096 + 8 * MIB, 56 * MIB), 0);
    CU_ASSERT_EQUAL_FATAL(mt_store_create_object(st, &id, 16 * MIB, 0, 0,
                                                 NULL, &info), 0);
    CU_ASSERT_EQUAL(info.offset, 4096);
    mt_store_prefault_sync(st);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.prefaulted, 24 * MIB);
    CU_ASSERT_EQUAL(resident(st, 4096, 24 * MIB), 24 * MIB);
    CU_ASSERT_EQUAL(resident(st, 4096 + 24 * MIB, 40 * MIB), 0);
    /* Freed, then created again in place: still populated. */
    CU_ASSERT_EQUAL(mt_store_abort(st, &id), 0);
    CU_ASSERT_EQUAL(resident(st, 4096, 24 * MIB), 24 * MIB);
    CU_ASSERT_EQUAL_FATAL(mt_store_create_object(st, &id, 16 * MIB, 0, 0,
                                                 NULL, &info), 0);
    CU_ASSERT_EQUAL(info.offset, 4096);
    mt_store_prefault_sync(st);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.prefaulted, 24 * MIB);
    CU_ASSERT_EQUAL(mt_store_abort(st, &id), 0);
    mt_store_destroy(st);
}

/* Near the end the helper stops at the capacity; none and all-at-start. */
static void test_prefault_bounds(void)
{
    struct mt_store *st = mk_prefault(16 * MIB, 8 * MIB, false);
    mt_object_id id = oid(1);
    struct mt_object_info info;
    struct mt_store_stats s;

    CU_ASSERT_EQUAL_FATAL(mt_store_create_object(st, &id, 12 * MIB, 0, 0,
                                                 NULL, &info), 0);
    mt_store_prefault_sync(st);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.prefaulted, 16 * MIB);
    CU_ASSERT(s.prefaulted <= s.capacity);
    mt_store_destroy(st);

    st = mk_prefault(16 * MIB, -1, false);
    mt_store_prefault_sync(st);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.prefaulted, 0);
    CU_ASSERT_EQUAL(resident(st, 4096, 16 * MIB), 0);
    mt_store_destroy(st);

    st = mk_prefault(16 * MIB, 0, true);
    mt_store_stats(st, &s);
    CU_ASSERT_EQUAL(s.prefaulted, 16 * MIB);
    CU_ASSERT_EQUAL(resident(st, 4096, 16 * MIB), 16 * MIB);
    mt_store_destroy(st);
}

CU_TestInfo mt_test_store[] = {
    {"lifecycle", test_lifecycle},
    {"abort_and_unknown", test_abort_and_unknown},
    {"too_big_and_pinned_full", test_too_big_and_pinned_full},
    {"eviction_order", test_eviction_order},
    {"eviction_contiguous", test_eviction_contiguous},
    {"spill_and_restore", test_spill_and_restore},
    {"drop_before_spill", test_drop_before_spill},
    {"spill_io_errors", test_spill_io_errors},
    {"spill_explicit_and_cleanup", test_spill_explicit_and_cleanup},
    {"delete_while_pinned", test_delete_while_pinned},
    {"tensor_and_events", test_tensor_and_events},
    {"spill_events", test_spill_events},
    {"prefault_ahead", test_prefault_ahead},
    {"prefault_bounds", test_prefault_bounds},
    {"visit", test_visit},
    CU_TEST_INFO_NULL,
};
