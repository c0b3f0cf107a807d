/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procs.h -- the worker's record of the process groups it has started
 * (each command task's manta-guard, each executor), kept in
 * <temp_dir>/worker.procs (format and sweep: common/proc.h), so that what
 * outlives a worker that died without cleaning up is killed by the next
 * worker started on the same session dir, or by `manta stop`.
 *
 * The file is rewritten atomically (0600) at most once per loop iteration,
 * after whatever changed in it; a group is in it from the iteration it was
 * spawned in until its leader has been reaped. The guards and executors
 * kill their groups themselves when the worker dies (guard.h,
 * executor_main.c): the record is for when they could not.
 *
 * THREAD: loop thread only.
 */
#ifndef MT_WORKER_PROCS_H
#define MT_WORKER_PROCS_H

#include <uv.h>

struct mt_procs;

/*
 * mt_procs_create - sweep what a predecessor recorded in temp_dir (kill
 * its leftovers, logging how many) and start a record of our own.
 * IN  temp_dir  the session dir; NULL: keep no record (*out is NULL)
 * OUT out       free with mt_procs_destroy() after mt_procs_close()
 * RET 0, -MT_ESTATE (the record belongs to a worker that still runs)
 */
int mt_procs_create(uv_loop_t *loop, const char *temp_dir,
                    struct mt_procs **out);

/* mt_procs_add - pid, just spawned, leads a group of ours. NULL p ok. */
void mt_procs_add(struct mt_procs *p, int pid);

/* mt_procs_remove - pid has been reaped. NULL p ok. */
void mt_procs_remove(struct mt_procs *p, int pid);

/*
 * mt_procs_close - write the record one last time (removed when no group
 * is left in it) and close the handle; done(arg) runs after. NULL p: done
 * runs at once.
 */
void mt_procs_close(struct mt_procs *p, void (*done)(void *), void *arg);

/* mt_procs_destroy - free after mt_procs_close completed. NULL ok. */
void mt_procs_destroy(struct mt_procs *p);

#endif /* MT_WORKER_PROCS_H */
