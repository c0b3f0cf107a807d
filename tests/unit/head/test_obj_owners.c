/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_obj_owners.c -- driver sessions and their object references: the
 * table (head/obj_owners.h) and the directory's rules over it
 * (head/objects.h): a session's puts and held results are dropped when it
 * ends, what tasks or other sessions hold stays, a session that is not
 * open cannot register, and releases take the session's own reference
 * first. Objects name a node no worker link exists for, so freeing them
 * calls nobody.
 */
#include <string.h>

#include "common/error.h"
#include "head/nodes.h"
#include "head/obj_owners.h"
#include "head/objects.h"
#include "tests/unit/unit.h"

static void test_table(void)
{
    struct mt_obj_owners t;
    mt_object_id a = mt_object_id_from_u64(1, 1);
    mt_object_id b = mt_object_id_from_u64(2, 2);
    struct mt_obj_owner *s1, *s2;

    mt_obj_owners_init(&t);
    CU_ASSERT_PTR_NULL(mt_obj_owners_find(&t, "s1"));
    s1 = mt_obj_owners_open(&t, "s1");
    s2 = mt_obj_owners_open(&t, "s2");
    CU_ASSERT_PTR_EQUAL(mt_obj_owners_open(&t, "s1"), s1); /* idempotent */
    CU_ASSERT_EQUAL(t.n, 2);
    mt_obj_owner_ref(s1, &a);
    mt_obj_owner_ref(s1, &a);
    mt_obj_owner_ref(s1, &b);
    CU_ASSERT_EQUAL(mt_obj_owner_count(s1, &a), 2);
    CU_ASSERT_EQUAL(mt_obj_owner_count(s2, &a), 0);
    CU_ASSERT_TRUE(mt_obj_owner_unref(s1, &a));
    CU_ASSERT_TRUE(mt_obj_owner_unref(s1, &a));
    CU_ASSERT_FALSE(mt_obj_owner_unref(s1, &a)); /* holds none now */
    CU_ASSERT_FALSE(mt_obj_owner_unref(s2, &b));
    CU_ASSERT_PTR_EQUAL(mt_obj_owners_take(&t, "s1"), s1);
    CU_ASSERT_PTR_NULL(mt_obj_owners_take(&t, "s1"));
    CU_ASSERT_PTR_NULL(mt_obj_owners_find(&t, "s1"));
    CU_ASSERT_EQUAL(t.n, 1);
    mt_obj_owner_free(s1); /* still holds b */
    mt_obj_owner_free(NULL);
    mt_obj_owners_release(&t); /* frees s2 */
}

/* ---- the directory's rules ----------------------------------------------- */

static struct fixture {
    uv_loop_t loop;
    struct mt_head_nodes *nodes;
    struct mt_head_workers *workers;
    struct mt_task_table tasks;
    struct mt_head_objects *objs;
} f;

static void setup(void)
{
    struct mt_node_table *nodes;

    memset(&f, 0, sizeof(f));
    uv_loop_init(&f.loop);
    f.nodes = mt_head_nodes_create(&f.loop, 3000);
    nodes = mt_head_nodes_table(f.nodes);
    f.workers = mt_head_workers_create(NULL, nodes);
    mt_task_table_init(&f.tasks, 0x1000);
    f.objs = mt_head_objects_create(nodes, f.workers, &f.tasks);
}

static void teardown(void)
{
    mt_head_objects_destroy(f.objs);
    mt_task_table_release(&f.tasks);
    mt_head_workers_destroy(f.workers);
    mt_head_nodes_stop(f.nodes, NULL, NULL);
    uv_run(&f.loop, UV_RUN_NOWAIT);
    mt_head_nodes_destroy(f.nodes);
    CU_ASSERT_EQUAL(uv_loop_close(&f.loop), 0);
}

static struct mt_obj *find(const mt_object_id *id)
{
    return mt_obj_find(mt_head_objects_table(f.objs), id);
}

