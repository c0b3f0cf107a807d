/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_client.c -- the blocking client against a real manta-store process:
 * put/get round trips, concurrent client processes with content checks,
 * reclaiming what killed clients held, timeouts, and error codes.
 */
#include "objstore/client.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "objstore/protocol.h"
#include "store_proc.h"
#include "tests/unit/unit.h"

#define MIB (1024u * 1024u)

static struct store_proc sp;

static int suite_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    return store_proc_start(&sp, 16 * MIB, false) == 0 ? 0 : -1;
}

static int suite_cleanup(void)
{
    return store_proc_stop(&sp) == 0 ? 0 : -1;
}

static mt_object_id oid(uint64_t a, uint64_t b)
{
    return mt_object_id_from_u64(a, b);
}

static struct mt_objc *conn(void)
{
    struct mt_objc *c = NULL;

    CU_ASSERT_FATAL(mt_objc_connect(sp.sock, NULL, &c) == 0);
    return c;
}

static void fill(uint8_t *p, uint64_t n, uint64_t seed)
{
    for (uint64_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 9));
}

static bool check(const uint8_t *p, uint64_t n, uint64_t seed)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(seed * 31 + i * 7 + (i >> 9)))
            return false;
    return true;
}

static void test_put_get(void)
{
    struct mt_objc *c = conn();
    mt_object_id id = oid(1, 1);
    struct mt_objc_buf b;
    uint8_t data[1000];

    fill(data, sizeof(data), 1);
    CU_ASSERT_EQUAL(mt_objc_put(c, &id, data, sizeof(data), "meta", 4, 0,
                                NULL),
                    0);
    CU_ASSERT_EQUAL(mt_objc_put(c, &id, data, 10, NULL, 0, 0, NULL),
                    -MT_EEXIST);
    CU_ASSERT_EQUAL(mt_objc_contains(c, &id), 0);
    CU_ASSERT_EQUAL_FATAL(mt_objc_get(c, &id, 0, &b), 0);
    CU_ASSERT_EQUAL(b.info.data_size, sizeof(data));
    CU_ASSERT_EQUAL(b.info.meta_size, 4);
    CU_ASSERT_EQUAL((uintptr_t)b.data % 64, 0);
    CU_ASSERT(check(b.data, sizeof(data), 1));
    CU_ASSERT_EQUAL(memcmp(b.meta, "meta", 4), 0);
    CU_ASSERT_EQUAL(mt_objc_release(c, &id), 0);
    CU_ASSERT_EQUAL(mt_objc_release(c, &id), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &id), 0);
    CU_ASSERT_EQUAL(mt_objc_contains(c, &id), -MT_ENOENT);
    mt_objc_disconnect(c);
}

/* Deleting an object we still hold: hidden at once, freed at release. */
static void test_delete_while_held(void)
{
    struct mt_objc *c = conn();
    mt_object_id id = oid(1, 3);
    struct mt_objc_buf b, g;
    struct mt_store_stats s;

    CU_ASSERT_EQUAL(mt_objc_put(c, &id, "held", 4, NULL, 0, 0, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(mt_objc_get(c, &id, 0, &b), 0);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &id), 0);
    /* Hidden from our own gets (no cache hit), still mapped for b. */
    CU_ASSERT_EQUAL(mt_objc_get(c, &id, 0, &g), -MT_ENOENT);
    CU_ASSERT_EQUAL(memcmp(b.data, "held", 4), 0);
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT_EQUAL(s.num_objects, 1);
    CU_ASSERT_EQUAL(mt_objc_release(c, &id), 0);
    /* The release went out at once (not deferred): same stream, in order. */
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT_EQUAL(s.num_objects, 0);
    CU_ASSERT_EQUAL(s.used, s.reserved);
    CU_ASSERT_EQUAL(mt_objc_release(c, &id), -MT_ENOENT);
    mt_objc_disconnect(c);
}

/* A small tensor travels inline (PUT) with its descriptor. */
static void test_put_inline_tensor(void)
{
    struct mt_objc *c = conn();
    struct mt_tensor_desc t = {.code = MT_DL_BFLOAT, .bits = 16, .lanes = 1,
                               .ndim = 2, .shape = {4, 8},
                               .strides = {1, 4}};
    mt_object_id id = oid(1, 2);
    uint16_t data[32] = {0};
    struct mt_objc_buf b;

    CU_ASSERT_EQUAL(mt_objc_put(c, &id, data, sizeof(data), NULL, 0, 0, &t),
                    0);
    CU_ASSERT_EQUAL_FATAL(mt_objc_get(c, &id, 0, &b), 0);
    CU_ASSERT(b.info.flags & MT_OBJ_TENSOR);
    CU_ASSERT_EQUAL(b.info.tensor.code, MT_DL_BFLOAT);
    CU_ASSERT_EQUAL(b.info.tensor.ndim, 2);
    CU_ASSERT_EQUAL(b.info.tensor.shape[1], 8);
    CU_ASSERT_EQUAL(b.info.tensor.strides[1], 4);
    CU_ASSERT_EQUAL(mt_objc_release(c, &id), 0);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &id), 0);
    /* A shape reaching past the data is refused. */
    t.shape[0] = 5;
    CU_ASSERT_EQUAL(mt_objc_put(c, &id, data, sizeof(data), NULL, 0, 0, &t),
                    -MT_EINVAL);
    mt_objc_disconnect(c);
}

