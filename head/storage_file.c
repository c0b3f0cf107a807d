/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage_file.c -- the file storage backend, `--storage file://PATH`: an
 * embedded append-only log with snapshots, what `manta start --head` uses
 * by default (docs/operations.md says why: no second process to supervise,
 * two files to back up).
 *
 * The rows live in this process (storage_rows.h), so scans never touch the
 * disk. PATH holds a snapshot of every row; PATH.log the changes made
 * after it. Both start with a 16-byte header, then frames:
 *
 *   OFFSET SIZE DESCRIPTION (all integers little-endian)
 *   0      8    magic: "MTSNAP01" (snapshot) or "MTSLOG01" (log)
 *   8      8    generation: a log applies to the snapshot of its generation
 *   16     ...  frames
 *
 *   frame: u32 body length, u32 CRC-32 (IEEE) of the body, the body: ops
 *   op:    u8 kind (1 put, 2 del, 3 end of snapshot), u32 table length,
 *          u32 key length, u32 value length, table, key, value
 *
 * DESIGN: put and del change the rows at once and append an op to the
 * pending batch; a uv_idle handle, armed only while something waits, turns
 * the batch into one frame with one pwrite(2) when the loop next passes
 * its idle phase, then runs each write's done() in order: the rows are
 * then in the kernel and survive the head dying (kill -9, a crash). The
 * fdatasync(2) that makes them survive the machine dying runs off the
 * loop, in libuv's thread pool, one at a time and at most one per
 * SYNC_EVERY_MS: the batches written meanwhile wait for the next. So a
 * power loss can cost the writes of the last SYNC_EVERY_MS and a sync, as
 * Redis' "appendfsync everysec" can cost a second; the head's loop never
 * waits for a disk. (Back-to-back syncs cost a busy head a third of its
 * task throughput on a VM disk: bench/RESULTS.md, "Issue 15: durability".)
 * A frame is all or nothing: a crash mid-write leaves a torn last frame,
 * which the next open cuts away with a warning. A bad frame followed by
 * more data is corruption, and the open refuses it.
 *
 * Compaction: once the log is larger than max(COMPACT_MIN, 2x the live
 * rows), every row goes to PATH.tmp under the next generation, fsync,
 * rename over PATH, fsync the folder, then the log restarts (truncated,
 * new header). A crash in between leaves a log of the older generation,
 * which the next open ignores: the snapshot already holds it.
 *
 * Disk trouble (ENOSPC, EIO): logged once, the head serves from memory;
 * the batch stays pending (bounded: MAX_BUFFERED writes, then the newest
 * are refused) and is written again at the same offset with a backoff
 * timer. The log is locked (flock) so two heads never share it.
 *
 * THREAD: the head's loop thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/storage.h"
#include "head/storage_rows.h"

#define SNAP_MAGIC "MTSNAP01"
#define LOG_MAGIC "MTSLOG01"
#define HDR_SIZE 16
#define FRAME_HDR 8
#define OP_HDR 13
#define MAX_FRAME (1u << 30)          /* a longer length is garbage */
#define FLUSH_BYTES (16u << 20)       /* a batch this large goes at once */
#define SNAP_FRAME_BYTES (1u << 20)
#define COMPACT_MIN ((uint64_t)4 << 20)
#define MAX_BUFFERED 100000           /* writes, while the disk fails */
#define MAX_BUFFERED_BYTES (256u << 20)
#define RETRY_MIN_MS 100
#define RETRY_MAX_MS 2000
#define SYNC_EVERY_MS 50              /* fdatasync at most this often */

enum { OP_PUT = 1, OP_DEL = 2, OP_END = 3 };

/* A write waiting for its batch: done(arg, err) once durable. */
struct waiter {
    mt_storage_done_fn done;
    void *arg;
    int err;
};

/* Bytes being built: a frame's header room, then ops. */
struct bytes {
    uint8_t *p;
    size_t len;
    size_t cap;
};

