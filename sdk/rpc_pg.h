/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_pg.h -- the calls of rpc_pg.c, the one file that sees the placement
 * group calls' protobuf types: create from a struct mt_pg_def
 * (common/defs.h), wait, remove, list. The user-facing side is
 * manta/pg.h (pg.c) and the listing in manta/admin.h.
 */
#ifndef MT_SDK_RPC_PG_H
#define MT_SDK_RPC_PG_H

#include "sdk/client_int.h"
#include "common/defs.h"
#include "manta/admin.h"
#include "manta/pg.h"

/* What one WaitPlacementGroup saw. Owned strings. */
struct mt__pg_seen {
    mt_pg_state state;
    char note[256];              /* why it waits, e.g. "infeasible: ..." */
    char **nodes;                /* per bundle: the node holding it, "" */
    size_t n_nodes;
};

void mt__pg_seen_release(struct mt__pg_seen *s);

/* mt__pg_create - CreatePlacementGroup d. OUT id the head's id (idlen
 * bytes); seen the group when it was created at once (state CREATED, its
 * nodes; release it), else state UNKNOWN. RET 0 or -MT_E* (recorded on
 * c). */
int mt__pg_create(struct mt_client *c, const struct mt_pg_def *d, char *id,
                  size_t idlen, struct mt__pg_seen *seen);

/* mt__pg_wait_once - one WaitPlacementGroup of up to slice_ms.
 * RET 0 (out filled) or -MT_E* (recorded on c) */
int mt__pg_wait_once(struct mt_client *c, const char *id, int slice_ms,
                     struct mt__pg_seen *out);

/* mt__pg_remove - RemovePlacementGroup. RET 0 or -MT_E* (recorded). */
int mt__pg_remove(struct mt_client *c, const char *id);

/* mt__pg_list - ListPlacementGroups (f checked, state its value): the
 * entries into l (their memory in keep) or, with json, the JSON text
 * (owned). RET 0 or -MT_E* (recorded on c) */
int mt__pg_list(struct mt_client *c, const mt_list_filter *f, int state,
                mt_listing *l, struct mt__keep *keep, char **json);

#endif /* MT_SDK_RPC_PG_H */
