/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api_accel.c -- /api/accelerators (api.h): every GPU and every TPU slice
 * of the live nodes, how much of each is granted and to whom, and the
 * cluster's free and stranded counts.
 *
 * Holders come from the head's own tables: tasks that hold a grant (an
 * actor's creation task stands for the actor, a gang member for its
 * gang) and the placed bundles of placement groups (those of a gang's
 * own group stand for the gang). They are gathered
 * once and bucketed by node position (a counting sort), so the whole
 * answer is O(tasks + nodes + bundles), never tasks x nodes.
 *
 * "allocated" is the share of a GPU granted: the fixed-point share of
 * each task outside a group, plus 1 for a device a bundle reserves,
 * capped at 1. "free" counts whole free devices. "stranded" counts free
 * ones nothing can use as things stand: GPUs of a node with less than one
 * CPU free, and free chips of a slice that is partly held (slices are
 * granted whole).
 *
 * THREAD: the head's loop thread only.
 */
#include "head/api_accel.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/strbuf.h"
#include "head/head_int.h"
#include "sched/labels.h"
#include "sched/resources.h"
#include "sched/sched.h"

#define MAX_DEV 32 /* devices per node (grant masks are 32 bits) */

/* Something that holds devices on a node. */
struct hold {
    size_t node;                  /* position in the node table */
    uint32_t gpus, tpu;           /* device bits */
    double share;                 /* of each GPU in gpus; 0: inside a
                                     bundle (the bundle counts) */
    const char *kind, *id, *name; /* borrowed from the tables */
};

struct holds {
    struct hold *v;
    size_t n, cap;
    size_t *first;                /* per node position: v index, n + 1 */
};

static void hold_add(struct holds *hs, const struct hold *h)
{
    if (hs->n == hs->cap) {
        hs->cap = hs->cap ? hs->cap * 2 : 64;
        hs->v = mt_xrealloc(hs->v, hs->cap * sizeof(*hs->v));
    }
    hs->v[hs->n++] = *h;
}

/* ---- gathering ----------------------------------------------------------- */

struct gather {
    struct mt_head *h;
    struct mt_node_table *nt;
    struct holds *hs;
};

static bool node_pos(const struct mt_node_table *nt, const char *id,
                     size_t *pos)
{
    *pos = id ? mt_strindex_find(&nt->by_id, nt->v, id) : MT_STRINDEX_NONE;
    return *pos != MT_STRINDEX_NONE && nt->v[*pos]->state == MT_NODE_ALIVE;
}

/* Who a task's grant stands for: the task, its actor or its gang. */
static void task_holder(struct mt_head *h, const struct mt_head_task *t,
                        struct hold *o)
{
    struct mt_gang *g = t->gang ? mt_head_gang_find_num(h->gangs, t->gang)
                                : NULL;

    o->kind = "task";
    o->id = t->id;
    o->name = t->def.name ? t->def.name : "";
    if (g) {
        o->kind = "gang";
        o->id = g->id;
        o->name = g->def.name ? g->def.name : "";
    } else if (t->def.kind == MT_TASK_KIND_ACTOR_CREATE) {
        struct mt_head_actor *a =
            mt_actor_table_find(mt_head_actors_table(h->actors), t->num);

        o->kind = "actor";
        o->id = a ? a->id : t->id;
        o->name = t->def.actor_name ? t->def.actor_name : "";
    }
}

static bool gather_task(void *arg, struct mt_head_task *t)
{
    struct gather *g = arg;
    struct hold o;

    if (!t->has_grant || (!t->grant.gpus && !t->grant.tpu_chips) ||
        !node_pos(g->nt, t->node_id, &o.node))
        return true;
    o.gpus = t->grant.gpus;
    o.tpu = t->grant.tpu_chips;
    o.share = t->grant.pg ? 0 : (double)t->grant.gpu_each / MT_RES_SCALE;
    task_holder(g->h, t, &o);
    hold_add(g->hs, &o);
    return true;
}

/* The placed bundles of pg that reserve devices, held by the group or,
 * for a gang's own group, by the gang (gang NULL: none). */
static void gather_pg(struct gather *g, struct mt_head_pg *pg,
                      const struct mt_gang *gang)
{
    struct mt_head_pg_bundle *b = NULL;
    size_t n = mt_head_pg_bundles(g->h->pgs, pg, &b);
    struct hold o;

    for (size_t i = 0; i < n; i++) {
        if ((!b[i].gpus && !b[i].tpu_chips) ||
            !node_pos(g->nt, b[i].node_id, &o.node))
            continue;
        o.gpus = b[i].gpus;
        o.tpu = b[i].tpu_chips;
        o.share = 1;
        o.kind = gang ? "gang" : "placement_group";
        o.id = gang ? gang->id : pg->id;
        o.name = gang ? gang->def.name : pg->def.name;
        if (!o.name)
            o.name = "";
        hold_add(g->hs, &o);
    }
    free(b);
}

