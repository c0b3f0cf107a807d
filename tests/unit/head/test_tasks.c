/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_tasks.c -- the head's task service with the services below it
 * (scheduling, placement groups, the object directory) and no node: what
 * is refused at submission, cancels, infeasible tasks, arguments passed by
 * reference, and the order in which followers hear of changes. Nothing is
 * placed, so no worker is ever called; the loop only runs decide passes.
 */
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/ids.h"
#include "common/sys.h"
#include "head/leases.h"
#include "head/nodes.h"
#include "head/objects.h"
#include "head/tasks.h"
#include "tests/unit/unit.h"

#define MAX_EVENTS 64

struct event {
    uint64_t num;
    enum mt_head_task_state state;
};

static struct fixture {
    uv_loop_t loop;
    struct mt_head_nodes *nodes;
    struct mt_head_sched *hs;
    struct mt_head_workers *workers;
    struct mt_head_pgs *pgs;
    struct mt_task_table table;
    struct mt_head_objects *objs;
    struct mt_head_tasks *ts;
    struct mt_head_leases *ls;
    struct event ev[MAX_EVENTS];
    size_t n_ev;
} f;

static void record(void *arg, struct mt_head_task *t)
{
    if (f.n_ev < MAX_EVENTS) {
        f.ev[f.n_ev].num = t->num;
        f.ev[f.n_ev++].state = t->state;
    }
}

static const struct mt_task_listener recorder = {.changed = record};

static void setup(void)
{
    struct mt_node_table *nodes;

    memset(&f, 0, sizeof(f));
    uv_loop_init(&f.loop);
    f.nodes = mt_head_nodes_create(&f.loop, 3000);
    nodes = mt_head_nodes_table(f.nodes);
    CU_ASSERT_EQUAL_FATAL(mt_head_sched_create(&f.loop, nodes, &f.hs), 0);
    f.workers = mt_head_workers_create(NULL, nodes);
    f.pgs = mt_head_pgs_create(f.hs, 0x100);
    mt_task_table_init(&f.table, 0x1000);
    f.objs = mt_head_objects_create(nodes, f.workers, &f.table);
    f.ts = mt_head_tasks_create(&f.table, nodes, f.hs, f.workers, f.pgs,
                                f.objs);
    mt_head_tasks_listen(f.ts, &mt_head_objects_task_listener, f.objs);
    mt_head_tasks_listen(f.ts, &recorder, NULL);
    f.ls = mt_head_leases_create(&f.loop, f.ts, f.objs);
}

static void teardown(void)
{
    mt_head_leases_close(f.ls, NULL, NULL);
    uv_run(&f.loop, UV_RUN_NOWAIT);
    mt_head_leases_destroy(f.ls);
    mt_head_tasks_destroy(f.ts);
    mt_task_table_release(&f.table);
    mt_head_objects_destroy(f.objs);
    mt_head_pgs_destroy(f.pgs);
    mt_head_workers_destroy(f.workers);
    mt_head_sched_stop(f.hs, NULL, NULL);
    mt_head_nodes_stop(f.nodes, NULL, NULL);
    uv_run(&f.loop, UV_RUN_NOWAIT);
    mt_head_sched_destroy(f.hs);
    mt_head_nodes_destroy(f.nodes);
    CU_ASSERT_EQUAL(uv_loop_close(&f.loop), 0);
}

/* A def running argv[0] (command) or fn (function) with args. */
static void def_of(struct mt_task_def *d, enum mt_task_kind kind,
                   const char *what)
{
    mt_task_def_init(d);
    d->kind = kind;
    if (kind == MT_TASK_KIND_COMMAND)
        mt_def_set_strv(&d->argv, &d->argc, &what, 1);
    else
        mt_def_set_str(&d->function, what);
}

static struct mt_head_task *submit(struct mt_task_def *d, const char **why,
                                   int *err)
{
    *why = NULL;
    *err = 0;
    return mt_head_tasks_submit(f.ts, d, why, err);
}

