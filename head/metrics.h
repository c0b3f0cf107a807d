/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.h -- the head's metrics in the Prometheus text format 0.0.4,
 * which the dashboard serves on GET /metrics (names in docs/dashboard.md).
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_METRICS_H
#define MT_HEAD_METRICS_H

struct mt_head;
struct mt_strbuf;

/* mt_head_metrics - append every metric family of h to out. */
void mt_head_metrics(struct mt_head *h, struct mt_strbuf *out);

#endif /* MT_HEAD_METRICS_H */
