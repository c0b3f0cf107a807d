/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leases.c -- the head's side of leases (see leases.h): filing pushed
 * tasks from workers' reports, revoking leases when other work waits, and
 * ending a gone session's leases.
 *
 * DESIGN: a filed task is an ordinary table entry (marked leased) under
 * the number its driver chose (MT_NUM_ID_DRIVER_BIT set), admitted by the
 * object directory like a submitted function task (its result object,
 * held for the lease's owner) and ended through tasks.h, so every
 * listener (objects, watches, metrics) sees it end once, as a placed task
 * would. It never enters the scheduler and is never pinned for lineage
 * (objects.c): its arguments are not kept, so it cannot be run again.
 *
 * Revocation looks at the whole table every MT_LEASE_CHECK_MS: one pass
 * finds the highest priority of work waiting (PENDING, not infeasible;
 * lease requests counted per owner, so a driver asking for more leases
 * does not revoke its own) and the leases held long enough; a second
 * cancels those below the wait. The table holds at most
 * MT_TASK_KEEP_DONE ended tasks besides the live ones, so a pass is cheap.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/leases.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/ids.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/objects.h"

#define MAX_OWNERS 64           /* waiting lease requests tracked per pass */

struct mt_head_leases {
    struct mt_head_tasks *ts;
    struct mt_head_objects *objs;
    uv_timer_t timer;
    void (*closed)(void *);
    void *closed_arg;
};

static void on_check(uv_timer_t *tm);

struct mt_head_leases *mt_head_leases_create(uv_loop_t *loop,
                                             struct mt_head_tasks *ts,
                                             struct mt_head_objects *objs)
{
    struct mt_head_leases *ls = mt_xcalloc(1, sizeof(*ls));

    ls->ts = ts;
    ls->objs = objs;
    uv_timer_init(loop, &ls->timer);
    ls->timer.data = ls;
    uv_timer_start(&ls->timer, on_check, MT_LEASE_CHECK_MS,
                   MT_LEASE_CHECK_MS);
    return ls;
}

static void on_timer_closed(uv_handle_t *h)
{
    struct mt_head_leases *ls = h->data;

    if (ls->closed)
        ls->closed(ls->closed_arg);
}

void mt_head_leases_close(struct mt_head_leases *ls, void (*done)(void *),
                          void *arg)
{
    ls->closed = done;
    ls->closed_arg = arg;
    uv_close((uv_handle_t *)&ls->timer, on_timer_closed);
}

void mt_head_leases_destroy(struct mt_head_leases *ls)
{
    free(ls);
}

/* ---- filing -------------------------------------------------------------- */

/* The record of a pushed task first reported now. RET NULL when its number
 * is taken by a task the head counted (or out of the driver range). */
static struct mt_head_task *new_record(struct mt_head_leases *ls,
                                       const struct mt_head_task *lease,
                                       const struct mt_leased_update *lu,
                                       uint64_t num)
{
    struct mt_task_table *tt = mt_head_tasks_table(ls->ts);
    struct mt_head_task *t;
    struct mt_task_def d;
    char why[256];

    mt_task_def_init(&d);
    d.kind = MT_TASK_KIND_FUNCTION;
    d.name = *lu->name ? mt_xstrdup(lu->name) : NULL;
    d.function = mt_xstrdup(lu->function);
    d.owner_id = lease->def.owner_id ? mt_xstrdup(lease->def.owner_id)
                                     : NULL;
    d.hold_result = lu->hold_result;
    d.priority = lease->def.priority;
    t = mt_task_table_add_num(tt, num, &d, (int)lu->max_retries,
                              mt_now_wall_ms());
    if (!t) {
        mt_task_def_release(&d);
        return NULL;
    }
    t->leased = true;
    if (mt_head_objects_admit(ls->objs, t, why, sizeof(why)) != 0)
        MT_WARN("leased task %s: %s", t->id, why); /* takes no refs */
    return t;
}

/*
 * A stored result may be lost with its node: t gets what the head needs to
 * run it again (its arguments and code path from the report, the lease's
 * scheduling fields) and stops being a leased record, so the object
 * directory keeps its lineage like any placed task's.
 */
static void replayable(struct mt_head_task *t,
                       const struct mt_head_task *lease,
                       const struct mt_leased_update *lu)
{
    struct mt_task_def d;

    mt_task_def_init(&d);
    if (mt_task_def_copy(&d, &lease->def) < 0 ||
        mt_task_def_set_args(&d, lu->args, lu->nargs) < 0 ||
        mt_def_set_strv(&d.code_path, &d.n_code_path, lu->code_path,
                        lu->n_code_path) < 0) {
        mt_task_def_release(&d);
        return;
    }
    d.kind = MT_TASK_KIND_FUNCTION;
    d.max_retries = (int)lu->max_retries;
    d.hold_result = t->def.hold_result;
    mt_def_set_str(&d.function, t->def.function);
    mt_def_set_str(&d.name, t->def.name);
    mt_task_def_release(&t->def);
    t->def = d;
    t->leased = false;
}

struct mt_head_task *mt_head_leases_file(struct mt_head_leases *ls,
                                         const char *node_id,
                                         const struct mt_leased_update *lu)
{
    struct mt_task_table *tt = mt_head_tasks_table(ls->ts);
    const struct mt_task_update *u = &lu->u;
    struct mt_head_task *lease = mt_task_table_find_id(tt, lu->lease_id);
    struct mt_head_task *t;
    struct mt_task_update fin;
    uint64_t num;

    if (!lease || lease->def.kind != MT_TASK_KIND_LEASE || !lease->node_id ||
        strcmp(lease->node_id, node_id) != 0 || !lu->function ||
        (u->state != MT_TASK_RUNNING && u->state != MT_TASK_FINISHED &&
         u->state != MT_TASK_FAILED && u->state != MT_TASK_CANCELLED) ||
        mt_num_id_parse(MT_ID_TASK, u->task_id, &num) < 0 ||
        !(num & MT_NUM_ID_DRIVER_BIT))
        return NULL;
    t = mt_task_table_find(tt, num);
    if (t && (!t->leased || mt_head_task_terminal(t) ||
              u->attempt < t->attempt))
        return NULL;
    if (!t && !(t = new_record(ls, lease, lu, num)))
        return NULL;
    t->attempt = u->attempt;
    t->max_retries = (int)lu->max_retries;
    mt_head_task_set_node(t, node_id);
    t->start_ms = t->start_ms ? t->start_ms : mt_now_wall_ms();
    if (u->state == MT_TASK_RUNNING) { /* it runs long: shown running */
        mt_head_task_set_error(t, NULL);
        mt_head_tasks_set_state(ls->ts, t, MT_TASK_RUNNING, NULL);
        return t;
    }
    if (u->state == MT_TASK_FAILED && u->system_failure &&
        u->attempt < lu->max_retries) {
        char *why = mt_xasprintf("attempt %u failed (%s); its driver tries "
                                 "again", u->attempt,
                                 *u->error ? u->error : "executor died");

        t->state = MT_TASK_PENDING; /* the next attempt's report ends it */
        mt_head_task_set_error(t, why);
        free(why);
        return t;
    }
    if (u->state == MT_TASK_CANCELLED) {
        mt_head_tasks_end(ls->ts, t, MT_TASK_CANCELLED, -1,
                          *u->error ? u->error : "cancelled by request");
        return t;
    }
    if (u->state == MT_TASK_FINISHED && u->result_in_store &&
        lu->max_retries > 0)
        replayable(t, lease, lu);
    t->state = MT_TASK_RUNNING;
    fin = *u;
    fin.system_failure = false; /* final: its driver does not retry it */
    return mt_head_tasks_apply(ls->ts, node_id, &fin);
}

/* ---- revoking ------------------------------------------------------------ */

/* What one pass over the table found. */
struct scan {
    int64_t now;
    bool any_wait;               /* work other than lease requests waits */
    int32_t wait_prio;           /* ... the highest priority of it */
    size_t n_owners;             /* waiting lease requests, per owner */
    struct {
        const char *owner;
        int32_t prio;
    } owners[MAX_OWNERS];
    bool any_held;               /* a lease held past MT_LEASE_HOLD_MS */
};

static void note_request(struct scan *s, const struct mt_head_task *t)
{
    const char *owner = t->def.owner_id ? t->def.owner_id : "";

    for (size_t i = 0; i < s->n_owners; i++)
        if (strcmp(s->owners[i].owner, owner) == 0) {
            if (t->def.priority > s->owners[i].prio)
                s->owners[i].prio = t->def.priority;
            return;
        }
    if (s->n_owners < MAX_OWNERS) {
        s->owners[s->n_owners].owner = owner;
        s->owners[s->n_owners++].prio = t->def.priority;
    } else if (!s->any_wait || t->def.priority > s->wait_prio) {
        s->any_wait = true; /* too many owners: count it as other work */
        s->wait_prio = t->def.priority;
    }
}

static bool held_long(const struct scan *s, const struct mt_head_task *t)
{
    return t->def.kind == MT_TASK_KIND_LEASE &&
           t->state == MT_TASK_RUNNING && !t->cancel_requested &&
           s->now - t->start_ms >= MT_LEASE_HOLD_MS;
}

static bool scan_one(void *arg, struct mt_head_task *t)
{
    struct scan *s = arg;

    if (held_long(s, t))
        s->any_held = true;
    if (t->state != MT_TASK_PENDING || t->infeasible || t->leased)
        return true;
    if (t->def.kind == MT_TASK_KIND_LEASE) {
        note_request(s, t);
    } else if (!s->any_wait || t->def.priority > s->wait_prio) {
        s->any_wait = true;
        s->wait_prio = t->def.priority;
    }
    return true;
}

/* Does work of another owner at lease t's priority or above wait? */
static bool others_wait(const struct scan *s, const struct mt_head_task *t)
{
    const char *owner = t->def.owner_id ? t->def.owner_id : "";

    if (s->any_wait && s->wait_prio >= t->def.priority)
        return true;
    for (size_t i = 0; i < s->n_owners; i++)
        if (s->owners[i].prio >= t->def.priority &&
            strcmp(s->owners[i].owner, owner) != 0)
            return true;
    return false;
}

/* Tasks picked on a pass, acted on after it (the table must not change
 * while visited). */
struct picked {
    struct mt_head_task **v;
    size_t n, cap;
};

static void pick(struct picked *p, struct mt_head_task *t)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->v = mt_xrealloc(p->v, p->cap * sizeof(*p->v));
    }
    p->v[p->n++] = t;
}

