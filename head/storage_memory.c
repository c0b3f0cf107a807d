/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage_memory.c -- the in-memory storage backend: rows live in this
 * process, so a restarted head starts empty and rebuilds its tables from
 * worker re-registrations. Every operation completes before returning.
 * Rows are found by table and key through an index (common/strindex.h) on
 * "<table>\x1f<key>": a head saves a node row at each registration and
 * death, and at 10,000 nodes a scan per save was most of its time.
 */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/strindex.h"
#include "head/storage.h"

#define SEP '\x1f' /* between table and key in an index key */

struct row {
    char *table;
    char *key;
    char *tk;           /* "<table>SEP<key>", the index key */
    void *val;
    size_t len;
};

struct mem {
    struct row *rows;
    size_t n;
    size_t cap;
    struct mt_strindex by_tk;
};

static const char *tk_of(const void *rows, size_t pos)
{
    return ((const struct row *)rows)[pos].tk;
}

static int mem_open(uv_loop_t *loop, const char *uri, void **st)
{
    struct mem *m = mt_xcalloc(1, sizeof(*m));

    mt_strindex_init(&m->by_tk, tk_of);
    *st = m;
    return 0;
}

static void row_free(struct row *r)
{
    free(r->table);
    free(r->key);
    free(r->tk);
    free(r->val);
}

static void mem_close(void *st)
{
    struct mem *m = st;

    for (size_t i = 0; i < m->n; i++)
        row_free(&m->rows[i]);
    free(m->rows);
    mt_strindex_release(&m->by_tk);
    free(m);
}

static struct row *find(struct mem *m, const char *table, const char *key)
{
    char *tk = mt_xasprintf("%s%c%s", table, SEP, key);
    size_t i = mt_strindex_find(&m->by_tk, m->rows, tk);

    free(tk);
    return i == MT_STRINDEX_NONE ? NULL : &m->rows[i];
}

static int mem_put(void *st, const char *table, const char *key,
                   const void *val, size_t len, mt_storage_done_fn done,
                   void *arg)
{
    struct mem *m = st;
    struct row *r;

    if (!table || !key || (!val && len) || strchr(table, SEP))
        return -MT_EINVAL;
    r = find(m, table, key);
    if (!r) {
        mt_xgrow((void **)&m->rows, &m->cap, m->n + 1, sizeof(*m->rows));
        r = &m->rows[m->n];
        r->table = mt_xstrdup(table);
        r->key = mt_xstrdup(key);
        r->tk = mt_xasprintf("%s%c%s", table, SEP, key);
        mt_strindex_add(&m->by_tk, m->rows);
        m->n++;
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
    mt_strindex_remove(&m->by_tk, m->rows, (size_t)(r - m->rows));
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
