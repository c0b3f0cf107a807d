/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage.c -- picks a storage backend and wraps its ops (see storage.h).
 */
#include "head/storage.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"

static const struct mt_storage_ops *const backends[] = {
    &mt_storage_memory,
    &mt_storage_redis,
};

int mt_storage_open(uv_loop_t *loop, const char *spec, struct mt_storage **out)
{
    const char *uri = "";
    size_t name_len;
    struct mt_storage *s;
    int rc;

    if (!spec || !*spec)
        spec = "memory";
    name_len = strcspn(spec, ":");
    if (spec[name_len] == ':')
        uri = spec + name_len + (strncmp(spec + name_len, "://", 3) == 0 ? 3
                                                                         : 1);
    for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
        if (strlen(backends[i]->name) != name_len ||
            strncmp(backends[i]->name, spec, name_len) != 0)
            continue;
        s = calloc(1, sizeof(*s));
        if (!s)
            return -MT_ENOMEM;
        s->ops = backends[i];
        rc = s->ops->open(loop, uri, &s->st);
        if (rc < 0) {
            free(s);
            return rc;
        }
        *out = s;
        return 0;
    }
    return -MT_EINVAL;
}

void mt_storage_close(struct mt_storage *s)
{
    if (!s)
        return;
    s->ops->close(s->st);
    free(s);
}

static void log_failure(void *arg, int err)
{
    if (err)
        MT_WARN("storage write failed: %s", mt_strerror(err));
}

int mt_storage_put(struct mt_storage *s, const char *table, const char *key,
                   const void *val, size_t len, mt_storage_done_fn done,
                   void *arg)
{
    return s->ops->put(s->st, table, key, val, len, done ? done : log_failure,
                       arg);
}

int mt_storage_del(struct mt_storage *s, const char *table, const char *key,
                   mt_storage_done_fn done, void *arg)
{
    return s->ops->del(s->st, table, key, done ? done : log_failure, arg);
}

int mt_storage_scan(struct mt_storage *s, const char *table,
                    mt_storage_row_fn row, mt_storage_done_fn done, void *arg)
{
    return s->ops->scan(s->st, table, row, done ? done : log_failure, arg);
}
