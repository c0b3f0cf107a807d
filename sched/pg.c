/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pg.c -- placement groups: atomic multi-bundle reservations.
 *
 * A bundle reserves its resources (and concrete GPU devices / TPU chips) on
 * one node; tasks scheduled into the bundle then allocate from that
 * reservation instead of from the node. Placement is all-or-nothing: the
 * unplaced bundles are reserved one by one and, if any cannot be, the ones
 * reserved in this attempt are returned before reporting "no room"
 * (single-threaded, so nobody sees the intermediate state).
 *
 * Strategies (bundles are placed greedily, biggest first):
 *   STRICT_PACK    one node fits the sum of all bundles and all selectors;
 *   PACK           try STRICT_PACK, else prefer nodes the group already uses;
 *   SPREAD         prefer nodes the group does not use yet, else any;
 *   STRICT_SPREAD  only nodes the group does not use yet.
 *
 * Node death: the lost bundles become unplaced (their resources died with
 * the node), grants inside them go stale, the others keep their places, and
 * the group is queued first for rescheduling under the same strategy
 * (STRICT_SPREAD still avoids the surviving bundles' nodes). TPU slice
 * groups are gangs: losing one host releases the whole group, which is then
 * re-reserved on another intact slice (slice.c).
 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

struct mt__pg *mt__pg_find(const struct mt_sched *s, uint64_t id)
{
    uint32_t slot = id ? mt__map_get(&s->pg_by_id, id) : MT__NONE;

    return slot == MT__NONE ? NULL : &s->pgs[slot];
}

/*
 * The queue always has room for every group slot (mt__pg_alloc grows it),
 * so queueing never fails, not even while a node dies.
 */
void mt__pgq_push(struct mt_sched *s, uint32_t slot)
{
    if (s->pgs[slot].queued)
        return;
    MT_ASSERT(s->npgq < s->pgq_cap);
    s->pgq[s->npgq++] = slot;
    s->pgs[slot].queued = true;
}

static int pgq_reserve(struct mt_sched *s, uint32_t need)
{
    uint32_t nc;
    uint32_t *nq;

    if (need <= s->pgq_cap)
        return 0;
    nc = s->pgq_cap ? s->pgq_cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    nq = realloc(s->pgq, nc * sizeof(*nq));
    if (!nq)
        return -MT_ENOMEM;
    s->pgq = nq;
    s->pgq_cap = nc;
    return 0;
}

static void pgq_push_front(struct mt_sched *s, uint32_t slot)
{
    if (s->pgs[slot].queued) {
        for (uint32_t i = 0; i < s->npgq; i++)
            if (s->pgq[i] == slot) {
                memmove(&s->pgq[1], &s->pgq[0], i * sizeof(*s->pgq));
                s->pgq[0] = slot;
                return;
            }
    }
    mt__pgq_push(s, slot);
    memmove(&s->pgq[1], &s->pgq[0], (s->npgq - 1) * sizeof(*s->pgq));
    s->pgq[0] = slot;
}

static void pgq_remove(struct mt_sched *s, uint32_t slot)
{
    for (uint32_t i = 0; i < s->npgq; i++)
        if (s->pgq[i] == slot) {
            memmove(&s->pgq[i], &s->pgq[i + 1],
                    (s->npgq - i - 1) * sizeof(*s->pgq));
            s->npgq--;
            break;
        }
    s->pgs[slot].queued = false;
}

/* ---- Bundle reservation ---- */

void mt__bundle_place(struct mt_sched *s, struct mt__bundle *b, uint32_t node,
                      const struct mt__alloc *at)
{
    if (at) {
        b->a = *at;
        mt__node_charge(s, node, &b->res, at);
    } else {
        mt__node_take(s, node, &b->res, &b->a);
    }
    b->node = node;
    b->gen++;
    for (int i = 0; i < b->res.n; i++)
        b->avail[i] = b->res.it[i].qty;
    memset(&b->inst, 0, sizeof(b->inst));
    b->inst.gpu_mask = b->a.gpus;
    for (uint32_t m = b->a.gpus; m; m &= m - 1)
        b->inst.gpu_free[__builtin_ctz(m)] = b->a.gpu_each;
    b->inst.tpu_mask = b->inst.tpu_free = b->a.tpu;
}

void mt__bundle_unplace(struct mt_sched *s, struct mt__bundle *b)
{
    if (b->node == MT__NONE)
        return;
    if (s->nodes[b->node].alive)
        mt__node_give(s, b->node, &b->res, &b->a);
    b->node = MT__NONE;
    b->gen++;
    memset(&b->a, 0, sizeof(b->a));
}

void mt__pg_release_all(struct mt_sched *s, struct mt__pg *pg)
{
    for (uint32_t i = 0; i < pg->nb; i++)
        if (pg->b[i].node != MT__NONE) {
            mt__bundle_unplace(s, &pg->b[i]);
            pg->unplaced++;
        }
}

static struct mt__req bundle_req(const struct mt__bundle *b)
{
    struct mt__req r = {&b->res, mt_res_set_mask(&b->res),
                        b->sel.n ? &b->sel : NULL};

    return r;
}

/* ---- Strategies ---- */

/* Nodes used by placed bundles; returns count (at most nb). */
static uint32_t used_nodes(const struct mt__pg *pg, uint32_t *out)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < pg->nb; i++) {
        uint32_t node = pg->b[i].node, j;

        if (node == MT__NONE)
            continue;
        for (j = 0; j < n && out[j] != node; j++)
            ;
        if (j == n)
            out[n++] = node;
    }
    return n;
}

