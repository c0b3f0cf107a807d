/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actor_table.c -- the head's actor table (see actor_table.h).
 *
 * DESIGN: an array in creation order, searched linearly: clusters run
 * hundreds of actors, not millions, and every lookup is one call's worth
 * of work next to an rpc. Should that stop being true, index the table by
 * number and name. Each actor's call queue is a ring of task numbers.
 */
#include "head/actor_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/ids.h"

static void actor_free(struct mt_head_actor *a)
{
    free(a->name);
    free(a->function);
    free(a->owner);
    free(a->node_id);
    free(a->death_reason);
    free(a->queue);
    a->magic = 0;
    free(a);
}

void mt_actor_table_release(struct mt_actor_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        actor_free(t->v[i]);
    free(t->v);
    memset(t, 0, sizeof(*t));
}

struct mt_head_actor *mt_actor_table_add(struct mt_actor_table *t, uint64_t num,
                              const char *name, const char *function,
                              const char *owner, bool detached,
                              int max_restarts, int64_t now_wall)
{
    struct mt_head_actor *a = mt_xcalloc(1, sizeof(*a));

    a->magic = MT_HEAD_ACTOR_MAGIC;
    a->num = num;
    mt_num_id(MT_ID_ACTOR, num, a->id);
    a->name = name && *name ? mt_xstrdup(name) : NULL;
    a->function = mt_xstrdup(function ? function : "");
    a->owner = mt_xstrdup(owner ? owner : "");
    a->detached = detached;
    a->max_restarts = max_restarts;
    a->state = MT_ACTOR_PENDING_CREATION;
    a->create_ms = now_wall;
    mt_xgrow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v));
    t->v[t->n++] = a;
    return a;
}

struct mt_head_actor *mt_actor_table_find(const struct mt_actor_table *t, uint64_t num)
{
    for (size_t i = t->n; i-- > 0;)
        if (t->v[i]->num == num)
            return t->v[i];
    return NULL;
}

struct mt_head_actor *mt_actor_table_find_id(const struct mt_actor_table *t,
                                  const char *id)
{
    uint64_t num;

    return mt_num_id_parse(MT_ID_ACTOR, id, &num) < 0
               ? NULL
               : mt_actor_table_find(t, num);
}

struct mt_head_actor *mt_actor_table_find_name(const struct mt_actor_table *t,
                                    const char *name)
{
    if (!name || !*name)
        return NULL;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i]->state != MT_ACTOR_DEAD && t->v[i]->name &&
            strcmp(t->v[i]->name, name) == 0)
            return t->v[i];
    return NULL;
}

static void set_str(char **field, const char *value)
{
    char *copy = value ? mt_xstrdup(value) : NULL;

    free(*field);
    *field = copy;
}

void mt_head_actor_set_node(struct mt_head_actor *a, const char *node_id)
{
    set_str(&a->node_id, node_id);
}

/* Forget the oldest dead actor other than keep. */
static void forget_oldest(struct mt_actor_table *t,
                          const struct mt_head_actor *keep)
{
    size_t at = t->n;

    for (size_t i = 0; i < t->n; i++) {
        struct mt_head_actor *a = t->v[i];
        if (a != keep && a->state == MT_ACTOR_DEAD &&
            (at == t->n || a->death_order < t->v[at]->death_order))
            at = i;
    }
    if (at == t->n)
        return;
    actor_free(t->v[at]);
    memmove(&t->v[at], &t->v[at + 1], (t->n - at - 1) * sizeof(*t->v));
    t->n--;
    t->n_dead--;
}

void mt_actor_table_set_dead(struct mt_actor_table *t, struct mt_head_actor *a,
                       const char *reason, int64_t now_wall)
{
    if (a->state == MT_ACTOR_DEAD)
        return;
    a->state = MT_ACTOR_DEAD;
    a->pid = 0;
    set_str(&a->death_reason, reason ? reason : "dead");
    a->end_ms = now_wall;
    a->death_order = ++t->deaths;
    t->n_dead++;
    while (t->n_dead > MT_ACTOR_KEEP_DEAD)
        forget_oldest(t, a);
}

void mt_head_actor_queue_push(struct mt_head_actor *a, uint64_t task_num)
{
    if (a->q_len == a->q_cap) {
        size_t cap = a->q_cap ? a->q_cap * 2 : 16;
        uint64_t *q = mt_xcalloc(cap, sizeof(*q));

        for (size_t i = 0; i < a->q_len; i++)
            q[i] = a->queue[(a->q_head + i) % a->q_cap];
        free(a->queue);
        a->queue = q;
        a->q_cap = cap;
        a->q_head = 0;
    }
    a->queue[(a->q_head + a->q_len) % a->q_cap] = task_num;
    a->q_len++;
}

bool mt_head_actor_queue_pop(struct mt_head_actor *a, uint64_t *task_num)
{
    if (a->q_len == 0)
        return false;
    *task_num = a->queue[a->q_head];
    a->q_head = (a->q_head + 1) % a->q_cap;
    a->q_len--;
    return true;
}

const char *mt_head_actor_state_name(enum mt_head_actor_state s)
{
    switch (s) {
    case MT_ACTOR_PENDING_CREATION: return "PENDING_CREATION";
    case MT_ACTOR_ALIVE: return "ALIVE";
    case MT_ACTOR_RESTARTING: return "RESTARTING";
    case MT_ACTOR_DEAD: return "DEAD";
    default: return "UNKNOWN";
    }
}
