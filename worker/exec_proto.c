/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec_proto.c -- encoding and decoding of worker <-> executor frames (the
 * layout is in exec_proto.h). Decoders check every length against what is
 * left and against the limits before touching the bytes, so a malformed
 * frame is an error, never an overread.
 */
#include "worker/exec_proto.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"

/* ---- writing ------------------------------------------------------------- */

struct wbuf {
    uint8_t *p;
    size_t len;
};

static void put_u32(struct wbuf *w, uint32_t v)
{
    memcpy(w->p + w->len, &v, 4);
    w->len += 4;
}

static void put_bytes(struct wbuf *w, const void *p, uint32_t n)
{
    put_u32(w, n);
    if (n)
        memcpy(w->p + w->len, p, n);
    w->len += n;
}

static void put_str(struct wbuf *w, const char *s)
{
    put_bytes(w, s ? s : "", s ? (uint32_t)strlen(s) : 0);
}

static void frame_start(struct wbuf *w, size_t payload, uint32_t type)
{
    w->p = mt_xmalloc(MT_EXEC_HDR + payload);
    w->len = 0;
    put_u32(w, MT_EXEC_MAGIC);
    put_u32(w, type);
    put_u32(w, (uint32_t)payload);
    put_u32(w, 0);
}

static bool str_ok(const char *s, size_t max)
{
    return !s || strlen(s) <= max;
}

int mt_exec_request_encode(const struct mt_exec_request *r, uint8_t **frame,
                           size_t *len)
{
    size_t n = 4 + 4 + 4 + 4 + 4 + 4 + 4, args = 0, env = 0;
    struct wbuf w;

    if (!str_ok(r->task_id, MT_EXEC_MAX_ID) ||
        !str_ok(r->function, MT_EXEC_MAX_FUNCTION) ||
        r->n_code_path > MT_EXEC_MAX_CODE_PATH ||
        r->n_env > MT_EXEC_MAX_ENV || r->nargs > MT_EXEC_MAX_ARGS ||
        r->actor_op > MT_EXEC_ACTOR_METHOD)
        return -MT_EINVAL;
    n += r->task_id ? strlen(r->task_id) : 0;
    n += r->function ? strlen(r->function) : 0;
    for (uint32_t i = 0; i < r->n_code_path; i++) {
        if (!str_ok(r->code_path[i], MT_EXEC_MAX_PATH))
            return -MT_EINVAL;
        n += 4 + strlen(r->code_path[i]);
    }
    for (uint32_t i = 0; i < r->n_env; i++)
        env += 4 + strlen(r->env[i]);
    for (uint32_t i = 0; i < r->nargs; i++)
        args += r->args[i].size;
    if (args > MT_EXEC_MAX_ARG_BYTES || env > MT_EXEC_MAX_ENV_BYTES)
        return -MT_EINVAL;
    n += env;
    n += args + 4 * (size_t)r->nargs;
    if (r->n_refs > r->nargs || !str_ok(r->store_socket, MT_EXEC_MAX_SOCKET))
        return -MT_EINVAL;
    for (uint32_t i = 0; i < r->n_refs; i++)
        if (r->refs[i].index >= r->nargs)
            return -MT_EINVAL;
    n += 4 + (size_t)r->n_refs * (4 + 4 + 20) + 4 + 4;
    n += r->store_socket ? strlen(r->store_socket) : 0;
    frame_start(&w, n, MT_EXEC_REQUEST);
    put_u32(&w, r->attempt);
    put_str(&w, r->task_id);
    put_str(&w, r->function);
    put_u32(&w, r->n_code_path);
    for (uint32_t i = 0; i < r->n_code_path; i++)
        put_str(&w, r->code_path[i]);
    put_u32(&w, r->n_env);
    for (uint32_t i = 0; i < r->n_env; i++)
        put_str(&w, r->env[i]);
    put_u32(&w, r->nargs);
    for (uint32_t i = 0; i < r->nargs; i++)
        put_bytes(&w, r->args[i].data, r->args[i].size);
    put_u32(&w, r->actor_op);
    put_u32(&w, r->n_refs);
    for (uint32_t i = 0; i < r->n_refs; i++) {
        put_u32(&w, r->refs[i].index);
        put_bytes(&w, r->refs[i].id, 20);
    }
    put_str(&w, r->store_socket);
    put_u32(&w, r->store_results);
    *frame = w.p;
    *len = w.len;
    return 0;
}