/* The summed request of every unplaced bundle. RET 0 or -MT_ENOSPC. */
static int sum_unplaced(const struct mt__pg *pg, struct mt_res_set *sum,
                        const struct mt_sel **sels, uint32_t *nsels)
{
    mt_res_set_init(sum);
    *nsels = 0;
    for (uint32_t i = 0; i < pg->nb; i++) {
        const struct mt__bundle *b = &pg->b[i];

        if (b->node != MT__NONE)
            continue;
        for (int j = 0; j < b->res.n; j++)
            if (mt_res_set_add(sum, b->res.it[j].id, b->res.it[j].qty) < 0)
                return -MT_ENOSPC;
        if (b->sel.n)
            sels[(*nsels)++] = &b->sel;
    }
    /* The sum checks quantities; devices are checked bundle by bundle. */
    return 0;
}

static bool strict_pack_fits(struct mt_sched *s, struct mt__pg *pg,
                             uint32_t node)
{
    for (uint32_t i = 0; i < pg->nb; i++) {
        struct mt__bundle *b = &pg->b[i];
        struct mt__req r = bundle_req(b);

        if (b->node != MT__NONE)
            continue;
        if (!mt__node_fits(&s->nodes[node], &r))
            return false;
        mt__bundle_place(s, b, node, NULL);
    }
    return true;
}

/* Place every unplaced bundle on one node. RET 0 or -MT_EAGAIN. */
#define STRICT_PACK_TRIES 4

/*
 * Place every unplaced bundle on one node. The node is chosen on summed
 * quantities; if the bundles' devices then do not fit there one by one,
 * a few other nodes are tried. RET 0 or -MT_EAGAIN.
 */
static int try_strict_pack(struct mt_sched *s, struct mt__pg *pg,
                           uint32_t *used, uint32_t *placed, uint32_t *np)
{
    const struct mt_sel **sels = malloc(pg->nb * sizeof(*sels));
    uint32_t tried[STRICT_PACK_TRIES];
    struct mt__pick_ctx ctx = {tried, 0, NULL, 0};
    struct mt_res_set sum;
    struct mt__req r = {&sum, 0, NULL};
    int rc = -MT_EAGAIN;

    if (!sels)
        return -MT_ENOMEM;
    if (sum_unplaced(pg, &sum, sels, &ctx.nsels) < 0)
        goto out;
    ctx.sels = sels;
    r.kinds = mt_res_set_mask(&sum);
    while (rc < 0 && ctx.nexclude < STRICT_PACK_TRIES) {
        uint32_t node;

        if (used_nodes(pg, used) && pg->strategy == MT_SCHED_PG_STRICT_PACK)
            node = ctx.nexclude == 0 && mt__node_fits(&s->nodes[used[0]], &r)
                       ? used[0]
                       : MT__NONE;
        else
            node = mt__pick(s, &r, MT_PLACE_DEFAULT, &ctx);
        if (node == MT__NONE)
            break;
        *np = 0;
        for (uint32_t i = 0; i < pg->nb; i++)
            if (pg->b[i].node == MT__NONE)
                placed[(*np)++] = i;
        if (strict_pack_fits(s, pg, node)) {
            rc = 0;
            break;
        }
        for (uint32_t i = 0; i < *np; i++)
            mt__bundle_unplace(s, &pg->b[placed[i]]);
        *np = 0;
        tried[ctx.nexclude++] = node;
    }
out:
    free(sels);
    return rc;
}

