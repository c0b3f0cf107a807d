/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pgs.c -- placement groups on the head (see pgs.h): the group table,
 * plain C requests turned into the scheduler's, and the scheduler's
 * decisions turned into states people see.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/pgs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"

#define MAX_LISTENERS 6

struct listener {
    const struct mt_head_pg_listener *l;
    void *arg;
};

struct mt_head_pgs {
    struct mt_head_sched *hs;
    struct mt_head_pg **v;       /* oldest first */
    size_t n, cap;
    uint64_t next;
    struct listener ls[MAX_LISTENERS];
    size_t n_ls;
};

static void on_decided(void *arg, uint64_t num, int status);

static const struct mt_head_sched_sink pg_sink = {
    .pg = on_decided,
};

struct mt_head_pgs *mt_head_pgs_create(struct mt_head_sched *hs,
                                       uint64_t first_num)
{
    struct mt_head_pgs *pgs = mt_xcalloc(1, sizeof(*pgs));

    pgs->hs = hs;
    pgs->next = first_num ? first_num : 1;
    mt_head_sched_add_sink(hs, &pg_sink, pgs);
    return pgs;
}

static void pg_free(struct mt_head_pg *pg)
{
    mt_pg_def_release(&pg->def);
    free(pg->error);
    free(pg);
}

void mt_head_pgs_destroy(struct mt_head_pgs *pgs)
{
    if (!pgs)
        return;
    for (size_t i = 0; i < pgs->n; i++)
        pg_free(pgs->v[i]);
    free(pgs->v);
    free(pgs);
}

void mt_head_pgs_listen(struct mt_head_pgs *pgs,
                        const struct mt_head_pg_listener *l, void *arg)
{
    MT_ASSERT(pgs->n_ls < MAX_LISTENERS);
    pgs->ls[pgs->n_ls].l = l;
    pgs->ls[pgs->n_ls++].arg = arg;
}

static void notify(struct mt_head_pgs *pgs, struct mt_head_pg *pg)
{
    for (size_t i = 0; i < pgs->n_ls; i++)
        pgs->ls[i].l->changed(pgs->ls[i].arg, pg);
}

/* ---- table ------------------------------------------------------------------ */

struct mt_head_pg *mt_head_pg_find(struct mt_head_pgs *pgs, const char *id)
{
    for (size_t i = 0; id && i < pgs->n; i++)
        if (strcmp(pgs->v[i]->id, id) == 0)
            return pgs->v[i];
    return NULL;
}

struct mt_head_pg *mt_head_pg_find_num(struct mt_head_pgs *pgs, uint64_t num)
{
    for (size_t i = 0; i < pgs->n; i++)
        if (pgs->v[i]->num == num)
            return pgs->v[i];
    return NULL;
}

size_t mt_head_pgs_count(const struct mt_head_pgs *pgs)
{
    return pgs->n;
}

struct mt_head_pg *mt_head_pgs_at(const struct mt_head_pgs *pgs, size_t i)
{
    return i < pgs->n ? pgs->v[i] : NULL;
}

static struct mt_head_pg *pg_new(struct mt_head_pgs *pgs, uint64_t num,
                                 struct mt_pg_def *def, uint32_t nbundles)
{
    struct mt_head_pg *pg = mt_xcalloc(1, sizeof(*pg));

    pg->num = num;
    mt_num_id(MT_ID_PG, pg->num, pg->id);
    pg->def = *def;
    memset(def, 0, sizeof(*def));
    pg->nbundles = nbundles;
    pg->state = MT_HEAD_PG_PENDING;
    pg->create_ms = mt_now_wall_ms();
    mt_xgrow((void **)&pgs->v, &pgs->cap, pgs->n + 1, sizeof(*pgs->v));
    pgs->v[pgs->n++] = pg;
    return pg;
}

static void pg_set_error(struct mt_head_pg *pg, const char *error)
{
    char *copy = error ? mt_xstrdup(error) : NULL;

    free(pg->error);
    pg->error = copy;
}

/* ---- requests -------------------------------------------------------------- */

/* Storage for a scheduler request built from a def. */
struct pg_req {
    struct mt_pg_spec spec;
    struct mt_bundle_spec *bundles;
    struct mt_head_sel *sels;
};

static void pg_req_release(struct pg_req *r)
{
    free(r->bundles);
    free(r->sels);
}

/* RET NULL or why the bundles are bad (r filled on success). */
static const char *build_pg_req(struct mt_head_pgs *pgs,
                                const struct mt_pg_def *def, uint64_t num,
                                struct pg_req *r)
{
    size_t nb = def->nbundles;
    const char *why = NULL;

