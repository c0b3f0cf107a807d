/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recover.c -- reconciling a (restarted) head with its workers (see
 * recover.h).
 *
 * begin() notes the restored tasks that are placed (their numbers, sorted)
 * and the nodes loaded as alive (their ids); the node list shrinks as
 * nodes register and say what they hold. A registration is matched
 * against the tasks placed on its node (one pass over the table) with a
 * sorted copy of the held task numbers, binary searched: O(table + held
 * log held), once per registration.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/recover.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/ids.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/head_int.h"
#include "head/tasks.h"

struct mt_head_recover {
    struct mt_head *h;
    uv_timer_t timer;
    uv_timer_t owners_timer;     /* the drivers' grace (expect_owner) */
    char **owners;               /* restored owners, until the grace ends */
    size_t n_owners, cap_owners;
    bool on;                     /* holding the scheduler */
    int64_t begin_ms;
    uint64_t *placed;            /* restored placed tasks (sorted) */
    size_t n_placed, cap_placed;
    char **expected;             /* node ids still to register */
    size_t n_expected;
    uint64_t adopted, requeued, stopped;
    void (*closed)(void *arg);
    void *closed_arg;
    int n_closed;
};

struct mt_head_recover *mt_head_recover_create(struct mt_head *h)
{
    struct mt_head_recover *rc = mt_xcalloc(1, sizeof(*rc));

    rc->h = h;
    uv_timer_init(h->loop, &rc->timer);
    uv_timer_init(h->loop, &rc->owners_timer);
    rc->timer.data = rc->owners_timer.data = rc;
    return rc;
}

bool mt_head_recovering(const struct mt_head_recover *rc)
{
    return rc && rc->on;
}

/* ---- ending ------------------------------------------------------------------ */

static void finish(struct mt_head_recover *rc, const char *how)
{
    if (!rc->on)
        return;
    rc->on = false;
    uv_timer_stop(&rc->timer);
    /* Nodes that have not registered yet keep what they hold (it stays
     * charged) but get nothing new until they do (or are declared dead). */
    for (size_t i = 0; i < rc->n_expected; i++) {
        struct mt_node *n = mt_node_table_find(
            mt_head_nodes_table(rc->h->nodes), rc->expected[i]);

        if (n && n->state == MT_NODE_ALIVE)
            mt_head_sched_suspect(rc->h->sched, n, "it has not registered "
                                  "with the restarted head yet");
        free(rc->expected[i]);
    }
    free(rc->expected);
    free(rc->placed);
    rc->expected = NULL;
    rc->placed = NULL;
    rc->n_expected = rc->n_placed = 0;
    MT_INFO("recovery %s after %lld ms: %llu tasks adopted, %llu queued "
            "again, %llu unknown processes stopped; scheduling resumes", how,
            (long long)(mt_now_mono_ms() - rc->begin_ms),
            (unsigned long long)rc->adopted, (unsigned long long)rc->requeued,
            (unsigned long long)rc->stopped);
    mt_head_sched_hold(rc->h->sched, false);
}

static void on_timeout(uv_timer_t *t)
{
    finish(t->data, "ended by its deadline");
}

static void expected_done(struct mt_head_recover *rc, const char *node_id)
{
    for (size_t i = 0; i < rc->n_expected; i++)
        if (strcmp(rc->expected[i], node_id) == 0) {
            free(rc->expected[i]);
            rc->expected[i] = rc->expected[--rc->n_expected];
            break;
        }
    if (rc->on && rc->n_expected == 0)
        finish(rc, "complete");
}

