/* SPDX-License-Identifier: Apache-2.0 */
/*
 * connect.c -- mt_client_connect / mt_client_disconnect: where a client is
 * put together. It finds the head's address, builds the client's core
 * (client.c) with its parts (objects, tasks, actors), starts its thread,
 * asks the head for the cluster's status, maps this machine's object store
 * and opens the client watch. The one file that knows every part; no
 * part knows it.
 *
 * A one-shot client (MT_CONNECT_ONESHOT, the manta command) skips the
 * status, the store and the watch: it contacts the head only for the
 * calls it makes, and they fail fast when the head is away.
 */
#include "sdk/client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/parse.h"
#include "common/rpc.h"
#include "objstore/client.h"
#include "sdk/actor.h"
#include "sdk/error.h"
#include "sdk/object.h"
#include "sdk/rpc_actor.h"
#include "sdk/rpc_admin.h"
#include "sdk/rpc_batch.h"
#include "sdk/task.h"

#define DEFAULT_TEMP_DIR "/tmp/manta"
#define DEFAULT_CONNECT_MS 5000
#define DEFAULT_RPC_MS 10000
#define MAX_TIMEOUT_MS 86400000 /* a day: keeps deadline sums in an int */

void mt_connect_opts_init(mt_connect_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
}

/* Copy what the caller's (possibly older) struct holds; default the rest. */
static int copy_opts(const mt_connect_opts *in, mt_connect_opts *o)
{
    mt_connect_opts_init(o);
    if (in && in->size < offsetof(mt_connect_opts, temp_dir))
        return mt__set_error(NULL, -MT_EINVAL, "mt_connect_opts.size is %u: "
                             "call mt_connect_opts_init() first", in->size);
    if (in)
        memcpy(o, in, in->size < sizeof(*o) ? in->size : sizeof(*o));
    o->size = sizeof(*o);
    if (o->connect_timeout_ms < 0 || o->rpc_timeout_ms < 0 ||
        o->connect_timeout_ms > MAX_TIMEOUT_MS ||
        o->rpc_timeout_ms > MAX_TIMEOUT_MS)
        return mt__set_error(NULL, -MT_EINVAL, "timeouts must be 0 (the "
                             "default) to %d ms", MAX_TIMEOUT_MS);
    if (o->flags & MT_CONNECT_ONESHOT)
        o->flags |= MT_CONNECT_NO_STORE | MT_CONNECT_NO_BATCH;
    if (!o->connect_timeout_ms)
        o->connect_timeout_ms = DEFAULT_CONNECT_MS;
    if (!o->rpc_timeout_ms)
        o->rpc_timeout_ms = DEFAULT_RPC_MS;
    return 0;
}

static const char *pick_temp_dir(const mt_connect_opts *o)
{
    const char *env = getenv("MANTA_TEMP_DIR");

    if (o->temp_dir && *o->temp_dir)
        return o->temp_dir;
    return env && *env ? env : DEFAULT_TEMP_DIR;
}

/* Read the first word of path into buf. RET 0, -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    char *s;

    if (!f)
        return -errno;
    s = fgets(buf, (int)len, f);
    fclose(f);
    if (!s)
        return -ENOENT;
    buf[strcspn(buf, "\r\n ")] = '\0';
    return buf[0] ? 0 : -ENOENT;
}

/* The head's address: given, or from <dir>/head.addr. */
static int resolve_address(const char *address, const char *dir, char *out,
                           size_t len)
{
    char path[4096];

    if (address) {
        if (!mt_parse_host_port(address))
            return mt__set_error(NULL, -MT_EINVAL, "invalid head address "
                                 "'%s': expected HOST:PORT", address);
        snprintf(out, len, "%s", address);
        return 0;
    }
    snprintf(path, sizeof(path), "%s/head.addr", dir);
    if (read_line(path, out, len) == 0)
        return 0;
    return mt__set_error(NULL, -MT_ENOENT, "no head address in %s (is a "
                         "cluster running? pass its HOST:PORT)", path);
}

/* ---- the store ----------------------------------------------------------- */

static int try_store(struct mt_client *c, const char *path)
{
    struct mt_objc *objc;
    int rc = mt_objc_connect(path, NULL, &objc);

    if (rc < 0) {
        snprintf(c->store_why, sizeof(c->store_why), "cannot connect to the "
                 "object store at %s: %s", path, mt_strerror(rc));
        return rc;
    }
    c->store = calloc(1, sizeof(*c->store));
    c->store_path = strdup(path);
    if (!c->store || !c->store_path) {
        mt_objc_disconnect(objc);
        free(c->store);
        c->store = NULL;
        return -MT_ENOMEM;
    }
    atomic_init(&c->store->refs, 1);
    c->store->objc = objc;
    return 0;
}

/*
 * Find this machine's store: the session dir's when we were started from
 * it, else that of a live node of this cluster on this host (its temp dir
 * holds objstore.sock). RET 0 (found or not: see c->store), -MT_ENOMEM.
 */
