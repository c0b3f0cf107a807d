/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procstat.c -- process and host figures from /proc and statvfs (see
 * procstat.h), and the standard process_* metric families.
 *
 * /proc/self/stat fields (proc(5)): after "pid (comm) " come state (3),
 * ..., utime (14), stime (15) in clock ticks, ..., starttime (22) in ticks
 * since boot, vsize (23) in bytes, rss (24) in pages. comm may hold spaces
 * and parentheses, so parsing starts after the last ')'.
 *
 * THREAD: any.
 */
#include "common/procstat.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/error.h"
#include "common/prom.h"
#include "common/strbuf.h"

/* Read <proc>/<name> into buf (NUL-terminated). RET bytes or -errno. */
static ssize_t slurp(const char *proc, const char *name, char *buf,
                     size_t len)
{
    char path[512];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "%s/%s", proc ? proc : "/proc", name);
    if (!(f = fopen(path, "re")))
        return -errno;
    n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* btime (boot time, seconds since the epoch) from <proc>/stat. */
static int boot_time(const char *proc, double *out)
{
    char buf[8192], *p;
    ssize_t n = slurp(proc, "stat", buf, sizeof(buf));

    if (n < 0)
        return (int)n;
    if (!(p = strstr(buf, "\nbtime ")))
        return -MT_EPROTO;
    *out = strtod(p + 7, NULL);
    return 0;
}

static uint64_t count_fds(const char *proc)
{
    char path[512];
    struct dirent *e;
    uint64_t n = 0;
    DIR *d;

    snprintf(path, sizeof(path), "%s/self/fd", proc ? proc : "/proc");
    if (!(d = opendir(path)))
        return 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

int mt_procstat_read(const char *proc, struct mt_procstat *out)
{
    char buf[2048], *p;
    unsigned long long ut, st, start, vsize;
    long long rss;
    double ticks = (double)sysconf(_SC_CLK_TCK), btime = 0;
    long page = sysconf(_SC_PAGESIZE);
    ssize_t n;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((n = slurp(proc, "self/stat", buf, sizeof(buf))) < 0)
        return (int)n;
    if (!(p = strrchr(buf, ')')) ||
        sscanf(p + 1,
               " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu"
               " %*d %*d %*d %*d %*d %*d %llu %llu %lld",
               &ut, &st, &start, &vsize, &rss) != 5)
        return -MT_EPROTO;
    if ((rc = boot_time(proc, &btime)) < 0)
        return rc;
    if (ticks <= 0)
        ticks = 100;
    out->cpu_seconds = (double)(ut + st) / ticks;
    out->resident_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)page : 0;
    out->virtual_bytes = vsize;
    out->start_time_seconds = btime + (double)start / ticks;
    out->open_fds = count_fds(proc);
    return 0;
}

void mt_procstat_metrics(struct mt_strbuf *sb)
{
    struct mt_procstat ps;
    struct rlimit rl;

    if (mt_procstat_read(NULL, &ps) < 0)
        return;
    mt_prom_family(sb, "process_cpu_seconds_total", "counter",
                   "User and system CPU time of this process in seconds.");
    mt_prom_sample(sb, "process_cpu_seconds_total", NULL, ps.cpu_seconds);
    mt_prom_family(sb, "process_resident_memory_bytes", "gauge",
                   "Resident memory of this process in bytes.");
    mt_prom_sample_u64(sb, "process_resident_memory_bytes", NULL,
                       ps.resident_bytes);
    mt_prom_family(sb, "process_virtual_memory_bytes", "gauge",
                   "Virtual memory of this process in bytes.");
    mt_prom_sample_u64(sb, "process_virtual_memory_bytes", NULL,
                       ps.virtual_bytes);
    mt_prom_family(sb, "process_open_fds", "gauge",
                   "Open file descriptors of this process.");
    mt_prom_sample_u64(sb, "process_open_fds", NULL, ps.open_fds);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        mt_prom_family(sb, "process_max_fds", "gauge",
                       "The most file descriptors this process may open.");
        mt_prom_sample_u64(sb, "process_max_fds", NULL, rl.rlim_cur);
    }
    mt_prom_family(sb, "process_start_time_seconds", "gauge",
                   "Start time of this process since the epoch, in "
                   "seconds.");
    mt_prom_sample(sb, "process_start_time_seconds", NULL,
                   ps.start_time_seconds);
}

int mt_procstat_net(const char *proc, uint64_t *rx, uint64_t *tx)
{
    char buf[16384], *line, *save = NULL, name[64];
    unsigned long long r, t;
    ssize_t n = slurp(proc, "net/dev", buf, sizeof(buf));

    *rx = *tx = 0;
    if (n < 0)
        return (int)n;
    for (line = strtok_r(buf, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *colon = strchr(line, ':');

        if (!colon)
            continue; /* the two header lines */
        *colon = ' ';
        if (sscanf(line, " %63s %llu %*u %*u %*u %*u %*u %*u %*u %llu",
                   name, &r, &t) != 3)
            return -MT_EPROTO;
        if (strcmp(name, "lo") == 0)
            continue;
        *rx += r;
        *tx += t;
    }
    return 0;
}

int mt_procstat_disk(const char *path, uint64_t *used, uint64_t *total)
{
    struct statvfs v;

    *used = *total = 0;
    if (statvfs(path, &v) < 0)
        return -errno;
    *total = (uint64_t)v.f_blocks * v.f_frsize;
    *used = *total - (uint64_t)v.f_bfree * v.f_frsize;
    return 0;
}
