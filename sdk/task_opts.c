/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_opts.c -- mt_task_opts_t: a task's options as plain C, checked as
 * they are set so a bad value fails at the setter with a clear message,
 * never later at the head. Also the bounded output buffer of a task.
 *
 * Pure: no threads, no I/O. Failures are recorded as the calling thread's
 * last error with no client (mt_client_last_error(NULL)).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdk/sdk_int.h"

#define QTY_SCALE 10000
#define MAX_STR 4096
#define MAX_OUTPUT_LIMIT (64u << 20)

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}

int mt__opts_init(struct mt_task_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->max_retries = -1;
    o->output_limit = MT_TASK_OUTPUT_DEFAULT;
    o->res[0].name = dup_str("CPU");
    if (!o->res[0].name)
        return -MT_ENOMEM;
    o->res[0].qty = QTY_SCALE;
    o->n_res = 1;
    return 0;
}

static void match_release(struct mt__match *m)
{
    free(m->key);
    for (size_t i = 0; i < m->n; i++)
        free(m->values[i]);
    free(m->values);
    memset(m, 0, sizeof(*m));
}

void mt__opts_release(struct mt_task_opts *o)
{
    for (size_t i = 0; i < o->n_res; i++)
        free(o->res[i].name);
    for (size_t i = 0; i < o->n_match; i++)
        match_release(&o->match[i]);
    for (size_t i = 0; i < o->n_env; i++) {
        free(o->env[i].key);
        free(o->env[i].value);
    }
    free(o->env);
    for (size_t i = 0; i < o->n_env_unset; i++)
        free(o->env_unset[i]);
    free(o->env_unset);
    free(o->name);
    free(o->cwd);
    for (size_t i = 0; i < o->n_code_path; i++)
        free(o->code_path[i]);
    free(o->code_path);
    memset(o, 0, sizeof(*o));
}

int mt_task_opts_create(mt_task_opts_t **out)
{
    struct mt_task_opts *o = malloc(sizeof(*o));

    *out = NULL;
    if (!o)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    if (mt__opts_init(o) < 0) {
        free(o);
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    }
    *out = o;
    return 0;
}

void mt_task_opts_destroy(mt_task_opts_t *o)
{
    if (!o)
        return;
    mt__opts_release(o);
    free(o);
}

/* ---- resources ----------------------------------------------------------- */

static bool valid_res_name(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 128)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') &&
            !(ch >= '0' && ch <= '9') && !strchr("._-/:", ch))
            return false;
    }
    return true;
}

/* The accelerator rules of DESIGN.md section 4. RET NULL or why not. */
static const char *accel_rule(const char *name, int64_t q)
{
    if (strcmp(name, "GPU") == 0 && q > QTY_SCALE && q % QTY_SCALE)
        return "a GPU amount above 1 must be a whole number";
    if (strcmp(name, "TPU") == 0 && q != 0 && q != 1 * QTY_SCALE &&
        q != 2 * QTY_SCALE && q != 4 * QTY_SCALE && q != 8 * QTY_SCALE)
        return "TPU chips per task must be 1, 2, 4 or 8";
    return NULL;
}

static int find_res(const struct mt_task_opts *o, const char *name)
{
    for (size_t i = 0; i < o->n_res; i++)
        if (strcmp(o->res[i].name, name) == 0)
            return (int)i;
    return -1;
}

int mt__res_amount(const char *name, double amount, int64_t *q)
{
    const char *why;

    if (!name || !valid_res_name(name))
        return mt__set_error(NULL, -MT_EINVAL, "invalid resource name '%s': "
                             "use up to 128 of A-Z a-z 0-9 . _ - / :",
                             name ? name : "(null)");
    if (!isfinite(amount) || amount < 0 || amount > 1e12)
        return mt__set_error(NULL, -MT_EINVAL, "invalid amount %g of %s: "
                             "expected a number >= 0", amount, name);
    *q = llround(amount * QTY_SCALE);
    if (amount > 0 && *q == 0)
        return mt__set_error(NULL, -MT_EINVAL, "amount %g of %s is below "
                             "the precision 0.0001", amount, name);
    if ((why = accel_rule(name, *q)))
        return mt__set_error(NULL, -MT_EINVAL, "invalid amount %g of %s: %s",
                             amount, name, why);
    return 0;
}

