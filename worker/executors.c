/* SPDX-License-Identifier: Apache-2.0 */
/*
 * executors.c -- the pool of executor processes (see executors.h for the
 * life of one).
 *
 * DESIGN: a fixed number of slots, each holding at most one executor. An
 * executor is spawned detached (it leads its own process group, so a stop
 * SIGKILLs whatever the function started too), with a socket pair as fd 3
 * for frames and socket pairs as stdout/stderr. Requests go out with
 * uv_write; replies are reassembled by an mt_exec_reader. Before a reply or
 * an exit ends a job, the output pipes are read dry with read(2) on their
 * fds: the executor flushed and wrote that output before replying (or
 * before dying), so it is already in the pipes and is attributed to the
 * right job. Anything an executor prints while idle goes to the worker log.
 *
 * Invariants: a job is queued, running on exactly one executor, or known
 * only to its owner; ex->job and job->ex point at each other. An executor's
 * slot is refilled only after all four of its handles are closed.
 *
 * THREAD: loop thread only.
 */
#include "worker/executors.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "worker/procs.h"

#define EX_MAGIC 0x6578ec01u
#define RESTART_MS 1000          /* delay for executors that died young */
#define READ_BUF (64u * 1024u)
#define IDLE_LOG_MAX 512

/* One executor process. Guarded by: loop thread. */
struct mt_executor {
    uint32_t magic;             /* EX_MAGIC */
    struct mt_exec_pool *pool;
    int slot;
    uv_process_t proc;
    uv_pipe_t sock;             /* fd 3 in the executor */
    uv_pipe_t out[2];           /* its stdout, stderr */
    int open;                   /* handles not closed yet */
    bool closing;
    int pid;                    /* 0 when the spawn failed */
    bool exited;
    int64_t start_ms;
    bool ran;                   /* was given a job at some point */
    struct mt_exec_reader rd;
    struct mt_exec_job *job;    /* the job it runs, or NULL: idle */
    uint8_t *wframe;            /* request being written */
    uv_write_t wreq;
};

/* The pool. Guarded by: loop thread. */
struct mt_exec_pool {
    uv_loop_t *loop;
    char *path;
    char **env;
    int n;
    struct mt_procs *procs;     /* records each executor; may be NULL */
    struct mt_executor *slots[MT_EXEC_POOL_MAX];
    size_t alive;               /* spawned, not exited */
    struct mt_exec_job *qhead, *qtail;
    uv_timer_t timer;           /* restarts */
    bool timer_open;
    char spawn_error[256];      /* the last spawn failure; "" after success */
    bool shutting_down;
    /* Dedicated pools (one actor's executor): never respawn; on_gone runs
     * once the executor is gone. */
    void (*on_gone)(void *arg, const char *why);
    void *gone_arg;
    char gone_why[300];         /* how the executor ended */
    void (*closed)(void *);
    void *closed_arg;
    char readbuf[READ_BUF];
};

static void spawn_slot(struct mt_exec_pool *p, int slot);
static void dispatch(struct mt_exec_pool *p);
static bool ex_idle(const struct mt_executor *ex);

/* ---- jobs ---------------------------------------------------------------- */

static void end_job(struct mt_exec_job *j, enum mt_exec_end end,
                    const char *error, bool system_failure)
{
    struct mt_exec_outcome o;

    memset(&o, 0, sizeof(o));
    o.end = end;
    o.error = error ? error : "";
    o.system_failure = system_failure;
    j->on_end(j, &o);
}

static void queue_push(struct mt_exec_pool *p, struct mt_exec_job *j)
{
    j->next = NULL;
    j->queued = true;
    if (p->qtail)
        p->qtail->next = j;
    else
        p->qhead = j;
    p->qtail = j;
}

static struct mt_exec_job *queue_pop(struct mt_exec_pool *p)
{
    struct mt_exec_job *j = p->qhead;

    if (!j)
        return NULL;
    p->qhead = j->next;
    if (!p->qhead)
        p->qtail = NULL;
    j->next = NULL;
    j->queued = false;
    return j;
}

static void queue_remove(struct mt_exec_pool *p, struct mt_exec_job *j)
{
    struct mt_exec_job **pp = &p->qhead, *prev = NULL;

    for (; *pp; prev = *pp, pp = &(*pp)->next) {
        if (*pp != j)
            continue;
        *pp = j->next;
        if (p->qtail == j)
            p->qtail = prev;
        j->next = NULL;
        j->queued = false;
        return;
    }
}

