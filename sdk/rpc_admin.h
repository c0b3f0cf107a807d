/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_admin.h -- the cluster's status and node listing inside libmanta:
 * the calls of rpc_admin.c, the one file that sees GetClusterStatus's
 * protobuf types. Public side: manta/admin.h (admin.c, which also lists
 * the other kinds through their modules) and the cluster queries of
 * manta/client.h.
 */
#ifndef MT_SDK_RPC_ADMIN_H
#define MT_SDK_RPC_ADMIN_H

#include "sdk/client_int.h"
#include "manta/admin.h"

#define MT__LIST_DEFAULT_LIMIT 100  /* the head's default, also for nodes */

/* A status as handed out: the public part, then what frees it. */
struct mt__status {
    mt_cluster_status pub;
    struct mt__keep keep;
};

/* mt__status_free - free a status. NULL ok. */
void mt__status_free(struct mt__status *s);

/*
 * mt__status_get - GetClusterStatus within timeout_ms.
 * IN  flags  0 or MT__CALL_WAIT (connect waits for the head)
 * OUT out    the status (free with mt__status_free), when json is NULL
 * OUT json   or the status JSON (owned, free with free())
 * RET 0 or -MT_E* (recorded on c)
 */
int mt__status_get(struct mt_client *c, int timeout_ms, unsigned flags,
                   struct mt__status **out, char **json);

/* mt__node_list - the nodes f selects (state: 1 alive, 2 dead, 0 any),
 * from GetClusterStatus: the entries into l (their memory in keep) or,
 * with json, the JSON text (owned). RET 0 or -MT_E* (recorded on c) */
int mt__node_list(struct mt_client *c, const mt_list_filter *f, int state,
                  mt_listing *l, struct mt__keep *keep, char **json);

#endif /* MT_SDK_RPC_ADMIN_H */
