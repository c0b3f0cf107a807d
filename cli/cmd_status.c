/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_status.c -- `manta status`: the cluster's status from libmanta
 * (mt_cluster_status_get) as text, in the spirit of `ray status`, or as the
 * one JSON object the head's dashboard also serves (mt_cluster_status_json:
 * one writer for both).
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

#include "cli/commands.h"
#include "cli/conn.h"
#include "cli/session.h"
#include "common/parse.h"
#include "common/qty.h"
#include "common/strbuf.h"
#include "common/sys.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta status [--address HOST:PORT] [--temp-dir DIR]\n"
            "                    [--format text|json]\n"
            "\n"
            "Show the cluster: nodes (alive/dead), addresses, resources used/total.\n"
            "\n"
            "  --address HOST:PORT  the head (default: read from the session dir)\n"
            "  --temp-dir DIR       session dir: head.addr, token (default %s)\n"
            "  --format F           text (default) or json\n"
            "  -h, --help           this text\n",
            MT_DEFAULT_TEMP_DIR);
}

static bool is_bytes(const char *name)
{
    return strcmp(name, "memory") == 0 ||
           strcmp(name, "object_store_memory") == 0;
}

static double find_amount(const mt_resource *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return v[i].amount;
    return 0;
}

/* ---- text ---------------------------------------------------------------- */

static void fmt_amount(const char *name, double v, char *buf, size_t len)
{
    if (is_bytes(name))
        mt_bytes_format(v, buf, len);
    else
        snprintf(buf, len, "%.1f", v);
}

/* "used/total name" for one resource. */
static void fmt_usage(struct mt_strbuf *sb, const char *name, double total,
                      double avail)
{
    char u[32], t[32];

    fmt_amount(name, total - avail, u, sizeof(u));
    fmt_amount(name, total, t, sizeof(t));
    mt_strbuf_addf(sb, "%s/%s %s", u, t, name);
}

static void fmt_known(int64_t v, char *buf, size_t len)
{
    if (v >= 0)
        mt_bytes_format((double)v, buf, len);
    else
        snprintf(buf, len, "?");
}

/* One line per GPU, named as tasks name it, with its NVML index when that
 * differs: "gpu 0: NVIDIA H200, memory 1.0GiB/141.0GiB, utilization 37%",
 * "gpu GPU-b1 (index 2): ...", "?" for a figure the worker does not know. */
