/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_result.h -- the result channel of command tasks.
 *
 * A function task returns its result to the executor; a command task (any
 * program) has only an exit status and output. To give it a result, the
 * worker sets MANTA_RESULT_PATH in its environment: a file name in
 * <temp_dir>/results/ unique to the task's attempt. When the program exits
 * with status 0 the worker reads that file (at most
 * MT_RESULT_FILE_MAX bytes):
 *
 *   absent or empty      no result (as before)
 *   "object <40 hex>\n"  the result is that object in this node's store;
 *                        it must be the task's result id
 *                        (mt_object_id_for_task), which is where the SDK's
 *                        mt_report_result*() put it
 *   "value\n" <bytes>    the result is those bytes (up to
 *                        MT_RESULT_VALUE_MAX); the worker puts them
 *                        in its store under the task's result id
 *
 * Either way the result ends up as the object with the task's result id in
 * this node's store and is reported like a big function-task result
 * (result_in_store and its size): the head registers it and any driver
 * reads it with mt_get(). Anything else in the file (another object, an
 * unknown form, too many bytes, an object missing from the store) fails
 * the task with a message that says what was wrong. A task that did not
 * succeed has its result file and any object under its result id
 * discarded.
 *
 * THREAD: loop thread of the worker (the store's owner), except for the
 * pure mt_result_file_parse() and mt_result_file_path().
 */
#ifndef MT_WORKER_TASK_RESULT_H
#define MT_WORKER_TASK_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"

struct mt_store;

#define MT_RESULT_VALUE_MAX (100u * 1024u) /* "value" bytes */
#define MT_RESULT_FILE_MAX (MT_RESULT_VALUE_MAX + 64u)

/* What a result file says. */
enum mt_result_kind {
    MT_RESULT_NONE = 0,   /* empty file: no result */
    MT_RESULT_OBJECT = 1, /* an object of the store: id */
    MT_RESULT_VALUE = 2,  /* bytes: value, value_len */
};

struct mt_result_file {
    enum mt_result_kind kind;
    mt_object_id id;            /* OBJECT */
    const uint8_t *value;       /* VALUE: borrowed from the parsed buffer */
    size_t value_len;
};

/*
 * mt_result_file_parse - read the contents of a result file.
 *
 * IN  buf, len   the file's bytes (borrowed; out->value points into them)
 * OUT out        what it says
 * OUT why        on error, a one-line reason (len bytes)
 * RET 0, -MT_EINVAL (not one of the forms above), -MT_ETOOBIG (value
 *     over MT_RESULT_VALUE_MAX)
 * THREAD any
 */
int mt_result_file_parse(const uint8_t *buf, size_t len,
                         struct mt_result_file *out, char *why,
                         size_t why_len);

/*
 * mt_result_file_path - <temp_dir>/results/<task_id>.<attempt>.
 *
 * RET returns owned string, free with free(); NULL when temp_dir is NULL
 * THREAD any
 */
char *mt_result_file_path(const char *temp_dir, const char *task_id,
                          uint32_t attempt);

/*
 * mt_result_file_prepare - make the results folder and remove a stale
 * file at the task's path, before the program starts.
 *
 * RET returns owned path for MANTA_RESULT_PATH, free with free(); NULL
 *     when there is no channel (no temp dir, or it cannot be made: logged)
 */
char *mt_result_file_prepare(const char *temp_dir, const char *task_id,
                             uint32_t attempt);

/*
 * mt_result_file_collect - after the program exited with status 0: read
 * its result file, put a "value" into the store, check an "object", and
 * remove the file.
 *
 * IN  st        the node's store (NULL: only "no result" is possible)
 * IN  path      the task's result file (borrowed; NULL: no channel)
 * OUT size      bytes of the result object, 0 when there is none
 * OUT why       returns owned message on error, free with free()
 * RET 0, or -MT_EINVAL / -MT_ETOOBIG / -MT_ENOENT / -MT_ENOSPC / -MT_EIO
 *     with *why telling the task's owner what went wrong
 */
int mt_result_file_collect(struct mt_store *st, const char *path,
                           const char *task_id, uint64_t *size, char **why);

/*
 * mt_result_file_discard - the task did not succeed (or its result was
 * refused): remove its result file and any object under its result id.
 *
 * IN  st, path   as mt_result_file_collect (either may be NULL)
 */
void mt_result_file_discard(struct mt_store *st, const char *path,
                            const char *task_id);

#endif /* MT_WORKER_TASK_RESULT_H */
