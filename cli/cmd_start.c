/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_start.c -- `manta start`: start a head and a worker (--head) or a
 * worker that joins an existing head (--address), as daemons owned by a
 * session dir, and wait until they are up.
 *
 * Option values are checked here, before anything starts, with the same
 * parsers the daemons use, so a typo fails fast with a usage message.
 *
 * With --block the command stays in the foreground once the daemons are
 * up, for a supervisor (systemd, a container runtime, a terminal): SIGTERM,
 * SIGINT or SIGHUP stops them the way `manta stop` does and exits 0; a
 * daemon that dies on its own stops the rest and exits 1. The signals are
 * blocked from the start and taken with sigtimedwait, so one that arrives
 * while the daemons are still starting is not lost.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/session.h"
#include "common/alloc.h"
#include "common/auth.h"
#include "common/error.h"
#include "common/parse.h"
#include "common/qty.h"
#include "common/strbuf.h"
#include "common/sys.h"

#define MAX_ARGS 64

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta start --head [--port P] [options]\n"
            "       manta start --address HOST:PORT [options]\n"
            "\n"
            "Start Manta on this machine: with --head, a head and a worker; with\n"
            "--address, a worker that joins the head at HOST:PORT.\n"
            "\n"
            "  --head                 start the head (and a worker) here\n"
            "  --address HOST:PORT    join the head at HOST:PORT\n"
            "  --port P               head rpc port (default 6380; 0 picks one)\n"
            "  --dashboard-port D     with --head: serve the dashboard, /api and\n"
            "                         /metrics over HTTP on D (0 picks one;\n"
            "                         default 8265, or a free port if taken)\n"
            "  --no-dashboard         with --head: serve no dashboard\n"
            "  --gang-ports LO-HI     with --head: ports handed to TPU gang members\n"
            "                         (MASTER_PORT, TPU_PROCESS_PORT; default\n"
            "                         8470-8999)\n"
            "  --node-ip IP           this node's address (default: primary IPv4)\n"
            "  --temp-dir DIR         session dir (default %s)\n"
            "  --no-worker            with --head: start only the head\n"
            "  --block                stay in the foreground: SIGTERM or Ctrl-C\n"
            "                         stops the daemons (as `manta stop`) and\n"
            "                         exits 0; a daemon that dies stops the rest\n"
            "                         and exits 1 (docs/deploy.md)\n"
            "security (docs/security.md):\n"
            "  --token-file PATH      the cluster token (default: with --head a\n"
            "                         new one; to join, $MANTA_AUTH_TOKEN or\n"
            "                         $MANTA_AUTH_TOKEN_FILE); kept 0600 as\n"
            "                         <temp-dir>/token for the manta command\n"
            "  --auth none            no token: anyone who reaches a port runs\n"
            "                         commands as this user (not for shared\n"
            "                         networks)\n"
            "  --tls-cert F, --tls-key F  this node's PEM certificate and key:\n"
            "                         every rpc speaks TLS (`manta tls-init`\n"
            "                         makes a test CA and certificates)\n"
            "  --tls-ca F             PEM CA: verify peers and require client\n"
            "                         certificates (mutual TLS)\n"
            "  --dashboard-host IP    with --head: dashboard bind address\n"
            "                         (default 127.0.0.1)\n"
            "  --storage SPEC         with --head: where its state is kept:\n"
            "                         file://PATH (default: file://<temp-dir>/\n"
            "                         head.state; a head restarted on the same\n"
            "                         temp dir recovers, `manta stop` removes\n"
            "                         it), redis://[user:pass@]HOST:PORT[/DB],\n"
            "                         or memory (nothing survives a restart)\n"
            "node options:\n"
            "  --num-cpus N           CPUs to offer (default: detected)\n"
            "  --num-gpus N           GPUs to offer (default: detected NVIDIA\n"
            "                         GPUs, limited by CUDA_VISIBLE_DEVICES)\n"
            "  --memory BYTES         memory to offer, e.g. 8GiB (default: RAM)\n"
            "  --resources JSON       custom resources, e.g. '{\"accel\": 2}'\n"
            "  --labels K=V,...       node labels\n"
            "  --num-executors N      processes for function tasks (default: CPUs)\n"
            "  --object-store-memory BYTES  object store size (default: 30%% of\n"
            "                         RAM, capped by /dev/shm)\n"
            "  --metrics-port P       the worker's Prometheus /metrics port on\n"
            "                         its node ip (default 0: a free one, in\n"
            "                         <temp-dir>/worker.metrics; -1: off)\n"
            "  --dev-root DIR, --sys-root DIR  where TPU detection reads\n"
            "                         dev/ and sys/ (default /)\n"
            "  --tpu-metadata-url URL GCE metadata URL for the TPU slice\n"
            "                         identity ('' = never ask)\n"
            "tuning:\n"
            "  --report-period-ms N   worker report period (default 1000)\n"
            "  --node-timeout-ms N    silence before a node is DEAD (default 3000)\n"
            "  --log-level L          daemon log level (default info)\n"
            "  --start-timeout S      seconds to wait for each daemon (default 15)\n"
            "  -h, --help             this text\n",
            MT_DEFAULT_TEMP_DIR);
}

