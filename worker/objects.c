/* SPDX-License-Identifier: Apache-2.0 */
/*
 * objects.c -- hosting the node's object store (see objects.h): the store
 * itself (objstore/store.h) and the Unix socket server its clients use
 * (objstore/server.h), started and stopped together.
 */
#include "worker/objects.h"

#include <stdlib.h>

#include "common/error.h"
#include "common/log.h"
#include "objstore/server.h"
#include "objstore/store.h"

int mt_objects_start(struct mt_objects *o, uv_loop_t *loop,
                     const struct mt_objects_opts *opts)
{
    struct mt_store_opts so = {0};
    int rc;

    so.capacity = opts->capacity;
    so.spill_dir = opts->spill_dir;
    so.name = "manta-worker-objstore";
    rc = mt_store_create(&so, &o->store);
    if (rc < 0) {
        MT_ERROR("cannot create the object store (%llu bytes): %s",
                 (unsigned long long)so.capacity, mt_strerror(rc));
        return rc;
    }
    rc = mt_server_start(loop, o->store, opts->socket, &o->srv);
    if (rc < 0) {
        MT_ERROR("cannot serve the object store on %s: %s", opts->socket,
                 mt_strerror(rc));
        mt_store_destroy(o->store);
        o->store = NULL;
        return rc;
    }
    MT_INFO("object store: %llu bytes on %s",
            (unsigned long long)so.capacity, opts->socket);
    return 0;
}

void mt_objects_stop(struct mt_objects *o)
{
    mt_server_stop(o->srv);
    o->srv = NULL;
}

void mt_objects_release(struct mt_objects *o)
{
    mt_store_destroy(o->store);
    o->store = NULL;
}
