/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_exec_proto.c -- worker/exec_proto.c: requests and replies survive a
 * round trip; the incremental reader reassembles frames fed a byte at a
 * time; and every kind of malformed frame (bad magic, type, length,
 * truncated or overlong fields, NUL in a string, bytes left over, limits)
 * is refused with -MT_EPROTO instead of being read past its end.
 */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "tests/unit/unit.h"
#include "worker/exec_proto.h"

static uint8_t *sample_request(size_t *len)
{
    static char *cp[] = {"/a", "/b/c"};
    static char *env[] = {"A=1", "CUDA_VISIBLE_DEVICES=0,2"};
    struct mt_exec_blob args[3] = {{(const uint8_t *)"xy", 2},
                                   {NULL, 0},
                                   {(const uint8_t *)"\0\1\2", 3}};
    struct mt_exec_request r = {.attempt = 7, .task_id = "t1",
                                .function = "libfoo.so:add",
                                .n_code_path = 2, .code_path = cp,
                                .n_env = 2, .env = env,
                                .nargs = 3, .args = args,
                                .actor_op = MT_EXEC_ACTOR_CREATE};
    uint8_t *f = NULL;

    CU_ASSERT_EQUAL_FATAL(mt_exec_request_encode(&r, &f, len), 0);
    return f;
}

static void test_request_round_trip(void)
{
    struct mt_exec_request r;
    uint32_t type, plen;
    size_t len;
    uint8_t *f = sample_request(&len);

    CU_ASSERT_EQUAL_FATAL(mt_exec_header_parse(f, &type, &plen), 0);
    CU_ASSERT_EQUAL(type, MT_EXEC_REQUEST);
    CU_ASSERT_EQUAL(plen, len - MT_EXEC_HDR);
    CU_ASSERT_EQUAL_FATAL(mt_exec_request_decode(f + MT_EXEC_HDR, plen, &r),
                          0);
    CU_ASSERT_EQUAL(r.attempt, 7);
    CU_ASSERT_STRING_EQUAL(r.task_id, "t1");
    CU_ASSERT_STRING_EQUAL(r.function, "libfoo.so:add");
    CU_ASSERT_EQUAL_FATAL(r.n_code_path, 2);
    CU_ASSERT_STRING_EQUAL(r.code_path[1], "/b/c");
    CU_ASSERT_EQUAL_FATAL(r.n_env, 2);
    CU_ASSERT_STRING_EQUAL(r.env[0], "A=1");
    CU_ASSERT_STRING_EQUAL(r.env[1], "CUDA_VISIBLE_DEVICES=0,2");
    CU_ASSERT_EQUAL_FATAL(r.nargs, 3);
    CU_ASSERT_EQUAL(r.args[0].size, 2);
    CU_ASSERT_EQUAL(memcmp(r.args[0].data, "xy", 2), 0);
    CU_ASSERT_EQUAL(r.args[1].size, 0);
    CU_ASSERT_EQUAL(r.args[2].size, 3);
    CU_ASSERT_EQUAL(memcmp(r.args[2].data, "\0\1\2", 3), 0);
    CU_ASSERT_EQUAL(r.actor_op, MT_EXEC_ACTOR_CREATE);
    mt_exec_request_release(&r);
    free(f);
}

