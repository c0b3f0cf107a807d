/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_detect_gpu.c -- GPU detection helpers (worker/detect_gpu.h):
 * CUDA_VISIBLE_DEVICES parsing (indices, UUID prefixes, MIG ids),
 * UUID matching and filtering, model name -> accelerator
 * type, the procfs fallback over a fake tree in a temp dir, NVML absent,
 * and turning a GPU list into the offer and labels. NVML itself is
 * exercised with a stub library by tests/integration/test_gpu.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/qty.h"
#include "tests/unit/unit.h"
#include "worker/detect_gpu.h"

static void test_visible_parse(void)
{
    struct mt_gpu_ref r[8];
    char warn[512];

    CU_ASSERT_EQUAL(mt_gpu_parse_visible("1,3", r, 8, warn, sizeof(warn)), 2);
    CU_ASSERT_EQUAL(r[0].kind, MT_GPU_REF_INDEX);
    CU_ASSERT_EQUAL(r[0].index, 1);
    CU_ASSERT_STRING_EQUAL(r[0].text, "1");
    CU_ASSERT_EQUAL(r[1].index, 3);
    CU_ASSERT_STRING_EQUAL(warn, "");
    CU_ASSERT_EQUAL(mt_gpu_parse_visible("", r, 8, warn, sizeof(warn)), 0);
    CU_ASSERT_EQUAL(mt_gpu_parse_visible("NoDevFiles", r, 8, warn,
                                         sizeof(warn)), 0);
    CU_ASSERT_EQUAL(mt_gpu_parse_visible("-1", r, 8, warn, sizeof(warn)), 0);
    CU_ASSERT_STRING_EQUAL(warn, "");
    /* A negative entry ends the list, as in CUDA. */
    CU_ASSERT_EQUAL(mt_gpu_parse_visible("2,-1,0", r, 8, warn,
                                         sizeof(warn)), 1);
    CU_ASSERT_EQUAL(r[0].index, 2);
    /* Junk and repeats are skipped with a warning. */
    CU_ASSERT_EQUAL(mt_gpu_parse_visible("3, x,GPU-xyz,3,1 ,7z,GPU-", r, 8,
                                         warn, sizeof(warn)), 2);
    CU_ASSERT_EQUAL(r[0].index, 3);
    CU_ASSERT_EQUAL(r[1].index, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(warn, "'x' is not a device index"));
    CU_ASSERT_PTR_NOT_NULL(strstr(warn, "'GPU-xyz' is not a device index"));
    CU_ASSERT_PTR_NOT_NULL(strstr(warn, "'GPU-' is not a device index"));
    CU_ASSERT_PTR_NOT_NULL(strstr(warn, "'3' is repeated"));
    CU_ASSERT_PTR_NOT_NULL(strstr(warn, "'7z' is not a device index"));
    /* The limit holds; NULL warn is allowed. */
    CU_ASSERT_EQUAL(mt_gpu_parse_visible("0,1,2,3", r, 2, NULL, 0), 2);
}

