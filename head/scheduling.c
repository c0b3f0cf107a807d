/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scheduling.c -- the head's glue to the scheduler library (see
 * scheduling.h): nodes in, requests converted, decisions out to the sinks.
 *
 * DESIGN: one zero-delay timer coalesces kicks into one decide pass; a
 * pass takes decisions in batches of DECIDE_BATCH until the scheduler has
 * nothing more, hands each to the sinks, tells them the pass is over, and
 * refreshes every node's available resources from the scheduler.
 */
#include "head/scheduling.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"

#define DECIDE_BATCH 256
#define MAX_SINKS 4

struct sink {
    const struct mt_head_sched_sink *s;
    void *arg;
};

struct mt_head_sched {
    struct mt_sched *s;
    struct mt_node_table *nodes;
    uv_timer_t kick;             /* runs decide soon after a change */
    bool kick_armed;
    bool stopping;
    bool held;                   /* recovering: no decide pass (recover.h) */
    struct sink sinks[MAX_SINKS];
    size_t n_sinks;
    void (*stopped)(void *arg);
    void *stopped_arg;
};

static void on_kick(uv_timer_t *timer);

int mt_head_sched_create(uv_loop_t *loop, struct mt_node_table *nodes,
                         struct mt_head_sched **out)
{
    struct mt_head_sched *hs = mt_xcalloc(1, sizeof(*hs));
    int rc = mt_sched_create(NULL, &hs->s);

    if (rc < 0) {
        free(hs);
        return rc;
    }
    hs->nodes = nodes;
    uv_timer_init(loop, &hs->kick);
    hs->kick.data = hs;
    *out = hs;
    return 0;
}

static void on_kick_closed(uv_handle_t *handle)
{
    struct mt_head_sched *hs = handle->data;

    if (hs->stopped)
        hs->stopped(hs->stopped_arg);
}

void mt_head_sched_stop(struct mt_head_sched *hs, void (*done)(void *arg),
                        void *arg)
{
    hs->stopping = true;
    hs->stopped = done;
    hs->stopped_arg = arg;
    uv_timer_stop(&hs->kick);
    uv_close((uv_handle_t *)&hs->kick, on_kick_closed);
}

void mt_head_sched_destroy(struct mt_head_sched *hs)
{
    if (!hs)
        return;
    mt_sched_destroy(hs->s);
    free(hs);
}

void mt_head_sched_add_sink(struct mt_head_sched *hs,
                            const struct mt_head_sched_sink *sink, void *arg)
{
    MT_ASSERT(hs->n_sinks < MAX_SINKS);
    hs->sinks[hs->n_sinks].s = sink;
    hs->sinks[hs->n_sinks++].arg = arg;
}

struct mt_sched *mt_head_sched_lib(struct mt_head_sched *hs)
{
    return hs->s;
}

void mt_head_sched_kick(struct mt_head_sched *hs)
{
    if (hs->kick_armed || hs->stopping || hs->held)
        return;
    hs->kick_armed = true;
    uv_timer_start(&hs->kick, on_kick, 0, 0);
}

void mt_head_sched_hold(struct mt_head_sched *hs, bool on)
{
    hs->held = on;
    if (on) {
        uv_timer_stop(&hs->kick);
        hs->kick_armed = false;
    } else {
        mt_head_sched_kick(hs);
    }
}

bool mt_head_sched_held(const struct mt_head_sched *hs)
{
    return hs->held;
}

/* ---- nodes --------------------------------------------------------------- */

void mt_head_sched_sync_avail(struct mt_head_sched *hs, struct mt_node *n)
{
    if (n->sched_node == UINT32_MAX || !mt_sched_node_alive(hs->s,
                                                            n->sched_node))
        return;
    for (size_t i = 0; i < n->total.n; i++) {
        int id = mt_sched_resource_id(hs->s, n->total.v[i].name);
        int64_t tot, avail;

        if (id < 0 ||
            mt_sched_node_res(hs->s, n->sched_node, id, &tot, &avail))
            continue;
        mt_qty_list_set(&n->avail, n->total.v[i].name, avail);
    }
}

void mt_head_sched_sync_all(struct mt_head_sched *hs)
{
    for (size_t i = 0; i < hs->nodes->n; i++)
        mt_head_sched_sync_avail(hs, hs->nodes->v[i]);
}

