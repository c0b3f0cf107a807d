/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_up.c -- `manta up FILE`: start a cluster on the hosts a cluster file
 * names (cluster_file.h), over ssh.
 *
 * The head first: `manta start --head` on its host. If that fails nothing
 * else is started. Then every worker at once: `manta start --address
 * HEAD:PORT` on its host; a worker that fails is reported and the others
 * stay up. Every command runs with a deadline (--timeout).
 *
 * The token: a new one is made here and handed to each `manta start`
 * through ssh's stdin (--token-file /dev/stdin), so it never appears on a
 * command line (ps) or in output; `manta start` keeps it 0600 as
 * <temp-dir>/token on its host. Once the head is up this machine keeps a
 * copy 0600 in the file's local_dir, with head.addr beside it, so that
 * `manta status --temp-dir LOCAL_DIR` reaches the cluster. The head's
 * output holds the token (its dashboard login link): only the lines
 * needed are taken from it, it is never printed whole.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cluster_file.h"
#include "cli/commands.h"
#include "cli/remote.h"
#include "cli/session.h"
#include "common/alloc.h"
#include "common/auth.h"
#include "common/sys.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta up FILE [--dry-run] [--timeout S]\n"
            "\n"
            "Start a cluster on the hosts of a cluster file (TOML; see\n"
            "docs/deploy.md and deploy/cluster.example.toml). Over ssh, it\n"
            "runs `manta start --head` on the head's host, then `manta start\n"
            "--address HEAD:PORT` on every worker host at once. A new cluster\n"
            "token goes to each through ssh's stdin, never on a command line;\n"
            "this machine keeps it 0600 in the file's local_dir with the\n"
            "head's address, so `manta status --temp-dir LOCAL_DIR` works.\n"
            "Exit 0: every host is up; 1: the head failed (nothing else was\n"
            "started) or a worker failed (the others stay up); 2: bad usage\n"
            "or a bad cluster file. `manta down FILE` stops it all.\n"
            "\n"
            "  --dry-run            print the commands, run nothing\n"
            "  --timeout S          seconds each host may take (default %d;\n"
            "                       the workers start together)\n"
            "  -h, --help           this text\n",
            MT_REMOTE_DEFAULT_TIMEOUT_S);
}

static int dry_run(const struct mt_cluster *c)
{
    char **argv = mt_cluster_argv(c, &c->head, MT_CLUSTER_START_HEAD);

    printf("# the head (the cluster token goes to each command's stdin)\n");
    mt_remote_print_argv(argv, stdout);
    mt_cluster_argv_free(argv);
    if (c->n_workers)
        printf("# then the workers, all at once\n");
    for (size_t i = 0; i < c->n_workers; i++) {
        argv = mt_cluster_argv(c, &c->workers[i], MT_CLUSTER_START_WORKER);
        mt_remote_print_argv(argv, stdout);
        mt_cluster_argv_free(argv);
    }
    printf("# this machine: the token and head.addr in %s\n", c->local_dir);
    return 0;
}

/* Keep the token and the head's address in local_dir. RET 0 or -errno. */
static int keep_locally(const struct mt_cluster *c, const char *token)
{
    char *tok = mt_session_path(c->local_dir, "token");
    char *addr = mt_session_path(c->local_dir, "head.addr");
    char *head = mt_cluster_head_address(c), *line;
    int rc = mt_auth_token_write(tok, token);

    line = mt_xasprintf("%s\n", head);
    if (rc == 0)
        rc = mt_sys_write_file_atomic(addr, line);
    if (rc < 0)
        fprintf(stderr, "manta up: cannot write %s: %s\n", c->local_dir,
                strerror(-rc));
    free(line);
    free(head);
    free(addr);
    free(tok);
    return rc;
}

/* One row of the summary: the host, its role, up or FAILED, its node. */
static void row(const struct mt_remote_job *j, const char *role)
{
    char *node = mt_remote_line(mt_strbuf_str(&j->out), "Local node: ");

    printf("  %-24s %-7s %-7s %s\n", j->host, role,
           mt_remote_ok(j) ? "up" : "FAILED", node ? node : "-");
    free(node);
}

