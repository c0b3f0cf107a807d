/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_pg.c -- placement groups in protobuf: CreatePlacementGroup (a view
 * on the options' def, proto/convert.h), WaitPlacementGroup and
 * RemovePlacementGroup, through the client's call to the head
 * (mt__head_call). The one SDK file with their protobuf types.
 *
 * THREAD: the caller's.
 */
#include "sdk/rpc_pg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "head_service.pb-c.h"
#include "proto/convert.h"
#include "proto/list_json.h"
#include "proto/services.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/rpc_reply.h"

static int copy_seen(const Manta__PlacementGroupInfo *g,
                     struct mt__pg_seen *s);

int mt__pg_create(struct mt_client *c, const struct mt_pg_def *d, char *id,
                  size_t idlen, struct mt__pg_seen *seen)
{
    Manta__CreatePlacementGroupRequest req;
    Manta__CreatePlacementGroupReply *r = NULL;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    int rc = mt_pb_pg_request_view(&a, d, &req);

    memset(seen, 0, sizeof(*seen));
    if (rc < 0)
        rc = mt__set_error(c, rc, "out of memory");
    else
        rc = mt__head_call(c, &mt_head_create_pg, &req, c->rpc_timeout_ms,
                           MT__CALL_WAIT | MT__CALL_ONCE, (void **)&r);
    mt_pb_arena_release(&a);
    if (rc < 0)
        return rc;
    if (!r->pg_id || !*r->pg_id || strlen(r->pg_id) >= idlen)
        rc = mt__set_error(c, -MT_EPROTO, "the head returned no group id");
    else
        snprintf(id, idlen, "%s", r->pg_id);
    if (rc == 0 && r->group &&
        r->group->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED &&
        copy_seen(r->group, seen) < 0)
        mt__pg_seen_release(seen); /* out of memory: the wait asks */
    mt__msg_free(r);
    return rc;
}

void mt__pg_seen_release(struct mt__pg_seen *s)
{
    for (size_t i = 0; i < s->n_nodes; i++)
        free(s->nodes[i]);
    free(s->nodes);
    memset(s, 0, sizeof(*s));
}

/* The group as plain C. RET 0, -MT_ENOMEM. */
static int copy_seen(const Manta__PlacementGroupInfo *g,
                     struct mt__pg_seen *s)
{
    s->state = (mt_pg_state)g->state;
    snprintf(s->note, sizeof(s->note), "%s", g->error);
    s->nodes = calloc(g->n_bundle_node_ids + 1, sizeof(*s->nodes));
    if (!s->nodes)
        return -MT_ENOMEM;
    for (; s->n_nodes < g->n_bundle_node_ids; s->n_nodes++)
        if (!(s->nodes[s->n_nodes] = strdup(g->bundle_node_ids[s->n_nodes])))
            return -MT_ENOMEM;
    return 0;
}

int mt__pg_wait_once(struct mt_client *c, const char *id, int slice_ms,
                     struct mt__pg_seen *out)
{
    Manta__WaitPlacementGroupRequest req =
        MANTA__WAIT_PLACEMENT_GROUP_REQUEST__INIT;
    Manta__WaitPlacementGroupReply *r;
    int rc;

    memset(out, 0, sizeof(*out));
    req.pg_id = (char *)id;
    req.timeout_ms = (uint32_t)slice_ms;
    rc = mt__head_call(c, &mt_head_wait_pg, &req,
                       slice_ms + c->rpc_timeout_ms, MT__CALL_WAIT,
                       (void **)&r);
    if (rc < 0)
        return rc;
    if (!r->group)
        rc = mt__set_error(c, -MT_EPROTO, "the head sent no group");
    else if (copy_seen(r->group, out) < 0)
        rc = mt__set_error(c, -MT_ENOMEM, "out of memory");
    mt__msg_free(r);
    if (rc < 0)
        mt__pg_seen_release(out);
    return rc;
}

int mt__pg_remove(struct mt_client *c, const char *id)
{
    Manta__RemovePlacementGroupRequest req =
        MANTA__REMOVE_PLACEMENT_GROUP_REQUEST__INIT;
    void *reply;
    int rc;

    req.pg_id = (char *)id;
    rc = mt__head_call(c, &mt_head_remove_pg, &req, c->rpc_timeout_ms,
                       MT__CALL_WAIT, &reply);
    mt__msg_free(reply);
    return rc;
}

/* ---- ListPlacementGroups ------------------------------------------------- */

/* x as a group view in k. RET 0, -MT_ENOMEM. */
static int fill_pg(struct mt__keep *k, const Manta__PlacementGroupInfo *x,
                   mt_pg_info *g)
{
    size_t n = x->n_bundles;
    const mt_resource **b = mt__keep_alloc(k, (n + 1) * sizeof(*b));
    size_t *sizes = mt__keep_alloc(k, (n + 1) * sizeof(*sizes));

    if (!b || !sizes)
        return -MT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        sizes[i] = x->bundles[i]->n_resources;
        b[i] = mt__res_view(k, x->bundles[i]->resources, sizes[i]);
        if (sizes[i] && !b[i])
            return -MT_ENOMEM;
    }
    g->pg_id = x->pg_id;
    g->name = x->name;
    g->state = (mt_pg_state)x->state;
    g->strategy = (mt_pg_strategy)x->strategy;
    g->n_bundles = n;
    g->bundles = b;
    g->bundle_sizes = sizes;
    g->bundle_nodes = (const char *const *)x->bundle_node_ids;
    g->n_bundle_nodes = x->n_bundle_node_ids;
    g->error = x->error;
    g->create_time_ms = x->create_time_ms;
    return 0;
}

static void render(struct mt_strbuf *sb, const void *reply)
{
    mt_list_json_pgs(sb, reply);
}

int mt__pg_list(struct mt_client *c, const mt_list_filter *f, int state,
                mt_listing *l, struct mt__keep *keep, char **json)
{
    Manta__ListPlacementGroupsRequest req =
        MANTA__LIST_PLACEMENT_GROUPS_REQUEST__INIT;
    const Manta__ListPlacementGroupsReply *r;
    mt_pg_info *v;
    int rc;

    req.limit = f->limit;
    req.offset = f->offset;
    req.state = (Manta__PlacementGroupState)state;
    rc = mt__list_call(c, &mt_head_list_pgs, &req, render, json, keep);
    if (rc < 0 || json)
        return rc;
    r = keep->reply;
    l->total = r->total;
    l->n = r->n_groups;
    v = l->n ? mt__keep_alloc(keep, l->n * sizeof(*v)) : NULL;
    rc = l->n && !v ? -MT_ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < l->n; i++)
        rc = fill_pg(keep, r->groups[i], &v[i]);
    l->pgs = v;
    return rc < 0 ? mt__set_error(c, rc, "out of memory") : 0;
}
