/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_pg.c -- `manta placement-group create|wait|remove`: reserve bundles
 * of resources atomically on the head, wait for the reservation, give it
 * back. Tasks then run inside with `manta submit --placement-group ID`.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/session.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/error.h"
#include "common/qty.h"
#include "head_service.pb-c.h"
#include "proto/services.h"

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

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "manta placement-group: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return MT_EXIT_USAGE;
}

/* ---- bundles JSON ---------------------------------------------------------- */

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

static int call(const char *addr, const struct mt_rpc_method *m,
                const ProtobufCMessage *req, int timeout_ms,
                ProtobufCMessage **resp)
{
    char err[512] = "";
    int rc = mt_cli_call(addr, m, req, timeout_ms, resp, err, sizeof(err));

    if (rc < 0)
        fprintf(stderr, "manta placement-group: %s\n", err);
    return rc;
}

/* Wait up to seconds for id; RET the exit code (0 when created). */
static int wait_created(const char *addr, const char *id, long seconds)
{
    Manta__WaitPlacementGroupRequest req = MANTA__WAIT_PLACEMENT_GROUP_REQUEST__INIT;
    Manta__WaitPlacementGroupReply *r;
    ProtobufCMessage *resp = NULL;
    int ok;

    req.pg_id = (char *)id;
    req.timeout_ms = (uint32_t)(seconds * 1000);
    if (call(addr, &mt_head_wait_pg, &req.base,
             (int)(seconds * 1000) + PG_TIMEOUT_MS, &resp) < 0)
        return 1;
    r = (Manta__WaitPlacementGroupReply *)resp;
    ok = r->group &&
         r->group->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED;
    if (!ok)
        fprintf(stderr, "manta placement-group: %s is not created%s%s\n", id,
                r->group && *r->group->error ? ": " : " yet",
                r->group ? r->group->error : "");
    protobuf_c_message_free_unpacked(resp, NULL);
    return ok ? 0 : 1;
}

/* A TPU slice group instead of bundles (tpu NULL: none). */
struct slice_req {
    const char *tpu;
    long slices;
};

static int do_create(const char *addr, const struct bundles *b, int strategy,
                     const char *name, long wait_s,
                     const struct slice_req *sr)
{
    Manta__CreatePlacementGroupRequest req =
        MANTA__CREATE_PLACEMENT_GROUP_REQUEST__INIT;
    Manta__BundleSpec *bs = mt_xcalloc(b->n, sizeof(*bs));
    Manta__BundleSpec **bp = mt_xcalloc(b->n, sizeof(*bp));
    Manta__ResourceEntry *res, **rp;
    ProtobufCMessage *resp = NULL;
    size_t nres = 0, k = 0;
    int rc;

    for (size_t i = 0; i < b->n; i++)
        nres += b->v[i].n;
    res = mt_xcalloc(nres, sizeof(*res));
    rp = mt_xcalloc(nres, sizeof(*rp));
    for (size_t i = 0; i < b->n; i++) {
        manta__bundle_spec__init(&bs[i]);
        bs[i].resources = rp + k;
        bs[i].n_resources = b->v[i].n;
        for (size_t j = 0; j < b->v[i].n; j++, k++) {
            manta__resource_entry__init(&res[k]);
            res[k].name = b->v[i].v[j].name;
            res[k].quantity = b->v[i].v[j].qty;
            rp[k] = &res[k];
        }
        bp[i] = &bs[i];
    }
    req.name = (char *)(name ? name : "");
    req.strategy = (Manta__PlacementStrategy)strategy;
    req.n_bundles = b->n;
    req.bundles = bp;
    req.tpu_pod_type = (char *)(sr->tpu ? sr->tpu : "");
    req.tpu_slices = (uint32_t)sr->slices;
    rc = call(addr, &mt_head_create_pg, &req.base, PG_TIMEOUT_MS, &resp);
    free(bs);
    free(bp);
    free(res);
    free(rp);
    if (rc < 0)
        return 1;
    printf("%s\n", ((Manta__CreatePlacementGroupReply *)resp)->pg_id);
    fflush(stdout);
    rc = wait_s > 0 ? wait_created(
                          addr, ((Manta__CreatePlacementGroupReply *)resp)->pg_id,
                          wait_s)
                    : 0;
    protobuf_c_message_free_unpacked(resp, NULL);
    return rc;
}

static int do_remove(const char *addr, const char *id)
{
    Manta__RemovePlacementGroupRequest req =
        MANTA__REMOVE_PLACEMENT_GROUP_REQUEST__INIT;
    ProtobufCMessage *resp = NULL;

    req.pg_id = (char *)id;
    if (call(addr, &mt_head_remove_pg, &req.base, PG_TIMEOUT_MS, &resp) < 0)
        return 1;
    protobuf_c_message_free_unpacked(resp, NULL);
    printf("Removed placement group %s.\n", id);
    return 0;
}

/* ---- command ---------------------------------------------------------------- */

int mt_cmd_pg(int argc, char **argv)
{
    static const struct option opts[] = {
        {"address", required_argument, NULL, 'a'},
        {"temp-dir", required_argument, NULL, 't'},
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
    char err[256] = "", *head = NULL;
    const char *verb;
    struct slice_req sr = {NULL, 1};

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
    rc = mt_cli_head_addr("placement-group", addr, dir, &head);
    if (rc) {
        bundles_release(&b);
        if (rc == MT_EXIT_USAGE)
            usage(stderr);
        return rc;
    }
    if (strcmp(verb, "create") == 0)
        rc = do_create(head, &b, strategy, name, wait_s, &sr);
    else if (strcmp(verb, "wait") == 0)
        rc = wait_created(head, argv[optind + 1], timeout_s);
    else
        rc = do_remove(head, argv[optind + 1]);
    bundles_release(&b);
    free(head);
    return rc;
}
