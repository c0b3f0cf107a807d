/* SPDX-License-Identifier: Apache-2.0 */
/*
 * convert.c -- protobuf <-> plain C for the shared shapes (see convert.h).
 *
 * Views: every array a message needs is one arena allocation; strings are
 * borrowed from the plain C source, with NULL read as protobuf-c's "".
 * Copies: built with the non-aborting list and def setters of common/, so
 * the SDK can use them; a failure releases what was built.
 */
#include "proto/convert.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define MAX_ENV 4096

/* ---- arenas --------------------------------------------------------------- */

struct mt_pb_chunk {
    struct mt_pb_chunk *next;
    size_t used, size;
    _Alignas(max_align_t) unsigned char data[];
};

void *mt_pb_alloc(struct mt_pb_arena *a, size_t n)
{
    const size_t align = _Alignof(max_align_t);
    struct mt_pb_chunk *c = a->chunks;
    void *p;

    if (n > SIZE_MAX / 2)
        return NULL;
    n = n ? (n + align - 1) & ~(align - 1) : align;
    if (!c || c->size - c->used < n) {
        size_t size = n > MT_PB_ARENA_CHUNK ? n : MT_PB_ARENA_CHUNK;

        if (!(c = malloc(sizeof(*c) + size)))
            return NULL;
        c->used = 0;
        c->size = size;
        if (size > MT_PB_ARENA_CHUNK && a->chunks) {
            /* a large block: keep cutting the current chunk after it */
            c->next = a->chunks->next;
            a->chunks->next = c;
        } else {
            c->next = a->chunks;
            a->chunks = c;
        }
    }
    p = c->data + c->used;
    c->used += n;
    return memset(p, 0, n);
}

void mt_pb_arena_release(struct mt_pb_arena *a)
{
    for (struct mt_pb_chunk *c = a->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    a->chunks = NULL;
}

/* n entries of size sz plus the n pointers to them, in one block. */
static void **alloc_ptrs(struct mt_pb_arena *a, size_t n, size_t sz,
                         void **items)
{
    uint8_t *b = mt_pb_alloc(a, n * (sz + sizeof(void *)) + sizeof(void *));

    if (!b)
        return NULL;
    *items = b + (n + 1) * sizeof(void *);
    return (void **)b;
}

static char *str_or_empty(const char *s)
{
    return s ? (char *)s : (char *)protobuf_c_empty_string;
}

/* ---- plain C -> protobuf views -------------------------------------------- */

int mt_pb_res_view(struct mt_pb_arena *a, const struct mt_qty_list *l,
                   Manta__ResourceEntry ***v, size_t *n)
{
    Manta__ResourceEntry *e;

    if (!(*v = (Manta__ResourceEntry **)alloc_ptrs(a, l->n, sizeof(*e),
                                                   (void **)&e)))
        return -MT_ENOMEM;
    for (size_t i = 0; i < l->n; i++) {
        manta__resource_entry__init(&e[i]);
        e[i].name = l->v[i].name;
        e[i].quantity = l->v[i].qty;
        (*v)[i] = &e[i];
    }
    *n = l->n;
    return 0;
}

int mt_pb_labels_view(struct mt_pb_arena *a, const struct mt_kv_list *l,
                      Manta__Label ***v, size_t *n)
{
    Manta__Label *e;

    if (!(*v = (Manta__Label **)alloc_ptrs(a, l->n, sizeof(*e),
                                           (void **)&e)))
        return -MT_ENOMEM;
    for (size_t i = 0; i < l->n; i++) {
        manta__label__init(&e[i]);
        e[i].key = l->v[i].key;
        e[i].value = str_or_empty(l->v[i].value);
        (*v)[i] = &e[i];
    }
    *n = l->n;
    return 0;
}

int mt_pb_selector_view(struct mt_pb_arena *a, const struct mt_selector *s,
                        Manta__LabelMatch ***v, size_t *n)
{
    Manta__LabelMatch *e;

    if (!(*v = (Manta__LabelMatch **)alloc_ptrs(a, s->n, sizeof(*e),
                                                (void **)&e)))
        return -MT_ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        manta__label_match__init(&e[i]);
        e[i].key = s->v[i].key;
        e[i].op = (Manta__LabelMatch__Op)s->v[i].op;
        e[i].values = s->v[i].values;
        e[i].n_values = s->v[i].n;
        (*v)[i] = &e[i];
    }
    *n = s->n;
    return 0;
}

