/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slice.c -- TPU slice reservations: whole slices, all-or-nothing.
 *
 * Nodes labelled manta.io/tpu-slice-name=<name> and
 * manta.io/tpu-worker-id=<i> are filed under that slice as worker i. The
 * slice's pod type comes from manta.io/tpu-pod-type (normalised with
 * tpu.h), and its host count from tpu.h's topology math (with
 * manta.io/tpu-topology when present). A slice is intact when workers
 * 0..hosts-1 are all alive; it is free when no group holds it and every host
 * has all its chips free and room for the per-host extras.
 *
 * A reservation for k slices of a pod type takes the first k free intact
 * slices (in the order the slices were first seen) and reserves, on worker i
 * of the j-th slice, bundle j*hosts+i = {TPU: chips_per_host} + per_host.
 * Each slice records the group holding it, so concurrent reservations always
 * get different slices. Losing any host releases the whole group (pg.c) and
 * it is re-reserved as a whole.
 *
 * Adoption (a restarted head): mt_sched_slice_adopt takes the slices named
 * by the caller, checked as a reservation would check them, in one go.
 */
#include "sched/sched_int.h"

#include "sched/accel_env.h"
#include "sched/tpu.h"

#include <stdlib.h>
#include <string.h>

static int parse_worker(const char *text, uint32_t *out)
{
    char *end;
    unsigned long v;

    if (!text || !*text)
        return -MT_EINVAL;
    v = strtoul(text, &end, 10);
    if (*end || v >= MT_TPU_MAX_HOSTS)
        return -MT_EINVAL;
    *out = (uint32_t)v;
    return 0;
}

static int slice_get(struct mt_sched *s, uint32_t name, uint32_t *out)
{
    uint32_t idx = mt__map_get(&s->slice_by_name, name);
    struct mt__slice *ns;

    if (idx != MT__NONE) {
        *out = idx;
        return 0;
    }
    if (s->nslices == s->slices_cap) {
        uint32_t nc = s->slices_cap ? s->slices_cap * 2 : 16;

        ns = realloc(s->slices, nc * sizeof(*ns));
        if (!ns)
            return -MT_ENOMEM;
        s->slices = ns;
        s->slices_cap = nc;
    }
    memset(&s->slices[s->nslices], 0, sizeof(s->slices[0]));
    s->slices[s->nslices].name = name;
    s->slices[s->nslices].held_by = MT__NONE;
    if (mt__map_put(&s->slice_by_name, name, s->nslices) < 0)
        return -MT_ENOMEM;
    *out = s->nslices++;
    return 0;
}

/* Pod type and host count from the node's labels. */
static void slice_shape(struct mt_sched *s, struct mt__slice *sl,
                        const struct mt__node *n)
{
    const char *pod = mt_strtab_str(s->strs,
                                    mt_labelset_get(&n->labels, s->k_pod_type));
    const char *topo = mt_strtab_str(
        s->strs, mt_labelset_get(&n->labels, s->k_topology));
    struct mt_tpu_slice shape;
    char buf[MT_TPU_NAME_MAX];
    int64_t id;

    if (sl->pod_type || !pod)
        return;
    if (mt_tpu_slice_parse(pod, topo, n->ntpu, &shape) < 0 &&
        mt_tpu_slice_parse(pod, topo, 0, &shape) < 0)
        return;
    if (mt_tpu_slice_pod_type(&shape, buf, sizeof(buf)) < 0)
        return;
    id = mt_strtab_intern(s->strs, buf);
    if (id < 0)
        return;
    sl->pod_type = (uint32_t)id;
    sl->hosts = shape.hosts;
    sl->shape = shape;
}

int mt__slice_node_added(struct mt_sched *s, uint32_t node)
{
    struct mt__node *n = &s->nodes[node];
    uint32_t name = mt_labelset_get(&n->labels, s->k_slice), w, idx;
    struct mt__slice *sl;
    int rc;

    if (!name || !n->ntpu ||
        parse_worker(mt_strtab_str(s->strs,
                                   mt_labelset_get(&n->labels, s->k_worker)),
                     &w) < 0)
        return 0;
    if ((rc = slice_get(s, name, &idx)) < 0)
        return rc;
    sl = &s->slices[idx];
    if (w >= sl->nworkers) {
        uint32_t *nw = realloc(sl->workers, (w + 1) * sizeof(*nw));

        if (!nw)
            return -MT_ENOMEM;
        for (uint32_t i = sl->nworkers; i <= w; i++)
            nw[i] = MT__NONE;
        sl->workers = nw;
        sl->nworkers = w + 1;
    }
    if (sl->workers[w] != MT__NONE && s->nodes[sl->workers[w]].alive)
        return 0; /* duplicate worker id: keep the first */
    sl->workers[w] = node;
    slice_shape(s, sl, n);
    n->slice = (int32_t)idx;
    n->tpu_worker = w;
    return 0;
}

