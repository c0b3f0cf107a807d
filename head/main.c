/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c -- manta-head: parse flags, run the head on a libuv loop until
 * SIGTERM/SIGINT, then stop gracefully.
 *
 * Usually started by `manta start --head`, which passes --temp-dir; the head
 * then writes <temp-dir>/head.addr once it listens, so the CLI knows it is up,
 * and, unless --no-dashboard, <temp-dir>/dashboard.addr (http://ip:port).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/auth.h"
#include "common/parse.h"
#include "common/daemon.h"
#include "common/error.h"
#include "common/log.h"
#include "common/sys.h"
#include "head/head.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta-head [options]\n"
            "\n"
            "The Manta head daemon: node membership, cluster status.\n"
            "Normally started by `manta start --head`.\n"
            "\n"
            "  --port P               rpc port (default %d; 0 picks one)\n"
            "  --node-ip IP           address to bind and advertise (default:\n"
            "                         the primary IPv4 address; 0.0.0.0 binds\n"
            "                         all and advertises the primary one)\n"
            "  --temp-dir DIR         session dir; head.addr and dashboard.addr\n"
            "                         are written there\n"
            "  --dashboard-port D     serve the dashboard, /api and /metrics over\n"
            "                         HTTP on D (0 picks one; default %d, or a\n"
            "                         free port when that one is taken)\n"
            "  --dashboard-host IP    dashboard bind address (default 127.0.0.1)\n"
            "  --no-dashboard         serve no dashboard\n"
            "  --history-seconds N    seconds of 1 s samples the dashboard keeps\n"
            "                         (default %d; 0: none)\n"
            MT_SECURITY_USAGE
            "                         (the head makes <temp-dir>/token when no\n"
            "                         token is given)\n"
            "  --storage SPEC         state backend: memory (the default here:\n"
            "                         nothing survives a restart), file://PATH\n"
            "                         (a log and snapshot; `manta start --head`\n"
            "                         uses file://<temp-dir>/head.state) or\n"
            "                         redis://[user:pass@]HOST:PORT[/DB]\n"
            "  --report-period-ms N   how often workers report (default 1000)\n"
            "  --node-timeout-ms N    silence before a node is DEAD (default 3000)\n"
            "  --grace-ms N           shutdown grace for calls (default 2000)\n"
            "  --gang-ports LO-HI     ports handed to gang members: MASTER_PORT,\n"
            "                         TPU_PROCESS_PORT, ... (default 8470-8999)\n"
            "  --keep-finished-tasks N  ended tasks kept for listing and\n"
            "                         the dashboard, oldest forgotten first\n"
            "                         (default 10000)\n"
            "  --log-level L          debug|info|warn|error (default info)\n"
            "  --version              print the version\n"
            "  -h, --help             this text\n",
            MT_HEAD_DEFAULT_PORT, MT_DASHBOARD_DEFAULT_PORT,
            MT_HISTORY_DEFAULT_SECONDS);
}

static uv_loop_t *loop;
static struct mt_head *head;
static struct mt_daemon daemon_;

static void stop_head(void *d, void (*done)(void *arg), void *arg)
{
    mt_head_stop(d, done, arg);
}

enum { O_PORT = 256, O_IP, O_TMP, O_STORAGE, O_PERIOD, O_TIMEOUT, O_GRACE,
       O_LOG, O_VERSION, O_DASH, O_GANG_PORTS, O_DASH_HOST, O_NO_DASH,
       O_HISTORY, O_KEEP, O_SEC };

