/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lease.c -- the lease path: function tasks pushed by this driver
 * straight to workers the head leased to it (docs/architecture.md,
 * "Leases: the direct task path").
 *
 * A submit that fits (mt__lease_post) gives the task its id at once and
 * posts it to the loop thread, which queues it in its scheduling class
 * (the scheduling fields of its def, lease_policy.h). A class asks the
 * head for leases: each request is an internal task of kind LEASE
 * submitted on the client watch (rpc_batch.c), whose events this file
 * hears as the task's listener. RUNNING with a worker address is a
 * grant; a final state is the lease's end. To a granted lease the class
 * pushes batches of its queue (rpc_push.c), at most MT__LEASE_PUSHES at a
 * time, sized by how long its tasks take; the reply completes each task
 * as a head event would. A lease whose class has nothing left to push is
 * returned; requests the class no longer needs are cancelled.
 *
 * Failures (lease_policy.h, mt__lease_fate): a task the worker never ran
 * (not_run, or a push that failed UNAVAILABLE) is queued again at the
 * front at the same attempt, and that lease is not used again; a task
 * whose executor died, or whose push was lost otherwise (the node died:
 * the lease FAILED or the call broke), counts an attempt and runs again
 * while its retries allow. A lease that FAILS under pushes in flight ends
 * their tasks at once and cancels the calls by destroying the channel to
 * its worker. A request the head refuses or fails before any lease of
 * the class was granted fails the class's queued tasks with the head's
 * reason; a head (or worker) that does not know leases turns the path
 * off for good, and the queued tasks go to the head instead.
 *
 * Ownership: a queued or pushed task is a struct item, which is the post
 * request itself (never completed: freed when the task ends), holding
 * one ref on the task and its def. A lease holds one ref on its request
 * task. A push names its items and its lease; a push whose lease FAILED
 * is orphaned (lease NULL, items ended) and only freed on its reply.
 *
 * THREAD: mt__lease_post and mt__lease_cancel on the caller's thread;
 * the rest on the client's loop thread, which owns every queue, lease
 * and call. Task fields are written under c->mu, as task_state.c does.
 */
#include "sdk/lease.h"

#include <grpc/status.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/rpc.h"
#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/lease_policy.h"
#include "sdk/rpc_batch.h"
#include "sdk/rpc_push.h"
#include "sdk/rpc_task.h"
#include "sdk/task_opts.h"
#include "sdk/task_state.h"

#define PUSH_DEADLINE_MS (1000 * 60 * 60 * 24 * 7) /* tasks run on */
#define RETURN_AT_STOP_MS 200
/* A granted lease with nothing to push is kept this long before it is
 * returned, so a driver that submits, waits and submits again keeps it. */
#define IDLE_RETURN_MS 20
/* A push's answer carries each task's inline result and output: pushes
 * are cut so that answers stay far below the 64 MiB message limit. */
#define PUSH_REPLY_BUDGET (16u << 20)

struct lclass;
struct lease;

/* A channel to one worker, kept per address until the client stops. */
struct wchan {
    struct mt_client *c;
    char *address;
    struct mt_rpc_channel *ch;  /* NULL: destroyed (recreated on use) */
    unsigned calls;             /* calls in flight on it */
    unsigned pushes;            /* of which pushes of tasks */
    bool closing;               /* stopping: destroy once calls end */
};

/* A leased task, queued or pushed: the post that brought it. */
struct item {
    struct mt__req r;           /* posted; freed by item_free */
    struct item *next;          /* in its class's queue */
    struct mt_task *task;       /* one ref */
    struct mt_task_def *def;    /* owned */
    struct lease *lease;        /* pushed: where; NULL: queued */
    uint32_t attempt;
    uint32_t max_retries;       /* resolved */
    uint32_t output_limit;
    bool cancelled;             /* ended CANCELLED while queued */
    uint64_t hash;              /* of the class key */
    size_t key_len;
    char key[];
};

enum lease_state {
    L_REQUESTED = 0,            /* asked for, not granted yet */
    L_GRANTED = 1,              /* pushes go to it */
    L_SPENT = 2,                /* granted, not used again (returned,
                                   refused a task, unreachable) */
    L_ENDED = 3,                /* its final event came */
};

struct lease {
    struct lease *next;         /* in its class */
    struct lclass *cls;
    struct mt_task *req;        /* the request (one ref) */
    enum lease_state state;
    bool cancel_sent;           /* CancelTask asked for it */
    char *node_id;              /* granted: where */
    struct wchan *wc;
    unsigned inflight;          /* pushes of tasks in flight */
    struct push *pushes;        /* those pushes */
    uint64_t busy_from;         /* when its oldest push began to run */
    uint64_t idle_since;        /* uv_now() it was first seen with nothing
                                   to push; 0: not idle */
};

