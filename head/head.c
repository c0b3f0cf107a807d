/* SPDX-License-Identifier: Apache-2.0 */
/*
 * head.c -- life cycle of the head daemon: create the services in layer
 * order and wire their listeners, load saved state, serve; and stop
 * gracefully (see head.h for the services and who calls whom).
 *
 * Wiring: the order of the task listeners is the order in which a task's
 * followers hear of a change: the object directory first (so dependents
 * fail before the task's own end is streamed, as their cause), then the
 * watch streams, gangs and actors. Node deaths go to the adapter (storage,
 * WatchNodes) and then to the services that held work there.
 *
 * The dashboard (dashboard.c) is on by default (127.0.0.1:8265). It is
 * bound before the rpc server starts, so a dashboard port given by flag
 * that is taken fails the start with nothing left running; the default
 * port, when taken, gives way to a free one (several clusters per host).
 */
#include "head/head.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/auth.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/dashboard.h"
#include "head/head_int.h"
#include "head/history_sampler.h"
#include "head/persist.h"
#include "head/prom_sd.h"
#include "head/recover.h"
#include "head/rpc_watch.h"
#include "head/rpc_actors.h"
#include "head/rpc_services.h"

/* ---- wiring ------------------------------------------------------------------ */

/* Nodes coming and going, for the services that hold work on them. */
static void on_node_event(void *arg, struct mt_node *n, enum mt_node_event ev)
{
    struct mt_head *h = arg;

    if (ev != MT_NODE_EV_DEAD) {
        mt_head_sched_node_up(h->sched, n);
        if (ev == MT_NODE_EV_UPDATED)
            mt_head_tasks_node_back(h->tasks, n->id);
        return;
    }
    mt_head_sched_node_down(h->sched, n);
    mt_head_workers_drop(h->workers, n->id);
    mt_head_tasks_node_lost(h->tasks, n->id);
    mt_head_objects_node_down(h->objects, n->id);
    if (h->recover)
        mt_head_recover_node_dead(h->recover, n->id);
}

static const struct mt_node_listener node_listener = {
    .event = on_node_event,
};

static const struct mt_head_adapter *const adapters[] = {
    &mt_head_rpc_nodes, &mt_head_rpc_tasks,   &mt_head_rpc_watch,
    &mt_head_rpc_pgs,   &mt_head_rpc_objects, &mt_head_rpc_actors,
    &mt_head_rpc_gangs,
};

#define N_ADAPTERS (sizeof(adapters) / sizeof(adapters[0]))

/* Numbers start at a random base so ids differ across restarts. */
static uint64_t random_base(void)
{
    char hex[17];
    uint64_t base;

    mt_random_hex(hex, 4);
    base = strtoull(hex, NULL, 16) << 24;
    return base ? base : 1;
}

/* The services in layer order, the adapters started once everything
 * their listeners follow exists, then what is built on tasks. */
static void create_services(struct mt_head *h)
{
    uint64_t base = random_base();
    uint16_t lo = (uint16_t)(h->cfg.gang_port_lo ? h->cfg.gang_port_lo
                                                 : 8470);
    uint16_t hi = (uint16_t)(h->cfg.gang_port_hi ? h->cfg.gang_port_hi
                                                 : 8999);
    struct mt_node_table *nodes = mt_head_nodes_table(h->nodes);

    h->workers = mt_head_workers_create(h->eng, nodes);
    h->pgs = mt_head_pgs_create(h->sched, base + 1);
    mt_task_table_init(&h->task_table, base);
    if (h->cfg.keep_finished_tasks > 0)
        h->task_table.keep_done = (size_t)h->cfg.keep_finished_tasks;
    h->objects = mt_head_objects_create(nodes, h->workers, &h->task_table);
    h->tasks = mt_head_tasks_create(&h->task_table, nodes, h->sched,
                                    h->workers, h->pgs, h->objects);
    mt_head_tasks_listen(h->tasks, &mt_head_objects_task_listener,
                         h->objects);
    mt_head_nodes_listen(h->nodes, &node_listener, h);
    for (size_t i = 0; i < N_ADAPTERS; i++)
        if (adapters[i]->start)
            adapters[i]->start(h);
    h->gangs = mt_head_gangs_create(h->tasks, h->pgs, h->sched, nodes, lo,
                                    hi);
    h->actors = mt_head_actors_create(h->tasks, h->workers);
    h->task_leases = mt_head_leases_create(h->loop, h->tasks, h->objects);
    h->hooks.watch_name = mt_head_watch_name;
    h->hooks.watch_restore = mt_head_watch_restore;
    h->hooks.owner_connected = mt_head_owner_connected;
    h->hooks.owner_gone = mt_head_owner_gone;
    h->recover = mt_head_recover_create(h);
    h->persist = mt_head_persist_create(h);
}

