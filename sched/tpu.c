/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tpu.c -- TPU generations, slice topology math and partial-host chip sets.
 *
 * One table row per generation holds every per-generation fact (names, cores
 * and devices per chip, PCI id, topology rule); the rest is arithmetic over
 * it. Validity of topologies follows Ray's VALID_TPU_TOPOLOGY: an explicit
 * list for the 2D generations and v7x, the four small shapes plus every
 * multiple-of-4 grid up to a per-axis limit for v4 and v5p.
 *
 * All functions are pure: no allocation, no globals written, no I/O.
 */
#include "sched/tpu.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"

/* ---------------------------------------------------------------------
 * Per-generation table
 * --------------------------------------------------------------------- */

/*
 * Ordered by chip count; for 16 chips the square 4x4 comes before 2x8 so it
 * is the default shape of v5litepod-16 and v6e-16 (the first match wins).
 */
static const char *const topos_2d[] = {
    "1x1", "2x2", "2x4", "4x4", "2x8", "4x8", "8x8", "8x16", "16x16", NULL,
};
static const char *const topos_3d_small[] = {
    "2x2x1", "2x2x2", "2x2x4", "2x4x4", NULL,
};
static const char *const topos_v7x[] = {
    "2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4",
    "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16", NULL,
};

struct gen_info {
    const char *name;        /* canonical, lowercase */
    const char *cloud;       /* TPU_ACCELERATOR_TYPE prefix */
    const char *label;       /* accelerator-type label */
    uint32_t cores_per_chip; /* TensorCores per chip */
    uint32_t devs_per_chip;  /* PJRT devices per chip */
    uint32_t pci_device;     /* device id under vendor 0x1ae0; 0 = none */
    uint32_t ndims;          /* 2 or 3; 0 = topology math unsupported */
    const char *const *topos; /* explicit valid topologies */
    uint32_t grid_max[3];    /* multiples of 4 up to these; 0 = none */
};

static const struct gen_info gens[MT_TPU_GEN_COUNT] = {
    [MT_TPU_V2] = {"v2", "v2", "TPU-V2", 2, 1, 0, 0, NULL, {0, 0, 0}},
    [MT_TPU_V3] = {"v3", "v3", "TPU-V3", 2, 1, 0x0027, 0, NULL, {0, 0, 0}},
    [MT_TPU_V4] = {"v4", "v4", "TPU-V4", 2, 1, 0x005e, 3, topos_3d_small,
                   {12, 12, 16}},
    [MT_TPU_V5E] = {"v5litepod", "v5litepod", "TPU-V5LITEPOD", 1, 1, 0x0063,
                    2, topos_2d, {0, 0, 0}},
    [MT_TPU_V5P] = {"v5p", "v5p", "TPU-V5P", 2, 1, 0x0062, 3, topos_3d_small,
                    {16, 16, 24}},
    [MT_TPU_V6E] = {"v6e", "v6e", "TPU-V6E", 1, 1, 0x006f, 2, topos_2d,
                    {0, 0, 0}},
    [MT_TPU_V7X] = {"v7x", "tpu7x", "TPU-V7X", 2, 2, 0x0076, 3, topos_v7x,
                    {0, 0, 0}},
};

/* Extra spellings, after lowercasing and the tpu- prefix rewrite. */
static const struct {
    const char *alias;
    enum mt_tpu_gen gen;
} gen_aliases[] = {
    {"v5e", MT_TPU_V5E},
    {"v5lite", MT_TPU_V5E},
    {"v5-lite-podslice", MT_TPU_V5E},
    {"v5-lite-device", MT_TPU_V5E},
    {"v4-podslice", MT_TPU_V4},
    {"v5p-slice", MT_TPU_V5P},
    {"v6e-slice", MT_TPU_V6E},
    {"v7", MT_TPU_V7X},
};

static const struct gen_info *gen_get(enum mt_tpu_gen gen)
{
    if (gen <= MT_TPU_GEN_NONE || gen >= MT_TPU_GEN_COUNT)
        return NULL;
    return &gens[gen];
}

/* ---------------------------------------------------------------------
 * Small helpers
 * --------------------------------------------------------------------- */

/* snprintf into buf; RET length, or -MT_ENOSPC when it does not fit. */
static int put(char *buf, size_t len, int n)
{
    if (n < 0 || (size_t)n >= len)
        return -MT_ENOSPC;
    return n;
}

/*
 * Lowercase s into out and rewrite a leading "tpu", "tpu-" or "tpu-v" to
 * "v" (Ray's normalize_tpu_accelerator_type: ^tpu-?v? -> v).
 */
