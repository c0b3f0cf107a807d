/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_checks.c -- the worker's checks and conversions of decoded requests
 * (see rpc_checks.h), moved out of rpc_tasks.c, rpc_actors.c and
 * rpc_transfer.c unchanged.
 */
#include "worker/rpc_checks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/defs.h"
#include "common/error.h"
#include "common/ids.h"
#include "proto/convert.h"
#include "worker/detect_gpu.h"
#include "worker/exec_proto.h"

/* ---- RunTask ------------------------------------------------------------- */

/* The spec's and the grant's variables and unsets. Their number is
 * checked before, so only memory can run out. */
static void env_from_pb(const Manta__RunTaskRequest *req,
                        struct mt_run_spec *s)
{
    const Manta__TaskSpec *p = req->spec;
    const size_t max = MT_RUN_MAX_ENV;

    if (mt_kv_from_pb(p->env, p->n_env, max, &s->env, NULL) < 0 ||
        mt_kv_unset_from_pb(p->env_unset, p->n_env_unset, max,
                            &s->env_unset, NULL) < 0 ||
        mt_kv_from_pb(req->env, req->n_env, max, &s->accel_env, NULL) < 0 ||
        mt_kv_unset_from_pb(req->env_unset, req->n_env_unset, max,
                            &s->accel_unset, NULL) < 0)
        mt_xoom(sizeof(struct mt_kv));
}

static enum mt_run_kind kind_from_pb(Manta__TaskKind k)
{
    switch (k) {
    case MANTA__TASK_KIND__TASK_KIND_COMMAND:
        return MT_RUN_KIND_COMMAND;
    case MANTA__TASK_KIND__TASK_KIND_FUNCTION:
        return MT_RUN_KIND_FUNCTION;
    case MANTA__TASK_KIND__TASK_KIND_ACTOR_CREATE:
        return MT_RUN_KIND_ACTOR_CREATE;
    case MANTA__TASK_KIND__TASK_KIND_ACTOR_METHOD:
        return MT_RUN_KIND_ACTOR_METHOD;
    case MANTA__TASK_KIND__TASK_KIND_LEASE:
        return MT_RUN_KIND_LEASE;
    default:
        return MT_RUN_KIND_UNSPECIFIED;
    }
}

/* The object arguments: one per non-empty arg_refs entry of the spec,
 * checked against it. RET NULL or why they are unusable. */
static const char *refs_from_pb(const Manta__RunTaskRequest *req,
                                struct mt_run_spec *s)
{
    const Manta__TaskSpec *p = req->spec;
    size_t want = 0;

    for (size_t i = 0; i < p->n_arg_refs; i++)
        want += p->arg_refs[i].len ? 1 : 0;
    if (p->n_arg_refs && p->n_arg_refs != p->n_args)
        return "arg_refs must have one entry per argument";
    if (req->n_object_args != want)
        return "an object argument was not resolved by the head (released "
               "or unknown)";
    s->refs = mt_xcalloc(want + 1, sizeof(*s->refs));
    for (size_t i = 0; i < want; i++) {
        const Manta__ObjectArg *a = req->object_args[i];
        struct mt_run_ref *r = &s->refs[s->nrefs++];

        if (a->index >= p->n_args || a->object_id.len != MT_OBJECT_ID_LEN ||
            p->arg_refs[a->index].len != MT_OBJECT_ID_LEN ||
            memcmp(p->arg_refs[a->index].data, a->object_id.data,
                   MT_OBJECT_ID_LEN) != 0)
            return "object argument does not match the spec's arg_refs";
        if (a->is_inline && a->inline_data.len > MT_EXEC_MAX_ARG_BYTES)
            return "inline object argument too large";
        r->index = a->index;
        memcpy(r->id.b, a->object_id.data, MT_OBJECT_ID_LEN);
        r->size = a->size;
        r->is_inline = a->is_inline;
        if (a->is_inline) {
            r->size = a->inline_data.len;
            r->data = mt_xmalloc(r->size ? r->size : 1);
            if (r->size)
                memcpy(r->data, a->inline_data.data, r->size);
        }
        for (size_t k = 0; k < a->n_holder_addresses &&
                           r->n_holders < MT_RUN_MAX_HOLDERS; k++)
            if (strchr(a->holder_addresses[k], ':') &&
                strlen(a->holder_addresses[k]) < 128)
                r->holders[r->n_holders++] =
                    mt_xstrdup(a->holder_addresses[k]);
    }
    return NULL;
}

