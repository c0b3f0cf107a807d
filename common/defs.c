/* SPDX-License-Identifier: Apache-2.0 */
/*
 * defs.c -- task, placement group and gang defs (see defs.h): life cycle,
 * deep copies and the head's rules for a task.
 */
#include "common/defs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

/* ---- small setters ------------------------------------------------------- */

int mt_def_set_str(char **dst, const char *s)
{
    char *p = NULL;

    if (s && *s && !(p = strdup(s)))
        return -MT_ENOMEM;
    free(*dst);
    *dst = p;
    return 0;
}

static void strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int mt_def_set_strv(char ***dst, size_t *n, const char *const *v, size_t m)
{
    char **copy = calloc(m + 1, sizeof(*copy));

    if (!copy)
        return -MT_ENOMEM;
    for (size_t i = 0; i < m; i++)
        if (!(copy[i] = strdup(v[i]))) {
            strv_free(copy, i);
            return -MT_ENOMEM;
        }
    strv_free(*dst, *n);
    *dst = copy;
    *n = m;
    return 0;
}

static void args_free(struct mt_task_arg *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(a[i].data);
    free(a);
}

int mt_task_def_set_args(struct mt_task_def *d,
                         const struct mt_task_arg *args, size_t n)
{
    struct mt_task_arg *v = calloc(n + 1, sizeof(*v));

    if (!v)
        return -MT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        v[i] = args[i];
        v[i].data = NULL;
        if (args[i].len && !(v[i].data = malloc(args[i].len))) {
            args_free(v, i);
            return -MT_ENOMEM;
        }
        if (args[i].len)
            memcpy(v[i].data, args[i].data, args[i].len);
    }
    args_free(d->args, d->nargs);
    d->args = v;
    d->nargs = n;
    return 0;
}

/* ---- task defs ----------------------------------------------------------- */

void mt_task_def_init(struct mt_task_def *d)
{
    memset(d, 0, sizeof(*d));
    d->kind = MT_TASK_KIND_COMMAND;
    d->max_retries = -1;
    d->bundle = -1;
}

void mt_task_def_release(struct mt_task_def *d)
{
    free(d->name);
    strv_free(d->argv, d->argc);
    mt_kv_list_release(&d->env);
    strv_free(d->env_unset, d->n_env_unset);
    free(d->cwd);
    free(d->function);
    args_free(d->args, d->nargs);
    strv_free(d->code_path, d->n_code_path);
    mt_qty_list_release(&d->res);
    mt_selector_release(&d->sel);
    free(d->affinity_node);
    free(d->pg_id);
    free(d->actor_id);
    free(d->actor_name);
    free(d->owner_id);
    mt_task_def_init(d);
}

/* The owned strings of a def, in one table for copying. */
static char **str_field(struct mt_task_def *d, size_t i)
{
    char **f[] = {&d->name,          &d->cwd,    &d->function,
                  &d->affinity_node, &d->pg_id,  &d->actor_id,
                  &d->actor_name,    &d->owner_id};

    return i < sizeof(f) / sizeof(f[0]) ? f[i] : NULL;
}

static int copy_lists(struct mt_task_def *dst, const struct mt_task_def *src)
{
    if (mt_def_set_strv(&dst->argv, &dst->argc,
                        (const char *const *)src->argv, src->argc) < 0 ||
        mt_def_set_strv(&dst->env_unset, &dst->n_env_unset,
                        (const char *const *)src->env_unset,
                        src->n_env_unset) < 0 ||
        mt_def_set_strv(&dst->code_path, &dst->n_code_path,
                        (const char *const *)src->code_path,
                        src->n_code_path) < 0 ||
        mt_task_def_set_args(dst, src->args, src->nargs) < 0 ||
        mt_kv_list_copy(&dst->env, &src->env) < 0 ||
        mt_qty_list_copy(&dst->res, &src->res) < 0 ||
        mt_selector_copy(&dst->sel, &src->sel) < 0)
        return -MT_ENOMEM;
    return 0;
}

int mt_task_def_copy(struct mt_task_def *dst, const struct mt_task_def *src)
{
    struct mt_task_def *s = (struct mt_task_def *)src;
    char **f;

    mt_task_def_release(dst);
    /* Scalars first; then every owned field gets its own copy. */
    *dst = *src;
    for (size_t i = 0; (f = str_field(dst, i)); i++)
        *f = NULL;
    dst->argv = dst->env_unset = dst->code_path = NULL;
    dst->argc = dst->n_env_unset = dst->n_code_path = 0;
    dst->args = NULL;
    dst->nargs = 0;
    memset(&dst->env, 0, sizeof(dst->env));
    memset(&dst->res, 0, sizeof(dst->res));
    memset(&dst->sel, 0, sizeof(dst->sel));
    for (size_t i = 0; (f = str_field(dst, i)); i++)
        if (mt_def_set_str(f, *str_field(s, i)) < 0)
            goto out_nomem;
    if (copy_lists(dst, src) < 0)
        goto out_nomem;
    return 0;

out_nomem:
    mt_task_def_release(dst);
    return -MT_ENOMEM;
}

/* ---- the head's rules ---------------------------------------------------- */

static size_t slen(const char *s)
{
    return s ? strlen(s) : 0;
}

