/* SPDX-License-Identifier: Apache-2.0 */
/*
 * history.h -- the dashboard's bounded time series: the cluster's figures
 * and each node's, one sample a second, the last N seconds (1 h by
 * default, manta-head --history-seconds), served by /api/history.
 *
 * Each series set is a ring of rows, one row per second (tick = wall ms /
 * 1000), indexed by tick modulo the capacity. A second with no sample
 * (the head was busy, or the node had not reported yet) reads as null;
 * so do seconds older than the capacity. The cluster ring stores double
 * (15 series x 8 B x 3600 = 432 KB for an hour); node rows store
 * bfloat16 (the top half of a float32: 8 bits of precision, about 0.4 %,
 * which is what a chart shows) so a node costs 18 bytes a second:
 * 3600 s x 9 series x 2 B = 64.8 KB per node, 65 MB for 1,000 nodes
 * (docs/dashboard.md).
 *
 * The pure part (rings, the store by node id, the JSON) takes the time as
 * an argument and does no I/O (tests/unit/head/test_history.c). The
 * figures of one node come from ONE function, mt_history_node_figures,
 * over the node table's struct mt_node. The sampler at the end runs it on
 * the head's loop (a uv timer).
 *
 * THREAD: the head's loop thread only (not thread safe).
 */
#ifndef MT_HEAD_HISTORY_H
#define MT_HEAD_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

#define MT_HISTORY_INTERVAL_MS 1000
#define MT_HISTORY_MAX_SECONDS (7 * 86400)
/* A DEAD node's history is kept this long after its death, then dropped
 * (also at once when the node table forgets the node). */
#define MT_HISTORY_KEEP_DEAD_MS (10 * 60 * 1000)

/* The cluster's series, in the order of mt_history_cluster_names. */
enum mt_history_cluster_series {
    MT_HC_CPU_USED, MT_HC_CPU_TOTAL, MT_HC_GPU_USED, MT_HC_GPU_TOTAL,
    MT_HC_TPU_USED, MT_HC_TPU_TOTAL, MT_HC_MEM_USED, MT_HC_MEM_TOTAL,
    MT_HC_OS_USED, MT_HC_OS_TOTAL, MT_HC_PENDING, MT_HC_RUNNING,
    MT_HC_INFEASIBLE, MT_HC_FINISHED, MT_HC_FAILED,
    MT_HC_N
};

/* A node's series, in the order of mt_history_node_names. */
enum mt_history_node_series {
    MT_HN_CPU_RATIO, MT_HN_MEM_USED, MT_HN_MEM_TOTAL, MT_HN_GPU_UTIL,
    MT_HN_GPU_MEM_USED, MT_HN_CPU_USED, MT_HN_GPU_USED, MT_HN_TPU_USED,
    MT_HN_OS_USED,
    MT_HN_N
};

/* The series' names as /api/history writes them ("CPU_used", ...). */
extern const char *const mt_history_cluster_names[MT_HC_N];
extern const char *const mt_history_node_names[MT_HN_N];

struct mt_history;
struct mt_node;
struct mt_node_table;

/* The task figures of a cluster sample (the sampler counts them). */
struct mt_history_tasks {
    uint64_t pending;            /* WAITING_FOR_ARGS, PENDING, SCHEDULED */
    uint64_t running;
    uint64_t infeasible;         /* pending and reported infeasible */
    uint64_t finished_total;     /* since the head started */
    uint64_t failed_total;
};

/* ---- the store ----------------------------------------------------------- */

/*
 * mt_history_create - an empty history of seconds samples per series.
 *
 * IN  seconds  1 .. MT_HISTORY_MAX_SECONDS
 * OUT out      returns owned, free with mt_history_destroy
 * RET 0, -MT_EINVAL (seconds out of range)
 */
int mt_history_create(uint32_t seconds, struct mt_history **out);

/* mt_history_destroy - free everything. NULL ok. */
void mt_history_destroy(struct mt_history *hs);

/* mt_history_last_ms - the second of the newest cluster sample (ms), or
 * -1 before the first. */
int64_t mt_history_last_ms(const struct mt_history *hs);

/* mt_history_seconds - the capacity given at create. */
uint32_t mt_history_seconds(const struct mt_history *hs);

/*
 * mt_history_put_cluster / _put_node - record the sample of the second
 * now_ms falls in (replacing one already there); seconds skipped since
 * the last sample read as null. A sample older than the newest one by
 * the capacity or more is ignored. NaN values are nulls.
 *
 * IN  id  the node (borrowed; copied when new)
 * IN  v   MT_HC_N / MT_HN_N values
 */
void mt_history_put_cluster(struct mt_history *hs, int64_t now_ms,
                            const double v[MT_HC_N]);
void mt_history_put_node(struct mt_history *hs, const char *id,
                         int64_t now_ms, const double v[MT_HN_N]);

/* mt_history_drop_node - forget node id's series (unknown id: nothing). */
void mt_history_drop_node(struct mt_history *hs, const char *id);

/* mt_history_has_node - whether node id has series. */
bool mt_history_has_node(const struct mt_history *hs, const char *id);

/* mt_history_n_nodes - how many nodes have series. */
size_t mt_history_n_nodes(const struct mt_history *hs);

/* mt_history_bytes - the memory the series hold (for docs and metrics). */
size_t mt_history_bytes(const struct mt_history *hs);

/*
 * mt_history_read - n values of one series, oldest first, the last one
 * at the second end_ms falls in; NaN where there is no sample.
 *
 * IN  id      NULL: the cluster's series; else that node's
 * IN  series  an enum mt_history_cluster_series or _node_series value
 * OUT out     n values
 * RET 0, -MT_ENOENT (no such node), -MT_EINVAL (series out of range)
 */
int mt_history_read(const struct mt_history *hs, const char *id,
                    unsigned series, int64_t end_ms, size_t n, double *out);

/*
 * mt_history_json - append /api/history's object: {"interval_ms": 1000,
 * "end_ms": T, "node_id": id or null, "series": {NAME: [v, ...]}}, the
 * last `seconds` samples of each series (capped at the capacity), oldest
 * first, the last at end_ms (rounded down to its second), null for gaps.
 *
 * IN  id  NULL: the cluster's
 * RET 0, -MT_ENOENT (no such node; nothing appended)
 */
int mt_history_json(const struct mt_history *hs, const char *id,
                    uint32_t seconds, int64_t end_ms, struct mt_strbuf *sb);

/* ---- figures ------------------------------------------------------------- */

/*
 * mt_history_node_figures - node n's sample: host CPU (0-1) and memory,
 * mean GPU utilization (0-1) and GPU memory used over the GPUs that say
 * (NaN when none does), resources in use (total - available: CPU, GPU,
 * TPU), object store bytes in use (from the object_store_memory
 * resource; NaN when the node has none). The one place a node's figures
 * are read: a new source is one line here.
 */
void mt_history_node_figures(const struct mt_node *n, double v[MT_HN_N]);

/*
 * mt_history_sample - one sample of everything at now_ms: the cluster's
 * (resources over ALIVE nodes, host memory, the task counts tc) and each
 * ALIVE node's; then drop the series of nodes the table no longer has,
 * or DEAD for longer than MT_HISTORY_KEEP_DEAD_MS (wall clock).
 * O(nodes + series kept).
 */
void mt_history_sample(struct mt_history *hs, const struct mt_node_table *t,
                       const struct mt_history_tasks *tc, int64_t now_ms);

#endif /* MT_HEAD_HISTORY_H */