/* A push in flight. */
struct push {
    struct push *next, *prev;   /* in its lease */
    struct lease *l;            /* NULL: orphaned (its items ended) */
    struct wchan *wc;
    uint64_t sent;              /* uv_hrtime() */
    size_t n;
    struct item *items[];
};

/* A scheduling class. */
struct lclass {
    uint64_t hash;
    char *key;
    size_t key_len;
    struct mt_task_def *tmpl;   /* its lease request's def */
    struct item *head, *tail;   /* queued */
    size_t nq;
    struct lease *leases;
    unsigned n_granted;
    unsigned n_requested;
    unsigned batch;
    size_t reply_bytes;         /* the most one task's answer took */
    bool dirty;                 /* pump at the end of the wake-up */
    bool pumping;               /* in pump(): a nested one only marks */
};

struct mt__leases {
    atomic_bool off;            /* any thread: the head path for good */
    /* Loop thread only: */
    struct lclass **classes;
    size_t n_classes, cap_classes;
    struct wchan **chans;
    size_t n_chans, cap_chans;
    struct mt__push_task *scratch; /* a push's task views */
    size_t cap_scratch;
    bool dirty;
    bool stopping;
    uv_timer_t idle_timer;      /* returns leases idle IDLE_RETURN_MS */
    bool timer_ready;
};

static void pump(struct mt_client *c, struct lclass *k);

/* ---- the state ----------------------------------------------------------- */

struct mt__leases *mt__leases_create(void)
{
    struct mt__leases *ls = calloc(1, sizeof(*ls));
    const char *v = getenv("MANTA_LEASES");

    if (ls)
        atomic_init(&ls->off, v && strcmp(v, "0") == 0);
    return ls;
}

static void class_free(struct lclass *k)
{
    mt__task_def_free(k->tmpl);
    free(k->key);
    free(k);
}

void mt__leases_destroy(struct mt__leases *ls)
{
    if (!ls)
        return;
    for (size_t i = 0; i < ls->n_classes; i++)
        class_free(ls->classes[i]);
    for (size_t i = 0; i < ls->n_chans; i++) {
        free(ls->chans[i]->address);
        free(ls->chans[i]);
    }
    free(ls->classes);
    free(ls->chans);
    free(ls->scratch);
    free(ls);
}

/* ---- channels ------------------------------------------------------------ */

static struct wchan *wchan_get(struct mt_client *c, const char *addr)
{
    struct mt__leases *ls = c->tasks->leases;
    struct wchan *w;

    for (size_t i = 0; i < ls->n_chans; i++)
        if (strcmp(ls->chans[i]->address, addr) == 0)
            return ls->chans[i];
    if (mt_grow((void **)&ls->chans, &ls->cap_chans, ls->n_chans + 1,
                sizeof(*ls->chans)) < 0 || !(w = calloc(1, sizeof(*w))))
        return NULL;
    if (!(w->address = strdup(addr))) {
        free(w);
        return NULL;
    }
    w->c = c;
    ls->chans[ls->n_chans++] = w;
    return w;
}

/* w's channel, created when there is none. NULL on failure. */
static struct mt_rpc_channel *wchan_ch(struct mt_client *c, struct wchan *w)
{
    if (!w->ch && mt_rpc_channel_create(c->eng, w->address, 0, &w->ch) < 0)
        w->ch = NULL;
    return w->ch;
}

/* Destroy w's channel: its calls in flight end CANCELLED. */
static void wchan_drop(struct wchan *w)
{
    mt_rpc_channel_destroy(w->ch);
    w->ch = NULL;
}

/* A call on w ended. */
static void wchan_call_done(struct wchan *w)
{
    w->c->n_calls--;
    w->calls--;
    if (w->closing && w->calls == 0)
        wchan_drop(w);
}

/* ---- items --------------------------------------------------------------- */

static void item_release(struct mt__req *r)
{
    struct item *it = (struct item *)r;

    mt__task_unref(it->task);
    mt__task_def_free(it->def);
}

/* The task's entry is gone: it has ended (or left the lease path). */
static void item_free(struct item *it)
{
    if (it->task)
        it->task->lease_item = NULL;
    mt__req_free(&it->r);
}

/* End it's task without a result (lost is its -MT_E*, or 0 for FAILED)
 * and free it. */
static void item_end(struct mt_client *c, struct item *it, int lost,
                     const char *why)
{
    mt__task_end(c, it->task, lost, why);
    item_free(it);
}

static void enqueue_tail(struct lclass *k, struct item *it)
{
    it->next = NULL;
    it->lease = NULL;
    if (k->tail)
        k->tail->next = it;
    else
        k->head = it;
    k->tail = it;
    k->nq++;
}