int mt_exec_reply_encode(const struct mt_exec_reply *r, uint8_t **frame,
                         size_t *len)
{
    size_t elen = r->error ? strlen(r->error) : 0;
    struct wbuf w;

    if (r->result.size > MT_EXEC_MAX_RESULT || elen > MT_EXEC_MAX_ERROR)
        return -MT_EINVAL;
    frame_start(&w, 20 + r->result.size + elen, MT_EXEC_REPLY);
    put_u32(&w, r->status);
    put_bytes(&w, r->result.data, r->result.size);
    put_str(&w, r->error);
    put_u32(&w, (uint32_t)r->stored);
    put_u32(&w, (uint32_t)(r->stored >> 32));
    *frame = w.p;
    *len = w.len;
    return 0;
}

/* ---- reading ------------------------------------------------------------- */

struct rbuf {
    const uint8_t *p;
    size_t left;
    bool bad;
};

static uint32_t get_u32(struct rbuf *r)
{
    uint32_t v = 0;

    if (r->bad || r->left < 4) {
        r->bad = true;
        return 0;
    }
    memcpy(&v, r->p, 4);
    r->p += 4;
    r->left -= 4;
    return v;
}

/* A blob of at most max bytes, borrowed from the payload. */
static struct mt_exec_blob get_blob(struct rbuf *r, uint32_t max)
{
    struct mt_exec_blob b = {NULL, 0};
    uint32_t n = get_u32(r);

    if (r->bad || n > max || n > r->left) {
        r->bad = true;
        return b;
    }
    b.data = r->p;
    b.size = n;
    r->p += n;
    r->left -= n;
    return b;
}

/* A string of at most max bytes without NUL, copied. NULL when bad. */
static char *get_str(struct rbuf *r, uint32_t max)
{
    struct mt_exec_blob b = get_blob(r, max);

    if (r->bad || memchr(b.data, '\0', b.size)) {
        r->bad = true;
        return NULL;
    }
    return mt_xstrndup((const char *)b.data, b.size);
}

int mt_exec_header_parse(const uint8_t *hdr, uint32_t *type, uint32_t *len)
{
    uint32_t v[4];

    memcpy(v, hdr, sizeof(v));
    if (v[0] != MT_EXEC_MAGIC || v[3] != 0)
        return -MT_EPROTO;
    if (v[1] == MT_EXEC_REQUEST ? v[2] > MT_EXEC_MAX_REQUEST
        : v[1] == MT_EXEC_REPLY ? v[2] > MT_EXEC_MAX_REPLY
                                : true)
        return -MT_EPROTO;
    *type = v[1];
    *len = v[2];
    return 0;
}

int mt_exec_request_decode(const uint8_t *p, size_t n,
                           struct mt_exec_request *r)
{
    struct rbuf rb = {p, n, false};
    size_t args = 0, env = 0;

    memset(r, 0, sizeof(*r));
    r->attempt = get_u32(&rb);
    r->task_id = get_str(&rb, MT_EXEC_MAX_ID);
    r->function = get_str(&rb, MT_EXEC_MAX_FUNCTION);
    r->n_code_path = get_u32(&rb);
    if (rb.bad || r->n_code_path > MT_EXEC_MAX_CODE_PATH)
        goto out_bad;
    r->code_path = mt_xcalloc(r->n_code_path + 1, sizeof(*r->code_path));
    for (uint32_t i = 0; i < r->n_code_path && !rb.bad; i++)
        r->code_path[i] = get_str(&rb, MT_EXEC_MAX_PATH);
    r->n_env = get_u32(&rb);
    if (rb.bad || r->n_env > MT_EXEC_MAX_ENV || r->n_env > rb.left / 4)
        goto out_bad;
    r->env = mt_xcalloc(r->n_env + 1, sizeof(*r->env));
    for (uint32_t i = 0; i < r->n_env && !rb.bad; i++) {
        r->env[i] = get_str(&rb, MT_EXEC_MAX_ENV_BYTES);
        env += r->env[i] ? strlen(r->env[i]) + 4 : 0;
        if (r->env[i] && (r->env[i][0] == '=' || !r->env[i][0]))
            rb.bad = true;
    }
    if (env > MT_EXEC_MAX_ENV_BYTES)
        goto out_bad;
    r->nargs = get_u32(&rb);
    if (rb.bad || r->nargs > MT_EXEC_MAX_ARGS || r->nargs > rb.left / 4)
        goto out_bad;
    r->args = mt_xcalloc(r->nargs + 1, sizeof(*r->args));
    for (uint32_t i = 0; i < r->nargs && !rb.bad; i++) {
        r->args[i] = get_blob(&rb, MT_EXEC_MAX_ARG_BYTES);
        args += r->args[i].size;
    }
    r->actor_op = get_u32(&rb);
    if (rb.bad || r->actor_op > MT_EXEC_ACTOR_METHOD)
        goto out_bad;
    if (rb.left == 0) /* no object fields (a sender that has none) */
        return args > MT_EXEC_MAX_ARG_BYTES ? (mt_exec_request_release(r),
                                               -MT_EPROTO)
                                            : 0;
    r->n_refs = get_u32(&rb);
    if (rb.bad || r->n_refs > r->nargs || r->n_refs > rb.left / 28)
        goto out_bad;
    r->refs = mt_xcalloc(r->n_refs + 1, sizeof(*r->refs));
    for (uint32_t i = 0; i < r->n_refs && !rb.bad; i++) {
        struct mt_exec_blob id;

        r->refs[i].index = get_u32(&rb);
        id = get_blob(&rb, 20);
        if (rb.bad || id.size != 20 || r->refs[i].index >= r->nargs)
            goto out_bad;
        memcpy(r->refs[i].id, id.data, 20);
    }
    r->store_socket = get_str(&rb, MT_EXEC_MAX_SOCKET);
    r->store_results = get_u32(&rb);
    if (rb.bad || rb.left != 0 || args > MT_EXEC_MAX_ARG_BYTES)
        goto out_bad;
    return 0;

out_bad:
    mt_exec_request_release(r);
    return -MT_EPROTO;
}