static void test_visible_uuid_mig(void)
{
    struct mt_gpu_ref r[8];
    char warn[512];

    CU_ASSERT_EQUAL(mt_gpu_parse_visible(
                        " GPU-8932f937-d72c-4106-c12f-20bd9faed9f6 ,GPU-ab,"
                        "MIG-GPU-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0,"
                        "MIG-c6e8b2a0-58b8-5f3c-9c1b-111111111111,0,gpu-ab,"
                        "GPU-AB",
                        r, 8, warn, sizeof(warn)), 5);
    CU_ASSERT_EQUAL(r[0].kind, MT_GPU_REF_UUID);
    CU_ASSERT_STRING_EQUAL(r[0].text,
                           "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
    CU_ASSERT_EQUAL(r[1].kind, MT_GPU_REF_UUID);
    CU_ASSERT_STRING_EQUAL(r[1].text, "GPU-ab");
    CU_ASSERT_EQUAL(r[2].kind, MT_GPU_REF_MIG);
    CU_ASSERT_EQUAL(r[3].kind, MT_GPU_REF_MIG);
    CU_ASSERT_EQUAL(r[4].kind, MT_GPU_REF_INDEX);
    CU_ASSERT_EQUAL(r[4].index, 0);
    /* "gpu-ab" is not CUDA's spelling; "GPU-AB" repeats "GPU-ab". */
    CU_ASSERT_PTR_NOT_NULL(strstr(warn, "'gpu-ab' is not a device index"));
    CU_ASSERT_PTR_NOT_NULL(strstr(warn, "'GPU-AB' is repeated"));
}

/* Four GPUs with index i, name gpu<i> and the given UUIDs. */
static void four_gpus(struct mt_gpu_list *l)
{
    static const char *uuid[] = {
        "GPU-aaaa1111-0000-0000-0000-000000000000",
        "GPU-bbbb2222-0000-0000-0000-000000000001",
        "GPU-bbbb3333-0000-0000-0000-000000000002",
        "",
    };

    memset(l, 0, sizeof(*l));
    for (int i = 0; i < 4; i++) {
        l->v[i].index = i;
        snprintf(l->v[i].name, sizeof(l->v[i].name), "gpu%d", i);
        snprintf(l->v[i].uuid, sizeof(l->v[i].uuid), "%s", uuid[i]);
        snprintf(l->v[i].id, sizeof(l->v[i].id), "%d", i);
    }
    l->n = 4;
    l->source = "nvml";
}

static void test_match_uuid(void)
{
    struct mt_gpu_list l;

    four_gpus(&l);
    CU_ASSERT_EQUAL(mt_gpu_match_uuid(&l, "GPU-aaaa1111-0000-0000-0000-"
                                          "000000000000"), 0);
    CU_ASSERT_EQUAL(mt_gpu_match_uuid(&l, "GPU-a"), 0);
    CU_ASSERT_EQUAL(mt_gpu_match_uuid(&l, "GPU-BBBB3"), 2);
    CU_ASSERT_EQUAL(mt_gpu_match_uuid(&l, "GPU-bbbb"), -MT_EEXIST);
    CU_ASSERT_EQUAL(mt_gpu_match_uuid(&l, "GPU-"), -MT_EEXIST);
    CU_ASSERT_EQUAL(mt_gpu_match_uuid(&l, "GPU-c"), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_gpu_match_uuid(&l, "GPU-aaaa1111-0000-0000-0000-"
                                          "0000000000001"), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_gpu_match_uuid(&l, ""), -MT_ENOENT);
}

static void test_filter_uuid_mig(void)
{
    struct mt_gpu_list l;
    struct mt_gpu_ref r[8];
    int n;

    four_gpus(&l);
    /* Prefix, index, the same GPU again by UUID, ambiguous, unknown. */
    n = mt_gpu_parse_visible("GPU-bbbb3,0,GPU-aaaa,GPU-bbbb,GPU-c,1", r, 8,
                             NULL, 0);
    CU_ASSERT_EQUAL_FATAL(n, 6);
    mt_gpu_filter_visible(&l, r, n);
    CU_ASSERT_EQUAL_FATAL(l.n, 3);
    CU_ASSERT_EQUAL(l.v[0].index, 2);
    CU_ASSERT_STRING_EQUAL(l.v[0].id, "GPU-bbbb3");
    CU_ASSERT_STRING_EQUAL(l.v[0].name, "gpu2");
    CU_ASSERT_EQUAL(l.v[1].index, 0);
    CU_ASSERT_STRING_EQUAL(l.v[1].id, "0");
    CU_ASSERT_EQUAL(l.v[2].index, 1);
    CU_ASSERT_STRING_EQUAL(l.v[2].id, "1");
    /* MIG entries are GPUs of their own, named as given. */
    four_gpus(&l);
    n = mt_gpu_parse_visible("MIG-GPU-bbbb2222-0000-0000-0000-000000000001/"
                             "2/0,MIG-1234,3", r, 8, NULL, 0);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    mt_gpu_filter_visible(&l, r, n);
    CU_ASSERT_EQUAL_FATAL(l.n, 3);
    CU_ASSERT_EQUAL(l.v[0].index, -1);
    CU_ASSERT_STRING_EQUAL(l.v[0].id, "MIG-GPU-bbbb2222-0000-0000-0000-"
                                      "000000000001/2/0");
    CU_ASSERT_STRING_EQUAL(l.v[0].uuid, l.v[0].id);
    CU_ASSERT_STRING_EQUAL(l.v[0].name, "gpu1");
    CU_ASSERT_EQUAL(l.v[0].mem_total, 0);
    CU_ASSERT_STRING_EQUAL(l.v[1].id, "MIG-1234");
    CU_ASSERT_STRING_EQUAL(l.v[1].name, "gpu0");
    CU_ASSERT_EQUAL(l.v[2].index, 3);
    /* No GPU on the node: MIG entries are not offered. */
    memset(&l, 0, sizeof(l));
    mt_gpu_filter_visible(&l, r, n);
    CU_ASSERT_EQUAL(l.n, 0);
}

static void test_accel_type(void)
{
    static const char *cases[][2] = {
        {"NVIDIA H200", "H200"},
        {"NVIDIA H100 80GB HBM3", "H100"},
        {"Tesla V100-SXM2-16GB", "V100"},
        {"NVIDIA A100-SXM4-80GB", "A100"},
        {"NVIDIA L4", "L4"},
        {"NVIDIA B200", "B200"},
    };
    char out[32];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        CU_ASSERT_EQUAL(mt_gpu_accel_type(cases[i][0], out, sizeof(out)), 0);
        CU_ASSERT_STRING_EQUAL(out, cases[i][1]);
    }
    CU_ASSERT_EQUAL(mt_gpu_accel_type("H100", out, sizeof(out)), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_gpu_accel_type("", out, sizeof(out)), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_gpu_accel_type("nvidia gpu", out, sizeof(out)),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_gpu_accel_type("NVIDIA H200", out, 3), -MT_EINVAL);
}

