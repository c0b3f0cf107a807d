/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api.h -- the dashboard's JSON API: every GET under /api/ (the routes,
 * their parameters and shapes are in docs/dashboard.md, "API").
 *
 *   /api/cluster_status       `manta status --format json`
 *   /api/history              time series (history.h)
 *   /api/nodes, /api/nodes/ID listings and one node with its running
 *                             tasks and history
 *   /api/accelerators         every GPU and TPU slice, who holds it
 *   /api/tasks, /api/actors, /api/placement_groups, /api/gangs,
 *   /api/objects              listings, as `manta list --format json`
 *   /api/logs                 a task's or actor's output, by offset
 *
 * Listings take limit (default 100, at most 1000: larger ones are cut to
 * 1000) and offset (default 0), plus their kind's filters; unknown
 * parameters are ignored; a bad value is a 400 with {"error": "..."}. The
 * listings are written by proto/list_json.c through the rpc adapters'
 * builders (rpc_services.h), so the CLI and the API print the same thing.
 *
 * The dashboard (dashboard.c) authenticates the request before calling
 * here. Every answer is JSON, errors included.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_API_H
#define MT_HEAD_API_H

#include "common/strbuf.h"
#include "common/http.h"

#define MT_API_LIMIT_DEFAULT 100
#define MT_API_LIMIT_MAX 1000
#define MT_API_HISTORY_DEFAULT_SECONDS 300
#define MT_API_LOG_CHUNK (256 * 1024) /* output bytes per /api/logs answer */

struct mt_head;

/*
 * mt_head_api - answer GET path?query (path starts with /api/).
 *
 * IN  path, query  views into the request (borrowed)
 * OUT body         the JSON answer (appended)
 * RET the HTTP status: 200, 400 (bad parameter), 404 (no such route or
 *     object)
 */
int mt_head_api(struct mt_head *h, struct mt_http_str path,
                struct mt_http_str query, struct mt_strbuf *body);

/*
 * mt_json_utf8 - append n bytes as the inside of a JSON string: invalid
 * UTF-8 becomes U+FFFD, control characters \u00XX. With hold_tail, an
 * incomplete character at the very end is left out (more may follow).
 * RET the bytes consumed (n, or less by the held tail)
 */
size_t mt_json_utf8(struct mt_strbuf *sb, const unsigned char *p, size_t n,
                    bool hold_tail);

#endif /* MT_HEAD_API_H */
