/* SPDX-License-Identifier: Apache-2.0 */
/*
 * adopt.c -- charging what already exists: the grants and placement-group
 * bundles a restarted head finds still running.
 *
 * A placement chooses a node, then the devices on it. Adoption is told
 * both and only checks and charges: the named devices become the same
 * struct mt__alloc a placement would have produced (alloc_of), are checked
 * against the free instances of the node or bundle, and are charged by
 * mt__node_charge()/mt__inst_charge(), the twins of take that do not
 * choose. So pool indexes, slice chip counts, usage and mt_sched_check()
 * see an adopted grant exactly as a placed one, and
 * mt_sched_on_task_finished() gives it back the usual way.
 *
 * Every check runs before anything is charged, so a failed adoption leaves
 * the scheduler as it was. A group's bundles are reserved one by one and,
 * if one does not fit, those reserved so far are given back (as pg.c does
 * when placing), so group adoption is all-or-nothing too.
 *
 * Policy is not re-checked (strategies, selectors, priorities, suspect
 * marks): the work already runs there. Accounting always is.
 *
 * TPU slice groups are adopted in slice.c (mt_sched_slice_adopt), beside
 * the slice bookkeeping they need.
 *
 * THREAD: not thread safe (one loop thread), as the rest of sched/.
 */
#include "sched/sched_int.h"

#include "sched/tpu.h"

#include <string.h>

/* ---- Devices ---- */

/* Devices a placement of res would hold: one per whole GPU, one for a
 * fraction, and chips equal to the TPU count. */
static uint32_t gpu_devices(int64_t gpu)
{
    if (gpu <= 0)
        return 0;
    return gpu < MT_RES_SCALE ? 1 : (uint32_t)(gpu / MT_RES_SCALE);
}

/*
 * The allocation a placement of res on n would have recorded, built from
 * the devices named by the caller. RET 0 or -MT_EINVAL (devices the node
 * lacks, a count not matching res, chips not an aligned block).
 */
static int alloc_of(const struct mt__node *n, const struct mt_res_set *res,
                    uint32_t gpus, uint32_t chips, struct mt__alloc *a)
{
    int64_t gpu = mt_res_set_get(res, MT_RES_GPU);
    uint32_t k = (uint32_t)(mt_res_set_get(res, MT_RES_TPU) / MT_RES_SCALE);
    uint32_t ids[MT_MAX_TPU_CHIPS], nid = 0;

    memset(a, 0, sizeof(*a));
    if ((gpus & ~n->inst.gpu_mask) || (chips & ~n->inst.tpu_mask))
        return -MT_EINVAL;
    if ((uint32_t)__builtin_popcount(gpus) != gpu_devices(gpu) ||
        (uint32_t)__builtin_popcount(chips) != k)
        return -MT_EINVAL;
    for (uint32_t m = chips; m; m &= m - 1)
        ids[nid++] = (uint32_t)__builtin_ctz(m);
    if (k && mt_tpu_host_chips_check(n->ntpu, ids, nid) < 0)
        return -MT_EINVAL;
    a->gpus = gpus;
    a->gpu_each = gpus ? (gpu < MT_RES_SCALE ? gpu : MT_RES_SCALE) : 0;
    a->tpu = chips;
    return 0;
}

/* Room on n for res: on the devices of a, or on any (a NULL) as
 * placement would find them. Suspect marks and selectors do not apply. */
static bool node_room(const struct mt__node *n, const struct mt_res_set *res,
                      const struct mt__alloc *a)
{
    for (int i = 0; i < res->n; i++)
        if (n->avail[res->it[i].id] < res->it[i].qty)
            return false;
    if (a)
        return mt__inst_can_charge(&n->inst, a);
    return mt__inst_fits(&n->inst, n->ntpu, mt_res_set_get(res, MT_RES_GPU),
                         mt_res_set_get(res, MT_RES_TPU));
}

