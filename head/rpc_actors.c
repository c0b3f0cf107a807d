/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actors.c -- the actor service's rpc adapter: GetActor, ListActors,
 * KillActor and LeaseActorOwner over actors.h (actors are created and
 * called through SubmitTask, rpc_tasks.c). LeaseActorOwner is a client's
 * session: the client holds the stream while it lives, and the head
 * answers one event once the session is open (the object directory
 * counts it among the open sessions: objects.h). When an owner's last
 * stream ends, its actors that are not detached are killed and the
 * object references its session held are dropped.
 *
 * THREAD: the head's loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "head/rpc_actors.h"
#include "head/rpc_services.h"
#include "head_service.pb-c.h"
#include "proto/list_json.h"
#include "proto/services.h"

#define LIST_DEFAULT 100
#define LIST_MAX 10000

/* One open lease stream. Guarded by: loop thread. */
struct mt_actor_lease {
    struct mt_head *h;
    struct mt_rpc_call *call;
    char *owner;
    struct mt_actor_lease *next;
};

static struct mt_actor_table *table(struct mt_head *h)
{
    return mt_head_actors_table(h->actors);
}

/* ---- GetActor / ListActors / KillActor ------------------------------------ */

static void fill_info(struct mt_head *h, const struct mt_head_actor *a,
                      Manta__ActorInfo *ai)
{
    struct mt_node *n = a->state == MT_ACTOR_ALIVE && a->node_id
                            ? mt_node_table_find(mt_head_nodes_table(h->nodes),
                                                 a->node_id)
                            : NULL;

    manta__actor_info__init(ai);
    if (n && n->state == MT_NODE_ALIVE) {
        ai->address = n->address;
        ai->incarnation = a->incarnation;
    }
    ai->actor_id = (char *)a->id;
    ai->name = a->name ? a->name : (char *)"";
    ai->state = (Manta__ActorState)a->state;
    ai->node_id = a->node_id ? a->node_id : (char *)"";
    ai->function = a->function;
    ai->detached = a->detached;
    ai->max_restarts = a->max_restarts;
    ai->num_restarts = a->restarts;
    ai->death_reason = a->death_reason ? a->death_reason : (char *)"";
    ai->pid = a->pid;
    ai->create_time_ms = a->create_ms;
    ai->end_time_ms = a->end_ms;
    ai->owner_id = a->owner;
    ai->calls_queued = a->q_len;
    ai->calls_dispatched = a->dispatched;
}

static void h_get_actor(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    const Manta__GetActorRequest *req = (const Manta__GetActorRequest *)m;
    Manta__GetActorReply reply = MANTA__GET_ACTOR_REPLY__INIT;
    Manta__ActorInfo ai;
    struct mt_head *h = arg;
    struct mt_head_actor *a;

    if (req->actor_id[0])
        a = mt_actor_table_find_id(table(h), req->actor_id);
    else
        a = mt_actor_table_find_name(table(h), req->name);
    if (!a) {
        mt_rpc_fail(call, -MT_ENOENT,
                    req->actor_id[0] ? "no such actor"
                                     : "no live actor has that name");
        return;
    }
    fill_info(h, a, &ai);
    reply.actor = &ai;
    mt_rpc_reply(call, &reply.base);
}

static bool list_match(const Manta__ListActorsRequest *req,
                       const struct mt_head_actor *a)
{
    return (!req->state || (int)req->state == (int)a->state) &&
           (!*req->name || (a->name && strcmp(a->name, req->name) == 0));
}

/* ListActors' reply (see list_release), for the rpc and for /api/actors. */
struct actor_list {
    Manta__ActorInfo *infos;
    Manta__ActorInfo **ptrs;
};

static void list_build(struct mt_head *h, const Manta__ListActorsRequest *req,
                       struct actor_list *l, Manta__ListActorsReply *reply)
{
    struct mt_actor_table *tb = table(h);
    size_t max = req->limit ? (req->limit > LIST_MAX ? LIST_MAX : req->limit)
                            : LIST_DEFAULT;
    size_t n = 0;

    if (max > tb->n)
        max = tb->n;
    manta__list_actors_reply__init(reply);
    l->infos = mt_xcalloc(max + 1, sizeof(*l->infos));
    l->ptrs = mt_xcalloc(max + 1, sizeof(*l->ptrs));
    for (size_t i = tb->n; i-- > 0;) {
        if (!list_match(req, tb->v[i]) || reply->total++ < req->offset ||
            n >= max)
            continue;
        fill_info(h, tb->v[i], &l->infos[n]);
        l->ptrs[n] = &l->infos[n];
        n++;
    }
    reply->n_actors = n;
    reply->actors = l->ptrs;
}

static void list_release(struct actor_list *l)
{
    free(l->infos);
    free(l->ptrs);
}

