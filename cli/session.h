/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session.h -- the temp dir of a `manta start` session and the processes it
 * owns.
 *
 * Layout of a session dir (default /tmp/manta):
 *   head.addr        advertised head address, written by manta-head
 *   head.pid         pid of manta-head, written by the CLI
 *   worker.addr      worker rpc address, written by manta-worker
 *   worker.pid       pid of manta-worker, written by the CLI
 *   worker.registered node id, written by manta-worker once registered
 *   logs/head.log, logs/worker.log   daemon output
 *   head.state, head.state.log       the head's state (file storage, the
 *                    default of `manta start --head`); `manta stop` removes
 *                    them, a head restarted on the dir after a crash loads them
 */
#ifndef MT_SESSION_H
#define MT_SESSION_H

#include <stdbool.h>
#include <sys/types.h>

#define MT_DEFAULT_TEMP_DIR "/tmp/manta"
#define MT_HEAD_STATE_FILE "head.state" /* in the session dir */

/* mt_session_path - "<dir>/<name>". RET owned, free with free(). */
char *mt_session_path(const char *dir, const char *name);

/*
 * mt_session_read_pid - the pid in <dir>/<name>.pid if that process is alive
 * and is the named manta program (so a recycled pid is never signalled).
 * RET the pid, or 0 when there is none
 */
pid_t mt_session_read_pid(const char *dir, const char *name);

/* mt_session_pid_alive - running and not a zombie. */
bool mt_session_pid_alive(pid_t pid);

/*
 * mt_session_spawn - start a daemon detached from this terminal (own
 * session, stdin from /dev/null, output appended to log_path) and record its
 * pid in <dir>/<name>.pid. argv[0] is the program name, found next to the
 * running `manta` binary first, then on PATH.
 *
 * RET the pid, or -errno
 */
pid_t mt_session_spawn(const char *dir, const char *name, char *const argv[],
                       const char *log_path);

/*
 * mt_session_wait_file - wait until <dir>/<file> exists, the process pid
 * dies, or timeout_ms passes.
 * RET owned file contents (trailing whitespace trimmed), or NULL
 */
char *mt_session_wait_file(const char *dir, const char *file, pid_t pid,
                           int timeout_ms);

/* mt_session_head_addr - the head address in <dir>/head.addr (first
 * line). RET owned, free with free(); NULL when there is none. */
char *mt_session_head_addr(const char *dir);

/*
 * mt_session_exit_reason - the last line "<prog>: ..." of a daemon's log:
 * what it said when it refused to start (e.g. "manta-head: cannot start:
 * cannot listen (port in use?)").
 * RET owned line, or NULL when there is none
 */
char *mt_session_exit_reason(const char *log_path, const char *prog);

/* mt_session_print_log_tail - print the last lines of a log to stderr. */
void mt_session_print_log_tail(const char *log_path, int lines);

#endif /* MT_SESSION_H */
