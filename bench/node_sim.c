/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node_sim.c -- manta-node-sim: many fake nodes in one process, so the
 * head can be seen at the scale of a large cluster on one machine
 * (bench/head_scale.sh, docs/operations.md "The node simulator").
 *
 * Each fake node speaks to the head exactly as manta-worker does
 * (worker/rpc_membership.c, worker/rpc_tasks.c): RegisterNode with its
 * own node secret under the cluster token, ReportNode every period the
 * head asks for, UnregisterNode when the simulator stops. All of them
 * serve WorkerService on one address; the head's RunTasks names the node
 * it placed the tasks on (RunTasksRequest.node_id), which is how the
 * simulator tells its nodes apart. A task is "run" at once: the call is
 * answered, then one ReportTasks says RUNNING and FINISHED (exit 0, no
 * output, an empty result). Actors are refused (ENOTSUP): nothing runs
 * here to host one.
 *
 * A lease (TASK_KIND_LEASE) is held as a worker holds it (worker/leases.h)
 * but runs nothing: RUNNING is reported, PushTasks finishes every task at
 * once (one ReportTasks call with their finals, lease_id set; the push is
 * answered when the head has acknowledged it, each result FINISHED and
 * empty), and the lease ends FINISHED when returned, idle for
 * LEASE_IDLE_MS (checked on the ring's tick) or stopped (StopTask).
 * Pushes for a lease not held here, or another owner's, come back
 * not_run.
 *
 * DESIGN: one ring of nodes, walked by a timer so that a period's calls
 * are spread evenly over the period (node i is due at i * period / N into
 * each round), never bunched; a node has at most one membership call out,
 * and one that is still out when its turn comes skips that turn. A node
 * that is not registered (at start, or after a report answered
 * known=false) registers at its turn instead of reporting. Node ids are
 * "<prefix>-<index>", so RunTasks finds its node in O(1).
 *
 * THREAD: the loop thread only (the rpc engine's poller hands everything
 * to it, common/rpc.h).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "common/alloc.h"
#include "common/auth.h"
#include "common/daemon.h"
#include "common/error.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/qty.h"
#include "common/rpc.h"
#include "common/sys.h"
#include "head_service.pb-c.h"
#include "proto/convert.h"
#include "proto/services.h"
#include "worker_service.pb-c.h"

#define SIM_MAX_NODES 100000
#define SIM_TICK_MS 5               /* ring granularity */
#define CALL_TIMEOUT_MS 10000
#define LEAVE_TIMEOUT_MS 3000       /* unregistering, all nodes together */
#define RUN_TASKS_MAX 4096
#define LEASE_IDLE_MS 100           /* as worker/leases.h */
#define MAX_OWNER 128

struct sim;

/* One fake node. Guarded by: loop thread. */
struct sim_node {
    struct sim *sim;
    char id[64];                    /* "<prefix>-<index>" */
    char secret[MT_AUTH_TOKEN_HEX + 1]; /* its node credential */
    uint64_t seqno;                 /* last report sent */
    bool registered;                /* the head has it */
    bool in_flight;                 /* a membership call is out */
};

/* A lease held by a fake node. Guarded by: loop thread. */
struct sim_lease {
    struct sim_lease *prev, *next;  /* sim->leases */
    struct sim_node *nd;
    char id[65];
    uint32_t attempt;
    char owner[MAX_OWNER + 1];
    uint64_t idle_since;            /* loop ms of its last push's end */
    size_t pushes;                  /* held: answer not sent yet */
    bool returning;
};

struct sim_opts {
    const char *head_addr;
    const char *node_ip;            /* where WorkerService listens */
    const char *prefix;             /* node ids */
    const char *temp_dir;           /* token fallback; may be NULL */
    int port;                       /* 0 = any */
    size_t n_nodes;
    int report_period_ms;           /* until the head sets one */
    struct mt_qty_list resources;   /* each node's total */
};

/* The simulator. Guarded by: loop thread. */
struct sim {
    struct sim_opts *o;
    uv_loop_t *loop;
    struct mt_rpc_engine *eng;
    struct mt_rpc_server *srv;
    struct mt_rpc_channel *head;
    struct sim_node *nodes;
    char address[96];               /* node_ip:port, every node's */
    char hostname[64];
    int64_t start_ms;               /* wall clock */
    uint32_t period_ms;             /* report period in force */
    uv_timer_t tick;
    uint64_t round_start;           /* loop ms when this round began */
    size_t cursor;                  /* next node of this round */
    size_t n_registered;
    bool announced;                 /* "all registered" printed */
    int last_reg_code;              /* of the last failed registration */
    struct mt_pb_arena arena;       /* the shared views below */
    Manta__ResourceEntry **res;     /* each node's resources */
    size_t n_res;
    Manta__HostUsage usage;         /* an idle host */
    uint64_t tasks_done;
    struct sim_lease *leases;
    /* leaving */
    bool leaving;
    size_t unregs_out;
    uv_timer_t leave_timer;
    void (*left)(void *);
    void *left_arg;
};

/* ---- node views ------------------------------------------------------------ */

/* NodeInfo for node nd, pointing into nd, s and label (caller storage). */
static void node_view(struct sim *s, struct sim_node *nd, Manta__Label *label,
                      Manta__Label **labels, Manta__NodeInfo *ni)
{
    manta__label__init(label);
    label->key = (char *)"manta.io/node-id";
    label->value = nd->id;
    labels[0] = label;
    manta__node_info__init(ni);
    ni->node_id = nd->id;
    ni->address = s->address;
    ni->node_ip = (char *)s->o->node_ip;
    ni->hostname = s->hostname;
    ni->state = nd->registered ? MANTA__NODE_STATE__NODE_STATE_ALIVE
                               : MANTA__NODE_STATE__NODE_STATE_UNSPECIFIED;
    ni->resources_total = s->res;
    ni->n_resources_total = s->n_res;
    ni->resources_available = s->res;
    ni->n_resources_available = s->n_res;
    ni->labels = labels;
    ni->n_labels = 1;
    ni->usage = &s->usage;
    ni->start_time_ms = s->start_ms;
    ni->pid = (uint32_t)getpid();
    ni->temp_dir = (char *)(s->o->temp_dir ? s->o->temp_dir : "");
    ni->version = (char *)MT_VERSION;
}

/* The node RunTasks names, or NULL: ids are "<prefix>-<index>". */
static struct sim_node *node_find(struct sim *s, const char *id)
{
    size_t plen = strlen(s->o->prefix);
    long i;

    if (!id || strncmp(id, s->o->prefix, plen) != 0 || id[plen] != '-' ||
        !mt_parse_int(id + plen + 1, 0, (long)s->o->n_nodes - 1, &i) ||
        strcmp(s->nodes[i].id, id) != 0)
        return NULL;
    return &s->nodes[i];
}

/* ---- membership: calls to the head ------------------------------------------ */

static void on_register_done(void *arg, const struct mt_rpc_status *st,
                             const ProtobufCMessage *resp)
{
    const Manta__RegisterNodeReply *r = (const Manta__RegisterNodeReply *)resp;
    struct sim_node *nd = arg;
    struct sim *s = nd->sim;

    nd->in_flight = false;
    if (s->leaving)
        return;
    if (st->code) {
        /* Every node fails alike (a wrong token, no head): say it once. */
        if (st->code != s->last_reg_code)
            MT_WARN("register node=%s failed: %s", nd->id, st->message);
        s->last_reg_code = st->code;
        return;
    }
    nd->registered = true;
    nd->seqno = 0;
    s->n_registered++;
    if (r->report_period_ms && r->report_period_ms != s->period_ms) {
        s->period_ms = r->report_period_ms;
        MT_INFO("report period %u ms, as the head asks", s->period_ms);
    }
    if (!s->announced && s->n_registered == s->o->n_nodes) {
        s->announced = true;
        printf("manta-node-sim: %zu nodes registered\n", s->o->n_nodes);
        fflush(stdout);
    }
}

static void register_node(struct sim *s, struct sim_node *nd)
{
    Manta__RegisterNodeRequest req = MANTA__REGISTER_NODE_REQUEST__INIT;
    Manta__Label label, *labels[1];
    Manta__NodeInfo ni;

    node_view(s, nd, &label, labels, &ni);
    req.node = &ni;
    req.node_secret = nd->secret;
    if (mt_rpc_unary(s->head, &mt_head_register_node, &req.base,
                     CALL_TIMEOUT_MS, 0, on_register_done, nd) == 0)
        nd->in_flight = true;
}

static void on_report_done(void *arg, const struct mt_rpc_status *st,
                           const ProtobufCMessage *resp)
{
    const Manta__ReportNodeReply *r = (const Manta__ReportNodeReply *)resp;
    struct sim_node *nd = arg;

    nd->in_flight = false;
    if (nd->sim->leaving || st->code || r->known)
        return;
    /* The head restarted or declared the node dead: register again. */
    nd->registered = false;
    nd->sim->n_registered--;
}

static void report_node(struct sim *s, struct sim_node *nd)
{
    Manta__ReportNodeRequest req = MANTA__REPORT_NODE_REQUEST__INIT;

    req.node_id = nd->id;
    req.node_secret = nd->secret;
    req.seqno = ++nd->seqno;
    req.resources_available = s->res;
    req.n_resources_available = s->n_res;
    req.usage = &s->usage;
    if (mt_rpc_unary(s->head, &mt_head_report_node, &req.base,
                     CALL_TIMEOUT_MS, 0, on_report_done, nd) == 0)
        nd->in_flight = true;
}

static void leases_sweep(struct sim *s, uint64_t now);

/* The ring: serve the nodes due by now, spread evenly over the period. */
static void on_tick(uv_timer_t *t)
{
    struct sim *s = t->data;
    uint64_t now = uv_now(s->loop), due;

    if (now >= s->round_start + s->period_ms) {
        /* Finish the round, then start the next one from now, so a
         * simulator that fell behind does not burst to catch up. */
        due = s->o->n_nodes;
    } else {
        due = (now - s->round_start) * s->o->n_nodes / s->period_ms;
    }
    for (; s->cursor < due; s->cursor++) {
        struct sim_node *nd = &s->nodes[s->cursor];

        if (nd->in_flight)
            continue;
        if (nd->registered)
            report_node(s, nd);
        else
            register_node(s, nd);
    }
    leases_sweep(s, now);
    if (s->cursor >= s->o->n_nodes) {
        s->cursor = 0;
        s->round_start = now >= s->round_start + s->period_ms
                             ? now
                             : s->round_start + s->period_ms;
    }
}

/* ---- WorkerService ------------------------------------------------------------ */

static void on_tasks_reported(void *arg, const struct mt_rpc_status *st,
                              const ProtobufCMessage *resp)
{
    (void)arg;
    (void)resp;
    if (st->code)
        MT_WARN("ReportTasks failed: %s", st->message);
}

/* Refuse what nothing here can run. RET 0 or a Manta error code. */
static int check_task(const Manta__RunTaskRequest *t, const char **why)
{
    if (!t->spec || !t->spec->task_id || !*t->spec->task_id ||
        strlen(t->spec->task_id) > 64) {
        *why = "spec with a task_id is required";
        return MT_EINVAL;
    }
    if (t->spec->kind == MANTA__TASK_KIND__TASK_KIND_ACTOR_CREATE ||
        t->spec->kind == MANTA__TASK_KIND__TASK_KIND_ACTOR_METHOD) {
        *why = "the node simulator hosts no actors";
        return MT_ENOTSUP;
    }
    *why = "";
    return 0;
}

/* ---- leases ------------------------------------------------------------------- */

static struct sim_lease *lease_find(struct sim *s, const char *id)
{
    for (struct sim_lease *l = s->leases; l; l = l->next)
        if (strcmp(l->id, id) == 0)
            return l;
    return NULL;
}

static void lease_add(struct sim *s, struct sim_node *nd,
                      const Manta__RunTaskRequest *t)
{
    struct sim_lease *l = mt_xcalloc(1, sizeof(*l));

    l->nd = nd;
    snprintf(l->id, sizeof(l->id), "%s", t->spec->task_id);
    l->attempt = t->attempt;
    snprintf(l->owner, sizeof(l->owner), "%s", t->spec->owner_id);
    l->idle_since = uv_now(s->loop);
    l->next = s->leases;
    if (s->leases)
        s->leases->prev = l;
    s->leases = l;
}

static void lease_free(struct sim *s, struct sim_lease *l)
{
    if (l->prev)
        l->prev->next = l->next;
    else
        s->leases = l->next;
    if (l->next)
        l->next->prev = l->prev;
    free(l);
}

/* l ends: FINISHED with why, so the head frees its resources. */
static void lease_end(struct sim *s, struct sim_lease *l, const char *why)
{
    Manta__ReportTasksRequest rep = MANTA__REPORT_TASKS_REQUEST__INIT;
    Manta__TaskUpdate u = MANTA__TASK_UPDATE__INIT, *up = &u;

    u.task_id = l->id;
    u.attempt = l->attempt;
    u.state = MANTA__TASK_STATE__TASK_STATE_FINISHED;
    u.error = (char *)why;
    rep.node_id = l->nd->id;
    rep.node_secret = l->nd->secret;
    rep.updates = &up;
    rep.n_updates = 1;
    mt_rpc_unary(s->head, &mt_head_report_tasks, &rep.base, CALL_TIMEOUT_MS,
                 0, on_tasks_reported, s);
    lease_free(s, l);
}

/* On the ring's tick: leases with nothing held for LEASE_IDLE_MS end. */
static void leases_sweep(struct sim *s, uint64_t now)
{
    struct sim_lease *l, *next;

    for (l = s->leases; l; l = next) {
        next = l->next;
        if (l->pushes == 0 && now - l->idle_since >= LEASE_IDLE_MS)
            lease_end(s, l, "lease idle");
    }
}

/* A held push: answered when the head has its tasks' reports. */
struct sim_push {
    struct sim *s;
    struct mt_rpc_call *call;
    char lease_id[65];
    size_t n;
};

/* Answer a push: n results, FINISHED and empty, or not run with why. */
static void push_reply(struct mt_rpc_call *call, size_t n, const char *why)
{
    Manta__PushTasksReply reply = MANTA__PUSH_TASKS_REPLY__INIT;
    Manta__PushedTaskResult *res = mt_xcalloc(n + 1, sizeof(*res));
    Manta__PushedTaskResult **up = mt_xcalloc(n + 1, sizeof(*up));

    for (size_t i = 0; i < n; i++) {
        manta__pushed_task_result__init(&res[i]);
        res[i].state = why ? MANTA__TASK_STATE__TASK_STATE_FAILED
                           : MANTA__TASK_STATE__TASK_STATE_FINISHED;
        res[i].not_run = why != NULL;
        res[i].error = (char *)(why ? why : "");
        up[i] = &res[i];
    }
    reply.n_results = n;
    reply.results = up;
    mt_rpc_reply(call, &reply.base);
    free(res);
    free(up);
}

static void push_ended(struct sim *s, const char *lease_id)
{
    struct sim_lease *l = lease_find(s, lease_id);

    if (!l || --l->pushes > 0)
        return;
    l->idle_since = uv_now(s->loop);
    if (l->returning)
        lease_end(s, l, "lease returned by its owner");
}

static void on_push_reported(void *arg, const struct mt_rpc_status *st,
                             const ProtobufCMessage *resp)
{
    struct sim_push *p = arg;

    (void)resp;
    if (st->code) {
        MT_WARN("ReportTasks of a push failed: %s", st->message);
        mt_rpc_fail(p->call, -MT_EUNAVAIL, "the head did not take the "
                                           "reports");
    } else {
        push_reply(p->call, p->n, NULL);
    }
    push_ended(p->s, p->lease_id);
    free(p);
}

/* One ReportTasks call with a final FINISHED of every task of req. */
static int report_pushed(struct sim *s, struct sim_lease *l,
                         const Manta__PushTasksRequest *req,
                         struct sim_push *p)
{
    Manta__ReportTasksRequest rep = MANTA__REPORT_TASKS_REQUEST__INIT;
    Manta__TaskUpdate *u = mt_xcalloc(req->n_tasks, sizeof(*u));
    Manta__TaskUpdate **up = mt_xcalloc(req->n_tasks, sizeof(*up));
    int rc;

    for (size_t i = 0; i < req->n_tasks; i++) {
        const Manta__PushedTask *k = req->tasks[i];

        manta__task_update__init(&u[i]);
        u[i].task_id = k->task_id;
        u[i].attempt = k->attempt;
        u[i].state = MANTA__TASK_STATE__TASK_STATE_FINISHED;
        u[i].lease_id = l->id;
        u[i].name = k->name;
        u[i].function = k->function;
        u[i].hold_result = k->hold_result;
        u[i].max_retries = k->max_retries;
        up[i] = &u[i];
    }
    rep.node_id = l->nd->id;
    rep.node_secret = l->nd->secret;
    rep.updates = up;
    rep.n_updates = req->n_tasks;
    rc = mt_rpc_unary(s->head, &mt_head_report_tasks, &rep.base,
                      CALL_TIMEOUT_MS, 0, on_push_reported, p);
    free(u);
    free(up);
    return rc;
}

static void h_push_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                         void *arg)
{
    const Manta__PushTasksRequest *req = (const Manta__PushTasksRequest *)m;
    struct sim *s = arg;
    struct sim_lease *l = lease_find(s, req->lease_id);
    struct sim_push *p;

    if (req->n_tasks > RUN_TASKS_MAX) {
        mt_rpc_fail(call, -MT_EINVAL, "a request carries 0-4096 tasks");
        return;
    }
    if (!l || l->returning || strcmp(l->owner, req->owner_id) != 0) {
        push_reply(call, req->n_tasks, !l ? "not run: its lease is not held "
                                            "on this worker"
                                     : l->returning
                                         ? "not run: its lease was returned"
                                         : "not run: its lease is held for "
                                           "another owner");
        return;
    }
    l->returning = req->return_lease;
    l->pushes++;
    if (req->n_tasks == 0) {
        push_reply(call, 0, NULL);
        push_ended(s, l->id);
        return;
    }
    p = mt_xcalloc(1, sizeof(*p));
    p->s = s;
    p->call = call;
    snprintf(p->lease_id, sizeof(p->lease_id), "%s", l->id);
    p->n = req->n_tasks;
    if (report_pushed(s, l, req, p) < 0) {
        mt_rpc_fail(call, -MT_EUNAVAIL, "cannot report to the head");
        free(p);
        push_ended(s, l->id);
        return;
    }
    s->tasks_done += req->n_tasks;
}

