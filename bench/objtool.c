/* SPDX-License-Identifier: Apache-2.0 */
/*
 * objtool.c -- mt_objtool: put, get and fetch objects on running workers,
 * for integration tests and the inter-node transfer benchmark.
 *
 *   mt_objtool put SOCKET SIZE SEED      -> "<id> <checksum>"
 *   mt_objtool get SOCKET ID [TIMEOUT_MS] -> "<size> <checksum>"
 *   mt_objtool fetch WORKER_ADDR ID FROM_ADDR [TIMEOUT_MS]
 *                                         -> "<size> <us> <GB/s>"
 *   mt_objtool delete SOCKET ID           -> "deleted"
 *   mt_objtool stats SOCKET               -> "<objects> <used bytes>"
 *
 * Objects are filled with a seeded pseudo-random stream; the checksum is a
 * 64-bit mix over 8-byte words, so both ends can compare content cheaply.
 * The object id is derived from the seed and size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/auth.h"
#include "common/error.h"
#include "common/ids.h"
#include "common/qty.h"
#include "common/rpc.h"
#include "objstore/client.h"
#include "objstore/store.h"
#include "proto/services.h"
#include "worker_service.pb-c.h"

static uint64_t checksum(const uint8_t *p, uint64_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull, w;
    uint64_t i = 0;

    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h ^ n;
}

static void fill(uint8_t *p, uint64_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1, i = 0;

    for (; i + 8 <= n; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(p + i, &x, 8);
    }
    for (; i < n; i++)
        p[i] = (uint8_t)(x >> (i % 8));
}

static int usage(void)
{
    fprintf(stderr, "usage: mt_objtool put SOCKET SIZE SEED\n"
                    "       mt_objtool get SOCKET ID [TIMEOUT_MS]\n"
                    "       mt_objtool fetch WORKER_ADDR ID FROM_ADDR "
                    "[TIMEOUT_MS]\n"
                    "       mt_objtool delete SOCKET ID\n"
                    "       mt_objtool stats SOCKET\n");
    return 2;
}

static int cmd_put(const char *sock, const char *size_s, const char *seed_s)
{
    struct mt_objc *c;
    struct mt_objc_buf buf;
    uint64_t size, seed = strtoull(seed_s, NULL, 10);
    mt_object_id id;
    char hex[MT_OBJECT_ID_HEX_LEN + 1];
    int rc;

    if (mt_bytes_parse(size_s, &size) < 0)
        return usage();
    id = mt_object_id_from_u64(seed, size);
    rc = mt_objc_connect(sock, NULL, &c);
    if (rc == 0)
        rc = mt_objc_create(c, &id, size, 0, 0, NULL, &buf);
    if (rc == 0) {
        fill(buf.data, size, seed);
        rc = mt_objc_seal(c, &id);
    }
    if (rc < 0) {
        fprintf(stderr, "mt_objtool put: %s\n", mt_strerror(rc));
        return 1;
    }
    printf("%s %016llx\n", mt_object_id_hex(&id, hex),
           (unsigned long long)checksum(buf.data, size));
    mt_objc_disconnect(c);
    return 0;
}

static int cmd_get(const char *sock, const char *idhex, const char *tmo)
{
    struct mt_objc *c;
    struct mt_objc_buf buf;
    mt_object_id id;
    int rc;

    if (mt_object_id_from_hex(idhex, &id) < 0)
        return usage();
    rc = mt_objc_connect(sock, NULL, &c);
    if (rc == 0)
        rc = mt_objc_get(c, &id, tmo ? atoll(tmo) : 0, &buf);
    if (rc < 0) {
        fprintf(stderr, "mt_objtool get: %s\n", mt_strerror(rc));
        return 1;
    }
    printf("%llu %016llx\n", (unsigned long long)buf.info.data_size,
           (unsigned long long)checksum(buf.data, buf.info.data_size));
    mt_objc_release(c, &id);
    mt_objc_disconnect(c);
    return 0;
}

/* Delete a sealed, unpinned object from the store. */
static int cmd_delete(const char *sock, const char *idhex)
{
    struct mt_objc *c;
    mt_object_id id;
    int rc;

    if (mt_object_id_from_hex(idhex, &id) < 0)
        return usage();
    rc = mt_objc_connect(sock, NULL, &c);
    if (rc == 0) {
        rc = mt_objc_delete(c, &id);
        mt_objc_disconnect(c);
    }
    if (rc < 0) {
        fprintf(stderr, "mt_objtool delete: %s\n", mt_strerror(rc));
        return 1;
    }
    printf("deleted\n");
    return 0;
}

