/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tasks.c -- the head's task service (see tasks.h): submission, the
 * scheduler's decisions, hand-over to workers, their reports, retries,
 * cancels, and telling the followers of every change.
 *
 * DESIGN: every change of a task goes through notify() (or the end of the
 * task through end_task(), which notifies), so the listeners see each
 * state once and in order. Hand-overs are batched per decide pass: a
 * placement queues the task on its node's batch (workers.h) and the end
 * of the pass sends one RunTasks per node.
 *
 * Attempts: a task's attempt number moves only when a run may have
 * started and is known dead (its executor or node died); a hand-over that
 * failed in transport holds the task on its suspected node instead (see
 * undelivered()). A finished function task runs again as its next attempt
 * when the object directory needs its lost result rebuilt (on_rerun()).
 *
 * THREAD: the head's loop thread only.
 */
#include "head/tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "sched/accel_env.h"

#define MAX_LISTENERS 8
#define MAX_RESULT_BYTES (8u << 20)
#define MAX_UNDELIVERED 8        /* hand-overs of one task that never arrive */

struct listener {
    const struct mt_task_listener *l;
    void *arg;
};

struct mt_head_tasks {
    struct mt_task_table *table;
    struct mt_node_table *nodes;
    struct mt_head_sched *hs;
    struct mt_head_workers *workers;
    struct mt_head_pgs *pgs;
    struct mt_head_objects *objs;
    struct listener ls[MAX_LISTENERS];
    size_t n_ls;
    bool closing;
    struct mt_head_task_counts counts;
    char msg[512];               /* why a submit was refused */
};

static void on_decision(void *arg, uint64_t num, int status,
                        const struct mt_grant *g);
static void on_pass_done(void *arg);
static void on_pg_changed(void *arg, struct mt_head_pg *pg);
static void on_run_done(void *arg, uint64_t num, uint32_t attempt, int err,
                        const char *why);
static void on_args(void *arg, struct mt_head_task *t, const char *why);
static int on_rerun(void *arg, struct mt_head_task *t, char *why, size_t len);
static int admit_and_queue(struct mt_head_tasks *ts, struct mt_head_task *t,
                           const char **why);
static void hand_over(struct mt_head_tasks *ts, struct mt_head_task *t,
                      const struct mt_node *n);
static void stop_on_worker(struct mt_head_tasks *ts, struct mt_head_task *t,
                           bool force);

static const struct mt_head_sched_sink task_sink = {
    .task = on_decision,
    .pass_done = on_pass_done,
};

static const struct mt_head_pg_listener pg_listener = {
    .changed = on_pg_changed,
};

struct mt_head_tasks *mt_head_tasks_create(struct mt_task_table *table,
                                           struct mt_node_table *nodes,
                                           struct mt_head_sched *hs,
                                           struct mt_head_workers *workers,
                                           struct mt_head_pgs *pgs,
                                           struct mt_head_objects *objs)
{
    struct mt_head_tasks *ts = mt_xcalloc(1, sizeof(*ts));

    mt_prom_hist_init(&ts->counts.sched_latency, mt_prom_seconds_buckets,
                      mt_prom_seconds_buckets_n);
    mt_prom_hist_init(&ts->counts.run_time, mt_prom_seconds_buckets,
                      mt_prom_seconds_buckets_n);
    ts->table = table;
    ts->nodes = nodes;
    ts->hs = hs;
    ts->workers = workers;
    ts->pgs = pgs;
    ts->objs = objs;
    mt_head_sched_add_sink(hs, &task_sink, ts);
    mt_head_pgs_listen(pgs, &pg_listener, ts);
    mt_head_workers_on_run(workers, on_run_done, ts);
    mt_head_objects_on_args(objs, on_args, ts);
    mt_head_objects_on_rerun(objs, on_rerun, ts);
    return ts;
}

void mt_head_tasks_close(struct mt_head_tasks *ts)
{
    ts->closing = true;
}

void mt_head_tasks_destroy(struct mt_head_tasks *ts)
{
    free(ts);
}

void mt_head_tasks_listen(struct mt_head_tasks *ts,
                          const struct mt_task_listener *l, void *arg)
{
    MT_ASSERT(ts->n_ls < MAX_LISTENERS);
    ts->ls[ts->n_ls].l = l;
    ts->ls[ts->n_ls++].arg = arg;
}

struct mt_task_table *mt_head_tasks_table(struct mt_head_tasks *ts)
{
    return ts->table;
}

struct mt_head_task_counts mt_head_tasks_counts(const struct mt_head_tasks *ts)
{
    return ts->counts;
}

/* ---- followers ------------------------------------------------------------ */

static void notify(struct mt_head_tasks *ts, struct mt_head_task *t)
{
    for (size_t i = 0; i < ts->n_ls; i++)
        if (ts->ls[i].l->changed)
            ts->ls[i].l->changed(ts->ls[i].arg, t);
}

