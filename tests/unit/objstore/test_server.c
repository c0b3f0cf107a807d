/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_server.c -- the socket server against raw, hostile peers: requests
 * before HELLO, wrong sizes, unknown types, oversized and truncated frames,
 * release without get, random garbage. After each, the store must still
 * serve a well-behaved client, and leak no pin or unsealed object.
 */
#include "objstore/server.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/error.h"
#include "objstore/client.h"
#include "objstore/protocol.h"
#include "store_proc.h"
#include "tests/unit/unit.h"

static struct store_proc sp;

int mt_test_server_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    return store_proc_start(&sp, 8u << 20, false) == 0 ? 0 : -1;
}

int mt_test_server_cleanup(void)
{
    return store_proc_stop(&sp) == 0 ? 0 : -1;
}

static int raw_connect(void)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    strcpy(sa.sun_path, sp.sock);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
    return fd;
}

static void raw_send(int fd, uint16_t type, uint16_t flags, uint32_t seq,
                     const void *p, uint32_t len)
{
    struct mt_proto_hdr h = {len, type, flags, seq, 0};

    CU_ASSERT(send(fd, &h, sizeof(h), MSG_NOSIGNAL) == sizeof(h));
    if (len)
        CU_ASSERT(send(fd, p, len, MSG_NOSIGNAL) == (ssize_t)len);
}

/* Read exactly n bytes within 5 s. RET n, 0 on EOF, -1 on timeout. */
static ssize_t raw_read(int fd, void *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t r;

        if (poll(&p, 1, 5000) <= 0)
            return -1;
        r = recv(fd, (char *)buf + got, n - got, 0);
        if (r <= 0)
            return r == 0 ? 0 : -1;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Read one reply; payload (if any) is discarded. RET its status. */
static int raw_reply(int fd, uint32_t seq, uint16_t type)
{
    struct mt_proto_hdr h;
    char buf[512];

    CU_ASSERT_FATAL(raw_read(fd, &h, sizeof(h)) == sizeof(h));
    CU_ASSERT(h.flags & MT_PROTO_F_REPLY);
    CU_ASSERT_EQUAL(h.seq, seq);
    CU_ASSERT_EQUAL(h.type, type);
    CU_ASSERT_FATAL(h.len <= sizeof(buf));
    if (h.len)
        CU_ASSERT(raw_read(fd, buf, h.len) == (ssize_t)h.len);
    return h.status;
}

static bool dropped(int fd)
{
    char c;

    return raw_read(fd, &c, 1) == 0;
}

/* HELLO; the passed fd is received and closed. */
static void raw_hello(int fd)
{
    struct mt_proto_hello_req q = {MT_PROTO_VERSION, 1};
    enum { REP = MT_PROTO_HDR_SIZE + sizeof(struct mt_proto_hello_rep) };
    char buf[REP], ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {buf, REP};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                       .msg_controllen = sizeof(ctl)};
    struct cmsghdr *cm;
    int passed = -1;

    raw_send(fd, MT_MSG_HELLO, 0, 1, &q, sizeof(q));
    CU_ASSERT_FATAL(recvmsg(fd, &m, MSG_WAITALL) == REP);
    cm = CMSG_FIRSTHDR(&m);
    CU_ASSERT_FATAL(cm && cm->cmsg_type == SCM_RIGHTS);
    memcpy(&passed, CMSG_DATA(cm), sizeof(int));
    CU_ASSERT(passed >= 0);
    close(passed);
}

/* A well-behaved client still gets served, and nothing leaked. */
static void store_healthy(void)
{
    struct mt_objc *c;
    mt_object_id id = mt_object_id_from_u64(77, 77);
    struct mt_objc_buf b;
    struct mt_store_stats s;

    CU_ASSERT_FATAL(mt_objc_connect(sp.sock, NULL, &c) == 0);
    CU_ASSERT_EQUAL(mt_objc_put(c, &id, "ok", 2, NULL, 0, 0, NULL), 0);
    CU_ASSERT_EQUAL(mt_objc_get(c, &id, 0, &b), 0);
    CU_ASSERT_EQUAL(memcmp(b.data, "ok", 2), 0);
    CU_ASSERT_EQUAL(mt_objc_release(c, &id), 0);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &id), 0);
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT_EQUAL(s.num_pinned, 0);
    mt_objc_disconnect(c);
}

static void test_before_hello(void)
{
    int fd = raw_connect();
    mt_object_id id = mt_object_id_from_u64(1, 1);

    raw_send(fd, MT_MSG_CONTAINS, 0, 5, &id, sizeof(id));
    CU_ASSERT(dropped(fd));
    close(fd);
    store_healthy();
}