static int find_store(struct mt_client *c, bool session,
                      const mt_cluster_status *st)
{
    char path[4200], host[256];

    if (session) {
        snprintf(path, sizeof(path), "%s/objstore.sock", c->temp_dir);
        if (access(path, F_OK) == 0 && try_store(c, path) == 0)
            return 0;
    }
    if (gethostname(host, sizeof(host)) < 0)
        host[0] = '\0';
    host[sizeof(host) - 1] = '\0';
    for (size_t i = 0; i < st->n_nodes && !c->store; i++) {
        const mt_node_info *n = &st->nodes[i];

        if (!n->alive || !n->temp_dir[0] || strcmp(n->hostname, host))
            continue;
        snprintf(path, sizeof(path), "%s/objstore.sock", n->temp_dir);
        if (access(path, F_OK) == 0 && try_store(c, path) == -MT_ENOMEM)
            return -MT_ENOMEM;
    }
    if (!c->store && !c->store_why[0])
        snprintf(c->store_why, sizeof(c->store_why), "no object store of "
                 "this cluster on this machine (host %.64s); run the driver "
                 "on a node or pass mt_connect_opts.store_socket", host);
    return 0;
}

/* The node whose store we use: the live node whose temp dir holds the
 * store's socket. None found (a store given by path elsewhere) leaves
 * node_id NULL: puts stay local. RET 0, -MT_ENOMEM. */
static int find_node(struct mt_client *c, const mt_cluster_status *st)
{
    const char *slash = strrchr(c->store_path, '/');
    size_t dlen = slash ? (size_t)(slash - c->store_path) : 0;

    for (size_t i = 0; i < st->n_nodes; i++) {
        const mt_node_info *n = &st->nodes[i];

        if (!n->alive || strlen(n->temp_dir) != dlen ||
            strncmp(n->temp_dir, c->store_path, dlen) != 0)
            continue;
        c->node_id = strdup(n->node_id);
        c->worker_address = strdup(n->address);
        if (!c->node_id || !c->worker_address)
            return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
        return 0;
    }
    return 0;
}

/* Map the store o asks for. RET 0 or -MT_E* (recorded, no client). */
static int map_store(struct mt_client *c, const mt_connect_opts *o,
                     bool session, const mt_cluster_status *st)
{
    int rc = 0;

    if (o->flags & MT_CONNECT_NO_STORE) {
        snprintf(c->store_why, sizeof(c->store_why), "the client was "
                 "connected with MT_CONNECT_%s",
                 o->flags & MT_CONNECT_ONESHOT ? "ONESHOT" : "NO_STORE");
        return 0;
    }
    if (o->store_socket) {
        rc = try_store(c, o->store_socket);
        if (rc < 0)
            return mt__set_error(NULL, rc, "%s", c->store_why);
    } else if ((rc = find_store(c, session, st)) < 0) {
        return mt__set_error(NULL, rc, "out of memory");
    }
    return c->store ? find_node(c, st) : 0;
}

/* ---- connect ------------------------------------------------------------- */

/* Reach the head, find the store, open the client watch and the
 * session (without one, puts and held results stay the head's until
 * released, even when the client goes away). */
static int connect_cluster(struct mt_client *c, const mt_connect_opts *o,
                           bool session)
{
    struct mt__status *st = NULL;
    int rc;

    rc = mt__status_get(c, o->connect_timeout_ms, MT__CALL_WAIT, &st, NULL);
    if (rc == -MT_ETIMEDOUT)
        rc = -MT_EUNAVAIL;
    if (rc < 0)
        return mt__set_error(NULL, rc, "cannot reach the head at %s within "
                             "%d ms: %s", c->address, o->connect_timeout_ms,
                             mt_client_last_error(c));
    rc = map_store(c, o, session, &st->pub);
    mt__status_free(st);
    if (rc == 0 && !(o->flags & MT_CONNECT_NO_BATCH)) /* else one by one */
        mt__cw_connect(c, o->connect_timeout_ms);
    if (rc == 0)
        mt__session_open(c, o->connect_timeout_ms);
    return rc;
}

/* A client with its parts and its thread running. RET 0 or -MT_E*. */
static int build(const char *address, const mt_connect_opts *o,
                 struct mt_client **out)
{
    char addr[512];
    struct mt_client *c;
    int rc = resolve_address(address, pick_temp_dir(o), addr, sizeof(addr));

    if (rc < 0)
        return rc;
    rc = mt__client_new(addr, pick_temp_dir(o), o->rpc_timeout_ms,
                        o->flags & MT_CONNECT_ONESHOT ? 0
                                                      : MT_RPC_WAIT_FOR_READY,
                        &c);
    if (rc < 0)
        return rc;
    if ((rc = mt__objects_attach(c)) == 0 &&
        (rc = mt__tasks_attach(c)) == 0 && (rc = mt__actors_attach(c)) == 0)
        rc = mt__client_start(c);
    if (rc < 0) {
        mt__client_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int mt_client_connect(const char *address, const mt_connect_opts *opts,
                      mt_client_t **out)
{
    struct mt_client *c;
    mt_connect_opts o;
    char why[512];
    int rc;

    if (!out)
        return mt__set_error(NULL, -MT_EINVAL, "out is NULL");
    *out = NULL;
    mt__clear_error(NULL);
    if ((rc = copy_opts(opts, &o)) < 0 || (rc = build(address, &o, &c)) < 0)
        return rc;
    if (!(o.flags & MT_CONNECT_ONESHOT) &&
        (rc = connect_cluster(c, &o, address == NULL)) < 0) {
        snprintf(why, sizeof(why), "%s", mt_client_last_error(NULL));
        mt_client_disconnect(c);
        return mt__set_error(NULL, rc, "%s", why);
    }
    mt__client_set_live(c, true);
    *out = c;
    return 0;
}

void mt_client_disconnect(mt_client_t *c)
{
    if (!c)
        return;
    mt__client_stop(c);
    mt__client_free(c);
}