void mt__slice_node_dead(struct mt_sched *s, uint32_t node)
{
    struct mt__node *n = &s->nodes[node];
    struct mt__slice *sl;

    if (n->slice < 0)
        return;
    sl = &s->slices[n->slice];
    if (n->tpu_worker < sl->nworkers && sl->workers[n->tpu_worker] == node)
        sl->workers[n->tpu_worker] = MT__NONE;
    /* Its busy chips died with it. */
    sl->busy_chips -= (uint32_t)__builtin_popcount(n->inst.tpu_mask &
                                                   ~n->inst.tpu_free);
    n->slice = -1;
}

static bool slice_intact(const struct mt_sched *s, const struct mt__slice *sl)
{
    if (sl->hosts == 0 || sl->nworkers < sl->hosts)
        return false;
    for (uint32_t i = 0; i < sl->hosts; i++)
        if (sl->workers[i] == MT__NONE || !s->nodes[sl->workers[i]].alive)
            return false;
    return true;
}

static bool slice_free(const struct mt_sched *s, const struct mt__slice *sl,
                       const struct mt__pg *pg)
{
    const struct mt_res_set *rs = &pg->b[0].res; /* same for every host */
    struct mt__req r = {rs, mt_res_set_mask(rs), NULL};

    if (sl->held_by != MT__NONE || sl->pod_type != pg->pod_type ||
        !slice_intact(s, sl))
        return false;
    for (uint32_t i = 0; i < sl->hosts; i++) {
        const struct mt__node *n = &s->nodes[sl->workers[i]];

        if (n->ntpu != pg->chips_per_host || !mt__node_fits(n, &r))
            return false;
    }
    return true;
}

int mt__slice_feasible(const struct mt_sched *s, const struct mt__pg *pg)
{
    uint32_t found = 0;

    for (uint32_t i = 0; i < s->nslices && found < pg->nslices; i++) {
        const struct mt__slice *sl = &s->slices[i];

        found += sl->pod_type == pg->pod_type && slice_intact(s, sl);
    }
    return found >= pg->nslices ? 0 : -MT_EINFEASIBLE;
}

static void take_slice(struct mt_sched *s, uint32_t slot, uint32_t si,
                       uint32_t j)
{
    struct mt__pg *pg = &s->pgs[slot];
    struct mt__slice *sl = &s->slices[si];

    sl->held_by = slot;
    for (uint32_t i = 0; i < sl->hosts; i++) {
        struct mt__bundle *b = &pg->b[j * pg->hosts + i];
        uint32_t node = sl->workers[i];

        b->slice = si;
        mt__node_take(s, node, &b->res, &b->a);
        b->node = node;
        b->gen++;
        for (int k = 0; k < b->res.n; k++)
            b->avail[k] = b->res.it[k].qty;
        memset(&b->inst, 0, sizeof(b->inst));
        b->inst.gpu_mask = b->a.gpus;
        for (uint32_t m = b->a.gpus; m; m &= m - 1)
            b->inst.gpu_free[__builtin_ctz(m)] = b->a.gpu_each;
        b->inst.tpu_mask = b->inst.tpu_free = b->a.tpu;
    }
}

/*
 * A slice group waited starve_ms: hold the hosts of the nslices intact,
 * unheld slices of its pod type with the fewest busy chips for this round,
 * so tasks stop taking chips there and the slices drain for the group.
 */
void mt__slice_reserve_hosts(struct mt_sched *s, uint32_t slot)
{
    const struct mt__pg *pg = &s->pgs[slot];

    for (uint32_t k = 0; k < pg->nslices; k++) {
        uint32_t best = MT__NONE;

        for (uint32_t i = 0; i < s->nslices; i++) {
            const struct mt__slice *sl = &s->slices[i];

            if (sl->held_by != MT__NONE || sl->pod_type != pg->pod_type ||
                !slice_intact(s, sl) || mt__reserved(s, sl->workers[0]))
                continue;
            if (best == MT__NONE || sl->busy_chips < s->slices[best].busy_chips)
                best = i;
        }
        if (best == MT__NONE)
            return;
        for (uint32_t w = 0; w < s->slices[best].hosts; w++)
            s->nodes[s->slices[best].workers[w]].resv_round = s->round;
    }
}

