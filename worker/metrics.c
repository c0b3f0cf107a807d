/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.c -- the worker's /metrics (see metrics.h). The host figures
 * are the ones the last report to the head carried (membership.h keeps
 * them, so a scrape never disturbs the CPU sampling of the reports); the
 * object store, GPU, rpc and process figures are read at scrape time.
 *
 * THREAD: the worker's loop thread only.
 */
#include "worker/metrics.h"

#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/httpd.h"
#include "common/log.h"
#include "common/node_prom.h"
#include "common/procstat.h"
#include "common/prom.h"
#include "common/qty.h"
#include "common/strbuf.h"
#include "objstore/store.h"
#include "worker/gpu_monitor.h"
#include "worker/worker_int.h"

/* This node's host and store figures. */
static void node_metrics(struct mt_worker *w, struct mt_strbuf *sb)
{
    struct mt_node_prom np = {.node_id = w->node_id};
    struct mt_host_usage u = {0};
    struct mt_store_stats st;

    if (w->membership)
        mt_membership_last_usage(w->membership, &u);
    np.cpu_ratio = u.cpu_percent / 100.0;
    np.mem_used = u.mem_used_bytes;
    np.mem_total = u.mem_total_bytes;
    np.disk_used = u.disk_used_bytes;
    np.disk_total = u.disk_total_bytes;
    np.net_rx = u.net_rx_bytes;
    np.net_tx = u.net_tx_bytes;
    if (w->objects.store) {
        mt_store_stats(w->objects.store, &st);
        np.store_used = st.used;
        np.store_capacity = st.capacity;
        np.store_objects = st.num_objects;
        np.store_spilled = st.spilled_total;
        np.store_evicted = st.evicted_bytes;
        np.store_restored = st.restored_total;
    }
    mt_node_prom_write(sb, &np, 1);
}

/* The resources the node offers (the head counts what is available). */
static void resource_metrics(struct mt_worker *w, struct mt_strbuf *sb)
{
    const struct mt_qty_list *l = &w->cfg->resources;
    char num[32];

    mt_prom_family(sb, "manta_node_resources", "gauge",
                   "Logical resources of each alive node (kind: total, "
                   "available).");
    for (size_t i = 0; i < l->n; i++) {
        mt_prom_series(sb, "manta_node_resources",
                       (const char *[]){"node_id", w->node_id, "resource",
                                        l->v[i].name, "kind", "total", NULL});
        mt_strbuf_addf(sb, " %s\n",
                       mt_qty_format(l->v[i].qty, num, sizeof(num)));
    }
}

static void gpu_metrics(struct mt_worker *w, struct mt_strbuf *sb)
{
    static struct mt_gpu_stat st[MT_GPU_MAX];
    static struct mt_gpu_prom gp[MT_GPU_MAX];
    int n = 0;

    if (w->cfg->gpu_monitor)
        n = mt_gpu_monitor_read(w->cfg->gpu_monitor, st, MT_GPU_MAX);
    for (int i = 0; i < n; i++) {
        gp[i] = (struct mt_gpu_prom){
            .node_id = w->node_id,
            .gpu = st[i].id,
            .index = st[i].index,
            .uuid = st[i].uuid,
            .model = st[i].name,
            .util_ratio = st[i].util_percent < 0 ? -1.0
                                                 : st[i].util_percent / 100.0,
            .mem_used = st[i].mem_used,
            .mem_total = st[i].mem_total,
        };
    }
    mt_gpu_prom_write(sb, gp, n > 0 ? (size_t)n : 0);
}

void mt_worker_metrics_write(struct mt_worker *w, struct mt_strbuf *sb)
{
    mt_prom_family(sb, "manta_worker_info", "gauge",
                   "The worker's node id, version and rpc address (1).");
    mt_prom_sample(sb, "manta_worker_info",
                   (const char *[]){"node_id", w->node_id, "version",
                                    MT_VERSION, "address", w->address,
                                    NULL},
                   1);
    node_metrics(w, sb);
    resource_metrics(w, sb);
    gpu_metrics(w, sb);
    if (w->eng)
        mt_rpc_engine_metrics(w->eng, sb);
    mt_procstat_metrics(sb);
}

/* GET /metrics; everything else is 404. */
static void route(void *arg, const struct mt_httpd_request *r,
                  struct mt_httpd_answer *a)
{
    struct mt_worker *w = arg;

    if (!mt_http_str_eq(r->req->path, "/metrics", false)) {
        mt_httpd_error(a, 404);
        return;
    }
    mt_worker_metrics_write(w, a->body);
    a->type = MT_PROM_CONTENT_TYPE;
}

int mt_worker_metrics_start(struct mt_worker *w)
{
    const struct mt_security *sec = w->cfg->sec;
    struct mt_httpd_opts o = {
        .name = "metrics",
        .host = w->cfg->node_ip,
        .port = w->cfg->metrics_port,
        .token = sec ? sec->token : NULL,
        .tls_cert = sec ? sec->tls_cert : NULL,
        .tls_key = sec ? sec->tls_key : NULL,
        .route = route,
        .arg = w,
    };
    int rc, port = 0;

    w->metrics_address[0] = '\0';
    if (w->cfg->metrics_port < 0)
        return 0;
    rc = mt_httpd_create(&o, &w->metrics, &port);
    if (rc < 0) {
        MT_ERROR("cannot serve /metrics on %s:%d: %s", o.host, o.port,
                 mt_strerror(rc));
        w->metrics = NULL;
        return rc;
    }
    if (mt_httpd_start(w->metrics, w->loop) < 0) {
        mt_httpd_close(w->metrics);
        w->metrics = NULL;
        return -MT_EIO;
    }
    snprintf(w->metrics_address, sizeof(w->metrics_address), "%s:%d",
             w->cfg->node_ip, port);
    MT_INFO("metrics at %s://%s/metrics", mt_httpd_tls(w->metrics) ? "https"
                                                                    : "http",
            w->metrics_address);
    return 0;
}

void mt_worker_metrics_stop(struct mt_worker *w)
{
    mt_httpd_close(w->metrics);
    w->metrics = NULL;
}
