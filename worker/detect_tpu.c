/* SPDX-License-Identifier: Apache-2.0 */
/*
 * detect_tpu.c -- TPU chips, generation and slice identity (see
 * detect_tpu.h). Three parts: counting devices under the dev/sys roots,
 * a small bounded HTTP GET for the metadata server, and turning the result
 * into resources and labels with sched/tpu.h's naming rules.
 */
#include "worker/detect_tpu.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/log.h"
#include "sched/labels.h"

/* ---- devices ------------------------------------------------------------ */

static const char *root_or_slash(const char *r)
{
    return r && *r ? r : "/";
}

/* out = a/b; false when it does not fit (the entry is then skipped). */
static bool join(char *out, size_t len, const char *a, const char *b)
{
    int n = snprintf(out, len, "%s/%s", a, b);

    return n > 0 && (size_t)n < len;
}

/* Read a small sysfs file holding a hex number like "0x1ae0\n". */
static int read_hex(const char *path, uint32_t *out)
{
    char buf[32], *end;
    FILE *f = fopen(path, "r");
    unsigned long v;

    if (!f)
        return -MT_ENOENT;
    if (!fgets(buf, sizeof(buf), f)) {
        fclose(f);
        return -MT_EIO;
    }
    fclose(f);
    errno = 0;
    v = strtoul(buf, &end, 16);
    if (errno || end == buf || v > 0xffff)
        return -MT_EINVAL;
    *out = (uint32_t)v;
    return 0;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* The generation of PCI device dir (vendor and device files), or NONE. */
static enum mt_tpu_gen pci_gen(const char *dir)
{
    char p[1024];
    uint32_t vendor, device;
    enum mt_tpu_gen gen = MT_TPU_GEN_NONE;

    if (!join(p, sizeof(p), dir, "vendor") || read_hex(p, &vendor) < 0 ||
        vendor != MT_TPU_PCI_VENDOR)
        return MT_TPU_GEN_NONE;
    if (!join(p, sizeof(p), dir, "device") || read_hex(p, &device) < 0 || mt_tpu_gen_from_pci(vendor, device, &gen))
        return MT_TPU_GEN_NONE;
    return gen;
}

/* Scan the device dirs under dir; true when one is Google's vendor.
 * *gen gets the first known generation. */
static bool google_devices(const char *dir, enum mt_tpu_gen *gen)
{
    char p[1024], v[1024];
    DIR *d = opendir(dir);
    struct dirent *e;
    uint32_t vendor;
    bool found = false;

    if (!d)
        return false;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (!join(p, sizeof(p), dir, e->d_name) ||
            !join(v, sizeof(v), p, "vendor") || read_hex(v, &vendor) < 0 ||
            vendor != MT_TPU_PCI_VENDOR)
            continue;
        found = true;
        if (*gen == MT_TPU_GEN_NONE)
            *gen = pci_gen(p);
    }
    closedir(d);
    return found;
}

/* Non-directory entries named accel* directly under dev. */
static int count_accel(const char *dev)
{
    char p[1024];
    struct stat st;
    struct dirent *e;
    DIR *d = opendir(dev);
    int n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "accel", 5) != 0)
            continue;
        if (join(p, sizeof(p), dev, e->d_name) && stat(p, &st) == 0 && !S_ISDIR(st.st_mode))
            n++;
    }
    closedir(d);
    return n;
}

/* Numeric /dev/vfio groups whose iommu group holds a Google device. */
static int count_vfio(const char *dev, const char *sys, enum mt_tpu_gen *gen)
{
    char p[1024];
    struct dirent *e;
    DIR *d;
    int n = 0;

    if (!join(p, sizeof(p), dev, "vfio") || !(d = opendir(p)))
        return 0;
    while ((e = readdir(d))) {
        if (!all_digits(e->d_name) || strlen(e->d_name) > 9)
            continue;
        int w = snprintf(p, sizeof(p), "%s/kernel/iommu_groups/%s/devices",
                         sys, e->d_name);

        if (w > 0 && (size_t)w < sizeof(p) && google_devices(p, gen))
            n++;
    }
    closedir(d);
    return n;
}

int mt_tpu_count_chips(const char *dev_root, const char *sys_root,
                       enum mt_tpu_gen *gen)
{
    char dev[512], sys[512], pci[600];
    int n;

