/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ids.h -- fixed-size identifiers shared by every module.
 *
 * An mt_object_id is 20 opaque bytes (the same width as Ray's ObjectID). It is
 * a value type: copy it with `=`, compare with mt_object_id_eq(). Only ids and
 * offsets cross process boundaries, never pointers (house style H12).
 */
#ifndef MT_IDS_H
#define MT_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_OBJECT_ID_LEN 20
#define MT_OBJECT_ID_HEX_LEN (2 * MT_OBJECT_ID_LEN)

/* An object id: 20 opaque bytes. */
typedef struct mt_object_id {
    uint8_t b[MT_OBJECT_ID_LEN];
} mt_object_id;

/* mt_object_id_eq - true when both ids have the same bytes. THREAD any. */
bool mt_object_id_eq(const mt_object_id *a, const mt_object_id *b);

/*
 * mt_object_id_hash - 64-bit hash of an id (FNV-1a), for hash tables.
 *
 * THREAD any
 */
uint64_t mt_object_id_hash(const mt_object_id *id);

/*
 * mt_object_id_hex - write the id as 40 lowercase hex digits plus NUL.
 *
 * OUT buf   at least MT_OBJECT_ID_HEX_LEN + 1 bytes
 * RET buf
 * THREAD any
 */
char *mt_object_id_hex(const mt_object_id *id, char *buf);

/*
 * mt_object_id_from_hex - parse 40 hex digits.
 *
 * RET 0, -MT_EINVAL (wrong length or a non-hex digit)
 * THREAD any
 */
int mt_object_id_from_hex(const char *hex, mt_object_id *out);

/*
 * mt_object_id_from_u64 - a deterministic id from two integers (tests, tools).
 *
 * The first 8 bytes hold a, the next 8 hold b (little endian), the rest zero.
 * THREAD any
 */
mt_object_id mt_object_id_from_u64(uint64_t a, uint64_t b);

/*
 * mt_object_id_for_task - the id of a function task's result object: the
 * 12 bytes "manta-result" then the task number (16 hex digits of task_id)
 * big-endian, so head, worker, executor and SDK all derive it alone.
 * RET 0, -MT_EINVAL (task_id is not 16 hex digits). THREAD any.
 */
int mt_object_id_for_task(const char *task_id, mt_object_id *out);

/* ---- numbered ids: tasks, actors, placement groups ---- */

#define MT_NUM_ID_LEN 16 /* a number as 16 lowercase hex digits */

/* mt_num_id - write num as MT_NUM_ID_LEN hex digits plus NUL. RET out.
 * THREAD any. */
char *mt_num_id(uint64_t num, char out[MT_NUM_ID_LEN + 1]);

/* mt_num_id_parse - exactly MT_NUM_ID_LEN hex digits to a number.
 * RET 0, -MT_EINVAL (NULL, wrong length or a non-hex digit). THREAD any. */
int mt_num_id_parse(const char *id, uint64_t *num);

#endif /* MT_IDS_H */
