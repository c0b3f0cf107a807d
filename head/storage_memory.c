/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage_memory.c -- the in-memory storage backend: rows live in this
 * process (storage_rows.h), so a restarted head starts empty and rebuilds
 * its tables from worker re-registrations. Every operation completes
 * before returning; each write counts as a batch of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "head/storage.h"
#include "head/storage_rows.h"

struct mem {
    struct mt_storage_rows rows;
    uint64_t writes;
};

static int mem_open(uv_loop_t *loop, const char *uri, void **st)
{
    struct mem *m = mt_xcalloc(1, sizeof(*m));

    (void)loop;
    (void)uri;
    mt_storage_rows_init(&m->rows);
    *st = m;
    return 0;
}

static void mem_close(void *st)
{
    struct mem *m = st;

    mt_storage_rows_release(&m->rows);
    free(m);
}

static int mem_put(void *st, const char *table, const char *key,
                   const void *val, size_t len, mt_storage_done_fn done,
                   void *arg)
{
    struct mem *m = st;
    int rc = mt_storage_rows_put(&m->rows, table, key, val, len);

    if (rc < 0)
        return rc;
    m->writes++;
    done(arg, 0);
    return 0;
}

static int mem_del(void *st, const char *table, const char *key,
                   mt_storage_done_fn done, void *arg)
{
    struct mem *m = st;

    m->writes++;
    done(arg, mt_storage_rows_del(&m->rows, table, key));
    return 0;
}

static int mem_scan(void *st, const char *table, mt_storage_row_fn row,
                    mt_storage_done_fn done, void *arg)
{
    struct mem *m = st;

    mt_storage_rows_scan(&m->rows, table, row, arg);
    done(arg, 0);
    return 0;
}

static void mem_stats(const void *st, struct mt_storage_stats *out)
{
    const struct mem *m = st;

    out->healthy = true;
    out->writes = m->writes;
    out->batches = m->writes;
}

const struct mt_storage_ops mt_storage_memory = {
    .name = "memory",
    .open = mem_open,
    .close = mem_close,
    .put = mem_put,
    .del = mem_del,
    .scan = mem_scan,
    .stats = mem_stats,
};