struct start_opts {
    int head;
    int no_worker;
    int block;
    const char *address;
    const char *port;
    const char *dashboard_port;
    int no_dashboard;
    const char *gang_ports;
    const char *node_ip;
    const char *temp_dir;
    const char *num_cpus, *num_gpus, *memory, *resources, *labels;
    const char *store_memory;
    const char *metrics_port;
    const char *executors;
    const char *dev_root, *sys_root, *tpu_md_url;
    const char *period, *timeout, *log_level;
    const char *dashboard_host;
    const char *storage;
    struct mt_security_src sec;
    char *token_path;    /* <temp-dir>/token, given to the daemons; NULL
                            with --auth none */
    char *tls_files[3];  /* owned absolute paths behind sec.tls_* */
    long start_timeout_s;
};

enum { O_HEAD = 256, O_ADDR, O_PORT, O_DASH, O_IP, O_TMP, O_NOWORKER, O_CPUS,
       O_GPUS, O_MEM, O_RES, O_LABELS, O_PERIOD, O_TIMEOUT, O_LOG, O_WAIT,
       O_OSM, O_EXEC, O_DEVROOT, O_SYSROOT, O_MDURL, O_GANGPORTS,
       O_DASH_HOST, O_STORAGE, O_NODASH, O_METRICS, O_BLOCK, O_SEC };