static void test_create_seal_large_tensor(void)
{
    struct mt_objc *c = conn();
    struct mt_objc *d = conn();
    struct mt_tensor_desc t = {.code = MT_DL_FLOAT, .bits = 32, .lanes = 1,
                               .ndim = 2, .shape = {512, 512}};
    mt_object_id id = oid(2, 1);
    struct mt_objc_buf b, g;

    CU_ASSERT_EQUAL_FATAL(mt_objc_create(c, &id, 1 * MIB, 0, 0, &t, &b), 0);
    fill(b.data, 1 * MIB, 2);
    CU_ASSERT_EQUAL(mt_objc_get(d, &id, 0, &g), -MT_EAGAIN);
    CU_ASSERT_EQUAL(mt_objc_seal(d, &id), -MT_EPERM);
    CU_ASSERT_EQUAL(mt_objc_seal(c, &id), 0);
    CU_ASSERT_EQUAL(mt_objc_seal(c, &id), -MT_ESTATE);
    CU_ASSERT_EQUAL(mt_objc_abort(c, &id), -MT_ESTATE);
    CU_ASSERT_EQUAL_FATAL(mt_objc_get(d, &id, 0, &g), 0);
    CU_ASSERT(g.info.flags & MT_OBJ_TENSOR);
    CU_ASSERT_EQUAL(g.info.tensor.shape[0], 512);
    CU_ASSERT_EQUAL(g.info.tensor.bits, 32);
    CU_ASSERT(check(g.data, 1 * MIB, 2));
    CU_ASSERT_EQUAL(mt_objc_release(d, &id), 0);
    CU_ASSERT_EQUAL(mt_objc_flush(d), 0);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &id), 0);
    mt_objc_disconnect(c);
    mt_objc_disconnect(d);
}

/* Pages of [p, p + len) with a page table entry in this process. */
static uint64_t mapped_pages(const uint8_t *p, uint64_t len)
{
    uint64_t first = (uintptr_t)p / 4096, n = 0, e;
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

    CU_ASSERT_FATAL(fd >= 0);
    for (uint64_t i = 0; i < len / 4096; i++) {
        CU_ASSERT_FATAL(pread(fd, &e, sizeof(e), (off_t)((first + i) * 8)) ==
                        (ssize_t)sizeof(e));
        n += e >> 63; /* bit 63: present */
    }
    close(fd);
    return n;
}

/*
 * A large create comes back with its pages already mapped writable in this
 * process (no page fault per 4 KiB during the copy); a small one does not
 * pay for that.
 */
static void test_create_populates(void)
{
    struct mt_objc *c = conn();
    mt_object_id small = oid(2, 20), big = oid(2, 21);
    struct mt_objc_buf b, s;

    CU_ASSERT_EQUAL_FATAL(mt_objc_create(c, &small, 256 * 1024, 0, 0, NULL,
                                         &s), 0);
    /* Pages past the first 64 KiB (reading the release board at connect
     * maps its neighbours in by the kernel's fault-around). */
    CU_ASSERT_EQUAL(mapped_pages(s.data + 128 * 1024, 64 * 1024), 0);
    CU_ASSERT_EQUAL_FATAL(mt_objc_create(c, &big, 4 * MIB, 0, 0, NULL, &b),
                          0);
    CU_ASSERT_EQUAL(mapped_pages(b.data, 4 * MIB), 4 * MIB / 4096);
    fill(b.data, 4 * MIB, 21);
    CU_ASSERT_EQUAL(mt_objc_seal(c, &big), 0);
    CU_ASSERT_EQUAL(mt_objc_abort(c, &small), 0);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &big), 0);
    mt_objc_disconnect(c);
}

