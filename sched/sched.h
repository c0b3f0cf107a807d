/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched.h -- the scheduler: nodes, tasks, placement groups and TPU slices in,
 * placement decisions out.
 *
 * The head feeds events (node added/dead, task submitted/finished, placement
 * group created/removed) and calls mt_sched_decide() to get placements. The
 * library does no I/O, reads no clock (now_ms is passed in) and starts no
 * threads (house style H11), so every rule is unit-testable and the same code
 * drives the simulator (manta-sim).
 *
 * Identities:
 *   - nodes get a handle (uint32_t) from mt_sched_on_node_added(); handles are
 *     never reused, a dead node's handle stays dead;
 *   - tasks and placement groups are named by the caller's uint64_t ids;
 *   - a grant (what a placed task holds) is named by a uint64_t handle the
 *     library returns; mt_sched_on_task_finished(handle) gives it back.
 *
 * Failures are either retryable (no room now: the task stays pending and is
 * placed by a later decide) or permanent (-MT_EINFEASIBLE: no live node could
 * ever fit it; it stays queued and is reported once, so a node that joins
 * later can still take it). Malformed requests get -MT_EINVAL at submission
 * and never reach an assert.
 *
 * Policies, priorities, placement groups and slices: see docs/scheduler.md.
 *
 * THREAD: not thread safe. One loop thread owns a struct mt_sched.
 */
#ifndef MT_SCHED_SCHED_H
#define MT_SCHED_SCHED_H

#include "common/defs.h" /* enum mt_task_place */
#include "sched/labels.h"
#include "sched/resources.h"
#include "sched/tpu.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_NODE_NONE UINT32_MAX
#define MT_SCHED_PG_MAX_BUNDLES 1024

struct mt_sched;

/* ---- Options ---- */

struct mt_sched_opts {
    int64_t spread_threshold;  /* fixed-point utilization, default 0.5 */
    int64_t top_k_fraction;    /* fixed-point share of nodes, default 0.2 */
    uint32_t top_k_max;        /* cap on k, default 4 */
    bool avoid_accel_nodes;    /* keep CPU-only work off GPU/TPU nodes */
    bool accel_best_fit;       /* GPU/TPU work: fullest node that fits */
    uint64_t aging_ms;         /* +1 effective priority per this wait */
    uint64_t starve_ms;        /* head waiting this long blocks backfill */
    uint64_t seed;             /* random tie breaks; same seed, same run */
};

/* mt_sched_opts_init - defaults: 0.5, 0.2, 4, true, true, 10 s, 60 s,
 * seed 1. */
void mt_sched_opts_init(struct mt_sched_opts *o);

/*
 * mt_sched_create - an empty scheduler.
 *
 * IN  o    options, NULL for defaults; copied
 * OUT out  free with mt_sched_destroy()
 * RET 0, -MT_EINVAL (threshold or fraction outside 0..1), -MT_ENOMEM
 */
int mt_sched_create(const struct mt_sched_opts *o, struct mt_sched **out);

/* mt_sched_destroy - free s and everything in it (NULL is fine). */
void mt_sched_destroy(struct mt_sched *s);

/*
 * mt_sched_resource_id - the id of a resource name, interning new names.
 *
 * RET id >= 0, -MT_EINVAL, -MT_ENOSPC (MT_RES_MAX names), -MT_ENOMEM
 */
int mt_sched_resource_id(struct mt_sched *s, const char *name);

/* mt_sched_resource_names - the name table (borrowed, owned by s). */
const struct mt_res_names *mt_sched_resource_names(const struct mt_sched *s);

/* ---- Nodes ---- */

struct mt_node_spec {
    const char *name;                 /* unique, e.g. the node id in hex */
    const struct mt_res_item *res;    /* totals; GPU and TPU whole */
    size_t nres;
    const struct mt_label *labels;    /* may be NULL */
    size_t nlabels;
};

