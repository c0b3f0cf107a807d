/* SPDX-License-Identifier: Apache-2.0 */
/*
 * follow.c -- following one task to its end, for `manta submit` and `manta
 * logs`: a watch on the task (mt_watch_open, its output included) whose
 * events become our output: the task's stdout and stderr on ours as they
 * come, state changes on stderr with --verbose, and the final state as the
 * exit code: FINISHED -> the task's exit code, FAILED -> 1 with one line,
 * CANCELLED -> 130, lost -> 1 with why.
 *
 * When a Ctrl-C is ours (submit), the loop wakes every POLL_MS to see if
 * one came, and cancels the task then.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/follow.h"
#include "cli/interrupt.h"
#include "common/sys.h"

#define POLL_MS 100

/* What we know of the task while following it. */
struct follow {
    mt_client_t *c;
    const char *cmd;             /* "submit" or "logs", for messages */
    const char *task_id;
    bool verbose;
    int state;                   /* last state seen (0 none yet) */
    uint32_t attempt;
    char *note;                  /* owned: last non-final error shown */
    int exit_code;
    char *error;                 /* owned: final error text */
    char *lost;                  /* owned: why the watch ended early */
    bool out_closed[3];          /* stdout/stderr gone (EPIPE) */
};

static bool final_state(int st)
{
    return st == MT_TASK_STATE_FINISHED || st == MT_TASK_STATE_FAILED ||
           st == MT_TASK_STATE_CANCELLED;
}

static void relay(struct follow *f, int fd, const uint8_t *p, size_t n)
{
    fd = fd == 2 ? 2 : 1;
    if (!f->out_closed[fd] && mt_sys_write_all(fd, p, n) < 0)
        f->out_closed[fd] = true; /* a closed pipe: drop the rest */
}

static void set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = s && *s ? strdup(s) : NULL;
}

/* The state change lines of --verbose. */
static void say_verbose(struct follow *f, const mt_watch_event *ev)
{
    const char *id = f->task_id, *node = *ev->node_id ? ev->node_id : "?";

    if (ev->state == MT_TASK_STATE_RUNNING)
        fprintf(stderr, "manta: task %s running on node %s\n", id, node);
    else if (final_state(ev->state) && *ev->node_id &&
             f->state != MT_TASK_STATE_RUNNING)
        /* It ran before the watch opened: still say where. */
        fprintf(stderr, "manta: task %s ran on node %s\n", id, node);
    else if (ev->state == MT_TASK_STATE_SCHEDULED)
        fprintf(stderr, "manta: task %s scheduled on node %s\n", id, node);
    else if (ev->state == MT_TASK_STATE_PENDING)
        fprintf(stderr, "manta: task %s pending\n", id);
    else if (ev->state == MT_TASK_STATE_WAITING_FOR_ARGS)
        fprintf(stderr, "manta: task %s waiting for its arguments\n", id);
}

/*
 * Report what happened on stderr. With -v every state change; without, only
 * why a live task is stuck (the head's note, e.g. "infeasible: ..."), since
 * a task that never starts must not look like a hang. Retries are -v only.
 */
static void show_state(struct follow *f, const mt_watch_event *ev)
{
    bool changed = (int)ev->state != f->state || ev->attempt != f->attempt;
    bool retry = ev->attempt > f->attempt;
    bool note = !final_state(ev->state) && *ev->error &&
                (!f->note || strcmp(f->note, ev->error));

    if (retry && f->verbose)
        fprintf(stderr, "manta: task %s retrying (attempt %u): %s\n",
                f->task_id, ev->attempt + 1, ev->error);
    else if (note && (f->verbose || !retry))
        fprintf(stderr, "manta: task %s is %s: %s\n", f->task_id,
                ev->state == MT_TASK_STATE_PENDING
                    ? "pending" : mt_task_state_name(ev->state),
                ev->error);
    if (note)
        set_str(&f->note, ev->error);
    if (f->verbose && changed)
        say_verbose(f, ev);
}

/* A result kept as an object (a command task's reported result): its id
 * on stderr, so stdout stays the task's own output. */
