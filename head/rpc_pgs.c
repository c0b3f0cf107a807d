/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_pgs.c -- the placement group service's rpc adapter:
 * CreatePlacementGroup, WaitPlacementGroup, RemovePlacementGroup and
 * ListPlacementGroups over pgs.h, and PlacementGroupInfo with the node of
 * each bundle. A wait on a group that is not created yet is parked on the
 * group until it is created or removed (a group listener) or times out.
 *
 * THREAD: the head's loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "head/persist.h"
#include "head/rpc_services.h"
#include "head_service.pb-c.h"
#include "proto/convert.h"
#include "proto/list_json.h"
#include "proto/services.h"

#define LIST_DEFAULT 100
#define WAIT_MAX_MS 3600000

struct mt_pg_waiter {
    uv_timer_t timer;
    struct mt_head *h;
    struct mt_rpc_call *call;
    uint64_t num;
    bool answered;
    struct mt_pg_waiter *next;
};

/* ---- PlacementGroupInfo --------------------------------------------------- */

static const char *node_id_of(struct mt_head *h, uint32_t handle)
{
    struct mt_node_table *t = mt_head_nodes_table(h->nodes);

    for (size_t i = 0; handle != MT_NODE_NONE && i < t->n; i++)
        if (t->v[i]->sched_node == handle)
            return t->v[i]->id;
    return "";
}

/* A slice group's request names no bundles: show what each host's bundle
 * reserves (its chips, ...) as the scheduler holds it. */
static void slice_bundles_fill(struct mt_head *h, struct mt_pb_arena *a,
                               const struct mt_head_pg *pg,
                               Manta__PlacementGroupInfo *info)
{
    struct mt_sched *s = mt_head_sched_lib(h->sched);
    const struct mt_res_names *names = mt_sched_resource_names(s);
    Manta__BundleSpec *b = mt_pb_alloc(a, (pg->nbundles + 1) * sizeof(*b));
    Manta__ResourceEntry *r = mt_pb_alloc(a, ((size_t)pg->nbundles *
                                              MT_RES_SET_MAX + 1) *
                                                 sizeof(*r));
    Manta__ResourceEntry **rp = mt_pb_alloc(a, ((size_t)pg->nbundles *
                                                MT_RES_SET_MAX + 1) *
                                                   sizeof(*rp));
    size_t k = 0;

    info->bundles = mt_pb_alloc(a, (pg->nbundles + 1) * sizeof(*info->bundles));
    if (!b || !r || !rp || !info->bundles)
        mt_xoom(pg->nbundles);
    for (uint32_t i = 0; i < pg->nbundles; i++) {
        struct mt_bundle_info bi;

        manta__bundle_spec__init(&b[i]);
        info->bundles[i] = &b[i];
        b[i].resources = &rp[k];
        if (mt_sched_pg_bundle(s, pg->num, i, &bi) < 0)
            continue;
        for (uint8_t j = 0; j < bi.res.n; j++, k++) {
            manta__resource_entry__init(&r[k]);
            r[k].name = (char *)mt_res_names_name(names, bi.res.it[j].id);
            r[k].quantity = bi.res.it[j].qty;
            rp[k] = &r[k];
            b[i].n_resources++;
        }
    }
    info->n_bundles = pg->nbundles;
    info->strategy = MANTA__PLACEMENT_STRATEGY__PLACEMENT_STRICT_SPREAD;
}

/* An info of pg: pointers borrowed from pg, arrays from a. */
static void info_fill(struct mt_head *h, struct mt_pb_arena *a,
                      struct mt_head_pg *pg, Manta__PlacementGroupInfo *info)
{
    Manta__CreatePlacementGroupRequest req;
    char **nodes = mt_pb_alloc(a, (pg->nbundles + 1) * sizeof(*nodes));

    if (!nodes || mt_pb_pg_request_view(a, &pg->def, &req) < 0)
        mt_xoom(pg->nbundles);
    manta__placement_group_info__init(info);
    mt_head_pg_refresh(h->pgs, pg);
    for (uint32_t i = 0; i < pg->nbundles; i++) {
        struct mt_bundle_info bi;
        bool placed = pg->state != MT_HEAD_PG_REMOVED &&
                      mt_sched_pg_bundle(mt_head_sched_lib(h->sched), pg->num,
                                         i, &bi) == 0;
        nodes[i] = (char *)(placed ? node_id_of(h, bi.node) : "");
    }
    info->pg_id = pg->id;
    info->name = pg->def.name ? pg->def.name : (char *)"";
    info->state = (Manta__PlacementGroupState)pg->state;
    info->error = pg->error ? pg->error : (char *)"";
    info->create_time_ms = pg->create_ms;
    info->n_bundle_node_ids = pg->nbundles;
    info->bundle_node_ids = nodes;
    info->strategy = req.strategy;
    info->n_bundles = req.n_bundles;
    info->bundles = req.bundles;
    if (pg->def.tpu_pod_type && pg->state == MT_HEAD_PG_CREATED)
        slice_bundles_fill(h, a, pg, info);
}

