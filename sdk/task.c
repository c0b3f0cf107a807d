/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task.c -- the public task calls: submit, wait (one, any, all), cancel,
 * results, references.
 *
 * A task handle is shared by the user and the client's watch of it, so it
 * is reference counted (atomically: mt_task_release() must work after the
 * client is gone). While the client lives, the task's state is read and
 * written under c->mu; the loop thread broadcasts c->cv on every change,
 * which is what the waits below sleep on.
 */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/rpc.h"
#include "sdk/sdk_int.h"

static bool check_client(const struct mt_client *c)
{
    return c && c->magic == MT_CLIENT_MAGIC;
}

static bool check_task(const struct mt_client *c, const struct mt_task *t)
{
    return t && t->magic == MT_SDK_TASK_MAGIC && t->client == c;
}

void mt__task_unref(struct mt_task *t)
{
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    free(t->error);
    free(t->node_id);
    free(t->value);
    free(t->out.data);
    free(t->err.data);
    t->magic = 0;
    free(t);
}

/*
 * Wait until t has its id (a batched submit learns it from the head's
 * reply) or has ended without one. RET true when it has one.
 */
static bool wait_id(struct mt_task *t)
{
    struct mt_client *c = t->client;
    struct timespec dl;
    bool known;

    /* Settled tasks need no lock: the client may be gone already. */
    if (atomic_load(&t->settled))
        return t->id[0] != '\0';
    pthread_mutex_lock(&c->mu);
    dl = mt__deadline(c->rpc_timeout_ms + 2000);
    while (!atomic_load(&t->settled) &&
           pthread_cond_timedwait(&c->cv, &c->mu, &dl) == 0)
        ;
    known = t->id[0] != '\0';
    pthread_mutex_unlock(&c->mu);
    return known;
}

void mt_task_release(mt_task_t *t)
{
    mt_object_id id;

    /* Drop our reference on the result object (a batched submit may still
     * be learning the task's id: wait for it). */
    if (t && t->magic == MT_SDK_TASK_MAGIC && t->holds_result &&
        (!t->tag || wait_id(t)) && mt_object_id_for_task(t->id, &id) == 0)
        mt__client_post_release(t->client, &id);
    mt__task_unref(t);
}

int mt_task_result_ref(const mt_task_t *t, mt_object_id *out)
{
    if (!t || t->magic != MT_SDK_TASK_MAGIC || !out || !t->holds_result ||
        (t->tag && !wait_id((struct mt_task *)t)) ||
        mt_object_id_for_task(t->id, out) < 0)
        return -MT_EINVAL;
    return 0;
}

const char *mt_task_id(const mt_task_t *t)
{
    if (!t || t->magic != MT_SDK_TASK_MAGIC)
        return "";
    if (t->tag) /* batched: the id may still be on its way */
        wait_id((struct mt_task *)t);
    return t->id;
}

const char *mt_task_state_name(mt_task_state s)
{
    switch (s) {
    case MT_TASK_STATE_WAITING_FOR_ARGS: return "WAITING_FOR_ARGS";
    case MT_TASK_STATE_PENDING: return "PENDING";
    case MT_TASK_STATE_SCHEDULED: return "SCHEDULED";
    case MT_TASK_STATE_RUNNING: return "RUNNING";
    case MT_TASK_STATE_FINISHED: return "FINISHED";
    case MT_TASK_STATE_FAILED: return "FAILED";
    case MT_TASK_STATE_CANCELLED: return "CANCELLED";
    default: return "UNKNOWN";
    }
}

/* ---- submit -------------------------------------------------------------- */

