/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manta/client.h -- connecting a driver program to a Manta cluster.
 *
 * A client is one connection to the head (gRPC) plus, when this machine
 * runs a worker, a mapping of that worker's shared-memory object store.
 * mt_client_connect() starts one background thread per client that runs
 * the connection; public calls post their request to it and wait, with a
 * timeout, for the answer. Every function taking a client is thread-safe
 * unless it says otherwise, so one client can serve many threads.
 *
 * Errors: functions return 0 (or a count) or a negative code (error.h).
 * After a failure, mt_client_last_error() gives a one-line message for the
 * calling thread's last failed call on that client.
 */
#ifndef MANTA_CLIENT_H
#define MANTA_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "manta/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A connection to a cluster. Opaque. */
typedef struct mt_client mt_client_t;

/* mt_connect_opts.flags */
#define MT_CONNECT_NO_STORE 0x1u /* do not map the local object store */
#define MT_CONNECT_NO_BATCH 0x2u /* submit and follow each task on its own
                                    (one call and one stream per task), as
                                    0.1 did: for comparison and debugging */
#define MT_CONNECT_ONESHOT 0x4u  /* for a tool that makes a few calls and
                                    exits (the manta command): connect does
                                    not contact the head, maps no store and
                                    opens no event stream (NO_STORE and
                                    NO_BATCH); a call fails at once with
                                    -MT_EUNAVAIL when the head cannot be
                                    reached instead of waiting for it */

/*
 * Options for mt_client_connect(). Fill with mt_connect_opts_init() and
 * then set what you need; zero / NULL fields mean the default. The library
 * reads only the first `size` bytes, so programs built against an older
 * header keep working with a newer library.
 */
typedef struct mt_connect_opts {
    uint32_t size;            /* sizeof(mt_connect_opts); set by _init */
    uint32_t flags;           /* MT_CONNECT_* */
    const char *temp_dir;     /* session dir; NULL: $MANTA_TEMP_DIR, then
                                 /tmp/manta */
    const char *store_socket; /* object store socket; NULL: found from the
                                 session dir or the cluster's nodes */
    int connect_timeout_ms;   /* reaching the head; 0: 5000; at most a
                                 day (86400000) */
    int rpc_timeout_ms;       /* each later request to the head; 0: 10000;
                                 at most a day */
} mt_connect_opts;

/*
 * mt_connect_opts_init - set every option to its default.
 *
 * OUT o     zeroed, with o->size = sizeof(*o)
 * THREAD any
 */
MT_EXTERN void mt_connect_opts_init(mt_connect_opts *o);

/*
 * mt_client_connect - connect to the cluster whose head is at address.
 *
 * The head must answer within opts->connect_timeout_ms (not contacted at
 * all with MT_CONNECT_ONESHOT). Then the local
 * object store is mapped: opts->store_socket when given (failing to map it
 * fails the connect), else <temp dir>/objstore.sock when address is NULL,
 * else the store of a live node of this cluster on this host. Without a
 * store the client still runs tasks; object calls then fail with
 * -MT_EUNAVAIL and a message saying why.
 *
 * IN  address  "host:port" of the head, or NULL to read <temp dir>/head.addr
 *              (borrowed)
 * IN  opts     NULL for defaults (borrowed)
 * OUT out      returns owned client, free with mt_client_disconnect()
 * RET 0, -MT_EINVAL (bad address or options), -MT_ENOENT (no head.addr in
 *     the temp dir), -MT_EUNAVAIL (the head did not answer in time),
 *     -MT_ENOMEM, -errno; mt_client_last_error(NULL) says why
 * THREAD any
 */
MT_EXTERN int mt_client_connect(const char *address,
                                const mt_connect_opts *opts,
                                mt_client_t **out);

/*
 * mt_client_disconnect - stop the client's thread, close the connection and
 * free the client.
 *
 * Tasks still running on the cluster keep running; their handles stay valid
 * for mt_task_id() and mt_task_release() only. Buffers from mt_get() stay
 * mapped until released. The client's session at the head ends: the
 * object references it still holds (puts, function task results) are
 * dropped, and its non-detached actors are killed; a process that ends
 * without disconnecting gets the same once the head sees it gone.
 *
 * OWNERSHIP invalidates c; NULL is fine
 * THREAD any, but no other thread may be using c or start using it
 */
MT_EXTERN void mt_client_disconnect(mt_client_t *c);

/*
 * mt_client_last_error - the message of this thread's last failed call on c.
 *
 * IN  c     a client, or NULL for failures that had no client yet
 *           (mt_client_connect, option setters)
 * RET borrowed, valid until this thread's next failing call on c; "" when
 *     there was none
 * THREAD any: each thread sees its own last failure
 */
MT_EXTERN const char *mt_client_last_error(const mt_client_t *c);

/*
 * mt_client_address - the head address the client is connected to.
 *
 * RET borrowed, valid until mt_client_disconnect(c)
 * THREAD any
 */
MT_EXTERN const char *mt_client_address(const mt_client_t *c);

/*
 * mt_client_has_store - whether object calls can work (1) or not (0).
 *
 * THREAD any
 */
MT_EXTERN int mt_client_has_store(const mt_client_t *c);

/*
 * mt_cluster_resources - how much of one resource the cluster's live nodes
 * have in total and have free now.
 *
 * IN  name              "CPU", "GPU", "TPU", "memory", or a custom name
 *                       (borrowed)
 * OUT total, available  in units (0.5 GPU is 0.5); 0 when no node has it;
 *                       either may be NULL
 * RET 0, -MT_EINVAL, -MT_EUNAVAIL / -MT_ETIMEDOUT (head not answering),
 *     -MT_ECLOSED, -MT_ENOMEM
 * THREAD any
 */
MT_EXTERN int mt_cluster_resources(mt_client_t *c, const char *name,
                                   double *total, double *available);

/*
 * mt_cluster_nodes - the number of live nodes.
 *
 * RET the count (>= 0) or an error as mt_cluster_resources
 * THREAD any
 */
MT_EXTERN int mt_cluster_nodes(mt_client_t *c);

/*
 * mt_free - free text or memory the library returned owned and says to
 * free with mt_free() (JSON from admin.h, ...). NULL ok.
 * THREAD any
 */
MT_EXTERN void mt_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* MANTA_CLIENT_H */