/* Report every taken task of req RUNNING then FINISHED, in one call; a
 * lease only RUNNING: it is held (sim_lease) until it ends. */
static void report_finished(struct sim *s, struct sim_node *nd,
                            const Manta__RunTasksRequest *req,
                            const int32_t *codes)
{
    Manta__ReportTasksRequest rep = MANTA__REPORT_TASKS_REQUEST__INIT;
    Manta__TaskUpdate *u = mt_xcalloc(2 * req->n_tasks, sizeof(*u));
    Manta__TaskUpdate **up = mt_xcalloc(2 * req->n_tasks, sizeof(*up));
    size_t n = 0;

    for (size_t i = 0; i < req->n_tasks; i++) {
        bool lease;

        if (codes[i])
            continue;
        lease = req->tasks[i]->spec->kind ==
                MANTA__TASK_KIND__TASK_KIND_LEASE;
        if (lease)
            lease_add(s, nd, req->tasks[i]);
        else
            s->tasks_done++;
        for (int k = 0; k < (lease ? 1 : 2); k++) {
            manta__task_update__init(&u[n]);
            u[n].task_id = req->tasks[i]->spec->task_id;
            u[n].attempt = req->tasks[i]->attempt;
            u[n].state = k ? MANTA__TASK_STATE__TASK_STATE_FINISHED
                           : MANTA__TASK_STATE__TASK_STATE_RUNNING;
            up[n] = &u[n];
            n++;
        }
    }
    rep.node_id = nd->id;
    rep.node_secret = nd->secret;
    rep.updates = up;
    rep.n_updates = n;
    if (n)
        mt_rpc_unary(s->head, &mt_head_report_tasks, &rep.base,
                     CALL_TIMEOUT_MS, 0, on_tasks_reported, s);
    free(u);
    free(up);
}

