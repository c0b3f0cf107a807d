/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outbuf.c -- the bounded output buffer (see outbuf.h): a singly linked
 * list of chunks; appends fill the tail chunk before allocating another of
 * at least CHUNK_MIN bytes, so a chatty program costs few allocations.
 */
#include "worker/outbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

#define CHUNK_MIN (16u * 1024u)

void mt_outbuf_init(struct mt_outbuf *ob, size_t limit)
{
    memset(ob, 0, sizeof(*ob));
    ob->limit = limit;
}

void mt_outbuf_release(struct mt_outbuf *ob)
{
    struct mt_outchunk *c = ob->head, *next;

    for (; c; c = next) {
        next = c->next;
        free(c);
    }
    ob->head = ob->tail = NULL;
    ob->bytes = 0;
}

bool mt_outbuf_empty(const struct mt_outbuf *ob)
{
    return ob->head == NULL;
}

static struct mt_outchunk *chunk_new(uint32_t fd, size_t cap)
{
    struct mt_outchunk *c = mt_xmalloc(sizeof(*c) + cap);

    c->next = NULL;
    c->fd = fd;
    c->dropped = 0;
    c->off = c->len = 0;
    c->cap = cap;
    return c;
}

static void push_back(struct mt_outbuf *ob, struct mt_outchunk *c)
{
    c->next = NULL;
    if (ob->tail)
        ob->tail->next = c;
    else
        ob->head = c;
    ob->tail = c;
    if (!c->dropped)
        ob->bytes += c->len - c->off;
}

static struct mt_outchunk *pop_front(struct mt_outbuf *ob)
{
    struct mt_outchunk *c = ob->head;

    ob->head = c->next;
    if (!ob->head)
        ob->tail = NULL;
    if (!c->dropped)
        ob->bytes -= c->len - c->off;
    c->next = NULL;
    return c;
}

/* Drop the oldest data beyond the limit; one marker at the front counts it
 * together with any markers it swallowed. */
static void enforce_limit(struct mt_outbuf *ob)
{
    struct mt_outchunk *c;
    uint64_t dropped = 0;

    if (!ob->limit || ob->bytes <= ob->limit)
        return;
    while (ob->bytes > ob->limit) {
        size_t excess = ob->bytes - ob->limit, avail;

        c = ob->head;
        avail = c->len - c->off;
        if (c->dropped || avail <= excess) {
            dropped += c->dropped ? c->dropped : avail;
            free(pop_front(ob));
            continue;
        }
        c->off += excess;
        ob->bytes -= excess;
        dropped += excess;
    }
    while (ob->head && ob->head->dropped) {
        dropped += ob->head->dropped;
        free(pop_front(ob));
    }
    c = chunk_new(2, 0);
    c->dropped = dropped;
    c->next = ob->head;
    ob->head = c;
    if (!ob->tail)
        ob->tail = c;
}

void mt_outbuf_append(struct mt_outbuf *ob, uint32_t fd, const void *data,
                      size_t n)
{
    struct mt_outchunk *t = ob->tail, *c;
    const uint8_t *p = data;
    size_t k;

    if (n == 0)
        return;
    if (t && !t->dropped && t->fd == fd && t->len < t->cap) {
        k = t->cap - t->len < n ? t->cap - t->len : n;
        memcpy(t->data + t->len, p, k);
        t->len += k;
        ob->bytes += k;
        p += k;
        n -= k;
    }
    if (n) {
        c = chunk_new(fd, n > CHUNK_MIN ? n : CHUNK_MIN);
        memcpy(c->data, p, n);
        c->len = n;
        push_back(ob, c);
    }
    enforce_limit(ob);
}

size_t mt_outbuf_take(struct mt_outbuf *ob, size_t max, struct mt_outbuf *into)
{
    struct mt_outchunk *c, *part;
    size_t moved = 0, avail, k;

    while ((c = ob->head)) {
        if (c->dropped) {
            push_back(into, pop_front(ob));
            continue;
        }
        if (moved >= max)
            break;
        avail = c->len - c->off;
        if (avail <= max - moved) {
            push_back(into, pop_front(ob));
            moved += avail;
            continue;
        }
        k = max - moved;
        part = chunk_new(c->fd, k);
        memcpy(part->data, c->data + c->off, k);
        part->len = k;
        c->off += k;
        ob->bytes -= k;
        push_back(into, part);
        moved += k;
        break;
    }
    return moved;
}

void mt_outbuf_unshift(struct mt_outbuf *ob, struct mt_outbuf *front)
{
    if (!front->head)
        return;
    front->tail->next = ob->head;
    if (!ob->tail)
        ob->tail = front->tail;
    ob->head = front->head;
    ob->bytes += front->bytes;
    front->head = front->tail = NULL;
    front->bytes = 0;
    enforce_limit(ob);
}

size_t mt_outbuf_marker(uint64_t n, char *buf, size_t len)
{
    int k = snprintf(buf, len, "[manta: %llu bytes of output dropped]\n",
                     (unsigned long long)n);

    return k < 0 ? 0 : (size_t)k < len ? (size_t)k : len - 1;
}