/* Put the list first..last (n items, in order) at the front of k. */
static void enqueue_front(struct lclass *k, struct item *first,
                          struct item *last, size_t n)
{
    if (!first)
        return;
    last->next = k->head;
    k->head = first;
    if (!k->tail)
        k->tail = last;
    k->nq += n;
}

static struct item *dequeue(struct lclass *k)
{
    struct item *it = k->head;

    if (!it)
        return NULL;
    k->head = it->next;
    if (!k->head)
        k->tail = NULL;
    k->nq--;
    it->next = NULL;
    return it;
}

/* A list of items being gathered in order. */
struct ilist {
    struct item *first, *last;
    size_t n;
};

static void ilist_add(struct ilist *l, struct item *it)
{
    it->next = NULL;
    it->lease = NULL;
    if (l->last)
        l->last->next = it;
    else
        l->first = it;
    l->last = it;
    l->n++;
}

/* ---- classes ------------------------------------------------------------- */

/* The lease request def of d's class: its scheduling fields only. */
static struct mt_task_def *template_of(struct mt_client *c,
                                       const struct mt_task_def *d)
{
    struct mt_task_def *t = malloc(sizeof(*t));

    if (!t)
        return NULL;
    mt_task_def_init(t);
    t->kind = MT_TASK_KIND_LEASE;
    t->priority = d->priority;
    t->max_retries = 0;
    t->place = d->place;
    t->affinity_soft = d->affinity_soft;
    t->bundle = d->bundle;
    if (mt_qty_list_copy(&t->res, &d->res) < 0 ||
        mt_selector_copy(&t->sel, &d->sel) < 0 ||
        mt_def_set_str(&t->name, "lease") < 0 ||
        mt_def_set_str(&t->owner_id, c->session_id) < 0 ||
        mt_def_set_str(&t->affinity_node, d->affinity_node) < 0 ||
        mt_def_set_str(&t->pg_id, d->pg_id) < 0) {
        mt__task_def_free(t);
        return NULL;
    }
    return t;
}

/* The class of it, made on first sight. NULL on ENOMEM. */
static struct lclass *class_of(struct mt_client *c, const struct item *it)
{
    struct mt__leases *ls = c->tasks->leases;
    struct lclass *k;

    for (size_t i = 0; i < ls->n_classes; i++) {
        k = ls->classes[i];
        if (k->hash == it->hash && k->key_len == it->key_len &&
            memcmp(k->key, it->key, it->key_len) == 0)
            return k;
    }
    if (mt_grow((void **)&ls->classes, &ls->cap_classes, ls->n_classes + 1,
                sizeof(*ls->classes)) < 0 || !(k = calloc(1, sizeof(*k))))
        return NULL;
    k->hash = it->hash;
    k->key_len = it->key_len;
    k->batch = MT__LEASE_BATCH_START;
    if (!(k->key = malloc(it->key_len + 1)) ||
        !(k->tmpl = template_of(c, it->def))) {
        class_free(k);
        return NULL;
    }
    memcpy(k->key, it->key, it->key_len + 1);
    ls->classes[ls->n_classes++] = k;
    return k;
}

static void mark(struct mt_client *c, struct lclass *k)
{
    k->dirty = true;
    c->tasks->leases->dirty = true;
}

/* ---- leaving the lease path ---------------------------------------------- */

/*
 * Send it's task to the head instead (the path is off: an old head or
 * worker). The head names it anew: the id we gave it is dropped, and
 * mt_task_id() waits for the head's.
 */
static void reroute(struct mt_client *c, struct item *it)
{
    struct mt_task *t = it->task;
    struct mt_task_def *d = it->def;

    it->def = NULL;
    it->task = NULL;
    t->lease_item = NULL;
    pthread_mutex_lock(&c->mu);
    t->id[0] = '\0';
    t->leased = false;
    atomic_store(&t->settled, false);
    pthread_mutex_unlock(&c->mu);
    mt__cw_submit(c, t, d); /* takes the item's ref and d */
    mt__req_free(&it->r);
}

/* Turn the path off for good: every queued task goes to the head. */
static void go_off(struct mt_client *c, const char *why)
{
    struct mt__leases *ls = c->tasks->leases;

    if (!atomic_exchange(&ls->off, true))
        fprintf(stderr, "manta: function tasks go through the head: %s\n",
                why);
    for (size_t i = 0; i < ls->n_classes; i++) {
        struct lclass *k = ls->classes[i];
        struct item *it;

        while ((it = dequeue(k))) {
            if (it->cancelled)
                item_free(it);
            else
                reroute(c, it);
        }
    }
}

/* An old head refuses the LEASE kind: its reason names the kinds it
 * knows, and LEASE is not one of them. */
static bool unknown_kind(const char *why)
{
    return why && strstr(why, "kind must be") && !strstr(why, "LEASE");
}

