/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_head_register.c -- a RegisterNode request as the head reads it
 * (head/rpc_nodes.c register_info, up to the node table): protobuf-c
 * unpacks the bytes, mt_head_node_info_check checks the node, and its
 * resources, labels, usage and GPU figures are converted to plain C
 * (mt_qty_from_pb, mt_kv_from_pb, mt_head_usage_from_pb,
 * mt_head_gpus_from_pb). Saved nodes (NodeInfo rows read back from
 * storage) take the same path.
 *
 * Property: what is accepted is within the limits the table relies on.
 */
#include "head/rpc_checks.h"
#include "proto/convert.h"
#include "tests/fuzz/fuzz.h"

static void node_once(const Manta__NodeInfo *ni)
{
    struct mt_qty_list total = {0};
    struct mt_kv_list labels = {0};
    struct mt_node_usage usage;
    struct mt_node_gpu *gpus;
    const char *why = NULL;
    size_t n_gpus = 0;

    if (mt_head_node_info_check(ni) ||
        mt_qty_from_pb(ni->resources_total, ni->n_resources_total,
                       MT_HEAD_NODE_MAX_ENTRIES, &total, &why) < 0 ||
        mt_kv_from_pb(ni->labels, ni->n_labels, MT_HEAD_NODE_MAX_ENTRIES,
                      &labels, &why) < 0)
        goto out;
    MT_FUZZ_CHECK(total.n <= MT_HEAD_NODE_MAX_ENTRIES);
    for (size_t i = 0; i < total.n; i++)
        MT_FUZZ_CHECK(mt_qty_valid_name(total.v[i].name) &&
                      total.v[i].qty >= 0);
    if (ni->usage) {
        mt_head_usage_from_pb(ni->usage, &usage);
        MT_FUZZ_CHECK(usage.cpu_percent >= 0 && usage.cpu_percent <= 100);
        gpus = mt_head_gpus_from_pb(ni->usage, &n_gpus);
        MT_FUZZ_CHECK(n_gpus <= MT_NODE_MAX_GPUS);
        free(gpus);
    }
out:
    mt_qty_list_release(&total);
    mt_kv_list_release(&labels);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Manta__RegisterNodeRequest *req =
        manta__register_node_request__unpack(NULL, size, data);
    Manta__NodeInfo *ni;

    if (req) {
        if (req->node)
            node_once(req->node);
        manta__register_node_request__free_unpacked(req, NULL);
    }
    /* The same bytes as a saved row (storage "nodes"). */
    if ((ni = manta__node_info__unpack(NULL, size, data))) {
        node_once(ni);
        manta__node_info__free_unpacked(ni, NULL);
    }
    return 0;
}
