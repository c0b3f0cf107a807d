/* SPDX-License-Identifier: Apache-2.0 */
/*
 * interrupt.h -- Ctrl-C (or SIGTERM, SIGHUP) while following a task or a
 * gang (interrupt.c).
 */
#ifndef MT_CLI_INTERRUPT_H
#define MT_CLI_INTERRUPT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/*
 * Ctrl-C, SIGTERM or SIGHUP while following a task or a gang: the first
 * asks the follower to cancel it (the follower polls mt_cli_interrupt_take
 * between events), a second leaves at once (exit 130) saying what may
 * still run. The signals are blocked in every thread and taken by a thread
 * of its own, so start this before connecting (the client's thread
 * inherits the mask).
 */
struct mt_cli_interrupt {
    const char *what;            /* "task" or "gang" */
    pthread_mutex_t mu;
    char id[64];                 /* what to cancel; "" not known yet */
    atomic_int count;            /* Ctrl-Cs so far */
    bool taken;                  /* the first was handed to the follower */
    pthread_t thread;
    bool started;
};

void mt_cli_interrupt_start(struct mt_cli_interrupt *it, const char *what);
void mt_cli_interrupt_set_id(struct mt_cli_interrupt *it, const char *id);
/* mt_cli_interrupt_take - true once, after the first Ctrl-C. NULL ok. */
bool mt_cli_interrupt_take(struct mt_cli_interrupt *it);
/* mt_cli_interrupt_stop - end the thread (the signals stay blocked).
 * NULL ok. */
void mt_cli_interrupt_stop(struct mt_cli_interrupt *it);

#define MT_CLI_EXIT_CANCELLED 130

#endif /* MT_CLI_INTERRUPT_H */
