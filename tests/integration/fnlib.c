/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fnlib.c -- libmt_test_fnlib.so: task functions for test_functions.py,
 * written against the public ABI in manta/function.h only. Built with
 * hidden visibility, so only the MT_FUNCTION symbols are exported.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <unistd.h>

#include "manta/function.h"

/* Its first argument back (empty without one). */
MT_FUNCTION(echo)
{
    if (call->nargs == 0)
        return 0;
    return mt_fn_result(call, call->args[0].data, call->args[0].size);
}

/* Two int64 arguments (host byte order) -> their sum. */
MT_FUNCTION(add)
{
    int64_t a, b, sum;

    if (call->nargs != 2 || call->args[0].size != 8 ||
        call->args[1].size != 8)
        return mt_fn_error(call, "add takes two 8-byte integers, got %u "
                           "arguments", call->nargs);
    memcpy(&a, call->args[0].data, 8);
    memcpy(&b, call->args[1].data, 8);
    sum = a + b;
    return mt_fn_result(call, &sum, sizeof(sum));
}

MT_FUNCTION(fail)
{
    return mt_fn_error(call, "boom");
}

MT_FUNCTION(crash)
{
    raise(SIGSEGV);
    return mt_fn_error(call, "still alive after SIGSEGV");
}

/* Sleep for the decimal milliseconds in the first argument. */
MT_FUNCTION(sleep_ms)
{
    char buf[32] = "";
    struct timespec ts;
    long ms;

    if (call->nargs > 0 && call->args[0].size < sizeof(buf))
        memcpy(buf, call->args[0].data, call->args[0].size);
    ms = strtol(buf, NULL, 10);
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) < 0)
        ;
    return 0;
}

/* The executor's pid as decimal text: shows executors being reused. */
MT_FUNCTION(getpid)
{
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%d", (int)getpid());

    return mt_fn_result(call, buf, (uint64_t)n);
}

/* Print to stdout and stderr, then return "done". */
MT_FUNCTION(hello)
{
    printf("hello from %s\n", call->nargs ? "args" : "nothing");
    fprintf(stderr, "to stderr\n");
    return mt_fn_result(call, "done", 4);
}

/* A result of the decimal size in the first argument (for the limit). */
MT_FUNCTION(big)
{
    char buf[32] = "";
    uint64_t n;

    if (call->nargs > 0 && call->args[0].size < sizeof(buf))
        memcpy(buf, call->args[0].data, call->args[0].size);
    n = strtoull(buf, NULL, 10);
    call->result = calloc(1, n ? n : 1);
    if (!call->result)
        return mt_fn_error(call, "out of memory");
    call->result_size = n;
    return 0;
}

/* The value of the environment variable named by the first argument;
 * fails when it is not set. */
MT_FUNCTION(env)
{
    char name[256] = "";
    const char *v;

    if (call->nargs > 0 && call->args[0].size < sizeof(name))
        memcpy(name, call->args[0].data, call->args[0].size);
    v = getenv(name);
    if (!v)
        return mt_fn_error(call, "%s is not set", name);
    return mt_fn_result(call, v, strlen(v));
}

/* Start the shell command in the first argument without waiting for it
 * (it stays in the executor's process group), then sleep for the decimal
 * milliseconds in the second: what a function that forks leaves behind
 * (test_orphans.py). */
MT_FUNCTION(spawn_sleep)
{
    char cmd[512] = "", ms[32] = "";
    struct timespec ts;
    pid_t pid;
    long n;

    if (call->nargs != 2 || call->args[0].size >= sizeof(cmd) ||
        call->args[1].size >= sizeof(ms))
        return mt_fn_error(call, "spawn_sleep takes COMMAND and MS");
    memcpy(cmd, call->args[0].data, call->args[0].size);
    memcpy(ms, call->args[1].data, call->args[1].size);
    pid = fork();
    if (pid < 0)
        return mt_fn_error(call, "fork failed");
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    n = strtol(ms, NULL, 10);
    ts.tv_sec = n / 1000;
    ts.tv_nsec = (n % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) < 0)
        ;
    return 0;
}
