/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_status.c -- `manta status`: ask the head for GetClusterStatus and print
 * it as text (in the spirit of `ray status`) or as one JSON object (written
 * by proto/status_json.c, shared with the head's dashboard).
 *
 * Resources are shown as used/total, used = total - available. Memory-like
 * resources (memory, object_store_memory) are printed in bytes units.
 * An unreachable head fails within the call deadline (4 s) with one line.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/session.h"
#include "common/parse.h"
#include "common/error.h"
#include "common/qty.h"
#include "common/rpc.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "head_service.pb-c.h"
#include "proto/services.h"
#include "proto/status_json.h"

#define STATUS_TIMEOUT_MS 4000

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta status [--address HOST:PORT | --temp-dir DIR]\n"
            "                    [--format text|json]\n"
            "\n"
            "Show the cluster: nodes (alive/dead), addresses, resources used/total.\n"
            "\n"
            "  --address HOST:PORT  the head (default: read from the session dir)\n"
            "  --temp-dir DIR       session dir holding head.addr (default %s)\n"
            "  --format F           text (default) or json\n"
            "  -h, --help           this text\n",
            MT_DEFAULT_TEMP_DIR);
}

static bool is_bytes(const char *name)
{
    return strcmp(name, "memory") == 0 ||
           strcmp(name, "object_store_memory") == 0;
}

static double to_double(int64_t q)
{
    return (double)q / MT_QTY_SCALE;
}

static int64_t find_qty(Manta__ResourceEntry **e, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(e[i]->name, name) == 0)
            return e[i]->quantity;
    return 0;
}

static void print_json(const Manta__GetClusterStatusReply *r)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    mt_status_json(&sb, r);
    fputs(mt_strbuf_str(&sb), stdout);
    mt_strbuf_release(&sb);
}

/* ---- text ------------------------------------------------------------------ */

static void fmt_amount(const char *name, int64_t q, char *buf, size_t len)
{
    if (is_bytes(name))
        mt_bytes_format(to_double(q), buf, len);
    else
        snprintf(buf, len, "%.1f", to_double(q));
}

/* "used/total name" for one resource. */
static void fmt_usage(struct mt_strbuf *sb, const char *name, int64_t total,
                      int64_t avail)
{
    char u[32], t[32];

    fmt_amount(name, total - avail, u, sizeof(u));
    fmt_amount(name, total, t, sizeof(t));
    mt_strbuf_addf(sb, "%s/%s %s", u, t, name);
}

/* One line per GPU, named as tasks name it, with its NVML index when that
 * differs: "gpu 0: NVIDIA H200, memory 1.0GiB/141.0GiB, utilization 37%",
 * "gpu GPU-b1 (index 2): ...", "?" for a figure the worker does not know. */
static void text_gpus(struct mt_strbuf *sb, const Manta__HostUsage *u)
{
    char used[32], tot[32], util[16], idx[16];

    for (size_t i = 0; i < u->n_gpus; i++) {
        const Manta__GpuStats *g = u->gpus[i];

        if (g->memory_used_bytes >= 0)
            mt_bytes_format((double)g->memory_used_bytes, used, sizeof(used));
        else
            snprintf(used, sizeof(used), "?");
        if (g->memory_total_bytes >= 0)
            mt_bytes_format((double)g->memory_total_bytes, tot, sizeof(tot));
        else
            snprintf(tot, sizeof(tot), "?");
        if (g->utilization_percent >= 0)
            snprintf(util, sizeof(util), "%d%%", g->utilization_percent);
        else
            snprintf(util, sizeof(util), "?");
        snprintf(idx, sizeof(idx), "%d", g->index);
        mt_strbuf_addf(sb, "   gpu %s", g->id);
        if (g->index < 0)
            mt_strbuf_adds(sb, " (MIG)");
        else if (strcmp(idx, g->id) != 0)
            mt_strbuf_addf(sb, " (index %d)", g->index);
        mt_strbuf_addf(sb, ": %s, memory %s/%s, utilization %s\n", g->name,
                       used, tot, util);
    }
}

static void text_node(struct mt_strbuf *sb, const Manta__NodeInfo *n)
{
    bool alive = n->state == MANTA__NODE_STATE__NODE_STATE_ALIVE;

    mt_strbuf_addf(sb, " %s  %-5s  %-21s  %s\n", n->node_id,
                   alive ? "ALIVE" : "DEAD", n->address, n->hostname);
    mt_strbuf_adds(sb, "   resources: ");
    for (size_t i = 0; i < n->n_resources_total; i++) {
        const char *name = n->resources_total[i]->name;
        if (i)
            mt_strbuf_adds(sb, ", ");
        fmt_usage(sb, name, n->resources_total[i]->quantity,
                  alive ? find_qty(n->resources_available,
                                   n->n_resources_available, name)
                        : n->resources_total[i]->quantity);
    }
    mt_strbuf_adds(sb, "\n");
    if (alive && n->usage) {
        char used[32], tot[32];
        mt_strbuf_addf(sb, "   host: cpu %.1f%%, memory %s/%s\n",
                       n->usage->cpu_percent,
                       mt_bytes_format((double)n->usage->mem_used_bytes, used,
                                       sizeof(used)),
                       mt_bytes_format((double)n->usage->mem_total_bytes, tot,
                                       sizeof(tot)));
        text_gpus(sb, n->usage);
    }
    if (!alive)
        mt_strbuf_addf(sb, "   dead: %s\n", n->death_reason);
    if (n->n_labels) {
        mt_strbuf_adds(sb, "   labels: ");
        for (size_t i = 0; i < n->n_labels; i++)
            mt_strbuf_addf(sb, "%s%s=%s", i ? ", " : "", n->labels[i]->key,
                           n->labels[i]->value);
        mt_strbuf_adds(sb, "\n");
    }
}

