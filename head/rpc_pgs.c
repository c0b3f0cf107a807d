/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_pgs.c -- placement groups on the head: CreatePlacementGroup,
 * WaitPlacementGroup, RemovePlacementGroup and ListPlacementGroups, and the
 * group table behind them.
 *
 * The scheduler library reserves bundles atomically (all or none) and
 * reschedules the bundles of a dead node; this file keeps what users see:
 * id, name, the request as sent (a serialized blob), state, the reason a
 * group waits, and the callers waiting for it to be created. Tasks name a
 * group and a bundle index (rpc_tasks.c asks mt__head_pg_find for the mapping).
 * Removing a group stops the tasks running in it.
 *
 * THREAD: the head's loop thread only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "head/taskq.h"
#include "head_service.pb-c.h"

#define MAX_BUNDLES MT_PG_MAX_BUNDLES
#define LIST_DEFAULT 100
#define WAIT_MAX_MS 3600000

struct pg_waiter {
    uv_timer_t timer;
    struct mt_head *h;
    struct mt_rpc_call *call;
    uint64_t num;
    bool answered;
    struct pg_waiter *next;
};

/* ---- table ------------------------------------------------------------------ */

struct mt_pg *mt__head_pg_find(struct mt_head *h, const char *id)
{
    struct mt_head_tasks *q = h->tq;

    for (size_t i = 0; id && i < q->n_pgs; i++)
        if (strcmp(q->pgs[i]->id, id) == 0)
            return q->pgs[i];
    return NULL;
}

static struct mt_pg *pg_by_num(struct mt_head *h, uint64_t num)
{
    struct mt_head_tasks *q = h->tq;

    for (size_t i = 0; i < q->n_pgs; i++)
        if (q->pgs[i]->num == num)
            return q->pgs[i];
    return NULL;
}

static struct mt_pg *pg_new(struct mt_head *h, const char *name,
                            uint32_t nbundles)
{
    struct mt_head_tasks *q = h->tq;
    struct mt_pg *pg = mt_xcalloc(1, sizeof(*pg));

    pg->num = q->next_pg++;
    snprintf(pg->id, sizeof(pg->id), "%016" PRIx64, pg->num);
    pg->name = mt_xstrdup(name ? name : "");
    pg->nbundles = nbundles;
    pg->state = MANTA__PLACEMENT_GROUP_STATE__PG_STATE_PENDING;
    pg->create_ms = mt_now_wall_ms();
    mt_xgrow((void **)&q->pgs, &q->cap_pgs, q->n_pgs + 1, sizeof(*q->pgs));
    q->pgs[q->n_pgs++] = pg;
    return pg;
}

static void pg_set_error(struct mt_pg *pg, const char *error)
{
    free(pg->error);
    pg->error = error ? mt_xstrdup(error) : NULL;
}

static void pg_free(struct mt_pg *pg)
{
    free(pg->name);
    free(pg->spec);
    free(pg->error);
    free(pg);
}

/* ---- conversions --------------------------------------------------------------- */

/* Storage for a scheduler request built from the protobuf request. */
struct pg_req {
    struct mt_pg_spec spec;
    struct mt_bundle_spec *bundles;
    struct mt_label_expr *exprs;
    struct mt_label_selector *sels;
};

static const enum mt_label_op ops[] = {
    MT_LABEL_EQ, MT_LABEL_NE, MT_LABEL_IN,
    MT_LABEL_NOT_IN, MT_LABEL_EXISTS, MT_LABEL_NOT_EXISTS,
};

static void pg_req_release(struct pg_req *r)
{
    free(r->bundles);
    free(r->exprs);
    free(r->sels);
}

