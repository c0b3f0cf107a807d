/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ids.h -- fixed-size identifiers shared by every module.
 *
 * An mt_object_id is 20 opaque bytes (the same width as Ray's ObjectID). It is
 * a value type: copy it with `=`, compare with mt_object_id_eq(). Only ids and
 * offsets cross process boundaries, never pointers (house style H12).
 *
 * Every other id the head hands out is a number written with its kind:
 * one kind letter, then the number's low 60 bits as 15 hex digits
 * ("t0f17c5850000001" a task, "p0f17c5850000002" a placement group), as
 * the anchor system embeds what an id names in the id. Tasks and groups
 * count from the same base, so without the letter task 2 and group 1 were
 * the same string. An id's kind is thus read from the id alone
 * (mt_id_kind_of), and a command given the wrong kind of id says so
 * instead of "not found". Object ids (40 hex digits) and node ids (32
 * hex digits, or a name the operator chose) never have this shape.
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
 * 12 bytes "manta-result" then the task number (mt_num_id_parse) big-endian,
 * so head, worker, executor and SDK all derive it alone.
 * RET 0, -MT_EINVAL (task_id is not a task id). THREAD any.
 */
int mt_object_id_for_task(const char *task_id, mt_object_id *out);

/* mt_object_id_is_driver_result - id is the result of a task whose number
 * its driver chose (MT_NUM_ID_DRIVER_BIT: a task pushed to a lease).
 * THREAD any. */
bool mt_object_id_is_driver_result(const mt_object_id *id);

/* ---- ids with a kind: tasks, actors, placement groups, gangs ---- */

/* What an id names. The letters are part of the wire format. */
enum mt_id_kind {
    MT_ID_NONE = 0, /* not an id of a kind Manta hands out */
    MT_ID_TASK,     /* 't' + 15 hex digits */
    MT_ID_ACTOR,    /* 'a' + 15 hex digits (the number of its creation task) */
    MT_ID_PG,       /* 'p' + 15 hex digits */
    MT_ID_GANG,     /* 'g' + 15 hex digits */
    MT_ID_OBJECT,   /* 40 hex digits (mt_object_id_hex) */
};

#define MT_NUM_ID_LEN 16 /* a kind letter and 15 lowercase hex digits */
#define MT_NUM_ID_MAX ((UINT64_C(1) << 60) - 1) /* the largest number */
/* Task numbers a driver chooses itself (tasks pushed to a lease: random,
 * with this bit set) are apart from those the head counts up from 1. */
#define MT_NUM_ID_DRIVER_BIT (UINT64_C(1) << 59)

/*
 * mt_num_id - write num as an id of kind (MT_ID_TASK, _ACTOR, _PG or
 * _GANG): its letter, then num & MT_NUM_ID_MAX as 15 hex digits, NUL.
 * Another kind gets the letter '?', which no parser accepts.
 * RET out. THREAD any.
 */
char *mt_num_id(enum mt_id_kind kind, uint64_t num,
                char out[MT_NUM_ID_LEN + 1]);

/*
 * mt_num_id_parse - the number of an id of kind: exactly its letter then
 * 15 hex digits (either case). *num is untouched on failure.
 * RET 0, -MT_EINVAL (NULL, another kind, wrong length or a non-hex
 * digit). THREAD any.
 */
int mt_num_id_parse(enum mt_id_kind kind, const char *id, uint64_t *num);

/*
 * mt_num_id_as - the id of kind `to` with the number of id, an id of kind
 * `from`: an actor's id from its creation task's and back ("t0f1..." <->
 * "a0f1..."). RET 0, -MT_EINVAL (id is not of kind from). THREAD any.
 */
int mt_num_id_as(enum mt_id_kind from, const char *id, enum mt_id_kind to,
                 char out[MT_NUM_ID_LEN + 1]);

/*
 * mt_id_kind_of - the kind of id, read from its shape: a kind letter and
 * 15 hex digits, or 40 hex digits for an object. MT_ID_NONE for anything
 * else (NULL, node ids, ids of an older release, typos).
 * THREAD any.
 */
enum mt_id_kind mt_id_kind_of(const char *id);

/* mt_id_kind_name - "task", "actor", "placement group", "gang", "object";
 * "unknown" for MT_ID_NONE or a bad value. RET static. THREAD any. */
const char *mt_id_kind_name(enum mt_id_kind kind);

/*
 * mt_id_check_kind - whether id may name a thing of kind want: it may
 * unless its shape says it is another kind. An id of no known kind passes
 * (the owner of the table then says "no such ...").
 *
 * OUT why   on -MT_EINVAL: "ID is a placement group id, not a task id"
 * RET 0, -MT_EINVAL
 * THREAD any
 */
int mt_id_check_kind(const char *id, enum mt_id_kind want, char *why,
                     size_t len);

#endif /* MT_IDS_H */
