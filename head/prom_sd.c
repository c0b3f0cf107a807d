/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prom_sd.c -- <temp-dir>/prom_sd.json, the cluster's /metrics targets
 * for Prometheus file SD (see prom_sd.h), rebuilt from the node table on
 * every membership change: a few hundred bytes per node, written whole.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/prom_sd.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "head/head_int.h"

#define SD_FILE "prom_sd.json"

/* What the file holds. Guarded by: loop thread. */
struct mt_head_prom_sd {
    char *last;                   /* the contents last written; NULL: none */
    bool warned;                  /* a failed write was logged */
};

/* One target group: {"targets": [addr], "labels": {...}}. */
static void group(struct mt_strbuf *sb, bool first, const char *addr,
                  const char *role, const char *node_id,
                  const char *cluster_id, bool tls)
{
    mt_strbuf_adds(sb, first ? "\n  {\"targets\": [" : ",\n  {\"targets\": [");
    mt_strbuf_add_json_str(sb, addr);
    mt_strbuf_adds(sb, "], \"labels\": {\"role\": ");
    mt_strbuf_add_json_str(sb, role);
    mt_strbuf_adds(sb, ", \"node_id\": ");
    mt_strbuf_add_json_str(sb, node_id);
    mt_strbuf_adds(sb, ", \"cluster_id\": ");
    mt_strbuf_add_json_str(sb, cluster_id);
    if (tls)
        mt_strbuf_adds(sb, ", \"__scheme__\": \"https\"");
    mt_strbuf_adds(sb, "}}");
}

void mt_head_prom_sd_json(struct mt_head *h, struct mt_strbuf *sb)
{
    const struct mt_node_table *t = mt_head_nodes_table(h->nodes);
    const char *url = h->dashboard_url, *sep = strstr(url, "://");
    bool tls = strncmp(url, "https:", 6) == 0, first = true;

    mt_strbuf_adds(sb, "[");
    if (h->dash && sep && sep[3]) {
        group(sb, first, sep + 3, "head", "head", h->cluster_id, tls);
        first = false;
    }
    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node *n = t->v[i];

        if (n->state != MT_NODE_ALIVE || !n->metrics_address)
            continue;
        group(sb, first, n->metrics_address, "worker", n->id, h->cluster_id,
              tls);
        first = false;
    }
    mt_strbuf_adds(sb, first ? "]\n" : "\n]\n");
}

int mt_head_prom_sd_write(struct mt_head *h)
{
    struct mt_head_prom_sd *sd = h->prom_sd;
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char path[1024];
    int rc = 0;

    if (!sd || !h->cfg.temp_dir || !h->nodes)
        return 0;
    mt_head_prom_sd_json(h, &sb);
    if (sd->last && strcmp(sd->last, sb.buf) == 0)
        goto out;
    snprintf(path, sizeof(path), "%s/%s", h->cfg.temp_dir, SD_FILE);
    rc = mt_sys_write_file_atomic(path, sb.buf);
    if (rc == 0) {
        free(sd->last);
        sd->last = mt_xstrdup(sb.buf);
    } else if (!sd->warned) {
        sd->warned = true;
        MT_WARN("cannot write %s: %s", path, strerror(-rc));
    }
out:
    mt_strbuf_release(&sb);
    return rc;
}

static void on_node_event(void *arg, struct mt_node *n, enum mt_node_event ev)
{
    (void)n;
    (void)ev;
    mt_head_prom_sd_write(arg);
}

static const struct mt_node_listener sd_listener = {
    .event = on_node_event,
};

void mt_head_prom_sd_start(struct mt_head *h)
{
    if (!h->cfg.temp_dir)
        return;
    h->prom_sd = mt_xcalloc(1, sizeof(*h->prom_sd));
    mt_head_nodes_listen(h->nodes, &sd_listener, h);
    mt_head_prom_sd_write(h);
}

void mt_head_prom_sd_destroy(struct mt_head_prom_sd *sd)
{
    if (!sd)
        return;
    free(sd->last);
    free(sd);
}
