/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transfer.h -- transport-agnostic halves of a node-to-node object pull.
 *
 * Sending side: a chunk reader pins a sealed object and hands out pointers
 * to [offset, offset + len) of its bytes (data followed by metadata) for as
 * long as it is open, so a transport can send them without copying.
 * Receiving side: a pull writer creates the object with its known sizes,
 * flags and tensor descriptor, accepts chunks in any order (each chunk is
 * chunk_size bytes at a multiple of chunk_size; the last may be shorter),
 * seals when every chunk has arrived, and aborts on cancel, so a failed or
 * cancelled pull leaves no half object behind.
 *
 * The gRPC server-streaming call that connects a reader on one worker to a
 * writer on another is not here (it belongs to the worker's rpc adapters).
 *
 * THREAD loop thread only (they drive the store directly).
 */
#ifndef MT_TRANSFER_H
#define MT_TRANSFER_H

#include <stdint.h>

#include "common/ids.h"
#include "objstore/store.h"

#define MT_XFER_DEFAULT_CHUNK (4u * 1024u * 1024u)

struct mt_xfer_reader;
struct mt_xfer_writer;

/* ---- sending side ---- */

/*
 * mt_xfer_reader_open - pin a sealed object for sending.
 *
 * OUT info   sizes, flags and tensor descriptor to send ahead of the bytes
 * OUT out    returns owned reader, free with mt_xfer_reader_close()
 * RET 0, -MT_ENOENT, -MT_EAGAIN (unsealed), -MT_ENOSPC / -MT_EIO (spilled
 *     and cannot be restored)
 * OWNERSHIP borrows st (must outlive the reader) and id
 */
int mt_xfer_reader_open(struct mt_store *st, const mt_object_id *id,
                        struct mt_object_info *info,
                        struct mt_xfer_reader **out);

/*
 * mt_xfer_reader_read - point at up to len bytes at off of data + meta.
 *
 * OUT ptr, n   the bytes (n < len only at the end); valid until close
 * RET 0, -MT_ERANGE (off beyond the end)
 */
int mt_xfer_reader_read(struct mt_xfer_reader *r, uint64_t off, uint64_t len,
                        const uint8_t **ptr, uint64_t *n);

/* mt_xfer_reader_close - drop the pin. OWNERSHIP invalidates r; NULL ok. */
void mt_xfer_reader_close(struct mt_xfer_reader *r);

/* ---- receiving side ---- */

/*
 * mt_xfer_writer_open - create the object a pull will fill.
 *
 * IN  info         as sent by the reader (offset ignored)
 * IN  chunk_size   bytes per chunk, > 0 (MT_XFER_DEFAULT_CHUNK is typical)
 * OUT out          returns owned writer: finish it or cancel it
 * RET as mt_store_create_object; -MT_EINVAL for chunk_size 0
 */
int mt_xfer_writer_open(struct mt_store *st, const mt_object_id *id,
                        const struct mt_object_info *info, uint64_t chunk_size,
                        struct mt_xfer_writer **out);

/*
 * mt_xfer_writer_write - copy one chunk into place.
 *
 * IN  off   a multiple of chunk_size; len the chunk's full length
 * RET 0, -MT_EINVAL (misaligned or wrong length), -MT_ERANGE (beyond the end)
 * NOTE writing a chunk twice is allowed (the last copy wins)
 */
int mt_xfer_writer_write(struct mt_xfer_writer *w, uint64_t off,
                         const void *buf, uint64_t len);

/*
 * mt_xfer_writer_place - where the chunk at off goes, for a transport that
 * fills it itself (straight from its receive buffers, with no staging
 * copy). The chunk counts as received only after mt_xfer_writer_placed;
 * a fill that fails half way leaves it missing, so the object is never
 * sealed with it (cancel the writer instead).
 *
 * IN  off, len  as for mt_xfer_writer_write
 * OUT dst       len writable bytes in the unsealed object; valid until
 *               the writer is finished or cancelled
 * RET 0, -MT_EINVAL (misaligned or wrong length), -MT_ERANGE (beyond the end)
 * NOTE added for worker/ pulls (issue 14); the store itself is untouched
 */
int mt_xfer_writer_place(struct mt_xfer_writer *w, uint64_t off, uint64_t len,
                         uint8_t **dst);

/*
 * mt_xfer_writer_placed - the chunk at off (placed and filled) is in.
 * RET 0, or -MT_EINVAL / -MT_ERANGE for an off place would refuse
 */
int mt_xfer_writer_placed(struct mt_xfer_writer *w, uint64_t off);

/* mt_xfer_writer_missing - chunks not received yet. */
uint64_t mt_xfer_writer_missing(const struct mt_xfer_writer *w);

/*
 * mt_xfer_writer_finish - seal the object once every chunk is in.
 *
 * RET 0 (w freed), -MT_ESTATE (chunks missing; w stays open: write more or
 *     cancel), or a seal error (the object was aborted and w freed)
 */
int mt_xfer_writer_finish(struct mt_xfer_writer *w);

/*
 * mt_xfer_writer_cancel - abort the object and free w.
 *
 * OWNERSHIP invalidates w; NULL ok
 */
void mt_xfer_writer_cancel(struct mt_xfer_writer *w);

#endif /* MT_TRANSFER_H */
