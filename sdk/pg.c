/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pg.c -- placement groups in the SDK (manta/pg.h): options as a struct
 * mt_pg_def checked as they are set, handles, and waiting in slices of at
 * most WAIT_SLICE_MS per call to the head (rpc_pg.c makes the calls).
 *
 * THREAD: any; a handle's bundle nodes are replaced by mt_pg_wait().
 */
#include "sdk/rpc_pg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/task_opts.h"

#define MAX_NAME 4096
#define MAX_POD_TYPE 63
#define MAX_TOPOLOGY 31
#define WAIT_SLICE_MS 600000     /* one WaitPlacementGroup call at most */

_Static_assert(MT_PG_MAX_BUNDLES == MT_PG_DEF_MAX_BUNDLES, "bundles");
_Static_assert(MT_PG_MAX_RESOURCES == MT_TASK_MAX_RES, "resource kinds");

#define MT_PG_MAGIC 0x6d747067u  /* "mtpg" */

struct mt_pg_opts {
    struct mt_pg_def def;
};

/* A group this client created or named. Its bundle count is 0 until known
 * (a slice group, or one named by id, learns it from its first wait). */
struct mt_pg {
    uint32_t magic;              /* MT_PG_MAGIC */
    char id[64];
    size_t n_bundles;
    char **nodes;                /* per bundle, from the last wait */
    char note[256];              /* the head's note at the last wait */
    bool fresh;                  /* created at once: nodes from the create
                                    reply answer the first wait */
};

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
    mt_pg_def_release(&o->def);
    free(o);
}

int mt_pg_opts_set_strategy(mt_pg_opts_t *o, mt_pg_strategy s)
{
    if (!o || (int)s < MT_PG_PACK || (int)s > MT_PG_STRICT_SPREAD)
        return mt__set_error(NULL, -MT_EINVAL, "invalid placement strategy "
                             "%d", (int)s);
    o->def.strategy = (int)s;
    return 0;
}

int mt_pg_opts_set_name(mt_pg_opts_t *o, const char *name)
{
    if (!o || (name && strlen(name) > MAX_NAME))
        return mt__set_error(NULL, -MT_EINVAL, "a group name has at most "
                             "%d bytes", MAX_NAME);
    if (mt_def_set_str(&o->def.name, name) < 0)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    return 0;
}

/* Check and convert n amounts into l. RET 0 or -MT_E* (last error set). */
static int bundle_fill(struct mt_qty_list *l, const char *const *names,
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
        if (mt_qty_list_get(l, names[i]) >= 0)
            return mt__set_error(NULL, -MT_EINVAL, "%s given twice in "
                                 "one bundle", names[i]);
        if (mt_qty_list_put(l, names[i], q) < 0)
            return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    }
    return 0;
}

int mt_pg_opts_add_bundle(mt_pg_opts_t *o, const char *const *names,
                          const double *amounts, size_t n)
{
    struct mt_qty_list l = {0};
    struct mt_bundle_def *b;
    int rc;

    if (!o || !names || !amounts || n == 0 || n > MT_PG_MAX_RESOURCES)
        return mt__set_error(NULL, -MT_EINVAL, "a bundle holds 1 to %d "
                             "resources", MT_PG_MAX_RESOURCES);
    if (o->def.nbundles == MT_PG_MAX_BUNDLES)
        return mt__set_error(NULL, -MT_ERANGE, "at most %d bundles in a "
                             "group", MT_PG_MAX_BUNDLES);
    rc = bundle_fill(&l, names, amounts, n);
    if (rc == 0 && !(b = mt_pg_def_add_bundle(&o->def)))
        rc = mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    if (rc < 0) {
        mt_qty_list_release(&l);
        return rc;
    }
    b->res = l;
    return (int)o->def.nbundles - 1;
}

