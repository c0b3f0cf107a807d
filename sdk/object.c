/* SPDX-License-Identifier: Apache-2.0 */
/*
 * object.c -- put and get objects in this node's shared-memory store.
 *
 * The calls run on the caller's thread through the blocking, thread-safe
 * store client (objstore/client.h); no request goes to the client's loop
 * thread. A get maps the object in place (zero-copy) and pins it until the
 * buffer is released. The store connection is shared by the client and
 * every buffer (struct mt__store, refcounted), so a buffer stays readable
 * after mt_client_disconnect() until it is released.
 *
 * Ids are 20 random bytes from getrandom(2): two drivers never collide in
 * practice (2^160), and no coordination with the head is needed to pick
 * one. A put (not MT_PUT_EVICTABLE) is then registered with the head,
 * which counts the driver's reference until mt_object_release() or the
 * end of the client's session (disconnect, or the process's death). While
 * submits are batched (sdk/rpc_batch.c) the registration is queued and
 * sent with others within MT__REL_DELAY_MS, and always before any task
 * this client submits next, so a task naming the object finds it known;
 * mt_client_disconnect() sends what is queued. Such a put is made with
 * MT_OBJ_DRIVER_PUT, so if the process dies before its registration goes
 * out, the worker deletes the object once the store connection is gone
 * and the head says it never heard of it (objstore/server.h).
 *
 * This file also holds the client's objects part (object.h; its struct in
 * rpc_object.h): the queues of registrations and releases, sent by the
 * loop thread, and flushed when the client disconnects.
 *
 * A get that misses the local store asks the head (GetObject): a small
 * task result comes back inline and is returned in a heap copy; anything
 * else is pulled to this node by the local worker (FetchObject from each
 * holder in turn) and then mapped like a local object. A task result not
 * produced yet makes the head hold the call until it is, or the timeout.
 */
#include "sdk/object.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "objstore/client.h"
#include "objstore/tensor.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/rpc_object.h"

/* The public dtype codes are the store's (both DLPack's): passed as is. */
_Static_assert((int)MT_DTYPE_INT == (int)MT_DL_INT, "dtype int");
_Static_assert((int)MT_DTYPE_UINT == (int)MT_DL_UINT, "dtype uint");
_Static_assert((int)MT_DTYPE_FLOAT == (int)MT_DL_FLOAT, "dtype float");
_Static_assert((int)MT_DTYPE_BFLOAT == (int)MT_DL_BFLOAT, "dtype bfloat");
_Static_assert((int)MT_DTYPE_COMPLEX == (int)MT_DL_COMPLEX, "dtype complex");
_Static_assert((int)MT_DTYPE_BOOL == (int)MT_DL_BOOL, "dtype bool");

/* ---- the objects part ---------------------------------------------------- */

/* Let queued releases and registrations reach the head before the
 * channel goes (3 s at most). */
static void objects_leave(struct mt_client *c, void *st)
{
    struct mt__objects *o = st;
    struct timespec dl = mt__deadline(3000);
    int rc = 0;

    pthread_mutex_lock(&c->mu);
    while ((o->n_rel || o->rel_calls || o->n_reg || o->reg_calls) && rc == 0)
        rc = pthread_cond_timedwait(&c->cv, &c->mu, &dl);
    pthread_mutex_unlock(&c->mu);
}

static void objects_wake(struct mt_client *c, void *st)
{
    mt__rel_kick(c);
}

static void objects_stop(struct mt_client *c, void *st)
{
    mt__objects_stop(c);
}

static void objects_destroy(void *st)
{
    struct mt__objects *o = st;

    free(o->rel_ids);
    free(o->reg_ids);
    free(o->reg_sizes);
    free(o);
}

static const struct mt__part_ops objects_part = {
    .leave = objects_leave,
    .wake = objects_wake,
    .stop = objects_stop,
    .destroy = objects_destroy,
};

int mt__objects_attach(struct mt_client *c)
{
    struct mt__objects *o = calloc(1, sizeof(*o));

    if (!o)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    atomic_init(&o->batching, false);
    c->objects = o;
    mt__client_add_part(c, &objects_part, o);
    return 0;
}

