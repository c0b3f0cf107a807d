/* SPDX-License-Identifier: Apache-2.0 */
/*
 * eviction_lru.c -- least-recently-used eviction policy.
 *
 * Candidates sit on one doubly linked list, oldest at the head. The store
 * removes an object from the candidates when it is pinned and adds it back
 * when the last pin goes, so "added" is "last used" and the list is in LRU
 * order without timestamps. require_space walks from the head.
 */
#include "eviction.h"

#include "common/alloc.h"

struct lru_node {
    mt_object_id id;
    uint64_t size;
    struct lru_node *prev;
    struct lru_node *next;
};

struct lru {
    struct lru_node *head; /* least recently used */
    struct lru_node *tail; /* most recently used */
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
    for (n = l->head; n; n = next) {
        next = n->next;
        free(n);
    }
    free(l);
}

static void lru_add(void *st, const mt_object_id *id, uint64_t size,
                    void **slot)
{
    struct lru *l = st;
    struct lru_node *n = mt_xcalloc(1, sizeof(*n));

    n->id = *id;
    n->size = size;
    n->prev = l->tail;
    if (l->tail)
        l->tail->next = n;
    else
        l->head = n;
    l->tail = n;
    l->count++;
    *slot = n;
}

static void lru_remove(void *st, void **slot)
{
    struct lru *l = st;
    struct lru_node *n = *slot;

    if (!n)
        return;
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        l->tail = n->prev;
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

    for (it = l->head; it && got < bytes; it = it->next) {
        mt_xgrow((void **)&out, &cap, k + 1, sizeof(*out));
        out[k++] = it->id;
        got += it->size;
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
