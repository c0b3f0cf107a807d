/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protocol.h -- the store socket protocol (Unix stream socket, same host).
 *
 * Every message is a 16-byte header followed by `len` payload bytes. Fields
 * are in host byte order (both ends share the machine). A request carries a
 * seq the reply echoes; replies set MT_PROTO_F_REPLY and carry `status` (0 or
 * a negative -MT_E* code). A failed request's reply has no payload.
 *
 * HEADER
 *   OFFSET SIZE DESCRIPTION
 *   0      4    len: payload bytes after the header (<= MT_PROTO_MAX_PAYLOAD)
 *   4      2    type: enum mt_proto_type
 *   6      2    flags: MT_PROTO_F_*
 *   8      4    seq: chosen by the client, echoed in the reply
 *   12     4    status: 0 in requests; 0 or -MT_E* in replies
 *
 * MESSAGES (request payload -> reply payload on success)
 *   HELLO    mt_proto_hello_req -> mt_proto_hello_rep, plus the arena fd as
 *            SCM_RIGHTS ancillary data on the reply. Must come first.
 *   CREATE   mt_proto_create -> struct mt_object_info (where to write)
 *   PUT      mt_proto_create + data_size + meta_size bytes -> empty. Create,
 *            copy and seal in one round trip (small objects, total <=
 *            MT_PROTO_INLINE_MAX).
 *   SEAL     mt_object_id -> empty (only the creating connection may seal)
 *   ABORT    mt_object_id -> empty (only the creating connection)
 *   GET      mt_proto_get -> struct mt_object_info; pins the object for this
 *            connection. timeout_ms 0: answer now; > 0: wait that long for
 *            the object to be sealed (-MT_ETIMEDOUT); < 0: wait forever.
 *   RELEASE  n x mt_object_id -> empty; drops one pin per id. With
 *            MT_PROTO_F_ONEWAY no reply is sent (the client's batched fast
 *            path); otherwise the status is the first error met.
 *   DELETE   mt_object_id -> empty
 *   CONTAINS mt_object_id -> empty; status 0 sealed, -MT_EAGAIN unsealed,
 *            -MT_ENOENT
 *   STATS    empty -> struct mt_store_stats
 *   SERVER_STATS  empty -> struct mt_server_stats (below)
 *
 * ROBUSTNESS: a payload of the wrong size for its type, an unknown type or
 * a bad field gets an -MT_EPROTO / -MT_EINVAL reply and the connection goes
 * on; a header announcing more than MT_PROTO_MAX_PAYLOAD, or any request
 * before HELLO, drops the connection. When a connection closes, for any
 * reason, the store aborts its unsealed creations and drops its pins.
 */
#ifndef MT_PROTOCOL_H
#define MT_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"
#include "objstore/store.h"

#define MT_PROTO_VERSION 3u /* 2: release boards in HELLO; 3: the
                               MT_OBJ_DRIVER_PUT create flag */
#define MT_PROTO_HDR_SIZE 16u
#define MT_PROTO_INLINE_MAX (64u * 1024u)
#define MT_PROTO_MAX_PAYLOAD (256u * 1024u)
#define MT_PROTO_MAX_RELEASE (MT_PROTO_MAX_PAYLOAD / MT_OBJECT_ID_LEN)

#define MT_PROTO_F_REPLY 0x1u  /* set on replies */
#define MT_PROTO_F_ONEWAY 0x2u /* request wants no reply (RELEASE only) */

enum mt_proto_type {
    MT_MSG_HELLO = 1,
    MT_MSG_CREATE = 2,
    MT_MSG_PUT = 3,
    MT_MSG_SEAL = 4,
    MT_MSG_ABORT = 5,
    MT_MSG_GET = 6,
    MT_MSG_RELEASE = 7,
    MT_MSG_DELETE = 8,
    MT_MSG_CONTAINS = 9,
    MT_MSG_STATS = 10,
    MT_MSG_SERVER_STATS = 11,
};

struct mt_proto_hdr {
    uint32_t len;
    uint16_t type;
    uint16_t flags;
    uint32_t seq;
    int32_t status;
};

struct mt_proto_hello_req {
    uint32_t version; /* MT_PROTO_VERSION */
    uint32_t pid;     /* for logs */
};

struct mt_proto_hello_rep {
    uint32_t version;      /* MT_PROTO_VERSION */
    uint32_t board_slots;  /* release board slots (0: no board) */
    uint64_t client_id;    /* the store's name for this connection */
    uint64_t arena_size;   /* bytes to map from the passed fd */
    uint64_t board_offset; /* this client's release board (shm_layout.h) */
};

struct mt_proto_create {
    mt_object_id id;
    uint32_t flags;       /* MT_OBJ_* */
    uint64_t data_size;
    uint64_t meta_size;
    struct mt_tensor_desc tensor; /* used when flags has MT_OBJ_TENSOR */
};

struct mt_proto_get {
    mt_object_id id;
    uint32_t reserved;
    int64_t timeout_ms;
};

/* Socket server figures: the SERVER_STATS reply, mt_server_stats(). */
struct mt_server_stats {
    uint64_t clients;      /* connections open now */
    uint64_t accepted;     /* connections accepted (total) */
    uint64_t requests;     /* requests handled (total) */
    uint64_t proto_errors; /* malformed requests answered or dropped */
    uint64_t waiting;      /* gets waiting for a seal now */
};

_Static_assert(sizeof(struct mt_proto_hdr) == MT_PROTO_HDR_SIZE, "hdr");
_Static_assert(sizeof(struct mt_proto_create) == 176, "create layout");
_Static_assert(sizeof(struct mt_proto_get) == 32, "get layout");
_Static_assert(sizeof(struct mt_proto_hello_rep) == 32, "hello layout");
_Static_assert(sizeof(struct mt_object_info) == 168, "info layout");

/*
 * mt_proto_check_request - does a request's payload size fit its type?
 *
 * IN  h, payload   a complete frame (h->len bytes of payload)
 * RET 0, -MT_EPROTO (unknown type, wrong size, reply flag on a request,
 *     PUT whose sizes disagree with len)
 * THREAD any
 */
int mt_proto_check_request(const struct mt_proto_hdr *h, const void *payload);

#endif /* MT_PROTOCOL_H */
