/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_list.c -- `manta list nodes|tasks`: the state API in the spirit of
 * `ray list`. Nodes come from GetClusterStatus, tasks from ListTasks (newest
 * first); both print as a table under a "Stats: Total: N" header, or as one
 * JSON object ({"total": N, "nodes": [...]} / {"total": N, "tasks": [...]})
 * with snake_case fields for scripts.
 *
 * Actors are listed by rpc_actor.c. Kinds that arrive with later parts of
 * issue 5 (objects) are refused with an honest one-line message and exit 1.
 *
 * This file also holds the two helpers the head-talking commands share
 * (cli.h): finding the head's address and opening a private loop, engine and
 * channel to it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/session.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/error.h"
#include "common/qty.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "head_service.pb-c.h"
#include "proto/services.h"
#include "proto/list_json.h"

#define LIST_TIMEOUT_MS 4000
#define LIST_DEFAULT_LIMIT 100
#define LIST_MAX_LIMIT 100000
#define CMD_WIDTH 48

const char *mt_cli_task_state_name(int state)
{
    switch (state) {
    case MANTA__TASK_STATE__TASK_STATE_WAITING_FOR_ARGS:
        return "WAITING_FOR_ARGS";
    case MANTA__TASK_STATE__TASK_STATE_PENDING: return "PENDING";
    case MANTA__TASK_STATE__TASK_STATE_SCHEDULED: return "SCHEDULED";
    case MANTA__TASK_STATE__TASK_STATE_RUNNING: return "RUNNING";
    case MANTA__TASK_STATE__TASK_STATE_FINISHED: return "FINISHED";
    case MANTA__TASK_STATE__TASK_STATE_FAILED: return "FAILED";
    case MANTA__TASK_STATE__TASK_STATE_CANCELLED: return "CANCELLED";
    default: return "UNKNOWN";
    }
}

/* ---- tables -------------------------------------------------------------- */

/*
 * A text table: cells are owned strings, row-major. Columns are as wide as
 * their widest cell; the last one is not padded.
 */
struct table {
    size_t ncol;
    char **cells;
    size_t n;
    size_t cap;
};

static void table_add(struct table *t, char *owned)
{
    mt_xgrow((void **)&t->cells, &t->cap, t->n + 1, sizeof(*t->cells));
    t->cells[t->n++] = owned;
}

static void table_print(struct table *t, struct mt_strbuf *sb)
{
    size_t *w = mt_xcalloc(t->ncol, sizeof(*w));

    for (size_t i = 0; i < t->n; i++) {
        size_t len = strlen(t->cells[i]);
        if (len > w[i % t->ncol])
            w[i % t->ncol] = len;
    }
    for (size_t i = 0; i < t->n; i++) {
        size_t col = i % t->ncol;
        if (col + 1 == t->ncol)
            mt_strbuf_addf(sb, "%s\n", t->cells[i]);
        else
            mt_strbuf_addf(sb, "%-*s  ", (int)w[col], t->cells[i]);
    }
    for (size_t i = 0; i < t->n; i++)
        free(t->cells[i]);
    free(t->cells);
    free(w);
}

static void print_header(struct mt_strbuf *sb, uint64_t total, size_t shown)
{
    static const char rule[] = "------------------------------\n";
    char ts[64];
    time_t now = time(NULL);
    struct tm tm;

    localtime_r(&now, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
    mt_strbuf_addf(sb, "======== List: %s ========\n", ts);
    mt_strbuf_addf(sb, "Stats:\n%sTotal: %llu\n", rule,
                   (unsigned long long)total);
    if (shown < total)
        mt_strbuf_addf(sb, "Shown: %zu (raise --limit to see more)\n", shown);
    mt_strbuf_addf(sb, "\nTable:\n%s", rule);
}

static int64_t find_qty(Manta__ResourceEntry **e, size_t n, const char *name,
                        int64_t dflt)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(e[i]->name, name) == 0)
            return e[i]->quantity;
    return dflt;
}

/* ---- nodes --------------------------------------------------------------- */

/* "used/total" of one resource on a node; "-" when the node has none. */
static char *node_usage(const Manta__NodeInfo *n, const char *name)
{
    bool alive = n->state == MANTA__NODE_STATE__NODE_STATE_ALIVE;
    int64_t total = find_qty(n->resources_total, n->n_resources_total, name,
                             -1);
    int64_t avail;
    char u[32], t[32];

    if (total < 0)
        return mt_xstrdup("-");
    avail = alive ? find_qty(n->resources_available, n->n_resources_available,
                             name, 0)
                  : total;
    if (strcmp(name, "memory") == 0) {
        mt_bytes_format((double)(total - avail) / MT_QTY_SCALE, u, sizeof(u));
        mt_bytes_format((double)total / MT_QTY_SCALE, t, sizeof(t));
    } else {
        mt_qty_format(total - avail, u, sizeof(u));
        mt_qty_format(total, t, sizeof(t));
    }
    return mt_xasprintf("%s/%s", u, t);
}

