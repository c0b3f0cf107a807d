/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sys.h -- clocks, random ids and host facts (CPUs, memory, CPU load, the
 * primary IP address) read from the system. Paths under /proc can be
 * re-rooted for tests with mt_sys_set_proc_root().
 */
#ifndef MT_SYS_H
#define MT_SYS_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds on the monotonic clock / since the Unix epoch. THREAD any. */
int64_t mt_now_mono_ms(void);
int64_t mt_now_wall_ms(void);

/*
 * mt_random_hex - fill out with 2*nbytes random lowercase hex digits + NUL.
 * IN  nbytes  at most 64 (larger values are capped at 64)
 * OUT out     at least 2*min(nbytes,64)+1 bytes
 */
void mt_random_hex(char *out, size_t nbytes);

/* mt_sys_set_proc_root - read /proc files under root instead (tests). */
void mt_sys_set_proc_root(const char *root);

/* mt_sys_num_cpus - CPUs this process may run on (affinity mask), >= 1. */
int mt_sys_num_cpus(void);

/* Memory from /proc/meminfo. RET 0 or -errno. */
int mt_sys_meminfo(uint64_t *total_bytes, uint64_t *available_bytes);

/*
 * CPU utilisation of the whole machine between two samples (/proc/stat).
 * Take a sample, later another, and mt_sys_cpu_percent() gives 0..100.
 */
struct mt_cpu_sample {
    uint64_t busy;
    uint64_t total;
};
int mt_sys_cpu_sample(struct mt_cpu_sample *s);
double mt_sys_cpu_percent(const struct mt_cpu_sample *a,
                          const struct mt_cpu_sample *b);

/*
 * mt_sys_primary_ip - the IPv4 address of the first non-loopback interface
 * that is up, or "127.0.0.1" when there is none.
 * OUT buf  at least 16 bytes
 */
void mt_sys_primary_ip(char *buf, size_t len);

/* mt_sys_hostname - gethostname(), "localhost" on failure. */
void mt_sys_hostname(char *buf, size_t len);

/*
 * mt_sys_mkdir_p - create a directory and its parents (new ones 0700).
 * RET 0 or -errno
 */
int mt_sys_mkdir_p(const char *path);

/*
 * mt_sys_mkdir_private - mt_sys_mkdir_p, then make sure path is a directory
 * of this uid (not a link) with mode 0700, tightening an older one.
 * RET 0, -EPERM (owned by someone else, or not a directory), -errno
 */
int mt_sys_mkdir_private(const char *path);

/*
 * mt_sys_write_all - write all n bytes of p to fd, again after EINTR and
 * short writes. Never aborts.
 * RET 0 or -errno (-EIO when fd takes nothing)
 */
int mt_sys_write_all(int fd, const void *p, size_t n);

/*
 * mt_sys_write_file_atomic - write contents to path via a temporary file and
 * rename(), so readers never see half a file; the file is 0600. Never aborts (no mt_x*
 * allocation), so the SDK may call it.
 * RET 0 or -errno (-ENOMEM included)
 */
int mt_sys_write_file_atomic(const char *path, const char *contents);

/*
 * mt_sys_read_file - read a whole (small) file.
 * RET owned NUL-terminated contents (free with free()), or NULL with errno set
 */
char *mt_sys_read_file(const char *path);

#endif /* MT_SYS_H */
