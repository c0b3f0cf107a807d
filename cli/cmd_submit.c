/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_submit.c -- `manta submit ... -- PROGRAM ARGS...`: run a command task
 * (or a C function task, or a gang over TPU slices) on the cluster, relay
 * its output and exit with its status.
 *
 * Every option goes into libmanta's task options (mt_task_opts_t, whose
 * setters check it) before the head is contacted, so a typo fails with a
 * usage message (exit 2) and never leaves a task behind. Then the task is
 * submitted, not to be followed by the client (the command prints its id
 * with --no-wait, or follows its events itself: follow.c). A gang goes to
 * cmd_gang.c with the same task options for its members.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/conn.h"
#include "cli/interrupt.h"
#include "cli/follow.h"
#include "cli/follow_gang.h"
#include "cli/session.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/qty.h"

/* ---- usage --------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta submit [--address HOST:PORT] [--temp-dir DIR] [options]\n"
            "                    -- PROGRAM [ARGS...]\n"
            "       manta submit [...] --function LIB.so:FN [--arg V]... [--code-path D]\n"
            "\n"
            "Run PROGRAM as a task on the cluster, relay its stdout and stderr,\n"
            "and exit with its exit code (1 if the task failed, 130 if it was\n"
            "cancelled). Ctrl-C cancels the task; a second Ctrl-C leaves at once.\n"
            "\n"
            "  --address HOST:PORT    the head (default: read from the session dir)\n"
            "  --temp-dir DIR         session dir: head.addr, token (default %s)\n"
            "resources (default: 1 CPU):\n"
            "  --num-cpus N           CPUs, fractions allowed (0 is fine)\n"
            "  --num-gpus N           GPUs: a fraction below 1 or a whole number\n"
            "  --memory BYTES         memory, e.g. 512MiB\n"
            "  --resources JSON       other resources, e.g. '{\"accel\": 0.5}'\n"
            "placement:\n"
            "  --label-selector EXPR  run only on nodes whose labels match EXPR:\n"
            "                         comma-separated expressions, all must hold:\n"
            "                           key=value       label equals value\n"
            "                           key!=value      differs, or is absent\n"
            "                           key in (a|b)    equals one of a, b\n"
            "                           key notin (a|b) equals none of them\n"
            "                           key             label is present\n"
            "                           !key            label is absent\n"
            "                         key=a|b and key!=a|b are short for in/notin\n"
            "  --spread               spread tasks over nodes instead of packing\n"
            "  --node-affinity ID[:soft]  run on node ID only (`manta list nodes`);\n"
            "                         :soft prefers it and runs elsewhere when it\n"
            "                         cannot take the task or is gone\n"
            "  --placement-group ID   run inside this placement group\n"
            "  --bundle N             ... in bundle N (default: any bundle)\n"
            "  --priority N           higher runs first (default 0)\n"
            "task:\n"
            "  --name NAME            shown by `manta list tasks`\n"
            "  --max-retries N        reruns when its worker dies (default 3)\n"
            "  --env K=V              extra environment variable (repeatable)\n"
            "  --unset-env NAME       remove NAME from the task's environment\n"
            "                         (repeatable; the grant's accelerator\n"
            "                         variables still apply)\n"
            "  --cwd DIR              working directory on the node (a relative\n"
            "                         DIR is taken from here)\n"
            "function tasks (instead of a program):\n"
            "  --function LIB:FN      run C function FN (MT_FUNCTION, manta/function.h)\n"
            "                         from LIB, e.g. libfoo.so:square; its result is\n"
            "                         written to stdout after its output\n"
            "  --arg VALUE            an argument, as bytes (repeatable)\n"
            "  --code-path DIR        a folder to find LIB in (repeatable)\n"
            "TPU slices (a gang: one program over every host of whole slices):\n"
            "  --tpu TYPE             reserve whole slices of this pod type\n"
            "                         (e.g. v4-16) and run PROGRAM as a gang\n"
            "  --topology T           the slice topology (default: the type's)\n"
            "  --slices K             K slices, multislice (default 1)\n"
            "  --launch host|device   one process per host (JAX; default) or\n"
            "                         one per chip (TorchTPU, PyTorch/XLA)\n"
            "  --max-restarts N       restart the whole gang up to N times when\n"
            "                         a member fails (default 0)\n"
            "                         Output lines are prefixed \"[rank R] \";\n"
            "                         the exit code is the gang's.\n"
            "output:\n"
            "  --no-wait              print the task id and exit at once\n"
            "  -v, --verbose          report state changes on stderr\n"
            "  -h, --help             this text\n"
            "\n"
            "examples:\n"
            "  manta submit -- hostname\n"
            "  manta submit --num-gpus 1 --env CUDA_CACHE=0 -- ./train --epochs 3\n"
            "  manta submit --label-selector 'zone in (a|b),!spot' -- ./job.sh\n"
            "  manta submit --tpu v4-16 --launch device -- python3 train.py\n"
            "  id=$(manta submit --no-wait --name nightly -- make test)\n",
            MT_DEFAULT_TEMP_DIR);
}

#define usage_error(...) mt_cli_usage_error("submit", usage, __VA_ARGS__)

/* ---- options ------------------------------------------------------------- */

