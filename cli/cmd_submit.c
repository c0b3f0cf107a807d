/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_submit.c -- `manta submit ... -- PROGRAM ARGS...`: run a command task
 * on the cluster, relay its output and exit with its status.
 *
 * Every option is checked and turned into a TaskSpec before the head is
 * contacted, so a typo fails with a usage message (exit 2) and never leaves
 * a task behind. Then SubmitTask; with --no-wait the task id is printed and
 * we are done. Otherwise WatchTask(output) streams the task's state changes
 * and output: output goes to our fd 1 / fd 2 as it arrives, state changes go
 * to stderr with --verbose, and the final state decides the exit code:
 * FINISHED -> the task's exit code, FAILED -> 1 with one line, CANCELLED ->
 * 130. Ctrl-C sends CancelTask and keeps waiting for the end; a second
 * Ctrl-C leaves at once.
 *
 * DESIGN: one private loop runs the rpc engine and a SIGINT watcher; every
 * callback runs on it, so the watch state needs no locks.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/session.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/error.h"
#include "common/ids.h"
#include "common/qty.h"
#include "head_service.pb-c.h"
#include "proto/services.h"

#define SUBMIT_TIMEOUT_MS 4000
#define SEL_MAX_EXPRS 8     /* the scheduler's limits (sched/labels.h) */
#define SEL_MAX_VALUES 8
#define RES_MAX_KINDS 8     /* resource kinds in one task */
#define EXIT_CANCELLED 130

/* ---- usage --------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta submit [--address HOST:PORT | --temp-dir DIR] [options]\n"
            "                    -- PROGRAM [ARGS...]\n"
            "       manta submit [...] --function LIB.so:FN [--arg V]... [--code-path D]\n"
            "\n"
            "Run PROGRAM as a task on the cluster, relay its stdout and stderr,\n"
            "and exit with its exit code (1 if the task failed, 130 if it was\n"
            "cancelled). Ctrl-C cancels the task; a second Ctrl-C leaves at once.\n"
            "\n"
            "  --address HOST:PORT    the head (default: read from the session dir)\n"
            "  --temp-dir DIR         session dir holding head.addr (default %s)\n"
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

static int usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("manta submit: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    usage(stderr);
    return MT_EXIT_USAGE;
}

/* ---- label selectors ----------------------------------------------------- */

struct sel_expr {
    char *key;
    int op;       /* MANTA__LABEL_MATCH__OP__* */
    char **vals;
    size_t n;
    size_t cap;
};

struct selector {
    struct sel_expr *v;
    size_t n;
    size_t cap;
};

static void selector_release(struct selector *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].key);
        for (size_t j = 0; j < s->v[i].n; j++)
            free(s->v[i].vals[j]);
        free(s->v[i].vals);
    }
    free(s->v);
    memset(s, 0, sizeof(*s));
}

/* Label keys as `manta start --labels` accepts them. */
static bool key_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '/' ||
           c == '-';
}

