/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transfer.h -- objects pulled into this node's store from a node that
 * holds them, for the FetchObject rpc and for the object arguments of
 * runs (task_args.h).
 *
 * A fetch reads one object from a holder's PullObject stream and writes
 * each chunk straight into the store with a pull writer
 * (objstore/transfer.h), the wire copying from its receive buffers into
 * the unsealed object (mt_fetch_chunk_fill); the object is sealed when every chunk is in, and
 * any failure or cancellation aborts the writer, so no half object is
 * ever visible. One pull per object at a time: a second fetch of an object
 * being pulled joins the first and ends with it.
 *
 * The bytes travel over a wire the rpc adapter sets (rpc_transfer.c): it
 * opens a stream for a fetch and hands back each chunk
 * (mt_fetch_chunk) and the stream's end (mt_fetch_stream_ended). The
 * sending side keeps no state here: the adapter streams a sealed object
 * from a chunk reader of the store.
 *
 * THREAD: the worker's loop thread only.
 */
#ifndef MT_WORKER_TRANSFER_H
#define MT_WORKER_TRANSFER_H

#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"

#define MT_TRANSFER_MAX_CHUNK (16u * 1024u * 1024u) /* bytes per chunk */
#define MT_TRANSFER_TIMEOUT_MS 60000 /* a fetch's default deadline */

struct mt_store;
struct mt_object_info;
struct mt_transfers;
struct mt_fetch;

/* How a fetch ended; every pointer is borrowed for the callback. */
struct mt_fetch_result {
    int err;                    /* 0: the object is in the store */
    const char *msg;            /* err: "pull from ADDR failed: why" */
    uint64_t size;              /* err 0: the object's data bytes */
    uint64_t elapsed_us;        /* since the pull started */
};

/* A fetch ended; runs on the loop thread. */
typedef void (*mt_fetch_done_fn)(void *arg, const struct mt_fetch_result *r);

/* How fetches reach the holders; set by the rpc adapter. */
struct mt_transfer_wire {
    /*
     * open - start streaming id from the worker at from (host:port) for f.
     * RET 0 with *stream set: the chunks, then the end, come back through
     *     mt_fetch_chunk and mt_fetch_stream_ended, never before open
     *     returns; or -MT_E*: nothing comes back
     */
    int (*open)(void *arg, struct mt_fetch *f, const mt_object_id *id,
                const char *from, int timeout_ms, void **stream);
    /* cancel - cut the stream short; its end still comes back. */
    void (*cancel)(void *arg, void *stream);
};

/*
 * mt_transfers_create - no fetch in flight yet, and no wire.
 * IN  store  borrowed; must outlive the transfers
 */
struct mt_transfers *mt_transfers_create(struct mt_store *store);

/* mt_transfers_destroy - free, once every fetch has ended. NULL ok. */
void mt_transfers_destroy(struct mt_transfers *tr);

/* mt_transfers_set_wire - how fetches open their streams (borrowed). */
void mt_transfers_set_wire(struct mt_transfers *tr,
                           const struct mt_transfer_wire *wire, void *arg);

/*
 * mt_transfers_fetch - pull id from the worker at from into the store, or
 * join the pull of id already in flight. The caller checks first whether
 * the object is here.
 * IN  timeout_ms  0: MT_TRANSFER_TIMEOUT_MS; < 0: no deadline
 * OUT started     the new fetch (for mt_fetch_cancel), NULL when joined;
 *                 may be NULL
 * RET 0: done(arg) runs exactly once, later, also when the fetch is cut
 *     short; -MT_E* (no wire, the holder cannot be reached): it never runs
 */
int mt_transfers_fetch(struct mt_transfers *tr, const mt_object_id *id,
                       const char *from, int timeout_ms,
                       mt_fetch_done_fn done, void *arg,
                       struct mt_fetch **started);

/* mt_fetch_cancel - cut f short ("fetch cancelled"): it and every fetch
 * that joined it end with -MT_ECANCELED. */
void mt_fetch_cancel(struct mt_fetch *f);

/* mt_transfers_cancel - cut every fetch short ("worker stopping"). */
void mt_transfers_cancel(struct mt_transfers *tr);

/* ---- the wire's side --------------------------------------------------- */

/*
 * mt_fetch_chunk - the stream brought len bytes at off. The first chunk
 * must describe the object (info, chunk_size in 1..MT_TRANSFER_MAX_CHUNK);
 * later ones may pass NULL. A chunk that does not fit fails the fetch and
 * cancels the stream.
 * IN  info, data  borrowed for the call
 */
void mt_fetch_chunk(struct mt_fetch *f, const struct mt_object_info *info,
                    uint32_t chunk_size, uint64_t off, const uint8_t *data,
                    size_t len);

/* Writes len bytes at dst from the wire's receive buffers. */
typedef void (*mt_fetch_fill_fn)(void *arg, uint8_t *dst, size_t len);

/*
 * mt_fetch_chunk_fill - as mt_fetch_chunk, for a wire that puts a chunk's
 * len bytes in place itself: when the chunk fits the object, fill(arg,
 * dst, len) writes them straight into the unsealed object in the store
 * (no staging copy), and then the chunk counts as received. A chunk that
 * does not fit is never filled; it fails the fetch.
 */
void mt_fetch_chunk_fill(struct mt_fetch *f, const struct mt_object_info *info,
                         uint32_t chunk_size, uint64_t off, size_t len,
                         mt_fetch_fill_fn fill, void *arg);

/*
 * mt_fetch_fail - the wire found the stream's bytes bad (a message that
 * does not parse): fail f with err and msg (borrowed) and cancel the
 * stream; its end still comes back.
 */
void mt_fetch_fail(struct mt_fetch *f, int err, const char *msg);

/*
 * mt_fetch_stream_ended - the stream is over: err 0 (the holder sent
 * everything) or the stream's -MT_E* with the holder's msg. Ends f and
 * every fetch that joined it; f is freed.
 */
void mt_fetch_stream_ended(struct mt_fetch *f, int err, const char *msg);

#endif /* MT_WORKER_TRANSFER_H */
