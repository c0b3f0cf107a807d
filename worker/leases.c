/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leases.c -- the leases held here and their pushed tasks (see leases.h
 * for the life of both).
 *
 * The rule for answering a push: while the head takes reports, a push is
 * answered only after the head has acknowledged the reports of all its
 * tasks, so a driver never holds a result the head could lose. While the
 * head is away (a report call failed, or the node is not registered:
 * mt_leases_head_away) waiting would stall every driver's leased tasks
 * for the whole outage, so a push is answered as soon as its tasks have
 * ended; the runs first copy its reports (ops->keep), which still reach
 * the head, in order, once the node has registered again. The driver may
 * then hold a result a head killed meanwhile has not heard of yet; it
 * hears of it after its restart, from the reports kept here.
 *
 * DESIGN: a lease keeps a FIFO of the slots of the pushes that name it
 * and at most one of them running (a job on the pool); the next starts
 * when it ends (pump). A push is one allocation of slots, answered once
 * every slot has ended and the last report of its tasks is acknowledged
 * (last_seq <= acked). Pushes and leases are counted references: a lease
 * lives while its run is open or a push holds it, and is freed in its
 * timer's close callback, so a lease whose last reference goes inside a
 * call chain stays readable until the chain unwinds (closing set).
 *
 * Callbacks may nest: the pool can end a job inside mt_exec_pool_submit
 * or mt_exec_pool_stop, and a push's done callback runs inside whatever
 * ended its last task. Hence pump() loops instead of recursing (starting
 * is set while a job is handed over) and every change of a lease ends in
 * lease_check(), which decides what follows from the state alone.
 *
 * THREAD: loop thread only.
 */
#include "worker/leases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"

#define LEASE_MAGIC 0x6c656173u /* "leas" */
#define PUSH_MAGIC 0x70757368u  /* "push" */
#define OUTPUT_LOG_MAX 512
#define RUNNING_AFTER_MS 50     /* a task running this long is reported
                                   RUNNING (shorter ones: their final only) */
#define ENV_ID_PREFIX "MANTA_TASK_ID="
#define ENV_ATTEMPT_PREFIX "MANTA_TASK_ATTEMPT="

/* Why a lease ended: its run's text, and the not_run error of its tasks. */
enum lease_why {
    WHY_RETURNED = 0,
    WHY_IDLE = 1,
    WHY_REVOKED = 2,
};

static const char *const end_text[] = {
    "lease returned by its owner",
    "lease idle",
    "lease revoked",
};

static const char *const not_run_text[] = {
    "not run: its lease was returned",
    "not run: its lease ended idle",
    "not run: its lease was revoked",
};

/* Why a running task's job was stopped. */
enum stop_why {
    STOP_NONE = 0,
    STOP_CANCEL = 1,            /* StopTask: CANCELLED */
    STOP_REVOKE = 2,            /* forced revoke: FAILED, system failure */
};

/* Output kept of one stream: its last cap bytes. */
struct tail {
    uint8_t *buf;               /* NULL until there is output */
    uint32_t len;
    uint32_t size;              /* allocated; grows up to cap */
    uint64_t dropped;           /* bytes left out before buf */
};

struct mt_push;
struct lease;

/* One task of a push. Guarded by: loop thread. */
struct slot {
    struct mt_exec_job job;     /* its job on the pool, while running */
    struct mt_push *push;
    struct slot *next;          /* in its lease's queue */
    struct mt_push_task task;   /* borrowed from the request */
    enum stop_why stop;
    char *error;                /* owned error text, or NULL */
    uint8_t *result;            /* owned result bytes */
    struct tail out[2];         /* stdout, stderr */
    uint64_t started;           /* uv_now() when handed to the pool */
    bool running_reported;      /* RUNNING went to the head */
};

/* One push held until answered. Guarded by: loop thread. */
struct mt_push {
    uint32_t magic;             /* PUSH_MAGIC */
    struct mt_leases *ls;
    struct mt_push *prev, *next; /* ls->pushes */
    struct lease *lease;        /* referenced; NULL when refused */
    const char *lease_id;       /* borrowed from the request */
    mt_push_done_fn done;
    void *arg;
    size_t n;
    size_t left;                /* slots not ended (+1 while queueing) */
    uint64_t last_seq;          /* highest report number of its tasks */
    bool waiting;               /* every slot ended: waits for the ack */
    struct slot *slots;         /* n */
    struct mt_push_result *res; /* n, parallel */
};