static void summary(const struct mt_cluster *c, const char *file,
                    const struct mt_remote_job *head,
                    const struct mt_remote_job *w, size_t failed, bool kept)
{
    char *addr = mt_cluster_head_address(c);
    char *dash = mt_remote_line(mt_strbuf_str(&head->out), "Dashboard: ");

    if (failed)
        printf("Manta cluster '%s': the head is up at %s; %zu of %zu "
               "workers FAILED (above).\n\n", c->name, addr, failed,
               c->n_workers);
    else
        printf("Manta cluster '%s' is up: head at %s.\n\n", c->name, addr);
    printf("  %-24s %-7s %-7s %s\n", "host", "role", "state", "node");
    row(head, "head");
    for (size_t i = 0; i < c->n_workers; i++)
        row(&w[i], "worker");
    printf("\n");
    if (dash)
        printf("Dashboard (on the head's host): %s\n", dash);
    if (kept) {
        printf("Cluster token: %s/token (mode 0600); every node has it as "
               "<temp-dir>/token.\n", c->local_dir);
        printf("To see the cluster:  manta status --temp-dir %s\n",
               c->local_dir);
        printf("Drivers elsewhere:   MANTA_AUTH_TOKEN_FILE=%s/token, head "
               "%s\n", c->local_dir, addr);
    } else {
        printf("Cluster token: only on the nodes, as <temp-dir>/token (no "
               "copy here: see above).\n");
    }
    printf("To stop it:          manta down %s\n", file);
    free(dash);
    free(addr);
}

/* Start every worker at once. RET how many failed. */
static size_t start_workers(const struct mt_remote_opts *o,
                            const struct mt_cluster *c, const char *input,
                            struct mt_remote_job *w)
{
    size_t failed = 0;

    for (size_t i = 0; i < c->n_workers; i++) {
        w[i].host = c->workers[i].host;
        w[i].argv = mt_cluster_argv(c, &c->workers[i],
                                    MT_CLUSTER_START_WORKER);
        w[i].input = input;
    }
    if (c->n_workers) {
        printf("Starting %zu worker%s ...\n", c->n_workers,
               c->n_workers == 1 ? "" : "s");
        mt_remote_run(w, c->n_workers, (int)o->timeout_s * 1000);
    }
    for (size_t i = 0; i < c->n_workers; i++) {
        if (mt_remote_ok(&w[i]))
            continue;
        failed++;
        fprintf(stderr, "manta up: the worker on %s (line %d) did not "
                "start: ", w[i].host, c->workers[i].line);
        mt_remote_print_failure(&w[i], o->timeout_s, stderr);
    }
    fflush(stderr);
    return failed;
}

/* The head, then the workers. RET the exit code. */
static int up(const struct mt_remote_opts *o, const struct mt_cluster *c,
              const char *token)
{
    char *input = mt_xasprintf("%s\n", token);
    struct mt_remote_job head = {.host = c->head.host, .input = input};
    struct mt_remote_job *w = mt_xcalloc(c->n_workers + 1, sizeof(*w));
    size_t failed = 0;
    bool kept;
    int rc = 0;

    head.argv = mt_cluster_argv(c, &c->head, MT_CLUSTER_START_HEAD);
    printf("Starting the head on %s ...\n", c->head.host);
    mt_remote_run(&head, 1, (int)o->timeout_s * 1000);
    if (!mt_remote_ok(&head)) {
        fprintf(stderr, "manta up: the head on %s did not start: ",
                c->head.host);
        mt_remote_print_failure(&head, o->timeout_s, stderr);
        fprintf(stderr, "manta up: nothing else was started (if the "
                "cluster is up already, `manta down %s` stops it)\n",
                o->file);
        rmdir(c->local_dir); /* made for the token; left when not empty */
        rc = 1;
        goto out;
    }
    kept = keep_locally(c, token) == 0;
    failed = start_workers(o, c, input, w);
    summary(c, o->file, &head, w, failed, kept);
    rc = failed || !kept ? 1 : 0;
out:
    for (size_t i = 0; i < c->n_workers; i++) {
        mt_cluster_argv_free(w[i].argv);
        mt_remote_job_release(&w[i]);
    }
    free(w);
    mt_cluster_argv_free(head.argv);
    mt_remote_job_release(&head);
    explicit_bzero(input, strlen(input));
    free(input);
    return rc;
}

static int cmd_up(int argc, char **argv)
{
    struct mt_remote_opts o;
    struct mt_cluster c;
    char token[MT_AUTH_TOKEN_HEX + 1];
    int rc = mt_remote_args("up", argc, argv, usage, &o, &c);

    if (rc == 0 && o.dry_run) {
        rc = dry_run(&c);
    } else if (rc == 0 && (rc = mt_sys_mkdir_private(c.local_dir)) < 0) {
        fprintf(stderr, "manta up: cannot create %s: %s\n", c.local_dir,
                rc == -EPERM ? "it is not a directory of this user"
                             : strerror(-rc));
        rc = 1;
    } else if (rc == 0 && (rc = mt_auth_token_generate(token)) < 0) {
        fprintf(stderr, "manta up: cannot make a cluster token: %s\n",
                strerror(-rc));
        rc = 1;
    } else if (rc == 0) {
        rc = up(&o, &c, token);
        explicit_bzero(token, sizeof(token));
    }
    mt_cluster_release(&c);
    return rc < 0 ? 0 : rc;
}

const struct mt_cli_command mt_cli_cmd_up = {
    "up", cmd_up,
    "start a cluster on the hosts of a cluster file, over ssh"};