void mt__objects_set_batching(struct mt_client *c, bool on)
{
    atomic_store(&c->objects->batching, on);
}

void mt__objects_post_release(struct mt_client *c, const mt_object_id *id)
{
    struct mt__objects *o;
    bool wake = false;

    if (!mt__client_lock_live(c))
        return;
    o = c->objects;
    pthread_mutex_lock(&c->mu);
    if (!c->stopping && o->n_rel == o->cap_rel) {
        size_t cap = o->cap_rel ? 2 * o->cap_rel : 64;
        mt_object_id *v = realloc(o->rel_ids, cap * sizeof(*v));

        if (v) {
            o->rel_ids = v;
            o->cap_rel = cap;
        }
    }
    if (!c->stopping && o->n_rel < o->cap_rel) {
        o->rel_ids[o->n_rel++] = *id;
        /* The loop thread sends them in batches (mt__rel_kick). */
        wake = o->n_rel == 1 || o->n_rel == MT__REL_BATCH;
    }
    pthread_mutex_unlock(&c->mu);
    if (wake)
        mt__client_wake(c);
    mt__client_unlock_live();
}

/* ---- ids ----------------------------------------------------------------- */

char *mt_object_id_format(const mt_object_id *id, char *buf)
{
    return mt_object_id_hex(id, buf);
}

int mt_object_id_parse(const char *hex, mt_object_id *out)
{
    if (!hex || !out)
        return mt__set_error(NULL, -MT_EINVAL, "no object id or no out");
    if (mt__check_id(NULL, hex, MT_ID_OBJECT) < 0)
        return -MT_EINVAL;
    if (mt_object_id_from_hex(hex, out) < 0)
        return mt__set_error(NULL, -MT_EINVAL, "'%.64s' is not an object id "
                             "(40 hex digits)", hex);
    return 0;
}

bool mt_object_id_equal(const mt_object_id *a, const mt_object_id *b)
{
    return mt_object_id_eq(a, b);
}

const char *mt_object_state_name(mt_object_state s)
{
    switch (s) {
    case MT_OBJECT_STATE_PENDING: return "PENDING";
    case MT_OBJECT_STATE_READY: return "READY";
    case MT_OBJECT_STATE_LOST: return "LOST";
    case MT_OBJECT_STATE_FAILED: return "FAILED";
    default: return "UNKNOWN";
    }
}

