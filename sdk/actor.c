/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actor.c -- the actor API of libmanta (manta/actor.h) and the client's
 * actors part.
 *
 * An actor handle is the actor's id plus what it last learnt of where the
 * actor lives. Creating goes through the task path (a task of kind
 * ACTOR_CREATE); lookups and kills are calls to the head (rpc_actor.c).
 *
 * Calls take one of two roads. Once the handle has seen the actor ALIVE
 * (mt_actor_get, mt_actor_wait_ready, mt_actor_info_get), calls go straight
 * to the actor's worker (CallActor, rpc_actor_call.c), numbered so the
 * worker runs them in call order; the reply completes a local task. When
 * that incarnation goes away the handle holds later calls, looks the actor
 * up again and sends them (and calls the old incarnation refused unrun)
 * to the new one. Otherwise calls go through the head (a task of kind
 * ACTOR_METHOD, followed by a WatchTask), which queues them while the
 * actor is being created or restarted. MANTA_ACTOR_DIRECT=0 in the
 * environment keeps every call on the head's road.
 *
 * The client remembers the non-detached actors it created (under c->mu)
 * and kills them in mt_client_disconnect(), before its loop stops.
 *
 * THREAD: any. A handle's road (actor_handle.h) is guarded by its own
 * mutex, taken alone (never with the client's mu);
 * handles are refcounted between the user and direct calls in flight.
 */
#include "sdk/actor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/sys.h"
#include "sdk/actor_handle.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/rpc_actor.h"
#include "sdk/rpc_actor_call.h"
#include "sdk/task.h"
#include "sdk/task_opts.h"
#include "sdk/task_state.h"

#define READY_POLL_MS 20
#define KILL_AT_DISCONNECT_MS 2000

struct mt_actor_opts {
    char *name;
    bool detached;
    int max_restarts;
};

static bool check_actor(const struct mt_actor *a)
{
    return a && a->magic == MT_ACTOR_MAGIC;
}

static int bad_args(mt_client_t *c, const char *what)
{
    return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL, "%s",
                         what);
}

/* An id to find an actor by: 16 characters, and not another kind's id
 * (common/ids.h). RET 0 or -MT_EINVAL (recorded). */
static int check_id(mt_client_t *c, const char *id)
{
    if (strlen(id) != MT_NUM_ID_LEN)
        return bad_args(c, "an actor id is 16 characters: a and 15 hex "
                           "digits");
    return mt__check_id(c, id, MT_ID_ACTOR);
}

/* ---- the actors part ----------------------------------------------------- */

/* Kill the non-detached actors this client created (disconnect). */
static void actors_leave(struct mt_client *c, void *st)
{
    struct mt__actors *as = st;
    char (*ids)[MT__ACTOR_ID_SIZE];
    size_t n;

    pthread_mutex_lock(&c->mu);
    ids = as->owned;
    n = as->n_owned;
    as->owned = NULL;
    as->n_owned = as->cap_owned = 0;
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < n; i++)
        mt__actor_kill_id(c, ids[i], true, KILL_AT_DISCONNECT_MS, NULL);
    free(ids);
}

static void actors_wake(struct mt_client *c, void *st)
{
    mt__actor_flush(c);
}

static void actors_stop(struct mt_client *c, void *st)
{
    mt__actor_calls_stop(c);
    mt__actor_stop(c);
}

static void actors_destroy(void *st)
{
    struct mt__actors *as = st;

    free(as->owned);
    free(as->wchans);
    free(as->abatches);
    free(as->retries);
    free(as);
}

static const struct mt__part_ops actors_part = {
    .leave = actors_leave,
    .wake = actors_wake,
    .stop = actors_stop,
    .destroy = actors_destroy,
};

int mt__actors_attach(struct mt_client *c)
{
    struct mt__actors *as = calloc(1, sizeof(*as));

    if (!as)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    c->actors = as;
    mt__client_add_part(c, &actors_part, as);
    return 0;
}

