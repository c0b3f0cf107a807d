/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_opts.c -- mt_task_opts_t: a task's options as a struct mt_task_def
 * (common/defs.h), checked as they are set so a bad value fails at the
 * setter with a clear message, never later at the head. Label selectors
 * use common/selector.h: the one key rule and set of limits every module
 * shares. Also the bounded output buffer of a task.
 *
 * Pure: no threads, no I/O. Failures are recorded as the calling thread's
 * last error with no client (mt_client_last_error(NULL)).
 */
#include "sdk/task_opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdk/error.h"

#define MAX_OUTPUT_LIMIT (64u << 20)

/* The public limits are the shared ones. */
_Static_assert(MT_TASK_MAX_RESOURCES == MT_TASK_MAX_RES, "resource kinds");
_Static_assert(MT_TASK_MAX_LABEL_MATCHES == MT_SEL_MAX_EXPRS, "expressions");
_Static_assert(MT_TASK_MAX_LABEL_VALUES == MT_SEL_MAX_VALUES, "values");

/* opts_init - the defaults of mt_task_opts_create. RET 0, -MT_ENOMEM. */
static int opts_init(struct mt_task_opts *o)
{
    memset(o, 0, sizeof(*o));
    mt_task_def_init(&o->def);
    o->output_limit = MT_TASK_OUTPUT_DEFAULT;
    return mt_qty_list_put(&o->def.res, "CPU", MT_QTY_SCALE);
}

static void opts_release(struct mt_task_opts *o)
{
    mt_task_def_release(&o->def);
}

int mt_task_opts_create(mt_task_opts_t **out)
{
    struct mt_task_opts *o = malloc(sizeof(*o));

    *out = NULL;
    if (!o || opts_init(o) < 0) {
        if (o)
            opts_release(o);
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
    opts_release(o);
    free(o);
}

static int no_memory(void)
{
    return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
}

/* ---- resources ----------------------------------------------------------- */

/* The accelerator rules of DESIGN.md section 4. RET NULL or why not. */
static const char *accel_rule(const char *name, int64_t q)
{
    if (strcmp(name, "GPU") == 0 && q > MT_QTY_SCALE && q % MT_QTY_SCALE)
        return "a GPU amount above 1 must be a whole number";
    if (strcmp(name, "TPU") == 0 && q != 0 && q != 1 * MT_QTY_SCALE &&
        q != 2 * MT_QTY_SCALE && q != 4 * MT_QTY_SCALE &&
        q != 8 * MT_QTY_SCALE)
        return "TPU chips per task must be 1, 2, 4 or 8";
    return NULL;
}

int mt__res_amount(const char *name, double amount, int64_t *q)
{
    const char *why;

    if (!name || !mt_qty_valid_name(name))
        return mt__set_error(NULL, -MT_EINVAL, "invalid resource name '%s': "
                             "use up to 128 of A-Z a-z 0-9 . _ - / :",
                             name ? name : "(null)");
    /* Fixed point must fit an int64 (memory in bytes, too). */
    if (!isfinite(amount) || amount < 0 ||
        amount > (double)(INT64_MAX / MT_QTY_SCALE))
        return mt__set_error(NULL, -MT_EINVAL, "invalid amount %g of %s: "
                             "expected a number >= 0", amount, name);
    *q = llround(amount * MT_QTY_SCALE);
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
    int rc;

    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    if ((rc = mt__res_amount(name, amount, &q)) < 0)
        return rc;
    if (mt_qty_list_get(&o->def.res, name) < 0 &&
        o->def.res.n == MT_TASK_MAX_RESOURCES)
        return mt__set_error(NULL, -MT_ERANGE, "at most %d kinds of "
                             "resources in one task", MT_TASK_MAX_RESOURCES);
    return mt_qty_list_put(&o->def.res, name, q) < 0 ? no_memory() : 0;
}

/* ---- label selector ------------------------------------------------------ */

int mt_task_opts_add_label_match(mt_task_opts_t *o, const char *key,
                                 mt_label_op op, const char *const *values,
                                 size_t n)
{
    char why[256];
    int rc;

    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    rc = mt_selector_add(&o->def.sel, key, op, values, n, why, sizeof(why));
    return rc < 0 ? mt__set_error(NULL, rc, "%s", why) : 0;
}

int mt_task_opts_set_label_selector(mt_task_opts_t *o, const char *text)
{
    struct mt_selector sel;
    char why[256];
    int rc;

    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    memset(&sel, 0, sizeof(sel));
    if (text && (rc = mt_selector_parse(text, &sel, why, sizeof(why))) < 0)
        return mt__set_error(NULL, rc, "%s", why);
    mt_selector_release(&o->def.sel);
    o->def.sel = sel;
    return 0;
}

/* ---- the rest ------------------------------------------------------------ */

int mt_task_opts_set_priority(mt_task_opts_t *o, int32_t priority)
{
    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    o->def.priority = priority;
    return 0;
}

int mt_task_opts_set_max_retries(mt_task_opts_t *o, int retries)
{
    if (!o || retries < -1)
        return mt__set_error(NULL, -MT_EINVAL, "invalid max_retries %d: "
                             "expected -1 (default), 0 or more", retries);
    o->def.max_retries = retries;
    return 0;
}

int mt__opts_set_str(char **dst, const char *s, const char *what)
{
    if (s && strlen(s) > MT__OPT_STR_MAX)
        return mt__set_error(NULL, -MT_EINVAL, "%s longer than %d bytes",
                             what, MT__OPT_STR_MAX);
    return mt_def_set_str(dst, s) < 0 ? no_memory() : 0;
}

int mt_task_opts_set_name(mt_task_opts_t *o, const char *name)
{
    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    return mt__opts_set_str(&o->def.name, name, "name");
}

/* A relative dir is taken from the driver's working directory, as
 * `manta submit --cwd` does. */
int mt_task_opts_set_cwd(mt_task_opts_t *o, const char *dir)
{
    char here[4096], path[MT__OPT_STR_MAX + 2];

    if (!o || (dir && !*dir))
        return mt__set_error(NULL, -MT_EINVAL, "invalid cwd: empty");
    if (!dir || dir[0] == '/')
        return mt__opts_set_str(&o->def.cwd, dir, "cwd");
    if (!getcwd(here, sizeof(here)))
        return mt__set_error(NULL, -errno, "getcwd: %s", strerror(errno));
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", here, dir) >=
        sizeof(path))
        return mt__set_error(NULL, -MT_EINVAL, "cwd longer than %d bytes",
                             MT__OPT_STR_MAX);
    return mt__opts_set_str(&o->def.cwd, path, "cwd");
}

