/* SPDX-License-Identifier: Apache-2.0 */
/*
 * persist.c -- the head's records in its storage (see persist.h).
 *
 * Writing: the task table tells us of each task added or forgotten, the
 * task listener of each change, the group listener of each group change,
 * and actors.h of each actor change; each marks the record dirty (a
 * flag on tasks, a number in a list for the others). A uv_check handle
 * runs after each loop turn's callbacks and writes every dirty record
 * once: its current state, or a delete when it is gone. Rows are
 * proto/storage.proto messages, converted here and nowhere else.
 *
 * Loading reads "head", "objects", "gangs", "pgs", "tasks" and "actors"
 * in that order (each needs the ones before it: a gang's slice group goes
 * back onto the gang's slices, its member tasks attach to it) and
 * restores each record through its service. Rows that cannot be read are skipped with a warning: one bad
 * row never stops a head from starting.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/persist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/auth.h"
#include "common/error.h"
#include "common/ids.h"
#include "common/log.h"
#include "common/rpc.h"
#include "common/sys.h"
#include "head/digest.h"
#include "head/head_int.h"
#include "head/recover.h"
#include "proto/convert.h"
#include "storage.pb-c.h"

#define T_TASKS "tasks"
#define T_ACTORS "actors"
#define T_PGS "pgs"
#define T_HEAD "head"
#define T_OBJECTS "objects"
#define T_GANGS "gangs"
#define LATE_MS 1000              /* answers wait this long for storage */

/* An answer held until what the head changed before it is stored. */
struct waiter {
    struct waiter *next;
    struct mt_rpc_call *call;
    const ProtobufCMessageDescriptor *desc;
    uint8_t *buf;              /* the packed answer */
    size_t len;
};

/* One flush's writes (those made while answers wait for them). */
struct batch {
    struct batch *next;
    struct mt_head_persist *p;
    int pending;               /* writes not acknowledged, +1 while built */
    int64_t since_ms;
    struct waiter *waiters;
};

struct numlist {
    uint64_t *v;
    size_t n, cap;
};

struct mt_head_persist {
    struct mt_head *h;
    uv_check_t check;
    bool closing;
    bool loading;              /* restoring: changes are not dirt */
    bool durable_now;          /* the backend keeps nothing (memory):
                                  answers need not wait */
    struct numlist tasks;      /* dirty task numbers (t->dirty set) */
    struct numlist actors;     /* dirty actor numbers (may repeat) */
    struct numlist pgs;        /* dirty group numbers (may repeat) */
    struct numlist gangs;      /* dirty gang numbers (once each) */
    mt_object_id *objs;        /* dirty or freed objects (o->dirty set) */
    size_t n_objs, cap_objs;
    uint64_t saved_next_task, saved_next_pg;
    struct waiter *waiting;    /* answers held until the next flush */
    struct batch *batches;     /* flushed writes not acknowledged yet */
    struct batch *cur;         /* the batch being flushed, or NULL */
    uv_timer_t late;           /* answers batches the backend sits on */
    /* Loading. */
    Manta__StoredTask **rows;  /* tasks read, restored once all are in */
    size_t n_rows, cap_rows;
    size_t load_step;          /* the table being read (load_tables) */
    int load_err;
    void (*loaded)(void *arg, int err);
    void *loaded_arg;
    void (*closed)(void *arg);
    void *closed_arg;
    int n_closed;
};

static void push(struct numlist *l, uint64_t num)
{
    mt_xgrow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v));
    l->v[l->n++] = num;
}

/* ---- following ----------------------------------------------------------- */

static void mark_task(struct mt_head_persist *p, struct mt_head_task *t)
{
    if (p->loading || t->dirty)
        return;
    t->dirty = true;
    push(&p->tasks, t->num);
}

static void on_touched(void *arg, struct mt_head_task *t, bool gone)
{
    struct mt_head_persist *p = arg;

    if (!gone) {
        mark_task(p, t);
    } else if (!p->loading) {
        t->dirty = false; /* freed next: its row goes at the flush */
        push(&p->tasks, t->num);
    }
}

static void on_task_changed(void *arg, struct mt_head_task *t)
{
    struct mt_head_persist *p = arg;

    mark_task(p, t);
    if (t->def.kind == MT_TASK_KIND_ACTOR_CREATE && !p->loading)
        push(&p->actors, t->num);
}

static const struct mt_task_listener task_listener = {
    .changed = on_task_changed,
};

static void on_pg_changed(void *arg, struct mt_head_pg *pg)
{
    struct mt_head_persist *p = arg;

    if (!p->loading)
        push(&p->pgs, pg->num);
}

static void on_obj_touched(void *arg, struct mt_obj *o, bool gone)
{
    struct mt_head_persist *p = arg;

    if (p->loading || (o->dirty && !gone))
        return;
    o->dirty = !gone;
    mt_xgrow((void **)&p->objs, &p->cap_objs, p->n_objs + 1,
             sizeof(*p->objs));
    p->objs[p->n_objs++] = o->node.id;
}

