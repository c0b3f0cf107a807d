/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pg.c -- placement groups in the SDK (manta/pg.h): options as plain C,
 * then CreatePlacementGroup / WaitPlacementGroup / RemovePlacementGroup on
 * the head through the client's generic unary request (mt__req_unary).
 *
 * Besides rpc_head.c, this is the one SDK file that sees protobuf types:
 * the messages are built on the stack with borrowed pointers and copied by
 * mt__req_unary, so nothing here allocates protobuf memory by hand.
 *
 * THREAD: any; a handle's bundle nodes are replaced by mt_pg_wait().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "head_service.pb-c.h"
#include "proto/services.h"
#include "sdk/sdk_int.h"
#include "manta/pg.h"

#define PG_MAGIC 0x6d747067u     /* "mtpg" */
#define MAX_NAME 4096
#define WAIT_SLICE_MS 600000     /* one WaitPlacementGroup call at most */

struct pg_bundle {
    struct mt__res res[MT_PG_MAX_RESOURCES];
    size_t n;
};

struct mt_pg_opts {
    struct pg_bundle *b;
    size_t n, cap;
    int strategy;
    char *name;
    char pod_type[64];           /* a TPU slice group: the pod type */
    char topology[32];           /* "" = the pod type's default */
    uint32_t slices;
};

struct mt_pg {
    uint32_t magic;
    char id[64];
    size_t n_bundles;
    char **nodes;                /* per bundle, from the last wait */
};

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}

/* ---- options ------------------------------------------------------------- */

int mt_pg_opts_create(mt_pg_opts_t **out)
{
    if (!out)
        return mt__set_error(NULL, -MT_EINVAL, "out is NULL");
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    return 0;
}

void mt_pg_opts_destroy(mt_pg_opts_t *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++)
        for (size_t j = 0; j < o->b[i].n; j++)
            free(o->b[i].res[j].name);
    free(o->b);
    free(o->name);
    free(o);
}

int mt_pg_opts_set_strategy(mt_pg_opts_t *o, mt_pg_strategy s)
{
    if (!o || (int)s < MT_PG_PACK || (int)s > MT_PG_STRICT_SPREAD)
        return mt__set_error(NULL, -MT_EINVAL, "invalid placement strategy "
                             "%d", (int)s);
    o->strategy = (int)s;
    return 0;
}

int mt_pg_opts_set_name(mt_pg_opts_t *o, const char *name)
{
    char *copy = NULL;

    if (!o || (name && strlen(name) > MAX_NAME))
        return mt__set_error(NULL, -MT_EINVAL, "a group name has at most "
                             "%d bytes", MAX_NAME);
    if (name && !(copy = dup_str(name)))
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    free(o->name);
    o->name = copy;
    return 0;
}

/* Check and convert n amounts into b. RET 0 or -MT_E* (last error set). */
static int bundle_fill(struct pg_bundle *b, const char *const *names,
                       const double *amounts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t q;
        int rc = mt__res_amount(names[i], amounts[i], &q);

        if (rc < 0)
            return rc;
        if (q == 0)
            return mt__set_error(NULL, -MT_EINVAL, "bundle amount of %s "
                                 "must be above 0", names[i]);
        for (size_t j = 0; j < b->n; j++)
            if (strcmp(b->res[j].name, names[i]) == 0)
                return mt__set_error(NULL, -MT_EINVAL, "%s given twice in "
                                     "one bundle", names[i]);
        if (!(b->res[b->n].name = dup_str(names[i])))
            return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
        b->res[b->n++].qty = q;
    }
    return 0;
}

int mt_pg_opts_add_bundle(mt_pg_opts_t *o, const char *const *names,
                          const double *amounts, size_t n)
{
    struct pg_bundle b = {0};
    int rc;

    if (!o || !names || !amounts || n == 0 || n > MT_PG_MAX_RESOURCES)
        return mt__set_error(NULL, -MT_EINVAL, "a bundle holds 1 to %d "
                             "resources", MT_PG_MAX_RESOURCES);
    if (o->n == MT_PG_MAX_BUNDLES)
        return mt__set_error(NULL, -MT_ERANGE, "at most %d bundles in a "
                             "group", MT_PG_MAX_BUNDLES);
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 4;
        struct pg_bundle *v = realloc(o->b, cap * sizeof(*v));

        if (!v)
            return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
        o->b = v;
        o->cap = cap;
    }
    rc = bundle_fill(&b, names, amounts, n);
    if (rc < 0) {
        for (size_t j = 0; j < b.n; j++)
            free(b.res[j].name);
        return rc;
    }
    o->b[o->n] = b;
    return (int)o->n++;
}

/* ---- calls --------------------------------------------------------------- */

int mt_pg_opts_set_tpu_slice(mt_pg_opts_t *o, const char *pod_type,
                             const char *topology, unsigned slices)
{
    if (!o || !pod_type || !*pod_type || strlen(pod_type) >= sizeof(o->pod_type)
        || (topology && strlen(topology) >= sizeof(o->topology)) ||
        slices < 1 || slices > 64)
        return mt__set_error(NULL, -MT_EINVAL, "bad TPU slice request (pod "
                             "type such as v4-16, 1..64 slices)");
    snprintf(o->pod_type, sizeof(o->pod_type), "%s", pod_type);
    snprintf(o->topology, sizeof(o->topology), "%s", topology ? topology : "");
    o->slices = slices;
    return 0;
}

