/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage_memory.c -- the in-memory storage backend: rows live in this
 * process, so a restarted head starts empty and rebuilds its tables from
 * worker re-registrations. Every operation completes before returning.
 */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "head/storage.h"

struct row {
    char *table;
    char *key;
    void *val;
    size_t len;
};

struct mem {
    struct row *rows;
    size_t n;
    size_t cap;
};

static int mem_open(uv_loop_t *loop, const char *uri, void **st)
{
    *st = mt_xcalloc(1, sizeof(struct mem));
    return 0;
}

static void row_free(struct row *r)
{
    free(r->table);
    free(r->key);
    free(r->val);
}

static void mem_close(void *st)
{
    struct mem *m = st;

    for (size_t i = 0; i < m->n; i++)
        row_free(&m->rows[i]);
    free(m->rows);
    free(m);
}

static struct row *find(struct mem *m, const char *table, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->rows[i].table, table) == 0 &&
            strcmp(m->rows[i].key, key) == 0)
            return &m->rows[i];
    return NULL;
}

static int mem_put(void *st, const char *table, const char *key,
                   const void *val, size_t len, mt_storage_done_fn done,
                   void *arg)
{
    struct mem *m = st;
    struct row *r;

    if (!table || !key || (!val && len))
        return -MT_EINVAL;
    r = find(m, table, key);
    if (!r) {
        mt_xgrow((void **)&m->rows, &m->cap, m->n + 1, sizeof(*m->rows));
        r = &m->rows[m->n++];
        r->table = mt_xstrdup(table);
        r->key = mt_xstrdup(key);
    } else {
        free(r->val);
    }
    r->val = mt_xmalloc(len);
    if (len)
        memcpy(r->val, val, len);
    r->len = len;
    done(arg, 0);
    return 0;
}

static int mem_del(void *st, const char *table, const char *key,
                   mt_storage_done_fn done, void *arg)
{
    struct mem *m = st;
    struct row *r = find(m, table, key);

    if (!r) {
        done(arg, -MT_ENOENT);
        return 0;
    }
    row_free(r);
    *r = m->rows[--m->n];
    done(arg, 0);
    return 0;
}

static int mem_scan(void *st, const char *table, mt_storage_row_fn row,
                    mt_storage_done_fn done, void *arg)
{
    struct mem *m = st;

    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->rows[i].table, table) == 0)
            row(arg, m->rows[i].key, m->rows[i].val, m->rows[i].len);
    done(arg, 0);
    return 0;
}

const struct mt_storage_ops mt_storage_memory = {
    .name = "memory",
    .open = mem_open,
    .close = mem_close,
    .put = mem_put,
    .del = mem_del,
    .scan = mem_scan,
};
