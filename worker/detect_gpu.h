/* SPDX-License-Identifier: Apache-2.0 */
/*
 * detect_gpu.h -- NVIDIA GPUs of this node, found at worker start.
 *
 * NVML (libnvidia-ml.so.1) is opened with dlopen at run time; nothing of
 * CUDA or NVML is linked at build time. When the library is absent, lacks a
 * symbol or its nvmlInit_v2 fails, detection falls back to the driver's
 * /proc/driver/nvidia/gpus/<bus id>/information files ("Model:" line; no
 * memory figure there), else finds no GPU. CUDA_VISIBLE_DEVICES, when set at
 * worker start, limits the GPUs offered to the listed devices: indices,
 * GPU UUIDs or unique UUID prefixes ("GPU-8932f937"), as CUDA accepts, and
 * MIG instances ("MIG-..."), offered as they are written. Each offered GPU
 * keeps the identifier it was listed with; tasks get those identifiers.
 *
 * Every input is re-rootable for tests: the NVML path, the /proc root and
 * the CUDA_VISIBLE_DEVICES value are arguments. Rules from
 * notes/accelerators.md section 4.1 and 4.3.
 *
 * All functions: THREAD any (the worker calls them from main before its
 * loop starts); nothing is kept between calls.
 */
#ifndef MT_DETECT_GPU_H
#define MT_DETECT_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "common/qty.h"

#define MT_GPU_MAX 64
#define MT_GPU_NAME_MAX 96
#define MT_GPU_UUID_MAX 96  /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
#define MT_GPU_ID_MAX 128   /* one CUDA_VISIBLE_DEVICES entry */
#define MT_GPU_NVML_TIMEOUT_MS 10000 /* NVML answers in well under 1 s */

struct mt_gpu {
    int index;                  /* NVML / driver index; -1: a MIG instance */
    char name[MT_GPU_NAME_MAX]; /* e.g. "NVIDIA H200" */
    char uuid[MT_GPU_UUID_MAX]; /* "GPU-..." ("MIG-..."); "" = unknown */
    char id[MT_GPU_ID_MAX];     /* its name in tasks' CUDA_VISIBLE_DEVICES:
                                 * the index, or the entry as given */
    uint64_t mem_total;         /* bytes; 0 = unknown (procfs) */
};

struct mt_gpu_list {
    int n;
    struct mt_gpu v[MT_GPU_MAX];
    const char *source;         /* "nvml", "procfs" or "none"; static */
};

struct mt_gpu_opts {
    const char *nvml_path;  /* NULL = "libnvidia-ml.so.1" (dlopen search) */
    const char *proc_root;  /* NULL = "/proc" */
    const char *visible;    /* CUDA_VISIBLE_DEVICES; NULL = unset (all) */
    int nvml_timeout_ms;    /* <= 0: MT_GPU_NVML_TIMEOUT_MS */
};

/* One CUDA_VISIBLE_DEVICES entry. */
enum mt_gpu_ref_kind {
    MT_GPU_REF_INDEX = 1, /* "3" */
    MT_GPU_REF_UUID = 2,  /* "GPU-8932f937-d72c-..." or a prefix of one */
    MT_GPU_REF_MIG = 3,   /* "MIG-<uuid>" or "MIG-GPU-<uuid>/<gi>/<ci>" */
};

struct mt_gpu_ref {
    enum mt_gpu_ref_kind kind;
    int index;                 /* MT_GPU_REF_INDEX only */
    char text[MT_GPU_ID_MAX];  /* the entry, blanks trimmed */
};

/*
 * mt_gpu_parse_visible - parse a CUDA_VISIBLE_DEVICES value into at most max
 * entries, in order. "" , "-1" and "NoDevFiles" mean none. An entry is an
 * index, "GPU-" followed by hex digits and dashes (a UUID or a prefix of
 * one), or "MIG-" followed by more. Junk, an index or UUID given twice,
 * and entries past max are skipped with a warning written to warn
 * (borrowed, wlen bytes, may be NULL; "" when all went well). As CUDA
 * does, a negative entry ends the list.
 *
 * RET the number of entries stored in refs
 */
int mt_gpu_parse_visible(const char *s, struct mt_gpu_ref *refs, int max,
                         char *warn, size_t wlen);

/*
 * mt_gpu_match_uuid - the GPU of l whose UUID starts with prefix ("GPU-"
 * included; hex digits compare case-insensitively), as CUDA matches an
 * abbreviated UUID. GPUs with an unknown UUID never match.
 *
 * RET its position in l->v, -MT_ENOENT (none), -MT_EEXIST (ambiguous: more
 *     than one GPU has that prefix)
 */
