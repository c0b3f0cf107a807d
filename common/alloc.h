/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alloc.h -- allocation helpers for the daemons and tools.
 *
 * mt_xmalloc and friends log and abort on out-of-memory (house style H7:
 * daemons do not limp on without memory). Libraries meant for embedding
 * (the SDK) use plain malloc and return -MT_ENOMEM instead.
 */
#ifndef MT_ALLOC_H
#define MT_ALLOC_H

#include <stddef.h>
#include <stdlib.h>

/* RET owned memory, free with free(); never NULL. THREAD any. */
void *mt_xmalloc(size_t n);
void *mt_xcalloc(size_t count, size_t size);
void *mt_xrealloc(void *p, size_t n);
char *mt_xstrdup(const char *s);
char *mt_xstrndup(const char *s, size_t n);

/* mt_xoom - report a failed allocation of n bytes and abort. */
void mt_xoom(size_t n) __attribute__((noreturn));

/* mt_xasprintf - printf into a new string. RET owned, free with free(). */
char *mt_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* MT_FREE - free and clear the pointer. */
#define MT_FREE(p)                                                             \
    do {                                                                       \
        free(p);                                                               \
        (p) = NULL;                                                            \
    } while (0)

/* Grow *arr (of *cap elements of size sz) to hold at least need elements. */
void mt_xgrow(void **arr, size_t *cap, size_t need, size_t sz);

/* mt_grow - the same for code that survives running out of memory (the
 * SDK): new elements are not zeroed. RET 0, or -1 with *arr unchanged. */
int mt_grow(void **arr, size_t *cap, size_t need, size_t sz);

#endif /* MT_ALLOC_H */
