/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actor.c -- the actor API of libmanta (manta/actor.h).
 *
 * An actor handle is the actor's id plus what it last learnt of where the
 * actor lives. Creating goes through the task path (SubmitTask with kind
 * ACTOR_CREATE); lookups and kills through GetActor / KillActor requests
 * run on the client's loop thread (rpc_actor.c).
 *
 * Calls take one of two roads. Once the handle has seen the actor ALIVE
 * (mt_actor_get, mt_actor_wait_ready, mt_actor_info_get), calls go straight
 * to the actor's worker (CallActor) under a caller id of the handle's own,
 * numbered 0, 1, 2, ... so the worker runs them in call order; the reply
 * completes a local task. Otherwise, or after a direct call found the
 * actor dead or unreachable, calls go through the head (SubmitTask with
 * kind ACTOR_METHOD, followed by a WatchTask), which queues them while the
 * actor is being created or restarted. MANTA_ACTOR_DIRECT=0 in the
 * environment keeps every call on the head's road.
 *
 * The client remembers the non-detached actors it created (c->owned, under
 * c->mu) and kills them in mt_client_disconnect(), before its loop stops.
 *
 * THREAD: any. A handle's road (direct, address, caller, next seq) is
 * guarded by its own mutex, taken alone (never with the client's mu);
 * handles are refcounted between the user and direct calls in flight.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/rpc.h"
#include "common/sys.h"
#include "sdk/sdk_int.h"

#define MT_ACTOR_MAGIC 0x6d746163u /* "mtac" */
#define READY_POLL_MS 20
#define KILL_AT_DISCONNECT_MS 2000

struct mt_actor {
    uint32_t magic;              /* MT_ACTOR_MAGIC */
    atomic_int refs;             /* the user's, and one per direct call */
    char id[17];                 /* read-only */
    pthread_mutex_t mu;          /* guards the fields below */
    bool direct;                 /* calls go straight to the worker */
    char *address;               /* direct: the worker */
    uint32_t incarnation;        /* direct: the actor's incarnation */
    char caller[17];             /* direct: our caller id there */
    uint64_t next_seq;           /* direct: the next call's number */
};

struct mt_actor_opts {
    char *name;
    bool detached;
    int max_restarts;
};

static bool check_client(const struct mt_client *c)
{
    return c && c->magic == MT_CLIENT_MAGIC;
}

static bool check_actor(const struct mt_actor *a)
{
    return a && a->magic == MT_ACTOR_MAGIC;
}

static int bad_args(mt_client_t *c, const char *what)
{
    return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL, "%s", what);
}

/* ---- options ----------------------------------------------------------- */

int mt_actor_opts_create(mt_actor_opts_t **out)
{
    struct mt_actor_opts *o = calloc(1, sizeof(*o));

    if (!out) {
        free(o);
        return -MT_EINVAL;
    }
    *out = o;
    return o ? 0 : -MT_ENOMEM;
}

void mt_actor_opts_destroy(mt_actor_opts_t *o)
{
    if (!o)
        return;
    free(o->name);
    free(o);
}

int mt_actor_opts_set_name(mt_actor_opts_t *o, const char *name)
{
    char *copy = NULL;

    if (!o || (name && (!*name || strlen(name) > MT_ACTOR_NAME_MAX)))
        return -MT_EINVAL;
    if (name && !(copy = strdup(name)))
        return -MT_ENOMEM;
    free(o->name);
    o->name = copy;
    return 0;
}

int mt_actor_opts_set_detached(mt_actor_opts_t *o, bool detached)
{
    if (!o)
        return -MT_EINVAL;
    o->detached = detached;
    return 0;
}

int mt_actor_opts_set_max_restarts(mt_actor_opts_t *o, int max_restarts)
{
    if (!o || max_restarts < -1)
        return -MT_EINVAL;
    o->max_restarts = max_restarts;
    return 0;
}

/* ---- handles ------------------------------------------------------------- */

static int actor_new(const char *id, mt_actor_t **out)
{
    struct mt_actor *a = calloc(1, sizeof(*a));

    if (!a)
        return -MT_ENOMEM;
    a->magic = MT_ACTOR_MAGIC;
    atomic_init(&a->refs, 1);
    pthread_mutex_init(&a->mu, NULL);
    snprintf(a->id, sizeof(a->id), "%s", id);
    *out = a;
    return 0;
}