/* RET NULL or why the request is bad (r filled on success). */
static const char *build_pg_req(struct mt_head *h,
                                const Manta__CreatePlacementGroupRequest *req,
                                uint64_t num, struct pg_req *r)
{
    size_t nb = req->n_bundles;

    memset(r, 0, sizeof(*r));
    if (nb == 0 || nb > MAX_BUNDLES)
        return "a placement group needs 1 to 1024 bundles";
    if ((unsigned)req->strategy > MANTA__PLACEMENT_STRATEGY__PLACEMENT_STRICT_SPREAD)
        return "unknown placement strategy";
    r->bundles = mt_xcalloc(nb, sizeof(*r->bundles));
    r->exprs = mt_xcalloc(nb * MT_SEL_MAX_EXPRS, sizeof(*r->exprs));
    r->sels = mt_xcalloc(nb, sizeof(*r->sels));
    for (size_t b = 0; b < nb; b++) {
        const Manta__BundleSpec *bs = req->bundles[b];
        struct mt_label_expr *e = r->exprs + b * MT_SEL_MAX_EXPRS;

        mt_res_set_init(&r->bundles[b].res);
        if (bs->n_resources == 0 || bs->n_resources > MT_RES_SET_MAX)
            return "each bundle needs 1 to 8 resource kinds";
        for (size_t i = 0; i < bs->n_resources; i++) {
            int id = mt_sched_resource_id(h->tq->sched, bs->resources[i]->name);
            if (id < 0 || bs->resources[i]->quantity < 0 ||
                mt_res_set_add(&r->bundles[b].res, id,
                               bs->resources[i]->quantity) < 0)
                return "bad bundle resource (name or quantity)";
        }
        if (bs->n_label_selector > MT_SEL_MAX_EXPRS)
            return "too many label selector expressions in a bundle";
        for (size_t i = 0; i < bs->n_label_selector; i++) {
            const Manta__LabelMatch *m = bs->label_selector[i];
            if (!m->key[0] || m->n_values > MT_SEL_MAX_VALUES ||
                (unsigned)m->op > MANTA__LABEL_MATCH__OP__OP_NOT_EXISTS)
                return "bad bundle label selector";
            e[i].key = m->key;
            e[i].op = ops[m->op];
            e[i].values = (const char *const *)m->values;
            e[i].nvalues = m->n_values;
        }
        if (bs->n_label_selector) {
            r->sels[b].exprs = e;
            r->sels[b].n = bs->n_label_selector;
            r->bundles[b].selector = &r->sels[b];
        }
    }
    r->spec.id = num;
    r->spec.strategy = (enum mt_pg_strategy)req->strategy;
    r->spec.bundles = r->bundles;
    r->spec.nbundles = nb;
    return NULL;
}

/* Refresh pg->state from the scheduler (node deaths move groups). */
static void pg_refresh(struct mt_head *h, struct mt_pg *pg)
{
    enum mt_pg_state st;

    if (pg->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_REMOVED ||
        mt_sched_pg_state(h->tq->sched, pg->num, &st) < 0)
        return;
    pg->state = st == MT_PG_CREATED ? MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED
                : st == MT_PG_RESCHEDULING
                    ? MANTA__PLACEMENT_GROUP_STATE__PG_STATE_RESCHEDULING
                    : MANTA__PLACEMENT_GROUP_STATE__PG_STATE_PENDING;
    if (pg->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED)
        pg_set_error(pg, NULL);
}

static const char *node_id_of(struct mt_head *h, uint32_t handle)
{
    for (size_t i = 0; handle != MT_NODE_NONE && i < h->nodes.n; i++)
        if (h->nodes.v[i]->sched_node == handle)
            return h->nodes.v[i]->id;
    return "";
}

/* A PlacementGroupInfo of pg; free with info_release. */
struct pg_info {
    Manta__PlacementGroupInfo info;
    Manta__CreatePlacementGroupRequest *req;
    char **nodes;
    Manta__BundleSpec *sb, **sbp;        /* a slice group's bundles */
    Manta__ResourceEntry *sr, **srp;
};

/* A slice group's request names no bundles: show what each host's bundle
 * reserves (its chips, ...) as the scheduler holds it. */
static void slice_bundles_fill(struct mt_head *h, struct mt_pg *pg,
                               struct pg_info *p)
{
    const struct mt_res_names *names = mt_sched_resource_names(h->tq->sched);
    size_t k = 0;

    p->sb = mt_xcalloc(pg->nbundles + 1, sizeof(*p->sb));
    p->sbp = mt_xcalloc(pg->nbundles + 1, sizeof(*p->sbp));
    p->sr = mt_xcalloc((size_t)pg->nbundles * MT_RES_SET_MAX + 1,
                       sizeof(*p->sr));
    p->srp = mt_xcalloc((size_t)pg->nbundles * MT_RES_SET_MAX + 1,
                        sizeof(*p->srp));
    for (uint32_t i = 0; i < pg->nbundles; i++) {
        struct mt_bundle_info bi;

        manta__bundle_spec__init(&p->sb[i]);
        p->sbp[i] = &p->sb[i];
        p->sb[i].resources = &p->srp[k];
        if (mt_sched_pg_bundle(h->tq->sched, pg->num, i, &bi) < 0)
            continue;
        for (uint8_t j = 0; j < bi.res.n; j++, k++) {
            manta__resource_entry__init(&p->sr[k]);
            p->sr[k].name = (char *)mt_res_names_name(names, bi.res.it[j].id);
            p->sr[k].quantity = bi.res.it[j].qty;
            p->srp[k] = &p->sr[k];
            p->sb[i].n_resources++;
        }
    }
    p->info.n_bundles = pg->nbundles;
    p->info.bundles = p->sbp;
    p->info.strategy = MANTA__PLACEMENT_STRATEGY__PLACEMENT_STRICT_SPREAD;
}

