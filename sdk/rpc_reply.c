/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_reply.c -- plain C views on the head's replies shared by the
 * adapters (see rpc_reply.h).
 */
#include "sdk/rpc_reply.h"

#include <stdio.h>
#include <string.h>

#include "common/qty.h"
#include "common/rpc.h"
#include "common/strbuf.h"
#include "sdk/client.h"
#include "sdk/error.h"

mt_resource *mt__res_view(struct mt__keep *k, Manta__ResourceEntry *const *v,
                          size_t n)
{
    mt_resource *r = n ? mt__keep_alloc(k, n * sizeof(*r)) : NULL;

    for (size_t i = 0; r && i < n; i++) {
        r[i].name = v[i]->name;
        r[i].amount = (double)v[i]->quantity / MT_QTY_SCALE;
    }
    return r;
}

int mt__labels_view(struct mt__keep *k, Manta__Label **v, size_t n,
                    const mt_label **out, size_t *n_out)
{
    mt_label *l = n ? mt__keep_alloc(k, n * sizeof(*l)) : NULL;

    if (n && !l)
        return -MT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        l[i].key = v[i]->key;
        l[i].value = v[i]->value;
    }
    *out = l;
    *n_out = n;
    return 0;
}

int mt__list_call(struct mt_client *c, const struct mt_rpc_method *method,
                  const void *req,
                  void (*render)(struct mt_strbuf *sb, const void *reply),
                  char **json, struct mt__keep *keep)
{
    struct mt_strbuf sb = MT_STRBUF_INIT_SOFT;
    void *reply;
    int rc = mt__head_call(c, method, req, c->rpc_timeout_ms, 0, &reply);

    if (rc < 0)
        return rc;
    if (!json) {
        keep->reply = reply;
        return 0;
    }
    render(&sb, reply);
    mt__msg_free(reply);
    if (mt__json_take(&sb, json) < 0)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    return 0;
}

int mt__call_for_id(struct mt_client *c, const struct mt_rpc_method *method,
                    const void *req, const char *field, const char *what,
                    char *id, size_t idlen)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(method->resp, field);
    const char *got = "";
    void *reply;
    int rc = mt__head_call(c, method, req, c->rpc_timeout_ms,
                           MT__CALL_WAIT | MT__CALL_ONCE, &reply);

    if (rc < 0)
        return rc;
    if (f && f->type == PROTOBUF_C_TYPE_STRING)
        got = *(const char **)((const char *)reply + f->offset);
    if (!got || !*got || strlen(got) >= idlen)
        rc = mt__set_error(c, -MT_EPROTO, "%s", what);
    else
        snprintf(id, idlen, "%s", got);
    mt__msg_free(reply);
    return rc;
}
