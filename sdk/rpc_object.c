/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_object.c -- the SDK's object calls, the one file with their
 * protobuf types: RegisterObjects (puts, one or batched), ReleaseObjects
 * (one call, or the batched releases of task results), GetObject (where is
 * it, or its inline value) on the head, and FetchObject on this node's
 * worker (pull a copy here). Replies become plain C (rpc_object.h) before
 * the caller sees them.
 *
 * Registrations and releases name the client's session (mt__session):
 * the head drops the session's references when it ends.
 *
 * The caller-thread calls go through mt__head_call (a copied request);
 * FetchObject is a request of its own, since it goes to the worker. The
 * batches are sent from the loop thread, with views on the queued ids.
 *
 * THREAD: mt__obj_* and mt__reg_post/flush on the caller's thread; the
 * batching (mt__reg_send, mt__rel_kick, the timer) on the loop thread.
 */
#include "sdk/rpc_object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rpc.h"
#include "head_service.pb-c.h"
#include "proto/list_json.h"
#include "proto/services.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/rpc_reply.h"
#include "worker_service.pb-c.h"

/* An object id as protobuf bytes, borrowing id. */
static ProtobufCBinaryData id_view(const mt_object_id *id)
{
    ProtobufCBinaryData b = {MT_OBJECT_ID_LEN, (uint8_t *)id->b};

    return b;
}

/* Record the failure of an object call with its method's name. */
static int call_failed(struct mt_client *c, int rc, const char *method)
{
    char why[256];

    snprintf(why, sizeof(why), "%s", mt_client_last_error(c));
    return mt__set_error(c, rc, "%s: %s", method, why);
}

/* ---- one-off calls (caller thread) --------------------------------------- */

int mt__obj_register(struct mt_client *c, const mt_object_id *id,
                     uint64_t size)
{
    Manta__RegisterObjectsRequest m = MANTA__REGISTER_OBJECTS_REQUEST__INIT;
    Manta__ObjectRecord rec = MANTA__OBJECT_RECORD__INIT, *recp = &rec;
    void *reply;
    int rc;

    rec.object_id = id_view(id);
    rec.size = size;
    m.node_id = c->node_id;
    m.owner_id = (char *)mt__session(c);
    m.objects = &recp;
    m.n_objects = 1;
    rc = mt__head_call(c, &mt_head_register_objects, &m, c->rpc_timeout_ms,
                       MT__CALL_ONCE, &reply); /* a second adds a ref */
    if (rc < 0)
        return call_failed(c, rc, "RegisterObjects");
    mt__msg_free(reply);
    return 0;
}

int mt__obj_release(struct mt_client *c, const mt_object_id *ids, size_t n)
{
    Manta__ReleaseObjectsRequest m = MANTA__RELEASE_OBJECTS_REQUEST__INIT;
    ProtobufCBinaryData *b = calloc(n ? n : 1, sizeof(*b));
    Manta__ReleaseObjectsReply *r;
    uint32_t unknown;
    int rc;

    if (!b)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        b[i] = id_view(&ids[i]);
    m.object_ids = b;
    m.n_object_ids = n;
    m.owner_id = (char *)mt__session(c);
    rc = mt__head_call(c, &mt_head_release_objects, &m, c->rpc_timeout_ms,
                       MT__CALL_ONCE, (void **)&r); /* refs are counted */
    free(b);
    if (rc < 0)
        return call_failed(c, rc, "ReleaseObjects");
    unknown = r->unknown;
    mt__msg_free(r);
    if (unknown)
        return mt__set_error(c, -MT_ENOENT, "%u of %zu objects held no "
                             "reference (unknown, or already released)",
                             unknown, n);
    return 0;
}

void mt__located_release(struct mt__located *l)
{
    free(l->data);
    for (size_t i = 0; i < l->n_holders; i++)
        free(l->holders[i]);
    free(l->holders);
    memset(l, 0, sizeof(*l));
}

/* Copy a GetObject reply into plain C. RET 0, -MT_EPROTO, -MT_ENOMEM. */
static int copy_located(const Manta__GetObjectReply *m, struct mt__located *l)
{
    if (!m->object)
        return -MT_EPROTO;
    l->state = (mt_object_state)m->object->state;
    l->size = m->object->size;
    l->is_inline = m->object->is_inline;
    snprintf(l->error, sizeof(l->error), "%s", m->object->error);
    if (l->is_inline) {
        l->size = m->inline_data.len;
        if (!(l->data = malloc(l->size ? l->size : 1)))
            return -MT_ENOMEM;
        if (l->size)
            memcpy(l->data, m->inline_data.data, l->size);
    }
    l->holders = calloc(m->n_holder_addresses + 1, sizeof(*l->holders));
    if (!l->holders)
        return -MT_ENOMEM;
    for (; l->n_holders < m->n_holder_addresses; l->n_holders++)
        if (!(l->holders[l->n_holders] =
                  strdup(m->holder_addresses[l->n_holders])))
            return -MT_ENOMEM;
    return 0;
}