/* ---- waiters ------------------------------------------------------------------- */

static void on_waiter_closed(uv_handle_t *handle)
{
    free(handle->data);
}

static void waiter_answer(struct mt_pg_waiter *w)
{
    Manta__WaitPlacementGroupReply reply =
        MANTA__WAIT_PLACEMENT_GROUP_REPLY__INIT;
    struct mt_head_pg *pg = mt_head_pg_find_num(w->h->pgs, w->num);
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__PlacementGroupInfo info;

    if (w->answered)
        return;
    w->answered = true;
    uv_timer_stop(&w->timer);
    if (pg) {
        info_fill(w->h, &a, pg, &info);
        reply.group = &info;
        mt_rpc_reply(w->call, &reply.base);
        mt_pb_arena_release(&a);
    } else {
        mt_rpc_fail(w->call, -MT_ENOENT, "placement group forgotten");
    }
    uv_close((uv_handle_t *)&w->timer, on_waiter_closed);
}

static void waiter_unlink(struct mt_head_pg *pg, struct mt_pg_waiter *w)
{
    struct mt_pg_waiter **pp = &pg->waiters;

    while (*pp && *pp != w)
        pp = &(*pp)->next;
    if (*pp)
        *pp = w->next;
}

static void on_wait_timeout(uv_timer_t *t)
{
    struct mt_pg_waiter *w = t->data;
    struct mt_head_pg *pg = mt_head_pg_find_num(w->h->pgs, w->num);

    if (pg)
        waiter_unlink(pg, w);
    waiter_answer(w);
}

static void answer_all(struct mt_head_pg *pg)
{
    while (pg->waiters) {
        struct mt_pg_waiter *w = pg->waiters;
        pg->waiters = w->next;
        waiter_answer(w);
    }
}

/* A group was created or removed: its waiters get their answer. */
static void pg_changed(void *arg, struct mt_head_pg *pg)
{
    answer_all(pg);
}

static const struct mt_head_pg_listener listener = {
    .changed = pg_changed,
};

static void start(struct mt_head *h)
{
    mt_head_pgs_listen(h->pgs, &listener, h);
}

static void stop(struct mt_head *h)
{
    for (size_t i = 0; i < mt_head_pgs_count(h->pgs); i++)
        answer_all(mt_head_pgs_at(h->pgs, i));
}

/* ---- handlers --------------------------------------------------------------------- */

static void h_create_pg(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    const Manta__CreatePlacementGroupRequest *req =
        (const Manta__CreatePlacementGroupRequest *)m;
    Manta__CreatePlacementGroupReply reply =
        MANTA__CREATE_PLACEMENT_GROUP_REPLY__INIT;
    struct mt_head *h = arg;
    const char *why = NULL;
    struct mt_head_pg *pg;
    struct mt_pg_def def;
    int err;

    memset(&def, 0, sizeof(def));
    if (strlen(req->name) > 256) {
        mt_rpc_fail(call, -MT_EINVAL, "name too long");
        return;
    }
    if ((err = mt_pg_def_from_pb(req, &def, &why)) < 0 ||
        !(pg = mt_head_pg_create(h->pgs, &def, NULL, &why, &err))) {
        mt_rpc_fail(call, err, why ? why : "out of memory");
        return;
    }
    reply.pg_id = pg->id;
    reply.state = (Manta__PlacementGroupState)pg->state;
    if (pg->state == MT_HEAD_PG_CREATED) {
        struct mt_pb_arena a = MT_PB_ARENA_INIT;
        Manta__PlacementGroupInfo info;

        info_fill(h, &a, pg, &info);
        reply.group = &info;
        mt_head_persist_reply(h->persist, call, &reply.base);
        mt_pb_arena_release(&a);
        return;
    }
    mt_head_persist_reply(h->persist, call, &reply.base);
}

