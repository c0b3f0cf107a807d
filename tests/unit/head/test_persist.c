/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_persist.c -- what a head writes to its storage and a second head
 * reads back (head/persist.h): a head on file storage in a mkdtemp(3)
 * folder, with no node, gets a pending command task, a cancelled one, a
 * driver's put object and a function task holding it as an argument, and
 * a placement group (pending: no node). It is stopped; a second head on
 * the same file knows each of them as it was, keeps the cluster id and
 * never hands out a number again; likewise a gang waiting for slices.
 * The real restart, with workers, is tests/integration/test_recovery.py
 * (and test_recovery_gangs.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/ids.h"
#include "common/qty.h"
#include "common/sys.h"
#include "head/head.h"
#include "head/head_int.h"
#include "tests/unit/unit.h"

static char dir[64];
static char spec[128];

static struct mt_head *start(uv_loop_t *loop)
{
    struct mt_head_config cfg = {
        .bind_addr = "127.0.0.1:0", .node_ip = "127.0.0.1", .storage = spec,
        .report_period_ms = 1000, .node_timeout_ms = 3000, .grace_ms = 100,
        .dashboard_port = -1};
    struct mt_head *h = NULL;

    CU_ASSERT_EQUAL_FATAL(mt_head_start(loop, &cfg, &h), 0);
    return h;
}

static void on_stopped(void *arg)
{
    *(bool *)arg = true;
}

static void stop(uv_loop_t *loop, struct mt_head *h)
{
    bool done = false;

    mt_head_stop(h, on_stopped, &done);
    while (!done)
        uv_run(loop, UV_RUN_ONCE);
    mt_head_destroy(h);
    uv_run(loop, UV_RUN_DEFAULT); /* the storage's last sync and close */
}

static struct mt_head_task *submit(struct mt_head *h, struct mt_task_def *d)
{
    const char *why = NULL;
    int err = 0;
    struct mt_head_task *t = mt_head_tasks_submit(h->tasks, d, &why, &err);

    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

static void command(struct mt_task_def *d, const char *prog)
{
    mt_task_def_init(d);
    d->kind = MT_TASK_KIND_COMMAND;
    mt_def_set_strv(&d->argv, &d->argc, &prog, 1);
}

static void test_round_trip(void)
{
    uv_loop_t loop;
    struct mt_head *h;
    struct mt_task_def d;
    struct mt_pg_def pg;
    struct mt_bundle_def b;
    struct mt_head_task *t;
    struct mt_obj *o;
    struct mt_obj_owner *s;
    mt_object_id oid;
    char pending[17], cancelled[17], fn[17], pgid[17], cluster[33];
    uint64_t next;
    const char *why;
    int err;

    snprintf(dir, sizeof(dir), "/tmp/mt-persist-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(spec, sizeof(spec), "file://%s/head.state", dir);
    uv_loop_init(&loop);
    h = start(&loop);
    memcpy(cluster, h->cluster_id, sizeof(cluster));

    command(&d, "sleep");
    memcpy(pending, submit(h, &d)->id, 17);
    command(&d, "true");
    t = submit(h, &d);
    memcpy(cancelled, t->id, 17);
    mt_head_tasks_cancel(h->tasks, t, false);
    /* A driver's put, and a function task holding it. */
    memset(&oid, 7, sizeof(oid));
    mt_head_objects_owner_open(h->objects, "driver-1");
    CU_ASSERT_EQUAL(mt_head_objects_put(h->objects, "node-x", &oid, 100,
                                        "driver-1"), 0);
    mt_task_def_init(&d);
    d.kind = MT_TASK_KIND_FUNCTION;
    mt_def_set_str(&d.function, "libf.so:f");
    d.args = calloc(1, sizeof(*d.args));
    d.nargs = 1;
    d.args[0].is_ref = true;
    d.args[0].ref = oid;
    memcpy(fn, submit(h, &d)->id, 17);
    /* A group no node can hold yet. */
    memset(&pg, 0, sizeof(pg));
    memset(&b, 0, sizeof(b));
    mt_qty_list_set(&b.res, "CPU", 2 * MT_QTY_SCALE);
    pg.bundles = calloc(1, sizeof(b));
    pg.bundles[0] = b;
    pg.nbundles = 1;
    CU_ASSERT_PTR_NOT_NULL_FATAL(mt_head_pg_create(h->pgs, &pg, NULL, &why,
                                                   &err));
    memcpy(pgid, mt_head_pgs_at(h->pgs, 0)->id, 17);
    next = h->task_table.next_num;
    uv_run(&loop, UV_RUN_NOWAIT); /* the turn's writes */
    stop(&loop, h);

    h = start(&loop);
    CU_ASSERT_STRING_EQUAL(h->cluster_id, cluster);
    CU_ASSERT(h->task_table.next_num > next);
    t = mt_task_table_find_id(&h->task_table, pending);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->state, MT_TASK_PENDING);
    CU_ASSERT_STRING_EQUAL(t->def.argv[0], "sleep");
    t = mt_task_table_find_id(&h->task_table, cancelled);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->state, MT_TASK_CANCELLED);
    t = mt_task_table_find_id(&h->task_table, fn);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->state, MT_TASK_PENDING);
    CU_ASSERT_FATAL(t->deps && t->deps->n == 1);
    CU_ASSERT_EQUAL(memcmp(&t->deps->ids[0], &oid, sizeof(oid)), 0);
    o = mt_obj_find(mt_head_objects_table(h->objects), &oid);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_EQUAL(o->refs, 2); /* the driver's and the task's */
    CU_ASSERT_EQUAL(o->size, 100);
    CU_ASSERT(mt_obj_has_node(o, "node-x"));
    s = mt_obj_owners_find(mt_head_objects_owners(h->objects), "driver-1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(mt_obj_owner_count(s, &oid), 1);
    CU_ASSERT_PTR_NOT_NULL(mt_head_pg_find(h->pgs, pgid));
    stop(&loop, h);
    CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
    {
        char cmd[160];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        CU_ASSERT_EQUAL(system(cmd), 0);
    }
}

/* A gang waiting for slices (no node) comes back as it was: same id,
 * group and ports, which no new gang is given. */
static void test_gang_round_trip(void)
{
    uv_loop_t loop;
    struct mt_head *h;
    struct mt_gang_def gd;
    struct mt_gang *g;
    char gid[17];
    uint64_t pg;
    uint16_t ports[2];
    const char *why = NULL;
    int err = 0;

    snprintf(dir, sizeof(dir), "/tmp/mt-persist-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(spec, sizeof(spec), "file://%s/head.state", dir);
    uv_loop_init(&loop);
    h = start(&loop);
    memset(&gd, 0, sizeof(gd));
    command(&gd.member, "sleep");
    gd.pod_type = strdup("v4-16");
    g = mt_head_gang_submit(h->gangs, &gd, &why, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->state, MT_HEAD_GANG_PENDING);
    CU_ASSERT_EQUAL_FATAL(g->nports, 2);
    memcpy(gid, g->id, sizeof(gid));
    memcpy(ports, g->ports, sizeof(ports));
    pg = g->pg;
    uv_run(&loop, UV_RUN_NOWAIT); /* the turn's writes */
    stop(&loop, h);

    h = start(&loop);
    g = mt_head_gang_find(h->gangs, gid);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->state, MT_HEAD_GANG_PENDING);
    CU_ASSERT_EQUAL(g->pg, pg);
    CU_ASSERT_EQUAL(g->n, 2);
    CU_ASSERT_STRING_EQUAL(g->def.pod_type, "v4-16");
    CU_ASSERT_STRING_EQUAL(g->def.member.argv[0], "sleep");
    CU_ASSERT(g->nports == 2 && g->ports[0] == ports[0] &&
              g->ports[1] == ports[1]);
    CU_ASSERT(mt_head_gangs_own_pg(h->gangs, pg));
    CU_ASSERT_PTR_NOT_NULL(mt_head_pg_find_num(h->pgs, pg));
    memset(&gd, 0, sizeof(gd));
    command(&gd.member, "true");
    gd.pod_type = strdup("v4-16");
    g = mt_head_gang_submit(h->gangs, &gd, &why, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_STRING_NOT_EQUAL(g->id, gid);
    CU_ASSERT(g->ports[0] != ports[0] && g->ports[0] != ports[1] &&
              g->ports[1] != ports[0] && g->ports[1] != ports[1]);
    stop(&loop, h);
    CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
    {
        char cmd[160];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        CU_ASSERT_EQUAL(system(cmd), 0);
    }
}

CU_TestInfo mt_test_persist[] = {
    {"round_trip", test_round_trip},
    {"gang_round_trip", test_gang_round_trip},
    CU_TEST_INFO_NULL,
};