static void test_reply_round_trip(void)
{
    struct mt_exec_reply in = {MT_EXEC_FAILED, {(const uint8_t *)"res", 3},
                               "boom", 0};
    struct mt_exec_reply out;
    uint32_t type, plen;
    uint8_t *f;
    size_t len;

    CU_ASSERT_EQUAL_FATAL(mt_exec_reply_encode(&in, &f, &len), 0);
    CU_ASSERT_EQUAL_FATAL(mt_exec_header_parse(f, &type, &plen), 0);
    CU_ASSERT_EQUAL(type, MT_EXEC_REPLY);
    CU_ASSERT_EQUAL_FATAL(mt_exec_reply_decode(f + MT_EXEC_HDR, plen, &out),
                          0);
    CU_ASSERT_EQUAL(out.status, MT_EXEC_FAILED);
    CU_ASSERT_EQUAL(out.result.size, 3);
    CU_ASSERT_EQUAL(memcmp(out.result.data, "res", 3), 0);
    CU_ASSERT_STRING_EQUAL(out.error, "boom");
    mt_exec_reply_release(&out);
    free(f);
    /* NULL error encodes as "". */
    in.error = NULL;
    in.status = MT_EXEC_OK;
    CU_ASSERT_EQUAL_FATAL(mt_exec_reply_encode(&in, &f, &len), 0);
    CU_ASSERT_EQUAL_FATAL(mt_exec_reply_decode(f + MT_EXEC_HDR,
                                               len - MT_EXEC_HDR, &out), 0);
    CU_ASSERT_STRING_EQUAL(out.error, "");
    mt_exec_reply_release(&out);
    free(f);
}

static void test_encode_limits(void)
{
    struct mt_exec_reply rep = {0, {NULL, MT_EXEC_MAX_RESULT + 1}, "", 0};
    struct mt_exec_request r;
    char fn[MT_EXEC_MAX_FUNCTION + 2];
    uint8_t *f = NULL;
    size_t len;

    CU_ASSERT_EQUAL(mt_exec_reply_encode(&rep, &f, &len), -MT_EINVAL);
    memset(fn, 'a', sizeof(fn) - 1);
    fn[sizeof(fn) - 1] = '\0';
    memset(&r, 0, sizeof(r));
    r.function = fn;
    CU_ASSERT_EQUAL(mt_exec_request_encode(&r, &f, &len), -MT_EINVAL);
    r.function = "f";
    r.n_code_path = MT_EXEC_MAX_CODE_PATH + 1;
    CU_ASSERT_EQUAL(mt_exec_request_encode(&r, &f, &len), -MT_EINVAL);
    r.n_code_path = 0;
    r.n_env = MT_EXEC_MAX_ENV + 1;
    CU_ASSERT_EQUAL(mt_exec_request_encode(&r, &f, &len), -MT_EINVAL);
    CU_ASSERT_PTR_NULL(f);
}

static void test_bad_headers(void)
{
    uint32_t h[4] = {MT_EXEC_MAGIC, MT_EXEC_REQUEST, 10, 0}, type, len;

    CU_ASSERT_EQUAL(mt_exec_header_parse((uint8_t *)h, &type, &len), 0);
    h[0] = 0x12345678;
    CU_ASSERT_EQUAL(mt_exec_header_parse((uint8_t *)h, &type, &len),
                    -MT_EPROTO);
    h[0] = MT_EXEC_MAGIC;
    h[1] = 9;
    CU_ASSERT_EQUAL(mt_exec_header_parse((uint8_t *)h, &type, &len),
                    -MT_EPROTO);
    h[1] = MT_EXEC_REPLY;
    h[2] = MT_EXEC_MAX_REPLY + 1;
    CU_ASSERT_EQUAL(mt_exec_header_parse((uint8_t *)h, &type, &len),
                    -MT_EPROTO);
    h[1] = MT_EXEC_REQUEST;
    h[2] = MT_EXEC_MAX_REQUEST + 1;
    CU_ASSERT_EQUAL(mt_exec_header_parse((uint8_t *)h, &type, &len),
                    -MT_EPROTO);
    h[2] = 10;
    h[3] = 1;
    CU_ASSERT_EQUAL(mt_exec_header_parse((uint8_t *)h, &type, &len),
                    -MT_EPROTO);
}

/* Every truncation of a valid request, and one byte too many, fail. */
/* Object arguments and the store fields survive a round trip; a ref
 * index past the arguments is refused on both sides. */
