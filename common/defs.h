/* SPDX-License-Identifier: Apache-2.0 */
/*
 * defs.h -- what clients ask the cluster for, as plain C: a task (what it
 * runs, where it may run, how it is retried), a placement group and a gang.
 *
 * These are the shapes every module shares. The SDK fills them from its
 * options, the head keeps them in its tables and the scheduler request is
 * built from them; protobuf is converted to and from them in one place
 * (proto/convert.h). mt_task_def_check holds the head's rules for a task,
 * so a tool can refuse a bad task before it reaches the head.
 *
 * Every pointer in a def is owned by it; zeroed fields mean "none". Lists
 * of resources and labels are common/qty.h lists, selectors common/
 * selector.h.
 *
 * Allocation: plain malloc, -MT_ENOMEM on failure (the SDK embeds this).
 * THREAD: any; a def is not shared between threads while changed.
 */
#ifndef MT_DEFS_H
#define MT_DEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"
#include "common/qty.h"
#include "common/selector.h"

/* Limits of one task (the head refuses more). */
#define MT_TASK_MAX_ARGS 4096          /* argv entries; function args */
#define MT_TASK_MAX_ARGV_BYTES (1u << 20) /* argv + env + unsets */
#define MT_TASK_MAX_ARG_BYTES (16u << 20) /* function args by value */
#define MT_TASK_MAX_STR 4096           /* cwd, code path entries */
#define MT_TASK_MAX_NAME 256           /* task and actor names */
#define MT_TASK_MAX_FUNCTION 512
#define MT_TASK_MAX_CODE_PATH 64
#define MT_TASK_MAX_RES 8              /* resource kinds in one request */
#define MT_TASK_MAX_OWNER 128
#define MT_TASK_DEFAULT_RETRIES 3
#define MT_PG_DEF_MAX_BUNDLES 1024      /* bundles in one placement group */

/* Values match proto TaskKind. */
enum mt_task_kind {
    MT_TASK_KIND_NONE = 0,
    MT_TASK_KIND_COMMAND = 1,       /* a program: argv, env, cwd */
    MT_TASK_KIND_FUNCTION = 2,      /* a C function "lib.so:fn" */
    MT_TASK_KIND_ACTOR_CREATE = 3,  /* an actor's factory */
    MT_TASK_KIND_ACTOR_METHOD = 4,  /* a call on an actor */
    MT_TASK_KIND_LEASE = 5,         /* resources held for a driver that
                                       pushes function tasks to them */
};

/* Where a task may go. Values match proto SchedulingStrategy. */
enum mt_task_place {
    MT_PLACE_DEFAULT = 0,           /* pack, then spread */
    MT_PLACE_SPREAD = 1,
    MT_PLACE_NODE_AFFINITY = 2,     /* affinity_node (soft or hard) */
    MT_PLACE_PG = 3,                /* pg_id, bundle */
    MT_PLACE_COUNT
};

/* A function argument: bytes by value, or an object by reference. */
struct mt_task_arg {
    uint8_t *data;                  /* by value: len bytes (NULL if 0) */
    size_t len;
    bool is_ref;
    mt_object_id ref;               /* is_ref: the object */
};

