/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker.c -- the worker daemon's life cycle (see worker.h): it creates
 * the services in layer order (worker_int.h), serves every rpc adapter's
 * handlers and lets the adapters wire themselves to the services, then
 * starts registering with the head.
 *
 * Stopping goes down the layers: the runs' process groups, the executors
 * and the actors are killed and report nothing more, direct calls and
 * pushes (leases.h) held by the adapters fail, the node unregisters (best
 * effort), the rpc server stops (every call ended), and then each service
 * closes its handles in turn before done runs. Markers in the session dir: worker.addr once the
 * server listens, worker.metrics (the /metrics host:port, when served),
 * worker.registered each time the head accepts the node,
 * worker.procs while it runs processes (procs.h; a predecessor's is swept
 * before anything is spawned).
 */
#include "worker/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/auth.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "worker/executors.h"
#include "worker/metrics.h"
#include "worker/rpc_services.h"
#include "worker/worker_int.h"

static const struct mt_worker_adapter *const adapters[] = {
    &mt_worker_rpc_membership, &mt_worker_rpc_transfer,
    &mt_worker_rpc_tasks,      &mt_worker_rpc_objects,
    &mt_worker_rpc_actors,     &mt_worker_rpc_leases,
};

#define N_ADAPTERS (sizeof(adapters) / sizeof(adapters[0]))

static void noop(void *arg)
{
    (void)arg;
}

static void write_marker(struct mt_worker *w, const char *name,
                         const char *contents)
{
    char *path;
    int rc;

    if (!w->cfg->temp_dir)
        return;
    path = mt_xasprintf("%s/%s", w->cfg->temp_dir, name);
    rc = mt_sys_write_file_atomic(path, contents);
    if (rc < 0)
        MT_WARN("cannot write %s: %s", path, mt_strerror(rc));
    free(path);
}

/* The head accepted the node: `manta start` waits for this marker. */
static void on_registered(void *arg, const char *cluster_id)
{
    struct mt_worker *w = arg;

    (void)cluster_id;
    write_marker(w, "worker.registered", w->node_id);
    mt_runs_set_head_up(w->runs, true);
}

/* The head is unreachable or forgot the node: reports wait for the next
 * registration, which tells a restarted head what the node holds. */
static void on_lost(void *arg)
{
    struct mt_worker *w = arg;

    mt_runs_set_head_up(w->runs, false);
}

static int start_objects(struct mt_worker *w)
{
    struct mt_objects_opts o;

    o.capacity = w->cfg->object_store_memory;
    o.spill_dir = w->cfg->spill_dir;
    o.socket = w->cfg->object_store_socket;
    return mt_objects_start(&w->objects, w->loop, &o);
}

/* The executor pool; without it function tasks are refused, nothing more. */
static void start_executors(struct mt_worker *w)
{
    const struct mt_worker_config *cfg = w->cfg;
    struct mt_exec_pool_opts o;
    struct mt_kv_list own = {0};
    const struct mt_kv_list *lists[1] = {&own};
    extern char **environ;
    char pid[16];
    int rc;

    if (cfg->num_executors <= 0 || !cfg->executor_path)
        return;
    /* The executor checks that its parent is still this pid once it
     * watches for our death (executor_main.c). */
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    mt_kv_list_set(&own, "MANTA_WORKER_PID", pid);
    mt_kv_list_set(&own, "MANTA_NODE_ID", w->node_id);
    mt_kv_list_set(&own, "MANTA_HEAD_ADDRESS", cfg->head_addr);
    mt_kv_list_set(&own, "MANTA_OBJECT_STORE_SOCKET",
                   cfg->object_store_socket ? cfg->object_store_socket : "");
    if (cfg->sec)
        mt_security_export_env(cfg->sec, &own);
    o.path = cfg->executor_path;
    o.n = cfg->num_executors;
    o.env = mt_run_env_build(environ, lists, 1);
    o.procs = w->procs;
    mt_kv_list_release(&own);
    rc = mt_exec_pool_create(w->loop, &o, &w->execs);
    if (rc < 0)
        MT_ERROR("cannot start the executor pool: %s", mt_strerror(rc));
}

