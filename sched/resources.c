/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resources.c -- fixed-point quantities, resource sets and name interning.
 *
 * Resource sets stay sorted by id so two equal shapes are equal byte for
 * field, which lets the scheduler group pending tasks by shape cheaply. The
 * name table is a plain array: there are at most MT_RES_MAX names and lookups
 * happen only when a caller interns a name, never per decision.
 */
#include "sched/resources.h"

#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 63

struct mt_res_names {
    int n;                                  /* interned names */
    char names[MT_RES_MAX][NAME_MAX_LEN + 1];
};

static const char *const builtin_names[MT_RES_NBUILTIN] = {
    "CPU", "GPU", "TPU", "memory", "object_store_memory",
};

/* ---- Fixed point ---- */

int64_t mt_res_from_double(double v)
{
    return (int64_t)llround(v * MT_RES_SCALE);
}

double mt_res_to_double(int64_t q)
{
    return (double)q / MT_RES_SCALE;
}

int mt_res_parse(const char *text, int64_t *out)
{
    const char *p = text;
    int64_t whole = 0, frac = 0;
    int neg = 0, ndig = 0, nfrac = 0;

    if (!text || !out)
        return -MT_EINVAL;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    for (; *p >= '0' && *p <= '9'; p++, ndig++) {
        if (whole > (INT64_MAX / MT_RES_SCALE - 9) / 10)
            return -MT_ERANGE;
        whole = whole * 10 + (*p - '0');
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, nfrac++) {
            if (nfrac >= 4)
                return -MT_EINVAL;
            frac = frac * 10 + (*p - '0');
        }
    }
    if (*p != '\0' || (ndig == 0 && nfrac == 0))
        return -MT_EINVAL;
    for (int i = nfrac; i < 4; i++)
        frac *= 10;
    *out = (whole * MT_RES_SCALE + frac) * (neg ? -1 : 1);
    return 0;
}

int mt_res_format(int64_t q, char *buf, size_t len)
{
    int64_t a = q < 0 ? -q : q;
    int64_t frac = a % MT_RES_SCALE;
    char fb[8];
    int k;

    if (frac == 0)
        return snprintf(buf, len, "%s%lld", q < 0 ? "-" : "",
                        (long long)(a / MT_RES_SCALE));
    snprintf(fb, sizeof(fb), "%04lld", (long long)frac);
    for (k = 3; k > 0 && fb[k] == '0'; k--)
        fb[k] = '\0';
    return snprintf(buf, len, "%s%lld.%s", q < 0 ? "-" : "",
                    (long long)(a / MT_RES_SCALE), fb);
}

/* ---- Resource sets ---- */

void mt_res_set_init(struct mt_res_set *s)
{
    memset(s, 0, sizeof(*s));
}

int mt_res_set_add(struct mt_res_set *s, int id, int64_t qty)
{
    int i;

    if (qty < 0 || id < 0 || id >= MT_RES_MAX)
        return -MT_EINVAL;
    if (qty == 0)
        return 0;
    for (i = 0; i < s->n && s->it[i].id < id; i++)
        ;
    if (i < s->n && s->it[i].id == id) {
        if (s->it[i].qty > INT64_MAX - qty)
            return -MT_ERANGE;
        s->it[i].qty += qty;
        return 0;
    }
    if (s->n >= MT_RES_SET_MAX)
        return -MT_ENOSPC;
    memmove(&s->it[i + 1], &s->it[i], (s->n - i) * sizeof(s->it[0]));
    s->it[i].id = (uint16_t)id;
    s->it[i].qty = qty;
    s->n++;
    return 0;
}

int64_t mt_res_set_get(const struct mt_res_set *s, int id)
{
    for (int i = 0; i < s->n; i++)
        if (s->it[i].id == id)
            return s->it[i].qty;
    return 0;
}

