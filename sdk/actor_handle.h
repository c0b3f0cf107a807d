/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actor_handle.h -- actors inside libmanta: the handle, and the calls of
 * actor_handle.c on it (its last reference, a direct call's outcome).
 * The user-facing side is mt_actor_t and mt_actor_info in manta/actor.h
 * (actor.c; actor_handle.c initializes and releases the info struct).
 *
 * Creating an actor and calling it through the head are tasks (task.h);
 * GetActor / KillActor are calls to the head (rpc_actor.c); direct
 * calls go to the actor's worker, batched per wake-up of the loop
 * (rpc_actor_call.c). Files, lowest first, with their headers:
 * actor_handle.c (the handle and the info struct; actor_handle.h),
 * rpc_actor.c (the head's actor calls in protobuf and the client's
 * actors part; rpc_actor.h), rpc_actor_call.c (direct calls and the
 * repair of a broken road; rpc_actor_call.h), actor.c (the public API;
 * actor.h).
 */
#ifndef MT_SDK_ACTOR_HANDLE_H
#define MT_SDK_ACTOR_HANDLE_H

#include "sdk/client_int.h"

struct mt_task;

#define MT_ACTOR_MAGIC 0x6d746163u /* "mtac" */
#define MT__ACTOR_ID_SIZE 17

/* Which way a handle's calls go (docs/actors.md, "Calls"). */
enum mt__road {
    MT__ROAD_HEAD = 0,    /* through the head: tasks of kind ACTOR_METHOD */
    MT__ROAD_DIRECT = 1,  /* straight to the actor's worker (CallActor) */
    MT__ROAD_REROUTE = 2, /* the direct road broke: calls wait in the
                           * handle while the actor is looked up again */
};

struct mt__held;          /* a call held for the next road (rpc_actor_call.c) */

/*
 * A handle: the actor's id plus what it last learnt of where the actor
 * lives. Refcounted between the user and direct calls in flight; the road
 * fields are guarded by mu, taken alone (never with the client's mu).
 *
 * A direct road is one incarnation at one address under one caller id,
 * its calls numbered 0, 1, 2, ... (next_seq). The road changes only while
 * none of its calls is unanswered (inflight 0), so every answer belongs to
 * the road in use. When a call finds the incarnation gone (it died, or
 * refused the call unrun) the road becomes REROUTE: later calls are held
 * and calls refused unrun join them (ordered by their old numbers, ahead
 * of the later ones); once the last answer is in, the actor is looked up
 * and the held calls go first on the new road (rpc_actor_call.c).
 */
struct mt_actor {
    uint32_t magic;              /* MT_ACTOR_MAGIC */
    atomic_int refs;
    char id[MT__ACTOR_ID_SIZE];  /* read-only */
    char tag[17];                /* read-only: names its direct calls */
    pthread_mutex_t mu;
    enum mt__road road;
    uint64_t n_direct;           /* direct calls made: names the next */
    char *address;               /* DIRECT: the worker */
    uint32_t incarnation;        /* DIRECT: the actor's incarnation */
    char caller[17];             /* DIRECT: our caller id on this road */
    uint64_t next_seq;           /* DIRECT: the next call's number */
    size_t inflight;             /* numbered on this road, not answered */
    struct mt__held *held;       /* REROUTE: calls for the next road */
    size_t n_held, cap_held;
    size_t n_bounced;            /* the first n_held: refused unrun */
    bool resolving;              /* REROUTE: a lookup is on its way or due */
    unsigned tries;              /* lookups since a call was last answered */
    char *why;                   /* HEAD after a lookup found it DEAD */
};

/* mt__actor_unref - drop a handle reference (actor_handle.c). NULL ok. */
void mt__actor_unref(struct mt_actor *a);

/* Loop thread: a direct call ended: complete t (one ref taken) and drop
 * one ref on the handle. ok/actor_died as CallActorReply; the road is the
 * caller's business (rpc_actor_call.c). (actor_handle.c) */
void mt__actor_direct_done(struct mt_client *c, struct mt_actor *a,
                           struct mt_task *t, bool ok, const uint8_t *result,
                           size_t len, const char *error, bool actor_died);

#endif /* MT_SDK_ACTOR_HANDLE_H */