static bool check(const struct mt_client *c, const struct mt_pg *pg)
{
    return c && pg && pg->magic == PG_MAGIC;
}

static void nodes_free(struct mt_pg *pg)
{
    if (pg->nodes)
        for (size_t i = 0; i < pg->n_bundles; i++)
            free(pg->nodes[i]);
    free(pg->nodes);
    pg->nodes = NULL;
}

/* Send the create request built from o; RET the head's id via reply. */
static int send_create(mt_client_t *c, const struct mt_pg_opts *o,
                       Manta__CreatePlacementGroupReply **reply)
{
    Manta__CreatePlacementGroupRequest req =
        MANTA__CREATE_PLACEMENT_GROUP_REQUEST__INIT;
    Manta__BundleSpec *bs = calloc(o->n, sizeof(*bs));
    Manta__BundleSpec **bp = calloc(o->n, sizeof(*bp));
    Manta__ResourceEntry *re = calloc(o->n * MT_PG_MAX_RESOURCES,
                                      sizeof(*re));
    Manta__ResourceEntry **rp = calloc(o->n * MT_PG_MAX_RESOURCES,
                                       sizeof(*rp));
    int rc = -MT_ENOMEM;

    if (bs && bp && re && rp) {
        for (size_t i = 0; i < o->n; i++) {
            size_t k = i * MT_PG_MAX_RESOURCES;

            manta__bundle_spec__init(&bs[i]);
            bp[i] = &bs[i];
            bs[i].resources = &rp[k];
            bs[i].n_resources = o->b[i].n;
            for (size_t j = 0; j < o->b[i].n; j++) {
                manta__resource_entry__init(&re[k + j]);
                re[k + j].name = o->b[i].res[j].name;
                re[k + j].quantity = o->b[i].res[j].qty;
                rp[k + j] = &re[k + j];
            }
        }
        req.name = o->name ? o->name : (char *)"";
        req.strategy = (Manta__PlacementStrategy)o->strategy;
        req.bundles = bp;
        req.n_bundles = o->n;
        req.tpu_pod_type = (char *)o->pod_type;
        req.tpu_topology = (char *)o->topology;
        req.tpu_slices = o->slices;
        rc = mt__req_unary(c, &mt_head_create_pg, &req.base,
                           c->rpc_timeout_ms, (void **)reply);
    } else {
        rc = mt__set_error(c, rc, "out of memory");
    }
    free(bs);
    free(bp);
    free(re);
    free(rp);
    return rc;
}

int mt_pg_create(mt_client_t *c, const mt_pg_opts_t *o, mt_pg_t **out)
{
    Manta__CreatePlacementGroupReply *reply = NULL;
    struct mt_pg *pg;
    int rc;

    if (!c || !o || !out)
        return mt__set_error(c, -MT_EINVAL, "NULL argument");
    *out = NULL;
    if (o->n == 0 && !*o->pod_type)
        return mt__set_error(c, -MT_EINVAL, "a placement group needs at "
                             "least one bundle");
    if (o->n && *o->pod_type)
        return mt__set_error(c, -MT_EINVAL, "a TPU slice group takes no "
                             "bundles: it has one per host");
    rc = send_create(c, o, &reply);
    if (rc < 0)
        return rc;
    pg = calloc(1, sizeof(*pg));
    if (!pg || !*reply->pg_id || strlen(reply->pg_id) >= sizeof(pg->id)) {
        rc = pg ? mt__set_error(c, -MT_EPROTO, "the head returned no group "
                                "id")
                : mt__set_error(c, -MT_ENOMEM, "out of memory");
        free(pg);
        mt__rpc_submit_free(reply);
        return rc;
    }
    pg->magic = PG_MAGIC;
    snprintf(pg->id, sizeof(pg->id), "%s", reply->pg_id);
    pg->n_bundles = o->n; /* a slice group learns its count when placed */
    mt__rpc_submit_free(reply);
    mt__clear_error(c);
    *out = pg;
    return 0;
}

/* Keep the bundle nodes of g in pg. */
static void take_nodes(struct mt_pg *pg, const Manta__PlacementGroupInfo *g)
{
    size_t n = pg->n_bundles ? pg->n_bundles : g->n_bundle_node_ids;
    char **v = calloc(n ? n : 1, sizeof(*v));

    if (!v)
        return;
    nodes_free(pg);
    pg->n_bundles = n;
    pg->nodes = v;
    for (size_t i = 0; i < pg->n_bundles; i++)
        v[i] = dup_str(i < g->n_bundle_node_ids ? g->bundle_node_ids[i] : "");
}

/* One WaitPlacementGroup of up to slice_ms. RET 0 (created), -MT_EAGAIN
 * (not yet), or an error. */
