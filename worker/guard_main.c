/* SPDX-License-Identifier: Apache-2.0 */
/*
 * guard_main.c -- manta-guard: starts one command task for a worker and
 * makes sure nothing the task started outlives the task or the worker
 * (the protocol and the rules: guard.h).
 *
 * Usage: manta-guard WORKER_PID PROGRAM [ARG...], spawned by the worker's
 * loop thread (PR_SET_PDEATHSIG fires when the thread that forked us
 * exits, and that thread lives as long as the worker).
 *
 * DESIGN: the guard is the task's process-group leader and a child
 * subreaper, so every descendant of the task is either a descendant of
 * one of the guard's children or, once its parent is gone, a child of the
 * guard itself: "no children left" means "nothing of the task left", and
 * killing the guard's children over and over until none remain (each
 * death hands the victim's children to the guard) kills the whole tree,
 * even processes that left the group with setsid() or setpgid(). The
 * guard blocks the signals it handles and takes them with sigtimedwait(),
 * so a signal cannot slip in between a check and a wait; the task gets
 * back the empty mask and default dispositions libuv gave the guard.
 * Before forking the guard sets its death signal and checks that its
 * parent is still the worker, so a worker that died first never gets a
 * task started for it. The task itself dies with the guard
 * (PR_SET_PDEATHSIG SIGKILL), should the guard be killed.
 *
 * Deliberately small: libc and common/proc.c; single-threaded.
 */
#include "worker/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/proc.h"

#define KILL_MS 2000            /* at most this long killing a tree */

static pid_t worker;            /* our parent, the worker */
static pid_t task;              /* the task's main process */
static sigset_t handled;        /* blocked; taken with sigtimedwait */

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timespec ms_ts(int64_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    return ts;
}

/* ==== killing the tree ==================================================== */

static void kill_child(const struct mt_proc_stat *st, void *arg)
{
    int *n = arg;

    if (st->ppid == getpid() && st->state != 'Z' && st->state != 'X' &&
        kill(st->pid, SIGKILL) == 0)
        (*n)++;
}

/* Reap what has exited. RET true when no child is left at all. */
static bool reap(int *status, bool *task_done)
{
    int st;
    pid_t p;

    while ((p = waitpid(-1, &st, WNOHANG)) > 0)
        if (p == task && !*task_done) {
            *status = st;
            *task_done = true;
        }
    return p < 0 && errno == ECHILD;
}

/* Kill every descendant: the children, then the orphans they leave us,
 * until none is left (or KILL_MS passed: a process we may not signal). */
static void kill_tree(int *status, bool *task_done)
{
    int64_t end = now_ms() + KILL_MS;
    sigset_t chld;
    struct timespec ts = ms_ts(10);
    int n;

    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    while (!reap(status, task_done) && now_ms() < end) {
        n = 0;
        mt_proc_scan(kill_child, &n);
        sigtimedwait(&chld, NULL, &ts);
    }
}

/* The worker is gone or wants the task dead: kill everything, the guard
 * last (the worker sees the guard die by SIGKILL). */
static void __attribute__((noreturn)) kill_all(void)
{
    int status = 0;
    bool done = true;

    kill_tree(&status, &done);
    kill(0, SIGKILL);
    _exit(128 + SIGKILL);
}

/* ==== relaying the task's end ============================================= */

static void __attribute__((noreturn)) relay(int status)
{
    struct rlimit no_core = {0, 0};
    sigset_t one;
    int sig;

    if (WIFEXITED(status))
        _exit(WEXITSTATUS(status));
    sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    /* Die of the same signal, without a core file of the guard. */
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    raise(sig);
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    _exit(128 + sig);
}

/* Wait for the task and its descendants; never returns. */
static void __attribute__((noreturn)) supervise(void)
{
    int64_t deadline = 0, wait;
    bool done = false, was_done, none_left;
    int status = 0, sig;
    struct timespec ts;
    siginfo_t si;

    for (;;) {
        wait = done ? deadline - now_ms() : MT_GUARD_POLL_MS;
        ts = ms_ts(wait > 0 ? wait : 0);
        memset(&si, 0, sizeof(si));
        sig = sigtimedwait(&handled, &si, &ts);
        if (getppid() != worker)
            kill_all();
        if (sig == MT_GUARD_KILL_SIG && si.si_code == SI_USER &&
            si.si_pid == worker)
            kill_all();
        was_done = done;
        none_left = reap(&status, &done);
        if (done && !was_done)
            deadline = now_ms() + MT_GUARD_GRACE_MS;
        if (done && (none_left || now_ms() >= deadline)) {
            kill_tree(&status, &done);
            relay(status);
        }
    }
}

/* ==== starting the task =================================================== */

static void report(int err)
{
    ssize_t n;

    do
        n = write(MT_GUARD_STATUS_FD, &err, sizeof(err));
    while (n < 0 && errno == EINTR);
}

/* In the forked child: become the task. */
static void __attribute__((noreturn)) run_task(char **argv,
                                               const sigset_t *mask,
                                               pid_t guard)
{
    int err;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != guard)
        _exit(128 + SIGKILL);
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvp(argv[0], argv);
    err = errno;
    report(err);
    _exit(err == ENOENT ? 127 : 126);
}

/* Nothing of the guard holds the task's stdio (or the status pipe). */
static void let_go_of_stdio(void)
{
    int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

    close(MT_GUARD_STATUS_FD);
    if (fd < 0)
        return;
    for (int i = 0; i < 3; i++)
        dup2(fd, i);
    if (fd > 2)
        close(fd);
}

static void handle_signals(sigset_t *old)
{
    static const int sigs[] = {SIGCHLD, SIGTERM, SIGINT,  SIGHUP,
                               SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE,
                               SIGALRM, SIGTSTP, SIGTTIN, SIGTTOU};

    sigemptyset(&handled);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaddset(&handled, sigs[i]);
    sigprocmask(SIG_BLOCK, &handled, old);
}

int main(int argc, char **argv)
{
    sigset_t old;
    pid_t self = getpid();
    char *end;
    long v;

    v = argc >= 3 ? strtol(argv[1], &end, 10) : 0;
    if (argc < 3 || *end || v <= 1 || v > 0x7fffffff) {
        fprintf(stderr, "usage: manta-guard WORKER_PID PROGRAM [ARG...]\n"
                        "(started by manta-worker for each command task)\n");
        return 2;
    }
    worker = (pid_t)v;
    handle_signals(&old);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_PDEATHSIG, MT_GUARD_DEATH_SIG);
    if (getppid() != worker)
        return 1; /* the worker died before we could watch it */
    fcntl(MT_GUARD_STATUS_FD, F_SETFD, FD_CLOEXEC);
    task = fork();
    if (task < 0) {
        report(errno);
        return 126;
    }
    if (task == 0)
        run_task(argv + 2, &old, self);
    let_go_of_stdio();
    supervise();
}
