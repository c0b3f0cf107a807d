/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_objects.c -- DeleteObjects: the head found no reference left to
 * these objects, so this node's copies go. A copy a reader still has
 * mapped (a driver's buffer, an executor's argument) disappears for new
 * gets at once and its space is freed at the last release (mt_store_delete).
 * An object still being written (a pull in flight) is left alone: the head
 * forgets it, and the finished copy is evictable space only when flagged.
 *
 * THREAD: the worker's loop thread.
 */
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "objstore/store.h"
#include "proto/convert.h"
#include "proto/services.h"
#include "worker/rpc_services.h"
#include "worker_service.pb-c.h"

#define MAX_IDS 100000

static void h_delete_objects(struct mt_rpc_call *call,
                             const ProtobufCMessage *m, void *arg)
{
    const Manta__DeleteObjectsRequest *req =
        (const Manta__DeleteObjectsRequest *)m;
    Manta__DeleteObjectsReply reply = MANTA__DELETE_OBJECTS_REPLY__INIT;
    struct mt_worker *w = arg;
    mt_object_id id;

    if (!w->objects.store) {
        mt_rpc_fail(call, -MT_EUNAVAIL, "this worker has no object store");
        return;
    }
    if (req->n_object_ids > MAX_IDS) {
        mt_rpc_fail(call, -MT_EINVAL, "too many ids in one call");
        return;
    }
    for (size_t i = 0; i < req->n_object_ids; i++) {
        if (mt_pb_object_id(&req->object_ids[i], &id) < 0)
            continue;
        if (mt_store_delete(w->objects.store, &id) == 0)
            reply.deleted++;
    }
    mt_rpc_reply(call, &reply.base);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_worker_delete_objects, h_delete_objects},
    {NULL, NULL},
};

const struct mt_worker_adapter mt_worker_rpc_objects = {handlers, NULL, NULL};