static void h_run_tasks(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    const Manta__RunTasksRequest *req = (const Manta__RunTasksRequest *)m;
    Manta__RunTasksReply reply = MANTA__RUN_TASKS_REPLY__INIT;
    struct sim *s = arg;
    struct sim_node *nd = node_find(s, req->node_id);
    const char **errors;
    int32_t *codes;

    if (!nd) {
        mt_rpc_fail(call, -MT_ENOENT, *req->node_id
                                          ? "no such simulated node"
                                          : "node_id is required");
        return;
    }
    if (req->n_tasks == 0 || req->n_tasks > RUN_TASKS_MAX) {
        mt_rpc_fail(call, -MT_EINVAL, "tasks: 1 to 4096 per call");
        return;
    }
    codes = mt_xcalloc(req->n_tasks, sizeof(*codes));
    errors = mt_xcalloc(req->n_tasks, sizeof(*errors));
    for (size_t i = 0; i < req->n_tasks; i++)
        codes[i] = check_task(req->tasks[i], &errors[i]);
    reply.codes = codes;
    reply.n_codes = req->n_tasks;
    reply.errors = (char **)errors;
    reply.n_errors = req->n_tasks;
    mt_rpc_reply(call, &reply.base);
    report_finished(s, nd, req, codes);
    free(codes);
    free(errors);
}

