/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c -- manta-worker: parse flags, detect resources, run the worker on
 * a libuv loop until SIGTERM/SIGINT, then unregister and stop.
 *
 * Usually started by `manta start`, which passes --temp-dir; the worker
 * writes <temp-dir>/worker.addr once it listens and worker.registered once
 * the head has accepted it.
 */
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/parse.h"
#include "common/daemon.h"
#include "common/error.h"
#include "common/ids.h"
#include "common/log.h"
#include "common/sys.h"
#include "objstore/arena.h"
#include "worker/detect.h"
#include "worker/detect_gpu.h"
#include "worker/gpu_monitor.h"
#include "worker/detect_tpu.h"
#include "worker/worker.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta-worker --address HEAD_HOST:PORT [options]\n"
            "\n"
            "The Manta worker daemon: offers this node's resources to the head.\n"
            "Normally started by `manta start`.\n"
            "\n"
            "  --address HOST:PORT    the head (required)\n"
            "  --node-ip IP           address to bind and advertise (default:\n"
            "                         the primary IPv4 address; 0.0.0.0 binds\n"
            "                         all and advertises the primary one)\n"
            "  --port P               rpc port (default 0: pick one)\n"
            "  --metrics-port P       HTTP /metrics port on the node ip, token\n"
            "                         required (default 0: pick one; -1: off)\n"
            "  --temp-dir DIR         session dir for worker.addr and markers\n"
            "  --num-cpus N           CPUs to offer (default: detected)\n"
            "  --num-gpus N           GPUs to offer (default: detected NVIDIA\n"
            "                         GPUs, limited by CUDA_VISIBLE_DEVICES)\n"
            "  --nvml-path PATH       NVML library to load (default: env\n"
            "                         MANTA_NVML_PATH, else libnvidia-ml.so.1)\n"
            "  --proc-root DIR        where the driver's procfs is read when\n"
            "                         NVML is absent (default: env\n"
            "                         MANTA_PROC_ROOT, else /proc)\n"
            "  --memory BYTES         memory to offer, e.g. 8GiB (default: RAM)\n"
            "  --resources JSON       custom resources, e.g. '{\"accel\": 2}'\n"
            "  --labels K=V,...       node labels\n"
            "  --dev-root DIR         read TPU devices under DIR/dev (default /)\n"
            "  --sys-root DIR         read sysfs under DIR/sys (default /)\n"
            "  --tpu-metadata-url URL GCE metadata attributes URL for the TPU\n"
            "                         slice identity, asked only when TPU chips\n"
            "                         are found and TPU_* env is incomplete\n"
            "                         (default " MT_TPU_METADATA_URL_DEFAULT ";\n"
            "                         '' = never; 1 s budget)\n"
            "  --object-store-memory BYTES  object store size (default: 30%% of\n"
            "                         RAM, capped by /dev/shm)\n"
            "  --object-store-socket PATH   store socket (default:\n"
            "                         TEMP_DIR/objstore.sock)\n"
            "  --spill-dir DIR        where full stores spill objects\n"
            "                         (default: TEMP_DIR/spill)\n"
            "  --num-executors N      executor processes for function tasks,\n"
            "                         1-64 (default: the CPUs offered)\n"
            "  --executor PATH        the executor binary (default:\n"
            "                         manta-executor next to manta-worker)\n"
            "  --node-id ID           node id (default: random)\n"
            "  --report-period-ms N   report period until the head sets one\n"
            MT_SECURITY_USAGE
            "  --log-level L          debug|info|warn|error (default info)\n"
            "  --version              print the version\n"
            "  -h, --help             this text\n");
}

static uv_loop_t *loop;
static struct mt_worker *worker;
static struct mt_daemon daemon_;

static void stop_worker(void *d, void (*done)(void *arg), void *arg)
{
    mt_worker_stop(d, done, arg);
}

enum { O_ADDR = 256, O_IP, O_PORT, O_TMP, O_CPUS, O_GPUS, O_MEM, O_RES,
       O_LABELS, O_ID, O_PERIOD, O_LOG, O_VERSION, O_OSM, O_SOCK, O_SPILL,
       O_NEXEC, O_EXEC, O_DEVROOT, O_SYSROOT, O_MDURL, O_NVML, O_PROCROOT,
       O_METRICS, O_SEC };

