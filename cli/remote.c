/* SPDX-License-Identifier: Apache-2.0 */
/*
 * remote.c -- `manta up` and `manta down`'s arguments and processes (see
 * remote.h).
 *
 * The jobs run side by side under one poll loop: it reads every open
 * stdout and stderr pipe, reaps the jobs that exited (reading what their
 * pipes still hold) and kills the process group of any job still running
 * at the deadline. A job's pipes may stay open after it exits (something
 * it started kept them): they are drained without waiting and closed.
 */
#include "cli/remote.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/conn.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/sys.h"

extern char **environ;

#define MAX_STDERR_LINES 30 /* of a failed job, printed */

/* ---- arguments ----------------------------------------------------------- */

int mt_remote_args(const char *cmd, int argc, char **argv,
                   void (*usage)(FILE *f), struct mt_remote_opts *o,
                   struct mt_cluster *c)
{
    static const struct option opts[] = {
        {"dry-run", no_argument, NULL, 'n'},
        {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char err[512];
    int ch;

    memset(o, 0, sizeof(*o));
    memset(c, 0, sizeof(*c));
    o->timeout_s = MT_REMOTE_DEFAULT_TIMEOUT_S;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (ch == 'n') {
            o->dry_run = true;
        } else if (ch == 't') {
            if (!mt_parse_int(optarg, 1, 3600, &o->timeout_s))
                return mt_cli_usage_error(cmd, usage, "invalid value for "
                                          "--timeout: '%s' (1 to 3600 s)",
                                          optarg);
        } else if (ch == 'h') {
            usage(stdout);
            return -1;
        } else {
            return mt_cli_usage_error(cmd, usage, "unknown or incomplete "
                                      "option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return mt_cli_usage_error(cmd, usage, optind < argc
                                  ? "unexpected argument '%s'"
                                  : "expected the cluster file%s",
                                  optind < argc ? argv[optind + 1] : "");
    o->file = argv[optind];
    if (mt_cluster_load(o->file, c, err, sizeof(err)) < 0) {
        fprintf(stderr, "manta %s: %s\n", cmd, err);
        return MT_EXIT_USAGE;
    }
    return 0;
}

/* ---- starting a job ------------------------------------------------------ */

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* posix_spawnp with the pipes as 0, 1, 2, its own process group and
 * default signals (this process ignores SIGPIPE). RET 0 or an errno. */
static int spawn(struct mt_remote_job *j, int in, int out, int err)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, dfl;
    int rc;

    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGTERM);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in, 0);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    posix_spawn_file_actions_adddup2(&fa, err, 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigdefault(&at, &dfl);
    posix_spawnattr_setsigmask(&at, &none);
    rc = posix_spawnp(&j->pid, j->argv[0], &fa, &at, j->argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/* Start one job: its pipes, the process, its input. */
static void start(struct mt_remote_job *j)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    int rc = 0;

    j->status = -1;
    j->pid = 0;
    j->fd_out = j->fd_err = -1;
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
        pipe2(err, O_CLOEXEC) < 0)
        rc = errno;
    else
        rc = spawn(j, in[0], out[1], err[1]);
    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&err[1]);
    if (rc != 0) {
        mt_strbuf_addf(&j->err, "cannot run %s: %s\n", j->argv[0],
                       strerror(rc));
        j->pid = 0;
        close_fd(&in[1]);
        close_fd(&out[0]);
        close_fd(&err[0]);
        return;
    }
    /* Small input fits the pipe: this never blocks. A job that exits
     * without reading it gets EPIPE here, which is its own failure. */
    if (j->input)
        mt_sys_write_all(in[1], j->input, strlen(j->input));
    close_fd(&in[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    j->fd_out = out[0];
    j->fd_err = err[0];
}

/* ---- the loop ------------------------------------------------------------ */

/* Read what fd holds now into sb (beyond the cap, read and drop); close
 * it at end of file. */
static void drain(int *fd, struct mt_strbuf *sb)
{
    char buf[4096];
    ssize_t n;

    while (*fd >= 0) {
        n = read(*fd, buf, sizeof(buf));
        if (n > 0 && sb->len < MT_REMOTE_OUTPUT_MAX)
            mt_strbuf_add(sb, buf, (size_t)n);
        else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            close_fd(fd);
        else if (n < 0 && errno == EAGAIN)
            return;
    }
}

static void reaped(struct mt_remote_job *j, int ws)
{
    j->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    j->pid = 0;
    drain(&j->fd_out, &j->out);
    drain(&j->fd_err, &j->err);
    close_fd(&j->fd_out);
    close_fd(&j->fd_err);
}

/* One round: wait for output (at most wait_ms), read it, reap. RET jobs
 * still running. */
static size_t step(struct mt_remote_job *jobs, size_t n, int wait_ms)
{
    struct pollfd *p = mt_xcalloc(2 * n + 1, sizeof(*p));
    size_t np = 0, running = 0;
    int ws;

    for (size_t i = 0; i < n; i++) {
        if (jobs[i].fd_out >= 0)
            p[np++] = (struct pollfd){jobs[i].fd_out, POLLIN, 0};
        if (jobs[i].fd_err >= 0)
            p[np++] = (struct pollfd){jobs[i].fd_err, POLLIN, 0};
    }
    poll(p, np, wait_ms);
    free(p);
    for (size_t i = 0; i < n; i++) {
        struct mt_remote_job *j = &jobs[i];

        drain(&j->fd_out, &j->out);
        drain(&j->fd_err, &j->err);
        if (j->pid > 0 && waitpid(j->pid, &ws, WNOHANG) == j->pid)
            reaped(j, ws);
        running += j->pid > 0;
    }
    return running;
}

void mt_remote_run(struct mt_remote_job *jobs, size_t n, int timeout_ms)
{
    int64_t end = mt_now_mono_ms() + timeout_ms;
    int ws;

    fflush(NULL);
    for (size_t i = 0; i < n; i++)
        start(&jobs[i]);
    while (step(jobs, n, 50) > 0 && mt_now_mono_ms() < end)
        ;
    for (size_t i = 0; i < n; i++) {
        struct mt_remote_job *j = &jobs[i];

        if (j->pid <= 0)
            continue;
        kill(-j->pid, SIGKILL);
        kill(j->pid, SIGKILL);
        while (waitpid(j->pid, &ws, 0) < 0 && errno == EINTR)
            ;
        j->timed_out = true;
        reaped(j, ws);
    }
}

/* ---- results ------------------------------------------------------------- */

bool mt_remote_ok(const struct mt_remote_job *j)
{
    return j->status == 0 && !j->timed_out;
}

void mt_remote_job_release(struct mt_remote_job *j)
{
    mt_strbuf_release(&j->out);
    mt_strbuf_release(&j->err);
}

void mt_remote_print_failure(const struct mt_remote_job *j, long timeout_s,
                             FILE *f)
{
    const char *s = mt_strbuf_str(&j->err);

    if (j->timed_out)
        fprintf(f, "timed out after %lds (killed; the host may be half "
                "started: `manta down` clears it)\n", timeout_s);
    else if (j->status < 0)
        fprintf(f, "could not start\n");
    else if (j->status == 255)
        fprintf(f, "exit 255 (ssh's own failure: host unreachable, or no "
                "login without a password?)\n");
    else
        fprintf(f, "exit %d\n", j->status);
    for (int lines = 0; *s; lines++) {
        size_t len = strcspn(s, "\n");

        /* A usage error's first line says it all; a failed start ends
         * with its log's tail, which is short. */
        if (strncmp(s, "usage: ", 7) == 0 || lines == MAX_STDERR_LINES) {
            fprintf(f, "    | (%s left out)\n", lines == MAX_STDERR_LINES
                    ? "more lines" : "usage text");
            break;
        }
        fprintf(f, "    | %.*s\n", (int)len, s);
        s += len + (s[len] == '\n');
    }
}

void mt_remote_print_argv(char *const argv[], FILE *f)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    size_t n = 0;

    while (argv[n])
        n++;
    mt_strbuf_add_sh_words(&sb, (const char *const *)argv, n);
    fprintf(f, "%s\n", mt_strbuf_str(&sb));
    mt_strbuf_release(&sb);
}

char *mt_remote_line(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);

    for (const char *s = text; *s; s += strcspn(s, "\n"), s += *s == '\n')
        if (strncmp(s, prefix, n) == 0)
            return mt_xasprintf("%.*s", (int)strcspn(s + n, "\n"), s + n);
    return NULL;
}