/* A gang's flags (`--tpu`); pod_type NULL: not a gang. */
struct gang_flags {
    const char *pod_type, *topology;
    long slices, max_restarts;
    bool device;
};

struct submit_opts {
    const char *addr, *dir, *name;
    bool no_wait, verbose;
    bool cpu_defaulted;          /* CPU: 1 because none was asked for */
    const char *selector;        /* --label-selector, or NULL */
    const char *pg;              /* placement group id or NULL */
    bool spread;
    const char *affinity;        /* --node-affinity ID[:soft], or NULL */
    long bundle;                 /* -1: any bundle */
    const char *function;        /* function task "lib.so:fn", or NULL */
    const char **fargs;          /* --arg values, borrowed */
    size_t nfargs;
    size_t ncode;                /* --code-path folders given */
    struct mt_qty_list res;      /* fixed point, zeros included */
    char **argv;                 /* borrowed: the program and its arguments */
    int argc;
    struct gang_flags gang;
    mt_task_opts_t *task;        /* what goes to the head */
};

static void opts_release(struct submit_opts *o)
{
    free(o->fargs);
    mt_qty_list_release(&o->res);
    mt_task_opts_destroy(o->task);
}

enum { O_ADDR = 256, O_TMP, O_CPUS, O_GPUS, O_MEM, O_RES, O_SEL, O_PRIO,
       O_RETRY, O_NAME, O_ENV, O_CWD, O_SPREAD, O_NOWAIT, O_PG, O_BUNDLE,
       O_FUNC, O_ARG, O_CODE, O_TPU, O_TOPO, O_SLICES, O_LAUNCH,
       O_RESTARTS, O_UNSET, O_AFFINITY };