static void notify_output(struct mt_head_tasks *ts, struct mt_head_task *t,
                          uint32_t fd, const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < ts->n_ls; i++)
        if (ts->ls[i].l->output)
            ts->ls[i].l->output(ts->ls[i].arg, t, fd, data, len);
}

/*
 * An attempt started: set start_ms (keep: only when not set yet) and,
 * the first time, count its wait since submission.
 */
static void set_started(struct mt_head_tasks *ts, struct mt_head_task *t,
                        bool keep)
{
    int64_t now = mt_now_wall_ms();
    bool first = t->start_ms == 0;

    if (first || !keep)
        t->start_ms = now;
    if (first && t->submit_ms > 0 && now >= t->submit_ms)
        mt_prom_hist_observe(&ts->counts.sched_latency,
                             (double)(now - t->submit_ms) / 1000.0);
}

/* ---- ending --------------------------------------------------------------- */

static void release_grant(struct mt_head_tasks *ts, struct mt_head_task *t)
{
    if (t->has_grant)
        mt_sched_on_task_finished(mt_head_sched_lib(ts->hs), t->grant.handle);
    t->has_grant = false;
    t->held = false;
}

void mt_head_tasks_end(struct mt_head_tasks *ts, struct mt_head_task *t,
                       enum mt_head_task_state state, int exit_code,
                       const char *error)
{
    if (mt_head_task_terminal(t))
        return;
    release_grant(ts, t);
    mt_task_table_finish(ts->table, t, state, exit_code, error,
                         mt_now_wall_ms());
    ts->counts.finished++;
    if (t->state <= MT_TASK_CANCELLED)
        ts->counts.ended[t->state]++;
    if (t->start_ms > 0 && t->end_ms >= t->start_ms)
        mt_prom_hist_observe(&ts->counts.run_time,
                             (double)(t->end_ms - t->start_ms) / 1000.0);
    MT_DEBUG("task %s %s exit=%d %s", t->id, mt_head_task_state_name(t->state),
             t->exit_code, t->error ? t->error : "");
    notify(ts, t);
    mt_head_sched_kick(ts->hs);
}

void mt_head_tasks_fail(struct mt_head_tasks *ts, struct mt_head_task *t,
                        const char *why)
{
    if (t->state == MT_TASK_PENDING)
        mt_sched_task_cancel(mt_head_sched_lib(ts->hs), t->num);
    mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, why);
}

void mt_head_tasks_actor_died(struct mt_head_tasks *ts,
                              struct mt_head_task *t, const char *why)
{
    char *msg;

    if (mt_head_task_terminal(t))
        return;
    msg = strncmp(why, "actor died", 10) == 0
              ? mt_xstrdup(why)
              : mt_xasprintf("actor died: %s", why);
    t->actor_died = true;
    mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, msg);
    free(msg);
}

/* ---- queueing ----------------------------------------------------------- */

/* Storage for a scheduler request built from a def. */
struct sched_req {
    struct mt_task_spec spec;
    struct mt_head_sel sel;
};

/* Where t may go: strategy, affinity, group and bundle. */
static int place(struct mt_head_tasks *ts, struct mt_head_task *t,
                 struct sched_req *r, const char **why)
{
    const struct mt_task_def *d = &t->def;
    const struct mt_node *n;
    struct mt_head_pg *pg;

    switch (d->place) {
    case MT_PLACE_DEFAULT:
        /* Prefer the node holding the biggest object argument. */
        if (!r->spec.selector &&
            (n = mt_head_objects_biggest_holder(ts->objs, t))) {
            r->spec.strategy = MT_PLACE_NODE_AFFINITY;
            r->spec.affinity_node = n->sched_node;
            r->spec.affinity_soft = true;
        }
        return 0;
    case MT_PLACE_SPREAD:
        r->spec.strategy = MT_PLACE_SPREAD;
        return 0;
    case MT_PLACE_NODE_AFFINITY:
        n = d->affinity_node ? mt_node_table_find(ts->nodes, d->affinity_node)
                             : NULL;
        if ((!n || n->sched_node == UINT32_MAX) && d->affinity_soft)
            return 0; /* it prefers a node that is gone: run anywhere */
        if (!n || n->sched_node == UINT32_MAX) {
            *why = "affinity node is not a live node of this cluster";
            return -MT_EINVAL;
        }
        r->spec.strategy = MT_PLACE_NODE_AFFINITY;
        r->spec.affinity_node = n->sched_node;
        r->spec.affinity_soft = d->affinity_soft;
        return 0;
    default:
        pg = mt_head_pg_find(ts->pgs, d->pg_id);
        if (!pg || pg->state == MT_HEAD_PG_REMOVED) {
            *why = "no such placement group (or it was removed)";
            return -MT_ENOENT;
        }
        if (d->bundle < -1 || d->bundle >= (int32_t)pg->nbundles) {
            *why = "bundle index out of range (-1 means any bundle)";
            return -MT_EINVAL;
        }
        r->spec.strategy = MT_PLACE_PG;
        r->spec.pg = pg->num;
        r->spec.bundle = d->bundle;
        t->pg = pg->num;
        return 0;
    }
}