static void destroy_services(struct mt_head *h)
{
    mt_head_persist_destroy(h->persist);
    mt_head_recover_destroy(h->recover);
    h->persist = NULL;
    h->recover = NULL;
    mt_head_leases_destroy(h->task_leases);
    h->task_leases = NULL;
    mt_head_gangs_destroy(h->gangs);
    mt_head_actors_destroy(h->actors);
    mt_head_tasks_destroy(h->tasks);
    if (h->tasks)
        mt_task_table_release(&h->task_table);
    mt_head_objects_destroy(h->objects);
    mt_head_pgs_destroy(h->pgs);
    mt_head_sched_destroy(h->sched);
    mt_head_nodes_destroy(h->nodes);
    mt_head_prom_sd_destroy(h->prom_sd);
    h->prom_sd = NULL;
    h->gangs = NULL;
    h->actors = NULL;
    h->tasks = NULL;
    h->objects = NULL;
    h->pgs = NULL;
    h->sched = NULL;
    h->nodes = NULL;
}

/* ---- state from storage ------------------------------------------------------ */

#define LOAD_TIMEOUT_MS 60000

struct load_wait {
    struct mt_head *h;
    bool done;
    int err;
};

static void on_loaded(void *arg, int err)
{
    struct load_wait *w = arg;

    w->done = true;
    w->err = err;
}

/* The nodes first: restoring groups and placed tasks needs them. */
static void on_nodes_loaded(void *arg, int err)
{
    struct load_wait *w = arg;

    (void)err; /* logged; the rest loads anyway */
    mt_head_persist_load(w->h->persist, on_loaded, w);
}

static void on_load_timer(uv_timer_t *t)
{
    *(bool *)t->data = true;
}

static void on_load_timer_closed(uv_handle_t *hd)
{
    (void)hd;
}

/* How long recovery waits for the loaded nodes: each registers at its next
 * report (answered "unknown"), so two periods and a margin, but never
 * past the node timeout (by then the silent ones are dead). */
static int recover_deadline_ms(const struct mt_head_config *cfg)
{
    int ms = 2 * cfg->report_period_ms + 500;

    return ms < cfg->node_timeout_ms + 1000 ? ms
                                            : cfg->node_timeout_ms + 1000;
}

/*
 * Read the stored state before serving anything (a network backend
 * answers on the loop, which runs here until it has), then start the
 * reconciliation with the workers (recover.h). A table that cannot be
 * read is logged and skipped; a backend that does not answer within
 * LOAD_TIMEOUT_MS fails the start.
 */
static int load_state(struct mt_head *h)
{
    /* On the heap: a backend that answers after the deadline still finds
     * it (the start has failed by then; it is not freed). */
    struct load_wait *w = mt_xcalloc(1, sizeof(*w));
    bool late = false;
    uv_timer_t timer;

    w->h = h;
    mt_head_load_nodes(h, on_nodes_loaded, w);
    if (!w->done) {
        uv_timer_init(h->loop, &timer);
        timer.data = &late;
        uv_timer_start(&timer, on_load_timer, LOAD_TIMEOUT_MS, 0);
        while (!w->done && !late)
            uv_run(h->loop, UV_RUN_ONCE);
        uv_close((uv_handle_t *)&timer, on_load_timer_closed);
        uv_run(h->loop, UV_RUN_NOWAIT);
    }
    if (!w->done) {
        MT_ERROR("storage did not answer within %d s", LOAD_TIMEOUT_MS / 1000);
        return -MT_ETIMEDOUT;
    }
    free(w);
    mt_head_recover_begin(h->recover, recover_deadline_ms(&h->cfg));
    mt_head_gangs_resume(h->gangs);
    return 0;
}

