/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manta/gang.h -- gangs: one program run over every host of whole TPU
 * slices, one process per host or per chip, started, stopped and restarted
 * together.
 *
 * The head reserves the slices (all-or-nothing, like a slice placement
 * group, see mt_pg_opts_set_tpu_slice()) and, once they are free, starts
 * one command task per member with the TPU environment the scheduler
 * computed for it: TPU_WORKER_ID, TPU_WORKER_HOSTNAMES, the bounds,
 * TPU_VISIBLE_CHIPS, TPU_PROCESS_ADDRESSES / TPU_PROCESS_PORT and the
 * TorchTPU variables (device launch), RANK / WORLD_SIZE / LOCAL_RANK /
 * MASTER_ADDR / MASTER_PORT, MEGASCALE_* for several slices, and
 * MANTA_GANG_ID / MANTA_GANG_RANK / MANTA_GANG_SIZE / MANTA_GANG_ATTEMPT.
 * Ports come from the head's gang port range. If a member exits non-zero,
 * fails or its node dies, the other members are stopped and the gang
 * starts again as a whole (new tasks, MANTA_GANG_ATTEMPT + 1) while
 * restarts remain; otherwise it FAILS with that member's exit code. The
 * gang lives on the head: it outlives the client, so a long-lived gang (a
 * serving replica on one slice) is a gang whose program does not exit,
 * with max_restarts -1.
 *
 *     mt_gang_opts_t *go;
 *     const char *argv[] = {"python3", "train.py"};
 *     char id[32];
 *     mt_gang_info_t gi;
 *
 *     mt_gang_opts_create(&go, "v4-16");
 *     mt_gang_opts_set_launch(go, MT_GANG_LAUNCH_DEVICE);
 *     mt_gang_submit(client, go, argv, 2, id, sizeof(id));
 *     mt_gang_opts_destroy(go);
 *     mt_gang_wait(client, id, -1, &gi);  // gi.state, gi.exit_code, ...
 *
 * THREAD: every function is thread-safe, except that one mt_gang_opts_t
 * must not be changed by two threads at once.
 */
#ifndef MANTA_GANG_H
#define MANTA_GANG_H

#include <stddef.h>
#include <stdint.h>

#include "manta/client.h"
#include "manta/task.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mt_gang_opts mt_gang_opts_t;

/* How many processes per host. Values are stable. */
typedef enum mt_gang_launch {
    MT_GANG_LAUNCH_HOST = 1,   /* one per host, all its chips (JAX) */
    MT_GANG_LAUNCH_DEVICE = 2, /* one per chip (TorchTPU, PyTorch/XLA) */
} mt_gang_launch;

/* Where a gang is in its life. Values are stable (proto GangState). */
typedef enum mt_gang_state {
    MT_GANG_UNKNOWN = 0,
    MT_GANG_PENDING = 1,   /* waiting for whole free slices */
    MT_GANG_RUNNING = 2,
    MT_GANG_STOPPING = 3,  /* a member ended badly: stopping the others */
    MT_GANG_FINISHED = 4,  /* every member exited 0 */
    MT_GANG_FAILED = 5,
    MT_GANG_CANCELLED = 6,
} mt_gang_state;

/* What mt_gang_wait() reports. */
typedef struct mt_gang_info {
    mt_gang_state state;
    uint32_t attempt;      /* 0 for the first run */
    uint32_t members;      /* processes per attempt */
    int exit_code;         /* FAILED: the failed member's (1 without one) */
    char slice[128];       /* the first slice it holds or held, "" never */
    char error[512];       /* why it failed, restarted or waits */
} mt_gang_info_t;

/*
 * mt_gang_opts_create - options for a gang over one slice of pod_type
 * ("v4-16"), host launch, no restarts, members taking no CPU.
 * OUT out  returns owned options, free with mt_gang_opts_destroy()
 * RET 0, -MT_EINVAL (NULL or empty pod type), -MT_ENOMEM
 */
MT_EXTERN int mt_gang_opts_create(mt_gang_opts_t **out, const char *pod_type);
/* mt_gang_opts_destroy - free options. OWNERSHIP invalidates o; NULL ok. */
MT_EXTERN void mt_gang_opts_destroy(mt_gang_opts_t *o);
/* mt_gang_opts_set_launch - MT_GANG_LAUNCH_*. RET 0, -MT_EINVAL. */
MT_EXTERN int mt_gang_opts_set_launch(mt_gang_opts_t *o, mt_gang_launch l);
/* mt_gang_opts_set_slices - 1..64 slices (more than 1: multislice with
 * MEGASCALE_*). RET 0, -MT_EINVAL. */
MT_EXTERN int mt_gang_opts_set_slices(mt_gang_opts_t *o, unsigned slices);
/* mt_gang_opts_set_topology - e.g. "2x2x2" (copied; NULL: the pod
 * type's default). RET 0, -MT_EINVAL. */
MT_EXTERN int mt_gang_opts_set_topology(mt_gang_opts_t *o, const char *t);
/* mt_gang_opts_set_max_restarts - whole-gang restarts, -1 = no limit.
 * RET 0, -MT_EINVAL. */
MT_EXTERN int mt_gang_opts_set_max_restarts(mt_gang_opts_t *o, int n);
/* mt_gang_opts_set_name - shown by `manta list gangs` and in member task
 * names (copied; NULL clears). RET 0, -MT_EINVAL, -MT_ENOMEM. */
MT_EXTERN int mt_gang_opts_set_name(mt_gang_opts_t *o, const char *name);
/* mt_gang_opts_set_env - an extra variable for every member (copied); the
 * gang's own variables win over one of the same name. RET 0, -MT_EINVAL,
 * -MT_ENOMEM. */
