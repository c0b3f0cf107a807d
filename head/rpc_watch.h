/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_watch.h -- what rpc_watch.c offers beyond its handlers: the client
 * watches by name. head.c wires it into struct mt_head_hooks (head_int.h)
 * for persist.c and recover.c.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_RPC_WATCH_H
#define MT_HEAD_RPC_WATCH_H

#include <stdbool.h>
#include <stdint.h>

struct mt_head;

/*
 * mt_head_watch_name - the id its client gave client watch num (a task's
 * cw), for persist.h; NULL when there is no such watch. Borrowed.
 */
const char *mt_head_watch_name(struct mt_head *h, uint32_t num);

/*
 * mt_head_watch_restore - the client watch named id, kept without a
 * stream until its client opens WatchTasks with that id again (after a
 * head restart); the tasks it followed are then sent their current state.
 * RET its number for a restored task's cw, 0 when id is not valid
 */
uint32_t mt_head_watch_restore(struct mt_head *h, const char *id);

#endif /* MT_HEAD_RPC_WATCH_H */
