/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_list.c -- `manta list nodes|tasks|actors|placement-groups|objects|
 * gangs`: the state API in the spirit of `ray list`, through libmanta's
 * listings (mt_list, with the filters --state, --node and --name).
 *
 * Text has one shape for every kind: a table (a header row of upper-case
 * column names, one row per entry, "-" for an empty cell, columns two
 * spaces apart) even when empty, a blank line, and one summary line:
 * "3 tasks", or "100 of 250 tasks shown; raise --limit to see more" when
 * the limit cut the list. Each kind only names its columns and fills its
 * rows; the table and the summary are drawn here once. json is what
 * mt_list_json writes, one object {"total": N, "<kind>": [...]} with
 * snake_case fields for scripts.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/conn.h"
#include "cli/session.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/qty.h"
#include "common/strbuf.h"

#define LIST_DEFAULT_LIMIT 100
#define LIST_MAX_LIMIT 100000
#define LIST_OBJECTS_TIMEOUT_MS 5000
#define CMD_WIDTH 48

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

static void table_head(struct table *t, const char *const *names)
{
    for (size_t i = 0; i < t->ncol; i++)
        table_add(t, mt_xstrdup(names[i]));
}

/* Print t (and free its cells). */
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

/* A cell: s, or "-" when it is empty. RET owned. */
static char *or_dash(const char *s)
{
    return mt_xstrdup(s && *s ? s : "-");
}

/* An amount back in fixed point, for the exact shortest decimal. */
static char *qty_str(double amount, char *buf, size_t len)
{
    return mt_qty_format(llround(amount * MT_QTY_SCALE), buf, len);
}

/* ---- nodes --------------------------------------------------------------- */

static const mt_resource *find_res(const mt_resource *v, size_t n,
                                   const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

/* "used/total" of one resource on a node; "-" when the node has none. */
static char *node_usage(const mt_node_info *n, const char *name)
{
    const mt_resource *t = find_res(n->total, n->n_total, name);
    const mt_resource *a = find_res(n->available, n->n_available, name);
    double total, avail;
    char u[32], s[32];

    if (!t)
        return mt_xstrdup("-");
    total = t->amount;
    avail = n->alive ? (a ? a->amount : 0) : total;
    if (strcmp(name, "memory") == 0) {
        mt_bytes_format(total - avail, u, sizeof(u));
        mt_bytes_format(total, s, sizeof(s));
    } else {
        qty_str(total - avail, u, sizeof(u));
        qty_str(total, s, sizeof(s));
    }
    return mt_xasprintf("%s/%s", u, s);
}

/* Every other resource (custom, TPU, ...) as "NAME used/total,...";
 * "-" when there is none. */
static char *node_others(const mt_node_info *n)
{
    static const char *const shown[] = {"CPU", "GPU", "memory",
                                        "object_store_memory"};
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char *s;

    for (size_t i = 0; i < n->n_total; i++) {
        const char *name = n->total[i].name;
        bool skip = false;

        for (size_t k = 0; k < sizeof(shown) / sizeof(shown[0]); k++)
            skip = skip || strcmp(name, shown[k]) == 0;
        if (skip)
            continue;
        s = node_usage(n, name);
        mt_strbuf_addf(&sb, "%s%s %s", sb.len ? "," : "", name, s);
        free(s);
    }
    s = mt_xstrdup(sb.len ? mt_strbuf_str(&sb) : "-");
    mt_strbuf_release(&sb);
    return s;
}

static char *node_labels(const mt_node_info *n)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char *s;

    for (size_t i = 0; i < n->n_labels; i++) {
        /* The node-id label repeats the first column. */
        if (strcmp(n->labels[i].key, "manta.io/node-id") == 0)
            continue;
        mt_strbuf_addf(&sb, "%s%s=%s", sb.len ? "," : "", n->labels[i].key,
                       n->labels[i].value);
    }
    s = mt_xstrdup(sb.len ? mt_strbuf_str(&sb) : "-");
    mt_strbuf_release(&sb);
    return s;
}

static const char *const node_cols[] = {"NODE_ID", "STATE", "ADDRESS",
                                        "CPU", "GPU", "MEMORY", "OTHER",
                                        "LABELS", NULL};