static const struct option opts[] = {
    {"head", no_argument, NULL, O_HEAD},
    {"address", required_argument, NULL, O_ADDR},
    {"port", required_argument, NULL, O_PORT},
    {"dashboard-port", required_argument, NULL, O_DASH},
    {"no-dashboard", no_argument, NULL, O_NODASH},
    {"gang-ports", required_argument, NULL, O_GANGPORTS},
    {"node-ip", required_argument, NULL, O_IP},
    {"temp-dir", required_argument, NULL, O_TMP},
    {"no-worker", no_argument, NULL, O_NOWORKER},
    {"block", no_argument, NULL, O_BLOCK},
    {"num-cpus", required_argument, NULL, O_CPUS},
    {"num-gpus", required_argument, NULL, O_GPUS},
    {"memory", required_argument, NULL, O_MEM},
    {"resources", required_argument, NULL, O_RES},
    {"labels", required_argument, NULL, O_LABELS},
    {"report-period-ms", required_argument, NULL, O_PERIOD},
    {"node-timeout-ms", required_argument, NULL, O_TIMEOUT},
    {"log-level", required_argument, NULL, O_LOG},
    {"start-timeout", required_argument, NULL, O_WAIT},
    {"object-store-memory", required_argument, NULL, O_OSM},
    {"metrics-port", required_argument, NULL, O_METRICS},
    {"num-executors", required_argument, NULL, O_EXEC},
    {"dev-root", required_argument, NULL, O_DEVROOT},
    {"sys-root", required_argument, NULL, O_SYSROOT},
    {"tpu-metadata-url", required_argument, NULL, O_MDURL},
    {"dashboard-host", required_argument, NULL, O_DASH_HOST},
    {"storage", required_argument, NULL, O_STORAGE},
    MT_SECURITY_LONGOPTS(O_SEC),
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int bad(const char *flag, const char *v, const char *why)
{
    fprintf(stderr, "manta start: invalid value for --%s: '%s'%s%s\n", flag, v,
            why && *why ? ": " : "", why ? why : "");
    usage(stderr);
    return MT_EXIT_USAGE;
}

/* Check every value up front; RET 0 or the exit code. */
static int check_values(const struct start_opts *o)
{
    struct mt_qty_list res = {0};
    struct mt_kv_list labels = {0};
    char err[256] = "";
    int64_t q;
    uint64_t b;
    long v;
    int rc = 0;

    if (o->port && !mt_parse_int(o->port, 0, 65535, &v))
        return bad("port", o->port, NULL);
    if (o->dashboard_port && !mt_parse_int(o->dashboard_port, 0, 65535, &v))
        return bad("dashboard-port", o->dashboard_port, NULL);
    if (o->metrics_port && !mt_parse_int(o->metrics_port, -1, 65535, &v))
        return bad("metrics-port", o->metrics_port, NULL);
    if (o->node_ip && !mt_valid_ipv4(o->node_ip))
        return bad("node-ip", o->node_ip, "expected an IPv4 address");
    if (o->dashboard_host && !mt_valid_ipv4(o->dashboard_host))
        return bad("dashboard-host", o->dashboard_host,
                   "expected an IPv4 address");
    if (o->num_cpus && mt_qty_parse(o->num_cpus, &q) < 0)
        return bad("num-cpus", o->num_cpus, "expected a number >= 0");
    if (o->num_gpus && (mt_qty_parse(o->num_gpus, &q) < 0 || q % MT_QTY_SCALE))
        return bad("num-gpus", o->num_gpus, "expected a whole number >= 0");
    if (o->memory && mt_bytes_parse(o->memory, &b) < 0)
        return bad("memory", o->memory, "expected a size like 8GiB");
    if (o->store_memory && (mt_bytes_parse(o->store_memory, &b) < 0 ||
                            b < (1u << 20)))
        return bad("object-store-memory", o->store_memory,
                   "expected a size from 1MiB, like 2GiB");
    if (o->executors && !mt_parse_int(o->executors, 1, 64, &v))
        return bad("num-executors", o->executors, "expected 1 to 64");
    if (o->period && !mt_parse_int(o->period, 10, 600000, &v))
        return bad("report-period-ms", o->period, NULL);
    if (o->timeout && !mt_parse_int(o->timeout, 50, 3600000, &v))
        return bad("node-timeout-ms", o->timeout, NULL);
    if (o->resources && mt_qty_parse_json(o->resources, &res, err,
                                          sizeof(err)) < 0)
        rc = bad("resources", o->resources, err);
    else if (o->labels && mt_kv_parse(o->labels, &labels, err,
                                      sizeof(err)) < 0)
        rc = bad("labels", o->labels, err);
    mt_qty_list_release(&res);
    mt_kv_list_release(&labels);
    return rc;
}

static int parse(int argc, char **argv, struct start_opts *o)
{
    int c;

    memset(o, 0, sizeof(*o));
    o->temp_dir = MT_DEFAULT_TEMP_DIR;
    o->start_timeout_s = 15;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_HEAD: o->head = 1; break;
        case O_ADDR: o->address = optarg; break;
        case O_PORT: o->port = optarg; break;
        case O_DASH: o->dashboard_port = optarg; break;
        case O_NODASH: o->no_dashboard = 1; break;
        case O_GANGPORTS: o->gang_ports = optarg; break;
        case O_IP: o->node_ip = optarg; break;
        case O_TMP: o->temp_dir = optarg; break;
        case O_NOWORKER: o->no_worker = 1; break;
        case O_BLOCK: o->block = 1; break;
        case O_CPUS: o->num_cpus = optarg; break;
        case O_GPUS: o->num_gpus = optarg; break;
        case O_MEM: o->memory = optarg; break;
        case O_RES: o->resources = optarg; break;
        case O_LABELS: o->labels = optarg; break;
        case O_PERIOD: o->period = optarg; break;
        case O_TIMEOUT: o->timeout = optarg; break;
        case O_LOG: o->log_level = optarg; break;
        case O_OSM: o->store_memory = optarg; break;
        case O_METRICS: o->metrics_port = optarg; break;
        case O_EXEC: o->executors = optarg; break;
        case O_DEVROOT: o->dev_root = optarg; break;
        case O_SYSROOT: o->sys_root = optarg; break;
        case O_MDURL: o->tpu_md_url = optarg; break;
        case O_DASH_HOST: o->dashboard_host = optarg; break;
        case O_STORAGE: o->storage = optarg; break;
        case O_WAIT:
            if (!mt_parse_int(optarg, 1, 3600, &o->start_timeout_s))
                return bad("start-timeout", optarg, NULL);
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            if (c >= O_SEC && c < O_SEC + MT_SEC_N_OPTS) {
                if (mt_security_src_set(&o->sec, c - O_SEC, optarg) < 0)
                    return bad("auth", optarg, "expected token or none");
                break;
            }
            fprintf(stderr, "manta start: unknown or incomplete option '%s'\n",
                    argv[optind - 1]);
            usage(stderr);
            return MT_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "manta start: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return MT_EXIT_USAGE;
    }
    if (o->head == !!o->address) {
        fprintf(stderr, "manta start: give exactly one of --head or --address\n");
        usage(stderr);
        return MT_EXIT_USAGE;
    }
    if (o->address && !mt_parse_host_port(o->address))
        return bad("address", o->address, "expected HOST:PORT");
    if (o->no_worker && !o->head)
        return bad("no-worker", "", "only with --head");
    if (o->dashboard_port && !o->head)
        return bad("dashboard-port", o->dashboard_port, "only with --head");
    if (o->no_dashboard && !o->head)
        return bad("no-dashboard", "", "only with --head");
    if (o->no_dashboard && o->dashboard_port)
        return bad("no-dashboard", "", "not with --dashboard-port");
    if (o->gang_ports && !o->head)
        return bad("gang-ports", o->gang_ports, "only with --head");
    if (o->dashboard_host && !o->head)
        return bad("dashboard-host", o->dashboard_host, "only with --head");
    if (o->storage && !o->head)
        return bad("storage", o->storage, "only with --head");
    return check_values(o);
}