static int by_node(const void *a, const void *b)
{
    const struct hold *x = a, *y = b;

    return x->node < y->node ? -1 : x->node > y->node;
}

/* Every holder, sorted by node, with first[] giving each node's range. */
static void gather(struct mt_head *h, struct holds *hs)
{
    struct gather g = {h, mt_head_nodes_table(h->nodes), hs};
    size_t nn = g.nt->n, k = 0;

    memset(hs, 0, sizeof(*hs));
    mt_task_table_visit(mt_head_tasks_table(h->tasks), gather_task, &g);
    for (size_t i = 0; i < mt_head_pgs_count(h->pgs); i++) {
        struct mt_head_pg *pg = mt_head_pgs_at(h->pgs, i);

        if (pg->state == MT_HEAD_PG_CREATED &&
            !mt_head_gangs_own_pg(h->gangs, pg->num))
            gather_pg(&g, pg, NULL);
    }
    for (size_t i = 0; i < mt_head_gangs_count(h->gangs); i++) {
        struct mt_gang *gang = mt_head_gangs_at(h->gangs, i);
        struct mt_head_pg *pg = gang->pg ? mt_head_pg_find_num(h->pgs, gang->pg)
                                         : NULL;

        if (pg && pg->state == MT_HEAD_PG_CREATED)
            gather_pg(&g, pg, gang);
    }
    if (hs->n)
        qsort(hs->v, hs->n, sizeof(*hs->v), by_node);
    hs->first = mt_xcalloc(nn + 1, sizeof(*hs->first));
    for (size_t p = 0; p <= nn; p++) {
        while (k < hs->n && hs->v[k].node < p)
            k++;
        hs->first[p] = k;
    }
}

static void holds_release(struct holds *hs)
{
    free(hs->v);
    free(hs->first);
}

/* ---- writing ------------------------------------------------------------- */

/* The holders on node p whose bits meet mask (gpu or tpu), each once. */
static void json_holders(struct mt_strbuf *sb, const struct holds *hs,
                         size_t p, uint32_t mask, bool gpu)
{
    size_t n = 0;

    mt_strbuf_adds(sb, "[");
    for (size_t i = hs->first[p]; i < hs->first[p + 1]; i++) {
        const struct hold *o = &hs->v[i];
        bool seen = false;

        if (!((gpu ? o->gpus : o->tpu) & mask))
            continue;
        for (size_t j = hs->first[p]; j < i && !seen; j++)
            seen = ((gpu ? hs->v[j].gpus : hs->v[j].tpu) & mask) &&
                   strcmp(hs->v[j].id, o->id) == 0 &&
                   strcmp(hs->v[j].kind, o->kind) == 0;
        if (seen)
            continue;
        mt_strbuf_adds(sb, n++ ? ", {\"kind\": " : "{\"kind\": ");
        mt_strbuf_add_json_str(sb, o->kind);
        mt_strbuf_adds(sb, ", \"id\": ");
        mt_strbuf_add_json_str(sb, o->id);
        mt_strbuf_adds(sb, ", \"name\": ");
        mt_strbuf_add_json_str(sb, o->name);
        mt_strbuf_adds(sb, "}");
    }
    mt_strbuf_adds(sb, "]");
}

static double allocated(const struct holds *hs, size_t p, unsigned dev)
{
    double a = 0;

    for (size_t i = hs->first[p]; i < hs->first[p + 1]; i++)
        if (hs->v[i].gpus & (1u << dev))
            a += hs->v[i].share;
    return a > 1 ? 1 : a;
}

static unsigned whole(const struct mt_node *n, const char *res)
{
    int64_t q = mt_qty_list_get(&n->total, res);
    int64_t d = q > 0 ? q / MT_RES_SCALE : 0;

    return d > MAX_DEV ? MAX_DEV : (unsigned)d;
}

static void json_ratio(struct mt_strbuf *sb, int percent)
{
    if (percent >= 0)
        mt_strbuf_addf(sb, "%.2f", percent / 100.0);
    else
        mt_strbuf_adds(sb, "null");
}

static void json_bytes(struct mt_strbuf *sb, int64_t v)
{
    if (v >= 0)
        mt_strbuf_addf(sb, "%lld", (long long)v);
    else
        mt_strbuf_adds(sb, "null");
}

