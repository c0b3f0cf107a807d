/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_accel_env.c -- the accelerator env contract against the goldens of
 * notes/accelerators.md: CUDA_VISIBLE_DEVICES (4.1), partial-host TPU
 * bounds for 1/2/4/8 chips (1.5, 2.4), the v6e-16 host-centric and
 * device-centric tables (3.4), the 2-host x 4-chip verl example (3.3), the
 * v6e-8 single-host TorchTPU addresses (2.5), v7x topology (2.2, 6.2) and
 * multislice MEGASCALE_* values (1.9, 3.4); plus rejected inputs.
 *
 * Goldens are written out literally, never recomputed with the formula
 * under test. "Exact" checks also count the variables, so nothing extra
 * leaks into a member's environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "sched/accel_env.h"
#include "tests/unit/unit.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* Expected value meaning "must not be in the env at all". */
static const char absent_marker[] = "<absent>";
#define ABSENT absent_marker

struct kv {
    const char *name;
    const char *value; /* NULL: present as unset; ABSENT: not present */
};

/* Check each expectation; with exact, also that nothing else is set. */
static void expect_env(const struct mt_env *env, const struct kv *kv,
                       size_t n, bool exact)
{
    const struct mt_env_var *v;
    size_t i, present = 0;

    for (i = 0; i < n; i++) {
        v = mt_env_find(env, kv[i].name);
        if (kv[i].value == ABSENT) {
            CU_ASSERT_PTR_NULL(v);
            continue;
        }
        present++;
        CU_ASSERT_PTR_NOT_NULL(v);
        if (!v) {
            fprintf(stderr, "\nmissing %s\n", kv[i].name);
            continue;
        }
        if (!kv[i].value) {
            CU_ASSERT_PTR_NULL(v->value);
            continue;
        }
        CU_ASSERT_PTR_NOT_NULL(v->value);
        if (v->value && strcmp(v->value, kv[i].value) != 0)
            fprintf(stderr, "\n%s: got \"%s\" want \"%s\"\n", kv[i].name,
                    v->value, kv[i].value);
        if (v->value)
            CU_ASSERT_STRING_EQUAL(v->value, kv[i].value);
    }
    if (exact)
        CU_ASSERT_EQUAL(env->n, present);
}

static struct mt_tpu_slice slice_of(const char *pod, const char *topo,
                                    uint32_t cph)
{
    struct mt_tpu_slice s;

    memset(&s, 0, sizeof(s));
    CU_ASSERT_EQUAL_FATAL(mt_tpu_slice_parse(pod, topo, cph, &s), 0);
    return s;
}

/* ---------------------------------------------------------------------
 * struct mt_env
 * --------------------------------------------------------------------- */

static void test_env_basics(void)
{
    struct mt_env e;
    int i;
    char name[16];

    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_env_set(&e, "A", "1"), 0);
    CU_ASSERT_EQUAL(mt_env_set(&e, "B", NULL), 0);
    CU_ASSERT_EQUAL(mt_env_set(&e, "A", "2"), 0); /* replaced in place */
    CU_ASSERT_EQUAL(e.n, 2);
    CU_ASSERT_STRING_EQUAL(e.vars[0].name, "A");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "A"), "2");
    CU_ASSERT_PTR_NULL(mt_env_get(&e, "B"));
    CU_ASSERT_PTR_NOT_NULL(mt_env_find(&e, "B"));
    CU_ASSERT_PTR_NULL(mt_env_find(&e, "C"));
    CU_ASSERT_EQUAL(mt_env_set(&e, "B", "x"), 0);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "B"), "x");
    CU_ASSERT_EQUAL(mt_env_set(&e, "A", NULL), 0);
    CU_ASSERT_PTR_NULL(mt_env_get(&e, "A"));
    CU_ASSERT_EQUAL(mt_env_set(&e, "", "1"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_env_set(&e, "A=B", "1"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_env_set(&e, NULL, "1"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_env_set(NULL, "A", "1"), -MT_EINVAL);
    for (i = 0; i < 100; i++) { /* grows past the first allocation */
        snprintf(name, sizeof(name), "V%d", i);
        CU_ASSERT_EQUAL(mt_env_set(&e, name, name), 0);
    }
    CU_ASSERT_EQUAL(e.n, 102);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "V99"), "V99");
    mt_env_release(&e);
    CU_ASSERT_EQUAL(e.n, 0);
    mt_env_release(&e); /* twice is fine */
    mt_env_release(NULL);
    mt_env_array_free(NULL, 3);
}

/* ---------------------------------------------------------------------
 * GPU (notes 4.1)
 * --------------------------------------------------------------------- */

