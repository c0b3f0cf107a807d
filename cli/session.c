/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session.c -- session dir files and daemon processes (see session.h).
 *
 * Daemons are started with a double fork so they are never our zombies and
 * keep running after `manta` exits; the grandchild's pid travels back over a
 * pipe. Before signalling a pid, /proc/<pid>/cmdline is checked to make sure
 * it still is the manta program we started.
 */
#include "cli/session.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/sys.h"

char *mt_session_path(const char *dir, const char *name)
{
    return mt_xasprintf("%s/%s", dir, name);
}

bool mt_session_pid_alive(pid_t pid)
{
    char path[64], *stat, *p;
    bool alive;

    if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
        return false;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    stat = mt_sys_read_file(path);
    if (!stat)
        return false;
    /* The state letter follows the ")" closing the command name. */
    p = strrchr(stat, ')');
    alive = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
    free(stat);
    return alive;
}

static bool is_program(pid_t pid, const char *name)
{
    char path[64], buf[512];
    ssize_t n;
    int fd;
    bool ok;

    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* argv[0] only: its basename must be manta-<name>. */
    {
        const char *base = strrchr(buf, '/');
        char want[64];
        snprintf(want, sizeof(want), "manta-%s", name);
        ok = strcmp(base ? base + 1 : buf, want) == 0;
    }
    return ok;
}

pid_t mt_session_read_pid(const char *dir, const char *name)
{
    char *file = mt_xasprintf("%s/%s.pid", dir, name);
    char *txt = mt_sys_read_file(file);
    long pid = txt ? strtol(txt, NULL, 10) : 0;

    free(file);
    free(txt);
    if (pid <= 0 || pid > INT_MAX || !mt_session_pid_alive((pid_t)pid) ||
        !is_program((pid_t)pid, name))
        return 0;
    return (pid_t)pid;
}

/* The program next to the running binary, else the bare name for PATH. */
static char *find_program(const char *prog)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    char *cand;

    if (n > 0) {
        self[n] = '\0';
        cand = mt_xasprintf("%s/%s", dirname(self), prog);
        if (access(cand, X_OK) == 0)
            return cand;
        free(cand);
    }
    return mt_xstrdup(prog);
}

static void exec_daemon(const char *path, char *const argv[],
                        const char *log_path)
{
    int in = open("/dev/null", O_RDONLY);
    int out = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0600);

    if (in < 0 || out < 0)
        _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    signal(SIGPIPE, SIG_DFL);
    /* `manta start --block` blocks SIGTERM and SIGINT to wait for them;
     * the daemon must not inherit that mask, or `manta stop` cannot stop
     * it gracefully. */
    {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
    }
    if (strchr(path, '/'))
        execv(path, argv);
    else
        execvp(path, argv);
    fprintf(stderr, "manta: cannot run %s: %s\n", path, strerror(errno));
    _exit(127);
}

pid_t mt_session_spawn(const char *dir, const char *name, char *const argv[],
                       const char *log_path)
{
    char *path = find_program(argv[0]), *pidfile, pidtxt[32];
    int fds[2], status, rc;
    pid_t child, grandchild = -1;

    if (pipe2(fds, O_CLOEXEC) < 0) {
        free(path);
        return -errno;
    }
    fflush(NULL);
    child = fork();
    if (child < 0) {
        rc = -errno;
        goto out;
    }
    if (child == 0) {
        pid_t g;
        setsid();
        g = fork();
        if (g == 0) {
            close(fds[0]);
            exec_daemon(path, argv, log_path);
        }
        if (write(fds[1], &g, sizeof(g)) != sizeof(g))
            _exit(1);
        _exit(g > 0 ? 0 : 1);
    }
    close(fds[1]);
    fds[1] = -1;
    if (read(fds[0], &grandchild, sizeof(grandchild)) != sizeof(grandchild))
        grandchild = -1;
    waitpid(child, &status, 0);
    rc = grandchild > 0 ? 0 : -ECHILD;
    if (rc == 0) {
        pidfile = mt_xasprintf("%s/%s.pid", dir, name);
        snprintf(pidtxt, sizeof(pidtxt), "%d\n", (int)grandchild);
        rc = mt_sys_write_file_atomic(pidfile, pidtxt);
        free(pidfile);
    }
out:
    close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    free(path);
    return rc < 0 ? rc : grandchild;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

char *mt_session_wait_file(const char *dir, const char *file, pid_t pid,
                           int timeout_ms)
{
    char *path = mt_session_path(dir, file), *txt = NULL;
    int64_t end = mt_now_mono_ms() + timeout_ms;

    while (mt_now_mono_ms() < end) {
        txt = mt_sys_read_file(path);
        if (txt)
            break;
        if (pid > 0 && !mt_session_pid_alive(pid))
            break;
        sleep_ms(20);
    }
    free(path);
    if (txt) {
        size_t n = strlen(txt);
        while (n && (txt[n - 1] == '\n' || txt[n - 1] == ' '))
            txt[--n] = '\0';
    }
    return txt;
}

void mt_session_print_log_tail(const char *log_path, int lines)
{
    char *txt = mt_sys_read_file(log_path), *p;
    int seen = 0;

    if (!txt)
        return;
    p = txt + strlen(txt);
    while (p > txt && seen <= lines)
        if (*--p == '\n')
            seen++;
    fprintf(stderr, "--- last lines of %s:\n%s", log_path,
            p == txt ? p : p + 1);
    free(txt);
}

char *mt_session_exit_reason(const char *log_path, const char *prog)
{
    char *txt = mt_sys_read_file(log_path), *line, *save = NULL;
    char *found = NULL;
    size_t n = strlen(prog);

    if (!txt)
        return NULL;
    for (line = strtok_r(txt, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        if (strncmp(line, prog, n) == 0 && line[n] == ':' && line[n + 1])
            found = line;
    found = found ? mt_xstrdup(found) : NULL;
    free(txt);
    return found;
}

char *mt_session_head_addr(const char *dir)
{
    char *path = mt_session_path(dir, "head.addr");
    char *addr = mt_sys_read_file(path);

    free(path);
    if (addr)
        addr[strcspn(addr, "\r\n ")] = '\0';
    if (addr && !*addr)
        MT_FREE(addr);
    return addr;
}
