/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protocol.c -- size checks of store requests before any field is read.
 *
 * Peer input never reaches an assert (house style H7): the server calls
 * mt_proto_check_request() on every frame and answers -MT_EPROTO when it
 * fails, so handlers may read the fixed-size payload structs directly.
 */
#include "protocol.h"

#include <string.h>

#include "common/error.h"

static int check_put(const struct mt_proto_hdr *h, const void *payload)
{
    struct mt_proto_create c;
    uint64_t total;

    if (h->len < sizeof(c))
        return -MT_EPROTO;
    memcpy(&c, payload, sizeof(c));
    if (__builtin_add_overflow(c.data_size, c.meta_size, &total) ||
        total > MT_PROTO_INLINE_MAX || h->len != sizeof(c) + total)
        return -MT_EPROTO;
    return 0;
}

static int check_release(const struct mt_proto_hdr *h)
{
    if (h->len == 0 || h->len % MT_OBJECT_ID_LEN != 0)
        return -MT_EPROTO;
    return 0;
}

static int fixed_size(uint16_t type, uint32_t *out)
{
    switch (type) {
    case MT_MSG_HELLO:
        *out = sizeof(struct mt_proto_hello_req);
        return 0;
    case MT_MSG_CREATE:
        *out = sizeof(struct mt_proto_create);
        return 0;
    case MT_MSG_GET:
        *out = sizeof(struct mt_proto_get);
        return 0;
    case MT_MSG_SEAL:
    case MT_MSG_ABORT:
    case MT_MSG_DELETE:
    case MT_MSG_CONTAINS:
        *out = MT_OBJECT_ID_LEN;
        return 0;
    case MT_MSG_STATS:
    case MT_MSG_SERVER_STATS:
        *out = 0;
        return 0;
    default:
        return -MT_EPROTO;
    }
}

int mt_proto_check_request(const struct mt_proto_hdr *h, const void *payload)
{
    uint32_t want;

    if (h->flags & MT_PROTO_F_REPLY || h->len > MT_PROTO_MAX_PAYLOAD)
        return -MT_EPROTO;
    if ((h->flags & MT_PROTO_F_ONEWAY) && h->type != MT_MSG_RELEASE)
        return -MT_EPROTO;
    if (h->type == MT_MSG_PUT)
        return check_put(h, payload);
    if (h->type == MT_MSG_RELEASE)
        return check_release(h);
    if (fixed_size(h->type, &want) < 0 || h->len != want)
        return -MT_EPROTO;
    return 0;
}
