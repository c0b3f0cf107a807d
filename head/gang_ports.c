/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gang_ports.c -- the gang port range (gang_ports.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "head/gang_ports.h"

static uint32_t span(const struct mt_port_range *r)
{
    return (uint32_t)(r->hi - r->lo) + 1;
}

void mt_port_range_init(struct mt_port_range *r, uint16_t lo, uint16_t hi)
{
    memset(r, 0, sizeof(*r));
    r->lo = lo;
    r->hi = hi < lo ? lo : hi;
}

void mt_port_range_release(struct mt_port_range *r)
{
    free(r->used);
    r->used = NULL;
    r->cursor = 0;
}

int mt_port_range_take(struct mt_port_range *r, size_t n, uint16_t *out)
{
    uint32_t all = span(r), start = r->cursor, got = 0, last = start;

    if (!r->used)
        r->used = mt_xcalloc(all, 1);
    for (uint32_t k = 0; k < all && got < n; k++) {
        uint32_t i = (start + k) % all;

        if (!r->used[i]) {
            out[got++] = (uint16_t)(r->lo + i);
            last = i;
        }
    }
    if (got < n)
        return -MT_ENOSPC;
    for (size_t i = 0; i < n; i++)
        r->used[out[i] - r->lo] = 1;
    r->cursor = n ? (last + 1) % all : start;
    return 0;
}

void mt_port_range_give(struct mt_port_range *r, const uint16_t *ports,
                        size_t n)
{
    for (size_t i = 0; r->used && i < n; i++)
        if (ports[i] >= r->lo && ports[i] <= r->hi)
            r->used[ports[i] - r->lo] = 0;
}

void mt_port_range_mark(struct mt_port_range *r, const uint16_t *ports,
                        size_t n)
{
    uint32_t all = span(r);

    if (!r->used)
        r->used = mt_xcalloc(all, 1);
    for (size_t i = 0; i < n; i++) {
        uint32_t k;

        if (ports[i] < r->lo || ports[i] > r->hi)
            continue;
        k = (uint32_t)(ports[i] - r->lo);
        r->used[k] = 1;
        if (k + 1 > r->cursor)
            r->cursor = (k + 1) % all;
    }
}