static void add(char **args, int *n, const char *flag, const char *value)
{
    if (!value || *n + 2 >= MAX_ARGS)
        return;
    args[(*n)++] = (char *)flag;
    args[(*n)++] = (char *)value;
}

/* The credential flags every daemon of this session gets. */
static void add_security(const struct start_opts *o, char **args, int *n)
{
    if (o->token_path)
        add(args, n, "--token-file", o->token_path);
    else
        add(args, n, "--auth", "none");
    add(args, n, "--tls-cert", o->sec.tls_cert);
    add(args, n, "--tls-key", o->sec.tls_key);
    add(args, n, "--tls-ca", o->sec.tls_ca);
}

/* Spawn a daemon and wait for its marker file; RET owned contents or NULL. */
static char *launch(const struct start_opts *o, const char *name, char **args,
                    const char *marker)
{
    char *log = mt_xasprintf("%s/logs/%s.log", o->temp_dir, name);
    char *txt = NULL;
    pid_t pid = mt_session_spawn(o->temp_dir, name, args, log);

    if (pid < 0) {
        fprintf(stderr, "manta start: cannot start %s: %s\n", args[0],
                strerror((int)-pid));
        goto out;
    }
    txt = mt_session_wait_file(o->temp_dir, marker, pid,
                               (int)o->start_timeout_s * 1000);
    if (!txt) {
        bool alive = mt_session_pid_alive(pid);
        char *pidfile = mt_xasprintf("%s/%s.pid", o->temp_dir, name);
        char *why = alive ? NULL : mt_session_exit_reason(log, args[0]);

        /* A daemon that refused to start says why in one line; only a
         * silent or slow one needs its log shown. */
        if (why)
            fprintf(stderr, "manta start: %s\n", why);
        else
            fprintf(stderr, "manta start: %s did not come up within %lds "
                    "(%s)\n", args[0], o->start_timeout_s,
                    alive ? "still waiting; stopped it" : "it exited");
        /* Leave nothing half-started behind. */
        if (alive)
            kill(pid, SIGKILL);
        unlink(pidfile);
        free(pidfile);
        if (why)
            fprintf(stderr, "(log: %s)\n", log);
        else
            mt_session_print_log_tail(log, 15);
        free(why);
    }
out:
    free(log);
    return txt;
}

