/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched.c -- the scheduler object, grants, pending task classes and decide.
 *
 * Pending tasks are grouped into classes of identical requirements
 * (struct mt__ckey). Each class is a FIFO ring. decide() orders the classes
 * with a pending head by effective priority and places from each until its
 * head does not fit; the rest of that class cannot fit either this round.
 *
 * Priorities (docs/scheduler.md): effective priority = priority +
 * floor(wait of the class head / aging_ms). Ties go to the higher base
 * priority, then to the older head, so FIFO holds within a priority. A head
 * that has waited starve_ms and still cannot be placed reserves, for the
 * rest of the round, the node closest to fitting it: later classes may not
 * use that node, so what frees up there accumulates for the head instead of
 * being backfilled. Aging lifts every waiting head above any fixed priority
 * eventually, and the reservation then guarantees it a node: no feasible
 * task waits forever.
 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

void mt_sched_opts_init(struct mt_sched_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->spread_threshold = MT_RES_SCALE / 2;
    o->top_k_fraction = MT_RES_SCALE / 5;
    o->top_k_max = 4;
    o->avoid_accel_nodes = true;
    o->accel_best_fit = true;
    o->aging_ms = 10000;
    o->starve_ms = 60000;
    o->seed = 1;
}

int mt_sched_create(const struct mt_sched_opts *o, struct mt_sched **out)
{
    struct mt_sched *s;
    int64_t k;

    if (o && (o->spread_threshold < 0 || o->spread_threshold > MT_RES_SCALE ||
              o->top_k_fraction < 0 || o->top_k_fraction > MT_RES_SCALE))
        return -MT_EINVAL;
    s = calloc(1, sizeof(*s));
    if (!s)
        return -MT_ENOMEM;
    if (o)
        s->o = *o;
    else
        mt_sched_opts_init(&s->o);
    if (s->o.aging_ms == 0)
        s->o.aging_ms = 1;
    s->rng = s->o.seed ? s->o.seed : 1;
    s->grant_free = MT__NONE;
    s->pg_free = MT__NONE;
    s->round = 1;
    if (mt_res_names_create(&s->names) < 0 ||
        mt_strtab_create(&s->strs) < 0)
        goto out_nomem;
    if ((k = mt_strtab_intern(s->strs, MT_LABEL_TPU_SLICE)) < 0)
        goto out_nomem;
    s->k_slice = (uint32_t)k;
    if ((k = mt_strtab_intern(s->strs, MT_LABEL_TPU_WORKER)) < 0)
        goto out_nomem;
    s->k_worker = (uint32_t)k;
    if ((k = mt_strtab_intern(s->strs, MT_LABEL_TPU_POD_TYPE)) < 0)
        goto out_nomem;
    s->k_pod_type = (uint32_t)k;
    if ((k = mt_strtab_intern(s->strs, MT_LABEL_TPU_TOPOLOGY)) < 0)
        goto out_nomem;
    s->k_topology = (uint32_t)k;
    *out = s;
    return 0;
out_nomem:
    mt_sched_destroy(s);
    return -MT_ENOMEM;
}

void mt_sched_destroy(struct mt_sched *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->nnodes; i++)
        mt_labelset_release(&s->nodes[i].labels);
    free(s->nodes);
    for (uint32_t i = 0; i < s->npools; i++) {
        free(s->pools[i].members);
        free(s->pools[i].below);
        for (int b = 0; b < MT__NB; b++)
            free(s->pools[i].bk[b]);
    }
    free(s->pools);
    for (uint32_t i = 0; i < s->nposts; i++)
        free(s->posts[i].nodes);
    free(s->posts);
    mt__map_free(&s->post_by_kv);
    free(s->grants);
    for (uint32_t i = 0; i < s->npgs; i++)
        free(s->pgs[i].b);
    free(s->pgs);
    free(s->pgq);
    for (uint32_t i = 0; i < s->nslices; i++)
        free(s->slices[i].workers);
    free(s->slices);
    for (uint32_t i = 0; i < s->nclasses; i++)
        free(s->classes[i].q);
    free(s->classes);
    free(s->active);
    mt__map_free(&s->node_by_name);
    mt__map_free(&s->pg_by_id);
    mt__map_free(&s->slice_by_name);
    mt__map_free(&s->class_by_hash);
    mt_strtab_destroy(s->strs);
    mt_res_names_destroy(s->names);
    free(s);
}

