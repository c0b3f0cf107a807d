/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recover.h -- a restarted head squares what it loaded (persist.h) with
 * what its workers really hold, before it offers any resource.
 *
 *   load -> begin: restored tasks resume (pending ones queue; placed ones
 *           charge their old grants again, mt_head_tasks_resume); the
 *           scheduler is held; the nodes loaded as alive are expected
 *   each expected node registers again, saying what it holds
 *           (mt_head_recover_node): the placed tasks it holds stay
 *           (adopted), the ones it does not are lost (queued again, or
 *           retried as after a node loss), and what it runs that the head
 *           does not know, or knows ended or elsewhere, is stopped
 *   every expected node registered or was declared dead, or the deadline
 *           passed (head.c: two report periods + 0.5 s, at most the node
 *           timeout + 1 s) -> the scheduler resumes; a node still to
 *           register keeps what it holds charged but is suspected:
 *           nothing new goes there until it registers or is declared dead
 *
 * Drivers get longer: a restored session, actor owner or lease owner has
 * MANTA_HEAD_RECONNECT_TIMEOUT (as the SDK's) to open its session again.
 *
 * Every registration that carries holdings is checked the same way, not
 * only during recovery (a worker restarted under the same node id within
 * the node timeout lost what it ran): what it runs that the head does not
 * place there at that attempt is stopped, and a RUNNING task it does not
 * hold is lost (a worker lists each run until the head acknowledged its
 * final report, so none is lost twice). Outside recovery a SCHEDULED task
 * it does not hold is left alone: its hand-over may be on its way. Tasks
 * pushed to a lease are the lease's driver's business, never touched.
 *
 * THREAD: the head's loop thread only. Plain C: no protobuf here.
 */
#ifndef MT_HEAD_RECOVER_H
#define MT_HEAD_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_head;
struct mt_node;
struct mt_head_recover;

/* One task a worker holds (RegisterNodeRequest.held_tasks, plain C). */
struct mt_held_task {
    const char *task_id;
    uint32_t attempt;
    const char *lease_id;        /* "" unless pushed to a lease */
};

/* What a registering worker holds; arrays borrowed for the call. */
struct mt_node_holdings {
    const struct mt_held_task *tasks;
    size_t n_tasks;
};

/* mt_head_recover_create - nothing to recover yet. RET owned. */
struct mt_head_recover *mt_head_recover_create(struct mt_head *h);

/*
 * mt_head_recover_begin - everything is loaded: resume the restored tasks
 * and hold the scheduler until the loaded nodes have said what they hold
 * (or at most timeout_ms). With nothing to wait for it ends at once.
 */
void mt_head_recover_begin(struct mt_head_recover *rc, int timeout_ms);

/*
 * mt_head_recover_node - node n (registered, alive) holds what held says:
 * adopt, stop or requeue as described above.
 */
void mt_head_recover_node(struct mt_head_recover *rc, struct mt_node *n,
                          const struct mt_node_holdings *held);

/* mt_head_recover_node_dead - an expected node was declared dead. */
void mt_head_recover_node_dead(struct mt_head_recover *rc,
                               const char *node_id);

/*
 * mt_head_recover_expect_owner - a restored driver session, actor owner
 * or lease owner (persist.h): when its client has not opened
 * LeaseActorOwner again MANTA_HEAD_RECONNECT_TIMEOUT seconds (default 60)
 * after the restart, it is gone (mt_head_owner_gone: its actors that are
 * not detached die, its references and leases go).
 * IN  owner  borrowed, copied
 */
void mt_head_recover_expect_owner(struct mt_head_recover *rc,
                                  const char *owner);

/* mt_head_recovering - still holding the scheduler. */
bool mt_head_recovering(const struct mt_head_recover *rc);

/* mt_head_recover_close - stop its timer; done(arg) once closed. */
void mt_head_recover_close(struct mt_head_recover *rc, void (*done)(void *arg),
                           void *arg);
void mt_head_recover_destroy(struct mt_head_recover *rc);

#endif /* MT_HEAD_RECOVER_H */
