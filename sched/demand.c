/* SPDX-License-Identifier: Apache-2.0 */
/*
 * demand.c -- pending demand grouped by resource shape, for manta status.
 *
 * Rows merge every pending class with the same shape (whatever its
 * priority, selector or strategy) and feasibility, and every pending group
 * with the same first-bundle shape, bundle count and strategy. The format
 * follows the anchor system's status output:
 *    {CPU: 1}: 385+ pending tasks/actors
 *    {CPU: 1} * 4 (PACK): 1+ pending placement groups
 */
#include "sched/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pg_strategy_names[MT_SCHED_PG_STRATEGY_COUNT] = {
    "PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD",
};

static bool same_row(const struct mt_demand *a, const struct mt_demand *b)
{
    return a->kind == b->kind && a->infeasible == b->infeasible &&
           a->nbundles == b->nbundles && a->strategy == b->strategy &&
           mt_res_set_equal(&a->shape, &b->shape);
}

/* Merge row into rows[0..*n); RET false when rows is full. */
static bool add_row(struct mt_demand *rows, size_t *n, size_t cap,
                    const struct mt_demand *row)
{
    for (size_t i = 0; i < *n; i++)
        if (same_row(&rows[i], row)) {
            rows[i].count += row->count;
            return true;
        }
    if (*n == cap)
        return false;
    rows[(*n)++] = *row;
    return true;
}

static int row_cmp(const void *a, const void *b)
{
    const struct mt_demand *x = a, *y = b;

    return x->count > y->count ? -1 : x->count < y->count;
}

static size_t collect(const struct mt_sched *s, struct mt_demand *rows,
                      size_t cap)
{
    size_t n = 0;

    for (uint32_t i = 0; i < s->nactive; i++) {
        const struct mt__class *c = &s->classes[s->active[i]];
        struct mt_demand row;

        memset(&row, 0, sizeof(row));
        row.kind = MT_DECISION_TASK;
        row.shape = c->key.res;
        row.count = c->n;
        row.infeasible = c->feas_epoch == s->epoch && c->feas < 0;
        add_row(rows, &n, cap, &row);
    }
    for (uint32_t i = 0; i < s->npgq; i++) {
        const struct mt__pg *pg = &s->pgs[s->pgq[i]];
        struct mt_demand row;

        memset(&row, 0, sizeof(row));
        row.kind = MT_DECISION_PG;
        row.shape = pg->b[0].res;
        row.count = 1;
        row.nbundles = pg->nb;
        row.strategy = (enum mt_sched_pg_strategy)pg->strategy;
        row.infeasible = pg->reported;
        add_row(rows, &n, cap, &row);
    }
    return n;
}

int mt_sched_demand(const struct mt_sched *s, struct mt_demand *out,
                    size_t max)
{
    size_t cap = s->nactive + s->npgq + 1, n;
    struct mt_demand *rows;

    if (max == 0)
        return 0;
    if (!out)
        return -MT_EINVAL;
    rows = malloc(cap * sizeof(*rows));
    if (!rows)
        return -MT_ENOMEM;
    n = collect(s, rows, cap);
    qsort(rows, n, sizeof(*rows), row_cmp);
    if (n > max)
        n = max;
    memcpy(out, rows, n * sizeof(*rows));
    free(rows);
    return (int)n;
}

int mt_sched_demand_format(const struct mt_sched *s, char *buf, size_t len)
{
    struct mt_demand rows[64];
    int n = mt_sched_demand(s, rows, 64);
    size_t off = 0;

    if (len)
        buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        char shape[256];
        char *at = buf + (off < len ? off : len);
        size_t room = off < len ? len - off : 0;
        const char *what = rows[i].infeasible ? "infeasible" : "pending";
        int w;

        mt_res_set_format(s->names, &rows[i].shape, shape, sizeof(shape));
        if (rows[i].kind == MT_DECISION_TASK)
            w = snprintf(at, room, " %s: %u+ %s tasks/actors\n", shape,
                         rows[i].count, what);
        else
            w = snprintf(at, room, " %s * %u (%s): %u+ %s placement groups\n",
                         shape, rows[i].nbundles,
                         pg_strategy_names[rows[i].strategy], rows[i].count,
                         what);
        off += w > 0 ? (size_t)w : 0;
    }
    return (int)off;
}

/* ---- Fragmentation ---- */

struct want {
    struct mt__req r;
    uint32_t slice_pod;   /* slice bundles: pod type strtab id, else 0 */
};

static bool want_dup(const struct want *w, size_t n, const struct want *x)
{
    for (size_t i = 0; i < n; i++)
        if (w[i].slice_pod == x->slice_pod && w[i].r.sel == x->r.sel &&
            mt_res_set_equal(w[i].r.res, x->r.res))
            return true;
    return false;
}