    *gen = MT_TPU_GEN_NONE;
    if (!join(dev, sizeof(dev), root_or_slash(dev_root), "dev") ||
        !join(sys, sizeof(sys), root_or_slash(sys_root), "sys"))
        return 0;
    n = count_accel(dev);
    if (n == 0)
        n = count_vfio(dev, sys, gen);
    if (n > 0 && *gen == MT_TPU_GEN_NONE) {
        if (join(pci, sizeof(pci), sys, "bus/pci/devices"))
            google_devices(pci, gen);
    }
    return n;
}

/* ---- metadata server ---------------------------------------------------- */

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct url {
    char host[256];
    char port[8];
    char path[512];
};

static int url_parse(const char *s, struct url *u)
{
    const char *h, *slash, *colon;
    size_t hl;

    if (strncmp(s, "http://", 7) != 0)
        return -MT_EINVAL;
    h = s + 7;
    slash = strchr(h, '/');
    if (!slash)
        slash = h + strlen(h);
    colon = memchr(h, ':', (size_t)(slash - h));
    hl = (size_t)((colon ? colon : slash) - h);
    if (hl == 0 || hl >= sizeof(u->host))
        return -MT_EINVAL;
    memcpy(u->host, h, hl);
    u->host[hl] = '\0';
    snprintf(u->port, sizeof(u->port), "80");
    if (colon) {
        size_t pl = (size_t)(slash - colon - 1);
        if (pl == 0 || pl >= sizeof(u->port))
            return -MT_EINVAL;
        memcpy(u->port, colon + 1, pl);
        u->port[pl] = '\0';
        if (!all_digits(u->port) || atoi(u->port) > 65535)
            return -MT_EINVAL;
    }
    if (snprintf(u->path, sizeof(u->path), "%s", *slash ? slash : "/") >=
        (int)sizeof(u->path))
        return -MT_EINVAL;
    return 0;
}

/* Resolve without DNS for the names that matter; see the header. */
static int resolve(const struct url *u, struct sockaddr_storage *sa,
                   socklen_t *salen)
{
    struct addrinfo hints = {0}, *ai = NULL;
    const char *host = u->host;

    if (strcmp(host, "metadata.google.internal") == 0)
        host = "169.254.169.254";
    else if (strcmp(host, "localhost") == 0)
        host = "127.0.0.1";
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    if (getaddrinfo(host, u->port, &hints, &ai) != 0 || !ai)
        return -MT_EUNAVAIL;
    memcpy(sa, ai->ai_addr, ai->ai_addrlen);
    *salen = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

/* Wait for events on fd until deadline. RET 0, -MT_ETIMEDOUT. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    struct pollfd p = {.fd = fd, .events = events};
    uint64_t now;
    int rc;

    for (;;) {
        now = now_ms();
        if (now >= deadline)
            return -MT_ETIMEDOUT;
        rc = poll(&p, 1, (int)(deadline - now));
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return -MT_EIO;
    }
}

static int connect_by(const struct url *u, uint64_t deadline)
{
    struct sockaddr_storage sa;
    socklen_t salen, el = sizeof(int);
    int fd, rc, err = 0;

    if ((rc = resolve(u, &sa, &salen)) < 0)
        return rc;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -MT_EIO;
    if (connect(fd, (struct sockaddr *)&sa, salen) < 0) {
        if (errno != EINPROGRESS) {
            close(fd);
            return -MT_EUNAVAIL;
        }
        if ((rc = wait_fd(fd, POLLOUT, deadline)) < 0) {
            close(fd);
            return rc;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
            close(fd);
            return -MT_EUNAVAIL;
        }
    }
    return fd;
}

static int send_all(int fd, const char *s, size_t n, uint64_t deadline)
{
    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        int rc;

        if (w > 0) {
            s += w;
            n -= (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            if ((rc = wait_fd(fd, POLLOUT, deadline)) < 0)
                return rc;
        } else {
            return -MT_EUNAVAIL;
        }
    }
    return 0;
}

/* Read until EOF into resp (at most cap-1 bytes). RET length or -MT_E*. */
static int recv_all(int fd, char *resp, size_t cap, uint64_t deadline)
{
    size_t n = 0;
    int rc;

    for (;;) {
        ssize_t r;

        if (n + 1 >= cap)
            break;
        r = recv(fd, resp + n, cap - 1 - n, 0);
        if (r > 0) {
            n += (size_t)r;
        } else if (r == 0) {
            break;
        } else if (errno == EAGAIN || errno == EINTR) {
            if ((rc = wait_fd(fd, POLLIN, deadline)) < 0)
                return rc;
        } else {
            return -MT_EUNAVAIL;
        }
    }
    resp[n] = '\0';
    return (int)n;
}

/* Status and body of a whole HTTP/1.x response. */
static int parse_response(const char *resp, char *buf, size_t len)
{
    const char *body;
    int status;
    size_t bl;

    if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
        return -MT_EPROTO;
    if (status != 200)
        return -MT_ENOENT;
    body = strstr(resp, "\r\n\r\n");
    if (!body)
        return -MT_EPROTO;
    body += 4;
    bl = strlen(body);
    if (bl >= len)
        bl = len - 1;
    memcpy(buf, body, bl);
    buf[bl] = '\0';
    return (int)bl;
}

int mt_tpu_metadata_get(const char *url, const char *key, uint64_t deadline_ms,
                        char *buf, size_t len)
{
    char req[1024], resp[8192];
    struct url u;
    int fd, rc, n;

    if (!url || !key || !buf || len == 0 || url_parse(url, &u) < 0)
        return -MT_EINVAL;
    n = snprintf(req, sizeof(req),
                 "GET %s%s HTTP/1.0\r\nHost: %s\r\nMetadata-Flavor: Google\r\n"
                 "Connection: close\r\n\r\n",
                 u.path, key, u.host);
    if (n < 0 || n >= (int)sizeof(req))
        return -MT_EINVAL;
    if ((fd = connect_by(&u, deadline_ms)) < 0)
        return fd;
    rc = send_all(fd, req, (size_t)n, deadline_ms);
    if (rc == 0)
        rc = recv_all(fd, resp, sizeof(resp), deadline_ms);
    close(fd);
    if (rc < 0)
        return rc;
    return parse_response(resp, buf, len);
}

/* ---- identity ----------------------------------------------------------- */

/* Trim surrounding white space in place. */
static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* The value of a "TOPOLOGY: '2x2x2'" line of tpu-env into out. */
static bool tpu_env_topology(const char *text, char *out, size_t len)
{
    const char *line = text;

    while (line && *line) {
        const char *p = line, *q;

        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "TOPOLOGY:", 9) == 0) {
            p += 9;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p++ != '\'')
                return false;
            q = strchr(p, '\'');
            if (!q || q == p || (size_t)(q - p) >= len)
                return false;
            memcpy(out, p, (size_t)(q - p));
            out[q - p] = '\0';
            return true;
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return false;
}

