/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_detect_tpu.c -- TPU detection (worker/detect_tpu.h) over fake /dev
 * and /sys trees built in a temp dir, and a tiny HTTP metadata server on a
 * thread (127.0.0.1, ephemeral port) that answers like GCE's: only with the
 * Metadata-Flavor: Google header, 404 for unknown keys, or (slow mode)
 * accepts and never answers. Tests clear the TPU_* env they set.
 */
#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/qty.h"
#include "tests/unit/unit.h"
#include "worker/detect_tpu.h"

/* ---- fake trees --------------------------------------------------------- */

static char root[256];

static void mkdirs(const char *rel)
{
    char p[1024];

    snprintf(p, sizeof(p), "%s/%s", root, rel);
    for (char *s = p + strlen(root) + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    }
    mkdir(p, 0755);
}

static void put(const char *rel, const char *text)
{
    char p[1024], dir[1024];
    FILE *f;

    snprintf(dir, sizeof(dir), "%s", rel);
    if (strrchr(dir, '/')) {
        *strrchr(dir, '/') = '\0';
        mkdirs(dir);
    }
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static int rm_one(const char *p, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void tree_new(void)
{
    snprintf(root, sizeof(root), "/tmp/mt_tpu_XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
}

static void tree_free(void)
{
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A VFIO group g whose device has vendor/device ids. */
static void vfio_group(int g, const char *vendor, const char *device)
{
    char p[256];

    snprintf(p, sizeof(p), "dev/vfio/%d", g);
    put(p, "");
    snprintf(p, sizeof(p), "sys/kernel/iommu_groups/%d/devices/0000:00:%02x.0/vendor",
             g, g);
    put(p, vendor);
    snprintf(p, sizeof(p), "sys/kernel/iommu_groups/%d/devices/0000:00:%02x.0/device",
             g, g);
    put(p, device);
}

static void clear_env(void)
{
    unsetenv("TPU_ACCELERATOR_TYPE");
    unsetenv("TPU_NAME");
    unsetenv("TPU_WORKER_ID");
    unsetenv("TPU_TOPOLOGY");
    unsetenv("TPU_SKIP_MDS_QUERY");
}

static uint64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- chip counting ------------------------------------------------------ */

static void test_accel_files(void)
{
    enum mt_tpu_gen gen;

    tree_new();
    put("dev/accel0", "");
    put("dev/accel1", "");
    put("dev/accel2", "");
    put("dev/accel3", "");
    put("sys/bus/pci/devices/0000:00:04.0/vendor", "0x1ae0\n");
    put("sys/bus/pci/devices/0000:00:04.0/device", "0x005e\n");
    CU_ASSERT_EQUAL(mt_tpu_count_chips(root, root, &gen), 4);
    CU_ASSERT_EQUAL(gen, MT_TPU_V4);
    tree_free();
}

static void test_accel_directory(void)
{
    enum mt_tpu_gen gen;

    tree_new();
    mkdirs("dev/accel");        /* Blackwell: /dev/accel/accel0 */
    put("dev/accel/accel0", "");
    CU_ASSERT_EQUAL(mt_tpu_count_chips(root, root, &gen), 0);
    CU_ASSERT_EQUAL(gen, MT_TPU_GEN_NONE);
    tree_free();
}

static void test_vfio_google_and_other(void)
{
    enum mt_tpu_gen gen;

    tree_new();
    for (int g = 0; g < 4; g++)
        vfio_group(g, "0x1ae0\n", "0x006f\n");
    put("dev/vfio/vfio", "");                  /* container device */
    vfio_group(96, "0x15b3\n", "0xa2dc\n");    /* BlueField */
    vfio_group(97, "0x10de\n", "0x2330\n");    /* NVIDIA */
    CU_ASSERT_EQUAL(mt_tpu_count_chips(root, root, &gen), 4);
    CU_ASSERT_EQUAL(gen, MT_TPU_V6E);
    tree_free();

    tree_new();
    vfio_group(0, "0x1ae0\n", "0x0076\n");
    vfio_group(1, "0x1ae0\n", "0x0076\n");
    CU_ASSERT_EQUAL(mt_tpu_count_chips(root, root, &gen), 2);
    CU_ASSERT_EQUAL(gen, MT_TPU_V7X);
    tree_free();

    /* more groups than a host may have: detect caps at 8 */
    tree_new();
    for (int g = 0; g < 10; g++)
        vfio_group(g, "0x1ae0\n", "0x0063\n");
    CU_ASSERT_EQUAL(mt_tpu_count_chips(root, root, &gen), 10);
    CU_ASSERT_EQUAL(gen, MT_TPU_V5E);
    {
        struct mt_tpu_detect_opts o = {root, root, "", 0};
        struct mt_tpu_info info;

        clear_env();
        CU_ASSERT_EQUAL(mt_tpu_detect(&o, &info), 0);
        CU_ASSERT_EQUAL(info.chips, MT_TPU_MAX_HOST_CHIPS);
    }
    tree_free();
}

static void test_vfio_missing_sysfs(void)
{
    enum mt_tpu_gen gen;
    char other[300];

    tree_new();
    put("dev/vfio/0", "");
    put("dev/vfio/1", "");
    CU_ASSERT_EQUAL(mt_tpu_count_chips(root, root, &gen), 0);
    /* sysfs under another root that lacks it: still 0 */
    snprintf(other, sizeof(other), "%s/nosuch", root);
    CU_ASSERT_EQUAL(mt_tpu_count_chips(root, other, &gen), 0);
    tree_free();
    /* no /dev/vfio at all */
    tree_new();
    CU_ASSERT_EQUAL(mt_tpu_count_chips(root, root, &gen), 0);
    tree_free();
}

/* ---- env identity, resources and labels --------------------------------- */

static void test_env_identity(void)
{
    struct mt_tpu_detect_opts o = {0};
    struct mt_tpu_info info;
    struct mt_qty_list res = {0};
    struct mt_kv_list labels = {0};

    tree_new();
    for (int g = 0; g < 4; g++)
        vfio_group(g, "0x1ae0\n", "0x0076\n");
    o.dev_root = o.sys_root = root;
    o.metadata_url = "";
    clear_env();
    setenv("TPU_ACCELERATOR_TYPE", "tpu7x-8", 1);
    setenv("TPU_NAME", "slice-a", 1);
    setenv("TPU_WORKER_ID", "0", 1);
    setenv("TPU_TOPOLOGY", "2x2x1", 1);
    CU_ASSERT_EQUAL(mt_tpu_detect(&o, &info), 0);
    CU_ASSERT_EQUAL(info.chips, 4);
    CU_ASSERT_STRING_EQUAL(info.pod_type, "v7x-8");
    CU_ASSERT_STRING_EQUAL(info.slice_name, "slice-a");
    CU_ASSERT_EQUAL(info.worker_id, 0);
    CU_ASSERT_STRING_EQUAL(info.topology, "2x2x1");
    mt_kv_list_set(&labels, "manta.io/tpu-topology", "user-wins");
    mt_tpu_apply(&info, &res, &labels);
    CU_ASSERT_EQUAL(mt_qty_list_get(&res, "TPU"), 4 * MT_QTY_SCALE);
    CU_ASSERT_EQUAL(mt_qty_list_get(&res, "accelerator_type:TPU-V7X"),
                    MT_QTY_SCALE);
    CU_ASSERT_EQUAL(mt_qty_list_get(&res, "TPU-v7x-8-head"), MT_QTY_SCALE);
    CU_ASSERT_EQUAL(mt_qty_list_get(&res, "slice-a"), MT_QTY_SCALE);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&labels, "manta.io/accelerator-type"),
                           "TPU-V7X");
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&labels, "manta.io/tpu-slice-name"),
                           "slice-a");
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&labels, "manta.io/tpu-worker-id"),
                           "0");
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&labels, "manta.io/tpu-pod-type"),
                           "v7x-8");
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&labels, "manta.io/tpu-topology"),
                           "user-wins");
    mt_qty_list_release(&res);
    mt_kv_list_release(&labels);

    /* worker 1 of a v4-16: no head marker; topology from the pod type */
    setenv("TPU_ACCELERATOR_TYPE", "v4-16", 1);
    setenv("TPU_WORKER_ID", "1", 1);
    unsetenv("TPU_TOPOLOGY");
    CU_ASSERT_EQUAL(mt_tpu_detect(&o, &info), 0);
    CU_ASSERT_STRING_EQUAL(info.topology, "2x2x2");
    mt_tpu_apply(&info, &res, &labels);
    CU_ASSERT_EQUAL(mt_qty_list_get(&res, "TPU-v4-16-head"), -1);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&labels, "manta.io/tpu-worker-id"),
                           "1");
    mt_qty_list_release(&res);
    mt_kv_list_release(&labels);

    /* malformed values are dropped, chips stay */
    setenv("TPU_ACCELERATOR_TYPE", "foo-8", 1);
    setenv("TPU_WORKER_ID", "x1", 1);
    setenv("TPU_TOPOLOGY", "2by2", 1);
    setenv("TPU_NAME", "bad name\n", 1);
    CU_ASSERT_EQUAL(mt_tpu_detect(&o, &info), 0);
    CU_ASSERT_EQUAL(info.chips, 4);
    CU_ASSERT_STRING_EQUAL(info.pod_type, "");
    CU_ASSERT_EQUAL(info.worker_id, -1);
    CU_ASSERT_STRING_EQUAL(info.topology, "");
    CU_ASSERT_STRING_EQUAL(info.slice_name, "");
    CU_ASSERT_EQUAL(info.gen, MT_TPU_V7X);    /* from the PCI id */
    setenv("TPU_ACCELERATOR_TYPE", "v4", 1);
    CU_ASSERT_EQUAL(mt_tpu_detect(&o, &info), 0);
    CU_ASSERT_STRING_EQUAL(info.pod_type, "");
    clear_env();
    tree_free();
}

