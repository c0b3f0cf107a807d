/* SPDX-License-Identifier: Apache-2.0 */
/*
 * objects.c -- the rules of the head's object directory (see objects.h).
 *
 * Reference counting: an object is freed when its count is 0, it is not
 * PENDING and no GetObject is parked on it; every holder is then told to
 * delete its copy. Waking dependents holds one extra reference so the
 * object outlives the tasks its settling ends. A driver session's
 * references are in the count too, and in the session's own table
 * (obj_owners.h), which says what to drop when the session ends.
 *
 * Lineage: a function task whose result went to a store (and that may be
 * retried) is pinned in the task table when it finishes, keeping its
 * definition and its argument references (lineage references) while the
 * result lives. When the result's last copy dies with its node, the task
 * runs again as its next attempt, and so, on demand, do the pinned
 * producers of arguments that were lost too. Inline results never need it
 * (the head holds them); puts cannot be rebuilt.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/objects.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "head/obj_owners.h"

struct mt_head_objects {
    struct mt_obj_table table;
    struct mt_obj_owners owners; /* open driver sessions */
    struct mt_node_table *nodes;
    struct mt_head_workers *workers;
    struct mt_task_table *tasks;
    mt_head_args_fn args_fn;
    void *args_arg;
    mt_head_settled_fn settled_fn;
    void *settled_arg;
    mt_head_rerun_fn rerun_fn;
    void *rerun_arg;
};

struct mt_head_objects *mt_head_objects_create(struct mt_node_table *nodes,
                                               struct mt_head_workers *workers,
                                               struct mt_task_table *tasks)
{
    struct mt_head_objects *objs = mt_xcalloc(1, sizeof(*objs));

    mt_obj_table_init(&objs->table);
    mt_obj_owners_init(&objs->owners);
    objs->nodes = nodes;
    objs->workers = workers;
    objs->tasks = tasks;
    return objs;
}

void mt_head_objects_destroy(struct mt_head_objects *objs)
{
    if (!objs)
        return;
    mt_obj_table_release(&objs->table);
    mt_obj_owners_release(&objs->owners);
    free(objs);
}

struct mt_obj_table *mt_head_objects_table(struct mt_head_objects *objs)
{
    return &objs->table;
}

struct mt_obj_owners *mt_head_objects_owners(struct mt_head_objects *objs)
{
    return &objs->owners;
}

void mt_head_objects_on_args(struct mt_head_objects *objs,
                             mt_head_args_fn fn, void *arg)
{
    objs->args_fn = fn;
    objs->args_arg = arg;
}

void mt_head_objects_on_settled(struct mt_head_objects *objs,
                                mt_head_settled_fn fn, void *arg)
{
    objs->settled_fn = fn;
    objs->settled_arg = arg;
}

void mt_head_objects_on_rerun(struct mt_head_objects *objs,
                               mt_head_rerun_fn fn, void *arg)
{
    objs->rerun_fn = fn;
    objs->rerun_arg = arg;
}

static struct mt_node *alive_node(struct mt_head_objects *objs,
                                  const char *id)
{
    struct mt_node *n = mt_node_table_find(objs->nodes, id);

    return n && n->state == MT_NODE_ALIVE ? n : NULL;
}

/* ---- freeing ----------------------------------------------------------------- */

static void deps_release(struct mt_head_objects *objs,
                         struct mt_task_deps *d, bool lineage);
static void rebuild(struct mt_head_objects *objs, struct mt_obj *o);

/* The pinned task that can rebuild o, or NULL. */
static struct mt_head_task *lineage_of(struct mt_head_objects *objs,
                                       const struct mt_obj *o)
{
    struct mt_head_task *t = o->task_num ? mt_task_table_find(objs->tasks,
                                                              o->task_num)
                                         : NULL;

    return t && t->lineage && t->state == MT_TASK_FINISHED ? t : NULL;
}

