/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_pg.c -- `manta placement-group create|wait|remove`: reserve bundles
 * of resources atomically, wait for the reservation, give it back, through
 * libmanta (manta/pg.h; a group named by id with mt_pg_from_id). Tasks
 * then run inside with `manta submit --placement-group ID`.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/commands.h"
#include "cli/conn.h"
#include "cli/session.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/qty.h"

#define PG_TIMEOUT_MS 5000
#define MAX_BUNDLES 1024

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta placement-group create --bundles JSON [--strategy S]\n"
            "                                  [--name NAME] [--wait SECONDS]\n"
            "       manta placement-group create --tpu TYPE [--slices K]\n"
            "                                  [--name NAME] [--wait SECONDS]\n"
            "       manta placement-group wait ID [--timeout SECONDS]\n"
            "       manta placement-group remove ID\n"
            "  (each also takes --address HOST:PORT or --temp-dir DIR)\n"
            "\n"
            "Reserve bundles of resources together, all or none. Run tasks in\n"
            "them with `manta submit --placement-group ID --bundle N -- ...`.\n"
            "\n"
            "  --bundles JSON    a list of resource maps, e.g.\n"
            "                    '[{\"CPU\": 1}, {\"CPU\": 1, \"GPU\": 1}]'\n"
            "  --strategy S      PACK (default), SPREAD, STRICT_PACK, STRICT_SPREAD\n"
            "  --tpu TYPE        instead of bundles: every host of whole TPU\n"
            "                    slices of this pod type (e.g. v4-16), one\n"
            "                    bundle per host with all its chips; bundle\n"
            "                    s*HOSTS+W is worker W of slice s\n"
            "  --slices K        how many slices (default 1)\n"
            "  --name NAME       a name shown by `manta list placement-groups`\n"
            "  --wait SECONDS    create: wait until every bundle is reserved\n"
            "  --timeout SECONDS wait: how long (default 30)\n"
            "\n"
            "create prints the group id; with --wait it exits 1 (and says why)\n"
            "when the group is not created in time. wait exits 0 once created.\n");
}

#define usage_error(...) \
    mt_cli_usage_error("placement-group", usage, __VA_ARGS__)

/* ---- bundles JSON -------------------------------------------------------- */

struct bundles {
    struct mt_qty_list *v;
    size_t n, cap;
};

static void bundles_release(struct bundles *b)
{
    for (size_t i = 0; i < b->n; i++)
        mt_qty_list_release(&b->v[i]);
    free(b->v);
}

/* Parse '[{...}, {...}]' (flat objects). RET 0 or -MT_EINVAL with err. */
static int parse_bundles(const char *text, struct bundles *b, char *err,
                         size_t errlen)
{
    const char *p = text + strspn(text, " \t\n");

    if (*p++ != '[') {
        snprintf(err, errlen, "expected a JSON list of objects");
        return -MT_EINVAL;
    }
    for (;;) {
        const char *end;
        char *obj;
        int rc;

        p += strspn(p, " \t\n");
        if (*p == ']' && b->n == 0)
            break;
        end = *p == '{' ? strchr(p, '}') : NULL;
        if (!end || b->n >= MAX_BUNDLES) {
            snprintf(err, errlen, b->n >= MAX_BUNDLES ? "more than 1024 bundles"
                                                      : "expected {...} for "
                                                        "each bundle");
            return -MT_EINVAL;
        }
        mt_xgrow((void **)&b->v, &b->cap, b->n + 1, sizeof(*b->v));
        obj = mt_xstrndup(p, (size_t)(end - p + 1));
        rc = mt_qty_parse_json(obj, &b->v[b->n++], err, errlen);
        free(obj);
        if (rc < 0)
            return rc;
        if (b->v[b->n - 1].n == 0) {
            snprintf(err, errlen, "bundle %zu is empty", b->n - 1);
            return -MT_EINVAL;
        }
        p = end + 1 + strspn(end + 1, " \t\n");
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == ']')
            break;
        snprintf(err, errlen, "expected ',' or ']' after a bundle");
        return -MT_EINVAL;
    }
    if (p[1 + strspn(p + 1, " \t\n")] != '\0' || b->n == 0) {
        snprintf(err, errlen, b->n ? "trailing characters" : "no bundles");
        return -MT_EINVAL;
    }
    return 0;
}