/* Actor calls come one at a time without a node id: none is hosted. */
static void h_run_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                       void *arg)
{
    (void)m;
    (void)arg;
    mt_rpc_fail(call, -MT_ENOTSUP, "the node simulator hosts no actors");
}

/* Tasks end as they start: only a lease can be stopped (revoked). */
static void h_stop_task(struct mt_rpc_call *call, const ProtobufCMessage *m,
                        void *arg)
{
    const Manta__StopTaskRequest *req = (const Manta__StopTaskRequest *)m;
    Manta__StopTaskReply reply = MANTA__STOP_TASK_REPLY__INIT;
    struct sim *s = arg;
    struct sim_lease *l = lease_find(s, req->task_id);

    if (l && l->attempt == req->attempt) {
        reply.found = true;
        if (l->pushes)
            l->returning = true; /* ends when its push is answered */
        else
            lease_end(s, l, "lease revoked");
    }
    mt_rpc_reply(call, &reply.base);
}

/* No store here: there is never a copy to delete. */
static void h_delete_objects(struct mt_rpc_call *call,
                             const ProtobufCMessage *m, void *arg)
{
    Manta__DeleteObjectsReply reply = MANTA__DELETE_OBJECTS_REPLY__INIT;

    (void)m;
    (void)arg;
    mt_rpc_reply(call, &reply.base);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_worker_run_tasks, h_run_tasks},
    {&mt_worker_run_task, h_run_task},
    {&mt_worker_stop_task, h_stop_task},
    {&mt_worker_delete_objects, h_delete_objects},
    {&mt_worker_push_tasks, h_push_tasks},
};

