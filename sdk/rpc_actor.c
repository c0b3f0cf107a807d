/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actor.c -- the SDK's actor calls to the head in protobuf: GetActor /
 * KillActor (through mt__head_call, replies turned into plain C), GetActor
 * without waiting (the loop thread's, when a handle's road broke), and the
 * client's session (LeaseActorOwner: opened at connect, it owns the
 * client's non-detached actors and object references at the head, which
 * drops both when the stream breaks). Direct calls to the actor's worker
 * are rpc_actor_call.c's.
 *
 * THREAD: lookups, kills and opening the session run on the caller's
 * thread; the lookup without waiting and the lease on the loop thread.
 */
#include "sdk/rpc_actor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grpc/status.h>

#include "common/rpc.h"
#include "common/strbuf.h"
#include "head_service.pb-c.h"
#include "proto/list_json.h"
#include "proto/services.h"
#include "sdk/actor_handle.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/retry.h"
#include "sdk/rpc_reply.h"

/* ---- GetActor / KillActor (caller thread) -------------------------------- */

void mt__actor_desc_release(struct mt__actor_desc *d)
{
    mt_actor_info_release(&d->info);
    free(d->address);
    d->address = NULL;
}

/* ai as a view: the strings point into ai. */
static void fill_actor(const Manta__ActorInfo *ai, mt_actor_info *i)
{
    i->state = (mt_actor_state)ai->state;
    i->name = ai->name;
    i->node_id = ai->node_id;
    i->death_reason = ai->death_reason;
    i->pid = ai->pid;
    i->num_restarts = ai->num_restarts;
    i->max_restarts = ai->max_restarts;
    i->detached = ai->detached;
    i->actor_id = ai->actor_id;
    i->function = ai->function;
    i->owner_id = ai->owner_id;
    i->calls_queued = ai->calls_queued;
    i->calls_dispatched = ai->calls_dispatched;
    i->create_time_ms = ai->create_time_ms;
    i->end_time_ms = ai->end_time_ms;
}

/* Copy an ActorInfo into d, strings owned. RET 0, -MT_EPROTO, -MT_ENOMEM. */
static int copy_desc(const Manta__ActorInfo *ai, struct mt__actor_desc *d)
{
    char **s[] = {&d->info.name,     &d->info.node_id,  &d->info.death_reason,
                  &d->info.actor_id, &d->info.function, &d->info.owner_id,
                  &d->address};
    bool ok = true;

    if (!ai || strlen(ai->actor_id) != 16)
        return -MT_EPROTO;
    fill_actor(ai, &d->info);
    d->address = ai->address;
    d->incarnation = ai->incarnation;
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        ok &= (*s[i] = strdup(*s[i])) != NULL;
    return ok ? 0 : -MT_ENOMEM;
}

/* The actor as JSON (proto/list_json.c). RET 0, -MT_ENOMEM. */
static int actor_json(const Manta__ActorInfo *ai, char **json)
{
    struct mt_strbuf sb = MT_STRBUF_INIT_SOFT;

    mt_json_actor(&sb, ai);
    mt_strbuf_adds(&sb, "\n");
    return mt__json_take(&sb, json);
}

int mt__actor_lookup(struct mt_client *c, const char *id, const char *name,
                     struct mt__actor_desc *d, char **json)
{
    Manta__GetActorRequest req = MANTA__GET_ACTOR_REQUEST__INIT;
    Manta__GetActorReply *r;
    int rc;

    memset(d, 0, sizeof(*d));
    mt_actor_info_init(&d->info);
    req.actor_id = (char *)(id ? id : "");
    req.name = (char *)(name ? name : "");
    rc = mt__head_call(c, &mt_head_get_actor, &req, c->rpc_timeout_ms,
                       MT__CALL_WAIT, (void **)&r);
    if (rc < 0)
        return rc;
    rc = copy_desc(r->actor, d);
    if (rc == 0 && json)
        rc = actor_json(r->actor, json);
    mt__msg_free(r);
    if (rc < 0) {
        mt__actor_desc_release(d);
        return mt__set_error(c, rc, rc == -MT_EPROTO ? "the head sent no "
                             "actor" : "out of memory");
    }
    return 0;
}

