/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ids.c -- object id helpers: equality, hashing, hex text.
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

char *mt_num_id(uint64_t num, char out[MT_NUM_ID_LEN + 1])
{
    snprintf(out, MT_NUM_ID_LEN + 1, "%016" PRIx64, num);
    return out;
}

int mt_num_id_parse(const char *id, uint64_t *num)
{
    uint64_t v = 0;

    if (!id || strlen(id) != MT_NUM_ID_LEN)
        return -MT_EINVAL;
    for (int i = 0; i < MT_NUM_ID_LEN; i++) {
        int c = id[i], d;

        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -MT_EINVAL;
        v = v << 4 | (uint64_t)d;
    }
    *num = v;
    return 0;
}

int mt_object_id_for_task(const char *task_id, mt_object_id *out)
{
    static const char tag[12] = {'m', 'a', 'n', 't', 'a', '-',
                                 'r', 'e', 's', 'u', 'l', 't'};
    uint64_t num;

    if (mt_num_id_parse(task_id, &num) < 0)
        return -MT_EINVAL;
    memcpy(out->b, tag, sizeof(tag));
    for (int i = 0; i < 8; i++)
        out->b[12 + i] = (uint8_t)(num >> (8 * (7 - i)));
    return 0;
}