int mt__obj_locate(struct mt_client *c, const mt_object_id *id,
                   int timeout_ms, struct mt__located *out)
{
    Manta__GetObjectRequest m = MANTA__GET_OBJECT_REQUEST__INIT;
    Manta__GetObjectReply *r;
    int rc;

    memset(out, 0, sizeof(*out));
    m.object_id = id_view(id);
    m.timeout_ms = (uint32_t)timeout_ms;
    if (c->worker_address && c->store)
        m.fetch_to = c->worker_address;
    rc = mt__head_call(c, &mt_head_get_object, &m,
                       timeout_ms > 0 ? timeout_ms : c->rpc_timeout_ms, 0,
                       (void **)&r);
    if (rc < 0)
        return call_failed(c, rc, "GetObject");
    rc = copy_located(r, out);
    mt__msg_free(r);
    if (rc < 0) {
        mt__located_release(out);
        return mt__set_error(c, rc, "bad GetObject reply");
    }
    return 0;
}

/* ---- ListObjects --------------------------------------------------------- */

static void render(struct mt_strbuf *sb, const void *reply)
{
    mt_list_json_objects(sb, reply);
}

int mt__object_list(struct mt_client *c, const mt_list_filter *f, int state,
                    mt_listing *l, struct mt__keep *keep, char **json)
{
    Manta__ListObjectsRequest req = MANTA__LIST_OBJECTS_REQUEST__INIT;
    const Manta__ListObjectsReply *r;
    mt_object_entry *v = NULL;
    int rc;

    req.limit = f->limit;
    req.offset = f->offset;
    req.state = (Manta__ObjectState)state;
    req.node_id = (char *)(f->node_id ? f->node_id : "");
    rc = mt__list_call(c, &mt_head_list_objects, &req, render, json, keep);
    if (rc < 0 || json)
        return rc;
    r = keep->reply;
    l->total = r->total;
    l->n = r->n_objects;
    if (l->n && !(v = mt__keep_alloc(keep, l->n * sizeof(*v))))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    for (size_t i = 0; i < l->n; i++) {
        const Manta__ObjectRecord *o = r->objects[i];

        if (o->object_id.len == MT_OBJECT_ID_LEN)
            memcpy(v[i].id.b, o->object_id.data, MT_OBJECT_ID_LEN);
        v[i].state = (mt_object_state)o->state;
        v[i].size = o->size;
        v[i].is_inline = o->is_inline;
        v[i].ref_count = o->ref_count;
        v[i].node_ids = (const char *const *)o->node_ids;
        v[i].n_node_ids = o->n_node_ids;
        v[i].owner = o->owner;
        v[i].error = o->error;
    }
    l->objects = v;
    return 0;
}

/* FetchObject goes to this node's worker, on a channel of its own. */
struct fetch_req {
    struct mt__req r;
    Manta__FetchObjectRequest msg;
    mt_object_id id;
    char *from;                  /* owned */
};

static void fetch_release(struct mt__req *r)
{
    free(((struct fetch_req *)r)->from);
}

static void on_fetch_done(void *arg, const struct mt_rpc_status *st,
                          const ProtobufCMessage *resp)
{
    struct fetch_req *f = arg;
    struct mt_client *c = f->r.client;
    char msg[256], why[200];

    c->n_calls--;
    if (!st->code) {
        mt__req_complete(c, &f->r, 0, NULL);
        return;
    }
    mt__rpc_text(st, why, sizeof(why));
    snprintf(msg, sizeof(msg), "FetchObject: %s", why);
    mt__req_complete(c, &f->r, mt__rpc_err(st), msg);
}

static int fetch_start(struct mt_client *c, struct mt__req *r)
{
    struct fetch_req *f = (struct fetch_req *)r;
    struct mt__objects *o = c->objects;
    int rc;

    if (!c->worker_address)
        return -MT_EUNAVAIL;
    if (!o->worker_ch && mt_rpc_channel_create(c->eng, c->worker_address, 0,
                                               &o->worker_ch) < 0)
        return -MT_EUNAVAIL;
    f->msg.object_id = id_view(&f->id);
    f->msg.from_address = f->from;
    rc = mt_rpc_unary(o->worker_ch, &mt_worker_fetch_object, &f->msg.base,
                      r->timeout_ms, r->rpc_flags, on_fetch_done, f);
    if (rc == 0)
        c->n_calls++;
    return rc;
}