static void test_errors(void)
{
    struct mt_objc *c = conn();
    mt_object_id id = oid(3, 1), nope = oid(3, 99);
    struct mt_objc_buf b;
    struct mt_store_stats s;

    CU_ASSERT_EQUAL(mt_objc_create(c, &id, 17 * MIB, 0, 0, NULL, &b),
                    -MT_ETOOBIG);
    CU_ASSERT_EQUAL(mt_objc_seal(c, &nope), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_objc_abort(c, &nope), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_objc_release(c, &nope), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &nope), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_objc_get(c, &nope, 0, &b), -MT_ENOENT);
    /* Fill the store with pinned objects: ENOSPC, never a hang. */
    for (uint64_t i = 0; i < 5; i++) {
        mt_object_id x = oid(3, 10 + i);

        CU_ASSERT_EQUAL(mt_objc_create(c, &x, 3 * MIB, 0, MT_OBJ_EVICTABLE,
                                       NULL, &b),
                        0);
        CU_ASSERT_EQUAL(mt_objc_seal(c, &x), 0);
        CU_ASSERT_EQUAL(mt_objc_get(c, &x, 0, &b), 0);
    }
    CU_ASSERT_EQUAL(mt_objc_create(c, &id, 1 * MIB, 0, 0, NULL, &b),
                    -MT_ENOSPC);
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT_EQUAL(s.num_pinned, 5);
    /* Released pins (kept deferred by the client) are reclaimed. */
    for (uint64_t i = 0; i < 5; i++) {
        mt_object_id x = oid(3, 10 + i);

        CU_ASSERT_EQUAL(mt_objc_release(c, &x), 0);
    }
    CU_ASSERT_EQUAL(mt_objc_create(c, &id, 1 * MIB, 0, 0, NULL, &b), 0);
    CU_ASSERT_EQUAL(mt_objc_abort(c, &id), 0);
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT_EQUAL(s.evictions, 1);
    for (uint64_t i = 0; i < 5; i++) {
        mt_object_id x = oid(3, 10 + i);
        int rc = mt_objc_delete(c, &x);

        CU_ASSERT(rc == 0 || (i == 0 && rc == -MT_ENOENT));
    }
    mt_objc_disconnect(c);
}

static void test_get_timeout(void)
{
    struct mt_objc *c = conn();
    mt_object_id nope = oid(4, 1);
    struct mt_objc_buf b;
    uint64_t t0 = test_now_ms(), dt;

    CU_ASSERT_EQUAL(mt_objc_get(c, &nope, 100, &b), -MT_ETIMEDOUT);
    dt = test_now_ms() - t0;
    CU_ASSERT(dt >= 95 && dt < 5000);
    /* The client still works after a timeout. */
    CU_ASSERT_EQUAL(mt_objc_put(c, &nope, "x", 1, NULL, 0, 0, NULL), 0);
    CU_ASSERT_EQUAL(mt_objc_get(c, &nope, 100, &b), 0);
    CU_ASSERT_EQUAL(mt_objc_release(c, &nope), 0);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &nope), 0);
    mt_objc_disconnect(c);
}

struct waiter_arg {
    mt_object_id id;
    int ready[2];
};

/* A child that waits (GET with a timeout) for an object still unsealed. */
static int late_reader(void *arg)
{
    struct waiter_arg *w = arg;
    struct mt_objc *c;
    struct mt_objc_buf b;
    char ch = 'w';
    int rc;

    if (mt_objc_connect(sp.sock, NULL, &c) < 0)
        return 10;
    if (write(w->ready[1], &ch, 1) != 1)
        return 11;
    rc = mt_objc_get(c, &w->id, 10000, &b);
    if (rc == 0)
        rc = memcmp(b.data, "late", 4) == 0 ? 0 : 12;
    else
        rc = 13;
    mt_objc_disconnect(c);
    return rc;
}

static bool one_waiting(void *arg)
{
    struct mt_server_stats s;

    return mt_objc_server_stats(arg, &s) == 0 && s.waiting == 1;
}

static void test_get_waits_for_seal(void)
{
    struct mt_objc *c = conn();
    struct waiter_arg w = {.id = oid(4, 2)};
    struct mt_objc_buf b;
    pid_t pid;
    char ch;

    CU_ASSERT_FATAL(pipe(w.ready) == 0);
    CU_ASSERT_EQUAL_FATAL(mt_objc_create(c, &w.id, 4, 0, 0, NULL, &b), 0);
    pid = child_start(late_reader, &w);
    CU_ASSERT_EQUAL(read(w.ready[0], &ch, 1), 1);
    /* Seal only once the child's GET is parked in the store. */
    CU_ASSERT(wait_until(one_waiting, c, 5000));
    memcpy(b.data, "late", 4);
    CU_ASSERT_EQUAL(mt_objc_seal(c, &w.id), 0);
    CU_ASSERT_EQUAL(child_wait(pid, 10000), 0);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &w.id), 0);
    close(w.ready[0]);
    close(w.ready[1]);
    mt_objc_disconnect(c);
}

/* ---- concurrent clients ---- */

enum { NPROC = 4, NOBJ = 60 };

static uint64_t obj_size(int i)
{
    static const uint64_t sizes[] = {0, 1, 100, 4096, 70000, 200000};

    return sizes[i % 6];
}

