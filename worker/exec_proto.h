/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec_proto.h -- the framing between a worker and its executor processes
 * (manta-executor) over the Unix socket pair the worker passes as fd 3.
 *
 * The worker sends one REQUEST (run this function task) and waits for its
 * REPLY before sending the next: one task at a time per executor. Both
 * ends are on one machine, so integers are in host byte order.
 *
 * Frame header (MT_EXEC_HDR bytes):
 *   OFFSET SIZE DESCRIPTION
 *   0      4    magic MT_EXEC_MAGIC
 *   4      4    type: MT_EXEC_REQUEST or MT_EXEC_REPLY
 *   8      4    payload length; at most MT_EXEC_MAX_REQUEST / _MAX_REPLY
 *   12     4    reserved, 0
 * Payload fields, in order; u32 = 4 bytes; str and blob = u32 length then
 * that many bytes (str: no NUL inside, no terminator on the wire):
 *   REQUEST  u32 attempt, str task_id, str function, u32 n_code_path,
 *            n_code_path x str, u32 n_env, n_env x str ("K=V" set, or
 *            a bare "K" removed, for the call and undone after; in
 *            order), u32 nargs, nargs x blob,
 *            u32 actor_op (enum mt_exec_actor_op), then (object
 *            arguments) u32 n_refs, n_refs x (u32 index, blob id of 20
 *            bytes): argument index is that object of the node's store (its
 *            blob is empty), str store_socket ("" = no store), u32
 *            store_results (1: a result over MT_EXEC_INLINE_MAX goes to the
 *            store); the object fields may be left out together
 *   REPLY    u32 status, blob result, str error, u32 stored_lo,
 *            u32 stored_hi: a result of that many bytes was put in the
 *            store under the task's result id (result then empty);
 *            stored_lo/hi may be left out together (0)
 * Anything else (bad magic, type or length, a field past the end, bytes
 * left over, a limit exceeded) is malformed: the reader drops the peer
 * (the executor exits; the worker kills the executor).
 *
 * This module is pure (no I/O) and is linked into both manta-worker and
 * manta-executor; tests/unit/worker/test_exec_proto.c covers it.
 *
 * THREAD: no shared state.
 */
#ifndef MT_WORKER_EXEC_PROTO_H
#define MT_WORKER_EXEC_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define MT_EXEC_MAGIC 0x4658544du        /* "MTXF" read as bytes */
#define MT_EXEC_HDR 16
#define MT_EXEC_FD 3                     /* the executor's socket */
#define MT_EXEC_MAX_ID 64
#define MT_EXEC_MAX_FUNCTION 512
#define MT_EXEC_MAX_CODE_PATH 64         /* entries */
#define MT_EXEC_MAX_PATH 4096            /* bytes per entry */
#define MT_EXEC_MAX_ENV 8192             /* entries */
#define MT_EXEC_MAX_ENV_BYTES ((1u << 20) + (64u << 10)) /* all together */
#define MT_EXEC_MAX_ARGS 4096
#define MT_EXEC_MAX_ARG_BYTES (16u << 20) /* all arguments together */
#define MT_EXEC_MAX_RESULT (8u << 20)    /* inline result limit */
#define MT_EXEC_MAX_ERROR 4096
#define MT_EXEC_INLINE_MAX (100u << 10)  /* bigger results go to the store */
#define MT_EXEC_MAX_SOCKET 4096
#define MT_EXEC_MAX_REQUEST (MT_EXEC_MAX_ARG_BYTES + (2u << 20))
#define MT_EXEC_MAX_REPLY (MT_EXEC_MAX_RESULT + MT_EXEC_MAX_ERROR + 64)

enum mt_exec_type {
    MT_EXEC_REQUEST = 1,
    MT_EXEC_REPLY = 2,
};

/* What a request does with the executor's actor (actors.h). */
enum mt_exec_actor_op {
    MT_EXEC_ACTOR_NONE = 0,    /* a plain function task */
    MT_EXEC_ACTOR_CREATE = 1,  /* call the factory; keep call->actor */
    MT_EXEC_ACTOR_METHOD = 2,  /* call a method with the kept actor */
};