/* ---- start and stop ---------------------------------------------------------- */

static void on_server_stopped(void *arg)
{
    struct sim *s = arg;

    MT_INFO("stopped: %llu tasks run", (unsigned long long)s->tasks_done);
    s->left(s->left_arg);
}

static void on_leave_timer_closed(uv_handle_t *h)
{
    struct sim *s = h->data;

    mt_rpc_server_stop(s->srv, 500, on_server_stopped, s);
}

static void leave_finish(struct sim *s)
{
    if (uv_is_closing((uv_handle_t *)&s->leave_timer))
        return;
    uv_close((uv_handle_t *)&s->leave_timer, on_leave_timer_closed);
}

static void on_leave_timeout(uv_timer_t *t)
{
    struct sim *s = t->data;

    MT_WARN("%zu unregistrations unanswered after %d ms", s->unregs_out,
            LEAVE_TIMEOUT_MS);
    leave_finish(s);
}

static void on_unregister_done(void *arg, const struct mt_rpc_status *st,
                               const ProtobufCMessage *resp)
{
    struct sim_node *nd = arg;
    struct sim *s = nd->sim;

    (void)resp;
    if (st->code)
        MT_DEBUG("unregister node=%s failed: %s", nd->id, st->message);
    if (--s->unregs_out == 0)
        leave_finish(s);
}

