/* SPDX-License-Identifier: Apache-2.0 */
/*
 * error.h -- Manta's error codes.
 *
 * Action functions return 0 on success or a negative code. Codes of our own
 * come from MT_ERRNO_MAP below and start at MT_ERR_BASE so they never collide
 * with system errors, which are passed through as -errno. mt_strerror() and
 * mt_err_name() understand both kinds.
 *
 * Retryable outcomes (EAGAIN, ETIMEDOUT, EUNAVAIL) are kept apart from
 * permanent ones (EINFEASIBLE, EINVAL, EPROTO); mt_err_retryable() tells which.
 */
#ifndef MT_ERROR_H
#define MT_ERROR_H

#include <stdbool.h>

#define MT_ERR_BASE 1000

/* XX(name, retryable, message) */
#define MT_ERRNO_MAP(XX)                                                       \
    XX(ENOMEM, 0, "out of memory")                                             \
    XX(EINVAL, 0, "invalid argument")                                          \
    XX(ENOENT, 0, "no such object/task/node")                                  \
    XX(EEXIST, 0, "already exists")                                            \
    XX(EAGAIN, 1, "not ready yet, retry")                                      \
    XX(EINFEASIBLE, 0, "no node can ever satisfy the request")                 \
    XX(EPROTO, 0, "malformed message from peer")                               \
    XX(ENOSPC, 1, "no space left")                                             \
    XX(ETOOBIG, 0, "larger than the capacity")                                 \
    XX(ETIMEDOUT, 1, "timed out")                                              \
    XX(ECANCELED, 0, "cancelled")                                              \
    XX(EUNAVAIL, 1, "peer unavailable")                                        \
    XX(ESTATE, 0, "operation not allowed in the current state")                \
    XX(EIO, 0, "input/output error")                                           \
    XX(ECLOSED, 0, "closed or shutting down")                                  \
    XX(ENOTSUP, 0, "not supported")                                            \
    XX(EPERM, 0, "not permitted")                                              \
    XX(ERANGE, 0, "value out of range")                                        \
    XX(ERPC, 0, "remote call failed")                                          \
    XX(EWORKERDIED, 0, "the worker running it died")                           \
    XX(EACTORDIED, 0, "the actor died")                                        \
    XX(ETASKFAILED, 0, "the task raised an error")                             \
    XX(EVERSION, 0, "incompatible version or layout")                         \
    XX(EAUTH, 0, "wrong or missing cluster token")

enum mt_errno {
    MT__ERR_FIRST = MT_ERR_BASE - 1,
#define MT__ERR_ENUM(name, retry, msg) MT_##name,
    MT_ERRNO_MAP(MT__ERR_ENUM)
#undef MT__ERR_ENUM
    MT__ERR_LAST
};

/*
 * mt_strerror - human-readable text for a (negative or positive) error code.
 *
 * RET a static string; system codes (-errno) go through strerror()
 * THREAD any
 */
const char *mt_strerror(int err);

/*
 * mt_err_name - the symbolic name of a code, e.g. "MT_ENOENT" or "ENOENT".
 *
 * RET a static string ("UNKNOWN" for codes that are neither ours nor errno)
 * THREAD any
 */
const char *mt_err_name(int err);

/*
 * mt_err_retryable - true when the failure may go away if retried later.
 *
 * THREAD any
 */
bool mt_err_retryable(int err);

#endif /* MT_ERROR_H */
