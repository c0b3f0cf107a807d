/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actors.c -- actors hosted by a worker (see actors.h for the life of one).
 *
 * DESIGN: each actor owns a dedicated executor pool of one process, so the
 * pool's FIFO is the actor's mailbox: jobs handed to it run one at a time
 * in hand-over order. The head numbers an incarnation's calls 0, 1, 2, ...
 * in arrival order, but RunTask calls may reach the loop out of order, so
 * a call is handed to the pool only when every call numbered before it
 * was; early ones wait in a small array (pend) sorted by nothing: it is
 * scanned after each hand-over, and stays tiny in practice.
 *
 * Invariants: an actor is in ha->list from add until its pool is
 * closed; next_seq counts calls handed to the pool; once DEAD nothing new
 * is handed over and pend is empty.
 *
 * THREAD: loop thread only.
 */
#include "worker/actors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/ids.h"
#include "common/log.h"
#include "worker/executors.h"
#include "worker/run_spec.h"

enum actor_state {
    ACTOR_STARTING = 0,         /* the factory runs */
    ACTOR_READY = 1,            /* calls run */
    ACTOR_DEAD = 2,             /* its executor is gone or going */
};

/* A call that came before its turn. */
struct pend {
    uint64_t seq;
    struct mt_exec_job *job;
    bool stopped;               /* ends STOPPED when its turn comes */
    int caller;                 /* index in callers, -1: sent by the head */
};

/* The order of one driver's direct calls (CallActor). */
struct caller {
    char id[MT_RUN_ID_MAX + 1];
    uint64_t next_seq;
};

/* One incarnation of an actor. Guarded by: loop thread. */
struct mt_hosted_actor {
    struct mt_hosted_actor *next; /* in ha->list */
    struct mt_hosted_actors *ha;
    char id[MT_RUN_ID_MAX + 1]; /* its creation task's id */
    uint32_t attempt;           /* the incarnation */
    enum actor_state state;
    struct mt_exec_pool *pool;  /* its one executor */
    bool closing;               /* mt_exec_pool_close called */
    uint64_t next_seq;          /* the next call to hand over */
    struct pend *pend;          /* calls waiting for their turn */
    size_t n_pend, cap_pend;
    struct caller *callers;     /* direct callers seen */
    size_t n_callers, cap_callers;
};

/* Every actor of the worker. Guarded by: loop thread. */
struct mt_hosted_actors {
    struct mt_exec_pool *like;  /* what each actor's executor copies */
    struct mt_hosted_actor *list;
    mt_actor_died_fn died;      /* the listener of READY actors' deaths */
    void *died_arg;
    void (*closed)(void *);     /* shutdown: all pools closed */
    void *closed_arg;
};

static struct mt_hosted_actor *find(struct mt_hosted_actors *ha,
                                    const char *id, uint32_t attempt)
{
    for (struct mt_hosted_actor *a = ha->list; a; a = a->next)
        if (a->attempt == attempt && strcmp(a->id, id) == 0)
            return a;
    return NULL;
}

/* End a job that never reached the pool. */
static void end_unrun(struct mt_exec_job *j, enum mt_exec_end end,
                      const char *why)
{
    struct mt_exec_outcome o;

    memset(&o, 0, sizeof(o));
    o.end = end;
    o.error = why;
    o.system_failure = end == MT_EXEC_END_DIED;
    j->on_end(j, &o);
}

/* Fail every call still waiting for its turn. */
static void fail_pending(struct mt_hosted_actor *a, const char *why)
{
    while (a->n_pend > 0)
        end_unrun(a->pend[--a->n_pend].job, MT_EXEC_END_DIED, why);
}

static void on_pool_closed(void *arg)
{
    struct mt_hosted_actor *a = arg;
    struct mt_hosted_actors *ha = a->ha;
    struct mt_hosted_actor **pp = &ha->list;

    while (*pp && *pp != a)
        pp = &(*pp)->next;
    if (*pp)
        *pp = a->next;
    mt_exec_pool_destroy(a->pool);
    free(a->pend);
    free(a->callers);
    free(a);
    if (!ha->list && ha->closed) {
        void (*done)(void *) = ha->closed;

        ha->closed = NULL;
        done(ha->closed_arg);
    }
}

/* The actor is over here: fail what waits and let its pool go. */
static void drop(struct mt_hosted_actor *a, const char *why)
{
    char *msg = mt_xasprintf("actor died: %s", why);

    a->state = ACTOR_DEAD;
    fail_pending(a, msg);
    free(msg);
    mt_exec_pool_kill(a->pool);
    if (!a->closing) {
        a->closing = true;
        mt_exec_pool_close(a->pool, on_pool_closed, a);
    }
}

