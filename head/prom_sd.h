/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prom_sd.h -- the head's Prometheus file service discovery: the file
 * <temp-dir>/prom_sd.json, which a prometheus.yml names in file_sd_configs
 * (deploy/observability/prometheus.yml), listing every /metrics target of
 * the cluster:
 *
 *   [{"targets": ["127.0.0.1:8265"],
 *     "labels": {"role": "head", "node_id": "head", "cluster_id": "..."}},
 *    {"targets": ["10.0.0.7:41234"],
 *     "labels": {"role": "worker", "node_id": "...", "cluster_id": "..."}}]
 *
 * The head's target is its dashboard (absent when the dashboard is off);
 * a worker's is the metrics_address it registered with, listed while the
 * node is ALIVE. Over TLS each group also carries "__scheme__": "https".
 * The file is rewritten atomically (a temporary file, then rename) when
 * the dashboard starts and whenever a node registers or dies and the list
 * changes, so Prometheus (which watches it) never reads half of it.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_PROM_SD_H
#define MT_HEAD_PROM_SD_H

struct mt_head;
struct mt_head_prom_sd;
struct mt_strbuf;

/*
 * mt_head_prom_sd_start - follow node events and write the file now;
 * sets h->prom_sd (free with mt_head_prom_sd_destroy once h->nodes is
 * gone). Nothing when h has no temp dir.
 */
void mt_head_prom_sd_start(struct mt_head *h);

/* mt_head_prom_sd_destroy - free what start made. Accepts NULL. */
void mt_head_prom_sd_destroy(struct mt_head_prom_sd *sd);

/*
 * mt_head_prom_sd_write - write <temp-dir>/prom_sd.json now, unless it
 * would be what was last written (so a storm of node events that change
 * no target, e.g. simulated nodes without /metrics, writes nothing).
 * RET 0 (or nothing to do), or -errno (logged once)
 */
int mt_head_prom_sd_write(struct mt_head *h);

/* mt_head_prom_sd_json - the file's contents, appended to sb. */
void mt_head_prom_sd_json(struct mt_head *h, struct mt_strbuf *sb);

#endif /* MT_HEAD_PROM_SD_H */
