/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store.c -- shared-memory object store (server side).
 *
 * Clients create an object, fill the mapped region, then seal it; sealed
 * objects are immutable. Each get pins the object until the matching
 * release; unpinned sealed objects are eviction candidates. Shared-memory
 * layout: see shm_layout.h.
 *
 * DESIGN: one loop thread owns all store state. The object table is an idmap
 * of struct entry; each resident entry owns one allocator block. Space is
 * reclaimed by asking the eviction policy (eviction.h) for victims: the
 * policy chooses (evictable copies first, then primaries, each LRU), the
 * store deletes evictable victims and spills the others (when a spill dir
 * is set). A spilled entry keeps its table slot, holds no
 * block, and is read back by the next get.
 *
 * PAGES: freed blocks are never unmapped or punched, so recycled space is
 * already populated; above the highest block ever allocated a helper
 * thread (prefault.h) keeps prefault_ahead bytes populated, so a put into
 * new space does not take a page fault per 4 KiB either.
 *
 * INVARIANTS: an entry is a policy candidate exactly when it is sealed,
 * resident, unpinned, not being deleted, and evictable or spillable
 * (refresh_candidate keeps this true after every state change). Space is
 * never freed while pins > 0.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "objstore/allocator.h"
#include "objstore/arena.h"
#include "objstore/idmap.h"
#include "objstore/prefault.h"

enum entry_state {
    ENTRY_CREATED, /* being written by its creator */
    ENTRY_SEALED,  /* immutable, resident */
    ENTRY_SPILLED, /* immutable, on disk only */
};

/* One object. Guarded by: loop thread. */
struct entry {
    struct mt_idmap_node node;    /* key: object id */
    enum entry_state state;
    struct mt_block *block;       /* arena range; NULL when spilled */
    uint64_t data_size;
    uint64_t meta_size;
    uint32_t flags;               /* MT_OBJ_* */
    uint32_t pins;                /* outstanding gets */
    bool deleting;                /* delete asked while pinned */
    bool candidate;               /* known to the eviction policy */
    void *evict_slot;             /* the policy's handle */
    struct mt_tensor_desc tensor;
};

struct mt_store {
    struct mt_arena arena;
    struct mt_allocator alloc;
    struct mt_idmap table;             /* struct entry by id */
    const struct mt_evict_ops *evict;
    void *evict_st;
    char *spill_dir;                   /* NULL: no spilling */
    struct {
        mt_store_event_cb cb;
        void *arg;
    } listeners[MT_STORE_MAX_LISTENERS]; /* cb NULL: free slot */
    mt_store_reclaim_cb reclaim_cb;    /* frees pins clients only cache */
    void *reclaim_arg;
    struct mt_prefault *prefault;      /* NULL: none, or all done at start */
    uint64_t high;                     /* highest block end ever allocated */
    struct mt_store_stats st;          /* counters kept up to date */
};

/* ---- helpers ---- */

static struct entry *lookup(const struct mt_store *st, const mt_object_id *id)
{
    struct mt_idmap_node *n = mt_idmap_find(&st->table, id);

    return n ? MT_CONTAINER_OF(n, struct entry, node) : NULL;
}

static uint64_t total_size(const struct entry *e)
{
    return e->data_size + e->meta_size;
}

static void refresh_candidate(struct mt_store *st, struct entry *e)
{
    bool want = e->state == ENTRY_SEALED && e->pins == 0 && !e->deleting &&
                ((e->flags & MT_OBJ_EVICTABLE) || st->spill_dir);

    if (want && !e->candidate)
        st->evict->add(st->evict_st, &e->node.id, total_size(e),
                       (e->flags & MT_OBJ_EVICTABLE) ? MT_EVICT_DROP
                                                     : MT_EVICT_SPILL,
                       &e->evict_slot);
    else if (!want && e->candidate)
        st->evict->remove(st->evict_st, &e->evict_slot);
    e->candidate = want;
}

static void fill_info(const struct entry *e, struct mt_object_info *info)
{
    memset(info, 0, sizeof(*info));
    info->offset = e->block ? e->block->offset : 0;
    info->data_size = e->data_size;
    info->meta_size = e->meta_size;
    info->flags = e->flags;
    if (e->flags & MT_OBJ_TENSOR)
        info->tensor = e->tensor;
}

