/* SPDX-License-Identifier: Apache-2.0 */
/*
 * list_json.h -- the JSON forms of the head's listings and of one actor or
 * gang: what `manta list ... --format json`, `manta actor get` and `manta
 * gang get --format json` print, rendered by libmanta (mt_list_json) from
 * the List* replies. Next to status_json.h, with which it shares its
 * pieces, so each shape has one writer.
 *
 * Listings are one object {"total": N, "<kind>": [...]}, entries newest
 * first, with snake_case fields; states and enums are written by name
 * ("RUNNING"). Field order and spacing are part of the output users script
 * against: change them only on purpose.
 *
 * Every string field must be non-NULL (protobuf-c fills unset strings with
 * ""). THREAD: any (no shared state).
 */
#ifndef MT_LIST_JSON_H
#define MT_LIST_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"
#include "head_service.pb-c.h"

/*
 * mt_list_json_nodes - {"total": total, "nodes": [...]} of the n nodes
 * given (a selection of a GetClusterStatusReply's), each with its
 * resources, labels, start time, death reason and GPU figures.
 */
void mt_list_json_nodes(struct mt_strbuf *sb, Manta__NodeInfo *const *nodes,
                        size_t n, uint64_t total);

/* mt_list_json_tasks - {"total": N, "tasks": [...]}: spec, state, times. */
void mt_list_json_tasks(struct mt_strbuf *sb, const Manta__ListTasksReply *r);

/* mt_list_json_actors - {"total": N, "actors": [...]}. */
void mt_list_json_actors(struct mt_strbuf *sb,
                         const Manta__ListActorsReply *r);

/* mt_list_json_pgs - {"total": N, "placement_groups": [...]}. */
void mt_list_json_pgs(struct mt_strbuf *sb,
                      const Manta__ListPlacementGroupsReply *r);

/* mt_list_json_objects - {"total": N, "objects": [...]}. */
void mt_list_json_objects(struct mt_strbuf *sb,
                          const Manta__ListObjectsReply *r);

/* mt_list_json_gangs - {"total": N, "gangs": [...]} on one line. */
void mt_list_json_gangs(struct mt_strbuf *sb, const Manta__ListGangsReply *r);

/* mt_json_node - one node, as in the listing (no newline). */
void mt_json_node(struct mt_strbuf *sb, const Manta__NodeInfo *n);

/*
 * mt_list_json_paged - append listing (a whole listing as written above,
 * "{...}\n") with "offset": offset, "limit": limit added first: the
 * dashboard's /api listings.
 */
void mt_list_json_paged(struct mt_strbuf *sb, const char *listing,
                        size_t len, uint32_t offset, uint32_t limit);

/*
 * mt_list_json_state - the value of state name (any case) for kind
 * ("tasks", "actors", "placement_groups", "objects", "gangs", "nodes"),
 * as the listings above spell the states.
 * RET the value (>= 1), or 0: no such kind or state
 */
int mt_list_json_state(const char *kind, const char *name);

/* mt_json_actor - one actor, as in the listing (no newline). */
void mt_json_actor(struct mt_strbuf *sb, const Manta__ActorInfo *a);

/* mt_json_gang - one gang with its members, as in the listing. */
void mt_json_gang(struct mt_strbuf *sb, const Manta__GangInfo *g);

#endif /* MT_LIST_JSON_H */