static int lower_normalize(const char *s, char *out, size_t len)
{
    size_t i = 0, o = 0;

    if (!s || !*s)
        return -MT_EINVAL;
    if (strncasecmp(s, "tpu", 3) == 0) {
        i = 3;
        if (s[i] == '-')
            i++;
        if (s[i] == 'v' || s[i] == 'V')
            i++;
        out[o++] = 'v';
    }
    for (; s[i]; i++) {
        if (o + 1 >= len)
            return -MT_ERANGE;
        out[o++] = (char)tolower((unsigned char)s[i]);
    }
    out[o] = '\0';
    return 0;
}

/* Parse a decimal number of at most 9 digits; RET chars used or -errno. */
static int parse_u32(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    int n = 0;

    while (isdigit((unsigned char)s[n])) {
        if (n == 9)
            return -MT_ERANGE;
        v = v * 10 + (uint32_t)(s[n] - '0');
        n++;
    }
    if (n == 0)
        return -MT_EINVAL;
    *out = v;
    return n;
}

static enum mt_tpu_gen gen_lookup(const char *norm)
{
    size_t i;

    for (i = MT_TPU_GEN_NONE + 1; i < MT_TPU_GEN_COUNT; i++)
        if (strcmp(norm, gens[i].name) == 0)
            return (enum mt_tpu_gen)i;
    for (i = 0; i < sizeof(gen_aliases) / sizeof(gen_aliases[0]); i++)
        if (strcmp(norm, gen_aliases[i].alias) == 0)
            return gen_aliases[i].gen;
    return MT_TPU_GEN_NONE;
}

/* ---------------------------------------------------------------------
 * Generations
 * --------------------------------------------------------------------- */

int mt_tpu_gen_parse(const char *s, enum mt_tpu_gen *gen)
{
    char norm[MT_TPU_NAME_MAX];
    enum mt_tpu_gen g;

    if (lower_normalize(s, norm, sizeof(norm)) < 0)
        return -MT_EINVAL;
    g = gen_lookup(norm);
    if (g == MT_TPU_GEN_NONE)
        return -MT_EINVAL;
    *gen = g;
    return 0;
}

const char *mt_tpu_gen_name(enum mt_tpu_gen gen)
{
    const struct gen_info *gi = gen_get(gen);

    return gi ? gi->name : NULL;
}

const char *mt_tpu_gen_cloud_name(enum mt_tpu_gen gen)
{
    const struct gen_info *gi = gen_get(gen);

    return gi ? gi->cloud : NULL;
}

const char *mt_tpu_gen_type_label(enum mt_tpu_gen gen)
{
    const struct gen_info *gi = gen_get(gen);

    return gi ? gi->label : NULL;
}

uint32_t mt_tpu_gen_cores_per_chip(enum mt_tpu_gen gen)
{
    const struct gen_info *gi = gen_get(gen);

    return gi ? gi->cores_per_chip : 0;
}

uint32_t mt_tpu_gen_devices_per_chip(enum mt_tpu_gen gen)
{
    const struct gen_info *gi = gen_get(gen);

    return gi ? gi->devs_per_chip : 0;
}

int mt_tpu_gen_from_pci(uint32_t vendor, uint32_t device,
                        enum mt_tpu_gen *gen)
{
    size_t i;

    if (vendor != MT_TPU_PCI_VENDOR || device == 0)
        return -MT_ENOENT;
    for (i = MT_TPU_GEN_NONE + 1; i < MT_TPU_GEN_COUNT; i++) {
        if (gens[i].pci_device == device) {
            *gen = (enum mt_tpu_gen)i;
            return 0;
        }
    }
    return -MT_ENOENT;
}

/* ---------------------------------------------------------------------
 * Topologies
 * --------------------------------------------------------------------- */

int mt_tpu_topo_parse(const char *s, struct mt_tpu_topo *topo)
{
    struct mt_tpu_topo t = {{1, 1, 1}, 0};
    int n;

    if (!s || !topo)
        return -MT_EINVAL;
    for (;;) {
        if (t.ndims == 3)
            return -MT_EINVAL;
        n = parse_u32(s, &t.dims[t.ndims]);
        if (n < 0)
            return n;
        if (t.dims[t.ndims] == 0)
            return -MT_EINVAL;
        if (t.dims[t.ndims] > MT_TPU_MAX_DIM)
            return -MT_ERANGE;
        t.ndims++;
        s += n;
        if (*s == '\0')
            break;
        if (*s != 'x' && *s != 'X')
            return -MT_EINVAL;
        s++;
    }
    if (t.ndims < 2)
        return -MT_EINVAL;
    *topo = t;
    return 0;
}