int mt_sched_resource_id(struct mt_sched *s, const char *name)
{
    return mt_res_names_intern(s->names, name);
}

const struct mt_res_names *mt_sched_resource_names(const struct mt_sched *s)
{
    return s->names;
}

void mt_task_spec_init(struct mt_task_spec *t, uint64_t id)
{
    memset(t, 0, sizeof(*t));
    t->id = id;
    t->strategy = MT_PLACE_DEFAULT;
    t->affinity_node = MT_NODE_NONE;
    t->bundle = -1;
}

/* ---- Grants ---- */

int mt__grant_new(struct mt_sched *s, uint32_t *slot)
{
    if (s->grant_free != MT__NONE) {
        *slot = s->grant_free;
        s->grant_free = s->grants[*slot].next_free;
    } else {
        if (s->ngrants == s->grants_cap) {
            uint32_t nc = s->grants_cap ? s->grants_cap * 2 : 1024;
            struct mt__grant *ng = realloc(s->grants, nc * sizeof(*ng));

            if (!ng)
                return -MT_ENOMEM;
            s->grants = ng;
            s->grants_cap = nc;
        }
        *slot = s->ngrants++;
        s->grants[*slot].gen = 1;
    }
    s->grants[*slot].live = true;
    s->grants[*slot].pg = MT__NONE;
    s->nlive_grants++;
    return 0;
}

uint64_t mt__grant_handle(const struct mt_sched *s, uint32_t slot)
{
    return (uint64_t)s->grants[slot].gen << 32 | slot;
}

static void grant_free(struct mt_sched *s, uint32_t slot)
{
    struct mt__grant *g = &s->grants[slot];

    g->live = false;
    g->gen++;
    if (g->gen == 0)
        g->gen = 1;
    g->next_free = s->grant_free;
    s->grant_free = slot;
    s->nlive_grants--;
}

void mt__grant_fill(const struct mt_sched *s, uint32_t slot,
                    struct mt_grant *out)
{
    const struct mt__grant *g = &s->grants[slot];

    out->handle = mt__grant_handle(s, slot);
    out->node = g->node;
    out->gpus = g->a.gpus;
    out->gpu_each = g->a.gpu_each;
    out->tpu_chips = g->a.tpu;
    out->pg = g->pg != MT__NONE ? s->pgs[g->pg].id : 0;
    out->bundle = g->pg != MT__NONE ? (int32_t)g->bundle : -1;
}

int mt_sched_on_task_finished(struct mt_sched *s, uint64_t handle)
{
    uint32_t slot = (uint32_t)handle, gen = (uint32_t)(handle >> 32);
    struct mt__grant *g;

    if (slot >= s->ngrants || !s->grants[slot].live ||
        s->grants[slot].gen != gen)
        return -MT_ENOENT;
    g = &s->grants[slot];
    if (g->pg != MT__NONE) {
        struct mt__pg *pg = &s->pgs[g->pg];
        struct mt__bundle *b = pg->used && pg->gen == g->pg_gen
                                   ? &pg->b[g->bundle]
                                   : NULL;

        if (b && b->gen == g->bundle_gen && b->node != MT__NONE) {
            for (int i = 0; i < g->res.n; i++)
                for (int j = 0; j < b->res.n; j++)
                    if (b->res.it[j].id == g->res.it[i].id)
                        b->avail[j] += g->res.it[i].qty;
            mt__inst_give(&b->inst, &g->a);
        }
    } else if (s->nodes[g->node].alive) {
        mt__node_give(s, g->node, &g->res, &g->a);
    }
    grant_free(s, slot);
    return 0;
}

/* ---- Requests and classes ---- */