static void info_fill(struct mt_head *h, struct mt_pg *pg, struct pg_info *p)
{
    memset(p, 0, sizeof(*p));
    manta__placement_group_info__init(&p->info);
    pg_refresh(h, pg);
    p->req = manta__create_placement_group_request__unpack(NULL, pg->spec_len,
                                                           pg->spec);
    p->nodes = mt_xcalloc(pg->nbundles + 1, sizeof(*p->nodes));
    for (uint32_t i = 0; i < pg->nbundles; i++) {
        struct mt_bundle_info bi;
        bool placed = pg->state != MANTA__PLACEMENT_GROUP_STATE__PG_STATE_REMOVED &&
                      mt_sched_pg_bundle(h->tq->sched, pg->num, i, &bi) == 0;
        p->nodes[i] = (char *)(placed ? node_id_of(h, bi.node) : "");
    }
    p->info.pg_id = pg->id;
    p->info.name = pg->name;
    p->info.state = (Manta__PlacementGroupState)pg->state;
    p->info.error = pg->error ? pg->error : (char *)"";
    p->info.create_time_ms = pg->create_ms;
    p->info.n_bundle_node_ids = pg->nbundles;
    p->info.bundle_node_ids = p->nodes;
    if (p->req) {
        p->info.strategy = p->req->strategy;
        p->info.n_bundles = p->req->n_bundles;
        p->info.bundles = p->req->bundles;
        if (*p->req->tpu_pod_type &&
            pg->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED)
            slice_bundles_fill(h, pg, p);
    }
}

static void info_release(struct pg_info *p)
{
    if (p->req)
        manta__create_placement_group_request__free_unpacked(p->req, NULL);
    free(p->nodes);
    free(p->sb);
    free(p->sbp);
    free(p->sr);
    free(p->srp);
}

/* ---- waiters ------------------------------------------------------------------- */

static void on_waiter_closed(uv_handle_t *handle)
{
    free(handle->data);
}

static void waiter_answer(struct pg_waiter *w)
{
    Manta__WaitPlacementGroupReply reply = MANTA__WAIT_PLACEMENT_GROUP_REPLY__INIT;
    struct mt_pg *pg = w->h->tq ? pg_by_num(w->h, w->num) : NULL;
    struct pg_info p;

    if (w->answered)
        return;
    w->answered = true;
    uv_timer_stop(&w->timer);
    if (pg) {
        info_fill(w->h, pg, &p);
        reply.group = &p.info;
        mt_rpc_reply(w->call, &reply.base);
        info_release(&p);
    } else {
        mt_rpc_fail(w->call, -MT_ENOENT, "placement group forgotten");
    }
    uv_close((uv_handle_t *)&w->timer, on_waiter_closed);
}

static void waiter_unlink(struct mt_pg *pg, struct pg_waiter *w)
{
    struct pg_waiter **pp = &pg->waiters;

    while (*pp && *pp != w)
        pp = &(*pp)->next;
    if (*pp)
        *pp = w->next;
}

static void on_wait_timeout(uv_timer_t *t)
{
    struct pg_waiter *w = t->data;
    struct mt_pg *pg = pg_by_num(w->h, w->num);

    if (pg)
        waiter_unlink(pg, w);
    waiter_answer(w);
}

static void answer_all(struct mt_pg *pg)
{
    while (pg->waiters) {
        struct pg_waiter *w = pg->waiters;
        pg->waiters = w->next;
        waiter_answer(w);
    }
}

/* ---- decisions from the scheduler ------------------------------------------------ */

void mt__head_pg_decided(struct mt_head *h, uint64_t num, int status)
{
    struct mt_pg *pg = pg_by_num(h, num);

    if (!pg || pg->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_REMOVED)
        return;
    if (status == 0) {
        pg->state = MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED;
        pg_set_error(pg, NULL);
        MT_INFO("placement group %s created", pg->id);
        answer_all(pg);
        mt__gang_pg_created(h, num);
    } else if (status == -MT_EINFEASIBLE) {
        pg_set_error(pg, "infeasible: no set of live nodes can hold these "
                         "bundles with this strategy; it stays pending");
    }
}