static int parse_strategy(const char *s)
{
    static const char *names[] = {"PACK", "SPREAD", "STRICT_PACK",
                                  "STRICT_SPREAD"};

    for (int i = 0; i < 4; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return -1;
}

/* ---- calls --------------------------------------------------------------- */

/* libmanta or the head refused: say why. RET 1. */
static int failed(mt_client_t *c)
{
    fprintf(stderr, "manta placement-group: %s\n", mt_client_last_error(c));
    return 1;
}

/* Wait up to seconds for pg; RET the exit code (0 when created). */
static int wait_created(mt_client_t *c, mt_pg_t *pg, long seconds)
{
    int rc = mt_pg_wait(c, pg, (int)(seconds * 1000), NULL);

    if (rc == -MT_ETIMEDOUT || rc == -MT_ESTATE) {
        fprintf(stderr, "manta placement-group: %s is not created%s%s\n",
                mt_pg_id(pg), *mt_pg_note(pg) ? ": " : " yet",
                mt_pg_note(pg));
        return 1;
    }
    return rc < 0 ? failed(c) : 0;
}

static int do_remove(mt_client_t *c, mt_pg_t *pg, long unused)
{
    if (mt_pg_remove(c, pg) < 0)
        return failed(c);
    printf("Removed placement group %s.\n", mt_pg_id(pg));
    return 0;
}

/* Run fn on the group with this id. RET its exit code. */
static int by_id(mt_client_t *c, const char *id,
                 int (*fn)(mt_client_t *c, mt_pg_t *pg, long arg), long arg)
{
    mt_pg_t *pg;
    int rc;

    if (mt_pg_from_id(id, &pg) < 0)
        return failed(NULL);
    rc = fn(c, pg, arg);
    mt_pg_release(pg);
    return rc;
}

/* A TPU slice group instead of bundles (tpu NULL: none). */
struct slice_req {
    const char *tpu;
    long slices;
};

/* The group's options from the command line. RET 0, or 1 (said why). */
static int group_opts(const struct bundles *b, int strategy, const char *name,
                      const struct slice_req *sr, mt_pg_opts_t **out)
{
    mt_pg_opts_t *o;
    int rc = mt_pg_opts_create(&o);

    if (rc == 0)
        rc = mt_pg_opts_set_strategy(o, (mt_pg_strategy)strategy);
    if (rc == 0)
        rc = mt_pg_opts_set_name(o, name);
    if (rc == 0 && sr->tpu)
        rc = mt_pg_opts_set_tpu_slice(o, sr->tpu, NULL,
                                      (unsigned)sr->slices);
    for (size_t i = 0; rc >= 0 && i < b->n; i++) {
        const char *names[MT_PG_MAX_RESOURCES + 1];
        double amounts[MT_PG_MAX_RESOURCES + 1];
        size_t n = b->v[i].n < MT_PG_MAX_RESOURCES + 1
                       ? b->v[i].n : MT_PG_MAX_RESOURCES + 1;

        for (size_t j = 0; j < n; j++) {
            names[j] = b->v[i].v[j].name;
            amounts[j] = (double)b->v[i].v[j].qty / MT_QTY_SCALE;
        }
        rc = mt_pg_opts_add_bundle(o, names, amounts, b->v[i].n);
    }
    if (rc < 0) {
        mt_pg_opts_destroy(o);
        return failed(NULL);
    }
    *out = o;
    return 0;
}

static int do_create(mt_client_t *c, const struct bundles *b, int strategy,
                     const char *name, long wait_s,
                     const struct slice_req *sr)
{
    mt_pg_opts_t *o;
    mt_pg_t *pg;
    int rc;

    if (group_opts(b, strategy, name, sr, &o))
        return 1;
    rc = mt_pg_create(c, o, &pg);
    mt_pg_opts_destroy(o);
    if (rc < 0)
        return failed(c);
    printf("%s\n", mt_pg_id(pg));
    fflush(stdout);
    rc = wait_s > 0 ? wait_created(c, pg, wait_s) : 0;
    mt_pg_release(pg);
    return rc;
}

/* ---- command ------------------------------------------------------------- */

static int cmd_pg(int argc, char **argv)
{
    static const struct option opts[] = {
        MT_CLI_HEAD_OPTIONS,
        {"bundles", required_argument, NULL, 'b'},
        {"strategy", required_argument, NULL, 's'},
        {"name", required_argument, NULL, 'n'},
        {"wait", required_argument, NULL, 'w'},
        {"timeout", required_argument, NULL, 'T'},
        {"tpu", required_argument, NULL, 'P'},
        {"slices", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *addr = NULL, *dir = NULL, *bundles_s = NULL, *name = NULL;
    struct bundles b = {NULL, 0, 0};
    long wait_s = 0, timeout_s = 30;
    int c, strategy = 0, rc;
    char err[256] = "";
    const char *verb;
    struct slice_req sr = {NULL, 1};
    mt_client_t *cl;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': addr = optarg; break;
        case 't': dir = optarg; break;
        case 'b': bundles_s = optarg; break;
        case 'n': name = optarg; break;
        case 's':
            strategy = parse_strategy(optarg);
            if (strategy < 0)
                return usage_error("unknown --strategy '%s'", optarg);
            break;
        case 'w':
            if (!mt_parse_int(optarg, 0, 3600, &wait_s))
                return usage_error("invalid --wait '%s'", optarg);
            break;
        case 'T':
            if (!mt_parse_int(optarg, 0, 3600, &timeout_s))
                return usage_error("invalid --timeout '%s'", optarg);
            break;
        case 'P': sr.tpu = optarg; break;
        case 'S':
            if (!mt_parse_int(optarg, 1, 64, &sr.slices))
                return usage_error("invalid --slices '%s': expected 1..64",
                                   optarg);
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
        return usage_error("%s", "expected create, wait or remove");
    verb = argv[optind];
    if (strcmp(verb, "create") == 0) {
        if (optind + 1 != argc)
            return usage_error("unexpected argument '%s'", argv[optind + 1]);
        if (!bundles_s == !sr.tpu)
            return usage_error("%s", "create needs --bundles or --tpu");
        if (bundles_s && parse_bundles(bundles_s, &b, err, sizeof(err)) < 0) {
            bundles_release(&b);
            return usage_error("invalid --bundles: %s", err);
        }
    } else if (strcmp(verb, "wait") == 0 || strcmp(verb, "remove") == 0) {
        if (optind + 2 != argc)
            return usage_error("%s needs exactly one placement group id",
                               verb);
    } else {
        return usage_error("unknown action '%s'", verb);
    }
    rc = mt_cli_connect("placement-group", addr, dir, PG_TIMEOUT_MS, &cl);
    if (rc) {
        bundles_release(&b);
        if (rc == MT_EXIT_USAGE)
            usage(stderr);
        return rc;
    }
    if (strcmp(verb, "create") == 0)
        rc = do_create(cl, &b, strategy, name, wait_s, &sr);
    else if (strcmp(verb, "wait") == 0)
        rc = by_id(cl, argv[optind + 1], wait_created, timeout_s);
    else
        rc = by_id(cl, argv[optind + 1], do_remove, 0);
    bundles_release(&b);
    mt_client_disconnect(cl);
    return rc;
}

const struct mt_cli_command mt_cli_cmd_pg = {
    "placement-group", cmd_pg,
    "create, wait for or remove a placement group"};