static const struct option long_opts[] = {
    {"address", required_argument, NULL, O_ADDR},
    {"temp-dir", required_argument, NULL, O_TMP},
    {"num-cpus", required_argument, NULL, O_CPUS},
    {"num-gpus", required_argument, NULL, O_GPUS},
    {"memory", required_argument, NULL, O_MEM},
    {"resources", required_argument, NULL, O_RES},
    {"label-selector", required_argument, NULL, O_SEL},
    {"priority", required_argument, NULL, O_PRIO},
    {"max-retries", required_argument, NULL, O_RETRY},
    {"name", required_argument, NULL, O_NAME},
    {"env", required_argument, NULL, O_ENV},
    {"unset-env", required_argument, NULL, O_UNSET},
    {"cwd", required_argument, NULL, O_CWD},
    {"spread", no_argument, NULL, O_SPREAD},
    {"node-affinity", required_argument, NULL, O_AFFINITY},
    {"placement-group", required_argument, NULL, O_PG},
    {"bundle", required_argument, NULL, O_BUNDLE},
    {"function", required_argument, NULL, O_FUNC},
    {"arg", required_argument, NULL, O_ARG},
    {"code-path", required_argument, NULL, O_CODE},
    {"no-wait", no_argument, NULL, O_NOWAIT},
    {"tpu", required_argument, NULL, O_TPU},
    {"topology", required_argument, NULL, O_TOPO},
    {"slices", required_argument, NULL, O_SLICES},
    {"launch", required_argument, NULL, O_LAUNCH},
    {"max-restarts", required_argument, NULL, O_RESTARTS},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* libmanta refused a value: its reason, as a usage error. */
static int refused(void)
{
    return usage_error("%s", mt_client_last_error(NULL));
}

/* ---- resources ----------------------------------------------------------- */

/* Flags that name a resource; resources JSON may not repeat them. */
struct res_flags {
    const char *cpus, *gpus, *memory, *json;
};

static int set_resource(struct submit_opts *o, const char *flag,
                        const char *name, int64_t q)
{
    if (mt_qty_list_get(&o->res, name) >= 0)
        return usage_error("%s is given by both --%s and --resources", name,
                           flag);
    mt_qty_list_set(&o->res, name, q);
    return 0;
}

/* Parse the resource flags into o->res. RET 0 or the exit code. */
static int parse_resources(struct submit_opts *o, const struct res_flags *f)
{
    char err[256] = "";
    int64_t q;
    uint64_t bytes;

    if (f->json && mt_qty_parse_json(f->json, &o->res, err, sizeof(err)) < 0)
        return usage_error("invalid --resources '%s': %s", f->json, err);
    if (f->cpus) {
        if (mt_qty_parse(f->cpus, &q) < 0)
            return usage_error("invalid --num-cpus '%s': expected a number "
                               ">= 0", f->cpus);
        if (set_resource(o, "num-cpus", "CPU", q))
            return MT_EXIT_USAGE;
    }
    if (f->gpus) {
        if (mt_qty_parse(f->gpus, &q) < 0 ||
            (q > MT_QTY_SCALE && q % MT_QTY_SCALE))
            return usage_error("invalid --num-gpus '%s': expected a fraction "
                               "below 1 or a whole number", f->gpus);
        if (set_resource(o, "num-gpus", "GPU", q))
            return MT_EXIT_USAGE;
    }
    if (f->memory) {
        if (mt_bytes_parse(f->memory, &bytes) < 0 ||
            bytes > (uint64_t)(INT64_MAX / MT_QTY_SCALE))
            return usage_error("invalid --memory '%s': expected bytes like "
                               "512MiB or 4GiB", f->memory);
        if (set_resource(o, "memory", "memory", (int64_t)bytes * MT_QTY_SCALE))
            return MT_EXIT_USAGE;
    }
    return 0;
}

/* The parsed resources into the task options, which hold 1 CPU unless
 * told otherwise (like Ray). RET 0 or the exit code. */
static int apply_resources(struct submit_opts *o)
{
    o->cpu_defaulted = mt_qty_list_get(&o->res, "CPU") < 0;
    for (size_t i = 0; i < o->res.n; i++)
        if (mt_task_opts_set_resource(o->task, o->res.v[i].name,
                                      (double)o->res.v[i].qty /
                                          MT_QTY_SCALE) < 0)
            return refused();
    return 0;
}

/* ---- the rest of the options --------------------------------------------- */

static int add_env(struct submit_opts *o, const char *kv)
{
    const char *eq = strchr(kv, '=');
    char *key;
    int rc;

    if (!eq || eq == kv)
        return usage_error("invalid --env '%s': expected KEY=VALUE", kv);
    key = mt_xstrndup(kv, (size_t)(eq - kv));
    rc = mt_task_opts_set_env(o->task, key, eq + 1);
    free(key);
    return rc < 0 ? usage_error("invalid --env '%s': expected KEY=VALUE",
                                kv)
                  : 0;
}

static int set_cwd(struct submit_opts *o, const char *dir)
{
    if (!*dir)
        return usage_error("--cwd needs a directory");
    if (mt_task_opts_set_cwd(o->task, dir) < 0)
        return usage_error("--cwd '%s': cannot resolve it: %s", dir,
                           mt_client_last_error(NULL));
    return 0;
}

static int add_code_path(struct submit_opts *o, const char *dir)
{
    char *abs = realpath(dir, NULL);
    int rc;

    if (!abs)
        return usage_error("invalid --code-path '%s': no such folder", dir);
    rc = mt_task_opts_add_code_path(o->task, abs);
    free(abs);
    o->ncode++;
    return rc < 0 ? refused() : 0;
}

/* The index of the first "--", or argc when there is none. */
static int find_dashdash(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0)
            return i;
    return argc;
}