/* End every queued task of k FAILED with why. */
static void fail_queue(struct mt_client *c, struct lclass *k, const char *why)
{
    struct item *it;

    while ((it = dequeue(k)))
        item_end(c, it, 0, why);
}

/* The head's note on a waiting request (e.g. infeasible): shown to whoever
 * waits for k's queued tasks. */
static void note_queue(struct mt_client *c, struct lclass *k, const char *why)
{
    pthread_mutex_lock(&c->mu);
    for (struct item *it = k->head; it; it = it->next) {
        char *p = strdup(why);

        if (!p)
            break;
        free(it->task->error);
        it->task->error = p;
    }
    pthread_mutex_unlock(&c->mu);
}

/* ---- completing tasks ---------------------------------------------------- */

/* Apply a final answer r to it's task at attempt, on node. mu held. */
static void complete_locked(struct item *it, const struct mt__push_result *r,
                            const char *node, const char *error)
{
    struct mt_task *t = it->task;
    struct mt__task_event ev;

    memset(&ev, 0, sizeof(ev));
    ev.node_id = "";
    ev.error = "";
    ev.task_id = "";
    ev.worker_address = "";
    if (r->out_len) {
        ev.output = r->out;
        ev.output_len = r->out_len;
        ev.fd = 1;
        mt__task_apply_locked(t, &ev);
    }
    if (r->err_len) {
        ev.output = r->err;
        ev.output_len = r->err_len;
        ev.fd = 2;
        mt__task_apply_locked(t, &ev);
    }
    ev.output = NULL;
    ev.output_len = 0;
    t->out.dropped += t->output_limit ? r->out_dropped : 0;
    t->err.dropped += t->output_limit ? r->err_dropped : 0;
    ev.state = r->state;
    ev.attempt = it->attempt;
    ev.node_id = node ? node : "";
    ev.error = error ? error : r->error;
    ev.result = r->result;
    ev.result_len = r->result_len;
    ev.result_in_store = r->result_in_store;
    ev.result_size = r->result_size;
    mt__task_apply_locked(t, &ev);
}

/* A task lost with its push or its executor: retry it (at the front of k,
 * via *again) or end it FAILED with why. */
static void lost(struct mt_client *c, struct item *it, const char *why,
                 struct ilist *again)
{
    char msg[512];

    if (mt__lease_fate(false, it->attempt, (int32_t)it->max_retries) ==
        MT__LEASE_RETRY) {
        it->attempt++;
        ilist_add(again, it);
        return;
    }
    snprintf(msg, sizeof(msg), "%s (attempt %u of %u)", why,
             it->attempt + 1, it->max_retries + 1);
    item_end(c, it, 0, msg);
}

/* ---- leases -------------------------------------------------------------- */

static void lease_free(struct lease *l)
{
    struct lclass *k = l->cls;
    struct lease **pp = &k->leases;

    while (*pp && *pp != l)
        pp = &(*pp)->next;
    if (*pp)
        *pp = l->next;
    if (l->req) {
        l->req->listen = NULL;
        mt__task_unref(l->req);
    }
    free(l->node_id);
    free(l);
}

/* l will not take more pushes. */
static void lease_spend(struct lease *l)
{
    if (l->state == L_GRANTED) {
        l->cls->n_granted--;
        l->state = L_SPENT;
    }
}

static void on_lease_event(struct mt_client *c, struct mt_task *t,
                           const struct mt__task_event *ev);

/* Ask the head for one more lease of k. */
static void lease_request(struct mt_client *c, struct lclass *k)
{
    struct lease *l = calloc(1, sizeof(*l));
    struct mt_task_def *d = malloc(sizeof(*d));
    struct mt_task *t = l && d ? mt__task_new(c, NULL, 0) : NULL;

    if (d)
        mt_task_def_init(d);
    if (!t || mt_task_def_copy(d, k->tmpl) < 0) {
        free(l);
        mt__task_def_free(d);
        mt__task_unref(t);
        return; /* out of memory: the next pump asks again */
    }
    l->cls = k;
    l->req = t;
    l->state = L_REQUESTED;
    l->next = k->leases;
    k->leases = l;
    k->n_requested++;
    t->listen = on_lease_event;
    t->listen_arg = l;
    atomic_fetch_add(&t->refs, 1); /* the client watch's */
    mt__cw_submit(c, t, d);
}

static void on_return_done(void *arg, int code, const char *why,
                           const struct mt__push_result *res, size_t n)
{
    struct wchan *w = arg;

    (void)code;
    (void)why;
    (void)res;
    (void)n;
    wchan_call_done(w);
}

/* Give l back (an empty push that returns it); its FINISHED event ends
 * it. */
static void lease_return(struct mt_client *c, struct lease *l, int timeout)
{
    struct mt_rpc_channel *ch = wchan_ch(c, l->wc);

    lease_spend(l);
    if (ch && mt__push_send(ch, l->req->id, c->session_id, NULL, 0, true,
                            timeout, on_return_done, l->wc) == 0) {
        c->n_calls++;
        l->wc->calls++;
    }
}

