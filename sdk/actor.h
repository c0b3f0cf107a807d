/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actor.h -- the call of actor.c for the other modules: the client's
 * actors part (connect.c attaches it). The part's type is in rpc_actor.h;
 * the user-facing side is manta/actor.h.
 */
#ifndef MT_SDK_ACTOR_H
#define MT_SDK_ACTOR_H

#include "sdk/client_int.h"

/* mt__actors_attach - give c its actors part. RET 0, -MT_ENOMEM. */
int mt__actors_attach(struct mt_client *c);

#endif /* MT_SDK_ACTOR_H */
