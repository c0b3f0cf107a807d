/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store.h -- the node's shared-memory object store (server side).
 *
 * Objects live in one shared arena (arena.h, shm_layout.h). Lifecycle:
 * create -> write -> seal (or abort); get -> release; delete. A sealed object
 * is immutable; it is pinned while any get is outstanding and only sealed,
 * unpinned objects are evicted, spilled or freed. When space runs out the
 * eviction policy (eviction.h) picks least recently used candidates: objects
 * flagged MT_OBJ_EVICTABLE (the owner or head allows dropping this copy) are
 * deleted, the others are spilled to the spill directory when one is set and
 * restored on the next get.
 *
 * This is a library: it does no socket I/O (server.h puts it on a socket),
 * but spilling and restoring read and write files synchronously.
 *
 * THREAD not thread safe: the hosting daemon's loop thread owns the store and
 * makes every call (house style H10).
 */
#ifndef MT_STORE_H
#define MT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"
#include "objstore/eviction.h"
#include "objstore/tensor.h"

/* Object flags (struct mt_object_info.flags, create flags). */
#define MT_OBJ_EVICTABLE 0x1u /* the head allows dropping this copy */
#define MT_OBJ_TENSOR 0x2u    /* info.tensor is valid */
#define MT_OBJ_FLAGS_ALL (MT_OBJ_EVICTABLE | MT_OBJ_TENSOR)
/* A create flag for the socket server only (never stored): a driver's
 * put, which its creator registers with the head; reported when the
 * creating connection closes (server.h, mt_server_on_orphans). */
#define MT_OBJ_DRIVER_PUT 0x100u

struct mt_store;

/* Default of mt_store_opts.prefault_ahead: 256 MiB. */
#define MT_STORE_PREFAULT_AHEAD (256LL << 20)

/* Options for mt_store_create(). Zero means the default. */
struct mt_store_opts {
    uint64_t capacity;                /* data bytes; required (> 4 KiB) */
    const char *spill_dir;            /* NULL: never spill; made if absent */
    const struct mt_evict_ops *evict; /* NULL: mt_evict_lru */
    bool prefault;                    /* populate the whole arena at start */
    int64_t prefault_ahead;           /* else: bytes kept populated above
                                       * the allocation high-water mark by
                                       * a helper thread (prefault.h); 0:
                                       * MT_STORE_PREFAULT_AHEAD, < 0: none
                                       * (pages fault in at first write) */
    const char *name;                 /* memfd name; NULL: "manta-objstore" */
};

/* Where an object is and what it is. Fixed layout: also sent on the wire. */
struct mt_object_info {
    uint64_t offset;              /* from the arena base; data, then meta */
    uint64_t data_size;           /* object bytes */
    uint64_t meta_size;           /* metadata bytes after the data */
    uint32_t flags;               /* MT_OBJ_* */
    uint32_t reserved;            /* zero */
    struct mt_tensor_desc tensor; /* valid when flags has MT_OBJ_TENSOR */
};

/* Per-store figures (mt_store_stats). Bytes are object bytes unless noted. */
struct mt_store_stats {
    uint64_t capacity;         /* data region bytes */
    uint64_t used;             /* arena bytes allocated (64-byte rounded) */
    uint64_t pinned;           /* bytes of objects with at least one pin */
    uint64_t spilled;          /* bytes currently on disk */
    uint64_t largest_free;     /* biggest contiguous free range */
    uint64_t num_objects;      /* every object known, spilled included */
    uint64_t num_sealed;       /* sealed and resident */
    uint64_t num_unsealed;     /* created, not sealed yet */
    uint64_t num_spilled;      /* sealed, on disk only */
    uint64_t num_pinned;       /* with at least one pin */
    uint64_t evictions;        /* objects dropped by eviction (total) */
    uint64_t evicted_bytes;    /* their bytes (total) */
    uint64_t spills;           /* objects written to disk (total) */
    uint64_t spilled_total;    /* their bytes (total) */
    uint64_t restores;         /* objects read back from disk (total) */
    uint64_t restored_total;   /* their bytes (total) */
    uint64_t reserved;         /* of `used`: non-object reservations
                                * (client release boards) */
    uint64_t prefaulted;       /* data region bytes populated by the store
                                * (at start or ahead of allocation); freed
                                * ranges stay populated, so the memory the
                                * store commits is max(used ever, this) */
};

