/* SPDX-License-Identifier: Apache-2.0 */
/*
 * remote.h -- what `manta up` and `manta down` share: their arguments
 * (FILE [--dry-run] [--timeout S]) and the cluster file they name, and
 * running one local process per host (ssh, or the cluster file's
 * ssh_command) all at once, each with its input, captured output and a
 * deadline.
 *
 * Processes start with posix_spawnp from argv arrays (no local shell), in
 * a process group of their own so that one past its deadline is killed
 * whole (SIGKILL). Their stdin is a pipe that gets the job's input and is
 * then closed; stdout and stderr are kept, up to MT_REMOTE_OUTPUT_MAX
 * bytes each.
 */
#ifndef MT_CLI_REMOTE_H
#define MT_CLI_REMOTE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli/cluster_file.h"
#include "common/strbuf.h"

#define MT_REMOTE_OUTPUT_MAX (64 * 1024)
#define MT_REMOTE_DEFAULT_TIMEOUT_S 60

/* ---- the commands' arguments ---------------------------------------------- */

struct mt_remote_opts {
    const char *file;    /* the cluster file */
    bool dry_run;        /* print the commands, run nothing */
    long timeout_s;      /* per host (all workers share one deadline) */
};

/*
 * mt_remote_args - parse `manta <cmd> FILE [--dry-run] [--timeout S]` and
 * load the cluster file.
 * IN  usage  the command's help (stdout on --help, stderr on bad usage)
 * OUT o, c   filled; release c with mt_cluster_release (also on failure)
 * RET 0, -1 (help printed: exit 0), or MT_EXIT_USAGE (message printed; a
 *     bad cluster file says FILE:LINE)
 */
int mt_remote_args(const char *cmd, int argc, char **argv,
                   void (*usage)(FILE *f), struct mt_remote_opts *o,
                   struct mt_cluster *c);

/* ---- jobs ----------------------------------------------------------------- */

struct mt_remote_job {
    /* in */
    const char *host;       /* for messages */
    char **argv;            /* borrowed; argv[0] is looked up on PATH */
    const char *input;      /* written to stdin (small: under 4 KiB), then
                               closed; NULL: stdin is closed at once */
    /* out */
    struct mt_strbuf out;   /* stdout */
    struct mt_strbuf err;   /* stderr, or why it could not start */
    int status;             /* exit code; 128+N: killed by signal N; -1:
                               could not start */
    bool timed_out;         /* killed at the deadline */
    /* private */
    pid_t pid;
    int fd_out, fd_err;
};

/*
 * mt_remote_run - run the jobs at once and wait until each has exited or
 * timeout_ms has passed (then it is killed: timed_out).
 * OUT jobs[i].out, err, status, timed_out; release each with
 *     mt_remote_job_release
 */
void mt_remote_run(struct mt_remote_job *jobs, size_t n, int timeout_ms);

/* mt_remote_ok - the job ran and exited 0. */
bool mt_remote_ok(const struct mt_remote_job *j);

/* mt_remote_job_release - free its output. */
void mt_remote_job_release(struct mt_remote_job *j);

/*
 * mt_remote_print_failure - why the job failed ("exit 1", "timed out after
 * S s", "could not start"), then its stderr, each line indented, on f
 * (up to a usage text, at most 30 lines).
 */
void mt_remote_print_failure(const struct mt_remote_job *j, long timeout_s,
                             FILE *f);

/* mt_remote_print_argv - argv as one shell-quoted line (--dry-run). */
void mt_remote_print_argv(char *const argv[], FILE *f);

/*
 * mt_remote_line - the rest of the first line of text that starts with
 * prefix (e.g. "Local node: "). RET owned, free(); NULL when none.
 */
char *mt_remote_line(const char *text, const char *prefix);

#endif /* MT_CLI_REMOTE_H */
