/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_proc.h -- test helper: run manta-store and child processes with
 * bounded waits (pidfd + poll, never an unbounded waitpid or a sleep).
 */
#ifndef MT_TEST_STORE_PROC_H
#define MT_TEST_STORE_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct store_proc {
    pid_t pid;
    char dir[64];    /* temp dir holding the socket and spill dir */
    char sock[128];  /* socket path */
    char spill[128]; /* spill dir ("" when not spilling) */
};

/* Start manta-store with mem bytes; wait (10 s max) for its ready line. */
int store_proc_start(struct store_proc *p, uint64_t mem, bool spill);

/* SIGTERM, wait 10 s, then SIGKILL; remove the temp dir. RET exit status. */
int store_proc_stop(struct store_proc *p);

/* Fork a child running fn(arg); the child _exits with fn's return. */
pid_t child_start(int (*fn)(void *), void *arg);

/*
 * child_wait - wait up to timeout_ms for pid; kill it on timeout.
 *
 * RET its exit code, 128 + signal if killed by one, -1 on timeout
 */
int child_wait(pid_t pid, int timeout_ms);

/* Milliseconds on the monotonic clock. */
uint64_t test_now_ms(void);

/* Wait until pred(arg) is true, up to timeout_ms (1 ms polls). */
bool wait_until(bool (*pred)(void *), void *arg, int timeout_ms);

#endif /* MT_TEST_STORE_PROC_H */
