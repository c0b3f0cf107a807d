/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_result.c -- the result channel of command tasks (task_result.h).
 *
 * The worker hands a command task a file name (MANTA_RESULT_PATH) and reads
 * that file once the program has exited with status 0. The file is the
 * task's own to write, so it is untrusted input: it is read with a hard
 * size bound, parsed strictly, and every way it can be wrong ends as a
 * task error with a reason, never as an assert. Whatever the outcome, the
 * file is removed, and a task that did not succeed leaves no object under
 * its result id in the store.
 *
 * Files are small (MT_RESULT_FILE_MAX) and local, so they are read
 * synchronously on the loop thread, as task logs are written.
 *
 * THREAD: loop thread for the calls that touch the store.
 */
#include "worker/task_result.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "objstore/store.h"

#define OBJECT_TAG "object "
#define VALUE_TAG "value\n"

/* ==== parsing ============================================================= */

static int refuse(char *why, size_t len, int rc, const char *text)
{
    snprintf(why, len, "%s", text);
    return rc;
}

static int parse_object(const uint8_t *buf, size_t len,
                        struct mt_result_file *out, char *why,
                        size_t why_len)
{
    const size_t tag = strlen(OBJECT_TAG);
    char hex[2 * MT_OBJECT_ID_LEN + 1];
    size_t n = len - tag;

    if (n > 0 && buf[len - 1] == '\n')
        n--;
    if (n != 2 * MT_OBJECT_ID_LEN)
        return refuse(why, why_len, -MT_EINVAL,
                      "\"object\" must be followed by 40 hex digits");
    memcpy(hex, buf + tag, n);
    hex[n] = '\0';
    if (mt_object_id_from_hex(hex, &out->id) < 0)
        return refuse(why, why_len, -MT_EINVAL,
                      "\"object\" must be followed by 40 hex digits");
    out->kind = MT_RESULT_OBJECT;
    return 0;
}

int mt_result_file_parse(const uint8_t *buf, size_t len,
                         struct mt_result_file *out, char *why,
                         size_t why_len)
{
    const size_t otag = strlen(OBJECT_TAG), vtag = strlen(VALUE_TAG);

    memset(out, 0, sizeof(*out));
    if (len == 0)
        return 0;
    if (!buf)
        return refuse(why, why_len, -MT_EINVAL, "no contents");
    if (len >= otag && memcmp(buf, OBJECT_TAG, otag) == 0)
        return parse_object(buf, len, out, why, why_len);
    if (len >= vtag && memcmp(buf, VALUE_TAG, vtag) == 0) {
        if (len - vtag > MT_RESULT_VALUE_MAX) {
            snprintf(why, why_len, "a value result is at most %u bytes; "
                     "put bigger ones in the object store",
                     MT_RESULT_VALUE_MAX);
            return -MT_ETOOBIG;
        }
        out->kind = MT_RESULT_VALUE;
        out->value = buf + vtag;
        out->value_len = len - vtag;
        return 0;
    }
    return refuse(why, why_len, -MT_EINVAL,
                  "it must start with \"object <id>\" or \"value\\n\"");
}

/* ==== the file ============================================================ */

char *mt_result_file_path(const char *temp_dir, const char *task_id,
                          uint32_t attempt)
{
    if (!temp_dir || !task_id)
        return NULL;
    return mt_xasprintf("%s/results/%s.%u", temp_dir, task_id, attempt);
}

char *mt_result_file_prepare(const char *temp_dir, const char *task_id,
                             uint32_t attempt)
{
    char *dir, *path;
    int rc;

    if (!temp_dir || !task_id)
        return NULL;
    dir = mt_xasprintf("%s/results", temp_dir);
    rc = mt_sys_mkdir_p(dir);
    if (rc < 0) {
        MT_WARN("cannot create %s: %s; command tasks get no result channel",
                dir, mt_strerror(rc));
        free(dir);
        return NULL;
    }
    free(dir);
    path = mt_result_file_path(temp_dir, task_id, attempt);
    if (unlink(path) < 0 && errno != ENOENT)
        MT_WARN("cannot remove stale %s: %s", path, strerror(errno));
    return path;
}

/* Read at most MT_RESULT_FILE_MAX + 1 bytes. RET 0 (*buf owned; NULL
 * with *len 0 when the file is absent) or -errno. */