/* Function tasks and actors: name, arguments and code path within limits. */
static const char *check_function(const struct mt_task_def *d)
{
    size_t bytes = 0;

    if (!slen(d->function) || slen(d->function) > MT_TASK_MAX_FUNCTION)
        return "function must be \"lib.so:name\" or a registered name";
    if (d->nargs > MT_TASK_MAX_ARGS ||
        d->n_code_path > MT_TASK_MAX_CODE_PATH)
        return "too many arguments or code path entries";
    for (size_t i = 0; i < d->nargs; i++)
        bytes += d->args[i].len;
    for (size_t i = 0; i < d->n_code_path; i++)
        if (slen(d->code_path[i]) > MT_TASK_MAX_STR)
            return "code path entry too long";
    if (bytes > MT_TASK_MAX_ARG_BYTES)
        return "arguments larger than 16 MiB: put them in the object store";
    if (d->kind == MT_TASK_KIND_ACTOR_METHOD && slen(d->actor_id) != 16)
        return "actor_id must name an actor (a and 15 hex digits)";
    if (slen(d->actor_name) > MT_TASK_MAX_NAME || d->max_restarts < -1 ||
        slen(d->owner_id) > MT_TASK_MAX_OWNER)
        return "actor name over 256 bytes, owner id over 128, or "
               "max_restarts below -1";
    return NULL;
}

static bool env_name_ok(const char *s)
{
    return s && *s && !strchr(s, '=');
}

/* argv, environment, cwd and name within limits. */
static const char *check_sizes(const struct mt_task_def *d)
{
    size_t bytes = 0;

    if (d->argc > MT_TASK_MAX_ARGS)
        return "too many arguments";
    for (size_t i = 0; i < d->argc; i++)
        bytes += strlen(d->argv[i]) + 1;
    for (size_t i = 0; i < d->env.n; i++) {
        if (!env_name_ok(d->env.v[i].key))
            return "environment names must be non-empty and without '='";
        bytes += strlen(d->env.v[i].key) + strlen(d->env.v[i].value) + 2;
    }
    for (size_t i = 0; i < d->n_env_unset; i++) {
        if (!env_name_ok(d->env_unset[i]))
            return "environment names must be non-empty and without '='";
        bytes += strlen(d->env_unset[i]) + 1;
    }
    if (bytes > MT_TASK_MAX_ARGV_BYTES || slen(d->cwd) > MT_TASK_MAX_STR ||
        slen(d->name) > MT_TASK_MAX_NAME)
        return "arguments, environment, cwd or name too large";
    return NULL;
}

static const char *check_placement(const struct mt_task_def *d)
{
    if (d->res.n > MT_TASK_MAX_RES)
        return "too many resource kinds in one task (at most 8)";
    for (size_t i = 0; i < d->res.n; i++) {
        if (!mt_qty_valid_name(d->res.v[i].name))
            return "bad resource name";
        if (d->res.v[i].qty < 0)
            return "negative resource quantity";
    }
    if ((unsigned)d->place > MT_PLACE_PG)
        return "unknown scheduling strategy";
    return NULL;
}

const char *mt_task_def_check(const struct mt_task_def *d)
{
    const char *why = NULL;

    switch (d->kind) {
    case MT_TASK_KIND_FUNCTION:
    case MT_TASK_KIND_ACTOR_CREATE:
    case MT_TASK_KIND_ACTOR_METHOD:
        why = check_function(d);
        break;
    case MT_TASK_KIND_COMMAND:
        if (d->argc == 0 || !d->argv[0][0])
            why = "argv must name a program";
        break;
    case MT_TASK_KIND_LEASE:
        if (d->argc || d->nargs || slen(d->function) || d->env.n ||
            d->n_env_unset || slen(d->cwd) || d->max_retries > 0)
            why = "a lease runs nothing itself: no argv, function, "
                  "arguments, environment or retries";
        else if (!slen(d->owner_id) || slen(d->owner_id) > MT_TASK_MAX_OWNER)
            why = "a lease needs owner_id: the session of its driver";
        break;
    default:
        why = "kind must be TASK_KIND_COMMAND, TASK_KIND_FUNCTION, "
              "TASK_KIND_LEASE or an actor kind";
    }
    if (!why)
        why = check_sizes(d);
    return why ? why : check_placement(d);
}

/* ---- placement group and gang defs --------------------------------------- */

void mt_pg_def_release(struct mt_pg_def *p)
{
    for (size_t i = 0; i < p->nbundles; i++) {
        mt_qty_list_release(&p->bundles[i].res);
        mt_selector_release(&p->bundles[i].sel);
    }
    free(p->bundles);
    free(p->name);
    free(p->tpu_pod_type);
    free(p->tpu_topology);
    memset(p, 0, sizeof(*p));
}

struct mt_bundle_def *mt_pg_def_add_bundle(struct mt_pg_def *p)
{
    struct mt_bundle_def *v = realloc(p->bundles,
                                      (p->nbundles + 1) * sizeof(*v));

    if (!v)
        return NULL;
    p->bundles = v;
    memset(&v[p->nbundles], 0, sizeof(v[0]));
    return &v[p->nbundles++];
}

void mt_gang_def_release(struct mt_gang_def *g)
{
    free(g->name);
    free(g->pod_type);
    free(g->topology);
    mt_task_def_release(&g->member);
    memset(g, 0, sizeof(*g));
    mt_task_def_init(&g->member);
}
