/* SPDX-License-Identifier: Apache-2.0 */
/*
 * accel_env.h -- the accelerator environment contract, as pure functions.
 *
 * The scheduler grants devices (GPU indices, TPU chips on a host, or every
 * host of a TPU slice for a gang) and computes, once per grant or gang, the
 * environment each member process starts with. The worker only applies it:
 * set every variable with a value, remove every variable whose value is NULL
 * (an explicit "unset", e.g. TPU_VISIBLE_CHIPS for a whole-host grant).
 *
 * GPU:  CUDA_VISIBLE_DEVICES = the granted indices, "" for a task with none;
 *       a fractional grant names the one device it shares.
 * TPU, one host, no gang (mt_accel_env_tpu_host): the grant runs as a
 *       standalone single-host slice: TPU_VISIBLE_CHIPS, bounds for 1/2/4/8
 *       chips with TPU_HOST_BOUNDS=1,1,1, TPU_TOPOLOGY of the granted chips.
 * TPU gang over one slice (mt_accel_env_tpu_gang): host-centric (one
 *       process per host: JAX) or device-centric (one process per chip:
 *       TorchTPU, PyTorch/XLA), plus MEGASCALE_* for multislice.
 * Bounds come under both spellings everywhere: TPU_CHIPS_PER_HOST_BOUNDS
 *       = TPU_CHIPS_PER_PROCESS_BOUNDS (the chips of one process) and
 *       TPU_HOST_BOUNDS = TPU_PROCESS_BOUNDS (the grid of processes).
 * A one-host slice is "localhost" to its members (TPU_WORKER_HOSTNAMES,
 *       process addresses, MASTER_ADDR), as a standalone grant is.
 * The exact variables are listed in docs/accelerators.md, the golden
 * values in one table, tests/golden/tpu_env.txt.
 *
 * Ports are the scheduler's to allocate; nothing here picks a port except
 * MEGASCALE_PORT's documented default of 8081.
 *
 * OWNERSHIP: struct mt_env owns every string in it. Inputs are borrowed.
 * THREAD: no shared state; any thread, one thread per struct mt_env.
 */
#ifndef MT_SCHED_ACCEL_ENV_H
#define MT_SCHED_ACCEL_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/tpu.h"

/* ---------------------------------------------------------------------
 * struct mt_env: an ordered list of (name, value) pairs
 * --------------------------------------------------------------------- */

/* One variable. value NULL means "remove it from the environment". */
struct mt_env_var {
    char *name;  /* owned, non-empty */
    char *value; /* owned; NULL: unset */
};

/* Caller-provided storage; names are unique, kept in first-set order. */
struct mt_env {
    struct mt_env_var *vars; /* owned array of n entries */
    size_t n;                /* entries in use */
    size_t cap;              /* entries allocated */
};

/*
 * mt_env_init - make env empty. Never fails; pair with mt_env_release().
 */
void mt_env_init(struct mt_env *env);

/*
 * mt_env_release - free every string and the array; env is empty after.
 *
 * OWNERSHIP  invalidates every pointer obtained from env; accepts NULL
 */
void mt_env_release(struct mt_env *env);

/*
 * mt_env_set - set name to value, replacing an earlier entry in place.
 *
 * IN  name    non-empty, no '='
 * IN  value   copied; NULL records an unset
 * RET 0, -MT_EINVAL (bad name), -MT_ENOMEM (env unchanged)
 * OWNERSHIP  borrows name and value (copies them)
 */
int mt_env_set(struct mt_env *env, const char *name, const char *value);

/*
 * mt_env_find - the entry for name, or NULL when absent.
 *
 * RET borrowed pointer, valid until the next change to env
 */
const struct mt_env_var *mt_env_find(const struct mt_env *env,
                                     const char *name);

/*
 * mt_env_get - the value of name; NULL when absent or unset (use
 * mt_env_find() to tell those apart).
 */
const char *mt_env_get(const struct mt_env *env, const char *name);

/* ---------------------------------------------------------------------
 * GPU
 * --------------------------------------------------------------------- */

/*
 * mt_accel_env_gpu - CUDA_VISIBLE_DEVICES for a grant.
 *
 * ids are device indices in grant order ("0,2"); n == 0 gives "" (a task
 * without GPUs must not see the node's GPUs). A fractional grant passes the
 * one shared index.
 *
 * IN  ids, n   granted device indices (ids may be NULL when n == 0)
 * OUT env      CUDA_VISIBLE_DEVICES set (other entries untouched)
 * RET 0, -MT_EINVAL (duplicate index, ids NULL with n > 0), -MT_ENOMEM
 */
