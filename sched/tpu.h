/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tpu.h -- TPU generations, slice topology math and partial-host chip sets.
 *
 * A TPU slice is named two ways: by pod type ("v4-16", "v6e-16",
 * "v5litepod-8", "tpu7x-8") and by topology, the chip grid ("2x2x2", "4x4").
 * The number after the dash counts TensorCores: chips x cores_per_chip, where
 * v5litepod (v5e) and v6e have 1 core per chip and v4, v5p and v7x have 2.
 * A slice is cut into hosts of chips_per_host chips each: 4 by default, or the
 * whole topology for the single-host v5e/v6e shapes 1x1, 2x2 and 2x4.
 *
 * Per-host chip bounds are the chip grid one host owns (1 -> 1,1,1; 2 ->
 * 1,2,1; 4 -> 2,2,1; 8 -> 2,4,1); host bounds are the topology divided by
 * them, dimension by dimension, with 2D topologies padded with z = 1.
 *
 * A host's chips are granted in aligned power-of-two blocks of 1, 2, 4 or 8:
 * a block of k chips is {s, ..., s+k-1} with s a multiple of k, so a 2-chip
 * grant never straddles a NUMA half and a 4-chip grant on an 8-chip host is
 * one of its two halves.
 *
 * Everything here is a pure function over plain values: no allocation, no
 * I/O, no global state. Bad input (unknown generation, malformed pod type,
 * 3 chips, a topology the generation does not have) returns a negative
 * -MT_E* code and never asserts. Source of the rules and tables:
 * docs/accelerators.md (and the team's notes/accelerators.md).
 *
 * THREAD: every function is reentrant and may run on any thread.
 */
#ifndef MT_SCHED_TPU_H
#define MT_SCHED_TPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TPU generations. MT_TPU_GEN_NONE is 0 so a zeroed struct means "no TPU". */
enum mt_tpu_gen {
    MT_TPU_GEN_NONE = 0,
    MT_TPU_V2,
    MT_TPU_V3,
    MT_TPU_V4,
    MT_TPU_V5E, /* "v5litepod"; aliases v5e, v5lite, tpu-v5-lite-podslice */
    MT_TPU_V5P,
    MT_TPU_V6E,
    MT_TPU_V7X, /* Ironwood; cloud prefix "tpu7x" */
    MT_TPU_GEN_COUNT
};

/* Largest numbers the math accepts; larger input is -MT_ERANGE. */
#define MT_TPU_MAX_DIM 64           /* one topology dimension */
#define MT_TPU_MAX_HOST_CHIPS 8     /* chips on one host (VM) */
#define MT_TPU_MAX_HOSTS 4096       /* hosts in one slice */
#define MT_TPU_NAME_MAX 32          /* buffer fitting any formatted name */
#define MT_TPU_BOUNDS_MAX 4         /* x, y, z and v7x's devices per chip */

/*
 * A topology: the chip grid of a slice. dims[2] is 1 for a 2D topology;
 * ndims records how it is written ("4x4" has ndims 2, "2x2x1" has 3).
 */
struct mt_tpu_topo {
    uint32_t dims[3]; /* x, y, z chip counts, each >= 1 */
    uint32_t ndims;   /* 2 or 3 */
};

/*
 * Everything the scheduler and the env contract need about one slice shape.
 * Filled by mt_tpu_slice_from_topo() / mt_tpu_slice_parse(); plain value,
 * copy freely.
 */
struct mt_tpu_slice {
    enum mt_tpu_gen gen;
    struct mt_tpu_topo topo;
    uint32_t chips;                    /* product of topo.dims */
    uint32_t cores;                    /* chips x cores per chip: pod type N */
    uint32_t chips_per_host;           /* 1, 4 or 8 */
    uint32_t hosts;                    /* chips / chips_per_host, >= 1 */
    uint32_t chips_per_host_bounds[3]; /* chip grid of one host */
    uint32_t host_bounds[3];           /* host grid; product == hosts */
};

/* ---------------------------------------------------------------------
 * Generations
 * --------------------------------------------------------------------- */

/*
 * mt_tpu_gen_parse - generation from any of its spellings.
 *
 * Case-insensitive. A leading "tpu", "tpu-" or "tpu-v" is rewritten to "v"
 * (Ray's normalize_tpu_accelerator_type), so "v6e", "V6E", "TPU-V6E",
 * "tpu7x" and "v7x" all parse. Also accepts "v5e"/"v5lite"/"v5litepod" and the
 * GKE node labels ("tpu-v4-podslice", "tpu-v5-lite-podslice",
 * "tpu-v5-lite-device", "tpu-v5p-slice", "tpu-v6e-slice", "tpu7x").
 *
 * IN  s     generation name (NUL-terminated)
 * OUT gen   the generation
 * RET 0, -MT_EINVAL (NULL, empty or unknown)
 */
int mt_tpu_gen_parse(const char *s, enum mt_tpu_gen *gen);

/*
 * mt_tpu_gen_name - canonical lowercase name: "v4", "v5litepod", "v5p",
 * "v6e", "v7x" (the prefix of a normalised pod type).
 *
 * RET a static string, or NULL for MT_TPU_GEN_NONE or an out-of-range value
 */
const char *mt_tpu_gen_name(enum mt_tpu_gen gen);

/*
 * mt_tpu_gen_cloud_name - the prefix Google Cloud and GKE use in
 * TPU_ACCELERATOR_TYPE: as mt_tpu_gen_name() except "tpu7x" for v7x.
 *
 * RET a static string, or NULL as for mt_tpu_gen_name()
 */
const char *mt_tpu_gen_cloud_name(enum mt_tpu_gen gen);

/*
 * mt_tpu_gen_type_label - the accelerator-type label and resource suffix:
 * "TPU-V4", "TPU-V5LITEPOD", "TPU-V5P", "TPU-V6E", "TPU-V7X".
 *
 * RET a static string, or NULL as for mt_tpu_gen_name()
 */
const char *mt_tpu_gen_type_label(enum mt_tpu_gen gen);

/*
 * mt_tpu_gen_cores_per_chip - TensorCores per chip: 1 for v5e and v6e,
 * 2 otherwise (the unit of the pod-type number).
 *
 * RET 1 or 2, or 0 for MT_TPU_GEN_NONE / out of range
 */
uint32_t mt_tpu_gen_cores_per_chip(enum mt_tpu_gen gen);

/*
 * mt_tpu_gen_devices_per_chip - PJRT devices per chip: 2 on v7x (two
 * chiplets), 1 otherwise. Manta accounts TPU resources per chip on every
 * generation; this only shapes the device-centric env on v7x.
 *
 * RET 1 or 2, or 0 for MT_TPU_GEN_NONE / out of range
 */
uint32_t mt_tpu_gen_devices_per_chip(enum mt_tpu_gen gen);

/*
 * mt_tpu_gen_from_pci - generation from a PCI vendor/device id pair, as the
 * worker reads them from /sys/bus/pci/devices/ * /{vendor,device}.
 *
 * Google's vendor id is 0x1ae0. Devices: 0x0027 v2/v3 (reported as
 * MT_TPU_V3: the id cannot tell them apart), 0x005e v4, 0x0062 v5p,
 * 0x0063 v5e, 0x006f v6e, 0x0076 v7x.
 *
 * IN  vendor, device   PCI ids
 * OUT gen              the generation
 * RET 0, -MT_ENOENT (not a Google TPU vendor/device pair)
 */
int mt_tpu_gen_from_pci(uint32_t vendor, uint32_t device,
                        enum mt_tpu_gen *gen);

#define MT_TPU_PCI_VENDOR 0x1ae0u

/* ---------------------------------------------------------------------
 * Topologies and pod types
 * --------------------------------------------------------------------- */

/*
 * mt_tpu_topo_parse - parse "AxB" or "AxBxC" (case-insensitive 'x').
 *
 * Only the syntax is checked here; mt_tpu_topo_valid() checks it against a
 * generation.
 *
 * IN  s      topology string
 * OUT topo   parsed dims (z = 1 for 2D)
 * RET 0, -MT_EINVAL (malformed, zero dims), -MT_ERANGE (dim > MT_TPU_MAX_DIM)
 */
int mt_tpu_topo_parse(const char *s, struct mt_tpu_topo *topo);

/*
 * mt_tpu_topo_format - write "AxB" or "AxBxC" as the topology is written.
 *
 * OUT buf    NUL-terminated text
 * RET length written (excluding NUL), -MT_EINVAL, -MT_ENOSPC (len too small)
 */
int mt_tpu_topo_format(const struct mt_tpu_topo *topo, char *buf, size_t len);

/*
 * mt_tpu_topo_valid - is this a topology the generation offers?
 *
 * v5e and v6e: 1x1 2x2 2x4 2x8 4x4 4x8 8x8 8x16 16x16. v4 and v5p: 2x2x1
 * 2x2x2 2x2x4 2x4x4, plus every x,y,z that are multiples of 4 up to
 * 12x12x16 (v4) or 16x16x24 (v5p). v7x: 2x2x1 2x2x2 2x2x4 2x4x4 4x4x4 4x4x8
 * 4x8x8 8x8x8 8x8x16 8x16x16. v2/v3 are not supported (false).
 *
 * RET true when valid
 */
bool mt_tpu_topo_valid(enum mt_tpu_gen gen, const struct mt_tpu_topo *topo);

/*
 * mt_tpu_pod_type_parse - split and validate a pod type.
 *
 * Accepts the normalisable form ^(v|tpu)\d+[a-z]*-\d+$ in any case ("v4-16",
 * "V6E-16", "tpu7x-8", "v5e-8", "TPU-V5P-8"), with the generation spelled as
 * mt_tpu_gen_parse() allows. The number must be a positive multiple of the
 * generation's cores per chip. It does not check that a topology exists; see
 * mt_tpu_slice_parse().
 *
 * IN  s      pod type
 * OUT gen    generation (may be NULL)
 * OUT cores  the number after the dash (may be NULL)
 * RET 0, -MT_EINVAL (malformed, unknown generation, zero or odd core count
 *     on a 2-core generation), -MT_ERANGE (number too large)
 */
int mt_tpu_pod_type_parse(const char *s, enum mt_tpu_gen *gen,
                          uint32_t *cores);

/*
 * mt_tpu_pod_type_normalize - canonical pod type: "tpu7x-8" -> "v7x-8",
 * "V5E-8" -> "v5litepod-8", "TPU-V6E-16" -> "v6e-16".
 *
 * OUT buf    NUL-terminated canonical name
 * RET length written, -MT_EINVAL (as mt_tpu_pod_type_parse), -MT_ENOSPC
 */
int mt_tpu_pod_type_normalize(const char *s, char *buf, size_t len);

/* ---------------------------------------------------------------------
 * Slices
 * --------------------------------------------------------------------- */

/*
 * mt_tpu_slice_from_topo - all the numbers of a slice of this shape.
 *
 * chips_per_host 0 means the default: the chip count for the single-host
 * v5e/v6e shapes (1x1, 2x2, 2x4), else 4. An explicit value must be 4 for
 * v4/v5p/v7x; for v5e/v6e it may be 1 (1x1 only), 4, or 8 (2x4 only) --
 * e.g. v6e 2x4 with 4 gives 2 hosts of 4 chips (GKE ct6e-standard-4t).
 *
 * IN  gen, topo, chips_per_host
 * OUT out   filled on success only
 * RET 0, -MT_ENOTSUP (v2 and v3: no topology math), -MT_EINVAL
 *     (generation NONE or out of range, topology not offered by the
 *     generation, chips_per_host not allowed for the shape)
 */
int mt_tpu_slice_from_topo(enum mt_tpu_gen gen, const struct mt_tpu_topo *topo,
                           uint32_t chips_per_host, struct mt_tpu_slice *out);

/*
 * mt_tpu_slice_parse - a slice from its pod type and/or topology strings.
 *
 * IN  pod_type  e.g. "v4-16", "tpu7x-8"; or a bare generation ("v6e",
 *               "TPU-V6E") when topology is given; never NULL
 * IN  topology  e.g. "2x2x2"; NULL or "" to use the generation's default
 *               shape for the pod type's chip count (2D: the valid shape,
 *               4x4 rather than 2x8 for 16 chips; 3D: the small shapes,
 *               then the most cubic grid, x <= y <= z, e.g. v4-64 ->
 *               2x4x4, v4-128 -> 4x4x4, v4-1536 -> 8x8x12)
 * IN  chips_per_host  as for mt_tpu_slice_from_topo()
 * OUT out
 * RET 0, -MT_EINVAL (malformed or unknown names, topology invalid for the
 *     generation, pod type and topology disagree on the chip count, no
 *     topology exists for the pod type), -MT_ERANGE (numbers too large),
 *     -MT_ENOTSUP (v2 and v3)
 */
int mt_tpu_slice_parse(const char *pod_type, const char *topology,
                       uint32_t chips_per_host, struct mt_tpu_slice *out);

/*
 * mt_tpu_slice_pod_type - the normalised pod type, e.g. "v4-16", "v7x-8"
 * (node labels, the "TPU-<pod type>-head" resource).
 *
 * RET length written, -MT_EINVAL, -MT_ENOSPC
 */
int mt_tpu_slice_pod_type(const struct mt_tpu_slice *s, char *buf,
                          size_t len);

/*
 * mt_tpu_slice_accelerator_type - the cloud pod type for the
 * TPU_ACCELERATOR_TYPE env var: as mt_tpu_slice_pod_type() but "tpu7x-8"
 * on v7x, the spelling GKE and the metadata server use.
 *
 * RET length written, -MT_EINVAL, -MT_ENOSPC
 */
int mt_tpu_slice_accelerator_type(const struct mt_tpu_slice *s, char *buf,
                                  size_t len);

/*
 * mt_tpu_slice_topology - the topology string, e.g. "2x2x2", "4x4".
 *
 * RET length written, -MT_EINVAL, -MT_ENOSPC
 */
int mt_tpu_slice_topology(const struct mt_tpu_slice *s, char *buf,
                          size_t len);

/* ---------------------------------------------------------------------
 * Hosts: chip counts, bounds and aligned partial-host chip sets
 * --------------------------------------------------------------------- */

/*
 * mt_tpu_chip_count_valid - true for 1, 2, 4 and 8: the only chip counts a
 * TPU request may ask of one host.
 */
bool mt_tpu_chip_count_valid(uint32_t chips);

/*
 * mt_tpu_chip_bounds - the chip grid of k chips on one host:
 * 1 -> 1,1,1; 2 -> 1,2,1; 4 -> 2,2,1; 8 -> 2,4,1 (TPU_CHIPS_PER_HOST_BOUNDS).
 *
 * OUT bounds   3 values
 * RET 0, -MT_EINVAL (k not 1, 2, 4 or 8)
 */
int mt_tpu_chip_bounds(uint32_t chips, uint32_t bounds[3]);

/*
 * mt_tpu_bounds_format - "a,b,c" (n values, 1..MT_TPU_BOUNDS_MAX).
 *
 * RET length written, -MT_EINVAL, -MT_ENOSPC
 */
int mt_tpu_bounds_format(const uint32_t *bounds, size_t n, char *buf,
                         size_t len);

/*
 * mt_tpu_host_chips_check - is this chip set a valid grant on a host?
 *
 * Valid means: 1, 2, 4 or 8 distinct chips, all below host_chips, forming
 * one aligned block {s, ..., s+n-1} with s % n == 0 (any order in ids[]).
 *
 * IN  host_chips  chips on the host (1..MT_TPU_MAX_HOST_CHIPS)
 * IN  ids, n      granted chip indices; borrowed
 * RET 0, -MT_EINVAL (count not 1/2/4/8, duplicate, not an aligned block,
 *     host_chips 0 or > MT_TPU_MAX_HOST_CHIPS), -MT_ETOOBIG (n > host_chips),
 *     -MT_ERANGE (an index >= host_chips)
 */
int mt_tpu_host_chips_check(uint32_t host_chips, const uint32_t *ids,
                            size_t n);

/*
 * mt_tpu_host_pick - choose an aligned free block of k chips on a host.
 *
 * Bit i of free_mask is set when chip i is free. Among the free aligned
 * blocks, picks the one whose enclosing block of 2k chips is the most used,
 * then of 4k chips, and so on (best fit, as a buddy allocator does, keeping
 * big blocks whole), lowest index first on ties.
 *
 * IN  host_chips  chips on the host (1..MT_TPU_MAX_HOST_CHIPS)
 * IN  free_mask   free chips
 * IN  k           chips wanted
 * OUT block_mask  the chosen chips as a bit mask (may be NULL)
 * RET the first chip index of the block (>= 0); -MT_EAGAIN (no aligned block
 *     free now: retryable), -MT_EINVAL (k not 1/2/4/8, bad host_chips),
 *     -MT_ETOOBIG (k > host_chips: never fits this host)
 */
int mt_tpu_host_pick(uint32_t host_chips, uint32_t free_mask, uint32_t k,
                     uint32_t *block_mask);

#endif /* MT_SCHED_TPU_H */