struct fst {
    uv_loop_t *loop;
    char *path;                 /* the snapshot */
    char *log_path;
    int fd;                     /* the log, flock'ed */
    uint64_t gen;               /* of the snapshot and of the log */
    uint64_t log_end;           /* durable, valid bytes of the log */
    uint64_t compact_floor;     /* no compaction below this log size */
    bool need_reset;            /* the log must restart before appending */
    struct mt_storage_rows rows;
    struct bytes batch;         /* FRAME_HDR room, then the pending ops */
    size_t n_ops;               /* ops in batch */
    struct waiter *w;           /* pending done()s, in order */
    size_t n_w, cap_w;
    uv_idle_t idle;             /* armed while a batch waits */
    uv_fs_t sync_req;           /* the fdatasync in the thread pool */
    bool syncing;               /* ... in flight */
    bool sync_again;            /* written since it started */
    uv_timer_t sync_timer;      /* the next sync, SYNC_EVERY_MS after the
                                   last one started */
    int64_t sync_started_ms;
    uv_timer_t retry;           /* armed while the disk fails */
    int backoff_ms;
    bool failing;
    bool closing;
    int handles_open;
    uint64_t writes, batches, dropped;
    int64_t last_error_ms, down_since_ms;
    char last_error[128];
};

/* ---- encoding ------------------------------------------------------------ */

static uint32_t crc_table[256];
static uv_once_t crc_once = UV_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;

        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

/* CRC-32 (IEEE 802.3, reflected), as zlib's crc32(0, p, n). */
static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;

    uv_once(&crc_once, crc_init);
    while (n--)
        c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static void header(uint8_t *p, const char *magic, uint64_t gen)
{
    memcpy(p, magic, 8);
    put_u32(p + 8, (uint32_t)gen);
    put_u32(p + 12, (uint32_t)(gen >> 32));
}

static void bytes_add(struct bytes *b, const void *p, size_t n)
{
    mt_xgrow((void **)&b->p, &b->cap, b->len + n, 1);
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* Start b as an empty frame (header room only). */
static void frame_begin(struct bytes *b)
{
    b->len = 0;
    mt_xgrow((void **)&b->p, &b->cap, FRAME_HDR, 1);
    b->len = FRAME_HDR;
}

/* Fill the frame header of b from its body. */
static void frame_seal(struct bytes *b)
{
    put_u32(b->p, (uint32_t)(b->len - FRAME_HDR));
    put_u32(b->p + 4, crc32_of(b->p + FRAME_HDR, b->len - FRAME_HDR));
}

static void op_add(struct bytes *b, int kind, const char *table,
                   const char *key, const void *val, size_t len)
{
    uint8_t h[OP_HDR];
    size_t tl = table ? strlen(table) : 0, kl = key ? strlen(key) : 0;

    h[0] = (uint8_t)kind;
    put_u32(h + 1, (uint32_t)tl);
    put_u32(h + 5, (uint32_t)kl);
    put_u32(h + 9, (uint32_t)len);
    bytes_add(b, h, sizeof(h));
    bytes_add(b, table, tl);
    bytes_add(b, key, kl);
    bytes_add(b, val, len);
}

/* ---- errors -------------------------------------------------------------- */

static int from_errno(int e)
{
    return e == ENOSPC || e == EDQUOT ? -MT_ENOSPC : -MT_EIO;
}

/* A write to the disk failed: say so once per episode. */
static void note_error(struct fst *f, const char *what, int e)
{
    f->last_error_ms = mt_now_wall_ms();
    snprintf(f->last_error, sizeof(f->last_error), "%s %s: %s", what,
             f->log_path, strerror(e));
    if (f->failing)
        return;
    f->failing = true;
    f->down_since_ms = f->last_error_ms;
    MT_ERROR("storage: %s; serving from memory, writes wait (at most %d) "
             "and are retried", f->last_error, MAX_BUFFERED);
}

/* ---- reading ------------------------------------------------------------- */

/* The whole file at path. RET 0, -errno (-ENOENT: absent). */
static int slurp(const char *path, uint8_t **out, size_t *len)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
    size_t got = 0;
    uint8_t *p;

    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
        goto out_close;
    }
    p = mt_xmalloc((size_t)st.st_size + 1);
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, p + got, (size_t)st.st_size - got);

        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                rc = -errno;
            break;
        }
        got += (size_t)n;
    }
    if (rc < 0) {
        free(p);
        goto out_close;
    }
    *out = p;
    *len = got;
out_close:
    close(fd);
    return rc;
}

/*
 * Apply the ops of one frame body to f's rows. *end is set when the body
 * holds an end op (allowed only in a snapshot, as its last op).
 * RET 0, or -1 (malformed)
 */
