/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ids.c -- object id helpers (equality, hashing, hex text) and the ids
 * with a kind: a letter that says what the id names, then a number in
 * hex. One table holds each kind's letter and name.
 */
#include "ids.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "hash.h"

bool mt_object_id_eq(const mt_object_id *a, const mt_object_id *b)
{
    return memcmp(a->b, b->b, MT_OBJECT_ID_LEN) == 0;
}

uint64_t mt_object_id_hash(const mt_object_id *id)
{
    return mt_hash_bytes(id->b, MT_OBJECT_ID_LEN);
}

char *mt_object_id_hex(const mt_object_id *id, char *buf)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < MT_OBJECT_ID_LEN; i++) {
        buf[2 * i] = digits[id->b[i] >> 4];
        buf[2 * i + 1] = digits[id->b[i] & 15];
    }
    buf[MT_OBJECT_ID_HEX_LEN] = '\0';
    return buf;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int mt_object_id_from_hex(const char *hex, mt_object_id *out)
{
    if (strlen(hex) != MT_OBJECT_ID_HEX_LEN)
        return -MT_EINVAL;
    for (size_t i = 0; i < MT_OBJECT_ID_LEN; i++) {
        int hi = hexval(hex[2 * i]);
        int lo = hexval(hex[2 * i + 1]);

        if (hi < 0 || lo < 0)
            return -MT_EINVAL;
        out->b[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

mt_object_id mt_object_id_from_u64(uint64_t a, uint64_t b)
{
    mt_object_id id;

    memset(&id, 0, sizeof(id));
    for (int i = 0; i < 8; i++) {
        id.b[i] = (uint8_t)(a >> (8 * i));
        id.b[8 + i] = (uint8_t)(b >> (8 * i));
    }
    return id;
}

/* ---- ids with a kind -------------------------------------------------- */

static const struct {
    char letter; /* 0: not a numbered kind */
    const char *name;
} kinds[] = {
    [MT_ID_NONE] = {0, "unknown"},
    [MT_ID_TASK] = {'t', "task"},
    [MT_ID_ACTOR] = {'a', "actor"},
    [MT_ID_PG] = {'p', "placement group"},
    [MT_ID_GANG] = {'g', "gang"},
    [MT_ID_OBJECT] = {0, "object"},
};

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static char letter_of(enum mt_id_kind kind)
{
    return (size_t)kind < N_KINDS && kinds[kind].letter ? kinds[kind].letter
                                                        : '?';
}

char *mt_num_id(enum mt_id_kind kind, uint64_t num,
                char out[MT_NUM_ID_LEN + 1])
{
    snprintf(out, MT_NUM_ID_LEN + 1, "%c%015" PRIx64, letter_of(kind),
             num & MT_NUM_ID_MAX);
    return out;
}

/* n hex digits of s (either case) to a number. RET 0, -MT_EINVAL. */
static int hex_num(const char *s, size_t n, uint64_t *num)
{
    uint64_t v = 0;

    for (size_t i = 0; i < n; i++) {
        int d = hexval(s[i]);

        if (d < 0)
            return -MT_EINVAL;
        v = v << 4 | (uint64_t)d;
    }
    *num = v;
    return 0;
}

int mt_num_id_parse(enum mt_id_kind kind, const char *id, uint64_t *num)
{
    if (!id || strlen(id) != MT_NUM_ID_LEN || id[0] != letter_of(kind))
        return -MT_EINVAL;
    return hex_num(id + 1, MT_NUM_ID_LEN - 1, num);
}

int mt_num_id_as(enum mt_id_kind from, const char *id, enum mt_id_kind to,
                 char out[MT_NUM_ID_LEN + 1])
{
    uint64_t num;

    if (mt_num_id_parse(from, id, &num) < 0)
        return -MT_EINVAL;
    mt_num_id(to, num, out);
    return 0;
}

enum mt_id_kind mt_id_kind_of(const char *id)
{
    uint64_t num;
    size_t len = id ? strlen(id) : 0;

    if (len == MT_OBJECT_ID_HEX_LEN) {
        for (size_t i = 0; i < len; i++)
            if (hexval(id[i]) < 0)
                return MT_ID_NONE;
        return MT_ID_OBJECT;
    }
    if (len != MT_NUM_ID_LEN || hex_num(id + 1, len - 1, &num) < 0)
        return MT_ID_NONE;
    for (size_t k = 0; k < N_KINDS; k++)
        if (kinds[k].letter && kinds[k].letter == id[0])
            return (enum mt_id_kind)k;
    return MT_ID_NONE;
}

const char *mt_id_kind_name(enum mt_id_kind kind)
{
    return (size_t)kind < N_KINDS ? kinds[kind].name : kinds[0].name;
}

/* "a" or "an", for the kind's name. */
static const char *article(enum mt_id_kind kind)
{
    return strchr("aeiou", mt_id_kind_name(kind)[0]) ? "an" : "a";
}

int mt_id_check_kind(const char *id, enum mt_id_kind want, char *why,
                     size_t len)
{
    enum mt_id_kind is = mt_id_kind_of(id);

    if (is == MT_ID_NONE || is == want)
        return 0;
    snprintf(why, len, "%s is %s %s id, not %s %s id", id, article(is),
             mt_id_kind_name(is), article(want), mt_id_kind_name(want));
    return -MT_EINVAL;
}

static const char result_tag[12] = {'m', 'a', 'n', 't', 'a', '-',
                                    'r', 'e', 's', 'u', 'l', 't'};

bool mt_object_id_is_driver_result(const mt_object_id *id)
{
    uint64_t num = 0;

    if (memcmp(id->b, result_tag, sizeof(result_tag)) != 0)
        return false;
    for (int i = 0; i < 8; i++)
        num = num << 8 | id->b[12 + i];
    return num <= MT_NUM_ID_MAX && (num & MT_NUM_ID_DRIVER_BIT);
}

int mt_object_id_for_task(const char *task_id, mt_object_id *out)
{
    const char *tag = result_tag;
    uint64_t num;

    if (mt_num_id_parse(MT_ID_TASK, task_id, &num) < 0)
        return -MT_EINVAL;
    memcpy(out->b, tag, sizeof(result_tag));
    for (int i = 0; i < 8; i++)
        out->b[12 + i] = (uint8_t)(num >> (8 * (7 - i)));
    return 0;
}
