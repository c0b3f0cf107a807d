/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_state.c -- a task handle inside libmanta and how its state moves:
 * created (with or without the head's id), events applied as the head
 * sends them, ended without a final event when a watch is lost or a
 * submit refused, freed with its last reference. The calls that make
 * these happen are rpc_task.c and rpc_batch.c (the loop thread) and
 * task.c (the public API); this file calls neither.
 *
 * The ids a driver chooses for its tasks (leased ones, and those sent
 * through the head so a resubmit is the same task) come from here too.
 *
 * An internal task's listener (task_int.h) is told when
 * mt__task_end ends it; the files that apply events tell it of those.
 *
 * THREAD: events are applied with the client's mu held; references are
 * atomic.
 */
#include "sdk/task_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "sdk/task_opts.h"

void mt__task_id_new(char out[MT_NUM_ID_LEN + 1])
{
    static _Thread_local uint64_t pool[32];
    static _Thread_local size_t left;

    if (left == 0) {
        if (getrandom(pool, sizeof(pool), 0) != (ssize_t)sizeof(pool))
            for (size_t i = 0; i < 32; i++) /* not seeded: still unique */
                pool[i] ^= uv_hrtime() * 0x9e3779b97f4a7c15ull + i;
        left = 32;
    }
    /* Apart from the numbers the head counts (common/ids.h). */
    mt_num_id(MT_ID_TASK, (pool[--left] & MT_NUM_ID_MAX) | MT_NUM_ID_DRIVER_BIT,
              out);
}

struct mt_task *mt__task_new(struct mt_client *c, const char *id,
                             size_t output_limit)
{
    struct mt_task *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->magic = MT_SDK_TASK_MAGIC;
    atomic_init(&t->refs, 1);
    t->client = c;
    snprintf(t->id, sizeof(t->id), "%s", id ? id : "");
    atomic_init(&t->settled, id != NULL);
    t->output_limit = output_limit;
    t->exit_code = -1;
    return t;
}

void mt__task_unref(struct mt_task *t)
{
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    mt__task_def_free(t->def);
    free(t->error);
    free(t->node_id);
    free(t->value);
    free(t->out.data);
    free(t->err.data);
    t->magic = 0;
    free(t);
}

bool mt__task_final(int st)
{
    return st == MT_TASK_STATE_FINISHED || st == MT_TASK_STATE_FAILED ||
           st == MT_TASK_STATE_CANCELLED;
}

/* Replace *dst by a copy of s ("" for NULL); out of memory keeps the old. */
static void set_text(char **dst, const char *s)
{
    char *p = strdup(s ? s : "");

    if (p) {
        free(*dst);
        *dst = p;
    }
}

void mt__task_apply_locked(struct mt_task *t, const struct mt__task_event *ev)
{
    struct mt__outbuf *b = ev->fd == 2 ? &t->err : &t->out;

    if (ev->output_len && t->output_limit &&
        mt__outbuf_append(b, t->output_limit, ev->output,
                          ev->output_len) < 0)
        b->dropped += ev->output_len; /* out of memory: lose this piece */
    if (!ev->state || t->ended)
        return;
    t->state = ev->state;
    t->attempt = ev->attempt;
    if (*ev->node_id)
        set_text(&t->node_id, ev->node_id);
    if (*ev->error || mt__task_final(t->state))
        set_text(&t->error, ev->error);
    if (!mt__task_final(t->state))
        return;
    t->exit_code = t->state == MT_TASK_STATE_FINISHED ? ev->exit_code : -1;
    t->ended = true;
    t->actor_died = ev->actor_died;
    atomic_store(&t->settled, true);
    if (ev->result_len && !t->value && (t->value = malloc(ev->result_len))) {
        memcpy(t->value, ev->result, ev->result_len);
        t->value_len = ev->result_len;
    }
}

void mt__task_end(struct mt_client *c, struct mt_task *t, int lost,
                  const char *why)
{
    pthread_mutex_lock(&c->mu);
    if (!t->ended) {
        if (lost) {
            t->lost = lost;
        } else {
            t->state = MT_TASK_STATE_FAILED;
            t->ended = true;
        }
        set_text(&t->error, why);
    }
    atomic_store(&t->settled, true);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (t->listen)
        t->listen(c, t, NULL);
}
