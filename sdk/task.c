/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task.c -- the public task calls (submit, wait for one, any or all,
 * cancel, results, references) and the client's tasks part.
 *
 * A submit turns the options into a def of its own (the options may be
 * destroyed at once) and hands it to lease.c (a function task with its
 * arguments by value, pushed to a leased worker), rpc_batch.c (batched,
 * the normal case) or rpc_task.c (one by one). Waits sleep on c->cv,
 * which the loop thread broadcasts on every change of a task (see
 * task_int.h).
 */
#include "sdk/task.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/lease.h"
#include "sdk/object.h"
#include "sdk/rpc_batch.h"
#include "sdk/rpc_object.h"
#include "sdk/rpc_task.h"
#include "sdk/tagmap.h"
#include "sdk/task_opts.h"
#include "sdk/task_state.h"

static bool check_task(const struct mt_client *c, const struct mt_task *t)
{
    return t && t->magic == MT_SDK_TASK_MAGIC && t->client == c;
}

/* ---- the tasks part ------------------------------------------------------ */

static void tasks_wake(struct mt_client *c, void *st)
{
    mt__cw_pump(c);
    mt__leases_pump(c);
}

static void tasks_stop(struct mt_client *c, void *st)
{
    struct mt__tasks *ts = st;

    mt__tasks_stop_watches(c);
    mt__leases_stop(c);
    mt__cw_stop(c);
    if (ts->timer_ready)
        uv_close((uv_handle_t *)&ts->retry_timer, NULL);
    ts->timer_ready = false;
}

static void tasks_destroy(void *st)
{
    struct mt__tasks *ts = st;

    mt__tagmap_release(&ts->cw_tasks);
    mt__leases_destroy(ts->leases);
    free(ts->pend);
    free(ts);
}

static const struct mt__part_ops tasks_part = {
    .wake = tasks_wake,
    .stop = tasks_stop,
    .destroy = tasks_destroy,
};

