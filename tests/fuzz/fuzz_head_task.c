/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_head_task.c -- a SubmitTask request as the head reads it
 * (head/rpc_tasks.c take_def): protobuf-c unpacks the bytes, then the
 * spec is converted to a plain C def (mt_task_def_from_pb) and checked
 * (mt_task_def_check). An accepted def is also copied and shown back as a
 * TaskSpec and packed, as ListTasks does.
 *
 * Property: a def the head accepts survives the view, pack, unpack and
 * convert round trip and is accepted again.
 */
#include "common/error.h"
#include "proto/convert.h"
#include "tests/fuzz/fuzz.h"

static void view_round_trip(const struct mt_task_def *d)
{
    struct mt_pb_arena a = MT_PB_ARENA_INIT;
    Manta__TaskSpec s;
    Manta__TaskSpec *back;
    struct mt_task_def again;
    const char *why = NULL;
    uint8_t *buf;
    size_t len;

    MT_FUZZ_CHECK(mt_pb_task_spec_view(&a, d, &s) == 0);
    len = manta__task_spec__get_packed_size(&s);
    buf = malloc(len ? len : 1);
    manta__task_spec__pack(&s, buf);
    back = manta__task_spec__unpack(NULL, len, buf);
    MT_FUZZ_CHECK(back);
    mt_task_def_init(&again);
    MT_FUZZ_CHECK(mt_task_def_from_pb(back, &again, &why) == 0);
    MT_FUZZ_CHECK(mt_task_def_check(&again) == NULL);
    MT_FUZZ_CHECK(again.kind == d->kind && again.argc == d->argc &&
                  again.nargs == d->nargs && again.res.n == d->res.n &&
                  again.sel.n == d->sel.n && again.env.n == d->env.n);
    mt_task_def_release(&again);
    manta__task_spec__free_unpacked(back, NULL);
    free(buf);
    mt_pb_arena_release(&a);
}

/* What take_def does with one spec. */
static void spec_once(const Manta__TaskSpec *s)
{
    struct mt_task_def d, copy;
    const char *why = NULL;

    mt_task_def_init(&d);
    if (mt_task_def_from_pb(s, &d, &why) < 0)
        return; /* released by the converter */
    if (mt_task_def_check(&d) == NULL) {
        mt_task_def_init(&copy);
        MT_FUZZ_CHECK(mt_task_def_copy(&copy, &d) == 0);
        view_round_trip(&copy);
        mt_task_def_release(&copy);
    }
    mt_task_def_release(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Manta__SubmitTaskRequest *req =
        manta__submit_task_request__unpack(NULL, size, data);

    if (!req)
        return 0;
    if (req->spec)
        spec_once(req->spec);
    manta__submit_task_request__free_unpacked(req, NULL);
    return 0;
}
