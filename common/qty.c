/* SPDX-License-Identifier: Apache-2.0 */
/*
 * qty.c -- fixed-point quantities and the flag parsers of qty.h.
 *
 * The JSON reader accepts exactly one flat object whose values are numbers:
 * that is all --resources needs, and a small strict reader gives better
 * error messages than a general one.
 */
#include "common/qty.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/selector.h"

#define QTY_MAX (INT64_MAX / 4)

int64_t mt_qty_from_double(double v)
{
    double scaled;

    if (!(v >= 0) || !isfinite(v))
        return -1;
    scaled = v * MT_QTY_SCALE;
    if (scaled > (double)QTY_MAX)
        return -1;
    return (int64_t)llround(scaled);
}

int mt_qty_parse(const char *s, int64_t *out)
{
    char *end;
    double v;
    int64_t q;

    if (!s || !*s || isspace((unsigned char)*s))
        return -MT_EINVAL;
    errno = 0;
    v = strtod(s, &end);
    if (errno || *end || end == s)
        return -MT_EINVAL;
    q = mt_qty_from_double(v);
    if (q < 0)
        return -MT_EINVAL;
    *out = q;
    return 0;
}

char *mt_qty_format(int64_t q, char *buf, size_t len)
{
    /* Work on the magnitude as unsigned so INT64_MIN is fine too. */
    uint64_t mag = q < 0 ? (uint64_t)0 - (uint64_t)q : (uint64_t)q;
    uint64_t whole = mag / MT_QTY_SCALE, frac = mag % MT_QTY_SCALE;
    const char *sign = q < 0 ? "-" : "";
    char digits[8];
    int n;

    if (frac == 0) {
        snprintf(buf, len, "%s%llu", sign, (unsigned long long)whole);
        return buf;
    }
    n = snprintf(digits, sizeof(digits), "%04llu", (unsigned long long)frac);
    while (n > 1 && digits[n - 1] == '0')
        digits[--n] = '\0';
    snprintf(buf, len, "%s%llu.%s", sign, (unsigned long long)whole, digits);
    return buf;
}

char *mt_bytes_format(double bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;

    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f%s", bytes, units[u]);
    else
        snprintf(buf, len, "%.1f%s", bytes, units[u]);
    return buf;
}

int mt_bytes_parse(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {
        {"", 1},          {"b", 1},         {"k", 1e3},       {"kb", 1e3},
        {"kib", 1024.0},  {"m", 1e6},       {"mb", 1e6},      {"mib", 1048576.0},
        {"g", 1e9},       {"gb", 1e9},      {"gib", 1073741824.0},
        {"t", 1e12},      {"tb", 1e12},     {"tib", 1099511627776.0},
    };
    char *end;
    double v;

    if (!s || !*s)
        return -MT_EINVAL;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || !(v >= 0))
        return -MT_EINVAL;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(end, units[i].suffix) == 0) {
            double b = v * units[i].mult;
            if (b > 1.8e19)
                return -MT_EINVAL;
            *out = (uint64_t)b;
            return 0;
        }
    }
    return -MT_EINVAL;
}

bool mt_qty_valid_name(const char *s)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > 128)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._-/:", s[i]))
            return false;
    return true;
}

/* ---- lists ------------------------------------------------------------------ */

int mt_qty_list_put(struct mt_qty_list *l, const char *name, int64_t qty)
{
    struct mt_qty_entry *v;
    char *copy;

    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].name, name) == 0) {
            l->v[i].qty = qty;
            return 0;
        }
    }
    if (!(copy = strdup(name)))
        return -MT_ENOMEM;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;

        if (!(v = realloc(l->v, cap * sizeof(*v)))) {
            free(copy);
            return -MT_ENOMEM;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].name = copy;
    l->v[l->n++].qty = qty;
    return 0;
}

void mt_qty_list_set(struct mt_qty_list *l, const char *name, int64_t qty)
{
    if (mt_qty_list_put(l, name, qty) < 0)
        mt_xoom(strlen(name));
}

int mt_qty_list_copy(struct mt_qty_list *dst, const struct mt_qty_list *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (mt_qty_list_put(dst, src->v[i].name, src->v[i].qty) < 0) {
            mt_qty_list_release(dst);
            return -MT_ENOMEM;
        }
    return 0;
}

int64_t mt_qty_list_get(const struct mt_qty_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            return l->v[i].qty;
    return -1;
}

void mt_qty_list_release(struct mt_qty_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].name);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

