/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seeds.h -- the seed writers of mt-fuzz-seeds (seeds.c), one per group
 * of harnesses.
 */
#ifndef MT_FUZZ_SEEDS_H
#define MT_FUZZ_SEEDS_H

#include <stddef.h>

/* mt_seed_write - write <root>/<harness>/seed-<what>; exits on failure. */
void mt_seed_write(const char *harness, const char *what, const void *p,
                   size_t n);

void mt_seeds_exec(void);   /* exec_proto */
void mt_seeds_head(void);   /* head_* */
void mt_seeds_worker(void); /* worker_* */

#endif /* MT_FUZZ_SEEDS_H */
