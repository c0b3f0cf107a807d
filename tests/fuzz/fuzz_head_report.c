/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_head_report.c -- a ReportNode request (a worker's heartbeat) as the
 * head reads it (head/rpc_nodes.c h_report, up to the node table):
 * protobuf-c unpacks the bytes, the node id is checked
 * (mt_head_node_id_valid) and the available resources, usage and GPU
 * figures are converted (mt_qty_from_pb, mt_head_usage_from_pb,
 * mt_head_gpus_from_pb).
 */
#include "head/rpc_checks.h"
#include "proto/convert.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Manta__ReportNodeRequest *req =
        manta__report_node_request__unpack(NULL, size, data);
    struct mt_qty_list avail = {0};
    struct mt_node_usage usage;
    struct mt_node_gpu *gpus;
    const char *why = NULL;
    size_t n_gpus = 0;

    if (!req)
        return 0;
    if (mt_head_node_id_valid(req->node_id) &&
        mt_qty_from_pb(req->resources_available, req->n_resources_available,
                       MT_HEAD_NODE_MAX_ENTRIES, &avail, &why) == 0 &&
        req->usage) {
        mt_head_usage_from_pb(req->usage, &usage);
        gpus = mt_head_gpus_from_pb(req->usage, &n_gpus);
        for (size_t i = 0; i < n_gpus; i++)
            MT_FUZZ_CHECK(gpus[i].util_percent <= 100 &&
                          gpus[i].index >= -1);
        free(gpus);
    }
    mt_qty_list_release(&avail);
    manta__report_node_request__free_unpacked(req, NULL);
    return 0;
}