static void test_request_refs(void)
{
    struct mt_exec_blob args[2] = {{(const uint8_t *)"v", 1}, {NULL, 0}};
    struct mt_exec_ref refs[1] = {{1, {0}}};
    struct mt_exec_request in = {.task_id = "t2", .function = "f",
                                 .nargs = 2, .args = args, .n_refs = 1,
                                 .refs = refs, .store_socket = "/s.sock",
                                 .store_results = 1};
    struct mt_exec_request out;
    uint8_t *f = NULL;
    size_t len;

    memset(refs[0].id, 0xab, 20);
    CU_ASSERT_EQUAL_FATAL(mt_exec_request_encode(&in, &f, &len), 0);
    CU_ASSERT_EQUAL_FATAL(mt_exec_request_decode(f + MT_EXEC_HDR,
                                                 len - MT_EXEC_HDR, &out), 0);
    CU_ASSERT_EQUAL(out.n_refs, 1);
    CU_ASSERT_EQUAL(out.refs[0].index, 1);
    CU_ASSERT_EQUAL(out.refs[0].id[19], 0xab);
    CU_ASSERT_STRING_EQUAL(out.store_socket, "/s.sock");
    CU_ASSERT_EQUAL(out.store_results, 1);
    mt_exec_request_release(&out);
    free(f);
    refs[0].index = 2;
    CU_ASSERT_EQUAL(mt_exec_request_encode(&in, &f, &len), -MT_EINVAL);
}

static void test_truncated_and_trailing(void)
{
    struct mt_exec_request r;
    size_t len, plen;
    uint8_t *f = sample_request(&len), *g;

    plen = len - MT_EXEC_HDR;
    for (size_t n = 0; n < plen; n++) {
        if (n == plen - 12) { /* without the (optional) object fields */
            CU_ASSERT_EQUAL(mt_exec_request_decode(f + MT_EXEC_HDR, n, &r),
                            0);
            CU_ASSERT_EQUAL(r.n_refs, 0);
            mt_exec_request_release(&r);
            continue;
        }
        CU_ASSERT_EQUAL(mt_exec_request_decode(f + MT_EXEC_HDR, n, &r),
                        -MT_EPROTO);
        CU_ASSERT_PTR_NULL(r.task_id);
    }
    g = malloc(plen + 1);
    memcpy(g, f + MT_EXEC_HDR, plen);
    g[plen] = 0;
    CU_ASSERT_EQUAL(mt_exec_request_decode(g, plen + 1, &r), -MT_EPROTO);
    free(g);
    free(f);
}