static int apply_body(struct fst *f, const uint8_t *p, size_t n, bool snap,
                      bool *end)
{
    while (n) {
        uint32_t tl, kl, vl;
        char *table, *key;
        int rc = 0;

        if (*end || n < OP_HDR)
            return -1;
        tl = get_u32(p + 1), kl = get_u32(p + 5), vl = get_u32(p + 9);
        if ((uint64_t)tl + kl + vl > n - OP_HDR)
            return -1;
        if (p[0] == OP_END && snap && !tl && !kl && !vl) {
            *end = true;
        } else if (p[0] == OP_PUT || p[0] == OP_DEL) {
            table = mt_xstrndup((const char *)p + OP_HDR, tl);
            key = mt_xstrndup((const char *)p + OP_HDR + tl, kl);
            if (strlen(table) != tl || strlen(key) != kl)
                rc = -1;
            else if (p[0] == OP_PUT)
                rc = mt_storage_rows_put(&f->rows, table, key,
                                         p + OP_HDR + tl + kl, vl);
            else
                mt_storage_rows_del(&f->rows, table, key);
            free(table);
            free(key);
            if (rc < 0)
                return -1;
        } else {
            return -1;
        }
        p += OP_HDR + tl + kl + vl;
        n -= OP_HDR + tl + kl + vl;
    }
    return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    while (n--)
        if (*p++)
            return false;
    return true;
}

enum { FRAMES_OK, FRAMES_TORN, FRAMES_BAD };

/*
 * Apply the frames of p[HDR_SIZE, n). *at is where reading stopped: n, or
 * the start of a torn last frame, or of a bad one. A frame that runs past
 * the end, or the last frame with a wrong checksum, or zeros to the end
 * (a file extended but never written) is torn; anything else wrong is bad.
 */
static int read_frames(struct fst *f, const uint8_t *p, size_t n, bool snap,
                       bool *end, size_t *at)
{
    size_t off = HDR_SIZE;

    while (off < n) {
        uint32_t blen;

        *at = off;
        if (n - off < FRAME_HDR)
            return FRAMES_TORN;
        blen = get_u32(p + off);
        if (blen == 0 || blen > MAX_FRAME)
            return all_zero(p + off, n - off) ? FRAMES_TORN : FRAMES_BAD;
        if (blen > n - off - FRAME_HDR)
            return FRAMES_TORN;
        if (crc32_of(p + off + FRAME_HDR, blen) != get_u32(p + off + 4))
            return off + FRAME_HDR + blen == n ? FRAMES_TORN : FRAMES_BAD;
        if (apply_body(f, p + off + FRAME_HDR, blen, snap, end) < 0)
            return FRAMES_BAD;
        off += FRAME_HDR + blen;
    }
    *at = off;
    return FRAMES_OK;
}

/* Load the snapshot, if any, into f->rows and f->gen. RET 0 or -MT_E*. */
static int load_snapshot(struct fst *f)
{
    uint8_t *p = NULL;
    size_t n = 0, at = 0;
    bool end = false;
    int rc = slurp(f->path, &p, &n);

    if (rc == -ENOENT)
        return 0; /* generation 0: empty */
    if (rc < 0) {
        MT_ERROR("storage: cannot read %s: %s", f->path, strerror(-rc));
        return -MT_EIO;
    }
    if (n < HDR_SIZE || memcmp(p, SNAP_MAGIC, 8) != 0) {
        MT_ERROR("storage: %s is not a Manta state snapshot (want magic %s)",
                 f->path, SNAP_MAGIC);
        free(p);
        return -MT_EVERSION;
    }
    f->gen = get_u64(p + 8);
    if (read_frames(f, p, n, true, &end, &at) != FRAMES_OK || !end) {
        MT_ERROR("storage: %s is corrupt at byte %zu; refusing to start: "
                 "restore a backup or move it and %s away", f->path, at,
                 f->log_path);
        rc = -MT_EIO;
    }
    free(p);
    return rc;
}

/*
 * Apply the log's frames; set f->log_end to its valid length, or to 0
 * when it must be written anew (absent, torn header, older generation).
 * RET 0 or -MT_E*.
 */