int mt_head_tasks_enqueue(struct mt_head_tasks *ts, struct mt_head_task *t,
                          const char **why)
{
    struct sched_req r;
    int rc;

    mt_task_spec_init(&r.spec, t->num);
    rc = mt_head_sched_res(ts->hs, &t->def.res, true, &r.spec.res, why);
    if (rc < 0)
        return rc;
    r.spec.priority = t->def.priority;
    r.spec.selector = mt_head_sched_selector(&t->def.sel, &r.sel);
    if ((rc = place(ts, t, &r, why)) < 0)
        return rc;
    rc = mt_sched_on_task_submitted(mt_head_sched_lib(ts->hs), &r.spec,
                                    (uint64_t)mt_now_mono_ms());
    if (rc < 0) {
        *why = rc == -MT_EINVAL ? "the scheduler rejected the request (bad "
                                  "resources, GPU not whole above 1, or bad "
                                  "selector)"
                                : mt_strerror(rc);
        return rc;
    }
    mt_head_sched_kick(ts->hs);
    return 0;
}

/* Arguments all READY (why NULL), or one failed (why): queue or fail t. */
static void on_args(void *arg, struct mt_head_task *t, const char *why)
{
    struct mt_head_tasks *ts = arg;

    if (why) {
        mt_head_tasks_fail(ts, t, why);
        return;
    }
    t->state = MT_TASK_PENDING;
    if (mt_head_tasks_enqueue(ts, t, &why) < 0) {
        mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, why);
        return;
    }
    notify(ts, t);
}

/* ---- submission ------------------------------------------------------------ */

struct mt_head_task *mt_head_tasks_add(struct mt_head_tasks *ts,
                                       struct mt_task_def *def,
                                       int max_retries)
{
    return mt_task_table_add(ts->table, def, max_retries, mt_now_wall_ms());
}

static bool actor_kind(const struct mt_task_def *d)
{
    return d->kind == MT_TASK_KIND_ACTOR_CREATE ||
           d->kind == MT_TASK_KIND_ACTOR_METHOD;
}

/*
 * Take t's arguments, then queue t or let it wait for them. RET 0, or t
 * ended FAILED (*why says why): 2 (an argument failed), -MT_E* (refused:
 * an unknown or bad argument, or -MT_EINVAL: the scheduler said no).
 */
static int admit_and_queue(struct mt_head_tasks *ts, struct mt_head_task *t,
                           const char **why)
{
    /* msg is read by the caller before the next submit (loop thread). */
    int rc = mt_head_objects_admit(ts->objs, t, ts->msg, sizeof(ts->msg));

    if (rc < 0 || rc == 2) {
        mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, ts->msg);
        *why = ts->msg;
        return rc;
    }
    if (rc == 1) {
        t->state = MT_TASK_WAITING_FOR_ARGS;
        return 0;
    }
    if (mt_head_tasks_enqueue(ts, t, why) < 0) {
        mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, *why);
        return -MT_EINVAL; /* a bad request */
    }
    return 0;
}

/* Check def and add it under num (0: the next number). RET as
 * mt_head_tasks_submit. */
static struct mt_head_task *submit_num(struct mt_head_tasks *ts,
                                       uint64_t num, struct mt_task_def *def,
                                       const char **why, int *err)
{
    struct mt_head_task *t;
    int rc;

    *err = -MT_EINVAL;
    if (!(*why = mt_task_def_check(def)) && actor_kind(def))
        *why = "actors are created and called with SubmitTask, one at a time";
    if (*why) {
        mt_task_def_release(def);
        return NULL;
    }
    t = num ? mt_task_table_add_num(ts->table, num, def, def->max_retries,
                                    mt_now_wall_ms())
            : mt_head_tasks_add(ts, def, def->max_retries);
    if (!t) { /* the caller looked: not reached */
        *why = "task_id is taken";
        mt_task_def_release(def);
        return NULL;
    }
    rc = admit_and_queue(ts, t, why);
    if (rc != 0)
        *err = rc;
    return rc == 0 || rc == 2 ? t : NULL;
}

struct mt_head_task *mt_head_tasks_submit(struct mt_head_tasks *ts,
                                          struct mt_task_def *def,
                                          const char **why, int *err)
{
    return submit_num(ts, 0, def, why, err);
}

/* Whether t is what a driver's repeated submit of def would have made. */
static bool same_submit(const struct mt_head_task *t,
                        const struct mt_task_def *def)
{
    const char *a = t->def.owner_id ? t->def.owner_id : "";
    const char *b = def->owner_id ? def->owner_id : "";

    return !t->leased && t->def.kind == def->kind && strcmp(a, b) == 0;
}

