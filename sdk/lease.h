/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lease.h -- the calls of lease.c, the lease path: function tasks whose
 * arguments are all values are queued per scheduling class in the driver
 * and pushed straight to workers the head leased to this client, instead
 * of each going through the head (docs/architecture.md, "Leases: the
 * direct task path"). Its decisions are lease_policy.h's, its PushTasks
 * rpc_push.h's; the user-facing side is the submit, wait and cancel of
 * manta/task.h (task.c).
 */
#ifndef MT_SDK_LEASE_H
#define MT_SDK_LEASE_H

#include "sdk/task_int.h"

struct mt__leases;

#define MT__LEASE_NOT_TAKEN 1 /* mt__lease_post: the head path's task */

/* mt__leases_create - the lease path's state for a client; off for good
 * when MANTA_LEASES=0 is set now. RET NULL on ENOMEM. */
struct mt__leases *mt__leases_create(void);

/* mt__leases_destroy - free it, after the loop thread ended. NULL ok. */
void mt__leases_destroy(struct mt__leases *ls);

/*
 * mt__lease_post - caller thread: take d for the lease path when it fits
 * (a followed FUNCTION task with no argument by reference, leases on,
 * the client watch and the session up) and return at once with the task,
 * its id already chosen here ("t" + 15 random hex digits).
 * OUT out  owned task, free with mt_task_release()
 * RET 0 (d taken), MT__LEASE_NOT_TAKEN (d untouched: submit it to the
 *     head), -MT_ENOMEM / -MT_ECLOSED (d taken; recorded on c)
 */
int mt__lease_post(struct mt_client *c, struct mt_task_def *d,
                   size_t output_limit, struct mt_task **out);

/*
 * mt__lease_cancel - caller thread: cancel leased task t: queued here, it
 * ends CANCELLED at once; pushed, its worker is asked to stop it
 * (StopTask) and its result comes back CANCELLED. Waits for the loop
 * thread to act on it. RET 0, -MT_ECLOSED, -MT_ENOMEM (recorded on c)
 */
int mt__lease_cancel(struct mt_client *c, struct mt_task *t, bool force);

/* Loop thread, at the end of each wake-up: push what was queued, ask for
 * leases, return idle ones. */
void mt__leases_pump(struct mt_client *c);

/* Loop thread, disconnecting (before the client watch stops): end every
 * queued or pushed task as closed, return idle leases (best effort) and
 * cancel pushes in flight. */
void mt__leases_stop(struct mt_client *c);

#endif /* MT_SDK_LEASE_H */