static void json_gpu(struct mt_strbuf *sb, const struct mt_node *n,
                     const struct holds *hs, size_t p, unsigned d)
{
    const struct mt_node_gpu *g = d < n->n_gpus ? &n->gpus[d] : NULL;

    mt_strbuf_adds(sb, "{\"node_id\": ");
    mt_strbuf_add_json_str(sb, n->id);
    mt_strbuf_adds(sb, ", \"gpu\": ");
    if (g && g->id[0])
        mt_strbuf_add_json_str(sb, g->id);
    else
        mt_strbuf_addf(sb, "\"%u\"", d);
    mt_strbuf_addf(sb, ", \"index\": %d, \"model\": ", g ? g->index : (int)d);
    mt_strbuf_add_json_str(sb, g ? g->name : "");
    mt_strbuf_adds(sb, ", \"utilization_ratio\": ");
    json_ratio(sb, g ? g->util_percent : -1);
    mt_strbuf_adds(sb, ", \"memory_used_bytes\": ");
    json_bytes(sb, g ? g->mem_used : -1);
    mt_strbuf_adds(sb, ", \"memory_total_bytes\": ");
    json_bytes(sb, g ? g->mem_total : -1);
    mt_strbuf_addf(sb, ", \"allocated\": %.4g, \"holders\": ",
                   allocated(hs, p, d));
    json_holders(sb, hs, p, 1u << d, true);
    mt_strbuf_adds(sb, "}");
}

static void json_gpus(struct mt_strbuf *sb, const struct mt_node_table *nt,
                      const struct holds *hs)
{
    size_t k = 0;

    mt_strbuf_adds(sb, "\"gpus\": [");
    for (size_t p = 0; p < nt->n; p++) {
        const struct mt_node *n = nt->v[p];
        unsigned nd = whole(n, "GPU");

        if (n->state != MT_NODE_ALIVE)
            continue;
        if (n->n_gpus > nd)
            nd = n->n_gpus > MAX_DEV ? MAX_DEV : (unsigned)n->n_gpus;
        for (unsigned d = 0; d < nd; d++) {
            mt_strbuf_adds(sb, k++ ? ",\n  " : "\n  ");
            json_gpu(sb, n, hs, p, d);
        }
    }
    mt_strbuf_adds(sb, k ? "\n]" : "]");
}

/* ---- TPU slices ---------------------------------------------------------- */

struct host {
    size_t pos;                   /* in the node table */
    const char *slice;
    long worker;
    uint32_t chips, free;         /* whole chips, free ones */
};

/* The live TPU hosts, by slice then worker id. */
struct hosts {
    struct host *v;
    size_t n;
};

static int by_slice(const void *a, const void *b)
{
    const struct host *x = a, *y = b;
    int c = strcmp(x->slice, y->slice);

    return c ? c : (x->worker > y->worker) - (x->worker < y->worker);
}

static void json_host(struct mt_strbuf *sb, const struct mt_node *n,
                      const struct holds *hs, const struct host *ho)
{
    int64_t t = mt_qty_list_get(&n->total, "TPU");
    int64_t a = mt_qty_list_get(&n->avail, "TPU");

    mt_strbuf_adds(sb, "{\"node_id\": ");
    mt_strbuf_add_json_str(sb, n->id);
    mt_strbuf_addf(sb, ", \"worker_id\": %ld, \"chips_total\": %lld, "
                       "\"chips_used\": %lld, \"holders\": ",
                   ho->worker, (long long)(t > 0 ? t / MT_RES_SCALE : 0),
                   (long long)(t > 0 ? (t - (a > 0 ? a : 0)) / MT_RES_SCALE
                                     : 0));
    json_holders(sb, hs, ho->pos, UINT32_MAX, false);
    mt_strbuf_adds(sb, "}");
}

static void json_slice_head(struct mt_strbuf *sb, const struct mt_node *n,
                            const char *slice)
{
    const char *type = mt_kv_list_get(&n->labels, MT_LABEL_TPU_POD_TYPE);
    const char *topo = mt_kv_list_get(&n->labels, MT_LABEL_TPU_TOPOLOGY);

    if (!type)
        type = mt_kv_list_get(&n->labels, MT_LABEL_ACCEL_TYPE);
    mt_strbuf_adds(sb, "{\"slice\": ");
    mt_strbuf_add_json_str(sb, slice);
    mt_strbuf_adds(sb, ", \"accelerator_type\": ");
    mt_strbuf_add_json_str(sb, type ? type : "");
    mt_strbuf_adds(sb, ", \"topology\": ");
    mt_strbuf_add_json_str(sb, topo ? topo : "");
    mt_strbuf_adds(sb, ", \"hosts\": [");
}

static uint32_t free_devs(const struct mt_sched *s, const struct mt_node *n,
                          bool gpu)
{
    if (n->sched_node == UINT32_MAX)
        return 0;
    return (uint32_t)__builtin_popcount(
        gpu ? mt_sched_node_free_gpus(s, n->sched_node)
            : mt_sched_node_free_tpu_chips(s, n->sched_node));
}