int mt_tpu_topo_format(const struct mt_tpu_topo *topo, char *buf, size_t len)
{
    if (!topo || !buf || topo->ndims < 2 || topo->ndims > 3)
        return -MT_EINVAL;
    if (topo->ndims == 2)
        return put(buf, len,
                   snprintf(buf, len, "%ux%u", topo->dims[0], topo->dims[1]));
    return put(buf, len,
               snprintf(buf, len, "%ux%ux%u", topo->dims[0], topo->dims[1],
                        topo->dims[2]));
}

static bool topo_in_list(const struct mt_tpu_topo *topo,
                         const char *const *list)
{
    char text[MT_TPU_NAME_MAX];

    if (mt_tpu_topo_format(topo, text, sizeof(text)) < 0)
        return false;
    for (; list && *list; list++)
        if (strcmp(text, *list) == 0)
            return true;
    return false;
}

/* v4/v5p: every axis a multiple of 4 within that axis's limit. */
static bool topo_in_grid(const struct mt_tpu_topo *topo, const uint32_t max[3])
{
    int i;

    if (topo->ndims != 3 || max[0] == 0)
        return false;
    for (i = 0; i < 3; i++)
        if (topo->dims[i] % 4 != 0 || topo->dims[i] > max[i])
            return false;
    return true;
}

bool mt_tpu_topo_valid(enum mt_tpu_gen gen, const struct mt_tpu_topo *topo)
{
    const struct gen_info *gi = gen_get(gen);

    if (!gi || !topo || gi->ndims == 0 || topo->ndims != gi->ndims)
        return false;
    return topo_in_list(topo, gi->topos) || topo_in_grid(topo, gi->grid_max);
}

/* ---------------------------------------------------------------------
 * Pod types
 * --------------------------------------------------------------------- */

int mt_tpu_pod_type_parse(const char *s, enum mt_tpu_gen *gen,
                          uint32_t *cores)
{
    char norm[MT_TPU_NAME_MAX];
    const char *dash;
    enum mt_tpu_gen g;
    uint32_t n;
    int rc;

    rc = lower_normalize(s, norm, sizeof(norm));
    if (rc < 0)
        return rc == -MT_ERANGE ? -MT_EINVAL : rc;
    /* ^v\d+[a-z]*-\d+$ once normalised; the dash before the count is the last */
    dash = strrchr(norm, '-');
    if (!dash || norm[0] != 'v' || !isdigit((unsigned char)norm[1]))
        return -MT_EINVAL;
    rc = parse_u32(dash + 1, &n);
    if (rc < 0)
        return rc;
    if (dash[1 + rc] != '\0' || n == 0)
        return -MT_EINVAL;
    norm[dash - norm] = '\0';
    g = gen_lookup(norm);
    if (g == MT_TPU_GEN_NONE || n % gens[g].cores_per_chip != 0)
        return -MT_EINVAL;
    if (gen)
        *gen = g;
    if (cores)
        *cores = n;
    return 0;
}

int mt_tpu_pod_type_normalize(const char *s, char *buf, size_t len)
{
    enum mt_tpu_gen g;
    uint32_t cores;
    int rc;

    if (!buf)
        return -MT_EINVAL;
    rc = mt_tpu_pod_type_parse(s, &g, &cores);
    if (rc < 0)
        return rc;
    return put(buf, len, snprintf(buf, len, "%s-%u", gens[g].name, cores));
}

/* ---------------------------------------------------------------------
 * Slices
 * --------------------------------------------------------------------- */

static uint32_t topo_chips(const struct mt_tpu_topo *t)
{
    return t->dims[0] * t->dims[1] * t->dims[2];
}

static bool single_host_2d(const struct mt_tpu_topo *t)
{
    return t->ndims == 2 && topo_chips(t) <= 8;
}

/* The chips-per-host value to use, or 0 when the explicit one is invalid. */
static uint32_t pick_chips_per_host(const struct gen_info *gi,
                                    const struct mt_tpu_topo *t, uint32_t want)
{
    uint32_t chips = topo_chips(t);

    if (want == 0)
        return single_host_2d(t) ? chips : 4;
    if (gi->ndims == 3)
        return want == 4 ? 4 : 0;
    if (want == 1)
        return chips == 1 ? 1 : 0;
    if (want == 8)
        return chips == 8 ? 8 : 0;
    return (want == 4 && chips >= 4) ? 4 : 0;
}

