/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_task_result.c -- worker/task_result.c: the forms of a command task's
 * result file and every way one can be wrong (parse), and collect/discard
 * against a real in-process store: a value put under the task's result id,
 * an object checked there, garbage refused with the file and any stray
 * result object removed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/ids.h"
#include "objstore/store.h"
#include "tests/unit/unit.h"
#include "worker/task_result.h"

#define TASK "t0000000000000a1"

static int parse(const char *s, size_t len, struct mt_result_file *f)
{
    char why[256] = "";

    return mt_result_file_parse((const uint8_t *)s, len, f, why, sizeof(why));
}

static void test_parse_forms(void)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1], line[64];
    struct mt_result_file f;
    mt_object_id id;
    int n;

    CU_ASSERT_EQUAL(parse("", 0, &f), 0);
    CU_ASSERT_EQUAL(f.kind, MT_RESULT_NONE);
    CU_ASSERT_EQUAL(parse("value\nab\0c", 10, &f), 0);
    CU_ASSERT_EQUAL(f.kind, MT_RESULT_VALUE);
    CU_ASSERT_EQUAL(f.value_len, 4);
    CU_ASSERT_EQUAL(memcmp(f.value, "ab\0c", 4), 0);
    CU_ASSERT_EQUAL(mt_object_id_for_task(TASK, &id), 0);
    n = snprintf(line, sizeof(line), "object %s\n",
                 mt_object_id_hex(&id, hex));
    CU_ASSERT_EQUAL(parse(line, (size_t)n, &f), 0);
    CU_ASSERT_EQUAL(f.kind, MT_RESULT_OBJECT);
    CU_ASSERT_TRUE(mt_object_id_eq(&f.id, &id));
    CU_ASSERT_EQUAL(parse(line, (size_t)n - 1, &f), 0); /* no newline */
    CU_ASSERT_EQUAL(f.kind, MT_RESULT_OBJECT);
}

static void test_parse_refused(void)
{
    static const char *bad[] = {
        "garbage", "value", "Value\nx", "object ", "object 12",
        "object 0123456789012345678901234567890123456789aa",
        "object 012345678901234567890123456789012345678g",
        "object 0123456789012345678901234567890123456789\n\n",
        " object 0123456789012345678901234567890123456789",
    };
    struct mt_result_file f;
    char why[256];
    uint8_t *big;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = '\0';
        CU_ASSERT_EQUAL(mt_result_file_parse((const uint8_t *)bad[i],
                                             strlen(bad[i]), &f, why,
                                             sizeof(why)), -MT_EINVAL);
        CU_ASSERT_TRUE(why[0] != '\0');
    }
    big = mt_xcalloc(1, MT_RESULT_VALUE_MAX + 7);
    memcpy(big, "value\n", 6);
    CU_ASSERT_EQUAL(mt_result_file_parse(big, MT_RESULT_VALUE_MAX + 6,
                                         &f, why, sizeof(why)), 0);
    CU_ASSERT_EQUAL(mt_result_file_parse(big, MT_RESULT_VALUE_MAX + 7,
                                         &f, why, sizeof(why)), -MT_ETOOBIG);
    free(big);
}

/* ---- collect / discard against a store ---------------------------------- */

struct env {
    char dir[64];
    char *path;
    struct mt_store *st;
    mt_object_id id;
};

