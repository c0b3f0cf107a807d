/* SPDX-License-Identifier: Apache-2.0 */
/*
 * objects.h -- the node's shared-memory object store, hosted by the
 * worker: created at start with the configured capacity, served to
 * executors and drivers on a Unix socket in the session dir, freed at
 * exit. Its capacity is offered to the cluster as the object_store_memory
 * resource (main.c).
 *
 * Who else works on the store: the head frees copies nobody references
 * (DeleteObjects, rpc_objects.c), objects move between nodes through
 * transfer.h, and runs map their arguments and put their results in it.
 *
 * THREAD: the worker's loop thread.
 */
#ifndef MT_WORKER_OBJECTS_H
#define MT_WORKER_OBJECTS_H

#include <stdint.h>
#include <uv.h>

struct mt_store;
struct mt_server;

struct mt_objects_opts {
    uint64_t capacity;          /* arena bytes */
    const char *spill_dir;      /* NULL: never spill */
    const char *socket;         /* the Unix socket to serve it on */
};

/* The store and its socket server. Zeroed: none. */
struct mt_objects {
    struct mt_store *store;     /* NULL until started and after release */
    struct mt_server *srv;      /* NULL once stopped */
};

/*
 * mt_objects_start - create the store and serve it on opts->socket.
 * IN  opts  borrowed for the call
 * RET 0 or -MT_E* (logged; o stays zeroed)
 */
int mt_objects_start(struct mt_objects *o, uv_loop_t *loop,
                     const struct mt_objects_opts *opts);

/* mt_objects_stop - close the socket and every client connection. */
void mt_objects_stop(struct mt_objects *o);

/* mt_objects_release - free the store, once the loop has run the close
 * callbacks and nothing pins an object any more. */
void mt_objects_release(struct mt_objects *o);

#endif /* MT_WORKER_OBJECTS_H */
