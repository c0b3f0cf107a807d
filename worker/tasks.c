/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tasks.c -- the runs of a worker (see tasks.h for the life of one).
 *
 * A command run is a program started under its manta-guard (guard.h),
 * spawned with uv_spawn on the worker's loop thread (the main thread,
 * which the guard's parent-death signal is tied to), detached: the guard
 * leads the run's process group, forks the program into it, relays its
 * exit status and kills whatever the program started when the program
 * ends, when the worker dies, or when the worker kills the run. A stop
 * SIGTERMs the group; a kill is MT_GUARD_KILL_SIG to the guard, with a
 * group SIGKILL as backstop. Each run's group is recorded (procs.h) until
 * its leader is reaped. Without a guard binary the program itself leads
 * the group. stdin is /dev/null; stdout and stderr come back through
 * pipes, are appended to <temp_dir>/logs/tasks/<task_id>.<attempt>.log
 * (made on the first output) and to the run's bounded output buffer,
 * from which the reporter takes them. Function and actor runs hand a job
 * to an executor (executors.h, actors.h) instead and relay what it prints
 * the same way; a function run whose arguments are objects elsewhere
 * fetches them first (task_args.h).
 *
 * DESIGN (reporting): there is one reporter per worker and at most one
 * batch in flight (the sender's call), so the head sees each task's
 * updates in the order they were queued. A batch carries, per run,
 * RUNNING (if queued), then output, then the final update, and the final
 * update only once the run's output buffer is empty and every handle of
 * the run is closed, so the final update is always the last thing the
 * head hears of a run. Output waits up to FLUSH_MS for company, or goes
 * when FLUSH_BYTES are buffered on the worker; RUNNING waits up to
 * RUNNING_MS (the head has marked the task running when it was handed
 * over, and a short task's RUNNING then travels with its final state); a
 * final state is sent at once. A failed call puts its updates back in
 * front of what came since and is retried with backoff (RETRY_MIN_MS
 * doubling to RETRY_MAX_MS). Only output can be lost, and only when a run
 * has more than MT_OUTPUT_LIMIT buffered: the oldest goes and a marker
 * says how much. Runs whose output went into a call move to the back of
 * the list, so one chatty task cannot starve the others.
 *
 * Tasks pushed to leases (leases.h) are not runs: only their final
 * states come here (mt_runs_report_pushed), numbered in the order queued.
 * Each call carries the oldest of them first (up to MAX_CALL_PUSHED, and
 * within the result budget), a failed call puts them back in front, so
 * they reach the head in order and one number, the last of an
 * acknowledged call, tells the leases every report up to it is known.
 * They wait for company like output (FLUSH_MS, or PUSHED_FLUSH of them)
 * until the leases need them acknowledged to answer a push
 * (mt_runs_flush_pushed): a push of many tasks is then reported in a
 * call or two, not one per task.
 *
 * DESIGN (the head away): reports wait while the node is not registered
 * (head_up false) and go in the same order once it is, so a restarted
 * head reads the node's holdings before their updates; the leases hear
 * away whenever the head cannot take reports (not registered, or the
 * last call failed) and may then have the pushed reports copied
 * (mt_runs_keep_pushed: owned set, freed once acknowledged).
 *
 * Invariants: a run is freed only when the head has acknowledged its final
 * update (or at destroy); it is then no longer in any call. During shutdown
 * nothing is reported and a call that ends just frees its batch.
 *
 * THREAD: loop thread only.
 */
#include "worker/tasks.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "common/alloc.h"
#include "common/auth.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "worker/actors.h"
#include "worker/executors.h"
#include "worker/guard.h"
#include "worker/procs.h"
#include "worker/task_args.h"
#include "worker/task_result.h"

extern char **environ;

#define READ_BUF (64u * 1024u)
#define FLUSH_MS 50
#define RUNNING_MS 10          /* a lone RUNNING waits this long for company */
#define FLUSH_BYTES (256u * 1024u)
#define MAX_CALL_OUTPUT (4u << 20)
#define MAX_CALL_RESULTS (24u << 20) /* under the 64 MiB message limit */
#define MAX_CALL_PUSHED 8192   /* pushed tasks' reports in one call */
#define PUSHED_FLUSH 4096      /* this many pushed reports go at once */
#define RETRY_MIN_MS 100
#define RETRY_MAX_MS 1000
#define KILL_AFTER_MS 5000
#define EOF_GRACE_MS 1000
#define GUARD_BACKSTOP_MS 2000 /* a guard told to kill has this long */
#define RUN_MAGIC 0x7a5c0de1u

/* ==== task state ========================================================== */

/* One run: an attempt of a task on this worker. Guarded by: loop thread. */
struct mt_run {
    uint32_t magic;             /* RUN_MAGIC */
    struct mt_runs *rs;
    struct mt_run *prev, *next; /* rs->head list; reporter order */
    struct mt_run_spec spec;
    uv_process_t proc;
    uv_pipe_t pipes[2];         /* the child's stdout, stderr */
    uv_timer_t timer;           /* SIGKILL after SIGTERM; EOF grace */
    int open;                   /* handles not closed yet */
    bool pipe_open[2];
    bool proc_init;             /* uv_spawn was called on proc */
    int pid;                    /* 0 until spawned; leads the group */
    bool guarded;               /* pid is the run's manta-guard */
    int exec_fd;                /* guarded: read end of its exec report */
    bool exited;                /* reaped (or never started) */
    int32_t exit_code;
    char *error;                /* NULL, or why it could not run */
    char *note;                 /* a LEASE that ended: why (FINISHED) */
    char *result_path;          /* command: MANTA_RESULT_PATH, or NULL */
    int log_fd;                 /* -1: no log file */
    bool log_tried;             /* log_open() ran */
    bool log_failed;
    int64_t start_ms;
    /* reporting */
    bool running_pending;       /* RUNNING not yet handed to a call */
    bool final_pending;         /* the final update not yet handed */
    bool final_sent;            /* the final update is in a call or acked */
    bool stop_asked;            /* a StopTask: no longer held for the head */
    struct mt_outbuf out;
    /* function tasks */
    bool fn;                    /* runs on the executor pool */
    struct mt_exec_job job;     /* its job there */
    char **fn_env;              /* "K=V" set in the executor for the call */
    uint8_t *result;            /* FINISHED: the function's result */
    size_t result_size;
    uint64_t result_stored;     /* FINISHED: result put in the store */
    bool system_failure;        /* FAILED because its executor died */
    struct mt_run_args *args_job; /* fetching object arguments */
    /* actor creation tasks */
    bool actor_ready_pending;   /* "actor ready" not yet handed to a call */
    uint32_t actor_pid;         /* its executor */
};

/* Every run of a worker and the reporter. Guarded by: loop thread. */
struct mt_runs {
    struct mt_runs_opts o;      /* what it was created with (borrowed) */
    mt_runs_send_fn send;       /* where reports go */
    void *send_arg;
    struct mt_run *head, *tail;
    size_t buffered;            /* output bytes in the tasks' buffers */
    size_t n_state;             /* RUNNING/final updates waiting */
    size_t n_final;             /* ... of which final */
    bool shutting_down;
    bool in_flight;             /* a ReportTasks call is out */
    struct mt_run_batch batch;  /* what it carries */
    uv_timer_t timer;           /* flush window, retry backoff */
    bool timer_open;
    bool retrying;              /* waiting for the backoff to pass */
    int backoff_ms;
    int64_t last_send_ms;
    bool head_failing;          /* the last call failed */
    bool head_up;               /* registered: reports may go */
    bool away_told;             /* what the leases last heard (away) */
    char *log_dir;              /* NULL: no per-task logs */
    bool log_dir_made;
    /* tasks pushed to leases (leases.h): their final reports, oldest
     * first, not yet handed to a call */
    struct mt_run_report *pushed;
    size_t n_pushed;
    size_t cap_pushed;
    uint64_t pushed_seq;        /* the last number handed out */
    bool pushed_now;            /* send them without waiting for company */
    const struct mt_runs_lease_listener *lease_l;
    void *lease_arg;
    void (*closed)(void *);     /* shutdown step 2 */
    void *closed_arg;
    char readbuf[READ_BUF];
};

static void kick(struct mt_runs *rs);
static void on_actor_died(void *arg, const char *task_id, uint32_t attempt,
                          const char *why);

static void list_append(struct mt_runs *rs, struct mt_run *t)
{
    t->next = NULL;
    t->prev = rs->tail;
    if (rs->tail)
        rs->tail->next = t;
    else
        rs->head = t;
    rs->tail = t;
}

static void list_remove(struct mt_runs *rs, struct mt_run *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        rs->head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    else
        rs->tail = t->prev;
    t->prev = t->next = NULL;
}

static struct mt_run *find(struct mt_runs *rs, const char *id,
                            uint32_t attempt)
{
    /* TODO(worker): index by id if nodes come to run thousands of tasks. */
    for (struct mt_run *t = rs->head; t; t = t->next)
        if (t->spec.attempt == attempt && strcmp(t->spec.task_id, id) == 0)
            return t;
    return NULL;
}

static void mt_args_cancel_safe(struct mt_run *t)
{
    mt_run_args_cancel(t->args_job);
    t->args_job = NULL;
}

static void task_free(struct mt_run *t)
{
    struct mt_runs *rs = t->rs;

    MT_ASSERT(t->magic == RUN_MAGIC && t->open == 0);
    list_remove(rs, t);
    rs->buffered -= t->out.bytes;
    if (t->log_fd >= 0)
        close(t->log_fd);
    if (t->exec_fd >= 0)
        close(t->exec_fd);
    mt_outbuf_release(&t->out);
    mt_run_spec_release(&t->spec);
    free(t->error);
    free(t->note);
    free(t->result);
    free(t->result_path);
    free(t->job.req.args);
    free(t->job.req.refs);
    mt_args_cancel_safe(t);
    mt_run_env_free(t->fn_env);
    t->magic = 0;
    free(t);
}

struct mt_runs *mt_runs_create(const struct mt_runs_opts *o)
{
    struct mt_runs *rs = mt_xcalloc(1, sizeof(*rs));

    rs->o = *o;
    if (o->temp_dir)
        rs->log_dir = mt_xasprintf("%s/logs/tasks", o->temp_dir);
    uv_timer_init(o->loop, &rs->timer);
    rs->timer.data = rs;
    rs->timer_open = true;
    rs->head_up = true;
    mt_hosted_actors_on_died(o->actors, on_actor_died, rs);
    return rs;
}

void mt_runs_on_leases(struct mt_runs *rs,
                       const struct mt_runs_lease_listener *l, void *arg)
{
    rs->lease_l = l;
    rs->lease_arg = arg;
}

void mt_runs_set_sender(struct mt_runs *rs, mt_runs_send_fn send, void *arg)
{
    rs->send = send;
    rs->send_arg = arg;
}

int mt_runs_admit(struct mt_runs *rs, const struct mt_run_spec *s, char *err,
                  size_t len)
{
    int rc = mt_run_spec_check(s, err, len);

    if (rc < 0)
        return rc;
    if (rs->shutting_down) {
        snprintf(err, len, "worker is stopping");
        return -MT_ECLOSED;
    }
    if (s->kind != MT_RUN_KIND_COMMAND && !rs->o.execs) {
        snprintf(err, len, "this worker runs no executors");
        return -MT_EINVAL;
    }
    if (find(rs, s->task_id, s->attempt)) {
        snprintf(err, len, "task %s attempt %u is already here", s->task_id,
                 s->attempt);
        return -MT_EEXIST;
    }
    return 0;
}

/* ==== output ============================================================= */

static void log_open(struct mt_run *t)
{
    struct mt_runs *rs = t->rs;
    char *path;
    int rc;

    t->log_tried = true;
    if (!rs->log_dir)
        return;
    if (!rs->log_dir_made) {
        rc = mt_sys_mkdir_p(rs->log_dir);
        if (rc < 0) {
            MT_WARN("cannot create %s: %s; task output is not logged",
                    rs->log_dir, mt_strerror(rc));
            MT_FREE(rs->log_dir);
            return;
        }
        rs->log_dir_made = true;
    }
    path = mt_xasprintf("%s/%s.%u.log", rs->log_dir, t->spec.task_id,
                        t->spec.attempt);
    t->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (t->log_fd < 0)
        MT_WARN("cannot open %s: %s", path, strerror(errno));
    free(path);
}

/* Append to the task's log file. The file is local and written through the
 * page cache, so a synchronous write does not hold the loop for long. */
static void log_write(struct mt_run *t, const char *p, size_t n)
{
    ssize_t k;

    if (!t->log_tried) /* opened on the first output: silent tasks leave
                          no file behind (and cost no file creation) */
        log_open(t);
    while (t->log_fd >= 0 && n > 0) {
        k = write(t->log_fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (!t->log_failed)
                MT_WARN("task=%s cannot write its log: %s", t->spec.task_id,
                        k < 0 ? strerror(errno) : "short write");
            t->log_failed = true;
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

static void add_output(struct mt_run *t, uint32_t fd, const void *p,
                       size_t n)
{
    struct mt_runs *rs = t->rs;
    size_t before = t->out.bytes;

    log_write(t, p, n);
    if (rs->shutting_down)
        return;
    mt_outbuf_append(&t->out, fd, p, n);
    rs->buffered = rs->buffered - before + t->out.bytes;
    kick(rs);
}

/* ==== process life ======================================================= */

static void check_closed(struct mt_runs *rs);

/* A command task ended: its result file says what its result is, if it
 * succeeded (task_result.h). A bad file fails the task. */
static void take_result(struct mt_run *t)
{
    struct mt_store *st = t->rs->o.store;

    if (t->error || t->exit_code != 0) {
        mt_result_file_discard(st, t->result_path, t->spec.task_id);
        return;
    }
    /* On failure t->error is set: the task ends FAILED with why. */
    mt_result_file_collect(st, t->result_path, t->spec.task_id,
                           &t->result_stored, &t->error);
}

/* Every handle is closed: queue the final update. */
static void task_done(struct mt_run *t)
{
    struct mt_runs *rs = t->rs;

    if (t->log_fd >= 0) {
        close(t->log_fd);
        t->log_fd = -1;
    }
    if (rs->shutting_down) {
        mt_result_file_discard(NULL, t->result_path, NULL);
        check_closed(rs);
        return;
    }
    if (!t->fn && t->spec.kind == MT_RUN_KIND_COMMAND)
        take_result(t);
    if (t->error)
        MT_INFO("task=%s attempt=%u failed: %s", t->spec.task_id,
                t->spec.attempt, t->error);
    else if (t->fn)
        MT_DEBUG("task=%s attempt=%u finished after %lldms (%zu result "
                 "bytes)", t->spec.task_id, t->spec.attempt,
                 (long long)(mt_now_mono_ms() - t->start_ms), t->result_size);
    else if (t->spec.kind == MT_RUN_KIND_LEASE)
        MT_DEBUG("lease=%s attempt=%u ended after %lldms: %s",
                 t->spec.task_id, t->spec.attempt,
                 (long long)(mt_now_mono_ms() - t->start_ms),
                 t->note ? t->note : "");
    else
        MT_DEBUG("task=%s attempt=%u exited code=%d after %lldms",
                 t->spec.task_id, t->spec.attempt, t->exit_code,
                 (long long)(mt_now_mono_ms() - t->start_ms));
    t->final_pending = true;
    rs->n_state++;
    rs->n_final++;
    kick(rs);
}

static void on_closed(uv_handle_t *h)
{
    struct mt_run *t = h->data;

    t->open--;
    /* The timer goes last, once the process and both pipes are gone. */
    if (t->open == 1 && !uv_is_closing((uv_handle_t *)&t->timer)) {
        uv_close((uv_handle_t *)&t->timer, on_closed);
        return;
    }
    if (t->open == 0)
        task_done(t);
}

static void close_handle(struct mt_run *t, uv_handle_t *h)
{
    if (!uv_is_closing(h))
        uv_close(h, on_closed);
}

static void close_pipe(struct mt_run *t, int i)
{
    if (!t->pipe_open[i])
        return;
    t->pipe_open[i] = false;
    close_handle(t, (uv_handle_t *)&t->pipes[i]);
}

/* Signal the task's process group while it may still have members. */
static void signal_group(struct mt_run *t, int sig)
{
    if (t->pid <= 0 || (t->exited && !t->pipe_open[0] && !t->pipe_open[1]))
        return;
    if (kill(-t->pid, sig) < 0 && errno != ESRCH)
        MT_WARN("task=%s kill(-%d, %d) failed: %s", t->spec.task_id, t->pid,
                sig, strerror(errno));
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct mt_run *t = h->data;

    /* One buffer serves every pipe: each read is consumed before the next
     * allocation. */
    buf->base = t->rs->readbuf;
    buf->len = sizeof(t->rs->readbuf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct mt_run *t = s->data;
    int i = s == (uv_stream_t *)&t->pipes[0] ? 0 : 1;

    if (n > 0) {
        add_output(t, (uint32_t)i + 1, buf->base, (size_t)n);
        return;
    }
    if (n == 0)
        return;
    if (n != UV_EOF)
        MT_WARN("task=%s reading fd %d: %s", t->spec.task_id, i + 1,
                uv_strerror((int)n));
    close_pipe(t, i);
}

/* The guard was told to kill the run but has not ended: kill the group. */
static void on_guard_backstop(uv_timer_t *tm)
{
    struct mt_run *t = tm->data;

    MT_WARN("task=%s its guard pid=%d did not end it in %d ms; killing the "
            "group", t->spec.task_id, t->pid, GUARD_BACKSTOP_MS);
    signal_group(t, SIGKILL);
}

/* Kill the run now. A guarded run is killed by its guard, which kills
 * even processes that left the group; should the guard not end within
 * GUARD_BACKSTOP_MS, the group is SIGKILLed. */
static void kill_run(struct mt_run *t)
{
    if (!t->guarded || t->exited) {
        signal_group(t, SIGKILL);
        uv_timer_stop(&t->timer);
        return;
    }
    if (kill(t->pid, MT_GUARD_KILL_SIG) < 0 && errno != ESRCH)
        MT_WARN("task=%s kill(%d, %d) failed: %s", t->spec.task_id, t->pid,
                MT_GUARD_KILL_SIG, strerror(errno));
    uv_timer_start(&t->timer, on_guard_backstop, GUARD_BACKSTOP_MS, 0);
}

/* The process exited but something in its group still holds a pipe. */
static void on_eof_grace(uv_timer_t *tm)
{
    struct mt_run *t = tm->data;

    MT_WARN("task=%s exited but its process group kept its output open; "
            "killing the group", t->spec.task_id);
    signal_group(t, SIGKILL);
    close_pipe(t, 0);
    close_pipe(t, 1);
}

/* The guard's report of its task's exec (guard.h), read once the guard
 * has exited, so it never blocks: 0 when the exec succeeded (EOF, or the
 * guard died first), else its errno. Closes fd. */
static int exec_report(int fd)
{
    int err = 0;
    ssize_t k;

    do
        k = read(fd, &err, sizeof(err));
    while (k < 0 && errno == EINTR);
    close(fd);
    return k == (ssize_t)sizeof(err) && err > 0 ? err : 0;
}

/* The guard's program never ran (err, from exec_report): FAILED with
 * the message and code uv_spawn would have given. */
static void exec_failed(struct mt_run *t, int err)
{
    if (!err || t->error)
        return;
    t->error = mt_xasprintf("cannot run '%s': %s", t->spec.argv[0],
                            uv_strerror(-err));
    t->exit_code = err == ENOENT ? 127 : 126;
    log_write(t, t->error, strlen(t->error));
    log_write(t, "\n", 1);
}

static void on_proc_exit(uv_process_t *p, int64_t status, int term_signal)
{
    struct mt_run *t = p->data;

    /* A guard that died by a signal was killed, or relays a task killed
     * after the guard had killed the rest: whatever is left of its group
     * goes now, while the group's id cannot have been reused. */
    if (t->guarded && term_signal && kill(-t->pid, SIGKILL) < 0 &&
        errno != ESRCH)
        MT_WARN("task=%s kill(-%d, SIGKILL) failed: %s", t->spec.task_id,
                t->pid, strerror(errno));
    mt_procs_remove(t->rs->o.procs, t->pid);
    t->exited = true;
    if (t->exec_fd >= 0) /* the guard could not exec the program */
        exec_failed(t, exec_report(t->exec_fd));
    t->exec_fd = -1;
    if (!t->error) /* else it never ran: fail_start set the code */
        t->exit_code = term_signal ? 128 + term_signal : (int32_t)status;
    uv_timer_stop(&t->timer);
    if (t->pipe_open[0] || t->pipe_open[1])
        uv_timer_start(&t->timer, on_eof_grace, EOF_GRACE_MS, 0);
    close_handle(t, (uv_handle_t *)&t->proc);
}

static void on_kill_timer(uv_timer_t *tm)
{
    struct mt_run *t = tm->data;

    MT_INFO("task=%s still running %d ms after SIGTERM: SIGKILL",
            t->spec.task_id, KILL_AFTER_MS);
    kill_run(t);
}

/* ==== start and stop ====================================================== */

/* The task could not start: report FAILED with why. */
static void fail_start(struct mt_run *t, int32_t code, char *error)
{
    t->exited = true;
    t->exit_code = code;
    t->error = error;
    log_write(t, error, strlen(error));
    log_write(t, "\n", 1);
    close_pipe(t, 0);
    close_pipe(t, 1);
    if (t->open == 1)
        close_handle(t, (uv_handle_t *)&t->timer);
}

/* The layers of a run's environment over its process's own, in order:
 * the spec's env and unsets, the grant's env and unsets, then own, which
 * gets the run's ids here (the caller may add more). */
static void env_layers(const struct mt_run *t, struct mt_kv_list *own,
                       const struct mt_kv_list *lists[5])
{
    char attempt[16];

    snprintf(attempt, sizeof(attempt), "%u", t->spec.attempt);
    mt_kv_list_set(own, "MANTA_TASK_ID", t->spec.task_id);
    mt_kv_list_set(own, "MANTA_TASK_ATTEMPT", attempt);
    lists[0] = &t->spec.env;
    lists[1] = &t->spec.env_unset;
    lists[2] = &t->spec.accel_env;
    lists[3] = &t->spec.accel_unset;
    lists[4] = own;
}

/* The environment of a task: the worker's, the spec's, the grant's, ours. */
static char **task_env(struct mt_run *t)
{
    const struct mt_runs_opts *o = &t->rs->o;
    struct mt_kv_list own = {0};
    const struct mt_kv_list *lists[5];
    char **env;

    env_layers(t, &own, lists);
    mt_kv_list_set(&own, "MANTA_NODE_ID", o->node_id);
    mt_kv_list_set(&own, "MANTA_HEAD_ADDRESS", o->head_addr);
    mt_kv_list_set(&own, "MANTA_OBJECT_STORE_SOCKET",
                   o->store_socket ? o->store_socket : "");
    if (o->sec)
        mt_security_export_env(o->sec, &own);
    t->result_path = mt_result_file_prepare(o->temp_dir, t->spec.task_id,
                                            t->spec.attempt);
    if (t->result_path)
        mt_kv_list_set(&own, "MANTA_RESULT_PATH", t->result_path);
    env = mt_run_env_build(environ, lists, 5);
    mt_kv_list_release(&own);
    return env;
}

/* RET 0, or -errno when cwd is not a directory we can enter. */
static int check_cwd(const char *cwd)
{
    struct stat st;

    if (stat(cwd, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR;
    if (access(cwd, X_OK) < 0)
        return -errno;
    return 0;
}

/* The guard's argv: manta-guard WORKER_PID, then the task's. RET owned
 * array (free it; its strings are borrowed from t and pid). */
static char **guard_argv(struct mt_run *t, char *pid)
{
    size_t n = 0;
    char **args;

    while (t->spec.argv[n])
        n++;
    args = mt_xcalloc(n + 3, sizeof(*args));
    args[0] = (char *)t->rs->o.guard_path;
    args[1] = pid;
    memcpy(args + 2, t->spec.argv, n * sizeof(*args));
    return args;
}

/* Fill o and io (4 entries) for the run's program, under its guard when
 * there is one (the caller frees o->args unless it is t->spec.argv).
 * OUT status  the read end of the guard's status pipe, or -1
 * RET 0 or -errno (no pipe for the guard) */
static int spawn_options(struct mt_run *t, uv_process_options_t *o,
                         uv_stdio_container_t *io, char *pid, int *status)
{
    int fds[2];

    *status = -1;
    memset(io, 0, 4 * sizeof(*io));
    io[0].flags = UV_IGNORE; /* libuv opens /dev/null for fds 0-2 */
    for (int i = 1; i <= 2; i++) {
        io[i].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
        io[i].data.stream = (uv_stream_t *)&t->pipes[i - 1];
    }
    o->file = t->spec.argv[0];
    o->args = t->spec.argv;
    o->stdio_count = 3;
    o->stdio = io;
    if (!t->rs->o.guard_path)
        return 0;
    if (pipe2(fds, O_CLOEXEC) < 0)
        return -errno;
    io[MT_GUARD_STATUS_FD].flags = UV_INHERIT_FD;
    io[MT_GUARD_STATUS_FD].data.fd = fds[1];
    o->stdio_count = MT_GUARD_STATUS_FD + 1;
    o->file = t->rs->o.guard_path;
    o->args = guard_argv(t, pid);
    *status = fds[0];
    return 0;
}

/* uv_spawn failed: nothing runs. */
static void spawn_failed(struct mt_run *t, int rc)
{
    close_handle(t, (uv_handle_t *)&t->proc);
    if (t->guarded)
        fail_start(t, 126, mt_xasprintf("cannot run '%s': cannot start %s: "
                                        "%s", t->spec.argv[0],
                                        t->rs->o.guard_path,
                                        uv_strerror(rc)));
    else
        fail_start(t, rc == UV_ENOENT ? 127 : 126,
                   mt_xasprintf("cannot run '%s': %s", t->spec.argv[0],
                                uv_strerror(rc)));
}

/* The program (or its guard) runs: record it and read its output. A
 * guard reports a failed exec of the program on status, read when the
 * guard exits (on_proc_exit): waiting here would hold the loop for a fork
 * and an exec per task. */
static void spawned(struct mt_run *t, int status)
{
    t->pid = t->proc.pid;
    t->exec_fd = status;
    mt_procs_add(t->rs->o.procs, t->pid);
    for (int i = 0; i < 2; i++)
        uv_read_start((uv_stream_t *)&t->pipes[i], on_alloc, on_read);
    MT_DEBUG("task=%s attempt=%u started pid=%d%s: %s", t->spec.task_id,
             t->spec.attempt, t->pid, t->guarded ? " (guard)" : "",
             t->spec.argv[0]);
    t->running_pending = true;
    t->rs->n_state++;
    kick(t->rs);
}

static void spawn(struct mt_run *t)
{
    uv_loop_t *loop = t->rs->o.loop;
    uv_process_options_t o;
    uv_stdio_container_t io[MT_GUARD_STATUS_FD + 1];
    const char *cwd = t->spec.cwd && *t->spec.cwd ? t->spec.cwd : NULL;
    char pid[16];
    int rc, status;

    if (cwd && (rc = check_cwd(cwd)) < 0) {
        fail_start(t, 127, mt_xasprintf("cannot run '%s': working directory "
                                        "'%s': %s", t->spec.argv[0], cwd,
                                        uv_strerror(rc)));
        return;
    }
    for (int i = 0; i < 2; i++) {
        uv_pipe_init(loop, &t->pipes[i], 0);
        t->pipes[i].data = t;
        t->pipe_open[i] = true;
        t->open++;
    }
    memset(&o, 0, sizeof(o));
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    rc = spawn_options(t, &o, io, pid, &status);
    if (rc < 0) {
        fail_start(t, 126, mt_xasprintf("cannot run '%s': %s",
                                        t->spec.argv[0], uv_strerror(rc)));
        return;
    }
    t->guarded = status >= 0;
    o.exit_cb = on_proc_exit;
    o.env = task_env(t);
    o.cwd = cwd;
    o.flags = UV_PROCESS_DETACHED; /* setsid: it leads its own group */
    t->proc.data = t;
    rc = uv_spawn(loop, &t->proc, &o);
    mt_run_env_free(o.env);
    if (t->guarded) {
        close(io[MT_GUARD_STATUS_FD].data.fd);
        free(o.args);
    }
    t->proc_init = true; /* initialised even when the spawn failed */
    t->open++;
    if (rc < 0) {
        if (status >= 0)
            close(status);
        spawn_failed(t, rc);
        return;
    }
    spawned(t, status);
}

/* ---- function tasks: run on the executor pool ---- */

static struct mt_run *job_task(struct mt_exec_job *j)
{
    struct mt_run *t =
        (struct mt_run *)((char *)j - offsetof(struct mt_run, job));

    MT_ASSERT(t->magic == RUN_MAGIC);
    return t;
}

static void on_job_start(struct mt_exec_job *j, int pid)
{
    struct mt_run *t = job_task(j);

    MT_DEBUG("task=%s attempt=%u started on executor pid=%d: %s",
             t->spec.task_id, t->spec.attempt, pid, t->spec.function);
    t->actor_pid = pid > 0 ? (uint32_t)pid : 0;
    t->running_pending = true;
    t->rs->n_state++;
    kick(t->rs);
}

static void on_job_output(struct mt_exec_job *j, uint32_t fd, const void *p,
                          size_t n)
{
    add_output(job_task(j), fd, p, n);
}

/* An actor's factory returned 0: the task goes on while the actor lives. */
static void actor_ready(struct mt_run *t)
{
    mt_hosted_actors_created(t->rs->o.actors, t->spec.task_id,
                             t->spec.attempt, true);
    t->actor_ready_pending = true;
    t->rs->n_state++;
    kick(t->rs);
}

static void on_job_end(struct mt_exec_job *j, const struct mt_exec_outcome *o)
{
    struct mt_run *t = job_task(j);

    if (t->spec.kind == MT_RUN_KIND_ACTOR_CREATE) {
        if (o->end == MT_EXEC_END_OK && !t->rs->shutting_down) {
            actor_ready(t);
            return;
        }
        mt_hosted_actors_created(t->rs->o.actors, t->spec.task_id,
                                 t->spec.attempt, false);
    }
    t->exited = true;
    t->exit_code = 0;
    if (o->end == MT_EXEC_END_OK) {
        t->result_stored = o->stored;
        t->result_size = o->result_size;
        if (o->result_size) {
            t->result = mt_xmalloc(o->result_size);
            memcpy(t->result, o->result, o->result_size);
        }
    } else {
        t->error = mt_xstrdup(o->error[0] ? o->error : "function failed");
        t->system_failure = o->system_failure;
    }
    /* The timer is the task's only handle: closing it ends the task. */
    close_handle(t, (uv_handle_t *)&t->timer);
}

/* What a function task sees in its executor's environment on top of the
 * executor's own: the spec's env and unsets, the grant's, the task's ids
 * (unsets as bare "K" entries). */
static char **fn_env(struct mt_run *t)
{
    struct mt_kv_list own = {0};
    const struct mt_kv_list *lists[5];
    char **env;

    env_layers(t, &own, lists);
    env = mt_run_env_overlay(lists, 5);
    mt_kv_list_release(&own);
    return env;
}

/* Hand an actor's creation or method call to actors.c; a call that
 * cannot run ends FAILED (system_failure: the head says "actor died"). */
static void actor_start(struct mt_run *t)
{
    struct mt_hosted_actors *ha = t->rs->o.actors;
    const char *why = "cannot start the actor's executor";
    int rc;

    if (t->spec.kind == MT_RUN_KIND_ACTOR_CREATE) {
        t->job.req.actor_op = MT_EXEC_ACTOR_CREATE;
        rc = mt_hosted_actors_add(ha, t->spec.task_id, t->spec.attempt,
                                  &t->job);
        if (rc == -MT_EEXIST)
            why = "this actor incarnation is already hosted here";
    } else {
        t->job.req.actor_op = MT_EXEC_ACTOR_METHOD;
        rc = mt_hosted_actors_call(ha, t->spec.actor_id,
                                   t->spec.actor_attempt, t->spec.actor_seq,
                                   &t->job, &why);
    }
    if (rc < 0) {
        struct mt_exec_outcome o;

        memset(&o, 0, sizeof(o));
        o.end = MT_EXEC_END_DIED;
        o.error = why;
        o.system_failure = t->spec.kind == MT_RUN_KIND_ACTOR_METHOD;
        on_job_end(&t->job, &o);
    }
}

static void fn_start(struct mt_run *t)
{
    struct mt_exec_request *r = &t->job.req;

    r->attempt = t->spec.attempt;
    r->task_id = t->spec.task_id;
    r->function = t->spec.function;
    r->n_code_path = (uint32_t)t->spec.n_code_path;
    r->code_path = t->spec.code_path;
    t->fn_env = fn_env(t);
    for (r->n_env = 0; t->fn_env[r->n_env]; r->n_env++)
        ;
    r->env = t->fn_env;
    r->nargs = (uint32_t)t->spec.nargs;
    r->args = mt_xcalloc(t->spec.nargs + 1, sizeof(*r->args));
    for (size_t i = 0; i < t->spec.nargs; i++) {
        r->args[i].data = t->spec.args[i].data;
        r->args[i].size = (uint32_t)t->spec.args[i].size;
    }
    /* Object arguments not inlined: the executor maps them itself. */
    r->refs = mt_xcalloc(t->spec.nrefs + 1, sizeof(*r->refs));
    for (size_t i = 0; i < t->spec.nrefs; i++) {
        if (t->spec.refs[i].is_inline)
            continue;
        r->refs[r->n_refs].index = t->spec.refs[i].index;
        memcpy(r->refs[r->n_refs++].id, t->spec.refs[i].id.b, 20);
    }
    r->store_socket = (char *)t->rs->o.store_socket;
    r->store_results = t->spec.hold_result;
    t->fn = true;
    t->job.on_start = on_job_start;
    t->job.on_output = on_job_output;
    t->job.on_end = on_job_end;
    if (t->spec.kind == MT_RUN_KIND_FUNCTION)
        mt_exec_pool_submit(t->rs->o.execs, &t->job);
    else
        actor_start(t);
}

/* The object arguments are here (err 0) or cannot be had. */
static void on_args_ready(void *arg, int err, const char *why)
{
    struct mt_run *t = arg;

    t->args_job = NULL;
    if (err == 0) {
        fn_start(t);
        return;
    }
    fail_start(t, -1, mt_xstrdup(why));
}

/* A lease: the leases hold it (leases.h); the run stays open, RUNNING,
 * until they end it (mt_runs_end). */
static void lease_start(struct mt_run *t)
{
    struct mt_runs *rs = t->rs;
    char err[256] = "this worker holds no leases";
    int rc = -MT_EINVAL;

    if (rs->lease_l)
        rc = rs->lease_l->started(rs->lease_arg, &t->spec, err, sizeof(err));
    if (rc < 0) {
        fail_start(t, -1, mt_xstrdup(err));
        return;
    }
    MT_DEBUG("lease=%s attempt=%u held for owner %s", t->spec.task_id,
             t->spec.attempt, t->spec.owner_id);
    t->running_pending = true;
    rs->n_state++;
    kick(rs);
}

int mt_runs_end(struct mt_runs *rs, const char *task_id, uint32_t attempt,
                const char *why)
{
    struct mt_run *t = find(rs, task_id, attempt);

    if (!t || t->spec.kind != MT_RUN_KIND_LEASE || t->exited)
        return -MT_ENOENT;
    t->exited = true;
    t->note = mt_xstrdup(why);
    /* The timer is a lease's only handle: closing it ends the run. */
    close_handle(t, (uv_handle_t *)&t->timer);
    return 0;
}

void mt_runs_start(struct mt_runs *rs, struct mt_run_spec *s)
{
    struct mt_run *t = mt_xcalloc(1, sizeof(*t));

    t->magic = RUN_MAGIC;
    t->rs = rs;
    t->spec = *s;
    memset(s, 0, sizeof(*s));
    t->log_fd = -1;
    t->exec_fd = -1;
    t->start_ms = mt_now_mono_ms();
    mt_outbuf_init(&t->out, MT_OUTPUT_LIMIT);
    list_append(rs, t);
    uv_timer_init(rs->o.loop, &t->timer);
    t->timer.data = t;
    t->open = 1;
    if (t->spec.kind == MT_RUN_KIND_FUNCTION && t->spec.nrefs)
        t->args_job = mt_run_args_resolve(rs->o.store, rs->o.xfers,
                                          &t->spec, on_args_ready, t);
    else if (t->spec.kind == MT_RUN_KIND_LEASE)
        lease_start(t);
    else if (t->spec.kind != MT_RUN_KIND_COMMAND)
        fn_start(t);
    else
        spawn(t);
}

/* An actor that creation task (task_id, attempt) made has died after it
 * was ready: the task ends FAILED with why and system_failure set (the
 * head restarts the actor or buries it). */
static void on_actor_died(void *arg, const char *task_id, uint32_t attempt,
                          const char *why)
{
    struct mt_runs *rs = arg;
    struct mt_run *t = find(rs, task_id, attempt);

    if (!t || t->exited || rs->shutting_down)
        return;
    t->exited = true;
    t->error = mt_xstrdup(why);
    t->system_failure = true;
    close_handle(t, (uv_handle_t *)&t->timer);
}

static int stop_run(struct mt_runs *rs, struct mt_run *t, const char *task_id,
                    uint32_t attempt, bool force)
{
    if (t && t->args_job && !t->exited) {
        MT_INFO("task=%s attempt=%u stopped while fetching its arguments",
                task_id, attempt);
        mt_args_cancel_safe(t);
        fail_start(t, -1, mt_xstrdup("cancelled while fetching its object "
                                     "arguments"));
        return 0;
    }
    if (t && t->spec.kind == MT_RUN_KIND_ACTOR_CREATE && !t->exited) {
        MT_INFO("task=%s attempt=%u stop requested: killing its actor",
                task_id, attempt);
        return mt_hosted_actors_kill(rs->o.actors, task_id, attempt);
    }
    if (t && t->spec.kind == MT_RUN_KIND_ACTOR_METHOD && !t->exited)
        return mt_hosted_actors_stop_call(rs->o.actors, t->spec.actor_id,
                                          t->spec.actor_attempt, &t->job);
    if (t && t->spec.kind == MT_RUN_KIND_LEASE && !t->exited) {
        MT_INFO("lease=%s attempt=%u stop requested%s", task_id, attempt,
                force ? " (force)" : "");
        return rs->lease_l ? rs->lease_l->stop(rs->lease_arg, task_id,
                                               attempt, force)
                           : -MT_ENOENT;
    }
    if (t && t->fn && !t->exited) {
        MT_INFO("task=%s attempt=%u stop requested: %s", task_id, attempt,
                t->job.queued ? "it leaves the executor queue"
                              : "killing its executor");
        return mt_exec_pool_stop(rs->o.execs, &t->job);
    }
    if (!t || t->pid <= 0 || t->exited)
        return -MT_ENOENT;
    MT_INFO("task=%s attempt=%u stop requested%s", task_id, attempt,
            force ? " (force)" : "");
    if (force) {
        kill_run(t);
        return 0;
    }
    signal_group(t, SIGTERM);
    if (!uv_is_active((uv_handle_t *)&t->timer))
        uv_timer_start(&t->timer, on_kill_timer, KILL_AFTER_MS, 0);
    return 0;
}

int mt_runs_stop(struct mt_runs *rs, const char *task_id, uint32_t attempt,
                 bool force)
{
    struct mt_run *t = find(rs, task_id, attempt);
    int rc = stop_run(rs, t, task_id, attempt, force);

    if (rc == 0 && t)
        t->stop_asked = true;
    return rc;
}

/* ==== reporting =========================================================== */

static bool report_pending(const struct mt_runs *rs)
{
    return rs->n_state > 0 || rs->buffered > 0 || rs->n_pushed > 0;
}

uint64_t mt_runs_report_pushed(struct mt_runs *rs,
                               const struct mt_run_report *r)
{
    struct mt_run_report *q;

    mt_xgrow((void **)&rs->pushed, &rs->cap_pushed, rs->n_pushed + 1,
             sizeof(*rs->pushed));
    q = &rs->pushed[rs->n_pushed++];
    *q = *r;
    q->t = NULL;
    q->final = !r->running; /* RUNNING of a task running long, or final */
    q->actor_ready = false;
    q->error = q->error ? q->error : "";
    mt_outbuf_init(&q->out, 0);
    q->seq = ++rs->pushed_seq;
    q->owned = false;
    kick(rs);
    return q->seq;
}

/* ---- the head away: pushed reports that own what they carry ---- */

static char *dup_or_null(const char *p)
{
    return p ? mt_xstrdup(p) : NULL;
}

/* r stops borrowing: copies of everything it points to. */
static void report_own(struct mt_run_report *r)
{
    struct mt_exec_blob *args = NULL;
    char **cp = NULL;

    r->task_id = mt_xstrdup(r->task_id);
    r->error = mt_xstrdup(r->error ? r->error : "");
    r->lease_id = dup_or_null(r->lease_id);
    r->name = dup_or_null(r->name);
    r->function = dup_or_null(r->function);
    if (r->result_size) {
        uint8_t *b = mt_xmalloc(r->result_size);

        memcpy(b, r->result, r->result_size);
        r->result = b;
    }
    if (r->nargs)
        args = mt_xcalloc(r->nargs, sizeof(*args));
    for (uint32_t i = 0; i < r->nargs; i++) {
        uint8_t *b = mt_xmalloc(r->args[i].size + 1u);

        memcpy(b, r->args[i].data, r->args[i].size);
        args[i].data = b;
        args[i].size = r->args[i].size;
    }
    r->args = args;
    if (r->n_code_path)
        cp = mt_xcalloc(r->n_code_path, sizeof(*cp));
    for (uint32_t i = 0; i < r->n_code_path; i++)
        cp[i] = mt_xstrdup(r->code_path[i]);
    r->code_path = cp;
    r->owned = true;
}

/* Free what report_own copied (nothing when r borrows). */
static void report_disown(struct mt_run_report *r)
{
    if (!r->owned)
        return;
    free((char *)r->task_id);
    free((char *)r->error);
    free((char *)r->lease_id);
    free((char *)r->name);
    free((char *)r->function);
    if (r->result_size)
        free((uint8_t *)r->result);
    for (uint32_t i = 0; i < r->nargs; i++)
        free((uint8_t *)r->args[i].data);
    free((struct mt_exec_blob *)r->args);
    for (uint32_t i = 0; i < r->n_code_path; i++)
        free(r->code_path[i]);
    free(r->code_path);
    r->owned = false;
}

/* The pushed reports of the batch (they come first) are done with. */
static void batch_disown_pushed(struct mt_run_batch *b)
{
    for (size_t i = 0; i < b->n && !b->v[i].t; i++)
        report_disown(&b->v[i]);
}

void mt_runs_keep_pushed(struct mt_runs *rs, uint64_t seq)
{
    for (size_t i = 0; i < rs->n_pushed; i++)
        if (rs->pushed[i].seq <= seq && !rs->pushed[i].owned)
            report_own(&rs->pushed[i]);
    /* A call out was encoded when sent: its copies serve a retry. */
    for (size_t i = 0; i < rs->batch.n && !rs->batch.v[i].t; i++)
        if (rs->batch.v[i].seq <= seq && !rs->batch.v[i].owned)
            report_own(&rs->batch.v[i]);
}

/* Tell the leases when the head's reachability changed. */
static void tell_away(struct mt_runs *rs)
{
    bool away = !rs->head_up || rs->head_failing;

    if (away == rs->away_told || rs->shutting_down)
        return;
    rs->away_told = away;
    if (rs->lease_l && rs->lease_l->away)
        rs->lease_l->away(rs->lease_arg, away);
}

void mt_runs_set_head_up(struct mt_runs *rs, bool up)
{
    if (rs->head_up == up)
        return;
    rs->head_up = up;
    if (!up)
        MT_INFO("head %s lost: task reports wait for the node's "
                "registration", rs->o.head_addr);
    tell_away(rs);
    if (up && report_pending(rs))
        MT_INFO("node registered again: sending the task reports kept "
                "meanwhile");
    kick(rs);
}

/* ---- what the node holds ---- */

static size_t visit_pushed(const struct mt_run_report *v, size_t n,
                           mt_held_fn fn, void *arg)
{
    struct mt_held_task h;
    size_t k = 0;

    for (size_t i = 0; i < n && !v[i].t; i++) {
        if (!v[i].final) /* RUNNING: the leases list it */
            continue;
        h.task_id = v[i].task_id;
        h.attempt = v[i].attempt;
        h.lease_id = v[i].lease_id;
        fn(arg, &h);
        k++;
    }
    return k;
}

size_t mt_runs_visit_held(const struct mt_runs *rs, mt_held_fn fn, void *arg)
{
    struct mt_held_task h = {NULL, 0, NULL};
    size_t k = 0;

    for (const struct mt_run *t = rs->head; t; t = t->next) {
        if (t->stop_asked)
            continue;
        h.task_id = t->spec.task_id;
        h.attempt = t->spec.attempt;
        fn(arg, &h);
        k++;
    }
    k += visit_pushed(rs->batch.v, rs->batch.n, fn, arg);
    return k + visit_pushed(rs->pushed, rs->n_pushed, fn, arg);
}

void mt_runs_flush_pushed(struct mt_runs *rs)
{
    if (rs->n_pushed == 0)
        return;
    rs->pushed_now = true;
    kick(rs);
}

static void batch_add(struct mt_run_batch *b, struct mt_run *t,
                      struct mt_run_report **out)
{
    struct mt_run_report *r;

    mt_xgrow((void **)&b->v, &b->cap, b->n + 1, sizeof(*b->v));
    r = &b->v[b->n++];
    memset(r, 0, sizeof(*r));
    r->t = t;
    r->task_id = t->spec.task_id;
    r->attempt = t->spec.attempt;
    r->error = "";
    mt_outbuf_init(&r->out, 0);
    *out = r;
}

static void batch_clear(struct mt_run_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        mt_outbuf_release(&b->v[i].out);
    b->n = 0;
}

/* Hand t's pending updates to the batch, output up to *budget bytes; its
 * final update only when its result fits in *rbudget (or the call carries
 * no result yet), so a call stays well under the rpc message limit. */
static bool take_task(struct mt_runs *rs, struct mt_run *t, size_t *budget,
                      size_t *rbudget)
{
    struct mt_run_report *r = NULL;
    size_t moved = 0;

    if (!t->running_pending && !t->final_pending &&
        !t->actor_ready_pending && mt_outbuf_empty(&t->out))
        return false;
    batch_add(&rs->batch, t, &r);
    if (t->running_pending) {
        r->running = true;
        t->running_pending = false;
        rs->n_state--;
    }
    if (t->actor_ready_pending) {
        r->actor_ready = true;
        r->actor_pid = t->actor_pid;
        t->actor_ready_pending = false;
        rs->n_state--;
    }
    moved = mt_outbuf_take(&t->out, *budget, &r->out);
    *budget -= moved;
    rs->buffered -= moved;
    if (t->final_pending && mt_outbuf_empty(&t->out) &&
        (t->result_size <= *rbudget || *rbudget == MAX_CALL_RESULTS)) {
        *rbudget -= t->result_size < *rbudget ? t->result_size : *rbudget;
        r->final = true;
        r->end = t->error ? MT_RUN_END_FAILED : MT_RUN_END_FINISHED;
        r->exit_code = t->exit_code;
        r->error = t->error ? t->error : t->note ? t->note : "";
        r->result = t->result;
        r->result_size = t->result_size;
        r->result_stored = t->result_stored;
        r->system_failure = t->system_failure;
        t->final_pending = false;
        t->final_sent = true;
        rs->n_state--;
        rs->n_final--;
    }
    return !mt_outbuf_empty(&r->out);
}

/* Hand the oldest pushed tasks' reports to the batch (they go first),
 * while their results fit in *rbudget (at least one). */
static void take_pushed(struct mt_runs *rs, size_t *rbudget)
{
    size_t k = 0;

    while (k < rs->n_pushed && k < MAX_CALL_PUSHED) {
        const struct mt_run_report *p = &rs->pushed[k];

        if (p->result_size > *rbudget && *rbudget != MAX_CALL_RESULTS)
            break;
        *rbudget -= p->result_size < *rbudget ? p->result_size : *rbudget;
        mt_xgrow((void **)&rs->batch.v, &rs->batch.cap, rs->batch.n + 1,
                 sizeof(*rs->batch.v));
        rs->batch.v[rs->batch.n++] = *p;
        k++;
    }
    rs->n_pushed -= k;
    if (k && rs->n_pushed) /* rs->pushed may be NULL with nothing in it */
        memmove(rs->pushed, rs->pushed + k,
                rs->n_pushed * sizeof(*rs->pushed));
    if (rs->n_pushed == 0)
        rs->pushed_now = false;
}

/* A failed call's pushed reports (the first k of the batch) go back in
 * front of those queued since, in their order. */
static void put_back_pushed(struct mt_runs *rs, size_t k)
{
    if (k == 0)
        return;
    mt_xgrow((void **)&rs->pushed, &rs->cap_pushed, rs->n_pushed + k,
             sizeof(*rs->pushed));
    memmove(rs->pushed + k, rs->pushed, rs->n_pushed * sizeof(*rs->pushed));
    memcpy(rs->pushed, rs->batch.v, k * sizeof(*rs->pushed));
    rs->n_pushed += k;
    rs->pushed_now = true; /* someone may wait for them */
}

/* Undo take_task (and take_pushed) for every task of a failed call. */
static void put_back(struct mt_runs *rs)
{
    size_t k = 0;

    while (k < rs->batch.n && !rs->batch.v[k].t)
        k++;
    put_back_pushed(rs, k);
    for (size_t i = k; i < rs->batch.n; i++) {
        struct mt_run_report *r = &rs->batch.v[i];
        struct mt_run *t = r->t;
        size_t before = t->out.bytes;

        if (r->running) {
            t->running_pending = true;
            rs->n_state++;
        }
        if (r->actor_ready) {
            t->actor_ready_pending = true;
            rs->n_state++;
        }
        mt_outbuf_unshift(&t->out, &r->out);
        rs->buffered = rs->buffered - before + t->out.bytes;
        if (r->final) {
            t->final_pending = true;
            t->final_sent = false;
            rs->n_state++;
            rs->n_final++;
        }
    }
    batch_clear(&rs->batch);
}

static void on_report_timer(uv_timer_t *tm);

static void retry_later(struct mt_runs *rs, const char *why)
{
    if (!rs->head_failing)
        MT_WARN("cannot report tasks to head %s: %s; keeping updates and "
                "retrying", rs->o.head_addr, why);
    rs->head_failing = true;
    tell_away(rs);
    rs->backoff_ms = rs->backoff_ms ? rs->backoff_ms * 2 : RETRY_MIN_MS;
    if (rs->backoff_ms > RETRY_MAX_MS)
        rs->backoff_ms = RETRY_MAX_MS;
    rs->retrying = true;
    uv_timer_start(&rs->timer, on_report_timer, (uint64_t)rs->backoff_ms, 0);
}

/* Build one call from what is pending and send it. */
static void flush(struct mt_runs *rs)
{
    struct mt_run *t, *next, *rotate = NULL, *rotate_tail = NULL;
    size_t budget = MAX_CALL_OUTPUT, rbudget = MAX_CALL_RESULTS;
    int rc;

    uv_timer_stop(&rs->timer);
    take_pushed(rs, &rbudget);
    for (t = rs->head; t; t = next) {
        next = t->next;
        if (!take_task(rs, t, &budget, &rbudget))
            continue;
        /* Its output went out: move it behind the others (fairness). */
        list_remove(rs, t);
        if (rotate_tail)
            rotate_tail->next = t;
        else
            rotate = t;
        t->prev = rotate_tail;
        rotate_tail = t;
    }
    for (t = rotate; t; t = next) {
        next = t->next;
        list_append(rs, t);
    }
    if (rs->batch.n == 0)
        return;
    rc = rs->send ? rs->send(rs->send_arg, &rs->batch) : -MT_ECLOSED;
    if (rc < 0) {
        put_back(rs);
        retry_later(rs, mt_strerror(rc));
        return;
    }
    rs->in_flight = true;
    rs->last_send_ms = mt_now_mono_ms();
}

static void on_report_timer(uv_timer_t *tm)
{
    struct mt_runs *rs = tm->data;

    rs->retrying = false;
    if (!rs->shutting_down && !rs->in_flight && rs->head_up &&
        report_pending(rs))
        flush(rs);
}

/* Something new is pending: send now, or when the window closes. */
static void kick(struct mt_runs *rs)
{
    int64_t wait;

    if (rs->shutting_down || rs->in_flight || rs->retrying ||
        !rs->head_up || !report_pending(rs))
        return;
    if (rs->n_final > 0 || rs->buffered >= FLUSH_BYTES ||
        (rs->n_pushed > 0 && rs->pushed_now) ||
        rs->n_pushed >= PUSHED_FLUSH) {
        flush(rs);
        return;
    }
    if (uv_is_active((uv_handle_t *)&rs->timer))
        return;
    wait = rs->last_send_ms + FLUSH_MS - mt_now_mono_ms();
    if (rs->n_state > 0 && wait > RUNNING_MS)
        wait = RUNNING_MS;
    if (wait <= 0) {
        flush(rs);
        return;
    }
    uv_timer_start(&rs->timer, on_report_timer, (uint64_t)wait, 0);
}

void mt_runs_report_ended(struct mt_runs *rs, int err, const char *msg)
{
    uint64_t acked = 0;

    rs->in_flight = false;
    if (rs->shutting_down) {
        batch_disown_pushed(&rs->batch);
        batch_clear(&rs->batch);
        return;
    }
    if (err) {
        put_back(rs);
        retry_later(rs, msg);
        return;
    }
    if (rs->head_failing)
        MT_INFO("reporting tasks to head %s again", rs->o.head_addr);
    rs->head_failing = false;
    rs->backoff_ms = 0;
    for (size_t i = 0; i < rs->batch.n; i++) {
        if (!rs->batch.v[i].t)
            acked = rs->batch.v[i].seq; /* in order: the last is highest */
        else if (rs->batch.v[i].final)
            task_free(rs->batch.v[i].t);
    }
    batch_disown_pushed(&rs->batch);
    batch_clear(&rs->batch);
    tell_away(rs);
    if (acked && rs->lease_l)
        rs->lease_l->acked(rs->lease_arg, acked);
    kick(rs);
}

/* ==== shutdown ============================================================ */

void mt_runs_shutdown(struct mt_runs *rs)
{
    if (rs->shutting_down)
        return;
    rs->shutting_down = true;
    uv_timer_stop(&rs->timer);
    for (struct mt_run *t = rs->head; t; t = t->next) {
        mt_args_cancel_safe(t);
        if (t->pid > 0 && !t->exited)
            MT_INFO("task=%s attempt=%u killed: worker stopping",
                    t->spec.task_id, t->spec.attempt);
        if (t->pid > 0)
            kill_run(t);
    }
}

static void on_timer_closed(uv_handle_t *h)
{
    struct mt_runs *rs = h->data;

    rs->timer_open = false;
    check_closed(rs);
}

static void check_closed(struct mt_runs *rs)
{
    void (*done)(void *) = rs->closed;

    if (!done || rs->timer_open)
        return;
    for (struct mt_run *t = rs->head; t; t = t->next)
        if (t->open)
            return;
    rs->closed = NULL;
    done(rs->closed_arg);
}

void mt_runs_close(struct mt_runs *rs, void (*done)(void *), void *arg)
{
    mt_runs_shutdown(rs);
    rs->closed = done;
    rs->closed_arg = arg;
    for (struct mt_run *t = rs->head; t; t = t->next) {
        if (!t->open)
            continue;
        if (t->proc_init)
            close_handle(t, (uv_handle_t *)&t->proc);
        close_pipe(t, 0);
        close_pipe(t, 1);
        close_handle(t, (uv_handle_t *)&t->timer);
    }
    if (!uv_is_closing((uv_handle_t *)&rs->timer))
        uv_close((uv_handle_t *)&rs->timer, on_timer_closed);
}

void mt_runs_destroy(struct mt_runs *rs)
{
    if (!rs)
        return;
    batch_disown_pushed(&rs->batch);
    batch_clear(&rs->batch);
    free(rs->batch.v);
    for (size_t i = 0; i < rs->n_pushed; i++)
        report_disown(&rs->pushed[i]);
    free(rs->pushed);
    while (rs->head)
        task_free(rs->head);
    free(rs->log_dir);
    free(rs);
}