/* Build with build(), send, and hand back the task. */
static int submit_with(mt_client_t *c, const mt_task_opts_t *opts,
                       mt_task_t **out,
                       int (*build)(const struct mt_task_opts *o, void *arg,
                                    void **msg),
                       void *arg)
{
    struct mt_task_opts def;
    const struct mt_task_opts *o = opts;
    struct mt__req *r;
    int rc;

    if (!o) {
        if (mt__opts_init(&def) < 0)
            return mt__set_error(c, -MT_ENOMEM, "out of memory");
        o = &def;
    }
    r = mt__req_new(MT__REQ_SUBMIT);
    rc = r ? build(o, arg, &r->submit_msg) : -MT_ENOMEM;
    if (r) {
        r->output_limit = o->output_limit;
        r->timeout_ms = c->rpc_timeout_ms;
        r->rpc_flags = MT_RPC_WAIT_FOR_READY;
    }
    if (o == &def)
        mt__opts_release(&def);
    if (rc < 0) {
        mt__req_free(r);
        return mt__set_error(c, rc, "out of memory");
    }
    if (atomic_load(&c->cw_state) == MT__CW_READY) { /* batched: no wait */
        void *msg = r->submit_msg;
        size_t limit = r->output_limit;

        r->submit_msg = NULL;
        mt__req_free(r);
        return mt__cw_post(c, msg, limit, out);
    }
    mt__reg_flush(c); /* puts queued while batching: the head first */
    rc = mt__req_run(c, r, c->rpc_timeout_ms + 2000);
    if (rc < 0)
        return rc;
    *out = r->task;
    r->task = NULL;
    mt__req_free(r);
    return 0;
}

static int build_command(const struct mt_task_opts *o, void *arg, void **msg)
{
    return mt__rpc_submit_build(arg, o, msg);
}

int mt_submit_command(mt_client_t *c, const char *const *argv,
                      const mt_task_opts_t *opts, mt_task_t **out)
{
    if (out)
        *out = NULL;
    if (!check_client(c) || !out)
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or out pointer");
    if (!argv || !argv[0] || !*argv[0])
        return mt__set_error(c, -MT_EINVAL, "empty argv: name a program");
    return submit_with(c, opts, out, build_command, (void *)argv);
}

struct fn_call {
    const char *function;
    const void *const *args;
    const size_t *sizes;
    size_t nargs;
};

static int build_function(const struct mt_task_opts *o, void *arg, void **msg)
{
    const struct fn_call *f = arg;

    return mt__rpc_submit_fn_build(f->function, f->args, f->sizes, f->nargs,
                                   o, msg);
}

struct args_build {
    const char *function;
    const mt_arg *args;
    size_t nargs;
};

static int build_function_args(const struct mt_task_opts *o, void *arg,
                               void **msg)
{
    const struct args_build *a = arg;

    return mt__rpc_submit_args_build(a->function, a->args, a->nargs, o, msg);
}

int mt_submit_function_args(mt_client_t *c, const char *function,
                            const mt_arg *args, size_t nargs,
                            const mt_task_opts_t *opts, mt_task_t **out)
{
    struct args_build a = {function, args, nargs};
    size_t bytes = 0;
    int rc;

    if (out)
        *out = NULL;
    if (!check_client(c) || !out || !function || !*function ||
        (nargs && !args))
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client, function, args or out");
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind != MT_ARG_VALUE && args[i].kind != MT_ARG_REF)
            return mt__set_error(c, -MT_EINVAL, "argument %zu: kind must be "
                                 "MT_ARG_VALUE or MT_ARG_REF", i);
        if (args[i].kind == MT_ARG_VALUE && args[i].size && !args[i].data)
            return mt__set_error(c, -MT_EINVAL, "argument %zu: no data", i);
        bytes += args[i].kind == MT_ARG_VALUE ? args[i].size : 0;
    }
    if (bytes > (16u << 20))
        return mt__set_error(c, -MT_EINVAL, "arguments by value larger than "
                             "16 MiB: put them in the object store and pass "
                             "refs");
    rc = submit_with(c, opts, out, build_function_args, &a);
    if (rc == 0)
        (*out)->holds_result = true;
    return rc;
}

