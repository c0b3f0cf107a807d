/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alloc.c -- aborting allocators for daemons (see alloc.h).
 */
#include "alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

void mt_xoom(size_t n)
{
    fprintf(stderr, "out of memory allocating %zu bytes\n", n);
    abort();
}

void *mt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        mt_xoom(n);
    return p;
}

void *mt_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        mt_xoom(count * size);
    return p;
}

void *mt_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        mt_xoom(n);
    return q;
}

char *mt_xstrdup(const char *s)
{
    return mt_xstrndup(s, strlen(s));
}

char *mt_xstrndup(const char *s, size_t n)
{
    char *p = mt_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *mt_xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        mt_xoom(0);
    return s;
}

void mt_xgrow(void **arr, size_t *cap, size_t need, size_t sz)
{
    size_t ncap = *cap ? *cap : 8;

    if (need <= *cap)
        return;
    while (ncap < need)
        ncap *= 2;
    *arr = mt_xrealloc(*arr, ncap * sz);
    memset((char *)*arr + *cap * sz, 0, (ncap - *cap) * sz);
    *cap = ncap;
}

int mt_grow(void **arr, size_t *cap, size_t need, size_t sz)
{
    size_t ncap = *cap ? *cap : 8;
    void *p;

    if (need <= *cap)
        return 0;
    while (ncap < need)
        ncap *= 2;
    if (!(p = realloc(*arr, ncap * sz)))
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}