/* A lease held here. Guarded by: loop thread. */
struct lease {
    uint32_t magic;             /* LEASE_MAGIC */
    struct mt_leases *ls;
    struct lease *prev, *next;  /* ls->leases */
    char id[MT_RUN_ID_MAX + 1];
    uint32_t attempt;
    char *owner;
    char **env;                 /* overlay, then the two ids, NULL */
    size_t n_env;               /* overlay entries */
    char id_env[sizeof(ENV_ID_PREFIX) + MT_RUN_ID_MAX];
    char attempt_env[sizeof(ENV_ATTEMPT_PREFIX) + 12];
    struct slot *qhead, *qtail; /* waiting, in push order */
    struct slot *running;       /* its one job on the pool */
    bool starting;              /* handing running's job to the pool */
    bool returning;             /* a push returned it: no more pushes */
    bool ended;
    bool end_reported;          /* its run was ended (ops->end) */
    enum lease_why why;
    size_t held;                /* pushes holding it */
    size_t refs;                /* held, +1 until end_reported */
    bool closing;               /* refs hit 0: freed when timer closed */
    uv_timer_t idle;            /* idle: ends it; busy: times its task
                                   for the RUNNING report */
    uv_timer_cb timing;         /* which of the two idle runs */
};

/* Every lease and held push. Guarded by: loop thread. */
struct mt_leases {
    struct mt_leases_opts o;
    const struct mt_leases_ops *ops;
    void *ops_arg;
    struct lease *leases;
    struct mt_push *pushes;     /* every push not answered yet */
    uint64_t acked;             /* every report up to this is acked */
    bool away;                  /* the head cannot take reports */
    size_t open;                /* lease timers not closed */
    bool shutting_down;
    void (*closed)(void *);
    void *closed_arg;
};

static void pump(struct lease *l);
static void lease_check(struct lease *l);
static void on_idle(uv_timer_t *tm);
static void on_running(uv_timer_t *tm);

/* ==== the worker's ops ==================================================== */

static void pool_submit(void *arg, struct mt_exec_job *j)
{
    mt_exec_pool_submit(((struct mt_leases *)arg)->o.execs, j);
}

static int pool_stop(void *arg, struct mt_exec_job *j)
{
    return mt_exec_pool_stop(((struct mt_leases *)arg)->o.execs, j);
}

static uint64_t runs_report(void *arg, const struct mt_run_report *r)
{
    return mt_runs_report_pushed(((struct mt_leases *)arg)->o.runs, r);
}

static void runs_flush(void *arg)
{
    mt_runs_flush_pushed(((struct mt_leases *)arg)->o.runs);
}

static void runs_keep(void *arg, uint64_t seq)
{
    mt_runs_keep_pushed(((struct mt_leases *)arg)->o.runs, seq);
}

static void runs_end(void *arg, const char *lease_id, uint32_t attempt,
                     const char *why)
{
    struct mt_leases *ls = arg;

    if (mt_runs_end(ls->o.runs, lease_id, attempt, why) < 0)
        MT_WARN("lease=%s attempt=%u has no open run to end", lease_id,
                attempt);
}

static const struct mt_leases_ops worker_ops = {
    pool_submit, pool_stop, runs_report, runs_flush, runs_end, runs_keep,
};

static int on_lease_started(void *arg, const struct mt_run_spec *s,
                            char *err, size_t len)
{
    return mt_leases_add(arg, s, err, len);
}

static int on_lease_stop(void *arg, const char *lease_id, uint32_t attempt,
                         bool force)
{
    return mt_leases_revoke(arg, lease_id, attempt, force);
}

static void on_acked(void *arg, uint64_t seq)
{
    mt_leases_acked(arg, seq);
}

static void on_away(void *arg, bool away)
{
    mt_leases_head_away(arg, away);
}

