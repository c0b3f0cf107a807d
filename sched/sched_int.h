/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched_int.h -- internals shared by the sched/ sources only (house style H3).
 *
 * DESIGN in one screen:
 *   - nodes live in one array indexed by handle (never reused). Each node
 *     keeps dense total[]/avail[] per resource id, its GPU/TPU instances
 *     (struct mt__inst) and a utilization score (max used share over the
 *     resources it has).
 *   - nodes with the same set of resource kinds form a pool. A pool indexes
 *     its members two ways so a decision rarely scans: a bitset of members
 *     below the spread threshold (the pack phase takes the first that fits)
 *     and MT__NB utilization buckets (the top-k phase looks at the least
 *     loaded bucket first). Per-pool sums of available quantities reject a
 *     request in O(1) when the whole pool cannot hold it.
 *   - pending tasks are grouped into classes of identical requirements
 *     (shape, priority, strategy, selector, group); a class is FIFO, and when
 *     its head does not fit no other member does, so decide costs O(classes)
 *     plus O(1) per placement.
 *   - grants and placement groups live in slabs; handles carry a generation
 *     so a stale or doubled release is detected, never corrupting counts.
 *
 * THREAD: not thread safe (one loop thread).
 */
#ifndef MT_SCHED_SCHED_INT_H
#define MT_SCHED_SCHED_INT_H

#include "sched/sched.h"
#include "sched/tpu.h"

#include "common/error.h"
#include "common/log.h"

#include <stdint.h>

#define MT__NODE_MAGIC 0x4d544e44u   /* "MTND" */
#define MT__NB 20                    /* utilization buckets per pool */
#define MT__HB 65                    /* free-amount histogram buckets */
#define MT__NONE UINT32_MAX

/* ---- u64 -> u32 hash map (open addressing, backward-shift delete) ---- */

struct mt__map {
    uint64_t *keys;
    uint32_t *vals;          /* MT__NONE = empty slot */
    uint32_t nslots;         /* power of two, or 0 before first put */
    uint32_t n;
};

int mt__map_put(struct mt__map *m, uint64_t key, uint32_t val);
uint32_t mt__map_get(const struct mt__map *m, uint64_t key);
void mt__map_del(struct mt__map *m, uint64_t key);
void mt__map_free(struct mt__map *m);

/* ---- Unit instances (GPU devices, TPU chips) of a node or a bundle ---- */

struct mt__inst {
    uint32_t gpu_mask;               /* devices belonging here */
    uint32_t tpu_mask;               /* chips belonging here */
    uint32_t tpu_free;               /* free chips (subset of tpu_mask) */
    int64_t gpu_free[MT_MAX_GPUS];   /* free share per device */
};

/* What one allocation took from instances. */
struct mt__alloc {
    uint32_t gpus;
    int64_t gpu_each;
    uint32_t tpu;
};

/* ---- Nodes and pools ---- */

/* A node. Guarded by: loop thread. */
struct mt__node {
    /* Hot: read by every fit check; CPU, GPU, TPU, memory and object
     * store availability share the first cache line with kinds. */
    uint64_t kinds;                  /* ids with total > 0 */
    int64_t avail[MT_RES_MAX];       /* total - grants - bundle reserves */
    uint32_t magic;                  /* MT__NODE_MAGIC */
    bool alive;
    bool suspect;                    /* alive, but nothing new goes there */
    uint8_t ngpu;
    uint8_t ntpu;
    uint8_t nkind;
    uint32_t name;                   /* strtab id */
    uint8_t kind[MT_RES_MAX];        /* the ids of kinds, ascending */
    int64_t total[MT_RES_MAX];
    struct mt__inst inst;
    struct mt_labelset labels;
    uint32_t util;                   /* fixed-point 0..10000 */
    uint32_t pool;
    uint32_t pool_pos;
    uint32_t bucket;
    uint32_t bucket_pos;
    int32_t slice;                   /* index in s->slices, -1 */
    uint32_t tpu_worker;
    uint32_t resv_round;             /* == s->round: reserved for a
                                        starving request this round */
};

