/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arena.h -- create, map and check the shared-memory arena (shm_layout.h).
 *
 * The store creates the arena; clients map the fd they received and call
 * mt_arena_check() before trusting anything in it.
 */
#ifndef MT_ARENA_H
#define MT_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A mapped arena. Fields are read-only for callers. */
struct mt_arena {
    int fd;          /* memfd or /dev/shm file; -1 once closed */
    uint8_t *base;   /* mapping of the whole arena */
    uint64_t size;   /* header + data region */
    uint64_t data_offset;
    uint64_t data_size;
};

/*
 * mt_arena_create - a fresh arena with room for capacity bytes of objects.
 *
 * IN  name      memfd name (shown in /proc/PID/fd), borrowed
 * IN  capacity  data region bytes, rounded down to 64
 * IN  prefault  populate every page now (MAP_POPULATE), so puts never fault
 * OUT a         caller storage; release with mt_arena_release()
 * RET 0, -MT_EINVAL (capacity under one page), -errno from memfd/mmap
 * THREAD any
 */
int mt_arena_create(struct mt_arena *a, const char *name, uint64_t capacity,
                    bool prefault);

/*
 * mt_arena_map - map an arena fd received from the store and check it.
 *
 * IN  fd        the arena fd; borrowed (the caller may close it afterwards)
 * IN  populate  pre-fault the page tables (MAP_POPULATE)
 * OUT a         caller storage; a->fd is -1 (the mapping does not need it)
 * RET 0, -MT_EVERSION (bad magic/version/sizes, see mt_arena_check), -errno
 */
int mt_arena_map(struct mt_arena *a, int fd, bool populate);

/*
 * mt_arena_check - validate a mapped header page against the layout.
 *
 * IN  base, len   the whole mapping
 * RET 0, -MT_EVERSION (wrong magic, version, header size, alignment, or sizes
 *     that disagree with len)
 * THREAD any
 */
int mt_arena_check(const void *base, uint64_t len);

/* mt_arena_release - unmap and close the fd (if any). Accepts zeroed a. */
void mt_arena_release(struct mt_arena *a);

/*
 * mt_arena_default_capacity - the default --object-store-memory: 30% of
 * physical RAM, capped by the free space of /dev/shm (when that is smaller,
 * 95% of it), rounded down to 4 KiB.
 *
 * IN  shm_dir   usually "/dev/shm"; NULL skips the cap
 * RET bytes (0 when RAM cannot be read)
 */
uint64_t mt_arena_default_capacity(const char *shm_dir);

#endif /* MT_ARENA_H */