/* The daemon's stop (daemon.h): unregister every node, then stop serving. */
static void sim_stop(void *daemon, void (*done)(void *), void *arg)
{
    Manta__UnregisterNodeRequest req = MANTA__UNREGISTER_NODE_REQUEST__INIT;
    struct sim *s = daemon;

    s->leaving = true;
    s->left = done;
    s->left_arg = arg;
    uv_timer_stop(&s->tick);
    uv_close((uv_handle_t *)&s->tick, NULL);
    req.reason = (char *)"the node simulator stopped";
    for (size_t i = 0; i < s->o->n_nodes; i++) {
        struct sim_node *nd = &s->nodes[i];

        if (!nd->registered)
            continue;
        req.node_id = nd->id;
        req.node_secret = nd->secret;
        if (mt_rpc_unary(s->head, &mt_head_unregister_node, &req.base,
                         LEAVE_TIMEOUT_MS, 0, on_unregister_done, nd) == 0)
            s->unregs_out++;
    }
    uv_timer_init(s->loop, &s->leave_timer);
    s->leave_timer.data = s;
    uv_timer_start(&s->leave_timer, on_leave_timeout, LEAVE_TIMEOUT_MS, 0);
    if (s->unregs_out == 0)
        leave_finish(s);
}

/* Ids, secrets and the shared views. RET 0 or -MT_E*. */
static int nodes_init(struct sim *s)
{
    int rc;

    s->nodes = mt_xcalloc(s->o->n_nodes, sizeof(*s->nodes));
    for (size_t i = 0; i < s->o->n_nodes; i++) {
        struct sim_node *nd = &s->nodes[i];

        nd->sim = s;
        snprintf(nd->id, sizeof(nd->id), "%s-%05zu", s->o->prefix, i);
        if ((rc = mt_auth_token_generate(nd->secret)) < 0)
            return rc;
    }
    if (mt_pb_res_view(&s->arena, &s->o->resources, &s->res, &s->n_res) < 0)
        return -MT_ENOMEM;
    manta__host_usage__init(&s->usage);
    s->usage.mem_total_bytes =
        (uint64_t)(mt_qty_list_get(&s->o->resources, "memory") /
                   MT_QTY_SCALE);
    s->usage.num_cpus_online =
        (uint32_t)(mt_qty_list_get(&s->o->resources, "CPU") / MT_QTY_SCALE);
    return 0;
}

