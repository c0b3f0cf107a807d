/* SPDX-License-Identifier: Apache-2.0 */
/*
 * history.c -- the dashboard's bounded time series (see history.h): rings
 * of one row per second, the cluster's in double and each node's in
 * bfloat16, a store of node rings by id, the figures of a sample and the
 * /api/history JSON. Pure: the time is an argument, nothing here touches
 * the loop (the sampler is history_sampler.c).
 *
 * INVARIANT: a ring's rows hold, for every tick t in (last - cap, last],
 * the sample of t or nulls; older rows are stale and read as null.
 */
#include "head/history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/qty.h"
#include "common/strindex.h"
#include "head/node_table.h"

#define NO_TICK INT64_MIN
#define BF16_NULL 0x7fc0u /* a quiet NaN */

const char *const mt_history_cluster_names[MT_HC_N] = {
    "CPU_used", "CPU_total", "GPU_used", "GPU_total", "TPU_used",
    "TPU_total", "memory_used_bytes", "memory_total_bytes",
    "object_store_used_bytes", "object_store_total_bytes", "tasks_pending",
    "tasks_running", "tasks_infeasible", "tasks_finished_total",
    "tasks_failed_total",
};

const char *const mt_history_node_names[MT_HN_N] = {
    "cpu_ratio", "memory_used_bytes", "memory_total_bytes",
    "gpu_util_ratio", "gpu_memory_used_bytes", "CPU_used", "GPU_used",
    "TPU_used", "object_store_used_bytes",
};

/* One set of series: cap rows of width cells. Guarded by: loop thread. */
struct ring {
    void *cells;                  /* double (wide) or uint16_t (bfloat16) */
    unsigned width;               /* series per row */
    bool wide;
    int64_t last;                 /* newest tick written; NO_TICK: none */
};

/* A node's series. */
struct node_hist {
    char *id;                     /* owned */
    struct ring r;
};

/* Guarded by: loop thread. */
struct mt_history {
    uint32_t cap;                 /* rows (seconds) per ring */
    struct ring cluster;
    struct node_hist *v;          /* n nodes, swap-removed */
    size_t n, alloc;
    struct mt_strindex by_id;     /* positions in v */
};

/* ---- cells --------------------------------------------------------------- */