struct mt_head_task *mt_head_tasks_submit_as(struct mt_head_tasks *ts,
                                             const char *task_id,
                                             struct mt_task_def *def,
                                             const char **why, int *err)
{
    struct mt_head_task *t;
    uint64_t num = 0;

    *err = -MT_EINVAL;
    if (mt_num_id_parse(MT_ID_TASK, task_id, &num) < 0 ||
        !(num & MT_NUM_ID_DRIVER_BIT)) {
        *why = "task_id: 't' and 15 hex digits with bit 59 set (a number "
               "the driver chose)";
        mt_task_def_release(def);
        return NULL;
    }
    if ((t = mt_task_table_find(ts->table, num))) {
        bool same = same_submit(t, def);

        mt_task_def_release(def);
        if (same)
            return t; /* submitted again: the same task */
        *why = "task_id is taken by another task";
        *err = -MT_EEXIST;
        return NULL;
    }
    return submit_num(ts, num, def, why, err);
}

/* ---- retries ------------------------------------------------------------- */

/* Attempts t may make: its retries and the first (an actor without a
 * restart limit has INT_MAX retries). */
static long long tries(const struct mt_head_task *t)
{
    return (long long)t->max_retries + 1;
}

/*
 * A system failure (lost node, dead executor): run the task again while
 * max_retries allows, else fail it with what (e.g. "worker died: ...").
 */
static void retry_or_fail(struct mt_head_tasks *ts, struct mt_head_task *t,
                          const char *what)
{
    const char *why = NULL;
    char *msg;

    if (t->def.kind == MT_TASK_KIND_ACTOR_METHOD) {
        mt_head_tasks_actor_died(ts, t, what);
        return;
    }
    release_grant(ts, t);
    if (t->cancel_requested) {
        mt_head_tasks_end(ts, t, MT_TASK_CANCELLED, -1,
                          "cancelled (its worker died)");
        return;
    }
    if (t->attempt >= (uint32_t)t->max_retries) {
        msg = mt_xasprintf("%s (attempt %u of %lld)", what, t->attempt + 1,
                           tries(t));
        mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, msg);
        free(msg);
        return;
    }
    t->attempt++;
    ts->counts.retried++;
    t->state = MT_TASK_PENDING;
    msg = mt_xasprintf("%s; retrying (attempt %u of %lld)", what,
                       t->attempt + 1, tries(t));
    MT_WARN("task %s: %s", t->id, msg);
    mt_head_task_set_error(t, msg);
    free(msg);
    if (mt_head_tasks_enqueue(ts, t, &why) < 0) {
        mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, why);
        return;
    }
    notify(ts, t);
}

/* Lineage (objects.h): run finished t again to rebuild its lost result. */
static int on_rerun(void *arg, struct mt_head_task *t, char *why, size_t len)
{
    struct mt_head_tasks *ts = arg;
    const char *w = NULL;
    char *msg;

    if (t->attempt >= (uint32_t)t->max_retries) {
        snprintf(why, len, "task %s, which made it, has no retries left "
                 "(attempt %u of %lld)", t->id, t->attempt + 1, tries(t));
        return -1;
    }
    mt_task_table_revive(ts->table, t);
    ts->counts.retried++;
    msg = mt_xasprintf("its result was lost; running it again to rebuild it "
                       "(attempt %u of %lld)", t->attempt + 1, tries(t));
    MT_WARN("task %s: %s", t->id, msg);
    mt_head_task_set_error(t, msg);
    free(msg);
    if (admit_and_queue(ts, t, &w) == 0)
        notify(ts, t);
    return 0;
}

/* t goes back to the queue at the same attempt (it never ran). */
static void requeue(struct mt_head_tasks *ts, struct mt_head_task *t)
{
    const char *why = NULL;

    release_grant(ts, t);
    if (t->cancel_requested) {
        mt_head_tasks_end(ts, t, MT_TASK_CANCELLED, -1, "cancelled");
        return;
    }
    t->state = MT_TASK_PENDING;
    if (mt_head_tasks_enqueue(ts, t, &why) < 0) {
        mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, why);
        return;
    }
    notify(ts, t);
}

static void node_lost(struct mt_head_tasks *ts, struct mt_head_task *t)
{
    char *what;

    if (t->held) { /* its hand-over never arrived: not an attempt */
        requeue(ts, t);
        return;
    }
    what = mt_xasprintf("worker died: node %s was lost while running the "
                        "task", t->node_id && *t->node_id ? t->node_id : "?");

    retry_or_fail(ts, t, what);
    free(what);
}

/*
 * The tasks placed on a node, for when it dies or comes back: found in one
 * unsorted pass over the table, and only they are sorted (newest first).
 * Sorting the whole table instead cost a thousand nodes coming back at
 * once a thousand sorts of every task kept (100,000 with
 * --keep-finished-tasks): the head stalled, more nodes timed out, and so
 * on. They are kept by number and looked up again before each is handled,
 * since handling one can end others (a gang's members) and ending tasks
 * forgets old ones.
 */