/* A RUNNING event with an address: l is ours to push to. */
static void lease_grant(struct mt_client *c, struct lease *l,
                        const struct mt__task_event *ev)
{
    struct lclass *k = l->cls;

    k->n_requested--;
    l->state = L_SPENT; /* until it is usable */
    if (!(l->wc = wchan_get(c, ev->worker_address)) ||
        !(l->node_id = strdup(ev->node_id)))
        return; /* out of memory: not used; it idles out on the worker */
    l->state = L_GRANTED;
    k->n_granted++;
}

static void orphan_pushes(struct mt_client *c, struct lease *l,
                          const char *why);

/* l's request ended (its final event, or refused or lost). */
static void lease_end(struct mt_client *c, struct lease *l)
{
    struct mt_task *t = l->req;
    struct lclass *k = l->cls;
    bool failed = t->state == MT_TASK_STATE_FAILED || t->lost;
    char why[512];

    if (l->state == L_REQUESTED) {
        k->n_requested--;
        if (failed && !l->cancel_sent && unknown_kind(t->error)) {
            l->state = L_ENDED;
            go_off(c, t->error);
        } else if (failed && !l->cancel_sent && k->n_granted == 0 &&
                   !c->closing) {
            snprintf(why, sizeof(why), "no lease for the task: %s",
                     t->error && *t->error ? t->error : "lost");
            fail_queue(c, k, why);
        }
    }
    lease_spend(l);
    if (failed && l->inflight) {
        snprintf(why, sizeof(why), "its node died: %s",
                 t->error && *t->error ? t->error : "its lease failed");
        orphan_pushes(c, l, why);
    }
    l->state = L_ENDED;
    if (l->inflight == 0)
        lease_free(l);
}

static void on_lease_event(struct mt_client *c, struct mt_task *t,
                           const struct mt__task_event *ev)
{
    struct lease *l = t->listen_arg;
    struct lclass *k = l->cls;

    if (c->tasks->leases->stopping)
        return;
    if (ev && ev->state == MT_TASK_STATE_RUNNING && l->state == L_REQUESTED &&
        *ev->worker_address)
        lease_grant(c, l, ev);
    else if (ev && !mt__task_final(ev->state) && *ev->error &&
             l->state == L_REQUESTED)
        note_queue(c, k, ev->error);
    if (t->ended || t->lost)
        lease_end(c, l);
    pump(c, k);
}

/* ---- pushes -------------------------------------------------------------- */

static void push_link(struct lease *l, struct push *p)
{
    p->l = l;
    p->prev = NULL;
    p->next = l->pushes;
    if (l->pushes)
        l->pushes->prev = p;
    l->pushes = p;
    l->inflight++;
}

/* Take p off its lease (it is answered, or orphaned). */
static void push_unlink(struct push *p)
{
    struct lease *l = p->l;

    if (!l)
        return;
    if (p->prev)
        p->prev->next = p->next;
    else
        l->pushes = p->next;
    if (p->next)
        p->next->prev = p->prev;
    p->next = p->prev = NULL;
    p->l = NULL;
    l->inflight--;
}

/* l FAILED (its node died) under pushes in flight: their tasks count an
 * attempt now, their replies are ignored, and the calls are cancelled
 * when no other usable lease shares the channel. */
static void orphan_pushes(struct mt_client *c, struct lease *l,
                          const char *why)
{
    struct ilist again = {NULL, NULL, 0};
    bool shared = false;

    while (l->pushes) {
        struct push *p = l->pushes;

        for (size_t j = 0; j < p->n; j++)
            lost(c, p->items[j], why, &again);
        p->n = 0;
        push_unlink(p);
    }
    enqueue_front(l->cls, again.first, again.last, again.n);
    for (struct lease *o = l->cls->leases; o; o = o->next)
        shared |= o != l && o->wc == l->wc && o->state == L_GRANTED;
    if (!shared && l->wc)
        wchan_drop(l->wc);
}

/* The batch size after p's reply. */
static void learn(struct lease *l, struct push *p)
{
    uint64_t now = uv_hrtime();
    uint64_t from = p->sent > l->busy_from ? p->sent : l->busy_from;

    l->cls->batch = mt__lease_batch_next(l->cls->batch, p->n,
                                         now > from ? now - from : 0);
    l->busy_from = now;
}

