/* SPDX-License-Identifier: Apache-2.0 */
/*
 * digest.c -- SHA-256 as hex (digest.h), through libcrypto's EVP.
 */
#include "head/digest.h"

#include <openssl/evp.h>
#include <stdio.h>

#include "common/log.h"

char *mt_sha256_hex(const void *p, size_t n, char *out)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;

    out[0] = '\0';
    MT_ASSERT(EVP_Digest(p, n, md, &len, EVP_sha256(), NULL) == 1 &&
              len == 32);
    for (unsigned int i = 0; i < len; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return out;
}
