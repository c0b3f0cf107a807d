/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transfer.c -- chunk reader (pinned, zero-copy) and pull writer (chunk
 * bitmap, seal when complete, abort on cancel).
 *
 * The writer tracks chunks in a bitmap rather than a byte count so that a
 * duplicated chunk can never make an incomplete object look complete.
 */
#include "transfer.h"

#include <string.h>

#include "common/alloc.h"
#include "common/error.h"

struct mt_xfer_reader {
    struct mt_store *st;
    mt_object_id id;
    const uint8_t *base;  /* data, then meta */
    uint64_t total;       /* data_size + meta_size */
};

struct mt_xfer_writer {
    struct mt_store *st;
    mt_object_id id;
    uint8_t *base;
    uint64_t total;
    uint64_t chunk;
    uint64_t nchunks;
    uint64_t missing;
    uint64_t *have;       /* bit i: chunk i received */
};

/* ---- sending side ---- */

int mt_xfer_reader_open(struct mt_store *st, const mt_object_id *id,
                        struct mt_object_info *info,
                        struct mt_xfer_reader **out)
{
    struct mt_xfer_reader *r;
    int rc = mt_store_get(st, id, info);

    if (rc < 0)
        return rc;
    r = mt_xcalloc(1, sizeof(*r));
    r->st = st;
    r->id = *id;
    r->base = mt_store_base(st) + info->offset;
    r->total = info->data_size + info->meta_size;
    *out = r;
    return 0;
}

int mt_xfer_reader_read(struct mt_xfer_reader *r, uint64_t off, uint64_t len,
                        const uint8_t **ptr, uint64_t *n)
{
    if (off > r->total || (off == r->total && len > 0 && r->total > 0))
        return -MT_ERANGE;
    *ptr = r->base + off;
    *n = len < r->total - off ? len : r->total - off;
    return 0;
}

void mt_xfer_reader_close(struct mt_xfer_reader *r)
{
    if (!r)
        return;
    mt_store_release(r->st, &r->id);
    free(r);
}

/* ---- receiving side ---- */

int mt_xfer_writer_open(struct mt_store *st, const mt_object_id *id,
                        const struct mt_object_info *info, uint64_t chunk_size,
                        struct mt_xfer_writer **out)
{
    struct mt_object_info mine;
    struct mt_xfer_writer *w;
    int rc;

    if (chunk_size == 0)
        return -MT_EINVAL;
    rc = mt_store_create_object(st, id, info->data_size, info->meta_size,
                                info->flags & ~MT_OBJ_TENSOR,
                                (info->flags & MT_OBJ_TENSOR) ? &info->tensor
                                                              : NULL,
                                &mine);
    if (rc < 0)
        return rc;
    w = mt_xcalloc(1, sizeof(*w));
    w->st = st;
    w->id = *id;
    w->base = mt_store_base(st) + mine.offset;
    w->total = info->data_size + info->meta_size;
    w->chunk = chunk_size;
    w->nchunks = (w->total + chunk_size - 1) / chunk_size;
    w->missing = w->nchunks;
    w->have = mt_xcalloc(w->nchunks / 64 + 1, sizeof(uint64_t));
    *out = w;
    return 0;
}

/* The chunk index of a whole chunk of len bytes at off, or -MT_E*. */
static int64_t chunk_index(const struct mt_xfer_writer *w, uint64_t off,
                           uint64_t len)
{
    uint64_t want;

    if (off >= w->total)
        return -MT_ERANGE;
    if (off % w->chunk)
        return -MT_EINVAL;
    want = w->total - off < w->chunk ? w->total - off : w->chunk;
    if (len != want)
        return -MT_EINVAL;
    return (int64_t)(off / w->chunk);
}

int mt_xfer_writer_place(struct mt_xfer_writer *w, uint64_t off, uint64_t len,
                         uint8_t **dst)
{
    int64_t i = chunk_index(w, off, len);

    if (i < 0)
        return (int)i;
    *dst = w->base + off;
    return 0;
}

int mt_xfer_writer_placed(struct mt_xfer_writer *w, uint64_t off)
{
    uint64_t left = off < w->total ? w->total - off : 0;
    int64_t i = chunk_index(w, off, left < w->chunk ? left : w->chunk);

    if (i < 0)
        return (int)i;
    if (!(w->have[i / 64] & (1ULL << (i % 64)))) {
        w->have[i / 64] |= 1ULL << (i % 64);
        w->missing--;
    }
    return 0;
}

int mt_xfer_writer_write(struct mt_xfer_writer *w, uint64_t off,
                         const void *buf, uint64_t len)
{
    uint8_t *dst;
    int rc = mt_xfer_writer_place(w, off, len, &dst);

    if (rc < 0)
        return rc;
    memcpy(dst, buf, len);
    return mt_xfer_writer_placed(w, off);
}

uint64_t mt_xfer_writer_missing(const struct mt_xfer_writer *w)
{
    return w->missing;
}

static void writer_free(struct mt_xfer_writer *w)
{
    free(w->have);
    free(w);
}

int mt_xfer_writer_finish(struct mt_xfer_writer *w)
{
    int rc;

    if (w->missing)
        return -MT_ESTATE;
    rc = mt_store_seal(w->st, &w->id);
    if (rc < 0)
        mt_store_abort(w->st, &w->id);
    writer_free(w);
    return rc;
}

void mt_xfer_writer_cancel(struct mt_xfer_writer *w)
{
    if (!w)
        return;
    mt_store_abort(w->st, &w->id);
    writer_free(w);
}
