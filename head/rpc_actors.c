/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actors.c -- the head's actors, rpc side: creating an actor and
 * calling it (SubmitTask with an actor kind), GetActor, ListActors,
 * KillActor, and the state machine of actors.h driven by their creation
 * tasks.
 *
 * An actor rides on its creation task: the scheduler places it like any
 * task and its grant holds the actor's resources for the actor's whole
 * life; the worker reports "actor ready" once the factory returned (the
 * task stays RUNNING); when the actor's executor or node dies the task
 * fails with a system failure and the ordinary retry path (retry_or_fail
 * in rpc_tasks.c) places it again: that is a restart, bounded by
 * max_restarts, which is the creation task's retry budget.
 *
 * Method calls are tasks too (kind ACTOR_METHOD) but never see the
 * scheduler: they queue on their actor in arrival order and, while it is
 * ALIVE, go straight to its worker numbered 0, 1, 2, ... per incarnation.
 * A call in flight when the actor dies fails ("actor died: ..."); calls
 * still queued wait for the restart; calls to a DEAD actor fail at once
 * with its death reason.
 *
 * THREAD: the head's loop thread only.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/taskq.h"
#include "head_service.pb-c.h"
#include "proto/services.h"
#include "worker_service.pb-c.h"

#define CALL_TIMEOUT_MS 10000
#define LIST_DEFAULT 100
#define LIST_MAX 10000

static struct mt_actor_table *table(struct mt_head *h)
{
    return &h->tq->actors;
}

void mt__actors_release(struct mt_head *h)
{
    mt_actor_table_release(table(h));
}

/* ---- failing calls ---------------------------------------------------------- */

/* End method call t FAILED because its actor died (why: the reason). */
static void fail_call(struct mt_head *h, struct mt_task *t, const char *why)
{
    char *msg;

    if (mt_task_terminal(t))
        return;
    msg = strncmp(why, "actor died", 10) == 0
              ? mt_xstrdup(why)
              : mt_xasprintf("actor died: %s", why);
    t->actor_died = true;
    mt__task_end(h, t, MT_TASK_FAILED, -1, msg);
    free(msg);
}

void mt__actor_call_lost(struct mt_head *h, struct mt_task *t,
                         const char *what)
{
    fail_call(h, t, what);
}

/* ---- dispatching calls ---------------------------------------------------- */

struct call_ctx {
    struct mt_head *h;
    uint64_t num;
};

static void on_call_done(void *arg, const struct mt_rpc_status *st,
                         const ProtobufCMessage *resp)
{
    struct call_ctx *c = arg;
    struct mt_head *h = c->h;
    struct mt_task *t = h->tq ? mt_task_find(&h->tq->table, c->num) : NULL;
    char *why;

    free(c);
    if (!t || t->state != MT_TASK_SCHEDULED || h->tq->closing)
        return;
    if (st->code == 0) {
        t->state = MT_TASK_RUNNING;
        t->start_ms = mt_now_wall_ms();
        mt__task_notify(h, t);
        return;
    }
    why = mt_xasprintf("its worker did not take the call: %s", st->message);
    fail_call(h, t, why);
    free(why);
}

/* Send call t to a's worker as the incarnation's next call. */
static void dispatch_call(struct mt_head *h, struct mt_actor *a,
                          struct mt_task *t)
{
    Manta__RunTaskRequest req = MANTA__RUN_TASK_REQUEST__INIT;
    struct mt_node *n = mt_node_table_find(&h->nodes, a->node_id);
    struct mt_rpc_channel *ch = n ? mt__link_get(h, n) : NULL;
    struct call_ctx *c;
    int rc = -MT_EUNAVAIL;

    t->state = MT_TASK_SCHEDULED;
    mt_task_set_error(t, NULL);
    free(t->node_id);
    t->node_id = mt_xstrdup(a->node_id);
    req.spec = manta__task_spec__unpack(NULL, t->spec_len, t->spec);
    if (ch && req.spec) {
        req.attempt = t->attempt;
        req.actor_seq = a->next_seq++;
        req.actor_attempt = a->incarnation;
        c = mt_xmalloc(sizeof(*c));
        c->h = h;
        c->num = t->num;
        rc = mt_rpc_unary(ch, &mt_worker_run_task, &req.base, CALL_TIMEOUT_MS,
                          0, on_call_done, c);
        if (rc < 0)
            free(c);
    }
    if (req.spec)
        manta__task_spec__free_unpacked(req.spec, NULL);
    a->dispatched++;
    h->tq->dispatched++;
    mt__task_notify(h, t);
    if (rc < 0)
        fail_call(h, t, "cannot reach the actor's worker");
}