static void node_row(const mt_listing *l, size_t i, struct table *t)
{
    const mt_node_info *n = &l->nodes[i];

    table_add(t, or_dash(n->node_id));
    table_add(t, mt_xstrdup(n->alive ? "ALIVE" : "DEAD"));
    table_add(t, or_dash(n->address));
    table_add(t, node_usage(n, "CPU"));
    table_add(t, node_usage(n, "GPU"));
    table_add(t, node_usage(n, "memory"));
    table_add(t, node_others(n));
    table_add(t, node_labels(n));
}

/* ---- tasks --------------------------------------------------------------- */

/* argv joined by spaces, cut to CMD_WIDTH with "..." for the table. */
static char *task_command(const mt_task_info *ti)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char *out;

    if (!ti->argc)
        mt_strbuf_adds(&sb, *ti->function ? ti->function : "-");
    for (size_t i = 0; i < ti->argc; i++)
        mt_strbuf_addf(&sb, "%s%s", i ? " " : "", ti->argv[i]);
    out = mt_xstrdup(mt_strbuf_str(&sb));
    if (strlen(out) > CMD_WIDTH)
        strcpy(out + CMD_WIDTH - 3, "...");
    mt_strbuf_release(&sb);
    return out;
}

static const char *const task_cols[] = {"TASK_ID", "NAME", "STATE", "NODE",
                                        "ATTEMPT", "EXIT", "COMMAND", NULL};

static void task_row(const mt_listing *l, size_t i, struct table *t)
{
    const mt_task_info *ti = &l->tasks[i];

    table_add(t, or_dash(ti->task_id));
    table_add(t, or_dash(ti->name));
    table_add(t, mt_xstrdup(mt_task_state_name(ti->state)));
    table_add(t, or_dash(ti->node_id));
    table_add(t, mt_xasprintf("%u", ti->attempt));
    table_add(t, ti->state == MT_TASK_STATE_FINISHED
                     ? mt_xasprintf("%d", ti->exit_code)
                     : mt_xstrdup("-"));
    table_add(t, task_command(ti));
}

/* ---- actors -------------------------------------------------------------- */

static const char *const actor_cols[] = {"ACTOR_ID", "NAME", "STATE",
                                         "NODE", "PID", "RESTARTS",
                                         "DEATH_REASON", NULL};

static void actor_row(const mt_listing *l, size_t i, struct table *t)
{
    const mt_actor_info *a = &l->actors[i];

    table_add(t, or_dash(a->actor_id));
    table_add(t, or_dash(a->name));
    table_add(t, mt_xstrdup(mt_actor_state_name(a->state)));
    table_add(t, or_dash(a->node_id));
    table_add(t, a->pid ? mt_xasprintf("%u", a->pid) : mt_xstrdup("-"));
    table_add(t, mt_xasprintf("%u", a->num_restarts));
    table_add(t, or_dash(a->death_reason));
}

/* ---- placement groups ---------------------------------------------------- */

static const char *pg_strategy_name(mt_pg_strategy s)
{
    static const char *const names[] = {"PACK", "SPREAD", "STRICT_PACK",
                                        "STRICT_SPREAD"};

    return (int)s >= 0 && (int)s < 4 ? names[s] : "UNKNOWN";
}

/* "{CPU: 1} {GPU: 1}" for the bundles of g. RET owned. */
static char *pg_bundles(const mt_pg_info *g)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char q[32], *out;

    for (size_t b = 0; b < g->n_bundles; b++) {
        mt_strbuf_adds(&sb, b ? " {" : "{");
        for (size_t i = 0; i < g->bundle_sizes[b]; i++)
            mt_strbuf_addf(&sb, "%s%s: %s", i ? ", " : "",
                           g->bundles[b][i].name,
                           qty_str(g->bundles[b][i].amount, q, sizeof(q)));
        mt_strbuf_adds(&sb, "}");
    }
    out = mt_xstrdup(mt_strbuf_str(&sb));
    mt_strbuf_release(&sb);
    return out;
}

static const char *const pg_cols[] = {"PG_ID", "NAME", "STATE", "STRATEGY",
                                      "BUNDLES", NULL};

