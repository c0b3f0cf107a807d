/* SPDX-License-Identifier: Apache-2.0 */
/*
 * top_render.c -- `manta top`'s frame as lines of text (top_render.h).
 *
 * A frame has three sections: the header (title, counts, one bar per
 * cluster resource, the pending demand), the node table (one row of bars
 * per node) and the running tasks, longest first. Every line goes through
 * line_add(), which sanitizes, cuts it to the width and stops at the
 * height, so no line can wrap or scroll the screen.
 *
 * Sizes: bars in the node table share what the width leaves after the id,
 * state and host columns (3 to 20 characters each); with no width (a
 * pipe) they are 10. When the height is short, tasks keep at least a
 * third of the rows left after the header and nodes get the rest.
 */
#include "cli/top_render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/qty.h"

#define BAR_DEFAULT 10
#define BAR_MIN 3
#define BAR_MAX 20
#define HEADER_BAR 20
#define ID_MAX 16
#define DEMANDS_SHOWN 5
#define GAP 2

static const char *const res_names[MT_TOP_NRES] = {"CPU", "GPU", "TPU",
                                                   "MEM", "OBJ"};

/* ---- lines --------------------------------------------------------------- */

struct lines {
    struct mt_strbuf *out;
    int width;                  /* 0: no cut */
    int height;                 /* 0: no limit */
    size_t n;
};

/* Append one line: sanitized, cut to the width, trailing blanks dropped;
 * nothing once the height is reached. */
static void line_add(struct lines *ls, const char *text)
{
    size_t len = strlen(text);

    if (ls->height > 0 && ls->n >= (size_t)ls->height)
        return;
    if (ls->width > 0 && len > (size_t)ls->width)
        len = (size_t)ls->width;
    while (len && text[len - 1] == ' ')
        len--;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];

        mt_strbuf_add(ls->out, ch >= 0x20 && ch < 0x7f ? (const char *)&ch
                                                       : "?", 1);
    }
    mt_strbuf_adds(ls->out, "\n");
    ls->n++;
}

/* line_add() of a formatted strbuf, which is then emptied. */
static void line_flush(struct lines *ls, struct mt_strbuf *sb)
{
    line_add(ls, mt_strbuf_str(sb));
    mt_strbuf_release(sb);
}

/* Append s padded (or cut) to exactly w columns. */
static void cell(struct mt_strbuf *sb, const char *s, int w)
{
    mt_strbuf_addf(sb, "%-*.*s", w, w, s ? s : "");
}

/* ---- figures ------------------------------------------------------------- */

char *mt_top_bar(double ratio, int inner, char *buf, size_t len)
{
    char bar[BAR_MAX * 4 + 1];
    int fill;

    if (inner < 1)
        inner = 1;
    if (inner > (int)sizeof(bar) - 1)
        inner = (int)sizeof(bar) - 1;
    if (!(ratio >= 0)) /* NaN too */
        ratio = 0;
    if (ratio > 1)
        ratio = 1;
    fill = (int)lround(ratio * inner);
    /* Any use at all shows one mark; only full use fills the bar. */
    if (fill == inner && ratio < 1)
        fill = inner - 1;
    if (fill == 0 && ratio > 0)
        fill = 1;
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(inner - fill));
    bar[inner] = '\0';
    snprintf(buf, len, "[%s] %3d%%", bar, (int)floor(ratio * 100 + 0.5));
    return buf;
}

char *mt_top_elapsed(int64_t ms, char *buf, size_t len)
{
    long long s = ms > 0 ? ms / 1000 : 0;

    if (s < 60)
        snprintf(buf, len, "%llds", s);
    else if (s < 3600)
        snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, len, "%lldh%02lldm", s / 3600, s / 60 % 60);
    else
        snprintf(buf, len, "%lldd%02lldh", s / 86400, s / 3600 % 24);
    return buf;
}

