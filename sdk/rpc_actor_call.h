/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actor_call.h -- the calls of rpc_actor_call.c, the one file that
 * sees WorkerService.CallActor in protobuf: direct calls to an actor's
 * worker, sent in batches per wake-up of the loop, and the repair of a
 * handle's road when the incarnation it leads to goes away (see struct
 * mt_actor in actor_handle.h). The user-facing side is mt_actor_call
 * (actor.c).
 */
#ifndef MT_SDK_RPC_ACTOR_CALL_H
#define MT_SDK_RPC_ACTOR_CALL_H

#include "sdk/actor_handle.h"

/*
 * mt__actor_call_post - make one direct call: method of actor a with the
 * arguments (copied). The loop thread numbers it on a's road (or holds
 * it while the road is repaired); t (one ref taken) and a (one ref
 * taken) complete through mt__actor_direct_done. Caller thread; nobody
 * waits.
 * RET 0, -MT_ENOMEM, -MT_ECLOSED (recorded; both refs dropped)
 */
int mt__actor_call_post(struct mt_client *c, struct mt_actor *a,
                        const char *method, const void *const *args,
                        const size_t *sizes, size_t nargs,
                        struct mt_task *t);

/* Loop thread: send the direct calls gathered in this wake-up. */
void mt__actor_flush(struct mt_client *c);

/* Loop thread: stop: send what is gathered, fail the calls held for a
 * lookup that is not on its way, close the timer and the channels to
 * workers (calls in flight end cancelled). */
void mt__actor_calls_stop(struct mt_client *c);

#endif /* MT_SDK_RPC_ACTOR_CALL_H */
