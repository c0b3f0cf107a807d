/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chunk_wire.c -- ObjectChunk read from and written to raw protobuf wire
 * bytes (see chunk_wire.h).
 *
 * DESIGN: a cursor walks the segments byte by byte for the small things
 * (tags, varints, the info bytes) and skips whole spans for the payload and
 * unknown length-delimited fields, so a 16 MiB payload in a thousand
 * segments costs a thousand steps, not sixteen million. Nothing is copied
 * until mt_chunk_copy_data.
 */
#include "worker/chunk_wire.h"

#include <string.h>

#include "common/error.h"

/* Wire types (protobuf encoding). */
#define WT_VARINT 0
#define WT_I64 1
#define WT_LEN 2
#define WT_I32 5

/* ObjectChunk's field numbers (proto/worker_service.proto). */
#define F_INFO 1
#define F_OFFSET 2
#define F_DATA 3
#define F_CHUNK_SIZE 4

/* A position in the segments and the bytes left from it. */
struct cursor {
    const struct iovec *segs;
    size_t n;
    size_t seg;
    size_t at;
    uint64_t left;
};

/* Step over empty segments and the ends of segments. */
static void settle(struct cursor *c)
{
    while (c->seg < c->n && c->at >= c->segs[c->seg].iov_len) {
        c->seg++;
        c->at = 0;
    }
}

static int get_byte(struct cursor *c, uint8_t *b)
{
    if (c->left == 0)
        return -MT_EPROTO;
    settle(c);
    *b = ((const uint8_t *)c->segs[c->seg].iov_base)[c->at++];
    c->left--;
    return 0;
}

static int get_varint(struct cursor *c, uint64_t *v)
{
    uint8_t b;

    *v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (get_byte(c, &b) < 0)
            return -MT_EPROTO;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return shift == 63 && b > 1 ? -MT_EPROTO : 0;
    }
    return -MT_EPROTO; /* more than 10 bytes */
}

/* Skip len bytes, copying them to out when out is not NULL. */
static int skip(struct cursor *c, uint64_t len, uint8_t *out)
{
    if (len > c->left)
        return -MT_EPROTO;
    c->left -= len;
    while (len > 0) {
        size_t have, take;

        settle(c);
        have = c->segs[c->seg].iov_len - c->at;
        take = have < len ? have : (size_t)len;
        if (out) {
            memcpy(out, (const uint8_t *)c->segs[c->seg].iov_base + c->at,
                   take);
            out += take;
        }
        c->at += take;
        len -= take;
    }
    return 0;
}

/* A length-delimited field of ours: info, kept, or data, located. */
static int take_len(struct cursor *c, uint32_t field, struct mt_chunk_msg *m)
{
    uint64_t len;

    if (get_varint(c, &len) < 0 || len > c->left)
        return -MT_EPROTO;
    if (field == F_INFO) {
        if (len > MT_CHUNK_INFO_MAX)
            return -MT_EPROTO;
        m->has_info = true;
        m->info_len = (size_t)len;
        return skip(c, len, m->info);
    }
    if (field == F_DATA) {
        settle(c);
        m->data_len = len;
        m->data_seg = c->seg;
        m->data_at = c->at;
    }
    return skip(c, len, NULL);
}

/* One field: its tag is read already. */
static int take_field(struct cursor *c, uint32_t field, uint32_t wt,
                      struct mt_chunk_msg *m)
{
    uint64_t v;

    if (wt == WT_LEN)
        return field == F_OFFSET || field == F_CHUNK_SIZE ? -MT_EPROTO
                                                          : take_len(c, field, m);
    if (field == F_INFO || field == F_DATA)
        return -MT_EPROTO; /* not length-delimited */
    if (wt == WT_I64)
        return field == F_OFFSET || field == F_CHUNK_SIZE ? -MT_EPROTO
                                                          : skip(c, 8, NULL);
    if (wt == WT_I32)
        return field == F_OFFSET || field == F_CHUNK_SIZE ? -MT_EPROTO
                                                          : skip(c, 4, NULL);
    if (wt != WT_VARINT || get_varint(c, &v) < 0)
        return -MT_EPROTO; /* groups and unknown wire types */
    if (field == F_OFFSET)
        m->offset = v;
    else if (field == F_CHUNK_SIZE) {
        if (v > UINT32_MAX)
            return -MT_EPROTO;
        m->chunk_size = (uint32_t)v;
    }
    return 0;
}

int mt_chunk_parse(const struct iovec *segs, size_t n, struct mt_chunk_msg *m)
{
    struct cursor c = {segs, n, 0, 0, 0};
    uint64_t tag;

    m->has_info = false;
    m->info_len = 0;
    m->offset = 0;
    m->chunk_size = 0;
    m->data_len = 0;
    m->data_seg = 0;
    m->data_at = 0;
    for (size_t i = 0; i < n; i++)
        c.left += segs[i].iov_len;
    while (c.left > 0) {
        if (get_varint(&c, &tag) < 0 || (tag >> 3) == 0 ||
            (tag >> 3) > 0x1fffffff)
            return -MT_EPROTO;
        if (take_field(&c, (uint32_t)(tag >> 3), (uint32_t)(tag & 7), m) < 0)
            return -MT_EPROTO;
    }
    return 0;
}

void mt_chunk_copy_data(const struct iovec *segs, size_t n,
                        const struct mt_chunk_msg *m, uint8_t *dst)
{
    struct cursor c = {segs, n, m->data_seg, m->data_at, m->data_len};

    skip(&c, m->data_len, dst);
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t k = 0;

    while (v >= 0x80) {
        p[k++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[k++] = (uint8_t)v;
    return k;
}

size_t mt_chunk_encode_head(uint8_t *out, const uint8_t *info, size_t info_len,
                            uint64_t offset, uint32_t chunk_size,
                            uint64_t data_len)
{
    size_t k = 0;

    if (info_len > 0) {
        out[k++] = F_INFO << 3 | WT_LEN;
        k += put_varint(out + k, info_len);
        memcpy(out + k, info, info_len);
        k += info_len;
    }
    if (offset > 0) {
        out[k++] = F_OFFSET << 3 | WT_VARINT;
        k += put_varint(out + k, offset);
    }
    if (chunk_size > 0) {
        out[k++] = F_CHUNK_SIZE << 3 | WT_VARINT;
        k += put_varint(out + k, chunk_size);
    }
    if (data_len > 0) {
        out[k++] = F_DATA << 3 | WT_LEN;
        k += put_varint(out + k, data_len);
    }
    return k;
}
