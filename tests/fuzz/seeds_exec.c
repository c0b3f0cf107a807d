/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seeds_exec.c -- seeds of fuzz_exec_proto: whole frames as the worker and
 * the executor write them, two frames back to back, and a frame cut short.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/seeds.h"
#include "worker/exec_proto.h"

static void write_frame(const char *what, uint8_t *f, size_t n)
{
    mt_seed_write("exec_proto", what, f, n);
    free(f);
}

void mt_seeds_exec(void)
{
    char *code_path[] = {"/opt/lib"};
    char *env[] = {"A=1", "B"};
    struct mt_exec_blob args[2] = {{(const uint8_t *)"xy", 2}, {NULL, 0}};
    struct mt_exec_ref refs[1] = {{1, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                       12, 13, 14, 15, 16, 17, 18, 19, 20}}};
    struct mt_exec_request r = {
        .attempt = 2, .task_id = "t1", .function = "libfn.so:add",
        .n_code_path = 1, .code_path = code_path, .n_env = 2, .env = env,
        .nargs = 2, .args = args, .actor_op = MT_EXEC_ACTOR_NONE,
        .n_refs = 1, .refs = refs, .store_socket = "/tmp/store.sock",
        .store_results = 1};
    struct mt_exec_reply rep = {MT_EXEC_OK, {(const uint8_t *)"res", 3}, "",
                                0};
    struct mt_exec_reply stored = {MT_EXEC_FAILED, {NULL, 0}, "boom",
                                   1u << 20};
    uint8_t *f, *g, *both;
    size_t n, m;

    mt_exec_request_encode(&r, &f, &n);
    mt_seed_write("exec_proto", "request-cut", f, n - 3);
    write_frame("request", f, n);
    r.n_refs = 0;
    r.store_socket = NULL;
    r.actor_op = MT_EXEC_ACTOR_METHOD;
    mt_exec_request_encode(&r, &f, &n);
    write_frame("request-actor", f, n);
    mt_exec_reply_encode(&rep, &f, &n);
    mt_exec_reply_encode(&stored, &g, &m);
    both = malloc(n + m);
    memcpy(both, f, n);
    memcpy(both + n, g, m);
    mt_seed_write("exec_proto", "two-replies", both, n + m);
    free(both);
    write_frame("reply", f, n);
    write_frame("reply-stored", g, m);
}
