/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tagmap.c -- tag -> item map (see tagmap.h): open addressing with linear
 * probing, grown at half full, and deletion by backward shift (no
 * tombstones), so lookups stay short however many items come and go.
 */
#include "sdk/tagmap.h"

#include <stdlib.h>

#include "common/error.h"

static size_t slot_of(const struct mt__tagmap *m, uint64_t tag)
{
    return (size_t)(tag * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
}

/* The first empty slot of tag's run. */
static size_t free_slot(const struct mt__tagmap *m, uint64_t tag)
{
    size_t j = slot_of(m, tag);

    while (m->slots[j].item)
        j = (j + 1) & (m->cap - 1);
    return j;
}

static int grow(struct mt__tagmap *m)
{
    struct mt__tagmap n = {0};

    n.cap = m->cap ? 2 * m->cap : 256;
    n.slots = calloc(n.cap, sizeof(*n.slots));
    if (!n.slots)
        return -MT_ENOMEM;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].item)
            n.slots[free_slot(&n, m->slots[i].tag)] = m->slots[i];
    n.n = m->n;
    free(m->slots);
    *m = n;
    return 0;
}

int mt__tagmap_put(struct mt__tagmap *m, uint64_t tag, void *item)
{
    size_t j;

    if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
        return -MT_ENOMEM;
    j = free_slot(m, tag);
    m->slots[j].tag = tag;
    m->slots[j].item = item;
    m->n++;
    return 0;
}

size_t mt__tagmap_find(const struct mt__tagmap *m, uint64_t tag)
{
    if (!m->cap)
        return SIZE_MAX;
    for (size_t j = slot_of(m, tag); m->slots[j].item;
         j = (j + 1) & (m->cap - 1))
        if (m->slots[j].tag == tag)
            return j;
    return SIZE_MAX;
}

void mt__tagmap_del(struct mt__tagmap *m, size_t j)
{
    size_t mask = m->cap - 1, k = j;

    m->slots[j].item = NULL;
    m->n--;
    for (;;) {
        size_t home;

        k = (k + 1) & mask;
        if (!m->slots[k].item)
            return;
        home = slot_of(m, m->slots[k].tag);
        /* Move k back into the hole at j unless its home lies in (j, k]. */
        if ((j < k) ? (home <= j || home > k) : (home <= j && home > k)) {
            m->slots[j] = m->slots[k];
            m->slots[k].item = NULL;
            j = k;
        }
    }
}

bool mt__tagmap_take(struct mt__tagmap *m, uint64_t tag, const void *item)
{
    size_t j = mt__tagmap_find(m, tag);

    if (j == SIZE_MAX || m->slots[j].item != item)
        return false;
    mt__tagmap_del(m, j);
    return true;
}

void mt__tagmap_release(struct mt__tagmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
}
