/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prom.h -- the Prometheus text exposition format 0.0.4, written into a
 * strbuf: the one helper set behind every /metrics of the head and the
 * worker (head/metrics.c, worker/metrics.c, the rpc layer's counters and
 * common/procstat.c), so that every family has its HELP and TYPE lines and
 * every label value is escaped the same way.
 *
 * A family is written as mt_prom_family, then its samples. Labels are
 * given as a NULL-terminated list of name, value pairs:
 *
 *     const char *kv[] = {"node_id", id, "gpu", g, NULL};
 *     mt_prom_family(sb, "manta_gpu_utilization_ratio", "gauge", "...");
 *     mt_prom_sample(sb, "manta_gpu_utilization_ratio", kv, 0.5);
 *
 * Histograms (struct mt_prom_hist) count observations into fixed buckets
 * with no allocation, so they can sit on a hot path; mt_prom_hist_write
 * writes the cumulative _bucket series with le, then _sum and _count.
 *
 * THREAD: any; a histogram is its owner's to guard.
 */
#ifndef MT_PROM_H
#define MT_PROM_H

#include <stddef.h>
#include <stdint.h>

struct mt_strbuf;

#define MT_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define MT_PROM_MAX_BUCKETS 20

/* ---- families and samples ------------------------------------------------ */

/*
 * mt_prom_family - the "# HELP" and "# TYPE" lines of family name.
 * IN type "gauge", "counter" or "histogram"; help one line of text
 * (backslashes and newlines are escaped).
 */
void mt_prom_family(struct mt_strbuf *sb, const char *name, const char *type,
                    const char *help);

/*
 * mt_prom_series - "name{k1="v1",...}" (just "name" when kv is NULL or
 * empty), values escaped (backslash, double quote, newline); a NULL value
 * is written as "". Follow it with mt_prom_value or mt_prom_value_u64.
 */
void mt_prom_series(struct mt_strbuf *sb, const char *name,
                    const char *const *kv);

/* mt_prom_value - " v\n": +Inf, -Inf and NaN as Prometheus spells them,
 * integers exactly, values from 1e7 up to the millesimal, other values
 * with 9 significant digits. */
void mt_prom_value(struct mt_strbuf *sb, double v);

/* mt_prom_value_u64 - " v\n" for a count or a byte total, exactly. */
void mt_prom_value_u64(struct mt_strbuf *sb, uint64_t v);

/* mt_prom_sample - mt_prom_series then mt_prom_value. */
void mt_prom_sample(struct mt_strbuf *sb, const char *name,
                    const char *const *kv, double v);

/* mt_prom_sample_u64 - mt_prom_series then mt_prom_value_u64. */
void mt_prom_sample_u64(struct mt_strbuf *sb, const char *name,
                        const char *const *kv, uint64_t v);

/* mt_prom_escape - a label value, escaped, without the quotes. */
void mt_prom_escape(struct mt_strbuf *sb, const char *v);

/* ---- histograms ---------------------------------------------------------- */

/* Observations in buckets. Guarded by: its owner. */
struct mt_prom_hist {
    const double *bounds;     /* upper bounds, increasing; borrowed, must
                                 outlive the histogram (a static table) */
    size_t n;                 /* bounds used, <= MT_PROM_MAX_BUCKETS */
    uint64_t counts[MT_PROM_MAX_BUCKETS + 1]; /* per bucket; [n] = +Inf */
    uint64_t count;
    double sum;
};

/*
 * mt_prom_hist_init - an empty histogram over bounds (n of them, at most
 * MT_PROM_MAX_BUCKETS; more are ignored). OWNERSHIP borrows bounds.
 */
void mt_prom_hist_init(struct mt_prom_hist *h, const double *bounds,
                       size_t n);

/* mt_prom_hist_observe - count v (a NaN is ignored). No allocation. */
void mt_prom_hist_observe(struct mt_prom_hist *h, double v);

/*
 * mt_prom_hist_write - the samples of h as family name (its header is the
 * caller's): name_bucket{kv...,le="..."} cumulative, ending with le="+Inf",
 * then name_sum and name_count, all with kv.
 */
void mt_prom_hist_write(struct mt_strbuf *sb, const char *name,
                        const char *const *kv, const struct mt_prom_hist *h);

/* Bucket bounds for durations in seconds: 1 ms .. 1 h (16 bounds). */
extern const double mt_prom_seconds_buckets[];
extern const size_t mt_prom_seconds_buckets_n;

/* Bucket bounds for rpc latencies in seconds: 100 us .. 10 s (15 bounds). */
extern const double mt_prom_rpc_buckets[];
extern const size_t mt_prom_rpc_buckets_n;

#endif /* MT_PROM_H */
