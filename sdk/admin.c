/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admin.c -- the cluster's status and the listings of manta/admin.h, and
 * the cluster queries of manta/client.h.
 *
 * A listing checks its filter here (the kind's state names, the filters
 * the kind has) and is made by the module of its kind (rpc_admin.c for
 * nodes, rpc_task.c, rpc_actor.c, rpc_pg.c, rpc_object.c, rpc_gang.c):
 * plain C views on the head's reply, which the listing keeps (struct
 * mt__keep), or that reply as JSON. This file is the one that knows every
 * module; no module knows it.
 *
 * THREAD: any.
 */
#include "sdk/rpc_admin.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/rpc_actor.h"
#include "sdk/rpc_gang.h"
#include "sdk/rpc_object.h"
#include "sdk/rpc_pg.h"
#include "sdk/rpc_task.h"

/* A listing as handed out: the public part, then what frees it. */
struct listing {
    mt_listing pub;
    struct mt__keep keep;
};

static int bad(const struct mt_client *c, const char *what)
{
    return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL, "%s",
                         what);
}

/* ---- status -------------------------------------------------------------- */

int mt_cluster_status_get(mt_client_t *c, mt_cluster_status **out)
{
    struct mt__status *s;
    int rc;

    if (!mt__client_check(c) || !out)
        return bad(c, "invalid client or out pointer");
    *out = NULL;
    rc = mt__status_get(c, c->rpc_timeout_ms, 0, &s, NULL);
    if (rc == 0)
        *out = &s->pub;
    return rc;
}

void mt_cluster_status_free(mt_cluster_status *st)
{
    if (st)
        mt__status_free((struct mt__status *)((char *)st -
                                              offsetof(struct mt__status,
                                                       pub)));
}

int mt_cluster_status_json(mt_client_t *c, char **json)
{
    if (!mt__client_check(c) || !json)
        return bad(c, "invalid client or out pointer");
    *json = NULL;
    return mt__status_get(c, c->rpc_timeout_ms, 0, NULL, json);
}

int mt_cluster_resources(mt_client_t *c, const char *name, double *total,
                         double *available)
{
    mt_cluster_status *st;
    int rc;

    if (!mt__client_check(c) || !name)
        return bad(c, "invalid client or resource name");
    if ((rc = mt_cluster_status_get(c, &st)) < 0)
        return rc;
    if (total)
        *total = 0;
    if (available)
        *available = 0;
    for (size_t i = 0; i < st->n_total; i++)
        if (total && strcmp(st->total[i].name, name) == 0)
            *total = st->total[i].amount;
    for (size_t i = 0; i < st->n_available; i++)
        if (available && strcmp(st->available[i].name, name) == 0)
            *available = st->available[i].amount;
    mt_cluster_status_free(st);
    return 0;
}

int mt_cluster_nodes(mt_client_t *c)
{
    mt_cluster_status *st;
    int rc, alive = 0;

    if (!mt__client_check(c))
        return bad(c, "invalid client");
    if ((rc = mt_cluster_status_get(c, &st)) < 0)
        return rc;
    for (size_t i = 0; i < st->n_nodes; i++)
        alive += st->nodes[i].alive;
    mt_cluster_status_free(st);
    return alive;
}

/* ---- filters ------------------------------------------------------------- */

void mt_list_filter_init(mt_list_filter *f)
{
    memset(f, 0, sizeof(*f));
    f->size = sizeof(*f);
}

static const char *node_state_name(int s)
{
    return s == 1 ? "ALIVE" : s == 2 ? "DEAD" : "UNKNOWN";
}

static const char *task_state(int s) { return mt_task_state_name(s); }
static const char *actor_state(int s) { return mt_actor_state_name(s); }
static const char *pg_state(int s) { return mt_pg_state_name(s); }
static const char *object_state(int s) { return mt_object_state_name(s); }
static const char *gang_state(int s) { return mt_gang_state_name(s); }

/* What each kind lists, how its states are named, which filters it has. */
typedef int (*list_fn)(struct mt_client *c, const mt_list_filter *f,
                       int state, mt_listing *l, struct mt__keep *keep,
                       char **json);