/* A GetActor started by the loop thread. */
struct lookup {
    struct mt_client *c;
    mt__actor_looked_up_fn done;
    void *arg;
};

static void on_lookup_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    const Manta__GetActorReply *r = (const Manta__GetActorReply *)resp;
    struct lookup *l = arg;
    struct mt__actor_desc d;
    int rc = st->code ? mt__rpc_err(st) : 0;

    l->c->n_calls--;
    memset(&d, 0, sizeof(d));
    mt_actor_info_init(&d.info);
    if (rc == 0)
        rc = copy_desc(r->actor, &d);
    l->done(l->c, l->arg, rc, rc == 0 ? &d : NULL);
    mt__actor_desc_release(&d);
    free(l);
}

int mt__actor_lookup_start(struct mt_client *c, const char *id,
                           mt__actor_looked_up_fn done, void *arg)
{
    Manta__GetActorRequest req = MANTA__GET_ACTOR_REQUEST__INIT;
    struct lookup *l = malloc(sizeof(*l));
    int rc;

    if (!l)
        return -MT_ENOMEM;
    l->c = c;
    l->done = done;
    l->arg = arg;
    req.actor_id = (char *)id;
    rc = c->ch ? mt_rpc_unary(c->ch, &mt_head_get_actor, &req.base,
                              c->rpc_timeout_ms, 0, on_lookup_done, l)
               : -MT_ECLOSED;
    if (rc < 0) {
        free(l);
        return rc;
    }
    c->n_calls++;
    return 0;
}

int mt__actor_kill_id(struct mt_client *c, const char *id, bool no_restart,
                      int timeout_ms, mt_actor_state *state)
{
    Manta__KillActorRequest req = MANTA__KILL_ACTOR_REQUEST__INIT;
    Manta__KillActorReply *r;
    int rc;

    req.actor_id = (char *)id;
    req.no_restart = no_restart;
    rc = mt__head_call(c, &mt_head_kill_actor, &req, timeout_ms,
                       MT__CALL_WAIT, (void **)&r);
    if (rc < 0)
        return rc;
    if (state)
        *state = (mt_actor_state)r->state;
    mt__msg_free(r);
    return 0;
}

static void render(struct mt_strbuf *sb, const void *reply)
{
    mt_list_json_actors(sb, reply);
}

int mt__actor_list(struct mt_client *c, const mt_list_filter *f, int state,
                   mt_listing *l, struct mt__keep *keep, char **json)
{
    Manta__ListActorsRequest req = MANTA__LIST_ACTORS_REQUEST__INIT;
    const Manta__ListActorsReply *r;
    mt_actor_info *v = NULL;
    int rc;

    req.limit = f->limit;
    req.offset = f->offset;
    req.state = (Manta__ActorState)state;
    req.name = (char *)(f->name ? f->name : "");
    rc = mt__list_call(c, &mt_head_list_actors, &req, render, json, keep);
    if (rc < 0 || json)
        return rc;
    r = keep->reply;
    l->total = r->total;
    l->n = r->n_actors;
    if (l->n && !(v = mt__keep_alloc(keep, l->n * sizeof(*v))))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    for (size_t i = 0; i < l->n; i++) {
        mt_actor_info_init(&v[i]);
        fill_actor(r->actors[i], &v[i]);
    }
    l->actors = v;
    return 0;
}

/* ---- the session: LeaseActorOwner (loop thread) -------------------------- */

/* Complete the request waiting for the session to open, if any. */
static void session_answer(struct mt_client *c, int rc, const char *why)
{
    struct mt__actors *as = c->actors;

    if (as->lease_wait) {
        mt__req_complete(c, as->lease_wait, rc, why);
        as->lease_wait = NULL;
    }
}

/* The head's one event: the session is open. */
static void on_lease_msg(void *arg, const ProtobufCMessage *msg)
{
    struct mt_client *c = arg;

    mt__head_back(c);
    c->actors->lease_attempts = 0;
    atomic_store(&c->session_open, true);
    session_answer(c, 0, NULL);
}