static void test_session_end_drops_its_puts(void)
{
    mt_object_id a = mt_object_id_from_u64(1, 1);
    mt_object_id b = mt_object_id_from_u64(2, 2);
    mt_object_id c = mt_object_id_from_u64(3, 3);

    setup();
    mt_head_objects_owner_open(f.objs, "s1");
    mt_head_objects_owner_open(f.objs, "s2");
    CU_ASSERT_EQUAL(mt_head_objects_put(f.objs, "n1", &a, 10, "s1"), 0);
    CU_ASSERT_EQUAL(mt_head_objects_put(f.objs, "n1", &b, 10, "s1"), 0);
    CU_ASSERT_EQUAL(mt_head_objects_put(f.objs, "n1", &b, 10, "s2"), 0);
    CU_ASSERT_EQUAL(mt_head_objects_put(f.objs, "n1", &c, 10, ""), 0);
    find(&a)->refs++; /* as a task using it would */
    CU_ASSERT_EQUAL(find(&b)->refs, 2);
    mt_head_objects_owner_gone(f.objs, "s1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(find(&a)); /* the task's */
    CU_ASSERT_EQUAL(find(&a)->refs, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(find(&b)); /* s2's */
    CU_ASSERT_EQUAL(find(&b)->refs, 1);
    CU_ASSERT_PTR_NOT_NULL(find(&c));       /* nobody's session */
    /* An ended session cannot register; an unknown one neither. */
    CU_ASSERT_EQUAL(mt_head_objects_put(f.objs, "n1", &a, 10, "s1"),
                    -MT_ECLOSED);
    CU_ASSERT_EQUAL(find(&a)->refs, 1);
    mt_head_objects_owner_gone(f.objs, "s2");
    mt_head_objects_owner_gone(f.objs, "s2"); /* unknown: fine */
    CU_ASSERT_PTR_NULL(find(&b));
    CU_ASSERT_TRUE(mt_head_objects_release(f.objs, &a, NULL));
    CU_ASSERT_PTR_NULL(find(&a));
    CU_ASSERT_TRUE(mt_head_objects_known(f.objs, &c));
    teardown();
}

static void test_release_takes_the_sessions_own(void)
{
    mt_object_id a = mt_object_id_from_u64(4, 4);

    setup();
    mt_head_objects_owner_open(f.objs, "s1");
    mt_head_objects_owner_open(f.objs, "s2");
    mt_head_objects_put(f.objs, "n1", &a, 10, "s1");
    mt_head_objects_put(f.objs, "n1", &a, 10, "s2");
    /* s1 lets go of its own: s2's ending then frees the object, and s1's
     * ending drops nothing more. */
    CU_ASSERT_TRUE(mt_head_objects_release(f.objs, &a, "s1"));
    CU_ASSERT_EQUAL(find(&a)->refs, 1);
    mt_head_objects_owner_gone(f.objs, "s1");
    CU_ASSERT_EQUAL(find(&a)->refs, 1);
    mt_head_objects_owner_gone(f.objs, "s2");
    CU_ASSERT_PTR_NULL(find(&a));
    CU_ASSERT_FALSE(mt_head_objects_release(f.objs, &a, "s2"));
    teardown();
}

/* A held function task result belongs to the submitter's session, or to
 * nobody when that session has ended. */
static void test_held_results(void)
{
    struct mt_head_task t1, t2;
    mt_object_id r1, r2;
    char why[128];

    setup();
    mt_head_objects_owner_open(f.objs, "s1");
    memset(&t1, 0, sizeof(t1));
    t1.def.kind = MT_TASK_KIND_FUNCTION;
    t1.def.hold_result = true;
    t1.def.owner_id = "s1";
    t2 = t1;
    t2.def.owner_id = "gone";
    strcpy(t1.id, "t000000000000001");
    strcpy(t2.id, "t000000000000002");
    CU_ASSERT_EQUAL(mt_head_objects_admit(f.objs, &t1, why, sizeof(why)), 0);
    CU_ASSERT_EQUAL(mt_head_objects_admit(f.objs, &t2, why, sizeof(why)), 0);
    CU_ASSERT_EQUAL_FATAL(mt_object_id_for_task(t1.id, &r1), 0);
    CU_ASSERT_EQUAL_FATAL(mt_object_id_for_task(t2.id, &r2), 0);
    CU_ASSERT_EQUAL(find(&r1)->refs, 1);
    CU_ASSERT_EQUAL(find(&r2)->refs, 0);
    mt_head_objects_owner_gone(f.objs, "s1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(find(&r1)); /* PENDING: waits for t1 */
    CU_ASSERT_EQUAL(find(&r1)->refs, 0);
    CU_ASSERT_FALSE(mt_obj_freeable(find(&r1)));
    teardown();
}

CU_TestInfo mt_test_obj_owners[] = {
    {"the sessions table", test_table},
    {"a session's end drops its puts, not others' refs",
     test_session_end_drops_its_puts},
    {"a release takes the session's own reference",
     test_release_takes_the_sessions_own},
    {"held results are the submitter's session's", test_held_results},
    CU_TEST_INFO_NULL,
};