void mt_head_objects_maybe_free(struct mt_head_objects *objs,
                                struct mt_obj *o)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1];
    struct mt_head_task *t;
    struct mt_task_deps *d;

    if (!mt_obj_freeable(o) || o->gets)
        return;
    MT_DEBUG("object %s freed (%zu copies)", mt_object_id_hex(&o->node.id, hex),
             o->n_nodes);
    for (size_t i = 0; i < o->n_nodes; i++)
        mt_head_workers_delete_object(objs->workers, o->nodes[i],
                                      &o->node.id);
    t = lineage_of(objs, o);
    mt_obj_free(&objs->table, o);
    if (t) { /* nothing left to rebuild: let the task and its args go */
        mt_task_table_pin(objs->tasks, t, false);
        d = t->deps;
        t->deps = NULL;
        deps_release(objs, d, true);
    }
}

static void obj_unref(struct mt_head_objects *objs, struct mt_obj *o)
{
    if (o->refs)
        o->refs--;
    mt_obj_touch(&objs->table, o);
    mt_head_objects_maybe_free(objs, o);
}

/* Drop the references of deps d (lineage: held to rebuild a result). */
static void deps_release(struct mt_head_objects *objs,
                         struct mt_task_deps *d, bool lineage)
{
    struct mt_obj *o;

    for (uint32_t i = 0; d && i < d->n; i++) {
        if (!(o = mt_obj_find(&objs->table, &d->ids[i])))
            continue;
        if (lineage && o->lineage_refs)
            o->lineage_refs--;
        obj_unref(objs, o);
    }
    free(d);
}

/* ---- driver sessions ----------------------------------------------------- */

/* The open session owner names; NULL for none ("" or NULL). */
static struct mt_obj_owner *session(struct mt_head_objects *objs,
                                    const char *owner, bool *closed)
{
    struct mt_obj_owner *o;

    *closed = false;
    if (!owner || !*owner)
        return NULL;
    o = mt_obj_owners_find(&objs->owners, owner);
    *closed = !o;
    return o;
}

bool mt_head_objects_release(struct mt_head_objects *objs,
                             const mt_object_id *id, const char *owner)
{
    struct mt_obj *o = mt_obj_find(&objs->table, id);
    struct mt_obj_owner *s;
    bool closed;

    if (!o || o->refs == 0)
        return false;
    s = session(objs, owner, &closed);
    if (s)
        mt_obj_owner_unref(s, id); /* when it holds none, any other */
    obj_unref(objs, o);
    return true;
}

int mt_head_objects_put(struct mt_head_objects *objs, const char *node_id,
                        const mt_object_id *id, uint64_t size,
                        const char *owner)
{
    struct mt_obj *o = mt_obj_find(&objs->table, id);
    struct mt_obj_owner *s;
    char name[128];
    bool closed;

    s = session(objs, owner, &closed);
    if (closed)
        return -MT_ECLOSED;
    if (!o) {
        snprintf(name, sizeof(name), "put %s", node_id);
        o = mt_obj_new(&objs->table, id, MT_OBJ_READY, name, 1);
        o->size = size;
    } else {
        o->refs++; /* another driver handle on a known object */
    }
    if (s)
        mt_obj_owner_ref(s, id);
    mt_obj_add_node(o, node_id);
    mt_obj_touch(&objs->table, o);
    return 0;
}

void mt_head_objects_owner_open(struct mt_head_objects *objs,
                                const char *owner)
{
    mt_obj_owners_open(&objs->owners, owner);
}

void mt_head_objects_owner_gone(struct mt_head_objects *objs,
                                const char *owner)
{
    struct mt_obj_owner *s = mt_obj_owners_take(&objs->owners, owner);
    struct mt_idmap_node *n;
    size_t dropped = 0;

    if (!s)
        return;
    for (n = mt_idmap_first(&s->refs); n; n = mt_idmap_next(&s->refs, n)) {
        struct mt_obj *o = mt_obj_find(&objs->table, &n->id);
        uint32_t k = MT_CONTAINER_OF(n, struct mt_obj_held, node)->count;

        if (!o)
            continue;
        o->refs = o->refs > k ? o->refs - k : 0;
        dropped += k;
        mt_obj_touch(&objs->table, o);
        mt_head_objects_maybe_free(objs, o);
    }
    if (dropped)
        MT_INFO("session %s ended: dropped its %zu object references", owner,
                dropped);
    mt_obj_owner_free(s);
}

bool mt_head_objects_known(struct mt_head_objects *objs,
                           const mt_object_id *id)
{
    return mt_obj_find(&objs->table, id) != NULL;
}

/* ---- settling ---------------------------------------------------------------- */