static void want_add(struct want *w, size_t *n, size_t cap,
                     const struct want *x)
{
    if (*n < cap && !want_dup(w, *n, x))
        w[(*n)++] = *x;
}

static size_t pending_wants(const struct mt_sched *s, struct want *w,
                            size_t cap, struct mt_frag *f)
{
    uint64_t gpu = 1ULL << MT_RES_GPU, tpu = 1ULL << MT_RES_TPU;
    size_t n = 0;

    for (uint32_t i = 0; i < s->nactive; i++) {
        const struct mt__class *c = &s->classes[s->active[i]];
        struct want x = {{&c->key.res, c->kinds,
                          c->key.sel.n ? &c->key.sel : NULL}, 0};

        if (c->key.strategy == MT_PLACE_PG || !(c->kinds & (gpu | tpu)))
            continue;
        f->pending_gpu += c->kinds & gpu ? c->n : 0;
        f->pending_tpu += c->kinds & tpu ? c->n : 0;
        want_add(w, &n, cap, &x);
    }
    for (uint32_t i = 0; i < s->npgq; i++) {
        const struct mt__pg *pg = &s->pgs[s->pgq[i]];

        for (uint32_t b = 0; b < pg->nb; b++) {
            const struct mt__bundle *bd = &pg->b[b];
            uint64_t k = mt_res_set_mask(&bd->res);
            struct want x = {{&bd->res, k, bd->sel.n ? &bd->sel : NULL},
                             pg->is_slice ? pg->pod_type : 0};

            if (bd->node != MT__NONE || !(k & (gpu | tpu)))
                continue;
            f->pending_gpu += (k & gpu) != 0;
            f->pending_tpu += (k & tpu) != 0;
            want_add(w, &n, cap, &x);
        }
    }
    return n;
}

static bool usable(const struct mt_sched *s, const struct mt__node *nd,
                   const struct want *w, size_t nw, int id)
{
    for (size_t i = 0; i < nw; i++) {
        if (!(w[i].r.kinds >> id & 1) || !mt__node_fits(nd, &w[i].r))
            continue;
        if (w[i].slice_pod &&
            (nd->slice < 0 || s->slices[nd->slice].pod_type != w[i].slice_pod ||
             s->slices[nd->slice].held_by != MT__NONE))
            continue;
        return true;
    }
    return false;
}

int mt_sched_fragmentation(const struct mt_sched *s, struct mt_frag *f)
{
    size_t cap = 256, nw;
    struct want *w = malloc(cap * sizeof(*w));

    memset(f, 0, sizeof(*f));
    if (!w)
        return -MT_ENOMEM;
    nw = pending_wants(s, w, cap, f);
    for (uint32_t n = 0; n < s->nnodes; n++) {
        const struct mt__node *nd = &s->nodes[n];
        uint32_t g = 0, t;

        if (!nd->alive || !(nd->ngpu | nd->ntpu))
            continue;
        for (int d = 0; d < nd->ngpu; d++)
            g += nd->inst.gpu_free[d] == MT_RES_SCALE;
        t = (uint32_t)__builtin_popcount(nd->inst.tpu_free);
        f->free_gpus += g;
        f->free_tpu_chips += t;
        if (g && !usable(s, nd, w, nw, MT_RES_GPU))
            f->stranded_gpus += g;
        if (t && !usable(s, nd, w, nw, MT_RES_TPU))
            f->stranded_tpu_chips += t;
    }
    free(w);
    return 0;
}

/* ---- Usage ---- */

static int64_t sat64(__int128 v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

int mt_sched_usage(const struct mt_sched *s, int id, struct mt_usage *u)
{
    __int128 total = 0, used = 0, rsv = 0, rsv_used = 0;

    if (id < 0 || id >= MT_RES_MAX || !u)
        return -MT_EINVAL;
    for (uint32_t n = 0; n < s->nnodes; n++)
        if (s->nodes[n].alive) {
            total += s->nodes[n].total[id];
            used += s->nodes[n].total[id] - s->nodes[n].avail[id];
        }
    for (uint32_t p = 0; p < s->npgs; p++)
        for (uint32_t b = 0; s->pgs[p].used && b < s->pgs[p].nb; b++) {
            const struct mt__bundle *bd = &s->pgs[p].b[b];

            if (bd->node == MT__NONE || !s->nodes[bd->node].alive)
                continue;
            for (int i = 0; i < bd->res.n; i++)
                if (bd->res.it[i].id == id) {
                    rsv += bd->res.it[i].qty;
                    rsv_used += bd->res.it[i].qty - bd->avail[i];
                }
        }
    u->total = sat64(total);
    u->used = sat64(used);
    u->pg_reserved = sat64(rsv);
    u->pg_used = sat64(rsv_used);
    return 0;
}
