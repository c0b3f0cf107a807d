/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actor.h -- the calls of rpc_actor.c, the file that sees the head's
 * actor calls in protobuf (GetActor, KillActor, ListActors, the owner
 * lease), and the client's actors part (the actors it owns, the owner
 * lease, and what rpc_actor_call.c keeps for direct calls: channels to
 * workers, the batches of a wake-up, handles waiting to look their actor
 * up again). The user-facing side is manta/actor.h (actor.c) and the
 * listing in manta/admin.h.
 */
#ifndef MT_SDK_RPC_ACTOR_H
#define MT_SDK_RPC_ACTOR_H

#include "sdk/actor_handle.h"
#include "manta/actor.h"
#include "manta/admin.h"

/* An actor as GetActor describes it (plain C; strings owned). */
struct mt__actor_desc {
    mt_actor_info info;          /* what the public call gives */
    char *address;               /* ALIVE: its worker; "" otherwise */
    uint32_t incarnation;
};

/* The client's actors part. */
struct mt__actors {
    /* Guarded by c->mu: non-detached actors created here, killed at
     * disconnect. */
    char (*owned)[MT__ACTOR_ID_SIZE];
    size_t n_owned, cap_owned;
    /* Loop thread only: */
    struct mt__wchan *wchans;    /* channels to workers (direct calls) */
    size_t n_wchans, cap_wchans;
    struct mt__abatch **abatches; /* direct calls of this wake-up */
    size_t n_abatches, cap_abatches;
    struct mt__retry *retries;   /* handles whose lookup is due later */
    size_t n_retries, cap_retries;
    uv_timer_t retry_timer;      /* runs them */
    bool timer_ready;
    struct mt_rpc_stream *lease; /* LeaseActorOwner while open */
    struct mt__req *lease_wait;  /* mt__session_open waiting for the head */
    unsigned lease_attempts;     /* reopens since the head went away */
};

/*
 * mt__actor_lookup - GetActor by id ('a' and 15 hex digits) or, with id
 * NULL, by name among live actors (caller thread).
 * OUT d    filled (release with mt__actor_desc_release)
 * OUT json NULL, or returns the actor as `manta actor get --format json`
 *          prints it (owned, free with free())
 * RET 0, -MT_ENOENT, -MT_EPROTO, or the call's error (recorded on c)
 */
int mt__actor_lookup(struct mt_client *c, const char *id, const char *name,
                     struct mt__actor_desc *d, char **json);

void mt__actor_desc_release(struct mt__actor_desc *d);

/* mt__actor_list - ListActors (f checked, state its value): the entries
 * into l (views into the reply, kept in keep) or, with json, the JSON
 * text (owned). RET 0 or -MT_E* (recorded on c) */
int mt__actor_list(struct mt_client *c, const mt_list_filter *f, int state,
                   mt_listing *l, struct mt__keep *keep, char **json);

/* mt__actor_kill_id - KillActor. OUT state: the state after the request.
 * RET 0 or the call's error (recorded on c). */
int mt__actor_kill_id(struct mt_client *c, const char *id, bool no_restart,
                      int timeout_ms, mt_actor_state *state);

/* Loop thread: GetActor by id without waiting; d is borrowed (NULL when
 * rc < 0). */
typedef void (*mt__actor_looked_up_fn)(struct mt_client *c, void *arg,
                                       int rc,
                                       const struct mt__actor_desc *d);

/*
 * mt__actor_lookup_start - GetActor of id (copied) from the loop thread;
 * done(c, arg, ...) runs there once, when the answer is in (also while
 * the client stops: then rc is the call's cancellation).
 * RET 0, or -MT_ENOMEM / -MT_ECLOSED / the rpc layer's error (done will
 *     not run)
 */
int mt__actor_lookup_start(struct mt_client *c, const char *id,
                           mt__actor_looked_up_fn done, void *arg);

/* mt__actor_hold_lease - post LeaseActorOwner if not open (best effort). */
void mt__actor_hold_lease(struct mt_client *c);

/*
 * mt__session_open - open the client's session at the head (the owner
 * lease under c->session_id) and wait until the head says it is open;
 * from then on c->session_open holds until the stream breaks. Caller
 * thread.
 * RET 0, or the stream's error or -MT_ETIMEDOUT (recorded)
 */
int mt__session_open(struct mt_client *c, int timeout_ms);

/* Loop thread: stop: cancel the lease (the session ends). */
void mt__actor_stop(struct mt_client *c);

#endif /* MT_SDK_RPC_ACTOR_H */
