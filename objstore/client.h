/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.h -- blocking object store client for executors and the SDK.
 *
 * mt_objc_connect() connects to the store socket, receives the arena fd and
 * maps it once; after that object bytes are read and written in place.
 * Every call is a plain blocking call on the caller's thread; a mutex makes
 * one client safe to share between threads (calls are serialized, and a get
 * that waits holds the client for its duration).
 *
 * FAST PATHS
 *  - put of a small object (data + meta <= MT_PROTO_INLINE_MAX) is one
 *    round trip (PUT carries the bytes); larger puts are create (one round
 *    trip), an in-place memcpy, seal (one round trip).
 *  - create of 1 MiB or more maps the object's pages writable in this
 *    process first (madvise MADV_POPULATE_WRITE, once per 2 MiB of the
 *    arena for the life of the client), so the copy takes no page faults;
 *    the store keeps the pages themselves populated (store.h,
 *    prefault_ahead).
 *  - get of an object this client already holds is answered from a local
 *    cache of pinned locations with no round trip; otherwise one round trip.
 *  - release never waits for the store. When the last local reference goes,
 *    the store pin is kept in a small deferred list (up to defer_max
 *    entries and defer_bytes object bytes, each at most defer_ms old,
 *    checked on every call) so a get soon after is still local; an object
 *    larger than defer_bytes is released at once. Deferred releases leave
 *    in one batched one-way message when the list overflows, grows old, on
 *    mt_objc_flush(), before a delete of that id, when a create meets
 *    -MT_ENOSPC (then the create is retried once), and on disconnect. Pins
 *    stay correct: the store never frees bytes a client may still read;
 *    deferral only delays eviction, by at most defer_max objects and
 *    defer_bytes bytes per client, and the store takes deferred pins back
 *    on its own when it runs out of space (release boards, shm_layout.h),
 *    so an idle client holds nothing hostage. An object this client
 *    deleted while holding it is never deferred and never served from the
 *    cache again.
 *
 * THREAD any thread; one mutex per client. Do not use a client in a child
 * after fork(): connect a new one there.
 */
#ifndef MT_CLIENT_H
#define MT_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/ids.h"
#include "objstore/store.h"

struct mt_objc;
struct mt_server_stats; /* objstore/protocol.h */

/* Options for mt_objc_connect(). Zero means the default. */
struct mt_objc_opts {
    bool populate;       /* pre-fault the whole mapping (MAP_POPULATE) */
    bool eager_release;  /* send each release at once, no deferral */
    uint32_t defer_max;  /* deferred releases kept; 0: 64 */
    uint32_t defer_ms;   /* max age of a deferred release; 0: 100 ms */
    uint64_t defer_bytes; /* max object bytes kept deferred; 0: 16 MiB */
};

/* An object as mapped in this process. */
struct mt_objc_buf {
    uint8_t *data;              /* info.data_size bytes */
    uint8_t *meta;              /* info.meta_size bytes, right after data */
    struct mt_object_info info; /* sizes, flags, tensor descriptor */
};

/* ---- connection ---- */

/*
 * mt_objc_connect - connect to the store at path and map its arena.
 *
 * IN  o     options, NULL for defaults (borrowed)
 * OUT out   returns owned client, free with mt_objc_disconnect()
 * RET 0, -MT_EVERSION (protocol or layout mismatch), -MT_EPROTO,
 *     -MT_ENOMEM, -errno from socket/connect (-ENOENT, -ECONNREFUSED)
 */
int mt_objc_connect(const char *path, const struct mt_objc_opts *o,
                    struct mt_objc **out);

/*
 * mt_objc_disconnect - flush deferred releases, close, unmap.
 *
 * NOTE the store drops every pin and aborts every unsealed creation of this
 *      client; buffers obtained from it become invalid.
 * OWNERSHIP invalidates c; NULL is fine
 */
void mt_objc_disconnect(struct mt_objc *c);

/* ---- writing ---- */

/*
 * mt_objc_create - reserve an object to fill in place.
 *
 * IN  flags    MT_OBJ_EVICTABLE or 0
 * IN  tensor   optional tensor descriptor (borrowed), NULL for none
 * OUT out      where to write data and meta
 * RET 0, -MT_EEXIST, -MT_EINVAL, -MT_ETOOBIG, -MT_ENOSPC, -MT_EIO,
 *     -MT_ECLOSED (store gone)
 * NOTE call mt_objc_seal() or mt_objc_abort() when done
 */
int mt_objc_create(struct mt_objc *c, const mt_object_id *id,
                   uint64_t data_size, uint64_t meta_size, uint32_t flags,
                   const struct mt_tensor_desc *tensor,
                   struct mt_objc_buf *out);

/*
 * mt_objc_seal - make a created object immutable and visible.
 *
 * RET 0, -MT_ENOENT, -MT_ESTATE (sealed already), -MT_EPERM (another
 *     client created it)
 */