static void spill_path(const struct mt_store *st, const mt_object_id *id,
                       char *buf, size_t len)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1];

    snprintf(buf, len, "%s/%s.obj", st->spill_dir, mt_object_id_hex(id, hex));
}

static void notify(struct mt_store *st, enum mt_store_event ev,
                   const mt_object_id *id)
{
    for (int i = 0; i < MT_STORE_MAX_LISTENERS; i++)
        if (st->listeners[i].cb)
            st->listeners[i].cb(st->listeners[i].arg, ev, id);
}

/* Unlink e from everything and free it, whatever its state. */
static void free_entry(struct mt_store *st, struct entry *e)
{
    char path[4096];

    e->deleting = true;
    refresh_candidate(st, e);
    if (e->block)
        mt_allocator_free(&st->alloc, e->block);
    if (e->state == ENTRY_SPILLED) {
        spill_path(st, &e->node.id, path, sizeof(path));
        unlink(path);
        st->st.spilled -= total_size(e);
        st->st.num_spilled--;
    } else if (e->state == ENTRY_SEALED) {
        st->st.num_sealed--;
    } else {
        st->st.num_unsealed--;
    }
    st->st.num_objects--;
    mt_idmap_remove(&st->table, &e->node);
    free(e);
}

/* ---- spilling ---- */

static int read_all(int fd, uint8_t *p, uint64_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n > (1u << 30) ? (1u << 30) : n);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (uint64_t)r;
    }
    return 0;
}

/* Write a sealed resident entry to its spill file and free its block. */
static int spill_entry(struct mt_store *st, struct entry *e)
{
    char path[4096];
    int fd, rc;

    spill_path(st, &e->node.id, path, sizeof(path));
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        MT_ERROR("open(\"%s\") failed: %s", path, strerror(errno));
        return -MT_EIO;
    }
    rc = mt_sys_write_all(fd, st->arena.base + e->block->offset,
                          total_size(e));
    if (close(fd) < 0 || rc < 0) {
        MT_ERROR("spill write \"%s\" failed: %s", path, strerror(errno));
        unlink(path);
        return -MT_EIO;
    }
    e->state = ENTRY_SPILLED;
    refresh_candidate(st, e);
    mt_allocator_free(&st->alloc, e->block);
    e->block = NULL;
    st->st.num_sealed--;
    st->st.num_spilled++;
    st->st.spilled += total_size(e);
    st->st.spills++;
    st->st.spilled_total += total_size(e);
    return 0;
}

/* Drop or spill one victim chosen by the policy. */
static int evict_one(struct mt_store *st, struct entry *e)
{
    mt_object_id id = e->node.id;
    int rc;

    if (e->flags & MT_OBJ_EVICTABLE) {
        st->st.evictions++;
        st->st.evicted_bytes += total_size(e);
        free_entry(st, e);
        notify(st, MT_STORE_EVICTED, &id);
        return 0;
    }
    rc = spill_entry(st, e);
    if (rc == 0)
        notify(st, MT_STORE_SPILLED, &id);
    return rc;
}

/* Allocate n bytes, evicting/spilling LRU candidates until a hole fits. */
static int evict_until_fits(struct mt_store *st, uint64_t n,
                            struct mt_block **out)
{
    mt_object_id *victims;
    size_t nv;
    int rc = mt_allocator_alloc(&st->alloc, n, out);

    while (rc == -MT_ENOSPC) {
        rc = st->evict->require_space(st->evict_st, mt_allocator_round(n),
                                      &victims, &nv);
        if (rc < 0)
            return rc;
        if (nv == 0) {
            /* Last resort: pins that clients keep only as a cache. */
            if (st->reclaim_cb && st->reclaim_cb(st->reclaim_arg) > 0) {
                rc = mt_allocator_alloc(&st->alloc, n, out);
                continue;
            }
            return -MT_ENOSPC;
        }
        for (size_t i = 0; i < nv && rc == 0; i++) {
            struct entry *e = lookup(st, &victims[i]);

            MT_ASSERT(e && e->candidate);
            rc = evict_one(st, e);
        }
        free(victims);
        if (rc < 0)
            return rc;
        rc = mt_allocator_alloc(&st->alloc, n, out);
    }
    return rc;
}

