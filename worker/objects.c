/* SPDX-License-Identifier: Apache-2.0 */
/*
 * objects.c -- the node's shared-memory object store, hosted by the worker:
 * created at start with --object-store-memory bytes, served to executors and
 * drivers on a Unix socket in the session dir, freed at exit. The store's
 * capacity is offered to the cluster as the object_store_memory resource.
 */
#include <stdlib.h>

#include "common/error.h"
#include "common/log.h"
#include "objstore/server.h"
#include "objstore/store.h"
#include "worker/worker.h"

int mt__worker_objects_start(struct mt_worker *w)
{
    struct mt_store_opts o = {0};
    int rc;

    o.capacity = w->cfg->object_store_memory;
    o.spill_dir = w->cfg->spill_dir;
    o.name = "manta-worker-objstore";
    rc = mt_store_create(&o, &w->store);
    if (rc < 0) {
        MT_ERROR("cannot create the object store (%llu bytes): %s",
                 (unsigned long long)o.capacity, mt_strerror(rc));
        return rc;
    }
    rc = mt_server_start(w->loop, w->store, w->cfg->object_store_socket,
                         &w->store_srv);
    if (rc < 0) {
        MT_ERROR("cannot serve the object store on %s: %s",
                 w->cfg->object_store_socket, mt_strerror(rc));
        mt_store_destroy(w->store);
        w->store = NULL;
        return rc;
    }
    MT_INFO("object store: %llu bytes on %s",
            (unsigned long long)o.capacity, w->cfg->object_store_socket);
    return 0;
}

void mt__worker_objects_stop(struct mt_worker *w)
{
    mt_server_stop(w->store_srv);
    w->store_srv = NULL;
}

void mt__worker_objects_destroy(struct mt_worker *w)
{
    mt_store_destroy(w->store);
    w->store = NULL;
}