static const struct mt_runs_lease_listener listener = {
    on_lease_started, on_lease_stop, on_acked, on_away,
};

/* ==== leases ============================================================== */

struct mt_leases *mt_leases_create(const struct mt_leases_opts *o)
{
    struct mt_leases *ls = mt_xcalloc(1, sizeof(*ls));

    ls->o = *o;
    ls->ops = o->ops ? o->ops : &worker_ops;
    ls->ops_arg = o->ops ? o->ops_arg : ls;
    if (o->runs)
        mt_runs_on_leases(o->runs, &listener, ls);
    return ls;
}

static struct lease *find_lease(const struct mt_leases *ls, const char *id)
{
    for (struct lease *l = ls->leases; l; l = l->next)
        if (!l->closing && strcmp(l->id, id) == 0)
            return l;
    return NULL;
}

static void check_closed(struct mt_leases *ls)
{
    void (*done)(void *) = ls->closed;

    if (!done || ls->open > 0)
        return;
    ls->closed = NULL;
    done(ls->closed_arg);
}

static void on_lease_closed(uv_handle_t *h)
{
    struct lease *l = h->data;
    struct mt_leases *ls = l->ls;

    l->env[l->n_env] = NULL; /* the two id entries are not the env's */
    mt_run_env_free(l->env);
    free(l->owner);
    l->magic = 0;
    free(l);
    ls->open--;
    check_closed(ls);
}

static void lease_unref(struct lease *l)
{
    struct mt_leases *ls = l->ls;

    MT_ASSERT(l->magic == LEASE_MAGIC && l->refs > 0);
    if (--l->refs > 0)
        return;
    l->closing = true;
    if (l->prev)
        l->prev->next = l->next;
    else
        ls->leases = l->next;
    if (l->next)
        l->next->prev = l->prev;
    uv_close((uv_handle_t *)&l->idle, on_lease_closed);
}

/* The environment of the lease's tasks: the spec's and the grant's, then
 * two entries each task overwrites with its ids (fn_env in tasks.c gives
 * a head-placed task the same). */
static void lease_env(struct lease *l, const struct mt_run_spec *s)
{
    const struct mt_kv_list *lists[4] = {&s->env, &s->env_unset,
                                         &s->accel_env, &s->accel_unset};

    l->env = mt_run_env_overlay(lists, 4);
    while (l->env[l->n_env])
        l->n_env++;
    l->env = mt_xrealloc(l->env, (l->n_env + 3) * sizeof(*l->env));
    l->env[l->n_env] = l->id_env;
    l->env[l->n_env + 1] = l->attempt_env;
    l->env[l->n_env + 2] = NULL;
}

static void on_idle(uv_timer_t *tm);

int mt_leases_add(struct mt_leases *ls, const struct mt_run_spec *s,
                  char *err, size_t len)
{
    struct lease *l;

    if (ls->shutting_down) {
        snprintf(err, len, "worker is stopping");
        return -MT_ECLOSED;
    }
    if (find_lease(ls, s->task_id)) {
        snprintf(err, len, "lease %s is already held here", s->task_id);
        return -MT_EEXIST;
    }
    l = mt_xcalloc(1, sizeof(*l));
    l->magic = LEASE_MAGIC;
    l->ls = ls;
    snprintf(l->id, sizeof(l->id), "%s", s->task_id);
    l->attempt = s->attempt;
    l->owner = mt_xstrdup(s->owner_id ? s->owner_id : "");
    lease_env(l, s);
    l->refs = 1;
    uv_timer_init(ls->o.loop, &l->idle);
    l->idle.data = l;
    ls->open++;
    l->next = ls->leases;
    if (ls->leases)
        ls->leases->prev = l;
    ls->leases = l;
    lease_check(l); /* idle from the start */
    return 0;
}

bool mt_leases_held(const struct mt_leases *ls, const char *lease_id)
{
    const struct lease *l = find_lease(ls, lease_id);

    return l && !l->ended;
}

/* ==== pushed tasks: ending ================================================ */

static void push_finish(struct mt_push *p, int err);