struct placed {
    uint64_t seq;
    uint64_t num;
};

struct placed_ctx {
    const char *node_id;
    struct placed *v;
    size_t n;
    size_t cap;
};

static bool placed_here(const struct mt_head_task *t, const char *node_id)
{
    return (t->state == MT_TASK_SCHEDULED || t->state == MT_TASK_RUNNING) &&
           t->node_id && strcmp(t->node_id, node_id) == 0;
}

static bool collect_placed(void *arg, struct mt_head_task *t)
{
    struct placed_ctx *c = arg;

    if (placed_here(t, c->node_id)) {
        mt_xgrow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v));
        c->v[c->n++] = (struct placed){t->seq, t->num};
    }
    return true;
}

static int placed_newest_first(const void *a, const void *b)
{
    uint64_t x = ((const struct placed *)a)->seq;
    uint64_t y = ((const struct placed *)b)->seq;

    return x < y ? 1 : x > y ? -1 : 0;
}

/* Call fn on each task still placed on node_id, newest first. */
static void visit_placed(struct mt_head_tasks *ts, const char *node_id,
                         void (*fn)(struct mt_head_tasks *ts,
                                    struct mt_head_task *t))
{
    struct placed_ctx c = {node_id, NULL, 0, 0};
    struct mt_head_task *t;

    mt_task_table_visit(ts->table, collect_placed, &c);
    if (c.n > 1)
        qsort(c.v, c.n, sizeof(*c.v), placed_newest_first);
    for (size_t i = 0; i < c.n; i++) {
        t = mt_task_table_find(ts->table, c.v[i].num);
        if (t && placed_here(t, node_id))
            fn(ts, t);
    }
    free(c.v);
}

void mt_head_tasks_node_lost(struct mt_head_tasks *ts, const char *node_id)
{
    visit_placed(ts, node_id, node_lost);
}

/* ---- after a head restart ------------------------------------------------- */

/* Charge restored placed t's stored grant on its node again. RET 0 or
 * -MT_E* (node not here, or its room or group is gone). */
static int adopt(struct mt_head_tasks *ts, struct mt_head_task *t)
{
    struct mt_node *n = t->node_id ? mt_node_table_find(ts->nodes, t->node_id)
                                   : NULL;
    struct mt_grant want = t->grant, got;
    struct sched_req r;
    const char *why;
    int rc;

    if (!n || n->state != MT_NODE_ALIVE || n->sched_node == UINT32_MAX)
        return -MT_ENOENT;
    mt_task_spec_init(&r.spec, t->num);
    rc = mt_head_sched_res(ts->hs, &t->def.res, true, &r.spec.res, &why);
    if (rc < 0)
        return rc;
    want.node = n->sched_node;
    rc = mt_sched_adopt(mt_head_sched_lib(ts->hs), &r.spec, &want, &got);
    if (rc < 0)
        return rc;
    t->grant = got;
    t->has_grant = true;
    return 0;
}

void mt_head_tasks_resume(struct mt_head_tasks *ts, struct mt_head_task *t)
{
    const char *why = NULL;
    int rc;

    if (mt_head_task_terminal(t) || t->leased) /* leased: its lease's */
        return;
    if (t->def.kind == MT_TASK_KIND_ACTOR_METHOD) {
        mt_head_tasks_actor_died(ts, t, "actor died: the call was lost in a "
                                        "head restart");
        return;
    }
    if (t->state == MT_TASK_WAITING_FOR_ARGS || t->state == MT_TASK_PENDING) {
        rc = mt_head_objects_resume(ts->objs, t, ts->msg, sizeof(ts->msg));
        if (rc == 2)
            mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, ts->msg);
        else if (rc == 1)
            t->state = MT_TASK_WAITING_FOR_ARGS;
        else if (mt_head_tasks_enqueue(ts, t, &why) < 0)
            mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, why);
        else
            t->state = MT_TASK_PENDING;
        return;
    }
    if ((rc = adopt(ts, t)) < 0) {
        MT_WARN("task %s: cannot take back its place on node %s: %s", t->id,
                t->node_id ? t->node_id : "?", mt_strerror(rc));
        mt_head_tasks_lost(ts, t, t->state == MT_TASK_SCHEDULED,
                           "lost in a head restart (its node or its room "
                           "there is gone)");
    }
}

void mt_head_tasks_lost(struct mt_head_tasks *ts, struct mt_head_task *t,
                        bool never_ran, const char *what)
{
    if (mt_head_task_terminal(t))
        return;
    if (t->node_id && t->state == MT_TASK_RUNNING)
        stop_on_worker(ts, t, true); /* in case it still runs somewhere */
    if (never_ran)
        requeue(ts, t);
    else
        retry_or_fail(ts, t, what);
}

/* ---- hand-overs that never arrived ---------------------------------------- */

