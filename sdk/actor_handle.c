/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actor_handle.c -- what an actor handle and an actor's info are as plain
 * C: the handle's last reference frees it, a direct call's outcome
 * completes its local task, and the public info struct is initialized
 * and released here (callers built against an older, shorter struct
 * included). Both the public API (actor.c) and the loop thread
 * (rpc_actor.c, rpc_actor_call.c) use these; this file calls none of
 * them.
 *
 * THREAD: any; a handle's road is guarded by its own mutex.
 */
#include "sdk/actor_handle.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/task_state.h"

void mt__actor_unref(struct mt_actor *a)
{
    if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&a->mu);
    free(a->address);
    free(a->held); /* empty: each held call keeps a ref */
    free(a->why);
    a->magic = 0;
    free(a);
}

void mt__actor_direct_done(struct mt_client *c, struct mt_actor *a,
                           struct mt_task *t, bool ok, const uint8_t *result,
                           size_t len, const char *error, bool actor_died)
{
    uint8_t *v = ok && len ? malloc(len) : NULL;
    char *e = strdup(ok ? "" : error && *error ? error : "the call failed");

    if (v)
        memcpy(v, result, len);
    pthread_mutex_lock(&c->mu);
    t->state = ok ? MT_TASK_STATE_FINISHED : MT_TASK_STATE_FAILED;
    t->exit_code = ok ? 0 : -1;
    t->value = v;
    t->value_len = v ? len : 0;
    free(t->error);
    t->error = e;
    t->actor_died = !ok && actor_died;
    t->ended = true;
    if (ok && len && !v)
        t->lost = -MT_ENOMEM;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    mt__task_unref(t);
    mt__actor_unref(a);
}

void mt_actor_info_init(mt_actor_info *i)
{
    memset(i, 0, sizeof(*i));
    i->size = sizeof(*i);
}

/* The part of struct mt_actor_info a caller with `size` bytes has. */
#define HAS_FIELD(size, f)                                                     \
    ((size) >= offsetof(mt_actor_info, f) + sizeof(((mt_actor_info *)0)->f))

void mt_actor_info_release(mt_actor_info *i)
{
    uint32_t size;

    if (!i)
        return;
    size = i->size;
    free(i->name);
    free(i->node_id);
    free(i->death_reason);
    if (HAS_FIELD(size, owner_id)) {
        free(i->actor_id);
        free(i->function);
        free(i->owner_id);
    }
    memset(i, 0, size < sizeof(*i) ? size : sizeof(*i));
    i->size = size;
}