    memset(r, 0, sizeof(*r));
    if (nb == 0 || nb > MT_SCHED_PG_MAX_BUNDLES)
        return "a placement group needs 1 to 1024 bundles";
    r->bundles = mt_xcalloc(nb, sizeof(*r->bundles));
    r->sels = mt_xcalloc(nb, sizeof(*r->sels));
    for (size_t b = 0; b < nb; b++) {
        const struct mt_bundle_def *bd = &def->bundles[b];

        if (bd->res.n == 0)
            return "each bundle needs 1 to 8 resource kinds";
        if (mt_head_sched_res(pgs->hs, &bd->res, false, &r->bundles[b].res,
                              &why) < 0)
            return why;
        r->bundles[b].selector = mt_head_sched_selector(&bd->sel,
                                                        &r->sels[b]);
    }
    r->spec.id = num;
    r->spec.strategy = (enum mt_sched_pg_strategy)def->strategy;
    r->spec.bundles = r->bundles;
    r->spec.nbundles = nb;
    return NULL;
}

/* A slice group: every host of whole slices; restored: on the slices
 * named (names, may be NULL) if it still can be. RET as mt_sched_*. */
static int reserve_slices(struct mt_head_pgs *pgs, uint64_t num,
                          const struct mt_pg_def *d,
                          const struct mt_res_set *per_host,
                          const char *const *names, uint32_t *nb,
                          const char **why)
{
    struct mt_slice_spec ss;
    struct mt_tpu_slice shape;
    uint32_t k = d->tpu_slices ? d->tpu_slices : 1;

    if (d->nbundles) {
        *why = "a TPU slice group takes a pod type, not bundles";
        return -MT_EINVAL;
    }
    if (mt_tpu_slice_parse(d->tpu_pod_type, d->tpu_topology, 0,
                           &shape) < 0) {
        *why = "unknown TPU pod type or topology (e.g. v4-16, v6e-16, "
               "v5p-8; topology 2x2x2)";
        return -MT_EINVAL;
    }
    if (k > 64 || (uint64_t)shape.hosts * k > MT_SCHED_PG_MAX_BUNDLES) {
        *why = "too many slices";
        return -MT_EINVAL;
    }
    memset(&ss, 0, sizeof(ss));
    ss.id = num;
    ss.pod_type = d->tpu_pod_type;
    ss.topology = d->tpu_topology;
    ss.nslices = k;
    if (per_host)
        ss.per_host = *per_host;
    else
        mt_res_set_init(&ss.per_host);
    *nb = shape.hosts * k;
    *why = "the scheduler rejected the TPU slice group";
    if (names && mt_sched_slice_adopt(mt_head_sched_lib(pgs->hs), &ss, names,
                                      (uint64_t)mt_now_mono_ms()) == 0)
        return 0;
    return mt_sched_slice_reserve(mt_head_sched_lib(pgs->hs), &ss,
                                  (uint64_t)mt_now_mono_ms());
}

/* Bundles: build the scheduler's request and reserve. */
static int reserve_bundles(struct mt_head_pgs *pgs, uint64_t num,
                           const struct mt_pg_def *d,
                           const struct mt_bundle_info *at, const char **why)
{
    struct pg_req r;
    int rc = -MT_EAGAIN;

    if ((*why = build_pg_req(pgs, d, num, &r))) {
        pg_req_release(&r);
        return -MT_EINVAL;
    }
    if (at) /* restored: where it was, if it still can be */
        rc = mt_sched_pg_adopt_at(mt_head_sched_lib(pgs->hs), &r.spec, at,
                                  (uint64_t)mt_now_mono_ms());
    if (rc != 0)
        rc = mt_sched_pg_create(mt_head_sched_lib(pgs->hs), &r.spec,
                                (uint64_t)mt_now_mono_ms());
    pg_req_release(&r);
    *why = "the scheduler rejected the placement group (empty bundle, GPU "
           "not whole above 1, ...)";
    return rc;
}

/* Create group num from def: where at or names say (restored, may be
 * NULL) or wherever it fits. RET the group, or NULL (why, err). */
static struct mt_head_pg *pg_make(struct mt_head_pgs *pgs, uint64_t num,
                                  struct mt_pg_def *def,
                                  const struct mt_res_set *per_host,
                                  const struct mt_bundle_info *at,
                                  const char *const *names,
                                  const char **why, int *err)
{
    struct mt_head_pg *pg;
    uint32_t nb = (uint32_t)def->nbundles;
    int rc;

    if ((unsigned)def->strategy > MT_SCHED_PG_STRICT_SPREAD) {
        *why = "unknown placement strategy";
        rc = -MT_EINVAL;
    } else if (def->tpu_pod_type) {
        rc = reserve_slices(pgs, num, def, per_host, names, &nb, why);
    } else {
        rc = reserve_bundles(pgs, num, def, at, why);
    }
    if (rc < 0 && rc != -MT_EAGAIN && rc != -MT_EINFEASIBLE) {
        *err = rc;
        mt_pg_def_release(def);
        return NULL;
    }
    pg = pg_new(pgs, num, def, nb);
    if (rc == 0)
        pg->state = MT_HEAD_PG_CREATED;
    for (size_t i = 0; i < pgs->n_ls; i++)
        if (pgs->ls[i].l->added)
            pgs->ls[i].l->added(pgs->ls[i].arg, pg);
    if (rc == -MT_EINFEASIBLE)
        on_decided(pgs, pg->num, rc);
    mt_head_sched_kick(pgs->hs);
    return pg;
}