/* No executor can start: fail what waits, rather than hang it. */
static void fail_queued(struct mt_exec_pool *p)
{
    struct mt_exec_job *j;
    char *why;

    if (p->alive > 0 || !p->spawn_error[0] || !p->qhead)
        return;
    why = mt_xasprintf("cannot start an executor: %s", p->spawn_error);
    while ((j = queue_pop(p)))
        end_job(j, MT_EXEC_END_FAILED, why, false);
    free(why);
}

/* ---- executor handles ---------------------------------------------------- */

static void kill_group(struct mt_executor *ex)
{
    if (ex->pid <= 0 || ex->exited)
        return;
    if (kill(-ex->pid, SIGKILL) < 0 && kill(ex->pid, SIGKILL) < 0 &&
        errno != ESRCH)
        MT_WARN("kill(%d, SIGKILL) failed: %s", ex->pid, strerror(errno));
}

static void on_restart_timer(uv_timer_t *t)
{
    struct mt_exec_pool *p = t->data;

    for (int i = 0; i < p->n && !p->shutting_down; i++)
        if (!p->slots[i])
            spawn_slot(p, i);
}

static void check_closed(struct mt_exec_pool *p)
{
    void (*done)(void *) = p->closed;

    if (!done || p->timer_open)
        return;
    for (int i = 0; i < p->n; i++)
        if (p->slots[i])
            return;
    p->closed = NULL;
    done(p->closed_arg);
}

/* A dedicated pool's executor is gone: what waits for it never runs. */
static void dedicated_gone(struct mt_exec_pool *p)
{
    struct mt_exec_job *j;
    char *why = mt_xasprintf("the actor's executor %s",
                             p->gone_why[0] ? p->gone_why : "exited");

    while ((j = queue_pop(p)))
        end_job(j, MT_EXEC_END_DIED, why, true);
    free(why);
    p->on_gone(p->gone_arg, p->gone_why[0] ? p->gone_why : "exited");
}

/* Every handle of ex is closed: free it and refill its slot. */
static void ex_gone(struct mt_executor *ex)
{
    struct mt_exec_pool *p = ex->pool;
    /* Executors that failed on their own right after starting wait
     * before the next try; ones a task killed are replaced at once. */
    bool young = ex->pid <= 0 ||
                 (!ex->ran && mt_now_mono_ms() - ex->start_ms < RESTART_MS);

    p->slots[ex->slot] = NULL;
    free(ex->wframe);
    mt_exec_reader_release(&ex->rd);
    ex->magic = 0;
    free(ex);
    if (p->shutting_down) {
        check_closed(p);
        return;
    }
    if (p->on_gone) {
        dedicated_gone(p);
        return;
    }
    if (!young) {
        for (int i = 0; i < p->n; i++)
            if (!p->slots[i])
                spawn_slot(p, i);
        return;
    }
    if (!uv_is_active((uv_handle_t *)&p->timer))
        uv_timer_start(&p->timer, on_restart_timer, RESTART_MS, 0);
}

static void on_closed(uv_handle_t *h)
{
    struct mt_executor *ex = h->data;

    MT_ASSERT(ex->magic == EX_MAGIC);
    if (--ex->open == 0)
        ex_gone(ex);
}

static void ex_close(struct mt_executor *ex)
{
    uv_handle_t *hs[4] = {(uv_handle_t *)&ex->proc, (uv_handle_t *)&ex->sock,
                          (uv_handle_t *)&ex->out[0],
                          (uv_handle_t *)&ex->out[1]};

    if (ex->closing)
        return;
    ex->closing = true;
    for (int i = 0; i < 4; i++)
        if (!uv_is_closing(hs[i]))
            uv_close(hs[i], on_closed);
}

/* ---- output -------------------------------------------------------------- */

static void deliver(struct mt_executor *ex, uint32_t fd, const char *p,
                    size_t n)
{
    size_t k = n;

    if (ex->pool->shutting_down)
        return;
    if (ex->job) {
        ex->job->on_output(ex->job, fd, p, n);
        return;
    }
    while (k > 0 && p[k - 1] == '\n')
        k--;
    if (k > IDLE_LOG_MAX)
        k = IDLE_LOG_MAX;
    MT_WARN("executor pid=%d (idle) fd=%u: %.*s", ex->pid, fd, (int)k, p);
}