struct mt__pool {
    uint64_t mask;                   /* resource kinds of every member */
    bool accel;                      /* members have GPU or TPU */
    uint32_t *members;               /* node handles */
    uint32_t n;
    uint32_t cap;
    uint64_t *below;                 /* bit pos: util < threshold */
    uint32_t below_lo;               /* no set bit in words < below_lo */
    uint32_t *bk[MT__NB];            /* node handles by utilization */
    uint32_t bkn[MT__NB];
    uint32_t bkcap[MT__NB];
    uint32_t spread_pos;             /* SPREAD round-robin cursor */
    /* Over live members. 128-bit: memory in bytes x 10000 summed over
     * thousands of nodes does not fit in 64 bits. */
    __int128 sum_avail[MT_RES_MAX];
    /* Members by bit length of their free whole units, per resource, and
     * the highest non-empty length: no member has more than
     * 2^hmax - 1 units free, so bigger requests skip the pool in O(1). */
    uint32_t hist[MT_RES_MAX][MT__HB];
    uint8_t hmax[MT_RES_MAX];
};

/* Nodes carrying one label key=value, in the order they joined. Dead
 * nodes stay listed and are skipped (handles are never reused). */
struct mt__post {
    uint32_t *nodes;
    uint32_t n;
    uint32_t cap;
};

/* ---- Grants ---- */

struct mt__grant {
    uint32_t gen;                    /* high half of the handle */
    bool live;
    uint32_t next_free;
    uint32_t node;
    uint32_t pg;                     /* pg slot or MT__NONE */
    uint32_t pg_gen;
    uint32_t bundle;
    uint32_t bundle_gen;
    struct mt_res_set res;
    struct mt__alloc a;
};

/* ---- Placement groups ---- */

struct mt__bundle {
    struct mt_res_set res;           /* reserved shape */
    struct mt_sel sel;
    int64_t avail[MT_RES_SET_MAX];   /* parallel to res.it */
    uint32_t node;                   /* MT__NONE while unplaced */
    uint32_t gen;                    /* bumped on every (un)placement */
    struct mt__alloc a;              /* instances taken from the node */
    struct mt__inst inst;            /* those instances, as a pool */
    uint32_t slice;                  /* slice groups: slice index held */
};

struct mt__pg {
    uint64_t id;
    uint32_t gen;
    bool used;
    bool queued;                     /* in s->pgq */
    bool reported;                   /* infeasible already reported */
    uint8_t state;                   /* enum mt_sched_pg_state */
    uint8_t strategy;                /* enum mt_sched_pg_strategy */
    bool is_slice;
    uint32_t nb;
    struct mt__bundle *b;
    uint32_t unplaced;
    uint64_t submit_ms;
    uint32_t next_free;
    uint32_t feas_epoch;             /* s->epoch when feas was computed */
    int feas;                        /* 0 or -MT_EINFEASIBLE */
    /* slice groups */
    uint32_t pod_type;               /* strtab id of normalised pod type */
    uint32_t hosts;
    uint32_t chips_per_host;
    uint32_t nslices;
};

/* A TPU slice seen through node labels. */
struct mt__slice {
    uint32_t name;                   /* strtab id */
    uint32_t pod_type;               /* strtab id, normalised */
    uint32_t hosts;                  /* from tpu.h; 0 when unknown */
    struct mt_tpu_slice shape;       /* valid when hosts > 0 */
    uint32_t *workers;               /* node per worker id, MT__NONE */
    uint32_t nworkers;               /* array length */
    uint32_t held_by;                /* pg slot or MT__NONE */
    uint32_t busy_chips;             /* chips in use on its hosts */
};

/* ---- Pending tasks ---- */

struct mt__task {
    uint64_t id;
    uint64_t submit_ms;
};

/* Requirements shared by every task of a class; memset before filling. */
struct mt__ckey {
    struct mt_res_set res;
    int32_t prio;
    uint32_t strategy;
    uint32_t affinity;
    uint32_t soft;
    uint32_t pg;                     /* slot, MT__NONE */
    uint32_t pg_gen;
    int32_t bundle;
    struct mt_sel sel;
};