/*
 * mt_sched_on_node_added - a node joined with these totals and labels.
 *
 * A node with manta.io/tpu-slice-name and manta.io/tpu-worker-id labels is a
 * host of that slice (see mt_sched_slice_reserve()). Unless the spec sets
 * it, the node gets the label manta.io/node-id=<name>.
 *
 * OUT node  its handle
 * RET 0, -MT_EEXIST (name of a live node), -MT_EINVAL (negative or repeated
 *     resources, GPU/TPU not whole or above MT_MAX_GPUS/MT_MAX_TPU_CHIPS,
 *     bad labels), -MT_ENOMEM
 * OWNERSHIP borrows spec
 */
int mt_sched_on_node_added(struct mt_sched *s, const struct mt_node_spec *spec,
                           uint32_t *node);

/*
 * mt_sched_on_node_dead - the node is gone.
 *
 * Its grants become stale (finishing them returns nothing), the bundles it
 * held are rescheduled (other bundles of their groups keep their places; a
 * TPU slice group is re-reserved whole), and pending tasks with hard
 * affinity to it become infeasible.
 *
 * RET 0, -MT_ENOENT (unknown or already dead)
 */
int mt_sched_on_node_dead(struct mt_sched *s, uint32_t node);

/*
 * mt_sched_on_node_update - new totals for some resources of a live node
 * (e.g. memory resized, a custom resource added or set to 0).
 *
 * Each item sets the total of its id; ids not listed keep theirs. The
 * available amount moves by the same delta. GPU and TPU counts cannot
 * change this way (remove and re-add the node).
 *
 * RET 0, -MT_ENOENT (unknown or dead node), -MT_EINVAL (negative, repeated
 *     or out-of-range ids), -MT_ENOTSUP (GPU or TPU total changed),
 *     -MT_ESTATE (a new total below what is in use now; nothing changed),
 *     -MT_ENOMEM (the node could not be re-indexed and is now dead)
 */
int mt_sched_on_node_update(struct mt_sched *s, uint32_t node,
                            const struct mt_res_item *res, size_t nres);

/*
 * mt_sched_node_suspect - mark a live node suspected (on) or trusted again.
 *
 * A suspected node keeps its grants, bundles and feasibility (work that only
 * it can run waits rather than turning infeasible), but nothing new is
 * placed there, soft affinity and bundles on it included, until it is
 * trusted again. For a node the caller could not reach.
 *
 * RET 0, -MT_ENOENT (unknown or dead node)
 */
int mt_sched_node_suspect(struct mt_sched *s, uint32_t node, bool on);

/* mt_sched_node_find - handle of the live node called name. -MT_ENOENT. */
int mt_sched_node_find(const struct mt_sched *s, const char *name,
                       uint32_t *node);

/*
 * mt_sched_node_res - total and available quantity of resource id on node.
 *
 * Available excludes running grants and placement-group reservations.
 * RET 0, -MT_ENOENT (unknown node), -MT_EINVAL (bad id)
 */
int mt_sched_node_res(const struct mt_sched *s, uint32_t node, int id,
                      int64_t *total, int64_t *avail);

/* mt_sched_node_alive - true for a known, live node. */
bool mt_sched_node_alive(const struct mt_sched *s, uint32_t node);

/* mt_sched_node_count - nodes ever added (live or dead); handles < this. */
uint32_t mt_sched_node_count(const struct mt_sched *s);

/*
 * mt_sched_node_free_gpus / _free_tpu_chips - masks of whole free devices
 * (bit i = device i) on a node, for status pages and fragmentation metrics.
 * RET the mask; 0 for unknown or dead nodes.
 */
uint32_t mt_sched_node_free_gpus(const struct mt_sched *s, uint32_t node);
uint32_t mt_sched_node_free_tpu_chips(const struct mt_sched *s, uint32_t node);

/* ---- Tasks ---- */