/* Copy the request into s. RET NULL, or why it is unusable (s then holds
 * what was copied so far). */
static const char *spec_copy(const Manta__RunTaskRequest *req,
                             struct mt_run_spec *s)
{
    const Manta__TaskSpec *p = req->spec;

    memset(s, 0, sizeof(*s));
    if (p->n_argv > MT_RUN_MAX_ARGS)
        return "too many arguments (at most 4096)";
    if (p->n_env + req->n_env + p->n_env_unset + req->n_env_unset >
        MT_RUN_MAX_ENV)
        return "too many environment variables (at most 4096)";
    if (p->n_args > MT_EXEC_MAX_ARGS)
        return "too many function arguments (at most 4096)";
    if (p->n_code_path > MT_EXEC_MAX_CODE_PATH)
        return "too many code path entries (at most 64)";
    s->task_id = mt_xstrdup(p->task_id);
    s->attempt = req->attempt;
    s->kind = kind_from_pb(p->kind);
    s->argv = mt_xcalloc(p->n_argv + 1, sizeof(*s->argv));
    for (size_t i = 0; i < p->n_argv; i++)
        s->argv[i] = mt_xstrdup(p->argv[i]);
    s->argc = p->n_argv;
    env_from_pb(req, s);
    mt_gpu_map_env(&s->accel_env); /* grant ids -> CUDA_VISIBLE_DEVICES */
    if (p->cwd && *p->cwd)
        s->cwd = mt_xstrdup(p->cwd);
    if (p->function && *p->function)
        s->function = mt_xstrdup(p->function);
    s->code_path = mt_xcalloc(p->n_code_path + 1, sizeof(*s->code_path));
    for (size_t i = 0; i < p->n_code_path; i++)
        s->code_path[i] = mt_xstrdup(p->code_path[i]);
    s->n_code_path = p->n_code_path;
    s->args = mt_xcalloc(p->n_args + 1, sizeof(*s->args));
    for (size_t i = 0; i < p->n_args; i++) {
        s->args[i].size = p->args[i].len;
        s->args[i].data = mt_xmalloc(p->args[i].len ? p->args[i].len : 1);
        if (p->args[i].len)
            memcpy(s->args[i].data, p->args[i].data, p->args[i].len);
    }
    s->nargs = p->n_args;
    s->hold_result = p->hold_result;
    if (p->actor_id && *p->actor_id)
        s->actor_id = mt_xstrdup(p->actor_id);
    s->actor_seq = req->actor_seq;
    s->actor_attempt = req->actor_attempt;
    if (p->owner_id && *p->owner_id)
        s->owner_id = mt_xstrndup(p->owner_id,
                                  strnlen(p->owner_id, MT_RUN_MAX_OWNER));
    return refs_from_pb(req, s);
}

/*
 * A refused request leaves nothing behind: the argv, environment and
 * arguments copied before an object argument was found wrong used to
 * leak with every such request (found by tests/fuzz/fuzz_worker_run.c).
 */
const char *mt_worker_run_spec_from_pb(const Manta__RunTaskRequest *req,
                                       struct mt_run_spec *s)
{
    const char *why = spec_copy(req, s);

    if (why)
        mt_run_spec_release(s);
    return why;
}

/* ---- CallActor ----------------------------------------------------------- */