static int load_log(struct fst *f, const uint8_t *p, size_t n)
{
    bool end = false;
    size_t at = 0;
    uint64_t gen;
    int how;

    f->log_end = 0;
    if (n < HDR_SIZE || all_zero(p, HDR_SIZE))
        return 0; /* created or restarted, then a crash: empty */
    if (memcmp(p, LOG_MAGIC, 8) != 0) {
        MT_ERROR("storage: %s is not a Manta state log (want magic %s)",
                 f->log_path, LOG_MAGIC);
        return -MT_EVERSION;
    }
    gen = get_u64(p + 8);
    if (gen < f->gen)
        return 0; /* folded into the snapshot by a compaction */
    if (gen > f->gen) {
        MT_ERROR("storage: %s (generation %llu) is newer than %s "
                 "(generation %llu): the snapshot is missing or old; "
                 "refusing to start", f->log_path, (unsigned long long)gen,
                 f->path, (unsigned long long)f->gen);
        return -MT_EIO;
    }
    how = read_frames(f, p, n, false, &end, &at);
    if (how == FRAMES_BAD) {
        MT_ERROR("storage: %s is corrupt at byte %zu (of %zu); refusing to "
                 "start: restore a backup, or cut the log there if losing "
                 "what follows is acceptable", f->log_path, at, n);
        return -MT_EIO;
    }
    if (how == FRAMES_TORN)
        MT_WARN("storage: %s ends in a torn write (a crash while writing); "
                "dropping its last %zu bytes", f->log_path, n - at);
    f->log_end = at;
    return 0;
}

/* ---- writing ------------------------------------------------------------- */

static int pwrite_all(int fd, const uint8_t *p, size_t n, uint64_t off)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

/* Restart the log: truncate it and write the header of f->gen. RET 0 or
 * -errno (f->need_reset stays set). */
static int reset_log(struct fst *f)
{
    uint8_t h[HDR_SIZE];
    int rc = 0;

    header(h, LOG_MAGIC, f->gen);
    if (ftruncate(f->fd, 0) < 0 || (rc = pwrite_all(f->fd, h, HDR_SIZE, 0)) ||
        fdatasync(f->fd) < 0)
        return rc ? rc : -errno;
    f->log_end = HDR_SIZE;
    f->need_reset = false;
    return 0;
}

static void maybe_compact(struct fst *f);

/* The batch is durable: run its done()s, in order. They may write again. */
static void batch_done(struct fst *f)
{
    struct waiter *w = f->w;
    size_t n = f->n_w;

    f->w = NULL;
    f->n_w = f->cap_w = 0;
    f->n_ops = 0;
    frame_begin(&f->batch);
    for (size_t i = 0; i < n; i++)
        w[i].done(w[i].arg, w[i].err);
    free(w);
}

static void on_retry(uv_timer_t *t);

/* A write to the disk failed: note it and retry later, with a backoff. */
static int failed(struct fst *f, const char *what, int rc)
{
    note_error(f, what, -rc);
    uv_idle_stop(&f->idle);
    if (!f->closing)
        uv_timer_start(&f->retry, on_retry, (uint64_t)f->backoff_ms, 0);
    f->backoff_ms = f->backoff_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS
                                                     : f->backoff_ms * 2;
    return from_errno(-rc);
}

static void start_sync(struct fst *f);
static void fst_free(struct fst *f);

static void on_synced(uv_fs_t *req)
{
    struct fst *f = req->data;
    int rc = (int)req->result;

    uv_fs_req_cleanup(req);
    f->syncing = false;
    if (rc < 0) { /* the rows are in the kernel; the next write syncs again */
        f->last_error_ms = mt_now_wall_ms();
        snprintf(f->last_error, sizeof(f->last_error), "cannot sync %s: %s",
                 f->log_path, strerror(-rc));
        MT_WARN("storage: %s", f->last_error);
    }
    if (f->closing) {
        if (--f->handles_open == 0)
            fst_free(f);
        return;
    }
    if (f->sync_again && rc == 0)
        start_sync(f);
}

static void on_sync_timer(uv_timer_t *t)
{
    start_sync(t->data);
}

/* Sync the log off the loop: one at a time, at most one per
 * SYNC_EVERY_MS; the next covers what was written meanwhile. */