static bool val_char(int c)
{
    return c && !strchr(",|()=! \t\r\n", c);
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static bool is_word(const char *p, const char *w)
{
    size_t n = strlen(w);

    return strncmp(p, w, n) == 0 && !key_char((unsigned char)p[n]);
}

/* Values separated by any char of seps; RET where parsing stopped or NULL. */
static const char *parse_values(const char *p, const char *seps,
                                struct sel_expr *e, char *err, size_t errlen)
{
    for (;;) {
        const char *v;

        p = skip_ws(p);
        v = p;
        while (val_char((unsigned char)*p))
            p++;
        if (p == v) {
            snprintf(err, errlen, "missing value %s'%s'", *p ? "before " : "",
                     *p ? p : "at the end");
            return NULL;
        }
        mt_xgrow((void **)&e->vals, &e->cap, e->n + 1, sizeof(*e->vals));
        e->vals[e->n++] = mt_xstrndup(v, (size_t)(p - v));
        p = skip_ws(p);
        if (!*p || !strchr(seps, *p))
            return p;
        p++;
    }
}

/* The operator after a key; RET where its operand starts, or NULL. */
static const char *parse_op(const char *p, struct sel_expr *e, bool *list)
{
    *list = false;
    if (p[0] == '!' && p[1] == '=') {
        e->op = MANTA__LABEL_MATCH__OP__OP_NE;
        return p + 2;
    }
    if (p[0] == '=') {
        e->op = MANTA__LABEL_MATCH__OP__OP_EQ;
        return p + (p[1] == '=' ? 2 : 1);
    }
    *list = true;
    if (is_word(p, "in")) {
        e->op = MANTA__LABEL_MATCH__OP__OP_IN;
        return p + 2;
    }
    if (is_word(p, "notin")) {
        e->op = MANTA__LABEL_MATCH__OP__OP_NOT_IN;
        return p + 5;
    }
    return NULL;
}

/* One expression; s is NUL-terminated. RET 0 or -MT_EINVAL. */
static int parse_expr(const char *s, struct sel_expr *e, char *err,
                      size_t errlen)
{
    const char *p = skip_ws(s), *k;
    bool neg = *p == '!', list;

    if (!*p) {
        snprintf(err, errlen, "empty expression (a stray ',')");
        return -MT_EINVAL;
    }
    if (neg)
        p = skip_ws(p + 1);
    for (k = p; key_char((unsigned char)*p); p++)
        ;
    if (p == k) {
        snprintf(err, errlen, "expected a label key in '%s'", s);
        return -MT_EINVAL;
    }
    e->key = mt_xstrndup(k, (size_t)(p - k));
    p = skip_ws(p);
    if (neg || !*p) {
        e->op = neg ? MANTA__LABEL_MATCH__OP__OP_NOT_EXISTS
                    : MANTA__LABEL_MATCH__OP__OP_EXISTS;
        if (!*p)
            return 0;
        snprintf(err, errlen, "'!%s' takes nothing after the key", e->key);
        return -MT_EINVAL;
    }
    p = parse_op(p, e, &list);
    if (!p) {
        snprintf(err, errlen, "expected =, !=, in (...) or notin (...) after "
                 "'%s' in '%s'", e->key, s);
        return -MT_EINVAL;
    }
    p = skip_ws(p);
    if (list && *p++ != '(') {
        snprintf(err, errlen, "expected '(' after in/notin in '%s'", s);
        return -MT_EINVAL;
    }
    p = parse_values(p, list ? "|," : "|", e, err, errlen);
    if (p && list && *p++ != ')') {
        snprintf(err, errlen, "expected ')' to close the list in '%s'", s);
        return -MT_EINVAL;
    }
    if (p && *skip_ws(p)) {
        snprintf(err, errlen, "unexpected '%s' in '%s'", skip_ws(p), s);
        return -MT_EINVAL;
    }
    if (!p)
        return -MT_EINVAL;
    if (!list && e->n > 1) /* key=a|b */
        e->op = e->op == MANTA__LABEL_MATCH__OP__OP_EQ
                    ? MANTA__LABEL_MATCH__OP__OP_IN
                    : MANTA__LABEL_MATCH__OP__OP_NOT_IN;
    return 0;
}

/*
 * selector_parse - comma-separated expressions; commas inside (...) belong
 * to the list, so Ray's `key in (a,b)` reads as well.
 * RET 0 or -MT_EINVAL (err says why)
 */
static int selector_parse(const char *text, struct selector *s, char *err,
                          size_t errlen)
{
    const char *p = text;

    if (!*skip_ws(p)) {
        snprintf(err, errlen, "empty selector");
        return -MT_EINVAL;
    }
    for (;;) {
        const char *q = p;
        int depth = 0, rc;
        char *item;

        for (; *q && (*q != ',' || depth > 0); q++)
            depth += (*q == '(') - (*q == ')');
        item = mt_xstrndup(p, (size_t)(q - p));
        mt_xgrow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v));
        memset(&s->v[s->n], 0, sizeof(s->v[0]));
        rc = parse_expr(item, &s->v[s->n++], err, errlen);
        free(item);
        if (rc < 0)
            return rc;
        if (s->v[s->n - 1].n > SEL_MAX_VALUES) {
            snprintf(err, errlen, "at most %d values in one list",
                     SEL_MAX_VALUES);
            return -MT_EINVAL;
        }
        if (!*q)
            return 0;
        if (s->n == SEL_MAX_EXPRS) {
            snprintf(err, errlen, "at most %d expressions", SEL_MAX_EXPRS);
            return -MT_EINVAL;
        }
        p = q + 1;
    }
}

/* ---- options ------------------------------------------------------------- */

struct submit_opts {
    const char *addr, *dir;
    const char *name, *cwd;
    bool spread, no_wait, verbose;
    bool cpu_defaulted;          /* CPU: 1 because none was asked for */
    const char *pg;              /* placement group id or NULL */
    const char *function;        /* function task "lib.so:fn", or NULL */
    const char **fargs;          /* --arg values, borrowed */
    size_t nfargs;
    char **code_path;            /* --code-path dirs, owned (absolute) */
    size_t ncode;
    long bundle;                 /* -1: any bundle */
    long priority;
    long max_retries;            /* -1: the head's default */
    struct mt_qty_list res;      /* fixed point, zeros included */
    struct mt_kv_list env;
    char **unset;                /* --unset-env names, borrowed from argv */
    size_t nunset, capunset;
    struct selector sel;
    char *abs_cwd;               /* owned when cwd was relative */
    char **argv;                 /* borrowed: the program and its arguments */
    int argc;
    struct mt_cli_gang_opts gang; /* gang.pod_type NULL: not a gang */
};

static void opts_release(struct submit_opts *o)
{
    for (size_t i = 0; i < o->ncode; i++)
        free(o->code_path[i]);
    free(o->code_path);
    free(o->fargs);
    mt_qty_list_release(&o->res);
    mt_kv_list_release(&o->env);
    free(o->unset);
    selector_release(&o->sel);
    free(o->abs_cwd);
}