static const struct mt_head_pg_listener pg_listener = {
    .changed = on_pg_changed,
    .added = on_pg_changed,
};

static void on_actor_changed(void *arg, uint64_t num)
{
    struct mt_head_persist *p = arg;

    if (!p->loading)
        push(&p->actors, num);
}

/* ---- rows out -------------------------------------------------------------- */

static void on_written(void *arg, int err);

/* The completion for a write of this flush: counted when answers wait. */
static mt_storage_done_fn batch_done(struct mt_head_persist *p, void **arg)
{
    *arg = p->cur;
    if (!p->cur)
        return NULL;
    p->cur->pending++;
    return on_written;
}

static void put_msg(struct mt_head_persist *p, const char *table,
                    const char *key, const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = mt_xmalloc(len ? len : 1);
    void *arg;
    mt_storage_done_fn done = batch_done(p, &arg);

    protobuf_c_message_pack(m, buf);
    if (mt_storage_put(p->h->store, table, key, buf, len, done, arg) < 0 &&
        done)
        done(arg, -MT_EIO);
    free(buf);
}

static void del_row(struct mt_head_persist *p, const char *table,
                    const char *key)
{
    void *arg;
    mt_storage_done_fn done = batch_done(p, &arg);

    if (mt_storage_del(p->h->store, table, key, done, arg) < 0 && done)
        done(arg, -MT_EIO);
}

static void write_task(struct mt_head_persist *p, struct mt_head_task *t)
{
    Manta__StoredTask r = MANTA__STORED_TASK__INIT;
    Manta__StoredGrant g = MANTA__STORED_GRANT__INIT;
    Manta__TaskSpec spec;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;

    if (mt_pb_task_spec_view(&a, &t->def, &spec) < 0) {
        MT_WARN("cannot store task %s: out of memory", t->id);
        mt_pb_arena_release(&a);
        return;
    }
    spec.task_id = t->id;
    r.spec = &spec;
    r.state = (Manta__TaskState)t->state;
    r.attempt = t->attempt;
    r.max_retries = t->max_retries;
    r.node_id = t->node_id ? t->node_id : "";
    if (t->has_grant || t->state == MT_TASK_SCHEDULED ||
        t->state == MT_TASK_RUNNING) {
        g.gpus = t->grant.gpus;
        g.gpu_each = t->grant.gpu_each;
        g.tpu_chips = t->grant.tpu_chips;
        g.pg = t->grant.pg;
        g.bundle = t->grant.bundle;
        r.grant = &g;
    }
    r.exit_code = t->exit_code;
    r.error = t->error ? t->error : "";
    r.result.data = t->result;
    r.result.len = t->result_len;
    r.result_in_store = t->result_in_store;
    r.result_size = t->result_size;
    r.submit_ms = t->submit_ms;
    r.start_ms = t->start_ms;
    r.end_ms = t->end_ms;
    r.cancel_requested = t->cancel_requested;
    r.leased = t->leased;
    r.lineage = t->lineage;
    r.actor_died = t->actor_died;
    r.pg = t->pg;
    r.watcher_id = (char *)p->h->hooks.watch_name(p->h, t->cw);
    if (!r.watcher_id)
        r.watcher_id = "";
    r.watcher_tag = t->cw_tag;
    r.watcher_output = t->cw_output;
    if (t->deps && t->deps->n) {
        r.n_deps = t->deps->n;
        r.deps = mt_pb_alloc(&a, r.n_deps * sizeof(*r.deps));
        for (size_t i = 0; r.deps && i < r.n_deps; i++) {
            r.deps[i].data = t->deps->ids[i].b;
            r.deps[i].len = MT_OBJECT_ID_LEN;
        }
        if (!r.deps)
            r.n_deps = 0;
    }
    put_msg(p, T_TASKS, t->id, &r.base);
    mt_pb_arena_release(&a);
}

static void write_object(struct mt_head_persist *p, const struct mt_obj *o)
{
    Manta__StoredObject r = MANTA__STORED_OBJECT__INIT;
    struct mt_obj_owners *ow = mt_head_objects_owners(p->h->objects);
    Manta__StoredSessionRef *sr = mt_xcalloc(ow->n + 1, sizeof(*sr));
    Manta__StoredSessionRef **sv = mt_xcalloc(ow->n + 1, sizeof(*sv));
    char hex[MT_OBJECT_ID_HEX_LEN + 1];
    size_t n = 0;

    for (struct mt_obj_owner *s = ow->list; s && n < ow->n; s = s->next) {
        uint32_t k = mt_obj_owner_count(s, &o->node.id);

        if (!k)
            continue;
        manta__stored_session_ref__init(&sr[n]);
        sr[n].owner_id = s->id;
        sr[n].count = k;
        sv[n] = &sr[n];
        n++;
    }
    r.object_id.data = (uint8_t *)o->node.id.b;
    r.object_id.len = MT_OBJECT_ID_LEN;
    r.state = (int32_t)o->state;
    r.size = o->size;
    r.nodes = o->nodes;
    r.n_nodes = o->n_nodes;
    r.is_inline = o->is_inline;
    r.data.data = o->data;
    r.data.len = o->is_inline ? o->size : 0;
    r.owner = o->owner ? o->owner : "";
    r.error = o->error ? o->error : "";
    r.refs = o->refs;
    r.lineage_refs = o->lineage_refs;
    r.task_num = o->task_num;
    r.awaited = o->awaited;
    r.sessions = sv;
    r.n_sessions = n;
    put_msg(p, T_OBJECTS, mt_object_id_hex(&o->node.id, hex), &r.base);
    free(sv);
    free(sr);
}

