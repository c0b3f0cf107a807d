/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_objects.c -- the SDK's object calls: RegisterObjects (a put),
 * ReleaseObjects, GetObject (where is it, or its inline value) on the
 * head, FetchObject on this node's worker (pull a copy here), and the
 * SubmitTaskRequest of a function task whose arguments may be object
 * references. Generated protobuf types stay in this file and rpc_head.c.
 *
 * Each call is an MT__REQ_OBJECT request: the caller thread builds the
 * request message (owned by the mt__req as obj), mt__req_run hands it to
 * the loop thread, whose obj_start starts the rpc; the reply is copied
 * into plain C before the request completes.
 *
 * THREAD: builders and mt__obj_* run on the caller's thread; start_* and
 * on_* on the client's loop thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rpc.h"
#include "head_service.pb-c.h"
#include "proto/services.h"
#include "sdk/sdk_int.h"
#include "worker_service.pb-c.h"

#define WAIT_GRACE_MS 2000

/* What an object call carries: the request message and the reply copy. */
struct objcall {
    const struct mt_rpc_method *method;
    ProtobufCMessage *msg;        /* owned request, freed with the call */
    bool to_worker;               /* FetchObject: on c->worker_ch */
    uint32_t unknown;             /* ReleaseObjects reply */
    struct mt__located loc;       /* GetObject reply */
};

static void objcall_free(void *p)
{
    struct objcall *oc = p;

    if (!oc)
        return;
    if (oc->msg)
        protobuf_c_message_free_unpacked(oc->msg, NULL);
    mt__located_release(&oc->loc);
    free(oc);
}

void mt__located_release(struct mt__located *l)
{
    free(l->data);
    for (size_t i = 0; i < l->n_holders; i++)
        free(l->holders[i]);
    free(l->holders);
    memset(l, 0, sizeof(*l));
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}

/* Copy a GetObject reply into plain C. RET 0, -MT_ENOMEM. */
static int copy_located(const Manta__GetObjectReply *m, struct mt__located *l)
{
    if (!m->object)
        return -MT_EPROTO;
    l->state = m->object->state;
    l->size = m->object->size;
    l->is_inline = m->object->is_inline;
    snprintf(l->error, sizeof(l->error), "%s", m->object->error);
    if (l->is_inline) {
        l->size = m->inline_data.len;
        l->data = malloc(l->size ? l->size : 1);
        if (!l->data)
            return -MT_ENOMEM;
        if (l->size)
            memcpy(l->data, m->inline_data.data, l->size);
    }
    l->holders = calloc(m->n_holder_addresses + 1, sizeof(*l->holders));
    if (!l->holders)
        return -MT_ENOMEM;
    for (; l->n_holders < m->n_holder_addresses; l->n_holders++)
        if (!(l->holders[l->n_holders] =
                  dup_str(m->holder_addresses[l->n_holders])))
            return -MT_ENOMEM;
    return 0;
}

/* ---- loop thread ----------------------------------------------------------- */

static void on_obj_done(void *arg, const struct mt_rpc_status *st,
                        const ProtobufCMessage *resp)
{
    struct mt__req *r = arg;
    struct objcall *oc = r->obj;
    char msg[256];
    int rc = 0;

    r->client->n_calls--;
    if (st->code) {
        const char *name = strrchr(oc->method->path, '/');

        snprintf(msg, sizeof(msg), "%s: %s%s%s", name ? name + 1 : "call",
                 mt_rpc_status_name(st->code), *st->message ? ": " : "",
                 st->message);
        mt__req_complete(r->client, r, mt_rpc_status_to_err(st->code), msg);
        return;
    }
    if (oc->method == &mt_head_release_objects)
        oc->unknown = ((const Manta__ReleaseObjectsReply *)resp)->unknown;
    else if (oc->method == &mt_head_get_object)
        rc = copy_located((const Manta__GetObjectReply *)resp, &oc->loc);
    mt__req_complete(r->client, r, rc, rc ? "bad GetObject reply" : NULL);
}

static int start_obj(struct mt__req *r)
{
    struct mt_client *c = r->client;
    struct objcall *oc = r->obj;
    struct mt_rpc_channel *ch = c->ch;

    if (oc->to_worker) {
        if (!c->worker_address)
            return -MT_EUNAVAIL;
        if (!c->worker_ch &&
            mt_rpc_channel_create(c->eng, c->worker_address, 0,
                                  &c->worker_ch) < 0)
            return -MT_EUNAVAIL;
        ch = c->worker_ch;
    }
    return mt_rpc_unary(ch, oc->method, oc->msg, r->timeout_ms, r->rpc_flags,
                        on_obj_done, r);
}

