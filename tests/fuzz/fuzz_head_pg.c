/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_head_pg.c -- a CreatePlacementGroup request as the head reads it
 * (head/rpc_pgs.c h_create_pg): protobuf-c unpacks the bytes, the name's
 * length is checked and the request converted to a plain C group
 * (mt_pg_def_from_pb: bundles, resources, selectors, TPU slices). An
 * accepted group is shown back as a request and packed, as
 * ListPlacementGroups does. (The bundles' checks against the scheduler's
 * resource names, head/pgs.c, need a live scheduler and are not run.)
 *
 * Property: the view of a converted group converts to the same shape.
 */
#include <string.h>

#include "proto/convert.h"
#include "tests/fuzz/fuzz.h"

static void view_round_trip(const struct mt_pg_def *p)
{
    Manta__CreatePlacementGroupRequest r, *back;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    const char *why = NULL;
    struct mt_pg_def again;
    uint8_t *buf;
    size_t len;

    MT_FUZZ_CHECK(mt_pb_pg_request_view(&a, p, &r) == 0);
    len = manta__create_placement_group_request__get_packed_size(&r);
    buf = malloc(len ? len : 1);
    manta__create_placement_group_request__pack(&r, buf);
    back = manta__create_placement_group_request__unpack(NULL, len, buf);
    MT_FUZZ_CHECK(back);
    memset(&again, 0, sizeof(again));
    MT_FUZZ_CHECK(mt_pg_def_from_pb(back, &again, &why) == 0);
    MT_FUZZ_CHECK(again.nbundles == p->nbundles &&
                  again.strategy == p->strategy &&
                  again.tpu_slices == p->tpu_slices);
    for (size_t i = 0; i < p->nbundles; i++)
        MT_FUZZ_CHECK(again.bundles[i].res.n == p->bundles[i].res.n &&
                      again.bundles[i].sel.n == p->bundles[i].sel.n);
    mt_pg_def_release(&again);
    manta__create_placement_group_request__free_unpacked(back, NULL);
    free(buf);
    mt_pb_arena_release(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Manta__CreatePlacementGroupRequest *req =
        manta__create_placement_group_request__unpack(NULL, size, data);
    const char *why = NULL;
    struct mt_pg_def def;

    if (!req)
        return 0;
    memset(&def, 0, sizeof(def));
    if (strlen(req->name) <= 256 && mt_pg_def_from_pb(req, &def, &why) == 0) {
        view_round_trip(&def);
        mt_pg_def_release(&def);
    }
    manta__create_placement_group_request__free_unpacked(req, NULL);
    return 0;
}
