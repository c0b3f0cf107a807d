/* SPDX-License-Identifier: Apache-2.0 */
/*
 * digest.h -- SHA-256 as hex, for credentials the head keeps without
 * keeping them: node credentials (node_table.h) and the cluster token's
 * fingerprint in storage (persist.h). OpenSSL's libcrypto does the work.
 *
 * THREAD: any.
 */
#ifndef MT_HEAD_DIGEST_H
#define MT_HEAD_DIGEST_H

#include <stddef.h>

#define MT_SHA256_HEX_LEN 64

/* mt_sha256_hex - SHA-256 of p[0..n) as 64 lowercase hex digits + NUL.
 * OUT out  at least MT_SHA256_HEX_LEN + 1 bytes. RET out. */
char *mt_sha256_hex(const void *p, size_t n, char *out);

#endif /* MT_HEAD_DIGEST_H */
