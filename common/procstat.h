/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procstat.h -- what /proc and statvfs say about this process and its
 * host, for /metrics: the process's CPU time, resident memory, open file
 * descriptors and start time (the standard process_* families that
 * Prometheus client libraries export), the host's network bytes
 * (/proc/net/dev) and a filesystem's use (statvfs).
 *
 * Every reader takes the /proc directory to read (NULL: "/proc"), so unit
 * tests run them on fake files.
 *
 * THREAD: any; nothing here keeps state.
 */
#ifndef MT_PROCSTAT_H
#define MT_PROCSTAT_H

#include <stdint.h>

struct mt_strbuf;

/* This process, as /proc/self says. */
struct mt_procstat {
    double cpu_seconds;         /* user + system time */
    uint64_t resident_bytes;    /* RSS */
    uint64_t virtual_bytes;     /* VSZ */
    uint64_t open_fds;          /* entries of /proc/self/fd */
    double start_time_seconds;  /* since the epoch */
};

/*
 * mt_procstat_read - fill out from <proc>/self/stat, <proc>/stat (btime)
 * and <proc>/self/fd.
 *
 * RET 0, -errno (a file could not be read) or -MT_EPROTO (not the format
 *     expected); out is zeroed first, so a failure leaves zeros
 */
int mt_procstat_read(const char *proc, struct mt_procstat *out);

/*
 * mt_procstat_metrics - the families process_cpu_seconds_total,
 * process_resident_memory_bytes, process_virtual_memory_bytes,
 * process_open_fds, process_max_fds and process_start_time_seconds of
 * this process, appended to sb (nothing when /proc cannot be read).
 */
void mt_procstat_metrics(struct mt_strbuf *sb);

/*
 * mt_procstat_net - bytes received and sent since boot, summed over every
 * interface of <proc>/net/dev but lo.
 *
 * RET 0, -errno or -MT_EPROTO; *rx and *tx are 0 on failure
 */
int mt_procstat_net(const char *proc, uint64_t *rx, uint64_t *tx);

/*
 * mt_procstat_disk - the use of the filesystem holding path (statvfs):
 * used = total - free, as df counts it (blocks kept for root count as
 * used).
 *
 * RET 0 or -errno; zeros on failure
 */
int mt_procstat_disk(const char *path, uint64_t *used, uint64_t *total);

#endif /* MT_PROCSTAT_H */
