/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_args.c -- resolving a function task's object arguments (see
 * task_args.h). One resolution per run walks the references in order; at
 * most one pull is in flight per resolution. A pull that fails moves on to
 * the next holder; when none is left the task fails with "object lost"
 * and the last pull's error.
 *
 * THREAD: the worker's loop thread.
 */
#include "worker/task_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "objstore/store.h"
#include "worker/run_spec.h"
#include "worker/transfer.h"

#define FETCH_TIMEOUT_MS 120000

struct mt_run_args {
    struct mt_store *st;
    struct mt_transfers *tr;
    struct mt_run_spec *s;
    mt_run_args_fn done;
    void *arg;
    size_t next;          /* the reference being resolved */
    size_t holder;        /* its holder being tried */
    bool in_flight;       /* a pull is running */
    bool cancelled;
    bool finished;
    char last[256];       /* the last pull's error */
};

static void step(struct mt_run_args *j);

static void finish(struct mt_run_args *j, int err, const char *why)
{
    j->finished = true;
    if (!j->cancelled)
        j->done(j->arg, err, why);
}

static void on_fetched(void *arg, const struct mt_fetch_result *r)
{
    struct mt_run_args *j = arg;

    j->in_flight = false;
    if (j->cancelled) {
        free(j);
        return;
    }
    if (r->err == 0) {
        j->next++;
        j->holder = 0;
    } else {
        snprintf(j->last, sizeof(j->last), "%s", r->msg);
        j->holder++;
    }
    step(j);
    if (j->finished && !j->in_flight)
        free(j);
}

/* Move a small value into the argument list. */
static void take_inline(struct mt_run_spec *s, struct mt_run_ref *r)
{
    struct mt_run_arg *a = &s->args[r->index];

    free(a->data);
    a->data = r->data ? r->data : mt_xmalloc(1);
    a->size = r->size;
    r->data = NULL;
}

static void step(struct mt_run_args *j)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1], why[512];
    struct mt_run_spec *s = j->s;
    int rc;

    while (j->next < s->nrefs) {
        struct mt_run_ref *r = &s->refs[j->next];

        if (r->is_inline) {
            take_inline(s, r);
            j->next++;
            continue;
        }
        if (mt_store_contains(j->st, &r->id) == 0) {
            j->next++;
            j->holder = 0;
            continue;
        }
        if (j->holder >= r->n_holders) {
            snprintf(why, sizeof(why), "object lost: argument %u (object "
                     "%s) could not be fetched from any holder%s%s",
                     r->index, mt_object_id_hex(&r->id, hex),
                     j->last[0] ? ": " : "", j->last);
            finish(j, -MT_ENOENT, why);
            return;
        }
        rc = mt_transfers_fetch(j->tr, &r->id, r->holders[j->holder],
                                FETCH_TIMEOUT_MS, on_fetched, j, NULL);
        if (rc == 0) {
            j->in_flight = true;
            return;
        }
        snprintf(j->last, sizeof(j->last), "%s", mt_strerror(rc));
        j->holder++;
    }
    finish(j, 0, "");
}

struct mt_run_args *mt_run_args_resolve(struct mt_store *st,
                                        struct mt_transfers *tr,
                                        struct mt_run_spec *s,
                                        mt_run_args_fn done, void *arg)
{
    struct mt_run_args *j = mt_xcalloc(1, sizeof(*j));

    j->st = st;
    j->tr = tr;
    j->s = s;
    j->done = done;
    j->arg = arg;
    step(j);
    if (j->finished && !j->in_flight) {
        free(j);
        return NULL;
    }
    return j;
}

void mt_run_args_cancel(struct mt_run_args *j)
{
    if (!j)
        return;
    j->cancelled = true;
    if (!j->in_flight)
        free(j);
}