/* The executor is gone (every handle closed); queued jobs have ended. */
static void on_gone(void *arg, const char *why)
{
    struct mt_hosted_actor *a = arg;
    char *msg;

    if (a->state == ACTOR_DEAD && a->closing)
        return;
    MT_INFO("actor=%s attempt=%u: its executor %s", a->id, a->attempt, why);
    msg = mt_xasprintf("actor died: its executor %s", why);
    if (a->state == ACTOR_READY && a->ha->died)
        a->ha->died(a->ha->died_arg, a->id, a->attempt, msg);
    free(msg);
    drop(a, why);
}

struct mt_hosted_actors *mt_hosted_actors_create(struct mt_exec_pool *like)
{
    struct mt_hosted_actors *ha = mt_xcalloc(1, sizeof(*ha));

    ha->like = like;
    return ha;
}

void mt_hosted_actors_on_died(struct mt_hosted_actors *ha,
                              mt_actor_died_fn fn, void *arg)
{
    ha->died = fn;
    ha->died_arg = arg;
}

int mt_hosted_actors_add(struct mt_hosted_actors *ha, const char *id,
                         uint32_t attempt, struct mt_exec_job *factory)
{
    struct mt_hosted_actor *a;
    int rc;

    if (!ha->like)
        return -MT_EINVAL;
    if (find(ha, id, attempt))
        return -MT_EEXIST;
    a = mt_xcalloc(1, sizeof(*a));
    a->ha = ha;
    snprintf(a->id, sizeof(a->id), "%s", id);
    a->attempt = attempt;
    rc = mt_exec_pool_create_dedicated(ha->like, on_gone, a, &a->pool);
    if (rc < 0) {
        free(a);
        return rc;
    }
    a->next = ha->list;
    ha->list = a;
    mt_exec_pool_submit(a->pool, factory);
    return 0;
}

void mt_hosted_actors_created(struct mt_hosted_actors *ha, const char *id,
                              uint32_t attempt, bool ok)
{
    struct mt_hosted_actor *a = find(ha, id, attempt);

    if (!a || a->state != ACTOR_STARTING)
        return;
    if (ok) {
        a->state = ACTOR_READY;
        MT_INFO("actor=%s attempt=%u ready", id, attempt);
        return;
    }
    drop(a, "its creation failed");
}

/* The counter that orders p: the head's or its caller's. */
static uint64_t *next_of(struct mt_hosted_actor *a, const struct pend *p)
{
    return p->caller < 0 ? &a->next_seq : &a->callers[p->caller].next_seq;
}

/* Hand over every call whose turn has come. */
static void hand_over(struct mt_hosted_actor *a)
{
    bool moved = true;

    while (moved && a->n_pend > 0) {
        moved = false;
        for (size_t i = 0; i < a->n_pend; i++) {
            struct mt_exec_job *j = a->pend[i].job;
            uint64_t *next = next_of(a, &a->pend[i]);

            if (a->pend[i].seq != *next)
                continue;
            bool stopped = a->pend[i].stopped;

            a->pend[i] = a->pend[--a->n_pend];
            (*next)++;
            if (stopped)
                end_unrun(j, MT_EXEC_END_STOPPED, "stopped before it started");
            else
                mt_exec_pool_submit(a->pool, j);
            moved = true;
            break;
        }
    }
}

/* The index of caller in a->callers, added when new. */
static int caller_index(struct mt_hosted_actor *a, const char *caller)
{
    for (size_t i = 0; i < a->n_callers; i++)
        if (strcmp(a->callers[i].id, caller) == 0)
            return (int)i;
    mt_xgrow((void **)&a->callers, &a->cap_callers, a->n_callers + 1,
             sizeof(*a->callers));
    snprintf(a->callers[a->n_callers].id, sizeof(a->callers->id), "%s",
             caller);
    a->callers[a->n_callers].next_seq = 0;
    return (int)a->n_callers++;
}

/* Queue job as call seq in the order of caller (-1: the head's). */
static int enqueue(struct mt_hosted_actor *a, int caller, uint64_t seq,
                   struct mt_exec_job *job, const char **why)
{
    struct pend p = {seq, job, false, caller};

