/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actor.c -- the SDK's actor calls in protobuf: building the
 * SubmitTaskRequests that create and call actors (on the caller's thread,
 * on top of rpc_head.c's function-task builder), and GetActor / KillActor
 * on the client's loop thread, turned back into plain C (sdk_int.h).
 *
 * THREAD: the builders run on any thread; the rest on the loop thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/status.h>

#include "common/rpc.h"
#include "head_service.pb-c.h"
#include "proto/services.h"
#include "sdk/sdk_int.h"

/* ---- building requests (caller thread) ----------------------------------- */

static char *dup_or_null(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}

int mt__rpc_actor_create_build(const char *factory, const void *const *args,
                               const size_t *sizes, size_t nargs,
                               const struct mt_task_opts *o, const char *name,
                               bool detached, int max_restarts,
                               const char *owner, void **out)
{
    Manta__SubmitTaskRequest *req;
    Manta__TaskSpec *s;
    int rc = mt__rpc_submit_fn_build(factory, args, sizes, nargs, o, out);

    if (rc < 0)
        return rc;
    req = *out;
    s = req->spec;
    s->kind = MANTA__TASK_KIND__TASK_KIND_ACTOR_CREATE;
    s->actor_detached = detached;
    s->max_restarts = max_restarts;
    s->max_retries = 0;
    if ((name && !(s->actor_name = dup_or_null(name))) ||
        !(s->owner_id = dup_or_null(owner))) {
        mt__rpc_submit_free(req);
        *out = NULL;
        return -MT_ENOMEM;
    }
    return 0;
}

int mt__rpc_actor_call_build(const char *id, const char *method,
                             const void *const *args, const size_t *sizes,
                             size_t nargs, void **out)
{
    struct mt_task_opts o;
    Manta__SubmitTaskRequest *req;
    int rc;

    if (mt__opts_init(&o) < 0)
        return -MT_ENOMEM;
    rc = mt__rpc_submit_fn_build(method, args, sizes, nargs, &o, out);
    mt__opts_release(&o);
    if (rc < 0)
        return rc;
    req = *out;
    req->spec->kind = MANTA__TASK_KIND__TASK_KIND_ACTOR_METHOD;
    req->spec->max_retries = 0;
    if (!(req->spec->actor_id = dup_or_null(id))) {
        mt__rpc_submit_free(req);
        *out = NULL;
        return -MT_ENOMEM;
    }
    return 0;
}

/* ---- GetActor / KillActor (loop thread) ---------------------------------- */

void mt__actor_info_release(struct mt__actor_info *i)
{
    free(i->name);
    free(i->node_id);
    free(i->death_reason);
    memset(i, 0, sizeof(*i));
}

/* Copy the reply's info into r. RET 0, -MT_EPROTO, -MT_ENOMEM. */
static int copy_info(struct mt__req *r, const Manta__ActorInfo *ai)
{
    struct mt__actor_info *i = &r->actor;

    if (!ai || strlen(ai->actor_id) != 16)
        return -MT_EPROTO;
    mt__actor_info_release(i);
    memcpy(i->id, ai->actor_id, 17);
    i->state = (int)ai->state;
    i->pid = ai->pid;
    i->restarts = ai->num_restarts;
    i->max_restarts = ai->max_restarts;
    i->detached = ai->detached;
    i->name = dup_or_null(ai->name);
    i->node_id = dup_or_null(ai->node_id);
    i->death_reason = dup_or_null(ai->death_reason);
    if (!i->name || !i->node_id || !i->death_reason)
        return -MT_ENOMEM;
    return 0;
}

static void on_actor_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct mt__req *r = arg;
    char msg[256];
    int rc = 0;

    r->client->n_calls--;
    if (st->code) {
        snprintf(msg, sizeof(msg), "%s: %s",
                 r->kind == MT__REQ_ACTOR_GET ? "GetActor" : "KillActor",
                 *st->message ? st->message : mt_rpc_status_name(st->code));
        mt__req_complete(r->client, r, mt_rpc_status_to_err(st->code), msg);
        return;
    }
    if (r->kind == MT__REQ_ACTOR_GET)
        rc = copy_info(r, ((const Manta__GetActorReply *)resp)->actor);
    else
        r->actor.state = (int)((const Manta__KillActorReply *)resp)->state;
    mt__req_complete(r->client, r, rc,
                     rc ? "bad GetActor reply from the head" : NULL);
}

int mt__rpc_actor_start(struct mt__req *r)
{
    Manta__GetActorRequest get = MANTA__GET_ACTOR_REQUEST__INIT;
    Manta__KillActorRequest kill = MANTA__KILL_ACTOR_REQUEST__INIT;

    if (r->kind == MT__REQ_ACTOR_GET) {
        get.actor_id = r->actor_id;
        get.name = r->actor_name ? r->actor_name : (char *)"";
        return mt_rpc_unary(r->client->ch, &mt_head_get_actor, &get.base,
                            r->timeout_ms, r->rpc_flags, on_actor_done, r);
    }
    kill.actor_id = r->actor_id;
    kill.no_restart = r->no_restart;
    return mt_rpc_unary(r->client->ch, &mt_head_kill_actor, &kill.base,
                        r->timeout_ms, r->rpc_flags, on_actor_done, r);
}