/* The answers of p's tasks. */
static void answered(struct mt_client *c, struct push *p,
                     const struct mt__push_result *res)
{
    struct lease *l = p->l;
    struct ilist again = {NULL, NULL, 0}, done = {NULL, NULL, 0};
    const char *node = l->node_id;

    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < p->n; i++) {
        struct item *it = p->items[i];
        const struct mt__push_result *r = &res[i];
        size_t bytes = r->result_len + r->out_len + r->err_len;

        if (bytes > l->cls->reply_bytes)
            l->cls->reply_bytes = bytes;

        if (r->not_run) {
            ilist_add(&again, it);
        } else if (r->state == MT_TASK_STATE_FAILED && r->system_failure &&
                   mt__lease_fate(false, it->attempt,
                                  (int32_t)it->max_retries) ==
                       MT__LEASE_RETRY) {
            it->attempt++;
            ilist_add(&again, it);
        } else {
            complete_locked(it, r, node, NULL);
            ilist_add(&done, it);
        }
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    for (struct item *it = done.first, *next; it; it = next) {
        next = it->next;
        item_free(it);
    }
    for (size_t i = 0; i < p->n; i++)
        if (res[i].not_run) {
            lease_spend(l); /* it has ended there: use another */
            break;
        }
    enqueue_front(l->cls, again.first, again.last, again.n);
}

/* p failed as a call (code, why): never reached (UNAVAILABLE) or lost. */
static void push_failed(struct mt_client *c, struct push *p, int code,
                        const char *why)
{
    struct ilist again = {NULL, NULL, 0};
    char msg[512];

    lease_spend(p->l);
    if (code == GRPC_STATUS_UNIMPLEMENTED) { /* a worker without leases */
        for (size_t i = 0; i < p->n; i++)
            ilist_add(&again, p->items[i]);
        enqueue_front(p->l->cls, again.first, again.last, again.n);
        go_off(c, why);
        return;
    }
    snprintf(msg, sizeof(msg), "its node died: %s", why);
    for (size_t i = 0; i < p->n; i++) {
        if (code == GRPC_STATUS_UNAVAILABLE)
            ilist_add(&again, p->items[i]);
        else
            lost(c, p->items[i], msg, &again);
    }
    enqueue_front(p->l->cls, again.first, again.last, again.n);
}

static void on_push_done(void *arg, int code, const char *why,
                         const struct mt__push_result *res, size_t n)
{
    struct push *p = arg;
    struct lease *l = p->l;
    struct mt_client *c = p->wc->c;
    struct lclass *k = l ? l->cls : NULL;

    (void)n;
    p->wc->pushes--;
    wchan_call_done(p->wc);
    if (!l || c->tasks->leases->stopping) { /* orphaned: tasks dealt with */
        push_unlink(p);
        free(p);
        return;
    }
    learn(l, p);
    if (code == 0)
        answered(c, p, res);
    else
        push_failed(c, p, code, why);
    push_unlink(p);
    free(p);
    if (l->state == L_ENDED && l->inflight == 0)
        lease_free(l);
    pump(c, k);
}

/* Push up to k->batch queued tasks to l. */
static void push(struct mt_client *c, struct lease *l)
{
    struct mt__leases *ls = c->tasks->leases;
    struct lclass *k = l->cls;
    size_t want = k->nq < k->batch ? k->nq : k->batch, n = 0;
    struct push *p;
    struct mt_rpc_channel *ch;
    struct item *it;

    if (k->reply_bytes && want > PUSH_REPLY_BUDGET / k->reply_bytes)
        want = PUSH_REPLY_BUDGET / k->reply_bytes;
    if (want == 0)
        want = 1;
    p = malloc(sizeof(*p) + want * sizeof(p->items[0]));
    ch = wchan_ch(c, l->wc);
    if (!p || !ch || mt_grow((void **)&ls->scratch, &ls->cap_scratch, want,
                             sizeof(*ls->scratch)) < 0) {
        free(p);
        lease_spend(l); /* not usable: its tasks stay queued */
        return;
    }
    while (n < want && (it = dequeue(k))) {
        if (it->cancelled) {
            item_free(it);
            continue;
        }
        it->lease = l;
        p->items[n] = it;
        ls->scratch[n].task_id = it->task->id;
        ls->scratch[n].attempt = it->attempt;
        ls->scratch[n].def = it->def;
        ls->scratch[n].output_limit = it->output_limit;
        ls->scratch[n++].max_retries = it->max_retries;
    }
    if (n == 0) {
        free(p);
        return;
    }
    p->l = NULL;
    p->wc = l->wc;
    p->n = n;
    p->sent = uv_hrtime();
    if (mt__push_send(ch, l->req->id, c->session_id, ls->scratch, n, false,
                      PUSH_DEADLINE_MS, on_push_done, p) < 0) {
        struct ilist back = {NULL, NULL, 0};

        for (size_t i = 0; i < n; i++)
            ilist_add(&back, p->items[i]);
        enqueue_front(k, back.first, back.last, back.n);
        free(p);
        lease_spend(l);
        return;
    }
    if (l->inflight == 0)
        l->busy_from = p->sent;
    l->idle_since = 0;
    push_link(l, p);
    l->wc->calls++;
    l->wc->pushes++;
    c->n_calls++;
}

