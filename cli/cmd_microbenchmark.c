/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_microbenchmark.c -- `manta microbenchmark`: run the microbenchmark
 * suite (manta-microbenchmark, next to this binary) against a cluster.
 *
 * With --address the suite runs against that cluster: this process execs
 * it. Without, a private local cluster is started first (a head and a
 * worker on 127.0.0.1 with 4 CPUs and the default executor pool, in a
 * fresh session dir under /tmp) and stopped afterwards, always: when the
 * suite fails, and on SIGINT/SIGTERM/SIGHUP, which are passed on to the
 * child running at the time. The session dir is removed after a clean
 * run and kept (its path printed) for its logs otherwise.
 *
 * Arguments are checked by the suite itself (`--check`) before any
 * cluster starts, so there is one list of metric names.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/session.h"
#include "common/parse.h"

#define LOCAL_CPUS "4"
#define MAX_ARGS 16
#define RUN_QUIET 0x1u  /* the child's stdout goes to our stderr */
#define RUN_NOINT 0x2u  /* cleanup: the child ignores SIGINT, and our
                           signals are not passed on to it */

static volatile sig_atomic_t interrupted;
static volatile pid_t child_pid;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta microbenchmark [--address HOST:PORT] [--json]\n"
            "                            [--only NAME,...] [--seconds S]\n"
            "                            [--storage SPEC]\n"
            "\n"
            "Measure tasks, objects and placement groups under the names of\n"
            "Ray's `ray microbenchmark`. Without --address a local cluster\n"
            "(head + worker, %s CPUs) is started for the run and stopped\n"
            "after it.\n"
            "\n"
            "  --address HOST:PORT  use this running cluster (its node must\n"
            "                       be on this machine for the object tests)\n"
            "  --json               one JSON object {metric: {value, stdev,\n"
            "                       unit}}; metrics not implemented are null\n"
            "  --only NAME,...      run only these metrics\n"
            "  --seconds S          length of each of the 3 trials (default 2)\n"
            "  --storage SPEC       the local cluster's head state: file\n"
            "                       (the default of `manta start --head`),\n"
            "                       memory, or redis://HOST:PORT[/DB]\n"
            "\n"
            "`manta-microbenchmark --help` lists the metrics.\n",
            LOCAL_CPUS);
}

static void on_signal(int sig)
{
    interrupted = sig;
    if (child_pid > 0)
        kill(child_pid, SIGTERM);
}

static void catch_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/*
 * Run argv[0] with argv and wait for it. flags: RUN_QUIET keeps --json
 * output clean; RUN_NOINT lets a second Ctrl-C not cut the cluster's stop
 * short. RET its exit status, 128+N for signal N, or 1 when it could not
 * start.
 */
static int run_child(char *const argv[], unsigned flags)
{
    int status;
    pid_t pid = fork();

    if (pid < 0) {
        fprintf(stderr, "manta microbenchmark: fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        if (flags & RUN_QUIET)
            dup2(STDERR_FILENO, STDOUT_FILENO);
        if (flags & RUN_NOINT)
            signal(SIGINT, SIG_IGN);
        execv(argv[0], argv);
        fprintf(stderr, "manta microbenchmark: exec %s: %s\n", argv[0],
                strerror(errno));
        _exit(127);
    }
    child_pid = flags & RUN_NOINT ? 0 : pid;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            child_pid = 0;
            return 1;
        }
    }
    child_pid = 0;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* Start a cluster in dir, run the suite against it, stop the cluster. */