static int worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    struct mt_objc *c;
    uint8_t *buf = malloc(200000);
    int bad = 0;

    if (!buf || mt_objc_connect(sp.sock, NULL, &c) < 0)
        return 20;
    for (int i = 0; i < NOBJ; i++) {
        mt_object_id id = oid(100 + (uint64_t)me, (uint64_t)i);

        fill(buf, obj_size(i), (uint64_t)(me * 1000 + i));
        if (mt_objc_put(c, &id, buf, obj_size(i), NULL, 0, 0, NULL) < 0)
            bad++;
    }
    /* Read everybody's objects, waiting for those not put yet. */
    for (int p = 0; p < NPROC; p++) {
        for (int i = 0; i < NOBJ; i++) {
            mt_object_id id = oid(100 + (uint64_t)p, (uint64_t)i);
            struct mt_objc_buf b;

            if (mt_objc_get(c, &id, 10000, &b) < 0) {
                bad++;
                continue;
            }
            if (b.info.data_size != obj_size(i) ||
                !check(b.data, obj_size(i), (uint64_t)(p * 1000 + i)))
                bad++;
            mt_objc_release(c, &id);
        }
    }
    mt_objc_disconnect(c);
    free(buf);
    return bad ? 21 : 0;
}

static void test_concurrent(void)
{
    pid_t pids[NPROC];
    struct mt_objc *c;
    struct mt_store_stats s;

    for (int i = 0; i < NPROC; i++)
        pids[i] = child_start(worker, (void *)(intptr_t)i);
    for (int i = 0; i < NPROC; i++)
        CU_ASSERT_EQUAL(child_wait(pids[i], 60000), 0);
    c = conn();
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT_EQUAL(s.num_pinned, 0);
    CU_ASSERT_EQUAL(s.num_unsealed, 0);
    CU_ASSERT_EQUAL(s.num_sealed, NPROC * NOBJ);
    for (int p = 0; p < NPROC; p++)
        for (int i = 0; i < NOBJ; i++) {
            mt_object_id id = oid(100 + (uint64_t)p, (uint64_t)i);

            CU_ASSERT_EQUAL(mt_objc_delete(c, &id), 0);
        }
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT_EQUAL(s.used, s.reserved);
    mt_objc_disconnect(c);
}

/* ---- killed clients ---- */

struct victim {
    int ready[2]; /* child -> parent: holding now */
    bool pin;     /* pin an existing object instead of creating one */
};

static int holder(void *arg)
{
    struct victim *v = arg;
    struct mt_objc *c;
    struct mt_objc_buf b;
    mt_object_id id = oid(5, v->pin ? 1 : 2);
    char ch = 'r';

    if (mt_objc_connect(sp.sock, NULL, &c) < 0)
        return 30;
    if (v->pin ? mt_objc_get(c, &id, 0, &b)
               : mt_objc_create(c, &id, 2 * MIB, 0, 0, NULL, &b))
        return 31;
    if (write(v->ready[1], &ch, 1) != 1)
        return 32;
    pause(); /* until killed */
    return 33;
}

struct stats_want {
    struct mt_objc *c;
    uint64_t pinned;
    uint64_t unsealed;
};

static bool stats_match(void *arg)
{
    struct stats_want *w = arg;
    struct mt_store_stats s;

    return mt_objc_stats(w->c, &s) == 0 && s.num_pinned == w->pinned &&
           s.num_unsealed == w->unsealed;
}

static void kill_holder(bool pin)
{
    struct victim v = {.pin = pin};
    struct stats_want w = {.c = conn()};
    char ch;
    pid_t pid;

    CU_ASSERT_FATAL(pipe(v.ready) == 0);
    pid = child_start(holder, &v);
    CU_ASSERT_EQUAL(read(v.ready[0], &ch, 1), 1);
    w.pinned = pin ? 1 : 0;
    w.unsealed = pin ? 0 : 1;
    CU_ASSERT(stats_match(&w));
    kill(pid, SIGKILL);
    CU_ASSERT_EQUAL(child_wait(pid, 10000), 128 + SIGKILL);
    w.pinned = w.unsealed = 0;
    CU_ASSERT(wait_until(stats_match, &w, 5000));
    close(v.ready[0]);
    close(v.ready[1]);
    mt_objc_disconnect(w.c);
}