/* The TPU slice (gang) flags. */
static int take_gang_opt(struct submit_opts *o, int c)
{
    struct gang_flags *g = &o->gang;

    switch (c) {
    case O_TPU:
        if (!*optarg || strlen(optarg) > 64)
            return usage_error("invalid --tpu '%s': expected a pod type such "
                               "as v4-16", optarg);
        g->pod_type = optarg;
        return 0;
    case O_TOPO:
        g->topology = optarg;
        return 0;
    case O_SLICES:
        if (!mt_parse_int(optarg, 1, 64, &g->slices))
            return usage_error("invalid --slices '%s': expected 1..64",
                               optarg);
        return 0;
    case O_LAUNCH:
        if (strcmp(optarg, "host") && strcmp(optarg, "device"))
            return usage_error("invalid --launch '%s': expected host or "
                               "device", optarg);
        g->device = strcmp(optarg, "device") == 0;
        return 0;
    default:
        if (!mt_parse_int(optarg, -1, INT32_MAX, &g->max_restarts))
            return usage_error("invalid --max-restarts '%s': expected a "
                               "whole number >= -1", optarg);
        return 0;
    }
}

/* Placement and task flags. */
static int take_task_opt(struct submit_opts *o, int c)
{
    long v;

    switch (c) {
    case O_NAME:
        o->name = optarg;
        return mt_task_opts_set_name(o->task, optarg) < 0 ? refused() : 0;
    case O_ENV:
        return add_env(o, optarg);
    case O_UNSET:
        if (!*optarg || mt_task_opts_unset_env(o->task, optarg) < 0)
            return usage_error("invalid --unset-env '%s': expected a "
                               "variable name", optarg);
        return 0;
    case O_CWD:
        return set_cwd(o, optarg);
    case O_SEL:
        if (o->selector)
            return usage_error("give --label-selector once (join "
                               "expressions with ',')");
        if (mt_task_opts_set_label_selector(o->task, optarg) < 0)
            return usage_error("invalid --label-selector '%s': %s", optarg,
                               mt_client_last_error(NULL));
        o->selector = optarg;
        return 0;
    case O_PRIO:
        if (!mt_parse_int(optarg, INT32_MIN, INT32_MAX, &v))
            return usage_error("invalid --priority '%s': expected a whole "
                               "number", optarg);
        return mt_task_opts_set_priority(o->task, (int32_t)v);
    default:
        if (!mt_parse_int(optarg, 0, INT32_MAX, &v))
            return usage_error("invalid --max-retries '%s': expected a whole "
                               "number >= 0", optarg);
        return mt_task_opts_set_max_retries(o->task, (int)v);
    }
}

/* One option from getopt. RET 0, -1 (printed help: exit 0) or the exit
 * code. */
static int take_opt(struct submit_opts *o, struct res_flags *rf, int c,
                    const char *bad)
{
    switch (c) {
    case O_ADDR: o->addr = optarg; return 0;
    case O_TMP: o->dir = optarg; return 0;
    case O_CPUS: rf->cpus = optarg; return 0;
    case O_GPUS: rf->gpus = optarg; return 0;
    case O_MEM: rf->memory = optarg; return 0;
    case O_RES: rf->json = optarg; return 0;
    case O_SPREAD: o->spread = true; return 0;
    case O_AFFINITY: o->affinity = optarg; return 0;
    case O_NOWAIT: o->no_wait = true; return 0;
    case 'v': o->verbose = true; return 0;
    case O_PG:
        if (!mt_cli_id_shaped(optarg))
            return usage_error("invalid --placement-group '%s': expected "
                               "its id (p and 15 hex digits)", optarg);
        o->pg = optarg;
        return 0;
    case O_BUNDLE:
        if (!mt_parse_int(optarg, -1, 1023, &o->bundle))
            return usage_error("invalid --bundle '%s': expected -1..1023",
                               optarg);
        return 0;
    case O_FUNC:
        if (!*optarg || strlen(optarg) > 512)
            return usage_error("invalid --function '%s': expected lib.so:name "
                               "or name", optarg);
        o->function = optarg;
        return 0;
    case O_ARG:
        o->fargs = mt_xrealloc(o->fargs, (o->nfargs + 1) * sizeof(*o->fargs));
        o->fargs[o->nfargs++] = optarg;
        return 0;
    case O_CODE: return add_code_path(o, optarg);
    case O_TPU: case O_TOPO: case O_SLICES: case O_LAUNCH: case O_RESTARTS:
        return take_gang_opt(o, c);
    case O_NAME: case O_ENV: case O_UNSET: case O_CWD: case O_SEL:
    case O_PRIO: case O_RETRY:
        return take_task_opt(o, c);
    case 'h':
        usage(stdout);
        return -1;
    default:
        return usage_error("unknown or incomplete option '%s'", bad);
    }
}