static int key_build(struct mt_sched *s, const struct mt_task_spec *t,
                     struct mt__ckey *k)
{
    int rc;

    memset(k, 0, sizeof(*k));
    if ((unsigned)t->strategy >= MT_PLACE_COUNT || t->res.n > MT_RES_SET_MAX)
        return -MT_EINVAL;
    if ((rc = mt_res_set_validate(&t->res, mt_res_names_count(s->names))) < 0)
        return rc;
    k->res.n = t->res.n;
    for (int i = 0; i < t->res.n; i++)
        k->res.it[i] = t->res.it[i];
    k->prio = t->priority;
    k->strategy = t->strategy;
    k->affinity = MT__NONE;
    k->pg = MT__NONE;
    k->bundle = -1;
    if (t->strategy == MT_PLACE_NODE_AFFINITY) {
        if (t->affinity_node >= s->nnodes)
            return -MT_EINVAL;
        k->affinity = t->affinity_node;
        k->soft = t->affinity_soft;
    } else if (t->strategy == MT_PLACE_PG) {
        struct mt__pg *pg = mt__pg_find(s, t->pg);

        if (!pg)
            return -MT_ENOENT;
        if (t->bundle < -1 || t->bundle >= (int32_t)pg->nb)
            return -MT_EINVAL;
        k->pg = (uint32_t)(pg - s->pgs);
        k->pg_gen = pg->gen;
        k->bundle = t->bundle;
    }
    return mt_sel_compile(s->strs, t->selector, &k->sel);
}

static uint64_t key_hash(const struct mt__ckey *k)
{
    const unsigned char *p = (const unsigned char *)k;
    uint64_t h = 1469598103934665603ULL;

    for (size_t i = 0; i + 8 <= sizeof(*k); i += 8) {
        uint64_t w;

        memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211ULL;
        h ^= h >> 29;
    }
    return h;
}

static int class_new(struct mt_sched *s, const struct mt__ckey *k, uint64_t h,
                     uint32_t *out)
{
    struct mt__class *c;

    if (s->nclasses == s->classes_cap) {
        uint32_t nc = s->classes_cap ? s->classes_cap * 2 : 16;
        struct mt__class *n = realloc(s->classes, nc * sizeof(*n));

        if (!n)
            return -MT_ENOMEM;
        s->classes = n;
        s->classes_cap = nc;
    }
    c = &s->classes[s->nclasses];
    memset(c, 0, sizeof(*c));
    c->key = *k;
    c->hash = h;
    c->kinds = mt_res_set_mask(&k->res);
    c->active_pos = MT__NONE;
    c->feas_epoch = UINT32_MAX;
    c->resv = MT__NONE;
    if (mt__map_put(&s->class_by_hash, h, s->nclasses) < 0)
        return -MT_ENOMEM;
    *out = s->nclasses++;
    return 0;
}

static int class_find(struct mt_sched *s, const struct mt__ckey *k,
                      uint32_t *out)
{
    uint64_t h = key_hash(k);

    for (;;) {
        uint32_t idx = mt__map_get(&s->class_by_hash, h);

        if (idx == MT__NONE)
            return class_new(s, k, h, out);
        if (memcmp(&s->classes[idx].key, k, sizeof(*k)) == 0) {
            *out = idx;
            return 0;
        }
        h = h * 6364136223846793005ULL + 1442695040888963407ULL;
    }
}

static int class_push(struct mt__class *c, uint64_t id, uint64_t now_ms)
{
    if (c->n == c->cap) {
        uint32_t nc = c->cap ? c->cap * 2 : 8;
        struct mt__task *nq = malloc(nc * sizeof(*nq));

        if (!nq)
            return -MT_ENOMEM;
        for (uint32_t i = 0; i < c->n; i++)
            nq[i] = c->q[(c->head + i) % (c->cap ? c->cap : 1)];
        free(c->q);
        c->q = nq;
        c->head = 0;
        c->cap = nc;
    }
    c->q[(c->head + c->n) % c->cap].id = id;
    c->q[(c->head + c->n) % c->cap].submit_ms = now_ms;
    c->n++;
    return 0;
}