static void start_sync(struct fst *f)
{
    int64_t wait = f->sync_started_ms + SYNC_EVERY_MS - mt_now_mono_ms();

    if (f->syncing || uv_is_active((uv_handle_t *)&f->sync_timer)) {
        f->sync_again = true;
        return;
    }
    if (wait > 0) {
        uv_timer_start(&f->sync_timer, on_sync_timer, (uint64_t)wait, 0);
        return;
    }
    f->sync_again = false;
    f->sync_started_ms = mt_now_mono_ms();
    f->sync_req.data = f;
    if (uv_fs_fdatasync(f->loop, &f->sync_req, f->fd, on_synced) == 0)
        f->syncing = true;
}

/* Append the pending ops as one frame. RET 0 or -errno. */
static int write_batch(struct fst *f)
{
    int rc;

    frame_seal(&f->batch);
    rc = pwrite_all(f->fd, f->batch.p, f->batch.len, f->log_end);
    if (rc)
        return rc;
    f->log_end += f->batch.len;
    f->batches++;
    if (f->closing) /* the last: durable before the head exits */
        return fdatasync(f->fd) < 0 ? -errno : 0;
    start_sync(f);
    return 0;
}

/*
 * Make the pending batch durable and run its done()s (a log that must
 * restart after a compaction restarts first). RET 0, or the failure: the
 * batch stays pending and the retry timer is armed.
 */
static int flush(struct fst *f)
{
    size_t n_ops = f->n_ops;
    int rc;

    if (f->need_reset && (rc = reset_log(f)) < 0)
        return failed(f, "cannot restart", rc);
    if (n_ops && (rc = write_batch(f)) < 0)
        return failed(f, "cannot write", rc);
    if (f->failing) {
        MT_WARN("storage: %s is writable again; %zu waiting writes are "
                "durable", f->log_path, n_ops);
        f->failing = false;
        f->down_since_ms = 0;
        f->backoff_ms = RETRY_MIN_MS;
    }
    if (f->n_w)
        batch_done(f);
    if (n_ops && !f->closing)
        maybe_compact(f);
    return 0;
}

static void on_idle(uv_idle_t *h)
{
    struct fst *f = h->data;

    uv_idle_stop(h);
    flush(f);
    if (f->n_w && !f->failing)
        uv_idle_start(h, on_idle); /* written by a done(): next turn */
}

static void on_retry(uv_timer_t *t)
{
    flush(t->data);
}

/* Queue a write's done() (after its op, if any, is in the batch). */
static void add_waiter(struct fst *f, mt_storage_done_fn done, void *arg,
                       int err)
{
    mt_xgrow((void **)&f->w, &f->cap_w, f->n_w + 1, sizeof(*f->w));
    f->w[f->n_w++] = (struct waiter){done, arg, err};
    if (!f->failing && f->batch.len >= FLUSH_BYTES)
        flush(f);
    else if (!f->failing)
        uv_idle_start(&f->idle, on_idle);
}

/* ---- compaction ---------------------------------------------------------- */

/* A snapshot being written: the frame being filled, the first error. */
struct snap_writer {
    int fd;
    uint64_t off;
    struct bytes frame;
    int err;
};

static void snap_emit(struct snap_writer *s)
{
    frame_seal(&s->frame);
    if (!s->err)
        s->err = pwrite_all(s->fd, s->frame.p, s->frame.len, s->off);
    s->off += s->frame.len;
    frame_begin(&s->frame);
}

static void snap_row(void *arg, const char *table, const char *key,
                     const void *val, size_t len)
{
    struct snap_writer *s = arg;

    op_add(&s->frame, OP_PUT, table, key, val, len);
    if (s->frame.len >= SNAP_FRAME_BYTES)
        snap_emit(s);
}

/* fsync the folder holding path, so a rename in it is durable. */
static int sync_dir(const char *path)
{
    char *dir = mt_xstrdup(path), *slash = strrchr(dir, '/');
    int fd, rc = 0;

    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) < 0)
        rc = -errno;
    if (fd >= 0)
        close(fd);
    free(dir);
    return rc;
}