static int random_id(mt_object_id *id)
{
    size_t got = 0;

    while (got < sizeof(id->b)) {
        ssize_t k = getrandom(id->b + got, sizeof(id->b) - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        got += (size_t)k;
    }
    return 0;
}

/* ---- put ----------------------------------------------------------------- */

static int no_store(mt_client_t *c)
{
    return mt__set_error(c, -MT_EUNAVAIL, "no object store: %s",
                         c->store_why);
}

static bool check_client(const struct mt_client *c)
{
    return mt__client_check(c);
}

/*
 * Register a sealed put with the head (queued while submits are batched);
 * an evictable put stays node-local. On failure the local copy is deleted.
 * RET 0 or the error (recorded; `what` names the call in the message).
 */
static int register_put(mt_client_t *c, const mt_object_id *id, size_t size,
                        uint32_t flags, const char *what)
{
    char hex[MT_OBJECT_ID_HEX_SIZE], why[256];
    int rc;

    if ((flags & MT_PUT_EVICTABLE) || !c->node_id)
        return 0;
    rc = atomic_load(&c->objects->batching)
             ? mt__reg_post(c, id, size) /* see rpc_object.h */
             : mt__obj_register(c, id, size);
    if (rc == 0)
        return 0;
    snprintf(why, sizeof(why), "%s", mt_client_last_error(c));
    mt_objc_delete(c->store->objc, id);
    return mt__set_error(c, rc, "%s of %s: the head did not register it: %s",
                         what, mt_object_id_hex(id, hex), why);
}

int mt__tensor_desc(mt_client_t *c, int code, uint8_t bits,
                    uint32_t ndim, const int64_t *shape,
                    struct mt_tensor_desc *t)
{
    if (ndim > MT_TENSOR_MAX_NDIM || (ndim && !shape))
        return mt__set_error(c, -MT_EINVAL, "a tensor has at most %d "
                             "dimensions (and a shape)", MT_TENSOR_MAX_NDIM);
    memset(t, 0, sizeof(*t));
    t->code = (uint8_t)code;
    t->bits = bits;
    t->lanes = 1;
    t->ndim = ndim;
    for (uint32_t i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    return 0;
}

static int put(mt_client_t *c, const void *data, size_t size, uint32_t flags,
               const struct mt_tensor_desc *tensor, mt_object_id *out_id)
{
    char hex[MT_OBJECT_ID_HEX_SIZE];
    mt_object_id id;
    int rc;

    if (!check_client(c) || !out_id || (size && !data) ||
        (flags & ~MT_PUT_EVICTABLE))
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client, data, flags or out_id");
    if (!c->store)
        return no_store(c);
    rc = random_id(&id);
    if (rc < 0)
        return mt__set_error(c, rc, "getrandom: %s", mt_strerror(rc));
    rc = mt_objc_put(c->store->objc, &id, data, size, NULL, 0,
                     flags & MT_PUT_EVICTABLE ? MT_OBJ_EVICTABLE
                                              : MT_OBJ_DRIVER_PUT,
                     tensor);
    if (rc < 0)
        return mt__set_error(c, rc, "put of %zu bytes as %s failed: %s", size,
                             mt_object_id_hex(&id, hex), mt_strerror(rc));
    rc = register_put(c, &id, size, flags, "put");
    if (rc < 0)
        return rc;
    *out_id = id;
    return 0;
}

int mt_put(mt_client_t *c, const void *data, size_t size, uint32_t flags,
           mt_object_id *out_id)
{
    return put(c, data, size, flags, NULL, out_id);
}

int mt_put_tensor(mt_client_t *c, const void *data, size_t size,
                  uint32_t flags, mt_dtype_code code, uint8_t bits,
                  uint32_t ndim, const int64_t *shape, mt_object_id *out_id)
{
    struct mt_tensor_desc t;

    if (mt__tensor_desc(check_client(c) ? c : NULL, code, bits, ndim, shape,
                    &t) < 0)
        return -MT_EINVAL;
    if (mt_tensor_check(&t, size) < 0 || mt_tensor_nbytes(&t) != size)
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "tensor dtype (code %d, %u bits) and shape do "
                             "not describe exactly %zu bytes", (int)code,
                             bits, size);
    return put(c, data, size, flags, &t, out_id);
}

/* ---- create and seal (zero-copy producers) ------------------------------ */

enum { WB_OPEN, WB_SEALING, WB_DONE }; /* struct mt_wbuffer.state */

/* An object being written in place. */
struct mt_wbuffer {
    struct mt__store *store; /* one ref: the mapping outlives the client */
    mt_object_id id;
    uint8_t *data;           /* in the store's arena */
    size_t size;
    uint32_t flags;          /* MT_PUT_* */
    atomic_int state;        /* WB_*: writable only while WB_OPEN */
};

static int create(mt_client_t *c, size_t size, uint32_t flags,
                  const struct mt_tensor_desc *tensor, mt_object_id *out_id,
                  mt_wbuffer_t **out)
{
    char hex[MT_OBJECT_ID_HEX_SIZE];
    struct mt_objc_buf ob;
    struct mt_wbuffer *w;
    int rc;

    rc = random_id(out_id);
    if (rc < 0)
        return mt__set_error(c, rc, "getrandom: %s", mt_strerror(rc));
    w = calloc(1, sizeof(*w));
    if (!w)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    rc = mt_objc_create(c->store->objc, out_id, size, 0,
                        flags & MT_PUT_EVICTABLE ? MT_OBJ_EVICTABLE
                                                 : MT_OBJ_DRIVER_PUT,
                        tensor, &ob);
    if (rc < 0) {
        free(w);
        return mt__set_error(c, rc, "create of %zu bytes as %s failed: %s%s",
                             size, mt_object_id_hex(out_id, hex),
                             mt_strerror(rc), rc == -MT_ETOOBIG ?
                             " of this node's object store" : "");
    }
    atomic_fetch_add(&c->store->refs, 1);
    w->store = c->store;
    w->id = *out_id;
    w->data = ob.data;
    w->size = size;
    w->flags = flags;
    atomic_init(&w->state, WB_OPEN);
    *out = w;
    return 0;
}

/* The checks mt_create and mt_create_tensor share. RET 0 or recorded. */
static int check_create(mt_client_t *c, size_t size, uint32_t flags,
                        const mt_object_id *out_id, mt_wbuffer_t **out)
{
    if (out)
        *out = NULL;
    if (!check_client(c) || !out_id || !out || (flags & ~MT_PUT_EVICTABLE))
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client, flags, out_id or out");
    if (size == 0)
        return mt__set_error(c, -MT_EINVAL, "an object of 0 bytes has "
                             "nothing to write in place: use mt_put");
    if (!c->store)
        return no_store(c);
    return 0;
}

int mt_create(mt_client_t *c, size_t size, uint32_t flags,
              mt_object_id *out_id, mt_wbuffer_t **out)
{
    int rc = check_create(c, size, flags, out_id, out);

    return rc < 0 ? rc : create(c, size, flags, NULL, out_id, out);
}

int mt_create_tensor(mt_client_t *c, uint32_t flags, mt_dtype_code code,
                     uint8_t bits, uint32_t ndim, const int64_t *shape,
                     mt_object_id *out_id, mt_wbuffer_t **out)
{
    struct mt_tensor_desc t;
    uint64_t size;
    int rc;

    if (out)
        *out = NULL;
    if (mt__tensor_desc(check_client(c) ? c : NULL, code, bits, ndim, shape,
                    &t) < 0)
        return -MT_EINVAL;
    size = mt_tensor_nbytes(&t);
    if (size == UINT64_MAX || mt_tensor_check(&t, size) < 0)
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid tensor: dtype code %d, %u bits, %u "
                             "dimensions", (int)code, bits, ndim);
    rc = check_create(c, (size_t)size, flags, out_id, out);
    return rc < 0 ? rc : create(c, (size_t)size, flags, &t, out_id, out);
}