static void h_list_actors(struct mt_rpc_call *call, const ProtobufCMessage *m,
                          void *arg)
{
    Manta__ListActorsReply reply;
    struct actor_list l;

    list_build(arg, (const Manta__ListActorsRequest *)m, &l, &reply);
    mt_rpc_reply(call, &reply.base);
    list_release(&l);
}

static void list_json(struct mt_head *h,
                      const struct mt_head_list_query *q,
                      struct mt_strbuf *out)
{
    Manta__ListActorsRequest req = MANTA__LIST_ACTORS_REQUEST__INIT;
    Manta__ListActorsReply reply;
    struct actor_list l;

    req.limit = q->limit;
    req.offset = q->offset;
    req.state = (Manta__ActorState)q->state;
    req.name = (char *)(q->name ? q->name : "");
    list_build(h, &req, &l, &reply);
    mt_list_json_actors(out, &reply);
    list_release(&l);
}

static void h_kill_actor(struct mt_rpc_call *call, const ProtobufCMessage *m,
                         void *arg)
{
    const Manta__KillActorRequest *req = (const Manta__KillActorRequest *)m;
    Manta__KillActorReply reply = MANTA__KILL_ACTOR_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_head_actor *a = mt_actor_table_find_id(table(h), req->actor_id);

    if (!a) {
        mt_rpc_fail(call, -MT_ENOENT, "no such actor");
        return;
    }
    mt_head_actor_kill(h->actors, a, req->no_restart);
    reply.state = (Manta__ActorState)a->state;
    mt_rpc_reply(call, &reply.base);
}

/* ---- LeaseActorOwner: sessions that end take their actors and refs ---- */

static void lease_unlink(struct mt_head *h, struct mt_actor_lease *l)
{
    struct mt_actor_lease **pp = &h->leases;

    while (*pp && *pp != l)
        pp = &(*pp)->next;
    if (*pp)
        *pp = l->next;
    free(l->owner);
    free(l);
}

bool mt_head_owner_connected(struct mt_head *h, const char *owner)
{
    for (struct mt_actor_lease *o = h->leases; o; o = o->next)
        if (strcmp(o->owner, owner) == 0)
            return true;
    return false;
}

void mt_head_owner_gone(struct mt_head *h, const char *owner)
{
    if (h->stopping || mt_head_owner_connected(h, owner))
        return;
    mt_head_actors_owner_gone(h->actors, owner);
    mt_head_objects_owner_gone(h->objects, owner);
    mt_head_leases_owner_gone(h->task_leases, owner);
}

static void on_lease_gone(void *arg)
{
    struct mt_actor_lease *l = arg;
    struct mt_head *h = l->h;
    char *owner = mt_xstrdup(l->owner);

    mt_rpc_fail(l->call, -MT_ECANCELED, "lease ended");
    lease_unlink(h, l);
    mt_head_owner_gone(h, owner);
    free(owner);
}

static void h_lease_actor_owner(struct mt_rpc_call *call,
                                const ProtobufCMessage *m, void *arg)
{
    const Manta__ActorOwnerLeaseRequest *req =
        (const Manta__ActorOwnerLeaseRequest *)m;
    Manta__ActorOwnerLeaseEvent open = MANTA__ACTOR_OWNER_LEASE_EVENT__INIT;
    struct mt_head *h = arg;
    struct mt_actor_lease *l;

    if (!req->owner_id[0] || strlen(req->owner_id) > 128) {
        mt_rpc_fail(call, -MT_EINVAL, "owner_id must be 1-128 bytes");
        return;
    }
    l = mt_xcalloc(1, sizeof(*l));
    l->h = h;
    l->call = call;
    l->owner = mt_xstrdup(req->owner_id);
    l->next = h->leases;
    h->leases = l;
    mt_head_objects_owner_open(h->objects, l->owner);
    mt_rpc_call_on_cancel(call, on_lease_gone, l);
    /* The session is open: say so (a gone peer ends up in on_lease_gone). */
    mt_rpc_stream_send(call, &open.base);
}

static void stop(struct mt_head *h)
{
    while (h->leases) {
        mt_rpc_call_on_cancel(h->leases->call, NULL, NULL);
        mt_rpc_fail(h->leases->call, -MT_EUNAVAIL, "head is shutting down");
        lease_unlink(h, h->leases);
    }
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_head_get_actor, h_get_actor},
    {&mt_head_list_actors, h_list_actors},
    {&mt_head_kill_actor, h_kill_actor},
    {&mt_head_lease_actor_owner, h_lease_actor_owner},
    {NULL, NULL},
};

const struct mt_head_adapter mt_head_rpc_actors = {
    .handlers = handlers,
    .list_json = list_json,
    .stop = stop,
};