static struct mt__task *class_head(struct mt__class *c)
{
    return &c->q[c->head];
}

static void class_pop(struct mt__class *c)
{
    c->head = (c->head + 1) % c->cap;
    c->n--;
    if (c->nreported)
        c->nreported--;
}

static int activate(struct mt_sched *s, uint32_t ci)
{
    if (s->classes[ci].active_pos != MT__NONE)
        return 0;
    if (s->nactive == s->active_cap) {
        uint32_t nc = s->active_cap ? s->active_cap * 2 : 16;
        uint32_t *na = realloc(s->active, nc * sizeof(*na));

        if (!na)
            return -MT_ENOMEM;
        s->active = na;
        s->active_cap = nc;
    }
    s->classes[ci].active_pos = s->nactive;
    s->active[s->nactive++] = ci;
    return 0;
}

static void deactivate(struct mt_sched *s, uint32_t ci)
{
    uint32_t pos = s->classes[ci].active_pos, last;

    if (pos == MT__NONE)
        return;
    last = s->active[--s->nactive];
    s->active[pos] = last;
    s->classes[last].active_pos = pos;
    s->classes[ci].active_pos = MT__NONE;
}

int mt_sched_on_task_submitted(struct mt_sched *s, const struct mt_task_spec *t,
                               uint64_t now_ms)
{
    struct mt__ckey k;
    uint32_t ci;
    int rc;

    if (!t)
        return -MT_EINVAL;
    if ((rc = key_build(s, t, &k)) < 0 || (rc = class_find(s, &k, &ci)) < 0)
        return rc;
    if ((rc = activate(s, ci)) < 0)
        return rc;
    if ((rc = class_push(&s->classes[ci], t->id, now_ms)) < 0)
        return rc;
    s->npending++;
    return 0;
}

/* ---- Placing one request ---- */

static int place_on(struct mt_sched *s, uint32_t node, const struct mt__ckey *k,
                    struct mt_grant *out)
{
    uint32_t slot;
    int rc = mt__grant_new(s, &slot);
    struct mt__grant *g;

    if (rc < 0)
        return rc;
    g = &s->grants[slot];
    g->node = node;
    g->res = k->res;
    mt__node_take(s, node, &k->res, &g->a);
    mt__grant_fill(s, slot, out);
    return 0;
}

static int place_pg(struct mt_sched *s, const struct mt__ckey *k,
                    const struct mt__req *r, struct mt_grant *out)
{
    uint32_t slot;
    int rc = mt__grant_new(s, &slot);

    if (rc < 0)
        return rc;
    rc = mt__bundle_alloc(s, k->pg, k->bundle, r, slot);
    if (rc < 0) {
        grant_free(s, slot);
        return rc;
    }
    mt__grant_fill(s, slot, out);
    return 0;
}

/*
 * Place one request, avoiding nodes reserved for starving requests this
 * round. RET 0, -MT_EAGAIN, -MT_EINFEASIBLE (hard affinity), -MT_ENOENT
 * (group gone).
 */
static int place(struct mt_sched *s, const struct mt__ckey *k, uint64_t kinds,
                 struct mt_grant *out)
{
    struct mt__req r = {&k->res, kinds, k->sel.n ? &k->sel : NULL};
    uint32_t node;

    if (k->strategy == MT_PLACE_PG) {
        struct mt__pg *pg = &s->pgs[k->pg];

        if (!pg->used || pg->gen != k->pg_gen)
            return -MT_ENOENT;
        return place_pg(s, k, &r, out);
    }
    if (k->strategy == MT_PLACE_NODE_AFFINITY) {
        node = k->affinity;
        if (s->nodes[node].alive && !mt__reserved(s, node) &&
            mt__node_fits(&s->nodes[node], &r))
            return place_on(s, node, k, out);
        if (!k->soft)
            return mt__node_feasible(&s->nodes[node], &r) ? -MT_EAGAIN
                                                           : -MT_EINFEASIBLE;
    }
    node = mt__pick(s, &r, k->strategy, NULL);
    if (node == MT__NONE)
        return -MT_EAGAIN;
    return place_on(s, node, k, out);
}

