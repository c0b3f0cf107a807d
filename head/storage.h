/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage.h -- where the head keeps state that must survive a head restart:
 * tables of (key -> bytes) rows, e.g. table "nodes", key node id, value a
 * serialized NodeInfo. Callers serialize; backends store opaque bytes.
 *
 * Backends sit behind a const ops table (house style H13). "memory" keeps
 * rows in this process and so forgets them on restart (manta-head's
 * default, for tests); "file" keeps them in this process too and logs every
 * change to an append-only file with snapshots (storage_file.c; what
 * `manta start --head` uses unless told); "redis" keeps them in a Redis
 * server (hiredis, async on the head's loop, storage_redis.c). Every
 * operation completes through a callback so network backends fit; the
 * memory backend calls it before returning.
 *
 * Batches: the file and Redis backends gather the writes made in one loop
 * turn and make them durable together (one write(2) and fdatasync(2), or
 * one MULTI/EXEC round trip) just before the loop polls again; each
 * write's done() runs once its batch is durable, in the order of the
 * writes. A scan sees every write made before it.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_STORAGE_H
#define MT_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* Completion: err is 0 or -MT_E*. */
typedef void (*mt_storage_done_fn)(void *arg, int err);
/* One row of a scan: key and value are borrowed for the callback. */
typedef void (*mt_storage_row_fn)(void *arg, const char *key, const void *val,
                                  size_t len);

/*
 * How a backend is doing, for `manta status` and /metrics. Counters run
 * from the open. Filled by mt_storage_stats().
 */
struct mt_storage_stats {
    const char *backend;        /* "memory", "file", "redis" (static) */
    const char *spec;           /* as opened, any password shown as ***;
                                   borrowed from the storage */
    bool healthy;               /* writes reach the store */
    uint64_t writes;            /* puts and dels accepted */
    uint64_t batches;           /* batches made durable */
    uint64_t buffered;          /* accepted writes not durable yet */
    uint64_t dropped;           /* writes refused: the buffer was full */
    int64_t last_error_ms;      /* wall clock of the last error; 0: none */
    int64_t down_since_ms;      /* wall clock since unhealthy; 0: healthy */
    char last_error[128];       /* "" when none */
};

struct mt_storage_ops {
    const char *name;
    /* open: uri is the part after "name://" ("" for memory). */
    int (*open)(uv_loop_t *loop, const char *uri, void **st);
    void (*close)(void *st);
    int (*put)(void *st, const char *table, const char *key, const void *val,
               size_t len, mt_storage_done_fn done, void *arg);
    int (*del)(void *st, const char *table, const char *key,
               mt_storage_done_fn done, void *arg);
    /* scan: row() for each row of table, then done(). */
    int (*scan)(void *st, const char *table, mt_storage_row_fn row,
                mt_storage_done_fn done, void *arg);
    /* stats: fill everything but backend and spec. */
    void (*stats)(const void *st, struct mt_storage_stats *out);
};

extern const struct mt_storage_ops mt_storage_memory;
/* file://PATH: PATH and PATH.log (storage_file.c) */
extern const struct mt_storage_ops mt_storage_file;
/* redis://[user:pass@]HOST:PORT[/DB] (storage_redis.c) */
extern const struct mt_storage_ops mt_storage_redis;

struct mt_storage {
    const struct mt_storage_ops *ops;
    void *st;
    char *spec;         /* owned; as opened, password shown as *** */
};

/*
 * mt_storage_open - open the backend named by spec: "memory" (or ""),
 * "file://PATH" (PATH and PATH.log are read now: a corrupt file is an
 * error) or "redis://[user:pass@]HOST:PORT[/DB]" (checked at once: an
 * unreachable or refusing server is an error).
 *
 * OUT out  returns owned, free with mt_storage_close()
 * RET 0, -MT_EINVAL (unknown backend), or the backend's open error
 */
int mt_storage_open(uv_loop_t *loop, const char *spec,
                    struct mt_storage **out);

/* mt_storage_close - close and free. Accepts NULL. */
void mt_storage_close(struct mt_storage *s);

/* Convenience wrappers; done may be NULL (fire and forget, errors logged). */
int mt_storage_put(struct mt_storage *s, const char *table, const char *key,
                   const void *val, size_t len, mt_storage_done_fn done,
                   void *arg);
int mt_storage_del(struct mt_storage *s, const char *table, const char *key,
                   mt_storage_done_fn done, void *arg);
int mt_storage_scan(struct mt_storage *s, const char *table,
                    mt_storage_row_fn row, mt_storage_done_fn done, void *arg);

/*
 * mt_storage_stats - how s is doing now.
 * OUT out   filled; out->spec borrows from s
 * THREAD    loop thread only
 */
void mt_storage_stats(const struct mt_storage *s,
                      struct mt_storage_stats *out);

/*
 * mt_storage_spec_masked - spec with the password of a
 * "name://user:pass@..." or "name://pass@..." shown as ***.
 * RET owned, free with free()
 */
char *mt_storage_spec_masked(const char *spec);

#endif /* MT_STORAGE_H */
