/* SPDX-License-Identifier: Apache-2.0 */
/*
 * head.h -- the manta-head daemon as main.c sees it: its configuration
 * and its life cycle. What it is made of (its services and how they are
 * layered) is head_int.h.
 *
 * THREAD: everything runs on the head's loop thread.
 */
#ifndef MT_HEAD_H
#define MT_HEAD_H

#include <uv.h>

#include "head/head_config.h"

struct mt_head;

/*
 * mt_head_start - open storage, load saved state, bind and start serving.
 *
 * IN  cfg  borrowed; its strings must outlive the head
 * OUT out  the head; free it with mt_head_stop()
 * RET 0 or -MT_E* (e.g. -MT_EIO when the port cannot be bound)
 */
int mt_head_start(uv_loop_t *loop, const struct mt_head_config *cfg,
                  struct mt_head **out);

/*
 * mt_head_stop - graceful stop: refuse new calls, give calls in flight
 * cfg.grace_ms, then free everything and run done(arg).
 */
void mt_head_stop(struct mt_head *h, void (*done)(void *arg), void *arg);

/* mt_head_address - "ip:port" as advertised (borrowed). */
const char *mt_head_address(const struct mt_head *h);

/* mt_head_dashboard_url - "http://ip:port", "" when off (borrowed). */
const char *mt_head_dashboard_url(const struct mt_head *h);

/* Destroy the rpc engine after the head has stopped and the loop is idle. */
void mt_head_destroy(struct mt_head *h);

#endif /* MT_HEAD_H */
