/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_storage_file.c -- the file storage backend (head/storage_file.c):
 * writes become durable a loop turn later, in order, in one batch; a
 * reopened file gives back the rows (dels included); a torn last write is
 * cut away and a corrupt middle refused; compaction keeps exactly the live
 * rows; two heads cannot share a file; the stats count writes and batches;
 * a write the disk refuses (a file size limit stands in for a full disk)
 * waits, is retried and lands whole.
 * Each test works in its own mkdtemp(3) folder and removes it.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "common/error.h"
#include "head/storage.h"
#include "tests/unit/unit.h"

#define MAX_DONE 64

/* A scratch folder and the spec of a state file in it. */
struct scratch {
    char dir[64];
    char spec[160];     /* file://<dir>/sub/state */
    char path[96];      /* <dir>/sub/state */
    char log[128];      /* <dir>/sub/state.log */
    uv_loop_t loop;
};

/* The order done()s ran in, and their errors. */
struct order {
    int n;
    int tags[MAX_DONE];
    int errs[MAX_DONE];
};

struct tag {
    struct order *o;
    int tag;
};

static void scratch_init(struct scratch *s)
{
    snprintf(s->dir, sizeof(s->dir), "/tmp/mt-test-storage-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(s->dir));
    snprintf(s->path, sizeof(s->path), "%s/sub/state", s->dir);
    snprintf(s->log, sizeof(s->log), "%s.log", s->path);
    snprintf(s->spec, sizeof(s->spec), "file://%s", s->path);
    CU_ASSERT_EQUAL_FATAL(uv_loop_init(&s->loop), 0);
}

static void scratch_release(struct scratch *s)
{
    char p[160];

    uv_run(&s->loop, UV_RUN_DEFAULT);
    CU_ASSERT_EQUAL(uv_loop_close(&s->loop), 0);
    unlink(s->path);
    unlink(s->log);
    snprintf(p, sizeof(p), "%s.tmp", s->path);
    unlink(p);
    snprintf(p, sizeof(p), "%s/sub", s->dir);
    rmdir(p);
    CU_ASSERT_EQUAL(rmdir(s->dir), 0);
}

static struct mt_storage *open_ok(struct scratch *s)
{
    struct mt_storage *st = NULL;

    CU_ASSERT_EQUAL_FATAL(mt_storage_open(&s->loop, s->spec, &st), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(st->ops->name, "file");
    return st;
}

/* Close and let the loop free what the close left. */
static void close_run(struct scratch *s, struct mt_storage *st)
{
    mt_storage_close(st);
    uv_run(&s->loop, UV_RUN_DEFAULT);
}

static void on_tag(void *arg, int err)
{
    struct tag *t = arg;

    CU_ASSERT_FATAL(t->o->n < MAX_DONE);
    t->o->errs[t->o->n] = err;
    t->o->tags[t->o->n++] = t->tag;
}

static void put_s(struct mt_storage *st, const char *table, const char *key,
                  const char *val)
{
    CU_ASSERT_EQUAL(mt_storage_put(st, table, key, val, strlen(val), NULL,
                                   NULL), 0);
}

/* The rows of one table as "k=v;" in key order of arrival. */
struct dump {
    char text[512];
    int n;
};

static void on_dump_row(void *arg, const char *key, const void *val,
                        size_t len)
{
    struct dump *d = arg;
    size_t at = strlen(d->text);

    snprintf(d->text + at, sizeof(d->text) - at, "%s=%.*s;", key, (int)len,
             (const char *)val);
    d->n++;
}

static void on_dump_done(void *arg, int err)
{
    CU_ASSERT_EQUAL(err, 0);
    (void)arg;
}

static int count_rows(struct mt_storage *st, const char *table,
                      struct dump *d)
{
    memset(d, 0, sizeof(*d));
    CU_ASSERT_EQUAL(mt_storage_scan(st, table, on_dump_row, on_dump_done, d),
                    0);
    return d->n;
}

/* Find key's value in a dump ("" when absent). */
static int has(const struct dump *d, const char *kv)
{
    return strstr(d->text, kv) != NULL;
}

static off_t file_size(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* ---- tests --------------------------------------------------------------- */

/* done()s run a loop turn later, in order, after one batch. */
static void test_round_trip(void)
{
    struct scratch s;
    struct mt_storage *st;
    struct order o = {0};
    struct tag t[4] = {{&o, 1}, {&o, 2}, {&o, 3}, {&o, 4}};
    struct mt_storage_stats ss;
    struct dump d;

    scratch_init(&s);
    st = open_ok(&s);
    CU_ASSERT_EQUAL(mt_storage_put(st, "nodes", "a", "1", 1, on_tag, &t[0]),
                    0);
    CU_ASSERT_EQUAL(mt_storage_put(st, "nodes", "b", "2", 1, on_tag, &t[1]),
                    0);
    CU_ASSERT_EQUAL(mt_storage_del(st, "nodes", "zz", on_tag, &t[2]), 0);
    CU_ASSERT_EQUAL(mt_storage_put(st, "jobs", "a", "j", 1, on_tag, &t[3]),
                    0);
    CU_ASSERT_EQUAL(o.n, 0); /* not before the batch is durable */
    /* the rows are there at once */
    CU_ASSERT_EQUAL(count_rows(st, "nodes", &d), 2);
    uv_run(&s.loop, UV_RUN_DEFAULT);
    CU_ASSERT_EQUAL_FATAL(o.n, 4);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(o.tags[i], i + 1);
    CU_ASSERT_EQUAL(o.errs[0], 0);
    CU_ASSERT_EQUAL(o.errs[2], -MT_ENOENT);
    mt_storage_stats(st, &ss);
    CU_ASSERT_STRING_EQUAL(ss.backend, "file");
    CU_ASSERT_STRING_EQUAL(ss.spec, s.spec);
    CU_ASSERT(ss.healthy);
    CU_ASSERT_EQUAL(ss.writes, 3);
    CU_ASSERT_EQUAL(ss.batches, 1);
    CU_ASSERT_EQUAL(ss.buffered, 0);
    close_run(&s, st);

    st = open_ok(&s);
    CU_ASSERT_EQUAL(count_rows(st, "nodes", &d), 2);
    CU_ASSERT(has(&d, "a=1;") && has(&d, "b=2;"));
    CU_ASSERT_EQUAL(count_rows(st, "jobs", &d), 1);
    close_run(&s, st);
    scratch_release(&s);
}

/* Overwrites and dels survive a reopen; close writes what is pending. */
static void test_del_persists(void)
{
    struct scratch s;
    struct mt_storage *st;
    struct dump d;

    scratch_init(&s);
    st = open_ok(&s);
    put_s(st, "t", "a", "1");
    put_s(st, "t", "b", "2");
    put_s(st, "t", "c", "3");
    uv_run(&s.loop, UV_RUN_DEFAULT);
    CU_ASSERT_EQUAL(mt_storage_del(st, "t", "a", NULL, NULL), 0);
    put_s(st, "t", "b", "22");
    close_run(&s, st); /* never ran the loop: close flushes */

    st = open_ok(&s);
    CU_ASSERT_EQUAL(count_rows(st, "t", &d), 2);
    CU_ASSERT(has(&d, "b=22;") && has(&d, "c=3;") && !has(&d, "a="));
    close_run(&s, st);
    scratch_release(&s);
}

/* Append raw bytes to a file (made if absent). */
static void append(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);

    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL((size_t)write(fd, p, n), n);
    close(fd);
}

/* A crash mid-write: the torn frame is cut away, the rest loads. */
static void test_torn_tail(void)
{
    static const unsigned char partial[] = {100, 0, 0, 0, 1, 2, 3, 4, 1, 0};
    static const unsigned char bad_crc[] = {2, 0, 0, 0, 9, 9, 9, 9, 1, 0};
    struct scratch s;
    struct mt_storage *st;
    struct dump d;
    off_t good;

    scratch_init(&s);
    st = open_ok(&s);
    put_s(st, "t", "a", "1");
    close_run(&s, st);
    good = file_size(s.log);
    append(s.log, partial, sizeof(partial)); /* runs past the end */
    st = open_ok(&s);
    CU_ASSERT_EQUAL(file_size(s.log), good);
    CU_ASSERT_EQUAL(count_rows(st, "t", &d), 1);
    put_s(st, "t", "b", "2");
    close_run(&s, st);

    good = file_size(s.log);
    append(s.log, bad_crc, sizeof(bad_crc)); /* last frame, wrong CRC */
    st = open_ok(&s);
    CU_ASSERT_EQUAL(file_size(s.log), good);
    CU_ASSERT_EQUAL(count_rows(st, "t", &d), 2);
    close_run(&s, st);
    scratch_release(&s);
}

/* Flip one byte of the first of two frames: the open refuses. */
static void test_corrupt_middle(void)
{
    struct scratch s;
    struct mt_storage *st = NULL;
    unsigned char c;
    int fd;

    scratch_init(&s);
    st = open_ok(&s);
    put_s(st, "t", "a", "first");
    uv_run(&s.loop, UV_RUN_DEFAULT);
    put_s(st, "t", "b", "second");
    close_run(&s, st);
    fd = open(s.log, O_RDWR);
    CU_ASSERT_FATAL(fd >= 0);
    /* header 16, frame header 8, op header 13, "t" "a": the value */
    CU_ASSERT_EQUAL(pread(fd, &c, 1, 16 + 8 + 13 + 2), 1);
    CU_ASSERT_EQUAL(c, 'f');
    c = 'F';
    CU_ASSERT_EQUAL(pwrite(fd, &c, 1, 16 + 8 + 13 + 2), 1);
    close(fd);
    st = NULL;
    CU_ASSERT_EQUAL(mt_storage_open(&s.loop, s.spec, &st), -MT_EIO);
    CU_ASSERT_PTR_NULL(st);
    scratch_release(&s);
}

/* Rewrites past 4 MiB of log: a snapshot, a short log, the live rows. */
static void test_compaction(void)
{
    static char big[64 * 1024];
    struct scratch s;
    struct mt_storage *st;
    struct mt_storage_stats ss;
    char key[16];
    struct dump d;

    memset(big, 'x', sizeof(big));
    scratch_init(&s);
    st = open_ok(&s);
    for (int i = 0; i < 100; i++) { /* 6.4 MiB of writes to 4 keys */
        snprintf(key, sizeof(key), "k%d", i % 4);
        CU_ASSERT_EQUAL(mt_storage_put(st, "big", key, big, sizeof(big),
                                       NULL, NULL), 0);
        if (i % 10 == 9)
            uv_run(&s.loop, UV_RUN_DEFAULT);
    }
    put_s(st, "t", "gone", "1");
    put_s(st, "t", "kept", "2");
    uv_run(&s.loop, UV_RUN_DEFAULT);
    CU_ASSERT_EQUAL(mt_storage_del(st, "t", "gone", NULL, NULL), 0);
    uv_run(&s.loop, UV_RUN_DEFAULT);
    CU_ASSERT(file_size(s.path) > 4 * (off_t)sizeof(big)); /* a snapshot */
    CU_ASSERT(file_size(s.log) < 4 << 20);
    mt_storage_stats(st, &ss);
    CU_ASSERT_EQUAL(ss.writes, 103);
    close_run(&s, st);

    st = open_ok(&s);
    CU_ASSERT_EQUAL(count_rows(st, "big", &d), 4);
    CU_ASSERT_EQUAL(count_rows(st, "t", &d), 1);
    CU_ASSERT_STRING_EQUAL(d.text, "kept=2;");
    close_run(&s, st);
    scratch_release(&s);
}

/* One head per file; bad specs and foreign files are refused. */
static void test_refusals(void)
{
    struct scratch s;
    struct mt_storage *st, *other = NULL;

    scratch_init(&s);
    st = open_ok(&s);
    CU_ASSERT_EQUAL(mt_storage_open(&s.loop, s.spec, &other), -MT_ESTATE);
    CU_ASSERT_PTR_NULL(other);
    CU_ASSERT_EQUAL(mt_storage_open(&s.loop, "file://", &other), -MT_EINVAL);
    close_run(&s, st);
    append(s.path, "not a snapshot, just text", 25);
    CU_ASSERT_EQUAL(mt_storage_open(&s.loop, s.spec, &other), -MT_EVERSION);
    scratch_release(&s);
}

/* The disk refuses a batch: the head serves from memory, says so, and
 * writes it again (at the same offset) once the disk takes it. */
static void test_disk_error_retried(void)
{
    static char val[200];
    struct scratch s;
    struct mt_storage *st;
    struct mt_storage_stats ss;
    struct order o = {0};
    struct tag t = {&o, 7};
    struct rlimit old, lim;
    struct dump d;

    memset(val, 'v', sizeof(val));
    scratch_init(&s);
    st = open_ok(&s);
    put_s(st, "t", "a", "1");
    uv_run(&s.loop, UV_RUN_DEFAULT);
    CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = (rlim_t)file_size(s.log) + 10; /* a part gets written */
    CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_FSIZE, &lim), 0);
    CU_ASSERT_EQUAL(mt_storage_put(st, "t", "b", val, sizeof(val), on_tag,
                                   &t), 0);
    uv_run(&s.loop, UV_RUN_NOWAIT);
    CU_ASSERT_EQUAL(o.n, 0);
    mt_storage_stats(st, &ss);
    CU_ASSERT(!ss.healthy);
    CU_ASSERT_EQUAL(ss.buffered, 1);
    CU_ASSERT(ss.down_since_ms > 0 && ss.last_error[0] != '\0');
    CU_ASSERT_EQUAL(count_rows(st, "t", &d), 2); /* served from memory */
    CU_ASSERT_EQUAL(setrlimit(RLIMIT_FSIZE, &old), 0);
    uv_run(&s.loop, UV_RUN_DEFAULT); /* the retry timer, 100 ms */
    signal(SIGXFSZ, SIG_DFL);
    CU_ASSERT_EQUAL_FATAL(o.n, 1);
    CU_ASSERT_EQUAL(o.errs[0], 0);
    mt_storage_stats(st, &ss);
    CU_ASSERT(ss.healthy);
    CU_ASSERT_EQUAL(ss.buffered, 0);
    CU_ASSERT_EQUAL(ss.down_since_ms, 0);
    close_run(&s, st);

    st = open_ok(&s); /* no torn frame: the retry overwrote the part */
    CU_ASSERT_EQUAL(count_rows(st, "t", &d), 2);
    close_run(&s, st);
    scratch_release(&s);
}

CU_TestInfo mt_test_storage_file[] = {
    {"round_trip", test_round_trip},
    {"del_persists", test_del_persists},
    {"torn_tail", test_torn_tail},
    {"corrupt_middle", test_corrupt_middle},
    {"compaction", test_compaction},
    {"refusals", test_refusals},
    {"disk_error_retried", test_disk_error_retried},
    CU_TEST_INFO_NULL,
};