struct mt_task_spec {
    uint64_t id;                           /* caller's task id */
    struct mt_res_set res;                 /* may be empty (0-resource task) */
    int32_t priority;                      /* higher first; default 0 */
    enum mt_task_place strategy;           /* DEFAULT: hybrid pack then
                                              top-k; SPREAD: round robin;
                                              NODE_AFFINITY; PG */
    uint32_t affinity_node;                /* NODE_AFFINITY: node handle */
    bool affinity_soft;                    /* NODE_AFFINITY: fall back */
    const struct mt_label_selector *selector;  /* NULL: any node; borrowed */
    uint64_t pg;                           /* PG: group id */
    int32_t bundle;                        /* PG: index, -1 for any bundle */
};

/* mt_task_spec_init - zero resources, priority 0, DEFAULT, bundle -1. */
void mt_task_spec_init(struct mt_task_spec *t, uint64_t id);

/* What a placed task holds. Plain value. */
struct mt_grant {
    uint64_t handle;        /* give back with mt_sched_on_task_finished */
    uint32_t node;
    uint32_t gpus;          /* GPU device indices (bit mask) */
    int64_t gpu_each;       /* fixed-point share of each device in gpus */
    uint32_t tpu_chips;     /* TPU chip indices (bit mask), aligned block */
    uint64_t pg;            /* group id when placed into a bundle, else 0 */
    int32_t bundle;         /* bundle index, -1 when not in a group */
};

/*
 * mt_sched_on_task_submitted - queue a task.
 *
 * RET 0, -MT_EINVAL (bad resources per mt_res_set_validate, unknown
 *     strategy, bad selector, unknown affinity handle, bundle index out of
 *     range), -MT_ENOENT (STRATEGY_PG with an unknown or removed group),
 *     -MT_ENOMEM
 * OWNERSHIP borrows t (selector strings are interned)
 */
int mt_sched_on_task_submitted(struct mt_sched *s, const struct mt_task_spec *t,
                               uint64_t now_ms);

/*
 * mt_sched_allocate - place one task now, without queueing it.
 *
 * The synchronous core of decide, for callers that schedule inline (and for
 * tests and benchmarks). Priorities do not apply.
 *
 * OUT g   the grant on success
 * RET 0, -MT_EAGAIN (no room now), -MT_EINFEASIBLE, -MT_EINVAL, -MT_ENOENT
 *     (group unknown or bundle not placed), -MT_ENOMEM
 */
int mt_sched_allocate(struct mt_sched *s, const struct mt_task_spec *t,
                      struct mt_grant *g);

/*
 * mt_sched_on_task_finished - give back a grant.
 *
 * A grant whose node died, or whose bundle was removed or rescheduled, is
 * stale: it is forgotten and returns nothing.
 *
 * RET 0, -MT_ENOENT (unknown handle or already given back)
 */
int mt_sched_on_task_finished(struct mt_sched *s, uint64_t grant);

/*
 * mt_sched_task_cancel - drop a pending task. O(pending tasks of its class).
 *
 * RET 0, -MT_ENOENT (not pending)
 */
int mt_sched_task_cancel(struct mt_sched *s, uint64_t task_id);

/* ---- Decisions ---- */

enum mt_decision_kind {
    MT_DECISION_TASK,       /* id is a task id */
    MT_DECISION_PG          /* id is a placement group id */
};

struct mt_placement {
    enum mt_decision_kind kind;
    uint64_t id;
    int status;             /* 0 placed; -MT_EINFEASIBLE (still queued,
                               reported once); -MT_ENOENT (task's group was
                               removed: task dropped) */
    struct mt_grant grant;  /* tasks with status 0 */
};

/*
 * mt_sched_decide - place what can be placed now.
 *
 * Pending placement groups first (rescheduled bundles before new groups),
 * then tasks in effective-priority order (docs/scheduler.md, "Priorities").
 * For a group, status 0 means all its bundles are now reserved.
 *
 * OUT out  up to max decisions
 * RET the number of decisions written (0..max), -MT_EINVAL (max == 0 with
 *     out NULL is fine and returns 0)
 */