int mt__slice_try_place(struct mt_sched *s, uint32_t slot)
{
    struct mt__pg *pg = &s->pgs[slot];
    uint32_t *pick = malloc(pg->nslices * sizeof(*pick)), n = 0;

    if (!pick)
        return -MT_ENOMEM;
    for (uint32_t i = 0; i < s->nslices && n < pg->nslices; i++)
        if (slice_free(s, &s->slices[i], pg))
            pick[n++] = i;
    if (n < pg->nslices) {
        free(pick);
        return -MT_EAGAIN;
    }
    for (uint32_t j = 0; j < n; j++)
        take_slice(s, slot, pick[j], j);
    pg->unplaced = 0;
    free(pick);
    return 0;
}

void mt__slice_release(struct mt_sched *s, uint32_t slot)
{
    for (uint32_t i = 0; i < s->nslices; i++)
        if (s->slices[i].held_by == slot)
            s->slices[i].held_by = MT__NONE;
}

static int slice_bundles(struct mt_sched *s, struct mt__pg *pg,
                         const struct mt_slice_spec *spec)
{
    struct mt_res_set rs = spec->per_host;
    int rc;

    if (rs.n > MT_RES_SET_MAX || mt_res_set_get(&rs, MT_RES_TPU))
        return -MT_EINVAL;
    rc = rs.n ? mt_res_set_validate(&rs, mt_res_names_count(s->names)) : 0;
    if (rc < 0)
        return rc;
    if ((rc = mt_res_set_add(&rs, MT_RES_TPU,
                             (int64_t)pg->chips_per_host * MT_RES_SCALE)) < 0)
        return rc;
    pg->nb = pg->hosts * pg->nslices;
    pg->b = calloc(pg->nb, sizeof(*pg->b));
    if (!pg->b)
        return -MT_ENOMEM;
    for (uint32_t i = 0; i < pg->nb; i++) {
        pg->b[i].res = rs;
        pg->b[i].node = MT__NONE;
        pg->b[i].slice = MT__NONE;
    }
    pg->unplaced = pg->nb;
    return 0;
}

/* A new slice group for spec, its bundles not placed. RET 0, -MT_EINVAL,
 * -MT_EEXIST, -MT_ENOMEM; on error nothing is left behind. */
static int slice_group_new(struct mt_sched *s, const struct mt_slice_spec *spec,
                           uint32_t *out)
{
    struct mt_tpu_slice shape;
    char buf[MT_TPU_NAME_MAX];
    uint32_t slot;
    int64_t pod;
    int rc;

    if (!spec || !spec->pod_type || spec->id == 0 || spec->nslices == 0 ||
        spec->nslices > MT_SCHED_PG_MAX_BUNDLES)
        return -MT_EINVAL;
    if (mt_tpu_slice_parse(spec->pod_type, spec->topology, 0, &shape) < 0 ||
        mt_tpu_slice_pod_type(&shape, buf, sizeof(buf)) < 0 ||
        !mt_tpu_chip_count_valid(shape.chips_per_host) ||
        (uint64_t)shape.hosts * spec->nslices > MT_SCHED_PG_MAX_BUNDLES)
        return -MT_EINVAL;
    if ((pod = mt_strtab_intern(s->strs, buf)) < 0)
        return (int)pod;
    if ((rc = mt__pg_alloc(s, spec->id, &slot)) < 0)
        return rc;
    s->pgs[slot].is_slice = true;
    s->pgs[slot].strategy = MT_SCHED_PG_STRICT_SPREAD;
    s->pgs[slot].pod_type = (uint32_t)pod;
    s->pgs[slot].hosts = shape.hosts;
    s->pgs[slot].chips_per_host = shape.chips_per_host;
    s->pgs[slot].nslices = spec->nslices;
    if ((rc = slice_bundles(s, &s->pgs[slot], spec)) < 0) {
        mt_sched_pg_remove(s, spec->id);
        return rc;
    }
    *out = slot;
    return 0;
}

int mt_sched_slice_reserve(struct mt_sched *s, const struct mt_slice_spec *spec,
                           uint64_t now_ms)
{
    uint32_t slot;
    int rc = slice_group_new(s, spec, &slot);

    return rc < 0 ? rc : mt__pg_start(s, slot, now_ms);
}

/* ---- Adoption ---- */

/*
 * Can group slot take slice name (the j-th of its list) as it stands? As
 * slice_free, but suspect marks do not matter and each failure has its
 * code. RET 0, -MT_ENOENT (unknown or not intact), -MT_EINVAL (other pod
 * type or host shape), -MT_EAGAIN (held, or a host is not free).
 */
