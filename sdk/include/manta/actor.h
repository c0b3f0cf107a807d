/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manta/actor.h -- actors: a stateful worker process on the cluster whose
 * methods run one at a time, in the order they were called.
 *
 * An actor is a factory and methods in one shared library, all written
 * with MT_FUNCTION (manta/function.h): the factory stores the actor's state
 * in call->actor, each method finds it there. The head places the actor
 * like a task (its resources, 1 CPU by default, are held for the actor's
 * whole life); its worker starts an executor process for it alone, runs
 * the factory, then the method calls. A call is a task: wait for it with
 * mt_task_wait() / mt_wait_tasks() and read its result in value.
 *
 *     mt_actor_t *a;
 *     mt_task_t *t;
 *     mt_task_result r;
 *
 *     mt_actor_create(c, "libcounter.so:counter_new", NULL, NULL, 0, topts,
 *                     NULL, &a);
 *     mt_actor_call(c, a, "incr", NULL, NULL, 0, &t);
 *     mt_task_result_init(&r);
 *     if (mt_task_wait(c, t, 10000, &r) == 0)
 *         ... r.value holds what incr returned ...
 *     mt_task_result_release(&r);
 *     mt_task_release(t);
 *     mt_actor_release(a);     (the actor lives on; see ownership below)
 *
 * Failures: if the actor's executor or node dies, calls in flight fail
 * with -MT_EACTORDIED from mt_task_wait() ("actor died: ..."); the actor is
 * restarted (the factory runs again: its state starts fresh) up to
 * max_restarts times (default 0), and calls made meanwhile wait for it.
 * Once it is DEAD, every call fails at once with -MT_EACTORDIED and the
 * death reason. A method that returns non-zero fails that call only
 * (-MT_ETASKFAILED), as a function task would.
 *
 * OWNERSHIP of the actor itself (Ray's rule): an actor created without
 * mt_actor_opts_set_detached() belongs to the client that created it and
 * is killed when that client calls mt_client_disconnect(). A detached
 * actor lives until mt_actor_kill() (from any client, e.g. one that found
 * it with mt_actor_get()) or `manta actor kill`. If a driver process
 * dies without disconnecting, the head notices (the client holds an owner
 * lease stream open while it owns actors) and kills its non-detached
 * actors.
 *
 * THREAD: every function is thread-safe; an mt_actor_t may be used by
 * several threads at once; one mt_actor_opts_t must not be changed by two
 * threads at once.
 */
#ifndef MANTA_ACTOR_H
#define MANTA_ACTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manta/client.h"
#include "manta/task.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A handle on an actor (its id). Opaque; freed with mt_actor_release(). */
typedef struct mt_actor mt_actor_t;

/* Actor options. Opaque: build with the setters below. */
typedef struct mt_actor_opts mt_actor_opts_t;

/* Where an actor is in its life. Values are stable. */
typedef enum mt_actor_state {
    MT_ACTOR_STATE_UNKNOWN = 0,
    MT_ACTOR_STATE_PENDING_CREATION = 1, /* being placed, or factory runs */
    MT_ACTOR_STATE_ALIVE = 2,            /* methods run */
    MT_ACTOR_STATE_RESTARTING = 3,       /* died; being created again */
    MT_ACTOR_STATE_DEAD = 4,             /* for good: see death_reason */
} mt_actor_state;

#define MT_ACTOR_NAME_MAX 256

/* ---- options ------------------------------------------------------------- */

/*
 * mt_actor_opts_create - anonymous, owned by its client (not detached),
 * max_restarts 0.
 * OUT out  returns owned options, free with mt_actor_opts_destroy()
 * RET 0, -MT_ENOMEM
 */
MT_EXTERN int mt_actor_opts_create(mt_actor_opts_t **out);

/* mt_actor_opts_destroy - free options. OWNERSHIP invalidates o; NULL ok. */
MT_EXTERN void mt_actor_opts_destroy(mt_actor_opts_t *o);

/*
 * mt_actor_opts_set_name - a name unique among the cluster's live actors,
 * by which mt_actor_get() finds it (copied; NULL clears).
 * RET 0, -MT_EINVAL (empty or over MT_ACTOR_NAME_MAX bytes), -MT_ENOMEM
 */
MT_EXTERN int mt_actor_opts_set_name(mt_actor_opts_t *o, const char *name);

/* mt_actor_opts_set_detached - outlive the creating client (see the
 * ownership note above). RET 0. */
MT_EXTERN int mt_actor_opts_set_detached(mt_actor_opts_t *o, bool detached);

/*
 * mt_actor_opts_set_max_restarts - times the actor is re-created after its
 * executor or node died: 0 (default) for never, -1 for without limit.
 * RET 0, -MT_EINVAL (below -1)
 */
MT_EXTERN int mt_actor_opts_set_max_restarts(mt_actor_opts_t *o,
                                             int max_restarts);

/* ---- life ---------------------------------------------------------------- */

/*
 * mt_actor_create - create an actor: the head places it (with task_opts'
 * resources, label selector, code path, environment...), a worker runs
 * factory ("libfoo.so:fn" or a bare registered name) with the arguments in
 * an executor of the actor's own. Returns once the head accepted it;
 * mt_actor_wait_ready() waits for the factory. A factory that fails makes
 * the actor DEAD with its error.
 *
 * IN  args, sizes  nargs byte strings for the factory (borrowed; copied)
 * IN  task_opts    NULL for defaults (1 CPU held for life; 0 CPU with
 *                  mt_task_opts_set_resource(o, "CPU", 0)); its name,
 *                  max_retries and output limit are not used
 * IN  actor_opts   NULL for defaults
 * OUT out          returns owned handle, free with mt_actor_release()
 * RET 0, -MT_EEXIST (the name is taken by a live actor), -MT_EINVAL,
 *     -MT_EUNAVAIL / -MT_ETIMEDOUT (head not answering), -MT_ECLOSED,
 *     -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_actor_create(mt_client_t *c, const char *factory,
                              const void *const *args, const size_t *sizes,
                              size_t nargs, const mt_task_opts_t *task_opts,
                              const mt_actor_opts_t *actor_opts,
                              mt_actor_t **out);

/*
 * mt_actor_get - a handle on the live actor with this name (created by any
 * client, e.g. another driver process).
 * OUT out  returns owned handle, free with mt_actor_release()
 * RET 0, -MT_ENOENT (no live actor has that name), -MT_EINVAL,
 *     -MT_EUNAVAIL, -MT_ETIMEDOUT, -MT_ECLOSED, -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_actor_get(mt_client_t *c, const char *name,
                           mt_actor_t **out);

/*
 * mt_actor_get_id - a handle on the actor with this id ('a' and 15 hex
 * digits, as mt_actor_id() gives), whatever its state.
 * RET as mt_actor_get; -MT_EINVAL for another kind's id ("t... is a task
 *     id, not an actor id")
 */
MT_EXTERN int mt_actor_get_id(mt_client_t *c, const char *id,
                              mt_actor_t **out);

/*
 * mt_actor_id - the actor's id ('a' and 15 hex digits: the number of its
 * creation task, whose id is 't' and the same digits).
 * RET borrowed, valid until mt_actor_release(a). THREAD any.
 */
MT_EXTERN const char *mt_actor_id(const mt_actor_t *a);

/*
 * What the head knows of an actor, filled by mt_actor_info_get() and
 * mt_actor_lookup(). Initialize with mt_actor_info_init(); free with
 * mt_actor_info_release(). The library writes only the first `size`
 * bytes, so a program built against an older header (without the fields
 * from actor_id on) keeps working.
 */
typedef struct mt_actor_info {
    uint32_t size;           /* sizeof(mt_actor_info); set by _init */
    mt_actor_state state;
    char *name;              /* "" when anonymous */
    char *node_id;           /* where it lives or lived; "" never placed */
    char *death_reason;      /* DEAD: why; "" otherwise */
    uint32_t pid;            /* ALIVE: its executor's pid on node_id */
    uint32_t num_restarts;
    int max_restarts;        /* -1: without limit */
    bool detached;
    char *actor_id;          /* 'a' and 15 hex digits */
    char *function;          /* its factory, "lib.so:fn" */
    char *owner_id;          /* the client that created it */
    uint64_t calls_queued;   /* calls the head holds for it now */
    uint64_t calls_dispatched; /* calls the head sent it so far */
    int64_t create_time_ms;  /* wall clock */
    int64_t end_time_ms;     /* DEAD: when; 0 otherwise */
} mt_actor_info;

/* mt_actor_info_init - zero i and set i->size. */
MT_EXTERN void mt_actor_info_init(mt_actor_info *i);
/* mt_actor_info_release - free what mt_actor_info_get() put in i, zero it
 * again (size kept). */
MT_EXTERN void mt_actor_info_release(mt_actor_info *i);

/*
 * mt_actor_info - ask the head about the actor now.
 * OUT info  set up with mt_actor_info_init() (what it held is released)
 * RET 0, -MT_ENOENT (the head forgot it or never knew it), -MT_EUNAVAIL,
 *     -MT_ETIMEDOUT, -MT_ECLOSED, -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_actor_info_get(mt_client_t *c, const mt_actor_t *a,
                                mt_actor_info *info);

/*
 * mt_actor_wait_ready - wait until the actor is ALIVE (its factory
 * returned), polling the head.
 * IN  timeout_ms  < 0: without limit
 * RET 0 (ALIVE), -MT_EACTORDIED (it is DEAD; the last error says why, e.g.
 *     the factory's error), -MT_ETIMEDOUT, and the errors of
 *     mt_actor_info_get()
 * THREAD any
 */
MT_EXTERN int mt_actor_wait_ready(mt_client_t *c, const mt_actor_t *a,
                                  int timeout_ms);

/*
 * mt_actor_call - call method (an MT_FUNCTION of the factory's library,
 * by bare name; "lib.so:fn" also works) on the actor with the arguments.
 * Calls made through one handle run in the order of their
 * mt_actor_call()s (calls from several threads on one handle: in the order
 * they got their turn); a call made while the actor is being created or
 * restarted waits for it. After a call failed with -MT_EACTORDIED, a call
 * still queued on the head may run after a later one (docs/actors.md).
 *
 * Once the handle has seen the actor ALIVE (mt_actor_get(),
 * mt_actor_wait_ready(), mt_actor_info_get()), calls go straight to the
 * actor's worker and the returned task is local to this client: its id is
 * "ACTOR.CALLER.SEQ", mt_task_cancel() cannot stop it, and what the method
 * prints goes to the worker's log. Otherwise (and with MANTA_ACTOR_DIRECT=0
 * in the environment) the call is a task the head queues and forwards
 * (docs/actors.md, "Calls").
 *
 * IN  args, sizes  nargs byte strings (borrowed; copied); 16 MiB in all
 * OUT out          returns owned task, free with mt_task_release(); its
 *                  mt_task_wait() gives the method's result in value, or
 *                  -MT_EACTORDIED when the actor died before or during
 *                  the call
 * RET 0, -MT_ENOENT (the head does not know the actor), -MT_EINVAL,
 *     -MT_EUNAVAIL, -MT_ETIMEDOUT, -MT_ECLOSED, -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_actor_call(mt_client_t *c, const mt_actor_t *a,
                            const char *method, const void *const *args,
                            const size_t *sizes, size_t nargs,
                            mt_task_t **out);

/*
 * mt_actor_kill - kill the actor's executor now (a method running is cut
 * short: its call fails with -MT_EACTORDIED). With no_restart the actor
 * is DEAD for good and its resources are freed; without, it restarts if
 * max_restarts allows, as if it had crashed.
 * RET 0, -MT_ENOENT, -MT_EUNAVAIL, -MT_ETIMEDOUT, -MT_ECLOSED, -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_actor_kill(mt_client_t *c, const mt_actor_t *a,
                            bool no_restart);

/*
 * mt_actor_release - free the handle. The actor itself goes on (see the
 * ownership note above). OWNERSHIP invalidates a; NULL ok.
 */
MT_EXTERN void mt_actor_release(mt_actor_t *a);

/* mt_actor_state_name - "ALIVE", ... for a state. RET a static string. */
MT_EXTERN const char *mt_actor_state_name(mt_actor_state s);

/* ---- by id or name, without a handle (tools: `manta actor`) -------------- */

/*
 * mt_actor_lookup - ask the head about the actor with this id ('a' and 15
 * hex digits), or, with id NULL, the live actor with this name.
 * OUT info  set up with mt_actor_info_init() (what it held is released)
 * RET 0, -MT_ENOENT (no such actor: the last error is the head's "NOT_FOUND:
 *     ..."), -MT_EINVAL, -MT_EUNAVAIL, -MT_ETIMEDOUT, -MT_ECLOSED, -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_actor_lookup(mt_client_t *c, const char *id,
                              const char *name, mt_actor_info *info);

/*
 * mt_actor_lookup_json - the same, as the one JSON object `manta actor get
 * --format json` prints (a line; the fields of `manta list actors`).
 * OUT json  returns owned text, free with mt_free()
 * RET as mt_actor_lookup
 */
MT_EXTERN int mt_actor_lookup_json(mt_client_t *c, const char *id,
                                   const char *name, char **json);

/*
 * mt_actor_kill_id - mt_actor_kill() by id, without a handle.
 * OUT state  NULL, or the actor's state right after the request (the kill
 *            takes effect soon after: mt_actor_lookup() shows it end)
 * RET as mt_actor_kill
 * THREAD any
 */
MT_EXTERN int mt_actor_kill_id(mt_client_t *c, const char *id,
                               bool no_restart, mt_actor_state *state);

#ifdef __cplusplus
}
#endif

#endif /* MANTA_ACTOR_H */