static void test_killed_creator(void)
{
    struct mt_objc *c = conn();
    mt_object_id id = oid(5, 2);
    struct mt_store_stats s;

    kill_holder(false);
    CU_ASSERT_EQUAL(mt_objc_contains(c, &id), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT_EQUAL(s.used, s.reserved);
    mt_objc_disconnect(c);
}

static void test_killed_reader(void)
{
    struct mt_objc *c = conn();
    mt_object_id id = oid(5, 1);

    CU_ASSERT_EQUAL(mt_objc_put(c, &id, "pinned", 6, NULL, 0, 0, NULL), 0);
    kill_holder(true);
    /* Unpinned again: delete frees it at once. */
    CU_ASSERT_EQUAL(mt_objc_delete(c, &id), 0);
    CU_ASSERT_EQUAL(mt_objc_contains(c, &id), -MT_ENOENT);
    mt_objc_disconnect(c);
}

static void test_eager_release(void)
{
    struct mt_objc_opts o = {.eager_release = true};
    struct mt_objc *c, *d = conn();
    mt_object_id id = oid(6, 1);
    struct mt_objc_buf b;
    struct stats_want w = {.c = d};

    CU_ASSERT_FATAL(mt_objc_connect(sp.sock, &o, &c) == 0);
    CU_ASSERT_EQUAL(mt_objc_put(c, &id, "e", 1, NULL, 0, 0, NULL), 0);
    CU_ASSERT_EQUAL(mt_objc_get(c, &id, 0, &b), 0);
    CU_ASSERT_EQUAL(mt_objc_get(c, &id, 0, &b), 0); /* local */
    CU_ASSERT_EQUAL(mt_objc_release(c, &id), 0);
    w.pinned = 1;
    CU_ASSERT(stats_match(&w));
    CU_ASSERT_EQUAL(mt_objc_release(c, &id), 0);
    w.pinned = 0;
    CU_ASSERT(wait_until(stats_match, &w, 5000));
    CU_ASSERT_EQUAL(mt_objc_delete(c, &id), 0);
    mt_objc_disconnect(c);
    mt_objc_disconnect(d);
}

static void test_put_many(void)
{
    enum { N = 300 };
    struct mt_objc *c = conn();
    static struct mt_objc_put_req reqs[N];
    static int rcs[N];
    static uint8_t big[100000];
    char small[32];

    memset(small, 's', sizeof(small));
    fill(big, sizeof(big), 9);
    for (int i = 0; i < N; i++) {
        reqs[i].id = oid(7, (uint64_t)i);
        reqs[i].data = i == 17 ? (const void *)big : small;
        reqs[i].size = i == 17 ? sizeof(big) : sizeof(small);
        rcs[i] = 1;
    }
    reqs[5].id = reqs[4].id; /* duplicate: EEXIST for the second */
    reqs[9].flags = 0x80;    /* bad flags: EINVAL */
    CU_ASSERT_EQUAL_FATAL(mt_objc_put_many(c, reqs, N, rcs), 0);
    for (int i = 0; i < N; i++) {
        int want = i == 5 ? -MT_EEXIST : i == 9 ? -MT_EINVAL : 0;

        CU_ASSERT_EQUAL(rcs[i], want);
    }
    for (int i = 0; i < N; i++) {
        struct mt_objc_buf b;

        if (i == 5 || i == 9)
            continue;
        CU_ASSERT_EQUAL_FATAL(mt_objc_get(c, &reqs[i].id, 0, &b), 0);
        CU_ASSERT_EQUAL(b.info.data_size, reqs[i].size);
        CU_ASSERT_EQUAL(memcmp(b.data, reqs[i].data, reqs[i].size), 0);
        CU_ASSERT_EQUAL(mt_objc_release(c, &reqs[i].id), 0);
        CU_ASSERT_EQUAL(mt_objc_delete(c, &reqs[i].id), 0);
    }
    /* The client is still in step with the store. */
    CU_ASSERT_EQUAL(mt_objc_contains(c, &reqs[0].id), -MT_ENOENT);
    mt_objc_disconnect(c);
}

static void test_get_many(void)
{
    struct mt_objc *c = conn();
    mt_object_id ids[6] = {oid(9, 99), oid(9, 1), oid(9, 2), oid(9, 1),
                           oid(9, 3), oid(9, 98)};
    struct mt_objc_buf outs[6], b;
    int rcs[6];
    struct mt_store_stats s;

    for (uint64_t i = 1; i <= 3; i++) {
        mt_object_id id = oid(9, i);
        char v = (char)('0' + i);

        CU_ASSERT_EQUAL(mt_objc_put(c, &id, &v, 1, NULL, 0, 0, NULL), 0);
    }
    /* 3 is already held: served from the cache. */
    CU_ASSERT_EQUAL(mt_objc_get(c, &ids[4], 0, &b), 0);
    /* ids[0] and ids[5] are missing and wait 50 ms each, so their
     * replies come after the others' (out of order). */
    CU_ASSERT_EQUAL_FATAL(mt_objc_get_many(c, ids, 6, 50, outs, rcs), 0);
    CU_ASSERT_EQUAL(rcs[0], -MT_ETIMEDOUT);
    CU_ASSERT_EQUAL(rcs[5], -MT_ETIMEDOUT);
    for (int i = 1; i <= 4; i++) {
        CU_ASSERT_EQUAL(rcs[i], 0);
        CU_ASSERT_EQUAL(outs[i].data[0], '0' + (int)ids[i].b[8]);
    }
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT_EQUAL(s.num_pinned, 3); /* one store pin per id */
    for (int i = 1; i <= 4; i++)
        CU_ASSERT_EQUAL(mt_objc_release(c, &ids[i]), 0);
    CU_ASSERT_EQUAL(mt_objc_release(c, &ids[4]), 0);
    CU_ASSERT_EQUAL(mt_objc_release(c, &ids[1]), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_objc_flush(c), 0);
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT_EQUAL(s.num_pinned, 0);
    for (int i = 1; i <= 4; i++)
        if (i != 3)
            CU_ASSERT_EQUAL(mt_objc_delete(c, &ids[i]), 0);
    mt_objc_disconnect(c);
}

/* A second store with a spill dir: spill on pressure, restore on get. */
static void test_spill_restore_over_socket(void)
{
    struct store_proc sp2;
    struct mt_objc *c;
    struct mt_store_stats s;
    static uint8_t buf[3 * MIB];

    CU_ASSERT_FATAL(store_proc_start(&sp2, 8 * MIB, true) == 0);
    CU_ASSERT_FATAL(mt_objc_connect(sp2.sock, NULL, &c) == 0);
    for (uint64_t i = 0; i < 6; i++) {
        mt_object_id id = oid(8, i);

        fill(buf, sizeof(buf), i);
        CU_ASSERT_EQUAL(mt_objc_put(c, &id, buf, sizeof(buf), NULL, 0, 0,
                                    NULL),
                        0);
    }
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT(s.spills >= 4);
    CU_ASSERT_EQUAL(s.num_spilled + s.num_sealed, 6);
    CU_ASSERT_EQUAL(s.evictions, 0);
    for (uint64_t i = 0; i < 6; i++) {
        mt_object_id id = oid(8, i);
        struct mt_objc_buf b;

        CU_ASSERT_EQUAL_FATAL(mt_objc_get(c, &id, 0, &b), 0);
        CU_ASSERT(check(b.data, sizeof(buf), i));
        CU_ASSERT_EQUAL(mt_objc_release(c, &id), 0);
        CU_ASSERT_EQUAL(mt_objc_flush(c), 0);
    }
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT(s.restores >= 4);
    mt_objc_disconnect(c);
    CU_ASSERT_EQUAL(store_proc_stop(&sp2), 0);
}

/* Several threads share one client (its mutex serializes them). */
static void *thread_body(void *arg)
{
    struct mt_objc *c = arg;
    static int next_thread;
    uint64_t me = 1 + (uint64_t)__atomic_fetch_add(&next_thread, 1,
                                                   __ATOMIC_RELAXED);
    intptr_t bad = 0;

    for (uint64_t i = 0; i < 300; i++) {
        mt_object_id id = oid(10 + me, i), shared = oid(10, 0);
        struct mt_objc_buf b, s;
        uint8_t v = (uint8_t)i;

        bad += mt_objc_put(c, &id, &v, 1, NULL, 0, 0, NULL) != 0;
        bad += mt_objc_get(c, &id, 0, &b) != 0 || b.data[0] != v;
        bad += mt_objc_get(c, &shared, 1000, &s) != 0 || s.data[0] != 42;
        bad += mt_objc_release(c, &shared) != 0;
        bad += mt_objc_release(c, &id) != 0;
        bad += mt_objc_delete(c, &id) != 0;
    }
    return (void *)bad;
}

static void test_threads(void)
{
    struct mt_objc *c = conn();
    mt_object_id shared = oid(10, 0);
    uint8_t v = 42;
    pthread_t t[4];

    CU_ASSERT_EQUAL(mt_objc_put(c, &shared, &v, 1, NULL, 0, 0, NULL), 0);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_FATAL(pthread_create(&t[i], NULL, thread_body, c) == 0);
    for (int i = 0; i < 4; i++) {
        void *bad;

        pthread_join(t[i], &bad);
        CU_ASSERT_EQUAL((intptr_t)bad, 0);
    }
    CU_ASSERT_EQUAL(mt_objc_flush(c), 0);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &shared), 0);
    mt_objc_disconnect(c);
}

