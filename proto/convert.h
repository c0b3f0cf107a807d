/* SPDX-License-Identifier: Apache-2.0 */
/*
 * convert.h -- the one place that converts the shapes every module shares
 * between protobuf messages and plain C (common/defs.h, common/qty.h,
 * common/selector.h): resources, labels (and environment variables and
 * unsets), selectors, task defs, placement group and gang requests.
 *
 * Two directions, two styles:
 *   - plain C -> protobuf builds a *view*: the message's strings point into
 *     the plain C source (which must outlive the message) and the arrays
 *     it needs come from an arena, freed together once the message has
 *     been sent or packed. No per-field copies.
 *   - protobuf -> plain C makes owned copies, checking only the shape
 *     (ids of the right length, known enum values, counts in range); the
 *     rules of a task are mt_task_def_check (common/defs.h).
 *
 * Allocation: plain malloc, -MT_ENOMEM on failure (the SDK embeds this).
 * THREAD: any (no shared state).
 */
#ifndef MT_PROTO_CONVERT_H
#define MT_PROTO_CONVERT_H

#include <stddef.h>

#include "common/defs.h"
#include "common/qty.h"
#include "common/selector.h"
#include "head_service.pb-c.h"

/* ---- arenas for views ----------------------------------------------------- */

/*
 * Memory freed together: allocations are cut from chunks of
 * MT_PB_ARENA_CHUNK bytes (a larger one gets a chunk of its own), so a
 * view of a whole batch costs a few mallocs, not one per array. Zeroed (or
 * MT_PB_ARENA_INIT) is empty.
 */
struct mt_pb_chunk;

struct mt_pb_arena {
    struct mt_pb_chunk *chunks; /* the one being cut first */
};

#define MT_PB_ARENA_INIT {NULL}
#define MT_PB_ARENA_CHUNK 4096

/* mt_pb_alloc - n zeroed bytes owned by a. RET NULL on out-of-memory. */
void *mt_pb_alloc(struct mt_pb_arena *a, size_t n);

/* mt_pb_arena_release - free every block; a is empty after. */
void mt_pb_arena_release(struct mt_pb_arena *a);

/* ---- plain C -> protobuf views (RET 0 or -MT_ENOMEM) ---------------------- */

int mt_pb_res_view(struct mt_pb_arena *a, const struct mt_qty_list *l,
                   Manta__ResourceEntry ***v, size_t *n);
int mt_pb_labels_view(struct mt_pb_arena *a, const struct mt_kv_list *l,
                      Manta__Label ***v, size_t *n);
int mt_pb_selector_view(struct mt_pb_arena *a, const struct mt_selector *s,
                        Manta__LabelMatch ***v, size_t *n);
/* Task arguments' values, one entry each (an argument by reference gives
 * an empty one), for TaskSpec.args or PushedTask.args. */
int mt_pb_values_view(struct mt_pb_arena *a, const struct mt_task_arg *args,
                      size_t n, ProtobufCBinaryData **v);

/*
 * mt_pb_task_spec_view - d as a TaskSpec (task_id "": the head names it).
 * OUT s  initialized and filled; valid while d and a live
 */
int mt_pb_task_spec_view(struct mt_pb_arena *a, const struct mt_task_def *d,
                         Manta__TaskSpec *s);

/* mt_pb_pg_request_view - p as a CreatePlacementGroupRequest. */
int mt_pb_pg_request_view(struct mt_pb_arena *a, const struct mt_pg_def *p,
                          Manta__CreatePlacementGroupRequest *r);

/* mt_pb_gang_request_view - g as a SubmitGangRequest (member from an
 * arena-allocated TaskSpec). */
int mt_pb_gang_request_view(struct mt_pb_arena *a, const struct mt_gang_def *g,
                            Manta__SubmitGangRequest *r);

/* ---- protobuf -> plain C (owned copies) ---------------------------------- */

/* mt_pb_object_id - a bytes field as an object id. RET 0, -MT_EINVAL (not
 * MT_OBJECT_ID_LEN bytes; *id untouched). */
int mt_pb_object_id(const ProtobufCBinaryData *b, mt_object_id *id);

/*
 * Each fills an empty destination. Lists are refused beyond max entries
 * (later duplicates replace earlier ones, which costs O(n^2)); resource
 * names must be mt_qty_valid_name and quantities >= 0.
 * OUT why  on -MT_EINVAL, a static reason for people
 * RET 0, -MT_EINVAL, -MT_ENOMEM; the destination is released on failure
 */
int mt_qty_from_pb(Manta__ResourceEntry *const *v, size_t n, size_t max,
                   struct mt_qty_list *l, const char **why);
int mt_kv_from_pb(Manta__Label *const *v, size_t n, size_t max,
                  struct mt_kv_list *l, const char **why);
/* Names to remove from an environment (env_unset), as entries with a NULL
 * value, in order and duplicates kept. */
int mt_kv_unset_from_pb(char *const *names, size_t n, size_t max,
                        struct mt_kv_list *l, const char **why);
int mt_selector_from_pb(Manta__LabelMatch *const *v, size_t n,
                        struct mt_selector *s, const char **why);

/* mt_task_def_from_pb - s into d (initialized, empty). Resource names and
 * quantities are checked by mt_task_def_check, not here. */
int mt_task_def_from_pb(const Manta__TaskSpec *s, struct mt_task_def *d,
                        const char **why);

/* mt_pg_def_from_pb - r into p (zeroed). */
int mt_pg_def_from_pb(const Manta__CreatePlacementGroupRequest *r,
                      struct mt_pg_def *p, const char **why);

/* mt_gang_def_from_pb - r into g (zeroed, member initialized); a missing
 * member leaves g->member an empty def. */
int mt_gang_def_from_pb(const Manta__SubmitGangRequest *r,
                        struct mt_gang_def *g, const char **why);

#endif /* MT_PROTO_CONVERT_H */
