/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lease_policy.c -- the lease path's decisions (lease_policy.h): the
 * class key, lease growth, batch sizing and the fate of a task whose push
 * came back without a result. lease.c applies them; the unit tests check
 * them alone.
 *
 * Pure: no clock, no I/O, no allocation. THREAD: any.
 */
#include "sdk/lease_policy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"

/* ---- the class key ------------------------------------------------------- */

/* A key being written: buf[0, len) holds it; over is set once it did not
 * fit. */
struct keybuf {
    char *buf;
    size_t cap;
    size_t len;
    bool over;
};

static void put(struct keybuf *k, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (k->over)
        return;
    va_start(ap, fmt);
    n = vsnprintf(k->buf + k->len, k->cap - k->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= k->cap - k->len) {
        k->over = true;
        return;
    }
    k->len += (size_t)n;
}

/* A text field, its length first: "5:hello"; NULL is "-". */
static void put_text(struct keybuf *k, const char *s)
{
    if (!s)
        put(k, "-");
    else
        put(k, "%zu:%s", strlen(s), s);
}

static void put_selector(struct keybuf *k, const struct mt_selector *s)
{
    put(k, "s%zu", s->n);
    for (size_t i = 0; i < s->n; i++) {
        const struct mt_label_match *m = &s->v[i];

        put(k, "(");
        put_text(k, m->key);
        put(k, "%d,%zu", (int)m->op, m->n);
        for (size_t j = 0; j < m->n; j++)
            put_text(k, m->values[j]);
        put(k, ")");
    }
}

int mt__lease_class_key(const struct mt_task_def *d, char *buf, size_t len)
{
    struct keybuf k = {buf, len, 0, len == 0};

    put(&k, "r%zu", d->res.n);
    for (size_t i = 0; i < d->res.n; i++) {
        put_text(&k, d->res.v[i].name);
        put(&k, "=%lld;", (long long)d->res.v[i].qty);
    }
    put_selector(&k, &d->sel);
    put(&k, "p%d:%d", (int)d->priority, (int)d->place);
    if (d->place == MT_PLACE_NODE_AFFINITY) {
        put(&k, "a%d", d->affinity_soft ? 1 : 0);
        put_text(&k, d->affinity_node);
    }
    if (d->place == MT_PLACE_PG) {
        put(&k, "g%d", (int)d->bundle);
        put_text(&k, d->pg_id);
    }
    return k.over ? -MT_EINVAL : (int)k.len;
}

uint64_t mt__lease_key_hash(const char *key, size_t n)
{
    uint64_t h = 1469598103934665603ull;

    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t)key[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* ---- how many leases ----------------------------------------------------- */

unsigned mt__lease_more(size_t queued, unsigned granted, unsigned requested,
                        unsigned batch)
{
    size_t absorb = (size_t)granted * MT__LEASE_PUSHES * batch;
    size_t excess = queued > absorb ? queued - absorb : 0;
    size_t want;

    if (queued == 0 || requested >= MT__LEASE_REQUESTS)
        return 0;
    /* Pushes of one (slow tasks, or a class not measured yet): a lease per
     * task waiting; else one per MT__LEASE_PER_REQUEST of them. */
    want = batch <= MT__LEASE_BATCH_MIN
               ? excess
               : (excess + MT__LEASE_PER_REQUEST - 1) / MT__LEASE_PER_REQUEST;
    if (granted == 0 && want == 0)
        want = 1;
    if (want <= requested)
        return 0;
    want -= requested;
    if (want > MT__LEASE_REQUESTS - requested)
        want = MT__LEASE_REQUESTS - requested;
    return (unsigned)want;
}

/* ---- batch sizing -------------------------------------------------------- */

#define QUICK_PUSH_NS 5000000u /* under this a push may carry more */
#define LONG_PUSH_NS 50000000u /* over this it should carry fewer */

unsigned mt__lease_batch_next(unsigned cur, size_t n, uint64_t busy_ns)
{
    if (cur < MT__LEASE_BATCH_MIN)
        cur = MT__LEASE_BATCH_MIN;
    if (n == 0)
        return cur;
    if (busy_ns / n > MT__LEASE_SLOW_NS)
        return MT__LEASE_BATCH_MIN;
    if (busy_ns > LONG_PUSH_NS)
        return cur / 2 > MT__LEASE_BATCH_MIN ? cur / 2 : MT__LEASE_BATCH_MIN;
    if (busy_ns < QUICK_PUSH_NS && n >= cur)
        return cur * 2 < MT__LEASE_BATCH_MAX ? cur * 2 : MT__LEASE_BATCH_MAX;
    return cur > MT__LEASE_BATCH_MAX ? MT__LEASE_BATCH_MAX : cur;
}

/* ---- retries ------------------------------------------------------------- */

uint32_t mt__lease_retries(int32_t max_retries)
{
    return max_retries < 0 ? MT_TASK_DEFAULT_RETRIES : (uint32_t)max_retries;
}

enum mt__lease_fate mt__lease_fate(bool not_run, uint32_t attempt,
                                   int32_t max_retries)
{
    if (not_run)
        return MT__LEASE_REQUEUE;
    return attempt < mt__lease_retries(max_retries) ? MT__LEASE_RETRY
                                                    : MT__LEASE_FAIL;
}
