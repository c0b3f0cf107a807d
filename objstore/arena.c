/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arena.c -- memfd-backed shared arena: creation, mapping, layout checks.
 *
 * memfd_create gives an anonymous file that disappears with its last fd or
 * mapping, so a crashed store leaves nothing behind in /dev/shm; its size
 * is sealed so no client can shrink it under the others. On kernels
 * without memfd we fall back to a /dev/shm file unlinked right after open.
 */
#include "arena.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/log.h"
#include "shm_layout.h"

static int open_shm_fd(const char *name)
{
    char path[96];
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd >= 0 || errno != ENOSYS)
        return fd >= 0 ? fd : -errno;
    snprintf(path, sizeof(path), "/dev/shm/manta-%d-%ld", (int)getpid(),
             (long)time(NULL));
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    unlink(path);
    return fd;
}

/*
 * Every client gets this fd: forbid resizing it, or one ftruncate() by a
 * client would SIGBUS the store and every other mapper. Best effort: the
 * /dev/shm fallback cannot be sealed.
 */
static void seal_size(int fd)
{
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
        MT_DEBUG("arena size not sealed: %s", strerror(errno));
}

static void write_header(struct mt_arena *a)
{
    struct mt_shm_header *h = (struct mt_shm_header *)a->base;
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    memset(h, 0, MT_SHM_HEADER_SIZE);
    h->version = MT_SHM_VERSION;
    h->header_size = MT_SHM_HEADER_SIZE;
    h->arena_size = a->size;
    h->data_offset = a->data_offset;
    h->data_size = a->data_size;
    h->align = MT_SHM_ALIGN;
    h->pid = (uint32_t)getpid();
    h->created_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    /* Magic last: a mapper that sees it sees a complete header. */
    __atomic_store_n(&h->magic, MT_SHM_MAGIC, __ATOMIC_RELEASE);
}

int mt_arena_create(struct mt_arena *a, const char *name, uint64_t capacity,
                    bool prefault)
{
    int flags = MAP_SHARED | (prefault ? MAP_POPULATE : 0);
    int err;

    *a = (struct mt_arena){.fd = -1};
    capacity &= ~(uint64_t)(MT_SHM_ALIGN - 1);
    if (capacity < 4096)
        return -MT_EINVAL;
    a->fd = open_shm_fd(name);
    if (a->fd < 0)
        return a->fd;
    a->data_offset = MT_SHM_HEADER_SIZE;
    a->data_size = capacity;
    a->size = MT_SHM_HEADER_SIZE + capacity;
    if (ftruncate(a->fd, (off_t)a->size) < 0)
        goto out_errno;
    seal_size(a->fd);
    a->base = mmap(NULL, a->size, PROT_READ | PROT_WRITE, flags, a->fd, 0);
    if (a->base == MAP_FAILED) {
        a->base = NULL;
        goto out_errno;
    }
    write_header(a);
    return 0;

out_errno:
    err = -errno;
    MT_ERROR("object store arena of %llu bytes failed: %s",
             (unsigned long long)a->size, strerror(errno));
    mt_arena_release(a);
    return err;
}

int mt_arena_check(const void *base, uint64_t len)
{
    const struct mt_shm_header *h = base;

    if (len < MT_SHM_HEADER_SIZE)
        return -MT_EVERSION;
    if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != MT_SHM_MAGIC ||
        h->version != MT_SHM_VERSION || h->header_size != MT_SHM_HEADER_SIZE ||
        h->align != MT_SHM_ALIGN)
        return -MT_EVERSION;
    if (h->arena_size != len || h->data_offset != MT_SHM_HEADER_SIZE ||
        h->data_size != len - MT_SHM_HEADER_SIZE)
        return -MT_EVERSION;
    return 0;
}

int mt_arena_map(struct mt_arena *a, int fd, bool populate)
{
    int flags = MAP_SHARED | (populate ? MAP_POPULATE : 0);
    struct stat sb;
    void *p;
    int rc;

    *a = (struct mt_arena){.fd = -1};
    if (fstat(fd, &sb) < 0)
        return -errno;
    if (sb.st_size < (off_t)MT_SHM_HEADER_SIZE)
        return -MT_EVERSION;
    p = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, flags, fd, 0);
    if (p == MAP_FAILED)
        return -errno;
    rc = mt_arena_check(p, (uint64_t)sb.st_size);
    if (rc < 0) {
        munmap(p, (size_t)sb.st_size);
        return rc;
    }
    a->base = p;
    a->size = (uint64_t)sb.st_size;
    a->data_offset = MT_SHM_HEADER_SIZE;
    a->data_size = a->size - MT_SHM_HEADER_SIZE;
    return 0;
}

void mt_arena_release(struct mt_arena *a)
{
    if (a->base)
        munmap(a->base, a->size);
    if (a->fd >= 0)
        close(a->fd);
    *a = (struct mt_arena){.fd = -1};
}

uint64_t mt_arena_default_capacity(const char *shm_dir)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long psz = sysconf(_SC_PAGESIZE);
    uint64_t ram, want;
    struct statvfs vs;

    if (pages <= 0 || psz <= 0)
        return 0;
    ram = (uint64_t)pages * (uint64_t)psz;
    want = ram / 10 * 3;
    if (shm_dir && statvfs(shm_dir, &vs) == 0) {
        uint64_t shm = (uint64_t)vs.f_bavail * vs.f_frsize;

        if (shm < want)
            want = shm / 100 * 95;
    }
    return want & ~(uint64_t)4095;
}