const char *mt_actor_id(const mt_actor_t *a)
{
    return check_actor(a) ? a->id : "";
}

void mt__actor_unref(struct mt_actor *a)
{
    if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&a->mu);
    free(a->address);
    a->magic = 0;
    free(a);
}

void mt_actor_release(mt_actor_t *a)
{
    if (check_actor(a))
        mt__actor_unref(a);
}

static bool direct_allowed(void)
{
    const char *v = getenv("MANTA_ACTOR_DIRECT");

    return !v || strcmp(v, "0") != 0;
}

/* What GetActor said: take the direct road to an ALIVE actor. A new road
 * gets a new caller id, so its numbering starts clean at 0. */
static void learn(struct mt_actor *a, const struct mt__actor_info *i)
{
    char *addr;

    if (i->state != MT_ACTOR_STATE_ALIVE || !i->address || !*i->address ||
        !direct_allowed())
        return;
    pthread_mutex_lock(&a->mu);
    if (!a->direct || a->incarnation != i->incarnation ||
        strcmp(a->address, i->address) != 0) {
        if ((addr = strdup(i->address))) {
            free(a->address);
            a->address = addr;
            a->incarnation = i->incarnation;
            mt_random_hex(a->caller, 8);
            a->next_seq = 0;
            a->direct = true;
        }
    }
    pthread_mutex_unlock(&a->mu);
}

/* A direct call failed for the actor's sake: back to the head's road. */
static void forget(struct mt_actor *a, uint32_t incarnation)
{
    pthread_mutex_lock(&a->mu);
    if (a->direct && a->incarnation == incarnation)
        a->direct = false;
    pthread_mutex_unlock(&a->mu);
}

const char *mt_actor_state_name(mt_actor_state s)
{
    switch (s) {
    case MT_ACTOR_STATE_PENDING_CREATION: return "PENDING_CREATION";
    case MT_ACTOR_STATE_ALIVE: return "ALIVE";
    case MT_ACTOR_STATE_RESTARTING: return "RESTARTING";
    case MT_ACTOR_STATE_DEAD: return "DEAD";
    default: return "UNKNOWN";
    }
}

/* Remember a non-detached actor for mt_client_disconnect(). */
static void own(struct mt_client *c, const char *id)
{
    pthread_mutex_lock(&c->mu);
    if (c->n_owned == c->cap_owned) {
        size_t cap = c->cap_owned ? c->cap_owned * 2 : 8;
        void *v = realloc(c->owned, cap * sizeof(*c->owned));

        if (!v) {
            pthread_mutex_unlock(&c->mu);
            return; /* out of memory: it is not killed at disconnect */
        }
        c->owned = v;
        c->cap_owned = cap;
    }
    snprintf(c->owned[c->n_owned++], 17, "%s", id);
    pthread_mutex_unlock(&c->mu);
}

static int post(struct mt_client *c, struct mt__req *r);

/* Ask the loop thread to hold the owner lease (LeaseActorOwner), so the
 * head kills our non-detached actors if this process dies. Best effort:
 * the clean path is mt__actors_disconnect(). */
static void hold_lease(struct mt_client *c)
{
    struct mt__req *r = mt__req_new(MT__REQ_ACTOR_LEASE);

    if (r)
        post(c, r);
}

/* ---- create and call ----------------------------------------------------- */