static void create_runs(struct mt_worker *w)
{
    struct mt_runs_opts o;

    o.loop = w->loop;
    o.node_id = w->node_id;
    o.head_addr = w->cfg->head_addr;
    o.temp_dir = w->cfg->temp_dir;
    o.store_socket = w->cfg->object_store_socket;
    o.sec = w->cfg->sec;
    o.store = w->objects.store;
    o.xfers = w->xfers;
    o.execs = w->execs;
    o.actors = w->actors;
    o.guard_path = w->cfg->guard_path;
    o.procs = w->procs;
    w->runs = mt_runs_create(&o);
}

static void create_leases(struct mt_worker *w)
{
    struct mt_leases_opts o;

    memset(&o, 0, sizeof(o));
    o.loop = w->loop;
    o.store_socket = w->cfg->object_store_socket;
    o.idle_ms = MT_LEASE_IDLE_MS;
    o.execs = w->execs;
    o.runs = w->runs;
    w->leases = mt_leases_create(&o);
}

static void create_membership(struct mt_worker *w)
{
    struct mt_membership_opts o;

    o.loop = w->loop;
    o.node_id = w->node_id;
    o.head_addr = w->cfg->head_addr;
    o.report_period_ms = w->cfg->report_period_ms;
    o.disk_path = w->cfg->temp_dir;
    w->membership = mt_membership_create(&o);
    mt_membership_on_registered(w->membership, on_registered, w);
    mt_membership_on_lost(w->membership, on_lost, w);
}

/* The services above the store, in layer order, then the adapters' wires
 * to them. */
static void create_services(struct mt_worker *w)
{
    start_executors(w);
    w->actors = mt_hosted_actors_create(w->execs);
    create_runs(w);
    create_leases(w);
    create_membership(w);
    for (size_t i = 0; i < N_ADAPTERS; i++)
        if (adapters[i]->start)
            adapters[i]->start(w);
}

/* Serve every adapter's handlers on cfg->bind_ip:cfg->port. */
static int start_server(struct mt_worker *w)
{
    const struct mt_rpc_handler *tables[N_ADAPTERS];
    struct mt_rpc_server_opts so;
    char bind[128];
    int rc;

    for (size_t i = 0; i < N_ADAPTERS; i++)
        tables[i] = adapters[i]->handlers;
    memset(&so, 0, sizeof(so));
    w->handlers = mt_rpc_handlers_join(tables, N_ADAPTERS, &so.n_handlers);
    if (!w->handlers)
        mt_xoom(sizeof(tables));
    snprintf(bind, sizeof(bind), "%s:%d", w->cfg->bind_ip, w->cfg->port);
    so.addr = bind;
    so.handlers = w->handlers;
    so.arg = w;
    rc = mt_rpc_server_start(w->eng, &so, &w->srv, &w->port);
    if (rc < 0)
        MT_ERROR("cannot listen on %s: %s", bind,
                 rc == -MT_EIO ? "address in use or not on this host"
                               : mt_strerror(rc));
    return rc;
}

/* RET 0, or -errno when the kernel has no randomness for the secret. */
static int init_identity(struct mt_worker *w)
{
    w->start_time_ms = mt_now_wall_ms();
    if (w->cfg->node_id)
        snprintf(w->node_id, sizeof(w->node_id), "%s", w->cfg->node_id);
    else
        mt_random_hex(w->node_id, 16);
    mt_sys_hostname(w->hostname, sizeof(w->hostname));
    return mt_auth_token_generate(w->node_secret);
}

int mt_worker_start(uv_loop_t *loop, const struct mt_worker_config *cfg,
                    struct mt_worker **out)
{
    struct mt_worker *w = mt_xcalloc(1, sizeof(*w));
    int rc;

