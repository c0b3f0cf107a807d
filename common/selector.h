/* SPDX-License-Identifier: Apache-2.0 */
/*
 * selector.h -- label selectors as plain C: the rule for a label key, the
 * owned form of a selector that tasks and bundles carry, and the text form
 * people write (`manta submit --label-selector 'zone in (a|b),!spot'`).
 *
 * A selector is a list of expressions that must all hold: equals,
 * not-equals, in, not-in, exists, not-exists (semantics of a missing key:
 * sched/labels.h). One set of limits and one key rule serve every module:
 * the SDK checks what a program sets, the head checks what a peer sends,
 * the scheduler matches.
 *
 * Allocation: plain malloc, -MT_ENOMEM on failure (the SDK embeds this).
 * THREAD: any; a selector is not shared between threads while changed.
 */
#ifndef MT_SELECTOR_H
#define MT_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

#define MT_SEL_MAX_EXPRS 8     /* expressions in one selector */
#define MT_SEL_MAX_VALUES 8    /* values in one IN / NOT_IN list */
#define MT_LABEL_KEY_MAX 253   /* bytes in a label key */
#define MT_LABEL_VALUE_MAX 4096 /* bytes in a selector value */

/* Values match proto LabelMatch.Op and the SDK's public mt_label_op. */
enum mt_label_op {
    MT_LABEL_EQ = 0,
    MT_LABEL_NE = 1,
    MT_LABEL_IN = 2,
    MT_LABEL_NOT_IN = 3,
    MT_LABEL_EXISTS = 4,
    MT_LABEL_NOT_EXISTS = 5,
    MT_LABEL_OP_COUNT
};

/* One expression. Every pointer is owned by the selector. */
struct mt_label_match {
    char *key;
    enum mt_label_op op;
    char **values;       /* 1 for EQ/NE, 1..8 for IN/NOT_IN, 0 else */
    size_t n;
};

/* A selector: all n expressions must hold. Zeroed = empty. */
struct mt_selector {
    struct mt_label_match v[MT_SEL_MAX_EXPRS];
    size_t n;
};

/*
 * mt_label_key_valid - a label key Manta accepts: 1 to MT_LABEL_KEY_MAX
 * bytes of [A-Za-z0-9._/-]. The key is the first len bytes of key.
 */
bool mt_label_key_valid(const char *key, size_t len);

/*
 * mt_selector_add - append one checked expression: a valid key, a known
 * op, the number of values the op takes, each value non-empty and at most
 * MT_LABEL_VALUE_MAX bytes.
 *
 * IN  key, values  borrowed, copied
 * OUT err          on failure, a one-line reason (may be NULL)
 * RET 0, -MT_EINVAL, -MT_ERANGE (already MT_SEL_MAX_EXPRS), -MT_ENOMEM;
 *     s is unchanged on failure
 */
int mt_selector_add(struct mt_selector *s, const char *key,
                    enum mt_label_op op, const char *const *values, size_t n,
                    char *err, size_t errlen);

/*
 * mt_selector_parse - append the expressions of text, comma-separated:
 *   key=v  key!=v  key in (a|b)  key notin (a|b)  key  !key
 * `key=a|b` and `key!=a|b` are short for in / notin; commas inside (...)
 * belong to the list, so `key in (a,b)` reads as well.
 *
 * OUT err  on failure, a one-line reason for people (may be NULL)
 * RET 0, -MT_EINVAL, -MT_ENOMEM; s is unchanged on failure
 */
int mt_selector_parse(const char *text, struct mt_selector *s, char *err,
                      size_t errlen);

/* mt_selector_copy - dst (empty) becomes a copy of src. RET 0, -MT_ENOMEM
 * (dst empty). */
int mt_selector_copy(struct mt_selector *dst, const struct mt_selector *src);

/* mt_selector_release - free what s owns; s is empty after. */
void mt_selector_release(struct mt_selector *s);

#endif /* MT_SELECTOR_H */