/* ---- dashboard --------------------------------------------------------------- */

/*
 * Bind the dashboard on cfg.dashboard_host (not the rpc's address: it is
 * for operators, 127.0.0.1 unless asked), asking for the cluster token
 * and serving HTTPS when the head has a certificate. Its URL names the
 * bound host, or node_ip when bound to every address. RET 0 or -MT_E*.
 */
static int open_dashboard(struct mt_head *h)
{
    const struct mt_security *sec = h->cfg.sec;
    struct mt_dashboard_opts o = {
        .host = h->cfg.dashboard_host ? h->cfg.dashboard_host : "127.0.0.1",
        .port = h->cfg.dashboard_port,
        .token = sec ? sec->token : NULL,
        .tls_cert = sec ? sec->tls_cert : NULL,
        .tls_key = sec ? sec->tls_key : NULL,
    };
    const char *url_host = strcmp(o.host, "0.0.0.0") == 0 ? h->cfg.node_ip
                                                          : o.host;
    int rc, port;

    rc = mt_dashboard_create(&o, &h->dash, &port);
    if (rc == -EADDRINUSE && !h->cfg.dashboard_port_given && o.port) {
        /* The default port: another cluster on this host may have it. */
        MT_WARN("dashboard: port %d on %s is taken: using a free one",
                o.port, o.host);
        o.port = 0;
        rc = mt_dashboard_create(&o, &h->dash, &port);
    }
    if (rc < 0) {
        MT_ERROR("cannot serve the dashboard on %s:%d: %s", o.host, o.port,
                 mt_strerror(rc));
        return rc;
    }
    snprintf(h->dashboard_url, sizeof(h->dashboard_url), "%s://%s:%d",
             o.tls_cert && o.tls_key ? "https" : "http", url_host, port);
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

/* ---- start ------------------------------------------------------------------- */

static int serve(struct mt_head *h)
{
    const struct mt_rpc_handler *tables[N_ADAPTERS];
    struct mt_rpc_server_opts so;
    int rc;

    for (size_t i = 0; i < N_ADAPTERS; i++)
        tables[i] = adapters[i]->handlers;
    memset(&so, 0, sizeof(so));
    h->handlers = mt_rpc_handlers_join(tables, N_ADAPTERS, &so.n_handlers);
    if (!h->handlers)
        mt_xoom(sizeof(tables));
    so.addr = h->cfg.bind_addr;
    so.handlers = h->handlers;
    so.arg = h;
    rc = mt_rpc_server_start(h->eng, &so, &h->srv, &h->port);
    if (rc < 0)
        MT_ERROR("cannot listen on %s: %s", h->cfg.bind_addr,
                 rc == -MT_EIO ? "address in use or not on this host"
                               : mt_strerror(rc));
    return rc;
}

static void stop_services(struct mt_head *h);

int mt_head_start(uv_loop_t *loop, const struct mt_head_config *cfg,
                  struct mt_head **out)
{
    struct mt_head *h = mt_xcalloc(1, sizeof(*h));
    int rc;

    h->loop = loop;
    h->cfg = *cfg;
    h->start_time_ms = mt_now_wall_ms();
    mt_random_hex(h->cluster_id, 16);
    rc = mt_storage_open(loop, cfg->storage, &h->store);
    if (rc < 0) {
        MT_ERROR("cannot open storage \"%s\": %s", cfg->storage,
                 mt_strerror(rc));
        free(h);
        return rc;
    }
    if ((rc = mt_rpc_engine_create(loop, &h->eng)) < 0)
        goto out_storage;
    h->nodes = mt_head_nodes_create(loop, cfg->node_timeout_ms);
    if ((rc = mt_head_sched_create(loop, mt_head_nodes_table(h->nodes),
                                   &h->sched)) < 0)
        goto out_stop;
    create_services(h);
    if ((rc = load_state(h)) < 0 ||
        (cfg->dashboard_port >= 0 && (rc = open_dashboard(h)) < 0) ||
        (rc = mt_head_history_start(h)) < 0)
        goto out_stop;
    if ((cfg->sec && (rc = mt_rpc_engine_set_security(h->eng, cfg->sec)) < 0) ||
        (rc = serve(h)) < 0)
        goto out_stop;
    snprintf(h->address, sizeof(h->address), "%s:%d", cfg->node_ip, h->port);
    MT_INFO("head listening on port %d (advertised %s) cluster=%s storage=%s",
            h->port, h->address, h->cluster_id, h->store->ops->name);
    if (h->dash)
        start_dashboard(h);
    mt_head_prom_sd_start(h);
    *out = h;
    return 0;

out_stop:
    mt_dashboard_close(h->dash);
    h->dash = NULL;
    h->stop_pending = 1; /* freed here, not by the last close */
    stop_services(h);
    uv_run(loop, UV_RUN_NOWAIT);
    destroy_services(h);
    mt_rpc_engine_destroy(h->eng);
    mt_head_workers_destroy(h->workers);
out_storage:
    mt_storage_close(h->store);
    free(h->handlers);
    free(h);
    return rc;
}

/* ---- stop -------------------------------------------------------------------- */

/* One of the closes a stop waits for is done; the last frees the head. */
static void stop_step(void *arg)
{
    struct mt_head *h = arg;

    if (--h->stop_pending > 0)
        return;
    mt_storage_close(h->store);
    h->store = NULL;
    destroy_services(h);
    if (h->stopped)
        h->stopped(h->stopped_arg);
}

/* End what the adapters hold and close the timers (two closes to come). */
static void stop_services(struct mt_head *h)
{
    h->stop_pending += 2;
    if (h->actors) /* every service exists */
        for (size_t i = 0; i < N_ADAPTERS; i++)
            if (adapters[i]->stop)
                adapters[i]->stop(h);
    if (h->tasks)
        mt_head_tasks_close(h->tasks);
    if (h->history) {
        h->stop_pending++;
        mt_head_history_close(h, stop_step, h);
    }
    if (h->persist) {
        h->stop_pending++;
        mt_head_persist_close(h->persist, stop_step, h);
    }
    if (h->recover) {
        h->stop_pending++;
        mt_head_recover_close(h->recover, stop_step, h);
    }
    if (h->task_leases) {
        h->stop_pending++;
        mt_head_leases_close(h->task_leases, stop_step, h);
    }
    if (h->workers)
        mt_head_workers_close(h->workers);
    mt_head_nodes_stop(h->nodes, stop_step, h);
    if (h->sched)
        mt_head_sched_stop(h->sched, stop_step, h);
    else
        h->stop_pending--;
}

static void on_server_stopped(void *arg)
{
    struct mt_head *h = arg;

    h->srv = NULL;
    stop_step(h);
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
    h->stop_pending = 1; /* the server */
    stop_services(h);
    if (h->srv)
        mt_rpc_server_stop(h->srv, (uint32_t)h->cfg.grace_ms,
                           on_server_stopped, h);
    else
        on_server_stopped(h);
}

const char *mt_head_address(const struct mt_head *h)
{
    return h->address;
}

const char *mt_head_dashboard_url(const struct mt_head *h)
{
    return h->dashboard_url;
}

void mt_head_destroy(struct mt_head *h)
{
    if (!h)
        return;
    mt_rpc_engine_destroy(h->eng);
    mt_head_workers_destroy(h->workers);
    free(h->handlers);
    free(h);
}
