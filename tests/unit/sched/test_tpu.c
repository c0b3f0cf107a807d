/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_tpu.c -- TPU topology math: every topology row of the accelerator
 * notes, generation and pod-type normalisation, validation errors, PCI ids,
 * per-host chip bounds and aligned partial-host chip sets.
 *
 * Table-driven: each table row is one golden from notes/accelerators.md
 * (section noted in the table's comment) or one rejected input.
 */
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "sched/tpu.h"
#include "tests/unit/unit.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------------
 * Slices: pod type <-> topology <-> hosts, chips per host, bounds
 * --------------------------------------------------------------------- */

struct slice_row {
    const char *pod_type; /* input */
    const char *topology; /* input; NULL: default shape */
    uint32_t cph_in;      /* input chips_per_host; 0: default */
    enum mt_tpu_gen gen;
    uint32_t chips, cores, cph, hosts;
    uint32_t cphb[3], hb[3];
    const char *pod_out;  /* normalised pod type */
    const char *accel;    /* TPU_ACCELERATOR_TYPE spelling */
    const char *topo_out;
};

static const struct slice_row slice_rows[] = {
    /* notes 2.1 table */
    {"v4-8", NULL, 0, MT_TPU_V4, 4, 8, 4, 1, {2, 2, 1}, {1, 1, 1},
     "v4-8", "v4-8", "2x2x1"},
    {"v4-16", NULL, 0, MT_TPU_V4, 8, 16, 4, 2, {2, 2, 1}, {1, 1, 2},
     "v4-16", "v4-16", "2x2x2"},
    {"v4-32", NULL, 0, MT_TPU_V4, 16, 32, 4, 4, {2, 2, 1}, {1, 1, 4},
     "v4-32", "v4-32", "2x2x4"},
    {"v5litepod-8", NULL, 0, MT_TPU_V5E, 8, 8, 8, 1, {2, 4, 1}, {1, 1, 1},
     "v5litepod-8", "v5litepod-8", "2x4"},
    {"v5litepod-16", NULL, 0, MT_TPU_V5E, 16, 16, 4, 4, {2, 2, 1},
     {2, 2, 1}, "v5litepod-16", "v5litepod-16", "4x4"},
    {"v5p-8", NULL, 0, MT_TPU_V5P, 4, 8, 4, 1, {2, 2, 1}, {1, 1, 1},
     "v5p-8", "v5p-8", "2x2x1"},
    {"v5p-16", NULL, 0, MT_TPU_V5P, 8, 16, 4, 2, {2, 2, 1}, {1, 1, 2},
     "v5p-16", "v5p-16", "2x2x2"},
    {"v6e-8", NULL, 0, MT_TPU_V6E, 8, 8, 8, 1, {2, 4, 1}, {1, 1, 1},
     "v6e-8", "v6e-8", "2x4"},
    {"v6e-8", "2x4", 4, MT_TPU_V6E, 8, 8, 4, 2, {2, 2, 1}, {1, 2, 1},
     "v6e-8", "v6e-8", "2x4"},
    {"v6e-16", NULL, 0, MT_TPU_V6E, 16, 16, 4, 4, {2, 2, 1}, {2, 2, 1},
     "v6e-16", "v6e-16", "4x4"},
    {"v6e-256", NULL, 0, MT_TPU_V6E, 256, 256, 4, 64, {2, 2, 1}, {8, 8, 1},
     "v6e-256", "v6e-256", "16x16"},
    {"tpu7x-8", NULL, 0, MT_TPU_V7X, 4, 8, 4, 1, {2, 2, 1}, {1, 1, 1},
     "v7x-8", "tpu7x-8", "2x2x1"},
    {"tpu7x-16", NULL, 0, MT_TPU_V7X, 8, 16, 4, 2, {2, 2, 1}, {1, 1, 2},
     "v7x-16", "tpu7x-16", "2x2x2"},
    /* notes 6.2 pod_type(topology, gen) */
    {"v4", "2x2x2", 0, MT_TPU_V4, 8, 16, 4, 2, {2, 2, 1}, {1, 1, 2},
     "v4-16", "v4-16", "2x2x2"},
    {"v6e", "4x4", 0, MT_TPU_V6E, 16, 16, 4, 4, {2, 2, 1}, {2, 2, 1},
     "v6e-16", "v6e-16", "4x4"},
    {"v5litepod", "2x4", 0, MT_TPU_V5E, 8, 8, 8, 1, {2, 4, 1}, {1, 1, 1},
     "v5litepod-8", "v5litepod-8", "2x4"},
    {"v5p", "2x2x1", 0, MT_TPU_V5P, 4, 8, 4, 1, {2, 2, 1}, {1, 1, 1},
     "v5p-8", "v5p-8", "2x2x1"},
    {"v7x", "2x2x1", 0, MT_TPU_V7X, 4, 8, 4, 1, {2, 2, 1}, {1, 1, 1},
     "v7x-8", "tpu7x-8", "2x2x1"},
    /* Ray accelerator-type strings and a pod type with its topology */
    {"TPU-V6E", "8x16", 0, MT_TPU_V6E, 128, 128, 4, 32, {2, 2, 1},
     {4, 8, 1}, "v6e-128", "v6e-128", "8x16"},
    {"v4-16", "2x2x2", 0, MT_TPU_V4, 8, 16, 4, 2, {2, 2, 1}, {1, 1, 2},
     "v4-16", "v4-16", "2x2x2"},
    /* single-host v5e/v6e shapes use the chip count */
    {"v6e-1", NULL, 0, MT_TPU_V6E, 1, 1, 1, 1, {1, 1, 1}, {1, 1, 1},
     "v6e-1", "v6e-1", "1x1"},
    {"v5e-4", NULL, 0, MT_TPU_V5E, 4, 4, 4, 1, {2, 2, 1}, {1, 1, 1},
     "v5litepod-4", "v5litepod-4", "2x2"},
    {"v6e-4", NULL, 0, MT_TPU_V6E, 4, 4, 4, 1, {2, 2, 1}, {1, 1, 1},
     "v6e-4", "v6e-4", "2x2"},
    {"v6e-1", "1x1", 1, MT_TPU_V6E, 1, 1, 1, 1, {1, 1, 1}, {1, 1, 1},
     "v6e-1", "v6e-1", "1x1"},
    {"v6e-8", "2x4", 8, MT_TPU_V6E, 8, 8, 8, 1, {2, 4, 1}, {1, 1, 1},
     "v6e-8", "v6e-8", "2x4"},
    /* notes 2.4: TPU_HOST_BOUNDS = topology / per-host chip bounds */
    {"v6e-32", NULL, 0, MT_TPU_V6E, 32, 32, 4, 8, {2, 2, 1}, {2, 4, 1},
     "v6e-32", "v6e-32", "4x8"},
    {"v5litepod-16", "2x8", 0, MT_TPU_V5E, 16, 16, 4, 4, {2, 2, 1},
     {1, 4, 1}, "v5litepod-16", "v5litepod-16", "2x8"},
    /* notes 1.8 worker grids (Ray _VALID_TOPOLOGY_WORKER_DIMS_3D) */
    {"v4-64", NULL, 0, MT_TPU_V4, 32, 64, 4, 8, {2, 2, 1}, {1, 2, 4},
     "v4-64", "v4-64", "2x4x4"},
    {"v4-128", NULL, 0, MT_TPU_V4, 64, 128, 4, 16, {2, 2, 1}, {2, 2, 4},
     "v4-128", "v4-128", "4x4x4"},
    {"v4-256", NULL, 0, MT_TPU_V4, 128, 256, 4, 32, {2, 2, 1}, {2, 2, 8},
     "v4-256", "v4-256", "4x4x8"},
    {"v4-512", NULL, 0, MT_TPU_V4, 256, 512, 4, 64, {2, 2, 1}, {2, 4, 8},
     "v4-512", "v4-512", "4x8x8"},
    {"v4-1024", NULL, 0, MT_TPU_V4, 512, 1024, 4, 128, {2, 2, 1},
     {4, 4, 8}, "v4-1024", "v4-1024", "8x8x8"},
    {"v4-1536", NULL, 0, MT_TPU_V4, 768, 1536, 4, 192, {2, 2, 1},
     {4, 4, 12}, "v4-1536", "v4-1536", "8x8x12"},
    {"v4-2048", NULL, 0, MT_TPU_V4, 1024, 2048, 4, 256, {2, 2, 1},
     {4, 4, 16}, "v4-2048", "v4-2048", "8x8x16"},
    {"v4", "12x12x16", 0, MT_TPU_V4, 2304, 4608, 4, 576, {2, 2, 1},
     {6, 6, 16}, "v4-4608", "v4-4608", "12x12x16"},
    {"v5p", "16x16x16", 0, MT_TPU_V5P, 4096, 8192, 4, 1024, {2, 2, 1},
     {8, 8, 16}, "v5p-8192", "v5p-8192", "16x16x16"},
    {"v5p-12288", NULL, 0, MT_TPU_V5P, 6144, 12288, 4, 1536, {2, 2, 1},
     {8, 8, 24}, "v5p-12288", "v5p-12288", "16x16x24"},
    {"v5p-3072", NULL, 0, MT_TPU_V5P, 1536, 3072, 4, 384, {2, 2, 1},
     {4, 6, 16}, "v5p-3072", "v5p-3072", "8x12x16"},
    {"v7x-4096", NULL, 0, MT_TPU_V7X, 2048, 4096, 4, 512, {2, 2, 1},
     {4, 8, 16}, "v7x-4096", "tpu7x-4096", "8x16x16"},
    {"v5p", "4x8x4", 0, MT_TPU_V5P, 128, 256, 4, 32, {2, 2, 1}, {2, 4, 4},
     "v5p-256", "v5p-256", "4x8x4"},
};

static void check_slice_row(const struct slice_row *r)
{
    struct mt_tpu_slice s;
    char buf[MT_TPU_NAME_MAX];
    int rc, i;

    rc = mt_tpu_slice_parse(r->pod_type, r->topology, r->cph_in, &s);
    if (rc != 0 || s.hosts != r->hosts ||
        memcmp(s.host_bounds, r->hb, sizeof(r->hb)) != 0)
        fprintf(stderr, "\nrow %s %s: rc %d hosts %u\n", r->pod_type,
                r->topology ? r->topology : "NULL", rc, s.hosts);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(s.gen, r->gen);
    CU_ASSERT_EQUAL(s.chips, r->chips);
    CU_ASSERT_EQUAL(s.cores, r->cores);
    CU_ASSERT_EQUAL(s.chips_per_host, r->cph);
    CU_ASSERT_EQUAL(s.hosts, r->hosts);
    for (i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(s.chips_per_host_bounds[i], r->cphb[i]);
        CU_ASSERT_EQUAL(s.host_bounds[i], r->hb[i]);
    }
    CU_ASSERT(mt_tpu_slice_pod_type(&s, buf, sizeof(buf)) > 0);
    CU_ASSERT_STRING_EQUAL(buf, r->pod_out);
    CU_ASSERT(mt_tpu_slice_accelerator_type(&s, buf, sizeof(buf)) > 0);
    CU_ASSERT_STRING_EQUAL(buf, r->accel);
    CU_ASSERT(mt_tpu_slice_topology(&s, buf, sizeof(buf)) > 0);
    CU_ASSERT_STRING_EQUAL(buf, r->topo_out);
}

static void test_slice_rows(void)
{
    size_t i;

    for (i = 0; i < N_ELEMS(slice_rows); i++)
        check_slice_row(&slice_rows[i]);
}

/* Round trip: the default shape of a pod type gives back the pod type. */
static void test_slice_round_trip(void)
{
    struct mt_tpu_slice s, t;
    char pod[MT_TPU_NAME_MAX], topo[MT_TPU_NAME_MAX];
    size_t i;

    for (i = 0; i < N_ELEMS(slice_rows); i++) {
        CU_ASSERT_EQUAL_FATAL(mt_tpu_slice_parse(slice_rows[i].pod_type,
                                                 slice_rows[i].topology,
                                                 slice_rows[i].cph_in, &s),
                              0);
        CU_ASSERT(mt_tpu_slice_pod_type(&s, pod, sizeof(pod)) > 0);
        CU_ASSERT(mt_tpu_slice_topology(&s, topo, sizeof(topo)) > 0);
        CU_ASSERT_EQUAL(mt_tpu_slice_parse(pod, topo, s.chips_per_host, &t),
                        0);
        CU_ASSERT_EQUAL(memcmp(&s, &t, sizeof(s)), 0);
    }
}

struct bad_slice_row {
    const char *pod_type;
    const char *topology;
    uint32_t cph;
    int rc;
};

static const struct bad_slice_row bad_slice_rows[] = {
    {"v6e-16", "2x4", 0, -MT_EINVAL},     /* pod type and topology disagree */
    {"v4-16", "2x2x1", 0, -MT_EINVAL},    /* 4 chips is v4-8 */
    {"v4-12", NULL, 0, -MT_EINVAL},       /* 6 chips: no v4 shape */
    {"v4-4096", NULL, 0, -MT_EINVAL},     /* 2048 chips: beyond 12x12x16 */
    {"v6e-512", NULL, 0, -MT_EINVAL},     /* beyond the 256-chip pod */
    {"v6e-2", NULL, 0, -MT_EINVAL},       /* no 2-chip v6e slice */
    {"v7x-2", NULL, 0, -MT_EINVAL},       /* no 1-chip v7x slice */
    {"v6e", "4x2", 0, -MT_EINVAL},        /* not an offered orientation */
    {"v6e", "2x2x1", 0, -MT_EINVAL},      /* 3D on a 2D generation */
    {"v4", "4x4", 0, -MT_EINVAL},         /* 2D on a 3D generation */
    {"v4", "3x3x3", 0, -MT_EINVAL},       /* not a multiple of 4 */
    {"v4", "16x16x16", 0, -MT_EINVAL},    /* beyond 12x12x16 */
    {"v5p", "20x16x24", 0, -MT_EINVAL},   /* beyond 16x16x24 */
    {"v7x", "16x16x16", 0, -MT_EINVAL},   /* not in the v7x list */
    {"v7x", "4x4x12", 0, -MT_EINVAL},     /* v7x has no grid rule */
    {"v6e", "4x4", 8, -MT_EINVAL},        /* 8-chip hosts are single-host */
    {"v6e", "1x1", 4, -MT_EINVAL},        /* 4-chip host for 1 chip */
    {"v6e", "2x4", 1, -MT_EINVAL},        /* 1-chip hosts only for 1x1 */
    {"v6e", "4x4", 2, -MT_EINVAL},        /* no 2-chip hosts */
    {"v4", "2x2x2", 8, -MT_EINVAL},       /* v4 hosts have 4 chips */
    {"v4", "2x2x2", 1, -MT_EINVAL},
    {"v2-8", NULL, 0, -MT_ENOTSUP},       /* v2/v3: no topology math */
    {"v3", "4x4", 0, -MT_ENOTSUP},
    {"v6e", NULL, 0, -MT_EINVAL},         /* a generation needs a topology */
    {"v6e", "", 0, -MT_EINVAL},
    {"foo-8", NULL, 0, -MT_EINVAL},
    {"v6e-16", "4x4x", 0, -MT_EINVAL},
    {"v6e-16", "4x65", 0, -MT_ERANGE},
    {"v9x-8", "2x2x1", 0, -MT_EINVAL},
};

static void test_slice_errors(void)
{
    struct mt_tpu_slice s;
    size_t i;
    int rc;

    for (i = 0; i < N_ELEMS(bad_slice_rows); i++) {
        memset(&s, 0xa5, sizeof(s));
        rc = mt_tpu_slice_parse(bad_slice_rows[i].pod_type,
                                bad_slice_rows[i].topology,
                                bad_slice_rows[i].cph, &s);
        if (rc != bad_slice_rows[i].rc)
            fprintf(stderr, "\nrow %zu (%s, %s): rc %d (%s)\n", i,
                    bad_slice_rows[i].pod_type,
                    bad_slice_rows[i].topology ? bad_slice_rows[i].topology
                                               : "NULL",
                    rc, mt_err_name(rc));
        CU_ASSERT_EQUAL(rc, bad_slice_rows[i].rc);
    }
    CU_ASSERT_EQUAL(mt_tpu_slice_parse(NULL, "4x4", 0, &s), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tpu_slice_parse("v6e-16", NULL, 0, NULL), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tpu_slice_from_topo(MT_TPU_GEN_NONE, &s.topo, 0, &s),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tpu_slice_from_topo(MT_TPU_GEN_COUNT, &s.topo, 0, &s),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tpu_slice_pod_type(NULL, (char[8]){0}, 8), -MT_EINVAL);
}

static void test_slice_small_buffers(void)
{
    struct mt_tpu_slice s;
    char buf[6];

    CU_ASSERT_EQUAL_FATAL(mt_tpu_slice_parse("v6e-256", NULL, 0, &s), 0);
    CU_ASSERT_EQUAL(mt_tpu_slice_pod_type(&s, buf, 5), -MT_ENOSPC);
    CU_ASSERT_EQUAL(mt_tpu_slice_topology(&s, buf, 5), -MT_ENOSPC);
    CU_ASSERT_EQUAL(mt_tpu_slice_topology(&s, buf, sizeof(buf)), 5);
    CU_ASSERT_STRING_EQUAL(buf, "16x16");
}

/* ---------------------------------------------------------------------
 * Topology validity (notes 1.8, Ray VALID_TPU_TOPOLOGY)
 * --------------------------------------------------------------------- */

static const char *const valid_2d[] = {
    "1x1", "2x2", "2x4", "2x8", "4x4", "4x8", "8x8", "8x16", "16x16",
};
static const char *const valid_v7x[] = {
    "2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4",
    "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16",
};

static bool valid(enum mt_tpu_gen gen, const char *text)
{
    struct mt_tpu_topo t;

    return mt_tpu_topo_parse(text, &t) == 0 && mt_tpu_topo_valid(gen, &t);
}

/* Brute force over every 3D shape against Ray's rule for v4/v5p. */
static void check_grid(enum mt_tpu_gen gen, uint32_t mx, uint32_t my,
                       uint32_t mz)
{
    static const char *const small[] = {"2x2x1", "2x2x2", "2x2x4", "2x4x4"};
    char text[32];
    uint32_t x, y, z, count = 0;
    bool want;
    size_t i;

    for (x = 1; x <= 24; x++)
        for (y = 1; y <= 24; y++)
            for (z = 1; z <= 28; z++) {
                snprintf(text, sizeof(text), "%ux%ux%u", x, y, z);
                want = x % 4 == 0 && y % 4 == 0 && z % 4 == 0 && x <= mx &&
                       y <= my && z <= mz;
                for (i = 0; i < N_ELEMS(small); i++)
                    want = want || strcmp(text, small[i]) == 0;
                CU_ASSERT_EQUAL(valid(gen, text), want);
                count += want;
            }
    CU_ASSERT_EQUAL(count, 4 + (mx / 4) * (my / 4) * (mz / 4));
}

static void test_topology_valid(void)
{
    size_t i;

    for (i = 0; i < N_ELEMS(valid_2d); i++) {
        CU_ASSERT_TRUE(valid(MT_TPU_V5E, valid_2d[i]));
        CU_ASSERT_TRUE(valid(MT_TPU_V6E, valid_2d[i]));
        CU_ASSERT_FALSE(valid(MT_TPU_V4, valid_2d[i]));
    }
    for (i = 0; i < N_ELEMS(valid_v7x); i++) {
        CU_ASSERT_TRUE(valid(MT_TPU_V7X, valid_v7x[i]));
        CU_ASSERT_FALSE(valid(MT_TPU_V6E, valid_v7x[i]));
    }
    CU_ASSERT_FALSE(valid(MT_TPU_V7X, "16x16x16"));
    CU_ASSERT_FALSE(valid(MT_TPU_V6E, "32x32"));
    CU_ASSERT_FALSE(valid(MT_TPU_V6E, "1x2"));
    CU_ASSERT_FALSE(valid(MT_TPU_V3, "4x4"));
    CU_ASSERT_FALSE(valid(MT_TPU_GEN_NONE, "4x4"));
    CU_ASSERT_FALSE(mt_tpu_topo_valid(MT_TPU_V6E, NULL));
    check_grid(MT_TPU_V4, 12, 12, 16);
    check_grid(MT_TPU_V5P, 16, 16, 24);
}

struct topo_parse_row {
    const char *text;
    int rc;
    uint32_t x, y, z, ndims;
};

static const struct topo_parse_row topo_parse_rows[] = {
    {"2x2x2", 0, 2, 2, 2, 3},
    {"4x4", 0, 4, 4, 1, 2},
    {"2X4", 0, 2, 4, 1, 2},
    {"16x16x24", 0, 16, 16, 24, 3},
    {"", -MT_EINVAL, 0, 0, 0, 0},
    {"2", -MT_EINVAL, 0, 0, 0, 0},
    {"2x", -MT_EINVAL, 0, 0, 0, 0},
    {"x2", -MT_EINVAL, 0, 0, 0, 0},
    {"0x2", -MT_EINVAL, 0, 0, 0, 0},
    {"2x2x2x2", -MT_EINVAL, 0, 0, 0, 0},
    {"2*2", -MT_EINVAL, 0, 0, 0, 0},
    {" 2x2", -MT_EINVAL, 0, 0, 0, 0},
    {"2x2 ", -MT_EINVAL, 0, 0, 0, 0},
    {"-2x2", -MT_EINVAL, 0, 0, 0, 0},
    {"2x65", -MT_ERANGE, 0, 0, 0, 0},
    {"2x9999999999", -MT_ERANGE, 0, 0, 0, 0},
};

static void test_topology_parse(void)
{
    struct mt_tpu_topo t;
    char buf[32];
    size_t i;

    for (i = 0; i < N_ELEMS(topo_parse_rows); i++) {
        const struct topo_parse_row *r = &topo_parse_rows[i];

        CU_ASSERT_EQUAL(mt_tpu_topo_parse(r->text, &t), r->rc);
        if (r->rc != 0)
            continue;
        CU_ASSERT_EQUAL(t.dims[0], r->x);
        CU_ASSERT_EQUAL(t.dims[1], r->y);
        CU_ASSERT_EQUAL(t.dims[2], r->z);
        CU_ASSERT_EQUAL(t.ndims, r->ndims);
        CU_ASSERT(mt_tpu_topo_format(&t, buf, sizeof(buf)) > 0);
        CU_ASSERT_EQUAL(strcasecmp(buf, r->text), 0);
    }
    CU_ASSERT_EQUAL(mt_tpu_topo_parse(NULL, &t), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tpu_topo_parse("2x2", NULL), -MT_EINVAL);
}

/* ---------------------------------------------------------------------
 * Names: generations and pod types
 * --------------------------------------------------------------------- */

struct gen_row {
    const char *text;
    enum mt_tpu_gen gen; /* MT_TPU_GEN_NONE: must be rejected */
};

static const struct gen_row gen_rows[] = {
    {"v4", MT_TPU_V4},
    {"V4", MT_TPU_V4},
    {"TPU-V4", MT_TPU_V4},
    {"tpu-v4-podslice", MT_TPU_V4},
    {"v5e", MT_TPU_V5E},
    {"V5E", MT_TPU_V5E},
    {"v5lite", MT_TPU_V5E},
    {"v5litepod", MT_TPU_V5E},
    {"TPU-V5LITEPOD", MT_TPU_V5E},
    {"tpu-v5-lite-podslice", MT_TPU_V5E},
    {"tpu-v5-lite-device", MT_TPU_V5E},
    {"v5p", MT_TPU_V5P},
    {"tpu-v5p-slice", MT_TPU_V5P},
    {"v6e", MT_TPU_V6E},
    {"TPU-V6E", MT_TPU_V6E},
    {"tpu-v6e-slice", MT_TPU_V6E},
    {"v7x", MT_TPU_V7X},
    {"tpu7x", MT_TPU_V7X},
    {"TPU-V7X", MT_TPU_V7X},
    {"tpuv7x", MT_TPU_V7X},
    {"v2", MT_TPU_V2},
    {"v3", MT_TPU_V3},
    {"", MT_TPU_GEN_NONE},
    {"v", MT_TPU_GEN_NONE},
    {"tpu", MT_TPU_GEN_NONE},
    {"v5", MT_TPU_GEN_NONE},
    {"v8", MT_TPU_GEN_NONE},
    {"gpu", MT_TPU_GEN_NONE},
    {"v6e-8", MT_TPU_GEN_NONE},
    {"v6e ", MT_TPU_GEN_NONE},
    {"v6eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
     MT_TPU_GEN_NONE},
};

static void test_gen_parse(void)
{
    enum mt_tpu_gen g;
    size_t i;
    int rc;

    for (i = 0; i < N_ELEMS(gen_rows); i++) {
        g = MT_TPU_GEN_NONE;
        rc = mt_tpu_gen_parse(gen_rows[i].text, &g);
        if (gen_rows[i].gen == MT_TPU_GEN_NONE) {
            CU_ASSERT_EQUAL(rc, -MT_EINVAL);
        } else {
            CU_ASSERT_EQUAL(rc, 0);
            CU_ASSERT_EQUAL(g, gen_rows[i].gen);
        }
    }
    CU_ASSERT_EQUAL(mt_tpu_gen_parse(NULL, &g), -MT_EINVAL);
}

struct gen_fact_row {
    enum mt_tpu_gen gen;
    const char *name, *cloud, *label;
    uint32_t cores, devs;
};

static const struct gen_fact_row gen_facts[] = {
    {MT_TPU_V4, "v4", "v4", "TPU-V4", 2, 1},
    {MT_TPU_V5E, "v5litepod", "v5litepod", "TPU-V5LITEPOD", 1, 1},
    {MT_TPU_V5P, "v5p", "v5p", "TPU-V5P", 2, 1},
    {MT_TPU_V6E, "v6e", "v6e", "TPU-V6E", 1, 1},
    {MT_TPU_V7X, "v7x", "tpu7x", "TPU-V7X", 2, 2},
};

static void test_gen_facts(void)
{
    size_t i;

    for (i = 0; i < N_ELEMS(gen_facts); i++) {
        const struct gen_fact_row *r = &gen_facts[i];

        CU_ASSERT_STRING_EQUAL(mt_tpu_gen_name(r->gen), r->name);
        CU_ASSERT_STRING_EQUAL(mt_tpu_gen_cloud_name(r->gen), r->cloud);
        CU_ASSERT_STRING_EQUAL(mt_tpu_gen_type_label(r->gen), r->label);
        CU_ASSERT_EQUAL(mt_tpu_gen_cores_per_chip(r->gen), r->cores);
        CU_ASSERT_EQUAL(mt_tpu_gen_devices_per_chip(r->gen), r->devs);
    }
    CU_ASSERT_PTR_NULL(mt_tpu_gen_name(MT_TPU_GEN_NONE));
    CU_ASSERT_PTR_NULL(mt_tpu_gen_cloud_name(MT_TPU_GEN_COUNT));
    CU_ASSERT_PTR_NULL(mt_tpu_gen_type_label((enum mt_tpu_gen)-1));
    CU_ASSERT_EQUAL(mt_tpu_gen_cores_per_chip(MT_TPU_GEN_NONE), 0);
    CU_ASSERT_EQUAL(mt_tpu_gen_devices_per_chip(MT_TPU_GEN_COUNT), 0);
}

struct pod_row {
    const char *text;
    int rc;
    const char *norm; /* when rc == 0 */
    enum mt_tpu_gen gen;
    uint32_t cores;
};

static const struct pod_row pod_rows[] = {
    {"v4-16", 0, "v4-16", MT_TPU_V4, 16},
    {"V4-16", 0, "v4-16", MT_TPU_V4, 16},
    {"tpu7x-8", 0, "v7x-8", MT_TPU_V7X, 8},
    {"TPU7X-16", 0, "v7x-16", MT_TPU_V7X, 16},
    {"tpu-v7x-8", 0, "v7x-8", MT_TPU_V7X, 8},
    {"v5e-8", 0, "v5litepod-8", MT_TPU_V5E, 8},
    {"V5LITEPOD-16", 0, "v5litepod-16", MT_TPU_V5E, 16},
    {"TPU-V6E-16", 0, "v6e-16", MT_TPU_V6E, 16},
    {"v6e-1", 0, "v6e-1", MT_TPU_V6E, 1},
    {"v5p-8", 0, "v5p-8", MT_TPU_V5P, 8},
    {"v2-8", 0, "v2-8", MT_TPU_V2, 8},
    /* malformed (notes 6.1: "v4", "foo-8") */
    {"v4", -MT_EINVAL, NULL, 0, 0},
    {"foo-8", -MT_EINVAL, NULL, 0, 0},
    {"v4-", -MT_EINVAL, NULL, 0, 0},
    {"v4-0", -MT_EINVAL, NULL, 0, 0},
    {"v4-7", -MT_EINVAL, NULL, 0, 0},   /* odd cores on a 2-core chip */
    {"v4-16x", -MT_EINVAL, NULL, 0, 0},
    {"v4-+16", -MT_EINVAL, NULL, 0, 0},
    {"-8", -MT_EINVAL, NULL, 0, 0},
    {"v-8", -MT_EINVAL, NULL, 0, 0},
    {"v9-8", -MT_EINVAL, NULL, 0, 0},
    {"v6e_8", -MT_EINVAL, NULL, 0, 0},
    {"", -MT_EINVAL, NULL, 0, 0},
    {"v4-9999999999", -MT_ERANGE, NULL, 0, 0},
};

static void test_pod_type(void)
{
    char buf[MT_TPU_NAME_MAX];
    enum mt_tpu_gen g;
    uint32_t cores;
    size_t i;

    for (i = 0; i < N_ELEMS(pod_rows); i++) {
        const struct pod_row *r = &pod_rows[i];

        CU_ASSERT_EQUAL(mt_tpu_pod_type_parse(r->text, &g, &cores), r->rc);
        CU_ASSERT_EQUAL(mt_tpu_pod_type_normalize(r->text, buf, sizeof(buf)),
                        r->rc < 0 ? r->rc : (int)strlen(r->norm));
        if (r->rc != 0)
            continue;
        CU_ASSERT_EQUAL(g, r->gen);
        CU_ASSERT_EQUAL(cores, r->cores);
        CU_ASSERT_STRING_EQUAL(buf, r->norm);
    }
    CU_ASSERT_EQUAL(mt_tpu_pod_type_parse(NULL, &g, &cores), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tpu_pod_type_parse("v4-16", NULL, NULL), 0);
    CU_ASSERT_EQUAL(mt_tpu_pod_type_normalize("v5e-256", buf, 8),
                    -MT_ENOSPC);
    CU_ASSERT_EQUAL(mt_tpu_pod_type_normalize("v4-8", NULL, 8), -MT_EINVAL);
}

/* ---------------------------------------------------------------------
 * PCI ids (notes 1.2)
 * --------------------------------------------------------------------- */

static void test_pci(void)
{
    static const struct {
        uint32_t vendor, device;
        int rc;
        enum mt_tpu_gen gen;
    } rows[] = {
        {0x1ae0, 0x0027, 0, MT_TPU_V3}, {0x1ae0, 0x005e, 0, MT_TPU_V4},
        {0x1ae0, 0x0062, 0, MT_TPU_V5P}, {0x1ae0, 0x0063, 0, MT_TPU_V5E},
        {0x1ae0, 0x006f, 0, MT_TPU_V6E}, {0x1ae0, 0x0076, 0, MT_TPU_V7X},
        {0x1ae0, 0x0000, -MT_ENOENT, 0}, {0x1ae0, 0x1234, -MT_ENOENT, 0},
        {0x10de, 0x006f, -MT_ENOENT, 0}, {0x15b3, 0x0063, -MT_ENOENT, 0},
    };
    enum mt_tpu_gen g;
    size_t i;

    for (i = 0; i < N_ELEMS(rows); i++) {
        g = MT_TPU_GEN_NONE;
        CU_ASSERT_EQUAL(mt_tpu_gen_from_pci(rows[i].vendor, rows[i].device,
                                            &g),
                        rows[i].rc);
        if (rows[i].rc == 0)
            CU_ASSERT_EQUAL(g, rows[i].gen);
    }
}

/* ---------------------------------------------------------------------
 * Hosts: bounds, aligned chip sets, picking a block
 * --------------------------------------------------------------------- */

static void test_chip_bounds(void)
{
    static const struct {
        uint32_t k;
        int rc;
        const char *text;
    } rows[] = {
        /* notes 1.5 and 2.4 */
        {1, 0, "1,1,1"}, {2, 0, "1,2,1"}, {4, 0, "2,2,1"}, {8, 0, "2,4,1"},
        {0, -MT_EINVAL, NULL}, {3, -MT_EINVAL, NULL}, {5, -MT_EINVAL, NULL},
        {6, -MT_EINVAL, NULL}, {7, -MT_EINVAL, NULL}, {16, -MT_EINVAL, NULL},
    };
    uint32_t b[3];
    char buf[16];
    size_t i;

    for (i = 0; i < N_ELEMS(rows); i++) {
        CU_ASSERT_EQUAL(mt_tpu_chip_count_valid(rows[i].k), rows[i].rc == 0);
        CU_ASSERT_EQUAL(mt_tpu_chip_bounds(rows[i].k, b), rows[i].rc);
        if (rows[i].rc != 0)
            continue;
        CU_ASSERT_EQUAL(mt_tpu_bounds_format(b, 3, buf, sizeof(buf)), 5);
        CU_ASSERT_STRING_EQUAL(buf, rows[i].text);
    }
    CU_ASSERT_EQUAL(mt_tpu_chip_bounds(1, NULL), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tpu_bounds_format((uint32_t[4]){2, 2, 1, 2}, 4, buf,
                                         sizeof(buf)),
                    7);
    CU_ASSERT_STRING_EQUAL(buf, "2,2,1,2");
    CU_ASSERT_EQUAL(mt_tpu_bounds_format(b, 0, buf, sizeof(buf)), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tpu_bounds_format(b, 5, buf, sizeof(buf)), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tpu_bounds_format(b, 3, buf, 5), -MT_ENOSPC);
}

struct chips_row {
    uint32_t host_chips;
    uint32_t ids[9];
    size_t n;
    int rc;
};

static const struct chips_row chips_rows[] = {
    {4, {0}, 1, 0},
    {4, {3}, 1, 0},
    {4, {0, 1}, 2, 0},
    {4, {3, 2}, 2, 0},
    {4, {0, 1, 2, 3}, 4, 0},
    {4, {2, 0, 3, 1}, 4, 0},
    {8, {4, 5, 6, 7}, 4, 0},
    {8, {0, 1, 2, 3, 4, 5, 6, 7}, 8, 0},
    {8, {6, 7}, 2, 0},
    {1, {0}, 1, 0},
    {4, {1, 2}, 2, -MT_EINVAL},        /* straddles the NUMA halves */
    {8, {2, 3, 4, 5}, 4, -MT_EINVAL},  /* misaligned 4-block */
    {8, {0, 2}, 2, -MT_EINVAL},        /* not contiguous */
    {4, {0, 0}, 2, -MT_EINVAL},        /* duplicate */
    {4, {0, 1, 2}, 3, -MT_EINVAL},     /* 3 chips */
    {8, {0, 1, 2, 3, 4, 5}, 6, -MT_EINVAL},
    {4, {0}, 0, -MT_EINVAL},           /* nothing */
    {4, {0, 1, 2, 3, 4, 5, 6, 7}, 8, -MT_ETOOBIG},
    {4, {4}, 1, -MT_ERANGE},
    {8, {8, 9}, 2, -MT_ERANGE},
    {0, {0}, 1, -MT_EINVAL},           /* no chips on the host */
    {16, {0}, 1, -MT_EINVAL},          /* no such host */
};

static void test_host_chips_check(void)
{
    size_t i;

    for (i = 0; i < N_ELEMS(chips_rows); i++)
        CU_ASSERT_EQUAL(mt_tpu_host_chips_check(chips_rows[i].host_chips,
                                                chips_rows[i].ids,
                                                chips_rows[i].n),
                        chips_rows[i].rc);
    CU_ASSERT_EQUAL(mt_tpu_host_chips_check(4, NULL, 1), -MT_EINVAL);
}

/* Every aligned block the picker may return, for each host size and k. */
static void test_aligned_blocks(void)
{
    static const uint32_t hosts[] = {1, 4, 8};
    static const uint32_t ks[] = {1, 2, 4, 8};
    uint32_t ids[8], h, k, s, i, mask;
    size_t a, b;

    for (a = 0; a < N_ELEMS(hosts); a++) {
        for (b = 0; b < N_ELEMS(ks); b++) {
            h = hosts[a];
            k = ks[b];
            for (s = 0; s < h; s++) {
                for (i = 0; i < k && i < 8; i++)
                    ids[i] = s + i;
                CU_ASSERT_EQUAL(mt_tpu_host_chips_check(h, ids, k),
                                k > h         ? -MT_ETOOBIG
                                : s + k > h   ? -MT_ERANGE
                                : s % k       ? -MT_EINVAL
                                              : 0);
            }
            /* On an empty host the first block is picked. */
            mask = 0;
            CU_ASSERT_EQUAL(mt_tpu_host_pick(h, (1u << h) - 1, k, &mask),
                            k > h ? -MT_ETOOBIG : 0);
            if (k <= h)
                CU_ASSERT_EQUAL(mask, (1u << k) - 1);
        }
    }
}

struct pick_row {
    uint32_t host_chips, free_mask, k;
    int rc;             /* first chip or error */
    uint32_t mask;
};

static const struct pick_row pick_rows[] = {
    /* Best fit: take a chip next to a used one, keep the pair whole. */
    {4, 0xe, 1, 1, 0x2},   /* chip 0 used: pick 1, not 2 */
    {4, 0xb, 1, 3, 0x8},   /* chip 2 used: pick 3 */
    {8, 0xfe, 2, 2, 0xc},  /* chip 0 used: keep 4..7 whole, take 2,3 */
    {8, 0xef, 2, 6, 0xc0}, /* chip 4 used: take 6,7 */
    {8, 0x0f, 4, 0, 0x0f}, /* 4..7 used: the low half */
    {8, 0xf0, 4, 4, 0xf0},
    {8, 0x3c, 2, 2, 0x0c}, /* 2,3 and 4,5 tie: lowest index */
    {4, 0x5, 2, -MT_EAGAIN, 0},  /* chips 0,2 free: no aligned pair */
    {8, 0x7e, 4, -MT_EAGAIN, 0}, /* 6 free chips, no aligned half */
    {4, 0x0, 1, -MT_EAGAIN, 0},
    {4, 0xf, 8, -MT_ETOOBIG, 0},
    {4, 0xf, 3, -MT_EINVAL, 0},
    {4, 0xf, 0, -MT_EINVAL, 0},
    {0, 0xf, 1, -MT_EINVAL, 0},
    {4, 0xff, 4, 0, 0xf},  /* bits beyond the host are ignored */
    /* Nearer levels first: 0,1,4 used; 5 beats 2 (pair half used). */
    {8, 0xec, 1, 5, 0x20},
    /* 0 used: its pair partner, chip 1, before any whole pair. */
    {8, 0xfe, 1, 1, 0x2},
    /* 1,4 used; 0 and 5 tie at 2k and 4k: lowest index. */
    {8, 0xed, 1, 0, 0x1},
};

static void test_host_pick(void)
{
    uint32_t mask;
    size_t i;

    for (i = 0; i < N_ELEMS(pick_rows); i++) {
        mask = 0;
        CU_ASSERT_EQUAL(mt_tpu_host_pick(pick_rows[i].host_chips,
                                         pick_rows[i].free_mask,
                                         pick_rows[i].k, &mask),
                        pick_rows[i].rc);
        if (pick_rows[i].rc >= 0)
            CU_ASSERT_EQUAL(mask, pick_rows[i].mask);
    }
    CU_ASSERT_EQUAL(mt_tpu_host_pick(8, 0xff, 2, NULL), 0);
}

/* Filling a host chip by chip with best fit never strands a free block. */
static void test_host_pick_fill(void)
{
    uint32_t free_mask = 0xff & ~0x10u, mask; /* chip 4 taken first */
    int i, s;

    for (i = 0; i < 3; i++) {
        s = mt_tpu_host_pick(8, free_mask, 1, &mask);
        CU_ASSERT_FATAL(s >= 4);
        free_mask &= ~mask;
    }
    /* Four single chips fill one half; the other half is still whole. */
    CU_ASSERT_EQUAL(free_mask, 0x0f);
    CU_ASSERT_EQUAL(mt_tpu_host_pick(8, free_mask, 4, NULL), 0);
}

CU_TestInfo mt_test_tpu[] = {
    {"slice_rows", test_slice_rows},
    {"slice_round_trip", test_slice_round_trip},
    {"slice_errors", test_slice_errors},
    {"slice_small_buffers", test_slice_small_buffers},
    {"topology_valid", test_topology_valid},
    {"topology_parse", test_topology_parse},
    {"gen_parse", test_gen_parse},
    {"gen_facts", test_gen_facts},
    {"pod_type", test_pod_type},
    {"pci", test_pci},
    {"chip_bounds", test_chip_bounds},
    {"host_chips_check", test_host_chips_check},
    {"aligned_blocks", test_aligned_blocks},
    {"host_pick", test_host_pick},
    {"host_pick_fill", test_host_pick_fill},
    CU_TEST_INFO_NULL,
};
