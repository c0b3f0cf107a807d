/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gangs.h -- gangs: one program run as a set of processes over every host
 * of one or more whole TPU slices, started, failed and restarted together.
 *
 * A gang owns a slice placement group (rpc_pgs.c, mt_sched_slice_reserve:
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
 * Split: gangs.c holds the table and the life cycle; rpc_gangs.c the
 * HeadService handlers and GangInfo. THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_GANGS_H
#define MT_HEAD_GANGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "head/gang_ports.h"

struct mt_head;
struct mt_task;
struct Manta__SubmitGangRequest;

/* One process of a gang in the current attempt. */
struct mt_gang_member {
    uint32_t rank, slice, host, local;
    uint64_t task;               /* task number; 0 before it is submitted */
    char task_id[17];
    char *node_id;               /* owned; NULL until known */
    int state;                   /* proto TaskState of its task */
    int exit_code;
    char *error;                 /* owned; NULL when none */
};

/* A gang. Guarded by: loop thread. */
struct mt_gang {
    uint64_t num;
    char id[17];
    struct Manta__SubmitGangRequest *req; /* as sent (owned, unpacked) */
    int state;                   /* proto GangState */
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

/* The head's gangs, oldest first, and the port range they draw from. */
struct mt_gang_table {
    struct mt_gang **v;
    size_t n, cap;
    uint64_t next;
    struct mt_port_range ports;
};

/*
 * mt__gang_submit - check req, create the gang and its slice group; start
 * its members at once when whole slices are free.
 * OUT why  when refused: the reason (static)
 * RET the gang, or NULL (err set: -MT_EINVAL, -MT_ENOSPC no ports, ...)
 * OWNERSHIP borrows req (copied)
 */
struct mt_gang *mt__gang_submit(struct mt_head *h,
                                const struct Manta__SubmitGangRequest *req,
                                const char **why, int *err);

/* Write gang number num's id ("g" + 15 hex digits) into out. */
void mt__gang_id_of(uint64_t num, char out[17]);

/* The gang with this id, or NULL. */
struct mt_gang *mt__gang_find(struct mt_head *h, const char *id);

/* Stop every member and end the gang CANCELLED (once they have ended). */
void mt__gang_cancel(struct mt_head *h, struct mt_gang *g);

/* Group num was created (or re-created after a node died): start a gang
 * that waits for it. */
void mt__gang_pg_created(struct mt_head *h, uint64_t pg);

/* Is group pg a gang's? (Users must not remove it under the gang.) */
bool mt__gang_owns_pg(struct mt_head *h, uint64_t pg);

/* Member task t changed state; its end drives the gang. */
void mt__gang_task_changed(struct mt_head *h, struct mt_task *t);

/* Free every gang (shutdown). */
void mt__gangs_release(struct mt_head *h);

#endif /* MT_HEAD_GANGS_H */
