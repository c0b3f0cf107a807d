/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmap.c -- chained hash table of intrusive nodes keyed by object id.
 *
 * Chains keep removal O(1) once a node is found, and rehashing only moves
 * pointers. Hashes are cached in the node so growth never rehashes bytes.
 */
#include "idmap.h"

#include "common/alloc.h"

#define IDMAP_MIN_BUCKETS 16

int mt_idmap_init(struct mt_idmap *m)
{
    m->nbuckets = IDMAP_MIN_BUCKETS;
    m->buckets = mt_xcalloc(m->nbuckets, sizeof(*m->buckets));
    m->count = 0;
    return 0;
}

void mt_idmap_release(struct mt_idmap *m)
{
    MT_FREE(m->buckets);
    m->nbuckets = 0;
    m->count = 0;
}

struct mt_idmap_node *mt_idmap_find(const struct mt_idmap *m,
                                    const mt_object_id *id)
{
    uint64_t h = mt_object_id_hash(id);
    struct mt_idmap_node *n = m->buckets[h & (m->nbuckets - 1)];

    for (; n; n = n->next)
        if (n->hash == h && mt_object_id_eq(&n->id, id))
            return n;
    return NULL;
}

static void grow(struct mt_idmap *m)
{
    size_t nb = m->nbuckets * 2;
    struct mt_idmap_node **b = mt_xcalloc(nb, sizeof(*b));

    for (size_t i = 0; i < m->nbuckets; i++) {
        struct mt_idmap_node *n = m->buckets[i], *next;

        for (; n; n = next) {
            next = n->next;
            n->next = b[n->hash & (nb - 1)];
            b[n->hash & (nb - 1)] = n;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = nb;
}

void mt_idmap_insert(struct mt_idmap *m, struct mt_idmap_node *n)
{
    size_t slot;

    if (m->count >= m->nbuckets)
        grow(m);
    n->hash = mt_object_id_hash(&n->id);
    slot = n->hash & (m->nbuckets - 1);
    n->next = m->buckets[slot];
    m->buckets[slot] = n;
    m->count++;
}

void mt_idmap_remove(struct mt_idmap *m, struct mt_idmap_node *n)
{
    struct mt_idmap_node **pp = &m->buckets[n->hash & (m->nbuckets - 1)];

    for (; *pp; pp = &(*pp)->next) {
        if (*pp == n) {
            *pp = n->next;
            n->next = NULL;
            m->count--;
            return;
        }
    }
}

static struct mt_idmap_node *scan_from(const struct mt_idmap *m, size_t slot)
{
    for (; slot < m->nbuckets; slot++)
        if (m->buckets[slot])
            return m->buckets[slot];
    return NULL;
}

struct mt_idmap_node *mt_idmap_first(const struct mt_idmap *m)
{
    return scan_from(m, 0);
}

struct mt_idmap_node *mt_idmap_next(const struct mt_idmap *m,
                                    const struct mt_idmap_node *n)
{
    if (n->next)
        return n->next;
    return scan_from(m, (n->hash & (m->nbuckets - 1)) + 1);
}
