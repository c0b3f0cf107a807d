/* SPDX-License-Identifier: Apache-2.0 */
/*
 * history_sampler.c -- the head's side of history.h: a uv timer on the
 * head's loop samples the node table and the task table once a second
 * into the history, and a task listener counts tasks that finished and
 * failed since the head started (the table forgets old ones).
 *
 * Cost per sample: one walk over the nodes and one over the tasks (counts
 * by state), about a millisecond for 1,000 nodes and 100,000 tasks.
 *
 * OWNERSHIP: the sampler owns the history; both are freed in the timer's
 * close callback (mt_head_history_close).
 *
 * THREAD: the head's loop thread only.
 */
#include "head/history_sampler.h"

#include <stdlib.h>
#include <uv.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/head_int.h"
#include "head/history.h"

/* Guarded by: loop thread. */
struct mt_head_history {
    struct mt_head *h;
    struct mt_history *hs;
    uv_timer_t timer;             /* data = this */
    uint64_t finished, failed;    /* terminal transitions seen */
    bool closing;
    void (*done)(void *arg);
    void *done_arg;
};

/* ---- task counts --------------------------------------------------------- */

/* Registered with h as its arg: the sampler may be gone before the task
 * service is (shutdown). */
static void on_task_changed(void *arg, struct mt_head_task *t)
{
    struct mt_head_history *s = ((struct mt_head *)arg)->history;

    if (!s)
        return;
    if (t->state == MT_TASK_FINISHED)
        s->finished++;
    else if (t->state == MT_TASK_FAILED)
        s->failed++;
}

static const struct mt_task_listener task_listener = {
    .changed = on_task_changed,
};

static bool count_task(void *arg, struct mt_head_task *t)
{
    struct mt_history_tasks *tc = arg;

    switch (t->state) {
    case MT_TASK_WAITING_FOR_ARGS:
    case MT_TASK_PENDING:
    case MT_TASK_SCHEDULED:
        tc->pending++;
        tc->infeasible += t->infeasible;
        break;
    case MT_TASK_RUNNING:
        tc->running++;
        break;
    default:
        break;
    }
    return true;
}

/* ---- the timer ----------------------------------------------------------- */

static void sample(struct mt_head_history *s)
{
    struct mt_head *h = s->h;
    struct mt_history_tasks tc = {0};

    mt_task_table_visit(mt_head_tasks_table(h->tasks), count_task, &tc);
    tc.finished_total = s->finished;
    tc.failed_total = s->failed;
    mt_head_sched_sync_all(h->sched);
    mt_history_sample(s->hs, mt_head_nodes_table(h->nodes), &tc,
                      mt_now_wall_ms());
}

static void on_tick(uv_timer_t *t)
{
    sample(t->data);
}

int mt_head_history_start(struct mt_head *h)
{
    struct mt_head_history *s;
    struct mt_history *hs;
    int rc;

    if (h->cfg.history_seconds <= 0)
        return 0;
    rc = mt_history_create((uint32_t)h->cfg.history_seconds, &hs);
    if (rc < 0)
        return rc;
    s = mt_xcalloc(1, sizeof(*s));
    s->h = h;
    s->hs = hs;
    uv_timer_init(h->loop, &s->timer);
    s->timer.data = s;
    mt_head_tasks_listen(h->tasks, &task_listener, h);
    h->history = s;
    sample(s);
    uv_timer_start(&s->timer, on_tick, MT_HISTORY_INTERVAL_MS,
                   MT_HISTORY_INTERVAL_MS);
    MT_INFO("history: %d s of 1 s samples per node and for the cluster",
            h->cfg.history_seconds);
    return 0;
}

static void on_timer_closed(uv_handle_t *hd)
{
    struct mt_head_history *s = hd->data;
    void (*done)(void *arg) = s->done;
    void *arg = s->done_arg;

    mt_history_destroy(s->hs);
    free(s);
    if (done)
        done(arg);
}

void mt_head_history_close(struct mt_head *h, void (*done)(void *arg),
                           void *arg)
{
    struct mt_head_history *s = h->history;

    if (!s || s->closing) {
        if (done)
            done(arg);
        return;
    }
    s->closing = true;
    s->done = done;
    s->done_arg = arg;
    h->history = NULL;
    uv_timer_stop(&s->timer);
    uv_close((uv_handle_t *)&s->timer, on_timer_closed);
}

int mt_head_history_json(struct mt_head *h, const char *id, uint32_t seconds,
                         struct mt_strbuf *sb)
{
    int64_t end;

    if (!h->history)
        return -MT_ENOTSUP;
    end = mt_history_last_ms(h->history->hs);
    return mt_history_json(h->history->hs, id, seconds,
                           end < 0 ? mt_now_wall_ms() : end, sb);
}