/*
 * The RunTasks call carrying t failed in transport: it may never have
 * reached the worker, so it is not an attempt of t. The node is suspected
 * at once (nothing new goes there until it reports again) and t waits there,
 * holding its grant, because a retry elsewhere would run it twice if the
 * node did take it. When the node reports again t is handed over again (a
 * worker takes each attempt once); when it is declared dead, t is queued
 * again at the same attempt (node_lost). A task no node ever takes fails
 * after MAX_UNDELIVERED hand-overs.
 */
static void undelivered(struct mt_head_tasks *ts, struct mt_head_task *t,
                        const char *why)
{
    struct mt_node *n = mt_node_table_find(ts->nodes, t->node_id);
    char *msg;

    MT_DEBUG("task %s: hand-over to node %s failed: %s", t->id, t->node_id,
             why);
    if (++t->undelivered > MAX_UNDELIVERED) {
        msg = mt_xasprintf("no worker took the task (%d hand-overs failed; "
                           "last: %s)", MAX_UNDELIVERED, why);
        mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, msg);
        free(msg);
        return;
    }
    if (!n || n->state != MT_NODE_ALIVE) {
        requeue(ts, t);
        return;
    }
    t->held = true;
    mt_head_sched_suspect(ts->hs, n, why);
}

static void hand_over_held(struct mt_head_tasks *ts, struct mt_head_task *t)
{
    struct mt_node *n;

    if (!t->held || t->state != MT_TASK_SCHEDULED)
        return;
    t->held = false;
    if ((n = mt_node_table_find(ts->nodes, t->node_id)))
        hand_over(ts, t, n);
}

void mt_head_tasks_node_back(struct mt_head_tasks *ts, const char *node_id)
{
    visit_placed(ts, node_id, hand_over_held);
    mt_head_sched_kick(ts->hs); /* the batch goes at the end of a pass */
}

/* ---- stopping -------------------------------------------------------------- */

static void stop_on_worker(struct mt_head_tasks *ts, struct mt_head_task *t,
                           bool force)
{
    mt_head_workers_stop_task(ts->workers, t->node_id, t->id, t->attempt,
                              force);
}

void mt_head_tasks_kill(struct mt_head_tasks *ts, struct mt_head_task *t)
{
    if (t->state == MT_TASK_RUNNING)
        stop_on_worker(ts, t, true);
}

/* End t CANCELLED when it has not been placed; RET true if it was. */
static bool cancel_unplaced(struct mt_head_tasks *ts, struct mt_head_task *t,
                            const char *why)
{
    if (t->state != MT_TASK_PENDING && t->state != MT_TASK_WAITING_FOR_ARGS)
        return false;
    if (t->state == MT_TASK_PENDING)
        mt_sched_task_cancel(mt_head_sched_lib(ts->hs), t->num);
    mt_head_tasks_end(ts, t, MT_TASK_CANCELLED, -1, why);
    return true;
}

void mt_head_tasks_cancel(struct mt_head_tasks *ts, struct mt_head_task *t,
                          bool force)
{
    if (mt_head_task_terminal(t) ||
        cancel_unplaced(ts, t, "cancelled before it ran"))
        return;
    t->cancel_requested = true;
    if (t->state == MT_TASK_RUNNING)
        stop_on_worker(ts, t, force);
}

void mt_head_tasks_stop(struct mt_head_tasks *ts, struct mt_head_task *t,
                        const char *reason)
{
    if (mt_head_task_terminal(t))
        return;
    mt_head_task_set_error(t, reason);
    if (cancel_unplaced(ts, t, reason))
        return;
    t->cancel_requested = true;
    if (t->state == MT_TASK_RUNNING)
        stop_on_worker(ts, t, true);
}

struct stop_ctx {
    uint64_t pg;
    uint64_t *v;                 /* numbers: a stop may end (and free)
                                    another task of the group */
    size_t n, cap;
};

static bool in_group(void *arg, struct mt_head_task *t)
{
    struct stop_ctx *c = arg;

    if (t->pg == c->pg && !mt_head_task_terminal(t) &&
        t->state != MT_TASK_PENDING) {
        mt_xgrow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v));
        c->v[c->n++] = t->num;
    }
    return true;
}

/* A group was removed: stop the tasks running in it (found in one pass in
 * no order: a removal must not cost a sort of the whole table). */
static void on_pg_changed(void *arg, struct mt_head_pg *pg)
{
    struct mt_head_tasks *ts = arg;
    struct stop_ctx c = {pg->num, NULL, 0, 0};

    if (pg->state != MT_HEAD_PG_REMOVED)
        return;
    mt_task_table_visit(ts->table, in_group, &c);
    for (size_t i = 0; i < c.n; i++) {
        struct mt_head_task *t = mt_task_table_find(ts->table, c.v[i]);

        if (t && !mt_head_task_terminal(t))
            mt_head_tasks_stop(ts, t, "its placement group was removed");
    }
    free(c.v);
}

