/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_qty.c -- the quantity parsers of common/qty.h on arbitrary text:
 * numbers ("0.25"), byte sizes ("4GiB"), the JSON resource map the CLI and
 * SDK take ('{"GPU": 2}') and "k=v,k2=v2" label lists.
 *
 * Properties: a parsed quantity formats and parses back to itself; every
 * entry the JSON parser keeps has a quantity >= 0 and can be found by its
 * name. (Names are not checked here: any quoted string is kept, as
 * tests/unit/common/test_qty.c expects; the head refuses bad ones.)
 */
#include <stdio.h>

#include "common/qty.h"
#include "tests/fuzz/fuzz.h"

static void qty_round_trip(const char *s)
{
    char buf[32];
    int64_t q, again;

    if (mt_qty_parse(s, &q) < 0)
        return;
    MT_FUZZ_CHECK(q >= 0);
    mt_qty_format(q, buf, sizeof(buf));
    MT_FUZZ_CHECK(mt_qty_parse(buf, &again) == 0 && again == q);
}

static void bytes_once(const char *s)
{
    char buf[32];
    uint64_t b;

    if (mt_bytes_parse(s, &b) == 0)
        mt_bytes_format((double)b, buf, sizeof(buf));
}

static void json_once(const char *s)
{
    struct mt_qty_list l = {0};
    struct mt_qty_list copy = {0};
    char err[128];

    if (mt_qty_parse_json(s, &l, err, sizeof(err)) == 0) {
        for (size_t i = 0; i < l.n; i++) {
            MT_FUZZ_CHECK(l.v[i].qty >= 0);
            MT_FUZZ_CHECK(mt_qty_list_get(&l, l.v[i].name) == l.v[i].qty);
        }
        MT_FUZZ_CHECK(mt_qty_list_copy(&copy, &l) == 0 && copy.n == l.n);
    }
    mt_qty_list_release(&copy);
    mt_qty_list_release(&l);
}

static void kv_once(const char *s)
{
    struct mt_kv_list l = {0};
    char err[128];

    if (mt_kv_parse(s, &l, err, sizeof(err)) == 0)
        for (size_t i = 0; i < l.n; i++)
            MT_FUZZ_CHECK(mt_kv_list_get(&l, l.v[i].key) == l.v[i].value);
    mt_kv_list_release(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = mt_fuzz_str(data, size);

    qty_round_trip(s);
    bytes_once(s);
    json_once(s);
    kv_once(s);
    mt_qty_valid_name(s);
    free(s);
    return 0;
}
