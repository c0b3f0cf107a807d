/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actors.h -- what rpc_actors.c offers beyond its handlers: the
 * driver sessions (LeaseActorOwner streams). head.c wires it into struct
 * mt_head_hooks (head_int.h) for persist.c and recover.c.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_RPC_ACTORS_H
#define MT_HEAD_RPC_ACTORS_H

#include <stdbool.h>
#include <stdint.h>

struct mt_head;

/* mt_head_owner_connected - whether a client holds a LeaseActorOwner
 * stream for owner (rpc_actors.c). */
bool mt_head_owner_connected(struct mt_head *h, const char *owner);

/*
 * mt_head_owner_gone - owner's session ended (its last stream broke, or a
 * restarted head waited for it in vain: recover.h): its actors that are
 * not detached die, its object references and leases go. Nothing while
 * it is connected or the head is stopping.
 */
void mt_head_owner_gone(struct mt_head *h, const char *owner);

#endif /* MT_HEAD_RPC_ACTORS_H */
