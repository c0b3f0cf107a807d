/* SPDX-License-Identifier: Apache-2.0 */
/*
 * obj_table.c -- the head's object directory as a plain table
 * (obj_table.h): an id map of records, each with its copies, inline value,
 * references and waiting tasks. The rules (when an object becomes ready,
 * lost or is freed) live in objects.c.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/obj_table.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

void mt_obj_table_init(struct mt_obj_table *ot)
{
    memset(ot, 0, sizeof(*ot));
    mt_idmap_init(&ot->map);
    ot->next_seq = 1;
}

static void obj_destroy(struct mt_obj *o)
{
    for (size_t i = 0; i < o->n_nodes; i++)
        free(o->nodes[i]);
    free(o->nodes);
    free(o->data);
    free(o->owner);
    free(o->error);
    free(o->waiters);
    free(o);
}

void mt_obj_table_release(struct mt_obj_table *ot)
{
    struct mt_idmap_node *n, *nx;

    for (n = mt_idmap_first(&ot->map); n; n = nx) {
        nx = mt_idmap_next(&ot->map, n);
        mt_idmap_remove(&ot->map, n);
        obj_destroy(MT_CONTAINER_OF(n, struct mt_obj, node));
    }
    mt_idmap_release(&ot->map);
}

struct mt_obj *mt_obj_find(const struct mt_obj_table *ot,
                           const mt_object_id *id)
{
    struct mt_idmap_node *n = mt_idmap_find(&ot->map, id);

    return n ? MT_CONTAINER_OF(n, struct mt_obj, node) : NULL;
}

struct mt_obj *mt_obj_new(struct mt_obj_table *ot, const mt_object_id *id,
                          enum mt_obj_state state, const char *owner,
                          uint32_t refs)
{
    struct mt_obj *o = mt_xcalloc(1, sizeof(*o));

    o->node.id = *id;
    o->state = state;
    o->owner = mt_xstrdup(owner ? owner : "");
    o->refs = refs;
    o->seq = ot->next_seq++;
    mt_idmap_insert(&ot->map, &o->node);
    mt_obj_touch(ot, o);
    return o;
}

void mt_obj_free(struct mt_obj_table *ot, struct mt_obj *o)
{
    if (ot->touched)
        ot->touched(ot->touched_arg, o, true);
    mt_idmap_remove(&ot->map, &o->node);
    obj_destroy(o);
}

bool mt_obj_has_node(const struct mt_obj *o, const char *node_id)
{
    for (size_t i = 0; i < o->n_nodes; i++)
        if (strcmp(o->nodes[i], node_id) == 0)
            return true;
    return false;
}

void mt_obj_add_node(struct mt_obj *o, const char *node_id)
{
    if (!node_id || !*node_id || mt_obj_has_node(o, node_id))
        return;
    mt_xgrow((void **)&o->nodes, &o->cap_nodes, o->n_nodes + 1,
             sizeof(*o->nodes));
    o->nodes[o->n_nodes++] = mt_xstrdup(node_id);
}

bool mt_obj_drop_node(struct mt_obj *o, const char *node_id)
{
    for (size_t i = 0; i < o->n_nodes; i++) {
        if (strcmp(o->nodes[i], node_id) != 0)
            continue;
        free(o->nodes[i]);
        memmove(&o->nodes[i], &o->nodes[i + 1],
                (o->n_nodes - i - 1) * sizeof(*o->nodes));
        o->n_nodes--;
        return true;
    }
    return false;
}

void mt_obj_set_inline(struct mt_obj *o, const void *data, size_t len)
{
    free(o->data);
    o->data = mt_xmalloc(len ? len : 1);
    if (len)
        memcpy(o->data, data, len);
    o->size = len;
    o->is_inline = true;
}

void mt_obj_set_error(struct mt_obj *o, enum mt_obj_state state,
                      const char *why)
{
    o->state = state;
    free(o->error);
    o->error = why ? mt_xstrdup(why) : NULL;
}

void mt_obj_add_waiter(struct mt_obj *o, uint64_t num)
{
    mt_xgrow((void **)&o->waiters, &o->cap_waiters, o->n_waiters + 1,
             sizeof(*o->waiters));
    o->waiters[o->n_waiters++] = num;
}

bool mt_obj_freeable(const struct mt_obj *o)
{
    return o->refs == 0 &&
           (o->state != MT_OBJ_PENDING || (o->awaited && !o->gets));
}

const char *mt_obj_state_name(enum mt_obj_state s)
{
    switch (s) {
    case MT_OBJ_PENDING:
        return "PENDING";
    case MT_OBJ_READY:
        return "READY";
    case MT_OBJ_LOST:
        return "LOST";
    case MT_OBJ_FAILED:
        return "FAILED";
    }
    return "UNKNOWN";
}
