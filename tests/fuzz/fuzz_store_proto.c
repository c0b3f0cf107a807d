/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_store_proto.c -- the object store's socket protocol
 * (objstore/protocol.h) on arbitrary bytes read as a client's stream:
 * 16-byte headers, each followed by its payload, checked by
 * mt_proto_check_request as the server does before any handler reads a
 * field. The server's dispatch itself needs a live store and socket and
 * is not run here.
 *
 * Property: a request the check accepts carries exactly the payload its
 * handler reads (fixed-size structs; PUT: the struct plus its sizes;
 * RELEASE: whole ids).
 */
#include "common/error.h"
#include "objstore/protocol.h"
#include "tests/fuzz/fuzz.h"

static void accepted(const struct mt_proto_hdr *h, const uint8_t *p)
{
    struct mt_proto_create c;

    switch (h->type) {
    case MT_MSG_PUT:
        MT_FUZZ_CHECK(h->len >= sizeof(c));
        memcpy(&c, p, sizeof(c));
        MT_FUZZ_CHECK(c.data_size + c.meta_size == h->len - sizeof(c));
        break;
    case MT_MSG_RELEASE:
        MT_FUZZ_CHECK(h->len && h->len % MT_OBJECT_ID_LEN == 0);
        break;
    case MT_MSG_CREATE:
        MT_FUZZ_CHECK(h->len == sizeof(c));
        break;
    default:
        MT_FUZZ_CHECK(h->len <= MT_PROTO_MAX_PAYLOAD);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    while (size >= MT_PROTO_HDR_SIZE) {
        struct mt_proto_hdr h;
        uint8_t *p;

        memcpy(&h, data, sizeof(h));
        data += sizeof(h);
        size -= sizeof(h);
        if (h.len > size)
            h.len = (uint32_t)size; /* the server waits for the rest */
        /* The payload in a buffer of its exact size, so ASan sees any
         * read past it. */
        p = malloc(h.len ? h.len : 1);
        memcpy(p, data, h.len);
        if (mt_proto_check_request(&h, p) == 0)
            accepted(&h, p);
        free(p);
        data += h.len;
        size -= h.len;
    }
    return 0;
}