enum { O_ADDR = 256, O_TMP, O_CPUS, O_GPUS, O_MEM, O_RES, O_SEL, O_PRIO,
       O_RETRY, O_NAME, O_ENV, O_CWD, O_SPREAD, O_NOWAIT, O_PG, O_BUNDLE,
       O_FUNC, O_ARG, O_CODE, O_TPU, O_TOPO, O_SLICES, O_LAUNCH,
       O_RESTARTS, O_UNSET };

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

static int check_resources(struct submit_opts *o, const struct res_flags *f)
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
    /* Like Ray, a task takes 1 CPU unless it says otherwise. */
    if (mt_qty_list_get(&o->res, "CPU") < 0) {
        mt_qty_list_set(&o->res, "CPU", MT_QTY_SCALE);
        o->cpu_defaulted = true;
    }
    if (o->res.n > RES_MAX_KINDS)
        return usage_error("at most %d kinds of resources in one task",
                           RES_MAX_KINDS);
    for (size_t i = 0; i < o->res.n; i++)
        if (!mt_qty_valid_name(o->res.v[i].name))
            return usage_error("invalid resource name '%s': use up to 128 of "
                               "A-Z a-z 0-9 . _ - / :", o->res.v[i].name);
    return 0;
}

static int add_env(struct submit_opts *o, const char *kv)
{
    const char *eq = strchr(kv, '=');
    char *key;

    if (!eq || eq == kv)
        return usage_error("invalid --env '%s': expected KEY=VALUE", kv);
    key = mt_xstrndup(kv, (size_t)(eq - kv));
    mt_kv_list_set(&o->env, key, eq + 1);
    free(key);
    return 0;
}

static int add_unset(struct submit_opts *o, char *name)
{
    if (!*name || strchr(name, '='))
        return usage_error("invalid --unset-env '%s': expected a variable "
                           "name", name);
    mt_xgrow((void **)&o->unset, &o->capunset, o->nunset + 2,
             sizeof(*o->unset));
    o->unset[o->nunset++] = name;
    return 0;
}

static int set_cwd(struct submit_opts *o, const char *dir)
{
    char here[PATH_MAX];

    if (!*dir)
        return usage_error("--cwd needs a directory");
    o->cwd = dir;
    if (dir[0] == '/')
        return 0;
    if (!getcwd(here, sizeof(here)))
        return usage_error("--cwd '%s': cannot resolve it: %s", dir,
                           strerror(errno));
    o->abs_cwd = mt_xasprintf("%s/%s", here, dir);
    o->cwd = o->abs_cwd;
    return 0;
}

/* The index of the first "--", or argc when there is none. */
static int find_dashdash(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0)
            return i;
    return argc;
}

/* One option from getopt; RET 0, -1 (printed help: exit 0) or the exit code. */
/* The TPU slice (gang) flags. */
static int take_gang_opt(struct submit_opts *o, int c)
{
    struct mt_cli_gang_opts *g = &o->gang;
    long v;

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
        if (!mt_parse_int(optarg, 1, 64, &v))
            return usage_error("invalid --slices '%s': expected 1..64",
                               optarg);
        g->slices = (uint32_t)v;
        return 0;
    case O_LAUNCH:
        if (strcmp(optarg, "host") && strcmp(optarg, "device"))
            return usage_error("invalid --launch '%s': expected host or "
                               "device", optarg);
        g->device = strcmp(optarg, "device") == 0;
        return 0;
    default:
        if (!mt_parse_int(optarg, -1, INT32_MAX, &v))
            return usage_error("invalid --max-restarts '%s': expected a "
                               "whole number >= -1", optarg);
        g->max_restarts = (int32_t)v;
        return 0;
    }
}

/* Gang flags need --tpu and a program; some task flags make no sense. */
static int check_gang(struct submit_opts *o, bool any_gang_flag)
{
    if (!o->gang.pod_type)
        return any_gang_flag ? usage_error("--topology, --slices, --launch "
                                           "and --max-restarts go with --tpu")
                             : 0;
    if (o->function)
        return usage_error("--tpu runs a program, not --function");
    if (o->pg || o->spread || o->sel.n)
        return usage_error("--tpu places its members itself: no "
                           "--placement-group, --spread or --label-selector");
    if (mt_qty_list_get(&o->res, "TPU") >= 0)
        return usage_error("--tpu members get their slice's chips: do not "
                           "ask for TPU in --resources");
    if (o->cpu_defaulted) /* like Ray's run_on_slice: members take none */
        mt_qty_list_set(&o->res, "CPU", 0);
    if (!o->gang.slices)
        o->gang.slices = 1;
    o->gang.name = o->name;
    o->gang.no_wait = o->no_wait;
    o->gang.verbose = o->verbose;
    return 0;
}