static const struct option opts[] = {
    {"address", required_argument, NULL, O_ADDR},
    {"node-ip", required_argument, NULL, O_IP},
    {"port", required_argument, NULL, O_PORT},
    {"metrics-port", required_argument, NULL, O_METRICS},
    {"temp-dir", required_argument, NULL, O_TMP},
    {"num-cpus", required_argument, NULL, O_CPUS},
    {"num-gpus", required_argument, NULL, O_GPUS},
    {"memory", required_argument, NULL, O_MEM},
    {"resources", required_argument, NULL, O_RES},
    {"labels", required_argument, NULL, O_LABELS},
    {"node-id", required_argument, NULL, O_ID},
    {"report-period-ms", required_argument, NULL, O_PERIOD},
    {"log-level", required_argument, NULL, O_LOG},
    {"version", no_argument, NULL, O_VERSION},
    {"object-store-memory", required_argument, NULL, O_OSM},
    {"object-store-socket", required_argument, NULL, O_SOCK},
    {"spill-dir", required_argument, NULL, O_SPILL},
    {"num-executors", required_argument, NULL, O_NEXEC},
    {"executor", required_argument, NULL, O_EXEC},
    {"dev-root", required_argument, NULL, O_DEVROOT},
    {"sys-root", required_argument, NULL, O_SYSROOT},
    {"tpu-metadata-url", required_argument, NULL, O_MDURL},
    {"nvml-path", required_argument, NULL, O_NVML},
    {"proc-root", required_argument, NULL, O_PROCROOT},
    MT_SECURITY_LONGOPTS(O_SEC),
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The worker's credentials: it never makes a token, it is given the
 * cluster's. RET 0 or -1 (said why). */
static int load_credentials(const struct mt_security_src *src,
                            struct mt_security *sec)
{
    char err[512];
    int rc = mt_security_load(src, sec, err, sizeof(err));

    if (rc == 0 && !sec->token && !src->auth_none) {
        snprintf(err, sizeof(err), "no cluster token: give --token-file, set "
                 "MANTA_AUTH_TOKEN or MANTA_AUTH_TOKEN_FILE, or put it in "
                 "<temp-dir>/token (`manta start --head` prints how to join; "
                 "--auth none only for a head started with --auth none)");
        rc = -MT_EINVAL;
    }
    if (rc < 0) {
        fprintf(stderr, "manta-worker: %s\n", err);
        mt_security_free(sec);
        return -1;
    }
    if (src->auth_none)
        MT_WARN("AUTH IS OFF (--auth none): anyone who can reach this "
                "worker's port can run any command here as this user");
    return 0;
}

static int bad(const char *flag, const char *v, const char *why)
{
    fprintf(stderr, "manta-worker: invalid value for --%s: '%s'%s%s\n", flag,
            v, why ? ": " : "", why ? why : "");
    usage(stderr);
    return MT_EXIT_USAGE;
}

/* A node id the operator chose: a name, never shaped like the id of a
 * task, actor, group, gang or object (common/ids.h), so that no two
 * kinds of id are ever the same string. */
static bool valid_node_id(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 64 || mt_id_kind_of(s) != MT_ID_NONE)
        return false;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789-_") == n;
}

/* Fill in the object store's size, socket and spill dir defaults. */
static int object_store_defaults(struct mt_worker_config *cfg)
{
    static char sock[128], spill[512];

    if (!cfg->object_store_memory)
        cfg->object_store_memory = mt_arena_default_capacity("/dev/shm");
    if (cfg->object_store_memory < (1u << 20)) {
        fprintf(stderr, "manta-worker: cannot size the object store (no "
                        "memory info); pass --object-store-memory\n");
        return -1;
    }
    if (!cfg->object_store_socket) {
        if (cfg->temp_dir && strlen(cfg->temp_dir) < 80)
            snprintf(sock, sizeof(sock), "%s/objstore.sock", cfg->temp_dir);
        else
            snprintf(sock, sizeof(sock), "/tmp/manta-objstore-%d.sock",
                     (int)getpid());
        cfg->object_store_socket = sock;
    }
    if (!cfg->spill_dir && cfg->temp_dir) {
        snprintf(spill, sizeof(spill), "%s/spill", cfg->temp_dir);
        cfg->spill_dir = spill;
    }
    return 0;
}

/* One executor per offered CPU (rounded up, 1-64); the executor and guard
 * binaries next to ours. Without a guard, command tasks run unguarded:
 * only the record in the session dir (procs.h) stands between them and
 * outliving a worker killed by SIGKILL. */
static void helper_defaults(struct mt_worker_config *cfg)
{
    static char self[4096], exec_path[4096 + 32], guard_path[4096 + 32];
    int64_t cpus = mt_qty_list_get(&cfg->resources, "CPU");
    ssize_t n;
    char *slash;

    if (!cfg->num_executors) {
        cpus = cpus > 0 ? (cpus + MT_QTY_SCALE - 1) / MT_QTY_SCALE : 1;
        cfg->num_executors = (int)(cpus < 1 ? 1 : cpus > 64 ? 64 : cpus);
    }
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0 || (size_t)n >= sizeof(self) - 1)
        return;
    self[n] = '\0';
    slash = strrchr(self, '/');
    if (!slash)
        return;
    slash[1] = '\0';
    snprintf(exec_path, sizeof(exec_path), "%smanta-executor", self);
    snprintf(guard_path, sizeof(guard_path), "%smanta-guard", self);
    if (!cfg->executor_path)
        cfg->executor_path = exec_path;
    if (access(guard_path, X_OK) == 0)
        cfg->guard_path = guard_path;
    else
        MT_WARN("%s is missing: command tasks run unguarded and may "
                "outlive this worker if it is killed", guard_path);
}

