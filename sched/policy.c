/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.c -- choosing a node for one request.
 *
 * DEFAULT (hybrid, after Ray's hybrid policy):
 *   1. pack: the first node, in pool order, whose utilization is below the
 *      spread threshold (0.5) and that fits. Work piles onto few nodes until
 *      they are half full, which keeps whole nodes free for big requests.
 *   2. top-k: otherwise look at nodes from the least loaded utilization
 *      bucket up, collect up to k that fit (k = top_k_fraction x nodes,
 *      at least 1, at most top_k_max) and take one at random.
 * Accelerator best fit: a DEFAULT request that asks for GPU or TPU goes to
 * the fullest node that fits instead (opts.accel_best_fit, on by default),
 * so partly used GPU/TPU nodes fill up first and whole nodes stay free for
 * 8-GPU tasks and whole hosts; the 50% spread rule would otherwise leave
 * every accelerator node half used.
 * SPREAD: round-robin over the nodes that fit, one cursor per pool.
 *
 * Accelerator nodes: a request without GPU or TPU first tries pools whose
 * nodes have neither; only when none fits does it use GPU/TPU nodes
 * (opts.avoid_accel_nodes).
 *
 * A selector with an EQ expression whose key=value few nodes carry (under
 * 1/8 of the live nodes) walks that label's posting list instead of the
 * pools, so pinning work to a slice, a rack or one node by label costs
 * O(nodes with the label), not O(cluster).
 *
 * Pools whose summed free quantities cannot cover the request, or in which
 * no member has that much of some resource free (per-pool histogram by bit
 * length of the free amount), are skipped in O(1), so a full or fragmented
 * cluster answers "no room" without scanning every node.
 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TOPK 64

static const struct mt__post empty_post = {NULL, 0, 0};

static bool excluded(const struct mt__pick_ctx *c, uint32_t node)
{
    if (!c)
        return false;
    for (uint32_t i = 0; i < c->nexclude; i++)
        if (c->exclude[i] == node)
            return true;
    return false;
}

static bool extra_sels_ok(const struct mt__pick_ctx *c,
                          const struct mt__node *n)
{
    for (uint32_t i = 0; c && i < c->nsels; i++)
        if (!mt_sel_match(c->sels[i], &n->labels))
            return false;
    return true;
}

static bool cand_ok(const struct mt_sched *s, uint32_t node,
                    const struct mt__req *r, const struct mt__pick_ctx *c)
{
    return !mt__reserved(s, node) && mt__node_fits(&s->nodes[node], r) &&
           !excluded(c, node) && extra_sels_ok(c, &s->nodes[node]);
}

static bool pool_ok(const struct mt__pool *p, const struct mt__req *r)
{
    if (p->n == 0 || (p->mask & r->kinds) != r->kinds)
        return false;
    for (int i = 0; i < r->res->n; i++) {
        int id = r->res->it[i].id;
        int64_t q = r->res->it[i].qty;

        /* Total free too small, or no member has that much free. */
        if (p->sum_avail[id] < q ||
            (p->hmax[id] < 63 && q / MT_RES_SCALE >> p->hmax[id] != 0))
            return false;
    }
    return true;
}

static uint32_t pick_pack(struct mt_sched *s, struct mt__pool *p,
                          const struct mt__req *r,
                          const struct mt__pick_ctx *c)
{
    uint32_t nw = (p->n + 63) / 64;

    for (uint32_t w = p->below_lo; w < nw; w++) {
        uint64_t bits = p->below[w];

        if (!bits && w == p->below_lo) {
            p->below_lo++;
            continue;
        }
        for (; bits; bits &= bits - 1) {
            uint32_t node = p->members[w * 64 + __builtin_ctzll(bits)];

            if (cand_ok(s, node, r, c))
                return node;
        }
    }
    return MT__NONE;
}

static uint32_t topk_k(const struct mt_sched *s, uint32_t nnodes)
{
    uint64_t k = (uint64_t)nnodes * s->o.top_k_fraction / MT_RES_SCALE;

    if (k < 1)
        k = 1;
    if (k > s->o.top_k_max)
        k = s->o.top_k_max;
    return k > MAX_TOPK ? MAX_TOPK : (uint32_t)k;
}

static uint32_t pick_topk(struct mt_sched *s, const uint32_t *pools,
                          uint32_t np, const struct mt__req *r,
                          const struct mt__pick_ctx *c, uint32_t k)
{
    uint32_t cand[MAX_TOPK], n = 0;

    for (int b = 0; b < MT__NB && n == 0; b++) {
        for (uint32_t i = 0; i < np && n < k; i++) {
            struct mt__pool *p = &s->pools[pools[i]];
            uint32_t m = p->bkn[b], start;

            if (m == 0)
                continue;
            start = (uint32_t)(mt__rand(s) % m);
            for (uint32_t j = 0; j < m && n < k; j++) {
                uint32_t node = p->bk[b][(start + j) % m];

                if (cand_ok(s, node, r, c))
                    cand[n++] = node;
            }
        }
    }
    return n ? cand[mt__rand(s) % n] : MT__NONE;
}

/* A TPU host whose slice is whole and idle: keep it for slice requests. */
static bool idle_slice_host(const struct mt_sched *s, uint32_t node)
{
    int32_t sl = s->nodes[node].slice;

    return sl >= 0 && s->slices[sl].busy_chips == 0;
}

/*
 * Best fit: the fullest node that fits, scanning buckets from the top.
 * TPU work first avoids hosts of idle slices, so partial-host grants do
 * not break up slices a slice reservation could take whole.
 */
static uint32_t pick_fullest(struct mt_sched *s, const uint32_t *pools,
                             uint32_t np, const struct mt__req *r,
                             const struct mt__pick_ctx *c)
{
    bool tpu = r->kinds >> MT_RES_TPU & 1;

    for (int pass = tpu ? 0 : 1; pass < 2; pass++)
        for (int b = MT__NB - 1; b >= 0; b--)
            for (uint32_t i = 0; i < np; i++) {
                struct mt__pool *p = &s->pools[pools[i]];

                for (uint32_t j = 0; j < p->bkn[b]; j++) {
                    uint32_t node = p->bk[b][j];

                    if ((pass || !idle_slice_host(s, node)) &&
                        cand_ok(s, node, r, c))
                        return node;
                }
            }
    return MT__NONE;
}

static uint32_t pick_spread(struct mt_sched *s, const uint32_t *pools,
                            uint32_t np, const struct mt__req *r,
                            const struct mt__pick_ctx *c)
{
    for (uint32_t i = 0; i < np; i++) {
        struct mt__pool *p = &s->pools[pools[i]];

        for (uint32_t j = 0; j < p->n; j++) {
            uint32_t pos = (p->spread_pos + j) % p->n;

            if (cand_ok(s, p->members[pos], r, c)) {
                p->spread_pos = pos + 1;
                return p->members[pos];
            }
        }
    }
    return MT__NONE;
}

/* Pools able to hold r, split into the preferred tier and the rest. */
static uint32_t tiers(const struct mt_sched *s, const struct mt__req *r,
                      uint32_t *out, uint32_t *ntier0)
{
    bool cpu_only = !(r->kinds & mt__kinds_accel()) && s->o.avoid_accel_nodes;
    uint32_t n = 0;

    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < s->npools; i++) {
            const struct mt__pool *p = &s->pools[i];

            if (!pool_ok(p, r) || (cpu_only && p->accel != (pass == 1)) ||
                (!cpu_only && pass == 1))
                continue;
            out[n++] = i;
        }
        if (pass == 0)
            *ntier0 = n;
    }
    return n;
}