MT_EXTERN int mt_gang_opts_set_env(mt_gang_opts_t *o, const char *key,
                                   const char *value);
/* mt_gang_opts_set_cwd - members' working directory on their nodes
 * (copied; NULL: the worker's). RET 0, -MT_EINVAL, -MT_ENOMEM. */
MT_EXTERN int mt_gang_opts_set_cwd(mt_gang_opts_t *o, const char *dir);

/*
 * mt_gang_opts_set_task_opts - the options of every member's task, copied
 * from a task's: resources per member (beyond its share of the slice's
 * chips), environment and unset variables, working directory, priority,
 * name and retries. It replaces what mt_gang_opts_set_env() and
 * mt_gang_opts_set_cwd() set; placement options are refused (-MT_EINVAL),
 * the gang places its members itself. Without it a member takes no CPU.
 * RET 0, -MT_EINVAL, -MT_ENOMEM
 */
MT_EXTERN int mt_gang_opts_set_task_opts(mt_gang_opts_t *o,
                                         const mt_task_opts_t *task_opts);

/*
 * mt_gang_submit - start a gang running argv on every member.
 * IN  argv, argc  the program and its arguments (borrowed; copied)
 * OUT id          the gang's id, NUL-terminated, into idlen bytes (>= 17)
 * RET 0, -MT_EINVAL (refused: mt_client_last_error() says why),
 *     -MT_ENOSPC (no free ports in the head's gang range), -MT_EUNAVAIL,
 *     -MT_ETIMEDOUT, -MT_ECLOSED, -MT_ENOMEM
 */
MT_EXTERN int mt_gang_submit(mt_client_t *c, const mt_gang_opts_t *o,
                             const char *const *argv, size_t argc,
                             char *id, size_t idlen);

/*
 * mt_gang_wait - wait until the gang has ended (FINISHED, FAILED or
 * CANCELLED), polling the head.
 * IN  timeout_ms  0: just look; < 0: wait forever
 * OUT info        NULL, or the gang as last seen
 * RET 0 (ended: see info->state), -MT_ETIMEDOUT (still going), -MT_ENOENT
 *     (unknown gang), -MT_EUNAVAIL, -MT_ECLOSED, -MT_ENOMEM
 */
MT_EXTERN int mt_gang_wait(mt_client_t *c, const char *id, int timeout_ms,
                           mt_gang_info_t *info);

/* mt_gang_cancel - stop every member and end the gang CANCELLED.
 * RET 0, -MT_ENOENT, -MT_EINVAL (another kind's id), -MT_EUNAVAIL,
 * -MT_ETIMEDOUT, -MT_ECLOSED. */
MT_EXTERN int mt_gang_cancel(mt_client_t *c, const char *id);

/* mt_gang_state_name - "RUNNING", ... RET a static string. */
MT_EXTERN const char *mt_gang_state_name(mt_gang_state s);

/* One member of a gang's current attempt. */
typedef struct mt_gang_member_info {
    uint32_t rank;              /* RANK (device launch) or host index */
    uint32_t slice;             /* MEGASCALE_SLICE_ID */
    uint32_t host;              /* TPU_WORKER_ID */
    uint32_t local;             /* LOCAL_RANK */
    const char *task_id;        /* this attempt's task; "" not yet */
    const char *node_id;
    mt_task_state state;
    int exit_code;
    const char *error;
} mt_gang_member_info;

/* A gang as the head describes it (mt_gang_get(), mt_list()); the library
 * owns it: strings valid until it is freed. */
typedef struct mt_gang_detail {
    const char *gang_id;
    const char *name;
    mt_gang_state state;
    const char *pod_type;       /* "v4-16" */
    uint32_t slices;
    mt_gang_launch launch;
    const char *pg_id;          /* its slice placement group */
    const char *const *slice_names; /* the slices it holds, by slice id */
    size_t n_slice_names;
    uint32_t attempt;           /* 0 for the first run */
    int max_restarts;           /* -1: no limit */
    const mt_gang_member_info *members; /* the current attempt's */
    size_t n_members;
    int exit_code;              /* FAILED: the failed member's */
    const char *error;          /* why it failed, restarted or waits */
    int64_t submit_time_ms;     /* wall clock */
    int64_t end_time_ms;
    const char *const *argv;    /* the program every member runs */
    size_t argc;
} mt_gang_detail;

/*
 * mt_gang_get - ask the head about a gang now, by its id ('g' and 15 hex
 * digits).
 * OUT out  returns owned detail, free with mt_gang_detail_free()
 * RET 0, -MT_ENOENT (the last error is the head's "NOT_FOUND: ..."),
 *     -MT_EINVAL (another kind's id: "p... is a placement group id, not a
 *     gang id"), -MT_EUNAVAIL, -MT_ETIMEDOUT, -MT_ECLOSED, -MT_ENOMEM
 */
MT_EXTERN int mt_gang_get(mt_client_t *c, const char *id,
                          mt_gang_detail **out);

/* mt_gang_detail_free - free a detail. NULL ok. */
MT_EXTERN void mt_gang_detail_free(mt_gang_detail *g);

/*
 * mt_gang_get_json - the gang as one JSON object and a newline, as `manta
 * gang get --format json` prints it (the fields of `manta list gangs`).
 * OUT json  returns owned text, free with mt_free()
 * RET as mt_gang_get
 */
MT_EXTERN int mt_gang_get_json(mt_client_t *c, const char *id, char **json);

#ifdef __cplusplus
}
#endif

#endif /* MANTA_GANG_H */