static void on_lease_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp);

/* Open the session stream under the client's owner id. RET 0, -MT_E*. */
static int lease_stream_open(struct mt_client *c, unsigned flags)
{
    Manta__ActorOwnerLeaseRequest req = MANTA__ACTOR_OWNER_LEASE_REQUEST__INIT;
    int rc;

    req.owner_id = c->session_id;
    rc = mt_rpc_stream_open(c->ch, &mt_head_lease_actor_owner, &req.base, 0,
                            flags, on_lease_msg, on_lease_done, c,
                            &c->actors->lease);
    if (rc == 0)
        c->n_streams++;
    return rc;
}

/* The reopen timer: the same session again, unless one is open. */
static void lease_again(struct mt_client *c, void *arg, bool closing)
{
    const struct mt_rpc_status refused = {GRPC_STATUS_UNAVAILABLE, ""};

    (void)arg;
    if (closing || c->actors->lease)
        return;
    if (lease_stream_open(c, 0) < 0) {
        c->n_streams++; /* on_lease_done counts it out */
        on_lease_done(c, &refused, NULL);
    }
}

/*
 * The session broke because the head went away: reopen it under the same
 * owner id (retry.c decides when, and until when), so the actors and
 * references it owns at a head that kept its state stay owned.
 */
static bool lease_retry(struct mt_client *c, const struct mt_rpc_status *st)
{
    int delay;

    if (c->closing || c->actors->lease_wait)
        return false; /* connecting: the caller hears of it */
    delay = mt__retry_after(c, st, MT__REPEAT_SAFE,
                            ++c->actors->lease_attempts, false, NULL, 0);
    return delay >= 0 && mt__retry_later(c, delay, lease_again, NULL) == 0;
}

static void on_lease_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct mt_client *c = arg;
    char why[200];

    (void)resp;
    c->actors->lease = NULL;
    c->n_streams--;
    atomic_store(&c->session_open, false);
    if (lease_retry(c, st))
        return;
    mt__rpc_text(st, why, sizeof(why));
    session_answer(c, st->code ? mt__rpc_err(st) : -MT_EPROTO, why);
}

/* Hold the owner lease (see head_service.proto), opening it if needed.
 * With wait, r completes once the head says the session is open. */
static int lease_open(struct mt_client *c, struct mt__req *r, bool wait)
{
    struct mt__actors *as = c->actors;
    int rc = 0;

    if (!as->lease)
        rc = lease_stream_open(c, r->rpc_flags);
    if (rc == 0 && wait && !atomic_load(&c->session_open) && !as->lease_wait)
        as->lease_wait = r; /* the head's event completes it */
    else
        mt__req_complete(c, r, rc, rc < 0 ? "cannot open the session"
                                          : NULL);
    return 0;
}

static int lease_start(struct mt_client *c, struct mt__req *r)
{
    return lease_open(c, r, false);
}

static int session_start(struct mt_client *c, struct mt__req *r)
{
    return lease_open(c, r, true);
}

static const struct mt__req_ops lease_ops = {
    .start = lease_start,
};

static const struct mt__req_ops session_ops = {
    .start = session_start,
};

void mt__actor_hold_lease(struct mt_client *c)
{
    struct mt__req *r = mt__req_new(c, &lease_ops, sizeof(*r));

    if (r)
        mt__req_post(c, r);
}

int mt__session_open(struct mt_client *c, int timeout_ms)
{
    struct mt__req *r = mt__req_new(c, &session_ops, sizeof(*r));
    int rc;

    if (!r)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    r->rpc_flags = c->ready_flags;
    rc = mt__req_run(c, r, timeout_ms);
    if (rc == 0)
        mt__req_free(r);
    return rc;
}

void mt__actor_stop(struct mt_client *c)
{
    struct mt__actors *as = c->actors;

    if (as->lease)
        mt_rpc_stream_cancel(as->lease);
}