struct mt_head_pg *mt_head_pg_create(struct mt_head_pgs *pgs,
                                     struct mt_pg_def *def,
                                     const struct mt_res_set *per_host,
                                     const char **why, int *err)
{
    return pg_make(pgs, pgs->next++, def, per_host, NULL, NULL, why, err);
}

struct mt_head_pg *mt_head_pg_restore(struct mt_head_pgs *pgs, uint64_t num,
                                      struct mt_pg_def *def, int64_t create_ms,
                                      const struct mt_head_pg_bundle *b,
                                      size_t n,
                                      const struct mt_res_set *per_host,
                                      const char *const *slice_names,
                                      const char **why)
{
    struct mt_sched *s = mt_head_sched_lib(pgs->hs);
    struct mt_bundle_info *at = NULL;
    struct mt_head_pg *pg;
    int err;

    if (mt_head_pg_find_num(pgs, num)) {
        mt_pg_def_release(def);
        *why = "a group with that id exists";
        return NULL;
    }
    if (n && n == def->nbundles) {
        at = mt_xcalloc(n, sizeof(*at));
        for (size_t i = 0; i < n && at; i++) {
            at[i].gpus = b[i].gpus;
            at[i].tpu_chips = b[i].tpu_chips;
            if (mt_sched_node_find(s, b[i].node_id, &at[i].node) < 0) {
                free(at);
                at = NULL;
            }
        }
    }
    pg = pg_make(pgs, num, def, per_host, at, slice_names, why, &err);
    free(at);
    if (pg)
        pg->create_ms = create_ms;
    return pg;
}

size_t mt_head_pg_bundles(struct mt_head_pgs *pgs, const struct mt_head_pg *pg,
                          struct mt_head_pg_bundle **out)
{
    struct mt_sched *s = mt_head_sched_lib(pgs->hs);
    struct mt_bundle_info b;
    struct mt_node *n;
    struct mt_head_pg_bundle *v = mt_xcalloc(pg->nbundles ? pg->nbundles : 1,
                                             sizeof(*v));

    *out = v;
    for (uint32_t i = 0; i < pg->nbundles; i++) {
        if (mt_sched_pg_bundle(s, pg->num, i, &b) < 0 ||
            !(n = mt_head_sched_node(pgs->hs, b.node)))
            return 0;
        v[i].node_id = n->id;
        v[i].gpus = b.gpus;
        v[i].tpu_chips = b.tpu_chips;
    }
    return pg->nbundles;
}

uint64_t mt_head_pgs_next(const struct mt_head_pgs *pgs)
{
    return pgs->next;
}

void mt_head_pgs_set_next(struct mt_head_pgs *pgs, uint64_t next)
{
    if (next > pgs->next)
        pgs->next = next;
}

/* ---- state ------------------------------------------------------------------- */

void mt_head_pg_refresh(struct mt_head_pgs *pgs, struct mt_head_pg *pg)
{
    enum mt_sched_pg_state st;

    if (pg->state == MT_HEAD_PG_REMOVED ||
        mt_sched_pg_state(mt_head_sched_lib(pgs->hs), pg->num, &st) < 0)
        return;
    pg->state = st == MT_SCHED_PG_CREATED        ? MT_HEAD_PG_CREATED
                : st == MT_SCHED_PG_RESCHEDULING ? MT_HEAD_PG_RESCHEDULING
                                           : MT_HEAD_PG_PENDING;
    if (pg->state == MT_HEAD_PG_CREATED)
        pg_set_error(pg, NULL);
}

/* The scheduler placed (status 0) or gave up on (-MT_EINFEASIBLE) a group. */
static void on_decided(void *arg, uint64_t num, int status)
{
    struct mt_head_pgs *pgs = arg;
    struct mt_head_pg *pg = mt_head_pg_find_num(pgs, num);

    if (!pg || pg->state == MT_HEAD_PG_REMOVED)
        return;
    if (status == 0) {
        pg->state = MT_HEAD_PG_CREATED;
        pg_set_error(pg, NULL);
        MT_INFO("placement group %s created", pg->id);
        notify(pgs, pg);
    } else if (status == -MT_EINFEASIBLE) {
        pg_set_error(pg, "infeasible: no set of live nodes can hold these "
                         "bundles with this strategy; it stays pending");
    }
}

void mt_head_pg_remove(struct mt_head_pgs *pgs, struct mt_head_pg *pg)
{
    if (pg->state == MT_HEAD_PG_REMOVED)
        return;
    mt_sched_pg_remove(mt_head_sched_lib(pgs->hs), pg->num);
    pg->state = MT_HEAD_PG_REMOVED;
    pg_set_error(pg, NULL);
    MT_INFO("placement group %s removed", pg->id);
    notify(pgs, pg);
    mt_head_sched_kick(pgs->hs);
}