static int wait_once(mt_client_t *c, struct mt_pg *pg, int slice_ms,
                     mt_pg_state *state, char *why, size_t whylen)
{
    Manta__WaitPlacementGroupRequest req =
        MANTA__WAIT_PLACEMENT_GROUP_REQUEST__INIT;
    Manta__WaitPlacementGroupReply *reply = NULL;
    const Manta__PlacementGroupInfo *g;
    int rc;

    req.pg_id = pg->id;
    req.timeout_ms = (uint32_t)slice_ms;
    rc = mt__req_unary(c, &mt_head_wait_pg, &req.base,
                       slice_ms + c->rpc_timeout_ms, (void **)&reply);
    if (rc < 0)
        return rc;
    g = reply->group;
    rc = -MT_EPROTO;
    if (g) {
        *state = (mt_pg_state)g->state;
        snprintf(why, whylen, "%s", g->error);
        rc = -MT_EAGAIN;
        if (g->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED) {
            take_nodes(pg, g);
            rc = 0;
        } else if (g->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_REMOVED) {
            rc = -MT_ESTATE;
        }
    }
    mt__rpc_submit_free(reply);
    return rc;
}

int mt_pg_wait(mt_client_t *c, mt_pg_t *pg, int timeout_ms, mt_pg_state *state)
{
    struct timespec dl = mt__deadline(timeout_ms < 0 ? 0 : timeout_ms);
    mt_pg_state st = MT_PG_STATE_UNKNOWN;
    char why[256] = "";
    int rc;

    if (!check(c, pg))
        return mt__set_error(c, -MT_EINVAL, "invalid client or group");
    for (;;) {
        int slice = WAIT_SLICE_MS;

        if (timeout_ms >= 0) {
            struct timespec now;
            int64_t left;

            clock_gettime(CLOCK_MONOTONIC, &now);
            left = (int64_t)(dl.tv_sec - now.tv_sec) * 1000 +
                   (dl.tv_nsec - now.tv_nsec) / 1000000;
            slice = left < 0 ? 0 : left < slice ? (int)left : slice;
        }
        rc = wait_once(c, pg, slice, &st, why, sizeof(why));
        if (rc != -MT_EAGAIN || (timeout_ms >= 0 && slice < WAIT_SLICE_MS))
            break;
    }
    if (state)
        *state = st;
    if (rc == -MT_EAGAIN)
        return mt__set_error(c, -MT_ETIMEDOUT, "placement group %s is %s%s%s",
                             pg->id, st == MT_PG_STATE_RESCHEDULING
                                         ? "being placed again"
                                         : "not created yet",
                             *why ? ": " : "", why);
    if (rc == -MT_ESTATE)
        return mt__set_error(c, rc, "placement group %s was removed", pg->id);
    if (rc == -MT_EPROTO)
        return mt__set_error(c, rc, "the head sent no group");
    if (rc == 0)
        mt__clear_error(c);
    return rc;
}

const char *mt_pg_bundle_node(const mt_pg_t *pg, size_t i)
{
    if (!pg || pg->magic != PG_MAGIC || i >= pg->n_bundles)
        return NULL;
    return pg->nodes && pg->nodes[i] ? pg->nodes[i] : "";
}

size_t mt_pg_num_bundles(const mt_pg_t *pg)
{
    return pg && pg->magic == PG_MAGIC ? pg->n_bundles : 0;
}

int mt_pg_remove(mt_client_t *c, mt_pg_t *pg)
{
    Manta__RemovePlacementGroupRequest req =
        MANTA__REMOVE_PLACEMENT_GROUP_REQUEST__INIT;
    void *reply = NULL;
    int rc;

    if (!check(c, pg))
        return mt__set_error(c, -MT_EINVAL, "invalid client or group");
    req.pg_id = pg->id;
    rc = mt__req_unary(c, &mt_head_remove_pg, &req.base, c->rpc_timeout_ms,
                       &reply);
    mt__rpc_submit_free(reply);
    if (rc == 0)
        mt__clear_error(c);
    return rc;
}

const char *mt_pg_id(const mt_pg_t *pg)
{
    return pg && pg->magic == PG_MAGIC ? pg->id : NULL;
}

void mt_pg_release(mt_pg_t *pg)
{
    if (!pg || pg->magic != PG_MAGIC)
        return;
    nodes_free(pg);
    pg->magic = 0;
    free(pg);
}

int mt_task_opts_set_placement_group(mt_task_opts_t *o, const mt_pg_t *pg,
                                     int bundle)
{
    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    if (!pg) {
        o->pg_id[0] = '\0';
        o->bundle = -1;
        return 0;
    }
    if (pg->magic != PG_MAGIC || bundle < -1 ||
        (bundle >= 0 && (size_t)bundle >= pg->n_bundles))
        return mt__set_error(NULL, -MT_EINVAL, "bundle %d is not in the "
                             "group (it has %zu; -1 for any)", bundle,
                             pg->n_bundles);
    snprintf(o->pg_id, sizeof(o->pg_id), "%s", pg->id);
    o->bundle = bundle;
    return 0;
}