/* Remember a non-detached actor for mt_client_disconnect(). */
static void own(struct mt_client *c, const char *id)
{
    struct mt__actors *as = c->actors;

    pthread_mutex_lock(&c->mu);
    if (as->n_owned == as->cap_owned) {
        size_t cap = as->cap_owned ? as->cap_owned * 2 : 8;
        void *v = realloc(as->owned, cap * sizeof(*as->owned));

        if (!v) {
            pthread_mutex_unlock(&c->mu);
            return; /* out of memory: it is not killed at disconnect */
        }
        as->owned = v;
        as->cap_owned = cap;
    }
    snprintf(as->owned[as->n_owned++], MT__ACTOR_ID_SIZE, "%s", id);
    pthread_mutex_unlock(&c->mu);
}

/* ---- options ------------------------------------------------------------- */

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
    if (!o || (name && (!*name || strlen(name) > MT_ACTOR_NAME_MAX)))
        return -MT_EINVAL;
    return mt_def_set_str(&o->name, name);
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
    mt_random_hex(a->tag, 8);
    *out = a;
    return 0;
}

const char *mt_actor_id(const mt_actor_t *a)
{
    return check_actor(a) ? a->id : "";
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

/* Whether a direct road can move to d's incarnation: it is elsewhere and
 * none of its calls is unanswered (mu held). While a road is repaired the
 * repair picks the next one. */
static bool may_move_locked(const struct mt_actor *a,
                            const struct mt__actor_desc *d)
{
    if (a->road == MT__ROAD_HEAD)
        return true;
    return a->road == MT__ROAD_DIRECT && a->inflight == 0 &&
           (a->incarnation != d->incarnation ||
            strcmp(a->address, d->address) != 0);
}

/* What GetActor said: take the direct road to an ALIVE actor. A new road
 * gets a new caller id, so its numbering starts clean at 0. */
static void learn(struct mt_actor *a, const struct mt__actor_desc *d)
{
    char *addr;

    if (d->info.state != MT_ACTOR_STATE_ALIVE || !d->address ||
        !*d->address || !direct_allowed())
        return;
    pthread_mutex_lock(&a->mu);
    if (may_move_locked(a, d) && (addr = strdup(d->address))) {
        free(a->address);
        a->address = addr;
        a->incarnation = d->incarnation;
        mt_random_hex(a->caller, 8);
        a->next_seq = 0;
        a->road = MT__ROAD_DIRECT;
    }
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

/* ---- create and call ----------------------------------------------------- */

static int check_fn_args(mt_client_t *c, const char *fn,
                         const void *const *args, const size_t *sizes,
                         size_t nargs)
{
    if (!fn || !*fn || strlen(fn) > MT_TASK_MAX_FUNCTION)
        return bad_args(c, "function must be \"lib.so:fn\" or a bare name");
    if (nargs && (!args || !sizes))
        return bad_args(c, "args and sizes are required");
    for (size_t i = 0; i < nargs; i++)
        if (sizes[i] && !args[i])
            return mt__set_error(c, -MT_EINVAL, "argument %zu is NULL", i);
    return 0;
}

/* The function task def of an actor's factory or method: o's (the
 * defaults when NULL), fn with the arguments, no retries. */
static struct mt_task_def *actor_def(const struct mt_task_opts *o,
                                     enum mt_task_kind kind, const char *fn,
                                     const void *const *args,
                                     const size_t *sizes, size_t nargs)
{
    struct mt_task_def *d = mt__task_def_new(o);
    struct mt_task_arg *v = calloc(nargs + 1, sizeof(*v));
    int rc = d && v ? 0 : -MT_ENOMEM;

    for (size_t i = 0; rc == 0 && i < nargs; i++) {
        v[i].data = (uint8_t *)args[i];
        v[i].len = sizes[i];
    }
    if (rc == 0) {
        d->kind = kind;
        d->max_retries = 0;
        d->hold_result = true; /* big results go to the store */
        rc = mt_def_set_str(&d->function, fn);
    }
    if (rc == 0)
        rc = mt_task_def_set_args(d, v, nargs);
    free(v);
    if (rc < 0) {
        mt__task_def_free(d);
        return NULL;
    }
    return d;
}

int mt_actor_create(mt_client_t *c, const char *factory,
                    const void *const *args, const size_t *sizes,
                    size_t nargs, const mt_task_opts_t *task_opts,
                    const mt_actor_opts_t *actor_opts, mt_actor_t **out)
{
    static const struct mt_actor_opts no_opts = {NULL, false, 0};
    const struct mt_actor_opts *ao = actor_opts ? actor_opts : &no_opts;
    struct mt_task_def *d;
    mt_task_t *t = NULL;
    char aid[MT_NUM_ID_LEN + 1];
    const char *tid;
    int rc;

    if (out)
        *out = NULL;
    if (!mt__client_check(c) || !out)
        return bad_args(c, "invalid client or out pointer");
    if ((rc = check_fn_args(c, factory, args, sizes, nargs)) < 0)
        return rc;
    d = actor_def(task_opts, MT_TASK_KIND_ACTOR_CREATE, factory, args, sizes,
                  nargs);
    if (!d || mt_def_set_str(&d->actor_name, ao->name) < 0 ||
        mt_def_set_str(&d->owner_id, c->session_id) < 0) {
        mt__task_def_free(d);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    d->detached = ao->detached;
    d->max_restarts = ao->max_restarts;
    if (!ao->detached)
        mt__actor_hold_lease(c);
    rc = mt__task_submit_def(c, d, 0, 0, &t);
    if (rc < 0)
        return rc;
    tid = mt_task_id(t);
    /* The actor's id: its creation task's number, the actor letter. */
    rc = actor_new(mt_num_id_as(MT_ID_TASK, tid, MT_ID_ACTOR, aid) == 0
                       ? aid
                       : tid,
                   out);
    mt_task_release(t);
    if (rc < 0)
        return mt__set_error(c, rc, "out of memory");
    if (!ao->detached)
        own(c, (*out)->id);
    return 0;
}

/* A task that no head knows: a direct call's outcome. refs 1. */
static struct mt_task *local_task(struct mt_client *c, const char *id)
{
    struct mt_task *t = mt__task_new(c, id, 0);

    if (t)
        t->state = MT_TASK_STATE_SCHEDULED;
    return t;
}

/* Send one call on the direct road. RET 0 with *out, 1 when the handle is
 * not on it (use the head's), or -MT_E*. */
static int call_direct(struct mt_client *c, struct mt_actor *a,
                       const char *method, const void *const *args,
                       const size_t *sizes, size_t nargs, mt_task_t **out)
{
    char id[64];
    uint64_t n;
    struct mt_task *t;

    pthread_mutex_lock(&a->mu);
    if (a->road == MT__ROAD_HEAD) {
        pthread_mutex_unlock(&a->mu);
        return 1;
    }
    n = a->n_direct++;
    pthread_mutex_unlock(&a->mu);
    snprintf(id, sizeof(id), "%s.%s.%llu", a->id, a->tag,
             (unsigned long long)n);
    if (!(t = local_task(c, id)))
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    atomic_fetch_add(&a->refs, 1);
    atomic_fetch_add(&t->refs, 1);
    *out = t;
    if (mt__actor_call_post(c, a, method, args, sizes, nargs, t) < 0) {
        mt_task_release(t);
        *out = NULL;
        return -MT_ECLOSED; /* or ENOMEM: recorded */
    }
    return 0;
}

int mt_actor_call(mt_client_t *c, const mt_actor_t *a, const char *method,
                  const void *const *args, const size_t *sizes, size_t nargs,
                  mt_task_t **out)
{
    struct mt_task_def *d;
    int rc;

    if (out)
        *out = NULL;
    if (!mt__client_check(c) || !out || !check_actor(a))
        return bad_args(c, "invalid client, actor or out pointer");
    if ((rc = check_fn_args(c, method, args, sizes, nargs)) < 0)
        return rc;
    rc = call_direct(c, (struct mt_actor *)a, method, args, sizes, nargs,
                     out);
    if (rc <= 0)
        return rc;
    d = actor_def(NULL, MT_TASK_KIND_ACTOR_METHOD, method, args, sizes,
                  nargs);
    if (!d || mt_def_set_str(&d->actor_id, a->id) < 0) {
        mt__task_def_free(d);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    return mt__task_submit_def(c, d, MT_TASK_OUTPUT_DEFAULT, 0, out);
}

/* ---- lookups and kills --------------------------------------------------- */

static int get_by(mt_client_t *c, const char *id, const char *name,
                  mt_actor_t **out)
{
    struct mt__actor_desc d;
    int rc;

    if (out)
        *out = NULL;
    if (!mt__client_check(c) || !out)
        return bad_args(c, "invalid client or out pointer");
    if (id && check_id(c, id) < 0)
        return -MT_EINVAL;
    if (!id && (!name || !*name || strlen(name) > MT_ACTOR_NAME_MAX))
        return bad_args(c, "an actor name is 1-256 bytes");
    rc = mt__actor_lookup(c, id, name, &d, NULL);
    if (rc < 0)
        return rc;
    rc = actor_new(d.info.actor_id, out);
    if (rc == 0)
        learn(*out, &d);
    mt__actor_desc_release(&d);
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

/* Move the fields of src (full size, ours) that dst (a caller's, maybe
 * older and shorter) has; free the rest of src. */
static void info_move(mt_actor_info *dst, mt_actor_info *src)
{
    uint32_t size = dst->size;

    mt_actor_info_release(dst);
    memcpy(dst, src, size < sizeof(*src) ? size : sizeof(*src));
    dst->size = size;
    if (size >= sizeof(*src))
        mt_actor_info_init(src);
    else /* free what did not fit */
        src->name = src->node_id = src->death_reason = NULL;
    mt_actor_info_release(src);
}

/* One lookup into info, with the handle (may be NULL) learning the road. */
static int lookup(mt_client_t *c, struct mt_actor *a, const char *id,
                  const char *name, mt_actor_info *info)
{
    struct mt__actor_desc d;
    int rc;

    if (!mt__client_check(c) || !info ||
        info->size < offsetof(mt_actor_info, actor_id))
        return bad_args(c, "invalid client, actor or info");
    if (!id && (!name || !*name))
        return bad_args(c, "give an actor id or a name");
    if (id && check_id(c, id) < 0)
        return -MT_EINVAL;
    rc = mt__actor_lookup(c, id, name, &d, NULL);
    if (rc < 0)
        return rc;
    if (a)
        learn(a, &d);
    info_move(info, &d.info);
    free(d.address);
    return 0;
}

int mt_actor_info_get(mt_client_t *c, const mt_actor_t *a,
                      mt_actor_info *info)
{
    if (!check_actor(a))
        return bad_args(c, "invalid client, actor or info");
    return lookup(c, (struct mt_actor *)a, a->id, NULL, info);
}

int mt_actor_lookup(mt_client_t *c, const char *id, const char *name,
                    mt_actor_info *info)
{
    return lookup(c, NULL, id, name, info);
}

int mt_actor_lookup_json(mt_client_t *c, const char *id, const char *name,
                         char **json)
{
    struct mt__actor_desc d;
    int rc;

    if (!mt__client_check(c) || !json || (!id && (!name || !*name)))
        return bad_args(c, "give an actor id or a name");
    if (id && check_id(c, id) < 0)
        return -MT_EINVAL;
    *json = NULL;
    rc = mt__actor_lookup(c, id, name, &d, json);
    if (rc == 0)
        mt__actor_desc_release(&d);
    return rc;
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
    if (!mt__client_check(c) || !check_actor(a))
        return bad_args(c, "invalid client or actor");
    return mt__actor_kill_id(c, a->id, no_restart, c->rpc_timeout_ms, NULL);
}

int mt_actor_kill_id(mt_client_t *c, const char *id, bool no_restart,
                     mt_actor_state *state)
{
    if (!mt__client_check(c) || !id)
        return bad_args(c, "invalid client or actor id");
    if (check_id(c, id) < 0)
        return -MT_EINVAL;
    return mt__actor_kill_id(c, id, no_restart, c->rpc_timeout_ms, state);
}