static int class_feasible(struct mt_sched *s, struct mt__class *c)
{
    const struct mt__ckey *k = &c->key;
    struct mt__req r = {&k->res, c->kinds, k->sel.n ? &k->sel : NULL};

    if (c->feas_epoch == s->epoch)
        return c->feas;
    c->feas_epoch = s->epoch;
    if (k->strategy == MT_PLACE_PG)
        c->feas = 0;  /* decided per attempt by the bundle */
    else if (k->strategy == MT_PLACE_NODE_AFFINITY && !k->soft)
        c->feas = mt__node_feasible(&s->nodes[k->affinity], &r)
                      ? 0
                      : -MT_EINFEASIBLE;
    else
        c->feas = mt__feasible(s, &r);
    return c->feas;
}

int mt_sched_allocate(struct mt_sched *s, const struct mt_task_spec *t,
                      struct mt_grant *g)
{
    struct mt__ckey k;
    int rc;

    if (!t || !g)
        return -MT_EINVAL;
    if ((rc = key_build(s, t, &k)) < 0)
        return rc;
    rc = place(s, &k, mt_res_set_mask(&k.res), g);
    if (rc == -MT_EAGAIN && k.strategy != MT_PLACE_PG) {
        struct mt__req r = {&k.res, mt_res_set_mask(&k.res),
                            k.sel.n ? &k.sel : NULL};

        if (k.strategy != MT_PLACE_NODE_AFFINITY || k.soft)
            rc = mt__feasible(s, &r) < 0 ? -MT_EINFEASIBLE : rc;
    }
    return rc;
}

int mt_sched_task_cancel(struct mt_sched *s, uint64_t task_id)
{
    for (uint32_t a = 0; a < s->nactive; a++) {
        struct mt__class *c = &s->classes[s->active[a]];

        for (uint32_t i = 0; i < c->n; i++) {
            if (c->q[(c->head + i) % c->cap].id != task_id)
                continue;
            for (uint32_t j = i; j + 1 < c->n; j++)
                c->q[(c->head + j) % c->cap] =
                    c->q[(c->head + j + 1) % c->cap];
            c->n--;
            if (c->nreported > i)
                c->nreported--;
            s->npending--;
            if (c->n == 0)
                deactivate(s, s->active[a]);
            return 0;
        }
    }
    return -MT_ENOENT;
}

size_t mt_sched_pending(const struct mt_sched *s)
{
    return s->npending;
}

/* ---- decide ---- */

struct order {
    int64_t eff;
    int32_t prio;
    uint64_t head_ms;
    uint32_t ci;
};

static int order_cmp(const void *a, const void *b)
{
    const struct order *x = a, *y = b;

    if (x->eff != y->eff)
        return x->eff > y->eff ? -1 : 1;
    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1;
    if (x->head_ms != y->head_ms)
        return x->head_ms < y->head_ms ? -1 : 1;
    return x->ci < y->ci ? -1 : x->ci > y->ci;
}

static int64_t waited(uint64_t now, uint64_t since)
{
    return now > since ? (int64_t)(now - since) : 0;
}

static size_t emit(struct mt_placement *out, size_t n, uint64_t id, int st)
{
    memset(&out[n], 0, sizeof(out[n]));
    out[n].kind = MT_DECISION_TASK;
    out[n].id = id;
    out[n].status = st;
    out[n].grant.bundle = -1;
    return n + 1;
}

static size_t report_infeasible(struct mt__class *c, struct mt_placement *out,
                                size_t n, size_t max)
{
    while (c->nreported < c->n && n < max) {
        n = emit(out, n, c->q[(c->head + c->nreported) % c->cap].id,
                 -MT_EINFEASIBLE);
        c->nreported++;
    }
    return n;
}

/* At most this many nodes are reserved for starving heads per round. */
#define MAX_RESV 64

static struct mt__req r_of(const struct mt__class *c)
{
    struct mt__req r = {&c->key.res, c->kinds,
                        c->key.sel.n ? &c->key.sel : NULL};