/* ---- the pump ------------------------------------------------------------ */

static void on_idle_timer(uv_timer_t *h)
{
    struct mt_client *c = h->data;
    struct mt__leases *ls = c->tasks->leases;

    for (size_t i = 0; i < ls->n_classes; i++)
        mark(c, ls->classes[i]);
    mt__leases_pump(c);
}

/* l has nothing to push: return it once that has lasted IDLE_RETURN_MS. */
static void idle(struct mt_client *c, struct lease *l)
{
    struct mt__leases *ls = c->tasks->leases;
    uint64_t now = uv_now(&c->loop);

    if (l->idle_since && now - l->idle_since >= IDLE_RETURN_MS) {
        lease_return(c, l, c->rpc_timeout_ms);
        return;
    }
    if (!l->idle_since)
        l->idle_since = now;
    if (!ls->timer_ready) {
        uv_timer_init(&c->loop, &ls->idle_timer);
        ls->idle_timer.data = c;
        ls->timer_ready = true;
    }
    if (!uv_is_active((uv_handle_t *)&ls->idle_timer))
        uv_timer_start(&ls->idle_timer, on_idle_timer,
                       l->idle_since + IDLE_RETURN_MS - now, 0);
}

/* Push k's queue to its leases, ask for more, let go of what is idle. */
static void pump(struct mt_client *c, struct lclass *k)
{
    unsigned more;

    if (k->pumping) { /* a listener told inside this pump */
        mark(c, k);
        return;
    }
    k->dirty = false;
    if (c->closing || c->tasks->leases->stopping)
        return;
    k->pumping = true;
    for (struct lease *l = k->leases; l && k->nq; l = l->next)
        while (l->state == L_GRANTED && l->inflight < MT__LEASE_PUSHES &&
               k->nq)
            push(c, l);
    more = mt__lease_more(k->nq, k->n_granted, k->n_requested, k->batch);
    while (more--)
        lease_request(c, k);
    for (struct lease *l = k->leases; l && !k->nq; l = l->next) {
        if (l->state == L_REQUESTED && !l->cancel_sent && l->req->id[0]) {
            l->cancel_sent = true;
            mt__task_cancel_post(c, l->req->id);
        } else if (l->state == L_GRANTED && l->inflight == 0) {
            idle(c, l);
        }
    }
    k->pumping = false;
}

void mt__leases_pump(struct mt_client *c)
{
    struct mt__leases *ls = c->tasks->leases;

    if (!ls->dirty)
        return;
    ls->dirty = false;
    for (size_t i = 0; i < ls->n_classes; i++)
        if (ls->classes[i]->dirty)
            pump(c, ls->classes[i]);
}

/* ---- posting ------------------------------------------------------------- */

static int item_start(struct mt_client *c, struct mt__req *r)
{
    struct item *it = (struct item *)r;
    struct lclass *k;

    if (atomic_load(&c->tasks->leases->off)) {
        reroute(c, it);
        return 0;
    }
    if (!(k = class_of(c, it))) {
        item_end(c, it, -MT_ENOMEM, "out of memory");
        return 0;
    }
    it->task->lease_item = it;
    enqueue_tail(k, it);
    mark(c, k);
    return 0;
}

static void item_drop(struct mt_client *c, struct mt__req *r)
{
    struct item *it = (struct item *)r;

    mt__task_end(c, it->task, -MT_ECLOSED, "the client was disconnected");
    mt__req_complete(c, r, -MT_ECLOSED, NULL); /* abandoned: frees it */
}

static const struct mt__req_ops item_ops = {
    .start = item_start,
    .drop = item_drop,
    .release = item_release,
};

/* Whether d may take the lease path. */
static bool fits(struct mt_client *c, const struct mt_task_def *d)
{
    if (d->kind != MT_TASK_KIND_FUNCTION || !c->tasks->leases ||
        atomic_load(&c->tasks->leases->off) ||
        atomic_load(&c->tasks->cw_state) != MT__CW_READY ||
        !atomic_load(&c->session_open))
        return false;
    if (d->env.n || d->n_env_unset || d->cwd) /* a push carries none */
        return false;
    for (size_t i = 0; i < d->nargs; i++)
        if (d->args[i].is_ref)
            return false;
    return true;
}