static void flush_objects(struct mt_head_persist *p)
{
    struct mt_obj_table *ot = mt_head_objects_table(p->h->objects);
    char hex[MT_OBJECT_ID_HEX_LEN + 1];

    for (size_t i = 0; i < p->n_objs; i++) {
        struct mt_obj *o = mt_obj_find(ot, &p->objs[i]);

        if (o && o->dirty) {
            o->dirty = false;
            write_object(p, o);
        } else if (!o) {
            del_row(p, T_OBJECTS, mt_object_id_hex(&p->objs[i], hex));
        }
    }
    p->n_objs = 0;
}

static void write_actor(struct mt_head_persist *p,
                        const struct mt_head_actor *x)
{
    Manta__StoredActor r = MANTA__STORED_ACTOR__INIT;

    r.actor_id = (char *)x->id;
    r.name = x->name ? x->name : "";
    r.function = x->function ? x->function : "";
    r.owner = x->owner ? x->owner : "";
    r.detached = x->detached;
    r.max_restarts = x->max_restarts;
    r.restarts = x->restarts;
    r.state = (int32_t)x->state;
    r.node_id = x->node_id ? x->node_id : "";
    r.pid = x->pid;
    r.death_reason = x->death_reason ? x->death_reason : "";
    r.create_ms = x->create_ms;
    r.end_ms = x->end_ms;
    r.incarnation = x->incarnation;
    r.last_attempt = x->last_attempt;
    r.next_seq = x->next_seq;
    r.dispatched = x->dispatched;
    r.no_restart = x->no_restart;
    r.owner_gone = x->owner_gone;
    put_msg(p, T_ACTORS, x->id, &r.base);
}

static void write_pg(struct mt_head_persist *p, struct mt_head_pg *pg)
{
    Manta__StoredPlacementGroup r = MANTA__STORED_PLACEMENT_GROUP__INIT;
    Manta__CreatePlacementGroupRequest def;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    struct mt_head_pg_bundle *b = NULL;
    Manta__StoredBundle *sb, **v;
    size_t n = 0;

    if (mt_pb_pg_request_view(&a, &pg->def, &def) < 0) {
        MT_WARN("cannot store placement group %s: out of memory", pg->id);
        mt_pb_arena_release(&a);
        return;
    }
    if (pg->state == MT_HEAD_PG_CREATED)
        n = mt_head_pg_bundles(p->h->pgs, pg, &b);
    sb = mt_xcalloc(n + 1, sizeof(*sb));
    v = mt_xcalloc(n + 1, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        manta__stored_bundle__init(&sb[i]);
        sb[i].node_id = (char *)b[i].node_id;
        sb[i].gpus = b[i].gpus;
        sb[i].tpu_chips = b[i].tpu_chips;
        v[i] = &sb[i];
    }
    r.pg_id = pg->id;
    r.def = &def;
    r.state = (int32_t)pg->state;
    r.bundles = v;
    r.n_bundles = n;
    r.create_ms = pg->create_ms;
    put_msg(p, T_PGS, pg->id, &r.base);
    free(v);
    free(sb);
    free(b);
    mt_pb_arena_release(&a);
}

/* The fingerprint of the cluster token ("" without one). */
static void token_digest(const struct mt_head *h,
                         char out[MT_SHA256_HEX_LEN + 1])
{
    const char *tok = h->cfg.sec ? h->cfg.sec->token : NULL;

    out[0] = '\0';
    if (tok)
        mt_sha256_hex(tok, strlen(tok), out);
}

static void write_head(struct mt_head_persist *p)
{
    Manta__StoredHead r = MANTA__STORED_HEAD__INIT;
    char digest[MT_SHA256_HEX_LEN + 1];

    if (p->h->task_table.next_num == p->saved_next_task &&
        mt_head_pgs_next(p->h->pgs) == p->saved_next_pg)
        return;
    token_digest(p->h, digest);
    r.cluster_id = p->h->cluster_id;
    r.next_task = p->h->task_table.next_num;
    r.next_pg = mt_head_pgs_next(p->h->pgs);
    r.token_sha256 = digest;
    p->saved_next_task = r.next_task;
    p->saved_next_pg = r.next_pg;
    put_msg(p, T_HEAD, "head", &r.base);
}