static void test_gpu(void)
{
    static const struct {
        uint32_t ids[4];
        size_t n;
        int rc;
        const char *want;
    } rows[] = {
        {{0}, 0, 0, ""},             /* no GPU: "" hides the node's GPUs */
        {{0}, 1, 0, "0"},
        {{0, 1}, 2, 0, "0,1"},       /* Slurm step0 */
        {{2}, 1, 0, "2"},            /* step1; also a 0.25 share of GPU 2 */
        {{0, 2}, 2, 0, "0,2"},
        {{3, 1}, 2, 0, "3,1"},       /* grant order is kept */
        {{0, 1, 2, 3}, 4, 0, "0,1,2,3"},
        {{1, 1}, 2, -MT_EINVAL, NULL},
    };
    struct mt_env e;
    size_t i;

    for (i = 0; i < N_ELEMS(rows); i++) {
        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_gpu(rows[i].ids, rows[i].n, &e),
                        rows[i].rc);
        if (rows[i].rc == 0) {
            CU_ASSERT_EQUAL(e.n, 1);
            CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "CUDA_VISIBLE_DEVICES"),
                                   rows[i].want);
        } else {
            CU_ASSERT_EQUAL(e.n, 0);
        }
        mt_env_release(&e);
    }
    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_gpu(NULL, 0, &e), 0);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "CUDA_VISIBLE_DEVICES"), "");
    CU_ASSERT_EQUAL(mt_accel_env_gpu(NULL, 2, &e), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_accel_env_gpu(NULL, 0, NULL), -MT_EINVAL);
    mt_env_release(&e);
}

/* Four tasks sharing GPU 3 at 0.25 each all see device 3. */
static void test_gpu_fractional(void)
{
    const uint32_t shared = 3;
    struct mt_env e;
    int i;

    for (i = 0; i < 4; i++) {
        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_gpu(&shared, 1, &e), 0);
        CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "CUDA_VISIBLE_DEVICES"), "3");
        mt_env_release(&e);
    }
}

/* ---------------------------------------------------------------------
 * TPU chips on one host (notes 1.5, 2.4)
 * --------------------------------------------------------------------- */

struct host_row {
    const char *pod;
    const char *topo;
    uint32_t cph;
    uint32_t chips[8];
    size_t n;
    const char *visible; /* NULL: unset */
    const char *cphb;
    const char *topology;
    const char *type;
};

static const struct host_row host_rows[] = {
    /* 8-chip v6e host (2x4): 1, 2, 4 and all 8 chips */
    {"v6e-8", NULL, 0, {5}, 1, "5", "1,1,1", "1x1", "v6e-8"},
    {"v6e-8", NULL, 0, {2, 3}, 2, "2,3", "1,2,1", "1x2", "v6e-8"},
    {"v6e-8", NULL, 0, {7, 6, 5, 4}, 4, "4,5,6,7", "2,2,1", "2x2", "v6e-8"},
    {"v6e-8", NULL, 0, {0, 1, 2, 3, 4, 5, 6, 7}, 8, NULL, "2,4,1", "2x4",
     "v6e-8"},
    /* 8-chip v5e host */
    {"v5litepod-8", NULL, 0, {0, 1, 2, 3}, 4, "0,1,2,3", "2,2,1", "2x2",
     "v5litepod-8"},
    /* 4-chip hosts of multi-host slices, each grant run standalone */
    {"v6e-16", NULL, 0, {3}, 1, "3", "1,1,1", "1x1", "v6e-16"},
    {"v6e-16", NULL, 0, {0, 1}, 2, "0,1", "1,2,1", "1x2", "v6e-16"},
    {"v6e-16", NULL, 0, {0, 1, 2, 3}, 4, NULL, "2,2,1", "2x2", "v6e-16"},
    {"v4-16", NULL, 0, {2}, 1, "2", "1,1,1", "1x1x1", "v4-16"},
    {"v4-16", NULL, 0, {2, 3}, 2, "2,3", "1,2,1", "1x2x1", "v4-16"},
    {"v4-8", NULL, 0, {0, 1, 2, 3}, 4, NULL, "2,2,1", "2x2x1", "v4-8"},
    {"v5p-8", NULL, 0, {1}, 1, "1", "1,1,1", "1x1x1", "v5p-8"},
    {"tpu7x-8", NULL, 0, {0, 1}, 2, "0,1", "1,2,1", "1x2x1", "tpu7x-8"},
    /* v6e-8 cut into two 4-chip VMs */
    {"v6e-8", "2x4", 4, {2, 3}, 2, "2,3", "1,2,1", "1x2", "v6e-8"},
    {"v6e-1", NULL, 0, {0}, 1, NULL, "1,1,1", "1x1", "v6e-1"},
};