int mt_sched_decide(struct mt_sched *s, uint64_t now_ms,
                    struct mt_placement *out, size_t max);

/* mt_sched_pending - tasks still queued (including infeasible ones). */
size_t mt_sched_pending(const struct mt_sched *s);

/* ---- Placement groups ---- */

enum mt_sched_pg_strategy {
    MT_SCHED_PG_PACK,             /* as few nodes as possible (soft) */
    MT_SCHED_PG_SPREAD,           /* as many nodes as possible (soft) */
    MT_SCHED_PG_STRICT_PACK,      /* one node */
    MT_SCHED_PG_STRICT_SPREAD,    /* one node per bundle */
    MT_SCHED_PG_STRATEGY_COUNT
};

enum mt_sched_pg_state {
    MT_SCHED_PG_PENDING,          /* no bundle placed yet */
    MT_SCHED_PG_CREATED,          /* every bundle reserved */
    MT_SCHED_PG_RESCHEDULING,     /* some bundles lost with their node */
    MT_SCHED_PG_REMOVED
};

struct mt_bundle_spec {
    struct mt_res_set res;                     /* not empty */
    const struct mt_label_selector *selector;  /* NULL: any node */
};

struct mt_pg_spec {
    uint64_t id;                       /* caller's group id, != 0 */
    enum mt_sched_pg_strategy strategy;
    const struct mt_bundle_spec *bundles;
    size_t nbundles;                   /* 1..MT_SCHED_PG_MAX_BUNDLES */
};

/*
 * mt_sched_pg_create - reserve every bundle, or none.
 *
 * Tries at once; a group that does not fit now stays pending and is
 * reported by a later decide (kind MT_DECISION_PG).
 *
 * RET 0 (created now), -MT_EAGAIN (pending), -MT_EINFEASIBLE (pending, no
 *     set of live nodes could hold it), -MT_EINVAL (unknown strategy, no
 *     bundles, an empty or invalid bundle, id 0), -MT_EEXIST, -MT_ENOMEM
 * OWNERSHIP borrows spec
 */
int mt_sched_pg_create(struct mt_sched *s, const struct mt_pg_spec *spec,
                       uint64_t now_ms);

/*
 * mt_sched_pg_remove - drop a group, returning every reserved unit to its
 * node. Grants inside it become stale; pending tasks aimed at it are
 * reported with -MT_ENOENT by the next decide.
 *
 * RET 0, -MT_ENOENT
 */
int mt_sched_pg_remove(struct mt_sched *s, uint64_t pg);

/* mt_sched_pg_state - RET 0 or -MT_ENOENT (removed groups are forgotten). */
int mt_sched_pg_state(const struct mt_sched *s, uint64_t pg,
                      enum mt_sched_pg_state *state);

struct mt_bundle_info {
    uint32_t node;          /* MT_NODE_NONE while not placed */
    uint32_t gpus;          /* reserved GPU devices */
    uint32_t tpu_chips;     /* reserved TPU chips */
    struct mt_res_set res;  /* reserved quantities */
};

/* mt_sched_pg_bundle - where bundle idx of pg is. RET 0, -MT_ENOENT. */
int mt_sched_pg_bundle(const struct mt_sched *s, uint64_t pg, uint32_t idx,
                       struct mt_bundle_info *out);

/* ---- TPU slices ---- */

struct mt_slice_spec {
    uint64_t id;                 /* group id, as for mt_pg_spec */
    const char *pod_type;        /* "v4-16", "v6e-16", "tpu7x-8" ... */
    const char *topology;        /* NULL: default for the pod type */
    uint32_t nslices;            /* 1 or more (multislice) */
    struct mt_res_set per_host;  /* extra per bundle, e.g. CPU; may be empty */
};