/*
 * evict_until_fits, then tell the prefault helper when the allocation
 * reached new memory, so the pages above stay populated ahead of use.
 */
static int make_room(struct mt_store *st, uint64_t n, struct mt_block **out)
{
    int rc = evict_until_fits(st, n, out);

    if (rc == 0 && (*out)->offset + (*out)->size > st->high) {
        st->high = (*out)->offset + (*out)->size;
        if (st->prefault)
            mt_prefault_note(st->prefault, st->high);
    }
    return rc;
}

/* Read a spilled entry back into the arena. */
static int restore_entry(struct mt_store *st, struct entry *e)
{
    char path[4096];
    int fd, rc;

    rc = make_room(st, total_size(e), &e->block);
    if (rc < 0)
        return rc;
    spill_path(st, &e->node.id, path, sizeof(path));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    rc = fd < 0 ? -1 : read_all(fd, st->arena.base + e->block->offset,
                                total_size(e));
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        MT_ERROR("restore \"%s\" failed: %s", path, strerror(errno));
        mt_allocator_free(&st->alloc, e->block);
        e->block = NULL;
        return -MT_EIO;
    }
    unlink(path);
    e->state = ENTRY_SEALED;
    st->st.num_spilled--;
    st->st.num_sealed++;
    st->st.spilled -= total_size(e);
    st->st.restores++;
    st->st.restored_total += total_size(e);
    return 0;
}

/* ---- lifecycle ---- */

static int open_spill_dir(struct mt_store *st, const char *dir)
{
    struct stat sb;

    if (!dir)
        return 0;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
        return -MT_EINVAL;
    st->spill_dir = mt_xstrdup(dir);
    return 0;
}

/* All at start (MAP_POPULATE), a helper ahead of allocation, or none. */
static int start_prefault(struct mt_store *st, const struct mt_store_opts *o)
{
    int64_t ahead = o->prefault_ahead ? o->prefault_ahead
                                      : MT_STORE_PREFAULT_AHEAD;

    st->high = st->arena.data_offset;
    if (o->prefault) {
        st->st.prefaulted = st->arena.data_size;
        return 0;
    }
    if (ahead < 0)
        return 0;
    return mt_prefault_start(st->arena.base, st->arena.data_offset,
                             st->arena.size, (uint64_t)ahead, &st->prefault);
}

int mt_store_create(const struct mt_store_opts *o, struct mt_store **out)
{
    struct mt_store *st = mt_xcalloc(1, sizeof(*st));
    const char *name = o->name ? o->name : "manta-objstore";
    int rc;

    st->arena.fd = -1;
    st->evict = o->evict ? o->evict : &mt_evict_lru;
    rc = mt_arena_create(&st->arena, name, o->capacity, o->prefault);
    if (rc < 0)
        goto out_free;
    rc = mt_allocator_init(&st->alloc, st->arena.data_offset,
                           st->arena.data_size);
    if (rc < 0)
        goto out_free;
    rc = open_spill_dir(st, o->spill_dir);
    if (rc < 0)
        goto out_free;
    rc = start_prefault(st, o);
    if (rc < 0)
        goto out_free;
    rc = st->evict->init(&st->evict_st);
    if (rc < 0)
        goto out_free;
    mt_idmap_init(&st->table);
    st->st.capacity = st->alloc.size;
    *out = st;
    return 0;

out_free:
    mt_prefault_stop(st->prefault);
    mt_allocator_release(&st->alloc);
    mt_arena_release(&st->arena);
    free(st->spill_dir);
    free(st);
    return rc;
}

void mt_store_destroy(struct mt_store *st)
{
    struct mt_idmap_node *n, *next;

    if (!st)
        return;
    for (n = mt_idmap_first(&st->table); n; n = next) {
        next = mt_idmap_next(&st->table, n);
        free_entry(st, MT_CONTAINER_OF(n, struct entry, node));
    }
    mt_idmap_release(&st->table);
    st->evict->destroy(st->evict_st);
    mt_prefault_stop(st->prefault);
    mt_allocator_release(&st->alloc);
    mt_arena_release(&st->arena);
    free(st->spill_dir);
    free(st);
}