int mt_tpu_slice_from_topo(enum mt_tpu_gen gen, const struct mt_tpu_topo *topo,
                           uint32_t chips_per_host, struct mt_tpu_slice *out)
{
    const struct gen_info *gi = gen_get(gen);
    struct mt_tpu_slice s;
    int i;

    if (!gi || !topo || !out)
        return -MT_EINVAL;
    if (gi->ndims == 0)
        return -MT_ENOTSUP;
    if (!mt_tpu_topo_valid(gen, topo))
        return -MT_EINVAL;
    memset(&s, 0, sizeof(s));
    s.gen = gen;
    s.topo = *topo;
    s.chips = topo_chips(topo);
    s.cores = s.chips * gi->cores_per_chip;
    s.chips_per_host = pick_chips_per_host(gi, topo, chips_per_host);
    if (s.chips_per_host == 0 ||
        mt_tpu_chip_bounds(s.chips_per_host, s.chips_per_host_bounds) < 0)
        return -MT_EINVAL;
    s.hosts = 1;
    for (i = 0; i < 3; i++) {
        if (topo->dims[i] % s.chips_per_host_bounds[i] != 0)
            return -MT_EINVAL;
        s.host_bounds[i] = topo->dims[i] / s.chips_per_host_bounds[i];
        s.hosts *= s.host_bounds[i];
    }
    if (s.hosts * s.chips_per_host != s.chips || s.hosts > MT_TPU_MAX_HOSTS)
        return -MT_EINVAL;
    *out = s;
    return 0;
}

/* The most cubic v4/v5p grid shape (x <= y <= z) with this many chips. */
static bool grid_default(const uint32_t max[3], uint32_t chips,
                         struct mt_tpu_topo *t)
{
    uint32_t x, y, z;
    bool found = false;

    for (x = 4; x <= max[0]; x += 4) {
        for (y = x; y <= max[1]; y += 4) {
            if (chips % (x * y) != 0)
                continue;
            z = chips / (x * y);
            if (z < y || z % 4 != 0 || z > max[2])
                continue;
            if (!found || z < t->dims[2] ||
                (z == t->dims[2] && y < t->dims[1])) {
                t->dims[0] = x;
                t->dims[1] = y;
                t->dims[2] = z;
                found = true;
            }
        }
    }
    return found;
}

static int default_topo(enum mt_tpu_gen gen, uint32_t chips,
                        struct mt_tpu_topo *t)
{
    const struct gen_info *gi = gen_get(gen);
    const char *const *p;

    if (!gi)
        return -MT_EINVAL;
    if (gi->ndims == 0)
        return -MT_ENOTSUP;
    for (p = gi->topos; p && *p; p++) {
        if (mt_tpu_topo_parse(*p, t) == 0 && topo_chips(t) == chips)
            return 0;
    }
    t->ndims = 3;
    if (gi->grid_max[0] && grid_default(gi->grid_max, chips, t))
        return 0;
    return -MT_EINVAL;
}

int mt_tpu_slice_parse(const char *pod_type, const char *topology,
                       uint32_t chips_per_host, struct mt_tpu_slice *out)
{
    bool have_topo = topology && *topology;
    enum mt_tpu_gen gen;
    struct mt_tpu_topo t;
    uint32_t cores = 0;
    int rc;

    if (!pod_type || !out)
        return -MT_EINVAL;
    rc = mt_tpu_pod_type_parse(pod_type, &gen, &cores);
    if (rc < 0 && have_topo && mt_tpu_gen_parse(pod_type, &gen) == 0)
        rc = 0;
    if (rc < 0)
        return rc;
    if (have_topo) {
        rc = mt_tpu_topo_parse(topology, &t);
        if (rc < 0)
            return rc;
        if (cores && topo_chips(&t) * gens[gen].cores_per_chip != cores)
            return -MT_EINVAL;
    } else {
        rc = default_topo(gen, cores / gens[gen].cores_per_chip, &t);
        if (rc < 0)
            return rc;
    }
    return mt_tpu_slice_from_topo(gen, &t, chips_per_host, out);
}

static int slice_type(const struct mt_tpu_slice *s, bool cloud, char *buf,
                      size_t len)
{
    const struct gen_info *gi = s ? gen_get(s->gen) : NULL;

    if (!gi || !buf)
        return -MT_EINVAL;
    return put(buf, len, snprintf(buf, len, "%s-%u",
                                  cloud ? gi->cloud : gi->name, s->cores));
}

int mt_tpu_slice_pod_type(const struct mt_tpu_slice *s, char *buf, size_t len)
{
    return slice_type(s, false, buf, len);
}