int mt_accel_env_gpu(const uint32_t *ids, size_t n, struct mt_env *env);

/* ---------------------------------------------------------------------
 * TPU: chips on one host, outside any gang
 * --------------------------------------------------------------------- */

/*
 * mt_accel_env_tpu_host - env for 1, 2, 4 or 8 chips of one host.
 *
 * The process runs as a standalone single-host slice of the granted chips:
 *   TPU_ACCELERATOR_TYPE  the host's slice type (mt_tpu_slice_accelerator_type)
 *   TPU_TOPOLOGY          the granted chips' shape: "1x1", "1x2", "2x2",
 *                         "2x4" (2D generations), "1x1x1", "1x2x1", "2x2x1"
 *                         (3D generations)
 *   TPU_SKIP_MDS_QUERY    true
 *   TPU_WORKER_ID         0
 *   TPU_WORKER_HOSTNAMES  localhost
 *   TPU_CHIPS_PER_HOST_BOUNDS  1 -> 1,1,1; 2 -> 1,2,1; 4 -> 2,2,1; 8 -> 2,4,1
 *   TPU_HOST_BOUNDS       1,1,1
 *   TPU_CHIPS_PER_PROCESS_BOUNDS, TPU_PROCESS_BOUNDS  the same two values
 *                         (one process: its chips, a 1,1,1 process grid)
 *   TPU_VISIBLE_CHIPS     "a,b,..." ascending; unset (NULL) when the grant
 *                         is every chip of the host
 *
 * IN  slice      the slice the host belongs to (chips_per_host = host size)
 * IN  chips, n   granted chip indices, an aligned block
 *                (mt_tpu_host_chips_check)
 * OUT env        the variables above set (other entries untouched)
 * RET 0, -MT_EINVAL (NULL slice or chips, count not 1/2/4/8, misaligned or
 *     duplicate chips), -MT_ETOOBIG (more chips than the host has),
 *     -MT_ERANGE (chip index beyond the host), -MT_ENOMEM
 */
int mt_accel_env_tpu_host(const struct mt_tpu_slice *slice,
                          const uint32_t *chips, size_t n,
                          struct mt_env *env);

/* ---------------------------------------------------------------------
 * TPU: a gang over every host of one slice
 * --------------------------------------------------------------------- */

enum mt_tpu_launch {
    MT_TPU_LAUNCH_HOST = 1, /* one process per host, all its chips (JAX) */
    MT_TPU_LAUNCH_DEVICE,   /* one process per chip; per device on v7x */
};

#define MT_TPU_MEGASCALE_PORT_DEFAULT 8081

/*
 * A gang over one slice: the shape, the hosts in worker-id order, the launch
 * model, the ports the scheduler allocated and, for multislice, where this
 * slice sits. All pointers are borrowed for the duration of a call.
 */
struct mt_tpu_gang {
    const struct mt_tpu_slice *slice; /* shape; hosts must match it */
    const char *const *hosts;   /* n_hosts addresses; [i] is TPU_WORKER_ID i */
    size_t n_hosts;             /* must equal slice->hosts */
    const char *slice_name;     /* TPU_NAME; NULL: not set */
    enum mt_tpu_launch launch;

    /* Device-centric only. */
    const uint16_t *ports;      /* n_hosts x per-host processes, host-major;
                                   NULL: port_base + local on every host */
    uint16_t port_base;         /* used when ports is NULL */
    uint16_t master_port;       /* MASTER_PORT, required */

    /* Multislice: num_slices 0 or 1 means a single slice, no MEGASCALE_*. */
    uint32_t num_slices;
    uint32_t slice_id;          /* 0..num_slices-1 */
    const char *coordinator;    /* slice 0 worker 0; NULL: hosts[0] when
                                   slice_id is 0, else -MT_EINVAL */
    uint16_t megascale_port;    /* 0: MT_TPU_MEGASCALE_PORT_DEFAULT */
};

/*
 * mt_tpu_gang_procs_per_host - processes on each host of the gang: 1 for
 * host-centric; chips_per_host x devices per chip for device-centric (4 on
 * v4/v5p/v6e multi-host, 8 on v7x).
 *
 * RET the count, or 0 when g or its slice is NULL or launch is unknown
 */
uint32_t mt_tpu_gang_procs_per_host(const struct mt_tpu_gang *g);