static uint32_t pick_tier(struct mt_sched *s, const uint32_t *pools,
                          uint32_t np, const struct mt__req *r,
                          uint32_t strategy, const struct mt__pick_ctx *c)
{
    uint32_t nnodes = 0, node;

    if (np == 0)
        return MT__NONE;
    if (strategy == MT_PLACE_SPREAD)
        return pick_spread(s, pools, np, r, c);
    if (s->o.accel_best_fit && (r->kinds & mt__kinds_accel()))
        return pick_fullest(s, pools, np, r, c);
    for (uint32_t i = 0; i < np; i++) {
        node = pick_pack(s, &s->pools[pools[i]], r, c);
        if (node != MT__NONE)
            return node;
        nnodes += s->pools[pools[i]].n;
    }
    return pick_topk(s, pools, np, r, c, topk_k(s, nnodes));
}

/* ---- Selective label selectors: walk a posting list, not the pools ---- */

/*
 * The shortest posting list named by an EQ (or one-value IN) expression of
 * the selector, when it is short enough to beat the pool indexes.
 */
static const struct mt__post *selective_post(const struct mt_sched *s,
                                             const struct mt__req *r)
{
    const struct mt__post *best = NULL;

    for (int i = 0; r->sel && i < r->sel->n; i++) {
        const struct mt_sel_expr *e = &r->sel->e[i];
        const struct mt__post *p;

        if (!(e->op == MT_LABEL_EQ ||
              (e->op == MT_LABEL_IN && e->nvalues == 1)))
            continue;
        p = mt__post_for(s, e->key, e->values[0]);
        if (!p)
            return &empty_post;
        if (!best || p->n < best->n)
            best = p;
    }
    return best && (uint64_t)best->n * 8 < s->nalive ? best : NULL;
}

