/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_objects.c -- DeleteObjects: the head found no reference left to
 * these objects, so this node's copies go. A copy a reader still has
 * mapped (a driver's buffer, an executor's argument) disappears for new
 * gets at once and its space is freed at the last release (mt_store_delete).
 * An object still being written (a pull in flight) is left alone: the head
 * forgets it, and the finished copy is evictable space only when flagged.
 *
 * ReportOrphans goes the other way: when a store client that made
 * driver puts goes away (objstore/server.h), the head is asked which of
 * its puts still here it never heard of (the driver died before its
 * registration went out), and those are deleted. The others are the
 * head's to free, with the driver's session.
 *
 * THREAD: the worker's loop thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "head_service.pb-c.h"
#include "objstore/server.h"
#include "objstore/store.h"
#include "proto/convert.h"
#include "proto/services.h"
#include "worker/rpc_services.h"
#include "worker_service.pb-c.h"

#define MAX_IDS 100000
#define ORPHANS_TIMEOUT_MS 10000

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

/* ---- ReportOrphans ------------------------------------------------------- */

static void on_orphans_done(void *arg, const struct mt_rpc_status *st,
                            const ProtobufCMessage *resp)
{
    const Manta__ReportOrphansReply *r =
        (const Manta__ReportOrphansReply *)resp;
    struct mt_worker *w = arg;
    mt_object_id id;
    size_t n = 0;

    if (st->code) {
        MT_WARN("ReportOrphans failed: %s: %s (puts of a client that went "
                "away stay in the store)", mt_rpc_status_name(st->code),
                st->message);
        return;
    }
    for (size_t i = 0; i < r->n_unknown && w->objects.store; i++)
        if (mt_pb_object_id(&r->unknown[i], &id) == 0 &&
            mt_store_delete(w->objects.store, &id) == 0)
            n++;
    if (n)
        MT_INFO("deleted %zu puts of clients that went away that the head "
                "does not know (never registered)", n);
}

/* The store's orphans callback: ask the head, MAX_IDS at a time. */
static void on_orphans(void *arg, const mt_object_id *ids, size_t n)
{
    Manta__ReportOrphansRequest req = MANTA__REPORT_ORPHANS_REQUEST__INIT;
    struct mt_worker *w = arg;
    ProtobufCBinaryData *b;

    if (!w->head || w->stopping)
        return;
    for (size_t at = 0; at < n; at += MAX_IDS) {
        size_t k = n - at < MAX_IDS ? n - at : MAX_IDS;

        b = mt_xcalloc(k, sizeof(*b));
        for (size_t i = 0; i < k; i++) {
            b[i].data = (uint8_t *)ids[at + i].b;
            b[i].len = MT_OBJECT_ID_LEN;
        }
        req.node_id = w->node_id;
        req.object_ids = b;
        req.n_object_ids = k;
        if (mt_rpc_unary(w->head, &mt_head_report_orphans, &req.base,
                         ORPHANS_TIMEOUT_MS, 0, on_orphans_done, w) < 0)
            MT_WARN("cannot report %zu orphaned puts to the head", k);
        free(b);
    }
}

static void start(struct mt_worker *w)
{
    if (w->objects.srv)
        mt_server_on_orphans(w->objects.srv, on_orphans, w);
}

static const struct mt_rpc_handler handlers[] = {
    {&mt_worker_delete_objects, h_delete_objects},
    {NULL, NULL},
};

const struct mt_worker_adapter mt_worker_rpc_objects = {handlers, start,
                                                        NULL};
