/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manta/result.h -- results of command tasks.
 *
 * A command task (any program, mt_submit_command or `manta submit`) may
 * leave one object as its result. Inside the task, mt_report_result*()
 * stores the bytes (or a tensor, or a copy of an existing object) in this
 * node's object store under the task's result id and tells the worker
 * through the file named by $MANTA_RESULT_PATH, which the worker sets for
 * every command task. When the program exits with status 0 the worker
 * checks the result and reports it; the head then knows it as the object
 * mt_task_result_id(task id), readable from any node with mt_get(). A
 * task that exits non-zero has no result. Calling a report function again
 * replaces the earlier result.
 *
 * The result object is registered with one reference that belongs to no
 * client (the task's submitter may be `manta submit`, long gone): whoever
 * consumes it drops it with mt_object_release(); otherwise it stays until
 * the head restarts. Programs that are not written against the SDK can
 * write the file themselves ("value\n" and up to 100 KiB of bytes; see
 * docs/sdk.md, "Command task results").
 *
 * THREAD: every function is thread-safe; reports from several threads of
 * one task replace each other in some order.
 */
#ifndef MANTA_RESULT_H
#define MANTA_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "manta/client.h"
#include "manta/object.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * mt_task_result_id - the id of a task's result object: a function task's
 * return value, or what a command task reported.
 *
 * IN  task_id   the head's task id, 't' and 15 hex digits (borrowed)
 * OUT out       the id
 * RET 0, -MT_EINVAL (not a task id; why is under
 *     mt_client_last_error(NULL))
 */
MT_EXTERN int mt_task_result_id(const char *task_id, mt_object_id *out);

/*
 * mt_report_result - inside a command task: make size bytes at data its
 * result.
 *
 * IN  c      a client with a store (this node's; mt_client_has_store())
 * IN  data   size bytes (borrowed; copied into the store)
 * RET 0, -MT_ESTATE (not inside a command task: MANTA_TASK_ID or
 *     MANTA_RESULT_PATH missing), -MT_EUNAVAIL (no store), -MT_ENOSPC,
 *     -MT_ETOOBIG, -MT_EINVAL, -errno (writing the result file);
 *     mt_client_last_error(c) says why
 */
MT_EXTERN int mt_report_result(mt_client_t *c, const void *data,
                               size_t size);

/*
 * mt_report_result_tensor - mt_report_result for a compact row-major
 * tensor: readers get the dtype and shape back (mt_buffer_tensor).
 *
 * IN  code, bits, ndim, shape   as mt_put_tensor
 * RET as mt_report_result
 */
MT_EXTERN int mt_report_result_tensor(mt_client_t *c, const void *data,
                                      size_t size, mt_dtype_code code,
                                      uint8_t bits, uint32_t ndim,
                                      const int64_t *shape);

/*
 * mt_report_result_object - make a copy of an existing object (a put, or
 * another task's result; pulled here if needed) the task's result,
 * tensor description included. Your reference on id is unchanged.
 *
 * IN  timeout_ms   for getting id, as mt_get
 * RET as mt_report_result, and the errors of mt_get
 */
MT_EXTERN int mt_report_result_object(mt_client_t *c, const mt_object_id *id,
                                      int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* MANTA_RESULT_H */
