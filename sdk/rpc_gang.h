/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_gang.h -- the calls of rpc_gang.c, the one file that sees the gang
 * calls' protobuf types: submit from a struct mt_gang_def
 * (common/defs.h), get a gang's detail, cancel, list. The user-facing
 * side is manta/gang.h (gang.c) and the listing in manta/admin.h.
 */
#ifndef MT_SDK_RPC_GANG_H
#define MT_SDK_RPC_GANG_H

#include "sdk/client_int.h"
#include "common/defs.h"
#include "manta/admin.h"
#include "manta/gang.h"

/* A detail as handed out: the public part, then what frees it. */
struct mt__gang_detail {
    mt_gang_detail pub;
    struct mt__keep keep;
};

/* mt__gang_submit - SubmitGang d. OUT id (idlen bytes). RET 0 or -MT_E*
 * (recorded on c). */
int mt__gang_submit(struct mt_client *c, const struct mt_gang_def *d,
                    char *id, size_t idlen);

/* mt__gang_get - GetGang: the detail (out, may be NULL; free with
 * mt_gang_detail_free) and/or its JSON (json, may be NULL; owned).
 * RET 0 or -MT_E* (recorded on c) */
int mt__gang_get(struct mt_client *c, const char *id,
                 struct mt__gang_detail **out, char **json);

/* mt__gang_cancel - CancelGang. RET 0 or -MT_E* (recorded on c). */
int mt__gang_cancel(struct mt_client *c, const char *id);

/* mt__gang_list - ListGangs (f checked, state its value): the entries
 * into l (their memory in keep) or, with json, the JSON text (owned).
 * RET 0 or -MT_E* (recorded on c) */
int mt__gang_list(struct mt_client *c, const mt_list_filter *f, int state,
                  mt_listing *l, struct mt__keep *keep, char **json);

#endif /* MT_SDK_RPC_GANG_H */
