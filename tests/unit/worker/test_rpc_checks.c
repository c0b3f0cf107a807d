/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_rpc_checks.c -- worker/rpc_checks.h: a RunTask request copied into
 * a run spec, and refused whole when an object argument is wrong (the
 * leak tests/fuzz/fuzz_worker_run.c found: what was copied before the
 * refusal was never freed; ASan and valgrind runs see it).
 */
#include <string.h>

#include "common/error.h"
#include "tests/unit/unit.h"
#include "worker/exec_proto.h"
#include "worker/rpc_checks.h"

static uint8_t oid[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                          11, 12, 13, 14, 15, 16, 17, 18, 19, 20};

static void fill(Manta__TaskSpec *spec, Manta__RunTaskRequest *r,
                 Manta__ObjectArg *oa, Manta__ObjectArg **oas,
                 ProtobufCBinaryData *args, ProtobufCBinaryData *refs)
{
    static char *argv[] = {"x"};

    manta__task_spec__init(spec);
    manta__run_task_request__init(r);
    manta__object_arg__init(oa);
    spec->task_id = "t1";
    spec->kind = MANTA__TASK_KIND__TASK_KIND_FUNCTION;
    spec->function = "libfn.so:add";
    spec->n_argv = 1;
    spec->argv = argv;
    args[0].len = 2;
    args[0].data = (uint8_t *)"xy";
    args[1].len = 0;
    args[1].data = NULL;
    refs[0].len = 0;
    refs[0].data = NULL;
    refs[1].len = 20;
    refs[1].data = oid;
    spec->n_args = spec->n_arg_refs = 2;
    spec->args = args;
    spec->arg_refs = refs;
    oa->index = 1;
    oa->object_id.len = 20;
    oa->object_id.data = oid;
    oas[0] = oa;
    r->spec = spec;
    r->n_object_args = 1;
    r->object_args = oas;
}

static void test_run_spec_from_pb(void)
{
    ProtobufCBinaryData args[2], refs[2];
    Manta__ObjectArg oa, *oas[1];
    Manta__RunTaskRequest r;
    Manta__TaskSpec spec;
    struct mt_run_spec s;

    fill(&spec, &r, &oa, oas, args, refs);
    CU_ASSERT_PTR_NULL(mt_worker_run_spec_from_pb(&r, &s));
    CU_ASSERT_STRING_EQUAL(s.task_id, "t1");
    CU_ASSERT_EQUAL(s.nargs, 2);
    CU_ASSERT_EQUAL(s.nrefs, 1);
    mt_run_spec_release(&s);
}

static void test_run_spec_bad_ref_frees(void)
{
    ProtobufCBinaryData args[2], refs[2];
    Manta__ObjectArg oa, *oas[1];
    Manta__RunTaskRequest r;
    Manta__TaskSpec spec;
    struct mt_run_spec s;

    fill(&spec, &r, &oa, oas, args, refs);
    oa.index = 0; /* arg_refs[0] is empty: does not match */
    CU_ASSERT_PTR_NOT_NULL(mt_worker_run_spec_from_pb(&r, &s));
    CU_ASSERT_PTR_NULL(s.task_id);
    CU_ASSERT_PTR_NULL(s.argv);
    CU_ASSERT_PTR_NULL(s.args);
    CU_ASSERT_PTR_NULL(s.refs);
}

static void test_lease_spec_from_pb(void)
{
    ProtobufCBinaryData args[2], refs[2];
    Manta__ObjectArg oa, *oas[1];
    Manta__RunTaskRequest r;
    Manta__TaskSpec spec;
    struct mt_run_spec s;
    char err[256];

    fill(&spec, &r, &oa, oas, args, refs);
    spec.kind = MANTA__TASK_KIND__TASK_KIND_LEASE;
    spec.task_id = "t00000000000000a";
    spec.n_args = spec.n_arg_refs = 0;
    r.n_object_args = 0;
    CU_ASSERT_PTR_NULL_FATAL(mt_worker_run_spec_from_pb(&r, &s));
    CU_ASSERT_EQUAL(s.kind, MT_RUN_KIND_LEASE);
    CU_ASSERT_PTR_NULL(s.owner_id);
    CU_ASSERT_EQUAL(mt_run_spec_check(&s, err, sizeof(err)), -MT_EINVAL);
    mt_run_spec_release(&s);
    spec.owner_id = "session-1";
    CU_ASSERT_PTR_NULL_FATAL(mt_worker_run_spec_from_pb(&r, &s));
    CU_ASSERT_STRING_EQUAL(s.owner_id, "session-1");
    CU_ASSERT_EQUAL(mt_run_spec_check(&s, err, sizeof(err)), 0);
    mt_run_spec_release(&s);
}

static void test_push_tasks_check(void)
{
    Manta__PushTasksRequest r = MANTA__PUSH_TASKS_REQUEST__INIT;
    Manta__PushedTask t = MANTA__PUSHED_TASK__INIT, *tv[1] = {&t};
    ProtobufCBinaryData a = {3, (uint8_t *)"abc"};
    char *cp[1] = {"/opt/fn"};

    r.lease_id = "t00000000000000a";
    r.owner_id = "session-1";
    CU_ASSERT_PTR_NULL(mt_worker_push_tasks_check(&r)); /* return only */
    t.task_id = "t0123456789abcde";
    t.function = "libfn.so:add";
    t.n_args = 1;
    t.args = &a;
    t.n_code_path = 1;
    t.code_path = cp;
    r.n_tasks = 1;
    r.tasks = tv;
    CU_ASSERT_PTR_NULL(mt_worker_push_tasks_check(&r));
    t.task_id = "t123";
    CU_ASSERT_PTR_NOT_NULL(mt_worker_push_tasks_check(&r));
    t.task_id = "a0123456789abcde";
    CU_ASSERT_PTR_NOT_NULL(mt_worker_push_tasks_check(&r));
    t.task_id = "t0123456789abcde";
    t.function = "";
    CU_ASSERT_PTR_NOT_NULL(mt_worker_push_tasks_check(&r));
    t.function = "libfn.so:add";
    r.owner_id = "";
    CU_ASSERT_PTR_NOT_NULL(mt_worker_push_tasks_check(&r));
    r.owner_id = "session-1";
    r.lease_id = "bad id";
    CU_ASSERT_PTR_NOT_NULL(mt_worker_push_tasks_check(&r));
    r.lease_id = "t00000000000000a";
    a.len = MT_EXEC_MAX_ARG_BYTES + 1; /* the length alone is checked */
    CU_ASSERT_PTR_NOT_NULL(mt_worker_push_tasks_check(&r));
    a.len = 3;
    r.n_tasks = MT_WORKER_MAX_PUSHED + 1;
    CU_ASSERT_PTR_NOT_NULL(mt_worker_push_tasks_check(&r));
}

CU_TestInfo mt_test_rpc_checks[] = {
    {"run spec from pb", test_run_spec_from_pb},
    {"run spec bad ref frees", test_run_spec_bad_ref_frees},
    {"lease spec from pb", test_lease_spec_from_pb},
    {"push tasks check", test_push_tasks_check},
    CU_TEST_INFO_NULL,
};