/* --node-affinity ID[:soft]. RET 0 or the exit code. */
static int apply_affinity(struct submit_opts *o)
{
    const char *colon = strchr(o->affinity, ':');
    size_t len = colon ? (size_t)(colon - o->affinity) : strlen(o->affinity);
    char id[128];

    if (o->spread || o->pg)
        return usage_error("--node-affinity goes without --spread and "
                           "--placement-group");
    if (len == 0 || len >= sizeof(id) || (colon && strcmp(colon, ":soft")))
        return usage_error("invalid --node-affinity '%s': expected a node "
                           "id, optionally followed by :soft", o->affinity);
    memcpy(id, o->affinity, len);
    id[len] = '\0';
    return mt_task_opts_set_node_affinity(o->task, id, colon != NULL) < 0
               ? refused()
               : 0;
}

/* Placement: a spread, a node, or a group and its bundle. RET 0 or the
 * exit code. */
static int apply_placement(struct submit_opts *o)
{
    mt_pg_t *pg;
    int rc;

    if (o->spread)
        mt_task_opts_set_strategy(o->task, MT_STRATEGY_SPREAD);
    if (o->affinity && (rc = apply_affinity(o)) != 0)
        return rc;
    if (!o->pg)
        return 0;
    if (mt_pg_from_id(o->pg, &pg) < 0)
        return refused();
    rc = mt_task_opts_set_placement_group(o->task, pg, (int)o->bundle);
    mt_pg_release(pg);
    return rc < 0 ? refused() : 0;
}

/* Gang flags need --tpu and a program; some task flags make no sense. */
static int check_gang(struct submit_opts *o)
{
    const struct gang_flags *g = &o->gang;

    if (!g->pod_type)
        return g->topology || g->slices || g->max_restarts || g->device
                   ? usage_error("--topology, --slices, --launch and "
                                 "--max-restarts go with --tpu")
                   : 0;
    if (o->function)
        return usage_error("--tpu runs a program, not --function");
    if (o->pg || o->spread || o->selector || o->affinity)
        return usage_error("--tpu places its members itself: no "
                           "--placement-group, --spread, --node-affinity or "
                           "--label-selector");
    if (mt_qty_list_get(&o->res, "TPU") >= 0)
        return usage_error("--tpu members get their slice's chips: do not "
                           "ask for TPU in --resources");
    if (o->cpu_defaulted) /* like Ray's run_on_slice: members take none */
        mt_task_opts_set_resource(o->task, "CPU", 0);
    return 0;
}

/* The program after "--", or --function; the head's address. */
static int check_command(struct submit_opts *o, int argc, char **argv,
                         int end)
{
    if (optind < end)
        return usage_error("unexpected argument '%s' (put the program after "
                           "--)", argv[optind]);
    if (o->function && end + 1 < argc)
        return usage_error("give --function or a program after --, not both");
    if (!o->function && (o->nfargs || o->ncode))
        return usage_error("--arg and --code-path go with --function");
    if (!o->function && end >= argc)
        return usage_error("missing -- before the program to run");
    if (!o->function && end + 1 >= argc)
        return usage_error("missing the program to run after --");
    if (o->addr && !mt_parse_host_port(o->addr))
        return usage_error("invalid --address '%s': expected HOST:PORT",
                           o->addr);
    o->argv = argv + (end < argc ? end + 1 : argc);
    o->argc = end < argc ? argc - end - 1 : 0;
    return 0;
}

/* Parse and check everything. RET 0, -1 (help shown) or the exit code. */
static int parse_opts(int argc, char **argv, struct submit_opts *o)
{
    struct res_flags rf = {0};
    int end = find_dashdash(argc, argv), c, rc;

    o->bundle = -1;
    if (mt_task_opts_create(&o->task) < 0 ||
        mt_task_opts_set_follow(o->task, false) < 0) {
        fprintf(stderr, "manta submit: out of memory\n");
        return 1;
    }
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(end, argv, "+hv", long_opts, NULL)) != -1) {
        rc = take_opt(o, &rf, c, argv[optind - 1]);
        if (rc)
            return rc;
    }
    if ((rc = check_command(o, argc, argv, end)) ||
        (rc = parse_resources(o, &rf)) || (rc = apply_resources(o)) ||
        (rc = apply_placement(o)))
        return rc;
    return check_gang(o);
}

