/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_selector.c -- label selectors as people write them
 * (`--label-selector 'zone in (a|b),!spot'`, common/selector.h) and the
 * label key rule, on arbitrary text.
 *
 * Properties: a selector is unchanged by a failed parse; what a parse
 * keeps obeys the limits (expressions, values, keys) and copies whole.
 */
#include "common/selector.h"
#include "tests/fuzz/fuzz.h"

static void check_sel(const struct mt_selector *s)
{
    MT_FUZZ_CHECK(s->n <= MT_SEL_MAX_EXPRS);
    for (size_t i = 0; i < s->n; i++) {
        const struct mt_label_match *m = &s->v[i];

        MT_FUZZ_CHECK(mt_label_key_valid(m->key, strlen(m->key)));
        MT_FUZZ_CHECK((unsigned)m->op < MT_LABEL_OP_COUNT);
        MT_FUZZ_CHECK(m->n <= MT_SEL_MAX_VALUES);
        for (size_t k = 0; k < m->n; k++)
            MT_FUZZ_CHECK(m->values[k] && *m->values[k] &&
                          strlen(m->values[k]) <= MT_LABEL_VALUE_MAX);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mt_selector s, copy;
    char *text = mt_fuzz_str(data, size);
    char err[128];
    size_t before;

    memset(&s, 0, sizeof(s));
    memset(&copy, 0, sizeof(copy));
    mt_label_key_valid((const char *)data, size);
    /* Twice into one selector: the second parse appends (or fails whole). */
    for (int round = 0; round < 2; round++) {
        before = s.n;
        if (mt_selector_parse(text, &s, err, sizeof(err)) < 0)
            MT_FUZZ_CHECK(s.n == before);
        check_sel(&s);
    }
    if (mt_selector_copy(&copy, &s) == 0)
        MT_FUZZ_CHECK(copy.n == s.n);
    mt_selector_release(&copy);
    mt_selector_release(&s);
    free(text);
    return 0;
}