static void pg_row(const mt_listing *l, size_t i, struct table *t)
{
    const mt_pg_info *g = &l->pgs[i];

    table_add(t, or_dash(g->pg_id));
    table_add(t, or_dash(g->name));
    table_add(t, mt_xstrdup(mt_pg_state_name(g->state)));
    table_add(t, mt_xstrdup(pg_strategy_name(g->strategy)));
    table_add(t, pg_bundles(g));
}

/* ---- objects ------------------------------------------------------------- */

static const char *const object_cols[] = {"OBJECT_ID", "STATE", "SIZE",
                                          "INLINE", "REFS", "LOCATIONS",
                                          "OWNER", NULL};

/* Where copies are: each node id cut to 12 characters. RET owned. */
static char *object_locations(const mt_object_entry *o)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char *s;

    for (size_t i = 0; i < o->n_node_ids; i++)
        mt_strbuf_addf(&sb, "%s%.12s", i ? "," : "", o->node_ids[i]);
    s = or_dash(mt_strbuf_str(&sb));
    mt_strbuf_release(&sb);
    return s;
}

static void object_row(const mt_listing *l, size_t i, struct table *t)
{
    const mt_object_entry *o = &l->objects[i];
    char hex[MT_OBJECT_ID_HEX_SIZE], size[32];

    if (o->size < 1024)
        snprintf(size, sizeof(size), "%lluB", (unsigned long long)o->size);
    else
        mt_bytes_format((double)o->size, size, sizeof(size));
    table_add(t, mt_xstrdup(mt_object_id_format(&o->id, hex)));
    table_add(t, mt_xstrdup(mt_object_state_name(o->state)));
    table_add(t, mt_xstrdup(size));
    table_add(t, mt_xstrdup(o->is_inline ? "yes" : "no"));
    table_add(t, mt_xasprintf("%u", o->ref_count));
    table_add(t, object_locations(o));
    table_add(t, or_dash(o->owner));
}

/* ---- gangs --------------------------------------------------------------- */

static const char *const gang_cols[] = {"GANG_ID", "NAME", "STATE", "TPU",
                                        "LAUNCH", "MEMBERS", "RESTARTS",
                                        "SLICE", NULL};

static void gang_row(const mt_listing *l, size_t i, struct table *t)
{
    const mt_gang_detail *g = &l->gangs[i];

    table_add(t, or_dash(g->gang_id));
    table_add(t, or_dash(g->name));
    table_add(t, mt_xstrdup(mt_gang_state_name(g->state)));
    table_add(t, or_dash(g->pod_type));
    table_add(t, mt_xstrdup(g->launch == MT_GANG_LAUNCH_DEVICE ? "device"
                                                               : "host"));
    table_add(t, mt_xasprintf("%zu", g->n_members));
    table_add(t, mt_xasprintf("%u", g->attempt));
    table_add(t, or_dash(g->n_slice_names ? g->slice_names[0] : ""));
}

/* ---- kinds --------------------------------------------------------------- */

static const struct kind {
    const char *name;              /* as on the command line */
    mt_list_kind kind;
    const char *one, *many;        /* "task", "tasks": the summary's noun */
    const char *const *cols;       /* column names, NULL-terminated */
    void (*row)(const mt_listing *l, size_t i, struct table *t);
    const char *fail;              /* "manta list: <fail> at ADDR: why" */
    int timeout_ms;
} kinds[] = {
    {"nodes", MT_LIST_NODES, "node", "nodes", node_cols, node_row,
     "cannot reach the head", MT_CLI_TIMEOUT_MS},
    {"tasks", MT_LIST_TASKS, "task", "tasks", task_cols, task_row,
     "cannot list tasks", MT_CLI_TIMEOUT_MS},
    {"actors", MT_LIST_ACTORS, "actor", "actors", actor_cols, actor_row,
     "cannot list actors", MT_CLI_TIMEOUT_MS},
    {"placement-groups", MT_LIST_PLACEMENT_GROUPS, "placement group",
     "placement groups", pg_cols, pg_row, "cannot list placement groups",
     MT_CLI_TIMEOUT_MS},
    {"objects", MT_LIST_OBJECTS, "object", "objects", object_cols,
     object_row, "cannot list objects", LIST_OBJECTS_TIMEOUT_MS},
    {"gangs", MT_LIST_GANGS, "gang", "gangs", gang_cols, gang_row, NULL,
     MT_CLI_TIMEOUT_MS},
};

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