static void test_no_chips_no_labels(void)
{
    struct mt_tpu_detect_opts o = {0};
    struct mt_tpu_info info;
    struct mt_qty_list res = {0};
    struct mt_kv_list labels = {0};

    tree_new();
    o.dev_root = o.sys_root = root;
    o.metadata_url = "http://127.0.0.1:1/";
    clear_env();
    setenv("TPU_NAME", "ignored", 1);
    CU_ASSERT_EQUAL(mt_tpu_detect(&o, &info), 0);
    CU_ASSERT_EQUAL(info.chips, 0);
    mt_tpu_apply(&info, &res, &labels);
    CU_ASSERT_EQUAL(res.n, 0);
    CU_ASSERT_EQUAL(labels.n, 0);
    clear_env();
    tree_free();
}

/* ---- metadata server ---------------------------------------------------- */

struct mds {
    int lfd;
    int port;
    int slow;
    volatile int stop;
    int held[16];
    int nheld;
    int requests;
    pthread_t th;
};

static const char *mds_value(const char *key)
{
    if (strcmp(key, "accelerator-type") == 0)
        return "v4-16";
    if (strcmp(key, "instance-id") == 0)
        return "slice-md";
    if (strcmp(key, "agent-worker-number") == 0)
        return "0";
    if (strcmp(key, "tpu-env") == 0)
        return "ACCELERATOR_TYPE: 'v4-16'\nTOPOLOGY: '2x2x2'\nWORKER_ID: '0'\n";
    return NULL;
}

