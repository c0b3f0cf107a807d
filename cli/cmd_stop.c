/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_stop.c -- `manta stop`: stop the daemons of one session dir. The worker
 * goes first (it unregisters from the head), then the head. Each gets
 * SIGTERM and a grace period, then SIGKILL; --force skips the grace.
 *
 * Once the worker is gone, whatever it started that is still running (a
 * task whose guard could not kill it, an executor) is killed from the
 * worker's record of its process groups (worker.procs, common/proc.h).
 *
 * Stopping ends the session: once no head runs for the dir, its state
 * (head.state and head.state.log, the default file storage) is removed,
 * so the next `manta start --head` starts a fresh cluster. A head that
 * crashed and is started again without a stop recovers from them.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/session.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/parse.h"
#include "common/proc.h"
#include "common/sys.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta stop [--temp-dir DIR] [--force] [--grace-period S]\n"
            "                  [--keep-state]\n"
            "\n"
            "Stop the Manta processes this machine started for a session dir,\n"
            "then kill whatever the stopped worker left running. The head's\n"
            "state in the dir (head.state*) is removed: the next start is a\n"
            "fresh cluster (state kept elsewhere with --storage stays), unless\n"
            "--keep-state: then a head started again on the dir recovers.\n"
            "\n"
            "  --temp-dir DIR       session dir (default %s)\n"
            "  --force              kill at once (SIGKILL), no graceful stop\n"
            "  --grace-period S     seconds to wait before SIGKILL (default 10)\n"
            "  --keep-state         leave the head's state (head.state*) in the dir\n"
            "  -h, --help           this text\n",
            MT_DEFAULT_TEMP_DIR);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Kill what the stopped worker left running. RET processes killed. */
static int sweep_worker(const char *dir)
{
    char *path = mt_session_path(dir, MT_PROC_RECORD_FILE);
    int killed = 0, rc = mt_proc_record_sweep_file(path, &killed);

    if (rc == -MT_ESTATE)
        fprintf(stderr, "manta stop: %s belongs to a worker that still "
                        "runs; its processes were left alone\n", path);
    else if (rc < 0)
        fprintf(stderr, "manta stop: cannot read %s: %s\n", path,
                mt_strerror(rc));
    if (killed > 0)
        printf("Killed %d process%s left running by manta-worker.\n", killed,
               killed == 1 ? "" : "es");
    free(path);
    return killed;
}

/* RET 1 if a process was stopped, 0 if none ran, -1 if it survived. */
static int stop_one(const char *dir, const char *name, bool force,
                    long grace_s)
{
    pid_t pid = mt_session_read_pid(dir, name);
    int64_t end;
    char pidf[512], addrf[512];
    bool killed = false;

    if (pid <= 0)
        return 0;
    kill(pid, force ? SIGKILL : SIGTERM);
    end = mt_now_mono_ms() + (force ? 5000 : grace_s * 1000);
    while (mt_session_pid_alive(pid)) {
        if (mt_now_mono_ms() >= end) {
            if (killed) {
                fprintf(stderr, "manta stop: manta-%s (pid %d) survived "
                                "SIGKILL\n", name, (int)pid);
                return -1;
            }
            fprintf(stderr, "manta stop: manta-%s (pid %d) did not exit in "
                            "%lds; sending SIGKILL\n", name, (int)pid, grace_s);
            kill(pid, SIGKILL);
            killed = true;
            end = mt_now_mono_ms() + 5000;
        }
        sleep_ms(20);
    }
    snprintf(pidf, sizeof(pidf), "%s/%s.pid", dir, name);
    snprintf(addrf, sizeof(addrf), "%s/%s.addr", dir, name);
    unlink(pidf);
    unlink(addrf);
    printf("Stopped manta-%s (pid %d)%s.\n", name, (int)pid,
           force || killed ? " by SIGKILL" : "");
    return 1;
}

/* Remove the session's head state (the file storage's snapshot, log and
 * leftover temporary file). RET 1 if something was removed. */
static int remove_state(const char *dir)
{
    static const char *const suffix[] = {"", ".log", ".tmp"};
    int removed = 0;

    for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        char *p = mt_xasprintf("%s/%s%s", dir, MT_HEAD_STATE_FILE,
                               suffix[i]);

        if (unlink(p) == 0)
            removed = 1;
        else if (errno != ENOENT)
            fprintf(stderr, "manta stop: cannot remove %s: %s\n", p,
                    strerror(errno));
        free(p);
    }
    if (removed)
        printf("Removed the head's state (%s/%s).\n", dir,
               MT_HEAD_STATE_FILE);
    return removed;
}

static int cmd_stop(int argc, char **argv)
{
    static const struct option opts[] = {
        {"temp-dir", required_argument, NULL, 't'},
        {"force", no_argument, NULL, 'f'},
        {"grace-period", required_argument, NULL, 'g'},
        {"keep-state", no_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *dir = MT_DEFAULT_TEMP_DIR;
    bool force = false, keep_state = false;
    long grace = 10;
    int c, stopped = 0, failed = 0;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't': dir = optarg; break;
        case 'f': force = true; break;
        case 'k': keep_state = true; break;
        case 'g':
            if (!mt_parse_int(optarg, 0, 3600, &grace)) {
                fprintf(stderr, "manta stop: invalid value for "
                                "--grace-period: '%s'\n", optarg);
                usage(stderr);
                return MT_EXIT_USAGE;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            fprintf(stderr, "manta stop: unknown or incomplete option '%s'\n",
                    argv[optind - 1]);
            usage(stderr);
            return MT_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "manta stop: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return MT_EXIT_USAGE;
    }
    for (int i = 0; i < 2; i++) {
        int r = stop_one(dir, i == 0 ? "worker" : "head", force, grace);
        stopped += r > 0;
        failed += r < 0;
        if (i == 0 && r >= 0)
            stopped += sweep_worker(dir) > 0;
        if (i == 1 && r >= 0 && !keep_state)
            stopped += remove_state(dir);
    }
    {
        char *reg = mt_session_path(dir, "worker.registered");
        unlink(reg);
        free(reg);
    }
    if (!stopped && !failed)
        printf("No Manta processes running for %s.\n", dir);
    return failed ? 1 : 0;
}

const struct mt_cli_command mt_cli_cmd_stop = {
    "stop", cmd_stop,
    "stop what this machine started"};