void mt_head_sched_node_up(struct mt_head_sched *hs, struct mt_node *n)
{
    struct mt_res_item res[MT_RES_MAX];
    struct mt_label *labels;
    struct mt_node_spec spec;
    size_t nres = 0;
    int rc;

    if (n->sched_node != UINT32_MAX && mt_sched_node_alive(hs->s,
                                                           n->sched_node)) {
        /* Already known: keep its grants; trust it again if it was
         * suspected and has reported since. */
        mt_sched_node_suspect(hs->s, n->sched_node, n->suspect);
        mt_head_sched_kick(hs);
        return;
    }
    for (size_t i = 0; i < n->total.n && nres < MT_RES_MAX; i++) {
        int id = mt_sched_resource_id(hs->s, n->total.v[i].name);
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
    rc = mt_sched_on_node_added(hs->s, &spec, &n->sched_node);
    free(labels);
    if (rc < 0) {
        n->sched_node = UINT32_MAX;
        MT_ERROR("scheduler refused node %s: %s (no tasks will run there)",
                 n->id, mt_strerror(rc));
        return;
    }
    mt_head_sched_sync_avail(hs, n);
    mt_head_sched_kick(hs);
}

void mt_head_sched_suspect(struct mt_head_sched *hs, struct mt_node *n,
                           const char *why)
{
    if (n->suspect)
        return;
    n->suspect = true;
    n->suspect_seqno = n->seqno;
    if (n->sched_node != UINT32_MAX)
        mt_sched_node_suspect(hs->s, n->sched_node, true);
    MT_WARN("node %s suspected: a hand-over failed (%s); nothing new goes "
            "there until it reports again", n->id, why);
}

void mt_head_sched_node_down(struct mt_head_sched *hs, struct mt_node *n)
{
    if (n->sched_node != UINT32_MAX)
        mt_sched_on_node_dead(hs->s, n->sched_node);
    n->sched_node = UINT32_MAX;
    mt_head_sched_kick(hs);
}

struct mt_node *mt_head_sched_node(struct mt_head_sched *hs, uint32_t handle)
{
    for (size_t i = 0; i < hs->nodes->n; i++)
        if (hs->nodes->v[i]->sched_node == handle &&
            hs->nodes->v[i]->state == MT_NODE_ALIVE)
            return hs->nodes->v[i];
    return NULL;
}

char *mt_head_sched_demands(struct mt_head_sched *hs)
{
    char buf[4096];

    mt_sched_demand_format(hs->s, buf, sizeof(buf));
    return mt_xstrdup(buf);
}

/* ---- requests ------------------------------------------------------------ */

int mt_head_sched_res(struct mt_head_sched *hs, const struct mt_qty_list *l,
                      bool default_cpu, struct mt_res_set *out,
                      const char **why)
{
    mt_res_set_init(out);
    for (size_t i = 0; i < l->n; i++) {
        int id = mt_sched_resource_id(hs->s, l->v[i].name);

        if (id < 0 || mt_res_set_add(out, id, l->v[i].qty) < 0) {
            *why = "too many distinct resource names in the cluster";
            return -MT_EINVAL;
        }
    }
    if (l->n == 0 && default_cpu)
        mt_res_set_add(out, mt_sched_resource_id(hs->s, "CPU"),
                       MT_QTY_SCALE);
    return 0;
}

const struct mt_label_selector *
mt_head_sched_selector(const struct mt_selector *s, struct mt_head_sel *out)
{
    if (!s->n)
        return NULL;
    for (size_t i = 0; i < s->n; i++) {
        out->e[i].key = s->v[i].key;
        out->e[i].op = s->v[i].op;
        out->e[i].values = (const char *const *)s->v[i].values;
        out->e[i].nvalues = s->v[i].n;
    }
    out->sel.exprs = out->e;
    out->sel.n = s->n;
    return &out->sel;
}

/* ---- decisions ----------------------------------------------------------- */

static void deliver(struct mt_head_sched *hs, const struct mt_placement *p)
{
    for (size_t i = 0; i < hs->n_sinks; i++) {
        const struct mt_head_sched_sink *s = hs->sinks[i].s;

        if (p->kind == MT_DECISION_PG && s->pg)
            s->pg(hs->sinks[i].arg, p->id, p->status);
        else if (p->kind != MT_DECISION_PG && s->task)
            s->task(hs->sinks[i].arg, p->id, p->status, &p->grant);
    }
}

static void on_kick(uv_timer_t *timer)
{
    struct mt_head_sched *hs = timer->data;
    struct mt_placement out[DECIDE_BATCH];
    int n;

    hs->kick_armed = false;
    do {
        n = mt_sched_decide(hs->s, (uint64_t)mt_now_mono_ms(), out,
                            DECIDE_BATCH);
        for (int i = 0; i < n; i++)
            deliver(hs, &out[i]);
    } while (n == DECIDE_BATCH);
    for (size_t i = 0; i < hs->n_sinks; i++)
        if (hs->sinks[i].s->pass_done)
            hs->sinks[i].s->pass_done(hs->sinks[i].arg);
    /* Nodes' avail is not copied here: a pass that walked every node
     * cost more than the placements themselves at 10,000 nodes. Readers
     * sync what they read (mt_head_sched_sync_avail). */
}
