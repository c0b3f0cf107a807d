/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check.c -- the accounting invariant, recomputed from scratch.
 *
 * For every live node and resource: available + bundle reservations + live
 * grants outside bundles == total, and 0 <= available <= total. Per GPU
 * device the free share plus every share granted or reserved on it is one
 * device; TPU chips are free, granted or reserved exactly once. Inside every
 * placed bundle the same holds against the bundle's reservation. Pool sums
 * must match their members. O(nodes + grants + bundles); for tests and the
 * simulator, not for the hot path.
 */
#include "sched/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct acct {
    int64_t used[MT_RES_MAX];
    int64_t gpu[MT_MAX_GPUS];
    uint32_t tpu;
    bool tpu_clash;
};

static void acct_add(struct acct *a, const struct mt_res_set *rs,
                     const struct mt__alloc *al)
{
    for (int i = 0; i < rs->n; i++)
        a->used[rs->it[i].id] += rs->it[i].qty;
    for (uint32_t m = al->gpus; m; m &= m - 1)
        a->gpu[__builtin_ctz(m)] += al->gpu_each;
    a->tpu_clash |= (a->tpu & al->tpu) != 0;
    a->tpu |= al->tpu;
}

static bool grant_live_in_bundle(const struct mt_sched *s,
                                 const struct mt__grant *g)
{
    const struct mt__pg *pg = &s->pgs[g->pg];

    return pg->used && pg->gen == g->pg_gen &&
           pg->b[g->bundle].gen == g->bundle_gen &&
           pg->b[g->bundle].node != MT__NONE;
}

static int fail(char *why, size_t len, const char *msg, uint32_t a, int b)
{
    if (why && len)
        snprintf(why, len, "%s (%u, %d)", msg, a, b);
    return -MT_ESTATE;
}

static int check_node(const struct mt__node *n, const struct acct *a,
                      uint32_t idx, char *why, size_t len)
{
    for (int id = 0; id < MT_RES_MAX; id++) {
        if (n->avail[id] < 0 || n->avail[id] > n->total[id])
            return fail(why, len, "node avail out of range", idx, id);
        if (n->avail[id] + a->used[id] != n->total[id])
            return fail(why, len, "node avail + used != total", idx, id);
    }
    for (int d = 0; d < n->ngpu; d++)
        if (n->inst.gpu_free[d] < 0 ||
            n->inst.gpu_free[d] + a->gpu[d] != MT_RES_SCALE)
            return fail(why, len, "gpu device share mismatch", idx, d);
    if (a->tpu_clash || (n->inst.tpu_free & a->tpu) ||
        (n->inst.tpu_free | a->tpu) != n->inst.tpu_mask)
        return fail(why, len, "tpu chips mismatch", idx, 0);
    return 0;
}

static int check_bundle(const struct mt__bundle *b, const struct acct *a,
                        uint32_t idx, char *why, size_t len)
{
    for (int j = 0; j < b->res.n; j++) {
        int64_t q = b->res.it[j].qty;

        if (b->avail[j] < 0 || b->avail[j] > q ||
            b->avail[j] + a->used[b->res.it[j].id] != q)
            return fail(why, len, "bundle avail mismatch", idx, j);
    }
    for (uint32_t m = b->a.gpus; m; m &= m - 1) {
        int d = __builtin_ctz(m);

        if (b->inst.gpu_free[d] + a->gpu[d] != b->a.gpu_each)
            return fail(why, len, "bundle gpu share mismatch", idx, d);
    }
    if (a->tpu_clash || (b->inst.tpu_free & a->tpu) ||
        (b->inst.tpu_free | a->tpu) != b->a.tpu)
        return fail(why, len, "bundle tpu chips mismatch", idx, 0);
    return 0;
}

static int check_bundles(const struct mt_sched *s, char *why, size_t len)
{
    for (uint32_t p = 0; p < s->npgs; p++) {
        const struct mt__pg *pg = &s->pgs[p];

        for (uint32_t i = 0; pg->used && i < pg->nb; i++) {
            const struct mt__bundle *b = &pg->b[i];
            struct acct a;
            int rc;

            if (b->node == MT__NONE)
                continue;
            memset(&a, 0, sizeof(a));
            for (uint32_t g = 0; g < s->ngrants; g++) {
                const struct mt__grant *gr = &s->grants[g];

                if (gr->live && gr->pg == p && gr->bundle == i &&
                    grant_live_in_bundle(s, gr))
                    acct_add(&a, &gr->res, &gr->a);
            }
            if ((rc = check_bundle(b, &a, p, why, len)) < 0)
                return rc;
        }
    }
    return 0;
}

