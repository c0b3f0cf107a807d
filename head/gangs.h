/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gangs.h -- gangs: one program run as a set of processes over every host
 * of one or more whole TPU slices, started, failed and restarted together.
 *
 * A gang owns a slice placement group (pgs.h, mt_sched_slice_reserve:
 * all-or-nothing, two groups never share a slice) and, once the group is
 * created, one command task per member, each pinned to its host's bundle.
 * The head computes every member's environment once per attempt with
 * sched/accel_env.h (hosts from the nodes' addresses, ports from the
 * head's gang port range), so members of one gang see one consistent
 * contract. A member that ends badly (non-zero exit, failure, lost node,
 * cancel) stops every other member; when all have ended the gang restarts
 * as a whole (a new attempt, new tasks, same group) while restarts remain,
 * else it FAILS with that member's exit code. The group is removed when
 * the gang ends.
 *
 * Gangs follow their member tasks as a task listener and their groups as
 * a placement group listener. Split: gangs.c holds the table and the life
 * cycle (plain C); rpc_gangs.c the HeadService handlers and GangInfo.
 *
 * Durable (persist.h): every change of a gang is told to one follower,
 * which stores it; a restarted head restores the gangs before their
 * groups (which go back onto the same slices) and their member tasks
 * (which attach to their gang), and resumes them once recovery has begun:
 * a running gang carries on with the members its workers still run.
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_GANGS_H
#define MT_HEAD_GANGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defs.h"
#include "head/gang_ports.h"
#include "head/node_table.h"
#include "head/pgs.h"
#include "head/scheduling.h"
#include "head/tasks.h"

/* Values match proto GangState. */
enum mt_head_gang_state {
    MT_HEAD_GANG_PENDING = 1,    /* waiting for whole free slices */
    MT_HEAD_GANG_RUNNING = 2,    /* members placed or running */
    MT_HEAD_GANG_STOPPING = 3,   /* a member ended badly: stopping the rest */
    MT_HEAD_GANG_FINISHED = 4,   /* every member exited 0 */
    MT_HEAD_GANG_FAILED = 5,     /* a member failed, no restarts left */
    MT_HEAD_GANG_CANCELLED = 6,
};

/* One process of a gang in the current attempt. */
struct mt_gang_member {
    uint32_t rank, slice, host, local;
    uint64_t task;               /* task number; 0 before it is submitted */
    char task_id[17];
    char *node_id;               /* owned; NULL until known */
    enum mt_head_task_state state; /* of its task; 0 before it exists */
    int exit_code;
    char *error;                 /* owned; NULL when none */
};

/* A gang. Guarded by: loop thread. */
struct mt_gang {
    uint64_t num;
    char id[17];
    struct mt_gang_def def;      /* as submitted (owned) */
    enum mt_head_gang_state state;
    uint64_t pg;                 /* its slice group's number */
    uint32_t hosts, slices, procs;        /* per slice; procs per host */
    struct mt_gang_member *m;    /* n members, rank order */
    uint32_t n;
    uint32_t attempt;
    bool cancel;                 /* CancelGang was asked */
    bool busy;                   /* stopping members: changes only noted */
    uint16_t *ports;             /* [0] master, [1] megascale, then one per
                                    device-centric process; held until the
                                    gang ends */
    size_t nports;
    char **slice_names;          /* the slices of the last attempt */
    int exit_code;
    char *error;                 /* owned; why it failed / restarted */
    int64_t submit_ms, end_ms;   /* wall clock */
};

struct mt_head_gangs;

/*
 * mt_head_gangs_create - gangs over tasks and groups (listeners are
 * registered), drawing ports from [port_lo, port_hi]. Every pointer is
 * borrowed and must outlive it.
 */
struct mt_head_gangs *mt_head_gangs_create(struct mt_head_tasks *tasks,
                                           struct mt_head_pgs *pgs,
                                           struct mt_head_sched *hs,
                                           struct mt_node_table *nodes,
                                           uint16_t port_lo, uint16_t port_hi);

/* Free every gang (shutdown). NULL ok. */
void mt_head_gangs_destroy(struct mt_head_gangs *gs);

/*
 * mt_head_gang_submit - check def, create the gang and its slice group;
 * start its members at once when whole slices are free.
 * IN  def   taken (moved into the gang or released)
 * OUT why  when refused: the reason (static)
 * RET the gang, or NULL (err set: -MT_EINVAL, -MT_ENOSPC no ports, ...)
 */
struct mt_gang *mt_head_gang_submit(struct mt_head_gangs *gs,
                                    struct mt_gang_def *def, const char **why,
                                    int *err);

/* Write gang number num's id ("g" + 15 hex digits) into out. */
void mt_head_gang_id_of(uint64_t num, char out[17]);

/* The gang with this id, or NULL. */
struct mt_gang *mt_head_gang_find(struct mt_head_gangs *gs, const char *id);

/* mt_head_gangs_count / _at - every gang, oldest first. */
size_t mt_head_gangs_count(const struct mt_head_gangs *gs);
struct mt_gang *mt_head_gangs_at(const struct mt_head_gangs *gs, size_t i);

/* mt_head_gangs_restarts - gang restarts since the head started. */
uint64_t mt_head_gangs_restarts(const struct mt_head_gangs *gs);

/* Stop every member and end the gang CANCELLED (once they have ended). */
void mt_head_gang_cancel(struct mt_head_gangs *gs, struct mt_gang *g);

/* Is group pg a live gang's? (Users must not remove it under the gang.) */
bool mt_head_gangs_own_pg(struct mt_head_gangs *gs, uint64_t pg);

/* ---- durable state (persist.h) ---------------------------------------- */

/* mt_head_gangs_on_changed - who hears of gang num's record changing
 * (state, attempt, members, a member's task); one follower (persist.h). */
void mt_head_gangs_on_changed(struct mt_head_gangs *gs,
                              void (*fn)(void *arg, uint64_t num), void *arg);

/* The gang numbered num, or NULL. */
struct mt_gang *mt_head_gang_find_num(struct mt_head_gangs *gs, uint64_t num);

/* A gang as a head before this one stored it (plain C). */
struct mt_gang_saved {
    uint64_t num;
    struct mt_gang_def def;          /* taken */
    enum mt_head_gang_state state;
    uint64_t pg;
    uint32_t hosts, slices, procs;
    uint32_t attempt;
    bool cancel;
    const uint16_t *ports;           /* nports of them */
    size_t nports;
    const char *const *slice_names;  /* n_slice_names of them */
    size_t n_slice_names;
    const uint64_t *member_tasks;    /* rank order; 0: none */
    size_t n_members;
    int exit_code;
    const char *error;               /* NULL or "": none */
    int64_t submit_ms, end_ms;
};

/*
 * mt_head_gang_restore - put back a stored gang under its number, before
 * its group and its member tasks are restored. A live one takes its ports
 * back. Nothing runs until mt_head_gangs_attach and mt_head_gangs_resume.
 * IN  sv   sv->def taken; the rest borrowed
 * OUT why  when refused (static)
 * RET the gang, or NULL (its def does not check, its shape or members do
 *     not match the def, a gang with that number exists)
 */
struct mt_gang *mt_head_gang_restore(struct mt_head_gangs *gs,
                                     struct mt_gang_saved *sv,
                                     const char **why);

/*
 * mt_head_gangs_pg_hint - restoring group pg (mt_head_pg_restore): is it
 * a live gang's? Then per_host is what each host's bundle holds beyond
 * its chips, and *names the gang's slices (borrowed while the gang lives;
 * NULL when not all are known, e.g. it never started).
 * OUT per_host  initialized either way
 * RET true when a live gang owns pg
 */
bool mt_head_gangs_pg_hint(struct mt_head_gangs *gs, uint64_t pg,
                           const char *const **names,
                           struct mt_res_set *per_host);

/*
 * mt_head_gangs_attach - the restored tasks are in: the members of every
 * gang find their tasks (t->gang, t->gang_rank set; states copied). A
 * live gang's member whose task is gone counts as failed.
 */
void mt_head_gangs_attach(struct mt_head_gangs *gs);

/*
 * mt_head_gangs_resume - once recovery has begun (recover.h): carry on
 * with the restored gangs as if the head had not stopped. A PENDING gang
 * whose group is created starts; a STOPPING one stops its members that
 * remain; a running gang a member of which ended badly meanwhile stops
 * the rest; a gang whose members have all ended ends or restarts.
 */
void mt_head_gangs_resume(struct mt_head_gangs *gs);

#endif /* MT_HEAD_GANGS_H */