/* What happened to an object (listeners, mt_store_listen). */
enum mt_store_event {
    MT_STORE_SEALED = 1,   /* sealed: visible to gets */
    MT_STORE_DELETED = 2,  /* deleted by request (space may follow later) */
    MT_STORE_EVICTED = 3,  /* dropped to make room: this copy is gone */
    MT_STORE_SPILLED = 4,  /* moved to disk (still present) */
    MT_STORE_RESTORED = 5, /* read back from disk */
};

/*
 * A listener. It runs inside the store call that caused the event and may
 * read the store and pin/release (get, release, contains, stats) but must
 * not create, seal, abort, delete or spill.
 */
typedef void (*mt_store_event_cb)(void *arg, enum mt_store_event ev,
                                  const mt_object_id *id);

#define MT_STORE_MAX_LISTENERS 4

/*
 * Asked when space runs out and no eviction candidate is left: release pins
 * that clients keep only as a cache (see server.c, release boards). RET the
 * number of pins released (0: nothing to give).
 */
typedef uint64_t (*mt_store_reclaim_cb)(void *arg);

/* ---- lifecycle ---- */

/*
 * mt_store_create - a store with a fresh arena.
 *
 * IN  o     options (borrowed; spill_dir is copied)
 * OUT out   returns owned store, free with mt_store_destroy()
 * RET 0, -MT_EINVAL (capacity too small, bad spill dir), -errno
 */
int mt_store_create(const struct mt_store_opts *o, struct mt_store **out);

/*
 * mt_store_destroy - free every object, delete spill files, unmap the arena.
 *
 * NOTE clients that mapped the arena keep their mapping (it is theirs).
 * OWNERSHIP invalidates st; NULL is fine
 */
void mt_store_destroy(struct mt_store *st);

/*
 * mt_store_listen - call cb(arg, ev, id) on every event from now on (the
 * socket server listens for seals to wake waiting gets; the worker will
 * listen to keep the head's object directory current).
 *
 * RET 0, -MT_ENOSPC (MT_STORE_MAX_LISTENERS already)
 * OWNERSHIP borrows arg until mt_store_unlisten()
 */
int mt_store_listen(struct mt_store *st, mt_store_event_cb cb, void *arg);

/* mt_store_unlisten - remove the listener (cb, arg); absent is fine. */
void mt_store_unlisten(struct mt_store *st, mt_store_event_cb cb, void *arg);

/*
 * mt_store_set_reclaim_cb - install the last-resort reclaimer (one; NULL
 * removes it). It may release pins but must not create or delete objects.
 */
void mt_store_set_reclaim_cb(struct mt_store *st, mt_store_reclaim_cb cb,
                             void *arg);

/* ---- the arena ---- */

/* mt_store_fd - the arena fd to pass to clients. RET fd (the store's). */
int mt_store_fd(const struct mt_store *st);

/* mt_store_base - the store's own mapping of the arena. */
uint8_t *mt_store_base(const struct mt_store *st);

/* mt_store_arena_size - bytes of the whole arena (header included). */
uint64_t mt_store_arena_size(const struct mt_store *st);

/*
 * mt_store_reserve - zeroed arena bytes that are not an object (the
 * server's per-client release boards), evicting like a create would.
 *
 * OUT offset   from the arena base, 64-byte aligned
 * OUT handle   give it back with mt_store_unreserve()
 * RET 0, -MT_ETOOBIG, -MT_ENOSPC, -MT_EIO
 * NOTE counted in the `used` figure
 */
int mt_store_reserve(struct mt_store *st, uint64_t size, uint64_t *offset,
                     void **handle);

/* mt_store_unreserve - free a reservation; NULL is fine. */
void mt_store_unreserve(struct mt_store *st, void *handle);

/* ---- object lifecycle ---- */

