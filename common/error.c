/* SPDX-License-Identifier: Apache-2.0 */
/*
 * error.c -- names and messages for the codes of error.h.
 *
 * Everything is generated from MT_ERRNO_MAP so the enum, the names and the
 * messages never drift apart.
 */
#include "error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct err_info {
    const char *name;
    const char *msg;
    bool retryable;
};

static const struct err_info table[] = {
#define MT__ERR_ROW(n, r, m) {"MT_" #n, m, r},
    MT_ERRNO_MAP(MT__ERR_ROW)
#undef MT__ERR_ROW
};

static const struct err_info *lookup(int err)
{
    int code = abs(err);

    if (code >= MT_ERR_BASE && code < MT__ERR_LAST)
        return &table[code - MT_ERR_BASE];
    return NULL;
}

const char *mt_strerror(int err)
{
    const struct err_info *e = lookup(err);

    if (e)
        return e->msg;
    if (err == 0)
        return "success";
    return strerror(abs(err));
}

const char *mt_err_name(int err)
{
    const struct err_info *e = lookup(err);

    if (e)
        return e->name;
    if (err == 0)
        return "OK";
#ifdef __GLIBC__
    {
        const char *n = strerrorname_np(abs(err));
        if (n)
            return n;
    }
#endif
    return "UNKNOWN";
}

bool mt_err_retryable(int err)
{
    const struct err_info *e = lookup(err);

    if (e)
        return e->retryable;
    switch (abs(err)) {
    case EAGAIN:
    case EINTR:
    case ETIMEDOUT:
    case ECONNREFUSED:
    case ECONNRESET:
        return true;
    default:
        return false;
    }
}
