/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pg_int.h -- placement groups inside libmanta: options as a struct
 * mt_pg_def (common/defs.h), the handle, and the calls of rpc_pg.c, the
 * one file that sees their protobuf types. Public side: manta/pg.h (pg.c).
 */
#ifndef MT_SDK_PG_INT_H
#define MT_SDK_PG_INT_H

#include "sdk/task_int.h"
#include "manta/admin.h"

#define MT_PG_MAGIC 0x6d747067u  /* "mtpg" */

struct mt_pg_opts {
    struct mt_pg_def def;
};

/* A group this client created or named. Its bundle count is 0 until known
 * (a slice group, or one named by id, learns it from its first wait). */
struct mt_pg {
    uint32_t magic;              /* MT_PG_MAGIC */
    char id[64];
    size_t n_bundles;
    char **nodes;                /* per bundle, from the last wait */
    char note[256];              /* the head's note at the last wait */
};

/* What one WaitPlacementGroup saw. Owned strings. */
struct mt__pg_seen {
    mt_pg_state state;
    char note[256];              /* why it waits, e.g. "infeasible: ..." */
    char **nodes;                /* per bundle: the node holding it, "" */
    size_t n_nodes;
};

void mt__pg_seen_release(struct mt__pg_seen *s);

/* mt__pg_create - CreatePlacementGroup d. OUT id the head's id (idlen
 * bytes). RET 0 or -MT_E* (recorded on c). */
int mt__pg_create(struct mt_client *c, const struct mt_pg_def *d, char *id,
                  size_t idlen);

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

#endif /* MT_SDK_PG_INT_H */