uint64_t mt_top_infeasible(const char *const *demands, size_t n)
{
    uint64_t sum = 0;

    for (size_t i = 0; i < n; i++) {
        const char *p = demands[i] ? strstr(demands[i], "+ infeasible ")
                                   : NULL;
        const char *q;

        if (!p)
            continue;
        /* The count runs back from the '+' to the ": " before it. */
        for (q = p; q > demands[i] && q[-1] >= '0' && q[-1] <= '9'; q--)
            ;
        if (q < p && q - demands[i] >= 2 && q[-1] == ' ' && q[-2] == ':')
            sum += strtoull(q, NULL, 10);
    }
    return sum;
}

static int task_cmp(const void *a, const void *b)
{
    const struct mt_top_task *x = a, *y = b;

    if (x->elapsed_ms != y->elapsed_ms)
        return x->elapsed_ms > y->elapsed_ms ? -1 : 1;
    return strcmp(x->task_id ? x->task_id : "", y->task_id ? y->task_id : "");
}

void mt_top_tasks_sort(struct mt_top_task *tasks, size_t n)
{
    if (n > 1)
        qsort(tasks, n, sizeof(*tasks), task_cmp);
}

static double ratio_of(const struct mt_top_res *r)
{
    return r->total > 0 ? r->used / r->total : 0;
}

/* "12/24" or "3.0GiB/24.0GiB". */
static void amounts(const struct mt_top_res *r, int kind, char *buf,
                    size_t len)
{
    char u[32], t[32];

    if (kind == MT_TOP_MEM || kind == MT_TOP_OBJ) {
        mt_bytes_format(r->used, u, sizeof(u));
        mt_bytes_format(r->total, t, sizeof(t));
    } else {
        mt_qty_format(mt_qty_from_double(r->used), u, sizeof(u));
        mt_qty_format(mt_qty_from_double(r->total), t, sizeof(t));
    }
    snprintf(buf, len, "%s/%s", u, t);
}

/* ---- header -------------------------------------------------------------- */

static void header_demands(struct lines *ls, const struct mt_top_view *v)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    size_t shown = v->n_demands;

    if (!v->n_demands) {
        line_add(ls, "Demands: (none)");
        return;
    }
    line_add(ls, "Demands:");
    if (shown > DEMANDS_SHOWN)
        shown = DEMANDS_SHOWN - 1;
    for (size_t i = 0; i < shown; i++) {
        mt_strbuf_addf(&sb, " %s", v->demands[i] ? v->demands[i] : "");
        line_flush(ls, &sb);
    }
    if (shown < v->n_demands) {
        mt_strbuf_addf(&sb, " ... %zu more", v->n_demands - shown);
        line_flush(ls, &sb);
    }
}

static void header(struct lines *ls, const struct mt_top_view *v)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char bar[BAR_MAX * 4 + 16], am[80];
    bool any = false;

    mt_strbuf_addf(&sb, "manta top - cluster %s - head %s - %s",
                   v->cluster_id ? v->cluster_id : "?",
                   v->head_address ? v->head_address : "?",
                   v->clock ? v->clock : "");
    line_flush(ls, &sb);
    if (v->note && *v->note)
        line_add(ls, v->note);
    mt_strbuf_addf(&sb, "Nodes: %zu alive, %zu dead    Tasks: %llu running, "
                        "%llu pending (%llu infeasible)",
                   v->nodes_alive, v->nodes_dead,
                   (unsigned long long)v->running,
                   (unsigned long long)v->pending,
                   (unsigned long long)v->infeasible);
    line_flush(ls, &sb);
    for (int k = 0; k < MT_TOP_NRES; k++) {
        if (v->total[k].total <= 0)
            continue;
        any = true;
        amounts(&v->total[k], k, am, sizeof(am));
        mt_top_bar(ratio_of(&v->total[k]), HEADER_BAR, bar, sizeof(bar));
        mt_strbuf_addf(&sb, "%s  %s  %s", res_names[k], bar, am);
        line_flush(ls, &sb);
    }
    if (!any)
        line_add(ls, "(no resources)");
    header_demands(ls, v);
}

/* ---- nodes --------------------------------------------------------------- */