int mt_submit_function(mt_client_t *c, const char *function,
                       const void *const *args, const size_t *sizes,
                       size_t nargs, const mt_task_opts_t *opts,
                       mt_task_t **out)
{
    struct fn_call f = {function, args, sizes, nargs};

    if (out)
        *out = NULL;
    if (!check_client(c) || !out)
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or out pointer");
    if (!function || !*function || strlen(function) > 512)
        return mt__set_error(c, -MT_EINVAL, "function must be \"lib.so:fn\" "
                                            "or a registered name");
    if (nargs && (!args || !sizes))
        return mt__set_error(c, -MT_EINVAL, "args and sizes are required");
    for (size_t i = 0; i < nargs; i++)
        if (sizes[i] && !args[i])
            return mt__set_error(c, -MT_EINVAL, "argument %zu is NULL", i);
    int rc = submit_with(c, opts, out, build_function, &f);

    if (rc == 0)
        (*out)->holds_result = true; /* released by mt_task_release */
    return rc;
}

/* ---- results ------------------------------------------------------------- */

void mt_task_result_init(mt_task_result *r)
{
    memset(r, 0, sizeof(*r));
    r->size = sizeof(*r);
}

void mt_task_result_release(mt_task_result *r)
{
    uint32_t size;

    if (!r)
        return;
    size = r->size;
    free(r->error);
    free(r->node_id);
    free(r->out);
    free(r->err);
    /* A caller built against an older, shorter struct has no value. */
    if (size >= offsetof(mt_task_result, value_len) + sizeof(r->value_len))
        free(r->value);
    memset(r, 0, size < sizeof(*r) ? size : sizeof(*r));
    r->size = size;
}

/* A NUL-terminated copy of n bytes. */
static void *copy_bytes(const void *p, size_t n)
{
    uint8_t *d = malloc(n + 1);

    if (d) {
        if (n)
            memcpy(d, p, n);
        d[n] = '\0';
    }
    return d;
}

/* Fill r from t. Called with c->mu held. RET 0, -MT_ENOMEM. */
static int fill_result_locked(const struct mt_task *t, mt_task_result *r)
{
    r->state = (mt_task_state)t->state;
    r->exit_code = t->exit_code;
    r->attempt = t->attempt;
    r->error = copy_bytes(t->error ? t->error : "",
                          t->error ? strlen(t->error) : 0);
    r->node_id = copy_bytes(t->node_id ? t->node_id : "",
                            t->node_id ? strlen(t->node_id) : 0);
    r->out = copy_bytes(t->out.data, t->out.len);
    r->out_len = t->out.len;
    r->err = copy_bytes(t->err.data, t->err.len);
    r->err_len = t->err.len;
    r->out_dropped = t->out.dropped;
    r->err_dropped = t->err.dropped;
    r->value = copy_bytes(t->value, t->value_len);
    r->value_len = t->value_len;
    if (!r->error || !r->node_id || !r->out || !r->err || !r->value)
        return -MT_ENOMEM;
    return 0;
}

/* The return code for a task that ended in state. */
static int ended_rc(int state)
{
    if (state == MT_TASK_STATE_FINISHED)
        return 0;
    return state == MT_TASK_STATE_CANCELLED ? -MT_ECANCELED : -MT_ETASKFAILED;
}

/* Sleep on c->cv until pred holds or the deadline. Called with mu held. */
static bool wait_locked(struct mt_client *c, const struct timespec *dl,
                        int timeout_ms)
{
    int rc;

    if (timeout_ms == 0)
        return false;
    rc = timeout_ms < 0 ? pthread_cond_wait(&c->cv, &c->mu)
                        : pthread_cond_timedwait(&c->cv, &c->mu, dl);
    return rc != ETIMEDOUT;
}

/* The timeout message, with the head's note on why (e.g. infeasible). */
static int timeout_error(struct mt_client *c, struct mt_task *t, int state,
                         int timeout_ms)
{
    char note[256] = "";

    pthread_mutex_lock(&c->mu);
    if (t->error && *t->error)
        snprintf(note, sizeof(note), ": %s", t->error);
    pthread_mutex_unlock(&c->mu);
    return mt__set_error(c, -MT_ETIMEDOUT, "task %s still %s after %d ms%s",
                         t->id, mt_task_state_name(state), timeout_ms, note);
}

