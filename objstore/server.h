/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.h -- puts a store on a Unix socket, on a libuv loop.
 *
 * Clients (client.h) connect, receive the arena fd and speak protocol.h.
 * The server tracks, per connection, the objects it created and has not
 * sealed, the pins it holds, and its waiting gets, and undoes all of them
 * when the connection closes (a killed client leaks nothing). It also
 * remembers the puts a connection made with MT_OBJ_DRIVER_PUT: when the
 * connection closes, those still in the store are handed to the orphans
 * callback, so the host can ask the head which of them were never
 * registered (their driver died before it said so) and delete those.
 *
 * THREAD loop thread only; the store must be driven from the same loop.
 */
#ifndef MT_SERVER_H
#define MT_SERVER_H

#include <stdint.h>
#include <uv.h>

#include "objstore/protocol.h"
#include "objstore/store.h"

struct mt_server;

/*
 * mt_server_start - listen on path (unlinked first if it exists) and serve
 * st on loop.
 *
 * IN  loop, st   borrowed; both must outlive the server
 * IN  path       socket path (copied)
 * OUT out        the server, freed by mt_server_stop()
 * RET 0, -MT_EINVAL (path too long), -errno from bind/listen, -MT_ENOSPC
 *     (st has MT_STORE_MAX_LISTENERS listeners already)
 * NOTE the server adds itself as a listener of st (seals wake waiters)
 */
int mt_server_start(uv_loop_t *loop, struct mt_store *st, const char *path,
                    struct mt_server **out);

/*
 * mt_server_stop - close the listener and every connection (aborting their
 * creations, dropping their pins) and unlink the socket path.
 *
 * NOTE the memory is freed from close callbacks: keep running the loop
 *      until it returns (uv_run) before destroying the store.
 * OWNERSHIP invalidates srv; NULL is fine
 */
void mt_server_stop(struct mt_server *srv);

/* Puts (MT_OBJ_DRIVER_PUT) of a connection that closed, still in the
 * store. ids borrowed for the call. */
typedef void (*mt_server_orphans_fn)(void *arg, const mt_object_id *ids,
                                     size_t n);

/*
 * mt_server_on_orphans - call fn(arg, ...) when a connection that made
 * MT_OBJ_DRIVER_PUT puts closes (not while the server stops). One
 * listener; fn NULL removes it.
 */
void mt_server_on_orphans(struct mt_server *srv, mt_server_orphans_fn fn,
                          void *arg);

/* mt_server_stats - fill out with the current figures (protocol.h). */
void mt_server_stats(const struct mt_server *srv, struct mt_server_stats *out);

#endif /* MT_SERVER_H */
