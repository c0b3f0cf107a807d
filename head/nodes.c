/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodes.c -- the head's node service (see nodes.h): membership over the
 * node table, the liveness timer, and events to the listeners.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/nodes.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/sys.h"

#define MAX_LISTENERS 4

struct listener {
    const struct mt_node_listener *l;
    void *arg;
};

struct mt_head_nodes {
    struct mt_node_table table;
    uv_timer_t check;
    int timeout_ms;
    struct listener ls[MAX_LISTENERS];
    size_t n_ls;
    void (*stopped)(void *arg);
    void *stopped_arg;
};

static void emit(struct mt_head_nodes *ns, struct mt_node *n,
                 enum mt_node_event ev)
{
    for (size_t i = 0; i < ns->n_ls; i++)
        ns->ls[i].l->event(ns->ls[i].arg, n, ev);
}

static void on_died(void *arg, struct mt_node *n)
{
    MT_WARN("node dead node=%s addr=%s reason=\"%s\"", n->id, n->address,
            n->death_reason);
    emit(arg, n, MT_NODE_EV_DEAD);
}

static void on_check(uv_timer_t *t)
{
    struct mt_head_nodes *ns = t->data;

    mt_node_table_expire(&ns->table, mt_now_mono_ms(), mt_now_wall_ms(),
                         ns->timeout_ms, on_died, ns);
}

struct mt_head_nodes *mt_head_nodes_create(uv_loop_t *loop, int timeout_ms)
{
    struct mt_head_nodes *ns = mt_xcalloc(1, sizeof(*ns));
    int check_ms = timeout_ms / 4 > 0 ? timeout_ms / 4 : 1;

    mt_node_table_init(&ns->table);
    ns->timeout_ms = timeout_ms;
    uv_timer_init(loop, &ns->check);
    ns->check.data = ns;
    uv_timer_start(&ns->check, on_check, (uint64_t)check_ms,
                   (uint64_t)check_ms);
    return ns;
}

static void on_closed(uv_handle_t *handle)
{
    struct mt_head_nodes *ns = handle->data;

    if (ns->stopped)
        ns->stopped(ns->stopped_arg);
}

void mt_head_nodes_stop(struct mt_head_nodes *ns, void (*done)(void *arg),
                        void *arg)
{
    ns->stopped = done;
    ns->stopped_arg = arg;
    uv_timer_stop(&ns->check);
    uv_close((uv_handle_t *)&ns->check, on_closed);
}

void mt_head_nodes_destroy(struct mt_head_nodes *ns)
{
    if (!ns)
        return;
    mt_node_table_release(&ns->table);
    free(ns);
}

struct mt_node_table *mt_head_nodes_table(struct mt_head_nodes *ns)
{
    return &ns->table;
}

void mt_head_nodes_listen(struct mt_head_nodes *ns,
                          const struct mt_node_listener *l, void *arg)
{
    MT_ASSERT(ns->n_ls < MAX_LISTENERS);
    ns->ls[ns->n_ls].l = l;
    ns->ls[ns->n_ls++].arg = arg;
}

struct mt_node *mt_head_nodes_register(struct mt_head_nodes *ns,
                                       const struct mt_node_reg *r,
                                       const struct mt_node_usage *usage,
                                       const struct mt_node_gpu *gpus,
                                       size_t n_gpus, int *err)
{
    bool was_new = false;
    struct mt_node *n;

    *err = 0;
    n = mt_node_table_register(&ns->table, r, mt_now_mono_ms(),
                               mt_now_wall_ms(), &was_new, err);
    if (!n)
        return NULL;
    if (usage)
        n->usage = *usage;
    n->suspect = false; /* it just answered */
    if (gpus)
        mt_node_table_set_gpus(n, gpus, n_gpus);
    MT_INFO("node %s node=%s addr=%s", was_new ? "registered" : "re-registered",
            n->id, n->address);
    if (n->version && strcmp(n->version, MT_VERSION) != 0)
        MT_WARN("node %s runs manta-worker %s and this head %s: run one "
                "version on every node (docs/deploy.md, \"Upgrading\")",
                n->id, n->version, MT_VERSION);
    emit(ns, n, was_new ? MT_NODE_EV_ADDED : MT_NODE_EV_UPDATED);
    return n;
}

int mt_head_nodes_report(struct mt_head_nodes *ns, const char *id,
                         uint64_t seqno, const struct mt_qty_list *avail,
                         const struct mt_node_usage *usage,
                         const struct mt_node_gpu *gpus, size_t n_gpus)
{
    struct mt_node *n = mt_node_table_find(&ns->table, id);
    int rc;

    /* Once the scheduler knows the node, it is the truth about what is
     * free there; the report only refreshes host usage. */
    rc = mt_node_table_report(&ns->table, id, seqno,
                              n && n->sched_node != UINT32_MAX ? NULL : avail,
                              usage, mt_now_mono_ms(), mt_now_wall_ms());
    if (rc == 0 && n && gpus)
        mt_node_table_set_gpus(n, gpus, n_gpus);
    /* Suspected, and this report was sent after the failure (the one
     * right after it may have been on its way already): trust it again. */
    if (rc == 0 && n && n->suspect && seqno >= n->suspect_seqno + 2) {
        n->suspect = false;
        MT_INFO("node %s reports again: no longer suspected", n->id);
        emit(ns, n, MT_NODE_EV_UPDATED);
    }
    return rc;
}

void mt_head_nodes_unregister(struct mt_head_nodes *ns, struct mt_node *n,
                              const char *reason)
{
    if (n->state != MT_NODE_ALIVE)
        return;
    MT_INFO("node unregistered node=%s reason=\"%s\"", n->id, reason);
    mt_node_table_mark_dead(&ns->table, n, reason, mt_now_wall_ms());
    emit(ns, n, MT_NODE_EV_DEAD);
    mt_node_table_trim(&ns->table);
}
