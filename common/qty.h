/* SPDX-License-Identifier: Apache-2.0 */
/*
 * qty.h -- fixed-point resource quantities (1/10000 of a unit, DESIGN.md
 * section 4) and the small parsers the command-line tools share: resource
 * maps given as JSON ('{"GPU": 2, "accel": 0.5}'), label lists ("k=v,k2=v2")
 * and byte sizes ("4GiB").
 */
#ifndef MT_QTY_H
#define MT_QTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_QTY_SCALE 10000

/* A named quantity. name is owned by whoever owns the list. */
struct mt_qty_entry {
    char *name;
    int64_t qty;
};

struct mt_qty_list {
    struct mt_qty_entry *v;
    size_t n;
    size_t cap;
};

struct mt_kv {
    char *key;
    char *value;
};

struct mt_kv_list {
    struct mt_kv *v;
    size_t n;
    size_t cap;
};

/*
 * mt_qty_parse - "2", "0.25", "1e3" to fixed point, rounding to 1/10000.
 * RET 0 or -MT_EINVAL (not a number, negative, too large)
 */
int mt_qty_parse(const char *s, int64_t *out);

/* mt_qty_from_double - RET fixed point for v, or -1 if negative/too big. */
int64_t mt_qty_from_double(double v);

/*
 * mt_qty_format - "2", "0.25", "0.0001": shortest exact decimal.
 * OUT buf  at least 32 bytes
 */
char *mt_qty_format(int64_t q, char *buf, size_t len);

/* mt_bytes_format - 25769803776 -> "24.0GiB". OUT buf at least 16 bytes. */
char *mt_bytes_format(double bytes, char *buf, size_t len);

/*
 * mt_bytes_parse - "1024", "512MiB", "4G", "1.5GiB" to bytes.
 * RET 0 or -MT_EINVAL
 */
int mt_bytes_parse(const char *s, uint64_t *out);

/*
 * mt_qty_valid_name - a resource name Manta accepts: 1-128 characters of
 * [A-Za-z0-9._-/:]. THREAD any.
 */
bool mt_qty_valid_name(const char *s);

/*
 * List helpers. _put adds or replaces and returns 0 or -MT_ENOMEM (for
 * the SDK); _set does the same and aborts on out-of-memory (daemons);
 * _copy appends src's entries to dst (RET 0, or -MT_ENOMEM with dst
 * released); get returns -1 (NULL) when absent. Keys are copied.
 */
int mt_qty_list_put(struct mt_qty_list *l, const char *name, int64_t qty);
void mt_qty_list_set(struct mt_qty_list *l, const char *name, int64_t qty);
int mt_qty_list_copy(struct mt_qty_list *dst, const struct mt_qty_list *src);
int64_t mt_qty_list_get(const struct mt_qty_list *l, const char *name);
void mt_qty_list_release(struct mt_qty_list *l);
int mt_kv_list_put(struct mt_kv_list *l, const char *key, const char *value);
void mt_kv_list_set(struct mt_kv_list *l, const char *key, const char *value);
int mt_kv_list_copy(struct mt_kv_list *dst, const struct mt_kv_list *src);
const char *mt_kv_list_get(const struct mt_kv_list *l, const char *key);
void mt_kv_list_release(struct mt_kv_list *l);

/*
 * mt_qty_parse_json - parse a flat JSON object of name -> non-negative number
 * into l (entries added or replaced).
 *
 * OUT err  on failure, a one-line reason (may be NULL)
 * RET 0 or -MT_EINVAL
 */
int mt_qty_parse_json(const char *text, struct mt_qty_list *l, char *err,
                      size_t errlen);

/*
 * mt_kv_parse - parse "k=v,k2=v2" into l. Keys follow mt_label_key_valid
 * (common/selector.h); values may be empty and may not contain ','.
 * RET 0 or -MT_EINVAL (err says why)
 */
int mt_kv_parse(const char *text, struct mt_kv_list *l, char *err,
                size_t errlen);

#endif /* MT_QTY_H */