int mt__tasks_attach(struct mt_client *c)
{
    struct mt__tasks *ts = calloc(1, sizeof(*ts));

    if (!ts || !(ts->leases = mt__leases_create())) {
        free(ts);
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    }
    atomic_init(&ts->cw_state, MT__CW_OFF);
    atomic_init(&ts->next_tag, 0);
    c->tasks = ts;
    mt__client_add_part(c, &tasks_part, ts);
    return 0;
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
    dl = mt__deadline(c->rpc_timeout_ms + MT__WAIT_GRACE_MS);
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
        mt__objects_post_release(t->client, &id);
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

int mt__task_submit_def(struct mt_client *c, struct mt_task_def *d,
                        size_t output_limit, unsigned how,
                        struct mt_task **out)
{
    bool follow = !(how & MT__SUBMIT_NO_FOLLOW);
    int rc;

    *out = NULL;
    if (follow && (how & MT__SUBMIT_BATCH) && mt__cw_usable(c)) {
        rc = mt__lease_post(c, d, output_limit, out); /* leased */
        if (rc != MT__LEASE_NOT_TAKEN)
            return rc;
        return mt__cw_post(c, d, output_limit, out); /* no waiting */
    }
    mt__reg_flush(c); /* puts queued while batching: the head first */
    return mt__task_submit_one(c, d, output_limit, follow, out);
}

/* Submit the def of o with fill()'s fields. RET as mt_submit_command. */
static int submit(mt_client_t *c, const mt_task_opts_t *o, mt_task_t **out,
                  int (*fill)(struct mt_task_def *d, const void *arg),
                  const void *arg)
{
    struct mt_task_def *d = mt__task_def_new(o);
    bool follow = !o || !o->no_follow;

    if (!d || fill(d, arg) < 0) {
        mt__task_def_free(d);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    d->hold_result &= follow; /* nobody would release it */
    if (d->hold_result && mt_def_set_str(&d->owner_id, mt__session(c)) < 0) {
        mt__task_def_free(d); /* the session's: it ends with the client */
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    return mt__task_submit_def(c, d, o ? o->output_limit
                                       : MT_TASK_OUTPUT_DEFAULT,
                               follow ? MT__SUBMIT_BATCH
                                      : MT__SUBMIT_NO_FOLLOW,
                               out);
}

static int fill_command(struct mt_task_def *d, const void *arg)
{
    const char *const *argv = arg;
    size_t n = 0;

    while (argv[n])
        n++;
    d->kind = MT_TASK_KIND_COMMAND;
    return mt_def_set_strv(&d->argv, &d->argc, argv, n);
}

int mt_submit_command(mt_client_t *c, const char *const *argv,
                      const mt_task_opts_t *opts, mt_task_t **out)
{
    if (out)
        *out = NULL;
    if (!mt__client_check(c) || !out)
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or out pointer");
    if (!argv || !argv[0] || !*argv[0])
        return mt__set_error(c, -MT_EINVAL, "empty argv: name a program");
    return submit(c, opts, out, fill_command, argv);
}

/* A function task's arguments, by value or by reference. */
struct fn_call {
    const char *function;
    struct mt_task_arg *args;    /* borrowed values */
    size_t nargs;
};

static int fill_function(struct mt_task_def *d, const void *arg)
{
    const struct fn_call *f = arg;

    d->kind = MT_TASK_KIND_FUNCTION;
    d->hold_result = true; /* released with the task (mt_task_release) */
    if (mt_def_set_str(&d->function, f->function) < 0)
        return -MT_ENOMEM;
    return mt_task_def_set_args(d, f->args, f->nargs);
}

static int submit_fn(mt_client_t *c, struct fn_call *f,
                     const mt_task_opts_t *opts, mt_task_t **out)
{
    int rc = submit(c, opts, out, fill_function, f);

    if (rc == 0) /* released by mt_task_release */
        (*out)->holds_result = !(*out)->unfollowed;
    return rc;
}

int mt_submit_function_args(mt_client_t *c, const char *function,
                            const mt_arg *args, size_t nargs,
                            const mt_task_opts_t *opts, mt_task_t **out)
{
    struct fn_call f = {function, NULL, nargs};
    size_t bytes = 0;
    int rc;

    if (out)
        *out = NULL;
    if (!mt__client_check(c) || !out || !function || !*function ||
        (nargs && !args))
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "invalid client, function, args or out");
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind != MT_ARG_VALUE && args[i].kind != MT_ARG_REF)
            return mt__set_error(c, -MT_EINVAL, "argument %zu: kind must be "
                                 "MT_ARG_VALUE or MT_ARG_REF", i);
        if (args[i].kind == MT_ARG_VALUE && args[i].size && !args[i].data)
            return mt__set_error(c, -MT_EINVAL, "argument %zu: no data", i);
        bytes += args[i].kind == MT_ARG_VALUE ? args[i].size : 0;
    }
    if (bytes > MT_TASK_MAX_ARG_BYTES)
        return mt__set_error(c, -MT_EINVAL, "arguments by value larger than "
                             "16 MiB: put them in the object store and pass "
                             "refs");
    if (!(f.args = calloc(nargs + 1, sizeof(*f.args))))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    for (size_t i = 0; i < nargs; i++) {
        f.args[i].is_ref = args[i].kind == MT_ARG_REF;
        f.args[i].ref = args[i].ref;
        f.args[i].data = f.args[i].is_ref ? NULL : (uint8_t *)args[i].data;
        f.args[i].len = f.args[i].is_ref ? 0 : args[i].size;
    }
    rc = submit_fn(c, &f, opts, out);
    free(f.args);
    return rc;
}