static void test_bad_fields(void)
{
    struct mt_exec_request r;
    struct mt_exec_reply rep;
    size_t len;
    uint8_t *f = sample_request(&len), *p = f + MT_EXEC_HDR;
    uint32_t v;

    /* A NUL inside task_id ("t1" at offset 8). */
    p[9] = '\0';
    CU_ASSERT_EQUAL(mt_exec_request_decode(p, len - MT_EXEC_HDR, &r),
                    -MT_EPROTO);
    p[9] = '1';
    /* task_id length beyond the limit and beyond the payload. */
    v = MT_EXEC_MAX_ID + 1;
    memcpy(p + 4, &v, 4);
    CU_ASSERT_EQUAL(mt_exec_request_decode(p, len - MT_EXEC_HDR, &r),
                    -MT_EPROTO);
    v = 0xffffffffu;
    memcpy(p + 4, &v, 4);
    CU_ASSERT_EQUAL(mt_exec_request_decode(p, len - MT_EXEC_HDR, &r),
                    -MT_EPROTO);
    free(f);
    /* A huge argument count with no bytes behind it; an environment
     * entry without '='. */
    {
        uint8_t pl[40];
        uint32_t u[7] = {0, 0, 1, 0, 0, 0xffffff, 1};

        memcpy(pl, u, 12);          /* attempt, task_id "", function len 1 */
        pl[12] = 'f';
        memcpy(pl + 13, &u[3], 4);  /* no code path */
        memcpy(pl + 17, &u[3], 4);  /* no environment */
        memcpy(pl + 21, &u[5], 4);  /* nargs */
        memcpy(pl + 25, &u[4], 4);  /* one empty argument */
        CU_ASSERT_EQUAL(mt_exec_request_decode(pl, 29, &r), -MT_EPROTO);
        memcpy(pl + 21, &u[6], 4);  /* the same with nargs 1 and */
        memcpy(pl + 29, &u[3], 4);  /* actor_op 0 is fine */
        CU_ASSERT_EQUAL(mt_exec_request_decode(pl, 29, &r), -MT_EPROTO);
        CU_ASSERT_EQUAL_FATAL(mt_exec_request_decode(pl, 33, &r), 0);
        CU_ASSERT_STRING_EQUAL(r.function, "f");
        CU_ASSERT_EQUAL(r.n_env, 0);
        mt_exec_request_release(&r);
        /* One environment entry "=B" (no name), then nargs 0. */
        memcpy(pl + 17, &u[6], 4);
        u[0] = 2;
        memcpy(pl + 21, &u[0], 4);
        memcpy(pl + 25, "=B", 2);
        memcpy(pl + 27, &u[3], 4);
        memcpy(pl + 31, &u[3], 4);  /* actor_op 0 */
        CU_ASSERT_EQUAL(mt_exec_request_decode(pl, 35, &r), -MT_EPROTO);
        pl[25] = 'A';               /* a bare "AB" is an unset */
        CU_ASSERT_EQUAL_FATAL(mt_exec_request_decode(pl, 35, &r), 0);
        CU_ASSERT_STRING_EQUAL(r.env[0], "AB");
        mt_exec_request_release(&r);
        pl[26] = '=';               /* "A=" is fine */
        CU_ASSERT_EQUAL_FATAL(mt_exec_request_decode(pl, 35, &r), 0);
        mt_exec_request_release(&r);
        u[0] = 3;                   /* an unknown actor_op is not */
        memcpy(pl + 31, &u[0], 4);
        CU_ASSERT_EQUAL(mt_exec_request_decode(pl, 35, &r), -MT_EPROTO);
        u[0] = MT_EXEC_ACTOR_METHOD;
        memcpy(pl + 31, &u[0], 4);
        CU_ASSERT_EQUAL_FATAL(mt_exec_request_decode(pl, 35, &r), 0);
        CU_ASSERT_EQUAL(r.actor_op, MT_EXEC_ACTOR_METHOD);
        CU_ASSERT_STRING_EQUAL(r.env[0], "A=");
        mt_exec_request_release(&r);
    }
    /* A reply with an unknown status. */
    {
        uint32_t pl[3] = {99, 0, 0};

        CU_ASSERT_EQUAL(mt_exec_reply_decode((uint8_t *)pl, sizeof(pl), &rep),
                        -MT_EPROTO);
        pl[0] = MT_EXEC_OK;
        CU_ASSERT_EQUAL(mt_exec_reply_decode((uint8_t *)pl, sizeof(pl), &rep),
                        0);
        mt_exec_reply_release(&rep);
    }
}

