/* SPDX-License-Identifier: Apache-2.0 */
/*
 * selector.c -- label selectors: the key rule, checked expressions, and the
 * parser of the text form (see selector.h).
 *
 * The parser works on a scratch selector and moves it into the caller's
 * only when the whole text parsed, so a typo never leaves half a selector.
 */
#include "common/selector.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static bool key_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '/' ||
           c == '-';
}

bool mt_label_key_valid(const char *key, size_t len)
{
    if (!key || len == 0 || len > MT_LABEL_KEY_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!key_char((unsigned char)key[i]))
            return false;
    return true;
}

/* ---- expressions --------------------------------------------------------- */

static void match_release(struct mt_label_match *m)
{
    free(m->key);
    for (size_t i = 0; i < m->n; i++)
        free(m->values[i]);
    free(m->values);
    memset(m, 0, sizeof(*m));
}

/* How many values op takes: the exact count, or -1 for 1..8. */
static int values_wanted(enum mt_label_op op)
{
    switch (op) {
    case MT_LABEL_EQ:
    case MT_LABEL_NE:
        return 1;
    case MT_LABEL_IN:
    case MT_LABEL_NOT_IN:
        return -1;
    default:
        return 0;
    }
}

static int check_expr(const char *key, enum mt_label_op op,
                      const char *const *values, size_t n, char *err,
                      size_t errlen)
{
    int want;

    if (!key || !mt_label_key_valid(key, strlen(key)))
        return fail(err, errlen, -MT_EINVAL, "invalid label key '%.64s': "
                    "use 1 to %d of A-Z a-z 0-9 . _ - /",
                    key ? key : "(null)", MT_LABEL_KEY_MAX);
    if ((int)op < MT_LABEL_EQ || op >= MT_LABEL_OP_COUNT)
        return fail(err, errlen, -MT_EINVAL, "unknown label operator %d",
                    (int)op);
    want = values_wanted(op);
    if ((want >= 0 && n != (size_t)want) ||
        (want < 0 && (n == 0 || n > MT_SEL_MAX_VALUES)))
        return fail(err, errlen, -MT_EINVAL, "label '%s': this operator "
                    "takes %s values, not %zu", key,
                    want == 1 ? "exactly 1" : want == 0 ? "no" : "1 to 8", n);
    for (size_t i = 0; i < n; i++)
        if (!values || !values[i] || !*values[i] ||
            strlen(values[i]) > MT_LABEL_VALUE_MAX)
            return fail(err, errlen, -MT_EINVAL, "label '%s': value %zu is "
                        "missing, empty or too long", key, i);
    return 0;
}

int mt_selector_add(struct mt_selector *s, const char *key,
                    enum mt_label_op op, const char *const *values, size_t n,
                    char *err, size_t errlen)
{
    struct mt_label_match *m;
    int rc = check_expr(key, op, values, n, err, errlen);

    if (rc < 0)
        return rc;
    if (s->n == MT_SEL_MAX_EXPRS)
        return fail(err, errlen, -MT_ERANGE, "at most %d expressions",
                    MT_SEL_MAX_EXPRS);
    m = &s->v[s->n];
    memset(m, 0, sizeof(*m));
    m->op = op;
    m->key = strdup(key);
    m->values = calloc(n + 1, sizeof(*m->values));
    if (!m->key || !m->values)
        goto out_nomem;
    for (; m->n < n; m->n++)
        if (!(m->values[m->n] = strdup(values[m->n])))
            goto out_nomem;
    s->n++;
    return 0;

out_nomem:
    match_release(m);
    return fail(err, errlen, -MT_ENOMEM, "out of memory");
}

void mt_selector_release(struct mt_selector *s)
{
    for (size_t i = 0; i < s->n; i++)
        match_release(&s->v[i]);
    s->n = 0;
}

int mt_selector_copy(struct mt_selector *dst, const struct mt_selector *src)
{
    dst->n = 0;
    for (size_t i = 0; i < src->n; i++) {
        const struct mt_label_match *m = &src->v[i];

        if (mt_selector_add(dst, m->key, m->op,
                            (const char *const *)m->values, m->n, NULL,
                            0) < 0) {
            mt_selector_release(dst);
            return -MT_ENOMEM;
        }
    }
    return 0;
}

/* ---- the text form ------------------------------------------------------- */

/* One expression being parsed: values collected before the checked add. */
struct expr {
    char key[MT_LABEL_KEY_MAX + 2];
    enum mt_label_op op;
    char *vals[MT_SEL_MAX_VALUES + 1];
    size_t n;
};

static void expr_release(struct expr *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->vals[i]);
    e->n = 0;
}