/* Every slot of p has ended: answer now, or once its reports are acked. */
static void push_one_done(struct mt_push *p)
{
    MT_ASSERT(p->left > 0);
    if (--p->left > 0)
        return;
    if (p->last_seq <= p->ls->acked) {
        push_finish(p, 0);
        return;
    }
    if (p->ls->away) { /* the rule at the top of this file */
        p->ls->ops->keep(p->ls->ops_arg, p->last_seq);
        push_finish(p, 0);
        return;
    }
    p->waiting = true;
    p->ls->ops->flush(p->ls->ops_arg); /* its answer waits for them */
}

/* A report of s: who it is and which lease runs it (borrowed from s). */
static void report_of(const struct slot *s, struct mt_run_report *rep)
{
    memset(rep, 0, sizeof(*rep));
    rep->task_id = s->task.task_id;
    rep->attempt = s->task.attempt;
    rep->error = "";
    rep->lease_id = s->push->lease_id;
    rep->name = s->task.name;
    rep->function = s->task.function;
    rep->hold_result = s->task.hold_result;
    rep->max_retries = s->task.max_retries;
}

/* Report s's final state to the head, unless it never ran. */
static void slot_report(struct slot *s, const struct mt_push_result *r)
{
    struct mt_leases *ls = s->push->ls;
    struct mt_run_report rep;
    uint64_t seq;

    report_of(s, &rep);
    rep.final = true;
    rep.end = r->state;
    rep.error = r->error;
    rep.result = r->result;
    rep.result_size = r->result_size;
    rep.result_stored = r->stored;
    rep.system_failure = r->system_failure;
    rep.replayable = r->state == MT_RUN_END_FINISHED && r->stored > 0 &&
                     s->task.max_retries > 0;
    rep.args = s->task.args;
    rep.nargs = s->task.nargs;
    rep.code_path = s->task.code_path;
    rep.n_code_path = s->task.n_code_path;
    seq = ls->ops->report(ls->ops_arg, &rep);
    if (seq > s->push->last_seq)
        s->push->last_seq = seq;
}

/* s has ended as its result says (state, error set by the caller). */
static void slot_ended(struct slot *s, bool report)
{
    struct mt_push_result *r = &s->push->res[s - s->push->slots];

    if (s->error)
        r->error = s->error;
    if (report && !s->push->ls->shutting_down)
        slot_report(s, r);
    push_one_done(s->push);
}

/* s ends without running: FAILED, not_run, not reported. */
static void slot_not_run(struct slot *s, const char *why)
{
    struct mt_push_result *r = &s->push->res[s - s->push->slots];

    r->state = MT_RUN_END_FAILED;
    r->not_run = true;
    r->error = why;
    slot_ended(s, false);
}

/* s, queued, ends CANCELLED without running (reported: it was final). */
static void slot_cancel_queued(struct slot *s)
{
    struct mt_push_result *r = &s->push->res[s - s->push->slots];

    r->state = MT_RUN_END_CANCELLED;
    r->error = "cancelled before it ran";
    slot_ended(s, true);
}

/* ==== pushed tasks: running =============================================== */

static struct slot *of_job(struct mt_exec_job *j)
{
    struct slot *s = (struct slot *)((char *)j - offsetof(struct slot, job));

    MT_ASSERT(s->push->magic == PUSH_MAGIC);
    return s;
}

static void on_job_start(struct mt_exec_job *j, int pid)
{
    (void)j;
    (void)pid;
}

/* Keep the last cap bytes of a stream. */
static void tail_add(struct tail *t, uint32_t cap, const uint8_t *p,
                     size_t n)
{
    size_t drop;

    if (n >= cap) {
        t->dropped += t->len + (n - cap);
        t->len = 0;
        p += n - cap;
        n = cap;
    } else if (t->len + n > cap) {
        drop = t->len + n - cap;
        memmove(t->buf, t->buf + drop, t->len - drop);
        t->len -= (uint32_t)drop;
        t->dropped += drop;
    }
    if (n == 0)
        return;
    if (t->len + n > t->size) { /* what is kept, not the cap, is held */
        t->size = t->size * 2 > t->len + n ? t->size * 2
                                           : (uint32_t)(t->len + n);
        t->size = t->size < 256 ? 256 : t->size;
        t->size = t->size > cap ? cap : t->size;
        t->buf = mt_xrealloc(t->buf, t->size);
    }
    memcpy(t->buf + t->len, p, n);
    t->len += (uint32_t)n;
}