static char *node_labels(const Manta__NodeInfo *n)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char *s;

    for (size_t i = 0; i < n->n_labels; i++) {
        /* The node-id label repeats the first column. */
        if (strcmp(n->labels[i]->key, "manta.io/node-id") == 0)
            continue;
        mt_strbuf_addf(&sb, "%s%s=%s", sb.len ? "," : "", n->labels[i]->key,
                       n->labels[i]->value);
    }
    s = mt_xstrdup(sb.len ? mt_strbuf_str(&sb) : "-");
    mt_strbuf_release(&sb);
    return s;
}

static void nodes_text(const Manta__GetClusterStatusReply *r, size_t shown,
                       struct mt_strbuf *sb)
{
    static const char *hdr[] = {"NODE_ID", "STATE", "ADDRESS", "CPU", "GPU",
                                "MEMORY", "LABELS"};
    struct table t = {7, NULL, 0, 0};

    print_header(sb, r->n_nodes, shown);
    for (size_t i = 0; i < 7; i++)
        table_add(&t, mt_xstrdup(hdr[i]));
    for (size_t i = 0; i < shown; i++) {
        const Manta__NodeInfo *n = r->nodes[i];
        bool alive = n->state == MANTA__NODE_STATE__NODE_STATE_ALIVE;

        table_add(&t, mt_xstrdup(n->node_id));
        table_add(&t, mt_xstrdup(alive ? "ALIVE" : "DEAD"));
        table_add(&t, mt_xstrdup(*n->address ? n->address : "-"));
        table_add(&t, node_usage(n, "CPU"));
        table_add(&t, node_usage(n, "GPU"));
        table_add(&t, node_usage(n, "memory"));
        table_add(&t, node_labels(n));
    }
    table_print(&t, sb);
}

static int list_nodes(const char *addr, long limit, bool json)
{
    Manta__GetClusterStatusRequest req =
        MANTA__GET_CLUSTER_STATUS_REQUEST__INIT;
    Manta__GetClusterStatusReply *r;
    struct mt_strbuf sb = MT_STRBUF_INIT;
    ProtobufCMessage *resp;
    char err[512] = "";
    size_t shown;

    if (mt_cli_call(addr, &mt_head_get_cluster_status, &req.base, LIST_TIMEOUT_MS, &resp, err,
                    sizeof(err)) < 0) {
        mt_cli_one_line(err);
        fprintf(stderr, "manta list: cannot reach the head at %s: %s\n", addr,
                err);
        return 1;
    }
    r = (Manta__GetClusterStatusReply *)resp;
    shown = r->n_nodes < (size_t)limit ? r->n_nodes : (size_t)limit;
    if (json)
        mt_list_json_nodes(&sb, r->nodes, shown, r->n_nodes);
    else
        nodes_text(r, shown, &sb);
    fputs(mt_strbuf_str(&sb), stdout);
    mt_strbuf_release(&sb);
    manta__get_cluster_status_reply__free_unpacked(r, NULL);
    return 0;
}

/* ---- tasks --------------------------------------------------------------- */

/* argv joined by spaces, cut to CMD_WIDTH with "..." for the table. */
static char *task_command(const Manta__TaskSpec *s, bool cut)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char *out;

    if (!s || !s->n_argv)
        mt_strbuf_adds(&sb, s && *s->function ? s->function : "-");
    for (size_t i = 0; s && i < s->n_argv; i++)
        mt_strbuf_addf(&sb, "%s%s", i ? " " : "", s->argv[i]);
    out = mt_xstrdup(mt_strbuf_str(&sb));
    if (cut && strlen(out) > CMD_WIDTH)
        strcpy(out + CMD_WIDTH - 3, "...");
    mt_strbuf_release(&sb);
    return out;
}

