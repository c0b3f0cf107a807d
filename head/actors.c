/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actors.c -- the head's actors (see actors.h): creation, calls queued and
 * sent in order per incarnation, the state machine driven by the creation
 * task's changes, kills.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/actors.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"

struct mt_head_actors {
    struct mt_actor_table table;
    struct mt_head_tasks *tasks;
    struct mt_task_table *tt;
    struct mt_head_workers *workers;
    void (*changed)(void *arg, uint64_t num);  /* persist.h, may be NULL */
    void *changed_arg;
    char msg[512];               /* why a create was refused */
};

static void task_changed(void *arg, struct mt_head_task *t);

static const struct mt_task_listener listener = {
    .changed = task_changed,
};

struct mt_head_actors *mt_head_actors_create(struct mt_head_tasks *tasks,
                                             struct mt_head_workers *workers)
{
    struct mt_head_actors *as = mt_xcalloc(1, sizeof(*as));

    as->tasks = tasks;
    as->tt = mt_head_tasks_table(tasks);
    as->workers = workers;
    mt_head_tasks_listen(tasks, &listener, as);
    return as;
}

void mt_head_actors_destroy(struct mt_head_actors *as)
{
    if (!as)
        return;
    mt_actor_table_release(&as->table);
    free(as);
}

struct mt_actor_table *mt_head_actors_table(struct mt_head_actors *as)
{
    return &as->table;
}

void mt_head_actors_on_changed(struct mt_head_actors *as,
                               void (*fn)(void *arg, uint64_t num), void *arg)
{
    as->changed = fn;
    as->changed_arg = arg;
}

static void changed(struct mt_head_actors *as, const struct mt_head_actor *a)
{
    if (as->changed)
        as->changed(as->changed_arg, a->num);
}

/* ---- dispatching calls ---------------------------------------------------- */

struct call_ctx {
    struct mt_head_actors *as;
    uint64_t num;
};

static void on_call_done(void *arg, int err, const char *why)
{
    struct call_ctx c = *(struct call_ctx *)arg;
    struct mt_head_task *t = mt_task_table_find(c.as->tt, c.num);
    char *msg;

    free(arg);
    if (!t || t->state != MT_TASK_SCHEDULED)
        return;
    if (err == 0) {
        mt_head_tasks_set_state(c.as->tasks, t, MT_TASK_RUNNING, NULL);
        return;
    }
    msg = mt_xasprintf("its worker did not take the call: %s", why);
    mt_head_tasks_actor_died(c.as->tasks, t, msg);
    free(msg);
}

/* Send call t to a's worker as the incarnation's next call. */
static void dispatch_call(struct mt_head_actors *as, struct mt_head_actor *a,
                          struct mt_head_task *t)
{
    struct call_ctx *c = mt_xmalloc(sizeof(*c));
    int rc;

    mt_head_tasks_set_state(as->tasks, t, MT_TASK_SCHEDULED, a->node_id);
    c->as = as;
    c->num = t->num;
    rc = mt_head_workers_call(as->workers, a->node_id, t, a->next_seq++,
                              a->incarnation, on_call_done, c);
    a->dispatched++;
    changed(as, a);
    if (rc < 0) {
        free(c);
        mt_head_tasks_actor_died(as->tasks, t,
                                 "cannot reach the actor's worker");
    }
}

/* Send every queued call while the actor is ALIVE. */
static void pump(struct mt_head_actors *as, struct mt_head_actor *a)
{
    uint64_t num;

    while (a->state == MT_ACTOR_ALIVE && mt_head_actor_queue_pop(a, &num)) {
        struct mt_head_task *t = mt_task_table_find(as->tt, num);

        if (t && t->state == MT_TASK_PENDING)
            dispatch_call(as, a, t);
    }
}

/* Fail every queued call of a dead actor. */
static void fail_queued(struct mt_head_actors *as, struct mt_head_actor *a)
{
    uint64_t num;

    while (mt_head_actor_queue_pop(a, &num)) {
        struct mt_head_task *t = mt_task_table_find(as->tt, num);

        if (t)
            mt_head_tasks_actor_died(as->tasks, t,
                                     a->death_reason ? a->death_reason
                                                     : "dead");
    }
}

/* ---- the creation task's life ---------------------------------------------- */

void mt_head_actor_ready(struct mt_head_actors *as, struct mt_head_task *t,
                         uint32_t pid)
{
    struct mt_head_actor *a = mt_actor_table_find(&as->table, t->num);

    if (!a || t->def.kind != MT_TASK_KIND_ACTOR_CREATE ||
        mt_head_task_terminal(t) || a->state == MT_ACTOR_DEAD)
        return;
    a->state = MT_ACTOR_ALIVE;
    mt_head_actor_set_node(a, t->node_id);
    a->pid = pid;
    a->incarnation = t->attempt;
    a->next_seq = 0;
    changed(as, a);
    MT_INFO("actor %s%s%s alive on node %s (pid %u, attempt %u)", a->id,
            a->name ? " " : "", a->name ? a->name : "", a->node_id, pid,
            t->attempt);
    pump(as, a);
}

/* The creation task went back to PENDING for another attempt. */
static void restarting(struct mt_head_actor *a, const struct mt_head_task *t)
{
    a->last_attempt = t->attempt;
    if (a->state == MT_ACTOR_DEAD)
        return;
    a->state = MT_ACTOR_RESTARTING;
    a->restarts++;
    a->pid = 0;
    MT_WARN("actor %s restarting (restart %u): %s", a->id, a->restarts,
            t->error ? t->error : "");
}

