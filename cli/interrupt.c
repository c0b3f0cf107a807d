/* SPDX-License-Identifier: Apache-2.0 */
/*
 * interrupt.c -- Ctrl-C while a command follows a task or a gang (see
 * interrupt.h): SIGINT, SIGTERM and SIGHUP are blocked everywhere and taken
 * by a thread of its own with sigwait(), so no libmanta thread is ever
 * interrupted. The first is handed to the follower, which cancels what it
 * follows between events; the second leaves at once.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/interrupt.h"

/* The signals that cancel: Ctrl-C, a supervisor's stop, a closed
 * terminal. */
static void cancel_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
}

static void *wait_signal(void *arg)
{
    struct mt_cli_interrupt *it = arg;
    sigset_t set;
    int sig;

    cancel_signals(&set);
    for (;;) {
        if (sigwait(&set, &sig) != 0)
            continue;
        if (atomic_fetch_add(&it->count, 1) == 0)
            continue; /* the follower cancels */
        pthread_mutex_lock(&it->mu);
        fprintf(stderr, "manta: leaving; %s %s may still be running\n",
                it->what, it->id[0] ? it->id : "(not submitted yet)");
        pthread_mutex_unlock(&it->mu);
        _exit(MT_CLI_EXIT_CANCELLED);
    }
    return NULL;
}

void mt_cli_interrupt_start(struct mt_cli_interrupt *it, const char *what)
{
    sigset_t set;

    memset(it, 0, sizeof(*it));
    it->what = what;
    atomic_init(&it->count, 0);
    pthread_mutex_init(&it->mu, NULL);
    cancel_signals(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    it->started = pthread_create(&it->thread, NULL, wait_signal, it) == 0;
}

void mt_cli_interrupt_set_id(struct mt_cli_interrupt *it, const char *id)
{
    pthread_mutex_lock(&it->mu);
    snprintf(it->id, sizeof(it->id), "%s", id);
    pthread_mutex_unlock(&it->mu);
}

bool mt_cli_interrupt_take(struct mt_cli_interrupt *it)
{
    if (!it || it->taken || atomic_load(&it->count) == 0)
        return false;
    it->taken = true;
    return true;
}

/* The signals stay blocked: one from now on must not kill a command that
 * is about to exit with the task's own code. */
void mt_cli_interrupt_stop(struct mt_cli_interrupt *it)
{
    if (!it)
        return;
    if (it->started) {
        pthread_cancel(it->thread);
        pthread_join(it->thread, NULL);
    }
    pthread_mutex_destroy(&it->mu);
}
