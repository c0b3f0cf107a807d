/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_objects.c -- the head's object service, rpc side: RegisterObjects,
 * ReleaseObjects, GetObject and ListObjects; and the rules that tie the
 * object directory (objects.h) to tasks: a function task's result object,
 * arguments passed by reference (WAITING_FOR_ARGS until every one is
 * READY), references held by tasks until they end, holders told to delete
 * their copies when the last reference goes, copies dropped when a node
 * dies.
 *
 * DESIGN: the head never moves object bytes except small inline values
 * (<= MT_OBJ_INLINE_MAX). A task's RunTask request lists, per reference
 * argument, the inline value or the addresses of the workers holding it;
 * the worker pulls what it lacks. The head records the destination of such
 * a pull (and of a GetObject with fetch_to) as a copy at once, so that the
 * copy is deleted with the others; a pull that failed leaves a stale entry
 * that fetchers skip (they try each holder in turn).
 *
 * THREAD: the head's loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "head/obj_table.h"
#include "head/taskq.h"
#include "head_service.pb-c.h"
#include "proto/services.h"
#include "worker_service.pb-c.h"

#define DELETE_TIMEOUT_MS 10000
#define LIST_DEFAULT 100
#define LIST_MAX 100000
#define MAX_IDS 100000
#define MT_NODES_PER_ARG 8
#define DEP_FAILED "dependency failed: " /* holder addresses sent per argument */

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
    return &h->tq->objs;
}

static int take_id(const ProtobufCBinaryData *b, mt_object_id *id)
{
    if (b->len != MT_OBJECT_ID_LEN)
        return -MT_EINVAL;
    memcpy(id->b, b->data, MT_OBJECT_ID_LEN);
    return 0;
}

static struct mt_node *alive_node(struct mt_head *h, const char *id)
{
    struct mt_node *n = mt_node_table_find(&h->nodes, id);

    return n && n->state == MT_NODE_ALIVE ? n : NULL;
}

static struct mt_node *node_by_address(struct mt_head *h, const char *addr)
{
    for (size_t i = 0; i < h->nodes.n; i++)
        if (h->nodes.v[i]->state == MT_NODE_ALIVE &&
            strcmp(h->nodes.v[i]->address, addr) == 0)
            return h->nodes.v[i];
    return NULL;
}

/* ---- freeing copies ---------------------------------------------------------- */

static void on_delete_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    if (st->code)
        MT_DEBUG("DeleteObjects failed: %s", st->message);
}

static void send_delete(struct mt_head *h, const char *node_id,
                        const mt_object_id *id)
{
    Manta__DeleteObjectsRequest req = MANTA__DELETE_OBJECTS_REQUEST__INIT;
    struct mt_node *n = alive_node(h, node_id);
    struct mt_rpc_channel *ch = n ? mt__link_get(h, n) : NULL;
    ProtobufCBinaryData b;

    if (!ch)
        return;
    b.data = (uint8_t *)id->b;
    b.len = MT_OBJECT_ID_LEN;
    req.n_object_ids = 1;
    req.object_ids = &b;
    mt_rpc_unary(ch, &mt_worker_delete_objects, &req.base, DELETE_TIMEOUT_MS,
                 0, on_delete_done, NULL);
}

/* Free o when nothing refers to it: every holder deletes its copy. */
static void obj_maybe_free(struct mt_head *h, struct mt_obj *o)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1];

    if (!mt_obj_freeable(o) || o->gets)
        return;
    MT_DEBUG("object %s freed (%zu copies)", mt_object_id_hex(&o->node.id, hex),
             o->n_nodes);
    for (size_t i = 0; i < o->n_nodes; i++)
        send_delete(h, o->nodes[i], &o->node.id);
    mt_obj_free(tab(h), o);
}

static void obj_unref(struct mt_head *h, struct mt_obj *o)
{
    if (o->refs)
        o->refs--;
    obj_maybe_free(h, o);
}

/* ---- records and GetObject answers ----------------------------------------- */

/* Fill r from o; pointers borrowed from o (ids from idbuf). */
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
    if (dest)
        mt_obj_add_node(o, dest->id); /* the caller pulls a copy there */
}

