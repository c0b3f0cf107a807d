/* SPDX-License-Identifier: Apache-2.0 */
/*
 * labels.h -- node labels and label selectors.
 *
 * Nodes carry key=value labels (manta.io/node-id, manta.io/accelerator-type,
 * manta.io/tpu-slice-name, manta.io/tpu-worker-id, ... and user labels).
 * Tasks and bundles select nodes with a list of expressions that must all
 * hold: equals, not-equals, in, not-in, exists, not-exists. Callers describe
 * labels and selectors with borrowed strings (struct mt_label,
 * struct mt_label_selector); the scheduler compiles them once into interned
 * ids (struct mt_sel) so matching a node is integer compares only.
 *
 * Semantics of a missing key: EQ and IN fail, NE and NOT_IN hold (as in
 * Kubernetes and Ray), EXISTS fails, NOT_EXISTS holds.
 *
 * THREAD: not thread safe.
 */
#ifndef MT_SCHED_LABELS_H
#define MT_SCHED_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/selector.h" /* enum mt_label_op, MT_SEL_MAX_* */

/* Well-known label keys. */
#define MT_LABEL_NODE_ID "manta.io/node-id"
#define MT_LABEL_ACCEL_TYPE "manta.io/accelerator-type"
#define MT_LABEL_TPU_SLICE "manta.io/tpu-slice-name"
#define MT_LABEL_TPU_WORKER "manta.io/tpu-worker-id"
#define MT_LABEL_TPU_POD_TYPE "manta.io/tpu-pod-type"
#define MT_LABEL_TPU_TOPOLOGY "manta.io/tpu-topology"

struct mt_label {
    const char *key;
    const char *value;
};

struct mt_label_expr {
    const char *key;
    enum mt_label_op op;
    const char *const *values;   /* 1 for EQ/NE, 1..8 for IN/NOT_IN, 0 else */
    size_t nvalues;
};

struct mt_label_selector {
    const struct mt_label_expr *exprs;
    size_t n;                    /* 0..MT_SEL_MAX_EXPRS */
};

/* ---- String interning ---- */

struct mt_strtab;

/* mt_strtab_create - empty table. RET 0, -MT_ENOMEM. Free with _destroy. */
int mt_strtab_create(struct mt_strtab **out);
void mt_strtab_destroy(struct mt_strtab *t);

/*
 * mt_strtab_intern - the id (>= 1) of s, adding it when new.
 *
 * RET id >= 1, -MT_EINVAL (NULL), -MT_ENOMEM
 * OWNERSHIP borrows s; the table keeps a copy
 */
int64_t mt_strtab_intern(struct mt_strtab *t, const char *s);

/* mt_strtab_lookup - the id of s, or 0 when s was never interned. */
uint32_t mt_strtab_lookup(const struct mt_strtab *t, const char *s);

/* mt_strtab_str - the string of id, or NULL. Valid until destroy. */
const char *mt_strtab_str(const struct mt_strtab *t, uint32_t id);

/* ---- Compiled labels and selectors ---- */

struct mt_label_id {
    uint32_t key;
    uint32_t value;
};

/* A node's labels, sorted by key, one value per key. */
struct mt_labelset {
    uint32_t n;
    struct mt_label_id *v;       /* owned; free with mt_labelset_release */
};

/* A compiled selector. Plain value, comparable with memcmp after init. */
struct mt_sel_expr {
    uint32_t key;
    uint8_t op;
    uint8_t nvalues;
    uint32_t values[MT_SEL_MAX_VALUES];
};

struct mt_sel {
    uint8_t n;
    struct mt_sel_expr e[MT_SEL_MAX_EXPRS];
};

/*
 * mt_labelset_build - intern labels into ls.
 *
 * RET 0, -MT_EINVAL (NULL or empty key, NULL value, repeated key),
 *     -MT_ENOMEM
 * OWNERSHIP borrows labels; ls owns its array (mt_labelset_release)
 */
int mt_labelset_build(struct mt_strtab *t, const struct mt_label *labels,
                      size_t n, struct mt_labelset *ls);
void mt_labelset_release(struct mt_labelset *ls);

/* mt_labelset_get - the value id of key in ls, 0 when absent. */
uint32_t mt_labelset_get(const struct mt_labelset *ls, uint32_t key);

/*
 * mt_sel_compile - turn a caller selector into interned form.
 *
 * IN  in   NULL or a selector (NULL and n == 0 both mean "any node")
 * OUT out  zero-filled then set, so equal selectors are memcmp-equal
 * RET 0, -MT_EINVAL (unknown op, too many exprs/values, wrong value count,
 *     NULL strings), -MT_ENOMEM
 */
int mt_sel_compile(struct mt_strtab *t, const struct mt_label_selector *in,
                   struct mt_sel *out);

/* mt_sel_match - true when every expression of sel holds for ls. */
bool mt_sel_match(const struct mt_sel *sel, const struct mt_labelset *ls);

#endif /* MT_SCHED_LABELS_H */