static const struct mt__req_ops fetch_ops = {
    .start = fetch_start,
    .release = fetch_release,
};

int mt__obj_fetch(struct mt_client *c, const mt_object_id *id,
                  const char *holder, int timeout_ms)
{
    struct fetch_req *f = mt__req_new(c, &fetch_ops, sizeof(*f));
    int rc;

    if (!f || !(f->from = strdup(holder))) {
        mt__req_free(f ? &f->r : NULL);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    manta__fetch_object_request__init(&f->msg);
    f->msg.timeout_ms = (uint32_t)timeout_ms;
    f->id = *id;
    f->r.timeout_ms = timeout_ms;
    f->r.rpc_flags = 0;
    rc = mt__req_run(c, &f->r, timeout_ms + MT__WAIT_GRACE_MS);
    if (rc == 0)
        mt__req_free(&f->r);
    return rc;
}

/* ---- batched registration ------------------------------------------------ */

int mt__reg_post(struct mt_client *c, const mt_object_id *id, uint64_t size)
{
    struct mt__objects *o = c->objects;
    bool wake;

    pthread_mutex_lock(&c->mu);
    if (c->stopping) {
        pthread_mutex_unlock(&c->mu);
        return mt__set_error(c, -MT_ECLOSED, "the client is disconnecting");
    }
    if (o->n_reg == o->cap_reg) {
        size_t cap = o->cap_reg ? 2 * o->cap_reg : 64;
        mt_object_id *v = realloc(o->reg_ids, cap * sizeof(*v));
        uint64_t *z = v ? realloc(o->reg_sizes, cap * sizeof(*z)) : NULL;

        if (v)
            o->reg_ids = v;
        if (!z) {
            pthread_mutex_unlock(&c->mu);
            return mt__set_error(c, -MT_ENOMEM, "out of memory");
        }
        o->reg_sizes = z;
        o->cap_reg = cap;
    }
    o->reg_ids[o->n_reg] = *id;
    o->reg_sizes[o->n_reg++] = size;
    wake = o->n_reg == 1 || o->n_reg == MT__REL_BATCH;
    pthread_mutex_unlock(&c->mu);
    if (wake)
        mt__client_wake(c);
    return 0;
}

bool mt__reg_busy(struct mt_client *c)
{
    bool busy;

    pthread_mutex_lock(&c->mu);
    busy = c->objects->n_reg || c->objects->reg_calls;
    pthread_mutex_unlock(&c->mu);
    return busy;
}

void mt__reg_flush(struct mt_client *c)
{
    struct mt__objects *o = c->objects;
    struct timespec dl = mt__deadline(c->rpc_timeout_ms);
    int rc = 0;

    pthread_mutex_lock(&c->mu);
    if (!o->n_reg && !o->reg_calls) {
        pthread_mutex_unlock(&c->mu);
        return;
    }
    o->reg_urgent = true;
    pthread_mutex_unlock(&c->mu);
    mt__client_wake(c);
    pthread_mutex_lock(&c->mu);
    while ((o->n_reg || o->reg_calls) && rc == 0)
        rc = pthread_cond_timedwait(&c->cv, &c->mu, &dl);
    pthread_mutex_unlock(&c->mu);
}

/* A batch call ended (or never started): count it down (mu) and wake the
 * waiters. */
static void batch_ended(struct mt_client *c, int *calls)
{
    pthread_mutex_lock(&c->mu);
    (*calls)--;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void on_reg_done(void *arg, const struct mt_rpc_status *st,
                        const ProtobufCMessage *resp)
{
    struct mt_client *c = arg;

    /* On failure the objects stay local and unknown to the head: tasks
     * naming them are refused, saying so. */
    c->n_calls--;
    batch_ended(c, &c->objects->reg_calls);
    if (!c->closing)
        mt__client_wake(c); /* submits held for these registrations */
}

/* Take the queued ids (and sizes) under mu; count the call. */
static size_t take_queue(struct mt_client *c, mt_object_id **ids,
                         uint64_t **sizes)
{
    struct mt__objects *o = c->objects;
    size_t n;

    pthread_mutex_lock(&c->mu);
    if (sizes) {
        *ids = o->reg_ids;
        *sizes = o->reg_sizes;
        n = o->n_reg;
        o->reg_ids = NULL;
        o->reg_sizes = NULL;
        o->n_reg = o->cap_reg = 0;
        o->reg_urgent = false;
        o->reg_calls += n > 0;
    } else {
        *ids = o->rel_ids;
        n = o->n_rel;
        o->rel_ids = NULL;
        o->n_rel = o->cap_rel = 0;
        o->rel_calls += n > 0;
    }
    pthread_mutex_unlock(&c->mu);
    return n;
}

void mt__reg_send(struct mt_client *c)
{
    Manta__RegisterObjectsRequest m = MANTA__REGISTER_OBJECTS_REQUEST__INIT;
    Manta__ObjectRecord *recs, **rp;
    mt_object_id *ids;
    uint64_t *sizes;
    size_t n = take_queue(c, &ids, &sizes);

    if (!n)
        return;
    recs = calloc(n, sizeof(*recs));
    rp = calloc(n, sizeof(*rp));
    for (size_t i = 0; recs && rp && i < n; i++) {
        manta__object_record__init(&recs[i]);
        recs[i].object_id = id_view(&ids[i]);
        recs[i].size = sizes[i];
        rp[i] = &recs[i];
    }
    m.node_id = c->node_id;
    m.owner_id = (char *)mt__session(c);
    m.objects = rp;
    m.n_objects = n;
    if (recs && rp && mt_rpc_unary(c->ch, &mt_head_register_objects, &m.base,
                                   c->rpc_timeout_ms, 0, on_reg_done,
                                   c) == 0)
        c->n_calls++;
    else /* the puts stay local, as when the call fails */
        batch_ended(c, &c->objects->reg_calls);
    free(recs);
    free(rp);
    free(ids);
    free(sizes);
}

/* ---- batched releases ---------------------------------------------------- */

static void on_rel_done(void *arg, const struct mt_rpc_status *st,
                        const ProtobufCMessage *resp)
{
    struct mt_client *c = arg;

    c->n_calls--;
    batch_ended(c, &c->objects->rel_calls);
}

/* Send every id queued so far in one ReleaseObjects. */
static void send_releases(struct mt_client *c)
{
    Manta__ReleaseObjectsRequest m = MANTA__RELEASE_OBJECTS_REQUEST__INIT;
    ProtobufCBinaryData *b;
    mt_object_id *ids;
    size_t n = take_queue(c, &ids, NULL);

    if (!n)
        return;
    b = calloc(n, sizeof(*b));
    for (size_t i = 0; b && i < n; i++)
        b[i] = id_view(&ids[i]);
    m.object_ids = b;
    m.n_object_ids = n;
    m.owner_id = (char *)mt__session(c);
    if (b && mt_rpc_unary(c->ch, &mt_head_release_objects, &m.base,
                          c->rpc_timeout_ms, 0, on_rel_done, c) == 0)
        c->n_calls++;
    else /* the head keeps them (documented as for a lost driver) */
        batch_ended(c, &c->objects->rel_calls);
    free(b);
    free(ids);
}

static void on_rel_timer(uv_timer_t *t)
{
    struct mt_client *c = t->data;

    c->objects->rel_armed = false;
    if (!c->closing) {
        mt__reg_send(c);
        send_releases(c);
    }
}

void mt__rel_kick(struct mt_client *c)
{
    struct mt__objects *o = c->objects;
    size_t n, n_reg;
    bool stopping, urgent;

    pthread_mutex_lock(&c->mu);
    n = o->n_rel;
    n_reg = o->n_reg;
    urgent = o->reg_urgent;
    stopping = c->stopping;
    pthread_mutex_unlock(&c->mu);
    if (n_reg >= MT__REL_BATCH || (n_reg && (stopping || urgent))) {
        mt__reg_send(c);
        n_reg = 0;
    }
    if (n >= MT__REL_BATCH || (n && stopping)) {
        send_releases(c);
        n = 0;
    }
    if ((n || n_reg) && !o->rel_armed) {
        if (!o->timer_ready) {
            uv_timer_init(&c->loop, &o->rel_timer);
            o->rel_timer.data = c;
            o->timer_ready = true;
        }
        o->rel_armed = true;
        uv_timer_start(&o->rel_timer, on_rel_timer, MT__REL_DELAY_MS, 0);
    }
}

void mt__objects_stop(struct mt_client *c)
{
    struct mt__objects *o = c->objects;

    if (o->timer_ready)
        uv_close((uv_handle_t *)&o->rel_timer, NULL);
    o->timer_ready = false;
    mt_rpc_channel_destroy(o->worker_ch);
    o->worker_ch = NULL;
}