int mt_pb_values_view(struct mt_pb_arena *a, const struct mt_task_arg *args,
                      size_t n, ProtobufCBinaryData **v)
{
    if (!(*v = mt_pb_alloc(a, (n + 1) * sizeof(**v))))
        return -MT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        (*v)[i].data = args[i].data;
        (*v)[i].len = args[i].is_ref ? 0 : args[i].len;
    }
    return 0;
}

/* Arguments: bytes by value and, when any is a reference, arg_refs. */
static int args_view(struct mt_pb_arena *a, const struct mt_task_def *d,
                     Manta__TaskSpec *s)
{
    bool refs = false;

    for (size_t i = 0; i < d->nargs; i++)
        refs |= d->args[i].is_ref;
    s->arg_refs = refs ? mt_pb_alloc(a, (d->nargs + 1) * sizeof(*s->arg_refs))
                       : NULL;
    if (mt_pb_values_view(a, d->args, d->nargs, &s->args) < 0 ||
        (refs && !s->arg_refs))
        return -MT_ENOMEM;
    for (size_t i = 0; i < d->nargs; i++) {
        if (d->args[i].is_ref) {
            s->arg_refs[i].data = (uint8_t *)d->args[i].ref.b;
            s->arg_refs[i].len = MT_OBJECT_ID_LEN;
        }
    }
    s->n_args = d->nargs;
    s->n_arg_refs = refs ? d->nargs : 0;
    return 0;
}

static void scalars_view(const struct mt_task_def *d, Manta__TaskSpec *s)
{
    s->name = str_or_empty(d->name);
    s->kind = (Manta__TaskKind)d->kind;
    s->argv = d->argv;
    s->n_argv = d->argc;
    s->env_unset = d->env_unset;
    s->n_env_unset = d->n_env_unset;
    s->cwd = str_or_empty(d->cwd);
    s->priority = d->priority;
    s->retries_case = MANTA__TASK_SPEC__RETRIES_MAX_RETRIES;
    s->max_retries = d->max_retries;
    s->strategy = (Manta__SchedulingStrategy)d->place;
    s->affinity_node_id = str_or_empty(d->affinity_node);
    s->affinity_soft = d->affinity_soft;
    s->placement_group_id = str_or_empty(d->pg_id);
    s->bundle_index = d->bundle;
    s->function = str_or_empty(d->function);
    s->code_path = d->code_path;
    s->n_code_path = d->n_code_path;
    s->actor_id = str_or_empty(d->actor_id);
    s->actor_name = str_or_empty(d->actor_name);
    s->actor_detached = d->detached;
    s->max_restarts = d->max_restarts;
    s->owner_id = str_or_empty(d->owner_id);
    s->hold_result = d->hold_result;
}

int mt_pb_task_spec_view(struct mt_pb_arena *a, const struct mt_task_def *d,
                         Manta__TaskSpec *s)
{
    manta__task_spec__init(s);
    scalars_view(d, s);
    if (mt_pb_labels_view(a, &d->env, &s->env, &s->n_env) < 0 ||
        mt_pb_res_view(a, &d->res, &s->resources, &s->n_resources) < 0 ||
        mt_pb_selector_view(a, &d->sel, &s->label_selector,
                            &s->n_label_selector) < 0 ||
        args_view(a, d, s) < 0)
        return -MT_ENOMEM;
    return 0;
}

