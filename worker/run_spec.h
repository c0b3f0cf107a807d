/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run_spec.h -- what the head asks a worker to run, as plain C: a task's
 * spec (struct mt_run_spec, filled from RunTaskRequest by rpc_tasks.c),
 * the checks it must pass before it runs here, and the environment a run
 * gets (the worker's, then the spec's, then the grant's, then MANTA_*).
 *
 * Pure helpers: no loop, no I/O; tested by tests/unit/worker/test_tasks.c.
 *
 * THREAD: any (no shared state).
 */
#ifndef MT_WORKER_RUN_SPEC_H
#define MT_WORKER_RUN_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ids.h"
#include "common/qty.h"

#define MT_RUN_ID_MAX 64             /* task ids: 1-64 of [A-Za-z0-9_-] */
#define MT_RUN_MAX_ARGS 4096
#define MT_RUN_MAX_ENV 4096          /* spec and request env together */
#define MT_RUN_MAX_BYTES (1u << 20)  /* argv bytes; env bytes (each) */
#define MT_RUN_MAX_CWD 4096
#define MT_RUN_MAX_OWNER 128         /* owner ids: 1-128 bytes */

enum mt_run_kind {
    MT_RUN_KIND_UNSPECIFIED = 0,
    MT_RUN_KIND_COMMAND = 1,
    MT_RUN_KIND_FUNCTION = 2,
    MT_RUN_KIND_ACTOR_CREATE = 3, /* a factory, in an executor of its own */
    MT_RUN_KIND_ACTOR_METHOD = 4, /* a call on a hosted actor (actors.h) */
    MT_RUN_KIND_LEASE = 5,        /* a lease held for owner_id (leases.h):
                                     open until it ends, runs nothing */
};

/* An argument of a function task. */
struct mt_run_arg {
    uint8_t *data;
    size_t size;
};

/* A function argument passed by reference (RunTaskRequest.object_args). */
#define MT_RUN_MAX_HOLDERS 8
struct mt_run_ref {
    uint32_t index;              /* which argument */
    mt_object_id id;
    uint64_t size;
    bool is_inline;              /* small: the value came with the request */
    uint8_t *data;               /* is_inline: size bytes (owned) */
    char *holders[MT_RUN_MAX_HOLDERS]; /* worker addresses (owned) */
    size_t n_holders;
};

/* A RunTask request as plain C. Every pointer is owned by the spec. */
struct mt_run_spec {
    char *task_id;
    uint32_t attempt;
    enum mt_run_kind kind;
    char **argv;                 /* argc entries plus a NULL */
    size_t argc;
    struct mt_kv_list env;       /* the spec's environment */
    struct mt_kv_list env_unset; /* the spec's unsets: values all NULL */
    struct mt_kv_list accel_env; /* the request's (accelerator) environment */
    struct mt_kv_list accel_unset; /* the request's unsets: values NULL */
    char *cwd;                   /* NULL or "": the worker's */
    char *function;              /* FUNCTION: "lib.so:fn" or "fn" */
    char **code_path;            /* FUNCTION: n_code_path folders */
    size_t n_code_path;
    struct mt_run_arg *args;     /* FUNCTION: nargs arguments */
    size_t nargs;
    struct mt_run_ref *refs;     /* FUNCTION: arguments by reference */
    size_t nrefs;
    bool hold_result;            /* FUNCTION: big results to the store */
    char *actor_id;              /* ACTOR_METHOD: the actor called */
    uint64_t actor_seq;          /* ACTOR_METHOD: its place in the order */
    uint32_t actor_attempt;      /* ACTOR_METHOD: the actor's incarnation */
    char *owner_id;              /* LEASE: the session it is held for */
};

/* mt_run_spec_release - free what the spec owns and zero it. */
void mt_run_spec_release(struct mt_run_spec *s);

/* mt_run_id_valid - 1-64 characters of [A-Za-z0-9_-] (safe in paths). */
bool mt_run_id_valid(const char *id);

/*
 * mt_run_spec_check - may this spec run here?
 *
 * OUT err  on failure, the reason for the caller (lowercase, one line)
 * RET 0 or -MT_EINVAL
 */
int mt_run_spec_check(const struct mt_run_spec *s, char *err, size_t len);

/*
 * mt_run_env_build - an environment for execve: base (e.g. environ), then
 * each list in order; a later value for a key replaces an earlier one in
 * place, and a NULL value removes the key (an explicit unset: a later
 * list may set it again). Entries of base without '=' are skipped.
 *
 * A task's lists, in order: the spec's env, the spec's unsets, the grant's
 * env, the grant's unsets, the MANTA_* variables.
 *
 * IN  base   NULL-terminated "K=V" strings, borrowed; may be NULL
 * IN  lists  n lists of key/value pairs, borrowed
 * RET returns owned NULL-terminated "K=V" array, free with mt_run_env_free()
 */
char **mt_run_env_build(char *const *base,
                        const struct mt_kv_list *const *lists, size_t n);

/*
 * mt_run_env_overlay - the same merge without a base, for an environment
 * applied on top of another (an executor's): an unset is kept as a bare
 * "K" entry, which the executor removes (exec_proto.h).
 *
 * RET returns owned NULL-terminated array of "K=V" and "K" entries, free
 *     with mt_run_env_free()
 */
char **mt_run_env_overlay(const struct mt_kv_list *const *lists, size_t n);
void mt_run_env_free(char **env);

#endif /* MT_WORKER_RUN_SPEC_H */
