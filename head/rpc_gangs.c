/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_gangs.c -- HeadService SubmitGang, GetGang, CancelGang and ListGangs
 * over the gang table of gangs.c, and the GangInfo that shows a gang.
 *
 * THREAD: the head's loop thread only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "head/gangs.h"
#include "head/taskq.h"
#include "head_service.pb-c.h"

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
    struct mt_pg *pg;

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
    snprintf(p->pg_id, sizeof(p->pg_id), "%016" PRIx64, g->pg);
    i->gang_id = (char *)g->id;
    i->name = g->req->name;
    i->state = (Manta__GangState)g->state;
    i->tpu_pod_type = g->req->tpu_pod_type;
    i->tpu_slices = g->slices;
    i->launch = g->req->launch ? g->req->launch
                               : MANTA__GANG_LAUNCH__GANG_LAUNCH_HOST;
    i->pg_id = p->pg_id;
    i->n_slice_names = g->slices;
    for (uint32_t j = 0; j < g->slices; j++)
        if (!g->slice_names[j])
            i->n_slice_names = 0; /* never placed yet */
    i->slice_names = g->slice_names;
    i->attempt = g->attempt;
    i->max_restarts = g->req->max_restarts;
    i->n_members = g->n;
    i->members = p->mp;
    i->exit_code = g->exit_code;
    i->error = g->error ? g->error : (char *)"";
    if (!g->error && g->state == MANTA__GANG_STATE__GANG_STATE_PENDING &&
        (pg = mt__head_pg_find(h, p->pg_id)) && pg->error)
        i->error = pg->error; /* e.g. infeasible */
    i->submit_time_ms = g->submit_ms;
    i->end_time_ms = g->end_ms;
    i->n_argv = g->req->member->n_argv;
    i->argv = g->req->member->argv;
}

static void info_release(struct gang_info *p)
{
    free(p->m);
    free(p->mp);
}

void mt__h_submit_gang(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    const Manta__SubmitGangRequest *req = (const Manta__SubmitGangRequest *)m;
    Manta__SubmitGangReply reply = MANTA__SUBMIT_GANG_REPLY__INIT;
    struct mt_head *h = arg;
    const char *why = NULL;
    struct mt_gang *g;
    int err = 0;

    if (!(g = mt__gang_submit(h, req, &why, &err))) {
        mt_rpc_fail(call, err ? err : -MT_EINVAL, why ? why : "refused");
        return;
    }
    reply.gang_id = g->id;
    mt_rpc_reply(call, &reply.base);
}

void mt__h_get_gang(struct mt_rpc_call *call, const ProtobufCMessage *m,
                    void *arg)
{
    const Manta__GetGangRequest *req = (const Manta__GetGangRequest *)m;
    Manta__GetGangReply reply = MANTA__GET_GANG_REPLY__INIT;
    struct mt_gang *g = mt__gang_find(arg, req->gang_id);
    struct gang_info p;

    if (!g) {
        mt_rpc_fail(call, -MT_ENOENT, "no such gang");
        return;
    }
    info_fill(arg, g, &p);
    reply.gang = &p.info;
    mt_rpc_reply(call, &reply.base);
    info_release(&p);
}

void mt__h_cancel_gang(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    const Manta__CancelGangRequest *req = (const Manta__CancelGangRequest *)m;
    Manta__CancelGangReply reply = MANTA__CANCEL_GANG_REPLY__INIT;
    struct mt_gang *g = mt__gang_find(arg, req->gang_id);

    if (!g) {
        mt_rpc_fail(call, -MT_ENOENT, "no such gang");
        return;
    }
    mt__gang_cancel(arg, g);
    mt_rpc_reply(call, &reply.base);
}

void mt__h_list_gangs(struct mt_rpc_call *call, const ProtobufCMessage *m,
                      void *arg)
{
    const Manta__ListGangsRequest *req = (const Manta__ListGangsRequest *)m;
    Manta__ListGangsReply reply = MANTA__LIST_GANGS_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_gang_table *gt = &h->tq->gangs;
    size_t max = req->limit ? req->limit : LIST_DEFAULT, n = 0;
    struct gang_info *infos;
    Manta__GangInfo **ptrs;

    if (max > gt->n)
        max = gt->n;
    infos = mt_xcalloc(max + 1, sizeof(*infos));
    ptrs = mt_xcalloc(max + 1, sizeof(*ptrs));
    for (size_t i = gt->n; i-- > 0;) {
        if (req->state && (int)req->state != gt->v[i]->state)
            continue;
        if (reply.total++ >= max)
            continue;
        info_fill(h, gt->v[i], &infos[n]);
        ptrs[n] = &infos[n].info;
        n++;
    }
    reply.n_gangs = n;
    reply.gangs = ptrs;
    mt_rpc_reply(call, &reply.base);
    for (size_t i = 0; i < n; i++)
        info_release(&infos[i]);
    free(infos);
    free(ptrs);
}
