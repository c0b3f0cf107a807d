/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node_table.c -- the head's node table (see node_table.h).
 *
 * DESIGN: a flat array of node pointers, which every listing walks, and a
 * hash index over it by node id (common/strindex.h), because every report
 * looks its node up several times: with 10,000 nodes reporting once a
 * second, linear lookups cost the head more than all the rest of a report
 * (bench/RESULTS.md, "the head at scale").
 */
#include "head/node_table.h"

#include "head/digest.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/auth.h"
#include "common/error.h"
#include "common/log.h"

static void copy_str(char **dst, const char *src)
{
    free(*dst);
    *dst = mt_xstrdup(src ? src : "");
}

static void copy_qty(struct mt_qty_list *dst, const struct mt_qty_list *src)
{
    mt_qty_list_release(dst);
    for (size_t i = 0; src && i < src->n; i++)
        mt_qty_list_set(dst, src->v[i].name, src->v[i].qty);
}

static void node_free(struct mt_node *n)
{
    free(n->id);
    free(n->address);
    free(n->node_ip);
    free(n->hostname);
    free(n->temp_dir);
    free(n->metrics_address);
    free(n->version);
    free(n->secret);
    free(n->death_reason);
    free(n->gpus);
    mt_qty_list_release(&n->total);
    mt_qty_list_release(&n->avail);
    mt_kv_list_release(&n->labels);
    free(n);
}

static const char *id_of(const void *v, size_t pos)
{
    return ((struct mt_node *const *)v)[pos]->id;
}

void mt_node_table_init(struct mt_node_table *t)
{
    memset(t, 0, sizeof(*t));
    mt_strindex_init(&t->by_id, id_of);
}

void mt_node_table_release(struct mt_node_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        node_free(t->v[i]);
    free(t->v);
    mt_strindex_release(&t->by_id);
    mt_node_table_init(t);
}

struct mt_node *mt_node_table_find(const struct mt_node_table *t,
                                   const char *id)
{
    size_t i = mt_strindex_find(&t->by_id, t->v, id);

    return i == MT_STRINDEX_NONE ? NULL : t->v[i];
}

bool mt_node_secret_ok(const struct mt_node *n, const char *secret)
{
    char h[MT_SHA256_HEX_LEN + 1];

    if (!n->secret)
        return true;
    if (!secret)
        return false;
    mt_sha256_hex(secret, strlen(secret), h);
    return mt_auth_equal(n->secret, strlen(n->secret), h, strlen(h));
}

bool mt_node_table_speaks_for(const struct mt_node_table *t, const char *id,
                              const char *secret)
{
    const struct mt_node *n = mt_node_table_find(t, id);

    return !n || n->state != MT_NODE_ALIVE || mt_node_secret_ok(n, secret);
}

struct mt_node *mt_node_table_register(struct mt_node_table *t,
                                       const struct mt_node_reg *r,
                                       int64_t now_mono, int64_t now_wall,
                                       bool *was_new, int *err)
{
    struct mt_node *n;

    if (!r->id || !*r->id || !r->address || !*r->address) {
        *err = -MT_EINVAL;
        return NULL;
    }
    n = mt_node_table_find(t, r->id);
    if (n && n->state == MT_NODE_ALIVE && !mt_node_secret_ok(n, r->secret)) {
        *err = -MT_EPERM;
        return NULL;
    }
    if (was_new)
        *was_new = n == NULL;
    if (!n) {
        n = mt_xcalloc(1, sizeof(*n));
        n->magic = MT_NODE_MAGIC;
        n->id = mt_xstrdup(r->id);
        n->sched_node = UINT32_MAX;
        mt_xgrow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v));
        t->v[t->n++] = n;
        mt_strindex_add(&t->by_id, t->v);
    }
    copy_str(&n->address, r->address);
    copy_str(&n->node_ip, r->node_ip);
    copy_str(&n->hostname, r->hostname);
    copy_str(&n->temp_dir, r->temp_dir);
    copy_str(&n->version, r->version);
    MT_FREE(n->metrics_address);
    if (r->metrics_address && *r->metrics_address)
        copy_str(&n->metrics_address, r->metrics_address);
    if (r->secret && *r->secret) { /* a dead node's id may be taken anew */
        char h[MT_SHA256_HEX_LEN + 1];

        copy_str(&n->secret, mt_sha256_hex(r->secret, strlen(r->secret), h));
    }
    MT_FREE(n->death_reason);
    copy_qty(&n->total, r->total);
    copy_qty(&n->avail, r->total);
    mt_kv_list_release(&n->labels);
    for (size_t i = 0; r->labels && i < r->labels->n; i++)
        mt_kv_list_set(&n->labels, r->labels->v[i].key, r->labels->v[i].value);
    n->state = MT_NODE_ALIVE;
    n->pid = r->pid;
    n->start_time_ms = r->start_time_ms;
    n->last_report_ms = now_wall;
    n->last_seen_mono = now_mono;
    n->death_time_ms = 0;
    n->seqno = 0;
    return n;
}

