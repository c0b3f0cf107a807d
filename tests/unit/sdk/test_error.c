/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_error.c -- sdk/error.c and the public error codes.
 *
 * This file includes only the public header, as a user would, so its
 * mirrored codes can be checked against common/error.h's table, which
 * mt_error_name() reads: every public code must carry its own name. The
 * public label operators are handed to test_labels.c, which holds them
 * against common/selector.h's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "manta/manta.h"
#include "tests/unit/unit.h"

static const struct {
    int code;
    const char *name;
} codes[] = {
    {MT_ENOMEM, "MT_ENOMEM"},       {MT_EINVAL, "MT_EINVAL"},
    {MT_ENOENT, "MT_ENOENT"},       {MT_EEXIST, "MT_EEXIST"},
    {MT_EAGAIN, "MT_EAGAIN"},       {MT_EINFEASIBLE, "MT_EINFEASIBLE"},
    {MT_EPROTO, "MT_EPROTO"},       {MT_ENOSPC, "MT_ENOSPC"},
    {MT_ETOOBIG, "MT_ETOOBIG"},     {MT_ETIMEDOUT, "MT_ETIMEDOUT"},
    {MT_ECANCELED, "MT_ECANCELED"}, {MT_EUNAVAIL, "MT_EUNAVAIL"},
    {MT_ESTATE, "MT_ESTATE"},       {MT_EIO, "MT_EIO"},
    {MT_ECLOSED, "MT_ECLOSED"},     {MT_ENOTSUP, "MT_ENOTSUP"},
    {MT_EPERM, "MT_EPERM"},         {MT_ERANGE, "MT_ERANGE"},
    {MT_ERPC, "MT_ERPC"},           {MT_EWORKERDIED, "MT_EWORKERDIED"},
    {MT_EACTORDIED, "MT_EACTORDIED"},
    {MT_ETASKFAILED, "MT_ETASKFAILED"},
    {MT_EVERSION, "MT_EVERSION"},   {MT_EAUTH, "MT_EAUTH"},
};

/* The public mt_label_op values, in order (checked in test_labels.c). */
const int mt_test_public_label_ops[] = {
    MT_LABEL_EQ,     MT_LABEL_NE,     MT_LABEL_IN,
    MT_LABEL_NOT_IN, MT_LABEL_EXISTS, MT_LABEL_NOT_EXISTS,
};
const size_t mt_test_n_public_label_ops =
    sizeof(mt_test_public_label_ops) / sizeof(mt_test_public_label_ops[0]);

static void test_codes_mirror_common(void)
{
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        CU_ASSERT_STRING_EQUAL(mt_error_name(-codes[i].code), codes[i].name);
        CU_ASSERT_STRING_EQUAL(mt_error_name(codes[i].code), codes[i].name);
    }
    /* The code after the last one is not ours: the mirror is complete. */
    CU_ASSERT_STRING_NOT_EQUAL(mt_error_name(-(MT_EAUTH + 1)),
                               "MT_EAUTH");
    CU_ASSERT_EQUAL(MT_ENOMEM, MT_ERR_BASE);
}

static void test_text(void)
{
    CU_ASSERT_STRING_EQUAL(mt_error_string(-MT_ETIMEDOUT), "timed out");
    CU_ASSERT_STRING_EQUAL(mt_error_string(MT_ETIMEDOUT), "timed out");
    CU_ASSERT_STRING_EQUAL(mt_error_string(0), "success");
    CU_ASSERT_STRING_EQUAL(mt_error_string(-ENOENT), strerror(ENOENT));
    CU_ASSERT_STRING_EQUAL(mt_error_name(-ECONNREFUSED), "ECONNREFUSED");
}

static void test_retryable(void)
{
    CU_ASSERT_TRUE(mt_error_retryable(-MT_EUNAVAIL));
    CU_ASSERT_TRUE(mt_error_retryable(-MT_ETIMEDOUT));
    CU_ASSERT_TRUE(mt_error_retryable(-MT_ENOSPC));
    CU_ASSERT_FALSE(mt_error_retryable(-MT_EINVAL));
    CU_ASSERT_FALSE(mt_error_retryable(-MT_ETASKFAILED));
}

static void test_version(void)
{
    char want[32];

    CU_ASSERT_STRING_EQUAL(mt_sdk_version(), MT_VERSION);
    /* The public header's macros follow project() in CMakeLists.txt. */
    snprintf(want, sizeof(want), "%d.%d.", MT_SDK_VERSION_MAJOR,
             MT_SDK_VERSION_MINOR);
    CU_ASSERT_EQUAL(strncmp(mt_sdk_version(), want, strlen(want)), 0);
}

CU_TestInfo mt_test_sdk_error[] = {
    {"codes_mirror_common", test_codes_mirror_common},
    {"text", test_text},
    {"retryable", test_retryable},
    {"version", test_version},
    CU_TEST_INFO_NULL,
};