static void tasks_text(const Manta__ListTasksReply *r, struct mt_strbuf *sb)
{
    static const char *hdr[] = {"TASK_ID", "NAME", "STATE", "NODE",
                                "ATTEMPT", "EXIT", "COMMAND"};
    struct table t = {7, NULL, 0, 0};

    print_header(sb, r->total > r->n_tasks ? r->total : r->n_tasks,
                 r->n_tasks);
    for (size_t i = 0; i < 7; i++)
        table_add(&t, mt_xstrdup(hdr[i]));
    for (size_t i = 0; i < r->n_tasks; i++) {
        const Manta__TaskInfo *ti = r->tasks[i];
        const Manta__TaskSpec *s = ti->spec;
        bool fin = ti->state == MANTA__TASK_STATE__TASK_STATE_FINISHED;

        table_add(&t, mt_xstrdup(s && *s->task_id ? s->task_id : "-"));
        table_add(&t, mt_xstrdup(s && *s->name ? s->name : "-"));
        table_add(&t, mt_xstrdup(mt_cli_task_state_name(ti->state)));
        table_add(&t, mt_xstrdup(*ti->node_id ? ti->node_id : "-"));
        table_add(&t, mt_xasprintf("%u", ti->attempt));
        table_add(&t, fin ? mt_xasprintf("%d", ti->exit_code)
                          : mt_xstrdup("-"));
        table_add(&t, task_command(s, true));
    }
    table_print(&t, sb);
}

static int list_tasks(const char *addr, long limit, bool json)
{
    Manta__ListTasksRequest req = MANTA__LIST_TASKS_REQUEST__INIT;
    Manta__ListTasksReply *r;
    struct mt_strbuf sb = MT_STRBUF_INIT;
    ProtobufCMessage *resp;
    char err[512] = "";

    req.limit = (uint32_t)limit;
    if (mt_cli_call(addr, &mt_head_list_tasks, &req.base, LIST_TIMEOUT_MS, &resp, err,
                    sizeof(err)) < 0) {
        mt_cli_one_line(err);
        fprintf(stderr, "manta list: cannot list tasks at %s: %s\n", addr,
                err);
        return 1;
    }
    r = (Manta__ListTasksReply *)resp;
    if (json)
        mt_list_json_tasks(&sb, r);
    else
        tasks_text(r, &sb);
    fputs(mt_strbuf_str(&sb), stdout);
    mt_strbuf_release(&sb);
    manta__list_tasks_reply__free_unpacked(r, NULL);
    return 0;
}

/* ---- placement groups ------------------------------------------------------ */

static const char *pg_state_name(int state)
{
    switch (state) {
    case MANTA__PLACEMENT_GROUP_STATE__PG_STATE_PENDING: return "PENDING";
    case MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED: return "CREATED";
    case MANTA__PLACEMENT_GROUP_STATE__PG_STATE_RESCHEDULING:
        return "RESCHEDULING";
    case MANTA__PLACEMENT_GROUP_STATE__PG_STATE_REMOVED: return "REMOVED";
    default: return "UNKNOWN";
    }
}

static const char *pg_strategy_name(int s)
{
    static const char *names[] = {"PACK", "SPREAD", "STRICT_PACK",
                                  "STRICT_SPREAD"};

    return s >= 0 && s < 4 ? names[s] : "UNKNOWN";
}

/* "{CPU: 1} {GPU: 1}" for the bundles of g. RET owned. */
static char *pg_bundles(const Manta__PlacementGroupInfo *g)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char q[32], *out;

    for (size_t b = 0; b < g->n_bundles; b++) {
        mt_strbuf_adds(&sb, b ? " {" : "{");
        for (size_t i = 0; i < g->bundles[b]->n_resources; i++)
            mt_strbuf_addf(&sb, "%s%s: %s", i ? ", " : "",
                           g->bundles[b]->resources[i]->name,
                           mt_qty_format(g->bundles[b]->resources[i]->quantity,
                                         q, sizeof(q)));
        mt_strbuf_adds(&sb, "}");
    }
    out = mt_xstrdup(mt_strbuf_str(&sb));
    mt_strbuf_release(&sb);
    return out;
}

static void pgs_text(const Manta__ListPlacementGroupsReply *r,
                     struct mt_strbuf *sb)
{
    struct table t = {5, NULL, 0, 0};
    static const char *head[] = {"PG_ID", "NAME", "STATE", "STRATEGY",
                                 "BUNDLES"};

    print_header(sb, r->total, r->n_groups);
    for (size_t i = 0; i < 5; i++)
        table_add(&t, mt_xstrdup(head[i]));
    for (size_t i = 0; i < r->n_groups; i++) {
        const Manta__PlacementGroupInfo *g = r->groups[i];
        table_add(&t, mt_xstrdup(g->pg_id));
        table_add(&t, mt_xstrdup(*g->name ? g->name : "-"));
        table_add(&t, mt_xstrdup(pg_state_name(g->state)));
        table_add(&t, mt_xstrdup(pg_strategy_name(g->strategy)));
        table_add(&t, pg_bundles(g));
    }
    table_print(&t, sb);
}

