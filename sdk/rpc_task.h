/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_task.h -- the calls of rpc_task.c, tasks one by one in protobuf:
 * SubmitTask, a WatchTask per task followed or per id a watch follows,
 * CancelTask and ListTasks. Types in task_int.h; the user-facing side is
 * manta/task.h (task.c) and the watch and listing in manta/admin.h.
 */
#ifndef MT_SDK_RPC_TASK_H
#define MT_SDK_RPC_TASK_H

#include "sdk/task_int.h"

/* mt__task_event_decode - a Manta__TaskEvent (borrowed) as plain C; ev
 * borrows from it. */
void mt__task_event_decode(const void *pb, struct mt__task_event *ev);

/*
 * mt__task_submit_one - SubmitTask d (taken) and, when follow, follow the
 * task on its own WatchTask; waits for the head's answer (caller thread).
 * The task asks for an id of our own, so a head that went away gets it
 * again (retry.h) until the reconnect deadline without making two.
 * OUT out  owned task, free with mt_task_release()
 * RET 0 or -MT_E* (recorded on c: the call's status, "INVALID_ARGUMENT:
 *     ...")
 */
int mt__task_submit_one(struct mt_client *c, struct mt_task_def *d,
                        size_t output_limit, bool follow,
                        struct mt_task **out);

/* mt__task_names_itself - whether a task of d is sent under an id the
 * driver chose (mt__task_id_new): every kind but the actors'. */
bool mt__task_names_itself(const struct mt_task_def *d);

/* Loop thread: SubmitTask d (taken) for t, whose handle exists (one ref
 * taken): nobody waits; the reply gives t its id and a watch, or ends it.
 */
void mt__task_submit_posted(struct mt_client *c, struct mt_task *t,
                            struct mt_task_def *d);

/* mt__task_cancel_id - CancelTask. OUT state: the state after the request
 * (may be NULL). RET 0 or -MT_E* (recorded on c: "NOT_FOUND: ..."). */
int mt__task_cancel_id(struct mt_client *c, const char *id, bool force,
                       int *state);

/* Loop thread: CancelTask id (borrowed) without waiting for the answer
 * (the task's events say what became of it). */
void mt__task_cancel_post(struct mt_client *c, const char *id);

/* mt__task_list - ListTasks (f checked, state its value): the entries
 * into l (their memory in keep) or, with json, the JSON text (owned).
 * RET 0 or -MT_E* (recorded on c) */
int mt__task_list(struct mt_client *c, const mt_list_filter *f, int state,
                  mt_listing *l, struct mt__keep *keep, char **json);

/* Loop thread: follow t on a WatchTask of its own (or queue it for a
 * slot). Takes one ref. */
void mt__task_watch(struct mt_client *c, struct mt_task *t);

/* Loop thread: end every task waiting for a watch or a retry (stop). */
void mt__tasks_stop_watches(struct mt_client *c);

/* ---- following tasks by id (watch.c) ------------------------------------- */

/* mt__watch_follow - post the opening of one stream per id (copied) for w.
 * RET 0, -MT_ENOMEM, -MT_ECLOSED (recorded on w's client). */
int mt__watch_follow(struct mt_watch *w, const char *const *ids, size_t n);

/* mt__watch_stop - post the cancel of w's streams. RET 0, -MT_ECLOSED. */
int mt__watch_stop(struct mt_watch *w);

#endif /* MT_SDK_RPC_TASK_H */
