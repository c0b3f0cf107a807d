/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_objects.c -- the object directory's rpc adapter: RegisterObjects,
 * ReleaseObjects, ReportOrphans, GetObject and ListObjects over
 * objects.h. A GetObject on a PENDING object with a timeout is parked on
 * the object until it settles (the directory's settled callback) or the
 * caller gives up. Registrations name the putting client's session
 * (owner_id): one that is not open is refused, its client being gone.
 *
 * THREAD: the head's loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "head/rpc_services.h"
#include "head_service.pb-c.h"
#include "proto/convert.h"
#include "proto/list_json.h"
#include "proto/services.h"

#define LIST_DEFAULT 100
#define LIST_MAX 100000
#define MAX_IDS 100000
#define MAX_OWNER 128

/* A GetObject call parked while its object is PENDING. */
struct mt_obj_get {
    struct mt_obj_get *next;
    struct mt_head *h;
    struct mt_rpc_call *call;
    mt_object_id id;
    char fetch_to[128];
};

static struct mt_obj_table *tab(struct mt_head *h)
{
    return mt_head_objects_table(h->objects);
}

static struct mt_node *alive_node(struct mt_head *h, const char *id)
{
    struct mt_node *n = mt_node_table_find(mt_head_nodes_table(h->nodes), id);

    return n && n->state == MT_NODE_ALIVE ? n : NULL;
}

static struct mt_node *node_by_address(struct mt_head *h, const char *addr)
{
    struct mt_node_table *t = mt_head_nodes_table(h->nodes);

    for (size_t i = 0; i < t->n; i++)
        if (t->v[i]->state == MT_NODE_ALIVE &&
            strcmp(t->v[i]->address, addr) == 0)
            return t->v[i];
    return NULL;
}

/* ---- records and GetObject answers ----------------------------------------- */

/* Fill r from o; pointers borrowed from o. */
static void fill_record(const struct mt_obj *o, Manta__ObjectRecord *r)
{
    manta__object_record__init(r);
    r->object_id.data = (uint8_t *)o->node.id.b;
    r->object_id.len = MT_OBJECT_ID_LEN;
    r->state = (Manta__ObjectState)o->state;
    r->size = o->size;
    r->n_node_ids = o->n_nodes;
    r->node_ids = o->nodes;
    r->is_inline = o->is_inline;
    r->owner = o->owner;
    r->ref_count = o->refs;
    r->error = o->error ? o->error : (char *)"";
}

static void reply_get(struct mt_head *h, struct mt_rpc_call *call,
                      struct mt_obj *o, const char *fetch_to)
{
    Manta__GetObjectReply reply = MANTA__GET_OBJECT_REPLY__INIT;
    Manta__ObjectRecord rec;
    struct mt_node *dest = NULL;
    char **addrs = mt_xcalloc(o->n_nodes + 1, sizeof(*addrs));
    size_t n = 0;

    for (size_t i = 0; i < o->n_nodes; i++) {
        struct mt_node *nd = alive_node(h, o->nodes[i]);
        if (nd)
            addrs[n++] = nd->address;
    }
    if (o->state == MT_OBJ_READY && !o->is_inline && fetch_to && *fetch_to)
        dest = node_by_address(h, fetch_to);
    fill_record(o, &rec);
    reply.object = &rec;
    reply.holder_addresses = addrs;
    reply.n_holder_addresses = n;
    if (o->is_inline) {
        reply.inline_data.data = o->data;
        reply.inline_data.len = o->size;
    }
    mt_rpc_reply(call, &reply.base);
    free(addrs);
    if (dest) {
        mt_obj_add_node(o, dest->id); /* the caller pulls a copy there */
        mt_obj_touch(mt_head_objects_table(h->objects), o);
    }
}

/* o settled: answer every parked GetObject. */
static void on_settled(void *arg, struct mt_obj *o)
{
    struct mt_head *h = arg;
    struct mt_obj_get *g;

    while ((g = o->gets)) {
        o->gets = g->next;
        mt_rpc_call_on_cancel(g->call, NULL, NULL);
        reply_get(h, g->call, o, g->fetch_to);
        free(g);
    }
}

static void on_get_cancel(void *arg)
{
    struct mt_obj_get *g = arg, **pp;
    struct mt_head *h = g->h;
    struct mt_obj *o = mt_obj_find(tab(h), &g->id);

    mt_rpc_fail(g->call, -MT_ETIMEDOUT, "the object is still pending");
    for (pp = o ? &o->gets : NULL; pp && *pp; pp = &(*pp)->next) {
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    }
    free(g);
    if (o)
        mt_head_objects_maybe_free(h->objects, o);
}

static void start(struct mt_head *h)
{
    mt_head_objects_on_settled(h->objects, on_settled, h);
}

static void stop(struct mt_head *h)
{
    struct mt_idmap_node *n;

    for (n = mt_idmap_first(&tab(h)->map); n;
         n = mt_idmap_next(&tab(h)->map, n)) {
        struct mt_obj *o = MT_CONTAINER_OF(n, struct mt_obj, node);
        struct mt_obj_get *g;

        while ((g = o->gets)) {
            o->gets = g->next;
            mt_rpc_call_on_cancel(g->call, NULL, NULL);
            mt_rpc_fail(g->call, -MT_EUNAVAIL, "head is shutting down");
            free(g);
        }
    }
}

/* ---- handlers ------------------------------------------------------------------ */

static void h_register_objects(struct mt_rpc_call *call,
                               const ProtobufCMessage *m, void *arg)
{
    const Manta__RegisterObjectsRequest *req =
        (const Manta__RegisterObjectsRequest *)m;
    Manta__RegisterObjectsReply reply = MANTA__REGISTER_OBJECTS_REPLY__INIT;
    struct mt_head *h = arg;
    mt_object_id id;

    if (!alive_node(h, req->node_id)) {
        mt_rpc_fail(call, -MT_EINVAL, "node_id is not a live node");
        return;
    }
    if (req->n_objects > MAX_IDS || strlen(req->owner_id) > MAX_OWNER) {
        mt_rpc_fail(call, -MT_EINVAL, "too many objects in one call, or an "
                    "owner_id over 128 bytes");
        return;
    }
    for (size_t i = 0; i < req->n_objects; i++)
        if (mt_pb_object_id(&req->objects[i]->object_id, &id) < 0) {
            mt_rpc_fail(call, -MT_EINVAL, "object ids are 20 bytes");
            return;
        }
    for (size_t i = 0; i < req->n_objects; i++) {
        mt_pb_object_id(&req->objects[i]->object_id, &id);
        if (mt_head_objects_put(h->objects, req->node_id, &id,
                                req->objects[i]->size, req->owner_id) < 0) {
            mt_rpc_fail(call, -MT_ECLOSED, "the putting client's session "
                        "is not open (it went away)");
            return;
        }
    }
    mt_rpc_reply(call, &reply.base);
}

static void h_release_objects(struct mt_rpc_call *call,
                              const ProtobufCMessage *m, void *arg)
{
    const Manta__ReleaseObjectsRequest *req =
        (const Manta__ReleaseObjectsRequest *)m;
    Manta__ReleaseObjectsReply reply = MANTA__RELEASE_OBJECTS_REPLY__INIT;
    struct mt_head *h = arg;
    mt_object_id id;

    if (strlen(req->owner_id) > MAX_OWNER) {
        mt_rpc_fail(call, -MT_EINVAL, "owner_id is at most 128 bytes");
        return;
    }
    for (size_t i = 0; i < req->n_object_ids; i++)
        if (mt_pb_object_id(&req->object_ids[i], &id) < 0 ||
            !mt_head_objects_release(h->objects, &id, req->owner_id))
            reply.unknown++;
    mt_rpc_reply(call, &reply.base);
}

static void h_report_orphans(struct mt_rpc_call *call,
                             const ProtobufCMessage *m, void *arg)
{
    const Manta__ReportOrphansRequest *req =
        (const Manta__ReportOrphansRequest *)m;
    Manta__ReportOrphansReply reply = MANTA__REPORT_ORPHANS_REPLY__INIT;
    ProtobufCBinaryData *unknown;
    struct mt_head *h = arg;
    mt_object_id id;

    if (!alive_node(h, req->node_id) || req->n_object_ids > MAX_IDS) {
        mt_rpc_fail(call, -MT_EINVAL, "node_id is not a live node, or too "
                    "many ids in one call");
        return;
    }
    unknown = mt_xcalloc(req->n_object_ids + 1, sizeof(*unknown));
    for (size_t i = 0; i < req->n_object_ids; i++)
        if (mt_pb_object_id(&req->object_ids[i], &id) == 0 &&
            !mt_head_objects_known(h->objects, &id))
            unknown[reply.n_unknown++] = req->object_ids[i];
    if (reply.n_unknown)
        MT_DEBUG("node %s: %zu puts of clients that went away are unknown "
                 "here (never registered, or freed already)", req->node_id,
                 reply.n_unknown);
    reply.unknown = unknown;
    mt_rpc_reply(call, &reply.base);
    free(unknown);
}

static void h_get_object(struct mt_rpc_call *call, const ProtobufCMessage *m,
                         void *arg)
{
    const Manta__GetObjectRequest *req = (const Manta__GetObjectRequest *)m;
    struct mt_head *h = arg;
    char hex[MT_OBJECT_ID_HEX_LEN + 1], msg[160];
    struct mt_obj_get *g;
    struct mt_obj *o;
    mt_object_id id;

    if (mt_pb_object_id(&req->object_id, &id) < 0) {
        mt_rpc_fail(call, -MT_EINVAL, "object ids are 20 bytes");
        return;
    }
    o = req->timeout_ms ? mt_head_objects_awaited(h->objects, &id)
                        : mt_obj_find(tab(h), &id);
    if (!o) {
        snprintf(msg, sizeof(msg), "object %s is unknown to the head (never "
                 "put, or already released)", mt_object_id_hex(&id, hex));
        mt_rpc_fail(call, -MT_ENOENT, msg);
        return;
    }
    if (o->state != MT_OBJ_PENDING || req->timeout_ms == 0) {
        reply_get(h, call, o, req->fetch_to);
        return;
    }
    g = mt_xcalloc(1, sizeof(*g));
    g->h = h;
    g->call = call;
    g->id = id;
    snprintf(g->fetch_to, sizeof(g->fetch_to), "%s",
             req->fetch_to ? req->fetch_to : "");
    g->next = o->gets;
    o->gets = g;
    mt_rpc_call_on_cancel(call, on_get_cancel, g);
}

static int by_seq_desc(const void *a, const void *b)
{
    const struct mt_obj *x = *(struct mt_obj *const *)a;
    const struct mt_obj *y = *(struct mt_obj *const *)b;

    return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

/* ListObjects' reply (see list_release), for the rpc and /api/objects. */
struct obj_list {
    struct mt_obj **all;
    Manta__ObjectRecord *recs;
    Manta__ObjectRecord **ptrs;
};

static void list_build(struct mt_head *h, const Manta__ListObjectsRequest *req,
                       struct obj_list *l, Manta__ListObjectsReply *reply)
{
    struct mt_idmap_node *nd;
    size_t n = 0, max, first;

    l->all = mt_xcalloc(tab(h)->map.count + 1, sizeof(*l->all));
    for (nd = mt_idmap_first(&tab(h)->map); nd;
         nd = mt_idmap_next(&tab(h)->map, nd)) {
        struct mt_obj *o = MT_CONTAINER_OF(nd, struct mt_obj, node);

        if ((!req->state || (int)req->state == (int)o->state) &&
            (!*req->node_id || mt_obj_has_node(o, req->node_id)))
            l->all[n++] = o;
    }
    qsort(l->all, n, sizeof(*l->all), by_seq_desc);
    max = req->limit ? (req->limit > LIST_MAX ? LIST_MAX : req->limit)
                     : LIST_DEFAULT;
    first = req->offset < n ? req->offset : n;
    if (max > n - first)
        max = n - first;
    l->recs = mt_xcalloc(max + 1, sizeof(*l->recs));
    l->ptrs = mt_xcalloc(max + 1, sizeof(*l->ptrs));
    for (size_t i = 0; i < max; i++) {
        fill_record(l->all[first + i], &l->recs[i]);
        l->ptrs[i] = &l->recs[i];
    }
    manta__list_objects_reply__init(reply);
    reply->objects = l->ptrs;
    reply->n_objects = max;
    reply->total = n;
}

static void list_release(struct obj_list *l)
{
    free(l->recs);
    free(l->ptrs);
    free(l->all);
}

static void h_list_objects(struct mt_rpc_call *call, const ProtobufCMessage *m,
                           void *arg)
{
    Manta__ListObjectsReply reply;
    struct obj_list l;

    list_build(arg, (const Manta__ListObjectsRequest *)m, &l, &reply);
    mt_rpc_reply(call, &reply.base);
    list_release(&l);
}

static void list_json(struct mt_head *h,
                      const struct mt_head_list_query *q,
                      struct mt_strbuf *out)
{
    Manta__ListObjectsRequest req = MANTA__LIST_OBJECTS_REQUEST__INIT;
    Manta__ListObjectsReply reply;
    struct obj_list l;

    req.limit = q->limit;
    req.offset = q->offset;
    req.state = (Manta__ObjectState)q->state;
    req.node_id = (char *)(q->node_id ? q->node_id : "");
    list_build(h, &req, &l, &reply);
    mt_list_json_objects(out, &reply);
    list_release(&l);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_head_register_objects, h_register_objects},
    {&mt_head_release_objects, h_release_objects},
    {&mt_head_report_orphans, h_report_orphans},
    {&mt_head_get_object, h_get_object},
    {&mt_head_list_objects, h_list_objects},
    {NULL, NULL},
};

const struct mt_head_adapter mt_head_rpc_objects = {
    .handlers = handlers,
    .list_json = list_json,
    .start = start,
    .stop = stop,
};
