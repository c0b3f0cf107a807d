/* SPDX-License-Identifier: Apache-2.0 */
/*
 * labels.c -- string interning, node label sets and selector matching.
 *
 * DESIGN: every key and value string becomes a uint32 id (open-addressing
 * hash table, FNV-1a (common/hash.h), power-of-two size, load <= 1/2). Node label sets are
 * sorted by key id; a selector expression looks its key up by a linear scan,
 * which beats a binary search for the handful of labels a node has.
 */
#include "sched/labels.h"

#include "common/error.h"
#include "common/hash.h"

#include <stdlib.h>
#include <string.h>

struct mt_strtab {
    uint32_t *slots;        /* id per slot, 0 = empty */
    uint32_t nslots;        /* power of two */
    char **strs;            /* strs[id], id 0 unused */
    uint32_t n;             /* ids in use, including the unused 0 */
    uint32_t cap;
};

int mt_strtab_create(struct mt_strtab **out)
{
    struct mt_strtab *t = calloc(1, sizeof(*t));

    if (!t)
        return -MT_ENOMEM;
    t->nslots = 64;
    t->slots = calloc(t->nslots, sizeof(*t->slots));
    t->cap = 32;
    t->strs = calloc(t->cap, sizeof(*t->strs));
    if (!t->slots || !t->strs) {
        mt_strtab_destroy(t);
        return -MT_ENOMEM;
    }
    t->n = 1;
    *out = t;
    return 0;
}

void mt_strtab_destroy(struct mt_strtab *t)
{
    if (!t)
        return;
    for (uint32_t i = 1; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->slots);
    free(t);
}

static uint32_t *find_slot(const struct mt_strtab *t, const char *s)
{
    uint32_t mask = t->nslots - 1;
    uint32_t i = (uint32_t)mt_hash_str(s) & mask;

    while (t->slots[i] && strcmp(t->strs[t->slots[i]], s) != 0)
        i = (i + 1) & mask;
    return &t->slots[i];
}

static int rehash(struct mt_strtab *t)
{
    uint32_t nn = t->nslots * 2;
    uint32_t *ns = calloc(nn, sizeof(*ns));

    if (!ns)
        return -MT_ENOMEM;
    free(t->slots);
    t->slots = ns;
    t->nslots = nn;
    for (uint32_t id = 1; id < t->n; id++)
        *find_slot(t, t->strs[id]) = id;
    return 0;
}

uint32_t mt_strtab_lookup(const struct mt_strtab *t, const char *s)
{
    return s ? *find_slot(t, s) : 0;
}

int64_t mt_strtab_intern(struct mt_strtab *t, const char *s)
{
    uint32_t *slot;
    char *copy;

    if (!s)
        return -MT_EINVAL;
    slot = find_slot(t, s);
    if (*slot)
        return *slot;
    if (t->n + 1 > t->nslots / 2) {
        if (rehash(t) < 0)
            return -MT_ENOMEM;
        slot = find_slot(t, s);
    }
    if (t->n == t->cap) {
        char **ns = realloc(t->strs, t->cap * 2 * sizeof(*ns));

        if (!ns)
            return -MT_ENOMEM;
        t->strs = ns;
        t->cap *= 2;
    }
    copy = strdup(s);
    if (!copy)
        return -MT_ENOMEM;
    t->strs[t->n] = copy;
    *slot = t->n;
    return t->n++;
}

const char *mt_strtab_str(const struct mt_strtab *t, uint32_t id)
{
    return id && id < t->n ? t->strs[id] : NULL;
}

/* ---- Label sets ---- */

static int cmp_label(const void *a, const void *b)
{
    const struct mt_label_id *x = a, *y = b;

    return x->key < y->key ? -1 : x->key > y->key;
}