/* Answer every parked GetObject of o (it left PENDING). */
static void answer_gets(struct mt_head *h, struct mt_obj *o)
{
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
    struct mt_obj *o = h->tq ? mt_obj_find(tab(h), &g->id) : NULL;

    mt_rpc_fail(g->call, -MT_ETIMEDOUT, "the object is still pending");
    for (pp = o ? &o->gets : NULL; pp && *pp; pp = &(*pp)->next) {
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    }
    free(g);
    if (o)
        obj_maybe_free(h, o);
}

/* ---- tasks ------------------------------------------------------------------- */

/* Tasks waiting for o: each loses one missing argument; at zero it is
 * queued. With why set instead, each fails with that text. */
static void wake_waiters(struct mt_head *h, struct mt_obj *o, const char *why)
{
    uint64_t *w = o->waiters;
    size_t n = o->n_waiters;

    o->waiters = NULL;
    o->n_waiters = o->cap_waiters = 0;
    o->refs++; /* keep o while dependents end */
    for (size_t i = 0; i < n; i++) {
        struct mt_task *t = mt_task_find(&h->tq->table, w[i]);

        if (!t || t->state != MT_TASK_WAITING_FOR_ARGS || !t->deps)
            continue;
        if (why) {
            mt__task_fail(h, t, why);
        } else if (t->deps->missing && --t->deps->missing == 0) {
            mt__task_args_ready(h, t);
        }
    }
    free(w);
    o->refs--; /* the caller frees o if nothing else holds it */
}

static void id_hex(const mt_object_id *id, char *buf)
{
    mt_object_id_hex(id, buf);
}

/* RET NULL or why the task's arg_refs cannot be accepted. */
static const char *check_refs(struct mt_head *h, const Manta__TaskSpec *s,
                              size_t *nrefs, char *buf, size_t len)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1];
    mt_object_id id;

    *nrefs = 0;
    if (s->n_arg_refs == 0)
        return NULL;
    if (s->kind != MANTA__TASK_KIND__TASK_KIND_FUNCTION)
        return "object arguments need a function task";
    if (s->n_arg_refs != s->n_args)
        return "arg_refs must have one entry per argument";
    for (size_t i = 0; i < s->n_arg_refs; i++) {
        if (s->arg_refs[i].len == 0)
            continue;
        if (take_id(&s->arg_refs[i], &id) < 0)
            return "an object reference must be 20 bytes";
        if (s->args[i].len)
            return "an argument passed by reference must have no value";
        if (!mt_obj_find(tab(h), &id)) {
            id_hex(&id, hex);
            snprintf(buf, len, "argument %zu: object %s is unknown to the "
                     "head (never put, or already released)", i, hex);
            return buf;
        }
        (*nrefs)++;
    }
    return NULL;
}

int mt__objects_on_submit(struct mt_head *h, struct mt_task *t,
                          const Manta__TaskSpec *s, char *why, size_t len)
{
    const char *bad;
    struct mt_task_deps *d;
    struct mt_obj *o;
    mt_object_id id;
    size_t nrefs, k = 0;
    int rc = 0;

    bad = check_refs(h, s, &nrefs, why, len);
    if (bad) {
        if (bad != why)
            snprintf(why, len, "%s", bad);
        return strstr(why, "unknown") ? -MT_ENOENT : -MT_EINVAL;
    }
    if (s->kind == MANTA__TASK_KIND__TASK_KIND_FUNCTION &&
        mt_object_id_for_task(t->id, &id) == 0 && !mt_obj_find(tab(h), &id)) {
        char owner[32];
        snprintf(owner, sizeof(owner), "task %s", t->id);
        mt_obj_new(tab(h), &id, MT_OBJ_PENDING, owner, s->hold_result ? 1 : 0);
    }
    if (nrefs == 0)
        return 0;
    d = mt_xcalloc(1, sizeof(*d) + nrefs * sizeof(d->ids[0]));
    for (size_t i = 0; i < s->n_arg_refs; i++) {
        if (s->arg_refs[i].len == 0)
            continue;
        take_id(&s->arg_refs[i], &id);
        o = mt_obj_find(tab(h), &id);
        o->refs++;
        d->ids[k++] = id;
        if (o->state == MT_OBJ_PENDING) {
            d->missing++;
            mt_obj_add_waiter(o, t->num);
        } else if (o->state != MT_OBJ_READY && rc == 0) {
            if (o->state == MT_OBJ_LOST)
                snprintf(why, len, "argument %zu: %s", i,
                         o->error ? o->error : "object lost");
            else
                snprintf(why, len, DEP_FAILED "%s", o->error ? o->error
                                                             : "?");
            rc = 2;
        }
    }
    d->n = (uint32_t)k;
    t->deps = d;
    if (rc == 0 && d->missing)
        rc = 1;
    return rc;
}