static void test_tpu_host(void)
{
    struct mt_tpu_slice s;
    struct mt_env e;
    size_t i;

    for (i = 0; i < N_ELEMS(host_rows); i++) {
        const struct host_row *r = &host_rows[i];
        const struct kv want[] = {
            {"TPU_VISIBLE_CHIPS", r->visible},
            {"TPU_CHIPS_PER_HOST_BOUNDS", r->cphb},
            {"TPU_HOST_BOUNDS", "1,1,1"},
            {"TPU_TOPOLOGY", r->topology},
            {"TPU_ACCELERATOR_TYPE", r->type},
            {"TPU_WORKER_ID", "0"},
            {"TPU_WORKER_HOSTNAMES", "localhost"},
            {"TPU_SKIP_MDS_QUERY", "true"},
            {"CLOUD_TPU_TASK_ID", ABSENT},
            {"MEGASCALE_NUM_SLICES", ABSENT},
        };

        s = slice_of(r->pod, r->topo, r->cph);
        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_tpu_host(&s, r->chips, r->n, &e), 0);
        expect_env(&e, want, N_ELEMS(want), true);
        mt_env_release(&e);
    }
}

static void test_tpu_host_errors(void)
{
    static const struct {
        const char *pod;
        uint32_t chips[8];
        size_t n;
        int rc;
    } rows[] = {
        {"v6e-8", {0, 1, 2}, 3, -MT_EINVAL},  /* TPU 3 chips */
        {"v6e-8", {0, 1, 2, 3, 4, 5}, 6, -MT_EINVAL},
        {"v6e-8", {1, 2}, 2, -MT_EINVAL},     /* not NUMA-aligned */
        {"v6e-8", {2, 3, 4, 5}, 4, -MT_EINVAL},
        {"v6e-8", {1, 1}, 2, -MT_EINVAL},
        {"v6e-8", {0}, 0, -MT_EINVAL},
        {"v6e-16", {0, 1, 2, 3, 4, 5, 6, 7}, 8, -MT_ETOOBIG},
        {"v4-16", {4}, 1, -MT_ERANGE},
    };
    struct mt_tpu_slice s;
    struct mt_env e;
    size_t i;

    for (i = 0; i < N_ELEMS(rows); i++) {
        s = slice_of(rows[i].pod, NULL, 0);
        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_tpu_host(&s, rows[i].chips, rows[i].n,
                                              &e),
                        rows[i].rc);
        CU_ASSERT_EQUAL(e.n, 0); /* nothing half-written */
        mt_env_release(&e);
    }
    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_host(NULL, rows[0].chips, 1, &e),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_host(&s, NULL, 1, &e), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_host(&s, rows[0].chips, 1, NULL),
                    -MT_EINVAL);
    mt_env_release(&e);
}

/* ---------------------------------------------------------------------
 * Slice gangs
 * --------------------------------------------------------------------- */

static const char *const h4[] = {"h0", "h1", "h2", "h3"};

/* notes 3.4, host-centric: one process per host, all 4 chips. */
static void test_v6e16_host_centric(void)
{
    struct mt_tpu_slice s = slice_of("v6e-16", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = h4, .n_hosts = 4,
                            .slice_name = "slice-a",
                            .launch = MT_TPU_LAUNCH_HOST};
    static const char *const ids[] = {"0", "1", "2", "3"};
    struct mt_env e;
    uint32_t i;

    CU_ASSERT_EQUAL(mt_tpu_gang_procs_per_host(&g), 1);
    for (i = 0; i < 4; i++) {
        const struct kv want[] = {
            {"TPU_ACCELERATOR_TYPE", "v6e-16"},
            {"TPU_TOPOLOGY", "4x4"},
            {"TPU_WORKER_HOSTNAMES", "h0,h1,h2,h3"},
            {"TPU_WORKER_ID", ids[i]},
            {"TPU_NAME", "slice-a"},
            {"TPU_SKIP_MDS_QUERY", "true"},
            {"TPU_CHIPS_PER_HOST_BOUNDS", "2,2,1"},
            {"TPU_HOST_BOUNDS", "2,2,1"},
            {"TPU_VISIBLE_CHIPS", NULL},
            {"TPU_PROCESS_ADDRESSES", ABSENT},
            {"WORLD_SIZE", ABSENT},
        };

        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, i, 0, &e), 0);
        expect_env(&e, want, N_ELEMS(want), true);
        mt_env_release(&e);
    }
}

static const char v6e16_addrs[] =
    "h0:8471,h0:8472,h0:8473,h0:8474,h1:8471,h1:8472,h1:8473,h1:8474,"
    "h2:8471,h2:8472,h2:8473,h2:8474,h3:8471,h3:8472,h3:8473,h3:8474";