/* The store going away turns every call into -MT_ECLOSED, never a hang. */
static void test_store_gone(void)
{
    struct store_proc sp2;
    struct mt_objc *c;
    mt_object_id id = oid(11, 1);
    struct mt_objc_buf b;

    CU_ASSERT_FATAL(store_proc_start(&sp2, 1 * MIB, false) == 0);
    CU_ASSERT_FATAL(mt_objc_connect(sp2.sock, NULL, &c) == 0);
    CU_ASSERT_EQUAL(mt_objc_put(c, &id, "g", 1, NULL, 0, 0, NULL), 0);
    CU_ASSERT_EQUAL(mt_objc_get(c, &id, 0, &b), 0);
    CU_ASSERT_EQUAL(store_proc_stop(&sp2), 0);
    /* Our mapping stays valid after the store exits. */
    CU_ASSERT_EQUAL(b.data[0], 'g');
    CU_ASSERT_EQUAL(mt_objc_get(c, &id, 0, &b), 0); /* cached: local */
    CU_ASSERT_EQUAL(mt_objc_contains(c, &id), -MT_ECLOSED);
    CU_ASSERT_EQUAL(mt_objc_put(c, &id, "g", 1, NULL, 0, 0, NULL),
                    -MT_ECLOSED);
    id = oid(11, 2);
    CU_ASSERT_EQUAL(mt_objc_get(c, &id, 1000, &b), -MT_ECLOSED);
    mt_objc_disconnect(c);
}

