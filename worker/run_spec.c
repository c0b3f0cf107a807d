/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run_spec.c -- checking a run's spec and building its environment (see
 * run_spec.h).
 *
 * DESIGN (environment): the layers are merged through a small open
 * addressing index by key, so a later layer replaces an earlier value in
 * place (the variable keeps its first position) in O(n) for n entries.
 */
#include "worker/run_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "worker/exec_proto.h"

/* ==== specs ============================================================== */

void mt_run_spec_release(struct mt_run_spec *s)
{
    if (!s)
        return;
    free(s->task_id);
    for (size_t i = 0; s->argv && i < s->argc; i++)
        free(s->argv[i]);
    free(s->argv);
    mt_kv_list_release(&s->env);
    mt_kv_list_release(&s->env_unset);
    mt_kv_list_release(&s->accel_env);
    mt_kv_list_release(&s->accel_unset);
    free(s->cwd);
    free(s->function);
    for (size_t i = 0; s->code_path && i < s->n_code_path; i++)
        free(s->code_path[i]);
    free(s->code_path);
    for (size_t i = 0; s->args && i < s->nargs; i++)
        free(s->args[i].data);
    free(s->args);
    for (size_t i = 0; s->refs && i < s->nrefs; i++) {
        free(s->refs[i].data);
        for (size_t k = 0; k < s->refs[i].n_holders; k++)
            free(s->refs[i].holders[k]);
    }
    free(s->refs);
    free(s->actor_id);
    free(s->owner_id);
    memset(s, 0, sizeof(*s));
}

bool mt_run_id_valid(const char *id)
{
    size_t n = id ? strlen(id) : 0;

    if (n == 0 || n > MT_RUN_ID_MAX)
        return false;
    return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "0123456789_-") == n;
}

static int bad(char *err, size_t len, const char *why)
{
    snprintf(err, len, "%s", why);
    return -MT_EINVAL;
}

/* RET NULL or why the list is not a valid environment; adds to *count/bytes. */
static const char *check_env(const struct mt_kv_list *l, size_t *count,
                             size_t *bytes)
{
    for (size_t i = 0; i < l->n; i++) {
        const char *k = l->v[i].key, *v = l->v[i].value;

        if (!k || !*k || strchr(k, '='))
            return "environment variable names must be non-empty and "
                   "without '='";
        *bytes += strlen(k) + (v ? strlen(v) : 0) + 2;
    }
    *count += l->n;
    return NULL;
}

/* A function task: its name, code path and arguments within the limits
 * of the executor protocol (exec_proto.h). */
static int check_function(const struct mt_run_spec *s, char *err, size_t len)
{
    size_t bytes = 0;

    if (!s->function || !*s->function ||
        strlen(s->function) > MT_EXEC_MAX_FUNCTION)
        return bad(err, len, "function must be \"lib.so:name\" or a "
                             "registered name");
    if (s->n_code_path > MT_EXEC_MAX_CODE_PATH)
        return bad(err, len, "too many code path entries (at most 64)");
    for (size_t i = 0; i < s->n_code_path; i++)
        if (strlen(s->code_path[i]) > MT_EXEC_MAX_PATH)
            return bad(err, len, "code path entry too long");
    if (s->nargs > MT_EXEC_MAX_ARGS)
        return bad(err, len, "too many arguments (at most 4096)");
    for (size_t i = 0; i < s->nargs; i++)
        bytes += s->args[i].size;
    if (bytes > MT_EXEC_MAX_ARG_BYTES)
        return bad(err, len, "arguments too large (at most 16 MiB)");
    return 0;
}

