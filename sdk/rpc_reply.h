/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_reply.h -- what the rpc_*.c adapters share to hand the head's
 * replies out as plain C views (manta/admin.h): the reply is kept (struct
 * mt__keep) and the views point into it; only arrays are allocated.
 * Like the adapters, and unlike every other sdk/ header, it sees the
 * generated protobuf types: include it from rpc_*.c only.
 */
#ifndef MT_SDK_RPC_REPLY_H
#define MT_SDK_RPC_REPLY_H

#include "sdk/client_int.h"
#include "head_service.pb-c.h"
#include "manta/admin.h"

/* mt__res_view - v as mt_resource entries (amounts in units) in k.
 * RET the array, or NULL on ENOMEM (also when n is 0: check n first). */
mt_resource *mt__res_view(struct mt__keep *k, Manta__ResourceEntry *const *v,
                          size_t n);

/* mt__labels_view - v as mt_label entries in k (*out NULL when n is 0).
 * RET 0, -MT_ENOMEM */
int mt__labels_view(struct mt__keep *k, Manta__Label **v, size_t n,
                    const mt_label **out, size_t *n_out);

struct mt_strbuf;
struct mt_rpc_method;

/*
 * mt__list_call - call a List method with req (borrowed) and either
 * render the reply as JSON into *json (owned; render gets the reply), or,
 * with json NULL, keep the reply in keep->reply for the caller's views.
 * RET 0, or -MT_E* (recorded on c)
 */
int mt__list_call(struct mt_client *c, const struct mt_rpc_method *method,
                  const void *req,
                  void (*render)(struct mt_strbuf *sb, const void *reply),
                  char **json, struct mt__keep *keep);

/*
 * mt__call_for_id - call a method that creates something (req borrowed)
 * and copy the new id, the reply's string field `field`, into id. A new
 * thing each time: retried only when it cannot have arrived (retry.h).
 * IN  what  the message when the reply has no id that fits, e.g. "the
 *           head returned no gang id"
 * RET 0, or -MT_E* (recorded on c)
 */
int mt__call_for_id(struct mt_client *c, const struct mt_rpc_method *method,
                    const void *req, const char *field, const char *what,
                    char *id, size_t idlen);

#endif /* MT_SDK_RPC_REPLY_H */
