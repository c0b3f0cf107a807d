/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resources.h -- fixed-point resource quantities, resource names and the small
 * resource sets that tasks and bundles request.
 *
 * A quantity is an int64_t in 1/10000 of a unit (MT_RES_SCALE), so 0.18 GPU is
 * 1800 and sums never drift (house style H11, Ray fixed_point.h). Resource
 * names are interned into small integer ids by a table the scheduler owns; the
 * first ids are fixed (CPU, GPU, TPU, memory, object_store_memory) and custom
 * names follow. A request is a struct mt_res_set: at most MT_RES_SET_MAX
 * (id, quantity) pairs kept sorted by id, so equal shapes compare equal.
 *
 * Rules a request must follow (mt_res_set_validate):
 *   - quantities are > 0 (zero entries are never stored, negatives are EINVAL);
 *   - GPU below 1 is a fraction of one device, above 1 must be whole;
 *   - TPU is 1, 2, 4 or 8 whole chips per host, never fractional.
 *
 * THREAD: not thread safe; the owner (one loop thread) serialises calls.
 */
#ifndef MT_SCHED_RESOURCES_H
#define MT_SCHED_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_RES_SCALE 10000     /* fixed-point unit: 1.0 == 10000 */
#define MT_RES_MAX 64          /* distinct resource names per scheduler */
#define MT_RES_SET_MAX 8       /* entries in one request */
#define MT_MAX_GPUS 16         /* GPU devices per node */
#define MT_MAX_TPU_CHIPS 8     /* TPU chips per host (MT_TPU_MAX_HOST_CHIPS) */

/* The built-in resource ids; custom names get ids from MT_RES_NBUILTIN on. */
enum mt_res_builtin {
    MT_RES_CPU = 0,
    MT_RES_GPU = 1,
    MT_RES_TPU = 2,
    MT_RES_MEMORY = 3,
    MT_RES_OBJSTORE = 4,    /* "object_store_memory" */
    MT_RES_NBUILTIN = 5
};

struct mt_res_item {
    uint16_t id;            /* interned resource id */
    int64_t qty;            /* fixed-point, > 0 */
};

/* A request shape. Plain value: copy it freely. Kept sorted by id. */
struct mt_res_set {
    uint8_t n;                              /* used entries */
    struct mt_res_item it[MT_RES_SET_MAX];  /* sorted by id, no duplicates */
};

/* The interning table of resource names. */
struct mt_res_names;

/* ---- Fixed-point helpers ---- */

/* mt_res_from_double - round v to the nearest 1/10000. THREAD any. */
int64_t mt_res_from_double(double v);

/* mt_res_to_double - the quantity as a double, for display. THREAD any. */
double mt_res_to_double(int64_t q);

/*
 * mt_res_parse - parse a decimal quantity such as "2", "0.18", "1.5".
 *
 * IN  text   decimal digits with at most 4 fractional digits, optional '-'
 * OUT out    the fixed-point value
 * RET 0, -MT_EINVAL (syntax, more than 4 decimals), -MT_ERANGE (overflow)
 * THREAD any
 */
int mt_res_parse(const char *text, int64_t *out);

/*
 * mt_res_format - print q as the shortest decimal ("1", "0.18").
 *
 * RET the length written (snprintf semantics)
 * THREAD any
 */
int mt_res_format(int64_t q, char *buf, size_t len);

/* ---- Resource sets ---- */

/* mt_res_set_init - make s empty. */
void mt_res_set_init(struct mt_res_set *s);

/*
 * mt_res_set_add - add qty of resource id to s (merging a repeated id).
 *
 * RET 0, -MT_EINVAL (negative qty, id out of range),
 *     -MT_ENOSPC (more than MT_RES_SET_MAX distinct ids)
 * NOTE a zero quantity is accepted and stores nothing
 */
int mt_res_set_add(struct mt_res_set *s, int id, int64_t qty);

/* mt_res_set_get - the quantity of id in s, 0 when absent. */
int64_t mt_res_set_get(const struct mt_res_set *s, int id);

/* mt_res_set_equal - true when both sets hold the same ids and quantities. */
bool mt_res_set_equal(const struct mt_res_set *a, const struct mt_res_set *b);

/*
 * mt_res_set_validate - check a request against the rules in the file top.
 *
 * IN  s       the request (built by mt_res_set_add or filled by hand)
 * IN  nnames  number of ids interned so far; larger ids are unknown
 * RET 0, -MT_EINVAL (unsorted/duplicate ids, qty <= 0, unknown id,
 *     GPU > 1 not whole, TPU not in {1, 2, 4, 8})
 */
int mt_res_set_validate(const struct mt_res_set *s, int nnames);

/* mt_res_set_mask - bitmask of the ids present in s (bit id). */
uint64_t mt_res_set_mask(const struct mt_res_set *s);

/* ---- Name interning ---- */

/*
 * mt_res_names_create - a table holding the built-in names.
 *
 * OUT out  the table; free with mt_res_names_destroy()
 * RET 0, -MT_ENOMEM
 */
int mt_res_names_create(struct mt_res_names **out);

/* mt_res_names_destroy - free t (NULL is fine). */
void mt_res_names_destroy(struct mt_res_names *t);

/*
 * mt_res_names_intern - the id of name, adding it when new.
 *
 * RET id >= 0, -MT_EINVAL (empty or over 63 characters),
 *     -MT_ENOSPC (MT_RES_MAX names already), -MT_ENOMEM
 * OWNERSHIP borrows name (the table keeps a copy)
 */
int mt_res_names_intern(struct mt_res_names *t, const char *name);

/* mt_res_names_lookup - the id of name. RET id >= 0 or -MT_ENOENT. */
int mt_res_names_lookup(const struct mt_res_names *t, const char *name);

/* mt_res_names_name - the name of id, or NULL when id is unknown. */
const char *mt_res_names_name(const struct mt_res_names *t, int id);

/* mt_res_names_count - how many ids are interned. */
int mt_res_names_count(const struct mt_res_names *t);

/*
 * mt_res_set_format - print s as "{CPU: 1, GPU: 0.5}".
 *
 * RET the length written (snprintf semantics)
 */
int mt_res_set_format(const struct mt_res_names *t, const struct mt_res_set *s,
                      char *buf, size_t len);

#endif /* MT_SCHED_RESOURCES_H */