static void test_refused(void)
{
    struct mt_task_def d;
    const char *why;
    int err;

    setup();
    def_of(&d, MT_TASK_KIND_COMMAND, "");
    CU_ASSERT_PTR_NULL(submit(&d, &why, &err));
    CU_ASSERT_STRING_EQUAL(why, "argv must name a program");
    CU_ASSERT_EQUAL(err, -MT_EINVAL);
    def_of(&d, MT_TASK_KIND_ACTOR_CREATE, "lib.so:new");
    CU_ASSERT_PTR_NULL(submit(&d, &why, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "actors are created"));
    def_of(&d, MT_TASK_KIND_COMMAND, "true");
    d.place = MT_PLACE_PG;
    mt_def_set_str(&d.pg_id, "p0000000000000ff");
    CU_ASSERT_PTR_NULL(submit(&d, &why, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "no such placement group"));
    CU_ASSERT_EQUAL(err, -MT_EINVAL); /* refused at queueing: a bad request */
    def_of(&d, MT_TASK_KIND_COMMAND, "true");
    d.place = MT_PLACE_NODE_AFFINITY;
    mt_def_set_str(&d.affinity_node, "nowhere");
    CU_ASSERT_PTR_NULL(submit(&d, &why, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "affinity node"));
    /* Soft affinity to a node that is not there runs anywhere (issue 13). */
    def_of(&d, MT_TASK_KIND_COMMAND, "true");
    d.place = MT_PLACE_NODE_AFFINITY;
    d.affinity_soft = true;
    mt_def_set_str(&d.affinity_node, "nowhere");
    CU_ASSERT_PTR_NOT_NULL(submit(&d, &why, &err));
    teardown();
}

static void test_cancel_pending(void)
{
    struct mt_head_task *t;
    struct mt_task_def d;
    const char *why;
    int err;

    setup();
    def_of(&d, MT_TASK_KIND_COMMAND, "true");
    t = submit(&d, &why, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->state, MT_TASK_PENDING);
    CU_ASSERT_EQUAL(t->max_retries, MT_TASK_DEFAULT_RETRIES);
    CU_ASSERT_STRING_EQUAL(t->def.argv[0], "true");
    mt_head_tasks_cancel(f.ts, t, false);
    CU_ASSERT_EQUAL(t->state, MT_TASK_CANCELLED);
    CU_ASSERT_STRING_EQUAL(t->error, "cancelled before it ran");
    CU_ASSERT_EQUAL(f.n_ev, 1);
    CU_ASSERT_EQUAL(f.ev[0].state, MT_TASK_CANCELLED);
    mt_head_tasks_cancel(f.ts, t, true); /* ended: left alone */
    CU_ASSERT_EQUAL(f.n_ev, 1);
    CU_ASSERT_EQUAL(mt_head_tasks_counts(f.ts).finished, 1);
    teardown();
}