int mt_tpu_slice_accelerator_type(const struct mt_tpu_slice *s, char *buf,
                                  size_t len)
{
    return slice_type(s, true, buf, len);
}

int mt_tpu_slice_topology(const struct mt_tpu_slice *s, char *buf, size_t len)
{
    if (!s)
        return -MT_EINVAL;
    return mt_tpu_topo_format(&s->topo, buf, len);
}

/* ---------------------------------------------------------------------
 * Hosts
 * --------------------------------------------------------------------- */

bool mt_tpu_chip_count_valid(uint32_t chips)
{
    return chips == 1 || chips == 2 || chips == 4 || chips == 8;
}

int mt_tpu_chip_bounds(uint32_t chips, uint32_t bounds[3])
{
    if (!bounds || !mt_tpu_chip_count_valid(chips))
        return -MT_EINVAL;
    bounds[0] = chips >= 4 ? 2 : 1;
    bounds[1] = chips == 1 ? 1 : chips == 8 ? 4 : 2;
    bounds[2] = 1;
    return 0;
}

int mt_tpu_bounds_format(const uint32_t *bounds, size_t n, char *buf,
                         size_t len)
{
    size_t i, used = 0;
    int w;

    if (!bounds || !buf || n == 0 || n > MT_TPU_BOUNDS_MAX)
        return -MT_EINVAL;
    for (i = 0; i < n; i++) {
        w = snprintf(buf + used, len - used, i ? ",%u" : "%u", bounds[i]);
        if (w < 0 || (size_t)w >= len - used)
            return -MT_ENOSPC;
        used += (size_t)w;
    }
    return (int)used;
}

static bool host_chips_ok(uint32_t host_chips)
{
    return host_chips >= 1 && host_chips <= MT_TPU_MAX_HOST_CHIPS;
}

int mt_tpu_host_chips_check(uint32_t host_chips, const uint32_t *ids, size_t n)
{
    uint32_t seen = 0, lo = UINT32_MAX;
    size_t i;

    if (!host_chips_ok(host_chips) || (n && !ids) ||
        !mt_tpu_chip_count_valid((uint32_t)n) || n != (uint32_t)n)
        return -MT_EINVAL;
    if (n > host_chips)
        return -MT_ETOOBIG;
    for (i = 0; i < n; i++) {
        if (ids[i] >= host_chips)
            return -MT_ERANGE;
        if (seen & (1u << ids[i]))
            return -MT_EINVAL;
        seen |= 1u << ids[i];
        if (ids[i] < lo)
            lo = ids[i];
    }
    if (lo % n != 0 || seen != (((1u << n) - 1) << lo))
        return -MT_EINVAL;
    return 0;
}

static uint32_t block_bits(uint32_t start, uint32_t k)
{
    return ((1u << k) - 1) << start;
}

/*
 * Best-fit score of the block at start: chips in use in its enclosing 2k
 * block, then in the 4k block, and so on up to the whole host, the nearest
 * level weighing most (each level counts at most 8, so base 16 keeps them
 * apart). A higher score packs next to used chips and keeps big blocks whole.
 */
static uint32_t fit_score(uint32_t host_chips, uint32_t free_mask,
                          uint32_t start, uint32_t k)
{
    uint32_t used_mask = ~free_mask & block_bits(0, host_chips);
    uint32_t score = 0, pk, ps, n;

    for (pk = 2 * k; pk / 2 < host_chips; pk *= 2) {
        ps = start - start % pk;
        n = ps + pk > host_chips ? host_chips - ps : pk;
        score = score * 16 + (uint32_t)__builtin_popcount(
                                 block_bits(ps, n) & used_mask);
    }
    return score;
}

int mt_tpu_host_pick(uint32_t host_chips, uint32_t free_mask, uint32_t k,
                     uint32_t *block_mask)
{
    uint32_t s, bits, score, best_score = 0;
    int best = -MT_EAGAIN;

    if (!host_chips_ok(host_chips) || !mt_tpu_chip_count_valid(k))
        return -MT_EINVAL;
    if (k > host_chips)
        return -MT_ETOOBIG;
    for (s = 0; s + k <= host_chips; s += k) {
        bits = block_bits(s, k);
        if ((free_mask & bits) != bits)
            continue;
        score = fit_score(host_chips, free_mask, s, k);
        if (best < 0 || score > best_score) {
            best_score = score;
            best = (int)s;
        }
    }
    if (best >= 0 && block_mask)
        *block_mask = block_bits((uint32_t)best, k);
    return best;
}