struct revoke_ctx {
    const struct scan *s;
    struct picked p;
};

static bool collect_revoked(void *arg, struct mt_head_task *t)
{
    struct revoke_ctx *c = arg;

    if (held_long(c->s, t) && others_wait(c->s, t))
        pick(&c->p, t);
    return true;
}

static void on_check(uv_timer_t *tm)
{
    struct mt_head_leases *ls = tm->data;
    struct mt_task_table *tt = mt_head_tasks_table(ls->ts);
    struct scan s;
    struct revoke_ctx c = {&s, {NULL, 0, 0}};

    memset(&s, 0, sizeof(s));
    s.now = mt_now_wall_ms();
    s.wait_prio = INT32_MIN;
    mt_task_table_visit(tt, scan_one, &s);
    if (!s.any_held || (!s.any_wait && s.n_owners == 0))
        return;
    mt_task_table_visit(tt, collect_revoked, &c);
    for (size_t i = 0; i < c.p.n; i++) {
        MT_INFO("lease %s revoked: held %lld ms while other work waits",
                c.p.v[i]->id, (long long)(s.now - c.p.v[i]->start_ms));
        mt_head_tasks_cancel(ls->ts, c.p.v[i], false);
    }
    free(c.p.v);
}

/* ---- sessions ------------------------------------------------------------ */

struct owner_ctx {
    const char *owner;
    struct picked p;
};

static bool collect_owned(void *arg, struct mt_head_task *t)
{
    struct owner_ctx *c = arg;

    if (t->def.kind == MT_TASK_KIND_LEASE && !mt_head_task_terminal(t) &&
        t->def.owner_id && strcmp(t->def.owner_id, c->owner) == 0)
        pick(&c->p, t);
    return true;
}

void mt_head_leases_owner_gone(struct mt_head_leases *ls, const char *owner)
{
    struct owner_ctx c = {owner, {NULL, 0, 0}};

    mt_task_table_visit(mt_head_tasks_table(ls->ts), collect_owned, &c);
    for (size_t i = 0; i < c.p.n; i++)
        mt_head_tasks_cancel(ls->ts, c.p.v[i], false);
    free(c.p.v);
}
