/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manta/object.h -- immutable objects in the node's shared-memory store.
 *
 * mt_put() copies bytes (optionally described as a tensor: DLPack dtype and
 * shape) into the object store of the worker on this machine and names
 * them with a fresh random 20-byte id. A producer that would rather write
 * the object in place (no copy at all) creates it with mt_create(),
 * writes through mt_wbuffer_data() and publishes it with mt_seal(), after
 * which it is exactly like a put. mt_get() maps an object of that
 * store read-only, without copying: the returned buffer points straight
 * into shared memory and stays valid, and the object pinned, until
 * mt_buffer_release().
 *
 * Objects are cluster-wide: a put is registered with the head's object
 * directory (one reference, yours, until mt_object_release() or until
 * your client goes away: mt_client_disconnect(), or the process ends or
 * is killed; then the head drops every reference the client still holds,
 * as Ray frees a driver's objects with it), can be
 * passed to function tasks by reference (manta/task.h, mt_arg_ref()) and
 * read on any node: mt_get() of an object this node lacks asks the head
 * where it is and has the local worker pull a copy, then maps it as
 * usual. A task's result object (mt_task_result_ref()) is read the same
 * way. Puts and zero-copy gets need a store on this machine
 * (mt_client_has_store()); small task results (<= 100 KiB) are also
 * readable without one. Reference counting: docs/objstore.md.
 *
 * THREAD: every function is thread-safe. A buffer may be read by any
 * thread; release it once.
 */
#ifndef MANTA_OBJECT_H
#define MANTA_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manta/client.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An object id: 20 opaque bytes, a plain value (copy with =). Inside the
 * Manta tree common/ids.h defines the same type first.
 */
#ifndef MT_IDS_H
#define MT_OBJECT_ID_LEN 20
typedef struct mt_object_id {
    uint8_t b[MT_OBJECT_ID_LEN];
} mt_object_id;
#endif

#define MT_OBJECT_ID_HEX_SIZE 41 /* 40 hex digits and a NUL */
#define MT_TENSOR_MAX_NDIM 8

/* mt_put flags */
#define MT_PUT_EVICTABLE 0x1u /* the store may drop it when space runs out;
                                 such a put is a node-local cache entry: not
                                 registered with the head, so it cannot be
                                 passed by reference or read elsewhere */

/* Where an object is in its life, as the head's directory says (see
 * mt_list() in admin.h). Values are stable. */
typedef enum mt_object_state {
    MT_OBJECT_STATE_UNKNOWN = 0,
    MT_OBJECT_STATE_PENDING = 1, /* a task result not produced yet */
    MT_OBJECT_STATE_READY = 2,
    MT_OBJECT_STATE_LOST = 3,    /* every copy was on nodes that died */
    MT_OBJECT_STATE_FAILED = 4,  /* its producing task failed */
} mt_object_state;

/*
 * DLPack type codes for tensors (DLDataTypeCode; the values are stable),
 * with the bits numpy and torch use for each:
 *   INT, UINT    8, 16, 32, 64
 *   FLOAT        16, 32, 64          (16: IEEE half, numpy/torch float16)
 *   BFLOAT       16
 *   COMPLEX      64, 128             (complex64, complex128: the real then
 *                                     the imaginary part, half the bits
 *                                     each; any multiple of 16 is stored)
 *   BOOL         8                   (one byte per element, 0 or 1; no
 *                                     other width is stored)
 * 3 (DLPack's opaque handle) is not a value type and is refused.
 */
typedef enum mt_dtype_code {
    MT_DTYPE_INT = 0,
    MT_DTYPE_UINT = 1,
    MT_DTYPE_FLOAT = 2,
    MT_DTYPE_BFLOAT = 4,
    MT_DTYPE_COMPLEX = 5,
    MT_DTYPE_BOOL = 6,
} mt_dtype_code;

/* A mapped object. Opaque. */
typedef struct mt_buffer mt_buffer_t;

/* An object being written in place (mt_create). Opaque. */
typedef struct mt_wbuffer mt_wbuffer_t;

/*
 * mt_object_id_format - write id as 40 lowercase hex digits.
 *
 * OUT buf   MT_OBJECT_ID_HEX_SIZE bytes
 * RET buf
 */
MT_EXTERN char *mt_object_id_format(const mt_object_id *id, char *buf);

/* mt_object_id_parse - 40 hex digits to an id. RET 0, -MT_EINVAL (why is
 * under mt_client_last_error(NULL), e.g. "t... is a task id, not an
 * object id"). */
MT_EXTERN int mt_object_id_parse(const char *hex, mt_object_id *out);

/* mt_object_id_equal - true when both ids have the same bytes. */
MT_EXTERN bool mt_object_id_equal(const mt_object_id *a,
                                  const mt_object_id *b);

/* mt_object_state_name - "READY", ... RET a static string. */
MT_EXTERN const char *mt_object_state_name(mt_object_state s);

/*
 * mt_put - store a copy of size bytes as a new object and register it
 * with the head (you hold one reference: drop it with mt_object_release();
 * it also ends with the client, see above).
 * With batched submits (the default, see mt_submit_command) registration
 * is queued: other drivers see the object within about 20 ms, and tasks
 * this client submits afterwards always find it; a registration that then
 * fails leaves the object local, and tasks naming it are refused.
 *
 * IN  data     size bytes (borrowed; copied before return); NULL when 0
 * IN  flags    0 or MT_PUT_EVICTABLE
 * OUT out_id   the new object's id
 * RET 0, -MT_EINVAL, -MT_ENOSPC (store full of pinned objects, retryable),
 *     -MT_ETOOBIG (larger than the store), -MT_EUNAVAIL (no local store),
 *     -MT_ECLOSED (the store went away), -MT_ENOMEM, or (unbatched) the
 *     head's error when it cannot be registered (the local copy is deleted
 *     then)
 */
MT_EXTERN int mt_put(mt_client_t *c, const void *data, size_t size,
                     uint32_t flags, mt_object_id *out_id);

/*
 * mt_put_tensor - mt_put for a compact row-major tensor.
 *
 * IN  code, bits   element type, e.g. MT_DTYPE_FLOAT, 32 for float32
 * IN  ndim, shape  0..MT_TENSOR_MAX_NDIM dimensions (shape borrowed; may be
 *                  NULL when ndim is 0: a scalar, one element)
 * IN  size         must equal the product of shape times bits / 8
 * RET as mt_put; -MT_EINVAL when size and shape disagree
 */
MT_EXTERN int mt_put_tensor(mt_client_t *c, const void *data, size_t size,
                            uint32_t flags, mt_dtype_code code, uint8_t bits,
                            uint32_t ndim, const int64_t *shape,
                            mt_object_id *out_id);

/*
 * mt_create - reserve a new object of size bytes in this node's store and
 * hand back a writable buffer inside it (zero-copy: write the bytes
 * there, then mt_seal()). Until sealed the object is invisible: no get
 * (here or on another node) can read it, the head does not know it, and
 * tasks cannot name it. The memory is prefaulted (docs/objstore.md), so
 * filling it runs at memory speed.
 *
 * IN  size     bytes, > 0 (a 0-byte object has nothing to write: mt_put)
 * IN  flags    0 or MT_PUT_EVICTABLE (as mt_put)
 * OUT out_id   the new object's id (already known while unsealed)
 * OUT out      returns owned buffer, free with mt_wbuffer_release()
 *              (after mt_seal, or instead of it to abort)
 * RET 0, -MT_EINVAL (size 0, bad flags or arguments), -MT_ETOOBIG (larger
 *     than this node's store), -MT_ENOSPC (store full of pinned or
 *     unsealed objects, retryable), -MT_EUNAVAIL (no local store),
 *     -MT_ECLOSED (the store went away), -MT_ENOMEM
 */
MT_EXTERN int mt_create(mt_client_t *c, size_t size, uint32_t flags,
                        mt_object_id *out_id, mt_wbuffer_t **out);

/*
 * mt_create_tensor - mt_create of a compact row-major tensor; its size is
 * the product of shape times bits / 8 (mt_wbuffer_size). Readers see the
 * dtype and shape as with mt_put_tensor.
 *
 * IN  code, bits, ndim, shape   as mt_put_tensor (shape borrowed)
 * RET as mt_create; -MT_EINVAL for an invalid dtype or shape, or a shape
 *     with no element (size 0)
 */
MT_EXTERN int mt_create_tensor(mt_client_t *c, uint32_t flags,
                               mt_dtype_code code, uint8_t bits, uint32_t ndim,
                               const int64_t *shape, mt_object_id *out_id,
                               mt_wbuffer_t **out);

/*
 * mt_wbuffer_data - where to write: mt_wbuffer_size() bytes, 64-byte
 * aligned, in shared memory. RET NULL once mt_seal() was called (sealed
 * objects are immutable: the API gives no way to write them).
 * NOTE a pointer taken before the seal must not be written after it.
 */
MT_EXTERN void *mt_wbuffer_data(mt_wbuffer_t *w);

/* mt_wbuffer_size - the object's size in bytes. */
MT_EXTERN size_t mt_wbuffer_size(const mt_wbuffer_t *w);

/* mt_wbuffer_id - the object's id (borrowed, lives with w). */
MT_EXTERN const mt_object_id *mt_wbuffer_id(const mt_wbuffer_t *w);

/*
 * mt_seal - publish a created object: it becomes immutable and readable,
 * and is registered with the head exactly as mt_put() registers a put
 * (one reference, owned by this client's session; with batched submits
 * the registration is queued; MT_PUT_EVICTABLE objects stay node-local).
 * Whatever the result, w is no longer writable; release it with
 * mt_wbuffer_release().
 *
 * IN  c   the client that created w
 * RET 0, -MT_ESTATE (sealed already, or a seal of it failed before),
 *     -MT_EINVAL (w is another client's), -MT_ECLOSED (the store went away:
 *     the object is gone), or (unbatched) the head's error when it cannot
 *     be registered (the local copy is deleted then)
 */
MT_EXTERN int mt_seal(mt_client_t *c, mt_wbuffer_t *w);

/*
 * mt_wbuffer_release - free the handle; an object never sealed is aborted
 * (its space freed; its id never becomes readable).
 * OWNERSHIP invalidates w; NULL ok. Works after mt_client_disconnect()
 * (the store connection lives until its last buffer goes; a process that
 * dies with unsealed objects has them aborted by the store).
 */
MT_EXTERN void mt_wbuffer_release(mt_wbuffer_t *w);

/*
 * mt_get - map an object read-only, waiting for it to appear: from this
 * node's store, else (the head knows it) the inline value of a small task
 * result or a copy pulled to this node from a node holding it. A task
 * result not produced yet is waited for.
 *
 * IN  timeout_ms  0: do not wait; > 0: wait that long; < 0: forever
 * OUT out         returns owned buffer, free with mt_buffer_release()
 * RET 0, -MT_ENOENT (unknown to the head and absent here, timeout 0),
 *     -MT_ETIMEDOUT, -MT_ETASKFAILED (its task failed: no value),
 *     -MT_EWORKERDIED (lost: every copy was on nodes that died),
 *     -MT_EUNAVAIL (no local store and the object is not inline; head
 *     unreachable), -MT_EIO (spilled and cannot be restored, or the pull
 *     failed), -MT_ECLOSED, -MT_ENOMEM
 */
MT_EXTERN int mt_get(mt_client_t *c, const mt_object_id *id, int timeout_ms,
                     mt_buffer_t **out);

/*
 * mt_object_release - drop your references to n objects (one each): the
 * ones mt_put() gave you. At zero references (tasks using an object as an
 * argument hold one each until they end) the head has every copy deleted
 * from the stores; buffers still mapped stay readable until released.
 * Task results are released with their task (mt_task_release()).
 *
 * RET 0, -MT_ENOENT (some id held no reference; the others are released),
 *     -MT_EINVAL, -MT_EUNAVAIL / -MT_ETIMEDOUT (head), -MT_ECLOSED
 * THREAD any
 */
MT_EXTERN int mt_object_release(mt_client_t *c, const mt_object_id *ids,
                                size_t n);

/*
 * mt_buffer_release - unpin the object and unmap the view.
 * OWNERSHIP invalidates b and every pointer from it; NULL ok. Works after
 * mt_client_disconnect() (the mapping lives until the last buffer goes).
 */
MT_EXTERN void mt_buffer_release(mt_buffer_t *b);

/* mt_buffer_data - the object's bytes, read-only; 64-byte aligned. */
MT_EXTERN const void *mt_buffer_data(const mt_buffer_t *b);

/* mt_buffer_size - the object's size in bytes. */
MT_EXTERN size_t mt_buffer_size(const mt_buffer_t *b);

/* mt_buffer_id - the object's id (borrowed, lives with b). */
MT_EXTERN const mt_object_id *mt_buffer_id(const mt_buffer_t *b);

/* mt_buffer_is_tensor - true when the object was put as a tensor. */
MT_EXTERN bool mt_buffer_is_tensor(const mt_buffer_t *b);

/*
 * mt_buffer_tensor - the tensor description of an object.
 *
 * OUT code, bits, ndim   element type and rank (each may be NULL)
 * OUT shape              NULL or MT_TENSOR_MAX_NDIM elements; the first
 *                        *ndim are set
 * RET 0, -MT_EINVAL (not a tensor)
 */
MT_EXTERN int mt_buffer_tensor(const mt_buffer_t *b, mt_dtype_code *code,
                               uint8_t *bits, uint32_t *ndim, int64_t *shape);

#ifdef __cplusplus
}
#endif

#endif /* MANTA_OBJECT_H */
