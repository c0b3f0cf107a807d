/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage_rows.h -- the rows of a storage backend kept in this process:
 * (table, key) -> bytes, found through an index (common/strindex.h) on
 * "<table>\x1f<key>". Shared by the memory backend (which keeps nothing
 * else) and the file backend (which also logs every change to disk).
 *
 * A table name may not contain '\x1f'; keys and values are free. The map
 * counts the bytes it holds (the file backend's compaction uses it).
 *
 * THREAD: not thread safe; the backend that owns the map guards it.
 */
#ifndef MT_STORAGE_ROWS_H
#define MT_STORAGE_ROWS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/strindex.h"
#include "head/storage.h"

/* One stored row. Guarded by: the owner of the map. */
struct mt_storage_row {
    char *table;
    char *key;
    char *tk;           /* "<table>\x1f<key>", the index key */
    void *val;
    size_t len;
};

/* A map of rows. Zeroed is not ready: use mt_storage_rows_init(). */
struct mt_storage_rows {
    struct mt_storage_row *v;
    size_t n;
    size_t cap;
    size_t bytes;       /* sum of table, key and value lengths */
    struct mt_strindex by_tk;
};

/* The visitor of mt_storage_rows_each: everything borrowed for the call. */
typedef void (*mt_storage_rows_fn)(void *arg, const char *table,
                                   const char *key, const void *val,
                                   size_t len);

/* mt_storage_rows_init / _release - an empty map; free every row. */
void mt_storage_rows_init(struct mt_storage_rows *m);
void mt_storage_rows_release(struct mt_storage_rows *m);

/*
 * mt_storage_rows_valid - whether (table, key) can be stored: both
 * non-NULL and the table free of '\x1f'.
 */
bool mt_storage_rows_valid(const char *table, const char *key);

/*
 * mt_storage_rows_put - insert or replace the row (table, key).
 * RET 0, -MT_EINVAL (see mt_storage_rows_valid, or val NULL with len > 0)
 * OWNERSHIP  copies table, key and val
 */
int mt_storage_rows_put(struct mt_storage_rows *m, const char *table,
                        const char *key, const void *val, size_t len);

/* mt_storage_rows_del - remove the row. RET 0, -MT_ENOENT (no such row) */
int mt_storage_rows_del(struct mt_storage_rows *m, const char *table,
                        const char *key);

/*
 * mt_storage_rows_scan - row() for each row of table. row() may put and
 * del: a row put meanwhile may or may not be seen, and a del may make the
 * scan skip one row.
 */
void mt_storage_rows_scan(const struct mt_storage_rows *m, const char *table,
                          mt_storage_row_fn row, void *arg);

/* mt_storage_rows_each - fn() for every row of every table; fn() must not
 * change the map. */
void mt_storage_rows_each(const struct mt_storage_rows *m,
                          mt_storage_rows_fn fn, void *arg);

#endif /* MT_STORAGE_ROWS_H */