static int list_pgs(const char *addr, long limit, bool json)
{
    Manta__ListPlacementGroupsRequest req =
        MANTA__LIST_PLACEMENT_GROUPS_REQUEST__INIT;
    Manta__ListPlacementGroupsReply *r;
    struct mt_strbuf sb = MT_STRBUF_INIT;
    ProtobufCMessage *resp;
    char err[512] = "";

    req.limit = (uint32_t)limit;
    if (mt_cli_call(addr, &mt_head_list_pgs, &req.base, LIST_TIMEOUT_MS, &resp, err,
                    sizeof(err)) < 0) {
        mt_cli_one_line(err);
        fprintf(stderr, "manta list: cannot list placement groups at %s: "
                        "%s\n", addr, err);
        return 1;
    }
    r = (Manta__ListPlacementGroupsReply *)resp;
    if (json)
        mt_list_json_pgs(&sb, r);
    else
        pgs_text(r, &sb);
    fputs(mt_strbuf_str(&sb), stdout);
    mt_strbuf_release(&sb);
    manta__list_placement_groups_reply__free_unpacked(r, NULL);
    return 0;
}

/* ---- command ------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta list nodes|tasks|actors|placement-groups|objects|gangs\n"
            "                  [--address HOST:PORT | --temp-dir DIR]\n"
            "                  [--format text|json] [--limit N]\n"
            "\n"
            "List the cluster's nodes, tasks, actors, placement groups or\n"
            "objects (newest first), like `ray list`.\n"
            "In the nodes table CPU, GPU and MEMORY read used/total.\n"
            "\n"
            "  --address HOST:PORT  the head (default: read from the session dir)\n"
            "  --temp-dir DIR       session dir holding head.addr (default %s)\n"
            "  --format F           text (default) or json: one object\n"
            "                       {\"total\": N, \"tasks\": [...]} or\n"
            "                       {\"total\": N, \"nodes\": [...]}\n"
            "  --limit N            show at most N entries (default %d)\n"
            "  -h, --help           this text\n"
            "\n"
            "objects: the head's object directory (size, locations, refs).\n"
            "gangs: programs over whole TPU slices (manta submit --tpu).\n"
            "\n"
            "examples:\n"
            "  manta list nodes\n"
            "  manta list tasks --limit 20\n"
            "  manta list tasks --format json | jq '.tasks[].state'\n",
            MT_DEFAULT_TEMP_DIR, LIST_DEFAULT_LIMIT);
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "manta list: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return MT_EXIT_USAGE;
}

int mt_cmd_list(int argc, char **argv)
{
    static const struct option opts[] = {
        {"address", required_argument, NULL, 'a'},
        {"temp-dir", required_argument, NULL, 't'},
        {"format", required_argument, NULL, 'f'},
        {"limit", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *addr = NULL, *dir = NULL, *format = "text", *kind;
    long limit = LIST_DEFAULT_LIMIT;
    char *head = NULL;
    int c, rc;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': addr = optarg; break;
        case 't': dir = optarg; break;
        case 'f': format = optarg; break;
        case 'l':
            if (!mt_parse_int(optarg, 1, LIST_MAX_LIMIT, &limit))
                return usage_error("--limit must be a whole number from 1 "
                                   "to 100000, not '%s'", optarg);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return usage_error("unknown or incomplete option '%s'",
                               argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return usage_error("%s", "what to list? nodes or tasks");
    if (optind + 1 < argc)
        return usage_error("unexpected argument '%s'", argv[optind + 1]);
    kind = argv[optind];
    if (strcmp(format, "text") && strcmp(format, "json"))
        return usage_error("--format must be text or json, not '%s'", format);
    if (strcmp(kind, "nodes") && strcmp(kind, "tasks") &&
        strcmp(kind, "actors") && strcmp(kind, "placement-groups") &&
        strcmp(kind, "objects") && strcmp(kind, "gangs"))
        return usage_error("cannot list '%s': expected nodes, tasks, actors, "
                           "placement-groups, objects or gangs", kind);
    rc = mt_cli_head_addr("list", addr, dir, &head);
    if (rc == MT_EXIT_USAGE)
        usage(stderr);
    if (rc)
        return rc;
    if (strcmp(kind, "nodes") == 0) {
        rc = list_nodes(head, limit, strcmp(format, "json") == 0);
    } else if (strcmp(kind, "actors") == 0) {
        rc = mt_cli_list_actors(head, limit, strcmp(format, "json") == 0);
    } else if (strcmp(kind, "placement-groups") == 0) {
        rc = list_pgs(head, limit, strcmp(format, "json") == 0);
    } else if (strcmp(kind, "gangs") == 0) {
        rc = mt_cli_list_gangs(head, limit, strcmp(format, "json") == 0);
    } else if (strcmp(kind, "objects") == 0) {
        rc = mt_cli_list_objects(head, limit, strcmp(format, "json") == 0);
    } else {
        rc = list_tasks(head, limit, strcmp(format, "json") == 0);
    }
    free(head);
    return rc;
}
