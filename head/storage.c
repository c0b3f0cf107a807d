/* SPDX-License-Identifier: Apache-2.0 */
/*
 * storage.c -- picks a storage backend and wraps its ops (see storage.h);
 * keeps the spec it was opened with, password masked, for status and logs.
 */
#include "head/storage.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"

static const struct mt_storage_ops *const backends[] = {
    &mt_storage_memory,
    &mt_storage_file,
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
        s->spec = mt_storage_spec_masked(spec);
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
    free(s->spec);
    free(s);
}

char *mt_storage_spec_masked(const char *spec)
{
    const char *sep = strstr(spec, "://");
    const char *auth = sep ? sep + 3 : NULL;
    const char *at = auth ? strrchr(auth, '@') : NULL;
    const char *colon;

    if (!at)
        return mt_xstrdup(spec);
    colon = memchr(auth, ':', (size_t)(at - auth));
    if (!colon) /* "name://pass@host" */
        return mt_xasprintf("%.*s***%s", (int)(auth - spec), spec, at);
    return mt_xasprintf("%.*s:***%s", (int)(colon - spec), spec, at);
}

void mt_storage_stats(const struct mt_storage *s,
                      struct mt_storage_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->healthy = true;
    if (s->ops->stats)
        s->ops->stats(s->st, out);
    out->backend = s->ops->name;
    out->spec = s->spec;
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
