/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_object.h -- the object calls of rpc_object.c, the one file that sees
 * their protobuf types, and the client's objects part (puts to register
 * and references to release, sent in batches) that rpc_object.c sends and
 * object.c fills. The user-facing side is manta/object.h (object.c).
 *
 * Puts and gets run on the caller's thread against the store (the store
 * client is blocking and thread-safe); only what the head must know goes
 * through the loop thread. Registrations and releases queue under c->mu
 * and the loop thread sends them together (MT__REL_BATCH at once, else
 * MT__REL_DELAY_MS after the first); a registration is sent before any
 * task this client submits next, so a task naming the object finds it
 * known (the task module calls mt__reg_flush / mt__reg_send for that).
 */
#ifndef MT_SDK_RPC_OBJECT_H
#define MT_SDK_RPC_OBJECT_H

#include "sdk/client_int.h"
#include "manta/admin.h"

#define MT__REL_BATCH 256     /* releases sent at once when this many */
#define MT__REL_DELAY_MS 20   /* else this long after the first */

/* ---- the objects part ---------------------------------------------------- */

/* The client's objects part. Guarded by c->mu unless marked. */
struct mt__objects {
    atomic_bool batching;     /* puts queue their registration (set by
                                 the task module while its client watch
                                 is up); read without mu */
    mt_object_id *rel_ids;    /* references to release */
    size_t n_rel, cap_rel;
    int rel_calls;            /* ReleaseObjects calls running */
    mt_object_id *reg_ids;    /* puts to register */
    uint64_t *reg_sizes;
    size_t n_reg, cap_reg;
    int reg_calls;            /* RegisterObjects calls running */
    bool reg_urgent;          /* send them at the next wake-up */
    /* Loop thread only: */
    uv_timer_t rel_timer;     /* sends the batches */
    bool timer_ready;
    bool rel_armed;
    struct mt_rpc_channel *worker_ch; /* to c->worker_address, on first use */
};

/* ---- registration (rpc_object.c) ----------------------------------------- */

/* mt__reg_post - queue id (size bytes) for registration. RET 0,
 * -MT_ENOMEM, -MT_ECLOSED (recorded). THREAD any. */
int mt__reg_post(struct mt_client *c, const mt_object_id *id, uint64_t size);

/* mt__reg_flush - send what is queued and wait for the head's answer (at
 * most the rpc timeout). THREAD any but the loop's. */
void mt__reg_flush(struct mt_client *c);

/* Loop thread: send every queued registration in one call. */
void mt__reg_send(struct mt_client *c);

/* Loop thread (mu not held): registrations queued or on the wire? */
bool mt__reg_busy(struct mt_client *c);

/* Loop thread: send the batched releases and registrations now when
 * enough are queued (or urgent, or stopping), else arm the timer. */
void mt__rel_kick(struct mt_client *c);

/* Loop thread: stop: close the timer and the worker's channel. */
void mt__objects_stop(struct mt_client *c);

/* ---- object calls (rpc_object.c; caller thread) -------------------------- */

/* Where an object is, as the head's GetObject says. Owned strings. */
struct mt__located {
    mt_object_state state;
    uint64_t size;
    bool is_inline;
    uint8_t *data;             /* is_inline (owned) */
    char **holders;            /* worker addresses (owned) */
    size_t n_holders;
    char error[256];
};

void mt__located_release(struct mt__located *l);

/* RegisterObjects of one put on c's node. RET 0 or -MT_E* (recorded). */
int mt__obj_register(struct mt_client *c, const mt_object_id *id,
                     uint64_t size);

/* ReleaseObjects. RET 0, -MT_ENOENT (some unknown), or -MT_E* (recorded). */
int mt__obj_release(struct mt_client *c, const mt_object_id *ids, size_t n);

/* GetObject: wait up to timeout_ms (>= 0) while PENDING; ask to record a
 * copy at c's worker. RET 0, -MT_ENOENT (unknown), -MT_E* (recorded). */
int mt__obj_locate(struct mt_client *c, const mt_object_id *id,
                   int timeout_ms, struct mt__located *out);

/* FetchObject on c's worker from holder. RET 0 or -MT_E* (recorded). */
int mt__obj_fetch(struct mt_client *c, const mt_object_id *id,
                  const char *holder, int timeout_ms);

/* mt__object_list - ListObjects (f checked, state its value): the entries
 * into l (their memory in keep) or, with json, the JSON text (owned).
 * RET 0 or -MT_E* (recorded on c) */
int mt__object_list(struct mt_client *c, const mt_list_filter *f, int state,
                    mt_listing *l, struct mt__keep *keep, char **json);

#endif /* MT_SDK_RPC_OBJECT_H */
