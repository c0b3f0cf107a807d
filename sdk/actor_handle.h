/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actor_handle.h -- actors inside libmanta: the handle, and the calls of
 * actor_handle.c on it (its last reference, a direct call's outcome).
 * The user-facing side is mt_actor_t and mt_actor_info in manta/actor.h
 * (actor.c; actor_handle.c initializes and releases the info struct).
 *
 * Creating an actor and calling it through the head are tasks (task.h);
 * GetActor / KillActor are calls to the head; direct calls go to the
 * actor's worker, batched per wake-up of the loop (rpc_actor.c). Files,
 * lowest first, with their headers: actor_handle.c (the handle and the
 * info struct; actor_handle.h), rpc_actor.c (the calls in protobuf and
 * the client's actors part; rpc_actor.h), actor.c (the public API;
 * actor.h).
 */
#ifndef MT_SDK_ACTOR_HANDLE_H
#define MT_SDK_ACTOR_HANDLE_H

#include "sdk/client_int.h"

struct mt_task;

#define MT_ACTOR_MAGIC 0x6d746163u /* "mtac" */
#define MT__ACTOR_ID_SIZE 17

/*
 * A handle: the actor's id plus what it last learnt of where the actor
 * lives. Refcounted between the user and direct calls in flight; the road
 * fields are guarded by mu, taken alone (never with the client's mu).
 */
struct mt_actor {
    uint32_t magic;              /* MT_ACTOR_MAGIC */
    atomic_int refs;
    char id[MT__ACTOR_ID_SIZE];  /* read-only */
    pthread_mutex_t mu;
    bool direct;                 /* calls go straight to the worker */
    char *address;               /* direct: the worker */
    uint32_t incarnation;        /* direct: the actor's incarnation */
    char caller[17];             /* direct: our caller id there */
    uint64_t next_seq;           /* direct: the next call's number */
};

/* mt__actor_unref - drop a handle reference (actor_handle.c). NULL ok. */
void mt__actor_unref(struct mt_actor *a);

/* Loop thread: a direct call ended: complete t (one ref taken) and tell
 * the handle (one ref taken). ok/actor_died as CallActorReply.
 * (actor_handle.c) */
void mt__actor_direct_done(struct mt_client *c, struct mt_actor *a,
                           struct mt_task *t, bool ok, const uint8_t *result,
                           size_t len, const char *error, bool actor_died);

#endif /* MT_SDK_ACTOR_HANDLE_H */