    return r;
}

static double shortfall(const struct mt__node *nd, const struct mt__ckey *k)
{
    double sh = 0;

    for (int i = 0; i < k->res.n; i++) {
        int id = k->res.it[i].id;
        int64_t miss = k->res.it[i].qty - nd->avail[id];

        if (miss > 0)
            sh += (double)miss / (double)nd->total[id];
    }
    return sh;
}

/*
 * The node closest to fitting the head of c (least normalized shortfall),
 * among nodes that could ever hold it and are not reserved yet. CPU-only
 * work prefers nodes without accelerators, as placement does.
 */
static uint32_t resv_node(const struct mt_sched *s, const struct mt__class *c)
{
    const struct mt__ckey *k = &c->key;
    struct mt__req r = {&k->res, c->kinds, k->sel.n ? &k->sel : NULL};
    bool cpu_only = !(c->kinds & mt__kinds_accel()) && s->o.avoid_accel_nodes;
    uint32_t best = MT__NONE;
    double best_sh = 1e300;

    if (k->strategy == MT_PLACE_PG)
        return MT__NONE;
    if (k->strategy == MT_PLACE_NODE_AFFINITY && !k->soft)
        return s->nodes[k->affinity].alive ? k->affinity : MT__NONE;
    for (uint32_t p = 0; p < s->npools; p++) {
        const struct mt__pool *pl = &s->pools[p];
        double penalty = cpu_only && pl->accel ? 1e6 : 0;

        if ((pl->mask & r.kinds) != r.kinds)
            continue;
        for (uint32_t j = 0; j < pl->n; j++) {
            uint32_t node = pl->members[j];
            double sh;

            if (mt__reserved(s, node) ||
                !mt__node_feasible(&s->nodes[node], &r))
                continue;
            sh = shortfall(&s->nodes[node], k) + penalty;
            if (sh < best_sh) {
                best_sh = sh;
                best = node;
            }
        }
    }
    return best;
}

/*
 * Place from one class until it blocks. A head that has waited starve_ms
 * and still does not fit reserves the node closest to fitting it: classes
 * after it in this round may not use that node, so resources freed there
 * accumulate for the head instead of being backfilled.
 */
static size_t run_class(struct mt_sched *s, uint32_t ci, uint64_t now,
                        struct mt_placement *out, size_t n, size_t max,
                        uint32_t *nresv)
{
    struct mt__class *c = &s->classes[ci];

    if (class_feasible(s, c) < 0)
        return report_infeasible(c, out, n, max);
    while (n < max && c->n) {
        struct mt__task *t = class_head(c);
        int rc = place(s, &c->key, c->kinds, &out[n].grant);

        if (rc == 0) {
            out[n].kind = MT_DECISION_TASK;
            out[n].id = t->id;
            out[n].status = 0;
            n++;
        } else if (rc == -MT_ENOENT) {
            n = emit(out, n, t->id, rc);
        }
        if (rc == 0 || rc == -MT_ENOENT) {
            class_pop(c);
            s->npending--;
            continue;
        }
        if (rc == -MT_EINFEASIBLE) {
            c->feas = rc;
            return report_infeasible(c, out, n, max);
        }
        if (waited(now, t->submit_ms) >= (int64_t)s->o.starve_ms &&
            *nresv < MAX_RESV) {
            struct mt__req r = r_of(c);
            uint32_t node = c->resv;

            /* Keep the same node while it stays usable: it accumulates. */
            if (node == MT__NONE || !s->nodes[node].alive ||
                mt__reserved(s, node) ||
                !mt__node_feasible(&s->nodes[node], &r))
                node = c->resv = resv_node(s, c);
            if (node != MT__NONE) {
                s->nodes[node].resv_round = s->round;
                (*nresv)++;
            }
        }
        break;
    }
    return n;
}