int mt_store_listen(struct mt_store *st, mt_store_event_cb cb, void *arg)
{
    for (int i = 0; i < MT_STORE_MAX_LISTENERS; i++) {
        if (!st->listeners[i].cb) {
            st->listeners[i].cb = cb;
            st->listeners[i].arg = arg;
            return 0;
        }
    }
    return -MT_ENOSPC;
}

void mt_store_unlisten(struct mt_store *st, mt_store_event_cb cb, void *arg)
{
    for (int i = 0; i < MT_STORE_MAX_LISTENERS; i++)
        if (st->listeners[i].cb == cb && st->listeners[i].arg == arg)
            st->listeners[i].cb = NULL;
}

void mt_store_set_reclaim_cb(struct mt_store *st, mt_store_reclaim_cb cb,
                             void *arg)
{
    st->reclaim_cb = cb;
    st->reclaim_arg = arg;
}

int mt_store_reserve(struct mt_store *st, uint64_t size, uint64_t *offset,
                     void **handle)
{
    struct mt_block *b;
    int rc;

    if (mt_allocator_round(size) > st->alloc.size)
        return -MT_ETOOBIG;
    rc = make_room(st, size, &b);
    if (rc < 0)
        return rc;
    memset(st->arena.base + b->offset, 0, b->size);
    st->st.reserved += b->size;
    *offset = b->offset;
    *handle = b;
    return 0;
}

void mt_store_unreserve(struct mt_store *st, void *handle)
{
    struct mt_block *b = handle;

    if (!b)
        return;
    st->st.reserved -= b->size;
    mt_allocator_free(&st->alloc, b);
}

int mt_store_fd(const struct mt_store *st)
{
    return st->arena.fd;
}

uint8_t *mt_store_base(const struct mt_store *st)
{
    return st->arena.base;
}

uint64_t mt_store_arena_size(const struct mt_store *st)
{
    return st->arena.size;
}

/* ---- object lifecycle ---- */

static int check_create(const struct mt_store *st, uint64_t data_size,
                        uint64_t meta_size, uint32_t flags,
                        const struct mt_tensor_desc *tensor)
{
    uint64_t total;

    if (flags & ~MT_OBJ_FLAGS_ALL)
        return -MT_EINVAL;
    if ((flags & MT_OBJ_TENSOR) && !tensor)
        return -MT_EINVAL;
    if (tensor && mt_tensor_check(tensor, data_size) < 0)
        return -MT_EINVAL;
    if (__builtin_add_overflow(data_size, meta_size, &total) ||
        mt_allocator_round(total) > st->alloc.size)
        return -MT_ETOOBIG;
    return 0;
}

int mt_store_create_object(struct mt_store *st, const mt_object_id *id,
                           uint64_t data_size, uint64_t meta_size,
                           uint32_t flags, const struct mt_tensor_desc *tensor,
                           struct mt_object_info *info)
{
    struct mt_block *b;
    struct entry *e;
    int rc;

    if (lookup(st, id))
        return -MT_EEXIST;
    rc = check_create(st, data_size, meta_size, flags, tensor);
    if (rc < 0)
        return rc;
    rc = make_room(st, data_size + meta_size, &b);
    if (rc < 0)
        return rc;
    e = mt_xcalloc(1, sizeof(*e));
    e->node.id = *id;
    e->state = ENTRY_CREATED;
    e->block = b;
    e->data_size = data_size;
    e->meta_size = meta_size;
    e->flags = flags | (tensor ? MT_OBJ_TENSOR : 0);
    if (tensor)
        e->tensor = *tensor;
    mt_idmap_insert(&st->table, &e->node);
    st->st.num_objects++;
    st->st.num_unsealed++;
    fill_info(e, info);
    return 0;
}

int mt_store_seal(struct mt_store *st, const mt_object_id *id)
{
    struct entry *e = lookup(st, id);

    if (!e)
        return -MT_ENOENT;
    if (e->state != ENTRY_CREATED)
        return -MT_ESTATE;
    e->state = ENTRY_SEALED;
    st->st.num_unsealed--;
    st->st.num_sealed++;
    refresh_candidate(st, e);
    notify(st, MT_STORE_SEALED, id);
    return 0;
}

int mt_store_abort(struct mt_store *st, const mt_object_id *id)
{
    struct entry *e = lookup(st, id);

    if (!e)
        return -MT_ENOENT;
    if (e->state != ENTRY_CREATED)
        return -MT_ESTATE;
    free_entry(st, e);
    return 0;
}

