/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_auth.c -- common/auth.c: generated tokens, the token rule, the
 * constant-time compare, the 0600 token file, where credentials are looked
 * for (flag, MANTA_AUTH_TOKEN, MANTA_AUTH_TOKEN_FILE, session dir; TLS from
 * flags, env, the session dir's tls file) and the errors a bad source gets,
 * the credential flags, and the env handed to child processes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/error.h"
#include "common/qty.h"
#include "common/sys.h"
#include "tests/unit/unit.h"

static const char PEM[] = "-----BEGIN CERTIFICATE-----\nAAAA\n"
                          "-----END CERTIFICATE-----\n";

static void clear_env(void)
{
    unsetenv("MANTA_AUTH_TOKEN");
    unsetenv("MANTA_AUTH_TOKEN_FILE");
    unsetenv("MANTA_TLS_CERT");
    unsetenv("MANTA_TLS_KEY");
    unsetenv("MANTA_TLS_CA");
}

/* A fresh dir; RET its path (static buffer). */
static const char *tmpdir(void)
{
    static char dir[64];

    snprintf(dir, sizeof(dir), "/tmp/mt-auth-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    return dir;
}

static char *path_in(const char *dir, const char *name)
{
    char *p = NULL;

    CU_ASSERT_FATAL(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char *p = path_in(dir, name);

    CU_ASSERT_EQUAL(mt_sys_write_file_atomic(p, text), 0);
    free(p);
}

static void test_generate_and_rule(void)
{
    char a[MT_AUTH_TOKEN_HEX + 1], b[MT_AUTH_TOKEN_HEX + 1];

    CU_ASSERT_EQUAL(mt_auth_token_generate(a), 0);
    CU_ASSERT_EQUAL(mt_auth_token_generate(b), 0);
    CU_ASSERT_EQUAL(strlen(a), MT_AUTH_TOKEN_HEX);
    CU_ASSERT_EQUAL(strspn(a, "0123456789abcdef"), MT_AUTH_TOKEN_HEX);
    CU_ASSERT_STRING_NOT_EQUAL(a, b);
    CU_ASSERT_TRUE(mt_auth_token_valid(a));
    CU_ASSERT_TRUE(mt_auth_token_valid("0123456789abcdef"));
    CU_ASSERT_FALSE(mt_auth_token_valid("0123456789abcde")); /* 15 */
    CU_ASSERT_FALSE(mt_auth_token_valid("0123456789abcdef 1"));
    CU_ASSERT_FALSE(mt_auth_token_valid("0123456789abcdef\n"));
    CU_ASSERT_FALSE(mt_auth_token_valid("0123456789abcdef\x7f"));
    CU_ASSERT_FALSE(mt_auth_token_valid(NULL));
    memset(b, 'x', MT_AUTH_TOKEN_HEX);
    CU_ASSERT_TRUE(mt_auth_equal(a, strlen(a), a, strlen(a)));
    CU_ASSERT_FALSE(mt_auth_equal(a, strlen(a), b, strlen(b)));
    CU_ASSERT_FALSE(mt_auth_equal(a, strlen(a), a, strlen(a) - 1));
    CU_ASSERT_TRUE(mt_auth_equal("", 0, "", 0));
}

static void test_token_file_is_private(void)
{
    const char *dir = tmpdir();
    char *p = path_in(dir, "token"), *text;
    struct stat st;

    CU_ASSERT_EQUAL(mt_auth_token_write(p, "0123456789abcdef-tok"), 0);
    CU_ASSERT_EQUAL(stat(p, &st), 0);
    CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
    text = mt_sys_read_file(p);
    CU_ASSERT_STRING_EQUAL(text, "0123456789abcdef-tok\n");
    free(text);
    unlink(p);
    free(p);
    rmdir(dir);
}

/* Load with src; RET the token found ("" for none) in a static buffer. */
static const char *token_of(const struct mt_security_src *src, int want_rc)
{
    static char out[MT_AUTH_TOKEN_MAX + 1];
    struct mt_security s;
    char err[256] = "";

    CU_ASSERT_EQUAL(mt_security_load(src, &s, err, sizeof(err)), want_rc);
    if (want_rc)
        CU_ASSERT(err[0] != '\0');
    snprintf(out, sizeof(out), "%s", s.token ? s.token : "");
    mt_security_free(&s);
    return out;
}

static void test_token_order(void)
{
    const char *dir = tmpdir();
    char *flag = path_in(dir, "flag"), *envf = path_in(dir, "envfile");
    char *session = path_in(dir, "token");
    struct mt_security_src src = {.session_dir = dir};

    clear_env();
    CU_ASSERT_STRING_EQUAL(token_of(&src, 0), ""); /* nothing anywhere */
    write_file(dir, "token", "session-token-0123\n");
    CU_ASSERT_STRING_EQUAL(token_of(&src, 0), "session-token-0123");
    write_file(dir, "envfile", "envfile-token-0123\n");
    setenv("MANTA_AUTH_TOKEN_FILE", envf, 1);
    CU_ASSERT_STRING_EQUAL(token_of(&src, 0), "envfile-token-0123");
    setenv("MANTA_AUTH_TOKEN", "env-token-01234567", 1);
    CU_ASSERT_STRING_EQUAL(token_of(&src, 0), "env-token-01234567");
    write_file(dir, "flag", "flag-token-01234567\n");
    src.token_file = flag;
    CU_ASSERT_STRING_EQUAL(token_of(&src, 0), "flag-token-01234567");
    src.auth_none = true; /* --auth none wins over everything */
    CU_ASSERT_STRING_EQUAL(token_of(&src, 0), "");
    src.auth_none = false;
    /* Bad sources are errors, not silently skipped. */
    write_file(dir, "flag", "too short\n");
    token_of(&src, -MT_EINVAL);
    src.token_file = "/nonexistent/token";
    token_of(&src, -ENOENT);
    clear_env();
    unlink(flag);
    unlink(envf);
    unlink(session);
    free(flag);
    free(envf);
    free(session);
    rmdir(dir);
}

static void test_tls_sources(void)
{
    const char *dir = tmpdir();
    char *cert = path_in(dir, "c.pem"), *key = path_in(dir, "k.pem");
    char *bad = path_in(dir, "bad.pem"), *tls = path_in(dir, "tls");
    struct mt_security_src src = {.auth_none = true, .session_dir = dir};
    struct mt_security s;
    char err[256], *text;

    clear_env();
    write_file(dir, "c.pem", PEM);
    write_file(dir, "k.pem", PEM);
    write_file(dir, "bad.pem", "not a pem");
    /* From the session dir's tls file. */
    text = NULL;
    CU_ASSERT(asprintf(&text, "cert=%s\nkey=%s\nca=%s\n", cert, key, cert) >
              0);
    write_file(dir, "tls", text);
    free(text);
    CU_ASSERT_EQUAL(mt_security_load(&src, &s, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(s.tls_cert, PEM);
    CU_ASSERT_STRING_EQUAL(s.tls_ca_file, cert);
    mt_security_free(&s);
    unlink(tls);
    /* A cert without its key, and a file that is not PEM. */
    src.tls_cert = cert;
    CU_ASSERT_EQUAL(mt_security_load(&src, &s, err, sizeof(err)),
                    -MT_EINVAL);
    CU_ASSERT(strstr(err, "--tls-key") != NULL);
    mt_security_free(&s);
    src.tls_key = bad;
    CU_ASSERT_EQUAL(mt_security_load(&src, &s, err, sizeof(err)),
                    -MT_EINVAL);
    CU_ASSERT(strstr(err, "not PEM") != NULL);
    mt_security_free(&s);
    /* The env names them when no flag does. */
    src.tls_cert = src.tls_key = NULL;
    setenv("MANTA_TLS_CERT", cert, 1);
    setenv("MANTA_TLS_KEY", key, 1);
    CU_ASSERT_EQUAL(mt_security_load(&src, &s, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(s.tls_key_file, key);
    CU_ASSERT_PTR_NULL(s.tls_ca);
    mt_security_free(&s);
    clear_env();
    unlink(cert);
    unlink(key);
    unlink(bad);
    free(cert);
    free(key);
    free(bad);
    free(tls);
    rmdir(dir);
}

static void test_flags_and_env_export(void)
{
    struct mt_security_src src = {0};
    struct mt_security s = {0}, copy;
    struct mt_kv_list env = {0};

    CU_ASSERT_EQUAL(mt_security_src_set(&src, MT_SEC_AUTH, "none"), 0);
    CU_ASSERT_TRUE(src.auth_none);
    CU_ASSERT_EQUAL(mt_security_src_set(&src, MT_SEC_AUTH, "token"), 0);
    CU_ASSERT_FALSE(src.auth_none);
    CU_ASSERT_EQUAL(mt_security_src_set(&src, MT_SEC_AUTH, "off"),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_security_src_set(&src, MT_SEC_TLS_CA, "/ca"), 0);
    CU_ASSERT_STRING_EQUAL(src.tls_ca, "/ca");
    CU_ASSERT_EQUAL(mt_security_src_set(&src, MT_SEC_N_OPTS, "x"),
                    -MT_EINVAL);
    s.token = strdup("0123456789abcdef-env");
    s.tls_ca_file = strdup("/ca.pem");
    CU_ASSERT_EQUAL(mt_security_copy(&s, &copy), 0);
    mt_security_free(&s);
    mt_security_export_env(&copy, &env);
    CU_ASSERT_EQUAL(env.n, 2);
    for (size_t i = 0; i < env.n; i++)
        CU_ASSERT_STRING_EQUAL(env.v[i].value,
                               strcmp(env.v[i].key, "MANTA_AUTH_TOKEN") == 0
                                   ? "0123456789abcdef-env"
                                   : "/ca.pem");
    mt_kv_list_release(&env);
    mt_security_free(&copy);
    CU_ASSERT_PTR_NULL(copy.token);
}

CU_TestInfo mt_test_auth[] = {
    {"generate_and_rule", test_generate_and_rule},
    {"token_file_is_private", test_token_file_is_private},
    {"token_order", test_token_order},
    {"tls_sources", test_tls_sources},
    {"flags_and_env_export", test_flags_and_env_export},
    CU_TEST_INFO_NULL,
};