/*
 * The policy over a short candidate list: pack (first below threshold in
 * join order), else the least loaded, or the fullest for accelerator best
 * fit; CPU-only work tries nodes without accelerators first.
 */
static uint32_t pick_posting(struct mt_sched *s, const struct mt__post *p,
                             const struct mt__req *r, uint32_t strategy,
                             const struct mt__pick_ctx *c)
{
    bool cpu_only = !(r->kinds & mt__kinds_accel()) && s->o.avoid_accel_nodes;
    bool fullest = s->o.accel_best_fit && (r->kinds & mt__kinds_accel()) &&
                   strategy != MT_PLACE_SPREAD;

    for (int pass = cpu_only ? 0 : 1; pass < 2; pass++) {
        uint32_t best = MT__NONE;

        for (uint32_t i = 0; i < p->n; i++) {
            uint32_t node = p->nodes[i];
            const struct mt__node *n = &s->nodes[node];

            if (!n->alive || (pass == 0 && (n->kinds & mt__kinds_accel())) ||
                !cand_ok(s, node, r, c))
                continue;
            if (!fullest && strategy != MT_PLACE_SPREAD &&
                n->util < s->o.spread_threshold)
                return node;
            if (best == MT__NONE ||
                (fullest ? n->util > s->nodes[best].util
                         : n->util < s->nodes[best].util))
                best = node;
        }
        if (best != MT__NONE)
            return best;
    }
    return MT__NONE;
}

uint32_t mt__pick(struct mt_sched *s, const struct mt__req *r,
                  uint32_t strategy, const struct mt__pick_ctx *ctx)
{
    uint32_t stackbuf[64], *pools = stackbuf, np, n0, node;
    const struct mt__post *post = selective_post(s, r);

    if (post)
        return pick_posting(s, post, r, strategy, ctx);

    if (s->npools > 64) {
        pools = malloc(s->npools * sizeof(*pools));
        if (!pools)
            return MT__NONE;
    }
    np = tiers(s, r, pools, &n0);
    node = pick_tier(s, pools, n0, r, strategy, ctx);
    if (node == MT__NONE)
        node = pick_tier(s, pools + n0, np - n0, r, strategy, ctx);
    if (pools != stackbuf)
        free(pools);
    return node;
}

int mt__feasible(const struct mt_sched *s, const struct mt__req *r)
{
    for (uint32_t i = 0; i < s->npools; i++) {
        const struct mt__pool *p = &s->pools[i];

        if ((p->mask & r->kinds) != r->kinds)
            continue;
        for (uint32_t j = 0; j < p->n; j++)
            if (mt__node_feasible(&s->nodes[p->members[j]], r))
                return 0;
    }
    return -MT_EINFEASIBLE;
}
