/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auth.c -- cluster tokens (generate, check, store, compare) and the
 * loading of a process's credentials from flags, environment and session
 * dir (see auth.h for the order).
 */
#include "common/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/error.h"
#include "common/qty.h"
#include "common/sys.h"

int mt_auth_token_generate(char *out)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char buf[MT_AUTH_TOKEN_HEX / 2];
    size_t got = 0;

    while (got < sizeof(buf)) {
        ssize_t n = getrandom(buf + got, sizeof(buf) - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof(buf); i++) {
        out[2 * i] = hex[buf[i] >> 4];
        out[2 * i + 1] = hex[buf[i] & 15];
    }
    out[MT_AUTH_TOKEN_HEX] = '\0';
    return 0;
}

bool mt_auth_token_valid(const char *tok)
{
    size_t n = tok ? strlen(tok) : 0;

    if (n < MT_AUTH_TOKEN_MIN || n > MT_AUTH_TOKEN_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (tok[i] <= ' ' || tok[i] > '~')
            return false;
    return true;
}

int mt_auth_token_write(const char *path, const char *tok)
{
    char *text;
    int rc;

    if (asprintf(&text, "%s\n", tok) < 0)
        return -ENOMEM;
    rc = mt_sys_write_file_atomic(path, text); /* 0600 */
    free(text);
    return rc;
}

bool mt_auth_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    unsigned char diff = alen != blen;
    size_t n = alen < blen ? alen : blen;

    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

int mt_security_src_set(struct mt_security_src *src, int which,
                        const char *value)
{
    switch (which) {
    case MT_SEC_TOKEN_FILE:
        src->token_file = value;
        return 0;
    case MT_SEC_AUTH:
        if (strcmp(value, "none") != 0 && strcmp(value, "token") != 0)
            return -MT_EINVAL;
        src->auth_none = strcmp(value, "none") == 0;
        return 0;
    case MT_SEC_TLS_CERT:
        src->tls_cert = value;
        return 0;
    case MT_SEC_TLS_KEY:
        src->tls_key = value;
        return 0;
    case MT_SEC_TLS_CA:
        src->tls_ca = value;
        return 0;
    default:
        return -MT_EINVAL;
    }
}

/* ---- loading ------------------------------------------------------------- */

static char *trimmed(char *s)
{
    size_t n = strlen(s);

    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' ||
                 s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* Read the token in path into *out. RET 0, -errno, -MT_EINVAL. */
static int token_from_file(const char *path, char **out, const char *what,
                           char *err, size_t errlen)
{
    char *s = mt_sys_read_file(path);

    if (!s) {
        int rc = errno ? -errno : -MT_EIO;
        snprintf(err, errlen, "cannot read the cluster token from %s (%s): %s",
                 path, what, mt_strerror(rc));
        return rc;
    }
    *out = trimmed(s);
    return 0;
}

static int pick_token(const struct mt_security_src *src, struct mt_security *o,
                      char *err, size_t errlen)
{
    const char *env = getenv("MANTA_AUTH_TOKEN");
    const char *envf = getenv("MANTA_AUTH_TOKEN_FILE");
    char *path;
    int rc;

    if (src->auth_none)
        return 0;
    if (src->token_file)
        return token_from_file(src->token_file, &o->token, "--token-file",
                               err, errlen);
    if (env && *env) {
        o->token = strdup(env);
        return o->token ? 0 : -MT_ENOMEM;
    }
    if (envf && *envf)
        return token_from_file(envf, &o->token, "MANTA_AUTH_TOKEN_FILE", err,
                               errlen);
    if (!src->session_dir || asprintf(&path, "%s/token", src->session_dir) < 0)
        return 0;
    rc = access(path, F_OK) == 0
             ? token_from_file(path, &o->token, "the session dir", err, errlen)
             : 0;
    free(path);
    return rc;
}

/* Find "key=" in the session dir's tls file. RET owned path or NULL. */
static char *session_tls_path(const char *dir, const char *key)
{
    char *path, *text, *line, *save = NULL, *found = NULL;
    size_t klen = strlen(key);

    if (!dir || asprintf(&path, "%s/tls", dir) < 0)
        return NULL;
    text = mt_sys_read_file(path);
    free(path);
    if (!text)
        return NULL;
    for (line = strtok_r(text, "\n", &save); line && !found;
         line = strtok_r(NULL, "\n", &save))
        if (strncmp(line, key, klen) == 0 && line[klen] == '=' &&
            line[klen + 1])
            found = strdup(trimmed(line + klen + 1));
    free(text);
    return found;
}

/* Read one PEM file named by flag, env var or session dir into *out and
 * its path into *file. */
static int load_pem(const char *flag_path, const char *env_name,
                    const char *key, const char *session_dir, char **out,
                    char **file, char *err, size_t errlen)
{
    const char *env = getenv(env_name);
    char *owned = NULL;
    const char *path = flag_path;
    int rc = 0;

    if (!path && env && *env)
        path = env;
    if (!path)
        path = owned = session_tls_path(session_dir, key);
    if (!path)
        return 0;
    if (!(*file = strdup(path))) {
        free(owned);
        return -MT_ENOMEM;
    }
    *out = mt_sys_read_file(path);
    if (!*out) {
        rc = errno ? -errno : -MT_EIO;
        snprintf(err, errlen, "cannot read the TLS %s file %s: %s", key, path,
                 mt_strerror(rc));
    } else if (!strstr(*out, "-----BEGIN ")) {
        rc = -MT_EINVAL;
        snprintf(err, errlen, "the TLS %s file %s is not PEM", key, path);
    }
    free(owned);
    return rc;
}

int mt_security_load(const struct mt_security_src *src, struct mt_security *o,
                     char *err, size_t errlen)
{
    int rc;

    memset(o, 0, sizeof(*o));
    snprintf(err, errlen, "out of memory");
    if ((rc = pick_token(src, o, err, errlen)) < 0)
        return rc;
    if (o->token && !mt_auth_token_valid(o->token)) {
        snprintf(err, errlen, "the cluster token must be %d to %d printable "
                 "characters without spaces", MT_AUTH_TOKEN_MIN,
                 MT_AUTH_TOKEN_MAX);
        return -MT_EINVAL;
    }
    if ((rc = load_pem(src->tls_cert, "MANTA_TLS_CERT", "cert",
                       src->session_dir, &o->tls_cert, &o->tls_cert_file, err,
                       errlen)) < 0 ||
        (rc = load_pem(src->tls_key, "MANTA_TLS_KEY", "key", src->session_dir,
                       &o->tls_key, &o->tls_key_file, err, errlen)) < 0 ||
        (rc = load_pem(src->tls_ca, "MANTA_TLS_CA", "ca", src->session_dir,
                       &o->tls_ca, &o->tls_ca_file, err, errlen)) < 0)
        return rc;
    if (!o->tls_cert != !o->tls_key) {
        snprintf(err, errlen, "a TLS certificate needs its key and a key its "
                 "certificate (--tls-cert and --tls-key)");
        return -MT_EINVAL;
    }
    return 0;
}

void mt_security_export_env(const struct mt_security *s,
                            struct mt_kv_list *env)
{
    if (s->token)
        mt_kv_list_set(env, "MANTA_AUTH_TOKEN", s->token);
    if (s->tls_cert_file)
        mt_kv_list_set(env, "MANTA_TLS_CERT", s->tls_cert_file);
    if (s->tls_key_file)
        mt_kv_list_set(env, "MANTA_TLS_KEY", s->tls_key_file);
    if (s->tls_ca_file)
        mt_kv_list_set(env, "MANTA_TLS_CA", s->tls_ca_file);
}

static int dup_field(const char *in, char **out)
{
    *out = NULL;
    if (in && !(*out = strdup(in)))
        return -MT_ENOMEM;
    return 0;
}

int mt_security_copy(const struct mt_security *in, struct mt_security *out)
{
    memset(out, 0, sizeof(*out));
    if (dup_field(in->token, &out->token) < 0 ||
        dup_field(in->tls_cert, &out->tls_cert) < 0 ||
        dup_field(in->tls_key, &out->tls_key) < 0 ||
        dup_field(in->tls_ca, &out->tls_ca) < 0 ||
        dup_field(in->tls_cert_file, &out->tls_cert_file) < 0 ||
        dup_field(in->tls_key_file, &out->tls_key_file) < 0 ||
        dup_field(in->tls_ca_file, &out->tls_ca_file) < 0) {
        mt_security_free(out);
        return -MT_ENOMEM;
    }
    return 0;
}

void mt_security_free(struct mt_security *s)
{
    free(s->token);
    free(s->tls_cert);
    if (s->tls_key) /* do not leave the key in freed memory */
        explicit_bzero(s->tls_key, strlen(s->tls_key));
    free(s->tls_key);
    free(s->tls_ca);
    free(s->tls_cert_file);
    free(s->tls_key_file);
    free(s->tls_ca_file);
    memset(s, 0, sizeof(*s));
}