static int run_local(const char *self, char **bench_argv, int addr_slot,
                     const char *storage)
{
    char dir[] = "/tmp/manta-mb-XXXXXX", *addr = NULL;
    char *start[] = {(char *)self, "start", "--head", "--port", "0",
                     "--node-ip", "127.0.0.1", "--temp-dir", dir,
                     "--num-cpus", LOCAL_CPUS, NULL, NULL, NULL};
    char *stop[] = {(char *)self, "stop", "--temp-dir", dir, NULL};
    bool stopped;
    int rc;

    if (!mkdtemp(dir)) {
        fprintf(stderr, "manta microbenchmark: mkdtemp: %s\n",
                strerror(errno));
        return 1;
    }
    if (storage) {
        start[11] = "--storage";
        start[12] = (char *)storage;
    }
    catch_signals();
    fprintf(stderr, "manta microbenchmark: starting a local cluster in %s\n",
            dir);
    rc = run_child(start, RUN_QUIET);
    if (rc == 0 && !interrupted && !(addr = mt_session_head_addr(dir))) {
        fprintf(stderr, "manta microbenchmark: no head address in %s\n",
                dir);
        rc = 1;
    }
    if (rc == 0 && !interrupted) {
        bench_argv[addr_slot] = addr;
        /* The suite finds the private cluster's token there. */
        setenv("MANTA_TEMP_DIR", dir, 1);
        rc = run_child(bench_argv, 0);
    }
    stopped = run_child(stop, RUN_QUIET | RUN_NOINT) == 0;
    if (!stopped)
        fprintf(stderr, "manta microbenchmark: stopping the cluster in %s "
                        "failed\n", dir);
    free(addr);
    /* Logs are kept for a failure, not for a run the user stopped. */
    if (stopped && (rc == 0 || interrupted))
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    else
        fprintf(stderr, "manta microbenchmark: the cluster's logs are in "
                        "%s\n", dir);
    return interrupted ? 128 + interrupted : rc;
}

static int cmd_microbenchmark(int argc, char **argv)
{
    static const struct option opts[] = {
        {"address", required_argument, NULL, 'a'},
        {"json", no_argument, NULL, 'j'},
        {"only", required_argument, NULL, 'o'},
        {"seconds", required_argument, NULL, 's'},
        {"storage", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char self[PATH_MAX], dir[PATH_MAX], bench[PATH_MAX + 32];
    char *args[MAX_ARGS];
    const char *addr = NULL, *storage = NULL;
    int c, n = 0, addr_slot, rc;
    ssize_t len;

    args[n++] = bench;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': addr = optarg; break;
        case 'S': storage = optarg; break;
        case 'j': args[n++] = "--json"; break;
        case 'o':
        case 's':
            if (n + 2 >= MAX_ARGS - 4)
                goto bad_usage;
            args[n++] = c == 'o' ? "--only" : "--seconds";
            args[n++] = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            fprintf(stderr, "manta microbenchmark: unknown or incomplete "
                            "option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return MT_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "manta microbenchmark: unexpected argument '%s'\n",
                argv[optind]);
        goto bad_usage;
    }
    if (addr && storage) {
        fprintf(stderr, "manta microbenchmark: --storage is for the local "
                        "cluster; a running one (--address) has its own\n");
        goto bad_usage;
    }
    if (addr && !mt_parse_host_port(addr)) {
        fprintf(stderr, "manta microbenchmark: invalid --address '%s': "
                        "expected HOST:PORT\n", addr);
        goto bad_usage;
    }
    len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0) {
        fprintf(stderr, "manta microbenchmark: cannot find this program\n");
        return 1;
    }
    self[len] = '\0';
    memcpy(dir, self, (size_t)len + 1);
    snprintf(bench, sizeof(bench), "%s/manta-microbenchmark", dirname(dir));
    if (access(bench, X_OK) != 0) {
        fprintf(stderr, "manta microbenchmark: %s: %s\n", bench,
                strerror(errno));
        return 1;
    }
    /* Let the suite check its arguments before a cluster starts. */
    args[n++] = "--check";
    args[n] = NULL;
    rc = run_child(args, 0);
    if (rc != 0)
        return rc;
    args[n - 1] = "--address";
    addr_slot = n++;
    args[addr_slot] = (char *)addr;
    args[n] = NULL;
    if (addr) {
        fflush(NULL);
        execv(bench, args);
        fprintf(stderr, "manta microbenchmark: exec %s: %s\n", bench,
                strerror(errno));
        return 1;
    }
    return run_local(self, args, addr_slot, storage);

bad_usage:
    usage(stderr);
    return MT_EXIT_USAGE;
}

const struct mt_cli_command mt_cli_cmd_microbenchmark = {
    "microbenchmark", cmd_microbenchmark,
    "measure tasks, actors, objects and placement groups (Ray's suite)"};
