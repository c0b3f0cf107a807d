/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_list_json.c -- proto/list_json.c: the JSON `manta list --format json`
 * prints, byte for byte (scripts parse it), for each kind; empty listings;
 * escaping; and the resource and label maps it shares with status_json.c.
 */
#include <string.h>

#include "common/strbuf.h"
#include "proto/list_json.h"
#include "proto/status_json.h"
#include "tests/unit/unit.h"

static void check_json(struct mt_strbuf *sb, const char *want)
{
    CU_ASSERT_STRING_EQUAL(mt_strbuf_str(sb), want);
    if (strcmp(mt_strbuf_str(sb), want))
        fprintf(stderr, "\ngot:  %s\nwant: %s\n", mt_strbuf_str(sb), want);
    mt_strbuf_release(sb);
}

static void test_maps(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    Manta__ResourceEntry cpu = MANTA__RESOURCE_ENTRY__INIT;
    Manta__ResourceEntry gpu = MANTA__RESOURCE_ENTRY__INIT;
    Manta__ResourceEntry *res[] = {&cpu, &gpu};
    Manta__Label zone = MANTA__LABEL__INIT, *labels[] = {&zone};
    Manta__NodeInfo n = MANTA__NODE_INFO__INIT;

    cpu.name = "CPU";
    cpu.quantity = 40000;
    gpu.name = "GPU";
    gpu.quantity = 5000;
    zone.key = "zone";
    zone.value = "a\"b";
    mt_status_json_res(&sb, res, 2);
    mt_status_json_res(&sb, NULL, 0);
    check_json(&sb, "{\"CPU\": 4, \"GPU\": 0.5}{}");
    n.resources_total = res;
    n.n_resources_total = 1;
    n.labels = labels;
    n.n_labels = 1;
    mt_status_json_node_res(&sb, &n);
    check_json(&sb, ", \"resources_total\": {\"CPU\": 4}, "
               "\"resources_available\": {}, "
               "\"labels\": {\"zone\": \"a\\\"b\"}");
}

static void test_tasks(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    Manta__ListTasksReply r = MANTA__LIST_TASKS_REPLY__INIT;
    Manta__TaskInfo ti = MANTA__TASK_INFO__INIT, *tp = &ti;
    Manta__TaskSpec s = MANTA__TASK_SPEC__INIT;
    Manta__LabelMatch m = MANTA__LABEL_MATCH__INIT, *mp = &m;
    char *argv[] = {"sh", "-c", "x"}, *vals[] = {"a", "b"};

    check_json(&sb, ""); /* nothing yet */
    mt_list_json_tasks(&sb, &r);
    check_json(&sb, "{\"total\": 0, \"tasks\": []}\n");
    s.task_id = "t0000000000000ab";
    s.name = "job";
    s.argv = argv;
    s.n_argv = 3;
    m.key = "zone";
    m.op = MANTA__LABEL_MATCH__OP__OP_IN;
    m.values = vals;
    m.n_values = 2;
    s.label_selector = &mp;
    s.n_label_selector = 1;
    s.priority = -1;
    s.max_retries = 3;
    s.strategy = MANTA__SCHEDULING_STRATEGY__STRATEGY_SPREAD;
    ti.spec = &s;
    ti.state = MANTA__TASK_STATE__TASK_STATE_FINISHED;
    ti.node_id = "n1";
    ti.gang_id = "g1";
    ti.gang_rank = 2;
    ti.submit_time_ms = 5;
    r.tasks = &tp;
    r.n_tasks = 1;
    r.total = 0; /* an older head: never below what is shown */
    mt_list_json_tasks(&sb, &r);
    check_json(&sb, "{\"total\": 1, \"tasks\": [\n  {\"task_id\": "
               "\"t0000000000000ab\", \"name\": \"job\", \"state\": "
               "\"FINISHED\", \"node_id\": \"n1\", \"attempt\": 0, "
               "\"exit_code\": 0, \"error\": \"\", \"argv\": [\"sh\", "
               "\"-c\", \"x\"], \"resources\": {}, \"label_selector\": "
               "[{\"key\": \"zone\", \"op\": \"in\", \"values\": [\"a\", "
               "\"b\"]}], \"priority\": -1, \"max_retries\": 3, "
               "\"strategy\": \"SPREAD\", \"gang_id\": \"g1\", "
               "\"gang_rank\": 2, \"submit_time_ms\": 5, "
               "\"start_time_ms\": 0, \"end_time_ms\": 0}\n]}\n");
}