/*
 * mt_sched_slice_reserve - reserve every host of nslices intact slices.
 *
 * A slice is intact when live nodes labelled with the same
 * manta.io/tpu-slice-name, manta.io/tpu-pod-type == the normalised pod type,
 * hold worker ids 0..hosts-1. The group gets nslices x hosts bundles;
 * bundle s*hosts + i holds all chips of worker i of the s-th slice plus
 * per_host. All-or-nothing; two reservations never share a slice.
 *
 * RET as mt_sched_pg_create(); -MT_EINVAL also for an unknown pod type
 */
int mt_sched_slice_reserve(struct mt_sched *s, const struct mt_slice_spec *spec,
                           uint64_t now_ms);

/*
 * mt_sched_pg_slice_name - the slice-name label of bundle idx's host.
 *
 * RET a string owned by s (valid until destroy), or NULL
 */
const char *mt_sched_pg_slice_name(const struct mt_sched *s, uint64_t pg,
                                   uint32_t idx);

/* The hosts of one slice held by a slice group, for the gang env. */
struct mt_slice_info {
    const char *name;            /* slice-name label (owned by s) */
    struct mt_tpu_slice shape;   /* tpu.h numbers of the slice */
    uint32_t nhosts;
    const uint32_t *nodes;       /* node handle by worker id (owned by s;
                                    valid until the next event) */
};

/*
 * mt_sched_pg_slice - the j-th slice (0..nslices-1) of a created slice
 * group: what mt_tpu_gang (accel_env.h) needs, once the caller maps node
 * handles to host addresses. slice_id j, num_slices = nslices.
 *
 * RET 0, -MT_ENOENT (unknown group, not a slice group, not created, j out
 *     of range)
 */
int mt_sched_pg_slice(const struct mt_sched *s, uint64_t pg, uint32_t j,
                      struct mt_slice_info *out);

/*
 * mt_sched_node_tpu_slice - the slice shape a TPU host belongs to (from its
 * labels). RET 0, -MT_ENOENT (unknown node, no slice labels, bad pod type)
 */
int mt_sched_node_tpu_slice(const struct mt_sched *s, uint32_t node,
                            struct mt_tpu_slice *out);

struct mt_env;

/*
 * mt_sched_grant_env - the accelerator env of a task grant, computed once:
 * CUDA_VISIBLE_DEVICES (the granted devices, "" for none) and, for TPU
 * chips, mt_accel_env_tpu_host() of the host's slice shape. Slice gangs use
 * mt_sched_pg_slice() + mt_accel_env_tpu_gang() instead (they need host
 * addresses and ports, which the head owns).
 *
 * OUT env  caller-initialised (mt_env_init); variables added
 * RET 0, -MT_EINVAL, -MT_ENOENT (TPU grant on a host without slice
 *     labels), -MT_ENOMEM
 */
int mt_sched_grant_env(const struct mt_sched *s, const struct mt_grant *g,
                       struct mt_env *env);

/* ---- Adoption (a restarted head) ---- */

/*
 * A head restarted from stored state meets a world that kept running:
 * tasks hold devices on their workers and groups hold bundles. Adoption
 * charges those exactly as they are, instead of placing them anew (which
 * would double-book). Order: nodes; grants outside groups
 * (mt_sched_adopt); groups (mt_sched_pg_adopt_at, mt_sched_pg_adopt,
 * mt_sched_slice_adopt), whose device choices then avoid what those grants
 * hold; the grants inside groups; then pending work and decide. Adoption
 * re-checks accounting, never policy: strategies, selectors, priorities
 * and suspect marks are not applied, as the work already runs where it is.
 */

