/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actor.h -- the calls of rpc_actor.c, the one file that sees the
 * actor calls' protobuf types (GetActor, KillActor, ListActors, the owner
 * lease, direct calls to the actor's worker), and the client's actors
 * part they use (the actors it owns, channels to workers for direct
 * calls, the owner lease). The user-facing side is manta/actor.h
 * (actor.c) and the listing in manta/admin.h.
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
    char owner_id[33];           /* this client as actors' owner (read-only) */
    /* Guarded by c->mu: non-detached actors created here, killed at
     * disconnect. */
    char (*owned)[MT__ACTOR_ID_SIZE];
    size_t n_owned, cap_owned;
    /* Loop thread only: */
    struct mt__wchan *wchans;    /* channels to workers (direct calls) */
    size_t n_wchans, cap_wchans;
    struct mt__abatch **abatches; /* direct calls of this wake-up */
    size_t n_abatches, cap_abatches;
    struct mt_rpc_stream *lease; /* LeaseActorOwner while open */
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

/*
 * mt__actor_call_post - send one call on the direct road: method on
 * actor a at its worker's address (taken: freed with the call) with its
 * incarnation, caller and seq, and the arguments (copied). t (one ref
 * taken) and a (one ref taken) complete through mt__actor_direct_done.
 * Caller thread; nobody waits.
 * RET 0, -MT_ENOMEM, -MT_ECLOSED (recorded; refs and address dropped)
 */
int mt__actor_call_post(struct mt_client *c, struct mt_actor *a,
                        char *address, uint32_t incarnation,
                        const char *caller, uint64_t seq, const char *method,
                        const void *const *args, const size_t *sizes,
                        size_t nargs, struct mt_task *t);

/* mt__actor_hold_lease - post LeaseActorOwner if not open (best effort). */
void mt__actor_hold_lease(struct mt_client *c);

/* Loop thread: send the direct calls gathered in this wake-up. */
void mt__actor_flush(struct mt_client *c);

/* Loop thread: stop: cancel the lease, close the channels to workers. */
void mt__actor_stop(struct mt_client *c);

#endif /* MT_SDK_RPC_ACTOR_H */