static void flush_tasks(struct mt_head_persist *p)
{
    struct mt_task_table *tt = &p->h->task_table;
    char id[17];

    for (size_t i = 0; i < p->tasks.n; i++) {
        struct mt_head_task *t = mt_task_table_find(tt, p->tasks.v[i]);

        if (t && t->dirty) {
            t->dirty = false;
            write_task(p, t);
        } else if (!t) {
            mt_num_id(MT_ID_TASK, p->tasks.v[i], id);
            del_row(p, T_TASKS, id);
        }
    }
    p->tasks.n = 0;
}

/* ---- answers after the writes --------------------------------------------- */

static void answer(struct waiter *w)
{
    ProtobufCMessage *m = protobuf_c_message_unpack(w->desc, NULL, w->len,
                                                    w->buf);

    if (m)
        mt_rpc_reply(w->call, m);
    else
        mt_rpc_fail(w->call, -MT_EPROTO, "internal error: bad answer");
    protobuf_c_message_free_unpacked(m, NULL);
    free(w->buf);
    free(w);
}

static void answer_all(struct waiter *w)
{
    while (w) {
        struct waiter *next = w->next;
        answer(w);
        w = next;
    }
}

/* b's answers go out (all its writes acknowledged, or it waited long). */
static void batch_end(struct batch *b)
{
    struct mt_head_persist *p = b->p;
    struct batch **pp = &p->batches;

    while (*pp && *pp != b)
        pp = &(*pp)->next;
    if (*pp)
        *pp = b->next;
    answer_all(b->waiters);
    b->waiters = NULL;
    if (b->pending == 0)
        free(b);
    else
        b->p = NULL; /* late acknowledgements only count down */
}

static void on_written(void *arg, int err)
{
    struct batch *b = arg;

    (void)err; /* a failed write is the backend's to log and retry */
    if (--b->pending > 0)
        return;
    if (b->p)
        batch_end(b);
    else
        free(b);
}

/* Answers whose writes the backend sits on (Redis away: it buffers and
 * retries) go out after LATE_MS: the head serves on from memory. */
static void on_late(uv_timer_t *t)
{
    struct mt_head_persist *p = t->data;
    int64_t now = mt_now_mono_ms();
    struct batch *b = p->batches;

    while (b) {
        struct batch *next = b->next;
        if (now - b->since_ms >= LATE_MS)
            batch_end(b);
        b = next;
    }
}

void mt_head_persist_reply(struct mt_head_persist *p, struct mt_rpc_call *call,
                           const ProtobufCMessage *resp)
{
    struct waiter *w;

    if (!p || p->closing || p->durable_now) {
        mt_rpc_reply(call, resp);
        return;
    }
    w = mt_xcalloc(1, sizeof(*w));
    w->call = call;
    w->desc = resp->descriptor;
    w->len = protobuf_c_message_get_packed_size(resp);
    w->buf = mt_xmalloc(w->len ? w->len : 1);
    protobuf_c_message_pack(resp, w->buf);
    w->next = p->waiting;
    p->waiting = w;
}

static void write_dirty(struct mt_head_persist *p);

void mt_head_persist_flush(struct mt_head_persist *p)
{
    struct batch *b;

    if (p->loading)
        return;
    if (!p->waiting) {
        write_dirty(p);
        return;
    }
    b = mt_xcalloc(1, sizeof(*b));
    b->p = p;
    b->pending = 1; /* while being built */
    b->since_ms = mt_now_mono_ms();
    b->waiters = p->waiting;
    p->waiting = NULL;
    b->next = p->batches;
    p->batches = b;
    p->cur = b;
    write_dirty(p);
    p->cur = NULL;
    on_written(b, 0);
}

static void flush_gangs(struct mt_head_persist *p);

static void write_dirty(struct mt_head_persist *p)
{
    struct mt_actor_table *at;
    char id[17];

    write_head(p);
    for (size_t i = 0; i < p->pgs.n; i++) {
        struct mt_head_pg *pg = mt_head_pg_find_num(p->h->pgs, p->pgs.v[i]);

        if (pg && pg->state != MT_HEAD_PG_REMOVED) {
            write_pg(p, pg);
        } else {
            mt_num_id(MT_ID_PG, p->pgs.v[i], id);
            del_row(p, T_PGS, id);
        }
    }
    p->pgs.n = 0;
    flush_tasks(p);
    flush_objects(p);
    at = p->h->actors ? mt_head_actors_table(p->h->actors) : NULL;
    for (size_t i = 0; at && i < p->actors.n; i++) {
        struct mt_head_actor *x = mt_actor_table_find(at, p->actors.v[i]);

        if (x) {
            write_actor(p, x);
        } else {
            mt_num_id(MT_ID_ACTOR, p->actors.v[i], id);
            del_row(p, T_ACTORS, id);
        }
    }
    p->actors.n = 0;
    flush_gangs(p);
}

static void on_check(uv_check_t *c)
{
    mt_head_persist_flush(c->data);
}

/* ---- rows in --------------------------------------------------------------- */

