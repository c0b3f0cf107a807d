/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_convert.c -- proto/convert.h: views of plain C defs survive a trip
 * through the wire format and come back equal; malformed messages are
 * refused with a reason; lists keep the entries they should.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "proto/convert.h"
#include "tests/unit/unit.h"

/* Pack m and unpack it again as a TaskSpec (what the peer decodes). */
static Manta__TaskSpec *wire_spec(const Manta__TaskSpec *m)
{
    size_t len = manta__task_spec__get_packed_size(m);
    uint8_t *buf = malloc(len + 1);
    Manta__TaskSpec *out;

    manta__task_spec__pack(m, buf);
    out = manta__task_spec__unpack(NULL, len, buf);
    free(buf);
    return out;
}

static void fill(struct mt_task_def *d)
{
    static const char *argv[] = {"python3", "-c", "print(1)"};
    static const char *zones[] = {"a", "b"};
    struct mt_task_arg args[2];

    memset(args, 0, sizeof(args));
    args[0].data = (uint8_t *)"xyz";
    args[0].len = 3;
    args[1].is_ref = true;
    memset(args[1].ref.b, 9, MT_OBJECT_ID_LEN);
    mt_task_def_init(d);
    d->kind = MT_TASK_KIND_FUNCTION;
    mt_def_set_str(&d->name, "n");
    mt_def_set_str(&d->function, "lib.so:f");
    mt_def_set_strv(&d->argv, &d->argc, argv, 3);
    mt_task_def_set_args(d, args, 2);
    mt_kv_list_put(&d->env, "A", "1");
    mt_kv_list_put(&d->env, "B", "");
    mt_qty_list_put(&d->res, "CPU", 0);
    mt_qty_list_put(&d->res, "GPU", 2500);
    mt_selector_add(&d->sel, "zone", MT_LABEL_NOT_IN, zones, 2, NULL, 0);
    d->priority = -3;
    d->max_retries = 5;
    d->place = MT_PLACE_NODE_AFFINITY;
    mt_def_set_str(&d->affinity_node, "node1");
    d->affinity_soft = true;
    d->hold_result = true;
    mt_def_set_str(&d->owner_id, "me");
    d->max_restarts = -1;
}

static void test_task_round_trip(void)
{
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    struct mt_task_def d, back;
    Manta__TaskSpec view, *got;
    const char *why = NULL;

    fill(&d);
    CU_ASSERT_EQUAL_FATAL(mt_pb_task_spec_view(&a, &d, &view), 0);
    got = wire_spec(&view);
    mt_pb_arena_release(&a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL(got->n_arg_refs, 2);
    CU_ASSERT_EQUAL(got->arg_refs[0].len, 0);
    CU_ASSERT_EQUAL(got->args[1].len, 0);
    mt_task_def_init(&back);
    CU_ASSERT_EQUAL(mt_task_def_from_pb(got, &back, &why), 0);
    manta__task_spec__free_unpacked(got, NULL);
    CU_ASSERT_EQUAL(back.kind, MT_TASK_KIND_FUNCTION);
    CU_ASSERT_STRING_EQUAL(back.name, "n");
    CU_ASSERT_STRING_EQUAL(back.function, "lib.so:f");
    CU_ASSERT_EQUAL(back.argc, 3);
    CU_ASSERT_STRING_EQUAL(back.argv[2], "print(1)");
    CU_ASSERT_EQUAL(back.nargs, 2);
    CU_ASSERT_EQUAL(memcmp(back.args[0].data, "xyz", 3), 0);
    CU_ASSERT_FALSE(back.args[0].is_ref);
    CU_ASSERT_TRUE(back.args[1].is_ref);
    CU_ASSERT_EQUAL(back.args[1].ref.b[0], 9);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&back.env, "B"), "");
    CU_ASSERT_EQUAL(mt_qty_list_get(&back.res, "CPU"), 0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&back.res, "GPU"), 2500);
    CU_ASSERT_EQUAL(back.sel.n, 1);
    CU_ASSERT_EQUAL(back.sel.v[0].op, MT_LABEL_NOT_IN);
    CU_ASSERT_EQUAL(back.priority, -3);
    CU_ASSERT_EQUAL(back.max_retries, 5);
    CU_ASSERT_EQUAL(back.place, MT_PLACE_NODE_AFFINITY);
    CU_ASSERT_STRING_EQUAL(back.affinity_node, "node1");
    CU_ASSERT_TRUE(back.affinity_soft);
    CU_ASSERT_TRUE(back.hold_result);
    CU_ASSERT_STRING_EQUAL(back.owner_id, "me");
    CU_ASSERT_EQUAL(back.max_restarts, -1);
    CU_ASSERT_PTR_NULL(back.cwd); /* "" reads as none */
    mt_task_def_release(&back);
    mt_task_def_release(&d);
}