int mt_store_get(struct mt_store *st, const mt_object_id *id,
                 struct mt_object_info *info)
{
    struct entry *e = lookup(st, id);
    int rc;

    if (!e || e->deleting)
        return -MT_ENOENT;
    if (e->state == ENTRY_CREATED)
        return -MT_EAGAIN;
    if (e->pins == UINT32_MAX)
        return -MT_ERANGE;
    if (e->state == ENTRY_SPILLED) {
        rc = restore_entry(st, e);
        if (rc < 0)
            return rc;
        notify(st, MT_STORE_RESTORED, id);
    }
    if (e->pins++ == 0) {
        st->st.num_pinned++;
        st->st.pinned += total_size(e);
    }
    refresh_candidate(st, e);
    fill_info(e, info);
    return 0;
}

int mt_store_release(struct mt_store *st, const mt_object_id *id)
{
    struct entry *e = lookup(st, id);

    if (!e)
        return -MT_ENOENT;
    if (e->pins == 0)
        return -MT_ESTATE;
    if (--e->pins == 0) {
        st->st.num_pinned--;
        st->st.pinned -= total_size(e);
        if (e->deleting) {
            free_entry(st, e);
            return 0;
        }
    }
    refresh_candidate(st, e);
    return 0;
}

int mt_store_delete(struct mt_store *st, const mt_object_id *id)
{
    struct entry *e = lookup(st, id);

    if (!e || e->deleting)
        return -MT_ENOENT;
    if (e->state == ENTRY_CREATED)
        return -MT_ESTATE;
    if (e->pins > 0) {
        e->deleting = true;
        refresh_candidate(st, e);
    } else {
        free_entry(st, e);
    }
    notify(st, MT_STORE_DELETED, id);
    return 0;
}

int mt_store_contains(const struct mt_store *st, const mt_object_id *id)
{
    const struct entry *e = lookup(st, id);

    if (!e || e->deleting)
        return -MT_ENOENT;
    return e->state == ENTRY_CREATED ? -MT_EAGAIN : 0;
}

size_t mt_store_visit(const struct mt_store *st,
                      void (*fn)(void *arg, const mt_object_id *id),
                      void *arg)
{
    const struct mt_idmap_node *n;
    size_t k = 0;

    for (n = mt_idmap_first(&st->table); n; n = mt_idmap_next(&st->table, n)) {
        const struct entry *e = MT_CONTAINER_OF(n, struct entry, node);

        if (e->deleting || e->state == ENTRY_CREATED)
            continue;
        fn(arg, &n->id);
        k++;
    }
    return k;
}

int mt_store_set_evictable(struct mt_store *st, const mt_object_id *id,
                           bool evictable)
{
    struct entry *e = lookup(st, id);

    if (!e)
        return -MT_ENOENT;
    /* The candidate class changes with the flag: take it out first. */
    if (e->candidate) {
        st->evict->remove(st->evict_st, &e->evict_slot);
        e->candidate = false;
    }
    if (evictable)
        e->flags |= MT_OBJ_EVICTABLE;
    else
        e->flags &= ~MT_OBJ_EVICTABLE;
    refresh_candidate(st, e);
    return 0;
}

int mt_store_spill(struct mt_store *st, const mt_object_id *id)
{
    struct entry *e = lookup(st, id);
    int rc;

    if (!e || e->deleting)
        return -MT_ENOENT;
    if (!st->spill_dir)
        return -MT_ENOTSUP;
    if (e->state != ENTRY_SEALED || e->pins > 0)
        return -MT_ESTATE;
    rc = spill_entry(st, e);
    if (rc == 0)
        notify(st, MT_STORE_SPILLED, id);
    return rc;
}

/* ---- figures ---- */

void mt_store_stats(const struct mt_store *st, struct mt_store_stats *out)
{
    *out = st->st;
    out->used = st->alloc.used;
    out->largest_free = mt_allocator_largest_free(&st->alloc);
    if (st->prefault)
        out->prefaulted = mt_prefault_done(st->prefault);
}

void mt_store_prefault_sync(struct mt_store *st)
{
    if (st->prefault)
        mt_prefault_sync(st->prefault);
}