int main(int argc, char **argv)
{
    static struct mt_worker_config cfg;
    struct mt_detect_opts det = {-1, -1, -1, NULL};
    struct mt_qty_list custom = {0};
    struct mt_tpu_detect_opts tpu_opts = {NULL, NULL, NULL, 0};
    struct mt_tpu_info tpu;
    struct mt_gpu_opts gpu_opts = {
        .nvml_path = getenv("MANTA_NVML_PATH"),
        .proc_root = getenv("MANTA_PROC_ROOT"),
        .visible = getenv("CUDA_VISIBLE_DEVICES"),
    };
    static struct mt_gpu_list gpus;
    struct mt_security_src src = {0};
    struct mt_security sec;
    char ip[64], err[256] = "", idlabel[80];
    uint64_t bytes;
    long v;
    int c, level = MT_LOG_INFO, rc;

    cfg.report_period_ms = 1000;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_ADDR:
            if (!mt_parse_host_port(optarg))
                return bad("address", optarg, "expected HOST:PORT");
            cfg.head_addr = optarg;
            break;
        case O_IP:
            if (!mt_valid_ipv4(optarg))
                return bad("node-ip", optarg, "expected an IPv4 address");
            cfg.node_ip = optarg;
            break;
        case O_PORT:
            if (!mt_parse_int(optarg, 0, 65535, &v))
                return bad("port", optarg, NULL);
            cfg.port = (int)v;
            break;
        case O_METRICS:
            if (!mt_parse_int(optarg, -1, 65535, &v))
                return bad("metrics-port", optarg, NULL);
            cfg.metrics_port = (int)v;
            break;
        case O_TMP:
            cfg.temp_dir = optarg;
            break;
        case O_CPUS:
            if (mt_qty_parse(optarg, &det.num_cpus) < 0)
                return bad("num-cpus", optarg, "expected a number >= 0");
            break;
        case O_GPUS:
            if (mt_qty_parse(optarg, &det.num_gpus) < 0 ||
                det.num_gpus % MT_QTY_SCALE)
                return bad("num-gpus", optarg, "expected a whole number >= 0");
            break;
        case O_MEM:
            if (mt_bytes_parse(optarg, &bytes) < 0 || bytes > (1ull << 50))
                return bad("memory", optarg, "expected a size like 8GiB");
            det.memory_bytes = (int64_t)bytes;
            break;
        case O_RES:
            if (mt_qty_parse_json(optarg, &custom, err, sizeof(err)) < 0)
                return bad("resources", optarg, err);
            break;
        case O_LABELS:
            if (mt_kv_parse(optarg, &cfg.labels, err, sizeof(err)) < 0)
                return bad("labels", optarg, err);
            break;
        case O_ID:
            if (!valid_node_id(optarg))
                return bad("node-id", optarg, "1-64 of [A-Za-z0-9_-], "
                           "not shaped like another kind of id (a "
                           "letter and 15 hex digits, or 40 hex digits)");
            cfg.node_id = optarg;
            break;
        case O_PERIOD:
            if (!mt_parse_int(optarg, 10, 600000, &v))
                return bad("report-period-ms", optarg, NULL);
            cfg.report_period_ms = (int)v;
            break;
        case O_LOG:
            level = mt_log_parse_level(optarg);
            if (level < 0)
                return bad("log-level", optarg, NULL);
            break;
        case O_OSM:
            if (mt_bytes_parse(optarg, &bytes) < 0 || bytes < (1u << 20) ||
                bytes > (1ull << 46))
                return bad("object-store-memory", optarg,
                           "expected a size from 1MiB, like 2GiB");
            cfg.object_store_memory = bytes;
            break;
        case O_SOCK:
            if (strlen(optarg) >= 100)
                return bad("object-store-socket", optarg, "path too long");
            cfg.object_store_socket = optarg;
            break;
        case O_SPILL:
            cfg.spill_dir = optarg;
            break;
        case O_NEXEC:
            if (!mt_parse_int(optarg, 1, 64, &v))
                return bad("num-executors", optarg, "expected 1-64");
            cfg.num_executors = (int)v;
            break;
        case O_EXEC:
            cfg.executor_path = optarg;
            break;
        case O_DEVROOT:
            tpu_opts.dev_root = optarg;
            break;
        case O_SYSROOT:
            tpu_opts.sys_root = optarg;
            break;
        case O_MDURL:
            if (*optarg && strncmp(optarg, "http://", 7) != 0)
                return bad("tpu-metadata-url", optarg, "expected http://...");
            tpu_opts.metadata_url = optarg;
            break;
        case O_NVML:
            gpu_opts.nvml_path = optarg;
            break;
        case O_PROCROOT:
            gpu_opts.proc_root = optarg;
            break;
        case O_VERSION:
            printf("manta-worker %s\n", MT_VERSION);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            if (c >= O_SEC && c < O_SEC + MT_SEC_N_OPTS) {
                if (mt_security_src_set(&src, c - O_SEC, optarg) < 0)
                    return bad("auth", optarg, "expected token or none");
                break;
            }
            fprintf(stderr, "manta-worker: unknown or incomplete option '%s'\n",
                    argv[optind - 1]);
            usage(stderr);
            return MT_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "manta-worker: unexpected argument '%s'\n",
                argv[optind]);
        usage(stderr);
        return MT_EXIT_USAGE;
    }
    if (!cfg.head_addr) {
        fprintf(stderr, "manta-worker: --address HOST:PORT is required\n");
        usage(stderr);
        return MT_EXIT_USAGE;
    }
    mt_log_init("worker", (enum mt_log_level)level, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Object pulls allocate and free multi-MiB buffers per chunk: keep them
     * in the heap instead of a fresh mmap (and page faults) each time. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    if (!cfg.node_ip || strcmp(cfg.node_ip, "0.0.0.0") == 0) {
        cfg.bind_ip = cfg.node_ip ? cfg.node_ip : NULL;
        mt_sys_primary_ip(ip, sizeof(ip));
        cfg.node_ip = ip;
        if (!cfg.bind_ip)
            cfg.bind_ip = cfg.node_ip;
    } else {
        cfg.bind_ip = cfg.node_ip;
    }
    src.session_dir = cfg.temp_dir;
    if (load_credentials(&src, &sec) < 0)
        return MT_EXIT_USAGE;
    cfg.sec = &sec;
    if (object_store_defaults(&cfg) < 0)
        return 1;
    mt_gpu_detect(&gpu_opts, &gpus);
    mt_gpu_apply(&gpus, &det.num_gpus, &cfg.labels);
    mt_gpu_set_device_map(&gpus);
    if (mt_gpu_monitor_create(&gpus, gpu_opts.nvml_path, cfg.report_period_ms,
                              &cfg.gpu_monitor) < 0)
        cfg.gpu_monitor = NULL;
    det.custom = &custom;
    /* TPU entries first: --resources (applied by mt_detect_resources) and
     * --labels (already in cfg.labels) win over detected ones. */
    mt_tpu_detect(&tpu_opts, &tpu);
    mt_tpu_apply(&tpu, &cfg.resources, &cfg.labels);
    rc = mt_detect_resources(&det, &cfg.resources);
    mt_qty_list_release(&custom);
    if (rc < 0) {
        fprintf(stderr, "manta-worker: cannot detect resources: %s\n",
                mt_strerror(rc));
        return 1;
    }
    if (mt_qty_list_get(&cfg.resources, "object_store_memory") < 0)
        mt_qty_list_set(&cfg.resources, "object_store_memory",
                        (int64_t)cfg.object_store_memory * MT_QTY_SCALE);
    helper_defaults(&cfg);
    if (cfg.temp_dir && (rc = mt_sys_mkdir_private(cfg.temp_dir)) < 0) {
        fprintf(stderr, "manta-worker: cannot create %s: %s\n", cfg.temp_dir,
                mt_strerror(rc));
        return 1;
    }

    loop = uv_default_loop();
    rc = mt_worker_start(loop, &cfg, &worker);
    if (rc < 0) {
        fprintf(stderr, "manta-worker: cannot start: %s\n", mt_strerror(rc));
        return 1;
    }
    snprintf(idlabel, sizeof(idlabel), "%s", mt_worker_node_id(worker));
    mt_kv_list_set(&cfg.labels, "manta.io/node-id", idlabel);
    mt_daemon_init(&daemon_, loop, stop_worker, worker);
    mt_daemon_run(&daemon_);
    mt_worker_destroy(worker);
    mt_gpu_monitor_destroy(cfg.gpu_monitor);
    mt_daemon_close_loop(loop);
    mt_qty_list_release(&cfg.resources);
    mt_kv_list_release(&cfg.labels);
    mt_security_free(&sec);
    MT_INFO("worker stopped");
    return 0;
}