/* Every row into a snapshot of generation gen at PATH. RET 0 or -errno. */
static int write_snapshot(struct fst *f, uint64_t gen)
{
    char *tmp = mt_xasprintf("%s.tmp", f->path);
    struct snap_writer s = {.off = HDR_SIZE};
    uint8_t h[HDR_SIZE];

    s.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (s.fd < 0) {
        s.err = -errno;
        goto out;
    }
    header(h, SNAP_MAGIC, gen);
    s.err = pwrite_all(s.fd, h, HDR_SIZE, 0);
    frame_begin(&s.frame);
    mt_storage_rows_each(&f->rows, snap_row, &s);
    op_add(&s.frame, OP_END, NULL, NULL, NULL, 0);
    snap_emit(&s);
    free(s.frame.p);
    if (!s.err && fsync(s.fd) < 0)
        s.err = -errno;
    close(s.fd);
    if (!s.err && rename(tmp, f->path) < 0)
        s.err = -errno;
    if (!s.err)
        s.err = sync_dir(f->path);
    if (s.err)
        unlink(tmp);
out:
    free(tmp);
    return s.err;
}

static void maybe_compact(struct fst *f)
{
    uint64_t live = (uint64_t)f->rows.bytes + (uint64_t)f->rows.n * OP_HDR;
    uint64_t limit = 2 * live > COMPACT_MIN ? 2 * live : COMPACT_MIN;
    int rc;

    if (f->log_end <= limit || f->log_end <= f->compact_floor)
        return;
    if ((rc = write_snapshot(f, f->gen + 1)) < 0) {
        MT_ERROR("storage: cannot write the snapshot %s: %s; the log grows "
                 "on", f->path, strerror(-rc));
        f->compact_floor = f->log_end + COMPACT_MIN;
        return;
    }
    f->gen++;
    f->need_reset = true;
    f->compact_floor = 0;
    if ((rc = reset_log(f)) < 0)
        failed(f, "cannot restart", rc); /* the retry restarts it */
    MT_DEBUG("storage: compacted %s: %zu rows, generation %llu", f->path,
             f->rows.n, (unsigned long long)f->gen);
}

/* ---- the ops ------------------------------------------------------------- */

