/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_rpc.c -- latency and throughput of the rpc layer (common/rpc.h)
 * over loopback TCP: a forked server process answering a unary Echo with
 * its handler on the libuv loop, and a client in this process.
 *
 *   sync   one call in flight: p50/p99 latency and calls/s
 *   async  K calls in flight (K = 8 and 32): calls/s
 *
 * usage: bench_rpc [--seconds S] [--payload BYTES]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/rpc.h"
#include "common/sys.h"
#include "test_service.pb-c.h"

static const struct mt_rpc_method m_echo = {
    "/mttest.Test/Echo", &mttest__echo_request__descriptor,
    &mttest__echo_reply__descriptor, MT_RPC_UNARY};

/* ---- server (child process) ------------------------------------------------- */

static void h_echo(struct mt_rpc_call *call, const ProtobufCMessage *m,
                   void *arg)
{
    Mttest__EchoReply r = MTTEST__ECHO_REPLY__INIT;

    r.text = ((const Mttest__EchoRequest *)m)->text;
    mt_rpc_reply(call, &r.base);
}

static const struct mt_rpc_handler handlers[] = {{&m_echo, h_echo}};

static void serve(int port_fd)
{
    uv_loop_t loop;
    struct mt_rpc_engine *eng;
    struct mt_rpc_server *srv;
    struct mt_rpc_server_opts o = {"127.0.0.1:0", handlers, 1, NULL, 0};
    int port = 0;

    uv_loop_init(&loop);
    if (mt_rpc_engine_create(&loop, &eng) < 0 ||
        mt_rpc_server_start(eng, &o, &srv, &port) < 0)
        port = -1;
    if (write(port_fd, &port, sizeof(port)) != sizeof(port) || port < 0)
        _exit(1);
    uv_run(&loop, UV_RUN_DEFAULT); /* until SIGTERM */
    _exit(0);
}

/* ---- client ----------------------------------------------------------------- */

struct bench {
    uv_loop_t loop;
    struct mt_rpc_channel *ch;
    Mttest__EchoRequest req;
    int64_t *lat_us;
    size_t n, cap;
    int in_flight;
    int errors;
    int64_t end_us;
};

static int64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void issue(struct bench *b);

static void on_done(void *arg, const struct mt_rpc_status *st,
                    const ProtobufCMessage *resp)
{
    int64_t *started = arg;
    struct bench *b = (struct bench *)(void *)started[1];

    if (st->code != 0)
        b->errors++;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 4096;
        b->lat_us = realloc(b->lat_us, b->cap * sizeof(*b->lat_us));
    }
    b->lat_us[b->n++] = now_us() - started[0];
    free(started);
    b->in_flight--;
    if (now_us() < b->end_us)
        issue(b);
}

static void issue(struct bench *b)
{
    int64_t *started = malloc(2 * sizeof(int64_t));

    started[0] = now_us();
    started[1] = (int64_t)(intptr_t)b;
    if (mt_rpc_unary(b->ch, &m_echo, &b->req.base, 5000, 0, on_done,
                     started) == 0)
        b->in_flight++;
    else
        free(started);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void run_phase(struct bench *b, int k, double seconds, const char *name)
{
    int64_t t0;
    double secs;

    b->n = 0;
    b->errors = 0;
    t0 = now_us();
    b->end_us = t0 + (int64_t)(seconds * 1e6);
    for (int i = 0; i < k; i++)
        issue(b);
    while (b->in_flight > 0)
        uv_run(&b->loop, UV_RUN_ONCE);
    secs = (double)(now_us() - t0) / 1e6;
    qsort(b->lat_us, b->n, sizeof(*b->lat_us), cmp64);
    printf("%-10s in_flight=%-3d calls=%-7zu calls/s=%-9.0f p50=%lldus "
           "p99=%lldus errors=%d\n",
           name, k, b->n, (double)b->n / secs,
           (long long)b->lat_us[b->n / 2], (long long)b->lat_us[b->n * 99 / 100],
           b->errors);
}

int main(int argc, char **argv)
{
    struct mt_rpc_engine *eng;
    struct bench b;
    double seconds = 3;
    size_t payload = 16;
    char target[64], *text;
    int fds[2], port = -1, status;
    pid_t child;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--payload") == 0)
            payload = (size_t)atol(argv[i + 1]);
    }
    if (pipe(fds) < 0)
        return 1;
    child = fork();
    if (child == 0) {
        close(fds[0]);
        serve(fds[1]);
    }
    close(fds[1]);
    if (read(fds[0], &port, sizeof(port)) != sizeof(port) || port <= 0) {
        fprintf(stderr, "bench_rpc: server did not start\n");
        return 1;
    }
    memset(&b, 0, sizeof(b));
    uv_loop_init(&b.loop);
    mt_rpc_engine_create(&b.loop, &eng);
    snprintf(target, sizeof(target), "127.0.0.1:%d", port);
    mt_rpc_channel_create(eng, target, 0, &b.ch);
    text = malloc(payload + 1);
    memset(text, 'x', payload);
    text[payload] = '\0';
    mttest__echo_request__init(&b.req);
    b.req.text = text;
    printf("# rpc layer, unary Echo over loopback TCP, %zu-byte payload, "
           "%.0fs per phase, server in a separate process\n", payload, seconds);
    run_phase(&b, 1, 0.5, "warmup");
    run_phase(&b, 1, seconds, "sync");
    run_phase(&b, 8, seconds, "async");
    run_phase(&b, 32, seconds, "async");
    mt_rpc_channel_destroy(b.ch);
    mt_rpc_engine_destroy(eng);
    uv_loop_close(&b.loop);
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    free(text);
    free(b.lat_us);
    return 0;
}