int mt_run_spec_check(const struct mt_run_spec *s, char *err, size_t len)
{
    size_t bytes = 0, count = 0;
    const char *why;

    if (s->kind < MT_RUN_KIND_COMMAND || s->kind > MT_RUN_KIND_LEASE)
        return bad(err, len, "task kind must be TASK_KIND_COMMAND, "
                             "TASK_KIND_FUNCTION, TASK_KIND_LEASE or an "
                             "actor kind");
    if (s->kind == MT_RUN_KIND_LEASE &&
        (!s->owner_id || !*s->owner_id ||
         strlen(s->owner_id) > MT_RUN_MAX_OWNER))
        return bad(err, len, "a lease needs an owner_id of 1-128 bytes");
    if (s->kind == MT_RUN_KIND_ACTOR_METHOD && !mt_run_id_valid(s->actor_id))
        return bad(err, len, "actor_id must be 1-64 characters of "
                             "[A-Za-z0-9_-]");
    if (!mt_run_id_valid(s->task_id))
        return bad(err, len, "task_id must be 1-64 characters of "
                             "[A-Za-z0-9_-]");
    if ((why = check_env(&s->env, &count, &bytes)) ||
        (why = check_env(&s->env_unset, &count, &bytes)) ||
        (why = check_env(&s->accel_env, &count, &bytes)) ||
        (why = check_env(&s->accel_unset, &count, &bytes)))
        return bad(err, len, why);
    if (count > MT_RUN_MAX_ENV)
        return bad(err, len, "too many environment variables (at most 4096)");
    if (bytes > MT_RUN_MAX_BYTES)
        return bad(err, len, "environment too large (at most 1 MiB)");
    if (s->kind == MT_RUN_KIND_LEASE)
        return 0;
    if (s->kind != MT_RUN_KIND_COMMAND)
        return check_function(s, err, len);
    if (s->argc == 0 || !s->argv || !s->argv[0] || !s->argv[0][0])
        return bad(err, len, "argv must name a program");
    if (s->argc > MT_RUN_MAX_ARGS)
        return bad(err, len, "too many arguments (at most 4096)");
    bytes = 0;
    for (size_t i = 0; i < s->argc; i++)
        bytes += strlen(s->argv[i]) + 1;
    if (bytes > MT_RUN_MAX_BYTES)
        return bad(err, len, "arguments too large (at most 1 MiB)");
    if (s->cwd && strlen(s->cwd) > MT_RUN_MAX_CWD)
        return bad(err, len, "cwd too long");
    return 0;
}

/* ==== environment ======================================================== */

/* Entries of an environment being built, with an index by key. */
struct envb {
    char **out;
    size_t n;
    size_t *slot;   /* index+1 into out, 0 = empty */
    size_t mask;
};

static size_t key_hash(const char *k, size_t n)
{
    uint64_t h = 1469598103934665603ull;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * 1099511628211ull;
    return (size_t)h;
}

/* Add "K=V", or a bare "K" for an unset (taken), whose key is its first
 * klen bytes. */
static void envb_add(struct envb *b, char *kv, size_t klen)
{
    size_t h = key_hash(kv, klen) & b->mask;

    while (b->slot[h]) {
        char **e = &b->out[b->slot[h] - 1];

        if (strncmp(*e, kv, klen) == 0 &&
            ((*e)[klen] == '=' || (*e)[klen] == '\0')) {
            free(*e);
            *e = kv;
            return;
        }
        h = (h + 1) & b->mask;
    }
    b->out[b->n] = kv;
    b->slot[h] = ++b->n;
}

/* Merge base and lists; unsets stay as bare "K" entries when keep_unset,
 * else they are dropped at the end. */
static char **env_merge(char *const *base,
                        const struct mt_kv_list *const *lists, size_t n,
                        bool keep_unset)
{
    struct envb b = {0};
    size_t total = 0, slots = 16, k = 0;
    const char *eq;

    for (size_t i = 0; base && base[i]; i++)
        total++;
    for (size_t i = 0; i < n; i++)
        total += lists[i]->n;
    while (slots < 2 * total + 2)
        slots *= 2;
    b.out = mt_xcalloc(total + 1, sizeof(*b.out));
    b.slot = mt_xcalloc(slots, sizeof(*b.slot));
    b.mask = slots - 1;
    for (size_t i = 0; base && base[i]; i++)
        if ((eq = strchr(base[i], '=')) && eq != base[i])
            envb_add(&b, mt_xstrdup(base[i]), (size_t)(eq - base[i]));
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < lists[i]->n; j++) {
            const struct mt_kv *kv = &lists[i]->v[j];

            envb_add(&b, kv->value ? mt_xasprintf("%s=%s", kv->key,
                                                  kv->value)
                                   : mt_xstrdup(kv->key),
                     strlen(kv->key));
        }
    }
    free(b.slot);
    for (size_t i = 0; i < b.n; i++) {
        if (keep_unset || strchr(b.out[i], '='))
            b.out[k++] = b.out[i];
        else
            free(b.out[i]);
    }
    b.out[k] = NULL;
    return b.out;
}

char **mt_run_env_build(char *const *base,
                        const struct mt_kv_list *const *lists, size_t n)
{
    return env_merge(base, lists, n, false);
}

char **mt_run_env_overlay(const struct mt_kv_list *const *lists, size_t n)
{
    return env_merge(NULL, lists, n, true);
}

void mt_run_env_free(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}
