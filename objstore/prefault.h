/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prefault.h -- keep the arena's pages populated ahead of allocation.
 *
 * A write to a page of a fresh memfd takes a page fault that allocates and
 * zeroes the page; for a large put that is most of its cost. The store
 * cannot populate the whole arena at start by default (it would commit the
 * node's whole object store memory, 30% of RAM, for every worker, and delay
 * its start by seconds), so a helper thread populates pages a bounded
 * distance ahead of the highest byte ever allocated: the allocator hands
 * out low offsets first and freed ranges are never unmapped or punched, so
 * a put lands on pages that are already populated, either recycled or
 * populated ahead. Memory committed: the high-water mark of allocation
 * plus `ahead`, never more than the capacity.
 *
 * Population uses madvise(MADV_POPULATE_WRITE) (Linux 5.14): it allocates
 * the pages without changing their contents, so it is safe while clients
 * write objects nearby. Without it the helper stops and pages fault in
 * lazily as before.
 *
 * THREAD mt_prefault_note, _sync, _done and _stop are called from the
 * store's loop thread; the helper thread only calls madvise on the arena
 * and shares target/done under its own mutex, a leaf lock (nothing else
 * is locked while it is held).
 */
#ifndef MT_PREFAULT_H
#define MT_PREFAULT_H

#include <stdint.h>

struct mt_prefault;

/*
 * mt_prefault_start - start the helper for [begin, end) of the mapping at
 * base and populate the first `ahead` bytes of it at once (in the
 * background).
 *
 * IN  base         the mapping (page aligned); borrowed until _stop
 * IN  begin, end   offsets of the data region; begin page aligned
 * IN  ahead        bytes kept populated above the allocation high-water
 * OUT out          returns owned helper, stop with mt_prefault_stop()
 * RET 0, -MT_ENOMEM, -errno (pthread_create)
 */
int mt_prefault_start(uint8_t *base, uint64_t begin, uint64_t end,
                      uint64_t ahead, struct mt_prefault **out);

/*
 * mt_prefault_note - allocation reached offset high: populate up to
 * high + ahead (clamped to end). Never waits for the helper.
 */
void mt_prefault_note(struct mt_prefault *p, uint64_t high);

/*
 * mt_prefault_sync - wait until what was asked so far is populated (or
 * the helper gave up). For tests and benchmarks.
 */
void mt_prefault_sync(struct mt_prefault *p);

/*
 * mt_prefault_done - bytes of the data region populated so far by the
 * helper (from begin).
 */
uint64_t mt_prefault_done(struct mt_prefault *p);

/* mt_prefault_stop - stop and join the helper. OWNERSHIP invalidates p;
 * NULL is fine. */
void mt_prefault_stop(struct mt_prefault *p);

#endif /* MT_PREFAULT_H */
