/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api_accel.h -- the dashboard's /api/accelerators (api_accel.c): every
 * GPU and TPU slice of the cluster, who holds it (task, actor, gang,
 * placement group), and free against stranded capacity (docs/dashboard.md,
 * "API").
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_API_ACCEL_H
#define MT_HEAD_API_ACCEL_H

struct mt_head;
struct mt_strbuf;

/*
 * mt_head_api_accelerators - /api/accelerators' object (api_accel.c).
 * O(tasks holding a grant + nodes + bundles).
 */
void mt_head_api_accelerators(struct mt_head *h, struct mt_strbuf *body);

#endif /* MT_HEAD_API_ACCEL_H */