static int take_opt(struct submit_opts *o, struct res_flags *rf, int c,
                    const char *bad)
{
    char err[256] = "";

    switch (c) {
    case O_ADDR: o->addr = optarg; return 0;
    case O_TMP: o->dir = optarg; return 0;
    case O_CPUS: rf->cpus = optarg; return 0;
    case O_GPUS: rf->gpus = optarg; return 0;
    case O_MEM: rf->memory = optarg; return 0;
    case O_RES: rf->json = optarg; return 0;
    case O_NAME: o->name = optarg; return 0;
    case O_ENV: return add_env(o, optarg);
    case O_UNSET: return add_unset(o, optarg);
    case O_CWD: return set_cwd(o, optarg);
    case O_SPREAD: o->spread = true; return 0;
    case O_PG:
        if (strlen(optarg) != 16 || strspn(optarg, "0123456789abcdef") != 16)
            return usage_error("invalid --placement-group '%s': expected the "
                               "16-digit id", optarg);
        o->pg = optarg;
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
    case O_CODE: {
        char *abs = realpath(optarg, NULL);
        if (!abs)
            return usage_error("invalid --code-path '%s': no such folder",
                               optarg);
        o->code_path = mt_xrealloc(o->code_path,
                                   (o->ncode + 1) * sizeof(*o->code_path));
        o->code_path[o->ncode++] = abs;
        return 0;
    }
    case O_BUNDLE:
        if (!mt_parse_int(optarg, -1, 1023, &o->bundle))
            return usage_error("invalid --bundle '%s': expected -1..1023",
                               optarg);
        return 0;
    case O_NOWAIT: o->no_wait = true; return 0;
    case O_TPU:
    case O_TOPO:
    case O_SLICES:
    case O_LAUNCH:
    case O_RESTARTS:
        return take_gang_opt(o, c);
    case 'v': o->verbose = true; return 0;
    case O_SEL:
        if (o->sel.n)
            return usage_error("give --label-selector once (join "
                               "expressions with ',')");
        if (selector_parse(optarg, &o->sel, err, sizeof(err)) < 0)
            return usage_error("invalid --label-selector '%s': %s", optarg,
                               err);
        return 0;
    case O_PRIO:
        if (!mt_parse_int(optarg, INT32_MIN, INT32_MAX, &o->priority))
            return usage_error("invalid --priority '%s': expected a whole "
                               "number", optarg);
        return 0;
    case O_RETRY:
        if (!mt_parse_int(optarg, 0, INT32_MAX, &o->max_retries))
            return usage_error("invalid --max-retries '%s': expected a whole "
                               "number >= 0", optarg);
        return 0;
    case 'h':
        usage(stdout);
        return -1;
    default:
        return usage_error("unknown or incomplete option '%s'", bad);
    }
}

/* Parse and check everything. RET 0, -1 (help shown) or the exit code. */
static int parse_opts(int argc, char **argv, struct submit_opts *o)
{
    struct res_flags rf = {0};
    int end = find_dashdash(argc, argv), c, rc;

    o->max_retries = -1;
    o->bundle = -1;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(end, argv, "+hv", long_opts, NULL)) != -1) {
        rc = take_opt(o, &rf, c, argv[optind - 1]);
        if (rc)
            return rc;
    }
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
    if (o->addr && o->dir)
        return usage_error("give --address or --temp-dir, not both");
    if (o->addr && !mt_parse_host_port(o->addr))
        return usage_error("invalid --address '%s': expected HOST:PORT",
                           o->addr);
    o->argv = argv + (end < argc ? end + 1 : argc);
    o->argc = end < argc ? argc - end - 1 : 0;
    if ((rc = check_resources(o, &rf)))
        return rc;
    return check_gang(o, o->gang.topology || o->gang.slices ||
                             o->gang.max_restarts || o->gang.device);
}

/* ---- the task spec ------------------------------------------------------- */

/*
 * Storage behind a TaskSpec built from the options: the protobuf structs
 * point into these arrays and into the options (borrowed strings).
 */
struct spec_buf {
    Manta__TaskSpec spec;
    Manta__ResourceEntry *res;
    Manta__ResourceEntry **res_p;
    Manta__Label *env;
    Manta__Label **env_p;
    Manta__LabelMatch *sel;
    Manta__LabelMatch **sel_p;
    ProtobufCBinaryData *args;
};

