/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outbuf.h -- the bounded output buffer of a run: what a task printed,
 * kept in arrival order until the reporter sends it (tasks.c), with the
 * oldest bytes dropped (and counted) when it holds too much.
 *
 * Pure helpers: no loop, no I/O; tested by tests/unit/worker/test_tasks.c.
 *
 * THREAD: any; one buffer is used by one thread at a time.
 */
#ifndef MT_WORKER_OUTBUF_H
#define MT_WORKER_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Output of one task in arrival order: data chunks tagged with their fd, and
 * markers standing for bytes dropped at that point. When more than limit
 * data bytes are buffered, the oldest are dropped and a single marker
 * ("[manta: N bytes of output dropped]\n", sent on fd 2) takes their place
 * at the front. Markers do not count towards the limit.
 */
struct mt_outchunk {
    struct mt_outchunk *next;
    uint32_t fd;                /* 1 or 2; 2 for markers */
    uint64_t dropped;           /* > 0: a marker, no data */
    size_t off;                 /* data[off..len) is buffered */
    size_t len;
    size_t cap;
    uint8_t data[];
};

struct mt_outbuf {
    struct mt_outchunk *head;
    struct mt_outchunk *tail;
    size_t bytes;               /* data bytes buffered (markers excluded) */
    size_t limit;               /* 0: no limit */
};

void mt_outbuf_init(struct mt_outbuf *ob, size_t limit);
/* mt_outbuf_release - free every chunk; the buffer is empty after. */
void mt_outbuf_release(struct mt_outbuf *ob);
/* mt_outbuf_empty - nothing buffered, not even a marker. */
bool mt_outbuf_empty(const struct mt_outbuf *ob);

/* mt_outbuf_append - copy n bytes of fd's output in, then enforce the limit. */
void mt_outbuf_append(struct mt_outbuf *ob, uint32_t fd, const void *data,
                      size_t n);

/*
 * mt_outbuf_take - move up to max data bytes (and the markers among them)
 * from the front of ob to the back of into, splitting a chunk if needed.
 * RET data bytes moved
 */
size_t mt_outbuf_take(struct mt_outbuf *ob, size_t max, struct mt_outbuf *into);

/*
 * mt_outbuf_unshift - put everything in front back before ob's contents
 * (a failed send), then enforce ob's limit. front is left empty.
 */
void mt_outbuf_unshift(struct mt_outbuf *ob, struct mt_outbuf *front);

/*
 * mt_outbuf_marker - the text that stands for n dropped bytes.
 * OUT buf  at least 64 bytes
 * RET its length
 */
size_t mt_outbuf_marker(uint64_t n, char *buf, size_t len);

#endif /* MT_WORKER_OUTBUF_H */