/* ---- beginning --------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static bool has(const uint64_t *v, size_t n, uint64_t num)
{
    return bsearch(&num, v, n, sizeof(*v), cmp_u64) != NULL;
}

static bool note_task(void *arg, struct mt_head_task *t)
{
    struct mt_head_recover *rc = arg;

    if (!mt_head_task_terminal(t)) {
        mt_xgrow((void **)&rc->placed, &rc->cap_placed, rc->n_placed + 1,
                 sizeof(*rc->placed));
        rc->placed[rc->n_placed++] = t->num;
    }
    return true;
}

void mt_head_recover_begin(struct mt_head_recover *rc, int timeout_ms)
{
    struct mt_node_table *nt = mt_head_nodes_table(rc->h->nodes);
    struct mt_task_table *tt = &rc->h->task_table;
    size_t n = 0;

    rc->begin_ms = mt_now_mono_ms();
    rc->on = true;
    mt_head_sched_hold(rc->h->sched, true);
    mt_task_table_visit(tt, note_task, rc);
    /* Resume by number: a resume may end (never free) other tasks. */
    for (size_t i = 0; i < rc->n_placed; i++) {
        struct mt_head_task *t = mt_task_table_find(tt, rc->placed[i]);

        if (t)
            mt_head_tasks_resume(rc->h->tasks, t);
        if (t && !mt_head_task_terminal(t) && t->has_grant)
            rc->placed[n++] = t->num; /* placed, adopted for now */
    }
    rc->n_placed = n;
    if (n) /* qsort(NULL, 0) is undefined */
        qsort(rc->placed, n, sizeof(*rc->placed), cmp_u64);
    rc->expected = mt_xcalloc(nt->n ? nt->n : 1, sizeof(*rc->expected));
    for (size_t i = 0; i < nt->n; i++)
        if (nt->v[i]->state == MT_NODE_ALIVE)
            rc->expected[rc->n_expected++] = mt_xstrdup(nt->v[i]->id);
    if (rc->n_expected == 0 && rc->n_placed == 0) {
        finish(rc, "had nothing to wait for");
        return;
    }
    MT_INFO("recovering: %zu placed tasks on %zu nodes to confirm; nothing "
            "new is placed until they register (at most %d ms)",
            rc->n_placed, rc->n_expected, timeout_ms);
    uv_timer_start(&rc->timer, on_timeout, (uint64_t)timeout_ms, 0);
}

/* ---- a node's holdings ------------------------------------------------------- */

/* Stop what n runs that the head does not place there at that attempt. */
static void stop_orphans(struct mt_head_recover *rc, struct mt_node *n,
                         const struct mt_node_holdings *held)
{
    struct mt_task_table *tt = &rc->h->task_table;

    for (size_t i = 0; i < held->n_tasks; i++) {
        const struct mt_held_task *x = &held->tasks[i];
        struct mt_head_task *t = mt_task_table_find_id(tt, x->task_id);

        if (x->lease_id && *x->lease_id)
            continue; /* pushed to a lease: its driver's */
        if (t && !mt_head_task_terminal(t) && t->attempt == x->attempt &&
            t->node_id && strcmp(t->node_id, n->id) == 0)
            continue;
        MT_WARN("node %s runs task %s attempt %u, which %s: stopping it",
                n->id, x->task_id, x->attempt,
                !t                           ? "this head does not know"
                : mt_head_task_terminal(t)   ? "has ended"
                                             : "runs elsewhere or again");
        mt_head_workers_stop_task(rc->h->workers, n->id, x->task_id,
                                  x->attempt, true);
        rc->stopped++;
    }
}

/* Placed tasks on n that n may not hold (see settle). */
struct on_node {
    struct mt_head_recover *rc;
    const char *node_id;
    uint64_t *v;
    size_t n, cap;
};

static bool placed_there(void *arg, struct mt_head_task *t)
{
    struct on_node *c = arg;

    if ((t->state == MT_TASK_RUNNING || t->state == MT_TASK_SCHEDULED) &&
        !t->leased && t->node_id && strcmp(t->node_id, c->node_id) == 0) {
        mt_xgrow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v));
        c->v[c->n++] = t->num;
    }
    return true;
}

/*
 * The tasks placed on n, against what n holds. A RUNNING task n does not
 * hold is lost (n held it: it lists every run until its final report is
 * acknowledged). A SCHEDULED one is lost only when it was restored: on a
 * head that did not restart its hand-over may still be on its way. A
 * task pushed to a lease is its driver's.
 */
static void settle(struct mt_head_recover *rc, struct mt_node *n,
                   const uint64_t *nums, size_t n_nums)
{
    struct mt_task_table *tt = &rc->h->task_table;
    struct on_node c = {rc, n->id, NULL, 0, 0};

    mt_task_table_visit(tt, placed_there, &c);
    for (size_t i = 0; i < c.n; i++) {
        struct mt_head_task *t = mt_task_table_find(tt, c.v[i]);
        bool restored = rc->on && has(rc->placed, rc->n_placed, c.v[i]);

        if (!t || mt_head_task_terminal(t))
            continue;
        if (has(nums, n_nums, t->num)) {
            if (restored && t->state == MT_TASK_SCHEDULED)
                mt_head_tasks_set_state(rc->h->tasks, t, MT_TASK_RUNNING,
                                        NULL);
            rc->adopted += restored;
        } else if (t->state == MT_TASK_RUNNING || restored) {
            MT_WARN("task %s: node %s no longer runs it", t->id, n->id);
            mt_head_tasks_lost(rc->h->tasks, t, t->state == MT_TASK_SCHEDULED,
                               "lost: its node no longer runs it (the node "
                               "or the head restarted)");
            rc->requeued++;
        }
    }
    free(c.v);
}