/* Tasks waiting for o: each loses one missing argument; at zero it is
 * ready. With why set instead, each fails with that text. */
static void wake_waiters(struct mt_head_objects *objs, struct mt_obj *o,
                         const char *why)
{
    uint64_t *w = o->waiters;
    size_t n = o->n_waiters;

    o->waiters = NULL;
    o->n_waiters = o->cap_waiters = 0;
    o->refs++; /* keep o while dependents end */
    for (size_t i = 0; i < n; i++) {
        struct mt_head_task *t = mt_task_table_find(objs->tasks, w[i]);

        if (!t || t->state != MT_TASK_WAITING_FOR_ARGS || !t->deps ||
            !objs->args_fn)
            continue;
        if (why)
            objs->args_fn(objs->args_arg, t, why);
        else if (t->deps->missing && --t->deps->missing == 0)
            objs->args_fn(objs->args_arg, t, NULL);
    }
    free(w);
    o->refs--; /* the caller frees o if nothing else holds it */
}

/* o left PENDING: answer parked gets, wake dependents, maybe free it. */
static void settle(struct mt_head_objects *objs, struct mt_obj *o,
                   const char *dependents_why)
{
    if (objs->settled_fn)
        objs->settled_fn(objs->settled_arg, o);
    wake_waiters(objs, o, dependents_why);
    mt_head_objects_maybe_free(objs, o);
}

/* t finished on its node: its result is inline (t->result) or in that
 * node's store. Wakes the tasks waiting for it. */
static void on_result(struct mt_head_objects *objs, struct mt_head_task *t)
{
    struct mt_obj *o;
    mt_object_id id;
    char owner[32];

    if (mt_object_id_for_task(t->id, &id) < 0)
        return;
    o = mt_obj_find(&objs->table, &id);
    if (!o && t->result_in_store &&
        t->def.kind == MT_TASK_KIND_COMMAND) {
        /* A command task's result (worker/task_result.h): registered now,
         * with one reference kept for whoever reads it, until released. */
        snprintf(owner, sizeof(owner), "task %s", t->id);
        o = mt_obj_new(&objs->table, &id, MT_OBJ_PENDING, owner, 1);
    }
    if (!o) { /* nobody holds it (released early): drop the copy */
        if (t->result_in_store)
            mt_head_workers_delete_object(objs->workers, t->node_id, &id);
        return;
    }
    if (t->result_in_store) {
        o->size = t->result_size;
        mt_obj_add_node(o, t->node_id);
    } else if (o->state == MT_OBJ_PENDING) {
        mt_obj_set_inline(o, t->result, t->result_len);
    }
    mt_obj_touch(&objs->table, o);
    if (o->state != MT_OBJ_PENDING)
        return;
    o->state = MT_OBJ_READY;
    settle(objs, o, NULL);
    /* Still referenced, in a store: keep what it takes to make it again. */
    if (t->result_in_store && t->def.kind == MT_TASK_KIND_FUNCTION &&
        t->max_retries > 0 && !t->leased &&
        (o = mt_obj_find(&objs->table, &id))) {
        o->task_num = t->num;
        mt_obj_touch(&objs->table, o);
        mt_task_table_pin(objs->tasks, t, true);
    }
}

/* t ended: drop its argument references; a result never produced fails
 * (and with it every task waiting for it). */
static void on_task_end(struct mt_head_objects *objs, struct mt_head_task *t)
{
    struct mt_task_deps *d = t->deps;
    struct mt_obj *o;
    mt_object_id id;
    char *why;

    if (t->lineage) { /* its arguments stay, to rebuild its result */
        for (uint32_t i = 0; d && i < d->n; i++)
            if ((o = mt_obj_find(&objs->table, &d->ids[i]))) {
                o->lineage_refs++;
                mt_obj_touch(&objs->table, o);
            }
        return;
    }
    t->deps = NULL;
    deps_release(objs, d, false);
    if (mt_object_id_for_task(t->id, &id) < 0 ||
        !(o = mt_obj_find(&objs->table, &id)) || o->state != MT_OBJ_PENDING)
        return;
    if (t->state == MT_TASK_FINISHED) { /* finished without a result */
        mt_obj_set_inline(o, NULL, 0);
        o->state = MT_OBJ_READY;
        mt_obj_touch(&objs->table, o);
        settle(objs, o, NULL);
        return;
    }
    /* The root cause, however long the chain: "task T failed: boom". */
    if (t->error && strncmp(t->error, MT_OBJ_DEP_FAILED,
                            strlen(MT_OBJ_DEP_FAILED)) == 0)
        why = mt_xstrdup(t->error + strlen(MT_OBJ_DEP_FAILED));
    else
        why = mt_xasprintf("task %s %s: %s", t->id,
                           t->state == MT_TASK_CANCELLED ? "was cancelled"
                                                         : "failed",
                           t->error ? t->error : "no reason given");
    mt_obj_set_error(o, MT_OBJ_FAILED, why);
    mt_obj_touch(&objs->table, o);
    free(why);
    why = mt_xasprintf(MT_OBJ_DEP_FAILED "%s", o->error);
    settle(objs, o, why);
    free(why);
}

