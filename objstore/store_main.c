/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_main.c -- manta-store: a standalone object store daemon.
 *
 * Runs the store library and its socket server on one libuv loop, exactly
 * as the worker daemon will host them, so multi-process tests and benchmarks
 * can run before the worker exists. Prints one "manta-store ready ..." line
 * on stdout once it accepts connections. SIGTERM or SIGINT stop it cleanly:
 * connections are closed, spill files deleted, the socket unlinked.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "common/error.h"
#include "common/log.h"
#include "objstore/arena.h"
#include "objstore/server.h"
#include "objstore/store.h"

struct daemon {
    uv_loop_t loop;
    uv_signal_t sigterm;
    uv_signal_t sigint;
    struct mt_store *st;
    struct mt_server *srv;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta-store --socket PATH [options]\n"
            "  --socket PATH      Unix socket to listen on (required)\n"
            "  --memory BYTES     arena capacity; K/M/G suffixes; default 30%%"
            " of RAM capped by /dev/shm\n"
            "  --spill-dir DIR    spill sealed objects here when full\n"
            "  --prefault         populate the arena at start\n"
            "  --log-level LEVEL  debug, info, warn, error (default info)\n"
            "  --help             this text\n");
}

/* "64M" -> 67108864. RET 0, -MT_EINVAL. */
static int parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;

    if (end == s)
        return -MT_EINVAL;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B')
        end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
    if (*end || v > (UINT64_MAX >> shift))
        return -MT_EINVAL;
    *out = (uint64_t)v << shift;
    return 0;
}

static void on_signal(uv_signal_t *s, int signum)
{
    struct daemon *d = s->data;

    MT_INFO("manta-store stopping on signal %d", signum);
    mt_server_stop(d->srv);
    d->srv = NULL;
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    uv_close((uv_handle_t *)&d->sigint, NULL);
}

static int parse_args(int argc, char **argv, struct mt_store_opts *o,
                      const char **sock)
{
    static const struct option longopts[] = {
        {"socket", required_argument, NULL, 's'},
        {"memory", required_argument, NULL, 'm'},
        {"spill-dir", required_argument, NULL, 'd'},
        {"prefault", no_argument, NULL, 'p'},
        {"log-level", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch, lvl;

    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 's': *sock = optarg; break;
        case 'd': o->spill_dir = optarg; break;
        case 'p': o->prefault = true; break;
        case 'm':
            if (parse_bytes(optarg, &o->capacity) < 0) {
                fprintf(stderr, "manta-store: bad --memory \"%s\"\n", optarg);
                return 2;
            }
            break;
        case 'l':
            lvl = mt_log_parse_level(optarg);
            if (lvl < 0)
                return 2;
            mt_log_init("store", (enum mt_log_level)lvl, NULL);
            break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return 2;
        }
    }
    if (!*sock || optind != argc) {
        usage(stderr);
        return 2;
    }
    return 0;
}

static int run(struct daemon *d, const struct mt_store_opts *o,
               const char *sock)
{
    int rc = mt_store_create(o, &d->st);

    if (rc < 0) {
        fprintf(stderr, "manta-store: store: %s\n", mt_strerror(rc));
        return 1;
    }
    uv_loop_init(&d->loop);
    rc = mt_server_start(&d->loop, d->st, sock, &d->srv);
    if (rc < 0) {
        fprintf(stderr, "manta-store: listen: %s\n", mt_strerror(rc));
        goto out_loop;
    }
    uv_signal_init(&d->loop, &d->sigterm);
    uv_signal_init(&d->loop, &d->sigint);
    d->sigterm.data = d->sigint.data = d;
    uv_signal_start(&d->sigterm, on_signal, SIGTERM);
    uv_signal_start(&d->sigint, on_signal, SIGINT);
    printf("manta-store ready socket=%s capacity=%llu\n", sock,
           (unsigned long long)o->capacity);
    fflush(stdout);
    uv_run(&d->loop, UV_RUN_DEFAULT);
out_loop:
    uv_loop_close(&d->loop);
    mt_store_destroy(d->st);
    return rc < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
    struct mt_store_opts o = {0};
    struct daemon d;
    const char *sock = NULL;
    int rc;

    mt_log_init("store", MT_LOG_INFO, NULL);
    rc = parse_args(argc, argv, &o, &sock);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (!o.capacity)
        o.capacity = mt_arena_default_capacity("/dev/shm");
    memset(&d, 0, sizeof(d));
    return run(&d, &o, sock);
}
