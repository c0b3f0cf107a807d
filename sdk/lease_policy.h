/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lease_policy.h -- the decisions of the lease path (lease.c), as pure
 * functions: which scheduling class a task belongs to, how many leases a
 * class asks for, how many tasks one push carries and what becomes of a
 * task whose push came back without a result. docs/architecture.md,
 * "Leases: the direct task path", tells the protocol.
 *
 * Pure: no clock (durations are passed in), no I/O, no allocation.
 * THREAD: any.
 */
#ifndef MT_SDK_LEASE_POLICY_H
#define MT_SDK_LEASE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"

#define MT__LEASE_KEY_MAX 2048   /* bytes of a class key, NUL included */
#define MT__LEASE_BATCH_MIN 1
#define MT__LEASE_BATCH_START 1 /* doubles while pushes come back quick */
#define MT__LEASE_BATCH_MAX 1024
#define MT__LEASE_PUSHES 2       /* pushes in flight per lease */
#define MT__LEASE_REQUESTS 8     /* lease requests outstanding per class */
#define MT__LEASE_PER_REQUEST 64 /* queued tasks beyond what the held
                                    leases absorb that ask for one more */
#define MT__LEASE_SLOW_NS 1000000u /* a task this long: pushes of one */

/*
 * mt__lease_class_key - the scheduling class of d: its resources, label
 * selector, priority, strategy, node affinity (node and soft flag) and
 * placement group bundle written as one string, each text field with its
 * length first, so equal keys mean equal classes.
 * OUT buf   the key, NUL-terminated
 * RET its length, or -MT_EINVAL when it needs more than len bytes (the
 *     task then takes the head path)
 */
int mt__lease_class_key(const struct mt_task_def *d, char *buf, size_t len);

/* mt__lease_key_hash - FNV-1a of the first n bytes of key. */
uint64_t mt__lease_key_hash(const char *key, size_t n);

/*
 * mt__lease_more - how many lease requests a class should add: one per
 * MT__LEASE_PER_REQUEST tasks queued beyond what its granted leases
 * absorb (MT__LEASE_PUSHES pushes of batch tasks each), at least one when
 * tasks wait and no lease is granted, never more than
 * MT__LEASE_REQUESTS outstanding.
 * IN  queued     tasks waiting in the class's queue
 * IN  granted    leases held and usable
 * IN  requested  requests not answered by a grant yet
 * IN  batch      the class's current batch size
 */
unsigned mt__lease_more(size_t queued, unsigned granted, unsigned requested,
                        unsigned batch);

/*
 * mt__lease_batch_next - the batch size after a push of n tasks that
 * took busy_ns on its lease: down to one when a task takes more than
 * MT__LEASE_SLOW_NS, doubled while a push lasts under 5 ms, halved when
 * it lasts over 50 ms; within [MT__LEASE_BATCH_MIN, MT__LEASE_BATCH_MAX].
 * A push of fewer tasks than cur that was quick says nothing: cur stays.
 */
unsigned mt__lease_batch_next(unsigned cur, size_t n, uint64_t busy_ns);

/* What becomes of a task whose push brought no final result. */
enum mt__lease_fate {
    MT__LEASE_REQUEUE = 0, /* never ran: queue again, same attempt */
    MT__LEASE_RETRY = 1,   /* ran and was lost: next attempt */
    MT__LEASE_FAIL = 2,    /* ran and was lost, no retries left */
};

/*
 * mt__lease_fate - not_run: the worker says it never ran (or the push
 * never reached it); otherwise the attempt counts, and the task is run
 * again while attempt < max_retries (-1: MT_TASK_DEFAULT_RETRIES), as the
 * head does for its own tasks.
 */
enum mt__lease_fate mt__lease_fate(bool not_run, uint32_t attempt,
                                   int32_t max_retries);

/* mt__lease_retries - max_retries resolved (-1: the default). */
uint32_t mt__lease_retries(int32_t max_retries);

#endif /* MT_SDK_LEASE_POLICY_H */