static void test_bad_version(void)
{
    int fd = raw_connect();
    struct mt_proto_hello_req q = {MT_PROTO_VERSION + 7, 1};

    raw_send(fd, MT_MSG_HELLO, 0, 3, &q, sizeof(q));
    CU_ASSERT_EQUAL(raw_reply(fd, 3, MT_MSG_HELLO), -MT_EVERSION);
    close(fd);
}

static void test_wrong_sizes_keep_connection(void)
{
    int fd = raw_connect();
    mt_object_id id = mt_object_id_from_u64(2, 2);
    char junk[64] = {0};

    raw_hello(fd);
    raw_send(fd, MT_MSG_SEAL, 0, 2, junk, 10);
    CU_ASSERT_EQUAL(raw_reply(fd, 2, MT_MSG_SEAL), -MT_EPROTO);
    raw_send(fd, 999, 0, 3, junk, 8);
    CU_ASSERT_EQUAL(raw_reply(fd, 3, 999), -MT_EPROTO);
    raw_send(fd, MT_MSG_GET, MT_PROTO_F_ONEWAY, 4, junk, 32);
    CU_ASSERT_EQUAL(raw_reply(fd, 4, MT_MSG_GET), -MT_EPROTO);
    raw_send(fd, MT_MSG_RELEASE, 0, 5, junk, 21);
    CU_ASSERT_EQUAL(raw_reply(fd, 5, MT_MSG_RELEASE), -MT_EPROTO);
    raw_send(fd, MT_MSG_PUT, 0, 6, junk, 40);
    CU_ASSERT_EQUAL(raw_reply(fd, 6, MT_MSG_PUT), -MT_EPROTO);
    raw_send(fd, MT_MSG_HELLO, 0, 7, junk, 8);
    CU_ASSERT_EQUAL(raw_reply(fd, 7, MT_MSG_HELLO), -MT_EPROTO);
    /* Same connection, valid request: still answered. */
    raw_send(fd, MT_MSG_CONTAINS, 0, 8, &id, sizeof(id));
    CU_ASSERT_EQUAL(raw_reply(fd, 8, MT_MSG_CONTAINS), -MT_ENOENT);
    close(fd);
    store_healthy();
}

static void test_release_without_get(void)
{
    struct mt_objc *c;
    mt_object_id id = mt_object_id_from_u64(3, 3);
    mt_object_id two[2] = {id, mt_object_id_from_u64(3, 4)};
    int fd = raw_connect();

    CU_ASSERT_FATAL(mt_objc_connect(sp.sock, NULL, &c) == 0);
    CU_ASSERT_EQUAL(mt_objc_put(c, &id, "x", 1, NULL, 0, 0, NULL), 0);
    raw_hello(fd);
    raw_send(fd, MT_MSG_RELEASE, 0, 2, &id, sizeof(id));
    CU_ASSERT_EQUAL(raw_reply(fd, 2, MT_MSG_RELEASE), -MT_ESTATE);
    raw_send(fd, MT_MSG_RELEASE, 0, 3, &two[1], sizeof(id));
    CU_ASSERT_EQUAL(raw_reply(fd, 3, MT_MSG_RELEASE), -MT_ENOENT);
    raw_send(fd, MT_MSG_RELEASE, MT_PROTO_F_ONEWAY, 4, two, sizeof(two));
    /* No reply to the one-way release: the next reply is for seq 5. */
    raw_send(fd, MT_MSG_SEAL, 0, 5, &id, sizeof(id));
    CU_ASSERT_EQUAL(raw_reply(fd, 5, MT_MSG_SEAL), -MT_ESTATE);
    close(fd);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &id), 0);
    mt_objc_disconnect(c);
}

static void test_oversized_frame(void)
{
    int fd = raw_connect();
    struct mt_proto_hdr h = {0xffffffffu, MT_MSG_PUT, 0, 9, 0};

    raw_hello(fd);
    CU_ASSERT(send(fd, &h, sizeof(h), MSG_NOSIGNAL) == sizeof(h));
    CU_ASSERT(dropped(fd));
    close(fd);
    store_healthy();
}

static void test_truncated_frames(void)
{
    struct mt_proto_hdr h = {sizeof(struct mt_proto_get), MT_MSG_GET, 0, 2, 0};
    char part[10] = {0};
    int fd = raw_connect();

    raw_hello(fd);
    CU_ASSERT(send(fd, &h, sizeof(h), MSG_NOSIGNAL) == sizeof(h));
    CU_ASSERT(send(fd, part, sizeof(part), MSG_NOSIGNAL) == sizeof(part));
    close(fd);
    fd = raw_connect();
    CU_ASSERT(send(fd, &h, 7, MSG_NOSIGNAL) == 7); /* half a header */
    close(fd);
    store_healthy();
}

