/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node.c -- nodes, their unit instances, and the pool indexes over them.
 *
 * Every change to a node's available resources goes through
 * mt__node_take()/mt__node_give(), which also keep the node's utilization
 * score and its place in its pool's indexes (below-threshold bitset and
 * utilization buckets) up to date, in O(1) per change.
 *
 * Unit instances: a GPU request below 1 takes a share of one device, chosen
 * best-fit (the fullest device that still has room), so fractions pack and
 * 5 x 0.18 share a device; a request of k >= 1 takes k whole free devices.
 * A TPU request of k chips takes an aligned block chosen by tpu.h's
 * mt_tpu_host_pick(). Adoption (adopt.c) charges instances named by the
 * caller instead: mt__node_charge() is mt__node_take() without the choice.
 */
#include "sched/sched_int.h"

#include "sched/tpu.h"

#include <stdlib.h>
#include <string.h>

/* ---- Hash map ---- */

static uint64_t mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

static int map_grow(struct mt__map *m)
{
    uint32_t ns = m->nslots ? m->nslots * 2 : 16;
    uint64_t *keys = malloc(ns * sizeof(*keys));
    uint32_t *vals = malloc(ns * sizeof(*vals));
    struct mt__map old = *m;

    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -MT_ENOMEM;
    }
    memset(vals, 0xff, ns * sizeof(*vals));
    m->keys = keys;
    m->vals = vals;
    m->nslots = ns;
    m->n = 0;
    for (uint32_t i = 0; i < old.nslots; i++)
        if (old.vals[i] != MT__NONE)
            mt__map_put(m, old.keys[i], old.vals[i]);
    free(old.keys);
    free(old.vals);
    return 0;
}

int mt__map_put(struct mt__map *m, uint64_t key, uint32_t val)
{
    uint32_t mask, i;

    if ((m->n + 1) * 2 > m->nslots && map_grow(m) < 0)
        return -MT_ENOMEM;
    mask = m->nslots - 1;
    i = (uint32_t)mix64(key) & mask;
    while (m->vals[i] != MT__NONE && m->keys[i] != key)
        i = (i + 1) & mask;
    if (m->vals[i] == MT__NONE)
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

static uint32_t map_slot(const struct mt__map *m, uint64_t key)
{
    uint32_t mask, i;

    if (!m->nslots)
        return MT__NONE;
    mask = m->nslots - 1;
    i = (uint32_t)mix64(key) & mask;
    while (m->vals[i] != MT__NONE) {
        if (m->keys[i] == key)
            return i;
        i = (i + 1) & mask;
    }
    return MT__NONE;
}

uint32_t mt__map_get(const struct mt__map *m, uint64_t key)
{
    uint32_t i = map_slot(m, key);

    return i == MT__NONE ? MT__NONE : m->vals[i];
}

void mt__map_del(struct mt__map *m, uint64_t key)
{
    uint32_t i = map_slot(m, key), j, mask = m->nslots - 1;

    if (i == MT__NONE)
        return;
    m->vals[i] = MT__NONE;
    m->n--;
    for (j = (i + 1) & mask; m->vals[j] != MT__NONE; j = (j + 1) & mask) {
        uint32_t home = (uint32_t)mix64(m->keys[j]) & mask;
        bool move = (j > i) ? (home <= i || home > j) : (home <= i && home > j);

        if (move) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            m->vals[j] = MT__NONE;
            i = j;
        }
    }
}