/* Append s (copied) to the list *v of *n strings. RET 0 or ENOMEM. */
static int strv_add(char ***v, size_t *n, const char *s)
{
    char **nv = realloc(*v, (*n + 2) * sizeof(*nv));

    if (!nv)
        return no_memory();
    *v = nv;
    if (!(nv[*n] = strdup(s)))
        return no_memory();
    nv[++*n] = NULL;
    return 0;
}

int mt_task_opts_add_code_path(mt_task_opts_t *o, const char *dir)
{
    if (!o || !dir || !*dir || strlen(dir) > MT__OPT_STR_MAX)
        return mt__set_error(NULL, -MT_EINVAL, "invalid code path folder");
    if (o->def.n_code_path >= MT_TASK_MAX_CODE_PATH)
        return mt__set_error(NULL, -MT_EINVAL, "at most %d code path "
                             "folders", MT_TASK_MAX_CODE_PATH);
    return strv_add(&o->def.code_path, &o->def.n_code_path, dir);
}

int mt_task_opts_set_env(mt_task_opts_t *o, const char *key,
                         const char *value)
{
    if (!o || !key || !*key || strchr(key, '=') || !value)
        return mt__set_error(NULL, -MT_EINVAL, "invalid environment "
                             "variable '%s': expected a key without '=' "
                             "and a value", key ? key : "(null)");
    if (strlen(key) > MT__OPT_STR_MAX || strlen(value) > MT__OPT_STR_MAX)
        return mt__set_error(NULL, -MT_EINVAL, "environment variable '%.64s' "
                             "longer than %d bytes", key, MT__OPT_STR_MAX);
    return mt_kv_list_put(&o->def.env, key, value) < 0 ? no_memory() : 0;
}

int mt_task_opts_unset_env(mt_task_opts_t *o, const char *key)
{
    if (!o || !key || !*key || strchr(key, '=') ||
        strlen(key) > MT__OPT_STR_MAX)
        return mt__set_error(NULL, -MT_EINVAL, "invalid environment "
                             "variable name '%.64s'", key ? key : "(null)");
    for (size_t i = 0; i < o->def.n_env_unset; i++)
        if (strcmp(o->def.env_unset[i], key) == 0)
            return 0;
    return strv_add(&o->def.env_unset, &o->def.n_env_unset, key);
}

int mt_task_opts_set_strategy(mt_task_opts_t *o, mt_strategy strategy)
{
    if (!o || (strategy != MT_STRATEGY_DEFAULT &&
               strategy != MT_STRATEGY_SPREAD))
        return mt__set_error(NULL, -MT_EINVAL, "unknown strategy %d",
                             (int)strategy);
    o->def.place = strategy == MT_STRATEGY_SPREAD ? MT_PLACE_SPREAD
                                                  : MT_PLACE_DEFAULT;
    return 0;
}

int mt_task_opts_set_node_affinity(mt_task_opts_t *o, const char *node_id,
                                   bool soft)
{
    int rc;

    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    if ((rc = mt__opts_set_str(&o->def.affinity_node, node_id,
                               "node id")) < 0)
        return rc;
    o->def.place = node_id ? MT_PLACE_NODE_AFFINITY : MT_PLACE_DEFAULT;
    o->def.affinity_soft = node_id && soft;
    return 0;
}

int mt_task_opts_set_follow(mt_task_opts_t *o, bool follow)
{
    if (!o)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    o->no_follow = !follow;
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

/* ---- the def a submit sends ---------------------------------------------- */

void mt__task_def_free(struct mt_task_def *d)
{
    if (!d)
        return;
    mt_task_def_release(d);
    free(d);
}

struct mt_task_def *mt__task_def_new(const struct mt_task_opts *o)
{
    struct mt_task_def *d = malloc(sizeof(*d));
    struct mt_task_opts def;
    int rc;

    if (!d)
        return NULL;
    mt_task_def_init(d);
    if (o) {
        rc = mt_task_def_copy(d, &o->def);
    } else if ((rc = opts_init(&def)) == 0) {
        *d = def.def; /* take the defaults' def */
        mt_task_def_init(&def.def);
    }
    if (!o)
        opts_release(&def);
    if (rc < 0) {
        mt__task_def_free(d);
        return NULL;
    }
    if (d->pg_id) /* a placement group wins over the strategy */
        d->place = MT_PLACE_PG;
    return d;
}
