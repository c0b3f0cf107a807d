/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actor_table.h -- the head's actor table: who each actor is and where it is in
 * its life.
 *
 *   created (its creation task submitted) -> PENDING_CREATION
 *   PENDING_CREATION / RESTARTING --factory returned on a worker--> ALIVE
 *   ALIVE --executor or node died, restarts left--> RESTARTING
 *   any --creation failed, no restarts left, killed--> DEAD (death_reason)
 *
 * An actor's id is its creation task's id, and its number the task's
 * number. Method calls wait in the actor's FIFO queue (task numbers) while
 * it is not ALIVE; each incarnation numbers the calls it dispatches 0, 1,
 * 2, ... (next_seq), which is the order its worker runs them in. A name
 * is unique among actors that are not DEAD. Dead actors stay listed until
 * MT_ACTOR_KEEP_DEAD newer ones have died.
 *
 * The state machine itself lives in actors.c (it drives tasks and
 * workers); this file is the plain table. No protobuf here.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_ACTOR_TABLE_H
#define MT_HEAD_ACTOR_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_HEAD_ACTOR_MAGIC 0x6163746fu /* "acto" */
#define MT_ACTOR_KEEP_DEAD 1000

/* Values match proto ActorState. */
enum mt_head_actor_state {
    MT_ACTOR_PENDING_CREATION = 1,
    MT_ACTOR_ALIVE = 2,
    MT_ACTOR_RESTARTING = 3,
    MT_ACTOR_DEAD = 4,
};

/* An actor. Guarded by: loop thread. */
struct mt_head_actor {
    uint32_t magic;              /* MT_HEAD_ACTOR_MAGIC */
    uint64_t num;                /* its creation task's number */
    char id[17];                 /* num as an id (common/ids.h) */
    char *name;                  /* NULL when anonymous */
    char *function;              /* the factory */
    char *owner;                 /* the creating client ("" unknown) */
    bool detached;
    int max_restarts;            /* -1: without limit */
    uint32_t restarts;           /* restarts so far */
    enum mt_head_actor_state state;
    char *node_id;               /* where it lives or lived; NULL never */
    uint32_t pid;                /* its executor, 0 when not ALIVE */
    char *death_reason;          /* DEAD: why */
    int64_t create_ms, end_ms;   /* wall clock */
    uint32_t incarnation;        /* its creation task's attempt when ALIVE */
    uint32_t last_attempt;       /* the creation attempt last seen */
    uint64_t next_seq;           /* the next call's number this incarnation */
    uint64_t dispatched;         /* calls sent to workers, all incarnations */
    bool no_restart;             /* killed for good */
    bool owner_gone;             /* killed because its owner went away */
    uint64_t *queue;             /* method task numbers waiting (ring) */
    size_t q_head, q_len, q_cap;
    uint64_t death_order;        /* for forgetting old dead actors */
};

struct mt_actor_table {
    struct mt_head_actor **v;         /* oldest first */
    size_t n, cap;
    uint64_t deaths;
    size_t n_dead;
};

/* mt_actor_table_release - free every actor; the table is empty after. */
void mt_actor_table_release(struct mt_actor_table *t);

/*
 * mt_actor_table_add - add a PENDING_CREATION actor for creation task num.
 * IN  name, function, owner  borrowed, copied; name NULL or "" = anonymous
 * RET the actor (borrowed; owned by the table)
 */
struct mt_head_actor *mt_actor_table_add(struct mt_actor_table *t, uint64_t num,
                              const char *name, const char *function,
                              const char *owner, bool detached,
                              int max_restarts, int64_t now_wall);

/* mt_actor_table_find / _find_id - by number or hex id; NULL when unknown. */
struct mt_head_actor *mt_actor_table_find(const struct mt_actor_table *t, uint64_t num);
struct mt_head_actor *mt_actor_table_find_id(const struct mt_actor_table *t,
                                  const char *id);
/* mt_actor_table_find_name - the actor that is not DEAD with this name. */
struct mt_head_actor *mt_actor_table_find_name(const struct mt_actor_table *t,
                                    const char *name);

/*
 * mt_actor_table_set_dead - DEAD with reason (borrowed, copied); may forget the
 * oldest dead actors beyond MT_ACTOR_KEEP_DEAD (never a).
 */
void mt_actor_table_set_dead(struct mt_actor_table *t, struct mt_head_actor *a,
                       const char *reason, int64_t now_wall);

/* mt_head_actor_set_node - where it lives (copied; NULL ok). */
void mt_head_actor_set_node(struct mt_head_actor *a, const char *node_id);

/* The call queue: push at the back, pop from the front. */
void mt_head_actor_queue_push(struct mt_head_actor *a, uint64_t task_num);
bool mt_head_actor_queue_pop(struct mt_head_actor *a, uint64_t *task_num);

/* mt_head_actor_state_name - "ALIVE", ... */
const char *mt_head_actor_state_name(enum mt_head_actor_state s);

#endif /* MT_HEAD_ACTOR_TABLE_H */