static void print_text(const Manta__GetClusterStatusReply *r)
{
    static const char rule[] =
        "---------------------------------------------------------------\n";
    struct mt_strbuf sb = MT_STRBUF_INIT;
    size_t alive = 0;
    char ts[64];
    time_t now = time(NULL);
    struct tm tm;
    long up = (long)((mt_now_wall_ms() - r->head_start_time_ms) / 1000);

    localtime_r(&now, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
    for (size_t i = 0; i < r->n_nodes; i++)
        alive += r->nodes[i]->state == MANTA__NODE_STATE__NODE_STATE_ALIVE;
    mt_strbuf_addf(&sb, "======== Cluster status: %s ========\n", ts);
    mt_strbuf_addf(&sb, "Head: %s (cluster %s, version %s, up %ldh%02ldm%02lds)\n",
                   r->head_address, r->cluster_id, r->head_version, up / 3600,
                   up / 60 % 60, up % 60);
    mt_strbuf_addf(&sb, "Node status\n%sAlive:\n %zu node%s\nDead:\n", rule,
                   alive, alive == 1 ? "" : "s");
    if (r->n_nodes == alive)
        mt_strbuf_adds(&sb, " (no dead nodes)\n");
    else
        mt_strbuf_addf(&sb, " %zu node%s\n", r->n_nodes - alive,
                       r->n_nodes - alive == 1 ? "" : "s");
    mt_strbuf_addf(&sb, "Nodes\n%s", rule);
    for (size_t i = 0; i < r->n_nodes; i++)
        text_node(&sb, r->nodes[i]);
    if (!r->n_nodes)
        mt_strbuf_adds(&sb, " (no nodes)\n");
    mt_strbuf_addf(&sb, "Resources\n%sUsage:\n", rule);
    for (size_t i = 0; i < r->n_resources_total; i++) {
        const char *name = r->resources_total[i]->name;
        mt_strbuf_adds(&sb, " ");
        fmt_usage(&sb, name, r->resources_total[i]->quantity,
                  find_qty(r->resources_available, r->n_resources_available,
                           name));
        mt_strbuf_adds(&sb, "\n");
    }
    if (!r->n_resources_total)
        mt_strbuf_adds(&sb, " (no resources)\n");
    mt_strbuf_adds(&sb, "Demands:\n");
    for (size_t i = 0; i < r->n_demands; i++)
        mt_strbuf_addf(&sb, " %s\n", r->demands[i]);
    if (!r->n_demands)
        mt_strbuf_adds(&sb, " (no resource demands)\n");
    if (r->pending_tasks || r->running_tasks)
        mt_strbuf_addf(&sb, "Tasks: %llu running, %llu pending\n",
                       (unsigned long long)r->running_tasks,
                       (unsigned long long)r->pending_tasks);
    fputs(mt_strbuf_str(&sb), stdout);
    mt_strbuf_release(&sb);
}

/* ---- command ------------------------------------------------------------------ */

int mt_cmd_status(int argc, char **argv)
{
    static const struct option opts[] = {
        {"address", required_argument, NULL, 'a'},
        {"temp-dir", required_argument, NULL, 't'},
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    Manta__GetClusterStatusRequest req = MANTA__GET_CLUSTER_STATUS_REQUEST__INIT;
    const char *addr = NULL, *dir = NULL, *format = "text";
    Manta__GetClusterStatusReply *r = NULL;
    ProtobufCMessage *resp = NULL;
    char *head = NULL, err[512] = "";
    int c, rc;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': addr = optarg; break;
        case 't': dir = optarg; break;
        case 'f': format = optarg; break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            fprintf(stderr, "manta status: unknown or incomplete option '%s'\n",
                    argv[optind - 1]);
            usage(stderr);
            return MT_EXIT_USAGE;
        }
    }
    if (optind < argc || (strcmp(format, "text") && strcmp(format, "json"))) {
        fprintf(stderr, "manta status: %s\n",
                optind < argc ? "unexpected argument"
                              : "--format must be text or json");
        usage(stderr);
        return MT_EXIT_USAGE;
    }
    rc = mt_cli_head_addr("status", addr, dir, &head);
    if (rc) {
        if (rc == MT_EXIT_USAGE)
            usage(stderr);
        return rc;
    }
    rc = mt_cli_call(head, &mt_head_get_cluster_status, &req.base,
                     STATUS_TIMEOUT_MS, &resp, err, sizeof(err));
    r = (Manta__GetClusterStatusReply *)resp;
    if (rc < 0) {
        fprintf(stderr, "manta status: cannot reach the head at %s: %s\n",
                head, err);
        free(head);
        return 1;
    }
    if (strcmp(format, "json") == 0)
        print_json(r);
    else
        print_text(r);
    manta__get_cluster_status_reply__free_unpacked(r, NULL);
    free(head);
    return 0;
}