/* notes 3.4, device-centric: 16 processes, r = 4 i + c. */
static void test_v6e16_device_centric(void)
{
    struct mt_tpu_slice s = slice_of("v6e-16", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = h4, .n_hosts = 4,
                            .slice_name = "slice-a",
                            .launch = MT_TPU_LAUNCH_DEVICE,
                            .port_base = 8471, .master_port = 29500};
    static const char *const digits[] = {"0", "1", "2", "3"};
    static const char *const ports[] = {"8471", "8472", "8473", "8474"};
    char r_text[8];
    struct mt_env e;
    uint32_t i, c;

    CU_ASSERT_EQUAL(mt_tpu_gang_procs_per_host(&g), 4);
    for (i = 0; i < 4; i++) {
        for (c = 0; c < 4; c++) {
            snprintf(r_text, sizeof(r_text), "%u", 4 * i + c);
            const struct kv want[] = {
                {"TPU_ACCELERATOR_TYPE", "v6e-16"},
                {"TPU_TOPOLOGY", "4x4"},
                {"TPU_WORKER_HOSTNAMES", "h0,h1,h2,h3"},
                {"TPU_WORKER_ID", digits[i]},
                {"TPU_NAME", "slice-a"},
                {"TPU_SKIP_MDS_QUERY", "true"},
                {"TPU_VISIBLE_CHIPS", digits[c]},
                {"TPU_CHIPS_PER_HOST_BOUNDS", "1,1,1"},
                {"TPU_HOST_BOUNDS", "4,4,1"},
                {"CLOUD_TPU_TASK_ID", r_text},
                {"TPU_PROCESS_PORT", ports[c]},
                {"TPU_PROCESS_ADDRESSES", v6e16_addrs},
                {"TORCH_TPU_SLICEBUILDER_ADDRESSES", v6e16_addrs},
                {"TORCH_TPU_TOPOLOGY", "4,4,1"},
                {"WORLD_SIZE", "16"},
                {"RANK", r_text},
                {"LOCAL_RANK", digits[c]},
                {"MASTER_ADDR", "h0"},
                {"MASTER_PORT", "29500"},
                {"MEGASCALE_NUM_SLICES", ABSENT},
            };

            mt_env_init(&e);
            CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, i, c, &e), 0);
            expect_env(&e, want, N_ELEMS(want), true);
            mt_env_release(&e);
        }
    }
}

/* notes 6.2: one address per process, unique, task ids 0..N-1. */
static void test_device_centric_invariants(void)
{
    struct mt_tpu_slice s = slice_of("v6e-16", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = h4, .n_hosts = 4,
                            .launch = MT_TPU_LAUNCH_DEVICE,
                            .port_base = 8070, .master_port = 29500};
    struct mt_env *envs = NULL;
    char *list, *tok, *save, *seen[16];
    size_t n = 0, i, j, count = 0;
    uint32_t task_seen = 0;

    CU_ASSERT_EQUAL_FATAL(mt_accel_env_tpu_gang_all(&g, &envs, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 16);
    list = strdup(mt_env_get(&envs[0], "TPU_PROCESS_ADDRESSES"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(list);
    for (tok = strtok_r(list, ",", &save); tok && count < 16;
         tok = strtok_r(NULL, ",", &save))
        seen[count++] = tok;
    CU_ASSERT_PTR_NULL(tok);
    CU_ASSERT_EQUAL(count, (size_t)atoi(mt_env_get(&envs[0], "WORLD_SIZE")));
    for (i = 0; i < count; i++)
        for (j = 0; j < i; j++)
            CU_ASSERT_NOT_EQUAL(strcmp(seen[i], seen[j]), 0);
    for (i = 0; i < n; i++) {
        task_seen |= 1u << atoi(mt_env_get(&envs[i], "CLOUD_TPU_TASK_ID"));
        /* Every member gets the same slice-wide values. */
        CU_ASSERT_STRING_EQUAL(mt_env_get(&envs[i], "TPU_PROCESS_ADDRESSES"),
                               mt_env_get(&envs[0], "TPU_PROCESS_ADDRESSES"));
        CU_ASSERT_STRING_EQUAL(mt_env_get(&envs[i], "TORCH_TPU_TOPOLOGY"),
                               "4,4,1");
    }
    CU_ASSERT_EQUAL(task_seen, 0xffff);
    /* Member i of the array is (host i / 4, local i % 4). */
    CU_ASSERT_STRING_EQUAL(mt_env_get(&envs[6], "TPU_WORKER_ID"), "1");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&envs[6], "TPU_VISIBLE_CHIPS"), "2");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&envs[6], "TPU_PROCESS_PORT"), "8072");
    free(list);
    mt_env_array_free(envs, n);
}

/*
 * notes 3.3, verl 2 hosts x 4 chips, process 5 (host 1, chip 1). verl sets
 * CLOUD_TPU_TASK_ID=1 (the host index); Manta follows notes 7.1 and uses
 * the global process index, 5.
 */