/*
 * The text of a listing, the same shape for every kind: the table (its
 * header row even when empty), a blank line, the summary.
 */
static void listing_text(const struct kind *k, const mt_listing *l,
                         uint32_t offset, struct mt_strbuf *sb)
{
    struct table t = {0, NULL, 0, 0};
    unsigned long long total = l->total > l->n ? l->total : l->n;

    while (k->cols[t.ncol])
        t.ncol++;
    table_head(&t, k->cols);
    for (size_t i = 0; i < l->n; i++)
        k->row(l, i, &t);
    table_print(&t, sb);
    if (offset)
        mt_strbuf_addf(sb, "\n%s %llu-%llu of %llu shown (--offset %u)\n",
                       k->many, l->n ? offset + 1ULL : 0ULL,
                       (unsigned long long)offset + l->n, total, offset);
    else if (l->n < total)
        mt_strbuf_addf(sb, "\n%zu of %llu %s shown; raise --limit to see "
                       "more\n", l->n, total, k->many);
    else
        mt_strbuf_addf(sb, "\n%llu %s\n", total,
                       total == 1 ? k->one : k->many);
}

/* ---- command ------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta list nodes|tasks|actors|placement-groups|objects|gangs\n"
            "                  [--address HOST:PORT] [--temp-dir DIR]\n"
            "                  [--format text|json] [--limit N] [--offset K]\n"
            "                  [--state STATE] [--node NODE_ID] [--name NAME]\n"
            "                  [--driver SESSION_ID] [--show-env]\n"
            "\n"
            "List the cluster's nodes, tasks, actors, placement groups,\n"
            "objects or gangs (newest first), like `ray list`: a table with\n"
            "a header row, then one summary line, \"N tasks\" or \"N of M\n"
            "tasks shown\" when --limit cut the list.\n"
            "In the nodes table CPU, GPU, MEMORY and OTHER (every other\n"
            "resource: custom ones, TPU chips, ...) read used/total.\n"
            "\n"
            "  --address HOST:PORT  the head (default: read from the session dir)\n"
            "  --temp-dir DIR       session dir: head.addr, token (default %s)\n"
            "  --format F           text (default) or json: one object\n"
            "                       {\"total\": N, \"tasks\": [...]} or\n"
            "                       {\"total\": N, \"nodes\": [...]}\n"
            "  --limit N            show at most N entries (default %d)\n"
            "  --offset K           skip the first K matches (paging)\n"
            "  --state STATE        only entries in this state (RUNNING, ALIVE,\n"
            "                       CREATED, READY, ...); the summary counts\n"
            "                       what matches\n"
            "  --node NODE_ID       nodes: that one; tasks: run there; objects:\n"
            "                       with a copy there\n"
            "  --name NAME          tasks, actors: with this name\n"
            "  --driver SESSION_ID  tasks: submitted by this driver session\n"
            "  --show-env           tasks: include command tasks' env (values\n"
            "                       are often secrets: left out otherwise)\n"
            "  -h, --help           this text\n"
            "\n"
            "objects: the head's object directory (size, locations, refs).\n"
            "gangs: programs over whole TPU slices (manta submit --tpu).\n"
            "\n"
            "examples:\n"
            "  manta list nodes\n"
            "  manta list tasks --limit 20\n"
            "  manta list tasks --state FAILED\n"
            "  manta list tasks --format json | jq '.tasks[].state'\n",
            MT_DEFAULT_TEMP_DIR, LIST_DEFAULT_LIMIT);
}

#define usage_error(...) mt_cli_usage_error("list", usage, __VA_ARGS__)

/* Parsed command line of `manta list`. */
struct list_args {
    const char *addr, *dir, *format;
    const struct kind *kind;
    mt_list_filter filter;
};