/* The node table's shape for this frame. */
struct layout {
    int id_w;
    bool shown[MT_TOP_NRES];
    int n_shown;
    bool gpu_util;              /* some node has a GPU utilization */
    int inner;                  /* bar size */
};

static void layout_plan(struct layout *lo, const struct mt_top_view *v,
                        int width)
{
    int fixed, host_w, cell_extra = 7 + GAP;

    memset(lo, 0, sizeof(*lo));
    lo->id_w = 4; /* "NODE" */
    for (size_t i = 0; i < v->n_nodes; i++) {
        const struct mt_top_node *n = &v->nodes[i];
        int len = n->node_id ? (int)strlen(n->node_id) : 0;

        lo->id_w = len > lo->id_w ? len : lo->id_w;
        lo->gpu_util = lo->gpu_util || n->gpu_util_ratio >= 0;
        for (int k = 0; k < MT_TOP_NRES; k++)
            lo->shown[k] = lo->shown[k] || n->res[k].total > 0;
    }
    if (lo->id_w > ID_MAX)
        lo->id_w = ID_MAX;
    lo->shown[MT_TOP_CPU] = lo->shown[MT_TOP_MEM] = true;
    for (int k = 0; k < MT_TOP_NRES; k++)
        lo->n_shown += lo->shown[k];
    if (width <= 0) {
        lo->inner = BAR_DEFAULT;
        return;
    }
    host_w = lo->gpu_util ? 17 : 8; /* "cpu 100% gpu 100%" */
    fixed = lo->id_w + GAP + 5 + GAP + host_w;
    lo->inner = (width - fixed) / lo->n_shown - cell_extra;
    if (lo->inner < BAR_MIN)
        lo->inner = BAR_MIN;
    if (lo->inner > BAR_MAX)
        lo->inner = BAR_MAX;
}

static void nodes_head(struct lines *ls, const struct layout *lo)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    cell(&sb, "NODE", lo->id_w + GAP);
    cell(&sb, "STATE", 5 + GAP);
    for (int k = 0; k < MT_TOP_NRES; k++)
        if (lo->shown[k])
            cell(&sb, res_names[k], lo->inner + 7 + GAP);
    mt_strbuf_adds(&sb, "HOST");
    line_flush(ls, &sb);
}

static void node_host(struct mt_strbuf *sb, const struct mt_top_node *n)
{
    if (!n->alive) {
        mt_strbuf_adds(sb, "-");
        return;
    }
    if (n->host_cpu_ratio >= 0)
        mt_strbuf_addf(sb, "cpu %d%%",
                       (int)floor(n->host_cpu_ratio * 100 + 0.5));
    else
        mt_strbuf_adds(sb, "cpu ?");
    if (n->gpu_util_ratio >= 0)
        mt_strbuf_addf(sb, " gpu %d%%",
                       (int)floor(n->gpu_util_ratio * 100 + 0.5));
}

static void node_row(struct lines *ls, const struct layout *lo,
                     const struct mt_top_node *n)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char bar[BAR_MAX * 4 + 16];

    cell(&sb, n->node_id, lo->id_w);
    mt_strbuf_addf(&sb, "%*s", GAP, "");
    cell(&sb, n->alive ? "ALIVE" : "DEAD", 5 + GAP);
    for (int k = 0; k < MT_TOP_NRES; k++) {
        if (!lo->shown[k])
            continue;
        if (n->alive && n->res[k].total > 0)
            mt_top_bar(ratio_of(&n->res[k]), lo->inner, bar, sizeof(bar));
        else
            snprintf(bar, sizeof(bar), "-");
        cell(&sb, bar, lo->inner + 7 + GAP);
    }
    node_host(&sb, n);
    line_flush(ls, &sb);
}

/* Rows for the nodes: all of them in rows >= n_nodes, else rows - 1 and a
 * "... N more nodes" line. */