static int cmd_fetch(const char *addr, const char *idhex, const char *from,
                     const char *tmo)
{
    Manta__FetchObjectRequest req = MANTA__FETCH_OBJECT_REQUEST__INIT;
    Manta__FetchObjectReply *r = NULL;
    struct mt_rpc_engine *eng;
    struct mt_rpc_channel *ch = NULL;
    ProtobufCMessage *resp = NULL;
    mt_object_id id;
    uv_loop_t loop;
    char err[512] = "";
    struct mt_security_src src = {0};
    int rc;

    if (mt_object_id_from_hex(idhex, &id) < 0)
        return usage();
    req.object_id.data = id.b;
    req.object_id.len = MT_OBJECT_ID_LEN;
    req.from_address = (char *)from;
    req.timeout_ms = tmo ? (uint32_t)atoi(tmo) : 120000;
    uv_loop_init(&loop);
    mt_rpc_engine_create(&loop, &eng);
    /* The cluster token and TLS files from the environment (MANTA_*). */
    rc = mt_rpc_engine_load_security(eng, &src, err, sizeof(err));
    if (rc == 0)
        rc = mt_rpc_channel_create(eng, addr, 0, &ch);
    if (rc == 0)
        rc = mt_rpc_unary_sync(ch, &mt_worker_fetch_object, &req.base,
                               (int)req.timeout_ms + 10000, 0, &resp, err,
                               sizeof(err));
    mt_rpc_channel_destroy(ch);
    mt_rpc_engine_destroy(eng);
    uv_loop_close(&loop);
    if (rc < 0) {
        fprintf(stderr, "mt_objtool fetch: %s\n", err);
        return 1;
    }
    r = (Manta__FetchObjectReply *)resp;
    printf("%llu %llu %.2f%s\n", (unsigned long long)r->data_size,
           (unsigned long long)r->elapsed_us,
           r->elapsed_us ? (double)r->data_size / (double)r->elapsed_us / 1e3
                         : 0.0,
           r->already_local ? " already-local" : "");
    protobuf_c_message_free_unpacked(resp, NULL);
    return 0;
}

/* Objects in the store and arena bytes in use (release boards excluded). */
static int cmd_stats(const char *sock)
{
    struct mt_store_stats st;
    struct mt_objc *c;
    int rc = mt_objc_connect(sock, NULL, &c);

    if (rc == 0) {
        rc = mt_objc_stats(c, &st);
        mt_objc_disconnect(c);
    }
    if (rc < 0) {
        fprintf(stderr, "mt_objtool stats: %s\n", mt_strerror(rc));
        return 1;
    }
    printf("%llu %llu\n", (unsigned long long)st.num_objects,
           (unsigned long long)(st.used - st.reserved));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "stats") == 0)
        return cmd_stats(argv[2]);
    if (argc >= 5 && strcmp(argv[1], "put") == 0)
        return cmd_put(argv[2], argv[3], argv[4]);
    if (argc >= 4 && strcmp(argv[1], "get") == 0)
        return cmd_get(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
    if (argc >= 5 && strcmp(argv[1], "fetch") == 0)
        return cmd_fetch(argv[2], argv[3], argv[4], argc > 5 ? argv[5] : NULL);
    if (argc >= 4 && strcmp(argv[1], "delete") == 0)
        return cmd_delete(argv[2], argv[3]);
    return usage();
}