static const struct option opts[] = {
    {"port", required_argument, NULL, O_PORT},
    {"node-ip", required_argument, NULL, O_IP},
    {"temp-dir", required_argument, NULL, O_TMP},
    {"dashboard-port", required_argument, NULL, O_DASH},
    {"dashboard-host", required_argument, NULL, O_DASH_HOST},
    {"no-dashboard", no_argument, NULL, O_NO_DASH},
    {"history-seconds", required_argument, NULL, O_HISTORY},
    MT_SECURITY_LONGOPTS(O_SEC),
    {"storage", required_argument, NULL, O_STORAGE},
    {"report-period-ms", required_argument, NULL, O_PERIOD},
    {"node-timeout-ms", required_argument, NULL, O_TIMEOUT},
    {"grace-ms", required_argument, NULL, O_GRACE},
    {"gang-ports", required_argument, NULL, O_GANG_PORTS},
    {"keep-finished-tasks", required_argument, NULL, O_KEEP},
    {"log-level", required_argument, NULL, O_LOG},
    {"version", no_argument, NULL, O_VERSION},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/*
 * dashboard.addr holds the dashboard's URL; it is written before head.addr,
 * so whoever waits for head.addr finds it. Without a dashboard a stale one
 * is removed. RET 0 or -errno.
 */
static int write_dashboard_addr(const char *dir, const char *url)
{
    char *path = mt_xasprintf("%s/dashboard.addr", dir);
    int rc = 0;

    if (*url)
        rc = mt_sys_write_file_atomic(path, url);
    else if (unlink(path) < 0 && errno != ENOENT)
        rc = -errno;
    free(path);
    return rc;
}

/* "LO-HI", 1 <= LO <= HI <= 65535, at least 16 ports. */
static bool parse_port_range(const char *s, struct mt_head_config *cfg)
{
    char lo[8], hi[8];
    const char *dash = strchr(s, '-');
    long a, b;

    if (!dash || dash - s >= (long)sizeof(lo) ||
        strlen(dash + 1) >= sizeof(hi))
        return false;
    memcpy(lo, s, (size_t)(dash - s));
    lo[dash - s] = '\0';
    strcpy(hi, dash + 1);
    if (!mt_parse_int(lo, 1, 65535, &a) || !mt_parse_int(hi, 1, 65535, &b) ||
        b < a + 15)
        return false;
    cfg->gang_port_lo = (int)a;
    cfg->gang_port_hi = (int)b;
    return true;
}

/*
 * The head's credentials: those given, else a new token stored 0600 as
 * <temp-dir>/token for the CLI and joining nodes. RET 0 or -1 (said why).
 */
static int load_credentials(const struct mt_security_src *src,
                            const char *temp_dir, struct mt_security *sec)
{
    char err[512], tok[MT_AUTH_TOKEN_HEX + 1], *path;
    int rc = mt_security_load(src, sec, err, sizeof(err));

    if (rc == 0 && !sec->token && !src->auth_none) {
        if (!temp_dir) {
            snprintf(err, sizeof(err), "no cluster token: give --token-file, "
                     "MANTA_AUTH_TOKEN(_FILE), or --temp-dir to keep a new "
                     "one (or --auth none)");
            rc = -MT_EINVAL;
        } else if ((rc = mt_sys_mkdir_private(temp_dir)) < 0 ||
                   (rc = mt_auth_token_generate(tok)) < 0) {
            snprintf(err, sizeof(err), "cannot make a cluster token under %s: "
                     "%s", temp_dir, mt_strerror(rc));
        } else {
            path = mt_xasprintf("%s/token", temp_dir);
            rc = mt_auth_token_write(path, tok);
            snprintf(err, sizeof(err), "cannot write %s: %s", path,
                     mt_strerror(rc));
            free(path);
            if (rc == 0)
                sec->token = mt_xstrdup(tok);
        }
    }
    if (rc < 0) {
        fprintf(stderr, "manta-head: %s\n", err);
        mt_security_free(sec);
        return -1;
    }
    if (src->auth_none)
        MT_WARN("AUTH IS OFF (--auth none): anyone who can reach this head's "
                "port can run any command on every node of the cluster as "
                "this user");
    return 0;
}

/* The dashboard sizes its connection caps from RLIMIT_NOFILE: take the
 * hard limit, so slow clients cannot crowd out everyone else. */
static void raise_fd_limit(void)
{
    struct rlimit r;

    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

static int bad_value(const char *flag, const char *v)
{
    fprintf(stderr, "manta-head: invalid value for --%s: '%s'\n", flag, v);
    usage(stderr);
    return MT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    struct mt_head_config cfg = {
        .storage = "memory", .report_period_ms = 1000,
        .node_timeout_ms = 3000, .grace_ms = 2000,
        .dashboard_port = MT_DASHBOARD_DEFAULT_PORT,
        .dashboard_host = "127.0.0.1",
        .history_seconds = MT_HISTORY_DEFAULT_SECONDS};
    bool no_dash = false;
    struct mt_security_src src = {0};
    struct mt_security sec;
    long port = MT_HEAD_DEFAULT_PORT, v;
    const char *node_ip = NULL;
    char ip[64], bind[128], *addr_path;
    int c, level = MT_LOG_INFO, rc;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_PORT:
            if (!mt_parse_int(optarg, 0, 65535, &port))
                return bad_value("port", optarg);
            break;
        case O_IP:
            if (!mt_valid_ipv4(optarg))
                return bad_value("node-ip", optarg);
            node_ip = optarg;
            break;
        case O_TMP:
            cfg.temp_dir = optarg;
            break;
        case O_DASH:
            if (!mt_parse_int(optarg, 0, 65535, &v))
                return bad_value("dashboard-port", optarg);
            cfg.dashboard_port = (int)v;
            cfg.dashboard_port_given = true;
            break;
        case O_NO_DASH:
            no_dash = true;
            break;
        case O_HISTORY:
            if (!mt_parse_int(optarg, 0, 7 * 86400, &v))
                return bad_value("history-seconds", optarg);
            cfg.history_seconds = (int)v;
            break;
        case O_DASH_HOST:
            if (!mt_valid_ipv4(optarg))
                return bad_value("dashboard-host", optarg);
            cfg.dashboard_host = optarg;
            break;
        case O_STORAGE:
            cfg.storage = optarg;
            break;
        case O_PERIOD:
            if (!mt_parse_int(optarg, 10, 600000, &v))
                return bad_value("report-period-ms", optarg);
            cfg.report_period_ms = (int)v;
            break;
        case O_TIMEOUT:
            if (!mt_parse_int(optarg, 50, 3600000, &v))
                return bad_value("node-timeout-ms", optarg);
            cfg.node_timeout_ms = (int)v;
            break;
        case O_GRACE:
            if (!mt_parse_int(optarg, 0, 600000, &v))
                return bad_value("grace-ms", optarg);
            cfg.grace_ms = (int)v;
            break;
        case O_GANG_PORTS:
            if (!parse_port_range(optarg, &cfg))
                return bad_value("gang-ports", optarg);
            break;
        case O_KEEP:
            if (!mt_parse_int(optarg, 100, 10000000, &v))
                return bad_value("keep-finished-tasks", optarg);
            cfg.keep_finished_tasks = v;
            break;
        case O_LOG:
            level = mt_log_parse_level(optarg);
            if (level < 0)
                return bad_value("log-level", optarg);
            break;
        case O_VERSION:
            printf("manta-head %s\n", MT_VERSION);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            if (c >= O_SEC && c < O_SEC + MT_SEC_N_OPTS) {
                if (mt_security_src_set(&src, c - O_SEC, optarg) < 0)
                    return bad_value("auth", optarg);
                break;
            }
            fprintf(stderr, "manta-head: unknown or incomplete option '%s'\n",
                    argv[optind - 1]);
            usage(stderr);
            return MT_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "manta-head: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return MT_EXIT_USAGE;
    }
    if (no_dash && cfg.dashboard_port_given) {
        fprintf(stderr, "manta-head: --no-dashboard and --dashboard-port "
                        "exclude each other\n");
        return MT_EXIT_USAGE;
    }
    if (no_dash)
        cfg.dashboard_port = -1;
    if (cfg.node_timeout_ms <= cfg.report_period_ms)
        fprintf(stderr, "manta-head: warning: --node-timeout-ms should exceed "
                        "--report-period-ms\n");
    mt_log_init("head", (enum mt_log_level)level, NULL);
    signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();
    if (!node_ip || strcmp(node_ip, "0.0.0.0") == 0)
        mt_sys_primary_ip(ip, sizeof(ip));
    else
        snprintf(ip, sizeof(ip), "%s", node_ip);
    snprintf(bind, sizeof(bind), "%s:%ld", node_ip ? node_ip : ip, port);
    cfg.bind_addr = bind;
    cfg.node_ip = ip;
    src.session_dir = cfg.temp_dir;
    if (load_credentials(&src, cfg.temp_dir, &sec) < 0)
        return MT_EXIT_USAGE;
    cfg.sec = &sec;
    /* Before the start: the head writes prom_sd.json there as it starts. */
    if (cfg.temp_dir && (rc = mt_sys_mkdir_private(cfg.temp_dir)) < 0) {
        fprintf(stderr, "manta-head: cannot make the session dir %s: %s\n",
                cfg.temp_dir, mt_strerror(rc));
        mt_security_free(&sec);
        return 1;
    }

    loop = uv_default_loop();
    rc = mt_head_start(loop, &cfg, &head);
    if (rc < 0) {
        if (rc == -MT_EIO)
            fprintf(stderr, "manta-head: cannot start: cannot listen on %s: "
                    "the port is in use, or the address is not this "
                    "host's\n", cfg.bind_addr);
        else
            fprintf(stderr, "manta-head: cannot start: %s\n",
                    mt_strerror(rc));
        return 1;
    }
    mt_daemon_init(&daemon_, loop, stop_head, head);
    if (cfg.temp_dir) {
        rc = write_dashboard_addr(cfg.temp_dir, mt_head_dashboard_url(head));
        addr_path = mt_xasprintf("%s/head.addr", cfg.temp_dir);
        if (rc == 0)
            rc = mt_sys_write_file_atomic(addr_path, mt_head_address(head));
        free(addr_path);
        if (rc < 0) {
            MT_ERROR("cannot write session files under %s: %s", cfg.temp_dir,
                     mt_strerror(rc));
            mt_daemon_shutdown(&daemon_);
        }
    }
    mt_daemon_run(&daemon_);
    mt_head_destroy(head);
    mt_daemon_close_loop(loop);
    MT_INFO("head stopped");
    mt_security_free(&sec);
    return rc < 0 ? 1 : 0;
}
