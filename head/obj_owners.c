/* SPDX-License-Identifier: Apache-2.0 */
/*
 * obj_owners.c -- the driver sessions holding object references, as a
 * plain table (obj_owners.h): a short list of sessions, each with an id
 * map of the references it holds per object. objects.c applies the rules.
 *
 * THREAD: the head's loop thread only.
 */
#include "head/obj_owners.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

void mt_obj_owners_init(struct mt_obj_owners *t)
{
    t->list = NULL;
    t->n = 0;
}

void mt_obj_owner_free(struct mt_obj_owner *o)
{
    struct mt_idmap_node *n, *nx;

    if (!o)
        return;
    for (n = mt_idmap_first(&o->refs); n; n = nx) {
        nx = mt_idmap_next(&o->refs, n);
        mt_idmap_remove(&o->refs, n);
        free(MT_CONTAINER_OF(n, struct mt_obj_held, node));
    }
    mt_idmap_release(&o->refs);
    free(o->id);
    free(o);
}

void mt_obj_owners_release(struct mt_obj_owners *t)
{
    while (t->list) {
        struct mt_obj_owner *o = t->list;

        t->list = o->next;
        mt_obj_owner_free(o);
    }
    t->n = 0;
}

struct mt_obj_owner *mt_obj_owners_find(const struct mt_obj_owners *t,
                                        const char *id)
{
    for (struct mt_obj_owner *o = t->list; o; o = o->next)
        if (strcmp(o->id, id) == 0)
            return o;
    return NULL;
}

struct mt_obj_owner *mt_obj_owners_open(struct mt_obj_owners *t,
                                        const char *id)
{
    struct mt_obj_owner *o = mt_obj_owners_find(t, id);

    if (o)
        return o;
    o = mt_xcalloc(1, sizeof(*o));
    o->id = mt_xstrdup(id);
    mt_idmap_init(&o->refs);
    o->next = t->list;
    t->list = o;
    t->n++;
    return o;
}

struct mt_obj_owner *mt_obj_owners_take(struct mt_obj_owners *t,
                                        const char *id)
{
    for (struct mt_obj_owner **pp = &t->list; *pp; pp = &(*pp)->next) {
        struct mt_obj_owner *o = *pp;

        if (strcmp(o->id, id) == 0) {
            *pp = o->next;
            o->next = NULL;
            t->n--;
            return o;
        }
    }
    return NULL;
}

static struct mt_obj_held *held(const struct mt_obj_owner *o,
                                const mt_object_id *id)
{
    struct mt_idmap_node *n = mt_idmap_find(&o->refs, id);

    return n ? MT_CONTAINER_OF(n, struct mt_obj_held, node) : NULL;
}

void mt_obj_owner_ref(struct mt_obj_owner *o, const mt_object_id *id)
{
    struct mt_obj_held *h = held(o, id);

    if (h) {
        h->count++;
        return;
    }
    h = mt_xcalloc(1, sizeof(*h));
    h->node.id = *id;
    h->count = 1;
    mt_idmap_insert(&o->refs, &h->node);
}

bool mt_obj_owner_unref(struct mt_obj_owner *o, const mt_object_id *id)
{
    struct mt_obj_held *h = held(o, id);

    if (!h)
        return false;
    if (--h->count == 0) {
        mt_idmap_remove(&o->refs, &h->node);
        free(h);
    }
    return true;
}

uint32_t mt_obj_owner_count(const struct mt_obj_owner *o,
                            const mt_object_id *id)
{
    struct mt_obj_held *h = held(o, id);

    return h ? h->count : 0;
}