/* ---- placement and hand-over ----------------------------------------------- */

/* The accelerator env of a grant, computed by sched (accel_env.h): GPUs
 * and TPU chips. A TPU grant on a host without a slice identity (chips
 * offered by --resources) still names its chips. */
static void grant_env(struct mt_head_tasks *ts, const struct mt_head_task *t,
                      const struct mt_node *n, const struct mt_grant *g,
                      struct mt_env *env)
{
    char chips[16 * MT_MAX_TPU_CHIPS] = "";
    size_t len = 0;
    int rc = mt_sched_grant_env(mt_head_sched_lib(ts->hs), g, env);

    /* Like CUDA_VISIBLE_DEVICES="": a task granted no chips on a TPU host
     * must not open the chips of the tasks that were. A gang member's chips
     * are its gang's (TPU_VISIBLE_CHIPS comes with the gang's env). */
    if (!g->tpu_chips && !t->gang && mt_qty_list_get(&n->total, "TPU") > 0)
        mt_env_set(env, "TPU_VISIBLE_CHIPS", "");
    if (rc == 0 || !g->tpu_chips)
        return;
    MT_DEBUG("grant %llu: TPU env without a slice shape: %s",
             (unsigned long long)g->handle, mt_strerror(rc));
    for (uint32_t m = g->tpu_chips; m && len < sizeof(chips) - 16;
         m &= m - 1)
        len += (size_t)snprintf(chips + len, sizeof(chips) - len, "%s%d",
                                len ? "," : "", __builtin_ctz(m));
    mt_env_set(env, "TPU_VISIBLE_CHIPS", chips);
}

/* Queue t on node n's batch (sent at the end of the pass). */
static void hand_over(struct mt_head_tasks *ts, struct mt_head_task *t,
                      const struct mt_node *n)
{
    struct mt_obj_loc *locs;
    struct mt_env env;
    size_t nlocs;

    mt_env_init(&env);
    grant_env(ts, t, n, &t->grant, &env);
    locs = mt_head_objects_locate(ts->objs, t, n, &nlocs);
    mt_head_workers_queue(ts->workers, n, t, &env, locs, nlocs);
}

/* t was placed with grant g: hand it to its node at the end of the pass. */
static void dispatch(struct mt_head_tasks *ts, struct mt_head_task *t,
                     const struct mt_grant *g)
{
    struct mt_node *n = mt_head_sched_node(ts->hs, g->node);

    t->state = MT_TASK_SCHEDULED;
    t->grant = *g;
    t->has_grant = true;
    t->infeasible = false;
    mt_head_task_set_error(t, NULL);
    mt_head_task_set_node(t, n ? n->id : "");
    ts->counts.dispatched++;
    notify(ts, t);
    if (!n) {
        node_lost(ts, t);
        return;
    }
    hand_over(ts, t, n);
}

/* The scheduler says no node can ever run t (reported once). */
static void infeasible(struct mt_head_tasks *ts, struct mt_head_task *t)
{
    const struct mt_task_def *d = &t->def;
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char q[32];

    /* In a placement group it is the bundle that is too small. */
    if (d->place == MT_PLACE_PG && d->bundle >= 0)
        mt_strbuf_addf(&sb, "infeasible: bundle %d of placement group %s "
                       "can never hold {", (int)d->bundle, d->pg_id);
    else if (d->place == MT_PLACE_PG)
        mt_strbuf_addf(&sb, "infeasible: no bundle of placement group %s "
                       "can ever hold {", d->pg_id);
    else
        mt_strbuf_adds(&sb, "infeasible: no node in the cluster can ever "
                            "satisfy {");
    for (size_t i = 0; i < d->res.n; i++)
        mt_strbuf_addf(&sb, "%s%s: %s", i ? ", " : "", d->res.v[i].name,
                       mt_qty_format(d->res.v[i].qty, q, sizeof(q)));
    if (d->res.n == 0)
        mt_strbuf_adds(&sb, "CPU: 1");
    if (d->place == MT_PLACE_PG)
        mt_strbuf_adds(&sb, "}; ask for at most what a bundle has (it stays "
                            "pending until cancelled)");
    else
        mt_strbuf_addf(&sb, "}%s; it stays pending until such a node joins",
                       d->sel.n ? " with its label selector" : "");
    t->infeasible = true;
    mt_head_task_set_error(t, mt_strbuf_str(&sb));
    MT_WARN("task %s %s", t->id, mt_strbuf_str(&sb));
    mt_strbuf_release(&sb);
    notify(ts, t);
}

static void on_decision(void *arg, uint64_t num, int status,
                        const struct mt_grant *g)
{
    struct mt_head_tasks *ts = arg;
    struct mt_head_task *t = mt_task_table_find(ts->table, num);

    if (!t || t->state != MT_TASK_PENDING) {
        /* Cancelled meanwhile: give the room back. */
        if (status == 0)
            mt_sched_on_task_finished(mt_head_sched_lib(ts->hs), g->handle);
        return;
    }
    if (status == 0)
        dispatch(ts, t, g);
    else if (status == -MT_EINFEASIBLE)
        infeasible(ts, t);
    else /* it can never be placed (its group went away) */
        mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, mt_strerror(status));
}