static int slice_adoptable(const struct mt_sched *s, uint32_t slot,
                           const char *name, uint32_t *si)
{
    const struct mt__pg *pg = &s->pgs[slot];
    const struct mt_res_set *rs = &pg->b[0].res;
    uint32_t id = name ? mt_strtab_lookup(s->strs, name) : 0;
    const struct mt__slice *sl;

    *si = id ? mt__map_get(&s->slice_by_name, id) : MT__NONE;
    if (*si == MT__NONE || !slice_intact(s, &s->slices[*si]))
        return -MT_ENOENT;
    sl = &s->slices[*si];
    if (sl->pod_type != pg->pod_type)
        return -MT_EINVAL;
    if (sl->held_by != MT__NONE)
        return sl->held_by == slot ? -MT_EINVAL : -MT_EAGAIN;
    for (uint32_t i = 0; i < sl->hosts; i++) {
        const struct mt__node *n = &s->nodes[sl->workers[i]];

        if (n->ntpu != pg->chips_per_host)
            return -MT_EINVAL;
        for (int k = 0; k < rs->n; k++)
            if (n->avail[rs->it[k].id] < rs->it[k].qty)
                return -MT_EAGAIN;
        if (!mt__inst_fits(&n->inst, n->ntpu, mt_res_set_get(rs, MT_RES_GPU),
                           mt_res_set_get(rs, MT_RES_TPU)))
            return -MT_EAGAIN;
    }
    return 0;
}

int mt_sched_slice_adopt(struct mt_sched *s, const struct mt_slice_spec *spec,
                         const char *const *names, uint64_t now_ms)
{
    uint32_t slot, si;
    int rc;

    if (!names)
        return -MT_EINVAL;
    if ((rc = slice_group_new(s, spec, &slot)) < 0)
        return rc;
    /* Held marks are set as slices are taken, so a name listed twice is
     * seen as held by this group. Taking reserves only the slice's own
     * hosts, so an earlier take cannot change a later check's answer
     * except through that mark. */
    for (uint32_t j = 0; j < spec->nslices; j++) {
        if ((rc = slice_adoptable(s, slot, names[j], &si)) < 0) {
            mt_sched_pg_remove(s, spec->id);
            return rc;
        }
        take_slice(s, slot, si, j);
    }
    s->pgs[slot].unplaced = 0;
    s->pgs[slot].state = MT_SCHED_PG_CREATED;
    s->pgs[slot].submit_ms = now_ms;
    return 0;
}

const char *mt_sched_pg_slice_name(const struct mt_sched *s, uint64_t pg_id,
                                   uint32_t idx)
{
    const struct mt__pg *pg = mt__pg_find(s, pg_id);
    const struct mt__node *n;

    if (!pg || idx >= pg->nb || pg->b[idx].node == MT__NONE)
        return NULL;
    n = &s->nodes[pg->b[idx].node];
    return n->slice < 0 ? NULL
                        : mt_strtab_str(s->strs, s->slices[n->slice].name);
}

int mt_sched_pg_slice(const struct mt_sched *s, uint64_t pg_id, uint32_t j,
                      struct mt_slice_info *out)
{
    const struct mt__pg *pg = mt__pg_find(s, pg_id);
    const struct mt__slice *sl;

    if (!pg || !pg->is_slice || j >= pg->nslices ||
        pg->state != MT_SCHED_PG_CREATED || pg->b[j * pg->hosts].slice == MT__NONE)
        return -MT_ENOENT;
    sl = &s->slices[pg->b[j * pg->hosts].slice];
    out->name = mt_strtab_str(s->strs, sl->name);
    out->shape = sl->shape;
    out->nodes = sl->workers;
    out->nhosts = sl->hosts;
    return 0;
}

int mt_sched_node_tpu_slice(const struct mt_sched *s, uint32_t node,
                            struct mt_tpu_slice *out)
{
    const struct mt__node *n;

    if (node >= s->nnodes)
        return -MT_ENOENT;
    n = &s->nodes[node];
    if (n->slice < 0 || s->slices[n->slice].hosts == 0)
        return -MT_ENOENT;
    *out = s->slices[n->slice].shape;
    return 0;
}

int mt_sched_grant_env(const struct mt_sched *s, const struct mt_grant *g,
                       struct mt_env *env)
{
    uint32_t ids[32], n = 0, chips[MT_MAX_TPU_CHIPS], nc = 0;
    struct mt_tpu_slice shape;
    int rc;

    if (!g || !env || g->node >= s->nnodes)
        return -MT_EINVAL;
    for (uint32_t m = g->gpus; m; m &= m - 1)
        ids[n++] = (uint32_t)__builtin_ctz(m);
    if ((rc = mt_accel_env_gpu(ids, n, env)) < 0 || !g->tpu_chips)
        return rc;
    for (uint32_t m = g->tpu_chips; m; m &= m - 1)
        chips[nc++] = (uint32_t)__builtin_ctz(m);
    if ((rc = mt_sched_node_tpu_slice(s, g->node, &shape)) < 0)
        return rc;
    return mt_accel_env_tpu_host(&shape, chips, nc, env);
}