void mt__objects_on_task_end(struct mt_head *h, struct mt_task *t)
{
    struct mt_task_deps *d = t->deps;
    struct mt_obj *o;
    mt_object_id id;
    char *why;

    t->deps = NULL;
    for (uint32_t i = 0; d && i < d->n; i++)
        if ((o = mt_obj_find(tab(h), &d->ids[i])))
            obj_unref(h, o);
    free(d);
    if (mt_object_id_for_task(t->id, &id) < 0 ||
        !(o = mt_obj_find(tab(h), &id)) || o->state != MT_OBJ_PENDING)
        return;
    if (t->state == MT_TASK_FINISHED) { /* finished without a result */
        mt_obj_set_inline(o, NULL, 0);
        o->state = MT_OBJ_READY;
        answer_gets(h, o);
        wake_waiters(h, o, NULL);
        obj_maybe_free(h, o);
        return;
    }
    /* The root cause, however long the chain: "task T failed: boom". */
    if (t->error && strncmp(t->error, DEP_FAILED, strlen(DEP_FAILED)) == 0)
        why = mt_xstrdup(t->error + strlen(DEP_FAILED));
    else
        why = mt_xasprintf("task %s %s: %s", t->id,
                           t->state == MT_TASK_CANCELLED ? "was cancelled"
                                                         : "failed",
                           t->error ? t->error : "no reason given");
    mt_obj_set_error(o, MT_OBJ_FAILED, why);
    free(why);
    answer_gets(h, o);
    why = mt_xasprintf(DEP_FAILED "%s", o->error);
    wake_waiters(h, o, why);
    free(why);
    obj_maybe_free(h, o);
}

void mt__objects_on_result(struct mt_head *h, struct mt_task *t,
                           const char *node_id, const void *data, size_t len,
                           bool in_store, uint64_t size)
{
    struct mt_obj *o;
    mt_object_id id;

    if (mt_object_id_for_task(t->id, &id) < 0)
        return;
    t->result_in_store = in_store;
    t->result_size = in_store ? size : len;
    o = mt_obj_find(tab(h), &id);
    if (!o && in_store && t->kind == MANTA__TASK_KIND__TASK_KIND_COMMAND) {
        /* A command task's result (worker/task_result.h): registered now,
         * with one reference kept for whoever reads it, until released. */
        char owner[32];
        snprintf(owner, sizeof(owner), "task %s", t->id);
        o = mt_obj_new(tab(h), &id, MT_OBJ_PENDING, owner, 1);
    }
    if (!o) { /* nobody holds it (released early): drop the copy */
        if (in_store)
            send_delete(h, node_id, &id);
        return;
    }
    if (in_store) {
        o->size = size;
        mt_obj_add_node(o, node_id);
    } else if (o->state == MT_OBJ_PENDING) {
        mt_obj_set_inline(o, data, len);
    }
    if (o->state != MT_OBJ_PENDING)
        return;
    o->state = MT_OBJ_READY;
    answer_gets(h, o);
    wake_waiters(h, o, NULL);
    obj_maybe_free(h, o);
}

void mt__objects_node_down(struct mt_head *h, const char *node_id)
{
    struct mt_idmap_node *n, *nx;

    for (n = mt_idmap_first(&tab(h)->map); n; n = nx) {
        struct mt_obj *o = MT_CONTAINER_OF(n, struct mt_obj, node);
        char *why;

        nx = mt_idmap_next(&tab(h)->map, n);
        if (!mt_obj_drop_node(o, node_id) || o->n_nodes || o->is_inline ||
            o->state != MT_OBJ_READY)
            continue;
        why = mt_xasprintf("object lost: its only copy was on node %s, which "
                           "died", node_id);
        mt_obj_set_error(o, MT_OBJ_LOST, why);
        free(why);
        obj_maybe_free(h, o);
    }
}

