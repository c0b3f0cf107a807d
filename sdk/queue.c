/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue.c -- intrusive FIFO of requests (see queue.h).
 */
#include "sdk/queue.h"

void mt__queue_init(struct mt__queue *q)
{
    q->head = q->tail = NULL;
    q->n = 0;
}

void mt__queue_push(struct mt__queue *q, struct mt__qnode *n)
{
    n->next = NULL;
    if (q->tail)
        q->tail->next = n;
    else
        q->head = n;
    q->tail = n;
    q->n++;
}

struct mt__qnode *mt__queue_pop(struct mt__queue *q)
{
    struct mt__qnode *n = q->head;

    if (!n)
        return NULL;
    q->head = n->next;
    if (!q->head)
        q->tail = NULL;
    n->next = NULL;
    q->n--;
    return n;
}

bool mt__queue_remove(struct mt__queue *q, struct mt__qnode *n)
{
    struct mt__qnode *prev = NULL;

    for (struct mt__qnode *p = q->head; p; prev = p, p = p->next) {
        if (p != n)
            continue;
        if (prev)
            prev->next = p->next;
        else
            q->head = p->next;
        if (q->tail == p)
            q->tail = prev;
        p->next = NULL;
        q->n--;
        return true;
    }
    return false;
}

void mt__queue_take_all(struct mt__queue *q, struct mt__queue *out)
{
    *out = *q;
    mt__queue_init(q);
}