static void test_verl_2x4(void)
{
    static const char *const h2[] = {"h0", "h1"};
    static const char addrs[] = "h0:8070,h0:8071,h0:8072,h0:8073,"
                                "h1:8070,h1:8071,h1:8072,h1:8073";
    struct mt_tpu_slice s = slice_of("v6e-8", "2x4", 4);
    struct mt_tpu_gang g = {.slice = &s, .hosts = h2, .n_hosts = 2,
                            .launch = MT_TPU_LAUNCH_DEVICE,
                            .port_base = 8070, .master_port = 29500};
    const struct kv want[] = {
        {"TPU_VISIBLE_CHIPS", "1"},
        {"TPU_PROCESS_PORT", "8071"},
        {"TPU_PROCESS_ADDRESSES", addrs},
        {"TORCH_TPU_SLICEBUILDER_ADDRESSES", addrs},
        {"TPU_WORKER_HOSTNAMES", "h0,h1"},
        {"TORCH_TPU_TOPOLOGY", "2,4,1"},
        {"TPU_HOST_BOUNDS", "2,4,1"},
        {"TPU_CHIPS_PER_HOST_BOUNDS", "1,1,1"},
        {"CLOUD_TPU_TASK_ID", "5"},
        {"TPU_WORKER_ID", "1"},
        {"TPU_ACCELERATOR_TYPE", "v6e-8"},
        {"TPU_TOPOLOGY", "2x4"},
        {"TPU_SKIP_MDS_QUERY", "true"},
        {"WORLD_SIZE", "8"},
        {"RANK", "5"},
        {"LOCAL_RANK", "1"},
        {"MASTER_ADDR", "h0"},
        {"MASTER_PORT", "29500"},
        {"TPU_NAME", ABSENT},
    };
    struct mt_env e;

    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 1, 1, &e), 0);
    expect_env(&e, want, N_ELEMS(want), true);
    mt_env_release(&e);
}

/* notes 2.5 (webhook fork) and 2.4: v6e-8 on one 8-chip host. */
static void test_v6e8_single_host(void)
{
    static const char *const lh[] = {"localhost"};
    struct mt_tpu_slice s = slice_of("v6e-8", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = lh, .n_hosts = 1,
                            .launch = MT_TPU_LAUNCH_DEVICE,
                            .port_base = 8471, .master_port = 29500};
    const struct kv dev[] = {
        {"TORCH_TPU_TOPOLOGY", "2,4,1"},
        {"TORCH_TPU_SLICEBUILDER_ADDRESSES",
         "localhost:8471,localhost:8472,localhost:8473,localhost:8474,"
         "localhost:8475,localhost:8476,localhost:8477,localhost:8478"},
        {"TPU_VISIBLE_CHIPS", "7"},
        {"TPU_PROCESS_PORT", "8478"},
        {"WORLD_SIZE", "8"},
    };
    const struct kv host[] = {
        {"TPU_ACCELERATOR_TYPE", "v6e-8"},
        {"TPU_TOPOLOGY", "2x4"},
        {"TPU_WORKER_HOSTNAMES", "localhost"},
        {"TPU_WORKER_ID", "0"},
        {"TPU_SKIP_MDS_QUERY", "true"},
        {"TPU_CHIPS_PER_HOST_BOUNDS", "2,4,1"},
        {"TPU_HOST_BOUNDS", "1,1,1"},
        {"TPU_VISIBLE_CHIPS", NULL},
    };
    struct mt_env e;

    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_tpu_gang_procs_per_host(&g), 8);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 0, 7, &e), 0);
    expect_env(&e, dev, N_ELEMS(dev), false);
    mt_env_release(&e);

    g.launch = MT_TPU_LAUNCH_HOST;
    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 0, 0, &e), 0);
    expect_env(&e, host, N_ELEMS(host), true);
    mt_env_release(&e);
}

/* notes 2.2, 3.3, 6.2: v7x appends the device axis; 2 devices per chip. */
static void test_v7x(void)
{
    static const char *const w1[] = {"w0"};
    static const char *const w2[] = {"w0", "w1"};
    struct mt_tpu_slice s = slice_of("tpu7x-8", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = w1, .n_hosts = 1,
                            .launch = MT_TPU_LAUNCH_DEVICE,
                            .port_base = 8471, .master_port = 29500};
    const struct kv dev[] = {
        {"TPU_ACCELERATOR_TYPE", "tpu7x-8"},
        {"TPU_TOPOLOGY", "2x2x1"},
        {"TORCH_TPU_TOPOLOGY", "2,2,1,2"},
        {"TPU_HOST_BOUNDS", "2,2,1,2"},
        {"TPU_CHIPS_PER_HOST_BOUNDS", "1,1,1,1"},
        {"TPU_VISIBLE_CHIPS", "2"},
        {"TPU_PROCESS_PORT", "8476"},
        {"CLOUD_TPU_TASK_ID", "5"},
        {"LOCAL_RANK", "5"},
        {"WORLD_SIZE", "8"},
        {"TPU_PROCESS_ADDRESSES",
         "w0:8471,w0:8472,w0:8473,w0:8474,w0:8475,w0:8476,w0:8477,w0:8478"},
    };
    const struct kv host[] = {
        {"TPU_ACCELERATOR_TYPE", "tpu7x-16"},
        {"TPU_TOPOLOGY", "2x2x2"},
        {"TPU_CHIPS_PER_HOST_BOUNDS", "2,2,1"},
        {"TPU_HOST_BOUNDS", "1,1,2"},
        {"TPU_WORKER_HOSTNAMES", "w0,w1"},
        {"TPU_WORKER_ID", "1"},
        {"TPU_VISIBLE_CHIPS", NULL},
    };
    struct mt_env e;

    CU_ASSERT_EQUAL(mt_tpu_gang_procs_per_host(&g), 8);
    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 0, 5, &e), 0);
    expect_env(&e, dev, N_ELEMS(dev), false);
    mt_env_release(&e);

    s = slice_of("v7x-16", NULL, 0);
    g.hosts = w2;
    g.n_hosts = 2;
    g.launch = MT_TPU_LAUNCH_HOST;
    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 1, 0, &e), 0);
    expect_env(&e, host, N_ELEMS(host), false);
    mt_env_release(&e);
}