int mt__lease_post(struct mt_client *c, struct mt_task_def *d,
                   size_t output_limit, struct mt_task **out)
{
    char key[MT__LEASE_KEY_MAX], id[MT_NUM_ID_LEN + 1];
    int n = fits(c, d) ? mt__lease_class_key(d, key, sizeof(key)) : -1;
    struct item *it;
    struct mt_task *t;

    *out = NULL;
    if (n < 0)
        return MT__LEASE_NOT_TAKEN;
    mt__task_id_new(id);
    it = mt__req_new(c, &item_ops, sizeof(*it) + (size_t)n + 1);
    t = it ? mt__task_new(c, id, output_limit) : NULL;
    if (!t) {
        free(it);
        mt__task_def_free(d);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    t->leased = true;
    it->task = t;
    it->def = d;
    it->max_retries = mt__lease_retries(d->max_retries);
    it->output_limit = output_limit > UINT32_MAX ? UINT32_MAX
                                                 : (uint32_t)output_limit;
    it->hash = mt__lease_key_hash(key, (size_t)n);
    it->key_len = (size_t)n;
    memcpy(it->key, key, (size_t)n + 1);
    atomic_fetch_add(&t->refs, 1); /* the item's */
    if (mt__req_post(c, &it->r) < 0) { /* frees it and its ref */
        mt__task_unref(t);
        return -MT_ECLOSED;
    }
    *out = t;
    return 0;
}

/* ---- cancel -------------------------------------------------------------- */

struct cancel_req {
    struct mt__req r;
    struct mt_task *task;        /* one ref */
    bool force;
};

static void on_stop_done(void *arg, int code)
{
    (void)code;
    wchan_call_done(arg);
}

static int cancel_start(struct mt_client *c, struct mt__req *r)
{
    struct cancel_req *q = (struct cancel_req *)r;
    struct item *it = q->task->lease_item;
    struct mt_rpc_channel *ch;

    if (!it || it->cancelled) { /* it has ended */
        mt__req_complete(c, r, 0, NULL);
        return 0;
    }
    if (!it->lease) {
        struct mt__task_event ev;

        memset(&ev, 0, sizeof(ev));
        ev.state = MT_TASK_STATE_CANCELLED;
        ev.attempt = it->attempt;
        ev.node_id = "";
        ev.error = "cancelled before it was pushed to a worker";
        it->cancelled = true; /* freed when its queue reaches it */
        it->task->lease_item = NULL;
        pthread_mutex_lock(&c->mu);
        mt__task_apply_locked(it->task, &ev);
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
    } else if ((ch = wchan_ch(c, it->lease->wc)) &&
               mt__push_stop(ch, it->task->id, it->attempt, q->force,
                             c->rpc_timeout_ms, on_stop_done,
                             it->lease->wc) == 0) {
        it->lease->wc->calls++;
        c->n_calls++;
    }
    mt__req_complete(c, r, 0, NULL);
    return 0;
}

static void cancel_release(struct mt__req *r)
{
    mt__task_unref(((struct cancel_req *)r)->task);
}

static const struct mt__req_ops cancel_ops = {
    .start = cancel_start,
    .release = cancel_release,
};

int mt__lease_cancel(struct mt_client *c, struct mt_task *t, bool force)
{
    struct cancel_req *q = mt__req_new(c, &cancel_ops, sizeof(*q));
    int rc;

    if (!q)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    atomic_fetch_add(&t->refs, 1);
    q->task = t;
    q->force = force;
    rc = mt__req_run(c, &q->r, c->rpc_timeout_ms + MT__WAIT_GRACE_MS);
    if (rc == 0)
        mt__req_free(&q->r);
    return rc;
}

/* ---- stop ---------------------------------------------------------------- */

/* End everything of k as closed; return its idle leases. */
static void stop_class(struct mt_client *c, struct lclass *k)
{
    struct item *it;

    while ((it = dequeue(k))) {
        if (it->cancelled)
            item_free(it);
        else
            item_end(c, it, -MT_ECLOSED, "the client was disconnected");
    }
    while (k->leases) {
        struct lease *l = k->leases;

        while (l->pushes) {
            struct push *p = l->pushes;

            for (size_t j = 0; j < p->n; j++)
                item_end(c, p->items[j], -MT_ECLOSED,
                         "the client was disconnected");
            p->n = 0;
            push_unlink(p);
        }
        if (l->state == L_GRANTED && l->wc && l->wc->pushes == 0)
            lease_return(c, l, RETURN_AT_STOP_MS);
        lease_free(l); /* the watch's stop ends its request */
    }
}

void mt__leases_stop(struct mt_client *c)
{
    struct mt__leases *ls = c->tasks->leases;

    if (!ls)
        return;
    ls->stopping = true;
    if (ls->timer_ready)
        uv_close((uv_handle_t *)&ls->idle_timer, NULL);
    ls->timer_ready = false;
    for (size_t i = 0; i < ls->n_classes; i++)
        stop_class(c, ls->classes[i]);
    for (size_t i = 0; i < ls->n_chans; i++) {
        struct wchan *w = ls->chans[i];

        if (w->pushes || w->calls == 0)
            wchan_drop(w);
        else
            w->closing = true;
    }
}