/* ---- handlers --------------------------------------------------------------------- */

/* A slice group (tpu_pod_type set): every host of whole slices. */
static int create_slice(struct mt_head *h,
                        const Manta__CreatePlacementGroupRequest *req,
                        const struct mt_res_set *per_host, uint32_t *nb,
                        const char **why)
{
    struct mt_slice_spec ss;
    struct mt_tpu_slice shape;
    uint32_t k = req->tpu_slices ? req->tpu_slices : 1;

    if (req->n_bundles) {
        *why = "a TPU slice group takes a pod type, not bundles";
        return -MT_EINVAL;
    }
    if (mt_tpu_slice_parse(req->tpu_pod_type,
                           *req->tpu_topology ? req->tpu_topology : NULL, 0,
                           &shape) < 0) {
        *why = "unknown TPU pod type or topology (e.g. v4-16, v6e-16, "
               "v5p-8; topology 2x2x2)";
        return -MT_EINVAL;
    }
    if (k > 64 || (uint64_t)shape.hosts * k > MAX_BUNDLES) {
        *why = "too many slices";
        return -MT_EINVAL;
    }
    memset(&ss, 0, sizeof(ss));
    ss.id = h->tq->next_pg;
    ss.pod_type = req->tpu_pod_type;
    ss.topology = *req->tpu_topology ? req->tpu_topology : NULL;
    ss.nslices = k;
    if (per_host)
        ss.per_host = *per_host;
    else
        mt_res_set_init(&ss.per_host);
    *nb = shape.hosts * k;
    *why = "the scheduler rejected the TPU slice group";
    return mt_sched_slice_reserve(h->tq->sched, &ss,
                                  (uint64_t)mt_now_mono_ms());
}

struct mt_pg *mt__head_pg_create(struct mt_head *h,
                                 const Manta__CreatePlacementGroupRequest *req,
                                 const struct mt_res_set *per_host,
                                 const char **why, int *err)
{
    struct pg_req r;
    struct mt_pg *pg;
    uint32_t nb = 0;
    size_t len;
    int rc;

    if (*req->tpu_pod_type) {
        rc = create_slice(h, req, per_host, &nb, why);
    } else {
        if ((*why = build_pg_req(h, req, h->tq->next_pg, &r))) {
            pg_req_release(&r);
            *err = -MT_EINVAL;
            return NULL;
        }
        rc = mt_sched_pg_create(h->tq->sched, &r.spec,
                                (uint64_t)mt_now_mono_ms());
        pg_req_release(&r);
        nb = (uint32_t)req->n_bundles;
        *why = "the scheduler rejected the placement group (empty bundle, "
               "GPU not whole above 1, ...)";
    }
    if (rc < 0 && rc != -MT_EAGAIN && rc != -MT_EINFEASIBLE) {
        *err = rc;
        return NULL;
    }
    pg = pg_new(h, req->name, nb);
    len = manta__create_placement_group_request__get_packed_size(req);
    pg->spec = mt_xmalloc(len ? len : 1);
    pg->spec_len = len;
    manta__create_placement_group_request__pack(req, pg->spec);
    if (rc == 0)
        pg->state = MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED;
    else if (rc == -MT_EINFEASIBLE)
        mt__head_pg_decided(h, pg->num, rc);
    mt__sched_kick(h);
    return pg;
}

void mt__h_create_pg(struct mt_rpc_call *call, const ProtobufCMessage *m,
                     void *arg)
{
    const Manta__CreatePlacementGroupRequest *req =
        (const Manta__CreatePlacementGroupRequest *)m;
    Manta__CreatePlacementGroupReply reply =
        MANTA__CREATE_PLACEMENT_GROUP_REPLY__INIT;
    struct mt_head *h = arg;
    const char *why = NULL;
    struct mt_pg *pg;
    int err = 0;

    if (strlen(req->name) > 256) {
        mt_rpc_fail(call, -MT_EINVAL, "name too long");
        return;
    }
    if (!(pg = mt__head_pg_create(h, req, NULL, &why, &err))) {
        mt_rpc_fail(call, err, why);
        return;
    }
    reply.pg_id = pg->id;
    reply.state = (Manta__PlacementGroupState)pg->state;
    mt_rpc_reply(call, &reply.base);
}