/* With no node at all, a decide pass finds the task infeasible. */
static void test_infeasible(void)
{
    struct mt_head_task *t;
    struct mt_task_def d;
    const char *why;
    int err;

    setup();
    def_of(&d, MT_TASK_KIND_COMMAND, "true");
    mt_qty_list_put(&d.res, "GPU", 20000);
    t = submit(&d, &why, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    uv_run(&f.loop, UV_RUN_NOWAIT);
    CU_ASSERT_EQUAL(t->state, MT_TASK_PENDING);
    CU_ASSERT_TRUE(t->infeasible);
    CU_ASSERT_PTR_NOT_NULL(t->error && strstr(t->error, "GPU: 2"));
    CU_ASSERT_EQUAL(f.n_ev, 1);
    teardown();
}

/* A function task waiting for another's result fails when that one is
 * cancelled; the dependent's end is heard first (objects listen first). */
static void test_dependency_failed(void)
{
    struct mt_head_task *producer, *consumer;
    struct mt_task_arg arg;
    struct mt_task_def d;
    const char *why;
    int err;

    setup();
    def_of(&d, MT_TASK_KIND_FUNCTION, "lib.so:make");
    d.hold_result = true;
    producer = submit(&d, &why, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(producer);
    memset(&arg, 0, sizeof(arg));
    arg.is_ref = true;
    CU_ASSERT_EQUAL(mt_object_id_for_task(producer->id, &arg.ref), 0);
    def_of(&d, MT_TASK_KIND_FUNCTION, "lib.so:use");
    mt_task_def_set_args(&d, &arg, 1);
    consumer = submit(&d, &why, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(consumer);
    CU_ASSERT_EQUAL(consumer->state, MT_TASK_WAITING_FOR_ARGS);
    mt_head_tasks_cancel(f.ts, producer, false);
    CU_ASSERT_EQUAL(consumer->state, MT_TASK_FAILED);
    CU_ASSERT_PTR_NOT_NULL(strstr(consumer->error, "dependency failed: task"));
    CU_ASSERT_PTR_NOT_NULL(strstr(consumer->error, "was cancelled"));
    CU_ASSERT_EQUAL_FATAL(f.n_ev, 2);
    CU_ASSERT_EQUAL(f.ev[0].num, consumer->num);
    CU_ASSERT_EQUAL(f.ev[1].num, producer->num);
    teardown();
}

/* A reference to an object nobody put is refused outright. */
static void test_unknown_object(void)
{
    struct mt_task_arg arg;
    struct mt_task_def d;
    const char *why;
    int err;

    setup();
    memset(&arg, 0, sizeof(arg));
    arg.is_ref = true;
    arg.ref = mt_object_id_from_u64(1, 2);
    def_of(&d, MT_TASK_KIND_FUNCTION, "lib.so:use");
    mt_task_def_set_args(&d, &arg, 1);
    CU_ASSERT_PTR_NULL(submit(&d, &why, &err));
    CU_ASSERT_EQUAL(err, -MT_ENOENT);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "unknown to the head"));
    teardown();
}

/* A put whose only copy died cannot be rebuilt, and says so; a task on it
 * fails with that reason (issue 13). */
static void test_lost_put_says_why(void)
{
    mt_object_id id = mt_object_id_from_u64(3, 4);
    struct mt_head_task *t;
    struct mt_task_arg arg;
    struct mt_task_def d;
    struct mt_obj *o;
    const char *why;
    int err;

    setup();
    mt_head_objects_put(f.objs, "n1", &id, 1 << 20, NULL);
    mt_head_objects_node_down(f.objs, "n1");
    o = mt_obj_find(mt_head_objects_table(f.objs), &id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_EQUAL(o->state, MT_OBJ_LOST);
    CU_ASSERT_PTR_NOT_NULL(strstr(o->error, "object lost"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o->error, "a put object cannot be rebuilt"));
    memset(&arg, 0, sizeof(arg));
    arg.is_ref = true;
    arg.ref = id;
    def_of(&d, MT_TASK_KIND_FUNCTION, "lib.so:use");
    mt_task_def_set_args(&d, &arg, 1);
    t = submit(&d, &why, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->state, MT_TASK_FAILED);
    CU_ASSERT_PTR_NOT_NULL(strstr(t->error, "put object cannot be rebuilt"));
    teardown();
}

/* ---- leases (leases.h) ---- */

/* A lease of owner held on node n1 since start_ms, priority prio. */
static struct mt_head_task *held_lease(const char *owner, int prio,
                                       int64_t start_ms)
{
    struct mt_head_task *t;
    struct mt_task_def d;

    mt_task_def_init(&d);
    d.kind = MT_TASK_KIND_LEASE;
    d.priority = prio;
    mt_def_set_str(&d.owner_id, owner);
    d.max_retries = 0;
    CU_ASSERT_PTR_NULL(mt_task_def_check(&d));
    t = mt_head_tasks_add(f.ts, &d, 0);
    mt_head_task_set_node(t, "n1");
    t->state = MT_TASK_RUNNING;
    t->start_ms = start_ms;
    return t;
}

/* A pushed task's final report on lease `lease`, with a driver's id. */
static void leased(struct mt_leased_update *lu, char id[17], uint64_t n,
                   const char *lease, enum mt_head_task_state st,
                   uint32_t attempt)
{
    memset(lu, 0, sizeof(*lu));
    mt_num_id(MT_ID_TASK, MT_NUM_ID_DRIVER_BIT | n, id);
    lu->u.task_id = id;
    lu->u.attempt = attempt;
    lu->u.state = st;
    lu->u.error = "";
    lu->lease_id = lease;
    lu->name = "noop";
    lu->function = "lib.so:noop";
    lu->hold_result = true;
    lu->max_retries = 3;
}

/* A finished pushed task is filed as a function task of the lease's
 * owner: FINISHED on the lease's node, its inline result in the
 * directory; what does not come from the lease's node, names no lease,
 * or carries a number the head counts itself is ignored. */
static void test_leased_filed(void)
{
    struct mt_head_task *l, *t;
    struct mt_leased_update lu;
    mt_object_id oid;
    struct mt_obj *o;
    char id[17], bad[17];

    setup();
    l = held_lease("s1", 0, mt_now_wall_ms());
    leased(&lu, id, 7, l->id, MT_TASK_FINISHED, 0);
    lu.u.result = (const uint8_t *)"42";
    lu.u.result_len = 2;
    CU_ASSERT_PTR_NULL(mt_head_leases_file(f.ls, "n2", &lu));
    lu.lease_id = "t0000000000000001";
    CU_ASSERT_PTR_NULL(mt_head_leases_file(f.ls, "n1", &lu));
    lu.lease_id = l->id;
    mt_num_id(MT_ID_TASK, 7, bad);
    lu.u.task_id = bad;
    CU_ASSERT_PTR_NULL(mt_head_leases_file(f.ls, "n1", &lu));
    lu.u.task_id = id;
    t = mt_head_leases_file(f.ls, "n1", &lu);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(t->leased);
    CU_ASSERT_EQUAL(t->state, MT_TASK_FINISHED);
    CU_ASSERT_STRING_EQUAL(t->id, id);
    CU_ASSERT_STRING_EQUAL(t->node_id, "n1");
    CU_ASSERT_STRING_EQUAL(t->def.owner_id, "s1");
    CU_ASSERT_EQUAL(t->result_len, 2);
    CU_ASSERT_EQUAL(mt_object_id_for_task(id, &oid), 0);
    o = mt_obj_find(mt_head_objects_table(f.objs), &oid);
    CU_ASSERT_TRUE(!o || o->state == MT_OBJ_READY); /* s1 is not open */
    CU_ASSERT_PTR_NULL(mt_head_leases_file(f.ls, "n1", &lu)); /* again */
    CU_ASSERT_EQUAL(mt_head_tasks_counts(f.ts).finished, 1);
    teardown();
}

/* A system failure below max_retries waits for the driver's next
 * attempt; the failure at the last attempt is final. */
static void test_leased_retry(void)
{
    struct mt_head_task *l, *t;
    struct mt_leased_update lu;
    char id[17];

    setup();
    l = held_lease("s1", 0, mt_now_wall_ms());
    leased(&lu, id, 9, l->id, MT_TASK_FAILED, 0);
    lu.u.system_failure = true;
    lu.u.error = "executor died";
    t = mt_head_leases_file(f.ls, "n1", &lu);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->state, MT_TASK_PENDING);
    CU_ASSERT_PTR_NOT_NULL(strstr(t->error, "tries again"));
    lu.u.attempt = 3;
    CU_ASSERT_PTR_NOT_NULL(mt_head_leases_file(f.ls, "n1", &lu));
    CU_ASSERT_EQUAL(t->state, MT_TASK_FAILED);
    CU_ASSERT_EQUAL(t->attempt, 3);
    CU_ASSERT_STRING_EQUAL(t->error, "executor died");
    teardown();
}

/* Run the loop long enough for one revocation check. */
static void one_check(void)
{
    int64_t until = mt_now_mono_ms() + MT_LEASE_CHECK_MS + 100;

    while (mt_now_mono_ms() < until)
        uv_run(&f.loop, UV_RUN_ONCE);
}

/* A lease held long is revoked while another owner's work of its
 * priority or above waits; its own requests for more leases, lower
 * priority work, and a lease held briefly are left alone. */
static void test_lease_revoked(void)
{
    int64_t old = mt_now_wall_ms() - 2 * MT_LEASE_HOLD_MS;
    struct mt_head_task *l1, *l2, *mine, *other;
    struct mt_task_def d;
    const char *why;

    setup();
    l1 = held_lease("s1", 5, old);
    l2 = held_lease("s1", 5, mt_now_wall_ms() + 60000); /* just granted */
    mine = held_lease("s1", 5, 0);
    mine->state = MT_TASK_PENDING; /* s1 asks for one more */
    mt_head_task_set_node(mine, NULL);
    def_of(&d, MT_TASK_KIND_COMMAND, "true");
    d.priority = 1;
    other = mt_head_tasks_add(f.ts, &d, -1); /* lower: waits */
    one_check();
    CU_ASSERT_FALSE(l1->cancel_requested);
    other->def.priority = 5;
    one_check();
    CU_ASSERT_TRUE(l1->cancel_requested);
    CU_ASSERT_FALSE(l2->cancel_requested);
    CU_ASSERT_FALSE(mine->cancel_requested);
    (void)why;
    teardown();
}

/* A task named by its driver: submitted again, it is the same task; the
 * id of another owner, or a number the head counts, is refused. */
static void test_submit_as(void)
{
    struct mt_head_task *t, *again;
    struct mt_task_def d;
    char id[MT_NUM_ID_LEN + 1];
    const char *why = NULL;
    int err = 0;

    setup();
    mt_num_id(MT_ID_TASK, MT_NUM_ID_DRIVER_BIT | 0x42, id);
    def_of(&d, MT_TASK_KIND_COMMAND, "true");
    mt_def_set_str(&d.owner_id, "session-a");
    t = mt_head_tasks_submit_as(f.ts, id, &d, &why, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(t->id, id);
    def_of(&d, MT_TASK_KIND_COMMAND, "true");
    mt_def_set_str(&d.owner_id, "session-a");
    again = mt_head_tasks_submit_as(f.ts, id, &d, &why, &err);
    CU_ASSERT_PTR_EQUAL(again, t);
    CU_ASSERT_EQUAL(f.table.n, 1); /* not a second task */
    def_of(&d, MT_TASK_KIND_COMMAND, "true");
    mt_def_set_str(&d.owner_id, "session-b");
    CU_ASSERT_PTR_NULL(mt_head_tasks_submit_as(f.ts, id, &d, &why, &err));
    CU_ASSERT_EQUAL(err, -MT_EEXIST);
    def_of(&d, MT_TASK_KIND_COMMAND, "true");
    CU_ASSERT_PTR_NULL(mt_head_tasks_submit_as(f.ts, "t000000000000042",
                                               &d, &why, &err));
    CU_ASSERT_EQUAL(err, -MT_EINVAL);
    teardown();
}

CU_TestInfo mt_test_tasks[] = {
    {"submit_as", test_submit_as},
    {"leased_filed", test_leased_filed},
    {"leased_retry", test_leased_retry},
    {"lease_revoked", test_lease_revoked},
    {"refused", test_refused},
    {"cancel_pending", test_cancel_pending},
    {"infeasible", test_infeasible},
    {"dependency_failed", test_dependency_failed},
    {"unknown_object", test_unknown_object},
    {"lost_put_says_why", test_lost_put_says_why},
    CU_TEST_INFO_NULL,
};
