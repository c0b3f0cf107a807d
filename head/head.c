/* SPDX-License-Identifier: Apache-2.0 */
/*
 * head.c -- life cycle of the head daemon: start (storage, saved state,
 * rpc server, liveness timer), the liveness check, and graceful stop.
 *
 * Liveness: workers report every report_period_ms; a timer running four
 * times per timeout marks nodes silent for longer than node_timeout_ms DEAD,
 * so detection takes at most timeout * 1.25 (3.75 s by default).
 *
 * The dashboard (dashboard.c) is bound before the rpc server starts, so a
 * dashboard port that is taken fails the start with nothing left running.
 */
#include "head/head.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/dashboard.h"
#include "head/taskq.h"
#include "head_service.pb-c.h"

static void on_node_died(void *arg, struct mt_node *n)
{
    struct mt_head *h = arg;

    MT_WARN("node dead node=%s addr=%s reason=\"%s\"", n->id, n->address,
            n->death_reason);
    mt_head_save_node(h, n);
    mt_head_notify(h, n, MANTA__NODE_EVENT__KIND__KIND_DEAD);
    mt__sched_node_down(h, n);
}

static void on_check(uv_timer_t *t)
{
    struct mt_head *h = t->data;

    mt_node_table_expire(&h->nodes, mt_now_mono_ms(), mt_now_wall_ms(),
                         h->cfg.node_timeout_ms, on_node_died, h);
}

/* Bind the dashboard on the rpc bind address's host; RET 0 or -MT_E*. */
static int open_dashboard(struct mt_head *h)
{
    const char *colon = strrchr(h->cfg.bind_addr, ':');
    char host[64];
    int rc, port;

    snprintf(host, sizeof(host), "%.*s",
             colon ? (int)(colon - h->cfg.bind_addr) : 0, h->cfg.bind_addr);
    rc = mt_dashboard_create(host, h->cfg.dashboard_port, &h->dash, &port);
    if (rc < 0) {
        MT_ERROR("cannot serve the dashboard on %s:%d: %s", host,
                 h->cfg.dashboard_port, mt_strerror(rc));
        return rc;
    }
    snprintf(h->dashboard_url, sizeof(h->dashboard_url), "http://%s:%d",
             h->cfg.node_ip, port);
    return 0;
}

static void start_dashboard(struct mt_head *h)
{
    if (mt_dashboard_start(h->dash, h->loop, h) < 0) {
        mt_dashboard_close(h->dash);
        h->dash = NULL;
        h->dashboard_url[0] = '\0';
        return;
    }
    MT_INFO("dashboard at %s (metrics at %s/metrics)", h->dashboard_url,
            h->dashboard_url);
}

int mt_head_start(uv_loop_t *loop, const struct mt_head_config *cfg,
                  struct mt_head **out)
{
    struct mt_head *h = mt_xcalloc(1, sizeof(*h));
    struct mt_rpc_server_opts so;
    int rc, check_ms;

    h->loop = loop;
    h->cfg = *cfg;
    h->start_time_ms = mt_now_wall_ms();
    mt_random_hex(h->cluster_id, 16);
    mt_node_table_init(&h->nodes);
    rc = mt_storage_open(loop, cfg->storage, &h->store);
    if (rc < 0) {
        MT_ERROR("cannot open storage \"%s\": %s", cfg->storage,
                 mt_strerror(rc));
        goto out_free;
    }
    rc = mt__tasks_start(h);
    if (rc < 0)
        goto out_storage;
    mt_head_load_nodes(h);
    rc = mt_rpc_engine_create(loop, &h->eng);
    if (rc < 0)
        goto out_tasks;
    if (cfg->dashboard_port >= 0) {
        rc = open_dashboard(h);
        if (rc < 0)
            goto out_engine;
    }
    memset(&so, 0, sizeof(so));
    so.addr = cfg->bind_addr;
    so.handlers = mt_head_handlers;
    so.n_handlers = mt_head_n_handlers;
    so.arg = h;
    rc = mt_rpc_server_start(h->eng, &so, &h->srv, &h->port);
    if (rc < 0) {
        MT_ERROR("cannot listen on %s: %s", cfg->bind_addr,
                 rc == -MT_EIO ? "address in use or not on this host"
                               : mt_strerror(rc));
        goto out_dashboard;
    }
    snprintf(h->address, sizeof(h->address), "%s:%d", cfg->node_ip, h->port);
    uv_timer_init(loop, &h->check_timer);
    h->check_timer.data = h;
    check_ms = cfg->node_timeout_ms / 4 > 0 ? cfg->node_timeout_ms / 4 : 1;
    uv_timer_start(&h->check_timer, on_check, (uint64_t)check_ms,
                   (uint64_t)check_ms);
    MT_INFO("head listening on port %d (advertised %s) cluster=%s storage=%s",
            h->port, h->address, h->cluster_id, h->store->ops->name);
    if (h->dash)
        start_dashboard(h);
    *out = h;
    return 0;

out_dashboard:
    mt_dashboard_close(h->dash);
out_engine:
    mt_rpc_engine_destroy(h->eng);
out_tasks:
    mt__tasks_stop(h, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    mt__tasks_release(h);
out_storage:
    mt_storage_close(h->store);
out_free:
    mt_node_table_release(&h->nodes);
    free(h);
    return rc;
}

static void on_timer_closed(uv_handle_t *handle)
{
    struct mt_head *h = handle->data;

    mt_storage_close(h->store);
    h->store = NULL;
    mt__tasks_release(h);
    mt_node_table_release(&h->nodes);
    if (h->stopped)
        h->stopped(h->stopped_arg);
}

static void on_server_stopped(void *arg)
{
    struct mt_head *h = arg;

    h->srv = NULL;
    uv_close((uv_handle_t *)&h->check_timer, on_timer_closed);
}

void mt_head_stop(struct mt_head *h, void (*done)(void *arg), void *arg)
{
    if (h->stopping)
        return;
    h->stopping = true;
    h->stopped = done;
    h->stopped_arg = arg;
    mt_dashboard_close(h->dash);
    h->dash = NULL;
    uv_timer_stop(&h->check_timer);
    mt_head_close_watchers(h);
    mt__tasks_stop(h, NULL);
    if (h->srv)
        mt_rpc_server_stop(h->srv, (uint32_t)h->cfg.grace_ms,
                           on_server_stopped, h);
    else
        on_server_stopped(h);
}

void mt_head_destroy(struct mt_head *h)
{
    if (!h)
        return;
    mt_rpc_engine_destroy(h->eng);
    free(h);
}