/*
 * notes 1.9 and 3.4: two v4-16 slices over DCN. The coordinator is worker
 * 0 of slice 0 and MEGASCALE_PORT defaults to 8081.
 */
static void test_multislice_host_centric(void)
{
    static const char *const a[] = {"10.0.0.1", "10.0.0.2"};
    static const char *const b[] = {"10.0.1.1", "10.0.1.2"};
    struct mt_tpu_slice s = slice_of("v4", "2x2x2", 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = a, .n_hosts = 2,
                            .slice_name = "slice-A",
                            .launch = MT_TPU_LAUNCH_HOST, .num_slices = 2};
    const struct kv want_a1[] = {
        {"TPU_ACCELERATOR_TYPE", "v4-16"},
        {"TPU_TOPOLOGY", "2x2x2"},
        {"TPU_WORKER_HOSTNAMES", "10.0.0.1,10.0.0.2"},
        {"TPU_WORKER_ID", "1"},
        {"TPU_NAME", "slice-A"},
        {"TPU_SKIP_MDS_QUERY", "true"},
        {"TPU_CHIPS_PER_HOST_BOUNDS", "2,2,1"},
        {"TPU_HOST_BOUNDS", "1,1,2"},
        {"TPU_VISIBLE_CHIPS", NULL},
        {"MEGASCALE_NUM_SLICES", "2"},
        {"MEGASCALE_SLICE_ID", "0"},
        {"MEGASCALE_COORDINATOR_ADDRESS", "10.0.0.1"},
        {"MEGASCALE_PORT", "8081"},
    };
    const struct kv want_b0[] = {
        {"TPU_WORKER_HOSTNAMES", "10.0.1.1,10.0.1.2"},
        {"TPU_WORKER_ID", "0"},
        {"TPU_NAME", "slice-B"},
        {"MEGASCALE_NUM_SLICES", "2"},
        {"MEGASCALE_SLICE_ID", "1"},
        {"MEGASCALE_COORDINATOR_ADDRESS", "10.0.0.1"},
        {"MEGASCALE_PORT", "9081"},
    };
    struct mt_env e;

    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 1, 0, &e), 0);
    expect_env(&e, want_a1, N_ELEMS(want_a1), true);
    mt_env_release(&e);

    g.hosts = b;
    g.slice_name = "slice-B";
    g.slice_id = 1;
    g.coordinator = "10.0.0.1";
    g.megascale_port = 9081;
    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 0, 0, &e), 0);
    expect_env(&e, want_b0, N_ELEMS(want_b0), false);
    mt_env_release(&e);

    g.coordinator = NULL; /* slice 1 cannot name slice 0's worker 0 */
    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 0, 0, &e), -MT_EINVAL);
    CU_ASSERT_EQUAL(e.n, 0);
    mt_env_release(&e);
}

/* Device-centric multislice: ranks span both slices, task ids do not. */
static void test_multislice_device_centric(void)
{
    static const char *const b[] = {"b0", "b1"};
    struct mt_tpu_slice s = slice_of("v4-16", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = b, .n_hosts = 2,
                            .launch = MT_TPU_LAUNCH_DEVICE,
                            .port_base = 8471, .master_port = 29500,
                            .num_slices = 2, .slice_id = 1,
                            .coordinator = "a0"};
    const struct kv want[] = {
        {"CLOUD_TPU_TASK_ID", "6"},
        {"RANK", "14"},
        {"WORLD_SIZE", "16"},
        {"LOCAL_RANK", "2"},
        {"MASTER_ADDR", "a0"},
        {"TPU_PROCESS_ADDRESSES",
         "b0:8471,b0:8472,b0:8473,b0:8474,b1:8471,b1:8472,b1:8473,b1:8474"},
        {"TPU_HOST_BOUNDS", "2,2,2"},
        {"TORCH_TPU_TOPOLOGY", "2,2,2"},
        {"MEGASCALE_NUM_SLICES", "2"},
        {"MEGASCALE_SLICE_ID", "1"},
        {"MEGASCALE_COORDINATOR_ADDRESS", "a0"},
        {"MEGASCALE_PORT", "8081"},
    };
    struct mt_env e;

    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 1, 2, &e), 0);
    expect_env(&e, want, N_ELEMS(want), false);
    CU_ASSERT_EQUAL(e.n, 22); /* 5 identity + 13 device + 4 MEGASCALE */
    mt_env_release(&e);
}

