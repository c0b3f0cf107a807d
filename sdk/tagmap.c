/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tagmap.c -- the client watch's map from a task's tag to its handle:
 * open addressing with linear probing, grown at half full, and deletion by
 * backward shift (no tombstones), so lookups stay short however many tasks
 * come and go.
 *
 * Pure: no locks (the loop thread owns the map), no I/O.
 */
#include <stdint.h>
#include <stdlib.h>

#include "sdk/sdk_int.h"

static size_t slot_of(const struct mt__tagmap *m, uint64_t tag)
{
    return (size_t)(tag * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
}

static int grow(struct mt__tagmap *m)
{
    struct mt__tagmap n = {0};

    n.cap = m->cap ? 2 * m->cap : 256;
    n.slots = calloc(n.cap, sizeof(*n.slots));
    if (!n.slots)
        return -MT_ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        struct mt_task *t = m->slots[i];
        size_t j;

        if (!t)
            continue;
        for (j = slot_of(&n, t->tag); n.slots[j]; j = (j + 1) & (n.cap - 1))
            ;
        n.slots[j] = t;
    }
    n.n = m->n;
    free(m->slots);
    *m = n;
    return 0;
}

int mt__tagmap_put(struct mt__tagmap *m, struct mt_task *t)
{
    size_t j;

    if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
        return -MT_ENOMEM;
    for (j = slot_of(m, t->tag); m->slots[j]; j = (j + 1) & (m->cap - 1))
        ;
    m->slots[j] = t;
    m->n++;
    return 0;
}

size_t mt__tagmap_find(const struct mt__tagmap *m, uint64_t tag)
{
    if (!m->cap)
        return SIZE_MAX;
    for (size_t j = slot_of(m, tag); m->slots[j]; j = (j + 1) & (m->cap - 1))
        if (m->slots[j]->tag == tag)
            return j;
    return SIZE_MAX;
}

void mt__tagmap_del(struct mt__tagmap *m, size_t j)
{
    size_t mask = m->cap - 1, k = j;

    m->slots[j] = NULL;
    m->n--;
    for (;;) {
        size_t home;

        k = (k + 1) & mask;
        if (!m->slots[k])
            return;
        home = slot_of(m, m->slots[k]->tag);
        /* Move k back into the hole at j unless its home lies in (j, k]. */
        if ((j < k) ? (home <= j || home > k) : (home <= j && home > k)) {
            m->slots[j] = m->slots[k];
            m->slots[k] = NULL;
            j = k;
        }
    }
}

bool mt__tagmap_take(struct mt__tagmap *m, struct mt_task *t)
{
    size_t j = mt__tagmap_find(m, t->tag);

    if (j == SIZE_MAX || m->slots[j] != t)
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
