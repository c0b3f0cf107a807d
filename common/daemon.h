/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon.h -- the loop life cycle every Manta daemon shares: SIGTERM and
 * SIGINT start a graceful stop, and the loop runs until that stop reports
 * done. (The rpc engine's wakeup handle keeps a loop alive forever, so the
 * loop is stopped explicitly once the daemon is done.)
 *
 * THREAD: the loop thread (main).
 */
#ifndef MT_DAEMON_H
#define MT_DAEMON_H

#include <stdbool.h>
#include <uv.h>

/* Begin a graceful stop of daemon; call done(arg) once it has finished. */
typedef void (*mt_daemon_stop_fn)(void *daemon, void (*done)(void *arg),
                                  void *arg);

struct mt_daemon {
    uv_loop_t *loop;
    uv_signal_t sig_term;
    uv_signal_t sig_int;
    mt_daemon_stop_fn stop;
    void *daemon;
    bool stopping;
};

/* mt_daemon_init - install the signal handlers (borrowed loop and daemon). */
void mt_daemon_init(struct mt_daemon *d, uv_loop_t *loop,
                    mt_daemon_stop_fn stop, void *daemon);

/* mt_daemon_shutdown - begin the stop now (e.g. a fatal start-up error). */
void mt_daemon_shutdown(struct mt_daemon *d);

/* mt_daemon_run - run the loop until the daemon has stopped. */
void mt_daemon_run(struct mt_daemon *d);

/*
 * mt_daemon_close_loop - after the daemon's state is destroyed: run loop
 * until its close callbacks and pending requests (thread-pool work) are
 * done, at most 5 s, then close it. A handle still open is a leak: each
 * is logged by type (warnings), and the loop is left as it is.
 * RET 0, or -1 when handles were still open.
 */
int mt_daemon_close_loop(uv_loop_t *loop);

#endif /* MT_DAEMON_H */