/* The head's default storage: file://<absolute temp-dir>/head.state.
 * RET owned, free with free(). */
static char *default_storage(const struct start_opts *o)
{
    char *dir = realpath(o->temp_dir, NULL);
    char *spec = mt_xasprintf("file://%s/%s", dir ? dir : o->temp_dir,
                              MT_HEAD_STATE_FILE);

    free(dir);
    return spec;
}

static char *start_head(const struct start_opts *o)
{
    char *args[MAX_ARGS] = {"manta-head"};
    char *storage = o->storage ? NULL : default_storage(o), *addr;
    int n = 1;

    add(args, &n, "--port", o->port ? o->port : "6380");
    add(args, &n, "--node-ip", o->node_ip);
    add(args, &n, "--temp-dir", o->temp_dir);
    add(args, &n, "--dashboard-port", o->dashboard_port);
    if (o->no_dashboard)
        args[n++] = "--no-dashboard";
    add(args, &n, "--dashboard-host", o->dashboard_host);
    add(args, &n, "--gang-ports", o->gang_ports);
    add(args, &n, "--storage", o->storage ? o->storage : storage);
    add_security(o, args, &n);
    add(args, &n, "--report-period-ms", o->period);
    add(args, &n, "--node-timeout-ms", o->timeout);
    add(args, &n, "--log-level", o->log_level);
    addr = launch(o, "head", args, "head.addr");
    free(storage);
    return addr;
}

static char *start_worker(const struct start_opts *o, const char *head)
{
    char *args[MAX_ARGS] = {"manta-worker"};
    int n = 1;

    add(args, &n, "--address", head);
    add(args, &n, "--node-ip", o->node_ip);
    add_security(o, args, &n);
    add(args, &n, "--temp-dir", o->temp_dir);
    add(args, &n, "--num-cpus", o->num_cpus);
    add(args, &n, "--num-gpus", o->num_gpus);
    add(args, &n, "--memory", o->memory);
    add(args, &n, "--resources", o->resources);
    add(args, &n, "--labels", o->labels);
    add(args, &n, "--object-store-memory", o->store_memory);
    add(args, &n, "--metrics-port", o->metrics_port);
    add(args, &n, "--num-executors", o->executors);
    add(args, &n, "--dev-root", o->dev_root);
    add(args, &n, "--sys-root", o->sys_root);
    add(args, &n, "--tpu-metadata-url", o->tpu_md_url);
    add(args, &n, "--report-period-ms", o->period);
    add(args, &n, "--log-level", o->log_level);
    return launch(o, "worker", args, "worker.registered");
}