static void spec_build(struct spec_buf *b, const struct submit_opts *o)
{
    Manta__TaskSpec *s = &b->spec;
    size_t nres = o->res.n, nenv = o->env.n, nsel = o->sel.n;

    memset(b, 0, sizeof(*b));
    manta__task_spec__init(s);
    s->kind = MANTA__TASK_KIND__TASK_KIND_COMMAND;
    s->name = (char *)(o->name ? o->name : "");
    s->argv = o->argv;
    s->n_argv = (size_t)o->argc;
    s->cwd = (char *)(o->cwd ? o->cwd : "");
    s->priority = (int32_t)o->priority;
    s->max_retries = (int32_t)o->max_retries;
    s->strategy = o->spread ? MANTA__SCHEDULING_STRATEGY__STRATEGY_SPREAD
                            : MANTA__SCHEDULING_STRATEGY__STRATEGY_DEFAULT;
    if (o->pg) {
        s->strategy = MANTA__SCHEDULING_STRATEGY__STRATEGY_PLACEMENT_GROUP;
        s->placement_group_id = (char *)o->pg;
        s->bundle_index = (int32_t)o->bundle;
    }
    b->res = mt_xcalloc(nres + 1, sizeof(*b->res));
    b->res_p = mt_xcalloc(nres + 1, sizeof(*b->res_p));
    for (size_t i = 0; i < nres; i++) {
        manta__resource_entry__init(&b->res[i]);
        b->res[i].name = o->res.v[i].name;
        b->res[i].quantity = o->res.v[i].qty;
        b->res_p[i] = &b->res[i];
    }
    s->resources = b->res_p;
    s->n_resources = nres;
    b->env = mt_xcalloc(nenv + 1, sizeof(*b->env));
    b->env_p = mt_xcalloc(nenv + 1, sizeof(*b->env_p));
    for (size_t i = 0; i < nenv; i++) {
        manta__label__init(&b->env[i]);
        b->env[i].key = o->env.v[i].key;
        b->env[i].value = o->env.v[i].value;
        b->env_p[i] = &b->env[i];
    }
    s->env = b->env_p;
    s->n_env = nenv;
    s->env_unset = o->unset;
    s->n_env_unset = o->nunset;
    b->sel = mt_xcalloc(nsel + 1, sizeof(*b->sel));
    b->sel_p = mt_xcalloc(nsel + 1, sizeof(*b->sel_p));
    for (size_t i = 0; i < nsel; i++) {
        manta__label_match__init(&b->sel[i]);
        b->sel[i].key = o->sel.v[i].key;
        b->sel[i].op = (Manta__LabelMatch__Op)o->sel.v[i].op;
        b->sel[i].values = o->sel.v[i].vals;
        b->sel[i].n_values = o->sel.v[i].n;
        b->sel_p[i] = &b->sel[i];
    }
    s->label_selector = b->sel_p;
    s->n_label_selector = nsel;
    if (o->function) {
        s->kind = MANTA__TASK_KIND__TASK_KIND_FUNCTION;
        s->function = (char *)o->function;
        b->args = mt_xcalloc(o->nfargs + 1, sizeof(*b->args));
        for (size_t i = 0; i < o->nfargs; i++) {
            b->args[i].data = (uint8_t *)o->fargs[i];
            b->args[i].len = strlen(o->fargs[i]);
        }
        s->args = b->args;
        s->n_args = o->nfargs;
        s->code_path = o->code_path;
        s->n_code_path = o->ncode;
    }
}

static void spec_release(struct spec_buf *b)
{
    free(b->res);
    free(b->res_p);
    free(b->env);
    free(b->env_p);
    free(b->sel);
    free(b->sel_p);
    free(b->args);
}

/* ---- watching ------------------------------------------------------------ */

/* What we know of the task while following it. Guarded by: the loop. */
struct watch {
    struct mt_cli_conn *conn;
    const char *cmd;             /* "submit" or "logs", for messages */
    const char *task_id;         /* borrowed */
    bool verbose;
    bool done;                   /* the watch stream ended */
    int state;                   /* last state seen (TaskState) */
    uint32_t attempt;
    char *node_id;               /* owned */
    char *note;                  /* owned: last non-final error shown */
    int exit_code;
    char *error;                 /* owned: final error text */
    char stream_err[256];        /* why the stream ended early */
    bool out_closed[3];          /* stdout/stderr gone (EPIPE) */
    int sigints;                 /* Ctrl-Cs so far */
    bool cancel_sent;
    uv_signal_t sigint;
};

static bool final_state(int st)
{
    return st == MANTA__TASK_STATE__TASK_STATE_FINISHED ||
           st == MANTA__TASK_STATE__TASK_STATE_FAILED ||
           st == MANTA__TASK_STATE__TASK_STATE_CANCELLED;
}

static void relay(struct watch *w, unsigned fd, const uint8_t *p, size_t n)
{
    fd = fd == 2 ? 2 : 1;
    while (n && !w->out_closed[fd]) {
        ssize_t k = write((int)fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            w->out_closed[fd] = true; /* a closed pipe: drop the rest */
            break;
        }
        p += k;
        n -= (size_t)k;
    }
}

static void set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = s && *s ? mt_xstrdup(s) : NULL;
}

/*
 * Report what happened on stderr. With -v every state change; without, only
 * why a live task is stuck (the head's note, e.g. "infeasible: ..."), since
 * a task that never starts must not look like a hang. Retries are -v only.
 */
