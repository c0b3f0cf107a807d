/* SPDX-License-Identifier: Apache-2.0 */
/*
 * top_render.h -- the pure half of `manta top` (top_render.c): from plain
 * structs describing the cluster to lines of text that fit a terminal of
 * a given width and height. No I/O, no clock, no escapes, no libmanta:
 * cmd_top.c fills the structs from libmanta's admin calls and draws the
 * lines (full screen with ANSI escapes, or plain), and tests/unit/cli/
 * checks the lines.
 *
 * Bars show the scheduler's view, as `manta status` does: a resource's
 * used share (total - available) of what the node (or cluster) offers;
 * the object store's bar is the bytes in it.
 * The host's own CPU and mean GPU utilization, as its worker measured
 * them, follow in a HOST column.
 *
 * Every string from the cluster (ids, names, demands) is drawn with bytes
 * outside printable ASCII replaced by '?', so a task name cannot send
 * escapes to the terminal and cutting at a column never splits a
 * character.
 */
#ifndef MT_CLI_TOP_RENDER_H
#define MT_CLI_TOP_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

/* The resources with a bar, in column order. */
enum mt_top_res_kind {
    MT_TOP_CPU = 0,
    MT_TOP_GPU,
    MT_TOP_TPU,
    MT_TOP_MEM,     /* the "memory" resource, bytes */
    MT_TOP_OBJ,     /* the object store, bytes (the caller says which:
                       cmd_top.c uses the store's own figures) */
    MT_TOP_NRES
};

/* used of total; total <= 0: there is none of it (drawn "-"). */
struct mt_top_res {
    double used;
    double total;
};

/* One node. Strings are borrowed for the render call. */
struct mt_top_node {
    const char *node_id;
    bool alive;
    struct mt_top_res res[MT_TOP_NRES];
    double host_cpu_ratio;      /* 0-1; < 0: not known */
    double gpu_util_ratio;      /* mean over its GPUs, 0-1; < 0: none */
};

/* One running task. */
struct mt_top_task {
    const char *task_id;
    const char *name;           /* "" or NULL: none */
    const char *node_id;
    int64_t elapsed_ms;         /* running for */
};

/* What one frame shows. */
struct mt_top_view {
    const char *cluster_id;
    const char *head_address;
    const char *clock;          /* "12:34:56", as the caller formats it */
    const char *note;           /* a line under the title, e.g. "head
                                   unreachable: ..."; NULL: none */
    size_t nodes_alive;
    size_t nodes_dead;
    struct mt_top_res total[MT_TOP_NRES];
    uint64_t running;
    uint64_t pending;
    uint64_t infeasible;        /* of the pending */
    const char *const *demands; /* `manta status` demand lines */
    size_t n_demands;
    const struct mt_top_node *nodes;
    size_t n_nodes;
    const struct mt_top_task *tasks; /* longest running first */
    size_t n_tasks;
};

/* The width to pass when it is not known (a pipe): lines are not cut. */
#define MT_TOP_PLAIN_WIDTH 0

/*
 * mt_top_render - draw a frame as lines of plain text.
 * IN  width   columns: no line is longer (bars shrink to 3 characters,
 *             then lines are cut); MT_TOP_PLAIN_WIDTH (0): lines are not
 *             cut and bars have their default size (10)
 * IN  height  at most this many lines; 0: every node and task. When the
 *             frame needs more, the node and task lists are cut and end
 *             in a "... N more" line
 * OUT out     each line appended, ending in "\n"
 * RET the number of lines appended
 */
size_t mt_top_render(const struct mt_top_view *v, int width, int height,
                     struct mt_strbuf *out);

/*
 * mt_top_bar - "[#####.....]  48%" for ratio (clamped to 0-1) with inner
 * characters between the brackets (at least 1).
 * OUT buf  at least inner + 8 bytes
 * RET buf
 */
char *mt_top_bar(double ratio, int inner, char *buf, size_t len);

/*
 * mt_top_elapsed - a duration in at most 6 characters: "42s", "3m04s",
 * "1h02m", "2d03h"; negative counts as 0.
 * OUT buf  at least 16 bytes
 * RET buf
 */
char *mt_top_elapsed(int64_t ms, char *buf, size_t len);

/*
 * mt_top_infeasible - the tasks and actors the demand lines call
 * infeasible ("{GPU: 8}: 3+ infeasible tasks/actors" counts 3); lines of
 * any other shape count nothing.
 */
uint64_t mt_top_infeasible(const char *const *demands, size_t n);

/*
 * mt_top_tasks_sort - order tasks longest running first (ties by id).
 */
void mt_top_tasks_sort(struct mt_top_task *tasks, size_t n);

#endif /* MT_CLI_TOP_RENDER_H */