/* Ports chosen by the scheduler per host; IPv6 literals get brackets. */
static void test_ports_and_ipv6(void)
{
    static const char *const h2[] = {"h0", "h1"};
    static const char *const v6[] = {"fd00::1", "fd00::2"};
    static const uint16_t ports[] = {9000, 9001, 9002, 9003,
                                     9103, 9102, 9101, 9100};
    struct mt_tpu_slice s = slice_of("v5p-16", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = h2, .n_hosts = 2,
                            .launch = MT_TPU_LAUNCH_DEVICE, .ports = ports,
                            .master_port = 12345};
    struct mt_env e;

    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 1, 3, &e), 0);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "TPU_PROCESS_PORT"), "9100");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "TPU_PROCESS_ADDRESSES"),
                           "h0:9000,h0:9001,h0:9002,h0:9003,"
                           "h1:9103,h1:9102,h1:9101,h1:9100");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "MASTER_PORT"), "12345");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "TPU_ACCELERATOR_TYPE"), "v5p-16");
    mt_env_release(&e);

    g.hosts = v6;
    g.ports = NULL;
    g.port_base = 8471;
    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 0, 0, &e), 0);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "TPU_PROCESS_ADDRESSES"),
                           "[fd00::1]:8471,[fd00::1]:8472,[fd00::1]:8473,"
                           "[fd00::1]:8474,[fd00::2]:8471,[fd00::2]:8472,"
                           "[fd00::2]:8473,[fd00::2]:8474");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "TPU_WORKER_HOSTNAMES"),
                           "fd00::1,fd00::2");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "MASTER_ADDR"), "fd00::1");
    mt_env_release(&e);
}

/* gang_all gives exactly what per-member calls give. */
static void test_gang_all(void)
{
    struct mt_tpu_slice s = slice_of("v6e-16", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = h4, .n_hosts = 4,
                            .launch = MT_TPU_LAUNCH_HOST, .num_slices = 1};
    struct mt_env *envs = NULL, e;
    size_t n = 0, i, j;

    CU_ASSERT_EQUAL_FATAL(mt_accel_env_tpu_gang_all(&g, &envs, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    for (i = 0; i < n; i++) {
        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, (uint32_t)i, 0, &e), 0);
        CU_ASSERT_EQUAL_FATAL(e.n, envs[i].n);
        for (j = 0; j < e.n; j++) {
            CU_ASSERT_STRING_EQUAL(e.vars[j].name, envs[i].vars[j].name);
            CU_ASSERT((!e.vars[j].value && !envs[i].vars[j].value) ||
                      (e.vars[j].value && envs[i].vars[j].value &&
                       !strcmp(e.vars[j].value, envs[i].vars[j].value)));
        }
        mt_env_release(&e);
    }
    mt_env_array_free(envs, n);

    g.n_hosts = 3;
    envs = NULL;
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang_all(&g, &envs, &n), -MT_EINVAL);
    CU_ASSERT_PTR_NULL(envs);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang_all(NULL, &envs, &n), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang_all(&g, NULL, &n), -MT_EINVAL);
}

/* Each row breaks one thing of a valid v6e-16 device-centric gang. */
enum gang_break {
    BRK_HOSTS_5,      /* too many hosts for the slice */
    BRK_HOSTS_3,
    BRK_HOST_EMPTY,
    BRK_HOST_COMMA,
    BRK_HOST_NULL,
    BRK_NO_SLICE,
    BRK_LAUNCH_0,
    BRK_PORT_BASE_0,
    BRK_PORT_WRAP,
    BRK_MASTER_0,
    BRK_DUP_PORTS,
    BRK_ZERO_PORT,
    BRK_SLICE_ID,     /* slice_id >= num_slices */
    BRK_SLICE_ID_1,   /* slice_id without multislice */
    BRK_COORD_EMPTY,
    BRK_MEMBER_HOST,  /* member host out of range */
    BRK_MEMBER_LOCAL,
    BRK_HOST_LOCAL_1, /* host-centric has one process per host */
    BRK_COUNT
};

