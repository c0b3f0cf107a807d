/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_down.c -- `manta down FILE`: stop the cluster `manta up FILE`
 * started: `manta stop --temp-dir D` over ssh on every worker host at
 * once, then on the head's host, each host reported. A host where nothing
 * runs is fine (`manta stop` says so and exits 0), so down can be run
 * again. Once the head's host is stopped, this machine's copy of the
 * token and head.addr in local_dir are removed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cluster_file.h"
#include "cli/commands.h"
#include "cli/remote.h"
#include "cli/session.h"
#include "common/alloc.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta down FILE [--dry-run] [--timeout S]\n"
            "\n"
            "Stop the cluster `manta up FILE` started: `manta stop` over ssh\n"
            "on every worker host at once, then on the head's host (as `manta\n"
            "stop`: the head's state in its temp dir is removed). A host where\n"
            "nothing runs is fine. Exit 0: every host is stopped; 1: a host\n"
            "failed (the others are stopped); 2: bad usage or cluster file.\n"
            "\n"
            "  --dry-run            print the commands, run nothing\n"
            "  --timeout S          seconds each host may take (default %d)\n"
            "  -h, --help           this text\n",
            MT_REMOTE_DEFAULT_TIMEOUT_S);
}

/* The one-line outcome of a stop on a host: what `manta stop` said. */
static void report(const struct mt_remote_job *j, const char *role,
                   long timeout_s)
{
    const char *out = mt_strbuf_str(&j->out);
    size_t len = strlen(out);

    while (len && out[len - 1] == '\n')
        len--;
    if (!mt_remote_ok(j)) {
        printf("  %-24s %-7s %s\n", j->host, role, "FAILED");
        fprintf(stderr, "manta down: stopping %s on %s failed: ", role,
                j->host);
        mt_remote_print_failure(j, timeout_s, stderr);
        return;
    }
    /* manta stop's lines ("Stopped manta-worker (pid 12).") on one line */
    printf("  %-24s %-7s %-7s ", j->host, role, "ok");
    for (size_t i = 0; i < len; i++)
        putchar(out[i] == '\n' ? ' ' : out[i]);
    printf("\n");
}

/* Remove this machine's token and head.addr of the cluster. */
static void forget_locally(const struct mt_cluster *c)
{
    static const char *const names[] = {"token", "head.addr"};

    for (size_t i = 0; i < 2; i++) {
        char *p = mt_session_path(c->local_dir, names[i]);

        if (unlink(p) < 0 && errno != ENOENT)
            fprintf(stderr, "manta down: cannot remove %s: %s\n", p,
                    strerror(errno));
        free(p);
    }
    rmdir(c->local_dir); /* when empty */
}

static int down(const struct mt_remote_opts *o, const struct mt_cluster *c)
{
    size_t n = c->n_workers + 1, failed = 0;
    struct mt_remote_job *jobs = mt_xcalloc(n, sizeof(*jobs));
    int timeout_ms = (int)o->timeout_s * 1000;

    for (size_t i = 0; i < n; i++) {
        const struct mt_cluster_node *node =
            i < c->n_workers ? &c->workers[i] : &c->head;

        jobs[i].host = node->host;
        jobs[i].argv = mt_cluster_argv(c, node, MT_CLUSTER_STOP);
        if (o->dry_run)
            mt_remote_print_argv(jobs[i].argv, stdout);
    }
    if (!o->dry_run) {
        /* The workers first (they unregister from the head), then it. */
        mt_remote_run(jobs, c->n_workers, timeout_ms);
        mt_remote_run(&jobs[n - 1], 1, timeout_ms);
        for (size_t i = 0; i < n; i++) {
            report(&jobs[i], i < c->n_workers ? "worker" : "head",
                   o->timeout_s);
            failed += !mt_remote_ok(&jobs[i]);
        }
        if (mt_remote_ok(&jobs[n - 1]))
            forget_locally(c);
        printf("%s\n", failed ? "Some hosts could not be stopped: see the "
                                 "messages about them."
                              : "The cluster is stopped.");
    }
    for (size_t i = 0; i < n; i++) {
        mt_cluster_argv_free(jobs[i].argv);
        mt_remote_job_release(&jobs[i]);
    }
    free(jobs);
    return failed ? 1 : 0;
}

static int cmd_down(int argc, char **argv)
{
    struct mt_remote_opts o;
    struct mt_cluster c;
    int rc = mt_remote_args("down", argc, argv, usage, &o, &c);

    if (rc == 0)
        rc = down(&o, &c);
    mt_cluster_release(&c);
    return rc < 0 ? 0 : rc;
}

const struct mt_cli_command mt_cli_cmd_down = {
    "down", cmd_down,
    "stop the cluster `manta up` started from a cluster file"};