bool mt_res_set_equal(const struct mt_res_set *a, const struct mt_res_set *b)
{
    if (a->n != b->n)
        return false;
    for (int i = 0; i < a->n; i++)
        if (a->it[i].id != b->it[i].id || a->it[i].qty != b->it[i].qty)
            return false;
    return true;
}

static bool tpu_qty_ok(int64_t q)
{
    return q == 1 * MT_RES_SCALE || q == 2 * MT_RES_SCALE ||
           q == 4 * MT_RES_SCALE || q == 8 * MT_RES_SCALE;
}

int mt_res_set_validate(const struct mt_res_set *s, int nnames)
{
    if (s->n > MT_RES_SET_MAX)
        return -MT_EINVAL;
    for (int i = 0; i < s->n; i++) {
        const struct mt_res_item *e = &s->it[i];

        if (e->qty <= 0 || e->id >= nnames)
            return -MT_EINVAL;
        if (i > 0 && s->it[i - 1].id >= e->id)
            return -MT_EINVAL;
        if (e->id == MT_RES_GPU && e->qty > MT_RES_SCALE &&
            e->qty % MT_RES_SCALE != 0)
            return -MT_EINVAL;
        if (e->id == MT_RES_GPU && e->qty > MT_MAX_GPUS * MT_RES_SCALE)
            return -MT_EINVAL;
        if (e->id == MT_RES_TPU && !tpu_qty_ok(e->qty))
            return -MT_EINVAL;
    }
    return 0;
}

uint64_t mt_res_set_mask(const struct mt_res_set *s)
{
    uint64_t m = 0;

    for (int i = 0; i < s->n; i++)
        m |= 1ULL << s->it[i].id;
    return m;
}

/* ---- Names ---- */

int mt_res_names_create(struct mt_res_names **out)
{
    struct mt_res_names *t = calloc(1, sizeof(*t));

    if (!t)
        return -MT_ENOMEM;
    for (int i = 0; i < MT_RES_NBUILTIN; i++)
        snprintf(t->names[i], sizeof(t->names[i]), "%s", builtin_names[i]);
    t->n = MT_RES_NBUILTIN;
    *out = t;
    return 0;
}

void mt_res_names_destroy(struct mt_res_names *t)
{
    free(t);
}

int mt_res_names_lookup(const struct mt_res_names *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->names[i], name) == 0)
            return i;
    return -MT_ENOENT;
}

int mt_res_names_intern(struct mt_res_names *t, const char *name)
{
    int id;
    size_t len = name ? strlen(name) : 0;

    if (len == 0 || len > NAME_MAX_LEN)
        return -MT_EINVAL;
    id = mt_res_names_lookup(t, name);
    if (id >= 0)
        return id;
    if (t->n >= MT_RES_MAX)
        return -MT_ENOSPC;
    memcpy(t->names[t->n], name, len + 1);
    return t->n++;
}

const char *mt_res_names_name(const struct mt_res_names *t, int id)
{
    if (id < 0 || id >= t->n)
        return NULL;
    return t->names[id];
}

int mt_res_names_count(const struct mt_res_names *t)
{
    return t->n;
}

int mt_res_set_format(const struct mt_res_names *t, const struct mt_res_set *s,
                      char *buf, size_t len)
{
    size_t off = 0;
    char q[32];

#define APPEND(...)                                                            \
    do {                                                                       \
        int w_ = snprintf(buf + (off < len ? off : len),                       \
                          off < len ? len - off : 0, __VA_ARGS__);             \
        off += w_ > 0 ? (size_t)w_ : 0;                                        \
    } while (0)
    APPEND("{");
    for (int i = 0; i < s->n; i++) {
        const char *nm = mt_res_names_name(t, s->it[i].id);

        mt_res_format(s->it[i].qty, q, sizeof(q));
        APPEND("%s%s: %s", i ? ", " : "", nm ? nm : "?", q);
    }
    APPEND("}");
#undef APPEND
    return (int)off;
}
