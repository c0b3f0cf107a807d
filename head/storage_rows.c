/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage_rows.c -- rows of (table, key) -> bytes in this process, for the
 * memory and file storage backends (storage_rows.h). The rows sit in one
 * array, swap-removed on del; the index finds a row by "<table>SEP<key>":
 * a head saves a node row at each registration and death, and at 10,000
 * nodes a linear search per save was most of its time.
 */
#include "head/storage_rows.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"

#define SEP '\x1f' /* between table and key in an index key */

static const char *tk_of(const void *rows, size_t pos)
{
    return ((const struct mt_storage_row *)rows)[pos].tk;
}

void mt_storage_rows_init(struct mt_storage_rows *m)
{
    memset(m, 0, sizeof(*m));
    mt_strindex_init(&m->by_tk, tk_of);
}

static size_t row_bytes(const struct mt_storage_row *r)
{
    return strlen(r->table) + strlen(r->key) + r->len;
}

static void row_free(struct mt_storage_row *r)
{
    free(r->table);
    free(r->key);
    free(r->tk);
    free(r->val);
}

void mt_storage_rows_release(struct mt_storage_rows *m)
{
    for (size_t i = 0; i < m->n; i++)
        row_free(&m->v[i]);
    free(m->v);
    mt_strindex_release(&m->by_tk);
    memset(m, 0, sizeof(*m));
}

bool mt_storage_rows_valid(const char *table, const char *key)
{
    return table && key && !strchr(table, SEP);
}

static struct mt_storage_row *find(const struct mt_storage_rows *m,
                                   const char *table, const char *key)
{
    char *tk = mt_xasprintf("%s%c%s", table, SEP, key);
    size_t i = mt_strindex_find(&m->by_tk, m->v, tk);

    free(tk);
    return i == MT_STRINDEX_NONE ? NULL : &m->v[i];
}

int mt_storage_rows_put(struct mt_storage_rows *m, const char *table,
                        const char *key, const void *val, size_t len)
{
    struct mt_storage_row *r;

    if (!mt_storage_rows_valid(table, key) || (!val && len))
        return -MT_EINVAL;
    r = find(m, table, key);
    if (!r) {
        mt_xgrow((void **)&m->v, &m->cap, m->n + 1, sizeof(*m->v));
        r = &m->v[m->n];
        r->table = mt_xstrdup(table);
        r->key = mt_xstrdup(key);
        r->tk = mt_xasprintf("%s%c%s", table, SEP, key);
        r->len = 0;
        mt_strindex_add(&m->by_tk, m->v);
        m->n++;
    } else {
        m->bytes -= row_bytes(r);
        free(r->val);
    }
    r->val = mt_xmalloc(len ? len : 1);
    if (len)
        memcpy(r->val, val, len);
    r->len = len;
    m->bytes += row_bytes(r);
    return 0;
}

int mt_storage_rows_del(struct mt_storage_rows *m, const char *table,
                        const char *key)
{
    struct mt_storage_row *r;

    if (!mt_storage_rows_valid(table, key) || !(r = find(m, table, key)))
        return -MT_ENOENT;
    mt_strindex_remove(&m->by_tk, m->v, (size_t)(r - m->v));
    m->bytes -= row_bytes(r);
    row_free(r);
    *r = m->v[--m->n];
    return 0;
}

void mt_storage_rows_scan(const struct mt_storage_rows *m, const char *table,
                          mt_storage_row_fn row, void *arg)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->v[i].table, table) == 0)
            row(arg, m->v[i].key, m->v[i].val, m->v[i].len);
}

void mt_storage_rows_each(const struct mt_storage_rows *m,
                          mt_storage_rows_fn fn, void *arg)
{
    for (size_t i = 0; i < m->n; i++)
        fn(arg, m->v[i].table, m->v[i].key, m->v[i].val, m->v[i].len);
}
