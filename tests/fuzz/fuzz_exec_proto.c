/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_exec_proto.c -- the executor framing (worker/exec_proto.h) on
 * arbitrary bytes, as both ends read them: the worker's incremental reader
 * (fed in two pieces, split where the first byte says) and the executor's
 * header check, each frame's payload decoded as a request and as a reply.
 *
 * Properties: a frame the reader returns fits its header's length; a
 * decoded message encodes again and decodes to the same fields.
 */
#include "common/error.h"
#include "tests/fuzz/fuzz.h"
#include "worker/exec_proto.h"

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool blob_eq(const struct mt_exec_blob *a, const struct mt_exec_blob *b)
{
    return a->size == b->size &&
           (a->size == 0 || memcmp(a->data, b->data, a->size) == 0);
}

static void request_round_trip(const struct mt_exec_request *r)
{
    struct mt_exec_request again;
    uint32_t type, len;
    uint8_t *f;
    size_t n;

    if (mt_exec_request_encode(r, &f, &n) < 0)
        return; /* the decoder's limits may be wider than the encoder's */
    MT_FUZZ_CHECK(mt_exec_header_parse(f, &type, &len) == 0);
    MT_FUZZ_CHECK(type == MT_EXEC_REQUEST && len == n - MT_EXEC_HDR);
    MT_FUZZ_CHECK(mt_exec_request_decode(f + MT_EXEC_HDR, len, &again) == 0);
    MT_FUZZ_CHECK(again.attempt == r->attempt && again.nargs == r->nargs &&
                  again.n_env == r->n_env && again.n_refs == r->n_refs &&
                  again.n_code_path == r->n_code_path &&
                  again.actor_op == r->actor_op &&
                  again.store_results == r->store_results);
    MT_FUZZ_CHECK(str_eq(again.task_id, r->task_id) &&
                  str_eq(again.function, r->function) &&
                  str_eq(again.store_socket, r->store_socket));
    for (uint32_t i = 0; i < r->nargs; i++)
        MT_FUZZ_CHECK(blob_eq(&again.args[i], &r->args[i]));
    for (uint32_t i = 0; i < r->n_env; i++)
        MT_FUZZ_CHECK(str_eq(again.env[i], r->env[i]));
    for (uint32_t i = 0; i < r->n_code_path; i++)
        MT_FUZZ_CHECK(str_eq(again.code_path[i], r->code_path[i]));
    for (uint32_t i = 0; i < r->n_refs; i++)
        MT_FUZZ_CHECK(again.refs[i].index == r->refs[i].index &&
                      memcmp(again.refs[i].id, r->refs[i].id, 20) == 0);
    mt_exec_request_release(&again);
    free(f);
}

static void reply_round_trip(const struct mt_exec_reply *r)
{
    struct mt_exec_reply again;
    uint32_t type, len;
    uint8_t *f;
    size_t n;

    if (mt_exec_reply_encode(r, &f, &n) < 0)
        return;
    MT_FUZZ_CHECK(mt_exec_header_parse(f, &type, &len) == 0);
    MT_FUZZ_CHECK(type == MT_EXEC_REPLY && len == n - MT_EXEC_HDR);
    MT_FUZZ_CHECK(mt_exec_reply_decode(f + MT_EXEC_HDR, len, &again) == 0);
    MT_FUZZ_CHECK(again.status == r->status && again.stored == r->stored &&
                  blob_eq(&again.result, &r->result) &&
                  str_eq(again.error, r->error));
    mt_exec_reply_release(&again);
    free(f);
}

/* One payload, read as either message. */
static void payload_once(const uint8_t *p, size_t n)
{
    struct mt_exec_request req;
    struct mt_exec_reply rep;

    if (mt_exec_request_decode(p, n, &req) == 0) {
        request_round_trip(&req);
        mt_exec_request_release(&req);
    }
    if (mt_exec_reply_decode(p, n, &rep) == 0) {
        reply_round_trip(&rep);
        mt_exec_reply_release(&rep);
    }
}

/* The worker's side: frames out of a stream that arrives in pieces. */
static void reader_once(const uint8_t *data, size_t size)
{
    struct mt_exec_reader rd;
    size_t split = size ? data[0] % (size + 1) : 0;
    const uint8_t *payload;
    uint32_t type;
    size_t len;
    int rc = 0;

    mt_exec_reader_init(&rd);
    mt_exec_reader_feed(&rd, data, split);
    for (int piece = 0; piece < 2 && rc >= 0; piece++) {
        if (piece == 1)
            mt_exec_reader_feed(&rd, data + split, size - split);
        while ((rc = mt_exec_reader_next(&rd, &type, &payload, &len)) == 1) {
            MT_FUZZ_CHECK(len <= size);
            payload_once(payload, len);
        }
    }
    mt_exec_reader_release(&rd);
}

/* The executor's side: a header, then that many bytes. */
static void executor_once(const uint8_t *data, size_t size)
{
    uint32_t type, len;

    while (size >= MT_EXEC_HDR &&
           mt_exec_header_parse(data, &type, &len) == 0 &&
           len <= size - MT_EXEC_HDR) {
        payload_once(data + MT_EXEC_HDR, len);
        data += MT_EXEC_HDR + len;
        size -= MT_EXEC_HDR + len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Payloads are also read from a heap copy of their exact size, so
     * ASan sees a read one byte too far. */
    uint8_t *copy = malloc(size ? size : 1);

    memcpy(copy, data, size);
    payload_once(copy, size);
    free(copy);
    reader_once(data, size);
    executor_once(data, size);
    return 0;
}