int mt_pb_pg_request_view(struct mt_pb_arena *a, const struct mt_pg_def *p,
                          Manta__CreatePlacementGroupRequest *r)
{
    Manta__BundleSpec *b;

    manta__create_placement_group_request__init(r);
    r->name = str_or_empty(p->name);
    r->strategy = (Manta__PlacementStrategy)p->strategy;
    r->tpu_pod_type = str_or_empty(p->tpu_pod_type);
    r->tpu_topology = str_or_empty(p->tpu_topology);
    r->tpu_slices = p->tpu_slices;
    if (!(r->bundles = (Manta__BundleSpec **)alloc_ptrs(a, p->nbundles,
                                                        sizeof(*b),
                                                        (void **)&b)))
        return -MT_ENOMEM;
    for (size_t i = 0; i < p->nbundles; i++) {
        manta__bundle_spec__init(&b[i]);
        if (mt_pb_res_view(a, &p->bundles[i].res, &b[i].resources,
                           &b[i].n_resources) < 0 ||
            mt_pb_selector_view(a, &p->bundles[i].sel, &b[i].label_selector,
                                &b[i].n_label_selector) < 0)
            return -MT_ENOMEM;
        r->bundles[i] = &b[i];
    }
    r->n_bundles = p->nbundles;
    return 0;
}

int mt_pb_gang_request_view(struct mt_pb_arena *a, const struct mt_gang_def *g,
                            Manta__SubmitGangRequest *r)
{
    manta__submit_gang_request__init(r);
    r->name = str_or_empty(g->name);
    r->tpu_pod_type = str_or_empty(g->pod_type);
    r->tpu_topology = str_or_empty(g->topology);
    r->tpu_slices = g->slices;
    r->launch = g->device_launch ? MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE
                                 : MANTA__GANG_LAUNCH__GANG_LAUNCH_HOST;
    r->max_restarts = g->max_restarts;
    if (!(r->member = mt_pb_alloc(a, sizeof(*r->member))))
        return -MT_ENOMEM;
    return mt_pb_task_spec_view(a, &g->member, r->member);
}

/* ---- protobuf -> plain C ---------------------------------------------------- */

int mt_pb_object_id(const ProtobufCBinaryData *b, mt_object_id *id)
{
    if (b->len != MT_OBJECT_ID_LEN)
        return -MT_EINVAL;
    memcpy(id->b, b->data, MT_OBJECT_ID_LEN);
    return 0;
}

static int refuse(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    return -MT_EINVAL;
}

int mt_qty_from_pb(Manta__ResourceEntry *const *v, size_t n, size_t max,
                   struct mt_qty_list *l, const char **why)
{
    if (n > max)
        return refuse(why, "too many resources");
    for (size_t i = 0; i < n; i++) {
        int rc;

        if (!mt_qty_valid_name(v[i]->name))
            rc = refuse(why, "bad resource name (1-128 of [A-Za-z0-9._-/:])");
        else if (v[i]->quantity < 0)
            rc = refuse(why, "negative resource quantity");
        else
            rc = mt_qty_list_put(l, v[i]->name, v[i]->quantity);
        if (rc < 0) {
            mt_qty_list_release(l);
            return rc;
        }
    }
    return 0;
}

int mt_kv_from_pb(Manta__Label *const *v, size_t n, size_t max,
                  struct mt_kv_list *l, const char **why)
{
    if (n > max)
        return refuse(why, "too many labels or variables");
    for (size_t i = 0; i < n; i++)
        if (mt_kv_list_put(l, v[i]->key, v[i]->value) < 0) {
            mt_kv_list_release(l);
            return -MT_ENOMEM;
        }
    return 0;
}

int mt_kv_unset_from_pb(char *const *names, size_t n, size_t max,
                        struct mt_kv_list *l, const char **why)
{
    if (n > max)
        return refuse(why, "too many variables to unset");
    if (n && !(l->v = calloc(n, sizeof(*l->v))))
        return -MT_ENOMEM;
    l->cap = n;
    for (; l->n < n; l->n++)
        if (!(l->v[l->n].key = strdup(names[l->n]))) {
            mt_kv_list_release(l);
            return -MT_ENOMEM;
        }
    return 0;
}