/* List and print. RET the exit code. */
static int list(mt_client_t *c, const struct list_args *a)
{
    bool json = strcmp(a->format, "json") == 0;
    struct mt_strbuf sb = MT_STRBUF_INIT;
    mt_listing *l = NULL;
    char *text = NULL;
    int rc = json ? mt_list_json(c, a->kind->kind, &a->filter, &text)
                  : mt_list(c, a->kind->kind, &a->filter, &l);

    if (rc == -MT_EINVAL) /* a filter this kind does not have */
        return usage_error("%s", mt_client_last_error(c));
    if (rc < 0 && !a->kind->fail)
        fprintf(stderr, "manta list: %s\n", mt_client_last_error(c));
    else if (rc < 0)
        fprintf(stderr, "manta list: %s at %s: %s\n", a->kind->fail,
                mt_client_address(c), mt_client_last_error(c));
    if (rc < 0)
        return 1;
    if (!json)
        listing_text(a->kind, l, a->filter.offset, &sb);
    fputs(json ? text : mt_strbuf_str(&sb), stdout);
    mt_strbuf_release(&sb);
    mt_listing_free(l);
    mt_free(text);
    return 0;
}

static int take_opt(struct list_args *a, int c, const char *bad)
{
    long limit, offset;

    switch (c) {
    case 'a': a->addr = optarg; return 0;
    case 't': a->dir = optarg; return 0;
    case 'f': a->format = optarg; return 0;
    case 's': a->filter.state = optarg; return 0;
    case 'N': a->filter.node_id = optarg; return 0;
    case 'n': a->filter.name = optarg; return 0;
    case 'E': a->filter.show_env = 1; return 0;
    case 'D': a->filter.owner_id = optarg; return 0;
    case 'o':
        if (!mt_parse_int(optarg, 0, UINT32_MAX, &offset))
            return usage_error("--offset must be a whole number from 0 "
                               "to %u, not '%s'", UINT32_MAX, optarg);
        a->filter.offset = (uint32_t)offset;
        return 0;
    case 'l':
        if (!mt_parse_int(optarg, 1, LIST_MAX_LIMIT, &limit))
            return usage_error("--limit must be a whole number from 1 "
                               "to 100000, not '%s'", optarg);
        a->filter.limit = (uint32_t)limit;
        return 0;
    case 'h':
        usage(stdout);
        return -1;
    default:
        return usage_error("unknown or incomplete option '%s'", bad);
    }
}

/* RET 0, -1 (help shown) or the exit code. */
static int parse(int argc, char **argv, struct list_args *a)
{
    static const struct option opts[] = {
        MT_CLI_HEAD_OPTIONS,
        {"format", required_argument, NULL, 'f'},
        {"limit", required_argument, NULL, 'l'},
        {"state", required_argument, NULL, 's'},
        {"node", required_argument, NULL, 'N'},
        {"name", required_argument, NULL, 'n'},
        {"show-env", no_argument, NULL, 'E'},
        {"offset", required_argument, NULL, 'o'},
        {"driver", required_argument, NULL, 'D'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, rc;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1)
        if ((rc = take_opt(a, c, argv[optind - 1])))
            return rc;
    if (optind >= argc)
        return usage_error("%s", "what to list? nodes, tasks, actors, "
                           "placement-groups, objects or gangs");
    if (optind + 1 < argc)
        return usage_error("unexpected argument '%s'", argv[optind + 1]);
    if (strcmp(a->format, "text") && strcmp(a->format, "json"))
        return usage_error("--format must be text or json, not '%s'",
                           a->format);
    for (size_t i = 0; i < N_KINDS && !a->kind; i++)
        if (strcmp(argv[optind], kinds[i].name) == 0)
            a->kind = &kinds[i];
    if (!a->kind)
        return usage_error("cannot list '%s': expected nodes, tasks, actors, "
                           "placement-groups, objects or gangs",
                           argv[optind]);
    return 0;
}

static int cmd_list(int argc, char **argv)
{
    struct list_args a = {NULL, NULL, "text", NULL, {0}};
    mt_client_t *c;
    int rc;

    mt_list_filter_init(&a.filter);
    a.filter.limit = LIST_DEFAULT_LIMIT;
    if ((rc = parse(argc, argv, &a)))
        return rc < 0 ? 0 : rc;
    rc = mt_cli_connect("list", a.addr, a.dir, a.kind->timeout_ms, &c);
    if (rc == MT_EXIT_USAGE)
        usage(stderr);
    if (rc)
        return rc;
    rc = list(c, &a);
    mt_client_disconnect(c);
    return rc;
}

const struct mt_cli_command mt_cli_cmd_list = {
    "list", cmd_list,
    "list nodes, tasks, actors, placement groups, objects or gangs"};