/* Send every queued call while the actor is ALIVE. */
static void pump(struct mt_head *h, struct mt_actor *a)
{
    uint64_t num;

    while (a->state == MT_ACTOR_ALIVE && mt_actor_queue_pop(a, &num)) {
        struct mt_task *t = mt_task_find(&h->tq->table, num);

        if (t && t->state == MT_TASK_PENDING)
            dispatch_call(h, a, t);
    }
}

/* Fail every queued call of a dead actor. */
static void fail_queued(struct mt_head *h, struct mt_actor *a)
{
    uint64_t num;

    while (mt_actor_queue_pop(a, &num)) {
        struct mt_task *t = mt_task_find(&h->tq->table, num);

        if (t)
            fail_call(h, t, a->death_reason ? a->death_reason : "dead");
    }
}

/* ---- the creation task's life ---------------------------------------------- */

void mt__actor_ready(struct mt_head *h, struct mt_task *t, uint32_t pid)
{
    struct mt_actor *a = mt_actor_find(table(h), t->num);

    if (!a || t->kind != MANTA__TASK_KIND__TASK_KIND_ACTOR_CREATE ||
        mt_task_terminal(t) || a->state == MT_ACTOR_DEAD)
        return;
    a->state = MT_ACTOR_ALIVE;
    mt_actor_set_str(&a->node_id, t->node_id);
    a->pid = pid;
    a->incarnation = t->attempt;
    a->next_seq = 0;
    MT_INFO("actor %s%s%s alive on node %s (pid %u, attempt %u)", a->id,
            a->name ? " " : "", a->name ? a->name : "", a->node_id, pid,
            t->attempt);
    pump(h, a);
}

void mt__actor_restarting(struct mt_head *h, struct mt_task *t)
{
    struct mt_actor *a = mt_actor_find(table(h), t->num);

    if (!a || a->state == MT_ACTOR_DEAD)
        return;
    a->state = MT_ACTOR_RESTARTING;
    a->restarts++;
    a->pid = 0;
    MT_WARN("actor %s restarting (restart %u): %s", a->id, a->restarts,
            t->error ? t->error : "");
}

/* Why an actor whose creation task ended is dead. */
static char *death_reason(const struct mt_actor *a, const struct mt_task *t)
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

void mt__actor_task_ended(struct mt_head *h, struct mt_task *t)
{
    struct mt_actor *a;
    char *why;

    if (t->kind != MANTA__TASK_KIND__TASK_KIND_ACTOR_CREATE)
        return;
    a = mt_actor_find(table(h), t->num);
    if (!a || a->state == MT_ACTOR_DEAD)
        return;
    why = death_reason(a, t);
    MT_INFO("actor %s%s%s dead: %s", a->id, a->name ? " " : "",
            a->name ? a->name : "", why);
    mt_actor_set_dead(table(h), a, why, mt_now_wall_ms());
    free(why);
    fail_queued(h, a);
}

/* ---- SubmitTask of actor kinds ------------------------------------------- */

static void submit_create(struct mt_head *h, struct mt_rpc_call *call,
                          const Manta__TaskSpec *s)
{
    Manta__SubmitTaskReply reply = MANTA__SUBMIT_TASK_REPLY__INIT;
    struct mt_actor *other = mt_actor_find_name(table(h), s->actor_name);
    int retries = s->max_restarts < 0 ? INT_MAX : s->max_restarts;
    const char *why = NULL;
    struct mt_task *t;

    if (other) {
        char *msg = mt_xasprintf("actor name '%s' is taken by live actor %s",
                                 s->actor_name, other->id);
        mt_rpc_fail(call, -MT_EEXIST, msg);
        free(msg);
        return;
    }
    t = mt__task_add(h, s, retries);
    mt_actor_new(table(h), t->num, s->actor_name, s->function, s->owner_id,
                 s->actor_detached, s->max_restarts, mt_now_wall_ms());
    if (mt__task_enqueue(h, t, &why) < 0) {
        mt__task_end(h, t, MT_TASK_FAILED, -1, why);
        mt_rpc_fail(call, -MT_EINVAL, why);
        return;
    }
    reply.task_id = t->id;
    mt_rpc_reply(call, &reply.base);
}

