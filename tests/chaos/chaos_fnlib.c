/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chaos_fnlib.c -- libmt_chaos_fn.so: the task bodies of the chaos suite
 * (tests/chaos/README.md), written against manta/function.h only.
 *
 * Every body appends what it does to a records file named by its first
 * argument, one line per write(2) on an O_APPEND descriptor, so lines
 * from many processes never interleave:
 *
 *   S KEY ATTEMPT PID NODE CPU T_NS   an execution started (CPU held)
 *   E KEY PID T_NS                    that execution ended normally
 *   A ACTOR SEQ PID NODE T_NS         actor method call SEQ ran
 *
 * T_NS is CLOCK_REALTIME in nanoseconds (every node runs on this one
 * machine, so the clocks agree). ATTEMPT is "-" for function tasks (the
 * executor is not told it); the harness counts S lines per KEY instead.
 * An execution cut short by kill -9 has no E line: the harness takes its
 * end from the moment it saw the process die.
 *
 * Functions:
 *   work(REC, KEY, MS, X)        S, sleep MS, E; result int64 3*X+1
 *   actor_new(REC, NAME)         the actor's life: S NAME ... CPU 1, no E
 *   step(SEQ)                    an A line; result int64 SEQ
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "manta/function.h"

#define ARG_MAX_LEN 1024

/* The actor's state: where to record, under what name. */
struct chaos_actor {
    char rec[ARG_MAX_LEN];
    char name[128];
};

static long long now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Argument i as a NUL-terminated string in buf; RET 0, -1 if too long. */
static int arg_str(const struct mt_fn_call *call, uint32_t i, char *buf,
                   size_t len)
{
    if (i >= call->nargs || call->args[i].size >= len)
        return -1;
    memcpy(buf, call->args[i].data, call->args[i].size);
    buf[call->args[i].size] = '\0';
    return 0;
}

static const char *node_id(void)
{
    const char *n = getenv("MANTA_NODE_ID");

    return n && *n ? n : "?";
}

/* Append one line to the records file. RET 0, -1 (call->error set). */
static int record(struct mt_fn_call *call, const char *rec, const char *line)
{
    int fd = open(rec, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    size_t n = strlen(line);
    ssize_t w;

    if (fd < 0)
        return mt_fn_error(call, "cannot open %s", rec);
    w = write(fd, line, n);
    close(fd);
    if (w != (ssize_t)n)
        return mt_fn_error(call, "short write to %s", rec);
    return 0;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) < 0)
        ;
}

MT_FUNCTION(work)
{
    char rec[ARG_MAX_LEN], key[128], ms[32], x[32], line[512];
    int64_t v;

    if (call->nargs != 4 || arg_str(call, 0, rec, sizeof(rec)) ||
        arg_str(call, 1, key, sizeof(key)) ||
        arg_str(call, 2, ms, sizeof(ms)) || arg_str(call, 3, x, sizeof(x)))
        return mt_fn_error(call, "work takes REC KEY MS X");
    snprintf(line, sizeof(line), "S %s - %d %s 1 %lld\n", key, (int)getpid(),
             node_id(), now_ns());
    if (record(call, rec, line))
        return -1;
    sleep_ms(strtol(ms, NULL, 10));
    snprintf(line, sizeof(line), "E %s %d %lld\n", key, (int)getpid(),
             now_ns());
    if (record(call, rec, line))
        return -1;
    v = 3 * (int64_t)strtoll(x, NULL, 10) + 1;
    return mt_fn_result(call, &v, sizeof(v));
}

MT_FUNCTION(actor_new)
{
    struct chaos_actor *a = calloc(1, sizeof(*a));
    char line[512];

    if (!a)
        return mt_fn_error(call, "out of memory");
    if (call->nargs != 2 || arg_str(call, 0, a->rec, sizeof(a->rec)) ||
        arg_str(call, 1, a->name, sizeof(a->name))) {
        free(a);
        return mt_fn_error(call, "actor_new takes REC NAME");
    }
    snprintf(line, sizeof(line), "S %s - %d %s 1 %lld\n", a->name,
             (int)getpid(), node_id(), now_ns());
    if (record(call, a->rec, line)) {
        free(a);
        return -1;
    }
    call->actor = a;
    return 0;
}

MT_FUNCTION(step)
{
    struct chaos_actor *a = MT_ACTOR_STATE(call, struct chaos_actor);
    char seq[32], line[512];
    int64_t v;

    if (!a)
        return mt_fn_error(call, "step is an actor method");
    if (arg_str(call, 0, seq, sizeof(seq)))
        return mt_fn_error(call, "step takes SEQ");
    v = (int64_t)strtoll(seq, NULL, 10);
    snprintf(line, sizeof(line), "A %s %lld %d %s %lld\n", a->name,
             (long long)v, (int)getpid(), node_id(), now_ns());
    if (record(call, a->rec, line))
        return -1;
    return mt_fn_result(call, &v, sizeof(v));
}
