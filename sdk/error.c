/* SPDX-License-Identifier: Apache-2.0 */
/*
 * error.c -- error text for SDK users and each thread's last error message.
 *
 * The last error is kept per thread and per client in a small thread-local
 * table (no allocation, so recording an out-of-memory failure cannot fail
 * itself): MT_ERR_SLOTS clients per thread, the oldest slot reused. Slots
 * are keyed by the client's serial number, never by its address, so a new
 * client at a freed client's address does not inherit its message.
 * Serial 0 stands for "no client" (mt_client_connect, option setters).
 */
#include "sdk/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "manta/manta.h"

#define MT_ERR_SLOTS 8
#define MT_ERR_LEN 512

struct err_slot {
    uint64_t serial;
    bool used;
    char msg[MT_ERR_LEN];
};

static __thread struct err_slot slots[MT_ERR_SLOTS];
static __thread unsigned next_slot;

static uint64_t serial_of(const struct mt_client *c)
{
    return c ? c->serial : 0;
}

static struct err_slot *find_slot(uint64_t serial)
{
    for (int i = 0; i < MT_ERR_SLOTS; i++)
        if (slots[i].used && slots[i].serial == serial)
            return &slots[i];
    return NULL;
}

int mt__set_error(const struct mt_client *c, int err, const char *fmt, ...)
{
    uint64_t serial = serial_of(c);
    struct err_slot *s = find_slot(serial);
    va_list ap;

    if (!s) {
        s = &slots[next_slot++ % MT_ERR_SLOTS];
        s->serial = serial;
        s->used = true;
    }
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
    va_end(ap);
    for (char *p = s->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return err;
}

int mt__check_id(const struct mt_client *c, const char *id,
                 enum mt_id_kind want)
{
    char why[128];

    if (mt_id_check_kind(id, want, why, sizeof(why)) < 0)
        return mt__set_error(c, -MT_EINVAL, "%s", why);
    return 0;
}

void mt__clear_error(const struct mt_client *c)
{
    struct err_slot *s = find_slot(serial_of(c));

    if (s)
        s->msg[0] = '\0';
}

const char *mt_client_last_error(const mt_client_t *c)
{
    struct err_slot *s = find_slot(serial_of(c));

    return s ? s->msg : "";
}

const char *mt_error_string(int err)
{
    if (err > 0)
        err = -err;
    if (err == 0)
        return "success";
    return mt_strerror(err);
}

const char *mt_error_name(int err)
{
    if (err > 0)
        err = -err;
    return mt_err_name(err);
}

bool mt_error_retryable(int err)
{
    if (err > 0)
        err = -err;
    return mt_err_retryable(err);
}

const char *mt_sdk_version(void)
{
    return MT_VERSION;
}
