/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_list_objects.c -- `manta list objects`: the head's object directory
 * (ListObjects), newest first: id, state, size, where copies are, whether
 * the head keeps the value inline, the reference count and the owner.
 * Text is a table in the style of the other listings; json is one object
 * {"total": N, "objects": [...]}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/alloc.h"
#include "common/ids.h"
#include "common/qty.h"
#include "common/strbuf.h"
#include "head_service.pb-c.h"
#include "proto/list_json.h"
#include "proto/services.h"

#define LIST_TIMEOUT_MS 5000

static const char *state_name(int s)
{
    static const char *names[] = {"UNKNOWN", "PENDING", "READY", "LOST",
                                  "FAILED"};

    return s >= 0 && s < 5 ? names[s] : "UNKNOWN";
}

static void hex_of(const ProtobufCBinaryData *b, char *out)
{
    mt_object_id id;

    if (b->len != MT_OBJECT_ID_LEN) {
        snprintf(out, MT_OBJECT_ID_HEX_LEN + 1, "?");
        return;
    }
    memcpy(id.b, b->data, MT_OBJECT_ID_LEN);
    mt_object_id_hex(&id, out);
}

static void text_obj(struct mt_strbuf *sb, const Manta__ObjectRecord *o)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1], size[32];
    struct mt_strbuf where = MT_STRBUF_INIT;

    hex_of(&o->object_id, hex);
    if (o->size < 1024)
        snprintf(size, sizeof(size), "%lluB", (unsigned long long)o->size);
    else
        mt_bytes_format(o->size, size, sizeof(size));
    for (size_t i = 0; i < o->n_node_ids; i++)
        mt_strbuf_addf(&where, "%s%.12s", i ? "," : "", o->node_ids[i]);
    mt_strbuf_addf(sb, "%-40s  %-7s  %10s  %-6s  %4u  %-26s  %s\n", hex,
                   state_name(o->state), size, o->is_inline ? "yes" : "no",
                   o->ref_count, where.len ? mt_strbuf_str(&where) : "-",
                   o->owner);
    mt_strbuf_release(&where);
}

int mt_cli_list_objects(const char *addr, long limit, bool json)
{
    Manta__ListObjectsRequest req = MANTA__LIST_OBJECTS_REQUEST__INIT;
    struct mt_strbuf sb = MT_STRBUF_INIT;
    Manta__ListObjectsReply *r;
    ProtobufCMessage *resp;
    char err[512] = "";

    req.limit = (uint32_t)limit;
    if (mt_cli_call(addr, &mt_head_list_objects, &req.base, LIST_TIMEOUT_MS,
                    &resp, err, sizeof(err)) < 0) {
        mt_cli_one_line(err);
        fprintf(stderr, "manta list: cannot list objects at %s: %s\n", addr,
                err);
        return 1;
    }
    r = (Manta__ListObjectsReply *)resp;
    if (json) {
        mt_list_json_objects(&sb, r);
    } else {
        mt_strbuf_addf(&sb, "Objects: %llu", (unsigned long long)r->total);
        if (r->n_objects < r->total)
            mt_strbuf_addf(&sb, " (%zu shown; raise --limit to see more)",
                           r->n_objects);
        mt_strbuf_addf(&sb, "\n%-40s  %-7s  %10s  %-6s  %4s  %-26s  %s\n",
                       "OBJECT_ID", "STATE", "SIZE", "INLINE", "REFS",
                       "LOCATIONS", "OWNER");
        for (size_t i = 0; i < r->n_objects; i++)
            text_obj(&sb, r->objects[i]);
    }
    fputs(mt_strbuf_str(&sb), stdout);
    mt_strbuf_release(&sb);
    manta__list_objects_reply__free_unpacked(r, NULL);
    return 0;
}
