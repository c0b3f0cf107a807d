/* SPDX-License-Identifier: Apache-2.0 */
/*
 * allocator.c -- segregated-fit range allocator with immediate coalescing.
 *
 * Every block (free or used) sits on an address-ordered doubly linked list,
 * so a freed block finds its neighbours in O(1) and merges with them. Free
 * blocks also sit on one of 64 bins by floor(log2(size)); binmask lets an
 * allocation jump to the next non-empty bin with one count-trailing-zeros.
 * See allocator.h for the fragmentation behaviour.
 */
#include "allocator.h"

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"

static unsigned bin_of(uint64_t size)
{
    return 63u - (unsigned)__builtin_clzll(size);
}

static void bin_push(struct mt_allocator *a, struct mt_block *b)
{
    unsigned i = bin_of(b->size);

    b->free = true;
    b->bin_prev = NULL;
    b->bin_next = a->bins[i];
    if (b->bin_next)
        b->bin_next->bin_prev = b;
    a->bins[i] = b;
    a->binmask |= 1ULL << i;
    a->nfree++;
}

static void bin_unlink(struct mt_allocator *a, struct mt_block *b)
{
    unsigned i = bin_of(b->size);

    if (b->bin_prev)
        b->bin_prev->bin_next = b->bin_next;
    else
        a->bins[i] = b->bin_next;
    if (b->bin_next)
        b->bin_next->bin_prev = b->bin_prev;
    if (!a->bins[i])
        a->binmask &= ~(1ULL << i);
    b->bin_prev = b->bin_next = NULL;
    b->free = false;
    a->nfree--;
}

int mt_allocator_init(struct mt_allocator *a, uint64_t base, uint64_t size)
{
    const uint64_t mask = ~(uint64_t)(MT_ALLOC_ALIGN - 1);
    uint64_t start = (base + MT_ALLOC_ALIGN - 1) & mask;
    uint64_t end = (base + size) & mask;
    struct mt_block *b;

    *a = (struct mt_allocator){0};
    if (end <= start)
        return -MT_EINVAL;
    b = mt_xcalloc(1, sizeof(*b));
    b->offset = start;
    b->size = end - start;
    a->base = start;
    a->size = b->size;
    a->first = b;
    bin_push(a, b);
    return 0;
}

void mt_allocator_release(struct mt_allocator *a)
{
    struct mt_block *b = a->first, *next;

    for (; b; b = next) {
        next = b->addr_next;
        free(b);
    }
    *a = (struct mt_allocator){0};
}

uint64_t mt_allocator_round(uint64_t n)
{
    if (n == 0)
        return MT_ALLOC_ALIGN;
    if (n > UINT64_MAX - MT_ALLOC_ALIGN)
        return UINT64_MAX & ~(uint64_t)(MT_ALLOC_ALIGN - 1);
    return (n + MT_ALLOC_ALIGN - 1) & ~(uint64_t)(MT_ALLOC_ALIGN - 1);
}

/* First block of bin i that holds need bytes, or NULL. */
static struct mt_block *fit_in_bin(struct mt_allocator *a, unsigned i,
                                   uint64_t need)
{
    struct mt_block *b = a->bins[i];

    for (; b; b = b->bin_next)
        if (b->size >= need)
            return b;
    return NULL;
}

static struct mt_block *find_fit(struct mt_allocator *a, uint64_t need)
{
    unsigned i = bin_of(need);
    struct mt_block *b = fit_in_bin(a, i, need);
    uint64_t above;

    if (b || i == 63)
        return b;
    above = a->binmask & ~((2ULL << i) - 1);
    if (!above)
        return NULL;
    return a->bins[__builtin_ctzll(above)];
}

/* Cut the tail beyond need off b (b is already off its bin). */
static void split(struct mt_allocator *a, struct mt_block *b, uint64_t need)
{
    struct mt_block *t;

    if (b->size - need < MT_ALLOC_ALIGN)
        return;
    t = mt_xcalloc(1, sizeof(*t));
    t->offset = b->offset + need;
    t->size = b->size - need;
    t->addr_prev = b;
    t->addr_next = b->addr_next;
    if (t->addr_next)
        t->addr_next->addr_prev = t;
    b->addr_next = t;
    b->size = need;
    bin_push(a, t);
}

int mt_allocator_alloc(struct mt_allocator *a, uint64_t n,
                       struct mt_block **out)
{
    uint64_t need = mt_allocator_round(n);
    struct mt_block *b;

    if (need > a->size)
        return -MT_ETOOBIG;
    b = find_fit(a, need);
    if (!b)
        return -MT_ENOSPC;
    bin_unlink(a, b);
    split(a, b, need);
    a->used += b->size;
    a->nused++;
    *out = b;
    return 0;
}

/* Merge b's upper neighbour nx (free, off its bin) into b. */
static void absorb_next(struct mt_block *b, struct mt_block *nx)
{
    b->size += nx->size;
    b->addr_next = nx->addr_next;
    if (b->addr_next)
        b->addr_next->addr_prev = b;
    free(nx);
}

void mt_allocator_free(struct mt_allocator *a, struct mt_block *b)
{
    struct mt_block *pv;

    MT_ASSERT(!b->free);
    a->used -= b->size;
    a->nused--;
    if (b->addr_next && b->addr_next->free) {
        bin_unlink(a, b->addr_next);
        absorb_next(b, b->addr_next);
    }
    pv = b->addr_prev;
    if (pv && pv->free) {
        bin_unlink(a, pv);
        absorb_next(pv, b);
        b = pv;
    }
    bin_push(a, b);
}

uint64_t mt_allocator_largest_free(const struct mt_allocator *a)
{
    uint64_t best = 0;
    struct mt_block *b;

    if (!a->binmask)
        return 0;
    b = a->bins[63 - __builtin_clzll(a->binmask)];
    for (; b; b = b->bin_next)
        if (b->size > best)
            best = b->size;
    return best;
}