static void test_filter(void)
{
    struct mt_gpu_list l = {0};
    struct mt_gpu_ref r[3];

    four_gpus(&l);
    CU_ASSERT_EQUAL_FATAL(mt_gpu_parse_visible("3,9,1", r, 3, NULL, 0), 3);
    mt_gpu_filter_visible(&l, r, 3);
    CU_ASSERT_EQUAL_FATAL(l.n, 2);
    CU_ASSERT_EQUAL(l.v[0].index, 3);
    CU_ASSERT_STRING_EQUAL(l.v[0].name, "gpu3");
    CU_ASSERT_STRING_EQUAL(l.v[0].id, "3");
    CU_ASSERT_EQUAL(l.v[1].index, 1);
    mt_gpu_filter_visible(&l, r, 0);
    CU_ASSERT_EQUAL(l.n, 0);
}

/* root/driver/nvidia/gpus/<bus>/information with the given text. */
static void write_info(const char *root, const char *bus, const char *text)
{
    char path[1024];
    FILE *f;

    snprintf(path, sizeof(path), "%s/driver/nvidia/gpus/%s", root, bus);
    CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
    strcat(path, "/information");
    f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static void test_procfs(void)
{
    const char *base = getenv("TMPDIR");
    char root[512], dir[600], cmd[700];
    struct mt_gpu_list l;

    snprintf(root, sizeof(root), "%s/mt_ut_gpu_XXXXXX",
             base && *base ? base : "/tmp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
    CU_ASSERT_EQUAL(mt_gpu_detect_procfs(root, &l), -MT_ENOENT);
    CU_ASSERT_EQUAL(l.n, 0);
    snprintf(dir, sizeof(dir), "%s/driver", root);
    mkdir(dir, 0755);
    strcat(dir, "/nvidia");
    mkdir(dir, 0755);
    strcat(dir, "/gpus");
    mkdir(dir, 0755);
    CU_ASSERT_EQUAL(mt_gpu_detect_procfs(root, &l), 0);
    CU_ASSERT_EQUAL(l.n, 0);
    /* Written out of order: index follows the bus id order. */
    write_info(root, "0000:81:00.0", "Model: \t\t NVIDIA H100 80GB HBM3  \n"
                                     "IRQ: \t\t 99\n");
    write_info(root, "0000:17:00.0", "IRQ: 12\nModel:\tNVIDIA L4\n"
                                     "GPU UUID: \t GPU-0123abcd-1\n");
    write_info(root, "0000:18:00.0", "no model line here\n");
    CU_ASSERT_EQUAL(mt_gpu_detect_procfs(root, &l), 0);
    CU_ASSERT_EQUAL_FATAL(l.n, 2);
    CU_ASSERT_STRING_EQUAL(l.source, "procfs");
    CU_ASSERT_EQUAL(l.v[0].index, 0);
    CU_ASSERT_STRING_EQUAL(l.v[0].name, "NVIDIA L4");
    CU_ASSERT_STRING_EQUAL(l.v[0].uuid, "GPU-0123abcd-1");
    CU_ASSERT_STRING_EQUAL(l.v[0].id, "0");
    CU_ASSERT_STRING_EQUAL(l.v[1].uuid, "");
    CU_ASSERT_EQUAL(l.v[1].index, 1);
    CU_ASSERT_STRING_EQUAL(l.v[1].name, "NVIDIA H100 80GB HBM3");
    CU_ASSERT_EQUAL(l.v[1].mem_total, 0);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_nvml_absent(void)
{
    struct mt_gpu_list l;
    char err[256] = "";

    CU_ASSERT_EQUAL(mt_gpu_detect_nvml("/nonexistent/libnvidia-ml.so.1", &l,
                                       err, sizeof(err)), -MT_ENOENT);
    CU_ASSERT_EQUAL(l.n, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot load"));
}

static void test_apply(void)
{
    struct mt_gpu_list l = {0};
    struct mt_kv_list labels = {0};
    int64_t n = -1;

    mt_gpu_apply(&l, &n, &labels);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NULL(mt_kv_list_get(&labels, MT_GPU_TYPE_LABEL));
    l.n = 2;
    snprintf(l.v[0].name, sizeof(l.v[0].name), "NVIDIA H200");
    l.v[0].mem_total = 2048ull << 20;
    l.v[1].mem_total = 1024ull << 20;
    n = -1;
    mt_gpu_apply(&l, &n, &labels);
    CU_ASSERT_EQUAL(n, 2 * MT_QTY_SCALE);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&labels, MT_GPU_TYPE_LABEL), "H200");
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&labels, MT_GPU_MEMORY_LABEL),
                           "1024");
    mt_kv_list_release(&labels);
    /* --num-gpus and operator labels win. */
    mt_kv_list_set(&labels, MT_GPU_TYPE_LABEL, "custom");
    n = 5 * MT_QTY_SCALE;
    mt_gpu_apply(&l, &n, &labels);
    CU_ASSERT_EQUAL(n, 5 * MT_QTY_SCALE);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&labels, MT_GPU_TYPE_LABEL),
                           "custom");
    mt_kv_list_release(&labels);
}