static void show_state(struct watch *w, const Manta__TaskEvent *ev)
{
    bool changed = (int)ev->state != w->state || ev->attempt != w->attempt;
    bool retry = ev->attempt > w->attempt;
    bool note = !final_state(ev->state) && *ev->error &&
                (!w->note || strcmp(w->note, ev->error));
    const char *id = w->task_id, *node = *ev->node_id ? ev->node_id : "?";

    if (retry && w->verbose)
        fprintf(stderr, "manta: task %s retrying (attempt %u): %s\n", id,
                ev->attempt + 1, *ev->error ? ev->error : "");
    else if (note && (w->verbose || !retry))
        fprintf(stderr, "manta: task %s is %s: %s\n", id,
                ev->state == MANTA__TASK_STATE__TASK_STATE_PENDING
                    ? "pending" : mt_cli_task_state_name(ev->state),
                ev->error);
    if (note)
        set_str(&w->note, ev->error);
    if (!w->verbose || !changed)
        return;
    if (ev->state == MANTA__TASK_STATE__TASK_STATE_RUNNING)
        fprintf(stderr, "manta: task %s running on node %s\n", id, node);
    else if (final_state(ev->state) && *ev->node_id &&
             w->state != MANTA__TASK_STATE__TASK_STATE_RUNNING)
        /* It ran before the watch opened: still say where. */
        fprintf(stderr, "manta: task %s ran on node %s\n", id, node);
    else if (ev->state == MANTA__TASK_STATE__TASK_STATE_SCHEDULED)
        fprintf(stderr, "manta: task %s scheduled on node %s\n", id, node);
    else if (ev->state == MANTA__TASK_STATE__TASK_STATE_PENDING)
        fprintf(stderr, "manta: task %s pending\n", id);
    else if (ev->state == MANTA__TASK_STATE__TASK_STATE_WAITING_FOR_ARGS)
        fprintf(stderr, "manta: task %s waiting for its arguments\n", id);
}

/* A result kept as an object (a command task's reported result): its id
 * on stderr, so stdout stays the task's own output. */
static void show_result_object(const struct watch *w, uint64_t size)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1];
    mt_object_id id;

    if (w->task_id && mt_object_id_for_task(w->task_id, &id) == 0)
        fprintf(stderr, "manta: task %s result: object %s (%llu bytes)\n",
                w->task_id, mt_object_id_hex(&id, hex),
                (unsigned long long)size);
}

static void on_event(void *arg, const ProtobufCMessage *msg)
{
    struct watch *w = arg;
    const Manta__TaskEvent *ev = (const Manta__TaskEvent *)msg;

    if (ev->output.len)
        relay(w, ev->fd, ev->output.data, ev->output.len);
    if (ev->state == MANTA__TASK_STATE__TASK_STATE_UNSPECIFIED ||
        final_state(w->state))
        return;
    show_state(w, ev);
    w->state = ev->state;
    w->attempt = ev->attempt;
    if (*ev->node_id)
        set_str(&w->node_id, ev->node_id);
    if (final_state(ev->state)) {
        w->exit_code = ev->exit_code;
        set_str(&w->error, ev->error);
        /* A function task's result goes to stdout after its output. */
        if (ev->result.len)
            relay(w, 1, ev->result.data, ev->result.len);
        if (ev->result_in_store)
            show_result_object(w, ev->result_size);
    }
}

static void on_watch_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct watch *w = arg;

    w->done = true;
    if (st->code)
        snprintf(w->stream_err, sizeof(w->stream_err), "%s%s%s",
                 mt_rpc_status_name(st->code), *st->message ? ": " : "",
                 st->message);
    else
        snprintf(w->stream_err, sizeof(w->stream_err), "%s",
                 "the head closed the watch before the task ended");
}

static void on_cancel_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    struct watch *w = arg;

    if (st->code && !w->done)
        fprintf(stderr, "manta: could not cancel task %s: %s%s%s\n",
                w->task_id, mt_rpc_status_name(st->code),
                *st->message ? ": " : "", st->message);
}

static void send_cancel(struct watch *w)
{
    Manta__CancelTaskRequest req = MANTA__CANCEL_TASK_REQUEST__INIT;

    if (w->cancel_sent || !w->task_id)
        return;
    w->cancel_sent = true;
    req.task_id = (char *)w->task_id;
    fprintf(stderr, "manta: cancelling task %s (Ctrl-C again to leave now)\n",
            w->task_id);
    if (mt_rpc_unary(w->conn->ch, &mt_head_cancel_task, &req.base,
                     SUBMIT_TIMEOUT_MS, 0, on_cancel_done, w) < 0)
        fprintf(stderr, "manta: could not cancel task %s\n", w->task_id);
}

static void on_sigint(uv_signal_t *h, int signum)
{
    struct watch *w = h->data;

    if (++w->sigints > 1) {
        fprintf(stderr, "manta: leaving; task %s may still be running\n",
                w->task_id ? w->task_id : "(not submitted yet)");
        _exit(EXIT_CANCELLED);
    }
    send_cancel(w);
}

/* The exit code for how the task ended, with its one line on stderr. */
static int final_exit(const struct watch *w)
{
    switch (w->state) {
    case MANTA__TASK_STATE__TASK_STATE_FINISHED:
        if (w->verbose)
            fprintf(stderr, "manta: task %s finished with exit code %d\n",
                    w->task_id, w->exit_code);
        return w->exit_code >= 0 && w->exit_code <= 255 ? w->exit_code : 1;
    case MANTA__TASK_STATE__TASK_STATE_FAILED:
        fprintf(stderr, "manta %s: task failed: %s\n", w->cmd,
                w->error ? w->error : "no reason given");
        return 1;
    case MANTA__TASK_STATE__TASK_STATE_CANCELLED:
        fprintf(stderr, "manta %s: task %s cancelled%s%s\n", w->cmd,
                w->task_id, w->error ? ": " : "", w->error ? w->error : "");
        return EXIT_CANCELLED;
    default:
        fprintf(stderr, "manta %s: lost track of task %s: %s\n", w->cmd,
                w->task_id, w->stream_err);
        return 1;
    }
}