static void submit_call(struct mt_head *h, struct mt_rpc_call *call,
                        const Manta__TaskSpec *s)
{
    Manta__SubmitTaskReply reply = MANTA__SUBMIT_TASK_REPLY__INIT;
    struct mt_actor *a = mt_actor_find_id(table(h), s->actor_id);
    struct mt_task *t;

    if (!a) {
        mt_rpc_fail(call, -MT_ENOENT, "no such actor");
        return;
    }
    t = mt__task_add(h, s, 0);
    if (a->state == MT_ACTOR_DEAD) {
        fail_call(h, t, a->death_reason ? a->death_reason : "dead");
    } else {
        mt_actor_queue_push(a, t->num);
        pump(h, a);
    }
    reply.task_id = t->id;
    mt_rpc_reply(call, &reply.base);
}

void mt__actor_submit(struct mt_head *h, struct mt_rpc_call *call,
                      const void *spec)
{
    const Manta__TaskSpec *s = spec;

    if (s->kind == MANTA__TASK_KIND__TASK_KIND_ACTOR_CREATE)
        submit_create(h, call, s);
    else
        submit_call(h, call, s);
}

/* ---- GetActor / ListActors / KillActor ------------------------------------ */

static void fill_info(struct mt_head *h, const struct mt_actor *a,
                      Manta__ActorInfo *ai)
{
    struct mt_node *n = a->state == MT_ACTOR_ALIVE && a->node_id
                            ? mt_node_table_find(&h->nodes, a->node_id)
                            : NULL;

    manta__actor_info__init(ai);
    if (n && n->state == MT_NODE_ALIVE) {
        ai->address = n->address;
        ai->incarnation = a->incarnation;
    }
    ai->actor_id = (char *)a->id;
    ai->name = a->name ? a->name : (char *)"";
    ai->state = (Manta__ActorState)a->state;
    ai->node_id = a->node_id ? a->node_id : (char *)"";
    ai->function = a->function;
    ai->detached = a->detached;
    ai->max_restarts = a->max_restarts;
    ai->num_restarts = a->restarts;
    ai->death_reason = a->death_reason ? a->death_reason : (char *)"";
    ai->pid = a->pid;
    ai->create_time_ms = a->create_ms;
    ai->end_time_ms = a->end_ms;
    ai->owner_id = a->owner;
    ai->calls_queued = a->q_len;
    ai->calls_dispatched = a->dispatched;
}

void mt__h_get_actor(struct mt_rpc_call *call, const ProtobufCMessage *m,
                     void *arg)
{
    const Manta__GetActorRequest *req = (const Manta__GetActorRequest *)m;
    Manta__GetActorReply reply = MANTA__GET_ACTOR_REPLY__INIT;
    Manta__ActorInfo ai;
    struct mt_head *h = arg;
    struct mt_actor *a;

    if (req->actor_id[0])
        a = mt_actor_find_id(table(h), req->actor_id);
    else
        a = mt_actor_find_name(table(h), req->name);
    if (!a) {
        mt_rpc_fail(call, -MT_ENOENT,
                    req->actor_id[0] ? "no such actor"
                                     : "no live actor has that name");
        return;
    }
    fill_info(h, a, &ai);
    reply.actor = &ai;
    mt_rpc_reply(call, &reply.base);
}

void mt__h_list_actors(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    const Manta__ListActorsRequest *req = (const Manta__ListActorsRequest *)m;
    Manta__ListActorsReply reply = MANTA__LIST_ACTORS_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_actor_table *tb = table(h);
    size_t max = req->limit ? (req->limit > LIST_MAX ? LIST_MAX : req->limit)
                            : LIST_DEFAULT;
    Manta__ActorInfo *infos, **ptrs;
    size_t n = 0;

    if (max > tb->n)
        max = tb->n;
    infos = mt_xcalloc(max + 1, sizeof(*infos));
    ptrs = mt_xcalloc(max + 1, sizeof(*ptrs));
    for (size_t i = tb->n; i-- > 0;) {
        const struct mt_actor *a = tb->v[i];

        if ((req->state && (int)req->state != (int)a->state) ||
            (*req->name && (!a->name || strcmp(a->name, req->name))))
            continue;
        if (reply.total++ >= max)
            continue;
        fill_info(h, a, &infos[n]);
        ptrs[n] = &infos[n];
        n++;
    }
    reply.n_actors = n;
    reply.actors = ptrs;
    mt_rpc_reply(call, &reply.base);
    free(infos);
    free(ptrs);
}

