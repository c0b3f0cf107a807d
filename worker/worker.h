/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker.h -- the manta-worker daemon's life cycle, as main.c drives it:
 * start (serve rpcs, then register with the head), stop (unregister, end
 * every run and executor), destroy. What the daemon is made of:
 * worker_int.h.
 *
 * THREAD: everything runs on the worker's loop thread.
 */
#ifndef MT_WORKER_H
#define MT_WORKER_H

#include <uv.h>

#include "worker/worker_config.h"

struct mt_worker;

/*
 * mt_worker_start - bind the worker's rpc server and start registering.
 * IN  cfg  borrowed; must outlive the worker
 * RET 0 or -MT_E*
 */
int mt_worker_start(uv_loop_t *loop, const struct mt_worker_config *cfg,
                    struct mt_worker **out);

/* mt_worker_node_id - the node's id (cfg->node_id or a random one). */
const char *mt_worker_node_id(const struct mt_worker *w);

/*
 * mt_worker_stop - SIGKILL every task's process group (nothing more is
 * reported), unregister (best effort, 1 s), stop serving, close every task
 * handle, run done.
 */
void mt_worker_stop(struct mt_worker *w, void (*done)(void *arg), void *arg);

/* mt_worker_destroy - free after stop completed and the loop is idle. */
void mt_worker_destroy(struct mt_worker *w);

#endif /* MT_WORKER_H */