static void node_usage(const struct mt_sched *s, struct acct *acc)
{
    for (uint32_t g = 0; g < s->ngrants; g++) {
        const struct mt__grant *gr = &s->grants[g];

        if (gr->live && gr->pg == MT__NONE && s->nodes[gr->node].alive)
            acct_add(&acc[gr->node], &gr->res, &gr->a);
    }
    for (uint32_t p = 0; p < s->npgs; p++)
        for (uint32_t i = 0; s->pgs[p].used && i < s->pgs[p].nb; i++) {
            const struct mt__bundle *b = &s->pgs[p].b[i];

            if (b->node != MT__NONE && s->nodes[b->node].alive)
                acct_add(&acc[b->node], &b->res, &b->a);
        }
}

static int check_pool(const struct mt_sched *s, uint32_t p, char *why,
                      size_t len)
{
    const struct mt__pool *pl = &s->pools[p];
    uint32_t (*hist)[MT__HB] = calloc(MT_RES_MAX, sizeof(*hist));
    __int128 sum[MT_RES_MAX] = {0};
    int rc = 0;

    if (!hist)
        return -MT_ENOMEM;
    for (uint32_t j = 0; j < pl->n; j++) {
        const struct mt__node *n = &s->nodes[pl->members[j]];

        for (int id = 0; id < MT_RES_MAX; id++) {
            sum[id] += n->avail[id];
            if (pl->mask >> id & 1)
                hist[id][mt__hist_bucket(n->avail[id])]++;
        }
    }
    for (int id = 0; id < MT_RES_MAX && rc == 0; id++) {
        if (sum[id] != pl->sum_avail[id])
            rc = fail(why, len, "pool sum mismatch", p, id);
        for (int b = 0; b < MT__HB && rc == 0; b++)
            if (hist[id][b] != pl->hist[id][b] ||
                (hist[id][b] && b > pl->hmax[id]))
                rc = fail(why, len, "pool histogram mismatch", p, id);
    }
    free(hist);
    return rc;
}

static int check_pools(const struct mt_sched *s, char *why, size_t len)
{
    for (uint32_t p = 0; p < s->npools; p++) {
        int rc = check_pool(s, p, why, len);

        if (rc < 0)
            return rc;
    }
    return 0;
}

static int check_slices(const struct mt_sched *s, char *why, size_t len)
{
    for (uint32_t i = 0; i < s->nslices; i++) {
        const struct mt__slice *sl = &s->slices[i];
        uint32_t busy = 0;

        for (uint32_t w = 0; w < sl->nworkers; w++) {
            const struct mt__node *n;

            if (sl->workers[w] == MT__NONE)
                continue;
            n = &s->nodes[sl->workers[w]];
            if (n->alive && n->slice == (int32_t)i)
                busy += (uint32_t)__builtin_popcount(n->inst.tpu_mask &
                                                     ~n->inst.tpu_free);
        }
        if (busy != sl->busy_chips)
            return fail(why, len, "slice busy chips mismatch", i, 0);
    }
    return 0;
}

int mt_sched_check(const struct mt_sched *s, char *why, size_t len)
{
    struct acct *acc = calloc(s->nnodes ? s->nnodes : 1, sizeof(*acc));
    int rc = 0;

    if (!acc)
        return -MT_ENOMEM;
    node_usage(s, acc);
    for (uint32_t n = 0; n < s->nnodes && rc == 0; n++)
        if (s->nodes[n].alive)
            rc = check_node(&s->nodes[n], &acc[n], n, why, len);
    free(acc);
    if (rc == 0)
        rc = check_bundles(s, why, len);
    if (rc == 0)
        rc = check_pools(s, why, len);
    if (rc == 0)
        rc = check_slices(s, why, len);
    return rc;
}