static void restore_head(struct mt_head_persist *p, const Manta__StoredHead *r)
{
    struct mt_head *h = p->h;
    char digest[MT_SHA256_HEX_LEN + 1];

    if (strlen(r->cluster_id) == sizeof(h->cluster_id) - 1)
        memcpy(h->cluster_id, r->cluster_id, sizeof(h->cluster_id));
    /* Numbers handed out just before a crash may not have been written:
     * leave a wide gap so that no id is ever given twice. */
    if (r->next_task)
        h->task_table.next_num = r->next_task + (1u << 20);
    if (r->next_pg)
        mt_head_pgs_set_next(h->pgs, r->next_pg + (1u << 20));
    p->saved_next_task = r->next_task;
    p->saved_next_pg = r->next_pg;
    token_digest(h, digest);
    if (*r->token_sha256 && strcmp(r->token_sha256, digest) != 0)
        MT_WARN("the cluster token is not the one this state was stored "
                "with: workers and drivers holding the old token cannot "
                "connect (docs/security.md)");
}

static void restore_pg(struct mt_head_persist *p,
                       const Manta__StoredPlacementGroup *r)
{
    struct mt_head_pg_bundle *b;
    struct mt_pg_def def;
    const char *why = NULL;
    const char *const *names;
    struct mt_res_set per_host;
    uint64_t num;

    memset(&def, 0, sizeof(def));
    if (!r->def || mt_num_id_parse(MT_ID_PG, r->pg_id, &num) < 0 ||
        mt_pg_def_from_pb(r->def, &def, &why) < 0) {
        MT_WARN("skipping unreadable stored placement group %s%s%s",
                r->pg_id, why ? ": " : "", why ? why : "");
        mt_pg_def_release(&def);
        return;
    }
    b = mt_xcalloc(r->n_bundles + 1, sizeof(*b));
    for (size_t i = 0; i < r->n_bundles; i++) {
        b[i].node_id = r->bundles[i]->node_id;
        b[i].gpus = r->bundles[i]->gpus;
        b[i].tpu_chips = r->bundles[i]->tpu_chips;
    }
    /* A gang's slice group: back onto its slices (gangs load first). */
    mt_head_gangs_pg_hint(p->h->gangs, num, &names, &per_host);
    if (!mt_head_pg_restore(p->h->pgs, num, &def, r->create_ms, b,
                            r->n_bundles, &per_host, names, &why))
        MT_WARN("cannot restore placement group %s: %s", r->pg_id, why);
    free(b);
}

/* The row's fields onto restored task t (placed ones keep their grant's
 * devices for mt_head_tasks_adopt; the scheduler handle is not kept). */
static void fill_task(struct mt_head_persist *p, struct mt_head_task *t,
                      const Manta__StoredTask *r)
{
    t->attempt = r->attempt;
    if (*r->node_id)
        mt_head_task_set_node(t, r->node_id);
    if (r->grant) {
        t->grant.node = UINT32_MAX;
        t->grant.gpus = r->grant->gpus;
        t->grant.gpu_each = r->grant->gpu_each;
        t->grant.tpu_chips = r->grant->tpu_chips;
        t->grant.pg = r->grant->pg;
        t->grant.bundle = r->grant->bundle;
    }
    t->exit_code = r->exit_code;
    if (*r->error)
        mt_head_task_set_error(t, r->error);
    if (r->result.len)
        mt_head_task_set_result(t, r->result.data, r->result.len);
    t->result_in_store = r->result_in_store;
    t->result_size = r->result_size;
    t->start_ms = r->start_ms;
    t->cancel_requested = r->cancel_requested;
    t->leased = r->leased;
    t->actor_died = r->actor_died;
    t->pg = r->pg;
    t->cw_tag = r->watcher_tag;
    t->cw_output = r->watcher_output;
    if (*r->watcher_id)
        t->cw = p->h->hooks.watch_restore(p->h, r->watcher_id);
    if (r->n_deps && r->n_deps <= MT_TASK_MAX_ARGS) {
        t->deps = mt_xcalloc(1, sizeof(*t->deps) +
                                    r->n_deps * sizeof(t->deps->ids[0]));
        for (size_t i = 0; i < r->n_deps; i++)
            if (mt_pb_object_id(&r->deps[i], &t->deps->ids[t->deps->n]) == 0)
                t->deps->n++;
    }
}

static void restore_task(struct mt_head_persist *p, const Manta__StoredTask *r)
{
    struct mt_task_table *tt = &p->h->task_table;
    struct mt_head_task *t;
    struct mt_task_def d;
    const char *why = NULL;
    int state = (int)r->state;
    uint64_t num;

    mt_task_def_init(&d);
    if (!r->spec || mt_num_id_parse(MT_ID_TASK, r->spec->task_id, &num) < 0 ||
        state < MT_TASK_WAITING_FOR_ARGS || state > MT_TASK_CANCELLED ||
        mt_task_def_from_pb(r->spec, &d, &why) < 0) {
        MT_WARN("skipping unreadable stored task %s%s%s",
                r->spec ? r->spec->task_id : "?", why ? ": " : "",
                why ? why : "");
        mt_task_def_release(&d);
        return;
    }
    t = mt_task_table_add_num(tt, num, &d, r->max_retries, r->submit_ms);
    if (!t) {
        mt_task_def_release(&d);
        return;
    }
    fill_task(p, t, r);
    if (state >= MT_TASK_FINISHED) {
        mt_task_table_finish(tt, t, (enum mt_head_task_state)state,
                             r->exit_code, NULL, r->end_ms);
        if (r->lineage)
            mt_task_table_pin(tt, t, true);
        return;
    }
    t->state = (enum mt_head_task_state)state;
    if (t->def.kind == MT_TASK_KIND_LEASE)
        mt_head_recover_expect_owner(p->h->recover, t->def.owner_id);
}

