/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chunk_wire.h -- the ObjectChunk message of a PullObject stream
 * (proto/worker_service.proto) read and written by hand, so that an object
 * pull moves its bytes with no staging copy.
 *
 * Receiving: a message arrives as the receive buffers of the transport (a
 * list of segments, struct iovec). mt_chunk_parse walks the protobuf wire
 * format across them and keeps the small fields (offset, chunk_size, the
 * ObjectInfo's own bytes) and where the data payload starts; the caller
 * then has mt_chunk_copy_data put the payload straight where it belongs
 * (the unsealed object in the store). protobuf-c's unpack would have copied
 * the payload into a heap buffer first.
 *
 * Sending: mt_chunk_encode_head writes every field but the payload, then
 * the payload's tag and length, so that head + payload (borrowed from the
 * store) is one valid ObjectChunk. Fields go out in the order 1, 2, 4, 3;
 * protobuf allows any order and protobuf-c (older workers) reads it, so
 * the wire is unchanged.
 *
 * Peer bytes: every length is checked against what is there; a malformed
 * message is -MT_EPROTO, never an assert. Pure: no I/O, no protobuf-c.
 *
 * THREAD: any (no state).
 */
#ifndef MT_WORKER_CHUNK_WIRE_H
#define MT_WORKER_CHUNK_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define MT_CHUNK_INFO_MAX 4096  /* ObjectInfo bytes accepted (8 dims: ~300) */
#define MT_CHUNK_HEAD_MAX (MT_CHUNK_INFO_MAX + 48) /* encode_head's output */

/* One parsed ObjectChunk. The payload stays in the segments. */
struct mt_chunk_msg {
    bool has_info;
    uint8_t info[MT_CHUNK_INFO_MAX]; /* the ObjectInfo message's bytes */
    size_t info_len;
    uint64_t offset;
    uint32_t chunk_size;
    uint64_t data_len;
    size_t data_seg;                 /* the payload starts in this segment */
    size_t data_at;                  /* at this byte of it */
};

/*
 * mt_chunk_parse - read one ObjectChunk spread over n segments.
 * Unknown fields are skipped; a field seen twice keeps its last value.
 * OUT m  the fields; data_len 0 when the message has no payload
 * RET 0, -MT_EPROTO (truncated, a bad wire type, a varint over 10 bytes,
 *     chunk_size over 32 bits, info over MT_CHUNK_INFO_MAX, a group)
 * OWNERSHIP borrows segs; m points into nothing
 */
int mt_chunk_parse(const struct iovec *segs, size_t n, struct mt_chunk_msg *m);

/*
 * mt_chunk_copy_data - copy the payload m describes (m->data_len bytes)
 * from the segments m was parsed from into dst.
 */
void mt_chunk_copy_data(const struct iovec *segs, size_t n,
                        const struct mt_chunk_msg *m, uint8_t *dst);

/*
 * mt_chunk_encode_head - an ObjectChunk's bytes before a payload of
 * data_len bytes: info (when info_len > 0), offset, chunk_size (when > 0),
 * then the payload's tag and length (when data_len > 0).
 * IN  out  at least MT_CHUNK_HEAD_MAX bytes (info_len <= MT_CHUNK_INFO_MAX)
 * RET the bytes written
 */
size_t mt_chunk_encode_head(uint8_t *out, const uint8_t *info, size_t info_len,
                            uint64_t offset, uint32_t chunk_size,
                            uint64_t data_len);

#endif /* MT_WORKER_CHUNK_WIRE_H */