/* Open and lock the log, load both files. RET 0 or -MT_E*. */
static int load(struct fst *f)
{
    uint8_t *p = NULL;
    size_t n = 0;
    int rc;

    f->fd = open(f->log_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (f->fd < 0) {
        MT_ERROR("storage: cannot open %s: %s", f->log_path, strerror(errno));
        return from_errno(errno);
    }
    if (flock(f->fd, LOCK_EX | LOCK_NB) < 0) {
        MT_ERROR("storage: %s is in use by another head", f->log_path);
        return -MT_ESTATE;
    }
    if ((rc = load_snapshot(f)) < 0)
        return rc;
    if ((rc = slurp(f->log_path, &p, &n)) < 0) {
        MT_ERROR("storage: cannot read %s: %s", f->log_path, strerror(-rc));
        return -MT_EIO;
    }
    rc = load_log(f, p, n);
    free(p);
    if (rc < 0)
        return rc;
    if (f->log_end == 0)
        rc = reset_log(f);
    else if (f->log_end < n && (ftruncate(f->fd, (off_t)f->log_end) < 0 ||
                                fdatasync(f->fd) < 0))
        rc = -errno;
    if (rc < 0) {
        MT_ERROR("storage: cannot write %s: %s", f->log_path, strerror(-rc));
        return from_errno(-rc);
    }
    return 0;
}

static void fst_free(struct fst *f)
{
    if (f->fd >= 0)
        close(f->fd);
    mt_storage_rows_release(&f->rows);
    free(f->batch.p);
    free(f->w);
    free(f->path);
    free(f->log_path);
    free(f);
}

static int fst_open(uv_loop_t *loop, const char *uri, void **st)
{
    struct fst *f;
    char *dir, *slash;
    int rc;

    if (!*uri) {
        MT_ERROR("storage: want file://PATH");
        return -MT_EINVAL;
    }
    f = mt_xcalloc(1, sizeof(*f));
    f->fd = -1;
    f->path = mt_xstrdup(uri);
    f->log_path = mt_xasprintf("%s.log", uri);
    mt_storage_rows_init(&f->rows);
    dir = mt_xstrdup(uri);
    if ((slash = strrchr(dir, '/')) && slash != dir) {
        *slash = '\0';
        mt_sys_mkdir_p(dir);
    }
    free(dir);
    if ((rc = load(f)) < 0) {
        fst_free(f);
        return rc;
    }
    f->loop = loop;
    f->backoff_ms = RETRY_MIN_MS;
    frame_begin(&f->batch);
    uv_idle_init(loop, &f->idle);
    uv_timer_init(loop, &f->retry);
    uv_timer_init(loop, &f->sync_timer);
    f->idle.data = f->retry.data = f->sync_timer.data = f;
    f->handles_open = 3;
    MT_INFO("storage: %s, %zu rows, log %llu bytes", f->path, f->rows.n,
            (unsigned long long)f->log_end);
    *st = f;
    return 0;
}

static void on_handle_closed(uv_handle_t *h)
{
    struct fst *f = h->data;

    if (--f->handles_open == 0)
        fst_free(f);
}

/* Write what is pending; what cannot be written fails with -MT_ECLOSED. */
static void fst_close(void *st)
{
    struct fst *f = st;

    f->closing = true;
    if (flush(f) < 0) {
        struct waiter *w = f->w;
        size_t n = f->n_w;

        MT_ERROR("storage: %zu writes never reached %s", f->n_ops,
                 f->log_path);
        f->w = NULL;
        f->n_w = f->cap_w = 0;
        for (size_t i = 0; i < n; i++)
            w[i].done(w[i].arg, -MT_ECLOSED);
        free(w);
    }
    if (f->syncing)
        f->handles_open++; /* on_synced frees the last */
    uv_close((uv_handle_t *)&f->idle, on_handle_closed);
    uv_close((uv_handle_t *)&f->retry, on_handle_closed);
    uv_close((uv_handle_t *)&f->sync_timer, on_handle_closed);
}

/* RET 0, or -MT_EUNAVAIL when the disk fails and the buffer is full. */
static int room(struct fst *f)
{
    if (f->closing)
        return -MT_ECLOSED;
    if (!f->failing ||
        (f->n_w < MAX_BUFFERED && f->batch.len < MAX_BUFFERED_BYTES))
        return 0;
    if (f->dropped++ == 0 || f->dropped % 10000 == 0)
        MT_WARN("storage: %s failing and %d writes waiting: refusing more "
                "(%llu so far)", f->log_path, MAX_BUFFERED,
                (unsigned long long)f->dropped);
    return -MT_EUNAVAIL;
}

static int fst_put(void *st, const char *table, const char *key,
                   const void *val, size_t len, mt_storage_done_fn done,
                   void *arg)
{
    struct fst *f = st;
    int rc = room(f);

    if (rc < 0)
        return rc;
    if (len > MAX_FRAME / 2)
        return -MT_ETOOBIG;
    if ((rc = mt_storage_rows_put(&f->rows, table, key, val, len)) < 0)
        return rc;
    op_add(&f->batch, OP_PUT, table, key, val, len);
    f->n_ops++;
    f->writes++;
    add_waiter(f, done, arg, 0);
    return 0;
}

static int fst_del(void *st, const char *table, const char *key,
                   mt_storage_done_fn done, void *arg)
{
    struct fst *f = st;
    int rc = room(f);

    if (rc < 0)
        return rc;
    rc = mt_storage_rows_del(&f->rows, table, key);
    if (rc == 0) {
        op_add(&f->batch, OP_DEL, table, key, NULL, 0);
        f->n_ops++;
        f->writes++;
    }
    add_waiter(f, done, arg, rc);
    return 0;
}

static int fst_scan(void *st, const char *table, mt_storage_row_fn row,
                    mt_storage_done_fn done, void *arg)
{
    struct fst *f = st;

    if (!table)
        return -MT_EINVAL;
    mt_storage_rows_scan(&f->rows, table, row, arg);
    done(arg, 0);
    return 0;
}

static void fst_stats(const void *st, struct mt_storage_stats *out)
{
    const struct fst *f = st;

    out->healthy = !f->failing;
    out->writes = f->writes;
    out->batches = f->batches;
    out->buffered = f->n_ops;
    out->dropped = f->dropped;
    out->last_error_ms = f->last_error_ms;
    out->down_since_ms = f->down_since_ms;
    snprintf(out->last_error, sizeof(out->last_error), "%s", f->last_error);
}

const struct mt_storage_ops mt_storage_file = {
    .name = "file",
    .open = fst_open,
    .close = fst_close,
    .put = fst_put,
    .del = fst_del,
    .scan = fst_scan,
    .stats = fst_stats,
};
