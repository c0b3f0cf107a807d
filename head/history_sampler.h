/* SPDX-License-Identifier: Apache-2.0 */
/*
 * history_sampler.h -- the head's side of the dashboard's history
 * (history.h holds the rings): a 1 s timer on the head's loop that samples
 * the node table and the task counts into them, and /api/history's JSON.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_HISTORY_SAMPLER_H
#define MT_HEAD_HISTORY_SAMPLER_H

#include <stdint.h>

struct mt_strbuf;
struct mt_head;

/*
 * mt_head_history_start - when h->cfg.history_seconds > 0, create the
 * history and sample it every second on h's loop (the first sample at
 * once). RET 0 (also when off)
 */
int mt_head_history_start(struct mt_head *h);

/*
 * mt_head_history_close - stop sampling; done(arg) once the timer is
 * closed (the history itself is freed then). Nothing started: done at
 * once.
 */
void mt_head_history_close(struct mt_head *h, void (*done)(void *arg),
                           void *arg);

/*
 * mt_head_history_json - /api/history for node id (NULL: the cluster's),
 * ending at the newest sample (every series ends at the same second).
 * RET 0, -MT_ENOENT (no such node), -MT_ENOTSUP (history is off)
 */
int mt_head_history_json(struct mt_head *h, const char *id, uint32_t seconds,
                         struct mt_strbuf *sb);

#endif /* MT_HEAD_HISTORY_SAMPLER_H */