/* Read whatever the executor has written to stdout/stderr so far. */
static void drain(struct mt_executor *ex)
{
    char *buf = ex->pool->readbuf;
    uv_os_fd_t fd;
    ssize_t k;

    for (int i = 0; i < 2; i++) {
        if (ex->closing || uv_fileno((uv_handle_t *)&ex->out[i], &fd) < 0)
            continue;
        for (;;) {
            k = read(fd, buf, READ_BUF);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            deliver(ex, (uint32_t)i + 1, buf, (size_t)k);
        }
    }
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct mt_executor *ex = h->data;

    buf->base = ex->pool->readbuf;
    buf->len = READ_BUF;
}

static void on_out_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct mt_executor *ex = s->data;
    uint32_t fd = s == (uv_stream_t *)&ex->out[0] ? 1 : 2;

    if (n > 0)
        deliver(ex, fd, buf->base, (size_t)n);
    else if (n < 0)
        uv_read_stop(s);
}

/* ---- replies ------------------------------------------------------------- */

/* The executor broke the protocol: it is of no more use. */
static void ex_broken(struct mt_executor *ex, const char *why)
{
    MT_WARN("executor pid=%d: %s; killing it", ex->pid, why);
    uv_read_stop((uv_stream_t *)&ex->sock);
    kill_group(ex);
}

static void on_reply(struct mt_executor *ex, const uint8_t *pl, size_t n)
{
    struct mt_exec_job *j = ex->job;
    struct mt_exec_reply r;
    struct mt_exec_outcome o;

    if (!j) {
        ex_broken(ex, "reply without a request");
        return;
    }
    if (mt_exec_reply_decode(pl, n, &r) < 0) {
        ex_broken(ex, "malformed reply");
        return;
    }
    drain(ex);
    ex->job = NULL;
    j->ex = NULL;
    memset(&o, 0, sizeof(o));
    o.end = r.status == MT_EXEC_OK ? MT_EXEC_END_OK : MT_EXEC_END_FAILED;
    o.result = r.result.data;
    o.result_size = r.result.size;
    o.stored = r.stored;
    o.error = r.error;
    j->on_end(j, &o);
    mt_exec_reply_release(&r);
}

static void on_sock_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct mt_executor *ex = s->data;
    struct mt_exec_pool *p = ex->pool;
    const uint8_t *pl;
    uint32_t type;
    size_t len;
    int rc;

    if (n < 0) {
        /* EOF or error: the executor is exiting; its exit ends the job. */
        uv_read_stop(s);
        kill_group(ex);
        return;
    }
    mt_exec_reader_feed(&ex->rd, buf->base, (size_t)n);
    while ((rc = mt_exec_reader_next(&ex->rd, &type, &pl, &len)) > 0) {
        if (type != MT_EXEC_REPLY) {
            ex_broken(ex, "unexpected frame type");
            return;
        }
        on_reply(ex, pl, len);
        if (p->shutting_down || ex->exited)
            return;
    }
    if (rc < 0) {
        ex_broken(ex, "malformed frame header");
        return;
    }
    dispatch(p);
}

static void on_written(uv_write_t *req, int status)
{
    struct mt_executor *ex = req->data;

    MT_FREE(ex->wframe);
    if (status < 0 && status != UV_ECANCELED && !ex->exited)
        ex_broken(ex, uv_strerror(status));
    /* The reply may have come in before this callback ran. */
    if (status == 0 && ex_idle(ex))
        dispatch(ex->pool);
}

/* ---- exits --------------------------------------------------------------- */

static void on_exit_cb(uv_process_t *proc, int64_t status, int sig)
{
    struct mt_executor *ex = proc->data;
    struct mt_exec_pool *p = ex->pool;
    struct mt_exec_job *j = ex->job;
    char *why;

    ex->exited = true;
    p->alive--;
    mt_procs_remove(p->procs, ex->pid);
    if (sig)
        snprintf(p->gone_why, sizeof(p->gone_why), "was killed by signal %d",
                 sig);
    else
        snprintf(p->gone_why, sizeof(p->gone_why), "exited with status %lld",
                 (long long)status);
    drain(ex);
    if (j && !p->shutting_down) {
        ex->job = NULL;
        j->ex = NULL;
        if (j->stopping) {
            end_job(j, MT_EXEC_END_STOPPED, "stopped", false);
        } else {
            why = sig ? mt_xasprintf("executor died while running the task "
                                     "(signal %d)", sig)
                      : mt_xasprintf("executor died while running the task "
                                     "(exit status %lld)", (long long)status);
            MT_WARN("executor pid=%d: %s task=%s", ex->pid, why,
                    j->req.task_id);
            end_job(j, MT_EXEC_END_DIED, why, true);
            free(why);
        }
    } else if (!p->shutting_down) {
        MT_WARN("executor pid=%d exited while idle (status %lld, signal %d)",
                ex->pid, (long long)status, sig);
    }
    ex_close(ex);
}