/* A spec straight from a peer: every field left at its default. */
static void test_task_defaults(void)
{
    Manta__TaskSpec s = MANTA__TASK_SPEC__INIT;
    struct mt_task_def d;

    mt_task_def_init(&d);
    CU_ASSERT_EQUAL(mt_task_def_from_pb(&s, &d, NULL), 0);
    CU_ASSERT_EQUAL(d.kind, MT_TASK_KIND_NONE);
    CU_ASSERT_EQUAL(d.max_retries, -1); /* unset: the default */
    CU_ASSERT_PTR_NULL(d.name);
    CU_ASSERT_PTR_NOT_NULL(mt_task_def_check(&d));
    mt_task_def_release(&d);
    /* Set, 0 means no retries: presence is on the wire (a oneof). */
    s.retries_case = MANTA__TASK_SPEC__RETRIES_MAX_RETRIES;
    s.max_retries = 0;
    mt_task_def_init(&d);
    CU_ASSERT_EQUAL(mt_task_def_from_pb(&s, &d, NULL), 0);
    CU_ASSERT_EQUAL(d.max_retries, 0);
    mt_task_def_release(&d);
}

static void test_task_refused(void)
{
    Manta__TaskSpec s = MANTA__TASK_SPEC__INIT;
    Manta__LabelMatch m = MANTA__LABEL_MATCH__INIT, *mp = &m;
    Manta__ResourceEntry r = MANTA__RESOURCE_ENTRY__INIT, *rp = &r;
    ProtobufCBinaryData args[1] = {{3, (uint8_t *)"abc"}};
    ProtobufCBinaryData refs[1] = {{5, (uint8_t *)"short"}};
    struct mt_task_def d;
    const char *why;

    mt_task_def_init(&d);
    s.kind = (Manta__TaskKind)9;
    CU_ASSERT_EQUAL(mt_task_def_from_pb(&s, &d, &why), -MT_EINVAL);
    s.kind = MANTA__TASK_KIND__TASK_KIND_FUNCTION;
    s.strategy = (Manta__SchedulingStrategy)7;
    CU_ASSERT_EQUAL(mt_task_def_from_pb(&s, &d, &why), -MT_EINVAL);
    s.strategy = 0;
    s.args = args;
    s.n_args = 1;
    s.arg_refs = refs;
    s.n_arg_refs = 1;
    CU_ASSERT_EQUAL(mt_task_def_from_pb(&s, &d, &why), -MT_EINVAL);
    CU_ASSERT_STRING_EQUAL(why, "an object reference must be 20 bytes");
    s.n_arg_refs = 0;
    m.key = (char *)"zone";
    m.op = (Manta__LabelMatch__Op)77;
    s.label_selector = &mp;
    s.n_label_selector = 1;
    CU_ASSERT_EQUAL(mt_task_def_from_pb(&s, &d, &why), -MT_EINVAL);
    CU_ASSERT_STRING_EQUAL(why, "bad label selector expression");
    s.n_label_selector = 0;
    r.name = (char *)"bad name";
    s.resources = &rp;
    s.n_resources = 1;
    CU_ASSERT_EQUAL(mt_task_def_from_pb(&s, &d, &why), -MT_EINVAL);
    r.name = (char *)"CPU";
    r.quantity = -1;
    CU_ASSERT_EQUAL(mt_task_def_from_pb(&s, &d, &why), -MT_EINVAL);
    CU_ASSERT_STRING_EQUAL(why, "negative resource quantity");
    /* Nothing leaks from a refused conversion; the def stays usable. */
    CU_ASSERT_EQUAL(d.nargs, 0);
    mt_task_def_release(&d);
}