/*
 * mt_accel_env_tpu_gang - env of one member of a slice gang.
 *
 * Every member (both models):
 *   TPU_ACCELERATOR_TYPE, TPU_TOPOLOGY  the slice's ("v6e-16", "4x4")
 *   TPU_WORKER_HOSTNAMES  hosts joined with ','; "localhost" for a one-host
 *                         slice (as in the process addresses and
 *                         MASTER_ADDR: mt_tpu_gang_master_addr)
 *   TPU_WORKER_ID         host
 *   TPU_NAME              slice_name, when given
 *   TPU_SKIP_MDS_QUERY    true
 * Host-centric (local must be 0):
 *   TPU_CHIPS_PER_HOST_BOUNDS  the slice's per-host bounds ("2,2,1")
 *   TPU_HOST_BOUNDS            the slice's host bounds ("2,2,1" for 4x4)
 *   TPU_CHIPS_PER_PROCESS_BOUNDS, TPU_PROCESS_BOUNDS  the same two values
 *   TPU_VISIBLE_CHIPS          unset: the process owns the whole host
 * Device-centric, process r = host x P + local (P = procs per host):
 *   TPU_VISIBLE_CHIPS     local (local / 2 on v7x: two devices per chip)
 *   TPU_CHIPS_PER_HOST_BOUNDS  1,1,1 (1,1,1,1 on v7x)
 *   TPU_HOST_BOUNDS, TORCH_TPU_TOPOLOGY  topology dims, z padded: "4,4,1"
 *                         (",2" appended on v7x: "2,2,1,2")
 *   TPU_CHIPS_PER_PROCESS_BOUNDS, TPU_PROCESS_BOUNDS  the same as
 *                         TPU_CHIPS_PER_HOST_BOUNDS and TPU_HOST_BOUNDS
 *   CLOUD_TPU_TASK_ID     r (index into TPU_PROCESS_ADDRESSES)
 *   TPU_PROCESS_PORT      this process's port
 *   TPU_PROCESS_ADDRESSES, TORCH_TPU_SLICEBUILDER_ADDRESSES
 *                         host:port of every process of the slice, by r
 *                         (IPv6 literals in brackets)
 *   WORLD_SIZE, RANK      P x hosts and r; with k > 1 slices the job spans
 *                         all of them: k x P x hosts and slice_id x (P x
 *                         hosts) + r
 *   LOCAL_RANK            local
 *   MASTER_ADDR           mt_tpu_gang_master_addr(g)
 *   MASTER_PORT           master_port
 * Multislice (num_slices > 1):
 *   MEGASCALE_NUM_SLICES, MEGASCALE_SLICE_ID, MEGASCALE_COORDINATOR_ADDRESS
 *   (bare address), MEGASCALE_PORT
 *
 * IN  g       the gang
 * IN  host    worker id of the member, 0..n_hosts-1
 * IN  local   process index on that host, 0..procs_per_host-1
 * OUT env     the variables above set (other entries untouched)
 * RET 0, -MT_EINVAL (NULL or mismatched slice/hosts -- e.g. more hosts than
 *     the slice has --, empty host or one containing ',', unknown launch,
 *     port 0, duplicate ports on a host, missing master_port, bad
 *     slice_id/coordinator), -MT_ERANGE (host or local out of range),
 *     -MT_ENOMEM
 */
int mt_accel_env_tpu_gang(const struct mt_tpu_gang *g, uint32_t host,
                          uint32_t local, struct mt_env *env);

/*
 * mt_tpu_gang_master_addr - the MASTER_ADDR every member gets: the
 * coordinator when num_slices > 1 (g->coordinator, else hosts[0]);
 * otherwise "localhost" for a one-host slice and hosts[0] for a larger one.
 * The head gives host-centric members the same (their rendezvous is its).
 *
 * RET a borrowed string (from g or static), or NULL when g has no hosts
 */
const char *mt_tpu_gang_master_addr(const struct mt_tpu_gang *g);

/*
 * mt_accel_env_tpu_gang_all - the env of every member, computed once.
 *
 * OUT envs   owned array of *n initialised envs, member order host-major
 *            (index host x procs_per_host + local); free with
 *            mt_env_array_free(*envs, *n)
 * OUT n      hosts x procs_per_host
 * RET 0, or the first error of mt_accel_env_tpu_gang() (nothing returned)
 */
int mt_accel_env_tpu_gang_all(const struct mt_tpu_gang *g,
                              struct mt_env **envs, size_t *n);

/*
 * mt_env_array_free - release n envs and free the array; accepts NULL.
 */
void mt_env_array_free(struct mt_env *envs, size_t n);

#endif /* MT_SCHED_ACCEL_ENV_H */