/* ---- Grants ---- */

/* Index of id in the bundle's reservation, or -1. */
static int bundle_item(const struct mt__bundle *b, uint16_t id)
{
    for (int j = 0; j < b->res.n; j++)
        if (b->res.it[j].id == id)
            return j;
    return -1;
}

/* 0 when the bundle's leftovers and the devices a can hold res, else
 * -MT_EAGAIN (a resource it does not reserve counts as no room). */
static int bundle_room(const struct mt__bundle *b, const struct mt_res_set *res,
                       const struct mt__alloc *a)
{
    for (int i = 0; i < res->n; i++) {
        int j = bundle_item(b, res->it[i].id);

        if (j < 0 || b->avail[j] < res->it[i].qty)
            return -MT_EAGAIN;
    }
    return mt__inst_can_charge(&b->inst, a) ? 0 : -MT_EAGAIN;
}

static void bundle_charge(struct mt__bundle *b, const struct mt_res_set *res,
                          const struct mt__alloc *a)
{
    for (int i = 0; i < res->n; i++)
        b->avail[bundle_item(b, res->it[i].id)] -= res->it[i].qty;
    mt__inst_charge(&b->inst, a);
}

static int adopt_in_bundle(struct mt_sched *s, const struct mt_res_set *res,
                           const struct mt_grant *want,
                           const struct mt__alloc *a, struct mt_grant *out)
{
    struct mt__pg *pg = mt__pg_find(s, want->pg);
    struct mt__bundle *b;
    struct mt__grant *g;
    uint32_t slot;
    int rc;

    if (!pg)
        return -MT_ENOENT;
    if (want->bundle < 0 || (uint32_t)want->bundle >= pg->nb)
        return -MT_EINVAL;
    b = &pg->b[want->bundle];
    if (b->node != want->node)
        return -MT_ENOENT;
    if ((rc = bundle_room(b, res, a)) < 0 ||
        (rc = mt__grant_new(s, &slot)) < 0)
        return rc;
    bundle_charge(b, res, a);
    g = &s->grants[slot];
    g->node = b->node;
    g->pg = (uint32_t)(pg - s->pgs);
    g->pg_gen = pg->gen;
    g->bundle = (uint32_t)want->bundle;
    g->bundle_gen = b->gen;
    g->res = *res;
    g->a = *a;
    mt__grant_fill(s, slot, out);
    return 0;
}

int mt_sched_adopt(struct mt_sched *s, const struct mt_task_spec *t,
                   const struct mt_grant *want, struct mt_grant *out)
{
    struct mt__alloc a;
    struct mt__grant *g;
    uint32_t slot;
    int rc;

    if (!s || !t || !want || !out || t->res.n > MT_RES_SET_MAX ||
        mt_res_set_validate(&t->res, mt_res_names_count(s->names)) < 0)
        return -MT_EINVAL;
    if (!mt_sched_node_alive(s, want->node))
        return -MT_ENOENT;
    rc = alloc_of(&s->nodes[want->node], &t->res, want->gpus, want->tpu_chips,
                  &a);
    if (rc < 0 || (a.gpus && want->gpu_each != a.gpu_each))
        return -MT_EINVAL;
    if (want->pg)
        return adopt_in_bundle(s, &t->res, want, &a, out);
    if (!node_room(&s->nodes[want->node], &t->res, &a))
        return -MT_EAGAIN;
    if ((rc = mt__grant_new(s, &slot)) < 0)
        return rc;
    g = &s->grants[slot];
    g->node = want->node;
    g->res = t->res;
    g->a = a;
    mt__node_charge(s, want->node, &t->res, &a);
    mt__grant_fill(s, slot, out);
    return 0;
}

/* ---- Placement groups ---- */

/* Where bundle i is: from the device-exact table when given. */
static uint32_t node_at(const uint32_t *nodes, const struct mt_bundle_info *at,
                        size_t i)
{
    return at ? at[i].node : nodes[i];
}