/* ---- caller thread ---------------------------------------------------------- */

static struct mt__req *obj_req(const struct mt_rpc_method *method,
                               ProtobufCMessage *msg)
{
    struct mt__req *r = mt__req_new(MT__REQ_OBJECT);
    struct objcall *oc = calloc(1, sizeof(*oc));

    if (!r || !oc) {
        free(r);
        free(oc);
        if (msg)
            protobuf_c_message_free_unpacked(msg, NULL);
        return NULL;
    }
    oc->method = method;
    oc->msg = msg;
    r->obj = oc;
    r->obj_start = start_obj;
    r->obj_free = objcall_free;
    return r;
}

/* A malloc'd 20-byte copy of id as protobuf bytes. RET 0, -MT_ENOMEM. */
static int id_bytes(ProtobufCBinaryData *b, const mt_object_id *id)
{
    b->data = malloc(MT_OBJECT_ID_LEN);
    if (!b->data)
        return -MT_ENOMEM;
    memcpy(b->data, id->b, MT_OBJECT_ID_LEN);
    b->len = MT_OBJECT_ID_LEN;
    return 0;
}

/* Run r with timeout_ms as the rpc deadline. RET as mt__req_run; on 0 the
 * caller owns r. */
static int run(struct mt_client *c, struct mt__req *r, int timeout_ms)
{
    if (!r)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    r->timeout_ms = timeout_ms;
    return mt__req_run(c, r, timeout_ms + WAIT_GRACE_MS);
}