static void on_job_output(struct mt_exec_job *j, uint32_t fd, const void *p,
                          size_t n)
{
    struct slot *s = of_job(j);
    uint32_t cap = s->task.output_limit < MT_LEASE_OUTPUT_MAX
                       ? s->task.output_limit
                       : MT_LEASE_OUTPUT_MAX;
    size_t k = n > OUTPUT_LOG_MAX ? OUTPUT_LOG_MAX : n;

    if (fd != 1 && fd != 2)
        return;
    tail_add(&s->out[fd - 1], cap, p, n);
    while (k > 0 && ((const char *)p)[k - 1] == '\n')
        k--;
    MT_DEBUG("task=%s (pushed) fd=%u: %.*s", s->task.task_id, fd, (int)k,
             (const char *)p);
}

/* Record how the job of s ended in its result. */
static void take_outcome(struct slot *s, const struct mt_exec_outcome *o)
{
    struct mt_push_result *r = &s->push->res[s - s->push->slots];

    if (o->end == MT_EXEC_END_OK) {
        r->state = MT_RUN_END_FINISHED;
        r->stored = o->stored;
        if (o->result_size) {
            s->result = mt_xmalloc(o->result_size);
            memcpy(s->result, o->result, o->result_size);
            r->result = s->result;
            r->result_size = o->result_size;
        }
        return;
    }
    r->state = MT_RUN_END_FAILED;
    if (o->end == MT_EXEC_END_STOPPED && s->stop == STOP_REVOKE) {
        r->error = "its lease was revoked";
        r->system_failure = true;
    } else if (o->end == MT_EXEC_END_STOPPED) {
        r->state = MT_RUN_END_CANCELLED;
        r->error = "cancelled";
    } else {
        s->error = mt_xstrdup(o->error && *o->error ? o->error
                                                     : "function failed");
        r->system_failure = o->end == MT_EXEC_END_DIED;
    }
}

static void on_job_end(struct mt_exec_job *j, const struct mt_exec_outcome *o)
{
    struct slot *s = of_job(j);
    struct lease *l = s->push->lease;

    MT_ASSERT(l->running == s);
    l->running = NULL;
    take_outcome(s, o);
    slot_ended(s, true);
    if (!l->starting)
        pump(l);
}

/* Hand s's job to the pool, in the lease's environment. */
static void job_fill(struct lease *l, struct slot *s)
{
    struct mt_exec_request *r = &s->job.req;

    snprintf(l->id_env, sizeof(l->id_env), ENV_ID_PREFIX "%s",
             s->task.task_id);
    snprintf(l->attempt_env, sizeof(l->attempt_env),
             ENV_ATTEMPT_PREFIX "%u", s->task.attempt);
    r->attempt = s->task.attempt;
    r->task_id = (char *)s->task.task_id;
    r->function = (char *)s->task.function;
    r->n_code_path = s->task.n_code_path;
    r->code_path = s->task.code_path;
    r->n_env = (uint32_t)l->n_env + 2;
    r->env = l->env;
    r->nargs = s->task.nargs;
    r->args = (struct mt_exec_blob *)s->task.args;
    r->store_socket = (char *)l->ls->o.store_socket;
    r->store_results = s->task.hold_result;
    s->job.on_start = on_job_start;
    s->job.on_output = on_job_output;
    s->job.on_end = on_job_end;
}

/* Start queued tasks while nothing runs. The pool may end a job inside
 * submit: on_job_end then leaves the next start to this loop. */
static void pump(struct lease *l)
{
    struct slot *s;

    while (!l->running && !l->starting && l->qhead && !l->ended &&
           !l->ls->shutting_down) {
        s = l->qhead;
        l->qhead = s->next;
        if (!l->qhead)
            l->qtail = NULL;
        s->next = NULL;
        l->running = s;
        s->started = uv_now(l->ls->o.loop);
        job_fill(l, s);
        l->starting = true;
        l->ls->ops->submit(l->ls->ops_arg, &s->job);
        l->starting = false;
    }
    lease_check(l);
}