/* RET 0, -MT_ENOENT (a node unknown or dead), -MT_EINVAL (a strict
 * strategy broken). O(bundles^2) for STRICT_SPREAD, at most 1024^2/2. */
static int nodes_check(const struct mt_sched *s, const struct mt_pg_spec *spec,
                       const uint32_t *nodes, const struct mt_bundle_info *at)
{
    for (size_t i = 0; i < spec->nbundles; i++)
        if (!mt_sched_node_alive(s, node_at(nodes, at, i)))
            return -MT_ENOENT;
    for (size_t i = 1; i < spec->nbundles; i++) {
        uint32_t ni = node_at(nodes, at, i);

        if (spec->strategy == MT_SCHED_PG_STRICT_PACK &&
            ni != node_at(nodes, at, 0))
            return -MT_EINVAL;
        for (size_t j = 0; spec->strategy == MT_SCHED_PG_STRICT_SPREAD && j < i;
             j++)
            if (ni == node_at(nodes, at, j))
                return -MT_EINVAL;
    }
    return 0;
}

/* Reserve bundle i where the caller says. RET 0, -MT_EAGAIN, -MT_EINVAL. */
static int place_one(struct mt_sched *s, struct mt__pg *pg, uint32_t i,
                     uint32_t node, const struct mt_bundle_info *at)
{
    struct mt__bundle *b = &pg->b[i];
    const struct mt__node *n = &s->nodes[node];
    struct mt__alloc a;

    if (at && alloc_of(n, &b->res, at[i].gpus, at[i].tpu_chips, &a) < 0)
        return -MT_EINVAL;
    if (!node_room(n, &b->res, at ? &a : NULL))
        return -MT_EAGAIN;
    mt__bundle_place(s, b, node, at ? &a : NULL);
    return 0;
}

static int pg_adopt(struct mt_sched *s, const struct mt_pg_spec *spec,
                    const uint32_t *nodes, const struct mt_bundle_info *at,
                    uint64_t now_ms)
{
    struct mt__pg *pg;
    uint32_t slot, i;
    int rc;

    if (!s || !spec || spec->id == 0 || (!nodes && !at) ||
        (unsigned)spec->strategy >= MT_SCHED_PG_STRATEGY_COUNT ||
        spec->nbundles == 0 || spec->nbundles > MT_SCHED_PG_MAX_BUNDLES ||
        !spec->bundles)
        return -MT_EINVAL;
    if ((rc = mt__pg_alloc(s, spec->id, &slot)) < 0)
        return rc;
    pg = &s->pgs[slot];
    pg->strategy = (uint8_t)spec->strategy;
    if ((rc = mt__pg_bundles_copy(s, pg, spec)) < 0 ||
        (rc = nodes_check(s, spec, nodes, at)) < 0)
        goto out_free;
    for (i = 0; i < pg->nb; i++)
        if ((rc = place_one(s, pg, i, node_at(nodes, at, i), at)) < 0)
            goto out_unplace;
    pg->unplaced = 0;
    pg->state = MT_SCHED_PG_CREATED;
    pg->submit_ms = now_ms;
    return 0;
out_unplace:
    while (i-- > 0)
        mt__bundle_unplace(s, &pg->b[i]);
out_free:
    mt__pg_free_slot(s, slot);
    return rc;
}

int mt_sched_pg_adopt(struct mt_sched *s, const struct mt_pg_spec *spec,
                      const uint32_t *nodes, uint64_t now_ms)
{
    return nodes ? pg_adopt(s, spec, nodes, NULL, now_ms) : -MT_EINVAL;
}

int mt_sched_pg_adopt_at(struct mt_sched *s, const struct mt_pg_spec *spec,
                         const struct mt_bundle_info *at, uint64_t now_ms)
{
    return at ? pg_adopt(s, spec, NULL, at, now_ms) : -MT_EINVAL;
}