/* Serve WorkerService, open the head's channel, start the ring. */
static int sim_start(struct sim *s)
{
    struct mt_rpc_server_opts so = {0};
    char addr[96];
    int port, rc;

    if ((rc = mt_rpc_channel_create(s->eng, s->o->head_addr, 0,
                                    &s->head)) < 0)
        return rc;
    snprintf(addr, sizeof(addr), "%s:%d", s->o->node_ip, s->o->port);
    so.addr = addr;
    so.handlers = handlers;
    so.n_handlers = sizeof(handlers) / sizeof(handlers[0]);
    so.arg = s;
    if ((rc = mt_rpc_server_start(s->eng, &so, &s->srv, &port)) < 0) {
        MT_ERROR("cannot serve on %s: %s", addr, mt_strerror(rc));
        return rc;
    }
    snprintf(s->address, sizeof(s->address), "%s:%d", s->o->node_ip, port);
    printf("manta-node-sim: %zu nodes serving on %s\n", s->o->n_nodes,
           s->address);
    fflush(stdout);
    s->period_ms = (uint32_t)s->o->report_period_ms;
    uv_timer_init(s->loop, &s->tick);
    s->tick.data = s;
    s->round_start = uv_now(s->loop);
    uv_timer_start(&s->tick, on_tick, 0, SIM_TICK_MS);
    return 0;
}

/* ---- options ------------------------------------------------------------------ */

enum { O_ADDR = 256, O_NODES, O_CPUS, O_MEM, O_RES, O_IP, O_PORT, O_PREFIX,
       O_TMP, O_PERIOD, O_LOG, O_SEC };

static const struct option long_opts[] = {
    {"address", required_argument, NULL, O_ADDR},
    {"nodes", required_argument, NULL, O_NODES},
    {"num-cpus", required_argument, NULL, O_CPUS},
    {"memory", required_argument, NULL, O_MEM},
    {"resources", required_argument, NULL, O_RES},
    {"node-ip", required_argument, NULL, O_IP},
    {"port", required_argument, NULL, O_PORT},
    {"id-prefix", required_argument, NULL, O_PREFIX},
    {"temp-dir", required_argument, NULL, O_TMP},
    {"report-period-ms", required_argument, NULL, O_PERIOD},
    {"log-level", required_argument, NULL, O_LOG},
    {"help", no_argument, NULL, 'h'},
    MT_SECURITY_LONGOPTS(O_SEC),
    {NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: manta-node-sim --address HOST:PORT [options]\n"
        "\n"
        "Register many fake nodes with a manta-head; they report like\n"
        "workers and finish every task at once (bench/README.md).\n"
        "\n"
        "  --address HOST:PORT    the head (required)\n"
        "  --nodes N              how many nodes (default 1000)\n"
        "  --num-cpus Q           each node's CPUs (default 4)\n"
        "  --memory SIZE          each node's memory (default 8GiB)\n"
        "  --resources JSON       more of each node's resources\n"
        "  --node-ip IP           where the nodes serve (default 127.0.0.1)\n"
        "  --port P               their port (default: any)\n"
        "  --id-prefix P          node ids are P-00000... (default sim)\n"
        "  --temp-dir DIR         a session dir holding the token\n"
        "  --report-period-ms MS  until the head sets one (default 1000)\n"
        "  --log-level LEVEL      debug, info, warn, error (default warn)\n"
        MT_SECURITY_USAGE);
}

static int bad(const char *opt, const char *val)
{
    fprintf(stderr, "manta-node-sim: bad --%s '%s'\n", opt, val);
    return MT_EXIT_USAGE;
}

/* A prefix that keeps ids valid (1-64 of [A-Za-z0-9_-]) with room for
 * "-<index>". */
static bool prefix_valid(const char *p)
{
    size_t n = strlen(p);

    if (n == 0 || n > 40)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(p[i] >= 'a' && p[i] <= 'z') && !(p[i] >= 'A' && p[i] <= 'Z') &&
            !(p[i] >= '0' && p[i] <= '9') && p[i] != '_' && p[i] != '-')
            return false;
    return true;
}

/* One option into o. RET 0, or the exit code for a bad one. */
static int take_opt(int c, const char *arg, struct sim_opts *o,
                    struct mt_security_src *src, int *level)
{
    char err[256];
    uint64_t bytes;
    int64_t q;
    long v;