int mt_task_opts_set_resource(mt_task_opts_t *o, const char *name,
                              double amount)
{
    int64_t q;
    int i, rc;

    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    if ((rc = mt__res_amount(name, amount, &q)) < 0)
        return rc;
    i = find_res(o, name);
    if (i >= 0) {
        o->res[i].qty = q;
        return 0;
    }
    if (o->n_res == MT_TASK_MAX_RESOURCES)
        return mt__set_error(NULL, -MT_ERANGE, "at most %d kinds of "
                             "resources in one task", MT_TASK_MAX_RESOURCES);
    o->res[o->n_res].name = dup_str(name);
    if (!o->res[o->n_res].name)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    o->res[o->n_res++].qty = q;
    return 0;
}

/* ---- label selector ------------------------------------------------------ */

static bool valid_label_key(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') &&
            !(ch >= '0' && ch <= '9') && !strchr("._-/", ch))
            return false;
    }
    return true;
}

/* How many values op takes: RET the exact count, or -1 for 1..8. */
static int values_wanted(int op)
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

static int check_match(const char *key, mt_label_op op,
                       const char *const *values, size_t n)
{
    int want;

    if (!key || !valid_label_key(key))
        return mt__set_error(NULL, -MT_EINVAL, "invalid label key '%s'",
                             key ? key : "(null)");
    if ((int)op < MT_LABEL_EQ || op > MT_LABEL_NOT_EXISTS)
        return mt__set_error(NULL, -MT_EINVAL, "unknown label operator %d",
                             (int)op);
    want = values_wanted(op);
    if ((want >= 0 && n != (size_t)want) ||
        (want < 0 && (n == 0 || n > MT_TASK_MAX_LABEL_VALUES)))
        return mt__set_error(NULL, -MT_EINVAL, "label '%s': this operator "
                             "takes %s values, not %zu", key,
                             want == 1 ? "exactly 1" : want == 0 ? "no"
                                                                 : "1 to 8",
                             n);
    for (size_t i = 0; i < n; i++)
        if (!values || !values[i] || !*values[i] ||
            strlen(values[i]) > MAX_STR)
            return mt__set_error(NULL, -MT_EINVAL, "label '%s': value %zu is "
                                 "missing, empty or too long", key, i);
    return 0;
}

int mt_task_opts_add_label_match(mt_task_opts_t *o, const char *key,
                                 mt_label_op op, const char *const *values,
                                 size_t n)
{
    struct mt__match *m;
    int rc;

    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    if ((rc = check_match(key, op, values, n)) < 0)
        return rc;
    if (o->n_match == MT_TASK_MAX_LABEL_MATCHES)
        return mt__set_error(NULL, -MT_ERANGE, "at most %d label "
                             "expressions in one selector",
                             MT_TASK_MAX_LABEL_MATCHES);
    m = &o->match[o->n_match];
    memset(m, 0, sizeof(*m));
    m->op = (int)op;
    m->key = dup_str(key);
    m->values = n ? calloc(n, sizeof(*m->values)) : NULL;
    if (!m->key || (n && !m->values))
        goto out_nomem;
    for (; m->n < n; m->n++)
        if (!(m->values[m->n] = dup_str(values[m->n])))
            goto out_nomem;
    o->n_match++;
    return 0;

out_nomem:
    match_release(m);
    return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
}

/* ---- the rest ------------------------------------------------------------ */

int mt_task_opts_set_priority(mt_task_opts_t *o, int32_t priority)
{
    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    o->priority = priority;
    return 0;
}

int mt_task_opts_set_max_retries(mt_task_opts_t *o, int retries)
{
    if (!o || retries < -1)
        return mt__set_error(NULL, -MT_EINVAL, "invalid max_retries %d: "
                             "expected -1 (default), 0 or more", retries);
    o->max_retries = retries;
    return 0;
}

/* Replace *dst by a copy of s (NULL clears). */
static int set_str(char **dst, const char *s, const char *what)
{
    char *p = NULL;

    if (s && strlen(s) > MAX_STR)
        return mt__set_error(NULL, -MT_EINVAL, "%s longer than %d bytes",
                             what, MAX_STR);
    if (s && !(p = dup_str(s)))
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    free(*dst);
    *dst = p;
    return 0;
}

int mt_task_opts_set_name(mt_task_opts_t *o, const char *name)
{
    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    return set_str(&o->name, name, "name");
}

/* A relative dir is taken from the driver's working directory, as
 * `manta submit --cwd` does. */
