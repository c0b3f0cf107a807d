/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage.h -- where the head keeps state that must survive a head restart:
 * tables of (key -> bytes) rows, e.g. table "nodes", key node id, value a
 * serialized NodeInfo. Callers serialize; backends store opaque bytes.
 *
 * Backends sit behind a const ops table (house style H13). "memory" (the
 * default) keeps rows in this process and so forgets them on restart;
 * "redis" keeps them in a Redis server (hiredis, async on the head's loop,
 * storage_redis.c). Every operation completes through a callback so network
 * backends fit; the memory backend calls it before returning.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_STORAGE_H
#define MT_STORAGE_H

#include <stddef.h>
#include <uv.h>

/* Completion: err is 0 or -MT_E*. */
typedef void (*mt_storage_done_fn)(void *arg, int err);
/* One row of a scan: key and value are borrowed for the callback. */
typedef void (*mt_storage_row_fn)(void *arg, const char *key, const void *val,
                                  size_t len);

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
};

extern const struct mt_storage_ops mt_storage_memory;
/* redis://[user:pass@]HOST:PORT[/DB] (storage_redis.c) */
extern const struct mt_storage_ops mt_storage_redis;

struct mt_storage {
    const struct mt_storage_ops *ops;
    void *st;
};

/*
 * mt_storage_open - open the backend named by spec: "memory" (or ""), or
 * "redis://[user:pass@]HOST:PORT[/DB]" (checked at once: an unreachable or
 * refusing server is an error).
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

#endif /* MT_STORAGE_H */
