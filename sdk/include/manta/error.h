/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manta/error.h -- libmanta's error codes and the export macro.
 *
 * Every action function of the SDK returns 0 (or a count) on success and a
 * negative code on failure: -MT_E* for Manta's own codes below, or -errno
 * for a system error passed through. mt_error_string() turns either kind
 * into text; mt_client_last_error() (client.h) gives the longer message of
 * the calling thread's last failure on a client.
 *
 * The values are Manta's wire-independent error numbers (common/error.h
 * inside the tree) and never change: new codes are only ever appended.
 * Retryable codes (MT_EAGAIN, MT_ENOSPC, MT_ETIMEDOUT, MT_EUNAVAIL) may go
 * away if the call is repeated later; mt_error_retryable() says which.
 */
#ifndef MANTA_ERROR_H
#define MANTA_ERROR_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the functions libmanta exports; everything else stays hidden. */
#ifndef MT_EXTERN
#define MT_EXTERN __attribute__((visibility("default")))
#endif

/*
 * The numbers of common/error.h, mirrored. Inside the Manta tree the SDK's
 * sources include common/error.h first, which defines the same names; the
 * SDK's unit tests check that both agree.
 */
#ifndef MT_ERROR_H
#define MT_ERR_BASE 1000
enum mt_errno {
    MT_ENOMEM = 1000,      /* out of memory */
    MT_EINVAL = 1001,      /* invalid argument */
    MT_ENOENT = 1002,      /* no such object/task/node */
    MT_EEXIST = 1003,      /* already exists */
    MT_EAGAIN = 1004,      /* not ready yet, retry (retryable) */
    MT_EINFEASIBLE = 1005, /* no node can ever satisfy the request */
    MT_EPROTO = 1006,      /* malformed message from peer */
    MT_ENOSPC = 1007,      /* no space left (retryable) */
    MT_ETOOBIG = 1008,     /* larger than the capacity */
    MT_ETIMEDOUT = 1009,   /* timed out (retryable) */
    MT_ECANCELED = 1010,   /* cancelled */
    MT_EUNAVAIL = 1011,    /* peer unavailable (retryable) */
    MT_ESTATE = 1012,      /* not allowed in the current state */
    MT_EIO = 1013,         /* input/output error */
    MT_ECLOSED = 1014,     /* closed or shutting down */
    MT_ENOTSUP = 1015,     /* not supported */
    MT_EPERM = 1016,       /* not permitted */
    MT_ERANGE = 1017,      /* value out of range */
    MT_ERPC = 1018,        /* remote call failed */
    MT_EWORKERDIED = 1019, /* the worker running it died */
    MT_EACTORDIED = 1020,  /* the actor died */
    MT_ETASKFAILED = 1021, /* the task could not run or finish */
    MT_EVERSION = 1022,    /* incompatible version or layout */
    MT_EAUTH = 1023,       /* wrong or missing cluster token, or TLS
                              credentials the peer refused */
};
#endif

/*
 * mt_error_string - text for an error code.
 *
 * IN  err   a -MT_E* code, a -errno, or the positive value of either
 * RET a static string ("unknown error" when neither)
 * THREAD any
 */
MT_EXTERN const char *mt_error_string(int err);

/*
 * mt_error_name - the symbolic name of an error code.
 *
 * RET a static string such as "MT_ETIMEDOUT" or "ENOENT"; "UNKNOWN" when
 *     the code is neither Manta's nor the system's
 * THREAD any
 */
MT_EXTERN const char *mt_error_name(int err);

/*
 * mt_error_retryable - true when the failure may go away if the same call
 * is repeated later (the head is restarting, a timeout, no space now).
 *
 * THREAD any
 */
MT_EXTERN bool mt_error_retryable(int err);

#ifdef __cplusplus
}
#endif

#endif /* MANTA_ERROR_H */
