/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_args.h -- getting a function task's object arguments onto this
 * node before it runs: a small value that came inline with the request
 * becomes an ordinary argument; an object already in the node's store is
 * used in place; any other is pulled from the holders the head listed,
 * one after the other until one succeeds (transfer.h). The executor then
 * maps each stored argument from the store (zero-copy).
 *
 * THREAD: the worker's loop thread.
 */
#ifndef MT_WORKER_TASK_ARGS_H
#define MT_WORKER_TASK_ARGS_H

struct mt_store;
struct mt_transfers;
struct mt_run_spec;
struct mt_run_args;

/* err 0: every argument is ready; else why (a one-line message). */
typedef void (*mt_run_args_fn)(void *arg, int err, const char *why);

/*
 * mt_run_args_resolve - start getting s's object arguments into st,
 * pulling what is missing through tr.
 * OWNERSHIP borrows st, tr and s until done runs (or the resolution is
 *           cancelled); inline values are moved into s->args
 * RET the resolution; done(arg) runs exactly once, maybe before this
 *     returns (then the return is NULL), unless mt_run_args_cancel()
 *     comes first
 */
struct mt_run_args *mt_run_args_resolve(struct mt_store *st,
                                        struct mt_transfers *tr,
                                        struct mt_run_spec *s,
                                        mt_run_args_fn done, void *arg);

/* mt_run_args_cancel - done will not run; a pull in flight finishes on
 * its own and the resolution frees itself then. NULL ok. */
void mt_run_args_cancel(struct mt_run_args *a);

#endif /* MT_WORKER_TASK_ARGS_H */