static void task_changed(void *arg, struct mt_head_task *t)
{
    struct mt_head_objects *objs = arg;

    if (!mt_head_task_terminal(t))
        return;
    if (t->state == MT_TASK_FINISHED)
        on_result(objs, t);
    on_task_end(objs, t);
}

const struct mt_task_listener mt_head_objects_task_listener = {
    .changed = task_changed,
};

/* ---- admission ----------------------------------------------------------------- */

struct mt_obj *mt_head_objects_awaited(struct mt_head_objects *objs,
                                       const mt_object_id *id)
{
    struct mt_obj *o = mt_obj_find(&objs->table, id);
    char hex[MT_OBJECT_ID_HEX_LEN + 1], owner[80];

    if (o || !mt_object_id_is_driver_result(id))
        return o;
    snprintf(owner, sizeof(owner), "task of lease result %.12s...",
             mt_object_id_hex(id, hex) + 24);
    o = mt_obj_new(&objs->table, id, MT_OBJ_PENDING, owner, 0);
    o->awaited = true;
    mt_obj_touch(&objs->table, o);
    return o;
}

/* RET NULL or why the task's references cannot be accepted. */
static const char *check_refs(struct mt_head_objects *objs,
                              const struct mt_task_def *d, size_t *nrefs,
                              char *buf, size_t len)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1];

    *nrefs = 0;
    for (size_t i = 0; i < d->nargs; i++) {
        if (!d->args[i].is_ref)
            continue;
        if (d->kind != MT_TASK_KIND_FUNCTION)
            return "object arguments need a function task";
        if (!mt_head_objects_awaited(objs, &d->args[i].ref)) {
            snprintf(buf, len, "argument %zu: object %s is unknown to the "
                     "head (never put, or already released)", i,
                     mt_object_id_hex(&d->args[i].ref, hex));
            return buf;
        }
        (*nrefs)++;
    }
    return NULL;
}

/* Take a reference on argument i of t; RET 1 if it is missing, 2 (why
 * set) if it failed or was lost, else 0. */
static int take_arg(struct mt_head_objects *objs, struct mt_head_task *t,
                    size_t i, char *why, size_t len)
{
    struct mt_obj *o = mt_obj_find(&objs->table, &t->def.args[i].ref);

    o->refs++;
    mt_obj_touch(&objs->table, o);
    if (o->state == MT_OBJ_LOST && lineage_of(objs, o)) {
        mt_object_id id = o->node.id;

        rebuild(objs, o); /* made again for this task */
        o = mt_obj_find(&objs->table, &id); /* kept: t holds a ref */
    }
    if (o->state == MT_OBJ_PENDING) {
        mt_obj_add_waiter(o, t->num);
        return 1;
    }
    if (o->state == MT_OBJ_READY)
        return 0;
    if (o->state == MT_OBJ_LOST)
        snprintf(why, len, "argument %zu: %s", i,
                 o->error ? o->error : "object lost");
    else
        snprintf(why, len, MT_OBJ_DEP_FAILED "%s", o->error ? o->error : "?");
    return 2;
}

/* t's result object, PENDING; held by its submitter when it asks (by its
 * session when it names one, by nobody when that session has ended). */
