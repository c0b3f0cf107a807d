/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seeds.h -- the seed writers of mt-fuzz-seeds (seeds.c), one per group
 * of harnesses.
 */
#ifndef MT_FUZZ_SEEDS_H
#define MT_FUZZ_SEEDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* mt_seed_write - write <root>/<harness>/seed-<what>; exits on failure. */
void mt_seed_write(const char *harness, const char *what, const void *p,
                   size_t n);

/* MT_SEED_PACK - pack msg, a protobuf-c message of type (its C prefix,
 * e.g. manta__submit_task_request), and write it as a seed. */
#define MT_SEED_PACK(harness, what, type, msg)                             \
    do {                                                                   \
        size_t n_ = type##__get_packed_size(msg);                          \
        uint8_t *b_ = malloc(n_ ? n_ : 1);                                 \
        type##__pack(msg, b_);                                             \
        mt_seed_write(harness, what, b_, n_);                              \
        free(b_);                                                          \
    } while (0)

void mt_seeds_exec(void);   /* exec_proto */
void mt_seeds_head(void);   /* head_* */
void mt_seeds_worker(void); /* worker_* */

#endif /* MT_FUZZ_SEEDS_H */