int mt_kv_list_put(struct mt_kv_list *l, const char *key, const char *value)
{
    char *k = NULL, *v = strdup(value);
    struct mt_kv *nv;

    if (!v)
        return -MT_ENOMEM;
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].key, key) == 0) {
            free(l->v[i].value);
            l->v[i].value = v;
            return 0;
        }
    }
    if (!(k = strdup(key)))
        goto out_nomem;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;

        if (!(nv = realloc(l->v, cap * sizeof(*nv))))
            goto out_nomem;
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n].key = k;
    l->v[l->n++].value = v;
    return 0;

out_nomem:
    free(k);
    free(v);
    return -MT_ENOMEM;
}

void mt_kv_list_set(struct mt_kv_list *l, const char *key, const char *value)
{
    if (mt_kv_list_put(l, key, value) < 0)
        mt_xoom(strlen(key) + strlen(value));
}

int mt_kv_list_copy(struct mt_kv_list *dst, const struct mt_kv_list *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (mt_kv_list_put(dst, src->v[i].key, src->v[i].value) < 0) {
            mt_kv_list_release(dst);
            return -MT_ENOMEM;
        }
    return 0;
}

const char *mt_kv_list_get(const struct mt_kv_list *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].key, key) == 0)
            return l->v[i].value;
    return NULL;
}

void mt_kv_list_release(struct mt_kv_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].key);
        free(l->v[i].value);
    }
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* ---- parsers ------------------------------------------------------------------ */

static int fail(char *err, size_t errlen, const char *fmt, const char *arg)
{
    if (err && errlen)
        snprintf(err, errlen, fmt, arg);
    return -MT_EINVAL;
}

static const char *skip_ws(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* Read a JSON string without escapes beyond \" and \\ into a new string. */
static const char *read_json_key(const char *p, char **out)
{
    struct {
        char *s;
        size_t n, cap;
    } b = {NULL, 0, 0};

    if (*p != '"')
        return NULL;
    for (p++; *p && *p != '"'; p++) {
        char c = *p;
        if (c == '\\') {
            p++;
            if (*p != '"' && *p != '\\' && *p != '/')
                goto out_bad;
            c = *p;
        }
        if ((unsigned char)c < 0x20)
            goto out_bad;
        mt_xgrow((void **)&b.s, &b.cap, b.n + 2, 1);
        b.s[b.n++] = c;
    }
    if (*p != '"' || b.n == 0)
        goto out_bad;
    b.s[b.n] = '\0';
    *out = b.s;
    return p + 1;

out_bad:
    free(b.s);
    return NULL;
}

int mt_qty_parse_json(const char *text, struct mt_qty_list *l, char *err,
                      size_t errlen)
{
    const char *p = skip_ws(text ? text : "");

    if (*p++ != '{')
        return fail(err, errlen, "expected a JSON object like %s",
                    "{\"name\": 2}");
    p = skip_ws(p);
    if (*p == '}')
        return *skip_ws(p + 1) ? fail(err, errlen, "%s", "trailing characters")
                               : 0;
    for (;;) {
        char *name = NULL, *end;
        double v;
        int64_t q;

        p = read_json_key(skip_ws(p), &name);
        if (!p)
            return fail(err, errlen, "%s",
                        "expected a non-empty quoted resource name");
        p = skip_ws(p);
        if (*p++ != ':') {
            free(name);
            return fail(err, errlen, "%s", "expected ':' after a name");
        }
        errno = 0;
        v = strtod(skip_ws(p), &end);
        q = mt_qty_from_double(v);
        if (errno || end == skip_ws(p) || q < 0) {
            fail(err, errlen, "resource \"%s\" needs a non-negative number",
                 name);
            free(name);
            return -MT_EINVAL;
        }
        mt_qty_list_set(l, name, q);
        free(name);
        p = skip_ws(end);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '}' && !*skip_ws(p + 1))
            return 0;
        return fail(err, errlen, "%s", "expected ',' or '}' after a value");
    }
}

int mt_kv_parse(const char *text, struct mt_kv_list *l, char *err,
                size_t errlen)
{
    const char *p = text ? text : "";

    if (!*p)
        return 0;
    for (;;) {
        const char *comma = strchr(p, ','), *eq;
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char *item = mt_xstrndup(p, n), *key, *val;
        int ok;

        eq = strchr(item, '=');
        ok = eq && mt_label_key_valid(item, (size_t)(eq - item));
        if (!ok) {
            fail(err, errlen, "bad label \"%s\": expected key=value", item);
            free(item);
            return -MT_EINVAL;
        }
        key = mt_xstrndup(item, (size_t)(eq - item));
        val = mt_xstrdup(eq + 1);
        mt_kv_list_set(l, key, val);
        free(key);
        free(val);
        free(item);
        if (!comma)
            return 0;
        p = comma + 1;
    }
}