static void test_map_env(void)
{
    struct mt_gpu_list l = {0}, none = {0};
    struct mt_kv_list env = {0};

    l.n = 2;
    snprintf(l.v[0].id, sizeof(l.v[0].id), "1");
    snprintf(l.v[1].id, sizeof(l.v[1].id), "3");
    mt_gpu_set_device_map(&l);
    mt_kv_list_set(&env, "CUDA_VISIBLE_DEVICES", "0,1");
    mt_gpu_map_env(&env);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&env, "CUDA_VISIBLE_DEVICES"), "1,3");
    mt_kv_list_set(&env, "CUDA_VISIBLE_DEVICES", "1,5");
    mt_gpu_map_env(&env); /* 5 is past the map (--num-gpus): kept */
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&env, "CUDA_VISIBLE_DEVICES"), "3,5");
    mt_kv_list_set(&env, "CUDA_VISIBLE_DEVICES", "");
    mt_gpu_map_env(&env);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&env, "CUDA_VISIBLE_DEVICES"), "");
    mt_kv_list_set(&env, "CUDA_VISIBLE_DEVICES", "GPU-abc");
    mt_gpu_map_env(&env);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&env, "CUDA_VISIBLE_DEVICES"),
                           "GPU-abc");
    /* UUID and MIG entries reach tasks as the worker was given them. */
    snprintf(l.v[0].id, sizeof(l.v[0].id), "GPU-bbbb2");
    snprintf(l.v[1].id, sizeof(l.v[1].id), "MIG-GPU-aa/1/0");
    mt_gpu_set_device_map(&l);
    mt_kv_list_set(&env, "CUDA_VISIBLE_DEVICES", "1,0");
    mt_gpu_map_env(&env);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&env, "CUDA_VISIBLE_DEVICES"),
                           "MIG-GPU-aa/1/0,GPU-bbbb2");
    mt_gpu_set_device_map(&none); /* no map: ids unchanged */
    mt_kv_list_set(&env, "CUDA_VISIBLE_DEVICES", "0");
    mt_gpu_map_env(&env);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&env, "CUDA_VISIBLE_DEVICES"), "0");
    mt_kv_list_release(&env);
}

CU_TestInfo mt_test_detect_gpu[] = {
    {"map_env", test_map_env},
    {"visible_parse", test_visible_parse},
    {"visible_uuid_mig", test_visible_uuid_mig},
    {"match_uuid", test_match_uuid},
    {"filter_uuid_mig", test_filter_uuid_mig},
    {"accel_type", test_accel_type},
    {"filter", test_filter},
    {"procfs", test_procfs},
    {"nvml_absent", test_nvml_absent},
    {"apply", test_apply},
    CU_TEST_INFO_NULL,
};
