/* SPDX-License-Identifier: Apache-2.0 */
/*
 * guard.h -- how a worker and manta-guard (guard_main.c) talk: the guard
 * starts and watches one command task so that the task never outlives
 * the worker.
 *
 * The worker spawns `manta-guard WORKER_PID PROGRAM [ARG...]` with the
 * task's environment, working directory and stdio, detached (the guard
 * leads a new session and process group), and the write end of a pipe as
 * fd MT_GUARD_STATUS_FD. The guard forks the task into its group and
 * execs it; the pipe then reaches EOF with nothing written, or carries
 * the errno (an int) of a failed exec (the guard then exits 127 for
 * ENOENT, else 126). The worker reads it once the guard has exited (so
 * starting a task never waits for the second fork and exec) and reports
 * "cannot run" as it would without a guard; such a task is RUNNING for
 * the moment in between.
 *
 * The guard's exit status is the task's: its exit code, or death by the
 * same signal. Every process the task started, even one that left its
 * process group, is the guard's descendant (it is a child subreaper):
 *   - the task's main process exits: the others get MT_GUARD_GRACE_MS to
 *     finish, then are killed, then the guard exits;
 *   - the worker dies (PR_SET_PDEATHSIG, MT_GUARD_DEATH_SIG, and a
 *     getppid() check every MT_GUARD_POLL_MS): all are killed, the guard
 *     last;
 *   - MT_GUARD_KILL_SIG from the worker: all are killed, then the guard
 *     dies by SIGKILL.
 * The guard takes SIGTERM, SIGINT and SIGHUP sent to the group without
 * dying: the task got them too, and its end ends the guard.
 */
#ifndef MT_WORKER_GUARD_H
#define MT_WORKER_GUARD_H

#include <signal.h>

#define MT_GUARD_STATUS_FD 3
#define MT_GUARD_KILL_SIG SIGUSR1
#define MT_GUARD_DEATH_SIG SIGHUP
#define MT_GUARD_GRACE_MS 1000
#define MT_GUARD_POLL_MS 1000

#endif /* MT_WORKER_GUARD_H */