int mt_task_opts_set_cwd(mt_task_opts_t *o, const char *dir)
{
    char here[4096], path[MAX_STR + 2];

    if (!o || (dir && !*dir))
        return mt__set_error(NULL, -MT_EINVAL, "invalid cwd: empty");
    if (!dir || dir[0] == '/')
        return set_str(&o->cwd, dir, "cwd");
    if (!getcwd(here, sizeof(here)))
        return mt__set_error(NULL, -errno, "getcwd: %s", strerror(errno));
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", here, dir) >=
        sizeof(path))
        return mt__set_error(NULL, -MT_EINVAL, "cwd longer than %d bytes",
                             MAX_STR);
    return set_str(&o->cwd, path, "cwd");
}

int mt_task_opts_add_code_path(mt_task_opts_t *o, const char *dir)
{
    char **v;
    char *copy;

    if (!o || !dir || !*dir || strlen(dir) > MAX_STR)
        return mt__set_error(NULL, -MT_EINVAL, "invalid code path folder");
    if (o->n_code_path >= 64)
        return mt__set_error(NULL, -MT_EINVAL, "at most 64 code path folders");
    v = realloc(o->code_path, (o->n_code_path + 1) * sizeof(*v));
    if (!v)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    o->code_path = v;
    copy = dup_str(dir);
    if (!copy)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    v[o->n_code_path++] = copy;
    return 0;
}

int mt_task_opts_set_env(mt_task_opts_t *o, const char *key,
                         const char *value)
{
    struct mt__kv *v;

    if (!o || !key || !*key || strchr(key, '=') || !value)
        return mt__set_error(NULL, -MT_EINVAL, "invalid environment "
                             "variable '%s': expected a key without '=' "
                             "and a value", key ? key : "(null)");
    for (size_t i = 0; i < o->n_env; i++)
        if (strcmp(o->env[i].key, key) == 0)
            return set_str(&o->env[i].value, value, "value");
    if (strlen(key) > MAX_STR || strlen(value) > MAX_STR)
        return mt__set_error(NULL, -MT_EINVAL, "environment variable '%.64s' "
                             "longer than %d bytes", key, MAX_STR);
    v = realloc(o->env, (o->n_env + 1) * sizeof(*v));
    if (!v)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    o->env = v;
    v[o->n_env].key = dup_str(key);
    v[o->n_env].value = dup_str(value);
    if (!v[o->n_env].key || !v[o->n_env].value) {
        free(v[o->n_env].key);
        free(v[o->n_env].value);
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    }
    o->n_env++;
    return 0;
}

int mt_task_opts_unset_env(mt_task_opts_t *o, const char *key)
{
    char **v;

    if (!o || !key || !*key || strchr(key, '=') || strlen(key) > MAX_STR)
        return mt__set_error(NULL, -MT_EINVAL, "invalid environment "
                             "variable name '%.64s'", key ? key : "(null)");
    for (size_t i = 0; i < o->n_env_unset; i++)
        if (strcmp(o->env_unset[i], key) == 0)
            return 0;
    v = realloc(o->env_unset, (o->n_env_unset + 1) * sizeof(*v));
    if (!v)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    o->env_unset = v;
    if (!(v[o->n_env_unset] = dup_str(key)))
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    o->n_env_unset++;
    return 0;
}

int mt_task_opts_set_strategy(mt_task_opts_t *o, mt_strategy strategy)
{
    if (!o || (strategy != MT_STRATEGY_DEFAULT &&
               strategy != MT_STRATEGY_SPREAD))
        return mt__set_error(NULL, -MT_EINVAL, "unknown strategy %d",
                             (int)strategy);
    o->strategy = (int)strategy;
    return 0;
}

int mt_task_opts_set_output_limit(mt_task_opts_t *o, size_t bytes)
{
    if (!o || bytes > MAX_OUTPUT_LIMIT)
        return mt__set_error(NULL, -MT_EINVAL, "output limit %zu above %u "
                             "bytes", bytes, MAX_OUTPUT_LIMIT);
    o->output_limit = bytes;
    return 0;
}

/* ---- output buffers ------------------------------------------------------ */

int mt__outbuf_append(struct mt__outbuf *b, size_t limit, const void *p,
                      size_t n)
{
    size_t keep;

    if (n > limit) { /* only the tail of this piece survives */
        b->dropped += b->len + (n - limit);
        b->len = 0;
        p = (const uint8_t *)p + (n - limit);
        n = limit;
    }
    if (n == 0)
        return 0;
    if (b->len + n > limit) { /* drop the oldest bytes */
        keep = limit - n;
        b->dropped += b->len - keep;
        memmove(b->data, b->data + (b->len - keep), keep);
        b->len = keep;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        uint8_t *d;

        while (cap < b->len + n)
            cap *= 2;
        if (cap > limit)
            cap = limit;
        d = realloc(b->data, cap);
        if (!d)
            return -MT_ENOMEM;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}