static bool val_char(int c)
{
    return c && !strchr(",|()=! \t\r\n", c);
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static bool is_word(const char *p, const char *w)
{
    size_t n = strlen(w);

    return strncmp(p, w, n) == 0 && !key_char((unsigned char)p[n]);
}

/* Values separated by any char of seps; RET where parsing stopped or NULL
 * (err set). */
static const char *parse_values(const char *p, const char *seps,
                                struct expr *e, char *err, size_t errlen)
{
    for (;;) {
        const char *v;

        p = skip_ws(p);
        v = p;
        while (val_char((unsigned char)*p))
            p++;
        if (p == v) {
            fail(err, errlen, 0, "missing value %s'%s'", *p ? "before " : "",
                 *p ? p : "at the end");
            return NULL;
        }
        if (e->n == MT_SEL_MAX_VALUES) {
            fail(err, errlen, 0, "at most %d values in one list",
                 MT_SEL_MAX_VALUES);
            return NULL;
        }
        if (!(e->vals[e->n] = strndup(v, (size_t)(p - v)))) {
            fail(err, errlen, 0, "out of memory");
            return NULL;
        }
        e->n++;
        p = skip_ws(p);
        if (!*p || !strchr(seps, *p))
            return p;
        p++;
    }
}

/* The operator after a key; RET where its operand starts, or NULL. */
static const char *parse_op(const char *p, struct expr *e, bool *list)
{
    *list = false;
    if (p[0] == '!' && p[1] == '=') {
        e->op = MT_LABEL_NE;
        return p + 2;
    }
    if (p[0] == '=') {
        e->op = MT_LABEL_EQ;
        return p + (p[1] == '=' ? 2 : 1);
    }
    *list = true;
    if (is_word(p, "in")) {
        e->op = MT_LABEL_IN;
        return p + 2;
    }
    if (is_word(p, "notin")) {
        e->op = MT_LABEL_NOT_IN;
        return p + 5;
    }
    return NULL;
}

/* The key at p into e->key. RET where it ends, or NULL (err set). */
static const char *parse_key(const char *p, const char *s, struct expr *e,
                             char *err, size_t errlen)
{
    const char *k = p;

    while (key_char((unsigned char)*p))
        p++;
    if (p == k) {
        fail(err, errlen, 0, "expected a label key in '%s'", s);
        return NULL;
    }
    if ((size_t)(p - k) > MT_LABEL_KEY_MAX) {
        fail(err, errlen, 0, "label key longer than %d bytes in '%s'",
             MT_LABEL_KEY_MAX, s);
        return NULL;
    }
    memcpy(e->key, k, (size_t)(p - k));
    e->key[p - k] = '\0';
    return p;
}

/* The operand of a comparison or list operator, to the end of s. */
static int parse_operand(const char *p, const char *s, struct expr *e,
                         bool list, char *err, size_t errlen)
{
    p = skip_ws(p);
    if (list && *p++ != '(')
        return fail(err, errlen, -MT_EINVAL, "expected '(' after in/notin "
                    "in '%s'", s);
    p = parse_values(p, list ? "|," : "|", e, err, errlen);
    if (!p)
        return -MT_EINVAL;
    if (list && *p++ != ')')
        return fail(err, errlen, -MT_EINVAL, "expected ')' to close the "
                    "list in '%s'", s);
    if (*skip_ws(p))
        return fail(err, errlen, -MT_EINVAL, "unexpected '%s' in '%s'",
                    skip_ws(p), s);
    if (!list && e->n > 1) /* key=a|b */
        e->op = e->op == MT_LABEL_EQ ? MT_LABEL_IN : MT_LABEL_NOT_IN;
    return 0;
}

/* One expression; s is NUL-terminated. RET 0 or -MT_EINVAL (err set). */
static int parse_expr(const char *s, struct expr *e, char *err, size_t errlen)
{
    const char *p = skip_ws(s);
    bool neg = *p == '!', list;

    if (!*p)
        return fail(err, errlen, -MT_EINVAL, "empty expression (a stray "
                    "',')");
    if (neg)
        p = skip_ws(p + 1);
    if (!(p = parse_key(p, s, e, err, errlen)))
        return -MT_EINVAL;
    p = skip_ws(p);
    if (neg || !*p) {
        e->op = neg ? MT_LABEL_NOT_EXISTS : MT_LABEL_EXISTS;
        if (!*p)
            return 0;
        return fail(err, errlen, -MT_EINVAL, "'!%s' takes nothing after "
                    "the key", e->key);
    }
    p = parse_op(p, e, &list);
    if (!p)
        return fail(err, errlen, -MT_EINVAL, "expected =, !=, in (...) or "
                    "notin (...) after '%s' in '%s'", e->key, s);
    return parse_operand(p, s, e, list, err, errlen);
}

/* Parse the expression text[0..len) and add it to s. */
static int add_item(struct mt_selector *s, const char *text, size_t len,
                    char *err, size_t errlen)
{
    char *item = strndup(text, len);
    struct expr e;
    int rc;

    if (!item)
        return fail(err, errlen, -MT_ENOMEM, "out of memory");
    memset(&e, 0, sizeof(e));
    rc = parse_expr(item, &e, err, errlen);
    free(item);
    if (rc == 0 && s->n == MT_SEL_MAX_EXPRS)
        rc = fail(err, errlen, -MT_EINVAL, "at most %d expressions",
                  MT_SEL_MAX_EXPRS);
    if (rc == 0)
        rc = mt_selector_add(s, e.key, e.op, (const char *const *)e.vals,
                             e.n, err, errlen);
    expr_release(&e);
    return rc == -MT_ERANGE ? -MT_EINVAL : rc;
}

int mt_selector_parse(const char *text, struct mt_selector *s, char *err,
                      size_t errlen)
{
    struct mt_selector tmp;
    const char *p = text ? text : "";
    int rc;

    if (!*skip_ws(p))
        return fail(err, errlen, -MT_EINVAL, "empty selector");
    if (mt_selector_copy(&tmp, s) < 0)
        return fail(err, errlen, -MT_ENOMEM, "out of memory");
    for (;;) {
        const char *q = p;
        int depth = 0;

        for (; *q && (*q != ',' || depth > 0); q++)
            depth += (*q == '(') - (*q == ')');
        if ((rc = add_item(&tmp, p, (size_t)(q - p), err, errlen)) < 0)
            break;
        if (!*q)
            break;
        p = q + 1;
    }
    if (rc < 0) {
        mt_selector_release(&tmp);
        return rc;
    }
    mt_selector_release(s);
    *s = tmp;
    return 0;
}
