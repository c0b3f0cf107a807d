/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seeds_head.c -- seeds of the head's harnesses (fuzz_head_*.c): requests
 * built from plain C defs with proto/convert.h's views, as the SDK sends
 * them, and node reports as a worker sends them.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/convert.h"
#include "tests/fuzz/seeds.h"

static void command_def(struct mt_task_def *d)
{
    const char *argv[] = {"/bin/echo", "hello"};

    mt_task_def_init(d);
    d->kind = MT_TASK_KIND_COMMAND;
    mt_def_set_str(&d->name, "echo");
    mt_def_set_strv(&d->argv, &d->argc, argv, 2);
    mt_kv_list_set(&d->env, "A", "1");
    mt_qty_list_set(&d->res, "CPU", 10000);
    mt_qty_list_set(&d->res, "GPU", 5000);
    mt_selector_parse("zone in (a|b),!spot", &d->sel, NULL, 0);
    d->priority = 2;
}

static void function_def(struct mt_task_def *d)
{
    struct mt_task_arg args[2] = {{(uint8_t *)"xy", 2, false, {{0}}},
                                  {NULL, 0, true, {{1, 2, 3}}}};

    mt_task_def_init(d);
    d->kind = MT_TASK_KIND_FUNCTION;
    mt_def_set_str(&d->function, "libfn.so:add");
    mt_task_def_set_args(d, args, 2);
    d->place = MT_PLACE_NODE_AFFINITY;
    mt_def_set_str(&d->affinity_node, "node-1");
    d->affinity_soft = true;
}

static void actor_def(struct mt_task_def *d)
{
    mt_task_def_init(d);
    d->kind = MT_TASK_KIND_ACTOR_CREATE;
    mt_def_set_str(&d->function, "libactor.so:counter_new");
    mt_def_set_str(&d->actor_name, "counter");
    d->max_restarts = -1;
}

static void task_seeds(void)
{
    void (*make[])(struct mt_task_def *) = {command_def, function_def,
                                            actor_def};
    const char *names[] = {"command", "function", "actor"};
    Manta__TaskSpec specs[3], *sp[3];
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__SubmitTasksRequest batch = MANTA__SUBMIT_TASKS_REQUEST__INIT;
    uint64_t tags[3] = {1, 2, 3};
    protobuf_c_boolean out[3] = {1, 0, 1};
    struct mt_task_def d[3];

    for (int i = 0; i < 3; i++) {
        Manta__SubmitTaskRequest r = MANTA__SUBMIT_TASK_REQUEST__INIT;

        make[i](&d[i]);
        mt_pb_task_spec_view(&a, &d[i], &specs[i]);
        sp[i] = &specs[i];
        r.spec = &specs[i];
        MT_SEED_PACK("head_task", names[i], manta__submit_task_request, &r);
    }
    batch.watcher_id = "w1";
    batch.n_specs = batch.n_tags = batch.n_output = 2;
    batch.specs = sp;
    batch.tags = tags;
    batch.output = out;
    MT_SEED_PACK("head_batch", "two", manta__submit_tasks_request, &batch);
    batch.n_output = 1;
    MT_SEED_PACK("head_batch", "short-output", manta__submit_tasks_request, &batch);
    for (int i = 0; i < 3; i++)
        mt_task_def_release(&d[i]);
    mt_pb_arena_release(&a);
}

static void pg_seeds(void)
{
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__CreatePlacementGroupRequest r;
    struct mt_pg_def p;
    struct mt_bundle_def *b;

    memset(&p, 0, sizeof(p));
    mt_def_set_str(&p.name, "pg");
    p.strategy = 3;
    for (int i = 0; i < 2; i++) {
        b = mt_pg_def_add_bundle(&p);
        mt_qty_list_set(&b->res, "CPU", 20000);
        mt_qty_list_set(&b->res, "GPU", 10000);
        mt_selector_parse("zone=a", &b->sel, NULL, 0);
    }
    mt_pb_pg_request_view(&a, &p, &r);
    MT_SEED_PACK("head_pg", "bundles", manta__create_placement_group_request, &r);
    mt_pg_def_release(&p);
    mt_pb_arena_release(&a);
    memset(&p, 0, sizeof(p));
    mt_def_set_str(&p.tpu_pod_type, "v4-16");
    mt_def_set_str(&p.tpu_topology, "2x2x2");
    p.tpu_slices = 2;
    mt_pb_pg_request_view(&a, &p, &r);
    MT_SEED_PACK("head_pg", "slices", manta__create_placement_group_request, &r);
    mt_pg_def_release(&p);
    mt_pb_arena_release(&a);
}

