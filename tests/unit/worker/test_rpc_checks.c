/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_rpc_checks.c -- worker/rpc_checks.h: a RunTask request copied into
 * a run spec, and refused whole when an object argument is wrong (the
 * leak tests/fuzz/fuzz_worker_run.c found: what was copied before the
 * refusal was never freed; ASan and valgrind runs see it).
 */
#include <string.h>

#include "tests/unit/unit.h"
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

CU_TestInfo mt_test_rpc_checks[] = {
    {"run spec from pb", test_run_spec_from_pb},
    {"run spec bad ref frees", test_run_spec_bad_ref_frees},
    CU_TEST_INFO_NULL,
};
