/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gang_ports.h -- the head's range of ports for gang members (MASTER_PORT,
 * MEGASCALE_PORT, TPU_PROCESS_PORT): a set of in-use flags over LO..HI and
 * a cursor, so ports are handed out round-robin and a port given back is
 * reused last. A take is all-or-nothing.
 *
 * THREAD: the owner's (the head's loop thread).
 */
#ifndef MT_HEAD_GANG_PORTS_H
#define MT_HEAD_GANG_PORTS_H

#include <stddef.h>
#include <stdint.h>

struct mt_port_range {
    uint16_t lo, hi;             /* inclusive; lo <= hi */
    uint8_t *used;               /* one flag per port (owned, lazily made) */
    uint32_t cursor;             /* where the next search starts */
};

/* mt_port_range_init - an empty range lo..hi (lo <= hi, lo > 0). */
void mt_port_range_init(struct mt_port_range *r, uint16_t lo, uint16_t hi);

/* mt_port_range_release - free the flags; r is empty after. */
void mt_port_range_release(struct mt_port_range *r);

/*
 * mt_port_range_take - take n free ports, in the order found.
 * OUT out  n ports (caller storage)
 * RET 0, or -MT_ENOSPC (fewer than n free: nothing taken)
 */
int mt_port_range_take(struct mt_port_range *r, size_t n, uint16_t *out);

/* mt_port_range_give - give n ports back; ports outside the range or not
 * taken are ignored. */
void mt_port_range_give(struct mt_port_range *r, const uint16_t *ports,
                        size_t n);

/*
 * mt_port_range_mark - mark n ports taken (a restarted head taking back
 * the ports of the gangs it restored, persist.h); ports outside the range
 * are ignored, ports already taken stay taken. The cursor moves past the
 * highest one marked, so the next take starts after them.
 */
void mt_port_range_mark(struct mt_port_range *r, const uint16_t *ports,
                        size_t n);

#endif /* MT_HEAD_GANG_PORTS_H */