static void test_reader(void)
{
    struct mt_exec_reader rd;
    const uint8_t *pl;
    struct mt_exec_request r;
    uint32_t type;
    size_t len, plen, frames = 0;
    uint8_t *f = sample_request(&len);

    mt_exec_reader_init(&rd);
    CU_ASSERT_EQUAL(mt_exec_reader_next(&rd, &type, &pl, &plen), 0);
    /* Two frames, a byte at a time. */
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < len; i++) {
            mt_exec_reader_feed(&rd, f + i, 1);
            while (mt_exec_reader_next(&rd, &type, &pl, &plen) == 1) {
                CU_ASSERT_EQUAL(type, MT_EXEC_REQUEST);
                CU_ASSERT_EQUAL_FATAL(mt_exec_request_decode(pl, plen, &r),
                                      0);
                CU_ASSERT_STRING_EQUAL(r.function, "libfoo.so:add");
                mt_exec_request_release(&r);
                frames++;
            }
        }
    }
    CU_ASSERT_EQUAL(frames, 2);
    /* Both at once, then garbage. */
    mt_exec_reader_feed(&rd, f, len);
    mt_exec_reader_feed(&rd, f, len);
    mt_exec_reader_feed(&rd, "garbage-garbage-", 16);
    CU_ASSERT_EQUAL(mt_exec_reader_next(&rd, &type, &pl, &plen), 1);
    CU_ASSERT_EQUAL(mt_exec_reader_next(&rd, &type, &pl, &plen), 1);
    CU_ASSERT_EQUAL(mt_exec_reader_next(&rd, &type, &pl, &plen), -MT_EPROTO);
    mt_exec_reader_release(&rd);
    free(f);
}

/* A big reply is returned whole; the buffer is given back once empty. */
static void test_reader_big_frame(void)
{
    struct mt_exec_reply in = {MT_EXEC_OK, {NULL, 1u << 20}, "", 0};
    struct mt_exec_reader rd;
    struct mt_exec_reply out;
    const uint8_t *pl;
    uint32_t type;
    size_t len, plen;
    uint8_t *data = calloc(1, 1u << 20), *f;

    data[12345] = 7;
    in.result.data = data;
    CU_ASSERT_EQUAL_FATAL(mt_exec_reply_encode(&in, &f, &len), 0);
    mt_exec_reader_init(&rd);
    for (size_t off = 0; off < len; off += 65536) {
        CU_ASSERT_EQUAL(mt_exec_reader_next(&rd, &type, &pl, &plen), 0);
        mt_exec_reader_feed(&rd, f + off, len - off < 65536 ? len - off
                                                            : 65536);
    }
    CU_ASSERT_EQUAL_FATAL(mt_exec_reader_next(&rd, &type, &pl, &plen), 1);
    CU_ASSERT_EQUAL_FATAL(mt_exec_reply_decode(pl, plen, &out), 0);
    CU_ASSERT_EQUAL(out.result.size, 1u << 20);
    CU_ASSERT_EQUAL(out.result.data[12345], 7);
    mt_exec_reply_release(&out);
    CU_ASSERT_EQUAL(mt_exec_reader_next(&rd, &type, &pl, &plen), 0);
    CU_ASSERT_PTR_NULL(rd.buf);
    CU_ASSERT_EQUAL(rd.cap, 0);
    mt_exec_reader_release(&rd);
    free(f);
    free(data);
}

/* Nothing fed to a reader without a buffer (fresh, or after a big frame
 * gave it back) is no frame, and no pointer arithmetic on NULL (found by
 * tests/fuzz/fuzz_exec_proto.c under UBSan). */
static void test_reader_feed_empty(void)
{
    struct mt_exec_reader rd;
    const uint8_t *pl;
    uint32_t type;
    size_t plen;

    mt_exec_reader_init(&rd);
    mt_exec_reader_feed(&rd, "", 0);
    CU_ASSERT_PTR_NULL(rd.buf);
    CU_ASSERT_EQUAL(mt_exec_reader_next(&rd, &type, &pl, &plen), 0);
    mt_exec_reader_release(&rd);
}

CU_TestInfo mt_test_exec_proto[] = {
    {"request round trip", test_request_round_trip},
    {"reply round trip", test_reply_round_trip},
    {"encode limits", test_encode_limits},
    {"bad headers", test_bad_headers},
    {"request refs", test_request_refs},
    {"truncated and trailing", test_truncated_and_trailing},
    {"bad fields", test_bad_fields},
    {"reader", test_reader},
    {"reader big frame", test_reader_big_frame},
    {"reader fed nothing", test_reader_feed_empty},
    CU_TEST_INFO_NULL,
};
