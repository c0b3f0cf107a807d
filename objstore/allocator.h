/* SPDX-License-Identifier: Apache-2.0 */
/*
 * allocator.h -- 64-byte aligned range allocator for the shared arena.
 *
 * Hands out [offset, offset + size) ranges of a region; the bytes themselves
 * live in shared memory, but the bookkeeping lives in the store's private
 * heap, so a client scribbling over the arena can corrupt object bytes but
 * never the allocator (house style H12: only offsets cross processes).
 *
 * FRAGMENTATION: free ranges are kept in 64 segregated lists by power-of-two
 * size class (bin i holds sizes in [2^i, 2^(i+1))). An allocation takes the
 * first block that fits in its own class, else the first block of the next
 * non-empty class, and splits off the tail. A freed block is merged at once
 * with free neighbours, so no two free blocks are ever adjacent and a store
 * whose objects are all freed is one block again. External fragmentation is
 * still possible: after interleaved frees the free bytes may exceed a request
 * while no single block fits (mt_allocator_alloc then says -MT_ENOSPC and
 * largest_free in the stats shows it). The store copes by evicting more
 * victims until a hole large enough appears; it never compacts (object
 * offsets are handed to clients and must stay put).
 *
 * THREAD not thread safe; the store's loop thread owns it.
 */
#ifndef MT_ALLOCATOR_H
#define MT_ALLOCATOR_H

#include <stdbool.h>
#include <stdint.h>

#define MT_ALLOC_ALIGN 64
#define MT_ALLOC_NBINS 64

/* One range, free or used. Read-only outside allocator.c except `owner`. */
struct mt_block {
    uint64_t offset;              /* start, a multiple of MT_ALLOC_ALIGN */
    uint64_t size;                /* bytes, a multiple of MT_ALLOC_ALIGN */
    bool free;                    /* in a bin, not handed out */
    struct mt_block *addr_prev;   /* neighbour below, NULL at the start */
    struct mt_block *addr_next;   /* neighbour above, NULL at the end */
    struct mt_block *bin_prev;    /* free list links (free blocks only) */
    struct mt_block *bin_next;
};

/* The allocator. Guarded by: the store's loop thread. */
struct mt_allocator {
    uint64_t base;                        /* first offset managed */
    uint64_t size;                        /* bytes managed */
    uint64_t used;                        /* bytes handed out */
    uint64_t nfree;                       /* free blocks */
    uint64_t nused;                       /* blocks handed out */
    uint64_t binmask;                     /* bit i set: bins[i] non-empty */
    struct mt_block *bins[MT_ALLOC_NBINS]; /* free lists by size class */
    struct mt_block *first;               /* lowest block */
};

/* ---- lifecycle ---- */

/*
 * mt_allocator_init - manage [base, base + size) as one free block.
 *
 * IN  base, size   base is rounded up and size down to MT_ALLOC_ALIGN
 * RET 0, -MT_EINVAL (less than one aligned block)
 * OWNERSHIP a is caller storage; release with mt_allocator_release()
 */
int mt_allocator_init(struct mt_allocator *a, uint64_t base, uint64_t size);

/* mt_allocator_release - free every block record (used ones included). */
void mt_allocator_release(struct mt_allocator *a);

/* ---- allocation ---- */

/*
 * mt_allocator_round - the bytes a request of n takes (n rounded up to 64,
 * at least 64).
 */
uint64_t mt_allocator_round(uint64_t n);

/*
 * mt_allocator_alloc - reserve n bytes (rounded by mt_allocator_round).
 *
 * OUT out   the used block; its offset is 64-byte aligned
 * RET 0, -MT_ETOOBIG (more than the whole region), -MT_ENOSPC (no free block
 *     fits now)
 * OWNERSHIP *out belongs to the allocator; give it back with
 *     mt_allocator_free()
 */
int mt_allocator_alloc(struct mt_allocator *a, uint64_t n,
                       struct mt_block **out);

/*
 * mt_allocator_free - return a used block; it merges with free neighbours.
 *
 * OWNERSHIP invalidates b
 */
void mt_allocator_free(struct mt_allocator *a, struct mt_block *b);

/* ---- figures ---- */

/* mt_allocator_largest_free - size of the biggest free block (0 if none). */
uint64_t mt_allocator_largest_free(const struct mt_allocator *a);

#endif /* MT_ALLOCATOR_H */