enum mt_exec_status {
    MT_EXEC_OK = 0,          /* the function returned 0; result is set */
    MT_EXEC_FAILED = 1,      /* the function returned non-zero; error */
    MT_EXEC_NOT_FOUND = 2,   /* library or symbol not found; error */
    MT_EXEC_TOO_BIG = 3,     /* result over MT_EXEC_MAX_RESULT; error */
    MT_EXEC_BAD_REQUEST = 4, /* e.g. a malformed function name; error */
};

/* Bytes on the wire. */
struct mt_exec_blob {
    const uint8_t *data;
    uint32_t size;
};

/* An argument that is an object of the node's store. */
struct mt_exec_ref {
    uint32_t index;              /* < nargs */
    uint8_t id[20];
};

/*
 * A request. For encoding every pointer is borrowed from the caller. A
 * decoded request owns its strings and arrays (free with
 * mt_exec_request_release()) while args[i].data point into the payload it
 * was decoded from.
 */
struct mt_exec_request {
    uint32_t attempt;
    char *task_id;
    char *function;
    uint32_t n_code_path;
    char **code_path;
    uint32_t n_env;
    char **env;                  /* "K=V" */
    uint32_t nargs;
    struct mt_exec_blob *args;
    uint32_t actor_op;           /* enum mt_exec_actor_op */
    uint32_t n_refs;             /* object arguments, in the store */
    struct mt_exec_ref *refs;
    char *store_socket;          /* NULL or "": no store */
    uint32_t store_results;      /* 1: big results go to the store */
};

/* A reply; ownership as for requests (result points into the payload). */
struct mt_exec_reply {
    uint32_t status;             /* enum mt_exec_status */
    struct mt_exec_blob result;
    char *error;                 /* "" when none */
    uint64_t stored;             /* > 0: result put in the store */
};

/* ---- frames -------------------------------------------------------------- */

/*
 * mt_exec_request_encode / mt_exec_reply_encode - a whole frame (header and
 * payload).
 * OUT frame, len  returns owned, free with free()
 * RET 0, -MT_EINVAL (a field over its limit)
 */
int mt_exec_request_encode(const struct mt_exec_request *r, uint8_t **frame,
                           size_t *len);
int mt_exec_reply_encode(const struct mt_exec_reply *r, uint8_t **frame,
                         size_t *len);

/*
 * mt_exec_header_parse - check a frame header.
 * IN  hdr   MT_EXEC_HDR bytes
 * OUT type, len  the frame's type and payload length
 * RET 0, -MT_EPROTO
 */
int mt_exec_header_parse(const uint8_t *hdr, uint32_t *type, uint32_t *len);

/*
 * mt_exec_request_decode / mt_exec_reply_decode - parse a payload.
 * OUT r  on success, see the structs for ownership; zeroed on failure
 * RET 0, -MT_EPROTO
 */
int mt_exec_request_decode(const uint8_t *p, size_t n,
                           struct mt_exec_request *r);
int mt_exec_reply_decode(const uint8_t *p, size_t n, struct mt_exec_reply *r);

/* Free what a decoded message owns and zero it. Accept zeroed structs. */
void mt_exec_request_release(struct mt_exec_request *r);
void mt_exec_reply_release(struct mt_exec_reply *r);

/* ---- incremental reader (the worker's side of a stream) ------------------ */

#define MT_EXEC_READER_KEEP (256u << 10) /* bigger buffers freed when empty */

struct mt_exec_reader {
    uint8_t *buf;
    size_t len;                  /* bytes in buf */
    size_t cap;
    size_t used;                 /* bytes of frames already returned */
};

void mt_exec_reader_init(struct mt_exec_reader *rd);
void mt_exec_reader_release(struct mt_exec_reader *rd);

/* mt_exec_reader_feed - append n bytes read from the stream. Invalidates
 * payloads returned by mt_exec_reader_next(). */
void mt_exec_reader_feed(struct mt_exec_reader *rd, const void *data,
                         size_t n);

/*
 * mt_exec_reader_next - the next whole frame, if one is buffered.
 * OUT type, payload, len  payload borrowed: valid until the next call of
 *                         mt_exec_reader_next() or mt_exec_reader_feed()
 * RET 1 (a frame), 0 (need more bytes), -MT_EPROTO (malformed header)
 */
int mt_exec_reader_next(struct mt_exec_reader *rd, uint32_t *type,
                        const uint8_t **payload, size_t *len);

#endif /* MT_WORKER_EXEC_PROTO_H */