/* Follow the task to its end. RET the exit code. */
static int watch_task(struct watch *w)
{
    Manta__WatchTaskRequest req = MANTA__WATCH_TASK_REQUEST__INIT;
    int rc;

    req.task_id = (char *)w->task_id;
    req.output = true;
    rc = mt_rpc_stream_open(w->conn->ch, &mt_head_watch_task, &req.base, 0, 0,
                            on_event, on_watch_done, w, NULL);
    if (rc < 0) {
        fprintf(stderr, "manta %s: cannot watch task %s: %s\n", w->cmd,
                w->task_id, mt_strerror(rc));
        return 1;
    }
    if (w->sigints)
        send_cancel(w); /* Ctrl-C while submitting */
    while (!w->done)
        uv_run(&w->conn->loop, UV_RUN_ONCE);
    return final_exit(w);
}

/* ---- command ------------------------------------------------------------- */

/* SubmitTask. OUT id owned. RET 0 or 1 (reason printed). */
static int submit(struct mt_cli_conn *c, const char *addr,
                  const struct submit_opts *o, char **id)
{
    Manta__SubmitTaskRequest req = MANTA__SUBMIT_TASK_REQUEST__INIT;
    Manta__SubmitTaskReply *r;
    struct spec_buf b;
    ProtobufCMessage *resp = NULL;
    char err[512] = "";
    int rc;

    spec_build(&b, o);
    req.spec = &b.spec;
    rc = mt_rpc_unary_sync(c->ch, &mt_head_submit_task, &req.base,
                           SUBMIT_TIMEOUT_MS, 0, &resp, err, sizeof(err));
    spec_release(&b);
    r = (Manta__SubmitTaskReply *)resp;
    if (rc == 0 && (!r || !*r->task_id)) {
        rc = -MT_EPROTO;
        snprintf(err, sizeof(err), "the head returned no task id");
    }
    if (rc < 0) {
        mt_cli_one_line(err);
        fprintf(stderr, "manta submit: %s %s: %s\n",
                rc == -MT_EUNAVAIL || rc == -MT_ETIMEDOUT
                    ? "cannot reach the head at" : "submit failed at",
                addr, err);
        if (r)
            manta__submit_task_reply__free_unpacked(r, NULL);
        return 1;
    }
    *id = mt_xstrdup(r->task_id);
    manta__submit_task_reply__free_unpacked(r, NULL);
    return 0;
}

static int run(const struct submit_opts *o, const char *addr)
{
    struct mt_cli_conn conn;
    struct watch w;
    char *id = NULL;
    int rc = mt_cli_conn_open(&conn, addr);

    if (rc < 0) {
        fprintf(stderr, "manta submit: cannot reach the head at %s: %s\n",
                addr, mt_strerror(rc));
        return 1;
    }
    memset(&w, 0, sizeof(w));
    w.conn = &conn;
    w.cmd = "submit";
    w.verbose = o->verbose;
    uv_signal_init(&conn.loop, &w.sigint);
    w.sigint.data = &w;
    if (!o->no_wait)
        uv_signal_start(&w.sigint, on_sigint, SIGINT);
    if (o->gang.pod_type) {
        struct spec_buf b;

        uv_close((uv_handle_t *)&w.sigint, NULL);
        spec_build(&b, o);
        rc = mt_cli_gang_run(&conn, addr, &b.spec, &o->gang);
        spec_release(&b);
        mt_cli_conn_close(&conn);
        return rc;
    }
    rc = submit(&conn, addr, o, &id);
    if (rc == 0 && o->no_wait) {
        printf("%s\n", id);
    } else if (rc == 0) {
        w.task_id = id;
        if (w.verbose)
            fprintf(stderr, "manta: submitted task %s\n", id);
        rc = watch_task(&w);
    }
    uv_close((uv_handle_t *)&w.sigint, NULL);
    uv_run(&conn.loop, UV_RUN_NOWAIT);
    mt_cli_conn_close(&conn);
    free(w.node_id);
    free(w.note);
    free(w.error);
    free(id);
    return rc;
}

int mt_cmd_submit(int argc, char **argv)
{
    struct submit_opts o;
    char *addr = NULL;
    int rc;

    memset(&o, 0, sizeof(o));
    rc = parse_opts(argc, argv, &o);
    if (rc == 0)
        rc = mt_cli_head_addr("submit", o.addr, o.dir, &addr);
    if (rc == 0)
        rc = run(&o, addr);
    free(addr);
    opts_release(&o);
    return rc < 0 ? 0 : rc;
}