static void text_gpus(struct mt_strbuf *sb, const mt_node_info *n)
{
    char used[32], tot[32], util[16], idx[16];

    for (size_t i = 0; i < n->n_gpus; i++) {
        const mt_gpu_info *g = &n->gpus[i];

        fmt_known(g->memory_used_bytes, used, sizeof(used));
        fmt_known(g->memory_total_bytes, tot, sizeof(tot));
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

static void text_node(struct mt_strbuf *sb, const mt_node_info *n)
{
    mt_strbuf_addf(sb, " %s  %-5s  %-21s  %s\n", n->node_id,
                   n->alive ? "ALIVE" : "DEAD", n->address, n->hostname);
    mt_strbuf_adds(sb, "   resources: ");
    for (size_t i = 0; i < n->n_total; i++) {
        const char *name = n->total[i].name;

        if (i)
            mt_strbuf_adds(sb, ", ");
        fmt_usage(sb, name, n->total[i].amount,
                  n->alive ? find_amount(n->available, n->n_available, name)
                           : n->total[i].amount);
    }
    mt_strbuf_adds(sb, "\n");
    if (n->alive && n->has_usage) {
        char used[32], tot[32];

        mt_strbuf_addf(sb, "   host: cpu %.1f%%, memory %s/%s\n",
                       n->cpu_percent,
                       mt_bytes_format((double)n->mem_used_bytes, used,
                                       sizeof(used)),
                       mt_bytes_format((double)n->mem_total_bytes, tot,
                                       sizeof(tot)));
        text_gpus(sb, n);
    }
    if (!n->alive)
        mt_strbuf_addf(sb, "   dead: %s\n", n->death_reason);
    if (n->n_labels) {
        mt_strbuf_adds(sb, "   labels: ");
        for (size_t i = 0; i < n->n_labels; i++)
            mt_strbuf_addf(sb, "%s%s=%s", i ? ", " : "", n->labels[i].key,
                           n->labels[i].value);
        mt_strbuf_adds(sb, "\n");
    }
}

static void text_nodes(struct mt_strbuf *sb, const mt_cluster_status *r,
                       const char *rule)
{
    size_t alive = 0;

    for (size_t i = 0; i < r->n_nodes; i++)
        alive += r->nodes[i].alive;
    mt_strbuf_addf(sb, "Node status\n%sAlive:\n %zu node%s\nDead:\n", rule,
                   alive, alive == 1 ? "" : "s");
    if (r->n_nodes == alive)
        mt_strbuf_adds(sb, " (no dead nodes)\n");
    else
        mt_strbuf_addf(sb, " %zu node%s\n", r->n_nodes - alive,
                       r->n_nodes - alive == 1 ? "" : "s");
    mt_strbuf_addf(sb, "Nodes\n%s", rule);
    for (size_t i = 0; i < r->n_nodes; i++)
        text_node(sb, &r->nodes[i]);
    if (!r->n_nodes)
        mt_strbuf_adds(sb, " (no nodes)\n");
}

static void text_demand(struct mt_strbuf *sb, const mt_cluster_status *r,
                        const char *rule)
{
    mt_strbuf_addf(sb, "Resources\n%sUsage:\n", rule);
    for (size_t i = 0; i < r->n_total; i++) {
        mt_strbuf_adds(sb, " ");
        fmt_usage(sb, r->total[i].name, r->total[i].amount,
                  find_amount(r->available, r->n_available,
                              r->total[i].name));
        mt_strbuf_adds(sb, "\n");
    }
    if (!r->n_total)
        mt_strbuf_adds(sb, " (no resources)\n");
    mt_strbuf_adds(sb, "Demands:\n");
    for (size_t i = 0; i < r->n_demands; i++)
        mt_strbuf_addf(sb, " %s\n", r->demands[i]);
    if (!r->n_demands)
        mt_strbuf_adds(sb, " (no resource demands)\n");
    if (r->pending_tasks || r->running_tasks)
        mt_strbuf_addf(sb, "Tasks: %llu running, %llu pending\n",
                       (unsigned long long)r->running_tasks,
                       (unsigned long long)r->pending_tasks);
}

/* "Storage: file:///tmp/manta/head.state ok, 1234 writes" or
 * "Storage: redis://... UNREACHABLE since 12s, 530 writes buffered". */
static void text_storage(struct mt_strbuf *sb, const mt_cluster_status *r)
{
    const mt_storage_info *s = r->storage;

    if (!s)
        return;
    mt_strbuf_addf(sb, "Storage: %s", *s->spec ? s->spec : s->backend);
    if (!strcmp(s->backend, "memory"))
        mt_strbuf_adds(sb, " (not durable: a restarted head forgets)");
    if (s->healthy) {
        mt_strbuf_addf(sb, " ok, %llu writes",
                       (unsigned long long)s->writes);
    } else {
        long ago = s->down_since_ms
                       ? (long)((mt_now_wall_ms() - s->down_since_ms) / 1000)
                       : 0;

        mt_strbuf_addf(sb, " %s since %lds",
                       strcmp(s->backend, "redis") ? "FAILING"
                                                   : "UNREACHABLE",
                       ago < 0 ? 0 : ago);
    }
    if (s->buffered && !s->healthy)
        mt_strbuf_addf(sb, ", %llu writes buffered",
                       (unsigned long long)s->buffered);
    if (s->dropped)
        mt_strbuf_addf(sb, ", %llu writes dropped",
                       (unsigned long long)s->dropped);
    if (!s->healthy && *s->last_error)
        mt_strbuf_addf(sb, " (%s)", s->last_error);
    mt_strbuf_adds(sb, "\n");
}

static void print_text(const mt_cluster_status *r)
{
    static const char rule[] =
        "---------------------------------------------------------------\n";
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char ts[64];
    time_t now = time(NULL);
    struct tm tm;
    long up = (long)((mt_now_wall_ms() - r->head_start_time_ms) / 1000);

    localtime_r(&now, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
    mt_strbuf_addf(&sb, "======== Cluster status: %s ========\n", ts);
    mt_strbuf_addf(&sb, "Head: %s (cluster %s, version %s, up "
                        "%ldh%02ldm%02lds)\n",
                   r->head_address, r->cluster_id, r->head_version, up / 3600,
                   up / 60 % 60, up % 60);
    text_storage(&sb, r);
    text_nodes(&sb, r, rule);
    text_demand(&sb, r, rule);
    fputs(mt_strbuf_str(&sb), stdout);
    mt_strbuf_release(&sb);
}

/* ---- command ------------------------------------------------------------- */

/* Ask and print. RET the exit code. */
static int show(mt_client_t *c, bool json)
{
    mt_cluster_status *st = NULL;
    char *text = NULL;
    int rc = json ? mt_cluster_status_json(c, &text)
                  : mt_cluster_status_get(c, &st);

    if (rc < 0) {
        fprintf(stderr, "manta status: cannot reach the head at %s: %s\n",
                mt_client_address(c), mt_client_last_error(c));
        return 1;
    }
    if (json)
        fputs(text, stdout);
    else
        print_text(st);
    mt_free(text);
    mt_cluster_status_free(st);
    return 0;
}

static int cmd_status(int argc, char **argv)
{
    static const struct option opts[] = {
        MT_CLI_HEAD_OPTIONS,
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *addr = NULL, *dir = NULL, *format = "text";
    mt_client_t *cl;
    int c, rc;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'f': format = optarg; break;
        case 'a': addr = optarg; break;
        case 't': dir = optarg; break;
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
    rc = mt_cli_connect("status", addr, dir, MT_CLI_TIMEOUT_MS, &cl);
    if (rc) {
        if (rc == MT_EXIT_USAGE)
            usage(stderr);
        return rc;
    }
    rc = show(cl, strcmp(format, "json") == 0);
    mt_client_disconnect(cl);
    return rc;
}

const struct mt_cli_command mt_cli_cmd_status = {
    "status", cmd_status,
    "show nodes and resources of a cluster"};
