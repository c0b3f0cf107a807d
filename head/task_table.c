/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_table.c -- the head's task table (see task_table.h).
 *
 * DESIGN: an open-addressing hash from the task number to the task, linear
 * probing with backward-shift deletion, kept under half full. Listing sorts
 * a snapshot, which is fine for the tens of thousands of tasks one listing
 * covers. Output is a singly linked list of chunks trimmed from the front.
 */
#include "head/task_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"

static size_t slot_of(const struct mt_task_table *t, uint64_t num)
{
    uint64_t h = num * 0x9e3779b97f4a7c15ull;

    return (size_t)(h >> 20) & (t->cap - 1);
}

static void insert_slot(struct mt_task_table *t, struct mt_head_task *task)
{
    size_t i = slot_of(t, task->num);

    while (t->slots[i])
        i = (i + 1) & (t->cap - 1);
    t->slots[i] = task;
}

static void grow(struct mt_task_table *t)
{
    struct mt_head_task **old = t->slots;
    size_t old_cap = t->cap;

    t->cap = old_cap ? old_cap * 2 : 1024;
    t->slots = mt_xcalloc(t->cap, sizeof(*t->slots));
    for (size_t i = 0; i < old_cap; i++)
        if (old[i])
            insert_slot(t, old[i]);
    free(old);
}

void mt_task_table_init(struct mt_task_table *t, uint64_t first_num)
{
    memset(t, 0, sizeof(*t));
    t->next_num = first_num ? first_num : 1;
    t->keep_done = MT_TASK_KEEP_DONE;
    grow(t);
}

static void free_output(struct mt_head_task *task)
{
    struct mt_task_output *o;

    while ((o = task->out_head)) {
        task->out_head = o->next;
        free(o);
    }
    task->out_tail = NULL;
    task->out_bytes = 0;
}

static void task_free(struct mt_head_task *task)
{
    free_output(task);
    mt_task_def_release(&task->def);
    free(task->node_id);
    free(task->error);
    free(task->result);
    free(task->deps);
    free(task);
}

void mt_task_table_release(struct mt_task_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i])
            task_free(t->slots[i]);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

struct mt_head_task *mt_task_table_find(const struct mt_task_table *t,
                                        uint64_t num)
{
    size_t i = slot_of(t, num);

    while (t->slots[i]) {
        if (t->slots[i]->num == num)
            return t->slots[i];
        i = (i + 1) & (t->cap - 1);
    }
    return NULL;
}

struct mt_head_task *mt_task_table_find_id(const struct mt_task_table *t,
                                           const char *id)
{
    uint64_t num;

    return mt_num_id_parse(MT_ID_TASK, id, &num) < 0 ? NULL
                                                   : mt_task_table_find(t, num);
}

/* Remove with backward shift so probe chains stay intact. */
static void remove_slot(struct mt_task_table *t, uint64_t num)
{
    size_t i = slot_of(t, num), j;

    while (t->slots[i] && t->slots[i]->num != num)
        i = (i + 1) & (t->cap - 1);
    if (!t->slots[i])
        return;
    t->slots[i] = NULL;
    t->n--;
    for (j = (i + 1) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1)) {
        struct mt_head_task *moved = t->slots[j];
        t->slots[j] = NULL;
        insert_slot(t, moved);
    }
}

struct mt_head_task *mt_task_table_add(struct mt_task_table *t,
                                       struct mt_task_def *def,
                                       int max_retries, int64_t now_wall)
{
    while (mt_task_table_find(t, t->next_num)) /* a driver's number */
        t->next_num++;
    return mt_task_table_add_num(t, t->next_num++, def, max_retries,
                                 now_wall);
}

struct mt_head_task *mt_task_table_add_num(struct mt_task_table *t,
                                           uint64_t num,
                                           struct mt_task_def *def,
                                           int max_retries, int64_t now_wall)
{
    struct mt_head_task *task;

    if (mt_task_table_find(t, num))
        return NULL;
    task = mt_xcalloc(1, sizeof(*task));
    if ((t->n + 1) * 2 > t->cap)
        grow(t);
    task->magic = MT_HEAD_TASK_MAGIC;
    task->num = num;
    task->seq = t->next_seq++;
    mt_num_id(MT_ID_TASK, task->num, task->id);
    task->def = *def;
    mt_task_def_init(def);
    task->state = MT_TASK_PENDING;
    task->max_retries = max_retries < 0 ? MT_TASK_DEFAULT_RETRIES : max_retries;
    task->submit_ms = now_wall;
    insert_slot(t, task);
    t->n++;
    if (t->touched)
        t->touched(t->touched_arg, task, false);
    return task;
}