static void restore_object(struct mt_head_persist *p,
                           const Manta__StoredObject *r)
{
    struct mt_obj_table *ot = mt_head_objects_table(p->h->objects);
    struct mt_obj_owners *ow = mt_head_objects_owners(p->h->objects);
    struct mt_obj *o;
    mt_object_id id;

    if (mt_pb_object_id(&r->object_id, &id) < 0 ||
        r->state < MT_OBJ_PENDING || r->state > MT_OBJ_FAILED ||
        mt_obj_find(ot, &id)) {
        MT_WARN("skipping unreadable stored object");
        return;
    }
    o = mt_obj_new(ot, &id, (enum mt_obj_state)r->state, r->owner, r->refs);
    for (size_t i = 0; i < r->n_nodes; i++)
        mt_obj_add_node(o, r->nodes[i]);
    if (r->is_inline)
        mt_obj_set_inline(o, r->data.data, r->data.len);
    o->size = r->size;
    if (*r->error)
        mt_obj_set_error(o, o->state, r->error);
    o->lineage_refs = r->lineage_refs;
    o->task_num = r->task_num;
    o->awaited = r->awaited;
    for (size_t i = 0; i < r->n_sessions; i++) {
        struct mt_obj_owner *s = mt_obj_owners_open(ow,
                                                    r->sessions[i]->owner_id);

        for (uint32_t k = 0; k < r->sessions[i]->count && k < r->refs; k++)
            mt_obj_owner_ref(s, &id);
        mt_head_recover_expect_owner(p->h->recover, s->id);
    }
}

static void restore_actor(struct mt_head_persist *p,
                          const Manta__StoredActor *r)
{
    struct mt_head_actor *x;
    uint64_t num;

    if (mt_num_id_parse(MT_ID_ACTOR, r->actor_id, &num) < 0 ||
        r->state < MT_ACTOR_PENDING_CREATION || r->state > MT_ACTOR_DEAD) {
        MT_WARN("skipping unreadable stored actor %s", r->actor_id);
        return;
    }
    x = mt_actor_table_add(mt_head_actors_table(p->h->actors), num, r->name,
                           r->function, r->owner, r->detached,
                           r->max_restarts, r->create_ms);
    x->restarts = r->restarts;
    if (*r->node_id)
        mt_head_actor_set_node(x, r->node_id);
    if (r->state == MT_ACTOR_DEAD)
        mt_actor_table_set_dead(mt_head_actors_table(p->h->actors), x,
                                r->death_reason, r->end_ms);
    x->state = (enum mt_head_actor_state)r->state;
    x->pid = r->pid;
    x->incarnation = r->incarnation;
    x->last_attempt = r->last_attempt;
    x->next_seq = r->next_seq;
    x->dispatched = r->dispatched;
    x->no_restart = r->no_restart;
    x->owner_gone = r->owner_gone;
    if (!x->detached && x->state != MT_ACTOR_DEAD)
        mt_head_recover_expect_owner(p->h->recover, x->owner);
}

/* ---- loading --------------------------------------------------------------- */

/* A stored task row is kept until the table is read (restored oldest
 * first, restore_tasks); RET true: the row is the loader's now. */
static bool keep_task(struct mt_head_persist *p, const ProtobufCMessage *m)
{
    mt_xgrow((void **)&p->rows, &p->cap_rows, p->n_rows + 1,
             sizeof(*p->rows));
    p->rows[p->n_rows++] = (Manta__StoredTask *)m;
    return true;
}

static int older_first(const void *a, const void *b)
{
    const Manta__StoredTask *x = *(Manta__StoredTask *const *)a;
    const Manta__StoredTask *y = *(Manta__StoredTask *const *)b;

    return x->submit_ms < y->submit_ms ? -1 : x->submit_ms > y->submit_ms;
}

/* Every task row is in: restore them oldest first, then give the gangs
 * their members. */
static void restore_tasks(struct mt_head_persist *p)
{
    if (p->n_rows) /* qsort(NULL, 0) is undefined */
        qsort(p->rows, p->n_rows, sizeof(*p->rows), older_first);
    for (size_t i = 0; i < p->n_rows; i++) {
        restore_task(p, p->rows[i]);
        manta__stored_task__free_unpacked(p->rows[i], NULL);
    }
    if (p->n_rows)
        MT_INFO("loaded %zu tasks from storage", p->n_rows);
    free(p->rows);
    p->rows = NULL;
    p->n_rows = p->cap_rows = 0;
    mt_head_gangs_attach(p->h->gangs);
}

static void restore_gang(struct mt_head_persist *p, const Manta__StoredGang *r);