struct mt__class {
    struct mt__ckey key;
    uint64_t hash;
    uint64_t kinds;                  /* mt_res_set_mask(key.res) */
    struct mt__task *q;              /* ring buffer */
    uint32_t head;
    uint32_t n;
    uint32_t cap;
    uint32_t nreported;              /* leading tasks reported infeasible */
    uint32_t feas_epoch;             /* s->epoch when feas was computed */
    int feas;                        /* 0 or -MT_EINFEASIBLE */
    uint32_t active_pos;             /* in s->active, MT__NONE */
    uint32_t resv;                   /* node reserved while starving */
};

/* ---- The scheduler ---- */

struct mt_sched {
    struct mt_sched_opts o;
    struct mt_res_names *names;
    struct mt_strtab *strs;
    uint64_t rng;
    uint32_t epoch;                  /* bumped when nodes join or die */
    uint32_t round;                  /* decide rounds; node reservations */

    struct mt__node *nodes;
    uint32_t nnodes;
    uint32_t nodes_cap;
    uint32_t nalive;
    struct mt__map node_by_name;     /* strtab id -> live node */

    struct mt__pool *pools;
    uint32_t npools;

    struct mt__post *posts;          /* label key=value -> nodes */
    uint32_t nposts;
    uint32_t posts_cap;
    struct mt__map post_by_kv;       /* key << 32 | value -> post index */

    struct mt__grant *grants;
    uint32_t ngrants;
    uint32_t grants_cap;
    uint32_t grant_free;
    uint32_t nlive_grants;

    struct mt__pg *pgs;
    uint32_t npgs;
    uint32_t pgs_cap;
    uint32_t pg_free;
    struct mt__map pg_by_id;
    uint32_t *pgq;                   /* pending groups, FIFO */
    uint32_t npgq;
    uint32_t pgq_cap;

    struct mt__slice *slices;
    uint32_t nslices;
    uint32_t slices_cap;
    struct mt__map slice_by_name;    /* strtab id -> slice index */
    uint32_t k_slice;                /* strtab ids of the TPU label keys */
    uint32_t k_worker;
    uint32_t k_pod_type;
    uint32_t k_topology;

    struct mt__class *classes;
    uint32_t nclasses;
    uint32_t classes_cap;
    struct mt__map class_by_hash;
    uint32_t *active;                /* classes with pending tasks */
    uint32_t nactive;
    uint32_t active_cap;
    size_t npending;
};

/* ---- node.c ---- */

/* mt__req: one request as the allocator sees it. */
struct mt__req {
    const struct mt_res_set *res;
    uint64_t kinds;
    const struct mt_sel *sel;        /* NULL or compiled selector */
};

bool mt__inst_fits(const struct mt__inst *in, uint32_t ntpu, int64_t gpu,
                   int64_t tpu);
void mt__inst_take(struct mt__inst *in, uint32_t ntpu, int64_t gpu,
                   int64_t tpu, struct mt__alloc *a);
void mt__inst_give(struct mt__inst *in, const struct mt__alloc *a);
/* Adoption: are a's devices in in and free enough; charge them as given. */
bool mt__inst_can_charge(const struct mt__inst *in, const struct mt__alloc *a);
void mt__inst_charge(struct mt__inst *in, const struct mt__alloc *a);

bool mt__node_fits(const struct mt__node *n, const struct mt__req *r);
bool mt__node_feasible(const struct mt__node *n, const struct mt__req *r);
void mt__node_take(struct mt_sched *s, uint32_t node,
                   const struct mt_res_set *res, struct mt__alloc *a);
void mt__node_give(struct mt_sched *s, uint32_t node,
                   const struct mt_res_set *res, const struct mt__alloc *a);
/* mt__node_take with the instances chosen by the caller (adopt.c); the
 * caller checked that they fit. */