/* A task as submitted. */
struct mt_task_def {
    enum mt_task_kind kind;
    char *name;                     /* NULL: none */
    /* What runs. */
    char **argv;                    /* COMMAND: argc entries */
    size_t argc;
    struct mt_kv_list env;          /* extra environment */
    char **env_unset;               /* names removed after env */
    size_t n_env_unset;
    char *cwd;                      /* NULL: the worker's */
    char *function;                 /* FUNCTION, ACTOR_*: "lib.so:fn" */
    struct mt_task_arg *args;       /* FUNCTION, ACTOR_*: arguments */
    size_t nargs;
    char **code_path;               /* folders searched for libraries */
    size_t n_code_path;
    bool hold_result;               /* the submitter holds the result */
    /* Where it may run. */
    struct mt_qty_list res;         /* fixed point; empty: 1 CPU */
    struct mt_selector sel;
    int32_t priority;               /* higher runs first */
    int32_t max_retries;            /* on worker death; -1: the default */
    enum mt_task_place place;
    char *affinity_node;            /* NODE_AFFINITY: node id */
    bool affinity_soft;
    char *pg_id;                    /* PG: the group's id */
    int32_t bundle;                 /* PG: bundle index, -1 any */
    /* Actors. */
    char *actor_id;                 /* ACTOR_METHOD: the actor called */
    char *actor_name;               /* ACTOR_CREATE: NULL anonymous */
    bool detached;                  /* ACTOR_CREATE: outlives its owner */
    int32_t max_restarts;           /* ACTOR_CREATE: -1 without limit */
    char *owner_id;                 /* ACTOR_CREATE: the creating client;
                                       hold_result: whose session holds
                                       the result (head/objects.h) */
};

/* One bundle of a placement group. */
struct mt_bundle_def {
    struct mt_qty_list res;
    struct mt_selector sel;
};

/* A placement group as requested: bundles, or whole TPU slices. */
struct mt_pg_def {
    char *name;                     /* NULL: none */
    int strategy;                   /* proto PlacementStrategy: PACK 0,
                                       SPREAD 1, STRICT_PACK 2,
                                       STRICT_SPREAD 3 */
    struct mt_bundle_def *bundles;  /* nbundles; none for a slice group */
    size_t nbundles;
    char *tpu_pod_type;             /* a slice group: "v4-16"; else NULL */
    char *tpu_topology;             /* NULL: the pod type's */
    uint32_t tpu_slices;            /* 0 means 1 */
};

/* A gang: one program over every host of whole TPU slices. */
struct mt_gang_def {
    char *name;                     /* NULL: none */
    char *pod_type;                 /* "v4-16" */
    char *topology;                 /* NULL: the pod type's */
    uint32_t slices;                /* 0 means 1 */
    bool device_launch;             /* one process per chip, else per host */
    int32_t max_restarts;           /* whole-gang restarts; -1 no limit */
    struct mt_task_def member;      /* the program every member runs */
};

/* ---- task defs ----------------------------------------------------------- */

/* mt_task_def_init - an empty COMMAND def: default retries, any bundle. */
void mt_task_def_init(struct mt_task_def *d);

/* mt_task_def_release - free what d owns; d is initialized again after. */
void mt_task_def_release(struct mt_task_def *d);

/*
 * mt_task_def_copy - dst (initialized, empty) becomes a deep copy of src.
 * RET 0, -MT_ENOMEM (dst released)
 */
int mt_task_def_copy(struct mt_task_def *dst, const struct mt_task_def *src);

/*
 * mt_task_def_check - may d be submitted? The head's rules: a kind, a
 * program or a function, limits above, env names without '=', valid
 * resource names and quantities, an actor id for a method call.
 *
 * RET NULL, or why not (a static string for people)
 */
const char *mt_task_def_check(const struct mt_task_def *d);

/* Setters used by the converters and the SDK. RET 0, -MT_ENOMEM. */
int mt_def_set_str(char **dst, const char *s);   /* NULL or "" clears */
int mt_def_set_strv(char ***dst, size_t *n, const char *const *v, size_t m);
int mt_task_def_set_args(struct mt_task_def *d,
                         const struct mt_task_arg *args, size_t n);

/* ---- placement group and gang defs --------------------------------------- */

void mt_pg_def_release(struct mt_pg_def *p);
/* mt_pg_def_add_bundle - append an empty bundle. RET it, or NULL ENOMEM. */
struct mt_bundle_def *mt_pg_def_add_bundle(struct mt_pg_def *p);
void mt_gang_def_release(struct mt_gang_def *g);

#endif /* MT_DEFS_H */