    w->loop = loop;
    w->cfg = cfg;
    if ((rc = init_identity(w)) < 0) {
        free(w);
        return rc;
    }
    /* Before anything is spawned: kill what a predecessor left. */
    rc = mt_procs_create(loop, cfg->temp_dir, &w->procs);
    if (rc < 0)
        goto out_free;
    rc = start_objects(w);
    if (rc < 0)
        goto out_procs;
    w->xfers = mt_transfers_create(w->objects.store);
    rc = mt_rpc_engine_create(loop, &w->eng);
    if (rc < 0)
        goto out_objects;
    if (cfg->sec)
        rc = mt_rpc_engine_set_security(w->eng, cfg->sec);
    if (rc == 0)
        rc = start_server(w);
    if (rc < 0)
        goto out_engine;
    snprintf(w->address, sizeof(w->address), "%s:%d", cfg->node_ip, w->port);
    rc = mt_worker_metrics_start(w);
    if (rc < 0)
        goto out_server;
    rc = mt_rpc_channel_create(w->eng, cfg->head_addr, 0, &w->head);
    if (rc < 0) {
        MT_ERROR("bad head address %s", cfg->head_addr);
        goto out_metrics;
    }
    create_services(w);
    MT_INFO("worker node=%s listening on %s, head %s", w->node_id, w->address,
            cfg->head_addr);
    write_marker(w, "worker.addr", w->address);
    if (w->metrics_address[0])
        write_marker(w, "worker.metrics", w->metrics_address);
    mt_membership_start(w->membership);
    *out = w;
    return 0;

out_metrics:
    mt_worker_metrics_stop(w);
out_server:
    /* The engine's destroy runs the loop until the server is gone. */
    mt_rpc_server_stop(w->srv, 0, NULL, NULL);
out_engine:
    mt_rpc_engine_destroy(w->eng);
    free(w->handlers);
out_objects:
    mt_transfers_destroy(w->xfers);
    mt_objects_stop(&w->objects);
    uv_run(loop, UV_RUN_NOWAIT);
    mt_objects_release(&w->objects);
out_procs:
    if (w->procs)
        mt_procs_close(w->procs, noop, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    mt_procs_destroy(w->procs);
out_free:
    free(w);
    return rc;
}

const char *mt_worker_node_id(const struct mt_worker *w)
{
    return w->node_id;
}

/* ---- stopping: each step's callback starts the next ---------------------- */

static void on_procs_closed(void *arg)
{
    struct mt_worker *w = arg;

    if (w->stopped)
        w->stopped(w->stopped_arg);
}

static void on_membership_closed(void *arg)
{
    struct mt_worker *w = arg;

    mt_procs_close(w->procs, on_procs_closed, w);
}

static void on_execs_closed(void *arg)
{
    struct mt_worker *w = arg;

    mt_membership_close(w->membership, on_membership_closed, w);
}

static void on_actors_closed(void *arg)
{
    struct mt_worker *w = arg;

    if (w->execs)
        mt_exec_pool_close(w->execs, on_execs_closed, w);
    else
        on_execs_closed(w);
}

static void on_leases_closed(void *arg)
{
    struct mt_worker *w = arg;

    mt_hosted_actors_close(w->actors, on_actors_closed, w);
}

static void on_runs_closed(void *arg)
{
    struct mt_worker *w = arg;

    mt_leases_close(w->leases, on_leases_closed, w);
}

static void on_server_stopped(void *arg)
{
    struct mt_worker *w = arg;

    w->srv = NULL;
    mt_worker_metrics_stop(w);
    mt_rpc_channel_destroy(w->head);
    w->head = NULL;
    mt_objects_stop(&w->objects);
    mt_runs_close(w->runs, on_runs_closed, w);
}

static void on_left(void *arg)
{
    struct mt_worker *w = arg;

    mt_transfers_cancel(w->xfers);
    mt_rpc_server_stop(w->srv, 1000, on_server_stopped, w);
}

void mt_worker_stop(struct mt_worker *w, void (*done)(void *arg), void *arg)
{
    if (w->stopping)
        return;
    w->stopping = true;
    w->stopped = done;
    w->stopped_arg = arg;
    mt_runs_shutdown(w->runs);
    mt_exec_pool_shutdown(w->execs);
    mt_hosted_actors_shutdown(w->actors);
    mt_leases_shutdown(w->leases); /* held pushes fail UNAVAILABLE */
    /* The pools have forgotten their jobs: now the adapters can end the
     * calls they hold. */
    for (size_t i = 0; i < N_ADAPTERS; i++)
        if (adapters[i]->stop)
            adapters[i]->stop(w);
    mt_membership_leave(w->membership, "worker stopped", on_left, w);
}

void mt_worker_destroy(struct mt_worker *w)
{
    if (!w)
        return;
    /* Runs the loop until every call's last completion is in, so transfers
     * have released their pins before the store goes away. */
    mt_rpc_engine_destroy(w->eng);
    free(w->handlers);
    mt_leases_destroy(w->leases);
    mt_runs_destroy(w->runs);
    mt_hosted_actors_destroy(w->actors);
    mt_exec_pool_destroy(w->execs);
    mt_membership_destroy(w->membership);
    mt_transfers_destroy(w->xfers);
    mt_objects_release(&w->objects);
    mt_procs_destroy(w->procs);
    free(w);
}
