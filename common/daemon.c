/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon.c -- signals to graceful stop to loop exit (see daemon.h).
 */
#include "common/daemon.h"

#include <signal.h>

#include "common/log.h"

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