int mt_exec_reply_decode(const uint8_t *p, size_t n, struct mt_exec_reply *r)
{
    struct rbuf rb = {p, n, false};

    memset(r, 0, sizeof(*r));
    r->status = get_u32(&rb);
    r->result = get_blob(&rb, MT_EXEC_MAX_RESULT);
    r->error = get_str(&rb, MT_EXEC_MAX_ERROR);
    if (rb.left) { /* optional: absent from senders without a store */
        r->stored = get_u32(&rb);
        r->stored |= (uint64_t)get_u32(&rb) << 32;
    }
    if (rb.bad || rb.left != 0 || r->status > MT_EXEC_BAD_REQUEST) {
        mt_exec_reply_release(r);
        return -MT_EPROTO;
    }
    return 0;
}

void mt_exec_request_release(struct mt_exec_request *r)
{
    free(r->task_id);
    free(r->function);
    for (uint32_t i = 0; r->code_path && i < r->n_code_path; i++)
        free(r->code_path[i]);
    free(r->code_path);
    for (uint32_t i = 0; r->env && i < r->n_env; i++)
        free(r->env[i]);
    free(r->env);
    free(r->args);
    free(r->refs);
    free(r->store_socket);
    memset(r, 0, sizeof(*r));
}

void mt_exec_reply_release(struct mt_exec_reply *r)
{
    free(r->error);
    memset(r, 0, sizeof(*r));
}

/* ---- incremental reader -------------------------------------------------- */

void mt_exec_reader_init(struct mt_exec_reader *rd)
{
    memset(rd, 0, sizeof(*rd));
}

void mt_exec_reader_release(struct mt_exec_reader *rd)
{
    free(rd->buf);
    memset(rd, 0, sizeof(*rd));
}

/* Drop the frames already returned; give a big buffer back once it is
 * empty, so an idle executor does not pin the memory of its last 8 MiB
 * result. */
static void compact(struct mt_exec_reader *rd)
{
    if (!rd->used)
        return;
    if (rd->used == rd->len && rd->cap > MT_EXEC_READER_KEEP) {
        MT_FREE(rd->buf);
        rd->len = rd->cap = rd->used = 0;
        return;
    }
    memmove(rd->buf, rd->buf + rd->used, rd->len - rd->used);
    rd->len -= rd->used;
    rd->used = 0;
}

void mt_exec_reader_feed(struct mt_exec_reader *rd, const void *data,
                         size_t n)
{
    if (n == 0)
        return; /* a fresh reader has no buffer to add nothing to */
    compact(rd);
    if (rd->len + n > rd->cap) {
        size_t cap = rd->cap ? rd->cap : 4096;

        while (cap < rd->len + n)
            cap *= 2;
        rd->buf = mt_xrealloc(rd->buf, cap);
        rd->cap = cap;
    }
    memcpy(rd->buf + rd->len, data, n);
    rd->len += n;
}

int mt_exec_reader_next(struct mt_exec_reader *rd, uint32_t *type,
                        const uint8_t **payload, size_t *len)
{
    uint32_t t, n;

    compact(rd);
    if (rd->len < MT_EXEC_HDR)
        return 0;
    if (mt_exec_header_parse(rd->buf, &t, &n) < 0)
        return -MT_EPROTO;
    if (rd->len - MT_EXEC_HDR < n)
        return 0;
    *type = t;
    *payload = rd->buf + MT_EXEC_HDR;
    *len = n;
    rd->used = MT_EXEC_HDR + (size_t)n;
    return 1;
}
