/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.h -- the worker's own Prometheus /metrics: an HTTP server
 * (common/httpd.h: the cluster token, TLS when the worker has a
 * certificate) on the node ip and --metrics-port, serving
 *
 *   GET /metrics   manta_worker_info, the node's host figures at first
 *                  hand (CPU, memory, disk, network: common/node_prom.h),
 *                  its resources, GPUs and object store, its rpc counts
 *                  and latencies, and the process_* families
 *
 * Its address (w->metrics_address) goes to the head in RegisterNode
 * (NodeInfo.metrics_address), which lists it in its Prometheus file-SD
 * (docs/operations.md).
 *
 * THREAD: the worker's loop thread only.
 */
#ifndef MT_WORKER_METRICS_H
#define MT_WORKER_METRICS_H

struct mt_strbuf;
struct mt_worker;

/*
 * mt_worker_metrics_start - bind cfg->node_ip:cfg->metrics_port and serve
 * /metrics on w's loop; sets w->metrics and w->metrics_address. Nothing
 * when cfg->metrics_port < 0.
 * RET 0, or -MT_EINVAL / -errno (logged; nothing left open)
 */
int mt_worker_metrics_start(struct mt_worker *w);

/* mt_worker_metrics_stop - stop serving /metrics (no-op when off). */
void mt_worker_metrics_stop(struct mt_worker *w);

/* mt_worker_metrics_write - every family /metrics serves, into sb. */
void mt_worker_metrics_write(struct mt_worker *w, struct mt_strbuf *sb);

#endif /* MT_WORKER_METRICS_H */
