/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prom.c -- the Prometheus text format 0.0.4 (see prom.h): HELP and TYPE
 * lines, label escaping, value spelling and fixed-bucket histograms.
 *
 * THREAD: any; nothing here keeps state.
 */
#include "common/prom.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/strbuf.h"

const double mt_prom_seconds_buckets[] = {
    0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
    900, 3600,
};
const size_t mt_prom_seconds_buckets_n =
    sizeof(mt_prom_seconds_buckets) / sizeof(mt_prom_seconds_buckets[0]);

const double mt_prom_rpc_buckets[] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
    0.25, 0.5, 1, 2.5, 10,
};
const size_t mt_prom_rpc_buckets_n =
    sizeof(mt_prom_rpc_buckets) / sizeof(mt_prom_rpc_buckets[0]);

/* HELP text: backslash and newline escaped (quotes stay as they are). */
static void escape_help(struct mt_strbuf *sb, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            mt_strbuf_adds(sb, "\\\\");
        else if (*s == '\n')
            mt_strbuf_adds(sb, "\\n");
        else
            mt_strbuf_add(sb, s, 1);
    }
}

void mt_prom_family(struct mt_strbuf *sb, const char *name, const char *type,
                    const char *help)
{
    mt_strbuf_addf(sb, "# HELP %s ", name);
    escape_help(sb, help ? help : "");
    mt_strbuf_addf(sb, "\n# TYPE %s %s\n", name, type);
}

void mt_prom_escape(struct mt_strbuf *sb, const char *v)
{
    const char *p = v ? v : "", *run = p;

    for (; *p; p++) {
        const char *rep = *p == '\\' ? "\\\\"
                          : *p == '"' ? "\\\""
                          : *p == '\n' ? "\\n"
                                       : NULL;
        if (!rep)
            continue;
        mt_strbuf_add(sb, run, (size_t)(p - run));
        mt_strbuf_adds(sb, rep);
        run = p + 1;
    }
    mt_strbuf_add(sb, run, (size_t)(p - run));
}

void mt_prom_series(struct mt_strbuf *sb, const char *name,
                    const char *const *kv)
{
    mt_strbuf_adds(sb, name);
    if (!kv || !kv[0])
        return;
    mt_strbuf_adds(sb, "{");
    for (size_t i = 0; kv[i]; i += 2) {
        mt_strbuf_addf(sb, "%s%s=\"", i ? "," : "", kv[i]);
        mt_prom_escape(sb, kv[i + 1]);
        mt_strbuf_adds(sb, "\"");
    }
    mt_strbuf_adds(sb, "}");
}

/* v as Prometheus reads it, into buf. */
static const char *spell(double v, char *buf, size_t len)
{
    if (isnan(v))
        return "NaN";
    if (isinf(v))
        return v > 0 ? "+Inf" : "-Inf";
    if (v == floor(v) && fabs(v) < 9007199254740992.0)
        snprintf(buf, len, "%.0f", v);
    else if (fabs(v) >= 1e7)
        snprintf(buf, len, "%.3f", v); /* e.g. a time since the epoch */
    else
        snprintf(buf, len, "%.9g", v);
    return buf;
}

void mt_prom_value(struct mt_strbuf *sb, double v)
{
    char buf[40];

    mt_strbuf_addf(sb, " %s\n", spell(v, buf, sizeof(buf)));
}

void mt_prom_value_u64(struct mt_strbuf *sb, uint64_t v)
{
    mt_strbuf_addf(sb, " %llu\n", (unsigned long long)v);
}

void mt_prom_sample(struct mt_strbuf *sb, const char *name,
                    const char *const *kv, double v)
{
    mt_prom_series(sb, name, kv);
    mt_prom_value(sb, v);
}

void mt_prom_sample_u64(struct mt_strbuf *sb, const char *name,
                        const char *const *kv, uint64_t v)
{
    mt_prom_series(sb, name, kv);
    mt_prom_value_u64(sb, v);
}

/* ---- histograms ---------------------------------------------------------- */

void mt_prom_hist_init(struct mt_prom_hist *h, const double *bounds, size_t n)
{
    memset(h, 0, sizeof(*h));
    h->bounds = bounds;
    h->n = n < MT_PROM_MAX_BUCKETS ? n : MT_PROM_MAX_BUCKETS;
}

void mt_prom_hist_observe(struct mt_prom_hist *h, double v)
{
    size_t i = 0;

    if (isnan(v))
        return;
    while (i < h->n && v > h->bounds[i])
        i++;
    h->counts[i]++;
    h->count++;
    h->sum += v;
}

/* kv plus le=bound, into out (room for kv's pairs + 2 + NULL). */
static void with_le(const char *const *kv, const char *le, const char **out,
                    size_t cap)
{
    size_t i = 0;

    for (; kv && kv[i] && i + 4 < cap; i += 2) {
        out[i] = kv[i];
        out[i + 1] = kv[i + 1];
    }
    out[i] = "le";
    out[i + 1] = le;
    out[i + 2] = NULL;
}

void mt_prom_hist_write(struct mt_strbuf *sb, const char *name,
                        const char *const *kv, const struct mt_prom_hist *h)
{
    char series[160], le[40];
    const char *lkv[24];
    uint64_t cum = 0;

    snprintf(series, sizeof(series), "%s_bucket", name);
    for (size_t i = 0; i <= h->n; i++) {
        cum += h->counts[i];
        if (i < h->n)
            snprintf(le, sizeof(le), "%.9g", h->bounds[i]);
        else
            snprintf(le, sizeof(le), "+Inf");
        with_le(kv, le, lkv, sizeof(lkv) / sizeof(lkv[0]));
        mt_prom_sample_u64(sb, series, lkv, cum);
    }
    snprintf(series, sizeof(series), "%s_sum", name);
    mt_prom_sample(sb, series, kv, h->sum);
    snprintf(series, sizeof(series), "%s_count", name);
    mt_prom_sample_u64(sb, series, kv, h->count);
}