static int read_bounded(const char *path, uint8_t **buf, size_t *len)
{
    size_t cap = MT_RESULT_FILE_MAX + 1, n = 0;
    uint8_t *b;
    ssize_t k;
    int fd;

    *buf = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    b = mt_xmalloc(cap);
    while (n < cap) {
        k = read(fd, b + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int rc = -errno;
            close(fd);
            free(b);
            return rc;
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    *buf = b;
    *len = n;
    return 0;
}

/* ==== the store =========================================================== */

/* Size of the sealed object id. RET 0 or -MT_ENOENT/-MT_EAGAIN/... */
static int object_size(struct mt_store *st, const mt_object_id *id,
                       uint64_t *size)
{
    struct mt_object_info info;
    int rc = mt_store_get(st, id, &info);

    if (rc < 0)
        return rc;
    *size = info.data_size;
    mt_store_release(st, id);
    return 0;
}

static int put_value(struct mt_store *st, const mt_object_id *id,
                     const uint8_t *p, size_t n)
{
    struct mt_object_info info;
    int rc;

    if (mt_store_contains(st, id) == 0)
        mt_store_delete(st, id); /* a put the file does not name */
    rc = mt_store_create_object(st, id, n, 0, 0, NULL, &info);
    if (rc < 0)
        return rc;
    if (n)
        memcpy(mt_store_base(st) + info.offset, p, n);
    return mt_store_seal(st, id);
}

static int check_object(struct mt_store *st, const mt_object_id *mine,
                        const struct mt_result_file *f, uint64_t *size,
                        char **why)
{
    char a[MT_OBJECT_ID_HEX_LEN + 1], b[MT_OBJECT_ID_HEX_LEN + 1];
    int rc;

    if (!mt_object_id_eq(&f->id, mine)) {
        *why = mt_xasprintf("it names object %s, but a command task's result "
                            "must be stored under the task's result id %s "
                            "(use mt_report_result or manta.report_result)",
                            mt_object_id_hex(&f->id, a),
                            mt_object_id_hex(mine, b));
        return -MT_EINVAL;
    }
    rc = st ? object_size(st, mine, size) : -MT_ENOENT;
    if (rc < 0) {
        *why = mt_xasprintf("object %s is not in this node's store (%s)",
                            mt_object_id_hex(mine, a), mt_strerror(rc));
        return rc == -MT_EAGAIN ? -MT_EINVAL : rc;
    }
    return 0;
}

/* ==== collect and discard ================================================= */

static int interpret(struct mt_store *st, const mt_object_id *id,
                     const struct mt_result_file *f, uint64_t *size,
                     char **why)
{
    int rc;

    if (f->kind == MT_RESULT_OBJECT)
        return check_object(st, id, f, size, why);
    if (f->kind != MT_RESULT_VALUE || f->value_len == 0)
        return 0; /* no result: an empty value is none either */
    if (!st) {
        *why = mt_xstrdup("this worker has no object store");
        return -MT_ENOENT;
    }
    rc = put_value(st, id, f->value, f->value_len);
    if (rc < 0) {
        *why = mt_xasprintf("cannot put its %zu bytes in the object store: "
                            "%s", f->value_len, mt_strerror(rc));
        return rc;
    }
    *size = f->value_len;
    return 0;
}

int mt_result_file_collect(struct mt_store *st, const char *path,
                           const char *task_id, uint64_t *size, char **why)
{
    struct mt_result_file f;
    char reason[256];
    mt_object_id id;
    uint8_t *buf;
    size_t len;
    char *inner = NULL;
    int rc;

    *size = 0;
    *why = NULL;
    if (!path || mt_object_id_for_task(task_id, &id) < 0)
        return 0;
    rc = read_bounded(path, &buf, &len);
    if (rc < 0) {
        *why = mt_xasprintf("cannot read its result file %s: %s", path,
                            strerror(-rc));
        goto out_discard;
    }
    rc = len > MT_RESULT_FILE_MAX
             ? refuse(reason, sizeof(reason), -MT_ETOOBIG, "")
             : mt_result_file_parse(buf, len, &f, reason, sizeof(reason));
    if (rc == -MT_ETOOBIG && len > MT_RESULT_FILE_MAX)
        snprintf(reason, sizeof(reason), "over %u bytes; put bigger results "
                 "in the object store", MT_RESULT_FILE_MAX);
    if (rc == 0)
        rc = interpret(st, &id, &f, size, &inner);
    free(buf);
    if (rc == 0 && f.kind == MT_RESULT_NONE && st)
        mt_result_file_discard(st, NULL, task_id); /* a put it never named */
    if (rc == 0) {
        unlink(path);
        return 0;
    }
    *why = mt_xasprintf("bad result file %s: %s", path,
                        inner ? inner : reason);
    free(inner);
out_discard:
    mt_result_file_discard(st, path, task_id);
    *size = 0;
    return rc;
}

void mt_result_file_discard(struct mt_store *st, const char *path,
                            const char *task_id)
{
    mt_object_id id;

    if (path && unlink(path) < 0 && errno != ENOENT)
        MT_WARN("cannot remove %s: %s", path, strerror(errno));
    if (st && task_id && mt_object_id_for_task(task_id, &id) == 0 &&
        mt_store_contains(st, &id) == 0)
        mt_store_delete(st, &id);
}