static void gang_seeds(void)
{
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    const char *argv[] = {"python3", "train.py"};
    Manta__SubmitGangRequest r;
    struct mt_gang_def g;

    memset(&g, 0, sizeof(g));
    mt_task_def_init(&g.member);
    mt_def_set_str(&g.name, "train");
    mt_def_set_str(&g.pod_type, "v6e-16");
    g.slices = 2;
    g.max_restarts = 1;
    mt_def_set_strv(&g.member.argv, &g.member.argc, argv, 2);
    mt_qty_list_set(&g.member.res, "CPU", 10000);
    mt_pb_gang_request_view(&a, &g, &r);
    MT_SEED_PACK("head_gang", "v6e", manta__submit_gang_request, &r);
    mt_def_set_str(&g.pod_type, "v5p-8");
    mt_def_set_str(&g.topology, "2x2x1");
    g.device_launch = true;
    mt_pb_gang_request_view(&a, &g, &r);
    MT_SEED_PACK("head_gang", "v5p-device", manta__submit_gang_request, &r);
    mt_gang_def_release(&g);
    mt_pb_arena_release(&a);
}

static void node_seeds(void)
{
    Manta__ResourceEntry cpu = MANTA__RESOURCE_ENTRY__INIT;
    Manta__ResourceEntry gpu = MANTA__RESOURCE_ENTRY__INIT;
    Manta__ResourceEntry *res[] = {&cpu, &gpu};
    Manta__Label zone = MANTA__LABEL__INIT;
    Manta__Label *labels[] = {&zone};
    Manta__GpuStats g0 = MANTA__GPU_STATS__INIT;
    Manta__GpuStats *gpus[] = {&g0};
    Manta__HostUsage usage = MANTA__HOST_USAGE__INIT;
    Manta__NodeInfo ni = MANTA__NODE_INFO__INIT;
    Manta__RegisterNodeRequest reg = MANTA__REGISTER_NODE_REQUEST__INIT;
    Manta__ReportNodeRequest rep = MANTA__REPORT_NODE_REQUEST__INIT;

    cpu.name = "CPU";
    cpu.quantity = 80000;
    gpu.name = "GPU";
    gpu.quantity = 10000;
    zone.key = "zone";
    zone.value = "a";
    g0.index = 0;
    g0.id = "0";
    g0.name = "NVIDIA H200";
    g0.uuid = "GPU-1234";
    g0.memory_total_bytes = 1ll << 37;
    g0.memory_used_bytes = 1 << 20;
    g0.utilization_percent = 42;
    usage.cpu_percent = 12.5;
    usage.mem_total_bytes = 1ull << 34;
    usage.num_cpus_online = 8;
    usage.n_gpus = 1;
    usage.gpus = gpus;
    ni.node_id = "node-1";
    ni.address = "10.0.0.2:7000";
    ni.node_ip = "10.0.0.2";
    ni.hostname = "host2";
    ni.temp_dir = "/tmp/manta/session";
    ni.version = "0.1";
    ni.n_resources_total = 2;
    ni.resources_total = res;
    ni.n_labels = 1;
    ni.labels = labels;
    ni.usage = &usage;
    ni.pid = 1234;
    reg.node = &ni;
    MT_SEED_PACK("head_register", "node", manta__register_node_request, &reg);
    MT_SEED_PACK("head_register", "saved-row", manta__node_info, &ni);
    ni.address = "no-port";
    MT_SEED_PACK("head_register", "bad-address", manta__register_node_request, &reg);
    rep.node_id = "node-1";
    rep.seqno = 7;
    rep.n_resources_available = 2;
    rep.resources_available = res;
    rep.usage = &usage;
    MT_SEED_PACK("head_report", "report", manta__report_node_request, &rep);
    g0.utilization_percent = -1;
    g0.index = -1;
    MT_SEED_PACK("head_report", "mig", manta__report_node_request, &rep);
}

void mt_seeds_head(void)
{
    task_seeds();
    pg_seeds();
    gang_seeds();
    node_seeds();
}
