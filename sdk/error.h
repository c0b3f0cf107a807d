/* SPDX-License-Identifier: Apache-2.0 */
/*
 * error.h -- the calls of error.c that record each thread's last error on
 * a client (or on none). The user-facing side is manta/error.h (the codes
 * and their text) and mt_client_last_error() in manta/client.h.
 */
#ifndef MT_SDK_ERROR_H
#define MT_SDK_ERROR_H

#include "common/ids.h"
#include "sdk/client_int.h"

/* mt__set_error - record fmt as this thread's last error on c (or NULL)
 * and return err. */
int mt__set_error(const struct mt_client *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* mt__check_id - refuse an id whose shape says it names another kind of
 * thing than want (common/ids.h), recording "ID is a placement group id,
 * not a task id" on c (or NULL). Ids of no known kind pass: the head then
 * says "no such ...". RET 0, -MT_EINVAL. */
int mt__check_id(const struct mt_client *c, const char *id,
                 enum mt_id_kind want);

/* mt__clear_error - forget this thread's last error on c. */
void mt__clear_error(const struct mt_client *c);

#endif /* MT_SDK_ERROR_H */