static void hosts_gather(const struct mt_node_table *nt,
                         const struct mt_sched *s, struct hosts *hv)
{
    struct host *v = mt_xcalloc(nt->n + 1, sizeof(*v));
    size_t n = 0;

    for (size_t p = 0; p < nt->n; p++) {
        const struct mt_node *nd = nt->v[p];
        const char *sl = mt_kv_list_get(&nd->labels, MT_LABEL_TPU_SLICE);
        const char *w = mt_kv_list_get(&nd->labels, MT_LABEL_TPU_WORKER);

        if (!sl || nd->state != MT_NODE_ALIVE)
            continue;
        v[n].pos = p;
        v[n].slice = sl;
        v[n].worker = w ? strtol(w, NULL, 10) : -1;
        v[n].chips = whole(nd, "TPU");
        v[n++].free = free_devs(s, nd, false);
    }
    qsort(v, n, sizeof(*v), by_slice);
    hv->v = v;
    hv->n = n;
}

/* Free chips of slices partly held (some host has chips in use). */
static uint32_t stranded_chips(const struct hosts *hv)
{
    uint32_t stranded = 0;

    for (size_t i = 0, j; i < hv->n; i = j) {
        uint32_t free = 0;
        bool held = false;

        for (j = i; j < hv->n && strcmp(hv->v[j].slice, hv->v[i].slice) == 0;
             j++) {
            free += hv->v[j].free;
            held = held || hv->v[j].free < hv->v[j].chips;
        }
        if (held)
            stranded += free;
    }
    return stranded;
}

static void json_slices(struct mt_strbuf *sb, const struct mt_node_table *nt,
                        const struct holds *hs, const struct hosts *hv)
{
    const struct host *v = hv->v;
    size_t n = hv->n, k = 0;

    mt_strbuf_adds(sb, "\"tpu_slices\": [");
    for (size_t i = 0; i < n; i++) {
        bool first = i == 0 || strcmp(v[i].slice, v[i - 1].slice) != 0;

        if (first) {
            mt_strbuf_adds(sb, k++ ? "]},\n  " : "\n  ");
            json_slice_head(sb, nt->v[v[i].pos], v[i].slice);
        } else {
            mt_strbuf_adds(sb, ", ");
        }
        json_host(sb, nt->v[v[i].pos], hs, &v[i]);
    }
    mt_strbuf_adds(sb, k ? "]}\n]" : "]");
}

/* ---- summary ------------------------------------------------------------- */

static void json_summary(struct mt_head *h, const struct hosts *hv,
                         struct mt_strbuf *sb)
{
    const struct mt_node_table *nt = mt_head_nodes_table(h->nodes);
    const struct mt_sched *s = mt_head_sched_lib(h->sched);
    uint32_t gt = 0, gf = 0, gs = 0, tt = 0, tf = 0, f;

    for (size_t p = 0; p < nt->n; p++) {
        const struct mt_node *n = nt->v[p];

        if (n->state != MT_NODE_ALIVE)
            continue;
        gt += whole(n, "GPU");
        tt += whole(n, "TPU");
        gf += f = free_devs(s, n, true);
        if (mt_qty_list_get(&n->avail, "CPU") < MT_RES_SCALE)
            gs += f; /* nothing that needs a CPU fits there */
        tf += free_devs(s, n, false);
    }
    mt_strbuf_addf(sb, "\"summary\": {\"gpus_total\": %u, \"gpus_used\": %u, "
                       "\"gpus_free\": %u, \"gpus_stranded\": %u, "
                       "\"tpu_chips_total\": %u, \"tpu_chips_used\": %u, "
                       "\"tpu_chips_free\": %u, \"tpu_chips_stranded\": %u}",
                   gt, gt > gf ? gt - gf : 0, gf, gs, tt,
                   tt > tf ? tt - tf : 0, tf, stranded_chips(hv));
}

void mt_head_api_accelerators(struct mt_head *h, struct mt_strbuf *body)
{
    const struct mt_node_table *nt = mt_head_nodes_table(h->nodes);
    struct holds hs;
    struct hosts hv;

    mt_head_sched_sync_all(h->sched);
    gather(h, &hs);
    hosts_gather(nt, mt_head_sched_lib(h->sched), &hv);
    mt_strbuf_adds(body, "{");
    json_summary(h, &hv, body);
    mt_strbuf_adds(body, ",\n");
    json_gpus(body, nt, &hs);
    mt_strbuf_adds(body, ",\n");
    json_slices(body, nt, &hs, &hv);
    mt_strbuf_adds(body, "}\n");
    holds_release(&hs);
    free(hv.v);
}