static void new_result(struct mt_head_objects *objs,
                       const struct mt_head_task *t, const mt_object_id *id)
{
    bool hold = t->def.hold_result, closed = false;
    struct mt_obj *o = mt_obj_find(&objs->table, id);
    struct mt_obj_owner *s = NULL;
    char name[32];

    if (hold)
        s = session(objs, t->def.owner_id, &closed);
    hold &= !closed;
    snprintf(name, sizeof(name), "task %s", t->id);
    if (!o) {
        mt_obj_new(&objs->table, id, MT_OBJ_PENDING, name, hold ? 1 : 0);
    } else { /* awaited: named before its task was filed */
        o->awaited = false;
        o->refs += hold;
        free(o->owner);
        o->owner = mt_xstrdup(name);
        mt_obj_touch(&objs->table, o);
    }
    if (s)
        mt_obj_owner_ref(s, id);
}

int mt_head_objects_admit(struct mt_head_objects *objs,
                          struct mt_head_task *t, char *why, size_t len)
{
    const struct mt_task_def *d = &t->def;
    struct mt_task_deps *deps;
    struct mt_obj *o;
    const char *bad;
    mt_object_id id;
    size_t nrefs;
    int rc = 0;

    if ((bad = check_refs(objs, d, &nrefs, why, len))) {
        if (bad != why)
            snprintf(why, len, "%s", bad);
        return bad == why ? -MT_ENOENT : -MT_EINVAL;
    }
    if (d->kind == MT_TASK_KIND_FUNCTION &&
        mt_object_id_for_task(t->id, &id) == 0 &&
        (!(o = mt_obj_find(&objs->table, &id)) || o->awaited))
        new_result(objs, t, &id);
    if (nrefs == 0)
        return 0;
    deps = mt_xcalloc(1, sizeof(*deps) + nrefs * sizeof(deps->ids[0]));
    for (size_t i = 0; i < d->nargs; i++) {
        int got;

        if (!d->args[i].is_ref)
            continue;
        deps->ids[deps->n++] = d->args[i].ref;
        got = take_arg(objs, t, i, rc == 2 ? NULL : why, rc == 2 ? 0 : len);
        deps->missing += got == 1;
        if (got == 2 && rc == 0)
            rc = 2;
    }
    t->deps = deps;
    return rc == 0 && deps->missing ? 1 : rc;
}

int mt_head_objects_resume(struct mt_head_objects *objs,
                           struct mt_head_task *t, char *why, size_t len)
{
    struct mt_task_deps *d = t->deps;
    struct mt_obj *o;

    for (uint32_t i = 0; d && i < d->n; i++) {
        if (!(o = mt_obj_find(&objs->table, &d->ids[i]))) {
            snprintf(why, len, "argument object lost in a head restart");
            return 2;
        }
        if (o->state == MT_OBJ_PENDING) {
            mt_obj_add_waiter(o, t->num);
            d->missing++;
        } else if (o->state != MT_OBJ_READY) {
            snprintf(why, len, MT_OBJ_DEP_FAILED "%s",
                     o->error ? o->error : "?");
            return 2;
        }
    }
    return d && d->missing ? 1 : 0;
}

/* ---- running ----------------------------------------------------------------- */

struct mt_obj_loc *mt_head_objects_locate(struct mt_head_objects *objs,
                                          const struct mt_head_task *t,
                                          const struct mt_node *dest,
                                          size_t *n)
{
    const struct mt_task_def *d = &t->def;
    struct mt_obj_loc *v = NULL;

    *n = 0;
    for (size_t i = 0; i < d->nargs; i++) {
        struct mt_obj *o;
        struct mt_obj_loc *l;

        if (!d->args[i].is_ref ||
            !(o = mt_obj_find(&objs->table, &d->args[i].ref)))
            continue;
        if (!v)
            v = mt_xcalloc(d->nargs, sizeof(*v));
        l = &v[(*n)++];
        l->index = (uint32_t)i;
        l->id = d->args[i].ref;
        l->size = o->size;
        l->is_inline = o->is_inline;
        l->data = o->data;
        for (size_t j = 0; j < o->n_nodes &&
                           l->n_holders < MT_OBJ_LOC_HOLDERS; j++) {
            struct mt_node *nd = alive_node(objs, o->nodes[j]);
            if (nd && nd != dest)
                l->holders[l->n_holders++] = nd->address;
        }
        if (!o->is_inline && dest && o->state == MT_OBJ_READY) {
            mt_obj_add_node(o, dest->id); /* the worker pulls a copy */
            mt_obj_touch(&objs->table, o);
        }
    }
    return v;
}

