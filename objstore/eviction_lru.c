/* SPDX-License-Identifier: Apache-2.0 */
/*
 * eviction_lru.c -- least-recently-used eviction policy.
 *
 * Candidates sit on one doubly linked list per class (enum
 * mt_evict_class), oldest at the head. require_space drains the DROP list
 * before touching the SPILL list, so evictable copies go before any primary
 * copy is written to disk (as in the anchor system). The store
 * removes an object from the candidates when it is pinned and adds it back
 * when the last pin goes, so "added" is "last used" and the list is in LRU
 * order without timestamps.
 */
#include "eviction.h"

#include "common/alloc.h"

struct lru_node {
    mt_object_id id;
    uint64_t size;
    enum mt_evict_class cls;
    struct lru_node *prev;
    struct lru_node *next;
};

struct lru_list {
    struct lru_node *head; /* least recently used */
    struct lru_node *tail; /* most recently used */
};

struct lru {
    struct lru_list lists[2]; /* by enum mt_evict_class */
    size_t count;
};

static int lru_init(void **st)
{
    *st = mt_xcalloc(1, sizeof(struct lru));
    return 0;
}

static void lru_destroy(void *st)
{
    struct lru *l = st;
    struct lru_node *n, *next;

    if (!l)
        return;
    for (int c = 0; c < 2; c++) {
        for (n = l->lists[c].head; n; n = next) {
            next = n->next;
            free(n);
        }
    }
    free(l);
}

static void lru_add(void *st, const mt_object_id *id, uint64_t size,
                    enum mt_evict_class cls, void **slot)
{
    struct lru *l = st;
    struct lru_node *n = mt_xcalloc(1, sizeof(*n));
    struct lru_list *q = &l->lists[cls == MT_EVICT_DROP ? 0 : 1];

    n->id = *id;
    n->size = size;
    n->cls = cls == MT_EVICT_DROP ? MT_EVICT_DROP : MT_EVICT_SPILL;
    n->prev = q->tail;
    if (q->tail)
        q->tail->next = n;
    else
        q->head = n;
    q->tail = n;
    l->count++;
    *slot = n;
}

static void lru_remove(void *st, void **slot)
{
    struct lru *l = st;
    struct lru_node *n = *slot;
    struct lru_list *q;

    if (!n)
        return;
    q = &l->lists[n->cls];
    if (n->prev)
        n->prev->next = n->next;
    else
        q->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        q->tail = n->prev;
    l->count--;
    free(n);
    *slot = NULL;
}

static int lru_require_space(void *st, uint64_t bytes, mt_object_id **victims,
                             size_t *n)
{
    struct lru *l = st;
    struct lru_node *it;
    uint64_t got = 0;
    size_t k = 0, cap = 0;
    mt_object_id *out = NULL;

    for (int c = 0; c < 2; c++) {
        for (it = l->lists[c].head; it && got < bytes; it = it->next) {
            mt_xgrow((void **)&out, &cap, k + 1, sizeof(*out));
            out[k++] = it->id;
            got += it->size;
        }
    }
    *victims = out;
    *n = k;
    return 0;
}

const struct mt_evict_ops mt_evict_lru = {
    .name = "lru",
    .init = lru_init,
    .destroy = lru_destroy,
    .add = lru_add,
    .remove = lru_remove,
    .require_space = lru_require_space,
};
