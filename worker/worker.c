/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker.c -- the worker's membership state machine (see worker.h) and its
 * life cycle. One timer drives membership: while REGISTERING it fires every
 * second to retry; while REGISTERED it fires every report period. Command
 * tasks keep their own handles (tasks.c); stopping kills them first and
 * closes their handles after the rpc server is gone.
 */
#include "worker/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "worker/actors.h"
#include "worker/executors.h"
#include "worker/membership.h"
#include "worker/tasks.h"
#include "worker/transfer.h"

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
}

/* The executor pool; without it function tasks are refused, nothing more. */
static void start_executors(struct mt_worker *w)
{
    const struct mt_worker_config *cfg = w->cfg;
    struct mt_exec_pool_opts o;
    struct mt_kv_list own = {0};
    const struct mt_kv_list *lists[1] = {&own};
    extern char **environ;
    int rc;

    if (cfg->num_executors <= 0 || !cfg->executor_path)
        return;
    mt_kv_list_set(&own, "MANTA_NODE_ID", w->node_id);
    mt_kv_list_set(&own, "MANTA_HEAD_ADDRESS", cfg->head_addr);
    mt_kv_list_set(&own, "MANTA_OBJECT_STORE_SOCKET",
                   cfg->object_store_socket ? cfg->object_store_socket : "");
    o.path = cfg->executor_path;
    o.n = cfg->num_executors;
    o.env = mt_run_env_build(environ, lists, 1);
    mt_kv_list_release(&own);
    rc = mt_exec_pool_create(w->loop, &o, &w->execs);
    if (rc < 0)
        MT_ERROR("cannot start the executor pool: %s", mt_strerror(rc));
}

static int start_objects(struct mt_worker *w)
{
    struct mt_objects_opts o;

    o.capacity = w->cfg->object_store_memory;
    o.spill_dir = w->cfg->spill_dir;
    o.socket = w->cfg->object_store_socket;
    return mt_objects_start(&w->objects, w->loop, &o);
}

static void start_membership(struct mt_worker *w)
{
    struct mt_membership_opts o;

    o.loop = w->loop;
    o.node_id = w->node_id;
    o.head_addr = w->cfg->head_addr;
    o.report_period_ms = w->cfg->report_period_ms;
    w->membership = mt_membership_create(&o);
    mt_membership_set_link(w->membership, &mt__worker_membership_link, w);
    mt_membership_on_registered(w->membership, on_registered, w);
}

static void start_runs(struct mt_worker *w)
{
    struct mt_runs_opts o;

    o.loop = w->loop;
    o.node_id = w->node_id;
    o.head_addr = w->cfg->head_addr;
    o.temp_dir = w->cfg->temp_dir;
    o.store_socket = w->cfg->object_store_socket;
    o.store = w->objects.store;
    o.xfers = w->xfers;
    o.execs = w->execs;
    o.actors = w->actors;
    w->runs = mt_runs_create(&o);
    mt_runs_set_sender(w->runs, mt__worker_send_task_report, w);
}

int mt_worker_start(uv_loop_t *loop, const struct mt_worker_config *cfg,
                    struct mt_worker **out)
{
    struct mt_worker *w = mt_xcalloc(1, sizeof(*w));
    struct mt_rpc_server_opts so;
    char bind[128];
    int rc;

    w->loop = loop;
    w->cfg = cfg;
    w->start_time_ms = mt_now_wall_ms();
    if (cfg->node_id)
        snprintf(w->node_id, sizeof(w->node_id), "%s", cfg->node_id);
    else
        mt_random_hex(w->node_id, 16);
    mt_sys_hostname(w->hostname, sizeof(w->hostname));
    rc = start_objects(w);
    if (rc < 0)
        goto out_free;
    w->xfers = mt_transfers_create(w->objects.store);
    rc = mt_rpc_engine_create(loop, &w->eng);
    if (rc < 0)
        goto out_objects;
    memset(&so, 0, sizeof(so));
    snprintf(bind, sizeof(bind), "%s:%d", cfg->bind_ip, cfg->port);
    so.addr = bind;
    so.handlers = mt_worker_handlers;
    so.n_handlers = mt_worker_n_handlers;
    so.arg = w;
    rc = mt_rpc_server_start(w->eng, &so, &w->srv, &w->port);
    if (rc < 0) {
        MT_ERROR("cannot listen on %s: %s", bind,
                 rc == -MT_EIO ? "address in use or not on this host"
                               : mt_strerror(rc));
        goto out_engine;
    }
    snprintf(w->address, sizeof(w->address), "%s:%d", cfg->node_ip, w->port);
    rc = mt_rpc_channel_create(w->eng, cfg->head_addr, 0, &w->head);
    if (rc < 0) {
        MT_ERROR("bad head address %s", cfg->head_addr);
        goto out_server;
    }
    start_membership(w);
    mt_transfers_set_wire(w->xfers, &mt__worker_pull_wire, w);
    start_executors(w);
    w->actors = mt_hosted_actors_create(w->execs);
    start_runs(w);
    MT_INFO("worker node=%s listening on %s, head %s", w->node_id, w->address,
            cfg->head_addr);
    write_marker(w, "worker.addr", w->address);
    mt_membership_start(w->membership);
    *out = w;
    return 0;

out_server:
    /* The engine's destroy runs the loop until the server is gone. */
    mt_rpc_server_stop(w->srv, 0, NULL, NULL);
out_engine:
    mt_rpc_engine_destroy(w->eng);
out_objects:
    mt_transfers_destroy(w->xfers);
    mt_objects_stop(&w->objects);
    uv_run(loop, UV_RUN_NOWAIT);
    mt_objects_release(&w->objects);
out_free:
    free(w);
    return rc;
}

static void on_membership_closed(void *arg)
{
    struct mt_worker *w = arg;

    if (w->stopped)
        w->stopped(w->stopped_arg);
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

static void on_tasks_closed(void *arg)
{
    struct mt_worker *w = arg;

    mt_hosted_actors_close(w->actors, on_actors_closed, w);
}

static void on_server_stopped(void *arg)
{
    struct mt_worker *w = arg;

    w->srv = NULL;
    mt_rpc_channel_destroy(w->head);
    w->head = NULL;
    mt_objects_stop(&w->objects);
    mt_runs_close(w->runs, on_tasks_closed, w);
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
    /* The pools have forgotten their jobs: now the calls can go. */
    mt__worker_calls_shutdown(w);
    mt_membership_leave(w->membership, "worker stopped", on_left, w);
}

void mt_worker_destroy(struct mt_worker *w)
{
    if (!w)
        return;
    /* Runs the loop until every call's last completion is in, so transfers
     * have released their pins before the store goes away. */
    mt_rpc_engine_destroy(w->eng);
    mt_runs_destroy(w->runs);
    mt_hosted_actors_destroy(w->actors);
    mt_exec_pool_destroy(w->execs);
    mt_transfers_destroy(w->xfers);
    mt_objects_release(&w->objects);
    mt_membership_destroy(w->membership);
    free(w);
}