static const int break_rc[BRK_COUNT] = {
    [BRK_HOSTS_5] = -MT_EINVAL,    [BRK_HOSTS_3] = -MT_EINVAL,
    [BRK_HOST_EMPTY] = -MT_EINVAL, [BRK_HOST_COMMA] = -MT_EINVAL,
    [BRK_HOST_NULL] = -MT_EINVAL,  [BRK_NO_SLICE] = -MT_EINVAL,
    [BRK_LAUNCH_0] = -MT_EINVAL,   [BRK_PORT_BASE_0] = -MT_EINVAL,
    [BRK_PORT_WRAP] = -MT_EINVAL,  [BRK_MASTER_0] = -MT_EINVAL,
    [BRK_DUP_PORTS] = -MT_EINVAL,  [BRK_ZERO_PORT] = -MT_EINVAL,
    [BRK_SLICE_ID] = -MT_EINVAL,   [BRK_SLICE_ID_1] = -MT_EINVAL,
    [BRK_COORD_EMPTY] = -MT_EINVAL, [BRK_MEMBER_HOST] = -MT_ERANGE,
    [BRK_MEMBER_LOCAL] = -MT_ERANGE, [BRK_HOST_LOCAL_1] = -MT_ERANGE,
};

static void test_gang_errors(void)
{
    static const char *const h5[] = {"h0", "h1", "h2", "h3", "h4"};
    static const char *const bad_empty[] = {"h0", "", "h2", "h3"};
    static const char *const bad_comma[] = {"h0", "h1,h2", "h2", "h3"};
    static const char *const bad_null[] = {"h0", NULL, "h2", "h3"};
    static const uint16_t dup[16] = {1, 2, 3, 3, 5, 6, 7, 8,
                                     1, 2, 3, 4, 5, 6, 7, 8};
    static const uint16_t zero[16] = {1, 2, 3, 4, 5, 6, 7, 8,
                                      1, 2, 3, 4, 5, 6, 7, 0};
    struct mt_tpu_slice s = slice_of("v6e-16", NULL, 0);
    struct mt_tpu_gang g;
    struct mt_env e;
    uint32_t host, local;
    int b;

    for (b = 0; b < BRK_COUNT; b++) {
        g = (struct mt_tpu_gang){.slice = &s, .hosts = h4, .n_hosts = 4,
                                 .launch = MT_TPU_LAUNCH_DEVICE,
                                 .port_base = 8471, .master_port = 29500};
        host = 1;
        local = 1;
        switch ((enum gang_break)b) {
        case BRK_HOSTS_5: g.hosts = h5; g.n_hosts = 5; break;
        case BRK_HOSTS_3: g.n_hosts = 3; break;
        case BRK_HOST_EMPTY: g.hosts = bad_empty; break;
        case BRK_HOST_COMMA: g.hosts = bad_comma; break;
        case BRK_HOST_NULL: g.hosts = bad_null; break;
        case BRK_NO_SLICE: g.slice = NULL; break;
        case BRK_LAUNCH_0: g.launch = 0; break;
        case BRK_PORT_BASE_0: g.port_base = 0; break;
        case BRK_PORT_WRAP: g.port_base = 65534; break;
        case BRK_MASTER_0: g.master_port = 0; break;
        case BRK_DUP_PORTS: g.ports = dup; break;
        case BRK_ZERO_PORT: g.ports = zero; break;
        case BRK_SLICE_ID: g.num_slices = 2; g.slice_id = 2; break;
        case BRK_SLICE_ID_1: g.slice_id = 1; break;
        case BRK_COORD_EMPTY: g.num_slices = 2; g.coordinator = ""; break;
        case BRK_MEMBER_HOST: host = 4; break;
        case BRK_MEMBER_LOCAL: local = 4; break;
        case BRK_HOST_LOCAL_1: g.launch = MT_TPU_LAUNCH_HOST; break;
        case BRK_COUNT: break;
        }
        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, host, local, &e),
                        break_rc[b]);
        CU_ASSERT_EQUAL(e.n, 0);
        mt_env_release(&e);
    }
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(NULL, 0, 0, &e), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 0, 0, NULL), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tpu_gang_procs_per_host(NULL), 0);
}

CU_TestInfo mt_test_accel_env[] = {
    {"env_basics", test_env_basics},
    {"gpu", test_gpu},
    {"gpu_fractional", test_gpu_fractional},
    {"tpu_host", test_tpu_host},
    {"tpu_host_errors", test_tpu_host_errors},
    {"v6e16_host_centric", test_v6e16_host_centric},
    {"v6e16_device_centric", test_v6e16_device_centric},
    {"device_centric_invariants", test_device_centric_invariants},
    {"verl_2x4", test_verl_2x4},
    {"v6e8_single_host", test_v6e8_single_host},
    {"v7x", test_v7x},
    {"multislice_host_centric", test_multislice_host_centric},
    {"multislice_device_centric", test_multislice_device_centric},
    {"ports_and_ipv6", test_ports_and_ipv6},
    {"gang_all", test_gang_all},
    {"gang_errors", test_gang_errors},
    CU_TEST_INFO_NULL,
};