static const struct kind {
    const char *name;
    list_fn list;
    const char *(*state_name)(int s);
    int n_states;                 /* states 1..n_states */
    bool by_node, by_name;
} kinds[] = {
    [MT_LIST_NODES] = {"nodes", mt__node_list, node_state_name, 2, true,
                       false},
    [MT_LIST_TASKS] = {"tasks", mt__task_list, task_state,
                       MT_TASK_STATE_CANCELLED, true, true},
    [MT_LIST_ACTORS] = {"actors", mt__actor_list, actor_state,
                        MT_ACTOR_STATE_DEAD, false, true},
    [MT_LIST_PLACEMENT_GROUPS] = {"placement groups", mt__pg_list, pg_state,
                                  MT_PG_STATE_REMOVED, false, false},
    [MT_LIST_OBJECTS] = {"objects", mt__object_list, object_state,
                         MT_OBJECT_STATE_FAILED, true, false},
    [MT_LIST_GANGS] = {"gangs", mt__gang_list, gang_state, MT_GANG_CANCELLED,
                       false, false},
};

/* Check f for kind k; copy what the caller's (maybe older) struct has into
 * out; out_state: the state's value, 0 for any. RET 0, -MT_EINVAL. */
static int check_filter(struct mt_client *c, const struct kind *k,
                        const mt_list_filter *f, mt_list_filter *out,
                        int *out_state)
{
    mt_list_filter_init(out);
    *out_state = 0;
    if (!f)
        return 0;
    if (f->size < offsetof(mt_list_filter, name) + sizeof(f->name))
        return bad(c, "mt_list_filter.size is too small: call "
                      "mt_list_filter_init() first");
    memcpy(out, f, f->size < sizeof(*out) ? f->size : sizeof(*out));
    out->size = sizeof(*out);
    if ((f->node_id && !k->by_node) || (f->name && !k->by_name))
        return mt__set_error(c, -MT_EINVAL, "%s cannot be filtered by %s",
                             k->name, f->node_id ? "node" : "name");
    if (out->owner_id && k->list != mt__task_list)
        return mt__set_error(c, -MT_EINVAL, "%s cannot be filtered by "
                             "driver", k->name);
    if (!f->state)
        return 0;
    for (int s = 1; s <= k->n_states; s++)
        if (strcasecmp(f->state, k->state_name(s)) == 0)
            *out_state = s;
    if (!*out_state)
        return mt__set_error(c, -MT_EINVAL, "%s have no state '%.64s'",
                             k->name, f->state);
    return 0;
}

/* Look up kind and check the filter. RET the kind, or NULL (recorded). */
static const struct kind *prepare(struct mt_client *c, mt_list_kind kind,
                                  const mt_list_filter *f, mt_list_filter *fc,
                                  int *state)
{
    if (!mt__client_check(c)) {
        bad(c, "invalid client");
        return NULL;
    }
    if ((int)kind < MT_LIST_NODES || kind > MT_LIST_GANGS) {
        mt__set_error(c, -MT_EINVAL, "unknown listing kind %d", (int)kind);
        return NULL;
    }
    if (check_filter(c, &kinds[kind], f, fc, state) < 0)
        return NULL;
    return &kinds[kind];
}

/* ---- listings ------------------------------------------------------------ */

int mt_list(mt_client_t *c, mt_list_kind kind, const mt_list_filter *f,
            mt_listing **out)
{
    const struct kind *k;
    struct listing *l;
    mt_list_filter fc;
    int state, rc;

    if (!out)
        return bad(c, "out is NULL");
    *out = NULL;
    if (!(k = prepare(c, kind, f, &fc, &state)))
        return -MT_EINVAL;
    if (!(l = calloc(1, sizeof(*l))))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    l->pub.kind = kind;
    rc = k->list(c, &fc, state, &l->pub, &l->keep, NULL);
    if (rc < 0) {
        mt_listing_free(&l->pub);
        return rc;
    }
    *out = &l->pub;
    return 0;
}

void mt_listing_free(mt_listing *pub)
{
    struct listing *l;

    if (!pub)
        return;
    l = (struct listing *)((char *)pub - offsetof(struct listing, pub));
    mt__keep_release(&l->keep);
    free(l);
}

int mt_list_json(mt_client_t *c, mt_list_kind kind, const mt_list_filter *f,
                 char **json)
{
    const struct kind *k;
    struct mt__keep keep = {0};
    mt_listing l = {0};
    mt_list_filter fc;
    int state, rc;

    if (!json)
        return bad(c, "json is NULL");
    *json = NULL;
    if (!(k = prepare(c, kind, f, &fc, &state)))
        return -MT_EINVAL;
    rc = k->list(c, &fc, state, &l, &keep, json);
    mt__keep_release(&keep); /* nodes keep their reply even for JSON */
    return rc;
}