/* Storage for the object arguments of one RunTask request. */
struct mt_run_objs {
    Manta__ObjectArg *v;
    Manta__ObjectArg **p;
    char **addrs;        /* borrowed strings, per arg a slice */
};

void *mt__objects_fill_run(struct mt_head *h, const struct mt_node *dest,
                           Manta__RunTaskRequest *req)
{
    const Manta__TaskSpec *s = req->spec;
    struct mt_run_objs *r;
    size_t k = 0, na = 0;

    if (!s || s->n_arg_refs == 0)
        return NULL;
    r = mt_xcalloc(1, sizeof(*r));
    r->v = mt_xcalloc(s->n_arg_refs, sizeof(*r->v));
    r->p = mt_xcalloc(s->n_arg_refs, sizeof(*r->p));
    r->addrs = mt_xcalloc(s->n_arg_refs * MT_NODES_PER_ARG + 1,
                          sizeof(*r->addrs));
    for (size_t i = 0; i < s->n_arg_refs; i++) {
        Manta__ObjectArg *a = &r->v[k];
        struct mt_obj *o;
        mt_object_id id;

        if (take_id(&s->arg_refs[i], &id) < 0 ||
            !(o = mt_obj_find(tab(h), &id)))
            continue;
        manta__object_arg__init(a);
        a->index = (uint32_t)i;
        a->object_id = s->arg_refs[i];
        a->size = o->size;
        a->is_inline = o->is_inline;
        if (o->is_inline) {
            a->inline_data.data = o->data;
            a->inline_data.len = o->size;
        }
        a->holder_addresses = &r->addrs[na];
        for (size_t j = 0; j < o->n_nodes && a->n_holder_addresses <
                                                 MT_NODES_PER_ARG; j++) {
            struct mt_node *nd = alive_node(h, o->nodes[j]);
            if (nd && nd != dest)
                a->holder_addresses[a->n_holder_addresses++] = nd->address;
        }
        na += a->n_holder_addresses;
        if (!o->is_inline && dest && o->state == MT_OBJ_READY)
            mt_obj_add_node(o, dest->id); /* the worker pulls a copy */
        r->p[k++] = a;
    }
    req->object_args = r->p;
    req->n_object_args = k;
    return r;
}

void mt__objects_free_run(void *run)
{
    struct mt_run_objs *r = run;

    if (!r)
        return;
    free(r->v);
    free(r->p);
    free(r->addrs);
    free(r);
}

bool mt__objects_affinity(struct mt_head *h, const Manta__TaskSpec *s,
                          uint32_t *handle)
{
    uint64_t best = 0;
    bool found = false;

    for (size_t i = 0; i < s->n_arg_refs; i++) {
        struct mt_obj *o;
        mt_object_id id;

        if (take_id(&s->arg_refs[i], &id) < 0 ||
            !(o = mt_obj_find(tab(h), &id)) || o->is_inline ||
            o->state != MT_OBJ_READY || o->size <= best)
            continue;
        for (size_t j = 0; j < o->n_nodes; j++) {
            struct mt_node *nd = alive_node(h, o->nodes[j]);
            if (nd && nd->sched_node != UINT32_MAX) {
                *handle = nd->sched_node;
                best = o->size;
                found = true;
                break;
            }
        }
    }
    return found;
}