/* ==== ending leases ======================================================= */

/* l ends: its queued tasks come back not_run; with force its running task
 * is killed. Its run ends once nothing runs (lease_check). */
static void lease_end(struct lease *l, enum lease_why why, bool force)
{
    struct slot *s;

    if (!l->ended) {
        l->ended = true;
        l->why = why;
        uv_timer_stop(&l->idle);
        MT_INFO("lease=%s attempt=%u ends: %s", l->id, l->attempt,
                end_text[why]);
        while ((s = l->qhead)) {
            l->qhead = s->next;
            if (!l->qhead)
                l->qtail = NULL;
            s->next = NULL;
            slot_not_run(s, not_run_text[why]);
        }
    }
    s = l->running;
    if (force && s && s->stop == STOP_NONE) {
        s->stop = STOP_REVOKE;
        l->ls->ops->stop(l->ls->ops_arg, &s->job);
    }
    lease_check(l);
}

/* What follows from l's state: a returned lease with nothing left ends;
 * an ended one with nothing running ends its run; an idle one times. */
static void lease_check(struct lease *l)
{
    struct mt_leases *ls = l->ls;

    if (l->closing || ls->shutting_down)
        return;
    if (!l->ended && l->returning && !l->running && !l->qhead) {
        lease_end(l, WHY_RETURNED, false);
        return;
    }
    if (l->ended) {
        if (l->running || l->end_reported)
            return;
        l->end_reported = true;
        ls->ops->end(ls->ops_arg, l->id, l->attempt, end_text[l->why]);
        lease_unref(l);
        return;
    }
    if (!l->running && !l->qhead && l->held == 0) {
        if (!uv_is_active((uv_handle_t *)&l->idle) || l->timing != on_idle)
            uv_timer_start(&l->idle, l->timing = on_idle, ls->o.idle_ms, 0);
    } else if (l->running && !l->running->running_reported) {
        if (!uv_is_active((uv_handle_t *)&l->idle) || l->timing != on_running)
            uv_timer_start(&l->idle, l->timing = on_running,
                           RUNNING_AFTER_MS, 0);
    } else {
        uv_timer_stop(&l->idle);
    }
}

/* l's task has run RUNNING_AFTER_MS: the head hears it runs (the driver's
 * list of its tasks, its result object's holder), once. */
static void on_running(uv_timer_t *tm)
{
    struct lease *l = tm->data;
    struct slot *s = l->running;
    uint64_t ran;
    struct mt_run_report rep;

    if (!s || s->running_reported || l->ended || l->ls->shutting_down) {
        lease_check(l);
        return;
    }
    ran = uv_now(l->ls->o.loop) - s->started;
    if (ran < RUNNING_AFTER_MS) { /* a later task: its own time */
        uv_timer_start(&l->idle, on_running, RUNNING_AFTER_MS - ran, 0);
        return;
    }
    s->running_reported = true;
    report_of(s, &rep);
    rep.running = true;
    l->ls->ops->report(l->ls->ops_arg, &rep);
}

static void on_idle(uv_timer_t *tm)
{
    struct lease *l = tm->data;

    if (!l->ended && !l->running && !l->qhead && l->held == 0)
        lease_end(l, WHY_IDLE, false);
}

int mt_leases_revoke(struct mt_leases *ls, const char *lease_id,
                     uint32_t attempt, bool force)
{
    struct lease *l = find_lease(ls, lease_id);

    if (!l || l->attempt != attempt || l->end_reported || ls->shutting_down)
        return -MT_ENOENT;
    lease_end(l, WHY_REVOKED, force);
    return 0;
}

/* ==== pushes ============================================================== */