int mt_task_wait(mt_client_t *c, mt_task_t *t, int timeout_ms,
                 mt_task_result *res)
{
    struct timespec dl = mt__deadline(timeout_ms < 0 ? 0 : timeout_ms);
    mt_task_result tmp;
    int rc;

    if (!check_client(c) || !check_task(c, t))
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or task (not of this client)");
    mt_task_result_init(&tmp);
    pthread_mutex_lock(&c->mu);
    while (!t->ended && !t->lost && wait_locked(c, &dl, timeout_ms))
        ;
    tmp.state = (mt_task_state)t->state;
    if (t->ended || t->lost)
        rc = fill_result_locked(t, &tmp) < 0 ? -MT_ENOMEM
             : t->ended && t->actor_died     ? -MT_EACTORDIED
             : t->ended                      ? ended_rc(t->state)
                                             : t->lost;
    else
        rc = -MT_ETIMEDOUT;
    pthread_mutex_unlock(&c->mu);
    if (rc == -MT_ENOMEM) {
        mt_task_result_release(&tmp);
        return mt__set_error(c, rc, "out of memory");
    }
    if (res) {
        mt_task_result_release(res);
        if (res->size >= sizeof(tmp)) {
            memcpy(res, &tmp, sizeof(tmp));
        } else {
            res->state = tmp.state;
            mt_task_result_release(&tmp);
        }
    } else {
        mt_task_result_release(&tmp);
    }
    if (rc == -MT_ETIMEDOUT)
        return timeout_error(c, t, tmp.state, timeout_ms);
    if (rc < 0)
        return mt__set_error(c, rc, "task %s %s: %s", t->id,
                             rc == -MT_ECANCELED ? "was cancelled"
                             : rc == -MT_ETASKFAILED ? "failed"
                             : rc == -MT_EACTORDIED  ? "failed"
                                                     : "is lost",
                             t->error && *t->error ? t->error
                                                   : "no reason given");
    return 0;
}

int mt_wait_tasks(mt_client_t *c, mt_task_t *const *tasks, size_t n,
                  size_t num_ready, int timeout_ms, bool *ready)
{
    struct timespec dl = mt__deadline(timeout_ms < 0 ? 0 : timeout_ms);
    size_t done;

    if (!check_client(c) || (n && !tasks) || num_ready > n || n > INT32_MAX)
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client, tasks or num_ready");
    for (size_t i = 0; i < n; i++)
        if (!check_task(c, tasks[i]))
            return mt__set_error(c, -MT_EINVAL, "tasks[%zu] is not a task "
                                 "of this client", i);
    pthread_mutex_lock(&c->mu);
    for (;;) {
        done = 0;
        for (size_t i = 0; i < n; i++) {
            bool r = tasks[i]->ended || tasks[i]->lost;
            done += r;
            if (ready)
                ready[i] = r;
        }
        if (done >= num_ready || !wait_locked(c, &dl, timeout_ms))
            break;
    }
    pthread_mutex_unlock(&c->mu);
    return (int)done;
}

/* ---- cancel -------------------------------------------------------------- */

int mt_task_cancel(mt_client_t *c, mt_task_t *t, bool force)
{
    struct mt__req *r;
    int rc;

    if (!check_client(c) || !check_task(c, t))
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or task (not of this client)");
    if (t->tag && !wait_id(t))
        return mt__set_error(c, -MT_ENOENT, "the task never reached the "
                             "head: %s", t->error ? t->error : "no id");
    r = mt__req_new(MT__REQ_CANCEL);
    if (!r)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    snprintf(r->task_id, sizeof(r->task_id), "%s", t->id);
    r->force = force;
    r->timeout_ms = c->rpc_timeout_ms;
    rc = mt__req_run(c, r, c->rpc_timeout_ms + 2000);
    if (rc < 0)
        return rc;
    mt__req_free(r);
    return 0;
}