/*
 * mt_sched_adopt - charge a grant that already exists.
 *
 * Charges t->res on want->node with exactly the GPU devices want->gpus
 * (each share want->gpu_each: t's GPU quantity when below 1, else
 * MT_RES_SCALE, one device per whole GPU) and TPU chips want->tpu_chips (an
 * aligned block of t's chip count). When want->pg != 0 the grant is
 * charged against bundle want->bundle of that group, as a task placed in
 * that bundle would be (its devices must be among the bundle's). t's id,
 * strategy, selector, priority, affinity and pg fields are not used.
 * want->handle is ignored.
 *
 * IN  t     the task's resources (t->res); borrowed
 * IN  want  node, devices and group/bundle of the running grant; borrowed
 * OUT out   the adopted grant with a new handle, which
 *           mt_sched_on_task_finished() gives back as any other
 * RET 0; -MT_ENOENT (node unknown or dead; group unknown or removed; that
 *     bundle not placed on want->node); -MT_EAGAIN (what is left on the
 *     node or bundle, or on those devices, cannot hold it: nothing is
 *     charged, the caller stops the task); -MT_EINVAL (NULL argument, bad
 *     t->res, want->bundle out of range, devices not matching t->res,
 *     device bits beyond the node's devices, chips not an aligned block);
 *     -MT_ENOMEM
 * THREAD loop thread (the sched's owner)
 */
int mt_sched_adopt(struct mt_sched *s, const struct mt_task_spec *t,
                   const struct mt_grant *want, struct mt_grant *out);

/*
 * mt_sched_pg_adopt - create a group already placed: bundle i reserved on
 * nodes[i] (spec->nbundles entries), its devices chosen there as placement
 * would choose them.
 *
 * The group is CREATED at once (mt_sched_pg_state), is not queued, and
 * behaves as one placed by decide: tasks can be placed or adopted into its
 * bundles, node death reschedules its lost bundles, removal returns every
 * unit. Selectors are not re-checked; the strict strategies are (every
 * node the same for STRICT_PACK, all different for STRICT_SPREAD). When
 * bundles reserve GPUs or TPU chips, prefer mt_sched_pg_adopt_at(): tasks
 * adopted into a bundle must hold devices of that bundle.
 *
 * IN  spec    as for mt_sched_pg_create(); borrowed
 * IN  nodes   spec->nbundles node handles; borrowed
 * IN  now_ms  the group's submit time
 * RET 0; -MT_EEXIST (id taken); -MT_ENOENT (a node unknown or dead);
 *     -MT_EAGAIN (the bundles do not fit their nodes: nothing reserved);
 *     -MT_EINVAL (as mt_sched_pg_create(), nodes NULL, nodes breaking a
 *     strict strategy); -MT_ENOMEM
 * NOTE TPU slice groups (mt_sched_slice_reserve) have no mt_pg_spec: see
 *     mt_sched_slice_adopt().
 * THREAD loop thread
 */
int mt_sched_pg_adopt(struct mt_sched *s, const struct mt_pg_spec *spec,
                      const uint32_t *nodes, uint64_t now_ms);

/*
 * mt_sched_pg_adopt_at - mt_sched_pg_adopt() with each bundle's devices
 * given too: at[i].node, at[i].gpus and at[i].tpu_chips, as
 * mt_sched_pg_bundle() reported them before the restart (at[i].res is not
 * read). GPU devices hold the bundle's GPU quantity when below 1, else one
 * whole device each; chips form an aligned block of the bundle's count.
 *
 * RET as mt_sched_pg_adopt(); -MT_EAGAIN also when those devices are not
 *     free; -MT_EINVAL also when the devices do not match the bundle's
 *     quantities or lie beyond the node's devices
 */
int mt_sched_pg_adopt_at(struct mt_sched *s, const struct mt_pg_spec *spec,
                         const struct mt_bundle_info *at, uint64_t now_ms);

/*
 * mt_sched_slice_adopt - create a slice group already holding the slices
 * named: the j-th slice (bundles j*hosts .. j*hosts+hosts-1) is the slice
 * labelled names[j], as mt_sched_pg_slice() reported it before the
 * restart. Each host's bundle holds all its chips plus per_host (GPUs in
 * per_host are chosen anew). The group is CREATED at once, as if reserved
 * by decide. All-or-nothing.
 *
 * IN  spec    as for mt_sched_slice_reserve(); borrowed
 * IN  names   spec->nslices slice names; borrowed
 * RET 0; -MT_EEXIST (id taken); -MT_ENOENT (a slice unknown, or a host of
 *     it missing or dead); -MT_EAGAIN (a slice held by another group, or a
 *     host without all its chips free or room for per_host: nothing
 *     reserved); -MT_EINVAL (as mt_sched_slice_reserve(), names NULL, a
 *     name listed twice, a slice of another pod type or host shape);
 *     -MT_ENOMEM
 * THREAD loop thread
 */
