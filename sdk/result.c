/* SPDX-License-Identifier: Apache-2.0 */
/*
 * result.c -- a command task reports its result (manta/result.h).
 *
 * The bytes go into this node's store under the task's result id, without
 * registering them with the head: the worker reads $MANTA_RESULT_PATH
 * when the program exits, checks the object and reports it, and the head
 * registers it then (worker/task_result.h has the file's forms). Writing
 * the file last, through a rename, means the worker never sees a file
 * that names an object not yet sealed, nor half a file.
 *
 * THREAD: the caller's; the store client is thread-safe.
 */
#include "sdk/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sys.h"
#include "objstore/client.h"
#include "objstore/tensor.h"
#include "manta/result.h"
#include "sdk/object.h"

int mt_task_result_id(const char *task_id, mt_object_id *out)
{
    if (!task_id || !out)
        return mt__set_error(NULL, -MT_EINVAL, "no task id or no out");
    if (mt__check_id(NULL, task_id, MT_ID_TASK) < 0)
        return -MT_EINVAL;
    if (mt_object_id_for_task(task_id, out) < 0)
        return mt__set_error(NULL, -MT_EINVAL, "'%.64s' is not a task id "
                             "(t and 15 hex digits)", task_id);
    return 0;
}

/* Write "object <hex>\n" to path, atomically. RET 0 or -errno. */
static int write_file(const char *path, const mt_object_id *id)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1], line[64];

    snprintf(line, sizeof(line), "object %s\n", mt_object_id_hex(id, hex));
    return mt_sys_write_file_atomic(path, line);
}

/* The task's result id and file, from the environment the worker set. */
static int task_target(mt_client_t *c, mt_object_id *id, const char **path)
{
    const char *task = getenv("MANTA_TASK_ID");

    *path = getenv("MANTA_RESULT_PATH");
    if (!task || !*task || !*path || !**path)
        return mt__set_error(c, -MT_ESTATE, "not inside a command task: "
                             "MANTA_TASK_ID and MANTA_RESULT_PATH must be "
                             "set (the worker sets them for command tasks)");
    if (mt_object_id_for_task(task, id) < 0)
        return mt__set_error(c, -MT_ESTATE, "MANTA_TASK_ID '%s' is not a "
                             "task id (t and 15 hex digits)", task);
    if (!c->store)
        return mt__set_error(c, -MT_EUNAVAIL, "no object store: %s",
                             c->store_why);
    return 0;
}

static int report(mt_client_t *c, const void *data, size_t size,
                  const struct mt_tensor_desc *tensor)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1];
    const char *path;
    mt_object_id id;
    int rc;

    if (!mt__client_check(c) || (size && !data))
        return mt__set_error(NULL, -MT_EINVAL, "invalid client or data");
    rc = task_target(c, &id, &path);
    if (rc < 0)
        return rc;
    mt_object_id_hex(&id, hex);
    if (mt_objc_contains(c->store->objc, &id) == 0) /* reported before */
        mt_objc_delete(c->store->objc, &id);
    rc = mt_objc_put(c->store->objc, &id, data, size, NULL, 0, 0, tensor);
    if (rc < 0)
        return mt__set_error(c, rc, "cannot store the result (%zu bytes) as "
                             "%s: %s", size, hex, mt_strerror(rc));
    rc = write_file(path, &id);
    if (rc < 0) {
        mt_objc_delete(c->store->objc, &id);
        return mt__set_error(c, rc, "cannot write the result file %s: %s",
                             path, mt_strerror(rc));
    }
    return 0;
}

int mt_report_result(mt_client_t *c, const void *data, size_t size)
{
    return report(c, data, size, NULL);
}

/* Fill t from a dtype and shape describing exactly size bytes. RET 0 or
 * -MT_EINVAL (recorded). */
static int tensor_desc(mt_client_t *c, struct mt_tensor_desc *t,
                       size_t size, mt_dtype_code code, uint8_t bits,
                       uint32_t ndim, const int64_t *shape)
{
    int rc = mt__tensor_desc(c, code, bits, ndim, shape, t);

    if (rc < 0)
        return rc;
    if (mt_tensor_check(t, size) < 0 || mt_tensor_nbytes(t) != size)
        return mt__set_error(c, -MT_EINVAL, "tensor dtype (code %d, %u bits) "
                             "and shape do not describe exactly %zu bytes",
                             (int)code, bits, size);
    return 0;
}

int mt_report_result_tensor(mt_client_t *c, const void *data, size_t size,
                            mt_dtype_code code, uint8_t bits, uint32_t ndim,
                            const int64_t *shape)
{
    struct mt_tensor_desc t;
    int rc;

    if (!mt__client_check(c))
        return mt__set_error(NULL, -MT_EINVAL, "invalid client");
    rc = tensor_desc(c, &t, size, code, bits, ndim, shape);
    return rc < 0 ? rc : report(c, data, size, &t);
}

int mt_report_result_object(mt_client_t *c, const mt_object_id *id,
                            int timeout_ms)
{
    int64_t shape[MT_TENSOR_MAX_NDIM];
    mt_dtype_code code;
    uint32_t ndim;
    uint8_t bits;
    mt_buffer_t *b;
    int rc;

    if (!mt__client_check(c) || !id)
        return mt__set_error(NULL, -MT_EINVAL, "invalid client or id");
    rc = mt_get(c, id, timeout_ms, &b);
    if (rc < 0)
        return rc; /* recorded */
    if (mt_buffer_tensor(b, &code, &bits, &ndim, shape) == 0)
        rc = mt_report_result_tensor(c, mt_buffer_data(b), mt_buffer_size(b),
                                     code, bits, ndim, shape);
    else
        rc = mt_report_result(c, mt_buffer_data(b), mt_buffer_size(b));
    mt_buffer_release(b);
    return rc;
}