/*
 * mt_store_create_object - reserve space for an object the caller will fill.
 *
 * IN  id           new object id
 * IN  data_size    object bytes; meta_size metadata bytes after them
 * IN  flags        MT_OBJ_EVICTABLE; MT_OBJ_TENSOR is set from tensor
 * IN  tensor       optional (NULL); checked against data_size
 * OUT info         where to write (offset from the arena base)
 * RET 0, -MT_EEXIST, -MT_EINVAL (bad flags or tensor), -MT_ETOOBIG (larger
 *     than the capacity), -MT_ENOSPC (no room even after evicting and
 *     spilling every candidate: the rest is pinned or unsealed), -MT_EIO
 *     (a spill failed)
 * NOTE the object is unsealed until mt_store_seal or mt_store_abort
 * OWNERSHIP borrows id and tensor
 */
int mt_store_create_object(struct mt_store *st, const mt_object_id *id,
                           uint64_t data_size, uint64_t meta_size,
                           uint32_t flags, const struct mt_tensor_desc *tensor,
                           struct mt_object_info *info);

/*
 * mt_store_seal - make an unsealed object immutable and visible to gets.
 *
 * RET 0, -MT_ENOENT, -MT_ESTATE (already sealed)
 */
int mt_store_seal(struct mt_store *st, const mt_object_id *id);

/*
 * mt_store_abort - drop an unsealed object and free its space.
 *
 * RET 0, -MT_ENOENT, -MT_ESTATE (sealed: use mt_store_delete)
 */
int mt_store_abort(struct mt_store *st, const mt_object_id *id);

/*
 * mt_store_get - pin a sealed object and say where it is mapped; restores a
 * spilled object first (which may evict or spill others).
 *
 * OUT info   valid until the matching mt_store_release()
 * RET 0, -MT_ENOENT (absent or being deleted), -MT_EAGAIN (created, not
 *     sealed yet), -MT_ENOSPC / -MT_EIO (spilled, cannot be restored now),
 *     -MT_ERANGE (2^32 - 1 pins already)
 */
int mt_store_get(struct mt_store *st, const mt_object_id *id,
                 struct mt_object_info *info);

/*
 * mt_store_release - drop one pin taken by mt_store_get.
 *
 * RET 0, -MT_ENOENT, -MT_ESTATE (not pinned: release without get)
 */
int mt_store_release(struct mt_store *st, const mt_object_id *id);

/*
 * mt_store_delete - delete a sealed object; if pinned, it disappears for new
 * gets at once and its space is freed at the last release.
 *
 * RET 0, -MT_ENOENT, -MT_ESTATE (unsealed: use mt_store_abort)
 */
int mt_store_delete(struct mt_store *st, const mt_object_id *id);

/*
 * mt_store_contains - RET 0 (sealed, resident or spilled), -MT_EAGAIN
 * (unsealed), -MT_ENOENT.
 */
int mt_store_contains(const struct mt_store *st, const mt_object_id *id);

/*
 * mt_store_set_evictable - allow (or forbid) dropping this copy under
 * memory pressure; the head drives this once other copies or no references
 * remain.
 *
 * RET 0, -MT_ENOENT
 */
int mt_store_set_evictable(struct mt_store *st, const mt_object_id *id,
                           bool evictable);

/*
 * mt_store_spill - write a sealed, unpinned object to disk now and free its
 * arena space (normally done on demand when space runs out).
 *
 * RET 0, -MT_ENOENT, -MT_ENOTSUP (no spill dir), -MT_ESTATE (unsealed,
 *     pinned or already spilled), -MT_EIO
 */
int mt_store_spill(struct mt_store *st, const mt_object_id *id);

/*
 * mt_store_visit - call fn(arg, id) once for every object a get would
 * find (sealed, resident or spilled; not being written, not deleted), in
 * no particular order: what the node holds, for the head (RegisterNode).
 * fn must not create or delete objects.
 *
 * RET the number of objects visited
 * OWNERSHIP id is borrowed for the call
 */
size_t mt_store_visit(const struct mt_store *st,
                      void (*fn)(void *arg, const mt_object_id *id),
                      void *arg);

/* ---- figures ---- */

/* mt_store_stats - fill out with the current figures. */
void mt_store_stats(const struct mt_store *st, struct mt_store_stats *out);

/*
 * mt_store_prefault_sync - wait until the prefault helper has populated
 * what the allocations so far asked for (returns at once without one).
 * For tests and benchmarks; the store never waits for it itself.
 */
void mt_store_prefault_sync(struct mt_store *st);

#endif /* MT_STORE_H */