/* One identity field: env var, else metadata key (when md is still worth
 * asking). A failed request turns md off: the server is down or slow. */
struct md_state {
    const char *url;
    uint64_t deadline;
    bool on;
};

static bool field(const char *env, const char *key, struct md_state *md,
                  char *out, size_t len)
{
    const char *v = getenv(env);
    char body[1024];
    int rc;

    if (v && *v) {
        snprintf(out, len, "%s", v);
        return true;
    }
    if (!md->on)
        return false;
    rc = mt_tpu_metadata_get(md->url, key, md->deadline, body, sizeof(body));
    if (rc < 0) {
        if (rc != -MT_ENOENT) {
            MT_INFO("tpu: metadata server %s: %s; no slice identity from it",
                    md->url, mt_strerror(rc));
            md->on = false;
        }
        return false;
    }
    if (strcmp(key, "tpu-env") == 0)
        return tpu_env_topology(body, out, len);
    snprintf(out, len, "%s", trim(body));
    return *out != '\0';
}

/* Validate and normalise what was read; drop what is malformed. */
static void validate(struct mt_tpu_info *info, const char *pod,
                     const char *wid)
{
    struct mt_tpu_topo topo;
    struct mt_tpu_slice sl;
    enum mt_tpu_gen gen;
    char *end;
    long w;

    if (*pod) {
        if (mt_tpu_pod_type_normalize(pod, info->pod_type,
                                      sizeof(info->pod_type)) < 0 ||
            mt_tpu_pod_type_parse(info->pod_type, &gen, NULL) < 0) {
            MT_WARN("tpu: ignoring malformed accelerator type '%s'", pod);
            info->pod_type[0] = '\0';
        } else {
            info->gen = gen;
        }
    }
    if (*info->topology && mt_tpu_topo_parse(info->topology, &topo) < 0) {
        MT_WARN("tpu: ignoring malformed topology '%s'", info->topology);
        info->topology[0] = '\0';
    }
    if (*info->pod_type && !*info->topology &&
        mt_tpu_slice_parse(info->pod_type, NULL, 0, &sl) == 0)
        mt_tpu_slice_topology(&sl, info->topology, sizeof(info->topology));
    for (const char *c = info->slice_name; *c; c++) {
        if (!isgraph((unsigned char)*c)) {
            MT_WARN("tpu: ignoring slice name with blanks or control "
                    "characters");
            info->slice_name[0] = '\0';
            break;
        }
    }
    if (*wid) {
        errno = 0;
        w = strtol(wid, &end, 10);
        if (errno || *end || end == wid || w < 0 || w >= MT_TPU_MAX_HOSTS)
            MT_WARN("tpu: ignoring malformed worker id '%s'", wid);
        else
            info->worker_id = (int)w;
    }
}

