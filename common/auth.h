/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auth.h -- the cluster's credentials: the cluster token and the TLS
 * material every process of a cluster presents (docs/security.md).
 *
 * A cluster token is 16 to 256 printable ASCII characters without spaces
 * (generated ones are 64 hex digits, 256 bits from getrandom). Calls carry
 * it as "authorization: Bearer <token>"; servers compare it in constant
 * time.
 *
 * Where a process finds its credentials (mt_security_load):
 *   token  --token-file PATH, then $MANTA_AUTH_TOKEN, then
 *          $MANTA_AUTH_TOKEN_FILE, then <session dir>/token
 *   TLS    --tls-cert/--tls-key/--tls-ca, then $MANTA_TLS_CERT/_KEY/_CA,
 *          then the paths in <session dir>/tls (lines "cert=", "key=", "ca=")
 * Daemons pass their flags; clients pass none and rely on the rest.
 *
 * THREAD: any; nothing here keeps state.
 */
#ifndef MT_AUTH_H
#define MT_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#define MT_AUTH_TOKEN_MIN 16
#define MT_AUTH_TOKEN_MAX 256
#define MT_AUTH_TOKEN_HEX 64 /* length of a generated token */

/* What a process presents and checks. Strings are owned (mt_security_free). */
struct mt_security {
    char *token;    /* cluster token; NULL: auth none */
    char *tls_cert; /* PEM certificate chain; NULL: plain TCP */
    char *tls_key;  /* PEM private key (with tls_cert) */
    char *tls_ca;   /* PEM CA bundle: servers then require client
                       certificates signed by it, clients verify with it */
    char *tls_cert_file; /* where each came from, for messages and for */
    char *tls_key_file;  /* the processes a daemon starts */
    char *tls_ca_file;
};

/* Where they come from: borrowed strings; NULL fields are looked up. */
struct mt_security_src {
    const char *token_file; /* --token-file */
    bool auth_none;         /* --auth none: no token at all */
    const char *tls_cert;   /* file paths */
    const char *tls_key;
    const char *tls_ca;
    const char *session_dir; /* NULL: no session-dir fallback */
};

/*
 * The daemons' credential flags. Add MT_SECURITY_LONGOPTS(base) to a
 * getopt_long table (codes base .. base + MT_SEC_N_OPTS - 1) and hand
 * those codes to mt_security_src_set; MT_SECURITY_USAGE is their help.
 */
enum { MT_SEC_TOKEN_FILE, MT_SEC_AUTH, MT_SEC_TLS_CERT, MT_SEC_TLS_KEY,
       MT_SEC_TLS_CA, MT_SEC_N_OPTS };

#define MT_SECURITY_LONGOPTS(base)                                             \
    {"token-file", required_argument, NULL, (base) + MT_SEC_TOKEN_FILE},       \
    {"auth", required_argument, NULL, (base) + MT_SEC_AUTH},                   \
    {"tls-cert", required_argument, NULL, (base) + MT_SEC_TLS_CERT},           \
    {"tls-key", required_argument, NULL, (base) + MT_SEC_TLS_KEY},             \
    {"tls-ca", required_argument, NULL, (base) + MT_SEC_TLS_CA}

#define MT_SECURITY_USAGE                                                      \
    "  --token-file PATH      the cluster token (default: $MANTA_AUTH_TOKEN,\n" \
    "                         $MANTA_AUTH_TOKEN_FILE, <temp-dir>/token)\n"     \
    "  --auth token|none      none: no token asked or sent; anyone who\n"      \
    "                         reaches a port runs commands as this user\n"     \
    "  --tls-cert/--tls-key F TLS with this PEM certificate and key\n"         \
    "  --tls-ca F             PEM CA: verify peers with it and require\n"      \
    "                         client certificates it signed (mutual TLS)\n"

/*
 * mt_security_src_set - record one credential flag.
 * IN  which  MT_SEC_* (the getopt code minus the table's base)
 * RET 0, or -MT_EINVAL for a bad value (--auth other than token/none)
 */
int mt_security_src_set(struct mt_security_src *src, int which,
                        const char *value);

/*
 * mt_auth_token_generate - a new token: 64 hex digits from getrandom.
 * OUT out  at least MT_AUTH_TOKEN_HEX + 1 bytes
 * RET 0, or -errno when the kernel gives no randomness (never a weak token)
 */
int mt_auth_token_generate(char *out);

/* mt_auth_token_valid - the token rule above. */
bool mt_auth_token_valid(const char *tok);

/*
 * mt_auth_token_write - write tok to path (mode 0600, atomically).
 * RET 0 or -errno
 */
int mt_auth_token_write(const char *path, const char *tok);

/*
 * mt_auth_equal - a == b in time that depends only on the lengths, so a
 * caller cannot learn a token byte by byte from response times.
 */
bool mt_auth_equal(const char *a, size_t alen, const char *b, size_t blen);

/*
 * mt_security_load - gather credentials from src, the environment and the
 * session dir (order above) and read the files.
 *
 * OUT out     filled; free with mt_security_free() (also on failure)
 * OUT err     on failure, a one-line reason naming the file or variable
 * RET 0, -MT_EINVAL (bad token, cert without key, ...), -errno (a file
 *     that cannot be read)
 */
int mt_security_load(const struct mt_security_src *src, struct mt_security *out,
                     char *err, size_t errlen);

struct mt_kv_list;

/*
 * mt_security_export_env - set MANTA_AUTH_TOKEN and MANTA_TLS_CERT/_KEY/_CA
 * in env for the processes a daemon starts (tasks that are drivers too);
 * unset ones are left out.
 */
void mt_security_export_env(const struct mt_security *s,
                            struct mt_kv_list *env);

/* mt_security_copy - deep copy. RET 0 or -MT_ENOMEM. */
int mt_security_copy(const struct mt_security *in, struct mt_security *out);

/* mt_security_free - free the strings and zero *s. */
void mt_security_free(struct mt_security *s);

#endif /* MT_AUTH_H */