void mt__h_wait_pg(struct mt_rpc_call *call, const ProtobufCMessage *m,
                   void *arg)
{
    const Manta__WaitPlacementGroupRequest *req =
        (const Manta__WaitPlacementGroupRequest *)m;
    struct mt_head *h = arg;
    struct mt_pg *pg = mt__head_pg_find(h, req->pg_id);
    struct pg_waiter *w;

    if (!pg) {
        mt_rpc_fail(call, -MT_ENOENT, "no such placement group");
        return;
    }
    pg_refresh(h, pg);
    w = mt_xcalloc(1, sizeof(*w));
    w->h = h;
    w->call = call;
    w->num = pg->num;
    uv_timer_init(h->loop, &w->timer);
    w->timer.data = w;
    if (pg->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED ||
        pg->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_REMOVED ||
        req->timeout_ms == 0) {
        waiter_answer(w);
        return;
    }
    w->next = pg->waiters;
    pg->waiters = w;
    uv_timer_start(&w->timer, on_wait_timeout,
                   req->timeout_ms > WAIT_MAX_MS ? WAIT_MAX_MS
                                                 : req->timeout_ms, 0);
}

struct stop_ctx {
    struct mt_head *h;
    uint64_t pg;
};

static bool stop_in_group(void *arg, struct mt_task *t)
{
    struct stop_ctx *c = arg;

    if (t->pg == c->pg && !mt_task_terminal(t) && t->state != MT_TASK_PENDING)
        mt__task_stop(c->h, t, "its placement group was removed");
    return true;
}

void mt__head_pg_remove(struct mt_head *h, struct mt_pg *pg)
{
    struct stop_ctx c = {h, pg->num};

    if (pg->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_REMOVED)
        return;
    mt_sched_pg_remove(h->tq->sched, pg->num);
    pg->state = MANTA__PLACEMENT_GROUP_STATE__PG_STATE_REMOVED;
    pg_set_error(pg, NULL);
    mt_task_table_visit_newest(&h->tq->table, stop_in_group, &c);
    answer_all(pg);
    MT_INFO("placement group %s removed", pg->id);
    mt__sched_kick(h);
}

void mt__h_remove_pg(struct mt_rpc_call *call, const ProtobufCMessage *m,
                     void *arg)
{
    const Manta__RemovePlacementGroupRequest *req =
        (const Manta__RemovePlacementGroupRequest *)m;
    Manta__RemovePlacementGroupReply reply =
        MANTA__REMOVE_PLACEMENT_GROUP_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_pg *pg = mt__head_pg_find(h, req->pg_id);

    if (!pg) {
        mt_rpc_fail(call, -MT_ENOENT, "no such placement group");
        return;
    }
    if (mt__gang_owns_pg(h, pg->num)) {
        mt_rpc_fail(call, -MT_ESTATE, "this placement group belongs to a "
                    "gang; cancel the gang instead (manta gang cancel)");
        return;
    }
    mt__head_pg_remove(h, pg);
    mt_rpc_reply(call, &reply.base);
}

void mt__h_list_pgs(struct mt_rpc_call *call, const ProtobufCMessage *m,
                    void *arg)
{
    const Manta__ListPlacementGroupsRequest *req =
        (const Manta__ListPlacementGroupsRequest *)m;
    Manta__ListPlacementGroupsReply reply =
        MANTA__LIST_PLACEMENT_GROUPS_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_head_tasks *q = h->tq;
    size_t max = req->limit ? req->limit : LIST_DEFAULT, n = 0;
    struct pg_info *infos;
    Manta__PlacementGroupInfo **ptrs;

    if (max > q->n_pgs)
        max = q->n_pgs;
    infos = mt_xcalloc(max + 1, sizeof(*infos));
    ptrs = mt_xcalloc(max + 1, sizeof(*ptrs));
    for (size_t i = q->n_pgs; i-- > 0;) {
        pg_refresh(h, q->pgs[i]);
        if (req->state && (int)req->state != q->pgs[i]->state)
            continue;
        if (reply.total++ >= max)
            continue;
        info_fill(h, q->pgs[i], &infos[n]);
        ptrs[n] = &infos[n].info;
        n++;
    }
    reply.n_groups = n;
    reply.groups = ptrs;
    mt_rpc_reply(call, &reply.base);
    for (size_t i = 0; i < n; i++)
        info_release(&infos[i]);
    free(infos);
    free(ptrs);
}

void mt__head_pgs_release(struct mt_head *h)
{
    struct mt_head_tasks *q = h->tq;

    for (size_t i = 0; i < q->n_pgs; i++) {
        answer_all(q->pgs[i]);
        pg_free(q->pgs[i]);
    }
    free(q->pgs);
    q->pgs = NULL;
    q->n_pgs = 0;
}