int mt__obj_register(struct mt_client *c, const mt_object_id *id,
                     uint64_t size)
{
    Manta__RegisterObjectsRequest *m = malloc(sizeof(*m));
    Manta__ObjectRecord *rec;
    struct mt__req *r;
    int rc;

    if (!m)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    manta__register_objects_request__init(m);
    r = obj_req(&mt_head_register_objects, &m->base); /* owns m */
    if (!r)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    m->node_id = dup_str(c->node_id);
    m->objects = calloc(2, sizeof(*m->objects));
    rec = m->objects ? malloc(sizeof(*rec)) : NULL;
    if (rec) {
        manta__object_record__init(rec);
        m->objects[0] = rec;
        m->n_objects = 1;
        rec->size = size;
    }
    if (!m->node_id || !rec || id_bytes(&rec->object_id, id) < 0) {
        mt__req_free(r);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    rc = run(c, r, c->rpc_timeout_ms);
    if (rc == 0)
        mt__req_free(r);
    return rc;
}

/* ---- batched put registration ---------------------------------------- */

int mt__reg_post(struct mt_client *c, const mt_object_id *id, uint64_t size)
{
    bool wake;

    pthread_mutex_lock(&c->mu);
    if (c->stopping) {
        pthread_mutex_unlock(&c->mu);
        return mt__set_error(c, -MT_ECLOSED, "the client is disconnecting");
    }
    if (c->n_reg == c->cap_reg) {
        size_t cap = c->cap_reg ? 2 * c->cap_reg : 64;
        mt_object_id *v = realloc(c->reg_ids, cap * sizeof(*v));
        uint64_t *z = v ? realloc(c->reg_sizes, cap * sizeof(*z)) : NULL;

        if (v)
            c->reg_ids = v;
        if (!z) {
            pthread_mutex_unlock(&c->mu);
            return mt__set_error(c, -MT_ENOMEM, "out of memory");
        }
        c->reg_sizes = z;
        c->cap_reg = cap;
    }
    c->reg_ids[c->n_reg] = *id;
    c->reg_sizes[c->n_reg++] = size;
    wake = c->n_reg == 1 || c->n_reg == MT__REL_BATCH;
    pthread_mutex_unlock(&c->mu);
    if (wake)
        uv_async_send(&c->wake);
    return 0;
}

bool mt__reg_busy(struct mt_client *c)
{
    bool busy;

    pthread_mutex_lock(&c->mu);
    busy = c->n_reg || c->reg_calls;
    pthread_mutex_unlock(&c->mu);
    return busy;
}

void mt__reg_flush(struct mt_client *c)
{
    struct timespec dl = mt__deadline(c->rpc_timeout_ms);
    int rc = 0;

    pthread_mutex_lock(&c->mu);
    if (!c->n_reg && !c->reg_calls) {
        pthread_mutex_unlock(&c->mu);
        return;
    }
    c->reg_urgent = true;
    pthread_mutex_unlock(&c->mu);
    uv_async_send(&c->wake);
    pthread_mutex_lock(&c->mu);
    while ((c->n_reg || c->reg_calls) && rc == 0)
        rc = pthread_cond_timedwait(&c->cv, &c->mu, &dl);
    pthread_mutex_unlock(&c->mu);
}

static void on_reg_done(void *arg, const struct mt_rpc_status *st,
                        const ProtobufCMessage *resp)
{
    struct mt_client *c = arg;

    (void)resp;
    (void)st; /* on failure the objects stay local and unknown to the head:
                 tasks naming them are refused, saying so */
    c->n_calls--;
    pthread_mutex_lock(&c->mu);
    c->reg_calls--;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (!c->closing)
        mt__cw_pump(c); /* submits held for these registrations */
}

void mt__reg_send(struct mt_client *c)
{
    Manta__RegisterObjectsRequest m = MANTA__REGISTER_OBJECTS_REQUEST__INIT;
    Manta__ObjectRecord *recs, **rp;
    mt_object_id *ids;
    uint64_t *sizes;
    size_t n;

    pthread_mutex_lock(&c->mu);
    ids = c->reg_ids;
    sizes = c->reg_sizes;
    n = c->n_reg;
    c->reg_ids = NULL;
    c->reg_sizes = NULL;
    c->n_reg = c->cap_reg = 0;
    c->reg_urgent = false;
    if (n)
        c->reg_calls++;
    pthread_mutex_unlock(&c->mu);
    if (!n)
        return;
    recs = calloc(n, sizeof(*recs));
    rp = calloc(n, sizeof(*rp));
    for (size_t i = 0; recs && rp && i < n; i++) {
        manta__object_record__init(&recs[i]);
        recs[i].object_id.data = ids[i].b;
        recs[i].object_id.len = MT_OBJECT_ID_LEN;
        recs[i].size = sizes[i];
        rp[i] = &recs[i];
    }
    m.node_id = c->node_id;
    m.objects = rp;
    m.n_objects = recs && rp ? n : 0;
    if (recs && rp && mt_rpc_unary(c->ch, &mt_head_register_objects, &m.base,
                                   c->rpc_timeout_ms, 0, on_reg_done,
                                   c) == 0) {
        c->n_calls++;
    } else {
        pthread_mutex_lock(&c->mu);
        c->reg_calls--;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
    free(recs);
    free(rp);
    free(ids);
    free(sizes);
}

/* Loop thread: a batch of releases reached the head (or failed). */
static void on_rel_done(void *arg, const struct mt_rpc_status *st,
                        const ProtobufCMessage *resp)
{
    struct mt_client *c = arg;

    c->n_calls--;
    pthread_mutex_lock(&c->mu);
    c->rel_calls--;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* Loop thread: send every id queued so far in one ReleaseObjects. */
static void send_releases(struct mt_client *c)
{
    Manta__ReleaseObjectsRequest m = MANTA__RELEASE_OBJECTS_REQUEST__INIT;
    ProtobufCBinaryData *b;
    mt_object_id *ids;
    size_t n;

    pthread_mutex_lock(&c->mu);
    ids = c->rel_ids;
    n = c->n_rel;
    c->rel_ids = NULL;
    c->n_rel = c->cap_rel = 0;
    if (n)
        c->rel_calls++;
    pthread_mutex_unlock(&c->mu);
    if (!n)
        return;
    b = calloc(n, sizeof(*b));
    for (size_t i = 0; b && i < n; i++) {
        b[i].data = ids[i].b;
        b[i].len = MT_OBJECT_ID_LEN;
    }
    m.object_ids = b;
    m.n_object_ids = b ? n : 0;
    if (b && mt_rpc_unary(c->ch, &mt_head_release_objects, &m.base,
                          c->rpc_timeout_ms, 0, on_rel_done, c) == 0) {
        c->n_calls++;
    } else { /* the head keeps them (documented as for a lost driver) */
        pthread_mutex_lock(&c->mu);
        c->rel_calls--;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
    free(b);
    free(ids);
}

void mt__rel_timer_cb(uv_timer_t *t)
{
    struct mt_client *c = t->data;

    c->rel_armed = false;
    if (!c->closing) {
        mt__reg_send(c);
        send_releases(c);
    }
}

void mt__rel_kick(struct mt_client *c)
{
    size_t n, n_reg;
    bool stopping, urgent;

    pthread_mutex_lock(&c->mu);
    n = c->n_rel;
    n_reg = c->n_reg;
    urgent = c->reg_urgent;
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
    if ((n || n_reg) && !c->rel_armed) {
        c->rel_armed = true;
        uv_timer_start(&c->rel_timer, mt__rel_timer_cb, MT__REL_DELAY_MS, 0);
    }
}

int mt__obj_release(struct mt_client *c, const mt_object_id *ids, size_t n)
{
    Manta__ReleaseObjectsRequest *m = malloc(sizeof(*m));
    struct mt__req *r;
    uint32_t unknown;
    int rc;

    if (!m)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    manta__release_objects_request__init(m);
    r = obj_req(&mt_head_release_objects, &m->base); /* owns m */
    if (!r)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    m->object_ids = calloc(n + 1, sizeof(*m->object_ids));
    if (!m->object_ids)
        goto out_nomem;
    for (; m->n_object_ids < n; m->n_object_ids++)
        if (id_bytes(&m->object_ids[m->n_object_ids],
                     &ids[m->n_object_ids]) < 0)
            goto out_nomem;
    rc = run(c, r, c->rpc_timeout_ms);
    if (rc < 0)
        return rc;
    unknown = ((struct objcall *)r->obj)->unknown;
    mt__req_free(r);
    if (unknown)
        return mt__set_error(c, -MT_ENOENT, "%u of %zu objects held no "
                             "reference (unknown, or already released)",
                             unknown, n);
    return 0;

out_nomem:
    mt__req_free(r);
    return mt__set_error(c, -MT_ENOMEM, "out of memory");
}

int mt__obj_locate(struct mt_client *c, const mt_object_id *id,
                   int timeout_ms, struct mt__located *out)
{
    Manta__GetObjectRequest *m = malloc(sizeof(*m));
    struct mt__req *r;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!m)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    manta__get_object_request__init(m);
    m->timeout_ms = (uint32_t)timeout_ms;
    r = obj_req(&mt_head_get_object, &m->base); /* owns m */
    if (!r)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    if (id_bytes(&m->object_id, id) < 0 ||
        (c->worker_address && c->store &&
         !(m->fetch_to = dup_str(c->worker_address)))) {
        mt__req_free(r);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    rc = run(c, r, timeout_ms > 0 ? timeout_ms : c->rpc_timeout_ms);
    if (rc < 0)
        return rc;
    *out = ((struct objcall *)r->obj)->loc;
    memset(&((struct objcall *)r->obj)->loc, 0, sizeof(*out));
    mt__req_free(r);
    return 0;
}

int mt__obj_fetch(struct mt_client *c, const mt_object_id *id,
                  const char *holder, int timeout_ms)
{
    Manta__FetchObjectRequest *m = malloc(sizeof(*m));
    struct mt__req *r;
    int rc;

    if (!m)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    manta__fetch_object_request__init(m);
    m->timeout_ms = (uint32_t)timeout_ms;
    r = obj_req(&mt_worker_fetch_object, &m->base); /* owns m */
    if (!r)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    if (id_bytes(&m->object_id, id) < 0 ||
        !(m->from_address = dup_str(holder))) {
        mt__req_free(r);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    ((struct objcall *)r->obj)->to_worker = true;
    rc = run(c, r, timeout_ms);
    if (rc == 0)
        mt__req_free(r);
    return rc;
}

/* ---- SubmitTask with object arguments ---------------------------------------- */

int mt__rpc_submit_args_build(const char *function, const mt_arg *args,
                              size_t nargs, const struct mt_task_opts *o,
                              void **out)
{
    const void **vals = calloc(nargs + 1, sizeof(*vals));
    size_t *sizes = calloc(nargs + 1, sizeof(*sizes));
    Manta__TaskSpec *s;
    bool any_ref = false;
    int rc = -MT_ENOMEM;

    *out = NULL;
    if (!vals || !sizes)
        goto out;
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == MT_ARG_REF) {
            any_ref = true;
            continue;
        }
        vals[i] = args[i].data;
        sizes[i] = args[i].size;
    }
    rc = mt__rpc_submit_fn_build(function, vals, sizes, nargs, o, out);
    if (rc < 0 || !any_ref)
        goto out;
    s = ((Manta__SubmitTaskRequest *)*out)->spec;
    s->arg_refs = calloc(nargs + 1, sizeof(*s->arg_refs));
    if (!s->arg_refs)
        goto out_nomem;
    for (; s->n_arg_refs < nargs; s->n_arg_refs++) {
        ProtobufCBinaryData *b = &s->arg_refs[s->n_arg_refs];

        /* Every entry is malloc'd so free_unpacked frees it. */
        if (args[s->n_arg_refs].kind == MT_ARG_REF) {
            if (id_bytes(b, &args[s->n_arg_refs].ref) < 0)
                goto out_nomem;
        } else if (!(b->data = malloc(1))) {
            goto out_nomem;
        }
    }
    goto out;

out_nomem:
    mt__rpc_submit_free(*out);
    *out = NULL;
    rc = -MT_ENOMEM;
out:
    free(vals);
    free(sizes);
    return rc;
}