/* row functions for the tables restored one row at a time */
#define ROW(fn, type)                                                       \
    static bool fn##_row(struct mt_head_persist *p, const ProtobufCMessage *m) \
    {                                                                       \
        fn(p, (const type *)m);                                             \
        return false;                                                       \
    }
ROW(restore_head, Manta__StoredHead)
ROW(restore_object, Manta__StoredObject)
ROW(restore_gang, Manta__StoredGang)
ROW(restore_pg, Manta__StoredPlacementGroup)
ROW(restore_actor, Manta__StoredActor)
#undef ROW

/* The tables in load order: each needs the ones before it (groups need
 * gangs' slice names, tasks their groups, gangs and objects, actors their
 * creation tasks). row restores one row (true: it kept the message);
 * all_in runs once the table is read (may be NULL). */
static const struct load_table {
    const char *name;
    const ProtobufCMessageDescriptor *desc;
    bool (*row)(struct mt_head_persist *p, const ProtobufCMessage *m);
    void (*all_in)(struct mt_head_persist *p);
} load_tables[] = {
    {T_HEAD, &manta__stored_head__descriptor, restore_head_row, NULL},
    {T_OBJECTS, &manta__stored_object__descriptor, restore_object_row, NULL},
    {T_GANGS, &manta__stored_gang__descriptor, restore_gang_row, NULL},
    {T_PGS, &manta__stored_placement_group__descriptor, restore_pg_row,
     NULL},
    {T_TASKS, &manta__stored_task__descriptor, keep_task, restore_tasks},
    {T_ACTORS, &manta__stored_actor__descriptor, restore_actor_row, NULL},
};

#define N_LOAD_TABLES (sizeof(load_tables) / sizeof(load_tables[0]))

static void on_row(void *arg, const char *key, const void *val, size_t len)
{
    struct mt_head_persist *p = arg;
    const struct load_table *t = &load_tables[p->load_step];
    ProtobufCMessage *m = protobuf_c_message_unpack(t->desc, NULL, len, val);

    if (!m) {
        MT_WARN("skipping an unreadable stored row %s of %s", key, t->name);
        return;
    }
    if (!t->row(p, m))
        protobuf_c_message_free_unpacked(m, NULL);
}

static void load_next(struct mt_head_persist *p);

static void on_table_loaded(void *arg, int err)
{
    struct mt_head_persist *p = arg;
    const struct load_table *t = &load_tables[p->load_step];

    if (err) {
        MT_WARN("cannot load the stored %s: %s", t->name, mt_strerror(err));
        p->load_err = err;
    }
    if (t->all_in)
        t->all_in(p);
    p->load_step++;
    load_next(p);
}

/* Read the next table, or say that all are in. */
static void load_next(struct mt_head_persist *p)
{
    if (p->load_step < N_LOAD_TABLES) {
        mt_storage_scan(p->h->store, load_tables[p->load_step].name, on_row,
                        on_table_loaded, p);
        return;
    }
    p->loading = false;
    p->loaded(p->loaded_arg, p->load_err);
}

void mt_head_persist_load(struct mt_head_persist *p,
                          void (*done)(void *arg, int err), void *arg)
{
    p->loading = true;
    p->loaded = done;
    p->loaded_arg = arg;
    p->load_step = 0;
    load_next(p);
}

/* ---- gangs ----------------------------------------------------------------- */

/* Gangs are few: a dirty one is listed once. */
static void on_gang_changed(void *arg, uint64_t num)
{
    struct mt_head_persist *p = arg;

    if (p->loading)
        return;
    for (size_t i = 0; i < p->gangs.n; i++)
        if (p->gangs.v[i] == num)
            return;
    push(&p->gangs, num);
}

static void write_gang(struct mt_head_persist *p, const struct mt_gang *g)
{
    Manta__StoredGang r = MANTA__STORED_GANG__INIT;
    Manta__SubmitGangRequest def;
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    uint32_t *ports = mt_xcalloc(g->nports + 1, sizeof(*ports));
    uint64_t *tasks = mt_xcalloc(g->n + 1, sizeof(*tasks));
    char **names = mt_xcalloc(g->slices + 1, sizeof(*names));

    if (mt_pb_gang_request_view(&a, &g->def, &def) < 0) {
        MT_WARN("cannot store gang %s: out of memory", g->id);
        goto out;
    }
    for (size_t i = 0; i < g->nports; i++)
        ports[i] = g->ports[i];
    for (uint32_t i = 0; i < g->n; i++)
        tasks[i] = g->m[i].task;
    for (uint32_t j = 0; j < g->slices; j++)
        names[j] = g->slice_names[j] ? g->slice_names[j] : "";
    r.gang_id = (char *)g->id;
    r.def = &def;
    r.state = (int32_t)g->state;
    r.pg = g->pg;
    r.hosts = g->hosts;
    r.slices = g->slices;
    r.procs = g->procs;
    r.attempt = g->attempt;
    r.cancel = g->cancel;
    r.ports = ports;
    r.n_ports = g->nports;
    r.slice_names = names;
    r.n_slice_names = g->slices;
    r.member_tasks = tasks;
    r.n_member_tasks = g->n;
    r.exit_code = g->exit_code;
    r.error = g->error ? g->error : "";
    r.submit_ms = g->submit_ms;
    r.end_ms = g->end_ms;
    put_msg(p, T_GANGS, g->id, &r.base);
out:
    mt_pb_arena_release(&a);
    free(names);
    free(tasks);
    free(ports);
}