/* Send a built SubmitTaskRequest; RET 0 with *out the task, or -MT_E*. */
static int submit_msg(struct mt_client *c, void *msg, size_t output_limit,
                      mt_task_t **out)
{
    struct mt__req *r = mt__req_new(MT__REQ_SUBMIT);
    int rc;

    if (!r) {
        mt__rpc_submit_free(msg);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    r->submit_msg = msg;
    r->output_limit = output_limit;
    r->timeout_ms = c->rpc_timeout_ms;
    r->rpc_flags = MT_RPC_WAIT_FOR_READY;
    rc = mt__req_run(c, r, c->rpc_timeout_ms + 2000);
    if (rc < 0)
        return rc;
    *out = r->task;
    r->task = NULL;
    mt__req_free(r);
    return 0;
}

static int check_fn_args(mt_client_t *c, const char *fn,
                         const void *const *args, const size_t *sizes,
                         size_t nargs)
{
    if (!fn || !*fn || strlen(fn) > 512)
        return bad_args(c, "function must be \"lib.so:fn\" or a bare name");
    if (nargs && (!args || !sizes))
        return bad_args(c, "args and sizes are required");
    for (size_t i = 0; i < nargs; i++)
        if (sizes[i] && !args[i])
            return mt__set_error(c, -MT_EINVAL, "argument %zu is NULL", i);
    return 0;
}

int mt_actor_create(mt_client_t *c, const char *factory,
                    const void *const *args, const size_t *sizes,
                    size_t nargs, const mt_task_opts_t *task_opts,
                    const mt_actor_opts_t *actor_opts, mt_actor_t **out)
{
    static const struct mt_actor_opts no_opts = {NULL, false, 0};
    const struct mt_actor_opts *ao = actor_opts ? actor_opts : &no_opts;
    struct mt_task_opts def;
    const struct mt_task_opts *o = task_opts;
    mt_task_t *t = NULL;
    void *msg = NULL;
    int rc;

    if (out)
        *out = NULL;
    if (!check_client(c) || !out)
        return bad_args(c, "invalid client or out pointer");
    if ((rc = check_fn_args(c, factory, args, sizes, nargs)) < 0)
        return rc;
    if (!o) {
        if (mt__opts_init(&def) < 0)
            return mt__set_error(c, -MT_ENOMEM, "out of memory");
        o = &def;
    }
    rc = mt__rpc_actor_create_build(factory, args, sizes, nargs, o, ao->name,
                                    ao->detached, ao->max_restarts,
                                    c->owner_id, &msg);
    if (o == &def)
        mt__opts_release(&def);
    if (rc < 0)
        return mt__set_error(c, rc, "out of memory");
    if (!ao->detached)
        hold_lease(c);
    rc = submit_msg(c, msg, 0, &t);
    if (rc < 0)
        return rc;
    rc = actor_new(mt_task_id(t), out);
    mt_task_release(t);
    if (rc < 0)
        return mt__set_error(c, rc, "out of memory");
    if (!ao->detached)
        own(c, (*out)->id);
    return 0;
}

/* ---- the direct road ------------------------------------------------------ */

/* A task that no head knows: a direct call's outcome. refs 1. */
static struct mt_task *local_task(struct mt_client *c, const char *id)
{
    struct mt_task *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->magic = MT_SDK_TASK_MAGIC;
    atomic_init(&t->refs, 1);
    t->client = c;
    snprintf(t->id, sizeof(t->id), "%s", id);
    t->exit_code = -1;
    t->state = MT_TASK_STATE_SCHEDULED;
    atomic_init(&t->settled, true); /* its id is known already */
    return t;
}

void mt__actor_direct_done(struct mt_client *c, struct mt_actor *a,
                           struct mt_task *t, bool ok, const uint8_t *result,
                           size_t len, const char *error, bool actor_died)
{
    uint8_t *v = ok && len ? malloc(len) : NULL;
    char *e = strdup(ok ? "" : error && *error ? error : "the call failed");

    if (v)
        memcpy(v, result, len);
    pthread_mutex_lock(&c->mu);
    t->state = ok ? MT_TASK_STATE_FINISHED : MT_TASK_STATE_FAILED;
    t->exit_code = ok ? 0 : -1;
    t->value = v;
    t->value_len = v ? len : 0;
    free(t->error);
    t->error = e;
    t->actor_died = !ok && actor_died;
    t->ended = true;
    if (ok && len && !v)
        t->lost = -MT_ENOMEM;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (!ok && actor_died) {
        /* The incarnation is gone (or out of reach): the head's road
         * queues calls until it is back. */
        pthread_mutex_lock(&a->mu);
        a->direct = false;
        pthread_mutex_unlock(&a->mu);
    }
    mt__task_unref(t);
    mt__actor_unref(a);
}

/* Queue r for the loop thread without waiting for it (the loop frees it).
 * RET 0, or -MT_ECLOSED (disconnecting: r is freed here). */
static int post(struct mt_client *c, struct mt__req *r)
{
    pthread_mutex_lock(&c->mu);
    if (c->stopping) {
        pthread_mutex_unlock(&c->mu);
        mt__req_free(r);
        return mt__set_error(c, -MT_ECLOSED, "the client is disconnecting");
    }
    r->abandoned = true;
    mt__queue_push(&c->q, &r->qn);
    pthread_mutex_unlock(&c->mu);
    uv_async_send(&c->wake);
    return 0;
}

/* Send one call on the direct road. RET 0 with *out, 1 when the handle is
 * not on it (use the head's), or -MT_E*. */
static int call_direct(struct mt_client *c, struct mt_actor *a,
                       const char *method, const void *const *args,
                       const size_t *sizes, size_t nargs, mt_task_t **out)
{
    struct mt__req *r;
    char id[64];
    uint32_t inc;
    int rc;

    if (!(r = mt__req_new(MT__REQ_ACTOR_CALL)))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    pthread_mutex_lock(&a->mu);
    if (!a->direct) {
        pthread_mutex_unlock(&a->mu);
        mt__req_free(r);
        return 1;
    }
    inc = a->incarnation;
    snprintf(id, sizeof(id), "%s.%s.%llu", a->id, a->caller,
             (unsigned long long)a->next_seq);
    rc = mt__rpc_actor_direct_build(a->id, inc, a->caller, a->next_seq++,
                                    method, args, sizes, nargs,
                                    &r->call_msg);
    r->actor_address = strdup(a->address);
    pthread_mutex_unlock(&a->mu);
    r->task = local_task(c, id);
    if (rc < 0 || !r->actor_address || !r->task) {
        mt__req_free(r);
        forget(a, inc); /* a number was taken and never sent */
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    atomic_fetch_add(&a->refs, 1);
    r->handle = a;
    atomic_fetch_add(&r->task->refs, 1);
    *out = r->task;
    return post(c, r);
}

int mt_actor_call(mt_client_t *c, const mt_actor_t *a, const char *method,
                  const void *const *args, const size_t *sizes, size_t nargs,
                  mt_task_t **out)
{
    void *msg = NULL;
    int rc;

    if (out)
        *out = NULL;
    if (!check_client(c) || !out || !check_actor(a))
        return bad_args(c, "invalid client, actor or out pointer");
    if ((rc = check_fn_args(c, method, args, sizes, nargs)) < 0)
        return rc;
    rc = call_direct(c, (struct mt_actor *)a, method, args, sizes, nargs,
                     out);
    if (rc <= 0)
        return rc;
    rc = mt__rpc_actor_call_build(a->id, method, args, sizes, nargs, &msg);
    if (rc < 0)
        return mt__set_error(c, rc, "out of memory");
    return submit_msg(c, msg, MT_TASK_OUTPUT_DEFAULT, out);
}

/* ---- lookups and kills --------------------------------------------------- */

/* Run a GetActor / KillActor request; RET as the request, r owned after. */
static int run_actor_req(struct mt_client *c, struct mt__req *r)
{
    r->timeout_ms = c->rpc_timeout_ms;
    r->rpc_flags = MT_RPC_WAIT_FOR_READY;
    return mt__req_run(c, r, c->rpc_timeout_ms + 2000);
}

static int get_by(mt_client_t *c, const char *id, const char *name,
                  mt_actor_t **out)
{
    struct mt__req *r;
    int rc;

    if (out)
        *out = NULL;
    if (!check_client(c) || !out)
        return bad_args(c, "invalid client or out pointer");
    if (id ? strlen(id) != 16 : (!name || !*name ||
                                 strlen(name) > MT_ACTOR_NAME_MAX))
        return bad_args(c, id ? "an actor id is 16 hex digits"
                              : "an actor name is 1-256 bytes");
    if (!(r = mt__req_new(MT__REQ_ACTOR_GET)))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    if (id)
        snprintf(r->actor_id, sizeof(r->actor_id), "%s", id);
    else if (!(r->actor_name = strdup(name))) {
        mt__req_free(r);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    rc = run_actor_req(c, r);
    if (rc < 0)
        return rc;
    rc = actor_new(r->actor.id, out);
    if (rc == 0)
        learn(*out, &r->actor);
    mt__req_free(r);
    return rc < 0 ? mt__set_error(c, rc, "out of memory") : 0;
}

int mt_actor_get(mt_client_t *c, const char *name, mt_actor_t **out)
{
    return get_by(c, NULL, name, out);
}

int mt_actor_get_id(mt_client_t *c, const char *id, mt_actor_t **out)
{
    return get_by(c, id, NULL, out);
}

void mt_actor_info_init(mt_actor_info *i)
{
    memset(i, 0, sizeof(*i));
    i->size = sizeof(*i);
}

void mt_actor_info_release(mt_actor_info *i)
{
    uint32_t size;

    if (!i)
        return;
    size = i->size;
    free(i->name);
    free(i->node_id);
    free(i->death_reason);
    memset(i, 0, sizeof(*i));
    i->size = size;
}

int mt_actor_info_get(mt_client_t *c, const mt_actor_t *a,
                      mt_actor_info *info)
{
    struct mt__req *r;
    int rc;

    if (!check_client(c) || !check_actor(a) || !info ||
        info->size < sizeof(*info))
        return bad_args(c, "invalid client, actor or info");
    if (!(r = mt__req_new(MT__REQ_ACTOR_GET)))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    memcpy(r->actor_id, a->id, sizeof(r->actor_id));
    rc = run_actor_req(c, r);
    if (rc < 0)
        return rc;
    learn((struct mt_actor *)a, &r->actor);
    mt_actor_info_release(info);
    info->state = (mt_actor_state)r->actor.state;
    info->pid = r->actor.pid;
    info->num_restarts = r->actor.restarts;
    info->max_restarts = r->actor.max_restarts;
    info->detached = r->actor.detached;
    info->name = r->actor.name;
    info->node_id = r->actor.node_id;
    info->death_reason = r->actor.death_reason;
    r->actor.name = r->actor.node_id = r->actor.death_reason = NULL;
    mt__req_free(r);
    return 0;
}

int mt_actor_wait_ready(mt_client_t *c, const mt_actor_t *a, int timeout_ms)
{
    int64_t end = mt_now_mono_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
    mt_actor_info info;
    int rc;

    mt_actor_info_init(&info);
    for (;;) {
        rc = mt_actor_info_get(c, a, &info);
        if (rc < 0)
            break;
        if (info.state == MT_ACTOR_STATE_ALIVE)
            break;
        if (info.state == MT_ACTOR_STATE_DEAD) {
            rc = mt__set_error(c, -MT_EACTORDIED, "actor %s is dead: %s",
                               a->id, info.death_reason);
            break;
        }
        if (timeout_ms >= 0 && mt_now_mono_ms() >= end) {
            rc = mt__set_error(c, -MT_ETIMEDOUT, "actor %s still %s after "
                               "%d ms", a->id,
                               mt_actor_state_name(info.state), timeout_ms);
            break;
        }
        nanosleep(&(struct timespec){0, READY_POLL_MS * 1000000L}, NULL);
    }
    mt_actor_info_release(&info);
    return rc;
}

int mt_actor_kill(mt_client_t *c, const mt_actor_t *a, bool no_restart)
{
    struct mt__req *r;
    int rc;

    if (!check_client(c) || !check_actor(a))
        return bad_args(c, "invalid client or actor");
    if (!(r = mt__req_new(MT__REQ_ACTOR_KILL)))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    memcpy(r->actor_id, a->id, sizeof(r->actor_id));
    r->no_restart = no_restart;
    rc = run_actor_req(c, r);
    if (rc < 0)
        return rc;
    mt__req_free(r);
    return 0;
}

/* ---- disconnect ----------------------------------------------------------- */

void mt__actors_disconnect(struct mt_client *c)
{
    char (*ids)[17];
    size_t n;

    pthread_mutex_lock(&c->mu);
    ids = c->owned;
    n = c->n_owned;
    c->owned = NULL;
    c->n_owned = c->cap_owned = 0;
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < n; i++) {
        struct mt__req *r = mt__req_new(MT__REQ_ACTOR_KILL);

        if (!r)
            break;
        memcpy(r->actor_id, ids[i], sizeof(r->actor_id));
        r->no_restart = true;
        r->timeout_ms = KILL_AT_DISCONNECT_MS;
        if (mt__req_run(c, r, KILL_AT_DISCONNECT_MS + 1000) == 0)
            mt__req_free(r);
    }
    free(ids);
}
