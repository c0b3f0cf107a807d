/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_checks.h -- the worker's checks and conversions of what peers send,
 * on the decoded protobuf messages: a RunTask request into a plain C run
 * spec, a CallActor and a PushTasks request's shape, an object's
 * description in a
 * PullObject stream. Pure (no loop, no I/O, no worker state); the rpc
 * adapters call them, and so do the fuzz harnesses (tests/fuzz/
 * fuzz_worker_*.c), which run them on arbitrary bytes.
 *
 * THREAD: any (no shared state).
 */
#ifndef MT_WORKER_RPC_CHECKS_H
#define MT_WORKER_RPC_CHECKS_H

#include "head_service.pb-c.h"
#include "objstore/store.h"
#include "worker/run_spec.h"
#include "worker_service.pb-c.h"

#define MT_WORKER_MAX_CALLS 4096 /* calls in one CallActor request */
#define MT_WORKER_MAX_PUSHED 4096 /* tasks in one PushTasks request */

/*
 * mt_worker_run_spec_from_pb - copy a RunTask request (req->spec set)
 * into s: counts checked against the limits, environments converted
 * (grant GPU ids mapped, detect_gpu.h), object arguments checked against
 * the spec's arg_refs. The rules of a run are mt_run_spec_check.
 * OUT s  filled (release with mt_run_spec_release); empty on failure
 * RET NULL, or why the request is unusable (static)
 */
const char *mt_worker_run_spec_from_pb(const Manta__RunTaskRequest *req,
                                       struct mt_run_spec *s);

/*
 * mt_worker_call_actor_check - may a CallActor request be served: ids,
 * 1 to MT_WORKER_MAX_CALLS calls, method names, argument counts and bytes.
 * RET NULL, or the reason (static)
 */
const char *mt_worker_call_actor_check(const Manta__CallActorRequest *r);

/*
 * mt_worker_push_tasks_check - may a PushTasks request be served: the
 * lease and owner ids, 0 to MT_WORKER_MAX_PUSHED tasks, each with a task id
 * ("t" and 15 hex digits), a function name, a name of at most
 * MT_TASK_MAX_NAME bytes, code paths and arguments within the executor's
 * limits (exec_proto.h; at most MT_EXEC_MAX_ARG_BYTES per task).
 * RET NULL, or the reason (static)
 */
const char *mt_worker_push_tasks_check(const Manta__PushTasksRequest *r);

/*
 * mt_worker_object_info_from_pb - an object's description from a holder's
 * PullObject stream (flags, sizes, tensor shape).
 * RET 0 or -MT_EPROTO when it does not make sense
 */
int mt_worker_object_info_from_pb(const Manta__ObjectInfo *p,
                                  struct mt_object_info *out);

#endif /* MT_WORKER_RPC_CHECKS_H */
