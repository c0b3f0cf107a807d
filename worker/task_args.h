/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_args.h -- getting a function task's object arguments onto this
 * node before it runs: a small value that came inline with the request
 * becomes an ordinary argument; an object already in the node's store is
 * used in place; any other is pulled from the holders the head listed,
 * one after the other until one succeeds (mt__worker_fetch). The executor
 * then maps each stored argument from the store (zero-copy).
 *
 * THREAD: the worker's loop thread.
 */
#ifndef MT_WORKER_TASK_ARGS_H
#define MT_WORKER_TASK_ARGS_H

#include <stdbool.h>

struct mt_worker;
struct mt_run_spec;
struct mt_args_job;

/* err 0: every argument is ready; else why (a one-line message). */
typedef void (*mt_args_done_fn)(void *arg, int err, const char *why);

/*
 * mt__worker_args_resolve - start getting s's object arguments.
 * OWNERSHIP borrows s until done runs (or the job is cancelled); inline
 *           values are moved into s->args
 * RET the job; done(arg) runs exactly once, maybe before this returns
 *     (then the return is NULL), unless mt__worker_args_cancel() comes first
 */
struct mt_args_job *mt__worker_args_resolve(struct mt_worker *w,
                                            struct mt_run_spec *s,
                                            mt_args_done_fn done, void *arg);

/* mt__worker_args_cancel - done will not run; a pull in flight finishes
 * on its own and the job frees itself. NULL ok. */
void mt__worker_args_cancel(struct mt_args_job *j);

#endif /* MT_WORKER_TASK_ARGS_H */