static void nodes(struct lines *ls, const struct mt_top_view *v,
                  size_t rows)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    struct layout lo;
    size_t shown = v->n_nodes <= rows ? v->n_nodes : rows ? rows - 1 : 0;

    layout_plan(&lo, v, ls->width);
    line_add(ls, "");
    nodes_head(ls, &lo);
    for (size_t i = 0; i < shown; i++)
        node_row(ls, &lo, &v->nodes[i]);
    if (!v->n_nodes)
        line_add(ls, "(no nodes)");
    if (shown < v->n_nodes && rows) {
        mt_strbuf_addf(&sb, "... %zu more nodes", v->n_nodes - shown);
        line_flush(ls, &sb);
    }
}

/* ---- tasks --------------------------------------------------------------- */

static void tasks(struct lines *ls, const struct mt_top_view *v, size_t rows)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    size_t more = v->running > v->n_tasks ? v->running - v->n_tasks : 0;
    size_t want = v->n_tasks + (more > 0);
    size_t shown = want <= rows ? v->n_tasks : rows ? rows - 1 : 0;
    int id_w = 7, node_w = 4;
    char el[16];

    for (size_t i = 0; i < shown; i++) {
        const struct mt_top_task *t = &v->tasks[i];
        int a = t->task_id ? (int)strlen(t->task_id) : 0;
        int b = t->node_id ? (int)strlen(t->node_id) : 0;

        id_w = a > id_w ? (a > ID_MAX ? ID_MAX : a) : id_w;
        node_w = b > node_w ? (b > ID_MAX ? ID_MAX : b) : node_w;
    }
    line_add(ls, "");
    mt_strbuf_addf(&sb, "%-*s  %7s  %-*s  NAME", id_w, "TASK_ID", "ELAPSED",
                   node_w, "NODE");
    line_flush(ls, &sb);
    for (size_t i = 0; i < shown; i++) {
        const struct mt_top_task *t = &v->tasks[i];

        cell(&sb, t->task_id, id_w);
        mt_strbuf_addf(&sb, "  %7s  ",
                       mt_top_elapsed(t->elapsed_ms, el, sizeof(el)));
        cell(&sb, t->node_id && *t->node_id ? t->node_id : "-", node_w);
        mt_strbuf_addf(&sb, "  %s", t->name && *t->name ? t->name : "-");
        line_flush(ls, &sb);
    }
    if (!v->running && !v->n_tasks)
        line_add(ls, "(no running tasks)");
    if (shown < v->n_tasks + more && rows) {
        mt_strbuf_addf(&sb, "... %llu more running",
                       (unsigned long long)(v->n_tasks + more - shown));
        line_flush(ls, &sb);
    }
}

/* ---- frame --------------------------------------------------------------- */

/* Split the rows under the header between the node and task lists. */
static void split_rows(const struct mt_top_view *v, int height, size_t used,
                       size_t *node_rows, size_t *task_rows)
{
    size_t more = v->running > v->n_tasks ? 1 : 0;
    size_t node_want = v->n_nodes ? v->n_nodes : 1;
    size_t task_want = v->n_tasks + more ? v->n_tasks + more : 1;
    size_t avail;

    if (height <= 0 || (size_t)height < used + 4) {
        *node_rows = height <= 0 ? node_want : 0;
        *task_rows = height <= 0 ? task_want : 0;
        return;
    }
    avail = (size_t)height - used - 4; /* blank + column names, twice */
    if (node_want + task_want <= avail) {
        *node_rows = node_want;
        *task_rows = task_want;
        return;
    }
    /* Too many: tasks get a third, or what the nodes leave if more, but
     * never more than they need; nodes get the rest. */
    *task_rows = avail / 3;
    if (node_want < avail && avail - node_want > *task_rows)
        *task_rows = avail - node_want;
    if (*task_rows > task_want)
        *task_rows = task_want;
    *node_rows = avail - *task_rows;
}

size_t mt_top_render(const struct mt_top_view *v, int width, int height,
                     struct mt_strbuf *out)
{
    struct lines ls = {out, width, height, 0};
    size_t node_rows, task_rows;

    header(&ls, v);
    split_rows(v, height, ls.n, &node_rows, &task_rows);
    nodes(&ls, v, node_rows);
    tasks(&ls, v, task_rows);
    return ls.n;
}