bool mt_head_task_terminal(const struct mt_head_task *task)
{
    return task->state == MT_TASK_FINISHED || task->state == MT_TASK_FAILED ||
           task->state == MT_TASK_CANCELLED;
}

void mt_head_task_set_error(struct mt_head_task *task, const char *error)
{
    char *copy = error ? mt_xstrdup(error) : NULL;

    free(task->error);
    task->error = copy;
}

void mt_head_task_set_node(struct mt_head_task *task, const char *node_id)
{
    char *copy = node_id ? mt_xstrdup(node_id) : NULL;

    free(task->node_id);
    task->node_id = copy;
}

void mt_head_task_set_result(struct mt_head_task *task, const void *data,
                             size_t len)
{
    free(task->result);
    task->result = mt_xmalloc(len ? len : 1);
    if (len)
        memcpy(task->result, data, len);
    task->result_len = len;
}

static int older_done_first(const void *a, const void *b)
{
    uint64_t x = (*(struct mt_head_task *const *)a)->done_order;
    uint64_t y = (*(struct mt_head_task *const *)b)->done_order;

    return x < y ? -1 : x > y ? 1 : 0;
}

/* Forget the oldest finished tasks beyond the limit, except keep: one pass
 * collects those that may go, the oldest of them are freed. */
static void forget_old(struct mt_task_table *t, const struct mt_head_task *keep)
{
    size_t n = 0, excess = t->n_done_kept - t->keep_done;
    struct mt_head_task **v = mt_xmalloc((t->n_done_kept + 1) * sizeof(*v));

    for (size_t i = 0; i < t->cap && n < t->n_done_kept; i++) {
        struct mt_head_task *x = t->slots[i];

        if (x && x != keep && mt_head_task_terminal(x) && !x->watchers &&
            !x->lineage)
            v[n++] = x;
    }
    qsort(v, n, sizeof(*v), older_done_first);
    for (size_t i = 0; i < n && i < excess; i++) {
        if (t->touched)
            t->touched(t->touched_arg, v[i], true);
        remove_slot(t, v[i]->num);
        task_free(v[i]);
        t->n_done_kept--;
    }
    free(v);
}

void mt_task_table_finish(struct mt_task_table *t, struct mt_head_task *task,
                          enum mt_head_task_state state, int exit_code,
                          const char *error, int64_t now_wall)
{
    MT_ASSERT(task->magic == MT_HEAD_TASK_MAGIC);
    if (mt_head_task_terminal(task))
        return;
    task->state = state;
    task->exit_code = exit_code;
    if (error)
        mt_head_task_set_error(task, error);
    task->end_ms = now_wall;
    task->has_grant = false;
    task->done_order = ++t->done;
    t->n_done_kept++;
    /* Trim in batches so finishing stays O(1) amortised. */
    if (t->n_done_kept > t->keep_done + t->keep_done / 10)
        forget_old(t, task);
}

void mt_task_table_pin(struct mt_task_table *t, struct mt_head_task *task,
                       bool on)
{
    if (task->lineage == on)
        return;
    task->lineage = on;
    if (!mt_head_task_terminal(task))
        return;
    if (on)
        t->n_done_kept--;
    else
        t->n_done_kept++;
}

void mt_task_table_revive(struct mt_task_table *t, struct mt_head_task *task)
{
    MT_ASSERT(mt_head_task_terminal(task));
    mt_task_table_pin(t, task, false);
    t->n_done_kept--;
    task->state = MT_TASK_PENDING;
    task->attempt++;
    task->exit_code = 0;
    mt_head_task_set_error(task, NULL);
    free(task->result);
    task->result = NULL;
    task->result_len = 0;
    task->result_in_store = false;
    task->result_size = 0;
    task->start_ms = task->end_ms = 0;
    task->done_order = 0;
    task->actor_died = false;
    task->cw = 0; /* its client watch had its final event */
}