/* Why an actor whose creation task ended is dead. */
static char *death_reason(const struct mt_head_actor *a,
                          const struct mt_head_task *t)
{
    const char *err = t->error && *t->error ? t->error : "no reason given";

    if (a->owner_gone)
        return mt_xstrdup("its owner went away (the client that created it "
                          "disconnected or died; the actor is not "
                          "detached)");
    if (a->no_restart)
        return mt_xstrdup("killed by request (no restart)");
    if (t->state == MT_TASK_CANCELLED)
        return mt_xasprintf("its creation was cancelled: %s", err);
    if (a->state == MT_ACTOR_PENDING_CREATION)
        return mt_xasprintf("its creation failed: %s", err);
    if (strncmp(err, "actor died", 10) == 0)
        return mt_xstrdup(err);
    return mt_xasprintf("actor died: %s", err);
}

static void ended(struct mt_head_actors *as, struct mt_head_actor *a,
                  const struct mt_head_task *t)
{
    char *why;

    if (a->state == MT_ACTOR_DEAD)
        return;
    why = death_reason(a, t);
    MT_INFO("actor %s%s%s dead: %s", a->id, a->name ? " " : "",
            a->name ? a->name : "", why);
    mt_actor_table_set_dead(&as->table, a, why, mt_now_wall_ms());
    free(why);
    fail_queued(as, a);
}

static void task_changed(void *arg, struct mt_head_task *t)
{
    struct mt_head_actors *as = arg;
    struct mt_head_actor *a;

    if (t->def.kind != MT_TASK_KIND_ACTOR_CREATE ||
        !(a = mt_actor_table_find(&as->table, t->num)))
        return;
    if (mt_head_task_terminal(t))
        ended(as, a, t);
    else if (t->state == MT_TASK_PENDING && t->attempt > a->last_attempt)
        restarting(a, t);
}

/* ---- creating and calling ---------------------------------------------------- */

struct mt_head_task *mt_head_actor_create(struct mt_head_actors *as,
                                          struct mt_task_def *def,
                                          const char **why, int *err)
{
    struct mt_head_actor *other;
    struct mt_head_task *t;

    other = mt_actor_table_find_name(&as->table, def->actor_name);
    if (other) {
        snprintf(as->msg, sizeof(as->msg), "actor name '%s' is taken by live "
                 "actor %s", def->actor_name, other->id);
        mt_task_def_release(def);
        *why = as->msg;
        *err = -MT_EEXIST;
        return NULL;
    }
    t = mt_head_tasks_add(as->tasks, def, def->max_restarts < 0
                                              ? INT_MAX : def->max_restarts);
    mt_actor_table_add(&as->table, t->num, t->def.actor_name,
                       t->def.function, t->def.owner_id, t->def.detached,
                       t->def.max_restarts, mt_now_wall_ms());
    if (mt_head_tasks_enqueue(as->tasks, t, why) < 0) {
        mt_head_tasks_end(as->tasks, t, MT_TASK_FAILED, -1, *why);
        *err = -MT_EINVAL;
        return NULL;
    }
    return t;
}

struct mt_head_task *mt_head_actor_call(struct mt_head_actors *as,
                                        struct mt_task_def *def, int *err)
{
    struct mt_head_actor *a = mt_actor_table_find_id(&as->table,
                                                     def->actor_id);
    struct mt_head_task *t;

    if (!a) {
        mt_task_def_release(def);
        *err = -MT_ENOENT;
        return NULL;
    }
    t = mt_head_tasks_add(as->tasks, def, 0);
    if (a->state == MT_ACTOR_DEAD) {
        mt_head_tasks_actor_died(as->tasks, t,
                                 a->death_reason ? a->death_reason : "dead");
    } else {
        mt_head_actor_queue_push(a, t->num);
        pump(as, a);
    }
    return t;
}

/* ---- kills ------------------------------------------------------------------- */

void mt_head_actor_kill(struct mt_head_actors *as, struct mt_head_actor *a,
                        bool no_restart)
{
    struct mt_head_task *t = mt_task_table_find(as->tt, a->num);

    if (a->state != MT_ACTOR_DEAD && (!t || mt_head_task_terminal(t)))
        mt_actor_table_set_dead(&as->table, a, "its creation task is gone",
                                mt_now_wall_ms());
    if (a->state == MT_ACTOR_DEAD)
        return;
    MT_INFO("actor %s: kill requested%s", a->id,
            no_restart ? " (no restart)" : "");
    if (no_restart) {
        a->no_restart = true;
        changed(as, a);
        mt_head_tasks_stop(as->tasks, t, "actor killed by request");
    } else {
        mt_head_tasks_kill(as->tasks, t);
    }
}

void mt_head_actors_owner_gone(struct mt_head_actors *as, const char *owner)
{
    struct mt_actor_table *tb = &as->table;

    MT_INFO("actor owner %s went away: killing its actors", owner);
    for (size_t i = 0; i < tb->n; i++) {
        struct mt_head_actor *a = tb->v[i];

        if (a->detached || a->state == MT_ACTOR_DEAD ||
            strcmp(a->owner, owner) != 0)
            continue;
        a->owner_gone = true;
        mt_head_actor_kill(as, a, true); /* tells of the change */
    }
}