static void push_free(struct mt_push *p)
{
    struct mt_leases *ls = p->ls;

    if (p->prev)
        p->prev->next = p->next;
    else
        ls->pushes = p->next;
    if (p->next)
        p->next->prev = p->prev;
    for (size_t i = 0; i < p->n; i++) {
        free(p->slots[i].error);
        free(p->slots[i].result);
        free(p->slots[i].out[0].buf);
        free(p->slots[i].out[1].buf);
    }
    free(p->slots);
    free(p->res);
    p->magic = 0;
    free(p);
}

/* Answer p (err 0: with its results) and let go of its lease. */
static void push_finish(struct mt_push *p, int err)
{
    struct lease *l = p->lease;

    for (size_t i = 0; i < p->n && err == 0; i++) {
        struct slot *s = &p->slots[i];
        struct mt_push_result *r = &p->res[i];

        r->out = s->out[0].buf;
        r->out_len = s->out[0].len;
        r->out_dropped = s->out[0].dropped;
        r->err = s->out[1].buf;
        r->err_len = s->out[1].len;
        r->err_dropped = s->out[1].dropped;
    }
    p->done(p->arg, err, err ? NULL : p->res, err ? 0 : p->n);
    push_free(p);
    if (!l)
        return;
    l->held--;
    lease_check(l);
    lease_unref(l);
}

/* Why r's tasks cannot run on l (NULL: they can). */
static const char *refusal(const struct lease *l, const struct mt_push_req *r)
{
    if (!l)
        return "not run: its lease is not held on this worker";
    if (l->ended)
        return not_run_text[l->why];
    if (l->returning)
        return not_run_text[WHY_RETURNED];
    if (strcmp(l->owner, r->owner_id) != 0)
        return "not run: its lease is held for another owner";
    return NULL;
}

static struct mt_push *push_new(struct mt_leases *ls,
                                const struct mt_push_req *r,
                                mt_push_done_fn done, void *arg)
{
    struct mt_push *p = mt_xcalloc(1, sizeof(*p));

    p->magic = PUSH_MAGIC;
    p->ls = ls;
    p->lease_id = r->lease_id;
    p->done = done;
    p->arg = arg;
    p->n = r->n;
    p->left = r->n + 1; /* ours while queueing: no answer before the end */
    p->slots = mt_xcalloc(r->n + 1, sizeof(*p->slots));
    p->res = mt_xcalloc(r->n + 1, sizeof(*p->res));
    for (size_t i = 0; i < r->n; i++) {
        p->slots[i].push = p;
        p->slots[i].task = r->tasks[i];
        p->res[i].error = "";
    }
    p->next = ls->pushes;
    if (ls->pushes)
        ls->pushes->prev = p;
    ls->pushes = p;
    return p;
}

/* Queue p's slots behind what l already has. */
static void enqueue(struct lease *l, struct mt_push *p)
{
    for (size_t i = 0; i < p->n; i++) {
        struct slot *s = &p->slots[i];

        if (l->qtail)
            l->qtail->next = s;
        else
            l->qhead = s;
        l->qtail = s;
    }
}

void mt_leases_push(struct mt_leases *ls, const struct mt_push_req *r,
                    mt_push_done_fn done, void *arg)
{
    struct lease *l = find_lease(ls, r->lease_id);
    const char *why = refusal(l, r);
    struct mt_push *p;

    if (ls->shutting_down) {
        done(arg, -MT_EUNAVAIL, NULL, 0);
        return;
    }
    p = push_new(ls, r, done, arg);
    if (why) {
        for (size_t i = 0; i < p->n; i++)
            slot_not_run(&p->slots[i], why);
    } else {
        p->lease = l;
        l->held++;
        l->refs++;
        enqueue(l, p);
        if (r->return_lease)
            l->returning = true;
        pump(l);
    }
    push_one_done(p);
}

void mt_leases_acked(struct mt_leases *ls, uint64_t seq)
{
    struct mt_push *p, *next;

    if (seq <= ls->acked)
        return;
    ls->acked = seq;
    for (p = ls->pushes; p; p = next) {
        next = p->next;
        if (p->waiting && p->last_seq <= seq)
            push_finish(p, 0);
    }
}