/* Deferral is bounded in bytes: big objects are released at once. */
static void test_defer_bytes(void)
{
    struct mt_objc_opts o = {.defer_bytes = 4096};
    struct mt_objc *c;
    struct stats_want w;
    mt_object_id small = oid(12, 1), big = oid(12, 2), mid = oid(12, 3);
    static uint8_t buf[8192];
    struct mt_objc_buf b;

    CU_ASSERT_FATAL(mt_objc_connect(sp.sock, &o, &c) == 0);
    w.c = c;
    w.unsealed = 0;
    CU_ASSERT_EQUAL(mt_objc_put(c, &small, buf, 100, NULL, 0, 0, NULL), 0);
    CU_ASSERT_EQUAL(mt_objc_put(c, &big, buf, 8192, NULL, 0, 0, NULL), 0);
    CU_ASSERT_EQUAL(mt_objc_put(c, &mid, buf, 4000, NULL, 0, 0, NULL), 0);
    CU_ASSERT_EQUAL(mt_objc_get(c, &small, 0, &b), 0);
    CU_ASSERT_EQUAL(mt_objc_get(c, &big, 0, &b), 0);
    CU_ASSERT_EQUAL(mt_objc_release(c, &small), 0); /* deferred */
    CU_ASSERT_EQUAL(mt_objc_release(c, &big), 0);   /* at once */
    w.pinned = 1;
    CU_ASSERT(stats_match(&w));
    /* 100 + 4000 bytes deferred exceeds 4096: the list is flushed. */
    CU_ASSERT_EQUAL(mt_objc_get(c, &mid, 0, &b), 0);
    CU_ASSERT_EQUAL(mt_objc_release(c, &mid), 0);
    w.pinned = 0;
    CU_ASSERT(stats_match(&w));
    CU_ASSERT_EQUAL(mt_objc_delete(c, &small), 0);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &big), 0);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &mid), 0);
    mt_objc_disconnect(c);
}

/*
 * An idle client's cached (deferred) pin does not hold memory hostage: the
 * store reclaims it through the release board when space runs out.
 */
static void test_reclaim_idle_pin(void)
{
    struct mt_objc *a = conn(), *b = conn();
    mt_object_id x = oid(13, 1), big = oid(13, 2);
    static uint8_t buf[8 * MIB];
    struct mt_objc_buf ob;
    struct mt_store_stats s;

    fill(buf, sizeof(buf), 13);
    CU_ASSERT_EQUAL(mt_objc_put(a, &x, buf, sizeof(buf), NULL, 0,
                                MT_OBJ_EVICTABLE, NULL),
                    0);
    CU_ASSERT_EQUAL_FATAL(mt_objc_get(a, &x, 0, &ob), 0);
    CU_ASSERT_EQUAL(mt_objc_release(a, &x), 0); /* deferred: still pinned */
    CU_ASSERT_EQUAL(mt_objc_stats(b, &s), 0);
    CU_ASSERT_EQUAL(s.num_pinned, 1);
    /* b needs x's space; a is idle. */
    CU_ASSERT_EQUAL(mt_objc_create(b, &big, 12 * MIB, 0, 0, NULL, &ob), 0);
    CU_ASSERT_EQUAL(mt_objc_stats(b, &s), 0);
    CU_ASSERT_EQUAL(s.num_pinned, 0);
    CU_ASSERT_EQUAL(mt_objc_contains(b, &x), -MT_ENOENT); /* evicted */
    /* a notices the reclaimed pin: no stale cache hit. */
    CU_ASSERT_EQUAL(mt_objc_get(a, &x, 0, &ob), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_objc_flush(a), 0);
    CU_ASSERT_EQUAL(mt_objc_abort(b, &big), 0);
    CU_ASSERT_EQUAL(mt_objc_stats(b, &s), 0);
    CU_ASSERT_EQUAL(s.num_pinned, 0);
    CU_ASSERT_EQUAL(s.used, s.reserved);
    mt_objc_disconnect(a);
    mt_objc_disconnect(b);
}