int mt_node_table_report(struct mt_node_table *t, const char *id,
                         uint64_t seqno, const struct mt_qty_list *avail,
                         const struct mt_node_usage *usage, int64_t now_mono,
                         int64_t now_wall)
{
    struct mt_node *n = mt_node_table_find(t, id);

    if (!n || n->state != MT_NODE_ALIVE)
        return -MT_ENOENT;
    if (avail) {
        /* Only resources the node declared; clamp to [0, total]. */
        for (size_t i = 0; i < avail->n; i++) {
            int64_t tot = mt_qty_list_get(&n->total, avail->v[i].name);
            int64_t q = avail->v[i].qty;
            if (tot < 0)
                continue;
            mt_qty_list_set(&n->avail, avail->v[i].name,
                            q < 0 ? 0 : (q > tot ? tot : q));
        }
    }
    if (usage)
        n->usage = *usage;
    n->seqno = seqno;
    n->last_seen_mono = now_mono;
    n->last_report_ms = now_wall;
    return 0;
}

void mt_node_table_set_gpus(struct mt_node *node, const struct mt_node_gpu *v,
                            size_t n)
{
    MT_ASSERT(node->magic == MT_NODE_MAGIC);
    if (n > MT_NODE_MAX_GPUS)
        n = MT_NODE_MAX_GPUS;
    MT_FREE(node->gpus);
    node->n_gpus = n;
    if (n == 0)
        return;
    node->gpus = mt_xmalloc(n * sizeof(*node->gpus));
    memcpy(node->gpus, v, n * sizeof(*node->gpus));
}

/* Drop the oldest dead nodes beyond the limit. */
void mt_node_table_trim(struct mt_node_table *t)
{
    size_t dead = mt_node_table_count(t, MT_NODE_DEAD);

    while (dead > MT_NODE_TABLE_MAX_DEAD) {
        size_t oldest = t->n;
        for (size_t i = 0; i < t->n; i++)
            if (t->v[i]->state == MT_NODE_DEAD &&
                (oldest == t->n ||
                 t->v[i]->death_order < t->v[oldest]->death_order))
                oldest = i;
        mt_strindex_remove(&t->by_id, t->v, oldest);
        node_free(t->v[oldest]);
        t->v[oldest] = t->v[--t->n];
        dead--;
    }
}

void mt_node_table_mark_dead(struct mt_node_table *t, struct mt_node *n,
                             const char *reason, int64_t now_wall)
{
    MT_ASSERT(n->magic == MT_NODE_MAGIC);
    if (n->state == MT_NODE_DEAD)
        return;
    n->state = MT_NODE_DEAD;
    n->death_time_ms = now_wall;
    copy_str(&n->death_reason, reason);
    n->death_order = ++t->deaths;
    /* A dead node offers nothing. */
    for (size_t i = 0; i < n->avail.n; i++)
        n->avail.v[i].qty = 0;
    n->usage.cpu_percent = 0;
}

int mt_node_table_expire(struct mt_node_table *t, int64_t now_mono,
                         int64_t now_wall, int64_t timeout_ms, mt_node_fn fn,
                         void *arg)
{
    int died = 0;

    for (size_t i = 0; i < t->n; i++) {
        struct mt_node *n = t->v[i];
        char reason[96];

        if (n->state != MT_NODE_ALIVE ||
            now_mono - n->last_seen_mono <= timeout_ms)
            continue;
        snprintf(reason, sizeof(reason), "no report for %lld ms",
                 (long long)(now_mono - n->last_seen_mono));
        mt_node_table_mark_dead(t, n, reason, now_wall);
        died++;
        if (fn)
            fn(arg, n);
    }
    if (died)
        mt_node_table_trim(t);
    return died;
}

static void add_to(struct mt_qty_list *sum, const struct mt_qty_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        int64_t cur = mt_qty_list_get(sum, l->v[i].name);
        mt_qty_list_set(sum, l->v[i].name, (cur < 0 ? 0 : cur) + l->v[i].qty);
    }
}

void mt_node_table_totals(const struct mt_node_table *t,
                          struct mt_qty_list *total, struct mt_qty_list *avail)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->v[i]->state != MT_NODE_ALIVE)
            continue;
        add_to(total, &t->v[i]->total);
        add_to(avail, &t->v[i]->avail);
    }
}

size_t mt_node_table_count(const struct mt_node_table *t,
                           enum mt_node_state state)
{
    size_t c = 0;

    for (size_t i = 0; i < t->n; i++)
        c += t->v[i]->state == state;
    return c;
}

const char *mt_node_state_name(enum mt_node_state s)
{
    return s == MT_NODE_ALIVE ? "ALIVE" : s == MT_NODE_DEAD ? "DEAD" : "UNKNOWN";
}
