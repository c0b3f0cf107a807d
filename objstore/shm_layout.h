/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shm_layout.h -- every byte of the shared-memory arena, for every mapper.
 *
 * One arena per node: a memfd (or, if memfd_create is unavailable, an
 * unlinked /dev/shm file) created by the store and passed to clients over
 * the store socket with SCM_RIGHTS. The memfd's size is sealed
 * (F_SEAL_SHRINK | F_SEAL_GROW), so no mapper can resize it. Clients map it
 * read-write and are trusted not to write outside objects they created and
 * their own release board. Everything in it is in host byte order (it never
 * leaves the machine). Only offsets from the arena base are ever exchanged,
 * never pointers.
 *
 * ARENA
 *   OFFSET      SIZE        DESCRIPTION
 *   0           4096        header page (below)
 *   4096        capacity    data region: object ranges, 64-byte aligned
 *
 * HEADER PAGE
 *   OFFSET SIZE DESCRIPTION
 *   0      8    magic MT_SHM_MAGIC ("MTTOBSTR" as a little-endian u64)
 *   8      4    layout version MT_SHM_VERSION; a mapper that finds another
 *               value must unmap and fail with -MT_EVERSION
 *   12     4    header size in bytes (MT_SHM_HEADER_SIZE)
 *   16     8    arena size in bytes (header + data region), == file size
 *   24     8    data region offset (MT_SHM_HEADER_SIZE)
 *   32     8    data region size (the store capacity)
 *   40     4    allocation alignment (64)
 *   44     4    store process id
 *   48     8    creation time, ns since the epoch (CLOCK_REALTIME)
 *   56     4040 reserved, zero
 *
 * OBJECT RANGE (at the offset returned by create/get)
 *   OFFSET      SIZE        DESCRIPTION
 *   0           data_size   object bytes (tensor elements when a tensor)
 *   data_size   meta_size   caller metadata bytes (opaque to the store)
 *   ...         pad         up to the next multiple of 64, unspecified
 *
 * RELEASE BOARD (one per client connection, at board_offset from the HELLO
 * reply; board_slots slots of 32 bytes, reserved from the data region)
 *   OFFSET SIZE DESCRIPTION
 *   0      4    word: bits 0-1 state (MT_BOARD_FREE, MT_BOARD_DEFERRED,
 *               MT_BOARD_STOLEN), bits 2-31 generation; changed only with
 *               atomic stores and compare-and-swap
 *   4      20   object id, written by the client before it stores DEFERRED
 *   24     8    reserved
 * The client marks a slot DEFERRED when it keeps a store pin only as a
 * cache (a deferred release). It takes the slot back with a CAS
 * DEFERRED->FREE (the pin is still its own); the store, short of space,
 * takes it with a CAS DEFERRED->STOLEN and drops that pin itself. The
 * generation changes on every reuse, so a CAS against a stale word fails.
 *
 * Object sizes, flags and tensor descriptors are NOT in shared memory: they
 * travel in protocol replies (protocol.h), so a client cannot corrupt what
 * other clients are told about an object. Bytes of a sealed object never
 * change until the object is deleted, evicted or spilled, which only happens
 * when no client holds a pin on it.
 */
#ifndef MT_SHM_LAYOUT_H
#define MT_SHM_LAYOUT_H

#include <stdint.h>

#define MT_SHM_MAGIC 0x525453424f54544dULL /* "MTTOBSTR" little endian */
#define MT_SHM_VERSION 2u /* 2: release boards */
#define MT_SHM_HEADER_SIZE 4096u
#define MT_SHM_ALIGN 64u

/* The header page as a struct; offsets match the table above. */
struct mt_shm_header {
    uint64_t magic;        /* 0 */
    uint32_t version;      /* 8 */
    uint32_t header_size;  /* 12 */
    uint64_t arena_size;   /* 16 */
    uint64_t data_offset;  /* 24 */
    uint64_t data_size;    /* 32 */
    uint32_t align;        /* 40 */
    uint32_t pid;          /* 44 */
    uint64_t created_ns;   /* 48 */
};

_Static_assert(sizeof(struct mt_shm_header) == 56, "header table out of date");

#define MT_BOARD_SLOTS 64u
#define MT_BOARD_FREE 0u
#define MT_BOARD_DEFERRED 1u
#define MT_BOARD_STOLEN 2u
#define MT_BOARD_STATE(w) ((w)&3u)
#define MT_BOARD_WORD(gen, state) (((gen) << 2) | (state))

/* One release board slot; offsets match the table above. */
struct mt_shm_board_slot {
    uint32_t word;        /* 0 */
    uint8_t id[20];       /* 4 */
    uint8_t reserved[8];  /* 24 */
};

_Static_assert(sizeof(struct mt_shm_board_slot) == 32, "board table");

#endif /* MT_SHM_LAYOUT_H */
