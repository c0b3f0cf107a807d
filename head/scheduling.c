/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scheduling.c -- the head's glue to the scheduler library (sched/): nodes
 * go in as they register and die, tasks come out as placements.
 *
 * Decisions are batched: every change that may free or add room (a submit,
 * a task ending, a node joining) arms a zero-delay timer, and one decide
 * pass then places everything that fits. The scheduler is the head's
 * source of truth for what is free on each node; worker reports only
 * refresh host usage.
 */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "head/taskq.h"

#define DECIDE_BATCH 256

static void on_kick(uv_timer_t *timer);

int mt__tasks_start(struct mt_head *h)
{
    struct mt_head_tasks *q = mt_xcalloc(1, sizeof(*q));
    uint64_t base;
    char hex[17];
    int rc;

    rc = mt_sched_create(NULL, &q->sched);
    if (rc < 0) {
        free(q);
        return rc;
    }
    /* Task numbers start at a random base so ids differ across restarts. */
    mt_random_hex(hex, 4);
    base = strtoull(hex, NULL, 16) << 24;
    mt_task_table_init(&q->table, base ? base : 1);
    mt_obj_table_init(&q->objs);
    q->next_pg = (base ? base : 1) + 1;
    mt_port_range_init(&q->gangs.ports,
                       (uint16_t)(h->cfg.gang_port_lo ? h->cfg.gang_port_lo
                                                      : 8470),
                       (uint16_t)(h->cfg.gang_port_hi ? h->cfg.gang_port_hi
                                                      : 8999));
    uv_timer_init(h->loop, &q->kick);
    q->kick.data = h;
    h->tq = q;
    return 0;
}

static void on_kick_closed(uv_handle_t *handle)
{
    struct mt_head *h = handle->data;
    void (*done)(struct mt_head *) = h->tq_stopped;

    if (done)
        done(h);
}

void mt__tasks_stop(struct mt_head *h, void (*done)(struct mt_head *h))
{
    h->tq->closing = true;
    mt__tasks_close_rpc(h);
    mt__objects_close(h);
    mt__actors_close_rpc(h);
    mt__head_pgs_release(h);
    h->tq_stopped = done;
    uv_timer_stop(&h->tq->kick);
    uv_close((uv_handle_t *)&h->tq->kick, on_kick_closed);
}

void mt__tasks_release(struct mt_head *h)
{
    struct mt_head_tasks *q = h->tq;

    if (!q)
        return;
    mt__actors_release(h);
    mt__gangs_release(h);
    mt_task_table_release(&q->table);
    mt_obj_table_release(&q->objs);
    mt_sched_destroy(q->sched);
    free(q->links);
    free(q->runs);
    free(q->cws);
    free(q);
    h->tq = NULL;
}

void mt__sched_kick(struct mt_head *h)
{
    if (h->tq->kick_armed || h->tq->closing)
        return;
    h->tq->kick_armed = true;
    uv_timer_start(&h->tq->kick, on_kick, 0, 0);
}

/* ---- nodes --------------------------------------------------------------- */

void mt__sched_sync_avail(struct mt_head *h, struct mt_node *n)
{
    struct mt_sched *s = h->tq->sched;

    if (n->sched_node == UINT32_MAX || !mt_sched_node_alive(s, n->sched_node))
        return;
    for (size_t i = 0; i < n->total.n; i++) {
        int id = mt_sched_resource_id(s, n->total.v[i].name);
        int64_t tot, avail;

        if (id < 0 || mt_sched_node_res(s, n->sched_node, id, &tot, &avail))
            continue;
        mt_qty_list_set(&n->avail, n->total.v[i].name, avail);
    }
}