const struct mt_node *mt_head_objects_biggest_holder(
    struct mt_head_objects *objs, const struct mt_head_task *t)
{
    const struct mt_node *best_node = NULL;
    uint64_t best = 0;

    for (size_t i = 0; i < t->def.nargs; i++) {
        struct mt_obj *o;

        if (!t->def.args[i].is_ref ||
            !(o = mt_obj_find(&objs->table, &t->def.args[i].ref)) ||
            o->is_inline || o->state != MT_OBJ_READY || o->size <= best)
            continue;
        for (size_t j = 0; j < o->n_nodes; j++) {
            struct mt_node *nd = alive_node(objs, o->nodes[j]);
            if (nd && nd->sched_node != UINT32_MAX) {
                best_node = nd;
                best = o->size;
                break;
            }
        }
    }
    return best_node;
}

/*
 * Run lost (or, from node_down, already PENDING) o's task again so o is
 * made anew. o may be gone when this returns (the rerun can end at once):
 * find it again by id. Without a pinned task or a retry left, o is LOST,
 * and whoever waited for it hears so.
 */
static void rebuild(struct mt_head_objects *objs, struct mt_obj *o)
{
    struct mt_head_task *t = lineage_of(objs, o);
    bool waited = o->state == MT_OBJ_PENDING;
    struct mt_task_deps *old;
    char why[256];
    char *msg;

    snprintf(why, sizeof(why), "%s", strncmp(o->owner, "put ", 4) == 0
             ? "a put object cannot be rebuilt (put it again)"
             : "its task cannot make it again (no retries left, or not a "
               "function task)");

    mt_obj_touch(&objs->table, o);
    if (t && objs->rerun_fn) {
        o->state = MT_OBJ_PENDING;
        old = t->deps;
        t->deps = NULL;
        if (objs->rerun_fn(objs->rerun_arg, t, why, sizeof(why)) == 0) {
            deps_release(objs, old, true);
            return;
        }
        t->deps = old;
    }
    msg = mt_xasprintf("%s; %s", o->error ? o->error : "object lost", why);
    mt_obj_set_error(o, MT_OBJ_LOST, msg);
    mt_obj_touch(&objs->table, o);
    free(msg);
    if (waited)
        settle(objs, o, o->error);
    else
        mt_head_objects_maybe_free(objs, o);
}

void mt_head_objects_node_down(struct mt_head_objects *objs,
                               const char *node_id)
{
    struct mt_idmap_node *n;
    mt_object_id *lost = NULL;
    size_t n_lost = 0, cap = 0;

    /* Drop the node's copies first: objects left without any are LOST,
     * and PENDING when something besides lineage needs them (they are made
     * again below, so dependents rebuilt meanwhile wait for them). */
    for (n = mt_idmap_first(&objs->table.map); n;
         n = mt_idmap_next(&objs->table.map, n)) {
        struct mt_obj *o = MT_CONTAINER_OF(n, struct mt_obj, node);
        char *why;

        if (!mt_obj_drop_node(o, node_id))
            continue;
        mt_obj_touch(&objs->table, o);
        if (o->n_nodes || o->is_inline || o->state != MT_OBJ_READY)
            continue;
        why = mt_xasprintf("object lost: its only copy was on node %s, which "
                           "died", node_id);
        mt_obj_set_error(o, MT_OBJ_LOST, why);
        free(why);
        if (lineage_of(objs, o) && o->refs > o->lineage_refs)
            o->state = MT_OBJ_PENDING;
        mt_xgrow((void **)&lost, &cap, n_lost + 1, sizeof(*lost));
        lost[n_lost++] = o->node.id;
    }
    /* Then act: rebuilding or freeing may free other objects. */
    for (size_t i = 0; i < n_lost; i++) {
        struct mt_obj *o = mt_obj_find(&objs->table, &lost[i]);

        if (!o || (o->state == MT_OBJ_PENDING && !lineage_of(objs, o)))
            continue; /* gone, or a dependent had it made again already */
        if (o->state == MT_OBJ_PENDING || !lineage_of(objs, o))
            rebuild(objs, o); /* now, or LOST for good: say why */
        else
            mt_head_objects_maybe_free(objs, o); /* rebuilt on demand */
    }
    free(lost);
}