int mt_labelset_build(struct mt_strtab *t, const struct mt_label *labels,
                      size_t n, struct mt_labelset *ls)
{
    struct mt_label_id *v = NULL;

    ls->n = 0;
    ls->v = NULL;
    if (n == 0)
        return 0;
    v = calloc(n, sizeof(*v));
    if (!v)
        return -MT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int64_t k, val;

        if (!labels[i].key || !labels[i].key[0] || !labels[i].value)
            goto out_inval;
        k = mt_strtab_intern(t, labels[i].key);
        val = mt_strtab_intern(t, labels[i].value);
        if (k < 0 || val < 0) {
            free(v);
            return -MT_ENOMEM;
        }
        v[i].key = (uint32_t)k;
        v[i].value = (uint32_t)val;
    }
    qsort(v, n, sizeof(*v), cmp_label);
    for (size_t i = 1; i < n; i++)
        if (v[i].key == v[i - 1].key)
            goto out_inval;
    ls->n = (uint32_t)n;
    ls->v = v;
    return 0;
out_inval:
    free(v);
    return -MT_EINVAL;
}

void mt_labelset_release(struct mt_labelset *ls)
{
    free(ls->v);
    ls->v = NULL;
    ls->n = 0;
}

uint32_t mt_labelset_get(const struct mt_labelset *ls, uint32_t key)
{
    for (uint32_t i = 0; i < ls->n; i++)
        if (ls->v[i].key == key)
            return ls->v[i].value;
    return 0;
}

/* ---- Selectors ---- */

static int compile_expr(struct mt_strtab *t, const struct mt_label_expr *in,
                        struct mt_sel_expr *out)
{
    size_t want_min = 0, want_max = 0;
    int64_t k;

    switch (in->op) {
    case MT_LABEL_EQ:
    case MT_LABEL_NE:
        want_min = want_max = 1;
        break;
    case MT_LABEL_IN:
    case MT_LABEL_NOT_IN:
        want_min = 1;
        want_max = MT_SEL_MAX_VALUES;
        break;
    case MT_LABEL_EXISTS:
    case MT_LABEL_NOT_EXISTS:
        break;
    default:
        return -MT_EINVAL;
    }
    if (!in->key || !in->key[0] || in->nvalues < want_min ||
        in->nvalues > want_max || (in->nvalues && !in->values))
        return -MT_EINVAL;
    k = mt_strtab_intern(t, in->key);
    if (k < 0)
        return (int)k;
    out->key = (uint32_t)k;
    out->op = (uint8_t)in->op;
    out->nvalues = (uint8_t)in->nvalues;
    for (size_t i = 0; i < in->nvalues; i++) {
        int64_t v = mt_strtab_intern(t, in->values[i]);

        if (v < 0)
            return (int)v;
        out->values[i] = (uint32_t)v;
    }
    return 0;
}

int mt_sel_compile(struct mt_strtab *t, const struct mt_label_selector *in,
                   struct mt_sel *out)
{
    memset(out, 0, sizeof(*out));
    if (!in || in->n == 0)
        return 0;
    if (in->n > MT_SEL_MAX_EXPRS || !in->exprs)
        return -MT_EINVAL;
    for (size_t i = 0; i < in->n; i++) {
        int rc = compile_expr(t, &in->exprs[i], &out->e[i]);

        if (rc < 0) {
            memset(out, 0, sizeof(*out));
            return rc;
        }
    }
    out->n = (uint8_t)in->n;
    return 0;
}

static bool in_values(const struct mt_sel_expr *e, uint32_t v)
{
    for (int i = 0; i < e->nvalues; i++)
        if (e->values[i] == v)
            return true;
    return false;
}

static bool expr_match(const struct mt_sel_expr *e,
                       const struct mt_labelset *ls)
{
    uint32_t v = mt_labelset_get(ls, e->key);

    switch (e->op) {
    case MT_LABEL_EQ:
        return v && v == e->values[0];
    case MT_LABEL_NE:
        return v != e->values[0];
    case MT_LABEL_IN:
        return v && in_values(e, v);
    case MT_LABEL_NOT_IN:
        return !v || !in_values(e, v);
    case MT_LABEL_EXISTS:
        return v != 0;
    case MT_LABEL_NOT_EXISTS:
        return v == 0;
    default:
        return false;
    }
}

bool mt_sel_match(const struct mt_sel *sel, const struct mt_labelset *ls)
{
    for (int i = 0; i < sel->n; i++)
        if (!expr_match(&sel->e[i], ls))
            return false;
    return true;
}