int mt_pg_opts_set_tpu_slice(mt_pg_opts_t *o, const char *pod_type,
                             const char *topology, unsigned slices)
{
    if (!o || !pod_type || !*pod_type || strlen(pod_type) > MAX_POD_TYPE ||
        (topology && strlen(topology) > MAX_TOPOLOGY) || slices < 1 ||
        slices > 64)
        return mt__set_error(NULL, -MT_EINVAL, "bad TPU slice request (pod "
                             "type such as v4-16, 1..64 slices)");
    if (mt_def_set_str(&o->def.tpu_pod_type, pod_type) < 0 ||
        mt_def_set_str(&o->def.tpu_topology, topology) < 0)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    o->def.tpu_slices = slices;
    return 0;
}

/* ---- handles ------------------------------------------------------------- */

static bool check(const struct mt_client *c, const struct mt_pg *pg)
{
    return mt__client_check(c) && pg && pg->magic == MT_PG_MAGIC;
}

static void nodes_free(struct mt_pg *pg)
{
    if (pg->nodes)
        for (size_t i = 0; i < pg->n_bundles; i++)
            free(pg->nodes[i]);
    free(pg->nodes);
    pg->nodes = NULL;
}

static struct mt_pg *pg_new(const char *id, size_t n_bundles)
{
    struct mt_pg *pg = calloc(1, sizeof(*pg));

    if (!pg)
        return NULL;
    pg->magic = MT_PG_MAGIC;
    snprintf(pg->id, sizeof(pg->id), "%s", id);
    pg->n_bundles = n_bundles;
    return pg;
}

static void take_nodes(struct mt_pg *pg, struct mt__pg_seen *s);

int mt_pg_create(mt_client_t *c, const mt_pg_opts_t *o, mt_pg_t **out)
{
    struct mt__pg_seen seen;
    char id[64];
    int rc;

    if (!mt__client_check(c) || !o || !out)
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "NULL argument");
    *out = NULL;
    if (o->def.nbundles == 0 && !o->def.tpu_pod_type)
        return mt__set_error(c, -MT_EINVAL, "a placement group needs at "
                             "least one bundle");
    if (o->def.nbundles && o->def.tpu_pod_type)
        return mt__set_error(c, -MT_EINVAL, "a TPU slice group takes no "
                             "bundles: it has one per host");
    rc = mt__pg_create(c, &o->def, id, sizeof(id), &seen);
    if (rc < 0)
        return rc;
    /* A slice group learns its bundle count when placed. */
    if (!(*out = pg_new(id, o->def.nbundles))) {
        mt__pg_seen_release(&seen);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    if (seen.state == MT_PG_STATE_CREATED) {
        take_nodes(*out, &seen);
        (*out)->fresh = true;
    }
    mt__pg_seen_release(&seen);
    mt__clear_error(c);
    return 0;
}

int mt_pg_from_id(const char *id, mt_pg_t **out)
{
    if (!out || !id || !*id || strlen(id) >= sizeof(((struct mt_pg *)0)->id))
        return mt__set_error(NULL, -MT_EINVAL, "a placement group id is "
                             "1 to 63 characters");
    if (mt__check_id(NULL, id, MT_ID_PG) < 0)
        return -MT_EINVAL;
    if (!(*out = pg_new(id, 0)))
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    return 0;
}

/* Keep the bundle nodes of s in pg (the count: ours, or the head's). */
static void take_nodes(struct mt_pg *pg, struct mt__pg_seen *s)
{
    size_t n = pg->n_bundles ? pg->n_bundles : s->n_nodes;

    nodes_free(pg);
    if (n > s->n_nodes) { /* a bundle the head did not name: "" */
        char **v = realloc(s->nodes, (n + 1) * sizeof(*v));

        if (!v)
            return;
        s->nodes = v;
        for (; s->n_nodes < n; s->n_nodes++)
            if (!(v[s->n_nodes] = strdup("")))
                return;
    }
    pg->nodes = s->nodes;
    pg->n_bundles = n;
    for (size_t i = n; i < s->n_nodes; i++)
        free(s->nodes[i]);
    s->nodes = NULL;
    s->n_nodes = 0;
}

/* One wait of up to slice_ms. RET 0 (created), -MT_EAGAIN (not yet),
 * -MT_ESTATE (removed), or an error. */