/* float32 -> bfloat16, rounding to nearest even; NaN stays NaN (null). */
static uint16_t bf16_of(float f)
{
    uint32_t u;

    if (isnan(f))
        return BF16_NULL;
    memcpy(&u, &f, sizeof(u));
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float bf16_value(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;

    memcpy(&f, &u, sizeof(f));
    return f;
}

static void cell_set(struct ring *r, size_t i, double v)
{
    if (r->wide)
        ((double *)r->cells)[i] = v;
    else
        ((uint16_t *)r->cells)[i] = bf16_of((float)v);
}

static double cell_get(const struct ring *r, size_t i)
{
    return r->wide ? ((const double *)r->cells)[i]
                   : (double)bf16_value(((const uint16_t *)r->cells)[i]);
}

/* ---- rings --------------------------------------------------------------- */

static void row_clear(struct ring *r, size_t row)
{
    for (unsigned k = 0; k < r->width; k++)
        cell_set(r, row * r->width + k, NAN);
}

static void ring_init(struct ring *r, uint32_t cap, unsigned width,
                      bool wide)
{
    r->width = width;
    r->wide = wide;
    r->last = NO_TICK;
    r->cells = mt_xcalloc((size_t)cap * width, wide ? sizeof(double)
                                                    : sizeof(uint16_t));
    for (size_t row = 0; row < cap; row++)
        row_clear(r, row);
}

static size_t ring_bytes(uint32_t cap, const struct ring *r)
{
    return (size_t)cap * r->width * (r->wide ? sizeof(double)
                                             : sizeof(uint16_t));
}

/*
 * The row for tick, made current: rows of the seconds skipped since the
 * newest one are cleared first. RET the row, or -1 when tick is older
 * than the ring.
 */
static long ring_row(struct ring *r, uint32_t cap, int64_t tick)
{
    int64_t from;

    if (r->last != NO_TICK && tick <= r->last)
        return r->last - tick >= (int64_t)cap ? -1 : (long)(tick % cap);
    if (r->last == NO_TICK)
        from = tick; /* rows start null */
    else if (tick - r->last > (int64_t)cap)
        from = tick - cap + 1;
    else
        from = r->last + 1;
    for (int64_t t = from; t < tick; t++)
        row_clear(r, (size_t)(t % cap));
    r->last = tick;
    return (long)(tick % cap);
}

static void ring_put(struct ring *r, uint32_t cap, int64_t tick,
                     const double *v)
{
    long row = tick >= 0 ? ring_row(r, cap, tick) : -1;

    if (row < 0)
        return;
    for (unsigned k = 0; k < r->width; k++)
        cell_set(r, (size_t)row * r->width + k, v[k]);
}

static double ring_get(const struct ring *r, uint32_t cap, int64_t tick,
                       unsigned k)
{
    if (r->last == NO_TICK || tick < 0 || tick > r->last ||
        r->last - tick >= (int64_t)cap)
        return NAN;
    return cell_get(r, (size_t)(tick % cap) * r->width + k);
}

/* ---- the store ----------------------------------------------------------- */

static const char *key_of(const void *arr, size_t pos)
{
    return ((const struct node_hist *)arr)[pos].id;
}

int mt_history_create(uint32_t seconds, struct mt_history **out)
{
    struct mt_history *hs;

    *out = NULL;
    if (seconds < 1 || seconds > MT_HISTORY_MAX_SECONDS)
        return -MT_EINVAL;
    hs = mt_xcalloc(1, sizeof(*hs));
    hs->cap = seconds;
    ring_init(&hs->cluster, seconds, MT_HC_N, true);
    mt_strindex_init(&hs->by_id, key_of);
    *out = hs;
    return 0;
}

void mt_history_destroy(struct mt_history *hs)
{
    if (!hs)
        return;
    for (size_t i = 0; i < hs->n; i++) {
        free(hs->v[i].id);
        free(hs->v[i].r.cells);
    }
    free(hs->v);
    free(hs->cluster.cells);
    mt_strindex_release(&hs->by_id);
    free(hs);
}

int64_t mt_history_last_ms(const struct mt_history *hs)
{
    return hs->cluster.last == NO_TICK
               ? -1
               : hs->cluster.last * MT_HISTORY_INTERVAL_MS;
}

uint32_t mt_history_seconds(const struct mt_history *hs)
{
    return hs->cap;
}

static struct node_hist *node_find(const struct mt_history *hs,
                                   const char *id)
{
    size_t pos = mt_strindex_find(&hs->by_id, hs->v, id);

    return pos == MT_STRINDEX_NONE ? NULL : &hs->v[pos];
}

static struct node_hist *node_add(struct mt_history *hs, const char *id)
{
    struct node_hist *nh;

    if (hs->n == hs->alloc) {
        hs->alloc = hs->alloc ? hs->alloc * 2 : 16;
        hs->v = mt_xrealloc(hs->v, hs->alloc * sizeof(*hs->v));
    }
    nh = &hs->v[hs->n];
    nh->id = mt_xstrdup(id);
    ring_init(&nh->r, hs->cap, MT_HN_N, false);
    mt_strindex_add(&hs->by_id, hs->v);
    hs->n++;
    return nh;
}

void mt_history_put_cluster(struct mt_history *hs, int64_t now_ms,
                            const double v[MT_HC_N])
{
    ring_put(&hs->cluster, hs->cap, now_ms / MT_HISTORY_INTERVAL_MS, v);
}

void mt_history_put_node(struct mt_history *hs, const char *id,
                         int64_t now_ms, const double v[MT_HN_N])
{
    struct node_hist *nh = node_find(hs, id);

    if (!nh)
        nh = node_add(hs, id);
    ring_put(&nh->r, hs->cap, now_ms / MT_HISTORY_INTERVAL_MS, v);
}

static void drop_at(struct mt_history *hs, size_t pos)
{
    mt_strindex_remove(&hs->by_id, hs->v, pos); /* reads the ids */
    free(hs->v[pos].id);
    free(hs->v[pos].r.cells);
    hs->v[pos] = hs->v[--hs->n];
}

void mt_history_drop_node(struct mt_history *hs, const char *id)
{
    size_t pos = mt_strindex_find(&hs->by_id, hs->v, id);

    if (pos != MT_STRINDEX_NONE)
        drop_at(hs, pos);
}

bool mt_history_has_node(const struct mt_history *hs, const char *id)
{
    return node_find(hs, id) != NULL;
}

size_t mt_history_n_nodes(const struct mt_history *hs)
{
    return hs->n;
}

size_t mt_history_bytes(const struct mt_history *hs)
{
    size_t b = sizeof(*hs) + ring_bytes(hs->cap, &hs->cluster) +
               hs->alloc * sizeof(*hs->v) + hs->by_id.cap * sizeof(uint32_t);

    for (size_t i = 0; i < hs->n; i++)
        b += ring_bytes(hs->cap, &hs->v[i].r) + strlen(hs->v[i].id) + 1;
    return b;
}

int mt_history_read(const struct mt_history *hs, const char *id,
                    unsigned series, int64_t end_ms, size_t n, double *out)
{
    const struct node_hist *nh = id ? node_find(hs, id) : NULL;
    const struct ring *r = id ? (nh ? &nh->r : NULL) : &hs->cluster;
    int64_t end = end_ms / MT_HISTORY_INTERVAL_MS;

    if (!r)
        return -MT_ENOENT;
    if (series >= r->width)
        return -MT_EINVAL;
    for (size_t i = 0; i < n; i++)
        out[i] = ring_get(r, hs->cap, end - (int64_t)(n - 1 - i), series);
    return 0;
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_value(struct mt_strbuf *sb, double v)
{
    if (isnan(v) || isinf(v))
        mt_strbuf_adds(sb, "null");
    else if (v == floor(v) && fabs(v) < 1e17)
        mt_strbuf_addf(sb, "%.0f", v); /* bytes and counts: no exponent */
    else
        mt_strbuf_addf(sb, "%.6g", v);
}

static void json_series(struct mt_strbuf *sb, const struct ring *r,
                        uint32_t cap, const char *name, unsigned k,
                        int64_t end, uint32_t n)
{
    mt_strbuf_add_json_str(sb, name);
    mt_strbuf_adds(sb, ": [");
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            mt_strbuf_adds(sb, ", ");
        json_value(sb, ring_get(r, cap, end - (int64_t)(n - 1 - i), k));
    }
    mt_strbuf_adds(sb, "]");
}

int mt_history_json(const struct mt_history *hs, const char *id,
                    uint32_t seconds, int64_t end_ms, struct mt_strbuf *sb)
{
    const struct node_hist *nh = id ? node_find(hs, id) : NULL;
    const struct ring *r = id ? (nh ? &nh->r : NULL) : &hs->cluster;
    const char *const *names = id ? mt_history_node_names
                                  : mt_history_cluster_names;
    int64_t end = end_ms / MT_HISTORY_INTERVAL_MS;
    uint32_t n = seconds && seconds < hs->cap ? seconds : hs->cap;

    if (!r)
        return -MT_ENOENT;
    mt_strbuf_addf(sb, "{\"interval_ms\": %d, \"end_ms\": %lld, "
                       "\"node_id\": ", MT_HISTORY_INTERVAL_MS,
                   (long long)(end * MT_HISTORY_INTERVAL_MS));
    if (id)
        mt_strbuf_add_json_str(sb, id);
    else
        mt_strbuf_adds(sb, "null");
    mt_strbuf_adds(sb, ", \"series\": {");
    for (unsigned k = 0; k < r->width; k++) {
        mt_strbuf_adds(sb, k ? ",\n  " : "\n  ");
        json_series(sb, r, hs->cap, names[k], k, end, n);
    }
    mt_strbuf_adds(sb, "\n}}\n");
    return 0;
}

/* ---- figures ------------------------------------------------------------- */

/* total - available of resource name, in its units; absent: none (0). */
static double res_used(const struct mt_node *n, const char *name,
                       double none)
{
    int64_t t = mt_qty_list_get(&n->total, name);
    int64_t a = mt_qty_list_get(&n->avail, name);

    if (t < 0)
        return none;
    return (double)(t - (a < 0 ? 0 : a)) / MT_QTY_SCALE;
}

/* Mean utilization (0-1) and memory used over the GPUs that say. */
static void gpu_figures(const struct mt_node *n, double *util, double *mem)
{
    double u = 0, m = 0;
    size_t nu = 0, nm = 0;

    for (size_t i = 0; i < n->n_gpus; i++) {
        if (n->gpus[i].util_percent >= 0) {
            u += n->gpus[i].util_percent / 100.0;
            nu++;
        }
        if (n->gpus[i].mem_used >= 0) {
            m += (double)n->gpus[i].mem_used;
            nm++;
        }
    }
    *util = nu ? u / (double)nu : NAN;
    *mem = nm ? m : NAN;
}

void mt_history_node_figures(const struct mt_node *n, double v[MT_HN_N])
{
    bool host = n->usage.mem_total_bytes > 0;

    v[MT_HN_CPU_RATIO] = host ? n->usage.cpu_percent / 100.0 : NAN;
    v[MT_HN_MEM_USED] = host ? (double)n->usage.mem_used_bytes : NAN;
    v[MT_HN_MEM_TOTAL] = host ? (double)n->usage.mem_total_bytes : NAN;
    gpu_figures(n, &v[MT_HN_GPU_UTIL], &v[MT_HN_GPU_MEM_USED]);
    v[MT_HN_CPU_USED] = res_used(n, "CPU", 0);
    v[MT_HN_GPU_USED] = res_used(n, "GPU", 0);
    v[MT_HN_TPU_USED] = res_used(n, "TPU", 0);
    /* What the store holds, as the worker reports it; from a worker that
     * does not (the node simulator): what tasks reserved. */
    v[MT_HN_OS_USED] = n->usage.store_capacity_bytes
                           ? (double)n->usage.store_used_bytes
                           : res_used(n, "object_store_memory", NAN);
}

/* Sum of a node figure (NaN ones left out) and of a resource total. */
static void add_node(double c[MT_HC_N], const struct mt_node *n,
                     const double v[MT_HN_N])
{
    int64_t res = mt_qty_list_get(&n->total, "object_store_memory");
    double os = n->usage.store_capacity_bytes
                    ? (double)n->usage.store_capacity_bytes
                : res >= 0 ? (double)res / MT_QTY_SCALE
                           : -1;

    if (!isnan(v[MT_HN_MEM_USED])) {
        c[MT_HC_MEM_USED] += v[MT_HN_MEM_USED];
        c[MT_HC_MEM_TOTAL] += v[MT_HN_MEM_TOTAL];
    }
    if (!isnan(v[MT_HN_OS_USED]) && os >= 0) {
        c[MT_HC_OS_USED] += v[MT_HN_OS_USED];
        c[MT_HC_OS_TOTAL] += os;
    }
    c[MT_HC_CPU_USED] += v[MT_HN_CPU_USED];
    c[MT_HC_GPU_USED] += v[MT_HN_GPU_USED];
    c[MT_HC_TPU_USED] += v[MT_HN_TPU_USED];
}

static double res_total(const struct mt_node *n, const char *name)
{
    int64_t t = mt_qty_list_get(&n->total, name);

    return t < 0 ? 0 : (double)t / MT_QTY_SCALE;
}

/* Drop the series of nodes gone from t or dead for long. */
static void sweep(struct mt_history *hs, const struct mt_node_table *t,
                  int64_t now_ms)
{
    for (size_t i = hs->n; i-- > 0;) {
        const struct mt_node *n = mt_node_table_find(t, hs->v[i].id);

        if (!n || (n->state == MT_NODE_DEAD &&
                   now_ms - n->death_time_ms > MT_HISTORY_KEEP_DEAD_MS))
            drop_at(hs, i);
    }
}

void mt_history_sample(struct mt_history *hs, const struct mt_node_table *t,
                       const struct mt_history_tasks *tc, int64_t now_ms)
{
    double c[MT_HC_N] = {0}, v[MT_HN_N];

    for (size_t i = 0; i < t->n; i++) {
        const struct mt_node *n = t->v[i];

        if (n->state != MT_NODE_ALIVE)
            continue;
        mt_history_node_figures(n, v);
        mt_history_put_node(hs, n->id, now_ms, v);
        add_node(c, n, v);
        c[MT_HC_CPU_TOTAL] += res_total(n, "CPU");
        c[MT_HC_GPU_TOTAL] += res_total(n, "GPU");
        c[MT_HC_TPU_TOTAL] += res_total(n, "TPU");
    }
    c[MT_HC_PENDING] = (double)tc->pending;
    c[MT_HC_RUNNING] = (double)tc->running;
    c[MT_HC_INFEASIBLE] = (double)tc->infeasible;
    c[MT_HC_FINISHED] = (double)tc->finished_total;
    c[MT_HC_FAILED] = (double)tc->failed_total;
    mt_history_put_cluster(hs, now_ms, c);
    sweep(hs, t, now_ms);
}