int mt_sched_slice_adopt(struct mt_sched *s, const struct mt_slice_spec *spec,
                         const char *const *names, uint64_t now_ms);

/* ---- Demand summary (manta status) ---- */

struct mt_demand {
    enum mt_decision_kind kind;   /* task shape or placement group */
    struct mt_res_set shape;      /* tasks: the shape; groups: bundle 0 */
    uint32_t count;               /* tasks or groups of this shape */
    uint32_t nbundles;            /* groups only */
    enum mt_sched_pg_strategy strategy; /* groups only */
    bool infeasible;
};

/*
 * mt_sched_demand - pending demand grouped by resource shape.
 *
 * OUT out  up to max rows, largest count first
 * RET rows written (0..max), -MT_EINVAL (out NULL, max > 0), -MT_ENOMEM
 */
int mt_sched_demand(const struct mt_sched *s, struct mt_demand *out,
                    size_t max);

/*
 * mt_sched_demand_format - the Demands: block of manta status, e.g.
 *   " {CPU: 1}: 385+ pending tasks/actors"
 *
 * RET length written (snprintf semantics)
 */
int mt_sched_demand_format(const struct mt_sched *s, char *buf, size_t len);

/* Cluster-wide use of one resource, as manta status prints it:
 * "1.0/2.0 CPU (1.0 used of 1.0 reserved in placement groups)". */
struct mt_usage {
    int64_t total;          /* over live nodes */
    int64_t used;           /* total - available (reservations count) */
    int64_t pg_reserved;    /* reserved by placed bundles */
    int64_t pg_used;        /* of that, held by tasks inside bundles */
};

/*
 * mt_sched_usage - sum resource id over live nodes and placed bundles.
 * O(nodes + bundles). Sums saturate at INT64_MAX (memory in bytes x 10000
 * over thousands of nodes would not fit).
 *
 * RET 0, -MT_EINVAL (id out of range, u NULL)
 */
int mt_sched_usage(const struct mt_sched *s, int id, struct mt_usage *u);

/* Free accelerators and whether pending work could use them. */
struct mt_frag {
    uint32_t free_gpus;           /* whole free GPU devices, live nodes */
    uint32_t stranded_gpus;       /* ... on nodes no pending GPU work fits */
    uint32_t free_tpu_chips;      /* free TPU chips, live nodes */
    uint32_t stranded_tpu_chips;  /* ... on nodes no pending TPU work fits */
    uint32_t pending_gpu;         /* pending tasks + group bundles with GPU */
    uint32_t pending_tpu;         /* ... with TPU (slice bundles included) */
};

/*
 * mt_sched_fragmentation - count free accelerators no pending request can
 * use: a node's free GPUs (TPU chips) are stranded when no pending task
 * class or pending group bundle that asks for GPU (TPU) fits on that node
 * now (a slice bundle counts only on a host of a free slice of its pod
 * type). Strategy details (affinity, spread) are ignored. O(nodes x
 * pending shapes).
 *
 * RET 0, -MT_ENOMEM
 */
int mt_sched_fragmentation(const struct mt_sched *s, struct mt_frag *out);

/* ---- Invariants (tests, simulator) ---- */

/*
 * mt_sched_check - verify the accounting: on every live node, available +
 * reserved bundles + live grants == total per resource and per device,
 * nothing negative or above total; same inside every bundle.
 *
 * RET 0, -MT_ESTATE (with a description in why, if not NULL)
 */
int mt_sched_check(const struct mt_sched *s, char *why, size_t len);

#endif /* MT_SCHED_SCHED_H */