/* Gangs are never forgotten: every dirty one is written. */
static void flush_gangs(struct mt_head_persist *p)
{
    for (size_t i = 0; i < p->gangs.n; i++) {
        struct mt_gang *g = mt_head_gang_find_num(p->h->gangs,
                                                  p->gangs.v[i]);
        if (g)
            write_gang(p, g);
    }
    p->gangs.n = 0;
}

static void restore_gang(struct mt_head_persist *p, const Manta__StoredGang *r)
{
    struct mt_gang_saved sv;
    uint16_t *ports = mt_xcalloc(r->n_ports + 1, sizeof(*ports));
    const char *why = NULL;
    bool ok = true;

    memset(&sv, 0, sizeof(sv));
    mt_task_def_init(&sv.def.member);
    for (size_t i = 0; i < r->n_ports; i++) {
        ok &= r->ports[i] > 0 && r->ports[i] <= UINT16_MAX;
        ports[i] = (uint16_t)r->ports[i];
    }
    if (!ok || !r->def || mt_num_id_parse(MT_ID_GANG, r->gang_id,
                                          &sv.num) < 0 ||
        mt_gang_def_from_pb(r->def, &sv.def, &why) < 0) {
        MT_WARN("skipping unreadable stored gang %s%s%s", r->gang_id,
                why ? ": " : "", why ? why : "");
        mt_gang_def_release(&sv.def);
        free(ports);
        return;
    }
    sv.state = (enum mt_head_gang_state)r->state;
    sv.pg = r->pg;
    sv.hosts = r->hosts;
    sv.slices = r->slices;
    sv.procs = r->procs;
    sv.attempt = r->attempt;
    sv.cancel = r->cancel;
    sv.ports = ports;
    sv.nports = r->n_ports;
    sv.slice_names = (const char *const *)r->slice_names;
    sv.n_slice_names = r->n_slice_names;
    sv.member_tasks = r->member_tasks;
    sv.n_members = r->n_member_tasks;
    sv.exit_code = r->exit_code;
    sv.error = r->error;
    sv.submit_ms = r->submit_ms;
    sv.end_ms = r->end_ms;
    if (!mt_head_gang_restore(p->h->gangs, &sv, &why))
        MT_WARN("cannot restore gang %s: %s", r->gang_id, why);
    free(ports);
}

/* ---- life cycle ------------------------------------------------------------ */

struct mt_head_persist *mt_head_persist_create(struct mt_head *h)
{
    struct mt_head_persist *p = mt_xcalloc(1, sizeof(*p));

    p->h = h;
    h->task_table.touched = on_touched;
    h->task_table.touched_arg = p;
    mt_head_objects_table(h->objects)->touched = on_obj_touched;
    mt_head_objects_table(h->objects)->touched_arg = p;
    mt_head_tasks_listen(h->tasks, &task_listener, p);
    mt_head_pgs_listen(h->pgs, &pg_listener, p);
    mt_head_actors_on_changed(h->actors, on_actor_changed, p);
    mt_head_gangs_on_changed(h->gangs, on_gang_changed, p);
    p->durable_now = strcmp(h->store->ops->name, "memory") == 0;
    uv_check_init(h->loop, &p->check);
    p->check.data = p;
    uv_check_start(&p->check, on_check);
    uv_timer_init(h->loop, &p->late);
    p->late.data = p;
    uv_timer_start(&p->late, on_late, LATE_MS / 2, LATE_MS / 2);
    return p;
}

static void on_handle_closed(uv_handle_t *hd)
{
    struct mt_head_persist *p = hd->data;

    if (++p->n_closed == 2 && p->closed)
        p->closed(p->closed_arg);
}

void mt_head_persist_close(struct mt_head_persist *p, void (*done)(void *arg),
                           void *arg)
{
    mt_head_persist_flush(p);
    answer_all(p->waiting); /* none after a flush; kept for clarity */
    p->waiting = NULL;
    while (p->batches) /* shutting down: answer now */
        batch_end(p->batches);
    p->closing = true;
    p->closed = done;
    p->closed_arg = arg;
    p->h->task_table.touched = NULL;
    mt_head_objects_table(p->h->objects)->touched = NULL;
    uv_close((uv_handle_t *)&p->check, on_handle_closed);
    uv_close((uv_handle_t *)&p->late, on_handle_closed);
}

void mt_head_persist_destroy(struct mt_head_persist *p)
{
    if (!p)
        return;
    free(p->tasks.v);
    free(p->actors.v);
    free(p->pgs.v);
    free(p->gangs.v);
    free(p->objs);
    free(p);
}