static void h_wait_pg(struct mt_rpc_call *call, const ProtobufCMessage *m,
                      void *arg)
{
    const Manta__WaitPlacementGroupRequest *req =
        (const Manta__WaitPlacementGroupRequest *)m;
    struct mt_head *h = arg;
    struct mt_head_pg *pg = mt_head_pg_find(h->pgs, req->pg_id);
    struct mt_pg_waiter *w;

    if (!pg) {
        mt_rpc_fail(call, -MT_ENOENT, "no such placement group");
        return;
    }
    mt_head_pg_refresh(h->pgs, pg);
    w = mt_xcalloc(1, sizeof(*w));
    w->h = h;
    w->call = call;
    w->num = pg->num;
    uv_timer_init(h->loop, &w->timer);
    w->timer.data = w;
    if (pg->state == MT_HEAD_PG_CREATED || pg->state == MT_HEAD_PG_REMOVED ||
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

static void h_remove_pg(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    const Manta__RemovePlacementGroupRequest *req =
        (const Manta__RemovePlacementGroupRequest *)m;
    Manta__RemovePlacementGroupReply reply =
        MANTA__REMOVE_PLACEMENT_GROUP_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_head_pg *pg = mt_head_pg_find(h->pgs, req->pg_id);

    if (!pg) {
        mt_rpc_fail(call, -MT_ENOENT, "no such placement group");
        return;
    }
    if (mt_head_gangs_own_pg(h->gangs, pg->num)) {
        mt_rpc_fail(call, -MT_ESTATE, "this placement group belongs to a "
                    "gang; cancel the gang instead (manta gang cancel)");
        return;
    }
    mt_head_pg_remove(h->pgs, pg);
    mt_head_persist_reply(h->persist, call, &reply.base);
}

/* ListPlacementGroups' reply (see list_release), for the rpc and for
 * /api/placement_groups. */
struct pg_list {
    struct mt_pb_arena a;
    Manta__PlacementGroupInfo *infos;
    Manta__PlacementGroupInfo **ptrs;
};

static void list_build(struct mt_head *h,
                       const Manta__ListPlacementGroupsRequest *req,
                       struct pg_list *l,
                       Manta__ListPlacementGroupsReply *reply)
{
    size_t total = mt_head_pgs_count(h->pgs), n = 0;
    size_t max = req->limit ? req->limit : LIST_DEFAULT;

    if (max > total)
        max = total;
    manta__list_placement_groups_reply__init(reply);
    memset(l, 0, sizeof(*l));
    l->infos = mt_xcalloc(max + 1, sizeof(*l->infos));
    l->ptrs = mt_xcalloc(max + 1, sizeof(*l->ptrs));
    for (size_t i = total; i-- > 0;) {
        struct mt_head_pg *pg = mt_head_pgs_at(h->pgs, i);

        mt_head_pg_refresh(h->pgs, pg);
        if ((req->state && (int)req->state != (int)pg->state) ||
            reply->total++ < req->offset || n >= max)
            continue;
        info_fill(h, &l->a, pg, &l->infos[n]);
        l->ptrs[n] = &l->infos[n];
        n++;
    }
    reply->n_groups = n;
    reply->groups = l->ptrs;
}

static void list_release(struct pg_list *l)
{
    mt_pb_arena_release(&l->a);
    free(l->infos);
    free(l->ptrs);
}

static void h_list_pgs(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    Manta__ListPlacementGroupsReply reply;
    struct pg_list l;

    list_build(arg, (const Manta__ListPlacementGroupsRequest *)m, &l, &reply);
    mt_rpc_reply(call, &reply.base);
    list_release(&l);
}

static void list_json(struct mt_head *h,
                      const struct mt_head_list_query *q,
                      struct mt_strbuf *out)
{
    Manta__ListPlacementGroupsRequest req =
        MANTA__LIST_PLACEMENT_GROUPS_REQUEST__INIT;
    Manta__ListPlacementGroupsReply reply;
    struct pg_list l;

    req.limit = q->limit;
    req.offset = q->offset;
    req.state = (Manta__PlacementGroupState)q->state;
    list_build(h, &req, &l, &reply);
    mt_list_json_pgs(out, &reply);
    list_release(&l);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_head_create_pg, h_create_pg},
    {&mt_head_wait_pg, h_wait_pg},
    {&mt_head_remove_pg, h_remove_pg},
    {&mt_head_list_pgs, h_list_pgs},
    {NULL, NULL},
};

const struct mt_head_adapter mt_head_rpc_pgs = {
    .handlers = handlers,
    .list_json = list_json,
    .start = start,
    .stop = stop,
};