int mt_objc_seal(struct mt_objc *c, const mt_object_id *id);

/* mt_objc_abort - RET 0, -MT_ENOENT, -MT_ESTATE, -MT_EPERM */
int mt_objc_abort(struct mt_objc *c, const mt_object_id *id);

/*
 * mt_objc_put - create, copy and seal in one call.
 *
 * IN  data, size, meta, meta_size   borrowed; meta may be NULL when 0
 * RET as mt_objc_create, plus the seal's codes
 */
int mt_objc_put(struct mt_objc *c, const mt_object_id *id, const void *data,
                uint64_t size, const void *meta, uint64_t meta_size,
                uint32_t flags, const struct mt_tensor_desc *tensor);

/* One object of a batched put. */
struct mt_objc_put_req {
    mt_object_id id;
    const void *data;                    /* borrowed */
    uint64_t size;
    const void *meta;                    /* borrowed; NULL when meta_size 0 */
    uint64_t meta_size;
    uint32_t flags;                      /* MT_OBJ_EVICTABLE or 0 */
    const struct mt_tensor_desc *tensor; /* borrowed; NULL for none */
};

/*
 * mt_objc_put_many - put n objects, pipelining the small ones: their PUT
 * frames leave in one write (up to 1 MiB per batch) and the n replies are
 * read afterwards, so a batch costs about one round trip. Large objects go
 * through mt_objc_put one by one.
 *
 * OUT rcs   rcs[i] is what mt_objc_put would have returned for reqs[i]
 * RET 0 when every request was answered (see rcs), -MT_ECLOSED,
 *     -MT_ENOMEM (rcs of the unsent requests are not set)
 * NOTE unlike mt_objc_put, a -MT_ENOSPC here is not retried after flushing
 *      deferred releases; call mt_objc_flush() first when space is tight
 */
int mt_objc_put_many(struct mt_objc *c, const struct mt_objc_put_req *reqs,
                     size_t n, int *rcs);

/* ---- reading ---- */

/*
 * mt_objc_get - pin a sealed object and map it.
 *
 * IN  timeout_ms  0: do not wait; > 0: wait up to that long for the object
 *                 to appear and be sealed; < 0: wait forever
 * OUT out         valid until the matching mt_objc_release()
 * RET 0, -MT_ENOENT / -MT_EAGAIN (timeout 0: absent / unsealed),
 *     -MT_ETIMEDOUT, -MT_ENOSPC / -MT_EIO (spilled, cannot be restored)
 */
int mt_objc_get(struct mt_objc *c, const mt_object_id *id, int64_t timeout_ms,
                struct mt_objc_buf *out);

/*
 * mt_objc_release - drop one reference taken by mt_objc_get.
 *
 * RET 0, -MT_ENOENT (this client holds no reference: release without get)
 * OWNERSHIP invalidates the buffer of that get
 */
int mt_objc_release(struct mt_objc *c, const mt_object_id *id);

/*
 * mt_objc_get_many - mt_objc_get for n ids with one round trip: cached ids
 * are answered locally, the GETs for the others leave in one write and
 * their replies are collected in whatever order the store sends them (a
 * waiting GET may be answered after later ones).
 *
 * IN  timeout_ms   applies to each id separately, as in mt_objc_get
 * OUT outs, rcs    outs[i] valid when rcs[i] == 0; release each one
 * RET 0 when every id was answered (see rcs), -MT_ECLOSED, -MT_ENOMEM
 */
int mt_objc_get_many(struct mt_objc *c, const mt_object_id *ids, size_t n,
                     int64_t timeout_ms, struct mt_objc_buf *outs, int *rcs);

/* ---- other ---- */

/*
 * mt_objc_delete - delete a sealed object (freed at its last release).
 *
 * RET 0, -MT_ENOENT, -MT_ESTATE (unsealed)
 * NOTE buffers this client still holds stay valid until released
 */
int mt_objc_delete(struct mt_objc *c, const mt_object_id *id);

/* mt_objc_contains - RET 0 (sealed), -MT_EAGAIN (unsealed), -MT_ENOENT */
int mt_objc_contains(struct mt_objc *c, const mt_object_id *id);

/* mt_objc_stats - the store's figures. RET 0 or a transport error. */
int mt_objc_stats(struct mt_objc *c, struct mt_store_stats *out);

/*
 * mt_objc_server_stats - the socket server's figures (clients, requests,
 * protocol errors, waiting gets). RET 0 or a transport error.
 */
int mt_objc_server_stats(struct mt_objc *c, struct mt_server_stats *out);

/* mt_objc_flush - send every deferred release now. RET 0, -MT_ECLOSED */
int mt_objc_flush(struct mt_objc *c);

/* mt_objc_client_id - the store's id for this connection. */
uint64_t mt_objc_client_id(const struct mt_objc *c);

#endif /* MT_CLIENT_H */