void mt__objects_close(struct mt_head *h)
{
    struct mt_idmap_node *n;

    for (n = mt_idmap_first(&tab(h)->map); n; n = mt_idmap_next(&tab(h)->map,
                                                                 n)) {
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

void mt__h_register_objects(struct mt_rpc_call *call,
                            const ProtobufCMessage *m, void *arg)
{
    const Manta__RegisterObjectsRequest *req =
        (const Manta__RegisterObjectsRequest *)m;
    Manta__RegisterObjectsReply reply = MANTA__REGISTER_OBJECTS_REPLY__INIT;
    struct mt_head *h = arg;
    char owner[128];
    mt_object_id id;

    if (!alive_node(h, req->node_id)) {
        mt_rpc_fail(call, -MT_EINVAL, "node_id is not a live node");
        return;
    }
    if (req->n_objects > MAX_IDS) {
        mt_rpc_fail(call, -MT_EINVAL, "too many objects in one call");
        return;
    }
    for (size_t i = 0; i < req->n_objects; i++)
        if (take_id(&req->objects[i]->object_id, &id) < 0) {
            mt_rpc_fail(call, -MT_EINVAL, "object ids are 20 bytes");
            return;
        }
    snprintf(owner, sizeof(owner), "put %s", req->node_id);
    for (size_t i = 0; i < req->n_objects; i++) {
        struct mt_obj *o;

        take_id(&req->objects[i]->object_id, &id);
        o = mt_obj_find(tab(h), &id);
        if (!o) {
            o = mt_obj_new(tab(h), &id, MT_OBJ_READY, owner, 1);
            o->size = req->objects[i]->size;
        } else {
            o->refs++; /* another driver handle on a known object */
        }
        mt_obj_add_node(o, req->node_id);
    }
    mt_rpc_reply(call, &reply.base);
}

void mt__h_release_objects(struct mt_rpc_call *call,
                           const ProtobufCMessage *m, void *arg)
{
    const Manta__ReleaseObjectsRequest *req =
        (const Manta__ReleaseObjectsRequest *)m;
    Manta__ReleaseObjectsReply reply = MANTA__RELEASE_OBJECTS_REPLY__INIT;
    struct mt_head *h = arg;
    mt_object_id id;

    for (size_t i = 0; i < req->n_object_ids; i++) {
        struct mt_obj *o;

        if (take_id(&req->object_ids[i], &id) < 0 ||
            !(o = mt_obj_find(tab(h), &id)) || o->refs == 0) {
            reply.unknown++;
            continue;
        }
        obj_unref(h, o);
    }
    mt_rpc_reply(call, &reply.base);
}

void mt__h_get_object(struct mt_rpc_call *call, const ProtobufCMessage *m,
                      void *arg)
{
    const Manta__GetObjectRequest *req = (const Manta__GetObjectRequest *)m;
    struct mt_head *h = arg;
    char hex[MT_OBJECT_ID_HEX_LEN + 1], msg[160];
    struct mt_obj_get *g;
    struct mt_obj *o;
    mt_object_id id;

    if (take_id(&req->object_id, &id) < 0) {
        mt_rpc_fail(call, -MT_EINVAL, "object ids are 20 bytes");
        return;
    }
    o = mt_obj_find(tab(h), &id);
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

void mt__h_list_objects(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    const Manta__ListObjectsRequest *req = (const Manta__ListObjectsRequest *)m;
    Manta__ListObjectsReply reply = MANTA__LIST_OBJECTS_REPLY__INIT;
    struct mt_head *h = arg;
    size_t total = tab(h)->map.count, n = 0, max;
    struct mt_obj **all = mt_xcalloc(total + 1, sizeof(*all));
    Manta__ObjectRecord *recs, **ptrs;
    struct mt_idmap_node *nd;

    for (nd = mt_idmap_first(&tab(h)->map); nd;
         nd = mt_idmap_next(&tab(h)->map, nd)) {
        struct mt_obj *o = MT_CONTAINER_OF(nd, struct mt_obj, node);

        if ((!req->state || (int)req->state == (int)o->state) &&
            (!*req->node_id || mt_obj_has_node(o, req->node_id)))
            all[n++] = o;
    }
    total = n;
    qsort(all, n, sizeof(*all), by_seq_desc);
    max = req->limit ? (req->limit > LIST_MAX ? LIST_MAX : req->limit)
                     : LIST_DEFAULT;
    if (max > n)
        max = n;
    recs = mt_xcalloc(max + 1, sizeof(*recs));
    ptrs = mt_xcalloc(max + 1, sizeof(*ptrs));
    for (size_t i = 0; i < max; i++) {
        fill_record(all[i], &recs[i]);
        ptrs[i] = &recs[i];
    }
    reply.objects = ptrs;
    reply.n_objects = max;
    reply.total = total;
    mt_rpc_reply(call, &reply.base);
    free(recs);
    free(ptrs);
    free(all);
}