static void show_result_object(const struct follow *f, uint64_t size)
{
    char hex[MT_OBJECT_ID_HEX_SIZE];
    mt_object_id id;

    if (mt_task_result_id(f->task_id, &id) == 0)
        fprintf(stderr, "manta: task %s result: object %s (%llu bytes)\n",
                f->task_id, mt_object_id_format(&id, hex),
                (unsigned long long)size);
}

/* Text: no NUL and no control bytes but tab, newline and CR. */
static bool is_text(const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++)
        if (b[i] < 0x20 && b[i] != '\t' && b[i] != '\n' && b[i] != '\r')
            return false;
    return true;
}

static void on_state(struct follow *f, const mt_watch_event *ev)
{
    if (final_state(f->state))
        return;
    show_state(f, ev);
    f->state = ev->state;
    f->attempt = ev->attempt;
    if (!final_state(ev->state))
        return;
    f->exit_code = ev->exit_code;
    set_str(&f->error, ev->error);
    /* A function task's result goes to stdout after its output; text
     * ends with a newline, binary goes out as it is. */
    if (ev->result_len) {
        relay(f, 1, ev->result, ev->result_len);
        if (is_text(ev->result, ev->result_len) &&
            ((const char *)ev->result)[ev->result_len - 1] != '\n')
            relay(f, 1, (const uint8_t *)"\n", 1);
    }
    if (ev->result_in_store)
        show_result_object(f, ev->result_size);
}

/* The exit code for how the task ended, with its one line on stderr. */
static int final_exit(const struct follow *f)
{
    switch (f->state) {
    case MT_TASK_STATE_FINISHED:
        if (f->verbose)
            fprintf(stderr, "manta: task %s finished with exit code %d\n",
                    f->task_id, f->exit_code);
        return f->exit_code >= 0 && f->exit_code <= 255 ? f->exit_code : 1;
    case MT_TASK_STATE_FAILED:
        fprintf(stderr, "manta %s: task failed: %s\n", f->cmd,
                f->error ? f->error : "no reason given");
        return 1;
    case MT_TASK_STATE_CANCELLED:
        fprintf(stderr, "manta %s: task %s cancelled%s%s\n", f->cmd,
                f->task_id, f->error ? ": " : "", f->error ? f->error : "");
        return MT_CLI_EXIT_CANCELLED;
    default:
        fprintf(stderr, "manta %s: lost track of task %s: %s\n", f->cmd,
                f->task_id, f->lost ? f->lost : "no reason given");
        return 1;
    }
}

static void cancel(struct follow *f)
{
    fprintf(stderr, "manta: cancelling task %s (Ctrl-C again to leave now)\n",
            f->task_id);
    if (mt_task_cancel_id(f->c, f->task_id, false, NULL) < 0 &&
        !final_state(f->state))
        fprintf(stderr, "manta: could not cancel task %s: %s\n", f->task_id,
                mt_client_last_error(f->c));
}

int mt_cli_follow(mt_client_t *c, const char *cmd, const char *task_id,
                  bool verbose, struct mt_cli_interrupt *it)
{
    struct follow f = {.c = c, .cmd = cmd, .task_id = task_id,
                       .verbose = verbose};
    const mt_watch_event *ev;
    mt_watch_t *w;
    int rc;

    if ((rc = mt_watch_open(c, &task_id, 1, MT_WATCH_OUTPUT, &w)) < 0) {
        if (rc == -MT_EINVAL) /* e.g. another kind's id: says which */
            fprintf(stderr, "manta %s: %s\n", cmd, mt_client_last_error(c));
        else
            fprintf(stderr, "manta %s: cannot watch task %s: %s\n", cmd,
                    task_id, mt_client_last_error(c));
        return 1;
    }
    while ((rc = mt_watch_next(w, it ? POLL_MS : -1, &ev)) != -MT_ENOENT) {
        if (mt_cli_interrupt_take(it))
            cancel(&f);
        if (rc < 0)
            continue;
        if (ev->kind == MT_WATCH_EVENT_OUTPUT)
            relay(&f, ev->fd, ev->data, ev->len);
        else if (ev->kind == MT_WATCH_EVENT_STATE)
            on_state(&f, ev);
        else if (ev->lost)
            set_str(&f.lost, ev->error);
    }
    mt_watch_close(w);
    rc = final_exit(&f);
    free(f.note);
    free(f.error);
    free(f.lost);
    return rc;
}
