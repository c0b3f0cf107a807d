/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_gang.c -- gangs in protobuf: SubmitGang (a view on the options' def,
 * proto/convert.h), GetGang, CancelGang and ListGangs through the client's
 * call to the head. A gang's detail is a plain C view on the kept reply
 * (rpc_reply.h); its JSON comes from proto/list_json.c.
 *
 * THREAD: the caller's.
 */
#include "sdk/rpc_gang.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "proto/convert.h"
#include "proto/list_json.h"
#include "proto/services.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/rpc_reply.h"

int mt__gang_submit(struct mt_client *c, const struct mt_gang_def *d,
                    char *id, size_t idlen)
{
    Manta__SubmitGangRequest req;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    int rc = mt_pb_gang_request_view(&a, d, &req);

    if (rc < 0)
        rc = mt__set_error(c, rc, "out of memory");
    else
        rc = mt__call_for_id(c, &mt_head_submit_gang, &req, "gang_id",
                             "the head returned no gang id", id, idlen);
    mt_pb_arena_release(&a);
    return rc;
}

int mt__gang_cancel(struct mt_client *c, const char *id)
{
    Manta__CancelGangRequest req = MANTA__CANCEL_GANG_REQUEST__INIT;
    void *reply;
    int rc;

    req.gang_id = (char *)id;
    rc = mt__head_call(c, &mt_head_cancel_gang, &req, c->rpc_timeout_ms,
                       MT__CALL_WAIT, &reply);
    mt__msg_free(reply);
    return rc;
}

/* ---- details ------------------------------------------------------------- */

static void fill_member(const Manta__GangMember *x, mt_gang_member_info *m)
{
    m->rank = x->rank;
    m->slice = x->slice;
    m->host = x->host;
    m->local = x->local;
    m->task_id = x->task_id;
    m->node_id = x->node_id;
    m->state = (mt_task_state)x->state;
    m->exit_code = x->exit_code;
    m->error = x->error;
}

/* g as a detail view in k. RET 0, -MT_ENOMEM. */
static int fill_detail(struct mt__keep *k, const Manta__GangInfo *g,
                       mt_gang_detail *d)
{
    size_t n = g->n_members;
    mt_gang_member_info *m = n ? mt__keep_alloc(k, n * sizeof(*m)) : NULL;

    if (n && !m)
        return -MT_ENOMEM;
    for (size_t i = 0; i < n; i++)
        fill_member(g->members[i], &m[i]);
    d->gang_id = g->gang_id;
    d->name = g->name;
    d->state = (mt_gang_state)g->state;
    d->pod_type = g->tpu_pod_type;
    d->slices = g->tpu_slices;
    d->launch = g->launch == MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE
                    ? MT_GANG_LAUNCH_DEVICE : MT_GANG_LAUNCH_HOST;
    d->pg_id = g->pg_id;
    d->slice_names = (const char *const *)g->slice_names;
    d->n_slice_names = g->n_slice_names;
    d->attempt = g->attempt;
    d->max_restarts = g->max_restarts;
    d->members = m;
    d->n_members = g->n_members;
    d->exit_code = g->exit_code;
    d->error = g->error;
    d->submit_time_ms = g->submit_time_ms;
    d->end_time_ms = g->end_time_ms;
    d->argv = (const char *const *)g->argv;
    d->argc = g->n_argv;
    return 0;
}

int mt__gang_get(struct mt_client *c, const char *id,
                 struct mt__gang_detail **out, char **json)
{
    Manta__GetGangRequest req = MANTA__GET_GANG_REQUEST__INIT;
    struct mt_strbuf sb = MT_STRBUF_INIT_SOFT;
    struct mt__gang_detail *d = NULL;
    Manta__GetGangReply *r;
    int rc;

    req.gang_id = (char *)id;
    rc = mt__head_call(c, &mt_head_get_gang, &req, c->rpc_timeout_ms,
                       MT__CALL_WAIT, (void **)&r);
    if (rc < 0)
        return rc;
    if (!r->gang) {
        mt__msg_free(r);
        return mt__set_error(c, -MT_EPROTO, "the head sent no gang");
    }
    if (json) {
        mt_json_gang(&sb, r->gang);
        mt_strbuf_adds(&sb, "\n");
        rc = mt__json_take(&sb, json);
    }
    if (rc == 0 && out) {
        rc = (d = calloc(1, sizeof(*d))) ? 0 : -MT_ENOMEM;
        if (rc == 0) {
            d->keep.reply = r;
            rc = fill_detail(&d->keep, r->gang, &d->pub);
            r = NULL;
        }
    }
    mt__msg_free(r);
    if (rc < 0) {
        if (d)
            mt__keep_release(&d->keep);
        free(d);
        return mt__set_error(c, rc, "out of memory");
    }
    if (out)
        *out = d;
    return 0;
}

/* ---- ListGangs ----------------------------------------------------------- */

static void render(struct mt_strbuf *sb, const void *reply)
{
    mt_list_json_gangs(sb, reply);
}

int mt__gang_list(struct mt_client *c, const mt_list_filter *f, int state,
                  mt_listing *l, struct mt__keep *keep, char **json)
{
    Manta__ListGangsRequest req = MANTA__LIST_GANGS_REQUEST__INIT;
    const Manta__ListGangsReply *r;
    mt_gang_detail *v;
    int rc;

    req.limit = f->limit;
    req.offset = f->offset;
    req.state = (Manta__GangState)state;
    rc = mt__list_call(c, &mt_head_list_gangs, &req, render, json, keep);
    if (rc < 0 || json)
        return rc;
    r = keep->reply;
    l->total = r->total;
    l->n = r->n_gangs;
    v = l->n ? mt__keep_alloc(keep, l->n * sizeof(*v)) : NULL;
    rc = l->n && !v ? -MT_ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < l->n; i++)
        rc = fill_detail(keep, r->gangs[i], &v[i]);
    l->gangs = v;
    return rc < 0 ? mt__set_error(c, rc, "out of memory") : 0;
}
