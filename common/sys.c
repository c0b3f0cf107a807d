/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sys.c -- clocks, ids and host facts (see sys.h).
 */
#include "common/sys.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/alloc.h"

static char proc_root[256] = "";

int64_t mt_now_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mt_now_wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mt_random_hex(char *out, size_t nbytes)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char buf[64];
    size_t got = 0;

    if (nbytes > sizeof(buf))
        nbytes = sizeof(buf);
    while (got < nbytes) {
        ssize_t n = getrandom(buf + got, nbytes - got, 0);
        if (n < 0) {
            /* No entropy source: fall back to time and pid. */
            srand((unsigned)(mt_now_wall_ms() ^ getpid()));
            for (; got < nbytes; got++)
                buf[got] = (unsigned char)rand();
            break;
        }
        got += (size_t)n;
    }
    for (size_t i = 0; i < nbytes; i++) {
        out[2 * i] = hex[buf[i] >> 4];
        out[2 * i + 1] = hex[buf[i] & 15];
    }
    out[2 * nbytes] = '\0';
}

void mt_sys_set_proc_root(const char *root)
{
    snprintf(proc_root, sizeof(proc_root), "%s", root ? root : "");
}

static FILE *open_proc(const char *name)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/proc/%s", proc_root, name);
    return fopen(path, "r");
}

int mt_sys_num_cpus(void)
{
    cpu_set_t set;
    long n;

    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int mt_sys_meminfo(uint64_t *total, uint64_t *avail)
{
    FILE *f = open_proc("meminfo");
    char line[256];
    unsigned long long kb;
    int found = 0;

    if (!f)
        return -errno;
    *total = *avail = 0;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
            *total = kb * 1024;
            found |= 1;
        } else if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
            *avail = kb * 1024;
            found |= 2;
        }
    }
    fclose(f);
    return found == 3 ? 0 : -EINVAL;
}

int mt_sys_cpu_sample(struct mt_cpu_sample *s)
{
    FILE *f = open_proc("stat");
    unsigned long long v[10] = {0};
    int n;

    if (!f)
        return -errno;
    n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
               &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
               &v[9]);
    fclose(f);
    if (n < 4)
        return -EINVAL;
    /* idle + iowait are not busy; guest time is already in user time. */
    s->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    s->busy = s->total - v[3] - v[4];
    return 0;
}

double mt_sys_cpu_percent(const struct mt_cpu_sample *a,
                          const struct mt_cpu_sample *b)
{
    uint64_t dt = b->total - a->total, db = b->busy - a->busy;

    if (b->total <= a->total || db > dt)
        return 0.0;
    return 100.0 * (double)db / (double)dt;
}

void mt_sys_primary_ip(char *buf, size_t len)
{
    struct ifaddrs *ifs, *i;

    snprintf(buf, len, "127.0.0.1");
    if (getifaddrs(&ifs) < 0)
        return;
    for (i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr,
                  buf, (socklen_t)len);
        break;
    }
    freeifaddrs(ifs);
}

void mt_sys_hostname(char *buf, size_t len)
{
    if (gethostname(buf, len) < 0 || !buf[0])
        snprintf(buf, len, "localhost");
    buf[len - 1] = '\0';
}

int mt_sys_mkdir_p(const char *path)
{
    char *p;
    int rc = 0;

    if (!path || !*path)
        return -ENOENT;
    p = mt_xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) < 0 && errno != EEXIST) {
            rc = -errno;
            break;
        }
        *s = '/';
    }
    if (rc == 0 && mkdir(p, 0700) < 0 && errno != EEXIST)
        rc = -errno;
    free(p);
    return rc;
}

int mt_sys_mkdir_private(const char *path)
{
    struct stat st;
    int rc = mt_sys_mkdir_p(path);

    if (rc < 0)
        return rc;
    if (lstat(path, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return -EPERM;
    if ((st.st_mode & 077) && chmod(path, 0700) < 0)
        return -errno;
    return 0;
}

int mt_sys_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;

    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? -errno : -EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int mt_sys_write_file_atomic(const char *path, const char *contents)
{
    char *tmp;
    int fd, rc;

    if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0)
        return -ENOMEM; /* no abort: libmanta calls this too */
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
        rc = -errno;
        goto out;
    }
    rc = mt_sys_write_all(fd, contents, strlen(contents));
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0)
        unlink(tmp);
out:
    free(tmp);
    return rc;
}

char *mt_sys_read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t n = 0, cap = 0;

    if (!f)
        return NULL;
    for (;;) {
        size_t got;
        mt_xgrow((void **)&buf, &cap, n + 4097, 1);
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    return buf;
}
