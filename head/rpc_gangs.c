/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_gangs.c -- the gang service's rpc adapter: SubmitGang, GetGang,
 * CancelGang and ListGangs over gangs.h, and the GangInfo that shows a
 * gang.
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

/* A GangInfo of g; pointers borrowed from g. Free with info_release. */
struct gang_info {
    Manta__GangInfo info;
    Manta__GangMember *m;
    Manta__GangMember **mp;
    char pg_id[17];
};

static void info_fill(struct mt_head *h, const struct mt_gang *g,
                      struct gang_info *p)
{
    Manta__GangInfo *i = &p->info;
    struct mt_head_pg *pg;

    manta__gang_info__init(i);
    p->m = mt_xcalloc(g->n + 1, sizeof(*p->m));
    p->mp = mt_xcalloc(g->n + 1, sizeof(*p->mp));
    for (uint32_t r = 0; r < g->n; r++) {
        const struct mt_gang_member *s = &g->m[r];
        Manta__GangMember *d = &p->m[r];

        manta__gang_member__init(d);
        d->rank = s->rank;
        d->slice = s->slice;
        d->host = s->host;
        d->local = s->local;
        d->task_id = (char *)s->task_id;
        d->node_id = s->node_id ? s->node_id : (char *)"";
        d->state = (Manta__TaskState)s->state;
        d->exit_code = s->exit_code;
        d->error = s->error ? s->error : (char *)"";
        p->mp[r] = d;
    }
    mt_num_id(MT_ID_PG, g->pg, p->pg_id);
    i->gang_id = (char *)g->id;
    i->name = g->def.name ? g->def.name : (char *)"";
    i->state = (Manta__GangState)g->state;
    i->tpu_pod_type = g->def.pod_type;
    i->tpu_slices = g->slices;
    i->launch = g->def.device_launch ? MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE
                                     : MANTA__GANG_LAUNCH__GANG_LAUNCH_HOST;
    i->pg_id = p->pg_id;
    i->n_slice_names = g->slices;
    for (uint32_t j = 0; j < g->slices; j++)
        if (!g->slice_names[j])
            i->n_slice_names = 0; /* never placed yet */
    i->slice_names = g->slice_names;
    i->attempt = g->attempt;
    i->max_restarts = g->def.max_restarts;
    i->n_members = g->n;
    i->members = p->mp;
    i->exit_code = g->exit_code;
    i->error = g->error ? g->error : (char *)"";
    if (!g->error && g->state == MT_HEAD_GANG_PENDING &&
        (pg = mt_head_pg_find_num(h->pgs, g->pg)) && pg->error)
        i->error = pg->error; /* e.g. infeasible */
    i->submit_time_ms = g->submit_ms;
    i->end_time_ms = g->end_ms;
    i->n_argv = g->def.member.argc;
    i->argv = g->def.member.argv;
}

static void info_release(struct gang_info *p)
{
    free(p->m);
    free(p->mp);
}

static void h_submit_gang(struct mt_rpc_call *call, const ProtobufCMessage *m,
                          void *arg)
{
    const Manta__SubmitGangRequest *req = (const Manta__SubmitGangRequest *)m;
    Manta__SubmitGangReply reply = MANTA__SUBMIT_GANG_REPLY__INIT;
    struct mt_head *h = arg;
    const char *why = NULL;
    struct mt_gang_def def;
    struct mt_gang *g = NULL;
    int err;

    memset(&def, 0, sizeof(def));
    mt_task_def_init(&def.member);
    if ((err = mt_gang_def_from_pb(req, &def, &why)) == 0)
        g = mt_head_gang_submit(h->gangs, &def, &why, &err);
    if (!g) {
        mt_rpc_fail(call, err ? err : -MT_EINVAL, why ? why : "refused");
        return;
    }
    reply.gang_id = g->id;
    mt_head_persist_reply(h->persist, call, &reply.base);
}

static void h_get_gang(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    const Manta__GetGangRequest *req = (const Manta__GetGangRequest *)m;
    Manta__GetGangReply reply = MANTA__GET_GANG_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_gang *g = mt_head_gang_find(h->gangs, req->gang_id);
    struct gang_info p;

    if (!g) {
        mt_rpc_fail(call, -MT_ENOENT, "no such gang");
        return;
    }
    info_fill(h, g, &p);
    reply.gang = &p.info;
    mt_rpc_reply(call, &reply.base);
    info_release(&p);
}

static void h_cancel_gang(struct mt_rpc_call *call, const ProtobufCMessage *m,
                          void *arg)
{
    const Manta__CancelGangRequest *req = (const Manta__CancelGangRequest *)m;
    Manta__CancelGangReply reply = MANTA__CANCEL_GANG_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_gang *g = mt_head_gang_find(h->gangs, req->gang_id);

    if (!g) {
        mt_rpc_fail(call, -MT_ENOENT, "no such gang");
        return;
    }
    mt_head_gang_cancel(h->gangs, g);
    mt_head_persist_reply(h->persist, call, &reply.base);
}

/* ListGangs' reply (see list_release), for the rpc and for /api/gangs. */
struct gang_list {
    struct gang_info *infos;
    Manta__GangInfo **ptrs;
    size_t n;
};

static void list_build(struct mt_head *h, const Manta__ListGangsRequest *req,
                       struct gang_list *l, Manta__ListGangsReply *reply)
{
    size_t total = mt_head_gangs_count(h->gangs);
    size_t max = req->limit ? req->limit : LIST_DEFAULT;

    if (max > total)
        max = total;
    manta__list_gangs_reply__init(reply);
    l->n = 0;
    l->infos = mt_xcalloc(max + 1, sizeof(*l->infos));
    l->ptrs = mt_xcalloc(max + 1, sizeof(*l->ptrs));
    for (size_t i = total; i-- > 0;) {
        struct mt_gang *g = mt_head_gangs_at(h->gangs, i);

        if ((req->state && (int)req->state != (int)g->state) ||
            reply->total++ < req->offset || l->n >= max)
            continue;
        info_fill(h, g, &l->infos[l->n]);
        l->ptrs[l->n] = &l->infos[l->n].info;
        l->n++;
    }
    reply->n_gangs = l->n;
    reply->gangs = l->ptrs;
}

static void list_release(struct gang_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        info_release(&l->infos[i]);
    free(l->infos);
    free(l->ptrs);
}

static void h_list_gangs(struct mt_rpc_call *call, const ProtobufCMessage *m,
                         void *arg)
{
    Manta__ListGangsReply reply;
    struct gang_list l;

    list_build(arg, (const Manta__ListGangsRequest *)m, &l, &reply);
    mt_rpc_reply(call, &reply.base);
    list_release(&l);
}

static void list_json(struct mt_head *h,
                      const struct mt_head_list_query *q,
                      struct mt_strbuf *out)
{
    Manta__ListGangsRequest req = MANTA__LIST_GANGS_REQUEST__INIT;
    Manta__ListGangsReply reply;
    struct gang_list l;

    req.limit = q->limit;
    req.offset = q->offset;
    req.state = (Manta__GangState)q->state;
    list_build(h, &req, &l, &reply);
    mt_list_json_gangs(out, &reply);
    list_release(&l);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_head_submit_gang, h_submit_gang},
    {&mt_head_get_gang, h_get_gang},
    {&mt_head_cancel_gang, h_cancel_gang},
    {&mt_head_list_gangs, h_list_gangs},
    {NULL, NULL},
};

const struct mt_head_adapter mt_head_rpc_gangs = {
    .handlers = handlers,
    .list_json = list_json,
};