    if (seq < *next_of(a, &p)) {
        *why = "actor call sequence number used twice";
        return -MT_EEXIST;
    }
    for (size_t i = 0; i < a->n_pend; i++) {
        if (a->pend[i].caller == caller && a->pend[i].seq == seq) {
            *why = "actor call sequence number used twice";
            return -MT_EEXIST;
        }
    }
    mt_xgrow((void **)&a->pend, &a->cap_pend, a->n_pend + 1,
             sizeof(*a->pend));
    a->pend[a->n_pend++] = p;
    hand_over(a);
    return 0;
}

/* The live incarnation, or NULL with why set. */
/* The actor a call names by its actor id: the one its creation task with
 * the same number made. An id that is not an actor's finds none. */
static struct mt_hosted_actor *find_called(struct mt_hosted_actors *ha,
                                           const char *actor_id,
                                           uint32_t attempt)
{
    char task_id[MT_NUM_ID_LEN + 1];

    if (mt_num_id_as(MT_ID_ACTOR, actor_id, MT_ID_TASK, task_id) < 0)
        return NULL;
    return find(ha, task_id, attempt);
}

static struct mt_hosted_actor *alive(struct mt_hosted_actors *ha,
                                     const char *id, uint32_t attempt,
                                     const char **why)
{
    struct mt_hosted_actor *a = find_called(ha, id, attempt);

    if (!a || a->state == ACTOR_DEAD) {
        *why = "actor died: it is not alive on this node (it died or was "
               "restarted)";
        return NULL;
    }
    return a;
}

int mt_hosted_actors_call(struct mt_hosted_actors *ha, const char *id,
                          uint32_t attempt, uint64_t seq,
                          struct mt_exec_job *job, const char **why)
{
    struct mt_hosted_actor *a = alive(ha, id, attempt, why);

    return a ? enqueue(a, -1, seq, job, why) : -MT_ENOENT;
}

int mt_hosted_actors_direct(struct mt_hosted_actors *ha, const char *id,
                            uint32_t attempt, const char *caller,
                            uint64_t seq, struct mt_exec_job *job,
                            const char **why)
{
    struct mt_hosted_actor *a = alive(ha, id, attempt, why);

    if (a && a->state != ACTOR_READY) {
        *why = "actor died: it is being created again";
        return -MT_ENOENT;
    }
    return a ? enqueue(a, caller_index(a, caller), seq, job, why)
             : -MT_ENOENT;
}

int mt_hosted_actors_stop_call(struct mt_hosted_actors *ha, const char *id,
                               uint32_t attempt, struct mt_exec_job *job)
{
    struct mt_hosted_actor *a = find_called(ha, id, attempt);

    if (!a)
        return -MT_ENOENT;
    for (size_t i = 0; i < a->n_pend; i++) {
        if (a->pend[i].job != job)
            continue;
        /* Its number stays taken (later calls wait for it): it ends
         * STOPPED when its turn comes. */
        a->pend[i].stopped = true;
        return 0;
    }
    return mt_exec_pool_stop(a->pool, job);
}

int mt_hosted_actors_kill(struct mt_hosted_actors *ha, const char *id,
                          uint32_t attempt)
{
    struct mt_hosted_actor *a = find(ha, id, attempt);

    if (!a || a->state == ACTOR_DEAD)
        return -MT_ENOENT;
    MT_INFO("actor=%s attempt=%u: killing its executor", id, attempt);
    mt_exec_pool_kill(a->pool);
    return 0;
}

void mt_hosted_actors_shutdown(struct mt_hosted_actors *ha)
{
    for (struct mt_hosted_actor *a = ha->list; a; a = a->next) {
        a->state = ACTOR_DEAD;
        a->n_pend = 0;
        mt_exec_pool_shutdown(a->pool);
    }
}

void mt_hosted_actors_close(struct mt_hosted_actors *ha, void (*done)(void *),
                            void *arg)
{
    mt_hosted_actors_shutdown(ha);
    if (!ha->list) {
        done(arg);
        return;
    }
    ha->closed = done;
    ha->closed_arg = arg;
    for (struct mt_hosted_actor *a = ha->list; a; a = a->next) {
        if (!a->closing) {
            a->closing = true;
            mt_exec_pool_close(a->pool, on_pool_closed, a);
        }
    }
}

void mt_hosted_actors_destroy(struct mt_hosted_actors *ha)
{
    if (!ha)
        return;
    while (ha->list) {
        struct mt_hosted_actor *a = ha->list;

        ha->list = a->next;
        mt_exec_pool_destroy(a->pool);
        free(a->pend);
        free(a->callers);
        free(a);
    }
    free(ha);
}