void *mt_wbuffer_data(mt_wbuffer_t *w)
{
    return w && atomic_load(&w->state) == WB_OPEN ? w->data : NULL;
}

size_t mt_wbuffer_size(const mt_wbuffer_t *w)
{
    return w ? w->size : 0;
}

const mt_object_id *mt_wbuffer_id(const mt_wbuffer_t *w)
{
    return w ? &w->id : NULL;
}

int mt_seal(mt_client_t *c, mt_wbuffer_t *w)
{
    char hex[MT_OBJECT_ID_HEX_SIZE];
    int open = WB_OPEN, rc;

    if (!check_client(c) || !w)
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or buffer");
    if (w->store != c->store)
        return mt__set_error(c, -MT_EINVAL, "buffer of %s was created by "
                             "another client", mt_object_id_hex(&w->id, hex));
    if (!atomic_compare_exchange_strong(&w->state, &open, WB_SEALING))
        return mt__set_error(c, -MT_ESTATE, "object %s is sealed already "
                             "(or its seal failed)",
                             mt_object_id_hex(&w->id, hex));
    rc = mt_objc_seal(c->store->objc, &w->id);
    if (rc < 0)
        rc = mt__set_error(c, rc, "seal of %s failed: %s",
                           mt_object_id_hex(&w->id, hex), mt_strerror(rc));
    else
        rc = register_put(c, &w->id, w->size, w->flags, "seal");
    atomic_store(&w->state, WB_DONE);
    return rc;
}

void mt_wbuffer_release(mt_wbuffer_t *w)
{
    if (!w)
        return;
    /* Never sealed: give the space back (a failed seal left nothing). */
    if (atomic_load(&w->state) == WB_OPEN)
        mt_objc_abort(w->store->objc, &w->id);
    mt__store_unref(w->store);
    free(w);
}