int mt_gpu_match_uuid(const struct mt_gpu_list *l, const char *prefix);

/*
 * mt_gpu_accel_type - the accelerator type of a model name, Ray's rule
 * (notes 4.1): the first match of \w+\s+([A-Z0-9]+), i.e. the run of
 * capitals and digits after the first word: "NVIDIA H200" -> "H200",
 * "NVIDIA H100 80GB HBM3" -> "H100", "Tesla V100-SXM2-16GB" -> "V100".
 *
 * RET 0 with out set, or -MT_EINVAL when the name has no such part
 */
int mt_gpu_accel_type(const char *name, char *out, size_t len);

/*
 * mt_gpu_detect_nvml - enumerate GPUs through NVML at path (NULL = the
 * default soname). Devices NVML denies (NO_PERMISSION) are skipped.
 * On failure err (borrowed, errlen bytes) tells why, for a log line.
 *
 * RET 0 with out filled, or -MT_ENOENT (no library), -MT_EINVAL (missing
 * symbol), -MT_EIO (an NVML call failed)
 */
int mt_gpu_detect_nvml(const char *path, struct mt_gpu_list *out, char *err,
                       size_t errlen);

/*
 * mt_gpu_detect_procfs - GPUs from <root>/driver/nvidia/gpus/<bus id>/
 * information, in bus id order (index = position); memory unknown.
 *
 * RET 0 with out filled (possibly 0 GPUs), or -MT_ENOENT when the directory
 * does not exist
 */
int mt_gpu_detect_procfs(const char *root, struct mt_gpu_list *out);

/*
 * mt_gpu_filter_visible - keep only the GPUs refs (n entries) name, in that
 * order, each with the entry as its id. An index or UUID the node does not
 * have, an ambiguous prefix and a second entry for one GPU are warned about
 * and ignored. A MIG entry becomes a GPU of its own (index -1, uuid and id
 * the entry, the model of its parent GPU when the entry names it, else of
 * the node's first GPU); NVML is not asked about MIG instances, so their
 * memory is unknown. MIG entries need at least one detected GPU.
 */
void mt_gpu_filter_visible(struct mt_gpu_list *l, const struct mt_gpu_ref *refs,
                           int n);

/*
 * mt_gpu_detect - NVML, else procfs, else none; then CUDA_VISIBLE_DEVICES.
 * Logs what it found and why a source was skipped. Never fails: a broken
 * source means 0 GPUs. NVML runs on a helper thread that is abandoned if it
 * has not answered within o->nvml_timeout_ms (then procfs is used), so a
 * hung driver delays start-up by that much at most.
 */
void mt_gpu_detect(const struct mt_gpu_opts *o, struct mt_gpu_list *out);

#define MT_GPU_TYPE_LABEL "manta.io/accelerator-type"
#define MT_GPU_MEMORY_LABEL "manta.io/gpu-memory-mib"

/*
 * mt_gpu_apply - turn detected GPUs into the node's offer: *num_gpus (fixed
 * point; only when < 0, i.e. no --num-gpus) becomes the GPU count; labels
 * (borrowed) get MT_GPU_TYPE_LABEL from the first GPU's name and
 * MT_GPU_MEMORY_LABEL, the smallest per-GPU total memory in MiB, when known.
 * Labels the operator set are kept.
 */
void mt_gpu_apply(const struct mt_gpu_list *l, int64_t *num_gpus,
                  struct mt_kv_list *labels);

/*
 * mt_gpu_set_device_map - remember the identifier behind each offered GPU
 * instance (grant id i is device l->v[i].id), e.g. 0->"1", 1->"3" for
 * CUDA_VISIBLE_DEVICES=1,3, or 0->"GPU-b1..." for a UUID entry.
 * THREAD main, before the worker loop starts.
 */
void mt_gpu_set_device_map(const struct mt_gpu_list *l);

/*
 * mt_gpu_map_env - rewrite a task's CUDA_VISIBLE_DEVICES (env, borrowed)
 * from the head's grant ids (0..GPU-1 on this node) to device identifiers
 * per the map; ids past the map (--num-gpus above what was detected) and
 * values that are not a plain id list are kept. THREAD loop.
 */
void mt_gpu_map_env(struct mt_kv_list *env);

#endif /* MT_DETECT_GPU_H */