void mt_head_task_add_output(struct mt_head_task *task, uint32_t fd,
                             const void *data, size_t len)
{
    struct mt_task_output *o;

    if (len == 0)
        return;
    if (len > MT_TASK_OUTPUT_MAX) {
        task->out_dropped += len - MT_TASK_OUTPUT_MAX;
        data = (const uint8_t *)data + (len - MT_TASK_OUTPUT_MAX);
        len = MT_TASK_OUTPUT_MAX;
    }
    o = mt_xmalloc(sizeof(*o) + len);
    o->next = NULL;
    o->fd = fd;
    o->len = (uint32_t)len;
    memcpy(o->data, data, len);
    if (task->out_tail)
        task->out_tail->next = o;
    else
        task->out_head = o;
    task->out_tail = o;
    task->out_bytes += len;
    while (task->out_bytes > MT_TASK_OUTPUT_MAX && task->out_head != o) {
        struct mt_task_output *old = task->out_head;
        task->out_head = old->next;
        task->out_bytes -= old->len;
        task->out_dropped += old->len;
        free(old);
    }
}

static int newest_first(const void *a, const void *b)
{
    uint64_t x = (*(struct mt_head_task *const *)a)->seq;
    uint64_t y = (*(struct mt_head_task *const *)b)->seq;

    return x < y ? 1 : x > y ? -1 : 0;
}

void mt_task_table_visit(const struct mt_task_table *t, mt_task_visit_fn fn,
                         void *arg)
{
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i] && !fn(arg, t->slots[i]))
            return;
}

void mt_task_table_visit_newest(const struct mt_task_table *t,
                                mt_task_visit_fn fn, void *arg)
{
    struct mt_head_task **all = mt_xmalloc((t->n + 1) * sizeof(*all));
    size_t n = 0;

    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i])
            all[n++] = t->slots[i];
    qsort(all, n, sizeof(*all), newest_first);
    for (size_t i = 0; i < n; i++)
        if (!fn(arg, all[i]))
            break;
    free(all);
}

/* The heap of mt_task_table_newest: its root is the oldest kept. */
static void heap_down(struct mt_head_task **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        struct mt_head_task *tmp;

        if (l < n && h[l]->seq < h[m]->seq)
            m = l;
        if (l + 1 < n && h[l + 1]->seq < h[m]->seq)
            m = l + 1;
        if (m == i)
            return;
        tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

static void heap_up(struct mt_head_task **h, size_t i)
{
    while (i > 0 && h[(i - 1) / 2]->seq > h[i]->seq) {
        struct mt_head_task *tmp = h[i];

        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = tmp;
        i = (i - 1) / 2;
    }
}

size_t mt_task_table_newest(const struct mt_task_table *t,
                            mt_task_match_fn match, void *arg, size_t skip,
                            size_t max, struct mt_head_task **out,
                            size_t *n_out)
{
    size_t k = skip + max < t->n ? skip + max : t->n, n = 0, total = 0;
    struct mt_head_task **h = mt_xmalloc((k + 1) * sizeof(*h));

    for (size_t i = 0; i < t->cap; i++) {
        struct mt_head_task *task = t->slots[i];

        if (!task || !match(arg, task))
            continue;
        total++;
        if (n < k) {
            h[n] = task;
            heap_up(h, n++);
        } else if (k && task->seq > h[0]->seq) {
            h[0] = task;
            heap_down(h, n, 0);
        }
    }
    qsort(h, n, sizeof(*h), newest_first);
    *n_out = n > skip ? n - skip : 0;
    if (*n_out > max)
        *n_out = max;
    memcpy(out, h + (n > skip ? skip : n), *n_out * sizeof(*out));
    free(h);
    return total;
}

size_t mt_task_table_count(const struct mt_task_table *t,
                           enum mt_head_task_state s)
{
    size_t n = 0;

    for (size_t i = 0; i < t->cap; i++)
        n += t->slots[i] && t->slots[i]->state == s;
    return n;
}

const char *mt_head_task_state_name(enum mt_head_task_state s)
{
    static const char *names[] = {"UNSPECIFIED", "WAITING_FOR_ARGS",
                                  "PENDING",     "SCHEDULED",
                                  "RUNNING",     "FINISHED",
                                  "FAILED",      "CANCELLED"};

    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s]
                                                           : "UNKNOWN";
}