/* ---- spawning and dispatch ----------------------------------------------- */

static void spawn_slot(struct mt_exec_pool *p, int slot)
{
    struct mt_executor *ex = mt_xcalloc(1, sizeof(*ex));
    uv_stdio_container_t io[4];
    uv_process_options_t o;
    char *args[2] = {p->path, NULL};
    int rc;

    ex->magic = EX_MAGIC;
    ex->pool = p;
    ex->slot = slot;
    ex->start_ms = mt_now_mono_ms();
    mt_exec_reader_init(&ex->rd);
    p->slots[slot] = ex;
    uv_pipe_init(p->loop, &ex->sock, 0);
    uv_pipe_init(p->loop, &ex->out[0], 0);
    uv_pipe_init(p->loop, &ex->out[1], 0);
    ex->sock.data = ex->out[0].data = ex->out[1].data = ex;
    ex->proc.data = ex;
    ex->wreq.data = ex;
    memset(io, 0, sizeof(io));
    io[0].flags = UV_IGNORE;
    io[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    io[1].data.stream = (uv_stream_t *)&ex->out[0];
    io[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    io[2].data.stream = (uv_stream_t *)&ex->out[1];
    io[3].flags = UV_CREATE_PIPE | UV_READABLE_PIPE | UV_WRITABLE_PIPE;
    io[3].data.stream = (uv_stream_t *)&ex->sock;
    memset(&o, 0, sizeof(o));
    o.exit_cb = on_exit_cb;
    o.file = p->path;
    o.args = args;
    o.env = p->env;
    o.flags = UV_PROCESS_DETACHED;
    o.stdio_count = 4;
    o.stdio = io;
    rc = uv_spawn(p->loop, &ex->proc, &o);
    ex->open = 4;
    if (rc < 0) {
        if (!p->spawn_error[0])
            MT_ERROR("cannot start executor %s: %s; retrying every %d ms",
                     p->path, uv_strerror(rc), RESTART_MS);
        snprintf(p->spawn_error, sizeof(p->spawn_error), "%s: %s", p->path,
                 uv_strerror(rc));
        snprintf(p->gone_why, sizeof(p->gone_why), "could not start: %s",
                 p->spawn_error);
        ex->exited = true;
        ex_close(ex);
        fail_queued(p);
        return;
    }
    p->spawn_error[0] = '\0';
    ex->pid = ex->proc.pid;
    p->alive++;
    mt_procs_add(p->procs, ex->pid);
    uv_read_start((uv_stream_t *)&ex->sock, on_alloc, on_sock_read);
    uv_read_start((uv_stream_t *)&ex->out[0], on_alloc, on_out_read);
    uv_read_start((uv_stream_t *)&ex->out[1], on_alloc, on_out_read);
    MT_DEBUG("executor pid=%d started in slot %d", ex->pid, slot);
    dispatch(p);
}

static bool ex_idle(const struct mt_executor *ex)
{
    return ex && ex->pid > 0 && !ex->exited && !ex->closing && !ex->job &&
           !ex->wframe;
}

/* Hand j to ex: write the request, then tell the owner it runs. */
static void ex_run(struct mt_executor *ex, struct mt_exec_job *j)
{
    uv_buf_t b;
    size_t len;
    int rc;

    if (mt_exec_request_encode(&j->req, &ex->wframe, &len) < 0) {
        end_job(j, MT_EXEC_END_FAILED, "function task too large for an "
                "executor", false);
        return;
    }
    b = uv_buf_init((char *)ex->wframe, (unsigned int)len);
    ex->ran = true;
    ex->job = j;
    j->ex = ex;
    rc = uv_write(&ex->wreq, (uv_stream_t *)&ex->sock, &b, 1, on_written);
    if (rc < 0) {
        MT_FREE(ex->wframe);
        /* The exit of the executor ends the job (as died). */
        ex_broken(ex, uv_strerror(rc));
    }
    j->on_start(j, ex->pid);
}

static void dispatch(struct mt_exec_pool *p)
{
    for (int i = 0; i < p->n && p->qhead && !p->shutting_down; i++)
        if (ex_idle(p->slots[i]))
            ex_run(p->slots[i], queue_pop(p));
    fail_queued(p);
}

/* ---- the pool ------------------------------------------------------------ */

int mt_exec_pool_create(uv_loop_t *loop, const struct mt_exec_pool_opts *o,
                        struct mt_exec_pool **out)
{
    struct mt_exec_pool *p;

    if (o->n < 1 || o->n > MT_EXEC_POOL_MAX || !o->path || !*o->path) {
        for (size_t i = 0; o->env && o->env[i]; i++)
            free(o->env[i]);
        free(o->env);
        return -MT_EINVAL;
    }
    p = mt_xcalloc(1, sizeof(*p));
    p->loop = loop;
    p->path = mt_xstrdup(o->path);
    p->env = o->env;
    p->n = o->n;
    p->procs = o->procs;
    uv_timer_init(loop, &p->timer);
    p->timer.data = p;
    p->timer_open = true;
    for (int i = 0; i < p->n; i++)
        spawn_slot(p, i);
    MT_INFO("executor pool: %d executors (%s)", p->n, p->path);
    *out = p;
    return 0;
}

int mt_exec_pool_create_dedicated(const struct mt_exec_pool *like,
                                  void (*on_gone)(void *arg, const char *why),
                                  void *arg, struct mt_exec_pool **out)
{
    struct mt_exec_pool *p;
    size_t n = 0;

    if (!like || !on_gone)
        return -MT_EINVAL;
    p = mt_xcalloc(1, sizeof(*p));
    p->loop = like->loop;
    p->path = mt_xstrdup(like->path);
    while (like->env && like->env[n])
        n++;
    p->env = mt_xcalloc(n + 1, sizeof(*p->env));
    for (size_t i = 0; i < n; i++)
        p->env[i] = mt_xstrdup(like->env[i]);
    p->n = 1;
    p->procs = like->procs;
    p->on_gone = on_gone;
    p->gone_arg = arg;
    uv_timer_init(p->loop, &p->timer);
    p->timer.data = p;
    p->timer_open = true;
    spawn_slot(p, 0);
    *out = p;
    return 0;
}

void mt_exec_pool_kill(struct mt_exec_pool *p)
{
    for (int i = 0; p && i < p->n; i++)
        if (p->slots[i])
            kill_group(p->slots[i]);
}

void mt_exec_pool_submit(struct mt_exec_pool *p, struct mt_exec_job *j)
{
    j->ex = NULL;
    j->stopping = false;
    if (p->shutting_down)
        return;
    queue_push(p, j);
    dispatch(p);
}

int mt_exec_pool_stop(struct mt_exec_pool *p, struct mt_exec_job *j)
{
    if (j->queued) {
        queue_remove(p, j);
        end_job(j, MT_EXEC_END_STOPPED, "stopped before it started", false);
        return 0;
    }
    if (!j->ex)
        return -MT_ENOENT;
    j->stopping = true;
    kill_group(j->ex);
    return 0;
}

size_t mt_exec_pool_alive(const struct mt_exec_pool *p)
{
    return p ? p->alive : 0;
}

void mt_exec_pool_shutdown(struct mt_exec_pool *p)
{
    if (!p || p->shutting_down)
        return;
    p->shutting_down = true;
    uv_timer_stop(&p->timer);
    while (queue_pop(p))
        ;
    for (int i = 0; i < p->n; i++) {
        struct mt_executor *ex = p->slots[i];

        if (!ex)
            continue;
        kill_group(ex);
        if (ex->job)
            ex->job->ex = NULL;
        ex->job = NULL;
    }
}

static void on_timer_closed(uv_handle_t *h)
{
    struct mt_exec_pool *p = h->data;

    p->timer_open = false;
    check_closed(p);
}

void mt_exec_pool_close(struct mt_exec_pool *p, void (*done)(void *),
                        void *arg)
{
    mt_exec_pool_shutdown(p);
    p->closed = done;
    p->closed_arg = arg;
    for (int i = 0; i < p->n; i++)
        if (p->slots[i])
            ex_close(p->slots[i]);
    if (!uv_is_closing((uv_handle_t *)&p->timer))
        uv_close((uv_handle_t *)&p->timer, on_timer_closed);
}

void mt_exec_pool_destroy(struct mt_exec_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; p->env && p->env[i]; i++)
        free(p->env[i]);
    free(p->env);
    free(p->path);
    free(p);
}