void mt_leases_head_away(struct mt_leases *ls, bool away)
{
    struct mt_push *p;
    uint64_t seq = 0;

    if (ls->away == away)
        return;
    ls->away = away;
    MT_INFO("head %s: pushes are answered %s", away ? "away" : "back",
            away ? "once their tasks end" : "once the head has their reports");
    if (!away || ls->shutting_down)
        return;
    for (p = ls->pushes; p; p = p->next)
        if (p->waiting && p->last_seq > seq)
            seq = p->last_seq;
    if (seq == 0)
        return;
    ls->ops->keep(ls->ops_arg, seq);
    /* An answer may end a lease, and that other pushes: start over. */
    for (p = ls->pushes; p;) {
        if (!p->waiting) {
            p = p->next;
            continue;
        }
        push_finish(p, 0);
        p = ls->pushes;
    }
}

static size_t visit_slot(const struct slot *s, mt_held_fn fn, void *arg)
{
    struct mt_held_task h;

    if (s->stop != STOP_NONE)
        return 0;
    h.task_id = s->task.task_id;
    h.attempt = s->task.attempt;
    h.lease_id = s->push->lease_id;
    fn(arg, &h);
    return 1;
}

size_t mt_leases_visit_held(const struct mt_leases *ls, mt_held_fn fn,
                            void *arg)
{
    size_t k = 0;

    for (const struct lease *l = ls->leases; l; l = l->next) {
        if (l->running)
            k += visit_slot(l->running, fn, arg);
        for (const struct slot *s = l->qhead; s; s = s->next)
            k += visit_slot(s, fn, arg);
    }
    return k;
}

/* A queued slot of l matching (task_id, attempt), unlinked; or NULL. */
static struct slot *unqueue(struct lease *l, const char *task_id,
                            uint32_t attempt)
{
    struct slot **pp, *prev = NULL;

    for (pp = &l->qhead; *pp; prev = *pp, pp = &(*pp)->next) {
        struct slot *s = *pp;

        if (s->task.attempt != attempt || strcmp(s->task.task_id, task_id))
            continue;
        *pp = s->next;
        if (l->qtail == s)
            l->qtail = prev;
        s->next = NULL;
        return s;
    }
    return NULL;
}

int mt_leases_stop_task(struct mt_leases *ls, const char *task_id,
                        uint32_t attempt)
{
    for (struct lease *l = ls->leases; l && !ls->shutting_down;
         l = l->next) {
        struct slot *s = l->running;

        if (s && s->task.attempt == attempt &&
            strcmp(s->task.task_id, task_id) == 0) {
            MT_INFO("task=%s attempt=%u (pushed) stop requested: killing "
                    "its executor", task_id, attempt);
            if (s->stop == STOP_NONE) {
                s->stop = STOP_CANCEL;
                ls->ops->stop(ls->ops_arg, &s->job);
            }
            return 0;
        }
        if ((s = unqueue(l, task_id, attempt))) {
            MT_INFO("task=%s attempt=%u (pushed) cancelled before it ran",
                    task_id, attempt);
            slot_cancel_queued(s);
            lease_check(l);
            return 0;
        }
    }
    return -MT_ENOENT;
}

/* ==== shutdown ============================================================ */

void mt_leases_shutdown(struct mt_leases *ls)
{
    struct lease *l, *next;

    if (!ls || ls->shutting_down)
        return;
    ls->shutting_down = true;
    /* The pool has forgotten every job: nothing of ours runs any more. */
    for (l = ls->leases; l; l = l->next) {
        uv_timer_stop(&l->idle);
        l->qhead = l->qtail = NULL;
        l->running = NULL;
    }
    while (ls->pushes)
        push_finish(ls->pushes, -MT_EUNAVAIL);
    for (l = ls->leases; l; l = next) {
        next = l->next;
        if (!l->end_reported) {
            l->end_reported = true;
            lease_unref(l);
        }
    }
}

void mt_leases_close(struct mt_leases *ls, void (*done)(void *), void *arg)
{
    mt_leases_shutdown(ls);
    ls->closed = done;
    ls->closed_arg = arg;
    check_closed(ls);
}

void mt_leases_destroy(struct mt_leases *ls)
{
    if (!ls)
        return;
    MT_ASSERT(!ls->leases && !ls->pushes);
    free(ls);
}