static void test_lists(void)
{
    Manta__Label l1 = MANTA__LABEL__INIT, l2 = MANTA__LABEL__INIT;
    Manta__Label *lv[] = {&l1, &l2};
    struct mt_kv_list kv = {0};
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__Label **out;
    size_t n;

    l1.key = (char *)"k";
    l1.value = (char *)"1";
    l2.key = (char *)"k";
    l2.value = (char *)"2";
    CU_ASSERT_EQUAL(mt_kv_from_pb(lv, 2, 1, &kv, NULL), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_kv_from_pb(lv, 2, 8, &kv, NULL), 0);
    CU_ASSERT_EQUAL(kv.n, 1); /* the later value wins */
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&kv, "k"), "2");
    CU_ASSERT_EQUAL(mt_pb_labels_view(&a, &kv, &out, &n), 0);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_EQUAL(out[0]->value, "2");
    mt_pb_arena_release(&a);
    mt_kv_list_release(&kv);
}

static void test_unsets(void)
{
    char *names[] = {(char *)"A", (char *)"B", (char *)"A"};
    struct mt_kv_list kv = {0};

    CU_ASSERT_EQUAL(mt_kv_unset_from_pb(names, 3, 2, &kv, NULL), -MT_EINVAL);
    CU_ASSERT_EQUAL(kv.n, 0);
    CU_ASSERT_EQUAL(mt_kv_unset_from_pb(NULL, 0, 8, &kv, NULL), 0);
    CU_ASSERT_EQUAL(kv.n, 0);
    CU_ASSERT_EQUAL_FATAL(mt_kv_unset_from_pb(names, 3, 8, &kv, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(kv.n, 3); /* in order, duplicates kept */
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_STRING_EQUAL(kv.v[i].key, names[i]);
        CU_ASSERT_PTR_NULL(kv.v[i].value);
    }
    mt_kv_list_release(&kv);
}

static void test_pg_round_trip(void)
{
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__CreatePlacementGroupRequest r, *got;
    struct mt_pg_def p, back;
    struct mt_bundle_def *b;
    const char *why = NULL;
    uint8_t buf[1024];
    size_t len;

    memset(&p, 0, sizeof(p));
    memset(&back, 0, sizeof(back));
    mt_def_set_str(&p.name, "g");
    p.strategy = 3;
    b = mt_pg_def_add_bundle(&p);
    mt_qty_list_put(&b->res, "CPU", 20000);
    mt_selector_add(&b->sel, "zone", MT_LABEL_EXISTS, NULL, 0, NULL, 0);
    mt_pg_def_add_bundle(&p);
    CU_ASSERT_EQUAL_FATAL(mt_pb_pg_request_view(&a, &p, &r), 0);
    len = manta__create_placement_group_request__get_packed_size(&r);
    CU_ASSERT_FATAL(len < sizeof(buf));
    manta__create_placement_group_request__pack(&r, buf);
    mt_pb_arena_release(&a);
    got = manta__create_placement_group_request__unpack(NULL, len, buf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL(mt_pg_def_from_pb(got, &back, &why), 0);
    manta__create_placement_group_request__free_unpacked(got, NULL);
    CU_ASSERT_STRING_EQUAL(back.name, "g");
    CU_ASSERT_EQUAL(back.strategy, 3);
    CU_ASSERT_EQUAL(back.nbundles, 2);
    CU_ASSERT_EQUAL(mt_qty_list_get(&back.bundles[0].res, "CPU"), 20000);
    CU_ASSERT_EQUAL(back.bundles[0].sel.n, 1);
    CU_ASSERT_EQUAL(back.bundles[1].res.n, 0);
    CU_ASSERT_PTR_NULL(back.tpu_pod_type);
    mt_pg_def_release(&back);
    mt_pg_def_release(&p);
}

static void test_gang_round_trip(void)
{
    static const char *argv[] = {"train.py"};
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__SubmitGangRequest r, *got;
    struct mt_gang_def g, back;
    uint8_t buf[1024];
    size_t len;

    memset(&g, 0, sizeof(g));
    memset(&back, 0, sizeof(back));
    mt_task_def_init(&g.member);
    mt_task_def_init(&back.member);
    mt_def_set_str(&g.pod_type, "v4-16");
    g.slices = 2;
    g.device_launch = true;
    g.max_restarts = 3;
    mt_def_set_strv(&g.member.argv, &g.member.argc, argv, 1);
    CU_ASSERT_EQUAL_FATAL(mt_pb_gang_request_view(&a, &g, &r), 0);
    len = manta__submit_gang_request__get_packed_size(&r);
    manta__submit_gang_request__pack(&r, buf);
    mt_pb_arena_release(&a);
    got = manta__submit_gang_request__unpack(NULL, len, buf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL(mt_gang_def_from_pb(got, &back, NULL), 0);
    manta__submit_gang_request__free_unpacked(got, NULL);
    CU_ASSERT_STRING_EQUAL(back.pod_type, "v4-16");
    CU_ASSERT_EQUAL(back.slices, 2);
    CU_ASSERT_TRUE(back.device_launch);
    CU_ASSERT_EQUAL(back.max_restarts, 3);
    CU_ASSERT_STRING_EQUAL(back.member.argv[0], "train.py");
    mt_gang_def_release(&back);
    mt_gang_def_release(&g);
}

/* The arena: zeroed, aligned, non-overlapping pieces, small ones cut from
 * shared chunks, large ones whole; all freed at once (ASan checks it). */
static void test_arena(void)
{
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    unsigned char *p[200];
    unsigned char *big;

    for (int i = 0; i < 200; i++) {
        p[i] = mt_pb_alloc(&a, (size_t)(i % 37));
        CU_ASSERT_PTR_NOT_NULL_FATAL(p[i]);
        CU_ASSERT_EQUAL((uintptr_t)p[i] % _Alignof(max_align_t), 0);
        for (int j = 0; j < i % 37; j++)
            CU_ASSERT_EQUAL(p[i][j], 0);
        memset(p[i], 0xab, (size_t)(i % 37));
    }
    big = mt_pb_alloc(&a, 3 * MT_PB_ARENA_CHUNK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    CU_ASSERT_EQUAL(big[3 * MT_PB_ARENA_CHUNK - 1], 0);
    memset(big, 0xcd, 3 * MT_PB_ARENA_CHUNK);
    /* the chunk being cut is still used after a large piece */
    CU_ASSERT_PTR_NOT_NULL(mt_pb_alloc(&a, 8));
    for (int i = 1; i < 200; i++)
        if (i % 37 > 1)
            CU_ASSERT_EQUAL(p[i][0], 0xab);
    CU_ASSERT_PTR_NULL(mt_pb_alloc(&a, SIZE_MAX - 4));
    mt_pb_arena_release(&a);
    CU_ASSERT_PTR_NULL(a.chunks);
    mt_pb_arena_release(&a);
}

/* A bytes field is an object id only at exactly MT_OBJECT_ID_LEN bytes. */
static void test_object_id(void)
{
    uint8_t raw[MT_OBJECT_ID_LEN + 1];
    ProtobufCBinaryData b = {MT_OBJECT_ID_LEN, raw};
    mt_object_id id;

    for (size_t i = 0; i < sizeof(raw); i++)
        raw[i] = (uint8_t)i;
    CU_ASSERT_EQUAL(mt_pb_object_id(&b, &id), 0);
    CU_ASSERT_EQUAL(memcmp(id.b, raw, MT_OBJECT_ID_LEN), 0);
    memset(&id, 0xee, sizeof(id));
    b.len = MT_OBJECT_ID_LEN + 1;
    CU_ASSERT_EQUAL(mt_pb_object_id(&b, &id), -MT_EINVAL);
    b.len = 0;
    CU_ASSERT_EQUAL(mt_pb_object_id(&b, &id), -MT_EINVAL);
    CU_ASSERT_EQUAL(id.b[0], 0xee); /* untouched when refused */
}

CU_TestInfo mt_test_convert[] = {
    {"object_id", test_object_id},
    {"arena", test_arena},
    {"task_round_trip", test_task_round_trip},
    {"task_defaults", test_task_defaults},
    {"task_refused", test_task_refused},
    {"lists", test_lists},
    {"unsets", test_unsets},
    {"pg_round_trip", test_pg_round_trip},
    {"gang_round_trip", test_gang_round_trip},
    CU_TEST_INFO_NULL,
};