static void mds_answer(int fd)
{
    char req[2048] = "", resp[1024], key[128] = "";
    const char *prefix = "GET /computeMetadata/v1/instance/attributes/", *v;
    size_t n = 0;
    ssize_t r;

    while (n + 1 < sizeof(req) && !strstr(req, "\r\n\r\n")) {
        r = recv(fd, req + n, sizeof(req) - 1 - n, 0);
        if (r <= 0)
            break;
        n += (size_t)r;
        req[n] = '\0';
    }
    req[n] = '\0';
    if (strncmp(req, prefix, strlen(prefix)) == 0)
        sscanf(req + strlen(prefix), "%127[^ ]", key);
    v = mds_value(key);
    if (!strstr(req, "\r\nMetadata-Flavor: Google\r\n"))
        snprintf(resp, sizeof(resp), "HTTP/1.1 403 Forbidden\r\n\r\n");
    else if (!v)
        snprintf(resp, sizeof(resp), "HTTP/1.1 404 Not Found\r\n\r\nnope");
    else
        snprintf(resp, sizeof(resp),
                 "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                 "Content-Length: %zu\r\n\r\n%s", strlen(v), v);
    if (send(fd, resp, strlen(resp), MSG_NOSIGNAL) < 0)
        return;
}

static void *mds_run(void *arg)
{
    struct mds *m = arg;

    while (!m->stop) {
        struct pollfd p = {.fd = m->lfd, .events = POLLIN};
        int fd;

        if (poll(&p, 1, 50) <= 0)
            continue;
        fd = accept(m->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        m->requests++;
        if (m->slow && m->nheld < 16) {
            m->held[m->nheld++] = fd;   /* never answer */
            continue;
        }
        mds_answer(fd);
        close(fd);
    }
    for (int i = 0; i < m->nheld; i++)
        close(m->held[i]);
    return NULL;
}

static void mds_start(struct mds *m, int slow)
{
    struct sockaddr_in a = {0};
    socklen_t al = sizeof(a);

    memset(m, 0, sizeof(*m));
    m->slow = slow;
    m->lfd = socket(AF_INET, SOCK_STREAM, 0);
    CU_ASSERT_FATAL(m->lfd >= 0);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CU_ASSERT_FATAL(bind(m->lfd, (struct sockaddr *)&a, sizeof(a)) == 0);
    CU_ASSERT_FATAL(listen(m->lfd, 16) == 0);
    getsockname(m->lfd, (struct sockaddr *)&a, &al);
    m->port = ntohs(a.sin_port);
    CU_ASSERT_FATAL(pthread_create(&m->th, NULL, mds_run, m) == 0);
}

static void mds_stop(struct mds *m)
{
    m->stop = 1;
    pthread_join(m->th, NULL);
    close(m->lfd);
}

/* A port nothing listens on: bind, read it, close. */
static int dead_port(void)
{
    struct sockaddr_in a = {0};
    socklen_t al = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;

    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, (struct sockaddr *)&a, sizeof(a));
    getsockname(fd, (struct sockaddr *)&a, &al);
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static void four_accel(void)
{
    tree_new();
    for (int i = 0; i < 4; i++) {
        char p[32];
        snprintf(p, sizeof(p), "dev/accel%d", i);
        put(p, "");
    }
}

static void test_metadata_identity(void)
{
    struct mt_tpu_detect_opts o = {0};
    struct mt_tpu_info info;
    struct mt_qty_list res = {0};
    struct mt_kv_list labels = {0};
    char url[128], body[64];
    struct mds m;

    mds_start(&m, 0);
    snprintf(url, sizeof(url),
             "http://127.0.0.1:%d/computeMetadata/v1/instance/attributes/",
             m.port);
    /* raw GET: 200, 404 */
    CU_ASSERT_EQUAL(mt_tpu_metadata_get(url, "instance-id", mono_ms() + 2000,
                                        body, sizeof(body)), 8);
    CU_ASSERT_STRING_EQUAL(body, "slice-md");
    CU_ASSERT_EQUAL(mt_tpu_metadata_get(url, "nosuch", mono_ms() + 2000, body,
                                        sizeof(body)), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_tpu_metadata_get("ftp://x/", "k", mono_ms() + 2000,
                                        body, sizeof(body)), -MT_EINVAL);

    four_accel();
    o.dev_root = o.sys_root = root;
    o.metadata_url = url;
    o.timeout_ms = 2000;
    clear_env();
    setenv("TPU_NAME", "env-wins", 1);
    CU_ASSERT_EQUAL(mt_tpu_detect(&o, &info), 0);
    CU_ASSERT_EQUAL(info.chips, 4);
    CU_ASSERT_EQUAL(info.gen, MT_TPU_V4);
    CU_ASSERT_STRING_EQUAL(info.pod_type, "v4-16");
    CU_ASSERT_STRING_EQUAL(info.slice_name, "env-wins");
    CU_ASSERT_EQUAL(info.worker_id, 0);
    CU_ASSERT_STRING_EQUAL(info.topology, "2x2x2");
    mt_tpu_apply(&info, &res, &labels);
    CU_ASSERT_EQUAL(mt_qty_list_get(&res, "TPU-v4-16-head"), MT_QTY_SCALE);
    CU_ASSERT_EQUAL(mt_qty_list_get(&res, "accelerator_type:TPU-V4"),
                    MT_QTY_SCALE);
    mt_qty_list_release(&res);
    mt_kv_list_release(&labels);

    /* TPU_SKIP_MDS_QUERY=true: the server is not asked */
    clear_env();
    setenv("TPU_SKIP_MDS_QUERY", "true", 1);
    m.requests = 0;
    CU_ASSERT_EQUAL(mt_tpu_detect(&o, &info), 0);
    CU_ASSERT_EQUAL(m.requests, 0);
    CU_ASSERT_STRING_EQUAL(info.pod_type, "");
    clear_env();
    tree_free();
    mds_stop(&m);
}

static void test_metadata_down(void)
{
    struct mt_tpu_detect_opts o = {0};
    struct mt_tpu_info info;
    char url[128];
    uint64_t t0;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/attrs/", dead_port());
    four_accel();
    o.dev_root = o.sys_root = root;
    o.metadata_url = url;
    o.timeout_ms = 1000;
    clear_env();
    t0 = mono_ms();
    CU_ASSERT_EQUAL(mt_tpu_detect(&o, &info), 0);
    CU_ASSERT(mono_ms() - t0 < 500);
    CU_ASSERT_EQUAL(info.chips, 4);
    CU_ASSERT_STRING_EQUAL(info.pod_type, "");
    CU_ASSERT_STRING_EQUAL(info.slice_name, "");
    CU_ASSERT_EQUAL(info.worker_id, -1);
    tree_free();
}

static void test_metadata_slow(void)
{
    struct mt_tpu_detect_opts o = {0};
    struct mt_tpu_info info;
    char url[128];
    struct mds m;
    uint64_t t0, dt;

    mds_start(&m, 1);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/attrs/", m.port);
    four_accel();
    o.dev_root = o.sys_root = root;
    o.metadata_url = url;
    o.timeout_ms = 300;
    clear_env();
    t0 = mono_ms();
    CU_ASSERT_EQUAL(mt_tpu_detect(&o, &info), 0);
    dt = mono_ms() - t0;
    CU_ASSERT(dt >= 250 && dt < 1000);
    CU_ASSERT_EQUAL(m.requests, 1);     /* one timeout ends the queries */
    {
        char body[32];
        uint64_t t1 = mono_ms();

        CU_ASSERT_EQUAL(mt_tpu_metadata_get(url, "instance-id", t1 + 200,
                                            body, sizeof(body)),
                        -MT_ETIMEDOUT);
        CU_ASSERT(mono_ms() - t1 < 800);
    }
    CU_ASSERT_EQUAL(info.chips, 4);
    CU_ASSERT_STRING_EQUAL(info.slice_name, "");
    tree_free();
    mds_stop(&m);
}

CU_TestInfo mt_test_detect_tpu[] = {
    {"accel files count, PCI id gives v4", test_accel_files},
    {"directory /dev/accel is no chip", test_accel_directory},
    {"vfio: Google groups only, generation", test_vfio_google_and_other},
    {"vfio without sysfs fails closed", test_vfio_missing_sysfs},
    {"identity from env, resources, labels", test_env_identity},
    {"no chips: nothing added", test_no_chips_no_labels},
    {"identity from the metadata server", test_metadata_identity},
    {"metadata server down: prompt, no identity", test_metadata_down},
    {"metadata server slow: bounded", test_metadata_slow},
    CU_TEST_INFO_NULL,
};