static int order_classes(struct mt_sched *s, uint64_t now, struct order **out)
{
    struct order *ord = malloc(s->nactive * sizeof(*ord));

    if (!ord)
        return -MT_ENOMEM;
    for (uint32_t i = 0; i < s->nactive; i++) {
        struct mt__class *c = &s->classes[s->active[i]];
        uint64_t h = class_head(c)->submit_ms;

        ord[i].eff = c->key.prio + waited(now, h) / (int64_t)s->o.aging_ms;
        ord[i].prio = c->key.prio;
        ord[i].head_ms = h;
        ord[i].ci = s->active[i];
    }
    if (s->nactive > 1)
        qsort(ord, s->nactive, sizeof(*ord), order_cmp);
    *out = ord;
    return 0;
}

/*
 * Slice groups that failed this round, by pod type: a later group of the
 * same pod type asking for as many slices or more cannot fit either, so it
 * is not tried again (keeps a long queue of slice requests O(queue)).
 */
#define SLICE_MISS_MAX 8

struct slice_miss {
    uint32_t pod[SLICE_MISS_MAX];
    uint32_t k[SLICE_MISS_MAX];
    uint32_t n;
};

static bool slice_missed(const struct slice_miss *m, const struct mt__pg *pg)
{
    for (uint32_t i = 0; pg->is_slice && i < m->n; i++)
        if (m->pod[i] == pg->pod_type && pg->nslices >= m->k[i])
            return true;
    return false;
}

static void slice_miss_add(struct slice_miss *m, const struct mt__pg *pg)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (m->pod[i] == pg->pod_type) {
            if (pg->nslices < m->k[i])
                m->k[i] = pg->nslices;
            return;
        }
    if (m->n < SLICE_MISS_MAX) {
        m->pod[m->n] = pg->pod_type;
        m->k[m->n++] = pg->nslices;
    }
}

static size_t decide_pgs(struct mt_sched *s, uint64_t now,
                         struct mt_placement *out, size_t max)
{
    struct slice_miss miss = {{0}, {0}, 0};
    size_t n = 0;
    uint32_t i = 0;

    while (i < s->npgq && n < max) {
        uint32_t slot = s->pgq[i];
        struct mt__pg *pg = &s->pgs[slot];
        int rc = slice_missed(&miss, pg) ? -MT_EAGAIN
                                         : mt__pg_try_place(s, slot);

        if (rc == -MT_EAGAIN && pg->is_slice)
            slice_miss_add(&miss, pg);

        if (rc == 0 || (rc == -MT_EINFEASIBLE && !pg->reported)) {
            memset(&out[n], 0, sizeof(out[n]));
            out[n].kind = MT_DECISION_PG;
            out[n].id = pg->id;
            out[n].status = rc;
            out[n].grant.bundle = -1;
            n++;
            pg->reported = rc != 0;
        }
        if (rc == -MT_EAGAIN && pg->is_slice &&
            waited(now, pg->submit_ms) >= (int64_t)s->o.starve_ms)
            mt__slice_reserve_hosts(s, slot);
        if (rc == 0) {
            pg->queued = false;
            memmove(&s->pgq[i], &s->pgq[i + 1],
                    (s->npgq - i - 1) * sizeof(*s->pgq));
            s->npgq--;
        } else {
            i++;
        }
    }
    return n;
}

int mt_sched_decide(struct mt_sched *s, uint64_t now_ms,
                    struct mt_placement *out, size_t max)
{
    struct order *ord;
    uint32_t nresv = 0;
    size_t n;
    uint32_t nord;

    if (max == 0)
        return 0;
    if (!out)
        return -MT_EINVAL;
    s->round++;
    n = decide_pgs(s, now_ms, out, max);
    if (s->nactive == 0 || n >= max)
        return (int)n;
    if (order_classes(s, now_ms, &ord) < 0)
        return n ? (int)n : -MT_ENOMEM;
    nord = s->nactive;
    for (uint32_t i = 0; i < nord && n < max; i++) {
        struct mt__class *c = &s->classes[ord[i].ci];

        n = run_class(s, ord[i].ci, now_ms, out, n, max, &nresv);
        if (c->n == 0)
            deactivate(s, ord[i].ci);
    }
    free(ord);
    return (int)n;
}