/* Kill a's executor: for good with no_restart, else as a crash. */
static void kill_actor(struct mt_head *h, struct mt_actor *a, bool no_restart)
{
    struct mt_task *t = mt_task_find(&h->tq->table, a->num);

    if (a->state != MT_ACTOR_DEAD && (!t || mt_task_terminal(t)))
        mt_actor_set_dead(table(h), a, "its creation task is gone",
                          mt_now_wall_ms());
    if (a->state == MT_ACTOR_DEAD)
        return;
    MT_INFO("actor %s: kill requested%s", a->id,
            no_restart ? " (no restart)" : "");
    if (no_restart) {
        a->no_restart = true;
        mt__task_stop(h, t, "actor killed by request");
    } else {
        mt__task_kill_on_worker(h, t);
    }
}

void mt__h_kill_actor(struct mt_rpc_call *call, const ProtobufCMessage *m,
                      void *arg)
{
    const Manta__KillActorRequest *req = (const Manta__KillActorRequest *)m;
    Manta__KillActorReply reply = MANTA__KILL_ACTOR_REPLY__INIT;
    struct mt_head *h = arg;
    struct mt_actor *a = mt_actor_find_id(table(h), req->actor_id);

    if (!a) {
        mt_rpc_fail(call, -MT_ENOENT, "no such actor");
        return;
    }
    kill_actor(h, a, req->no_restart);
    reply.state = (Manta__ActorState)a->state;
    mt_rpc_reply(call, &reply.base);
}

/* ---- LeaseActorOwner: owners that go away take their actors along ---- */

/* One open lease stream. Guarded by: loop thread. */
struct mt_actor_lease {
    struct mt_head *h;
    struct mt_rpc_call *call;
    char *owner;
    struct mt_actor_lease *next;
};

static void lease_unlink(struct mt_head *h, struct mt_actor_lease *l)
{
    struct mt_actor_lease **pp = &h->tq->leases;

    while (*pp && *pp != l)
        pp = &(*pp)->next;
    if (*pp)
        *pp = l->next;
    free(l->owner);
    free(l);
}

/* Kill the live non-detached actors of owner. */
static void kill_owned(struct mt_head *h, const char *owner)
{
    struct mt_actor_table *tb = table(h);

    for (size_t i = 0; i < tb->n; i++) {
        struct mt_actor *a = tb->v[i];

        if (a->detached || a->state == MT_ACTOR_DEAD ||
            strcmp(a->owner, owner) != 0)
            continue;
        a->owner_gone = true;
        kill_actor(h, a, true);
    }
}

static void on_lease_gone(void *arg)
{
    struct mt_actor_lease *l = arg, *o;
    struct mt_head *h = l->h;
    char *owner = mt_xstrdup(l->owner);

    mt_rpc_fail(l->call, -MT_ECANCELED, "lease ended");
    lease_unlink(h, l);
    for (o = h->tq->leases; o; o = o->next)
        if (strcmp(o->owner, owner) == 0)
            break;
    if (!o && !h->tq->closing) {
        MT_INFO("actor owner %s went away: killing its actors", owner);
        kill_owned(h, owner);
    }
    free(owner);
}

void mt__h_lease_actor_owner(struct mt_rpc_call *call,
                             const ProtobufCMessage *m, void *arg)
{
    const Manta__ActorOwnerLeaseRequest *req =
        (const Manta__ActorOwnerLeaseRequest *)m;
    struct mt_head *h = arg;
    struct mt_actor_lease *l;

    if (!req->owner_id[0] || strlen(req->owner_id) > 128) {
        mt_rpc_fail(call, -MT_EINVAL, "owner_id must be 1-128 bytes");
        return;
    }
    l = mt_xcalloc(1, sizeof(*l));
    l->h = h;
    l->call = call;
    l->owner = mt_xstrdup(req->owner_id);
    l->next = h->tq->leases;
    h->tq->leases = l;
    mt_rpc_call_on_cancel(call, on_lease_gone, l);
}

void mt__actors_close_rpc(struct mt_head *h)
{
    while (h->tq->leases) {
        mt_rpc_fail(h->tq->leases->call, -MT_EUNAVAIL,
                    "head is shutting down");
        lease_unlink(h, h->tq->leases);
    }
}