static void on_pass_done(void *arg)
{
    struct mt_head_tasks *ts = arg;

    if (!ts->closing)
        mt_head_workers_flush(ts->workers);
}

/* The worker's answer for one task handed over. */
static void on_run_done(void *arg, uint64_t num, uint32_t attempt, int err,
                        const char *why)
{
    struct mt_head_tasks *ts = arg;
    struct mt_head_task *t = mt_task_table_find(ts->table, num);
    char *msg;

    if (!t || t->attempt != attempt || t->state != MT_TASK_SCHEDULED ||
        ts->closing)
        return;
    if (err == 0 || err == -MT_EEXIST) {
        t->state = MT_TASK_RUNNING;
        set_started(ts, t, true);
        notify(ts, t);
        if (t->cancel_requested)
            stop_on_worker(ts, t, false);
    } else if (err == -MT_EUNAVAIL || err == -MT_ETIMEDOUT) {
        undelivered(ts, t, why);
    } else if (err == -MT_EINVAL || err == -MT_ENOTSUP) {
        msg = mt_xasprintf("worker refused the task: %s", why);
        mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1, msg);
        free(msg);
    } else {
        MT_WARN("task %s: RunTasks on node %s failed: %s", t->id, t->node_id,
                why);
        node_lost(ts, t);
    }
}

void mt_head_tasks_set_state(struct mt_head_tasks *ts, struct mt_head_task *t,
                             enum mt_head_task_state state,
                             const char *node_id)
{
    if (mt_head_task_terminal(t))
        return;
    t->state = state;
    if (state == MT_TASK_SCHEDULED) {
        mt_head_task_set_error(t, NULL);
        mt_head_task_set_node(t, node_id);
        ts->counts.dispatched++;
    } else if (state == MT_TASK_RUNNING) {
        set_started(ts, t, false);
    }
    notify(ts, t);
}

/* ---- worker reports --------------------------------------------------------- */

static void apply_finished(struct mt_head_tasks *ts, struct mt_head_task *t,
                           const struct mt_task_update *u)
{
    bool cancelled = t->cancel_requested;

    if (u->result_len > MAX_RESULT_BYTES) {
        mt_head_tasks_end(ts, t, MT_TASK_FAILED, -1,
                          "result larger than 8 MiB");
        return;
    }
    if (u->result_len || u->result)
        mt_head_task_set_result(t, u->result, u->result_len);
    if (!cancelled) {
        t->result_in_store = u->result_in_store;
        t->result_size = u->result_in_store ? u->result_size : u->result_len;
    }
    mt_head_tasks_end(ts, t, cancelled ? MT_TASK_CANCELLED : MT_TASK_FINISHED,
                      u->exit_code,
                      cancelled && !t->error ? "cancelled by request" : NULL);
}

static void apply_failed(struct mt_head_tasks *ts, struct mt_head_task *t,
                         const struct mt_task_update *u)
{
    if (u->system_failure && !t->cancel_requested) {
        retry_or_fail(ts, t, *u->error ? u->error
                                       : "the task's executor died");
        return;
    }
    mt_head_tasks_end(ts, t,
                      t->cancel_requested ? MT_TASK_CANCELLED
                                          : MT_TASK_FAILED,
                      u->exit_code, *u->error ? u->error
                                              : "failed on the worker");
}

struct mt_head_task *mt_head_tasks_apply(struct mt_head_tasks *ts,
                                         const char *node_id,
                                         const struct mt_task_update *u)
{
    struct mt_head_task *t = mt_task_table_find_id(ts->table, u->task_id);

    if (!t || t->attempt != u->attempt || mt_head_task_terminal(t) ||
        !t->node_id || strcmp(t->node_id, node_id) != 0)
        return NULL; /* stale: an older attempt or another node */
    if (u->output_len && (u->fd == 1 || u->fd == 2)) {
        mt_head_task_add_output(t, u->fd, u->output, u->output_len);
        notify_output(ts, t, u->fd, u->output, u->output_len);
    }
    switch (u->state) {
    case MT_TASK_RUNNING:
        if (t->state == MT_TASK_SCHEDULED) {
            t->state = MT_TASK_RUNNING;
            set_started(ts, t, false);
            notify(ts, t);
            /* Cancelled while its worker was taking it (the report may
             * come before the RunTasks answer): stop it now. */
            if (t->cancel_requested)
                stop_on_worker(ts, t, false);
        }
        break;
    case MT_TASK_FINISHED:
        apply_finished(ts, t, u);
        break;
    case MT_TASK_FAILED:
        apply_failed(ts, t, u);
        break;
    default:
        break;
    }
    return t;
}