/* Nothing left from other connections: only c is connected. */
static bool all_clean(void *arg)
{
    struct mt_store_stats s;
    struct mt_server_stats ss;

    return mt_objc_stats(arg, &s) == 0 && s.num_unsealed == 0 &&
           s.num_pinned == 0 && mt_objc_server_stats(arg, &ss) == 0 &&
           ss.clients == 1 && ss.waiting == 0;
}

/* A raw client that creates and pins, then vanishes: nothing leaks. */
static void test_raw_disconnect_cleans_up(void)
{
    struct mt_proto_create q = {.id = mt_object_id_from_u64(4, 1),
                                .data_size = 1000};
    struct mt_proto_get g = {.id = mt_object_id_from_u64(4, 2)};
    struct mt_objc *c;
    struct mt_store_stats s;
    int fd = raw_connect();

    CU_ASSERT_FATAL(mt_objc_connect(sp.sock, NULL, &c) == 0);
    CU_ASSERT_EQUAL(mt_objc_put(c, &g.id, "p", 1, NULL, 0, 0, NULL), 0);
    raw_hello(fd);
    raw_send(fd, MT_MSG_CREATE, 0, 2, &q, sizeof(q));
    CU_ASSERT_EQUAL(raw_reply(fd, 2, MT_MSG_CREATE), 0);
    raw_send(fd, MT_MSG_GET, 0, 3, &g, sizeof(g));
    CU_ASSERT_EQUAL(raw_reply(fd, 3, MT_MSG_GET), 0);
    raw_send(fd, MT_MSG_GET, 0, 4, &g, sizeof(g));
    CU_ASSERT_EQUAL(raw_reply(fd, 4, MT_MSG_GET), 0);
    /* And a GET parked forever. */
    g.id = mt_object_id_from_u64(4, 3);
    g.timeout_ms = -1;
    raw_send(fd, MT_MSG_GET, 0, 5, &g, sizeof(g));
    CU_ASSERT_EQUAL(mt_objc_stats(c, &s), 0);
    CU_ASSERT_EQUAL(s.num_unsealed, 1);
    CU_ASSERT_EQUAL(s.num_pinned, 1);
    close(fd);
    CU_ASSERT(wait_until(all_clean, c, 5000));
    g.id = mt_object_id_from_u64(4, 2);
    CU_ASSERT_EQUAL(mt_objc_delete(c, &g.id), 0);
    mt_objc_disconnect(c);
}

/* Seeded random frames: any outcome but a crash or a leak is fine. */
static void test_garbage(void)
{
    uint32_t x = 0xC0FFEE;
    uint8_t buf[400];
    int fd = raw_connect();
    struct mt_objc *c;
    struct mt_server_stats ss;

    raw_hello(fd);
    for (int i = 0; i < 3000; i++) {
        struct mt_proto_hdr h;
        uint32_t len;

        x = x * 1664525u + 1013904223u;
        len = (x >> 8) % sizeof(buf);
        for (uint32_t j = 0; j < len; j++) {
            x = x * 1664525u + 1013904223u;
            buf[j] = (uint8_t)(x >> 24);
        }
        h.len = len;
        h.type = (uint16_t)(1 + (x >> 4) % 13);
        h.flags = (uint16_t)((x >> 20) & 1 ? MT_PROTO_F_ONEWAY : 0);
        h.seq = (uint32_t)i;
        h.status = 0;
        if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) != sizeof(h) ||
            send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
            break;
    }
    close(fd);
    CU_ASSERT_FATAL(mt_objc_connect(sp.sock, NULL, &c) == 0);
    CU_ASSERT(wait_until(all_clean, c, 5000));
    CU_ASSERT_EQUAL(mt_objc_server_stats(c, &ss), 0);
    CU_ASSERT(ss.proto_errors > 0);
    mt_objc_disconnect(c);
    store_healthy();
}

CU_TestInfo mt_test_server[] = {
    {"before_hello", test_before_hello},
    {"bad_version", test_bad_version},
    {"wrong_sizes_keep_connection", test_wrong_sizes_keep_connection},
    {"release_without_get", test_release_without_get},
    {"oversized_frame", test_oversized_frame},
    {"truncated_frames", test_truncated_frames},
    {"raw_disconnect_cleans_up", test_raw_disconnect_cleans_up},
    {"garbage", test_garbage},
    CU_TEST_INFO_NULL,
};