/* ---- get ----------------------------------------------------------------- */

/* A buffer: a pinned mapping in the store, or an inline value's copy. */
struct mt_buffer {
    struct mt__store *store;  /* one ref; NULL for an inline value */
    uint8_t *owned;           /* an inline value's heap copy, or NULL */
    mt_object_id id;
    const uint8_t *data;
    size_t size;
    bool is_tensor;
    uint8_t code, bits;
    uint32_t ndim;
    int64_t shape[MT_TENSOR_MAX_NDIM];
};

/* An inline value as a buffer (heap copy; no store behind it). */
static int inline_buffer(mt_client_t *c, const mt_object_id *id,
                         struct mt__located *l, mt_buffer_t **out)
{
    struct mt_buffer *b = calloc(1, sizeof(*b));
    void *p = NULL;

    /* 64-byte aligned like a store mapping. */
    if (!b || posix_memalign(&p, 64, l->size ? l->size : 1) != 0) {
        free(b);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    if (l->size)
        memcpy(p, l->data, l->size);
    b->id = *id;
    b->owned = p;
    b->data = p;
    b->size = l->size;
    *out = b;
    return 0;
}

/* The object's state says it has no value. RET the error (recorded). */
static int no_value(mt_client_t *c, const char *hex,
                    const struct mt__located *l)
{
    if (l->state == MT_OBJECT_STATE_FAILED)
        return mt__set_error(c, -MT_ETASKFAILED, "object %s has no value "
                             "(%s)", hex, l->error);
    if (l->state == MT_OBJECT_STATE_LOST)
        return mt__set_error(c, -MT_EWORKERDIED, "object %s: %s", hex,
                             l->error);
    return mt__set_error(c, -MT_ETIMEDOUT, "object %s is still pending "
                         "(its task has not finished)", hex);
}

/* Ask the head; pull a copy here. RET 0 (inline: *out set; else the
 * object is now local), 1 (unknown to the head), -MT_E* (recorded). */
static int get_remote(mt_client_t *c, const mt_object_id *id, int timeout_ms,
                      mt_buffer_t **out)
{
    char hex[MT_OBJECT_ID_HEX_SIZE], last[256] = "no node holds a copy";
    struct mt__located l;
    int rc;

    mt_object_id_hex(id, hex);
    rc = mt__obj_locate(c, id, timeout_ms < 0 ? 60000 : timeout_ms, &l);
    while (rc == -MT_ETIMEDOUT && timeout_ms < 0)
        rc = mt__obj_locate(c, id, 60000, &l);
    if (rc == -MT_ENOENT)
        return 1;
    if (rc < 0)
        return rc;
    if (l.state != MT_OBJECT_STATE_READY) {
        rc = no_value(c, hex, &l);
    } else if (l.is_inline) {
        rc = inline_buffer(c, id, &l, out);
    } else if (!c->store || !c->worker_address) {
        rc = c->store ? mt__set_error(c, -MT_EUNAVAIL, "object %s is on "
                                      "another node and this client knows "
                                      "no worker to pull it", hex)
                      : no_store(c);
    } else {
        rc = -MT_EIO;
        for (size_t i = 0; i < l.n_holders && rc < 0; i++) {
            rc = mt__obj_fetch(c, id, l.holders[i],
                               timeout_ms > 0 ? timeout_ms : 120000);
            if (rc < 0)
                snprintf(last, sizeof(last), "%s", mt_client_last_error(c));
        }
        if (rc < 0)
            rc = mt__set_error(c, rc == -MT_ETIMEDOUT ? rc : -MT_EIO,
                               "object %s could not be pulled to this node: "
                               "%s", hex, last);
    }
    mt__located_release(&l);
    return rc;
}

/* Map id from the local store into a new buffer. RET 0 or -MT_E*. */
static int get_local(mt_client_t *c, const mt_object_id *id, int timeout_ms,
                     mt_buffer_t **out)
{
    struct mt_objc_buf ob;
    struct mt_buffer *b;
    int rc;

    b = calloc(1, sizeof(*b));
    if (!b)
        return -MT_ENOMEM;
    rc = mt_objc_get(c->store->objc, id, timeout_ms, &ob);
    if (rc < 0) {
        free(b);
        return rc;
    }
    atomic_fetch_add(&c->store->refs, 1);
    b->store = c->store;
    b->id = *id;
    b->data = ob.data;
    b->size = ob.info.data_size;
    if (ob.info.flags & MT_OBJ_TENSOR) {
        b->is_tensor = true;
        b->code = ob.info.tensor.code;
        b->bits = ob.info.tensor.bits;
        b->ndim = ob.info.tensor.ndim;
        for (uint32_t i = 0; i < b->ndim && i < MT_TENSOR_MAX_NDIM; i++)
            b->shape[i] = ob.info.tensor.shape[i];
    }
    *out = b;
    return 0;
}

int mt_get(mt_client_t *c, const mt_object_id *id, int timeout_ms,
           mt_buffer_t **out)
{
    char hex[MT_OBJECT_ID_HEX_SIZE];
    int rc = -MT_ENOENT;

    if (out)
        *out = NULL;
    if (!check_client(c) || !id || !out)
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client, id or out");
    mt_object_id_hex(id, hex);
    if (c->store) {
        rc = get_local(c, id, 0, out);
        if (rc == 0)
            return 0;
    }
    if (rc == -MT_ENOENT) {
        rc = get_remote(c, id, timeout_ms, out);
        if (rc == 0 && *out)
            return 0;
        if (rc == 0) /* pulled here */
            rc = get_local(c, id, 0, out);
        else if (rc == 1 && !c->store)
            return mt__set_error(c, -MT_ENOENT, "object %s is unknown to the "
                                 "head (never put, or already released)",
                                 hex);
        else if (rc == 1) /* unknown: maybe a local put to come */
            rc = timeout_ms == 0 ? -MT_ENOENT
                                 : get_local(c, id, timeout_ms, out);
        else
            return rc; /* recorded */
    }
    if (rc == 0)
        return 0;
    if (rc == -MT_ENOENT || rc == -MT_ETIMEDOUT)
        return mt__set_error(c, rc, "get of %s failed: %s: the object is "
                             "unknown to the head (never put, or already "
                             "released) and not in this node's store", hex,
                             mt_strerror(rc));
    return mt__set_error(c, rc, "get of %s failed: %s", hex,
                         mt_strerror(rc));
}

int mt_object_release(mt_client_t *c, const mt_object_id *ids, size_t n)
{
    if (!check_client(c) || (n && !ids))
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or ids");
    if (n == 0)
        return 0;
    mt__reg_flush(c); /* the head must know them first */
    return mt__obj_release(c, ids, n);
}

void mt_buffer_release(mt_buffer_t *b)
{
    if (!b)
        return;
    if (b->store) {
        mt_objc_release(b->store->objc, &b->id);
        mt__store_unref(b->store);
    }
    free(b->owned);
    free(b);
}

const void *mt_buffer_data(const mt_buffer_t *b)
{
    return b ? b->data : NULL;
}

size_t mt_buffer_size(const mt_buffer_t *b)
{
    return b ? b->size : 0;
}

const mt_object_id *mt_buffer_id(const mt_buffer_t *b)
{
    return b ? &b->id : NULL;
}

bool mt_buffer_is_tensor(const mt_buffer_t *b)
{
    return b && b->is_tensor;
}

int mt_buffer_tensor(const mt_buffer_t *b, mt_dtype_code *code,
                     uint8_t *bits, uint32_t *ndim, int64_t *shape)
{
    if (!b || !b->is_tensor)
        return -MT_EINVAL;
    if (code)
        *code = (mt_dtype_code)b->code;
    if (bits)
        *bits = b->bits;
    if (ndim)
        *ndim = b->ndim;
    if (shape)
        memcpy(shape, b->shape, b->ndim * sizeof(*shape));
    return 0;
}