static uint32_t pick_preferring(struct mt_sched *s, const struct mt__req *r,
                                const uint32_t *used, uint32_t nused)
{
    for (uint32_t i = 0; i < nused; i++)
        if (mt__node_fits(&s->nodes[used[i]], r))
            return used[i];
    return mt__pick(s, r, MT_PLACE_DEFAULT, NULL);
}

static uint32_t pick_avoiding(struct mt_sched *s, const struct mt__req *r,
                              const uint32_t *used, uint32_t nused, bool strict)
{
    struct mt__pick_ctx ctx = {used, nused, NULL, 0};
    uint32_t node = mt__pick(s, r, MT_PLACE_DEFAULT, &ctx);

    if (node == MT__NONE && !strict)
        node = mt__pick(s, r, MT_PLACE_DEFAULT, NULL);
    return node;
}

/* Bigger bundles first: accelerators, then CPU, then index. */
struct bundle_key {
    int64_t accel;
    int64_t cpu;
    uint32_t idx;
};

static int bundle_cmp(const void *a, const void *b)
{
    const struct bundle_key *x = a, *y = b;

    if (x->accel != y->accel)
        return x->accel > y->accel ? -1 : 1;
    if (x->cpu != y->cpu)
        return x->cpu > y->cpu ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The unplaced bundles, biggest first, into order[]. RET how many. */
static int sort_unplaced(const struct mt__pg *pg, uint32_t *order)
{
    struct bundle_key *k = malloc(pg->nb * sizeof(*k));
    uint32_t n = 0;

    if (!k)
        return -MT_ENOMEM;
    for (uint32_t i = 0; i < pg->nb; i++) {
        const struct mt_res_set *r = &pg->b[i].res;

        if (pg->b[i].node != MT__NONE)
            continue;
        k[n].accel = mt_res_set_get(r, MT_RES_GPU) +
                     mt_res_set_get(r, MT_RES_TPU);
        k[n].cpu = mt_res_set_get(r, MT_RES_CPU);
        k[n++].idx = i;
    }
    qsort(k, n, sizeof(*k), bundle_cmp);
    for (uint32_t i = 0; i < n; i++)
        order[i] = k[i].idx;
    free(k);
    return (int)n;
}

static void add_used(uint32_t *used, uint32_t *nused, uint32_t node)
{
    for (uint32_t i = 0; i < *nused; i++)
        if (used[i] == node)
            return;
    used[(*nused)++] = node;
}

/*
 * Greedy, bundle by bundle, biggest first (a small bundle placed first
 * must not take the only node a big one fits on). RET 0 or -MT_EAGAIN.
 */
static int try_greedy(struct mt_sched *s, struct mt__pg *pg, uint32_t *used,
                      uint32_t *order, uint32_t *placed, uint32_t *np)
{
    uint32_t nused = used_nodes(pg, used);
    int no = sort_unplaced(pg, order);

    if (no < 0)
        return no;
    for (int k = 0; k < no; k++) {
        struct mt__bundle *b = &pg->b[order[k]];
        struct mt__req r = bundle_req(b);
        uint32_t node;

        if (pg->strategy == MT_SCHED_PG_PACK)
            node = pick_preferring(s, &r, used, nused);
        else
            node = pick_avoiding(s, &r, used, nused,
                                 pg->strategy == MT_SCHED_PG_STRICT_SPREAD);
        if (node == MT__NONE)
            return -MT_EAGAIN;
        mt__bundle_place(s, b, node, NULL);
        placed[(*np)++] = order[k];
        add_used(used, &nused, node);
    }
    return 0;
}

static int place_unplaced(struct mt_sched *s, struct mt__pg *pg)
{
    uint32_t *placed = malloc(pg->nb * 3 * sizeof(*placed));
    uint32_t np = 0;
    int rc = -MT_EAGAIN;

    if (!placed)
        return -MT_ENOMEM;
    if (pg->strategy == MT_SCHED_PG_STRICT_PACK || pg->strategy == MT_SCHED_PG_PACK)
        rc = try_strict_pack(s, pg, placed + pg->nb, placed, &np);
    if (rc == -MT_EAGAIN && pg->strategy != MT_SCHED_PG_STRICT_PACK) {
        for (uint32_t i = 0; i < np; i++)
            mt__bundle_unplace(s, &pg->b[placed[i]]);
        np = 0;
        rc = try_greedy(s, pg, placed + pg->nb, placed + 2 * pg->nb, placed,
                        &np);
    }
    if (rc < 0)
        for (uint32_t i = 0; i < np; i++)
            mt__bundle_unplace(s, &pg->b[placed[i]]);
    else
        pg->unplaced = 0;
    free(placed);
    return rc;
}

/* ---- Feasibility ---- */

static bool any_feasible(const struct mt_sched *s, const struct mt__req *r,
                         const struct mt_sel *const *sels, uint32_t nsels)
{
    for (uint32_t n = 0; n < s->nnodes; n++) {
        const struct mt__node *nd = &s->nodes[n];
        uint32_t i;

        if (!mt__node_feasible(nd, r))
            continue;
        for (i = 0; i < nsels && mt_sel_match(sels[i], &nd->labels); i++)
            ;
        if (i == nsels)
            return true;
    }
    return false;
}

int mt__pg_feasible(const struct mt_sched *s, const struct mt__pg *pg)
{
    if (pg->is_slice)
        return mt__slice_feasible(s, pg);
    if (pg->strategy == MT_SCHED_PG_STRICT_PACK) {
        const struct mt_sel *sels[MT_SCHED_PG_MAX_BUNDLES];
        struct mt_res_set sum;
        uint32_t ns;
        struct mt__req r = {&sum, 0, NULL};

        if (sum_unplaced(pg, &sum, sels, &ns) < 0)
            return -MT_EINFEASIBLE;
        r.kinds = mt_res_set_mask(&sum);
        return any_feasible(s, &r, sels, ns) ? 0 : -MT_EINFEASIBLE;
    }
    if (pg->strategy == MT_SCHED_PG_STRICT_SPREAD && pg->nb > s->nalive)
        return -MT_EINFEASIBLE;
    for (uint32_t i = 0; i < pg->nb; i++) {
        struct mt__req r = bundle_req(&pg->b[i]);

        if (!any_feasible(s, &r, NULL, 0))
            return -MT_EINFEASIBLE;
    }
    return 0;
}

int mt__pg_try_place(struct mt_sched *s, uint32_t slot)
{
    struct mt__pg *pg = &s->pgs[slot];
    int rc;

    if (pg->unplaced == 0)
        return 0;
    rc = pg->is_slice ? mt__slice_try_place(s, slot) : place_unplaced(s, pg);
    if (rc == 0) {
        pg->state = MT_SCHED_PG_CREATED;
        pg->reported = false;
        return 0;
    }
    if (rc != -MT_EAGAIN)
        return rc;
    /* Feasibility only changes when nodes join or die. */
    if (pg->feas_epoch != s->epoch + 1) {
        pg->feas = mt__pg_feasible(s, pg);
        pg->feas_epoch = s->epoch + 1;
    }
    return pg->feas < 0 ? -MT_EINFEASIBLE : rc;
}

/* ---- Public API ---- */

int mt__pg_bundles_copy(struct mt_sched *s, struct mt__pg *pg,
                        const struct mt_pg_spec *spec)
{
    int nn = mt_res_names_count(s->names);

    pg->b = calloc(spec->nbundles, sizeof(*pg->b));
    if (!pg->b)
        return -MT_ENOMEM;
    pg->nb = (uint32_t)spec->nbundles;
    for (size_t i = 0; i < spec->nbundles; i++) {
        const struct mt_bundle_spec *bs = &spec->bundles[i];
        struct mt__bundle *b = &pg->b[i];
        int rc;

        if (bs->res.n == 0 || bs->res.n > MT_RES_SET_MAX)
            return -MT_EINVAL;
        if ((rc = mt_res_set_validate(&bs->res, nn)) < 0)
            return rc;
        for (int j = 0; j < bs->res.n; j++)
            b->res.it[j] = bs->res.it[j];
        b->res.n = bs->res.n;
        if ((rc = mt_sel_compile(s->strs, bs->selector, &b->sel)) < 0)
            return rc;
        b->node = MT__NONE;
    }
    pg->unplaced = pg->nb;
    return 0;
}

/* A fresh slot for id. RET 0, -MT_EEXIST, -MT_ENOMEM. */
int mt__pg_alloc(struct mt_sched *s, uint64_t id, uint32_t *out)
{
    uint32_t slot;

    if (mt__pg_find(s, id))
        return -MT_EEXIST;
    if (pgq_reserve(s, s->npgs + 1) < 0)
        return -MT_ENOMEM;
    if (s->pg_free != MT__NONE) {
        slot = s->pg_free;
        s->pg_free = s->pgs[slot].next_free;
    } else {
        if (s->npgs == s->pgs_cap) {
            uint32_t nc = s->pgs_cap ? s->pgs_cap * 2 : 64;
            struct mt__pg *np = realloc(s->pgs, nc * sizeof(*np));

            if (!np)
                return -MT_ENOMEM;
            s->pgs = np;
            s->pgs_cap = nc;
        }
        slot = s->npgs++;
        s->pgs[slot].gen = 0;
    }
    {
        uint32_t gen = s->pgs[slot].gen + 1;

        memset(&s->pgs[slot], 0, sizeof(s->pgs[slot]));
        s->pgs[slot].gen = gen;
    }
    s->pgs[slot].id = id;
    s->pgs[slot].used = true;
    if (mt__map_put(&s->pg_by_id, id, slot) < 0) {
        s->pgs[slot].used = false;
        s->pgs[slot].next_free = s->pg_free;
        s->pg_free = slot;
        return -MT_ENOMEM;
    }
    *out = slot;
    return 0;
}

void mt__pg_free_slot(struct mt_sched *s, uint32_t slot)
{
    struct mt__pg *pg = &s->pgs[slot];

    mt__map_del(&s->pg_by_id, pg->id);
    free(pg->b);
    pg->b = NULL;
    pg->nb = 0;
    pg->used = false;
    pg->gen++;
    pg->next_free = s->pg_free;
    s->pg_free = slot;
}

/* Shared tail of create and slice reserve: try now, else queue. */
int mt__pg_start(struct mt_sched *s, uint32_t slot, uint64_t now_ms)
{
    int rc;

    s->pgs[slot].submit_ms = now_ms;
    s->pgs[slot].state = MT_SCHED_PG_PENDING;
    rc = mt__pg_try_place(s, slot);
    if (rc == -MT_ENOMEM) {
        mt__pg_free_slot(s, slot);
        return rc;
    }
    if (rc == 0)
        return 0;
    mt__pgq_push(s, slot);
    s->pgs[slot].reported = rc == -MT_EINFEASIBLE;
    return rc == -MT_EINFEASIBLE ? rc : -MT_EAGAIN;
}

int mt_sched_pg_create(struct mt_sched *s, const struct mt_pg_spec *spec,
                       uint64_t now_ms)
{
    uint32_t slot;
    int rc;

    if (!spec || spec->id == 0 ||
        (unsigned)spec->strategy >= MT_SCHED_PG_STRATEGY_COUNT ||
        spec->nbundles == 0 || spec->nbundles > MT_SCHED_PG_MAX_BUNDLES ||
        !spec->bundles)
        return -MT_EINVAL;
    if ((rc = mt__pg_alloc(s, spec->id, &slot)) < 0)
        return rc;
    s->pgs[slot].strategy = (uint8_t)spec->strategy;
    if ((rc = mt__pg_bundles_copy(s, &s->pgs[slot], spec)) < 0) {
        mt__pg_free_slot(s, slot);
        return rc;
    }
    return mt__pg_start(s, slot, now_ms);
}

int mt_sched_pg_remove(struct mt_sched *s, uint64_t id)
{
    struct mt__pg *pg = mt__pg_find(s, id);
    uint32_t slot;

    if (!pg)
        return -MT_ENOENT;
    slot = (uint32_t)(pg - s->pgs);
    mt__pg_release_all(s, pg);
    if (pg->is_slice)
        mt__slice_release(s, slot);
    if (pg->queued)
        pgq_remove(s, slot);
    mt__pg_free_slot(s, slot);
    return 0;
}

void mt__pg_on_node_dead(struct mt_sched *s, uint32_t node)
{
    for (uint32_t slot = 0; slot < s->npgs; slot++) {
        struct mt__pg *pg = &s->pgs[slot];
        bool hit = false;

        if (!pg->used)
            continue;
        for (uint32_t i = 0; i < pg->nb; i++)
            if (pg->b[i].node == node) {
                /* The node's resources are gone: nothing to give back. */
                pg->b[i].node = MT__NONE;
                pg->b[i].gen++;
                pg->unplaced++;
                hit = true;
            }
        if (!hit)
            continue;
        if (pg->is_slice) {
            mt__pg_release_all(s, pg);
            mt__slice_release(s, slot);
        }
        pg->state = MT_SCHED_PG_RESCHEDULING;
        pgq_push_front(s, slot);
    }
}

int mt_sched_pg_state(const struct mt_sched *s, uint64_t id,
                      enum mt_sched_pg_state *state)
{
    const struct mt__pg *pg = mt__pg_find(s, id);

    if (!pg)
        return -MT_ENOENT;
    *state = (enum mt_sched_pg_state)pg->state;
    return 0;
}

int mt_sched_pg_bundle(const struct mt_sched *s, uint64_t id, uint32_t idx,
                       struct mt_bundle_info *out)
{
    const struct mt__pg *pg = mt__pg_find(s, id);

    if (!pg || idx >= pg->nb)
        return -MT_ENOENT;
    out->node = pg->b[idx].node == MT__NONE ? MT_NODE_NONE : pg->b[idx].node;
    out->gpus = pg->b[idx].a.gpus;
    out->tpu_chips = pg->b[idx].a.tpu;
    out->res = pg->b[idx].res;
    return 0;
}

/* ---- Tasks inside bundles ---- */

/* 0 fits now, -MT_EAGAIN not now, -MT_EINFEASIBLE never. */
static int bundle_fits(const struct mt_sched *s, const struct mt__bundle *b,
                       const struct mt__req *r)
{
    int64_t gpu = 0, tpu = 0;
    bool now = b->node != MT__NONE;

    for (int i = 0; i < r->res->n; i++) {
        int j;

        for (j = 0; j < b->res.n && b->res.it[j].id != r->res->it[i].id; j++)
            ;
        if (j == b->res.n || b->res.it[j].qty < r->res->it[i].qty)
            return -MT_EINFEASIBLE;
        now = now && b->avail[j] >= r->res->it[i].qty;
        gpu = r->res->it[i].id == MT_RES_GPU ? r->res->it[i].qty : gpu;
        tpu = r->res->it[i].id == MT_RES_TPU ? r->res->it[i].qty : tpu;
    }
    if (!now)
        return -MT_EAGAIN;
    if (r->sel && !mt_sel_match(r->sel, &s->nodes[b->node].labels))
        return -MT_EAGAIN;
    if ((gpu || tpu) &&
        !mt__inst_fits(&b->inst, s->nodes[b->node].ntpu, gpu, tpu))
        return -MT_EAGAIN;
    return 0;
}

static void bundle_take(struct mt_sched *s, struct mt__pg *pg, uint32_t bi,
                        const struct mt__req *r, struct mt__grant *g)
{
    struct mt__bundle *b = &pg->b[bi];
    int64_t gpu = 0, tpu = 0;

    for (int i = 0; i < r->res->n; i++) {
        for (int j = 0; j < b->res.n; j++)
            if (b->res.it[j].id == r->res->it[i].id)
                b->avail[j] -= r->res->it[i].qty;
        gpu = r->res->it[i].id == MT_RES_GPU ? r->res->it[i].qty : gpu;
        tpu = r->res->it[i].id == MT_RES_TPU ? r->res->it[i].qty : tpu;
    }
    mt__inst_take(&b->inst, s->nodes[b->node].ntpu, gpu, tpu, &g->a);
    g->node = b->node;
    g->pg = (uint32_t)(pg - s->pgs);
    g->pg_gen = pg->gen;
    g->bundle = bi;
    g->bundle_gen = b->gen;
    g->res = *r->res;
}

int mt__bundle_alloc(struct mt_sched *s, uint32_t slot, int32_t bundle,
                     const struct mt__req *r, uint32_t gslot)
{
    struct mt__pg *pg = &s->pgs[slot];
    uint32_t lo = bundle < 0 ? 0 : (uint32_t)bundle;
    uint32_t hi = bundle < 0 ? pg->nb : (uint32_t)bundle + 1;
    int best = -MT_EINFEASIBLE;

    for (uint32_t i = lo; i < hi; i++) {
        int rc = bundle_fits(s, &pg->b[i], r);

        if (rc == 0) {
            bundle_take(s, pg, i, r, &s->grants[gslot]);
            return 0;
        }
        if (rc == -MT_EAGAIN)
            best = rc;
    }
    return best;
}
