/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_auth.c -- what an engine's servers demand and its channels present:
 * the cluster token as "authorization: Bearer <token>" metadata on every
 * call, checked before a request is decoded, and TLS credentials (mutual
 * when a CA is given) for every listener and channel.
 *
 * The token rides as plain metadata rather than gRPC call credentials,
 * which gRPC only sends over secure channels: a cluster without TLS still
 * authenticates every call (docs/security.md says what that protects).
 */
#include "common/rpc.h"

#include <grpc/grpc_security.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "common/rpc_int.h"

#define BEARER "Bearer "

static void clear_security(struct mt_rpc_engine *eng)
{
    if (eng->n_auth_md) {
        grpc_slice_unref(eng->auth_md.key);
        grpc_slice_unref(eng->auth_md.value);
    }
    memset(&eng->auth_md, 0, sizeof(eng->auth_md));
    eng->n_auth_md = 0;
    if (eng->bearer)
        explicit_bzero(eng->bearer, strlen(eng->bearer));
    free(eng->bearer);
    eng->bearer = NULL;
    mt_security_free(&eng->sec);
}

int mt_rpc_engine_set_security(struct mt_rpc_engine *eng,
                               const struct mt_security *sec)
{
    struct mt_security copy;

    if (mt_security_copy(sec, &copy) < 0)
        return -MT_ENOMEM;
    clear_security(eng);
    eng->sec = copy;
    if (!copy.token)
        return 0;
    if (asprintf(&eng->bearer, BEARER "%s", copy.token) < 0) {
        eng->bearer = NULL;
        clear_security(eng);
        return -MT_ENOMEM;
    }
    eng->auth_md.key = grpc_slice_from_static_string("authorization");
    eng->auth_md.value = grpc_slice_from_copied_string(eng->bearer);
    eng->n_auth_md = 1;
    return 0;
}

void mt__rpc_security_free(struct mt_rpc_engine *eng)
{
    clear_security(eng);
}

int mt_rpc_engine_load_security(struct mt_rpc_engine *eng,
                                const struct mt_security_src *src, char *err,
                                size_t errlen)
{
    struct mt_security sec;
    int rc = mt_security_load(src, &sec, err, errlen);

    if (rc == 0 && (rc = mt_rpc_engine_set_security(eng, &sec)) < 0)
        snprintf(err, errlen, "out of memory");
    mt_security_free(&sec);
    return rc;
}

/* Whether this engine's channels speak TLS. */
static bool engine_tls(const struct mt_rpc_engine *eng)
{
    return eng->sec.tls_cert || eng->sec.tls_ca;
}

int mt__rpc_check_auth(const struct mt_rpc_engine *eng,
                       const grpc_metadata_array *md, const char **why)
{
    const grpc_metadata *found = NULL;

    if (!eng->bearer)
        return 0;
    for (size_t i = 0; i < md->count; i++)
        if (grpc_slice_str_cmp(md->metadata[i].key, "authorization") == 0) {
            found = &md->metadata[i];
            break;
        }
    if (!found) {
        *why = "missing cluster token: this cluster requires one (see "
               "docs/security.md)";
        return -MT_EAUTH;
    }
    if (!mt_auth_equal((const char *)GRPC_SLICE_START_PTR(found->value),
                       GRPC_SLICE_LENGTH(found->value), eng->bearer,
                       strlen(eng->bearer))) {
        *why = "wrong cluster token";
        return -MT_EAUTH;
    }
    return 0;
}

grpc_server_credentials *mt__rpc_server_creds(const struct mt_rpc_engine *eng)
{
    grpc_ssl_pem_key_cert_pair pair;

    if (!eng->sec.tls_cert)
        return grpc_insecure_server_credentials_create();
    pair.private_key = eng->sec.tls_key;
    pair.cert_chain = eng->sec.tls_cert;
    return grpc_ssl_server_credentials_create_ex(
        eng->sec.tls_ca, &pair, 1,
        eng->sec.tls_ca ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                        : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
        NULL);
}

grpc_channel_credentials *mt__rpc_channel_creds(const struct mt_rpc_engine *eng)
{
    grpc_ssl_pem_key_cert_pair pair;

    if (!engine_tls(eng))
        return grpc_insecure_credentials_create();
    pair.private_key = eng->sec.tls_key;
    pair.cert_chain = eng->sec.tls_cert;
    return grpc_ssl_credentials_create(eng->sec.tls_ca,
                                       eng->sec.tls_cert ? &pair : NULL, NULL,
                                       NULL);
}