static int wait_once(mt_client_t *c, struct mt_pg *pg, int slice_ms,
                     mt_pg_state *state)
{
    struct mt__pg_seen s;
    int rc = mt__pg_wait_once(c, pg->id, slice_ms, &s);

    if (rc < 0)
        return rc;
    *state = s.state;
    snprintf(pg->note, sizeof(pg->note), "%s", s.note);
    rc = -MT_EAGAIN;
    if (s.state == MT_PG_STATE_CREATED) {
        take_nodes(pg, &s);
        rc = 0;
    } else if (s.state == MT_PG_STATE_REMOVED) {
        rc = -MT_ESTATE;
    }
    mt__pg_seen_release(&s);
    return rc;
}

int mt_pg_wait(mt_client_t *c, mt_pg_t *pg, int timeout_ms, mt_pg_state *state)
{
    struct timespec dl = mt__deadline(timeout_ms < 0 ? 0 : timeout_ms);
    mt_pg_state st = MT_PG_STATE_UNKNOWN;
    int rc;

    if (!check(c, pg))
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or group");
    if (pg->fresh) { /* the create's answer is the first wait's */
        pg->fresh = false;
        if (state)
            *state = MT_PG_STATE_CREATED;
        mt__clear_error(c);
        return 0;
    }
    for (;;) {
        int slice = WAIT_SLICE_MS;

        if (timeout_ms >= 0 && mt__ms_left(&dl) < slice)
            slice = mt__ms_left(&dl);
        rc = wait_once(c, pg, slice, &st);
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
                             *pg->note ? ": " : "", pg->note);
    if (rc == -MT_ESTATE)
        return mt__set_error(c, rc, "placement group %s was removed", pg->id);
    if (rc == 0)
        mt__clear_error(c);
    return rc;
}

const char *mt_pg_bundle_node(const mt_pg_t *pg, size_t i)
{
    if (!pg || pg->magic != MT_PG_MAGIC || i >= pg->n_bundles)
        return NULL;
    return pg->nodes && pg->nodes[i] ? pg->nodes[i] : "";
}

size_t mt_pg_num_bundles(const mt_pg_t *pg)
{
    return pg && pg->magic == MT_PG_MAGIC ? pg->n_bundles : 0;
}

const char *mt_pg_note(const mt_pg_t *pg)
{
    return pg && pg->magic == MT_PG_MAGIC ? pg->note : "";
}

int mt_pg_remove(mt_client_t *c, mt_pg_t *pg)
{
    int rc;

    if (!check(c, pg))
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or group");
    rc = mt__pg_remove(c, pg->id);
    if (rc == 0)
        mt__clear_error(c);
    return rc;
}

const char *mt_pg_id(const mt_pg_t *pg)
{
    return pg && pg->magic == MT_PG_MAGIC ? pg->id : NULL;
}

void mt_pg_release(mt_pg_t *pg)
{
    if (!pg || pg->magic != MT_PG_MAGIC)
        return;
    nodes_free(pg);
    pg->magic = 0;
    free(pg);
}

const char *mt_pg_state_name(mt_pg_state s)
{
    switch (s) {
    case MT_PG_STATE_PENDING: return "PENDING";
    case MT_PG_STATE_CREATED: return "CREATED";
    case MT_PG_STATE_RESCHEDULING: return "RESCHEDULING";
    case MT_PG_STATE_REMOVED: return "REMOVED";
    default: return "UNKNOWN";
    }
}

int mt_task_opts_set_placement_group(mt_task_opts_t *o, const mt_pg_t *pg,
                                     int bundle)
{
    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    if (!pg) {
        mt_def_set_str(&o->def.pg_id, NULL);
        o->def.bundle = -1;
        return 0;
    }
    /* A group whose bundle count is not known yet takes any index. */
    if (pg->magic != MT_PG_MAGIC || bundle < -1 ||
        bundle >= MT_PG_MAX_BUNDLES ||
        (bundle >= 0 && pg->n_bundles && (size_t)bundle >= pg->n_bundles))
        return mt__set_error(NULL, -MT_EINVAL, "bundle %d is not in the "
                             "group (it has %zu; -1 for any)", bundle,
                             pg->n_bundles);
    if (mt_def_set_str(&o->def.pg_id, pg->id) < 0)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    o->def.bundle = bundle;
    return 0;
}
