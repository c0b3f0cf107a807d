/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_head_gang.c -- a SubmitGang request as the head reads it
 * (head/rpc_gangs.c h_submit_gang, then head/gangs.c
 * mt_head_gang_submit): protobuf-c unpacks the bytes, the request is
 * converted to a plain C gang (mt_gang_def_from_pb) and checked
 * (mt_head_gang_def_check: the member task, the TPU pod type and
 * topology, the slice count). An accepted gang is shown back as a request
 * and packed.
 */
#include <string.h>

#include "head/checks.h"
#include "proto/convert.h"
#include "tests/fuzz/fuzz.h"

static void view_once(const struct mt_gang_def *g)
{
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__SubmitGangRequest r;
    uint8_t *buf;
    size_t len;

    MT_FUZZ_CHECK(mt_pb_gang_request_view(&a, g, &r) == 0);
    len = manta__submit_gang_request__get_packed_size(&r);
    buf = malloc(len ? len : 1);
    manta__submit_gang_request__pack(&r, buf);
    free(buf);
    mt_pb_arena_release(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Manta__SubmitGangRequest *req =
        manta__submit_gang_request__unpack(NULL, size, data);
    struct mt_tpu_slice shape;
    const char *why = NULL;
    struct mt_gang_def def;

    if (!req)
        return 0;
    memset(&def, 0, sizeof(def));
    mt_task_def_init(&def.member);
    if (mt_gang_def_from_pb(req, &def, &why) == 0) {
        if (!mt_head_gang_def_check(&def, &shape)) {
            MT_FUZZ_CHECK(shape.hosts > 0);
            view_once(&def);
        }
        mt_gang_def_release(&def);
    }
    manta__submit_gang_request__free_unpacked(req, NULL);
    return 0;
}