/* ---- running it ---------------------------------------------------------- */

/* Submit the task, not to be followed by the client. RET 0, or 1 with the
 * reason printed. */
static int submit(mt_client_t *c, const struct submit_opts *o,
                  mt_task_t **t)
{
    const void **args = NULL;
    size_t *sizes = NULL;
    int rc;

    if (!o->function) {
        rc = mt_submit_command(c, (const char *const *)o->argv, o->task, t);
    } else {
        args = mt_xcalloc(o->nfargs + 1, sizeof(*args));
        sizes = mt_xcalloc(o->nfargs + 1, sizeof(*sizes));
        for (size_t i = 0; i < o->nfargs; i++) {
            args[i] = o->fargs[i];
            sizes[i] = strlen(o->fargs[i]);
        }
        rc = mt_submit_function(c, o->function, args, sizes, o->nfargs,
                                o->task, t);
        free(args);
        free(sizes);
    }
    if (rc < 0)
        fprintf(stderr, "manta submit: %s %s: %s\n",
                mt_cli_unreachable(rc) ? "cannot reach the head at"
                                       : "submit failed at",
                mt_client_address(c), mt_client_last_error(c));
    return rc < 0 ? 1 : 0;
}

static int run_task(mt_client_t *c, const struct submit_opts *o,
                    struct mt_cli_interrupt *it)
{
    mt_task_t *t;
    int rc = submit(c, o, &t);

    if (rc)
        return rc;
    if (o->no_wait) {
        printf("%s\n", mt_task_id(t));
    } else {
        if (o->verbose)
            fprintf(stderr, "manta: submitted task %s\n", mt_task_id(t));
        mt_cli_interrupt_set_id(it, mt_task_id(t));
        rc = mt_cli_follow(c, "submit", mt_task_id(t), o->verbose, it);
    }
    mt_task_release(t);
    return rc;
}

/* The gang's options, its members' task options included. */
static int gang_opts(const struct submit_opts *o, mt_gang_opts_t **out)
{
    const struct gang_flags *g = &o->gang;
    mt_gang_opts_t *go;

    if (mt_gang_opts_create(&go, g->pod_type) < 0)
        return refused();
    if (mt_gang_opts_set_launch(go, g->device ? MT_GANG_LAUNCH_DEVICE
                                              : MT_GANG_LAUNCH_HOST) < 0 ||
        mt_gang_opts_set_slices(go, g->slices ? (unsigned)g->slices : 1) <
            0 ||
        mt_gang_opts_set_topology(go, g->topology) < 0 ||
        mt_gang_opts_set_max_restarts(go, (int)g->max_restarts) < 0 ||
        mt_gang_opts_set_name(go, o->name) < 0 ||
        mt_gang_opts_set_task_opts(go, o->task) < 0) {
        mt_gang_opts_destroy(go);
        return refused();
    }
    *out = go;
    return 0;
}

static int run(const struct submit_opts *o)
{
    struct mt_cli_interrupt it;
    mt_gang_opts_t *go = NULL;
    bool ours = !o->no_wait; /* Ctrl-C cancels what we follow */
    mt_client_t *c;
    int rc;

    if (o->gang.pod_type && (rc = gang_opts(o, &go)))
        return rc;
    if (ours)
        mt_cli_interrupt_start(&it, o->gang.pod_type ? "gang" : "task");
    rc = mt_cli_connect("submit", o->addr, o->dir, MT_CLI_TIMEOUT_MS, &c);
    if (rc == 0 && go)
        rc = mt_cli_gang_run(c, go, (const char *const *)o->argv,
                             (size_t)o->argc, o->no_wait, o->verbose,
                             ours ? &it : NULL);
    else if (rc == 0)
        rc = run_task(c, o, ours ? &it : NULL);
    mt_client_disconnect(c);
    if (ours)
        mt_cli_interrupt_stop(&it);
    mt_gang_opts_destroy(go);
    return rc;
}

static int cmd_submit(int argc, char **argv)
{
    struct submit_opts o;
    int rc;

    memset(&o, 0, sizeof(o));
    rc = parse_opts(argc, argv, &o);
    if (rc == 0)
        rc = run(&o);
    opts_release(&o);
    return rc < 0 ? 0 : rc;
}

const struct mt_cli_command mt_cli_cmd_submit = {
    "submit", cmd_submit,
    "run a command as a task and relay its output"};