int mt_selector_from_pb(Manta__LabelMatch *const *v, size_t n,
                        struct mt_selector *s, const char **why)
{
    if (n > MT_SEL_MAX_EXPRS)
        return refuse(why, "too many label selector expressions (at most 8)");
    for (size_t i = 0; i < n; i++) {
        int rc = mt_selector_add(s, v[i]->key, (enum mt_label_op)v[i]->op,
                                 (const char *const *)v[i]->values,
                                 v[i]->n_values, NULL, 0);
        if (rc < 0) {
            mt_selector_release(s);
            return rc == -MT_ENOMEM ? rc
                                    : refuse(why, "bad label selector "
                                                  "expression");
        }
    }
    return 0;
}

/* Arguments and their references. */
static int args_from_pb(const Manta__TaskSpec *s, struct mt_task_def *d,
                        const char **why)
{
    if (s->n_args > MT_TASK_MAX_ARGS)
        return refuse(why, "too many arguments or code path entries");
    if (s->n_arg_refs && s->n_arg_refs != s->n_args)
        return refuse(why, "arg_refs must have one entry per argument");
    if (!(d->args = calloc(s->n_args + 1, sizeof(*d->args))))
        return -MT_ENOMEM;
    for (; d->nargs < s->n_args; d->nargs++) {
        struct mt_task_arg *g = &d->args[d->nargs];
        const ProtobufCBinaryData *ref = s->n_arg_refs
                                             ? &s->arg_refs[d->nargs] : NULL;

        if (ref && ref->len) {
            if (mt_pb_object_id(ref, &g->ref) < 0)
                return refuse(why, "an object reference must be 20 bytes");
            if (s->args[d->nargs].len)
                return refuse(why, "an argument passed by reference must "
                                   "have no value");
            g->is_ref = true;
            continue;
        }
        g->len = s->args[d->nargs].len;
        if (g->len && !(g->data = malloc(g->len)))
            return -MT_ENOMEM;
        if (g->len)
            memcpy(g->data, s->args[d->nargs].data, g->len);
    }
    return 0;
}

static int strings_from_pb(const Manta__TaskSpec *s, struct mt_task_def *d)
{
    if (mt_def_set_str(&d->name, s->name) < 0 ||
        mt_def_set_str(&d->cwd, s->cwd) < 0 ||
        mt_def_set_str(&d->function, s->function) < 0 ||
        mt_def_set_str(&d->affinity_node, s->affinity_node_id) < 0 ||
        mt_def_set_str(&d->pg_id, s->placement_group_id) < 0 ||
        mt_def_set_str(&d->actor_id, s->actor_id) < 0 ||
        mt_def_set_str(&d->actor_name, s->actor_name) < 0 ||
        mt_def_set_str(&d->owner_id, s->owner_id) < 0)
        return -MT_ENOMEM;
    return 0;
}

static int lists_from_pb(const Manta__TaskSpec *s, struct mt_task_def *d,
                         const char **why)
{
    int rc;

    if (s->n_argv > MT_TASK_MAX_ARGS || s->n_env_unset > MAX_ENV ||
        s->n_code_path > MT_TASK_MAX_CODE_PATH)
        return refuse(why, "too many arguments, variables or code path "
                           "entries");
    if (s->n_resources > MT_TASK_MAX_RES)
        return refuse(why, "too many resource kinds in one task (at most 8)");
    if (mt_def_set_strv(&d->argv, &d->argc, (const char *const *)s->argv,
                        s->n_argv) < 0 ||
        mt_def_set_strv(&d->env_unset, &d->n_env_unset,
                        (const char *const *)s->env_unset,
                        s->n_env_unset) < 0 ||
        mt_def_set_strv(&d->code_path, &d->n_code_path,
                        (const char *const *)s->code_path,
                        s->n_code_path) < 0)
        return -MT_ENOMEM;
    if ((rc = mt_kv_from_pb(s->env, s->n_env, MAX_ENV, &d->env, why)) < 0 ||
        (rc = mt_qty_from_pb(s->resources, s->n_resources, MT_TASK_MAX_RES,
                             &d->res, why)) < 0 ||
        (rc = mt_selector_from_pb(s->label_selector, s->n_label_selector,
                                  &d->sel, why)) < 0)
        return rc;
    return args_from_pb(s, d, why);
}

