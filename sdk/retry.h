/* SPDX-License-Identifier: Apache-2.0 */
/*
 * retry.h -- the calls of retry.c, the one place that decides whether a
 * failed call to the head is tried again: the policy (pure, unit-tested:
 * which failures, how long to wait, when to give up) and the client's
 * side of it (loop thread: since when the head is away, the timers that
 * start the next attempt).
 */
#ifndef MT_SDK_RETRY_H
#define MT_SDK_RETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sdk/client_int.h"

#define MT__RECONNECT_ENV "MANTA_HEAD_RECONNECT_TIMEOUT"
#define MT__RECONNECT_DEFAULT_S 60
#define MT__RECONNECT_MAX_S 86400
#define MT__RETRY_FIRST_MS 50    /* the first wait; doubles ... */
#define MT__RETRY_MAX_MS 1000    /* ... up to this */

struct mt_rpc_status;

/* ---- the policy (pure) --------------------------------------------------- */

/*
 * mt__retry_limit_ms - the reconnect deadline from the value of
 * MANTA_HEAD_RECONNECT_TIMEOUT (seconds; NULL or "" when unset).
 * RET the default 60 s in ms when unset or not a number 0..86400; 0 when
 *     "0" (calls are never retried)
 */
int mt__retry_limit_ms(const char *env);

/* mt__retry_backoff_ms - the wait before the attempt after the n-th
 * failed one (n >= 1): 50 ms doubling up to 1 s. */
int mt__retry_backoff_ms(unsigned n);

/* How safe a call is to repeat (mt__retry_wanted). */
enum mt__repeat {
    MT__REPEAT_SAFE = 0,   /* reads, cancels, submits with our own id:
                              repeating one that arrived changes nothing */
    MT__REPEAT_UNSENT = 1, /* counts (puts, releases, new groups): tried
                              again only when it cannot have arrived */
};

/*
 * mt__retry_wanted - whether a call that failed with grpc_code is worth
 * another attempt. UNAVAILABLE (connection refused, reset, no route) is;
 * DEADLINE_EXCEEDED is only while the head is known to be away (else the
 * call's own deadline passed on a live head). An MT__REPEAT_UNSENT call
 * is tried again only when its attempt started while the head was
 * already known away: such an attempt fails fast and never arrives.
 */
bool mt__retry_wanted(int grpc_code, enum mt__repeat how, bool away,
                      bool started_away);

/*
 * mt__retry_due - whether the reconnect deadline has passed: the head
 * has been away since away_since_ms (0: it is not) and now_ms is limit_ms
 * or more after that. A limit of 0 is always passed.
 */
bool mt__retry_due(uint64_t away_since_ms, uint64_t now_ms, int limit_ms);

/* mt__retry_give_up_text - "head ADDR unreachable for N s
 * (MANTA_HEAD_RECONNECT_TIMEOUT)" into buf. */
void mt__retry_give_up_text(const char *address, int limit_ms, char *buf,
                            size_t len);

/* ---- the client's side (loop thread) ------------------------------------- */

/* mt__now_ms - a monotonic clock in ms. THREAD any. */
uint64_t mt__now_ms(void);

/* mt__head_back - a call or stream message came: the head is there. */
void mt__head_back(struct mt_client *c);

/* mt__head_away - c's head is known away (a call failed with UNAVAILABLE
 * since the last answer). */
bool mt__head_away(const struct mt_client *c);

/* mt__attempt_flags - the rpc flags of an attempt that would use flags:
 * none (fail fast) while the head is known away, so a retried call finds
 * out at once instead of at its deadline. */
unsigned mt__attempt_flags(const struct mt_client *c, unsigned flags);

/*
 * mt__retry_after - a call or stream to the head failed with st: decide.
 * Marks the head away on UNAVAILABLE. attempt counts the failed attempts
 * (1 after the first).
 * IN  started_away  the head was known away when the attempt started
 * OUT why           when giving up because the deadline passed: the
 *                   clear message (else left as it was)
 * RET the delay in ms before the next attempt, or -1: fail the call now
 *     (not retryable, retries off, deadline passed, client closing)
 */
int mt__retry_after(struct mt_client *c, const struct mt_rpc_status *st,
                    enum mt__repeat how, unsigned attempt, bool started_away,
                    char *why, size_t len);

/* What a retry timer calls: on the loop thread after the delay, or at
 * once with closing set when the client stops first. */
typedef void (*mt__retry_fn)(struct mt_client *c, void *arg, bool closing);

/*
 * mt__retry_later - call fn(c, arg, false) after delay_ms.
 * RET 0, or -MT_ENOMEM (fn never runs)
 */
int mt__retry_later(struct mt_client *c, int delay_ms, mt__retry_fn fn,
                    void *arg);

/* mt__retry_stop - the client is stopping: run every pending fn with
 * closing set and close its timer. */
void mt__retry_stop(struct mt_client *c);

#endif /* MT_SDK_RETRY_H */
