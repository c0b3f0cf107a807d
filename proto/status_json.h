/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status_json.h -- render a GetClusterStatusReply as the one JSON object
 * that `manta status --format json` prints and the head's dashboard serves
 * at /api/cluster_status. One writer, so the two never drift apart.
 *
 * Quantities are fixed point (DESIGN.md section 4) and are written as the
 * shortest exact decimal (mt_qty_format), so 4 CPUs read 4 and 0.5 GPU 0.5.
 */
#ifndef MT_STATUS_JSON_H
#define MT_STATUS_JSON_H

#include "common/strbuf.h"
#include "head_service.pb-c.h"

/*
 * mt_status_json - append r as a JSON object followed by a newline.
 *
 * IN  r   borrowed; every string field must be non-NULL (protobuf-c fills
 *         unset strings with "")
 * OUT sb  the object is appended
 * THREAD  any (no shared state)
 */
void mt_status_json(struct mt_strbuf *sb,
                    const Manta__GetClusterStatusReply *r);

/*
 * mt_status_json_gpus - append the JSON array of a node's GPU figures
 * (u->gpus; u may be NULL: []), each
 * {"index", "id", "name", "uuid", "memory_used_bytes",
 *  "memory_total_bytes", "utilization_percent"} with null for unknown.
 * Shared by status and the node listing (list_json.c).
 * THREAD  any
 */
void mt_status_json_gpus(struct mt_strbuf *sb, const Manta__HostUsage *u);

/*
 * mt_status_json_res - append a resource map {"CPU": 4, "GPU": 0.5}.
 * Shared with list_json.c.
 * THREAD  any
 */
void mt_status_json_res(struct mt_strbuf *sb, Manta__ResourceEntry *const *e,
                        size_t n);

/*
 * mt_status_json_node_host / mt_status_json_node_res - append a node's
 * `, "address": .., "node_ip": .., "hostname": .., "metrics_address": ..`
 * or its
 * `, "resources_total": {..}, "resources_available": {..}, "labels": {..}`
 * members. Shared by the status and the node listing (list_json.c).
 * THREAD  any
 */
void mt_status_json_node_host(struct mt_strbuf *sb, const Manta__NodeInfo *n);
void mt_status_json_node_res(struct mt_strbuf *sb, const Manta__NodeInfo *n);

/*
 * mt_status_json_usage - append a node's `, "usage": {..}` member (host CPU,
 * memory, disk, network, object store); nothing when u is NULL. Shared by
 * the status and the node listing (list_json.c).
 * THREAD  any
 */
void mt_status_json_usage(struct mt_strbuf *sb, const Manta__HostUsage *u);

#endif /* MT_STATUS_JSON_H */
