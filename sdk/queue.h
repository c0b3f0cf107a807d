/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue.h -- the intrusive FIFO that carries requests from public calls to
 * a client's loop thread.
 *
 * Nodes are embedded in the items (struct mt__qnode); the queue never
 * allocates, so pushing cannot fail. Removing an item from the middle is
 * O(n), which is fine for the rare abandoned request.
 *
 * THREAD: not thread safe; the client guards its queue with its mutex.
 */
#ifndef MT_SDK_QUEUE_H
#define MT_SDK_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

struct mt__qnode {
    struct mt__qnode *next;
};

struct mt__queue {
    struct mt__qnode *head;
    struct mt__qnode *tail;
    size_t n;
};

/* mt__queue_init - an empty queue. */
void mt__queue_init(struct mt__queue *q);

/* mt__queue_push - append n (borrowed: it stays in the item). */
void mt__queue_push(struct mt__queue *q, struct mt__qnode *n);

/* mt__queue_pop - remove and return the first node, or NULL when empty. */
struct mt__qnode *mt__queue_pop(struct mt__queue *q);

/* mt__queue_remove - unlink n if it is queued. RET true when it was. */
bool mt__queue_remove(struct mt__queue *q, struct mt__qnode *n);

/* mt__queue_take_all - move every node of q into out (q becomes empty). */
void mt__queue_take_all(struct mt__queue *q, struct mt__queue *out);

#endif /* MT_SDK_QUEUE_H */