const char *mt_worker_call_actor_check(const Manta__CallActorRequest *r)
{
    size_t bytes = 0;

    if (!mt_run_id_valid(r->actor_id) || !mt_run_id_valid(r->caller_id))
        return "actor_id and caller_id must be 1-64 of [A-Za-z0-9_-]";
    if (r->n_calls == 0 || r->n_calls > MT_WORKER_MAX_CALLS)
        return "a request carries 1-4096 calls";
    for (size_t i = 0; i < r->n_calls; i++) {
        const Manta__ActorCall *k = r->calls[i];

        if (!k->method[0] || strlen(k->method) > MT_EXEC_MAX_FUNCTION)
            return "method must be a function name";
        if (k->n_args > MT_EXEC_MAX_ARGS)
            return "too many arguments (at most 4096)";
        for (size_t a = 0; a < k->n_args; a++)
            bytes += k->args[a].len;
    }
    if (bytes > MT_EXEC_MAX_ARG_BYTES)
        return "arguments too large (at most 16 MiB in one request)";
    return NULL;
}

/* ---- PushTasks ----------------------------------------------------------- */

static const char *pushed_task_check(const Manta__PushedTask *k)
{
    uint64_t num;
    size_t bytes = 0;

    if (mt_num_id_parse(MT_ID_TASK, k->task_id, &num) < 0)
        return "task_id must be \"t\" and 15 hex digits";
    if (!k->function[0] || strlen(k->function) > MT_EXEC_MAX_FUNCTION)
        return "function must be a function name";
    if (strlen(k->name) > MT_TASK_MAX_NAME)
        return "name too long (at most 256 bytes)";
    if (k->n_code_path > MT_EXEC_MAX_CODE_PATH)
        return "too many code path entries (at most 64)";
    for (size_t i = 0; i < k->n_code_path; i++)
        if (strlen(k->code_path[i]) > MT_EXEC_MAX_PATH)
            return "code path entry too long";
    if (k->n_args > MT_EXEC_MAX_ARGS)
        return "too many arguments (at most 4096)";
    for (size_t a = 0; a < k->n_args; a++)
        bytes += k->args[a].len;
    if (bytes > MT_EXEC_MAX_ARG_BYTES)
        return "arguments too large (at most 16 MiB per task)";
    return NULL;
}

const char *mt_worker_push_tasks_check(const Manta__PushTasksRequest *r)
{
    const char *why;

    if (!mt_run_id_valid(r->lease_id))
        return "lease_id must be 1-64 of [A-Za-z0-9_-]";
    if (!r->owner_id[0] || strlen(r->owner_id) > MT_RUN_MAX_OWNER)
        return "owner_id must be 1-128 bytes";
    if (r->n_tasks > MT_WORKER_MAX_PUSHED)
        return "a request carries 0-4096 tasks";
    for (size_t i = 0; i < r->n_tasks; i++)
        if ((why = pushed_task_check(r->tasks[i])))
            return why;
    return NULL;
}

/* ---- PullObject ---------------------------------------------------------- */

int mt_worker_object_info_from_pb(const Manta__ObjectInfo *p,
                                  struct mt_object_info *out)
{
    const Manta__TensorDesc *t = p->tensor;

    memset(out, 0, sizeof(*out));
    out->data_size = p->data_size;
    out->meta_size = p->meta_size;
    out->flags = p->flags & MT_OBJ_FLAGS_ALL & ~MT_OBJ_TENSOR;
    if (!t)
        return 0;
    if (t->n_shape > MT_TENSOR_MAX_DIMS || t->code > 255 || t->bits > 255 ||
        t->lanes > 65535 || (t->n_strides && t->n_strides != t->n_shape))
        return -MT_EPROTO;
    out->flags |= MT_OBJ_TENSOR;
    out->tensor.code = (uint8_t)t->code;
    out->tensor.bits = (uint8_t)t->bits;
    out->tensor.lanes = (uint16_t)t->lanes;
    out->tensor.ndim = (uint32_t)t->n_shape;
    for (size_t i = 0; i < t->n_shape; i++) {
        out->tensor.shape[i] = t->shape[i];
        out->tensor.strides[i] = t->n_strides ? t->strides[i] : 0;
    }
    return 0;
}
