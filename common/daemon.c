/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon.c -- signals to graceful stop to loop exit (see daemon.h).
 */
#include "common/daemon.h"

#include <signal.h>

#include "common/log.h"

#define CLOSE_GUARD_MS 5000 /* mt_daemon_close_loop's longest wait */

static void on_stopped(void *arg)
{
    struct mt_daemon *d = arg;

    uv_close((uv_handle_t *)&d->sig_term, NULL);
    uv_close((uv_handle_t *)&d->sig_int, NULL);
    uv_stop(d->loop);
}

void mt_daemon_shutdown(struct mt_daemon *d)
{
    if (d->stopping)
        return;
    d->stopping = true;
    d->stop(d->daemon, on_stopped, d);
}

static void on_signal(uv_signal_t *s, int signum)
{
    MT_INFO("signal %d: stopping", signum);
    mt_daemon_shutdown(s->data);
}

void mt_daemon_init(struct mt_daemon *d, uv_loop_t *loop,
                    mt_daemon_stop_fn stop, void *daemon)
{
    d->loop = loop;
    d->stop = stop;
    d->daemon = daemon;
    d->stopping = false;
    uv_signal_init(loop, &d->sig_term);
    uv_signal_init(loop, &d->sig_int);
    d->sig_term.data = d;
    d->sig_int.data = d;
    uv_signal_start(&d->sig_term, on_signal, SIGTERM);
    uv_signal_start(&d->sig_int, on_signal, SIGINT);
}

void mt_daemon_run(struct mt_daemon *d)
{
    uv_run(d->loop, UV_RUN_DEFAULT);
}

static void log_open_handle(uv_handle_t *h, void *arg)
{
    (void)arg;
    MT_WARN("  open at exit: %s handle%s%s", uv_handle_type_name(h->type),
            uv_is_closing(h) ? " (closing)" : "",
            uv_is_active(h) ? " (active)" : "");
}

static void on_close_guard(uv_timer_t *t)
{
    uv_stop(t->loop);
}

int mt_daemon_close_loop(uv_loop_t *loop)
{
    uv_timer_t guard;

    /* Run until nothing is left: close callbacks, and requests still in
     * the thread pool (the file storage's last fdatasync, whose callback
     * frees it). The guard does not keep the loop alive; it only ends a
     * wait on a leaked active handle. */
    uv_timer_init(loop, &guard);
    uv_timer_start(&guard, on_close_guard, CLOSE_GUARD_MS, 0);
    uv_unref((uv_handle_t *)&guard);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&guard, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    if (uv_loop_close(loop) == 0)
        return 0;
    MT_WARN("loop closed with handles still open");
    uv_walk(loop, log_open_handle, NULL);
    return -1;
}