/* Refuse to start over live daemons; clear stale markers. */
static int prepare_dir(const struct start_opts *o)
{
    static const char *stale[] = {"head.addr", "worker.addr",
                                  "worker.registered"};
    const char *names[] = {o->head ? "head" : NULL,
                           o->no_worker ? NULL : "worker"};
    char *logs = mt_xasprintf("%s/logs", o->temp_dir);
    int rc = mt_sys_mkdir_private(o->temp_dir);

    if (rc == 0)
        rc = mt_sys_mkdir_p(logs);
    free(logs);
    if (rc < 0) {
        fprintf(stderr, "manta start: cannot create %s: %s\n", o->temp_dir,
                rc == -EPERM ? "it is not a directory of this user"
                             : strerror(-rc));
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        pid_t pid = names[i] ? mt_session_read_pid(o->temp_dir, names[i]) : 0;
        if (pid > 0) {
            fprintf(stderr,
                    "manta start: a manta-%s is already running for %s "
                    "(pid %d); run `manta stop --temp-dir %s` first\n",
                    names[i], o->temp_dir, (int)pid, o->temp_dir);
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++) {
        if ((i == 0 && !o->head) || (i > 0 && o->no_worker))
            continue;
        char *p = mt_session_path(o->temp_dir, stale[i]);
        unlink(p);
        free(p);
    }
    return 0;
}

/* A TLS file's absolute path (the daemons and the session file need one),
 * owned by *keep. RET 0 or the exit code. */
static int absolute(const char *flag, const char **path, char **keep)
{
    if (!*path)
        return 0;
    if (!(*keep = realpath(*path, NULL))) {
        fprintf(stderr, "manta start: --%s %s: %s\n", flag, *path,
                strerror(errno));
        return 1;
    }
    *path = *keep;
    return 0;
}

/* <temp-dir>/tls names the TLS files for the manta command and drivers on
 * this machine; without TLS a stale one is removed. RET 0 or -errno. */
static int write_tls_file(const struct start_opts *o)
{
    char *path = mt_session_path(o->temp_dir, "tls");
    int rc = 0;

    if (o->sec.tls_cert || o->sec.tls_ca) {
        char *text = mt_xasprintf("cert=%s\nkey=%s\nca=%s\n",
                                  o->sec.tls_cert ? o->sec.tls_cert : "",
                                  o->sec.tls_key ? o->sec.tls_key : "",
                                  o->sec.tls_ca ? o->sec.tls_ca : "");
        rc = mt_sys_write_file_atomic(path, text);
        free(text);
    } else if (unlink(path) < 0 && errno != ENOENT) {
        rc = -errno;
    }
    free(path);
    return rc;
}

/* The token for this session's daemons: the one given, else (--head) a
 * new one; NULL with --auth none. The TLS files given are read too, so a
 * bad one fails before anything starts. RET 0 or the exit code. */
static int pick_token(const struct start_opts *o, char **token)
{
    struct mt_security sec;
    char err[512], tok[MT_AUTH_TOKEN_HEX + 1];
    int rc = mt_security_load(&o->sec, &sec, err, sizeof(err));

    *token = NULL;
    if (rc == 0 && !sec.token && !o->sec.auth_none) {
        if (!o->head) {
            snprintf(err, sizeof(err), "joining needs the cluster token: give "
                     "--token-file (a copy of the head's <temp-dir>/token) or "
                     "set MANTA_AUTH_TOKEN");
            rc = -MT_EINVAL;
        } else if ((rc = mt_auth_token_generate(tok)) < 0) {
            snprintf(err, sizeof(err), "cannot make a cluster token: %s",
                     strerror(-rc));
        } else {
            sec.token = mt_xstrdup(tok);
        }
    }
    if (rc == 0)
        *token = sec.token ? mt_xstrdup(sec.token) : NULL;
    else
        fprintf(stderr, "manta start: %s\n", err);
    mt_security_free(&sec);
    return rc < 0 ? 1 : 0;
}

/*
 * The session's credentials: the token kept 0600 as <temp-dir>/token (the
 * daemons read it there too) and the TLS files named in <temp-dir>/tls.
 * RET 0 or the exit code.
 */
static int prepare_credentials(struct start_opts *o)
{
    char *token = NULL, *path = mt_session_path(o->temp_dir, "token");
    int rc;

    if ((rc = absolute("tls-cert", &o->sec.tls_cert, &o->tls_files[0])) ||
        (rc = absolute("tls-key", &o->sec.tls_key, &o->tls_files[1])) ||
        (rc = absolute("tls-ca", &o->sec.tls_ca, &o->tls_files[2])) ||
        (rc = pick_token(o, &token))) {
        free(path);
        return rc;
    }
    if (token)
        rc = mt_auth_token_write(path, token);
    else if (unlink(path) < 0 && errno != ENOENT)
        rc = -errno;
    if (rc == 0)
        rc = write_tls_file(o);
    if (rc < 0) {
        fprintf(stderr, "manta start: cannot write the credentials under %s: "
                "%s\n", o->temp_dir, strerror(-rc));
        free(path);
        path = NULL;
    }
    if (token) {
        explicit_bzero(token, strlen(token));
        free(token);
    } else {
        free(path);
        path = NULL;
    }
    o->token_path = path;
    return rc < 0 ? 1 : 0;
}

/* The head writes dashboard.addr before head.addr: show it, with the
 * token as a ?token= link that logs the browser in. */
static void print_dashboard(const struct start_opts *o)
{
    const char *dir = o->temp_dir;
    char *path = mt_session_path(dir, "dashboard.addr");
    char *url = mt_sys_read_file(path);
    char *token = o->token_path ? mt_sys_read_file(o->token_path) : NULL;

    if (token)
        token[strcspn(token, "\r\n")] = '\0';
    if (url && *url) {
        url[strcspn(url, "\r\n ")] = '\0';
        printf("Dashboard: %s (Prometheus metrics at %s/metrics)\n", url,
               url);
        if (token) {
            struct mt_strbuf sb = MT_STRBUF_INIT;

            mt_strbuf_add_pct(&sb, token, strlen(token));
            printf("Open it logged in: %s/?token=%s\n", url,
                   mt_strbuf_str(&sb));
            mt_strbuf_release(&sb);
        }
        printf("\n");
    } else {
        printf("Dashboard: not serving (see %s/logs/head.log)\n\n", dir);
    }
    free(token);
    free(url);
    free(path);
}

/* How another machine joins: the token file and TLS flags it needs. */
static void print_join(const struct start_opts *o, const char *head_addr)
{
    if (o->token_path)
        printf("Cluster token: %s (mode 0600).\nEvery node, driver and manta "
               "command of this cluster presents it (docs/security.md).\n\n",
               o->token_path);
    else
        printf("WARNING: auth is off (--auth none): anyone who can reach "
               "%s runs\ncommands on every node of this cluster.\n\n",
               head_addr);
    printf("To add a machine to this cluster, %srun there:\n"
           "    manta start --address %s%s%s\n\n",
           o->token_path ? "copy the token file and " : "", head_addr,
           o->token_path ? " --token-file TOKEN_FILE" : " --auth none",
           o->sec.tls_cert || o->sec.tls_ca
               ? " --tls-cert CERT --tls-key KEY --tls-ca CA" : "");
}

/* Start the daemons and say how to use them. RET 0 or the exit code. */
static int start_all(struct start_opts *o)
{
    char *head_addr = NULL, *node = NULL;

    head_addr = o->head ? start_head(o) : mt_xstrdup(o->address);
    if (!head_addr)
        return 1;
    if (!o->no_worker && !(node = start_worker(o, head_addr))) {
        fprintf(stderr, "manta start: the worker could not join %s%s\n",
                head_addr,
                o->head && !o->block ? "; the head is still running "
                                       "(manta stop)" : "");
        free(head_addr);
        return 1;
    }
    if (o->head) {
        printf("Manta head started at %s (session %s).\n\n", head_addr,
               o->temp_dir);
        print_join(o, head_addr);
        if (!o->no_dashboard)
            print_dashboard(o);
    } else {
        printf("Manta worker joined the cluster at %s (session %s).\n\n",
               head_addr, o->temp_dir);
    }
    if (node)
        printf("Local node: %s\n", node);
    /* --temp-dir: where the manta command finds the token (and, on the
     * head's machine, the address). */
    if (o->head)
        printf("To see the cluster:  manta status --temp-dir %s\n",
               o->temp_dir);
    else
        printf("To see the cluster:  manta status --address %s --temp-dir "
               "%s\n", head_addr, o->temp_dir);
    if (o->block)
        printf("Running in the foreground: SIGTERM or Ctrl-C stops this "
               "node.\n");
    else
        printf("To stop this node:   manta stop --temp-dir %s\n",
               o->temp_dir);
    fflush(stdout);
    free(head_addr);
    free(node);
    return 0;
}

/* What `manta stop --temp-dir DIR [--keep-state]` does. RET its exit
 * code. */
static int stop_session(const struct start_opts *o, bool keep_state)
{
    char *argv[] = {"stop", "--temp-dir", (char *)o->temp_dir,
                    keep_state ? "--keep-state" : NULL, NULL};

    fflush(stdout);
    return mt_cli_cmd_stop.run(keep_state ? 4 : 3, argv);
}

/* A daemon of this session is gone: was it `manta stop` (which removes
 * its pid file once the process exited) or did it die? */
static bool stopped_by_manta_stop(const struct start_opts *o,
                                  const char *name)
{
    char *pidfile = mt_xasprintf("%s/%s.pid", o->temp_dir, name);
    bool gone = false;

    /* manta stop unlinks the pid file right after the exit it waits for. */
    for (int i = 0; i < 25 && !gone; i++) {
        struct timespec ts = {0, 20 * 1000000L};

        gone = access(pidfile, F_OK) < 0 && errno == ENOENT;
        if (!gone)
            nanosleep(&ts, NULL);
    }
    if (!gone)
        unlink(pidfile);    /* dead: leave no stale pid file */
    free(pidfile);
    return gone;
}

/*
 * --block: wait for a signal in *sigs (blocked by the caller) or for a
 * daemon of this session to exit. RET the exit code: 0 after a signal and
 * a clean stop, or when `manta stop` stopped the daemons; 1 when a daemon
 * died (the rest are stopped) or the stop failed.
 */
static int block_until_done(const struct start_opts *o, const sigset_t *sigs)
{
    const char *names[2] = {o->no_worker ? NULL : "worker",
                            o->head ? "head" : NULL};
    pid_t pids[2] = {0, 0};

    for (int i = 0; i < 2; i++)
        if (names[i])
            pids[i] = mt_session_read_pid(o->temp_dir, names[i]);
    for (;;) {
        struct timespec ts = {0, 200 * 1000000L};
        int sig = sigtimedwait(sigs, NULL, &ts);

        if (sig > 0) {
            fprintf(stderr, "manta start: %s: stopping this node\n",
                    strsignal(sig));
            return stop_session(o, false) ? 1 : 0;
        }
        for (int i = 0; i < 2; i++) {
            if (!names[i] || mt_session_pid_alive(pids[i]))
                continue;
            if (stopped_by_manta_stop(o, names[i])) {
                fprintf(stderr, "manta start: manta-%s was stopped by "
                        "`manta stop`; exiting\n", names[i]);
                return 0;
            }
            fprintf(stderr, "manta start: manta-%s (pid %d) exited "
                    "unexpectedly (log: %s/logs/%s.log); stopping the "
                    "rest, keeping the head's state (a head started again "
                    "on this dir recovers)\n", names[i], (int)pids[i],
                    o->temp_dir, names[i]);
            stop_session(o, true);
            return 1;
        }
    }
}

static int cmd_start(int argc, char **argv)
{
    struct start_opts o;
    sigset_t sigs;
    int rc = parse(argc, argv, &o);

    if (rc)
        return rc < 0 ? 0 : rc;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    /* --block: kept blocked to the end, so a second Ctrl-C while the node
     * stops neither kills this process nor changes its exit code. */
    if (o.block)
        sigprocmask(SIG_BLOCK, &sigs, NULL);
    rc = prepare_dir(&o);
    if (!rc)
        rc = prepare_credentials(&o);
    if (!rc) {
        rc = start_all(&o);
        if (rc && o.block)
            stop_session(&o, false); /* --block: nothing half-started */
        else if (o.block)
            rc = block_until_done(&o, &sigs);
    }
    free(o.token_path);
    free(o.tls_files[0]);
    free(o.tls_files[1]);
    free(o.tls_files[2]);
    return rc;
}

const struct mt_cli_command mt_cli_cmd_start = {
    "start", cmd_start,
    "start a head and/or a worker on this machine"};