/* A get of a deferred object is local: the store sees no request. */
static void test_cached_get_is_local(void)
{
    struct mt_objc *c = conn();
    mt_object_id x = oid(13, 3);
    struct mt_server_stats before, after;
    struct mt_objc_buf ob;

    CU_ASSERT_EQUAL(mt_objc_put(c, &x, "c", 1, NULL, 0, 0, NULL), 0);
    CU_ASSERT_EQUAL(mt_objc_get(c, &x, 0, &ob), 0);
    CU_ASSERT_EQUAL(mt_objc_release(c, &x), 0);
    CU_ASSERT_EQUAL(mt_objc_server_stats(c, &before), 0);
    for (int i = 0; i < 1000; i++) {
        CU_ASSERT_EQUAL(mt_objc_get(c, &x, 0, &ob), 0);
        CU_ASSERT_EQUAL(ob.data[0], 'c');
        CU_ASSERT_EQUAL(mt_objc_release(c, &x), 0);
    }
    CU_ASSERT_EQUAL(mt_objc_server_stats(c, &after), 0);
    CU_ASSERT_EQUAL(after.requests - before.requests, 1); /* the stats call */
    CU_ASSERT_EQUAL(mt_objc_delete(c, &x), 0);
    mt_objc_disconnect(c);
}

/* A reader cycling get/release races a writer forcing reclaims. */
static int cycling_reader(void *arg)
{
    struct mt_objc *c;
    mt_object_id x = oid(13, 4);
    static uint8_t buf[1 * MIB];
    int bad = 0;

    (void)arg;
    if (mt_objc_connect(sp.sock, NULL, &c) < 0)
        return 40;
    fill(buf, sizeof(buf), 4);
    for (int i = 0; i < 3000; i++) {
        struct mt_objc_buf b;
        int rc = mt_objc_get(c, &x, 0, &b);

        if (rc == -MT_ENOENT) {
            rc = mt_objc_put(c, &x, buf, sizeof(buf), NULL, 0,
                             MT_OBJ_EVICTABLE, NULL);
            bad += rc != 0 && rc != -MT_EEXIST && rc != -MT_ENOSPC;
            continue;
        }
        if (rc < 0) {
            bad++;
            continue;
        }
        bad += b.info.data_size != sizeof(buf) ||
               !check(b.data, i % 256 ? 4096 : sizeof(buf), 4);
        mt_objc_release(c, &x);
    }
    mt_objc_disconnect(c);
    return bad ? 41 : 0;
}

static void test_reclaim_race(void)
{
    struct mt_objc *c = conn();
    mt_object_id big = oid(13, 5);
    struct stats_want w = {.c = c};
    struct mt_objc_buf b;
    pid_t pid = child_start(cycling_reader, NULL);
    int made = 0;

    for (int i = 0; i < 300; i++) {
        if (mt_objc_create(c, &big, 15 * MIB, 0, 0, NULL, &b) == 0) {
            made++;
            CU_ASSERT_EQUAL(mt_objc_abort(c, &big), 0);
        }
    }
    CU_ASSERT_EQUAL(child_wait(pid, 60000), 0);
    CU_ASSERT(made > 0);
    CU_ASSERT(wait_until(stats_match, &w, 5000));
    big = oid(13, 4);
    mt_objc_delete(c, &big);
    mt_objc_disconnect(c);
}

static void test_bad_socket_path(void)
{
    struct mt_objc *c;

    CU_ASSERT(mt_objc_connect("/nonexistent/sock", NULL, &c) < 0);
}

CU_TestInfo mt_test_client[] = {
    {"put_get", test_put_get},
    {"put_inline_tensor", test_put_inline_tensor},
    {"delete_while_held", test_delete_while_held},
    {"create_seal_large_tensor", test_create_seal_large_tensor},
    {"create_populates", test_create_populates},
    {"errors", test_errors},
    {"get_timeout", test_get_timeout},
    {"get_waits_for_seal", test_get_waits_for_seal},
    {"concurrent", test_concurrent},
    {"killed_creator", test_killed_creator},
    {"killed_reader", test_killed_reader},
    {"eager_release", test_eager_release},
    {"put_many", test_put_many},
    {"get_many", test_get_many},
    {"spill_restore_over_socket", test_spill_restore_over_socket},
    {"threads", test_threads},
    {"store_gone", test_store_gone},
    {"defer_bytes", test_defer_bytes},
    {"reclaim_idle_pin", test_reclaim_idle_pin},
    {"cached_get_is_local", test_cached_get_is_local},
    {"reclaim_race", test_reclaim_race},
    {"bad_socket_path", test_bad_socket_path},
    CU_TEST_INFO_NULL,
};

int mt_test_client_init(void)
{
    return suite_init();
}

int mt_test_client_cleanup(void)
{
    return suite_cleanup();
}
