/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_proc.c -- start/stop manta-store and client children for the
 * multi-process tests. Every wait is bounded; every child is reaped.
 */
#include "store_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MT_STORE_BIN
#error "MT_STORE_BIN must name the manta-store binary"
#endif

uint64_t test_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

bool wait_until(bool (*pred)(void *), void *arg, int timeout_ms)
{
    uint64_t end = test_now_ms() + (uint64_t)timeout_ms;
    struct timespec ms = {0, 1000000};

    while (!pred(arg)) {
        if (test_now_ms() >= end)
            return false;
        nanosleep(&ms, NULL);
    }
    return true;
}

/* Read one line from fd within timeout_ms. */
static int read_line(int fd, char *buf, size_t len, int timeout_ms)
{
    uint64_t end = test_now_ms() + (uint64_t)timeout_ms;
    size_t got = 0;

    while (got + 1 < len) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int left = (int)(end - test_now_ms());
        ssize_t n;

        if (left <= 0 || poll(&pfd, 1, left) <= 0)
            return -1;
        n = read(fd, buf + got, 1);
        if (n <= 0)
            return -1;
        if (buf[got] == '\n')
            break;
        got++;
    }
    buf[got] = '\0';
    return 0;
}

static void exec_store(struct store_proc *p, uint64_t mem, int out)
{
    char memarg[32];

    snprintf(memarg, sizeof(memarg), "%llu", (unsigned long long)mem);
    dup2(out, STDOUT_FILENO);
    if (p->spill[0])
        execl(MT_STORE_BIN, "manta-store", "--socket", p->sock, "--memory",
              memarg, "--spill-dir", p->spill, "--log-level", "error",
              (char *)NULL);
    else
        execl(MT_STORE_BIN, "manta-store", "--socket", p->sock, "--memory",
              memarg, "--log-level", "error", (char *)NULL);
    _exit(127);
}

int store_proc_start(struct store_proc *p, uint64_t mem, bool spill)
{
    char line[256];
    int fds[2];

    memset(p, 0, sizeof(*p));
    snprintf(p->dir, sizeof(p->dir), "/tmp/mt-objstore-XXXXXX");
    if (!mkdtemp(p->dir) || pipe(fds) < 0)
        return -1;
    snprintf(p->sock, sizeof(p->sock), "%s/store.sock", p->dir);
    if (spill)
        snprintf(p->spill, sizeof(p->spill), "%s/spill", p->dir);
    p->pid = fork();
    if (p->pid == 0) {
        close(fds[0]);
        exec_store(p, mem, fds[1]);
    }
    close(fds[1]);
    if (p->pid < 0 || read_line(fds[0], line, sizeof(line), 10000) < 0 ||
        strncmp(line, "manta-store ready", 17) != 0) {
        close(fds[0]);
        if (p->pid > 0)
            store_proc_stop(p);
        return -1;
    }
    close(fds[0]);
    return 0;
}

int store_proc_stop(struct store_proc *p)
{
    char cmd[128];
    int rc = 0;

    if (p->pid > 0) {
        kill(p->pid, SIGTERM);
        rc = child_wait(p->pid, 10000);
        p->pid = 0;
    }
    if (p->spill[0])
        rmdir(p->spill);
    unlink(p->sock);
    if (p->dir[0] && rmdir(p->dir) < 0) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p->dir);
        if (system(cmd) != 0)
            rc = rc ? rc : -1;
    }
    return rc;
}

pid_t child_start(int (*fn)(void *), void *arg)
{
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0)
        _exit(fn(arg));
    return pid;
}

static int status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + WTERMSIG(st);
}

int child_wait(pid_t pid, int timeout_ms)
{
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    struct pollfd q = {pfd, POLLIN, 0};
    int st = 0;

    if (pfd >= 0 && poll(&q, 1, timeout_ms) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        close(pfd);
        return -1;
    }
    if (pfd >= 0)
        close(pfd);
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    return status_code(st);
}