/* ---- manta logs / manta cancel --------------------------------------------- */

static void task_cmd_usage(FILE *f, const char *cmd)
{
    if (strcmp(cmd, "logs") == 0)
        fprintf(f,
                "usage: manta logs TASK_ID [--address HOST:PORT | --temp-dir DIR] [-v]\n"
                "\n"
                "Print a task's output (the head keeps its last 1 MiB) and, while it\n"
                "runs, follow it to the end; exit with the task's exit code, as\n"
                "`manta submit` does. Ctrl-C stops following; the task goes on.\n");
    else
        fprintf(f,
                "usage: manta cancel TASK_ID [--force] [--address HOST:PORT | --temp-dir DIR]\n"
                "\n"
                "Cancel a task: a pending one at once, a running one with SIGTERM to\n"
                "its process group (SIGKILL with --force, or after 5 s).\n");
}

/* Parse `manta logs|cancel TASK_ID ...`. RET 0, -1 (help shown) or 2. */
static int task_cmd_parse(int argc, char **argv, const char *cmd,
                          char **head, const char **id, bool *flag)
{
    static const struct option opts[] = {
        {"address", required_argument, NULL, 'a'},
        {"temp-dir", required_argument, NULL, 't'},
        {"force", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *addr = NULL, *dir = NULL;
    int c, rc;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hv", opts, NULL)) != -1) {
        if (c == 'a') {
            addr = optarg;
        } else if (c == 't') {
            dir = optarg;
        } else if ((c == 'f' && strcmp(cmd, "cancel") == 0) ||
                   (c == 'v' && strcmp(cmd, "logs") == 0)) {
            *flag = true;
        } else if (c == 'h') {
            task_cmd_usage(stdout, cmd);
            return -1;
        } else {
            fprintf(stderr, "manta %s: unknown or incomplete option '%s'\n",
                    cmd, argv[optind - 1]);
            task_cmd_usage(stderr, cmd);
            return MT_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc || strlen(argv[optind]) != 16 ||
        strspn(argv[optind], "0123456789abcdef") != 16) {
        fprintf(stderr, "manta %s: expected one task id (16 hex digits)\n",
                cmd);
        task_cmd_usage(stderr, cmd);
        return MT_EXIT_USAGE;
    }
    *id = argv[optind];
    rc = mt_cli_head_addr(cmd, addr, dir, head);
    if (rc == MT_EXIT_USAGE)
        task_cmd_usage(stderr, cmd);
    return rc;
}

int mt_cmd_logs(int argc, char **argv)
{
    struct mt_cli_conn conn;
    struct watch w;
    const char *id = NULL;
    char *head = NULL;
    bool verbose = false;
    int rc = task_cmd_parse(argc, argv, "logs", &head, &id, &verbose);

    if (rc)
        return rc < 0 ? 0 : rc;
    rc = mt_cli_conn_open(&conn, head);
    if (rc < 0) {
        fprintf(stderr, "manta logs: cannot reach the head at %s: %s\n",
                head, mt_strerror(rc));
        free(head);
        return 1;
    }
    memset(&w, 0, sizeof(w));
    w.conn = &conn;
    w.cmd = "logs";
    w.task_id = id;
    w.verbose = verbose;
    /* No SIGINT handler: Ctrl-C ends `manta logs`, not the task. */
    uv_signal_init(&conn.loop, &w.sigint);
    rc = watch_task(&w);
    uv_close((uv_handle_t *)&w.sigint, NULL);
    uv_run(&conn.loop, UV_RUN_NOWAIT);
    mt_cli_conn_close(&conn);
    free(w.node_id);
    free(w.note);
    free(w.error);
    free(head);
    return rc;
}

int mt_cmd_cancel(int argc, char **argv)
{
    Manta__CancelTaskRequest req = MANTA__CANCEL_TASK_REQUEST__INIT;
    struct mt_cli_conn conn;
    ProtobufCMessage *resp = NULL;
    const char *id = NULL;
    char *head = NULL, err[512] = "";
    bool force = false;
    int rc = task_cmd_parse(argc, argv, "cancel", &head, &id, &force);

    if (rc)
        return rc < 0 ? 0 : rc;
    rc = mt_cli_conn_open(&conn, head);
    if (rc == 0) {
        req.task_id = (char *)id;
        req.force = force;
        rc = mt_rpc_unary_sync(conn.ch, &mt_head_cancel_task, &req.base,
                               SUBMIT_TIMEOUT_MS, 0, &resp, err, sizeof(err));
        mt_cli_conn_close(&conn);
    } else {
        snprintf(err, sizeof(err), "%s", mt_strerror(rc));
    }
    if (rc < 0) {
        mt_cli_one_line(err);
        fprintf(stderr, "manta cancel: %s\n", err);
        free(head);
        return 1;
    }
    printf("Task %s: %s\n", id,
           mt_cli_task_state_name(((Manta__CancelTaskReply *)resp)->state));
    protobuf_c_message_free_unpacked(resp, NULL);
    free(head);
    return 0;
}