int mt_submit_function(mt_client_t *c, const char *function,
                       const void *const *args, const size_t *sizes,
                       size_t nargs, const mt_task_opts_t *opts,
                       mt_task_t **out)
{
    struct fn_call f = {function, NULL, nargs};
    int rc;

    if (out)
        *out = NULL;
    if (!mt__client_check(c) || !out)
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or out pointer");
    if (!function || !*function || strlen(function) > MT_TASK_MAX_FUNCTION)
        return mt__set_error(c, -MT_EINVAL, "function must be \"lib.so:fn\" "
                                            "or a registered name");
    if (nargs && (!args || !sizes))
        return mt__set_error(c, -MT_EINVAL, "args and sizes are required");
    for (size_t i = 0; i < nargs; i++)
        if (sizes[i] && !args[i])
            return mt__set_error(c, -MT_EINVAL, "argument %zu is NULL", i);
    if (!(f.args = calloc(nargs + 1, sizeof(*f.args))))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    for (size_t i = 0; i < nargs; i++) {
        f.args[i].data = (uint8_t *)args[i];
        f.args[i].len = sizes[i];
    }
    rc = submit_fn(c, &f, opts, out);
    free(f.args);
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

/* Sleep on c->cv until woken or the deadline. Called with mu held. */
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

static int not_followed(struct mt_client *c, const struct mt_task *t)
{
    return mt__set_error(c, -MT_ESTATE, "task %s was submitted not to be "
                         "followed: watch it with mt_watch_open()", t->id);
}

/* Wait for t under mu and take its outcome. RET as mt_task_wait. */
static int wait_outcome(struct mt_client *c, struct mt_task *t,
                        int timeout_ms, mt_task_result *tmp)
{
    struct timespec dl = mt__deadline(timeout_ms < 0 ? 0 : timeout_ms);
    int rc = -MT_ETIMEDOUT;

    pthread_mutex_lock(&c->mu);
    while (!t->ended && !t->lost && wait_locked(c, &dl, timeout_ms))
        ;
    tmp->state = (mt_task_state)t->state;
    if (t->ended || t->lost)
        rc = fill_result_locked(t, tmp) < 0 ? -MT_ENOMEM
             : t->ended && t->actor_died     ? -MT_EACTORDIED
             : t->ended                      ? ended_rc(t->state)
                                             : t->lost;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int mt_task_wait(mt_client_t *c, mt_task_t *t, int timeout_ms,
                 mt_task_result *res)
{
    mt_task_result tmp;
    int rc;

    if (!mt__client_check(c) || !check_task(c, t))
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or task (not of this client)");
    if (t->unfollowed)
        return not_followed(c, t);
    mt_task_result_init(&tmp);
    rc = wait_outcome(c, t, timeout_ms, &tmp);
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

/* t has ended, or its client lost track of it. c->mu held. */
static bool task_over(const struct mt_task *t)
{
    return t->ended || t->lost;
}

/* How many of tasks[from, n) are over, plus from (those before are); each
 * one's flag into ready[i - from] when ready. c->mu held. */
static size_t count_over(mt_task_t *const *tasks, size_t from, size_t n,
                         bool *ready)
{
    size_t done = from;

    for (size_t i = from; i < n; i++) {
        bool r = task_over(tasks[i]);

        done += r;
        if (ready)
            ready[i - from] = r;
    }
    return done;
}

int mt_wait_tasks(mt_client_t *c, mt_task_t *const *tasks, size_t n,
                  size_t num_ready, int timeout_ms, bool *ready)
{
    struct timespec dl = mt__deadline(timeout_ms < 0 ? 0 : timeout_ms);
    size_t first = 0, done; /* tasks[0, first) have ended */

    if (!mt__client_check(c) || (n && !tasks) || num_ready > n ||
        n > INT32_MAX)
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "invalid client, tasks or num_ready");
    for (size_t i = 0; i < n; i++) {
        if (!check_task(c, tasks[i]))
            return mt__set_error(c, -MT_EINVAL, "tasks[%zu] is not a task "
                                 "of this client", i);
        if (tasks[i]->unfollowed)
            return not_followed(c, tasks[i]);
    }
    pthread_mutex_lock(&c->mu);
    for (;;) {
        /* Tasks end for good, and mostly in the order they were sent:
         * skip the run of ended ones once, and when all must end, look no
         * further than the first that has not (one pass in all, not one
         * per wake-up). */
        while (first < n && task_over(tasks[first])) {
            if (ready)
                ready[first] = true;
            first++;
        }
        if (first == n)
            break;
        if (num_ready < n && count_over(tasks, first, n, NULL) >= num_ready)
            break;
        if (!wait_locked(c, &dl, timeout_ms))
            break;
    }
    done = count_over(tasks, first, n, ready ? ready + first : NULL);
    pthread_mutex_unlock(&c->mu);
    return (int)done;
}

/* ---- cancel -------------------------------------------------------------- */

int mt_task_cancel(mt_client_t *c, mt_task_t *t, bool force)
{
    if (!mt__client_check(c) || !check_task(c, t))
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or task (not of this client)");
    if (t->leased) /* the head does not know it until it ends */
        return mt__lease_cancel(c, t, force);
    if (t->tag && !wait_id(t))
        return mt__set_error(c, -MT_ENOENT, "the task never reached the "
                             "head: %s", t->error ? t->error : "no id");
    return mt__task_cancel_id(c, t->id, force, NULL);
}

int mt_task_cancel_id(mt_client_t *c, const char *task_id, bool force,
                      mt_task_state *state)
{
    int st = 0, rc;

    if (!mt__client_check(c) || !task_id || !*task_id)
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or task id");
    if (mt__check_id(c, task_id, MT_ID_TASK) < 0)
        return -MT_EINVAL;
    rc = mt__task_cancel_id(c, task_id, force, &st);
    if (rc == 0 && state)
        *state = (mt_task_state)st;
    return rc;
}
