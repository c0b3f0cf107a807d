/* SPDX-License-Identifier: Apache-2.0 */
/*
 * detect_tpu.h -- TPU detection on a worker: how many chips this host has,
 * which generation, and which slice it belongs to, turned into the node's
 * resources and labels (docs/accelerators.md, "TPU detection").
 *
 * Chips: the non-directory entries /dev/accel* (v2-v4; the directory
 * /dev/accel that NVIDIA's Blackwell drivers create does not count), else the
 * numeric /dev/vfio/<group> entries whose sysfs device
 * (/sys/kernel/iommu_groups/<group>/devices/ * /vendor) is Google's 0x1ae0;
 * a group whose sysfs is missing does not count ("fail closed"). The PCI
 * device id gives the generation (sched/tpu.h mt_tpu_gen_from_pci).
 *
 * Slice identity: TPU_ACCELERATOR_TYPE, TPU_NAME, TPU_WORKER_ID and
 * TPU_TOPOLOGY from the environment; what is missing comes from the GCE
 * metadata server (attributes accelerator-type, instance-id,
 * agent-worker-number, tpu-env), asked only when chips were found and
 * TPU_SKIP_MDS_QUERY is not "true", over plain HTTP with one deadline for
 * all the requests: a missing or slow server costs at most timeout_ms.
 *
 * Every input is re-rootable (dev_root, sys_root, metadata_url) so tests
 * build fake hardware in a temp dir.
 *
 * THREAD: any thread; blocking (file reads, at most timeout_ms of network).
 * Call it before the worker's loop starts.
 */
#ifndef MT_DETECT_TPU_H
#define MT_DETECT_TPU_H

#include <stdint.h>

#include "common/qty.h"
#include "sched/tpu.h"

#define MT_TPU_METADATA_URL_DEFAULT                                            \
    "http://metadata.google.internal/computeMetadata/v1/instance/attributes/"
#define MT_TPU_METADATA_TIMEOUT_MS 1000

struct mt_tpu_detect_opts {
    const char *dev_root;     /* NULL or "" = "/" */
    const char *sys_root;     /* NULL or "" = "/" */
    const char *metadata_url; /* NULL = MT_TPU_METADATA_URL_DEFAULT; "" = never ask */
    int timeout_ms;           /* whole metadata budget; <= 0 = default */
};

/* What was found. Empty strings / -1 mean "unknown". */
struct mt_tpu_info {
    uint32_t chips;          /* 0 = no TPU on this host */
    enum mt_tpu_gen gen;     /* from the pod type, else the PCI id */
    char pod_type[MT_TPU_NAME_MAX];   /* normalised, e.g. "v4-16" */
    char slice_name[128];
    int worker_id;           /* -1 unknown */
    char topology[MT_TPU_NAME_MAX];   /* e.g. "2x2x2" */
};

/*
 * mt_tpu_count_chips - chip count and PCI generation under the roots.
 *
 * IN  dev_root, sys_root   as in mt_tpu_detect_opts
 * OUT gen                  generation from the PCI device id, or NONE
 * RET the chip count (>= 0); never an error: unreadable input counts 0
 */
int mt_tpu_count_chips(const char *dev_root, const char *sys_root,
                       enum mt_tpu_gen *gen);

/*
 * mt_tpu_metadata_get - GET <url><key> with the header Metadata-Flavor:
 * Google, giving up at deadline_ms (CLOCK_MONOTONIC milliseconds).
 *
 * url must be "http://HOST[:PORT]/PATH/" (HOST numeric, "localhost" or
 * metadata.google.internal, which is 169.254.169.254 on GCE; any other
 * name is resolved with getaddrinfo, which is not bounded).
 *
 * OUT buf   the body, NUL-terminated (truncated to len-1)
 * RET body length, -MT_EUNAVAIL (refused, unreachable), -MT_ETIMEDOUT,
 *     -MT_ENOENT (a status other than 200), -MT_EPROTO (not HTTP),
 *     -MT_EINVAL (bad url)
 */
int mt_tpu_metadata_get(const char *url, const char *key, uint64_t deadline_ms,
                        char *buf, size_t len);

/*
 * mt_tpu_detect - chips, then (when chips > 0) the slice identity from env
 * and metadata. Malformed values (a pod type like "v4" or "foo-8", a bad
 * topology, a non-numeric worker id, a slice name with blanks or control
 * characters) are dropped with a warning; more chips than
 * MT_TPU_MAX_HOST_CHIPS are capped to it.
 *
 * OUT info
 * RET 0 (detection never fails the worker; a missing server is no error)
 */
int mt_tpu_detect(const struct mt_tpu_detect_opts *o, struct mt_tpu_info *info);

/*
 * mt_tpu_apply - add the TPU resources and labels of info (nothing when
 * info->chips is 0), never replacing an entry already present, so a
 * caller fills in the user's --resources/--labels after (resources) or
 * before (labels) and the user wins.
 *
 * Resources: TPU=<chips>, accelerator_type:TPU-<GEN>=1, <slice name>=1,
 * TPU-<pod type>-head=1 on worker 0. Labels: manta.io/accelerator-type,
 * manta.io/tpu-slice-name, manta.io/tpu-worker-id, manta.io/tpu-pod-type,
 * manta.io/tpu-topology.
 *
 * OWNERSHIP borrows info; the lists copy what they keep
 */
void mt_tpu_apply(const struct mt_tpu_info *info, struct mt_qty_list *res,
                  struct mt_kv_list *labels);

#endif /* MT_DETECT_TPU_H */