void mt_head_recover_node(struct mt_head_recover *rc, struct mt_node *n,
                          const struct mt_node_holdings *held)
{
    uint64_t *nums = mt_xcalloc(held->n_tasks + 1, sizeof(*nums));
    size_t k = 0;

    for (size_t i = 0; i < held->n_tasks; i++)
        if (mt_num_id_parse(MT_ID_TASK, held->tasks[i].task_id, &nums[k]) == 0)
            k++;
    qsort(nums, k, sizeof(*nums), cmp_u64);
    settle(rc, n, nums, k);
    stop_orphans(rc, n, held);
    free(nums);
    if (rc->on)
        expected_done(rc, n->id);
}

void mt_head_recover_node_dead(struct mt_head_recover *rc,
                               const char *node_id)
{
    if (rc->on)
        expected_done(rc, node_id);
}

/* ---- drivers ------------------------------------------------------------------- */

#define RECONNECT_DEFAULT_S 60

/* MANTA_HEAD_RECONNECT_TIMEOUT in ms (seconds in the variable). */
static uint64_t owners_grace_ms(void)
{
    const char *v = getenv("MANTA_HEAD_RECONNECT_TIMEOUT");
    char *end;
    double s = v && *v ? strtod(v, &end) : RECONNECT_DEFAULT_S;

    if (v && *v && (*end || s < 0 || s > 86400)) {
        MT_WARN("MANTA_HEAD_RECONNECT_TIMEOUT=%s is not a number of seconds; "
                "using %d", v, RECONNECT_DEFAULT_S);
        s = RECONNECT_DEFAULT_S;
    }
    return (uint64_t)(s * 1000);
}

static void on_owners_timeout(uv_timer_t *t)
{
    struct mt_head_recover *rc = t->data;

    for (size_t i = 0; i < rc->n_owners; i++) {
        if (!rc->h->hooks.owner_connected(rc->h, rc->owners[i])) {
            MT_INFO("driver session %s did not come back after the restart",
                    rc->owners[i]);
            rc->h->hooks.owner_gone(rc->h, rc->owners[i]);
        }
        free(rc->owners[i]);
    }
    free(rc->owners);
    rc->owners = NULL;
    rc->n_owners = rc->cap_owners = 0;
}

void mt_head_recover_expect_owner(struct mt_head_recover *rc,
                                  const char *owner)
{
    if (!owner || !*owner)
        return;
    for (size_t i = 0; i < rc->n_owners; i++)
        if (strcmp(rc->owners[i], owner) == 0)
            return;
    mt_xgrow((void **)&rc->owners, &rc->cap_owners, rc->n_owners + 1,
             sizeof(*rc->owners));
    rc->owners[rc->n_owners++] = mt_xstrdup(owner);
    if (rc->n_owners == 1)
        uv_timer_start(&rc->owners_timer, on_owners_timeout,
                       owners_grace_ms(), 0);
}

/* ---- life cycle -------------------------------------------------------------- */

static void on_closed(uv_handle_t *hd)
{
    struct mt_head_recover *rc = hd->data;

    if (++rc->n_closed == 2 && rc->closed)
        rc->closed(rc->closed_arg);
}

void mt_head_recover_close(struct mt_head_recover *rc, void (*done)(void *arg),
                           void *arg)
{
    rc->on = false;
    rc->closed = done;
    rc->closed_arg = arg;
    uv_close((uv_handle_t *)&rc->timer, on_closed);
    uv_close((uv_handle_t *)&rc->owners_timer, on_closed);
}

void mt_head_recover_destroy(struct mt_head_recover *rc)
{
    if (!rc)
        return;
    for (size_t i = 0; i < rc->n_expected; i++)
        free(rc->expected[i]);
    free(rc->expected);
    free(rc->placed);
    for (size_t i = 0; i < rc->n_owners; i++)
        free(rc->owners[i]);
    free(rc->owners);
    free(rc);
}