int mt_tpu_detect(const struct mt_tpu_detect_opts *o, struct mt_tpu_info *info)
{
    const char *skip = getenv("TPU_SKIP_MDS_QUERY");
    int timeout = o->timeout_ms > 0 ? o->timeout_ms : MT_TPU_METADATA_TIMEOUT_MS;
    struct md_state md;
    char pod[64] = "", wid[32] = "";
    int n;

    memset(info, 0, sizeof(*info));
    info->worker_id = -1;
    n = mt_tpu_count_chips(o->dev_root, o->sys_root, &info->gen);
    if (n <= 0)
        return 0;
    if (n > MT_TPU_MAX_HOST_CHIPS) {
        MT_WARN("tpu: %d chips found; offering the most a host may have, %d",
                n, MT_TPU_MAX_HOST_CHIPS);
        n = MT_TPU_MAX_HOST_CHIPS;
    }
    info->chips = (uint32_t)n;
    md.url = o->metadata_url ? o->metadata_url : MT_TPU_METADATA_URL_DEFAULT;
    md.on = *md.url && !(skip && strcasecmp(skip, "true") == 0);
    md.deadline = now_ms() + (uint64_t)timeout;
    field("TPU_ACCELERATOR_TYPE", "accelerator-type", &md, pod, sizeof(pod));
    field("TPU_NAME", "instance-id", &md, info->slice_name,
          sizeof(info->slice_name));
    field("TPU_WORKER_ID", "agent-worker-number", &md, wid, sizeof(wid));
    field("TPU_TOPOLOGY", "tpu-env", &md, info->topology,
          sizeof(info->topology));
    validate(info, pod, wid);
    MT_INFO("tpu: %u chips, %s, slice '%s' worker %d, %s %s", info->chips,
            mt_tpu_gen_name(info->gen) ? mt_tpu_gen_name(info->gen) : "unknown generation",
            info->slice_name, info->worker_id, info->pod_type, info->topology);
    return 0;
}

/* ---- resources and labels ----------------------------------------------- */

static void res_default(struct mt_qty_list *res, const char *name, int64_t q)
{
    if (mt_qty_valid_name(name) && mt_qty_list_get(res, name) < 0)
        mt_qty_list_set(res, name, q);
}

static void label_default(struct mt_kv_list *l, const char *k, const char *v)
{
    if (*v && !mt_kv_list_get(l, k))
        mt_kv_list_set(l, k, v);
}

void mt_tpu_apply(const struct mt_tpu_info *info, struct mt_qty_list *res,
                  struct mt_kv_list *labels)
{
    const char *type = mt_tpu_gen_type_label(info->gen);
    char name[160], wid[16];

    if (info->chips == 0)
        return;
    res_default(res, "TPU", (int64_t)info->chips * MT_QTY_SCALE);
    if (type) {
        snprintf(name, sizeof(name), "accelerator_type:%s", type);
        res_default(res, name, MT_QTY_SCALE);
        label_default(labels, MT_LABEL_ACCEL_TYPE, type);
    }
    if (*info->slice_name) {
        res_default(res, info->slice_name, MT_QTY_SCALE);
        label_default(labels, MT_LABEL_TPU_SLICE, info->slice_name);
    }
    if (info->worker_id >= 0) {
        snprintf(wid, sizeof(wid), "%d", info->worker_id);
        label_default(labels, MT_LABEL_TPU_WORKER, wid);
    }
    if (*info->pod_type) {
        label_default(labels, MT_LABEL_TPU_POD_TYPE, info->pod_type);
        if (info->worker_id == 0) {
            snprintf(name, sizeof(name), "TPU-%s-head", info->pod_type);
            res_default(res, name, MT_QTY_SCALE);
        }
    }
    label_default(labels, MT_LABEL_TPU_TOPOLOGY, info->topology);
}