static void env_init(struct env *e)
{
    struct mt_store_opts o = {.capacity = 4u << 20};

    snprintf(e->dir, sizeof(e->dir), "/tmp/mt-test-result-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(e->dir));
    e->path = mt_result_file_prepare(e->dir, TASK, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e->path);
    CU_ASSERT_FATAL(mt_store_create(&o, &e->st) == 0);
    CU_ASSERT_FATAL(mt_object_id_for_task(TASK, &e->id) == 0);
}

static void env_release(struct env *e)
{
    char *results = mt_xasprintf("%s/results", e->dir);

    mt_store_destroy(e->st);
    unlink(e->path);
    rmdir(results);
    rmdir(e->dir);
    free(results);
    free(e->path);
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void put_result(struct env *e, const char *bytes)
{
    struct mt_object_info info;
    size_t n = strlen(bytes);

    CU_ASSERT_FATAL(mt_store_create_object(e->st, &e->id, n, 0, 0, NULL,
                                           &info) == 0);
    memcpy(mt_store_base(e->st) + info.offset, bytes, n);
    CU_ASSERT_FATAL(mt_store_seal(e->st, &e->id) == 0);
}

static void test_collect_value(void)
{
    struct mt_object_info info;
    struct env e;
    uint64_t size = 1;
    char *why = NULL;

    env_init(&e);
    CU_ASSERT_STRING_EQUAL(strrchr(e.path, '/'), "/" TASK ".0");
    /* No file: no result. */
    CU_ASSERT_EQUAL(mt_result_file_collect(e.st, e.path, TASK, &size, &why),
                    0);
    CU_ASSERT_EQUAL(size, 0);
    CU_ASSERT_PTR_NULL(why);
    write_file(e.path, "value\nhello", 11);
    CU_ASSERT_EQUAL(mt_result_file_collect(e.st, e.path, TASK, &size, &why),
                    0);
    CU_ASSERT_EQUAL(size, 5);
    CU_ASSERT_EQUAL(access(e.path, F_OK), -1); /* removed */
    CU_ASSERT_EQUAL_FATAL(mt_store_get(e.st, &e.id, &info), 0);
    CU_ASSERT_EQUAL(info.data_size, 5);
    CU_ASSERT_EQUAL(memcmp(mt_store_base(e.st) + info.offset, "hello", 5), 0);
    mt_store_release(e.st, &e.id);
    env_release(&e);
}

static void test_collect_object(void)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1], line[64];
    struct env e;
    uint64_t size = 0;
    char *why = NULL;
    int n;

    env_init(&e);
    n = snprintf(line, sizeof(line), "object %s\n",
                 mt_object_id_hex(&e.id, hex));
    /* Named but absent: refused, saying so. */
    write_file(e.path, line, (size_t)n);
    CU_ASSERT_EQUAL(mt_result_file_collect(e.st, e.path, TASK, &size, &why),
                    -MT_ENOENT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(why);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "not in this node's store"));
    CU_ASSERT_EQUAL(access(e.path, F_OK), -1);
    MT_FREE(why);
    /* Present: its size. */
    put_result(&e, "weights!");
    write_file(e.path, line, (size_t)n);
    CU_ASSERT_EQUAL(mt_result_file_collect(e.st, e.path, TASK, &size, &why),
                    0);
    CU_ASSERT_EQUAL(size, 8);
    CU_ASSERT_PTR_NULL(why);
    CU_ASSERT_EQUAL(mt_store_contains(e.st, &e.id), 0);
    env_release(&e);
}

static void test_collect_refused(void)
{
    struct env e;
    uint64_t size = 1;
    char *why = NULL;
    uint8_t *big;

    env_init(&e);
    /* Garbage: an error naming the file; the stray object goes too. */
    put_result(&e, "stray");
    write_file(e.path, "garbage", 7);
    CU_ASSERT_EQUAL(mt_result_file_collect(e.st, e.path, TASK, &size, &why),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(size, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(why);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "bad result file"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, e.path));
    CU_ASSERT_EQUAL(mt_store_contains(e.st, &e.id), -MT_ENOENT);
    CU_ASSERT_EQUAL(access(e.path, F_OK), -1);
    MT_FREE(why);
    /* Another object than the task's result id. */
    write_file(e.path, "object 0123456789012345678901234567890123456789",
               47);
    CU_ASSERT_EQUAL(mt_result_file_collect(e.st, e.path, TASK, &size, &why),
                    -MT_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(why && strstr(why, "result id"));
    MT_FREE(why);
    /* Far too big: read only up to the bound, refused. */
    big = mt_xcalloc(1, 4 * MT_RESULT_FILE_MAX);
    memcpy(big, "value\n", 6);
    write_file(e.path, big, 4 * MT_RESULT_FILE_MAX);
    free(big);
    CU_ASSERT_EQUAL(mt_result_file_collect(e.st, e.path, TASK, &size, &why),
                    -MT_ETOOBIG);
    CU_ASSERT_PTR_NOT_NULL(why && strstr(why, "object store"));
    MT_FREE(why);
    /* A directory where the file should be. */
    CU_ASSERT_EQUAL_FATAL(mkdir(e.path, 0755), 0);
    CU_ASSERT_TRUE(mt_result_file_collect(e.st, e.path, TASK, &size, &why) <
                   0);
    CU_ASSERT_PTR_NOT_NULL(why);
    MT_FREE(why);
    rmdir(e.path);
    /* Discard after a failed run: file and object gone. */
    put_result(&e, "x");
    write_file(e.path, "value\nx", 7);
    mt_result_file_discard(e.st, e.path, TASK);
    CU_ASSERT_EQUAL(access(e.path, F_OK), -1);
    CU_ASSERT_EQUAL(mt_store_contains(e.st, &e.id), -MT_ENOENT);
    /* No channel at all: nothing to do. */
    CU_ASSERT_EQUAL(mt_result_file_collect(e.st, NULL, TASK, &size, &why), 0);
    CU_ASSERT_PTR_NULL(mt_result_file_prepare(NULL, TASK, 0));
    env_release(&e);
}

CU_TestInfo mt_test_task_result[] = {
    {"parse_forms", test_parse_forms},
    {"parse_refused", test_parse_refused},
    {"collect_value", test_collect_value},
    {"collect_object", test_collect_object},
    {"collect_refused", test_collect_refused},
    CU_TEST_INFO_NULL,
};