int mt_task_def_from_pb(const Manta__TaskSpec *s, struct mt_task_def *d,
                        const char **why)
{
    int rc;

    if ((unsigned)s->kind > MANTA__TASK_KIND__TASK_KIND_LEASE)
        return refuse(why, "kind must be TASK_KIND_COMMAND, "
                           "TASK_KIND_FUNCTION, TASK_KIND_LEASE or an actor "
                           "kind");
    if ((unsigned)s->strategy >
        MANTA__SCHEDULING_STRATEGY__STRATEGY_PLACEMENT_GROUP)
        return refuse(why, "unknown scheduling strategy");
    d->kind = (enum mt_task_kind)s->kind;
    d->priority = s->priority;
    d->max_retries =
        s->retries_case == MANTA__TASK_SPEC__RETRIES_MAX_RETRIES
            ? s->max_retries : -1; /* unset: the default */
    d->place = (enum mt_task_place)s->strategy;
    d->affinity_soft = s->affinity_soft;
    d->bundle = s->bundle_index;
    d->detached = s->actor_detached;
    d->max_restarts = s->max_restarts;
    d->hold_result = s->hold_result;
    rc = strings_from_pb(s, d);
    if (rc == 0)
        rc = lists_from_pb(s, d, why);
    if (rc < 0)
        mt_task_def_release(d);
    return rc;
}

static int bundles_from_pb(const Manta__CreatePlacementGroupRequest *r,
                           struct mt_pg_def *p, const char **why)
{
    for (size_t i = 0; i < r->n_bundles; i++) {
        const Manta__BundleSpec *bs = r->bundles[i];
        struct mt_bundle_def *b = mt_pg_def_add_bundle(p);
        int rc;

        if (!b)
            return -MT_ENOMEM;
        if ((rc = mt_qty_from_pb(bs->resources, bs->n_resources,
                                 MT_TASK_MAX_RES, &b->res, why)) < 0 ||
            (rc = mt_selector_from_pb(bs->label_selector,
                                      bs->n_label_selector, &b->sel,
                                      why)) < 0)
            return rc;
    }
    return 0;
}

int mt_pg_def_from_pb(const Manta__CreatePlacementGroupRequest *r,
                      struct mt_pg_def *p, const char **why)
{
    int rc;

    if ((unsigned)r->strategy >
        MANTA__PLACEMENT_STRATEGY__PLACEMENT_STRICT_SPREAD)
        return refuse(why, "unknown placement strategy");
    if (r->n_bundles > MT_PG_DEF_MAX_BUNDLES)
        return refuse(why, "a placement group needs 1 to 1024 bundles");
    p->strategy = (int)r->strategy;
    p->tpu_slices = r->tpu_slices;
    rc = mt_def_set_str(&p->name, r->name);
    if (rc == 0)
        rc = mt_def_set_str(&p->tpu_pod_type, r->tpu_pod_type);
    if (rc == 0)
        rc = mt_def_set_str(&p->tpu_topology, r->tpu_topology);
    if (rc == 0)
        rc = bundles_from_pb(r, p, why);
    if (rc < 0)
        mt_pg_def_release(p);
    return rc;
}

int mt_gang_def_from_pb(const Manta__SubmitGangRequest *r,
                        struct mt_gang_def *g, const char **why)
{
    int rc = 0;

    if ((unsigned)r->launch > MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE)
        return refuse(why, "unknown launch model (host or device)");
    g->slices = r->tpu_slices;
    g->device_launch = r->launch == MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE;
    g->max_restarts = r->max_restarts;
    if (mt_def_set_str(&g->name, r->name) < 0 ||
        mt_def_set_str(&g->pod_type, r->tpu_pod_type) < 0 ||
        mt_def_set_str(&g->topology, r->tpu_topology) < 0)
        rc = -MT_ENOMEM;
    if (rc == 0 && r->member)
        rc = mt_task_def_from_pb(r->member, &g->member, why);
    if (rc < 0)
        mt_gang_def_release(g);
    return rc;
}