    switch (c) {
    case O_ADDR:
        if (!mt_parse_host_port(arg))
            return bad("address", arg);
        o->head_addr = arg;
        return 0;
    case O_NODES:
        if (!mt_parse_int(arg, 1, SIM_MAX_NODES, &v))
            return bad("nodes", arg);
        o->n_nodes = (size_t)v;
        return 0;
    case O_CPUS:
        if (mt_qty_parse(arg, &q) < 0)
            return bad("num-cpus", arg);
        mt_qty_list_set(&o->resources, "CPU", q);
        return 0;
    case O_MEM:
        if (mt_bytes_parse(arg, &bytes) < 0 || bytes > (1ull << 50))
            return bad("memory", arg);
        mt_qty_list_set(&o->resources, "memory",
                        (int64_t)bytes * MT_QTY_SCALE);
        return 0;
    case O_RES:
        if (mt_qty_parse_json(arg, &o->resources, err, sizeof(err)) < 0)
            return bad("resources", arg);
        return 0;
    case O_IP:
        if (!mt_valid_ipv4(arg))
            return bad("node-ip", arg);
        o->node_ip = arg;
        return 0;
    case O_PORT:
        if (!mt_parse_int(arg, 0, 65535, &v))
            return bad("port", arg);
        o->port = (int)v;
        return 0;
    case O_PREFIX:
        if (!prefix_valid(arg))
            return bad("id-prefix", arg);
        o->prefix = arg;
        return 0;
    case O_TMP:
        o->temp_dir = arg;
        return 0;
    case O_PERIOD:
        if (!mt_parse_int(arg, 10, 600000, &v))
            return bad("report-period-ms", arg);
        o->report_period_ms = (int)v;
        return 0;
    case O_LOG:
        if ((*level = mt_log_parse_level(arg)) < 0)
            return bad("log-level", arg);
        return 0;
    default:
        if (c >= O_SEC && c < O_SEC + MT_SEC_N_OPTS &&
            mt_security_src_set(src, c - O_SEC, arg) == 0)
            return 0;
        usage(stderr);
        return MT_EXIT_USAGE;
    }
}

static int parse_opts(int argc, char **argv, struct sim_opts *o,
                      struct mt_security_src *src, int *level)
{
    int c, rc;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            exit(0);
        }
        if ((rc = take_opt(c, optarg, o, src, level)) != 0)
            return rc;
    }
    if (optind < argc || !o->head_addr) {
        usage(stderr);
        return MT_EXIT_USAGE;
    }
    src->session_dir = o->temp_dir;
    return 0;
}

/* The cluster token, as the worker finds it (auth.h); required unless
 * --auth none. RET 0 or -MT_E*. */
static int load_security(struct sim *s, const struct mt_security_src *src)
{
    struct mt_security sec;
    char err[256] = "";
    int rc = mt_security_load(src, &sec, err, sizeof(err));

    if (rc == 0 && !sec.token && !src->auth_none) {
        snprintf(err, sizeof(err), "no cluster token: give --token-file, "
                 "set MANTA_AUTH_TOKEN, or --auth none");
        rc = -MT_EAUTH;
    }
    if (rc == 0)
        rc = mt_rpc_engine_set_security(s->eng, &sec);
    if (rc < 0)
        fprintf(stderr, "manta-node-sim: %s\n",
                *err ? err : mt_strerror(rc));
    mt_security_free(&sec);
    return rc;
}

static void defaults(struct sim_opts *o)
{
    o->node_ip = "127.0.0.1";
    o->prefix = "sim";
    o->n_nodes = 1000;
    o->report_period_ms = 1000;
    mt_qty_list_set(&o->resources, "CPU", 4 * MT_QTY_SCALE);
    mt_qty_list_set(&o->resources, "memory", (8ll << 30) * MT_QTY_SCALE);
    mt_qty_list_set(&o->resources, "object_store_memory",
                    (1ll << 30) * MT_QTY_SCALE);
}

int main(int argc, char **argv)
{
    static struct sim_opts o;
    static struct sim s;
    struct mt_security_src src = {0};
    struct mt_daemon daemon_;
    int level = MT_LOG_WARN, rc;

    defaults(&o);
    if ((rc = parse_opts(argc, argv, &o, &src, &level)) != 0)
        return rc;
    mt_log_init("node-sim", (enum mt_log_level)level, NULL);
    signal(SIGPIPE, SIG_IGN);
    s.o = &o;
    s.loop = uv_default_loop();
    s.start_ms = mt_now_wall_ms();
    if (gethostname(s.hostname, sizeof(s.hostname)) != 0)
        snprintf(s.hostname, sizeof(s.hostname), "localhost");
    rc = mt_rpc_engine_create(s.loop, &s.eng);
    if (rc == 0 && (rc = load_security(&s, &src)) == 0 &&
        (rc = nodes_init(&s)) == 0)
        rc = sim_start(&s);
    if (rc == 0) {
        mt_daemon_init(&daemon_, s.loop, sim_stop, &s);
        mt_daemon_run(&daemon_);
    }
    mt_rpc_channel_destroy(s.head);
    mt_rpc_engine_destroy(s.eng);
    uv_run(s.loop, UV_RUN_NOWAIT);
    uv_loop_close(s.loop);
    mt_pb_arena_release(&s.arena);
    free(s.nodes);
    while (s.leases)
        lease_free(&s, s.leases);
    mt_qty_list_release(&o.resources);
    return rc < 0 ? 1 : 0;
}