void mt__sched_node_up(struct mt_head *h, struct mt_node *n)
{
    struct mt_sched *s = h->tq->sched;
    struct mt_res_item res[MT_RES_MAX];
    struct mt_label *labels;
    struct mt_node_spec spec;
    size_t nres = 0;
    int rc;

    if (n->sched_node != UINT32_MAX && mt_sched_node_alive(s, n->sched_node))
        return; /* already known: keep its grants */
    for (size_t i = 0; i < n->total.n && nres < MT_RES_MAX; i++) {
        int id = mt_sched_resource_id(s, n->total.v[i].name);
        if (id < 0 || n->total.v[i].qty <= 0)
            continue;
        res[nres].id = (uint16_t)id;
        res[nres++].qty = n->total.v[i].qty;
    }
    labels = mt_xcalloc(n->labels.n + 1, sizeof(*labels));
    for (size_t i = 0; i < n->labels.n; i++) {
        labels[i].key = n->labels.v[i].key;
        labels[i].value = n->labels.v[i].value;
    }
    spec.name = n->id;
    spec.res = res;
    spec.nres = nres;
    spec.labels = labels;
    spec.nlabels = n->labels.n;
    rc = mt_sched_on_node_added(s, &spec, &n->sched_node);
    free(labels);
    if (rc < 0) {
        n->sched_node = UINT32_MAX;
        MT_ERROR("scheduler refused node %s: %s (no tasks will run there)",
                 n->id, mt_strerror(rc));
        return;
    }
    mt__sched_sync_avail(h, n);
    mt__sched_kick(h);
}

struct lost_ctx {
    struct mt_head *h;
    const char *node_id;
};

static bool collect_lost(void *arg, struct mt_task *t)
{
    struct lost_ctx *c = arg;

    if ((t->state == MT_TASK_SCHEDULED || t->state == MT_TASK_RUNNING) &&
        t->node_id && strcmp(t->node_id, c->node_id) == 0)
        mt__task_node_lost(c->h, t);
    return true;
}

void mt__sched_node_down(struct mt_head *h, struct mt_node *n)
{
    struct lost_ctx c = {h, n->id};

    if (n->sched_node != UINT32_MAX)
        mt_sched_on_node_dead(h->tq->sched, n->sched_node);
    n->sched_node = UINT32_MAX;
    mt__link_drop(h, n->id);
    mt_task_table_visit_newest(&h->tq->table, collect_lost, &c);
    mt__objects_node_down(h, n->id);
    mt__sched_kick(h);
}

/* ---- decisions --------------------------------------------------------------- */

static void apply(struct mt_head *h, const struct mt_placement *p)
{
    struct mt_task *t;

    if (p->kind == MT_DECISION_PG) {
        mt__head_pg_decided(h, p->id, p->status);
        return;
    }
    t = mt_task_find(&h->tq->table, p->id);
    if (!t || t->state != MT_TASK_PENDING) {
        /* Cancelled meanwhile: give the room back. */
        if (p->status == 0)
            mt_sched_on_task_finished(h->tq->sched, p->grant.handle);
        return;
    }
    if (p->status == 0)
        mt__task_dispatch(h, t, &p->grant);
    else if (p->status == -MT_EINFEASIBLE)
        mt__task_infeasible(h, t);
    else
        mt__task_unplaceable(h, t, p->status);
}

static void on_kick(uv_timer_t *timer)
{
    struct mt_head *h = timer->data;
    struct mt_placement out[DECIDE_BATCH];
    int n;

    h->tq->kick_armed = false;
    do {
        n = mt_sched_decide(h->tq->sched, (uint64_t)mt_now_mono_ms(), out,
                            DECIDE_BATCH);
        for (int i = 0; i < n; i++)
            apply(h, &out[i]);
    } while (n == DECIDE_BATCH);
    mt__task_dispatch_flush(h);
    for (size_t i = 0; i < h->nodes.n; i++)
        mt__sched_sync_avail(h, h->nodes.v[i]);
}

char *mt__sched_demands(struct mt_head *h)
{
    char buf[4096];

    mt_sched_demand_format(h->tq->sched, buf, sizeof(buf));
    return mt_xstrdup(buf);
}