void mt__map_free(struct mt__map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

uint64_t mt__rand(struct mt_sched *s)
{
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 2685821657736338717ULL;
}

uint32_t mt__kinds_accel(void)
{
    return (1u << MT_RES_GPU) | (1u << MT_RES_TPU);
}

/* ---- Unit instances ---- */

bool mt__inst_fits(const struct mt__inst *in, uint32_t ntpu, int64_t gpu,
                   int64_t tpu)
{
    if (gpu > 0) {
        int whole = 0;
        bool frac_ok = false;

        for (uint32_t m = in->gpu_mask; m; m &= m - 1) {
            int d = __builtin_ctz(m);

            whole += in->gpu_free[d] == MT_RES_SCALE;
            frac_ok |= in->gpu_free[d] >= gpu;
        }
        if (gpu < MT_RES_SCALE ? !frac_ok : whole < gpu / MT_RES_SCALE)
            return false;
    }
    if (tpu > 0 && (ntpu == 0 ||
                    mt_tpu_host_pick(ntpu, in->tpu_free,
                                     (uint32_t)(tpu / MT_RES_SCALE), NULL) < 0))
        return false;
    return true;
}

static void take_gpus(struct mt__inst *in, int64_t gpu, struct mt__alloc *a)
{
    int best = -1;

    if (gpu < MT_RES_SCALE) {
        for (uint32_t m = in->gpu_mask; m; m &= m - 1) {
            int d = __builtin_ctz(m);

            if (in->gpu_free[d] >= gpu &&
                (best < 0 || in->gpu_free[d] < in->gpu_free[best]))
                best = d;
        }
        in->gpu_free[best] -= gpu;
        a->gpus = 1u << best;
        a->gpu_each = gpu;
        return;
    }
    a->gpu_each = MT_RES_SCALE;
    for (uint32_t m = in->gpu_mask, k = (uint32_t)(gpu / MT_RES_SCALE);
         m && k; m &= m - 1) {
        int d = __builtin_ctz(m);

        if (in->gpu_free[d] == MT_RES_SCALE) {
            in->gpu_free[d] = 0;
            a->gpus |= 1u << d;
            k--;
        }
    }
}

void mt__inst_take(struct mt__inst *in, uint32_t ntpu, int64_t gpu,
                   int64_t tpu, struct mt__alloc *a)
{
    memset(a, 0, sizeof(*a));
    if (gpu > 0)
        take_gpus(in, gpu, a);
    if (tpu > 0) {
        uint32_t block = 0;

        mt_tpu_host_pick(ntpu, in->tpu_free, (uint32_t)(tpu / MT_RES_SCALE),
                         &block);
        in->tpu_free &= ~block;
        a->tpu = block;
    }
}

void mt__inst_give(struct mt__inst *in, const struct mt__alloc *a)
{
    for (uint32_t m = a->gpus; m; m &= m - 1)
        in->gpu_free[__builtin_ctz(m)] += a->gpu_each;
    in->tpu_free |= a->tpu;
}

bool mt__inst_can_charge(const struct mt__inst *in, const struct mt__alloc *a)
{
    if ((a->gpus & ~in->gpu_mask) || (a->tpu & ~in->tpu_free))
        return false;
    for (uint32_t m = a->gpus; m; m &= m - 1)
        if (in->gpu_free[__builtin_ctz(m)] < a->gpu_each)
            return false;
    return true;
}

void mt__inst_charge(struct mt__inst *in, const struct mt__alloc *a)
{
    for (uint32_t m = a->gpus; m; m &= m - 1)
        in->gpu_free[__builtin_ctz(m)] -= a->gpu_each;
    in->tpu_free &= ~a->tpu;
}

/* ---- Fit checks ---- */

bool mt__node_fits(const struct mt__node *n, const struct mt__req *r)
{
    const struct mt_res_set *rs = r->res;
    int64_t gpu = 0, tpu = 0;

    if (n->suspect || (n->kinds & r->kinds) != r->kinds)
        return false;
    for (int i = 0; i < rs->n; i++) {
        uint16_t id = rs->it[i].id;

        if (n->avail[id] < rs->it[i].qty)
            return false;
        if (id == MT_RES_GPU)
            gpu = rs->it[i].qty;
        else if (id == MT_RES_TPU)
            tpu = rs->it[i].qty;
    }
    if ((gpu || tpu) && !mt__inst_fits(&n->inst, n->ntpu, gpu, tpu))
        return false;
    return !r->sel || mt_sel_match(r->sel, &n->labels);
}

bool mt__node_feasible(const struct mt__node *n, const struct mt__req *r)
{
    const struct mt_res_set *rs = r->res;

    if (!n->alive || (n->kinds & r->kinds) != r->kinds)
        return false;
    for (int i = 0; i < rs->n; i++) {
        uint16_t id = rs->it[i].id;
        int64_t q = rs->it[i].qty;

        if (n->total[id] < q)
            return false;
        if (id == MT_RES_TPU &&
            mt_tpu_host_pick(n->ntpu, (1u << n->ntpu) - 1,
                             (uint32_t)(q / MT_RES_SCALE), NULL) < 0)
            return false;
    }
    return !r->sel || mt_sel_match(r->sel, &n->labels);
}

/* ---- Pool indexes ---- */

/* ---- Free-amount histograms ---- */

int mt__hist_bucket(int64_t avail)
{
    uint64_t units = avail > 0 ? (uint64_t)(avail / MT_RES_SCALE) : 0;

    return units ? 64 - __builtin_clzll(units) : 0;
}

static void hist_add(struct mt__pool *p, int id, int64_t avail)
{
    int b = mt__hist_bucket(avail);

    p->hist[id][b]++;
    if (b > p->hmax[id])
        p->hmax[id] = (uint8_t)b;
}

static void hist_del(struct mt__pool *p, int id, int64_t avail)
{
    int b = mt__hist_bucket(avail);

    p->hist[id][b]--;
    while (p->hmax[id] > 0 && p->hist[id][p->hmax[id]] == 0)
        p->hmax[id]--;
}

static void hist_move(struct mt__pool *p, int id, int64_t from, int64_t to)
{
    if (mt__hist_bucket(from) == mt__hist_bucket(to))
        return;
    hist_del(p, id, from);
    hist_add(p, id, to);
}

static uint32_t util_of(const struct mt__node *n)
{
    uint32_t u = 0;

    for (int i = 0; i < n->nkind; i++) {
        int id = n->kind[i];
        int64_t used = n->total[id] - n->avail[id];
        /* 128-bit: bytes x 10000 x 10000 overflows 64 bits. */
        uint32_t k = (uint32_t)((__int128)used * MT_RES_SCALE / n->total[id]);

        if (k > u)
            u = k;
    }
    return u;
}

static uint32_t bucket_of(uint32_t util)
{
    uint32_t b = util * MT__NB / (MT_RES_SCALE + 1);

    return b < MT__NB ? b : MT__NB - 1;
}

static void below_set(struct mt__pool *p, uint32_t pos, bool on)
{
    uint64_t bit = 1ULL << (pos % 64);

    if (on) {
        p->below[pos / 64] |= bit;
        if (pos / 64 < p->below_lo)
            p->below_lo = pos / 64;
    } else {
        p->below[pos / 64] &= ~bit;
    }
}

static bool below_get(const struct mt__pool *p, uint32_t pos)
{
    return p->below[pos / 64] >> (pos % 64) & 1;
}

static int bucket_add(struct mt_sched *s, struct mt__pool *p, uint32_t b,
                      uint32_t node)
{
    if (p->bkn[b] == p->bkcap[b]) {
        uint32_t nc = p->bkcap[b] ? p->bkcap[b] * 2 : 16;
        uint32_t *nb = realloc(p->bk[b], nc * sizeof(*nb));

        if (!nb)
            return -MT_ENOMEM;
        p->bk[b] = nb;
        p->bkcap[b] = nc;
    }
    s->nodes[node].bucket = b;
    s->nodes[node].bucket_pos = p->bkn[b];
    p->bk[b][p->bkn[b]++] = node;
    return 0;
}

static void bucket_del(struct mt_sched *s, struct mt__pool *p, uint32_t node)
{
    struct mt__node *n = &s->nodes[node];
    uint32_t b = n->bucket, last = p->bk[b][--p->bkn[b]];

    p->bk[b][n->bucket_pos] = last;
    s->nodes[last].bucket_pos = n->bucket_pos;
}

/* Re-file a node after its available resources changed. */
static void reindex(struct mt_sched *s, uint32_t node)
{
    struct mt__node *n = &s->nodes[node];
    struct mt__pool *p = &s->pools[n->pool];
    uint32_t u = util_of(n), b = bucket_of(u);

    n->util = u;
    below_set(p, n->pool_pos, u < s->o.spread_threshold);
    if (b != n->bucket) {
        bucket_del(s, p, node);
        /* Capacity exists: buckets only grow and node counts are fixed. */
        if (bucket_add(s, p, b, node) < 0)
            MT_BUG("bucket_add failed after capacity check");
    }
}

/* The quantity side of a take: avail, pool sums, slice chips, indexes. */
static void node_debit(struct mt_sched *s, uint32_t node,
                       const struct mt_res_set *res, const struct mt__alloc *a)
{
    struct mt__node *n = &s->nodes[node];
    struct mt__pool *p = &s->pools[n->pool];

    for (int i = 0; i < res->n; i++) {
        uint16_t id = res->it[i].id;

        hist_move(p, id, n->avail[id], n->avail[id] - res->it[i].qty);
        n->avail[id] -= res->it[i].qty;
        p->sum_avail[id] -= res->it[i].qty;
    }
    if (n->slice >= 0)
        s->slices[n->slice].busy_chips += (uint32_t)__builtin_popcount(a->tpu);
    reindex(s, node);
}

void mt__node_take(struct mt_sched *s, uint32_t node,
                   const struct mt_res_set *res, struct mt__alloc *a)
{
    struct mt__node *n = &s->nodes[node];
    int64_t gpu = 0, tpu = 0;

    for (int i = 0; i < res->n; i++) {
        gpu = res->it[i].id == MT_RES_GPU ? res->it[i].qty : gpu;
        tpu = res->it[i].id == MT_RES_TPU ? res->it[i].qty : tpu;
    }
    mt__inst_take(&n->inst, n->ntpu, gpu, tpu, a);
    node_debit(s, node, res, a);
}

void mt__node_charge(struct mt_sched *s, uint32_t node,
                     const struct mt_res_set *res, const struct mt__alloc *a)
{
    mt__inst_charge(&s->nodes[node].inst, a);
    node_debit(s, node, res, a);
}

void mt__node_give(struct mt_sched *s, uint32_t node,
                   const struct mt_res_set *res, const struct mt__alloc *a)
{
    struct mt__node *n = &s->nodes[node];
    struct mt__pool *p = &s->pools[n->pool];

    for (int i = 0; i < res->n; i++) {
        uint16_t id = res->it[i].id;

        hist_move(p, id, n->avail[id], n->avail[id] + res->it[i].qty);
        n->avail[id] += res->it[i].qty;
        p->sum_avail[id] += res->it[i].qty;
    }
    mt__inst_give(&n->inst, a);
    if (n->slice >= 0)
        s->slices[n->slice].busy_chips -= (uint32_t)__builtin_popcount(a->tpu);
    reindex(s, node);
}

static int pool_for(struct mt_sched *s, uint64_t mask, uint32_t *out)
{
    struct mt__pool *np;

    for (uint32_t i = 0; i < s->npools; i++)
        if (s->pools[i].mask == mask) {
            *out = i;
            return 0;
        }
    np = realloc(s->pools, (s->npools + 1) * sizeof(*np));
    if (!np)
        return -MT_ENOMEM;
    s->pools = np;
    memset(&np[s->npools], 0, sizeof(*np));
    np[s->npools].mask = mask;
    np[s->npools].accel = (mask & mt__kinds_accel()) != 0;
    *out = s->npools++;
    return 0;
}

static int pool_reserve(struct mt__pool *p)
{
    uint32_t nc;
    uint32_t *nm;
    uint64_t *nb;

    if (p->n < p->cap)
        return 0;
    nc = p->cap ? p->cap * 2 : 64;
    nm = realloc(p->members, nc * sizeof(*nm));
    if (!nm)
        return -MT_ENOMEM;
    p->members = nm;
    nb = realloc(p->below, nc / 64 * sizeof(*nb));
    if (!nb)
        return -MT_ENOMEM;
    memset(nb + p->cap / 64, 0, (nc - p->cap) / 64 * sizeof(*nb));
    p->below = nb;
    p->cap = nc;
    return 0;
}

/* Reserve bucket room for every member so reindex never allocates. */
static int buckets_reserve(struct mt__pool *p)
{
    for (int b = 0; b < MT__NB; b++) {
        uint32_t *nb;

        if (p->bkcap[b] > p->n)
            continue;
        nb = realloc(p->bk[b], p->cap * sizeof(*nb));
        if (!nb)
            return -MT_ENOMEM;
        p->bk[b] = nb;
        p->bkcap[b] = p->cap;
    }
    return 0;
}

static int pool_add(struct mt_sched *s, uint32_t node)
{
    struct mt__node *n = &s->nodes[node];
    struct mt__pool *p;
    uint32_t pi;
    int rc = pool_for(s, n->kinds, &pi);

    if (rc < 0)
        return rc;
    p = &s->pools[pi];
    if ((rc = pool_reserve(p)) < 0 || (rc = buckets_reserve(p)) < 0)
        return rc;
    n->pool = pi;
    n->pool_pos = p->n;
    p->members[p->n++] = node;
    for (int i = 0; i < n->nkind; i++) {
        p->sum_avail[n->kind[i]] += n->avail[n->kind[i]];
        hist_add(p, n->kind[i], n->avail[n->kind[i]]);
    }
    n->util = util_of(n);
    below_set(p, n->pool_pos, n->util < s->o.spread_threshold);
    return bucket_add(s, p, bucket_of(n->util), node);
}

static void pool_del(struct mt_sched *s, uint32_t node)
{
    struct mt__node *n = &s->nodes[node];
    struct mt__pool *p = &s->pools[n->pool];
    uint32_t pos = n->pool_pos, last = p->members[p->n - 1];

    bucket_del(s, p, node);
    for (int i = 0; i < n->nkind; i++) {
        p->sum_avail[n->kind[i]] -= n->avail[n->kind[i]];
        hist_del(p, n->kind[i], n->avail[n->kind[i]]);
    }
    below_set(p, pos, below_get(p, p->n - 1));
    below_set(p, p->n - 1, false);
    p->members[pos] = last;
    s->nodes[last].pool_pos = pos;
    p->n--;
}

/* ---- Label postings ---- */

const struct mt__post *mt__post_for(const struct mt_sched *s, uint32_t key,
                                    uint32_t value)
{
    uint32_t i = mt__map_get(&s->post_by_kv, (uint64_t)key << 32 | value);

    return i == MT__NONE ? NULL : &s->posts[i];
}

static int post_add(struct mt_sched *s, uint32_t key, uint32_t value,
                    uint32_t node)
{
    uint64_t kv = (uint64_t)key << 32 | value;
    uint32_t i = mt__map_get(&s->post_by_kv, kv);
    struct mt__post *p;

    if (i == MT__NONE) {
        if (s->nposts == s->posts_cap) {
            uint32_t nc = s->posts_cap ? s->posts_cap * 2 : 64;
            struct mt__post *np = realloc(s->posts, nc * sizeof(*np));

            if (!np)
                return -MT_ENOMEM;
            s->posts = np;
            s->posts_cap = nc;
        }
        if (mt__map_put(&s->post_by_kv, kv, s->nposts) < 0)
            return -MT_ENOMEM;
        memset(&s->posts[s->nposts], 0, sizeof(s->posts[0]));
        i = s->nposts++;
    }
    p = &s->posts[i];
    if (p->n == p->cap) {
        uint32_t nc = p->cap ? p->cap * 2 : 8;
        uint32_t *nn = realloc(p->nodes, nc * sizeof(*nn));

        if (!nn)
            return -MT_ENOMEM;
        p->nodes = nn;
        p->cap = nc;
    }
    p->nodes[p->n++] = node;
    return 0;
}

/* ---- Node events ---- */

static int node_res_init(struct mt__node *n, const struct mt_node_spec *spec)
{
    for (size_t i = 0; i < spec->nres; i++) {
        uint16_t id = spec->res[i].id;
        int64_t q = spec->res[i].qty;

        if (id >= MT_RES_MAX || q < 0 || (n->kinds >> id & 1))
            return -MT_EINVAL;
        if ((id == MT_RES_GPU || id == MT_RES_TPU) && q % MT_RES_SCALE)
            return -MT_EINVAL;
        if ((id == MT_RES_GPU && q > MT_MAX_GPUS * MT_RES_SCALE) ||
            (id == MT_RES_TPU && q > MT_MAX_TPU_CHIPS * MT_RES_SCALE))
            return -MT_EINVAL;
        if (q == 0)
            continue;
        n->total[id] = n->avail[id] = q;
        n->kinds |= 1ULL << id;
    }
    for (int id = 0; id < MT_RES_MAX; id++)
        if (n->kinds >> id & 1)
            n->kind[n->nkind++] = (uint8_t)id;
    n->ngpu = (uint8_t)(n->total[MT_RES_GPU] / MT_RES_SCALE);
    n->ntpu = (uint8_t)(n->total[MT_RES_TPU] / MT_RES_SCALE);
    n->inst.gpu_mask = (1u << n->ngpu) - 1;
    for (int d = 0; d < n->ngpu; d++)
        n->inst.gpu_free[d] = MT_RES_SCALE;
    n->inst.tpu_mask = n->inst.tpu_free = (1u << n->ntpu) - 1;
    return 0;
}

static int nodes_reserve(struct mt_sched *s)
{
    struct mt__node *nn;
    uint32_t nc;

    if (s->nnodes < s->nodes_cap)
        return 0;
    nc = s->nodes_cap ? s->nodes_cap * 2 : 64;
    nn = realloc(s->nodes, nc * sizeof(*nn));
    if (!nn)
        return -MT_ENOMEM;
    s->nodes = nn;
    s->nodes_cap = nc;
    return 0;
}

/* The spec's labels plus manta.io/node-id=<name> unless it sets one. */
static int node_labels(struct mt_sched *s, const struct mt_node_spec *spec,
                       struct mt_labelset *ls)
{
    struct mt_label *all;
    size_t n = spec->nlabels;
    int rc;

    for (size_t i = 0; i < spec->nlabels; i++)
        if (spec->labels[i].key &&
            strcmp(spec->labels[i].key, MT_LABEL_NODE_ID) == 0)
            return mt_labelset_build(s->strs, spec->labels, n, ls);
    all = malloc((n + 1) * sizeof(*all));
    if (!all)
        return -MT_ENOMEM;
    if (n)
        memcpy(all, spec->labels, n * sizeof(*all));
    all[n].key = MT_LABEL_NODE_ID;
    all[n].value = spec->name;
    rc = mt_labelset_build(s->strs, all, n + 1, ls);
    free(all);
    return rc;
}

int mt_sched_on_node_added(struct mt_sched *s, const struct mt_node_spec *spec,
                           uint32_t *node)
{
    struct mt__node *n;
    int64_t name;
    int rc;

    if (!spec || !spec->name || !spec->name[0] || (spec->nres && !spec->res) ||
        (spec->nlabels && !spec->labels))
        return -MT_EINVAL;
    name = mt_strtab_intern(s->strs, spec->name);
    if (name < 0)
        return (int)name;
    if (mt__map_get(&s->node_by_name, (uint64_t)name) != MT__NONE)
        return -MT_EEXIST;
    if ((rc = nodes_reserve(s)) < 0)
        return rc;
    n = &s->nodes[s->nnodes];
    memset(n, 0, sizeof(*n));
    n->magic = MT__NODE_MAGIC;
    n->name = (uint32_t)name;
    n->slice = -1;
    if ((rc = node_res_init(n, spec)) < 0)
        return rc;
    if ((rc = node_labels(s, spec, &n->labels)) < 0)
        return rc;
    n->alive = true;
    /* pool_add fails only before it files the node anywhere. */
    if ((rc = pool_add(s, s->nnodes)) < 0)
        goto out_labels;
    if ((rc = mt__map_put(&s->node_by_name, (uint64_t)name, s->nnodes)) < 0)
        goto out_pool;
    for (uint32_t i = 0; i < n->labels.n; i++)
        if ((rc = post_add(s, n->labels.v[i].key, n->labels.v[i].value,
                           s->nnodes)) < 0)
            goto out_map;
    *node = s->nnodes++;
    s->nalive++;
    s->epoch++;
    mt__slice_node_added(s, *node);
    return 0;
out_map:
    /* Postings may list this handle already; placement re-checks every
     * candidate's labels, so such an entry can never misplace work. */
    mt__map_del(&s->node_by_name, (uint64_t)name);
out_pool:
    pool_del(s, s->nnodes);
out_labels:
    mt_labelset_release(&n->labels);
    n->alive = false;
    return rc;
}

/* Everything node death does once the node is out of its pool. */
static void node_kill(struct mt_sched *s, uint32_t node)
{
    struct mt__node *n = &s->nodes[node];

    n->alive = false;
    mt__map_del(&s->node_by_name, n->name);
    s->nalive--;
    s->epoch++;
    mt__slice_node_dead(s, node);
    mt__pg_on_node_dead(s, node);
}

int mt_sched_on_node_dead(struct mt_sched *s, uint32_t node)
{
    if (node >= s->nnodes || !s->nodes[node].alive)
        return -MT_ENOENT;
    pool_del(s, node);
    node_kill(s, node);
    return 0;
}

static int update_check(const struct mt__node *n, const struct mt_res_item *res,
                        size_t nres)
{
    uint64_t seen = 0;

    for (size_t i = 0; i < nres; i++) {
        uint16_t id = res[i].id;
        int64_t q = res[i].qty;

        if (id >= MT_RES_MAX || q < 0 || (seen >> id & 1))
            return -MT_EINVAL;
        seen |= 1ULL << id;
        if ((id == MT_RES_GPU || id == MT_RES_TPU) && q != n->total[id])
            return -MT_ENOTSUP;
        if (q < n->total[id] - n->avail[id])
            return -MT_ESTATE;
    }
    return 0;
}

int mt_sched_on_node_update(struct mt_sched *s, uint32_t node,
                            const struct mt_res_item *res, size_t nres)
{
    struct mt__node *n;
    int rc;

    if (node >= s->nnodes || !s->nodes[node].alive)
        return -MT_ENOENT;
    n = &s->nodes[node];
    if ((nres && !res) || (rc = update_check(n, res, nres)) < 0)
        return nres && !res ? -MT_EINVAL : rc;
    /* Re-file the node: its kinds (and so its pool) may change. */
    pool_del(s, node);
    for (size_t i = 0; i < nres; i++) {
        uint16_t id = res[i].id;

        n->avail[id] += res[i].qty - n->total[id];
        n->total[id] = res[i].qty;
        n->kinds = res[i].qty ? n->kinds | 1ULL << id
                              : n->kinds & ~(1ULL << id);
    }
    n->nkind = 0;
    for (int id = 0; id < MT_RES_MAX; id++)
        if (n->kinds >> id & 1)
            n->kind[n->nkind++] = (uint8_t)id;
    rc = pool_add(s, node);
    s->epoch++;
    if (rc < 0)
        node_kill(s, node); /* out of memory: no pool can index it */
    return rc;
}

int mt_sched_node_suspect(struct mt_sched *s, uint32_t node, bool on)
{
    if (node >= s->nnodes || !s->nodes[node].alive)
        return -MT_ENOENT;
    if (s->nodes[node].suspect != on) {
        s->nodes[node].suspect = on;
        s->epoch++;
    }
    return 0;
}

int mt_sched_node_find(const struct mt_sched *s, const char *name,
                       uint32_t *node)
{
    uint32_t id = name ? mt_strtab_lookup(s->strs, name) : 0;
    uint32_t v = id ? mt__map_get(&s->node_by_name, id) : MT__NONE;

    if (v == MT__NONE)
        return -MT_ENOENT;
    *node = v;
    return 0;
}

int mt_sched_node_res(const struct mt_sched *s, uint32_t node, int id,
                      int64_t *total, int64_t *avail)
{
    if (node >= s->nnodes)
        return -MT_ENOENT;
    if (id < 0 || id >= MT_RES_MAX)
        return -MT_EINVAL;
    if (total)
        *total = s->nodes[node].total[id];
    if (avail)
        *avail = s->nodes[node].avail[id];
    return 0;
}

bool mt_sched_node_alive(const struct mt_sched *s, uint32_t node)
{
    return node < s->nnodes && s->nodes[node].alive;
}

uint32_t mt_sched_node_count(const struct mt_sched *s)
{
    return s->nnodes;
}

uint32_t mt_sched_node_free_gpus(const struct mt_sched *s, uint32_t node)
{
    uint32_t m = 0;

    if (!mt_sched_node_alive(s, node))
        return 0;
    for (int d = 0; d < s->nodes[node].ngpu; d++)
        if (s->nodes[node].inst.gpu_free[d] == MT_RES_SCALE)
            m |= 1u << d;
    return m;
}

uint32_t mt_sched_node_free_tpu_chips(const struct mt_sched *s, uint32_t node)
{
    return mt_sched_node_alive(s, node) ? s->nodes[node].inst.tpu_free : 0;
}