static void test_objects_and_pgs(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    Manta__ListObjectsReply r = MANTA__LIST_OBJECTS_REPLY__INIT;
    Manta__ObjectRecord o = MANTA__OBJECT_RECORD__INIT, *op = &o;
    Manta__ListPlacementGroupsReply p =
        MANTA__LIST_PLACEMENT_GROUPS_REPLY__INIT;
    Manta__PlacementGroupInfo g = MANTA__PLACEMENT_GROUP_INFO__INIT;
    Manta__PlacementGroupInfo *gp = &g;
    uint8_t id[20] = {0xab};
    char *nodes[] = {"n1"};

    o.object_id.data = id;
    o.object_id.len = 3; /* not an id: written "?" */
    o.state = MANTA__OBJECT_STATE__OBJECT_STATE_READY;
    o.size = 9;
    o.node_ids = nodes;
    o.n_node_ids = 1;
    o.owner = "put n1";
    r.objects = &op;
    r.n_objects = 1;
    r.total = 4;
    mt_list_json_objects(&sb, &r);
    check_json(&sb, "{\"total\": 4, \"objects\": [\n  {\"object_id\": \"?\", "
               "\"state\": \"READY\", \"size\": 9, \"inline\": false, "
               "\"ref_count\": 0, \"locations\": [\"n1\"], \"owner\": "
               "\"put n1\", \"error\": \"\"}\n]}\n");
    g.pg_id = "p1";
    g.state = MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED;
    g.strategy = MANTA__PLACEMENT_STRATEGY__PLACEMENT_STRICT_SPREAD;
    p.groups = &gp;
    p.n_groups = 1;
    p.total = 1;
    mt_list_json_pgs(&sb, &p);
    check_json(&sb, "{\"total\": 1, \"placement_groups\": [\n  {\"pg_id\": "
               "\"p1\", \"name\": \"\", \"state\": \"CREATED\", "
               "\"strategy\": \"STRICT_SPREAD\", \"bundles\": [], "
               "\"bundle_node_ids\": [], \"error\": \"\", "
               "\"create_time_ms\": 0}\n]}\n");
}

static void test_gangs_and_actors(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    Manta__ListGangsReply r = MANTA__LIST_GANGS_REPLY__INIT;
    Manta__GangInfo g = MANTA__GANG_INFO__INIT, *gp = &g;
    Manta__GangMember m = MANTA__GANG_MEMBER__INIT, *mp = &m;
    Manta__ActorInfo a = MANTA__ACTOR_INFO__INIT;

    g.gang_id = "g1";
    g.state = MANTA__GANG_STATE__GANG_STATE_RUNNING;
    g.launch = MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE;
    g.members = &mp;
    g.n_members = 1;
    m.rank = 1;
    m.task_id = "t";
    m.state = MANTA__TASK_STATE__TASK_STATE_RUNNING;
    r.gangs = &gp;
    r.n_gangs = 1;
    r.total = 2;
    mt_list_json_gangs(&sb, &r); /* one line, unlike the others */
    check_json(&sb, "{\"total\": 2, \"gangs\": [{\"gang_id\": \"g1\", "
               "\"name\": \"\", \"state\": \"RUNNING\", \"tpu_pod_type\": "
               "\"\", \"slices\": 0, \"launch\": \"device\", \"pg_id\": "
               "\"\", \"slice_names\": [], \"attempt\": 0, "
               "\"max_restarts\": 0, \"exit_code\": 0, \"error\": \"\", "
               "\"submit_time_ms\": 0, \"end_time_ms\": 0, \"members\": "
               "[{\"rank\": 1, \"slice\": 0, \"host\": 0, \"local\": 0, "
               "\"task_id\": \"t\", \"node_id\": \"\", \"state\": "
               "\"RUNNING\", \"exit_code\": 0, \"error\": \"\"}]}]}\n");
    a.actor_id = "a1";
    a.state = MANTA__ACTOR_STATE__ACTOR_STATE_DEAD;
    a.detached = true;
    a.death_reason = "killed";
    mt_json_actor(&sb, &a);
    check_json(&sb, "{\"actor_id\": \"a1\", \"name\": \"\", \"state\": "
               "\"DEAD\", \"node_id\": \"\", \"function\": \"\", "
               "\"detached\": true, \"max_restarts\": 0, \"num_restarts\": "
               "0, \"pid\": 0, \"death_reason\": \"killed\", \"owner_id\": "
               "\"\", \"calls_queued\": 0, \"calls_dispatched\": 0, "
               "\"create_time_ms\": 0, \"end_time_ms\": 0}");
}

static void test_nodes(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    Manta__NodeInfo n = MANTA__NODE_INFO__INIT, *np = &n;

    n.node_id = "n1";
    n.state = MANTA__NODE_STATE__NODE_STATE_DEAD;
    n.death_reason = "silent";
    mt_list_json_nodes(&sb, &np, 1, 3); /* total counts matches */
    check_json(&sb, "{\"total\": 3, \"nodes\": [\n  {\"node_id\": \"n1\", "
               "\"state\": \"DEAD\", \"address\": \"\", \"node_ip\": \"\", "
               "\"hostname\": \"\", \"metrics_address\": \"\", "
               "\"resources_total\": {}, "
               "\"resources_available\": {}, \"labels\": {}, "
               "\"start_time_ms\": 0, \"death_reason\": \"silent\", "
               "\"gpus\": []}\n]}\n");
    mt_list_json_nodes(&sb, NULL, 0, 0);
    check_json(&sb, "{\"total\": 0, \"nodes\": []}\n");
}

CU_TestInfo mt_test_list_json[] = {
    {"maps", test_maps},
    {"tasks", test_tasks},
    {"objects_and_pgs", test_objects_and_pgs},
    {"gangs_and_actors", test_gangs_and_actors},
    {"nodes", test_nodes},
    CU_TEST_INFO_NULL,
};