void mt__node_charge(struct mt_sched *s, uint32_t node,
                     const struct mt_res_set *res, const struct mt__alloc *a);
int mt__hist_bucket(int64_t avail);
uint64_t mt__rand(struct mt_sched *s);
const struct mt__post *mt__post_for(const struct mt_sched *s, uint32_t key,
                                    uint32_t value);
uint32_t mt__kinds_accel(void);

/* ---- policy.c ---- */

/* Extra constraints for placement-group bundles. */
struct mt__pick_ctx {
    const uint32_t *exclude;         /* nodes to avoid */
    uint32_t nexclude;
    const struct mt_sel *const *sels;  /* extra selectors that must match */
    uint32_t nsels;
};

/*
 * mt__pick - choose a node for r with the given task strategy.
 * RET node handle, or MT__NONE when nothing fits now.
 */
uint32_t mt__pick(struct mt_sched *s, const struct mt__req *r,
                  uint32_t strategy, const struct mt__pick_ctx *ctx);

/* mt__feasible - 0 when some live node could ever hold r, or
 * -MT_EINFEASIBLE. O(live nodes). */
int mt__feasible(const struct mt_sched *s, const struct mt__req *r);

/* ---- grant slab (sched.c) ---- */
int mt__grant_new(struct mt_sched *s, uint32_t *slot);
uint64_t mt__grant_handle(const struct mt_sched *s, uint32_t slot);
void mt__grant_fill(const struct mt_sched *s, uint32_t slot,
                    struct mt_grant *out);

/* ---- pg.c ---- */
struct mt__pg *mt__pg_find(const struct mt_sched *s, uint64_t id);
int mt__pg_try_place(struct mt_sched *s, uint32_t slot);
void mt__pg_on_node_dead(struct mt_sched *s, uint32_t node);
int mt__pg_feasible(const struct mt_sched *s, const struct mt__pg *pg);
int mt__bundle_alloc(struct mt_sched *s, uint32_t slot, int32_t bundle,
                     const struct mt__req *r, uint32_t gslot);
void mt__pgq_push(struct mt_sched *s, uint32_t slot);
void mt__pg_release_all(struct mt_sched *s, struct mt__pg *pg);
/* A fresh group slot for id. RET 0, -MT_EEXIST, -MT_ENOMEM. */
int mt__pg_alloc(struct mt_sched *s, uint64_t id, uint32_t *out);
/* Shared tail of create and slice reserve: try now, else queue. */
int mt__pg_start(struct mt_sched *s, uint32_t slot, uint64_t now_ms);
/* Copy and check spec's bundles into pg (all unplaced). RET 0,
 * -MT_EINVAL, -MT_ENOMEM; on error the caller frees the slot. */
int mt__pg_bundles_copy(struct mt_sched *s, struct mt__pg *pg,
                        const struct mt_pg_spec *spec);
void mt__pg_free_slot(struct mt_sched *s, uint32_t slot);
/* Reserve b on node: the instances at (checked by the caller), or chosen
 * as placement does when at is NULL. Unplace gives them back. */
void mt__bundle_place(struct mt_sched *s, struct mt__bundle *b, uint32_t node,
                      const struct mt__alloc *at);
void mt__bundle_unplace(struct mt_sched *s, struct mt__bundle *b);

/* ---- slice.c ---- */
int mt__slice_node_added(struct mt_sched *s, uint32_t node);
void mt__slice_node_dead(struct mt_sched *s, uint32_t node);
int mt__slice_try_place(struct mt_sched *s, uint32_t slot);
int mt__slice_feasible(const struct mt_sched *s, const struct mt__pg *pg);
void mt__slice_reserve_hosts(struct mt_sched *s, uint32_t slot);
void mt__slice_release(struct mt_sched *s, uint32_t slot);

/* mt__reserved - node is held for a starving request this round. */
static inline bool mt__reserved(const struct mt_sched *s, uint32_t node)
{
    return s->nodes[node].resv_round == s->round;
}

#endif /* MT_SCHED_SCHED_INT_H */
