/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.c -- mt_client_t: connect, the client's loop thread, the request
 * handoff, disconnect, and the cluster queries.
 *
 * DESIGN (see sdk_int.h): connect creates the loop, the rpc engine and the
 * channel on the caller's thread, then hands them to a new thread that runs
 * the loop until disconnect. Public calls talk to that thread only through
 * mt__req_run(): queue under c->mu, uv_async_send(), wait on c->cv.
 *
 * Shutdown: disconnect queues the client's stop node and joins the thread.
 * The loop thread cancels every watch, destroys the channel and stops the
 * loop; then, still on that thread, mt_rpc_engine_destroy() runs the loop
 * until every cancelled call has delivered its callback, so no callback can
 * run after the thread is gone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/parse.h"
#include "common/rpc.h"
#include "objstore/client.h"
#include "common/sys.h"
#include "sdk/sdk_int.h"

#define DEFAULT_TEMP_DIR "/tmp/manta"
#define DEFAULT_CONNECT_MS 5000
#define DEFAULT_RPC_MS 10000
#define WAIT_GRACE_MS 2000 /* beyond an rpc's own deadline */
#define MAX_TIMEOUT_MS 86400000 /* a day: keeps deadline sums in an int */

static atomic_uint_fast64_t next_serial;

/* ---- small helpers ------------------------------------------------------- */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}

struct timespec mt__deadline(int timeout_ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Read the first line of path. RET owned string or NULL (errno set). */
static char *read_line(const char *path)
{
    char buf[512];
    FILE *f = fopen(path, "r");
    char *s;

    if (!f)
        return NULL;
    s = fgets(buf, sizeof(buf), f);
    fclose(f);
    if (!s) {
        errno = ENOENT;
        return NULL;
    }
    buf[strcspn(buf, "\r\n ")] = '\0';
    if (!buf[0]) {
        errno = ENOENT;
        return NULL;
    }
    return dup_str(buf);
}

/* ---- requests ------------------------------------------------------------ */

struct mt__req *mt__req_new(enum mt__req_kind kind)
{
    struct mt__req *r = calloc(1, sizeof(*r));

    if (r)
        r->kind = kind;
    return r;
}

void mt__status_release(struct mt__status *s)
{
    for (size_t i = 0; i < s->n_nodes; i++) {
        free(s->nodes[i].temp_dir);
        free(s->nodes[i].hostname);
        free(s->nodes[i].node_id);
        free(s->nodes[i].address);
    }
    for (size_t i = 0; i < s->n_total; i++)
        free(s->total[i].name);
    for (size_t i = 0; i < s->n_avail; i++)
        free(s->avail[i].name);
    free(s->nodes);
    free(s->total);
    free(s->avail);
    memset(s, 0, sizeof(*s));
}

void mt__req_free(struct mt__req *r)
{
    if (!r)
        return;
    mt__rpc_submit_free(r->submit_msg);
    mt__task_unref(r->task);
    mt__status_release(&r->status);
    if (r->obj_free)
        r->obj_free(r->obj);
    free(r->actor_name);
    mt__actor_info_release(&r->actor);
    mt__rpc_submit_free(r->call_msg);
    free(r->actor_address);
    mt__actor_unref(r->handle);
    mt__rpc_submit_free(r->unary_msg);
    mt__rpc_submit_free(r->unary_reply);
    free(r);
}

int mt__req_unary(struct mt_client *c, const struct mt_rpc_method *method,
                  const void *req, int timeout_ms, void **reply)
{
    struct mt__req *r = mt__req_new(MT__REQ_UNARY);
    int rc;

    *reply = NULL;
    if (!r || !(r->unary_msg = mt__msg_copy(req))) {
        mt__req_free(r);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    r->method = method;
    r->timeout_ms = timeout_ms;
    r->rpc_flags = MT_RPC_WAIT_FOR_READY;
    rc = mt__req_run(c, r, timeout_ms + 2000);
    if (rc < 0)
        return rc;
    *reply = r->unary_reply;
    r->unary_reply = NULL;
    mt__req_free(r);
    return 0;
}

int mt__req_run(struct mt_client *c, struct mt__req *r, int timeout_ms)
{
    struct timespec dl = mt__deadline(timeout_ms);
    int rc = 0;

    pthread_mutex_lock(&c->mu);
    if (c->stopping) {
        pthread_mutex_unlock(&c->mu);
        mt__req_free(r);
        return mt__set_error(c, -MT_ECLOSED, "the client is disconnecting");
    }
    mt__queue_push(&c->q, &r->qn);
    pthread_mutex_unlock(&c->mu);
    uv_async_send(&c->wake);
    pthread_mutex_lock(&c->mu);
    while (!r->done && rc == 0)
        rc = timeout_ms < 0 ? pthread_cond_wait(&c->cv, &c->mu)
                            : pthread_cond_timedwait(&c->cv, &c->mu, &dl);
    if (!r->done) {
        r->abandoned = true; /* the loop thread frees it */
        pthread_mutex_unlock(&c->mu);
        return mt__set_error(c, -MT_ETIMEDOUT, "no answer from the client "
                             "thread within %d ms", timeout_ms);
    }
    pthread_mutex_unlock(&c->mu);
    if (r->rc < 0) {
        rc = mt__set_error(c, r->rc, "%s", r->msg[0] ? r->msg
                                                     : mt_strerror(r->rc));
        mt__req_free(r);
        return rc;
    }
    return 0;
}

void mt__req_complete(struct mt_client *c, struct mt__req *r, int rc,
                      const char *msg)
{
    bool abandoned;

    pthread_mutex_lock(&c->mu);
    r->rc = rc;
    if (msg)
        snprintf(r->msg, sizeof(r->msg), "%s", msg);
    r->done = true;
    abandoned = r->abandoned;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (abandoned)
        mt__req_free(r);
}

/* ---- the loop thread ----------------------------------------------------- */

#define REQ_OF(n) ((struct mt__req *)((char *)(n)-offsetof(struct mt__req, qn)))

static void handle_stop(struct mt_client *c)
{
    c->closing = true;
    mt__rpc_stop_watches(c);
    mt__rpc_actor_stop(c);
    uv_close((uv_handle_t *)&c->retry_timer, NULL);
    uv_close((uv_handle_t *)&c->rel_timer, NULL);
    mt_rpc_channel_destroy(c->ch);
    c->ch = NULL;
    mt_rpc_channel_destroy(c->worker_ch);
    c->worker_ch = NULL;
    uv_stop(&c->loop);
}

static void on_wake(uv_async_t *h)
{
    struct mt_client *c = h->data;
    struct mt__queue batch;
    struct mt__qnode *n;

    pthread_mutex_lock(&c->mu);
    mt__queue_take_all(&c->q, &batch);
    pthread_mutex_unlock(&c->mu);
    while ((n = mt__queue_pop(&batch))) {
        if (n == &c->stop_node)
            handle_stop(c);
        else if (c->closing && REQ_OF(n)->kind == MT__REQ_SUBMIT_ASYNC)
            mt__cw_take(c, REQ_OF(n)); /* ends its task as closed */
        else if (c->closing)
            mt__req_complete(c, REQ_OF(n), -MT_ECLOSED,
                             "the client is disconnecting");
        else
            mt__rpc_start(c, REQ_OF(n));
    }
    if (!c->closing) {
        mt__rpc_actor_flush(c);
        mt__cw_pump(c);
        mt__cw_pump(c);
        mt__rel_kick(c);
    }
}

static void *thread_main(void *arg)
{
    struct mt_client *c = arg;

    uv_run(&c->loop, UV_RUN_DEFAULT); /* until handle_stop */
    while (c->n_calls || c->n_watches) /* let cancelled calls finish */
        uv_run(&c->loop, UV_RUN_ONCE);
    mt_rpc_engine_destroy(c->eng);    /* delivers the cancelled calls */
    c->eng = NULL;
    uv_close((uv_handle_t *)&c->wake, NULL);
    uv_run(&c->loop, UV_RUN_DEFAULT);
    return NULL;
}

/* ---- connect ------------------------------------------------------------- */

void mt_connect_opts_init(mt_connect_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
}

/* Copy what the caller's (possibly older) struct holds; default the rest. */
static int copy_opts(const mt_connect_opts *in, mt_connect_opts *o)
{
    mt_connect_opts_init(o);
    if (!in)
        return 0;
    if (in->size < offsetof(mt_connect_opts, temp_dir))
        return mt__set_error(NULL, -MT_EINVAL, "mt_connect_opts.size is %u: "
                             "call mt_connect_opts_init() first", in->size);
    memcpy(o, in, in->size < sizeof(*o) ? in->size : sizeof(*o));
    o->size = sizeof(*o);
    if (o->connect_timeout_ms < 0 || o->rpc_timeout_ms < 0 ||
        o->connect_timeout_ms > MAX_TIMEOUT_MS ||
        o->rpc_timeout_ms > MAX_TIMEOUT_MS)
        return mt__set_error(NULL, -MT_EINVAL, "timeouts must be 0 (the "
                             "default) to %d ms", MAX_TIMEOUT_MS);
    return 0;
}

static const char *pick_temp_dir(const mt_connect_opts *o)
{
    const char *env = getenv("MANTA_TEMP_DIR");

    if (o->temp_dir && *o->temp_dir)
        return o->temp_dir;
    return env && *env ? env : DEFAULT_TEMP_DIR;
}

/* The head's address: given, or from <dir>/head.addr. */
static int resolve_address(const char *address, const char *dir, char **out)
{
    char path[4096];

    if (address) {
        if (!mt_parse_host_port(address))
            return mt__set_error(NULL, -MT_EINVAL, "invalid head address "
                                 "'%s': expected HOST:PORT", address);
        *out = dup_str(address);
        return *out ? 0 : mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    }
    snprintf(path, sizeof(path), "%s/head.addr", dir);
    *out = read_line(path);
    if (*out)
        return 0;
    if (errno == ENOMEM)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    return mt__set_error(NULL, -MT_ENOENT, "no head address in %s (is a "
                         "cluster running? pass its HOST:PORT)", path);
}

/* Loop, engine, channel, wakeup: everything the thread will own. */
static int setup_loop(struct mt_client *c)
{
    int rc = uv_loop_init(&c->loop);

    if (rc < 0)
        return mt__set_error(NULL, -MT_ENOMEM, "uv_loop_init: %s",
                             uv_strerror(rc));
    c->loop_ready = true;
    rc = uv_async_init(&c->loop, &c->wake, on_wake);
    if (rc < 0)
        return mt__set_error(NULL, -MT_ENOMEM, "uv_async_init: %s",
                             uv_strerror(rc));
    c->wake.data = c;
    c->wake_ready = true;
    uv_timer_init(&c->loop, &c->retry_timer);
    c->retry_timer.data = c;
    c->timer_ready = true;
    uv_timer_init(&c->loop, &c->rel_timer);
    c->rel_timer.data = c;
    c->rel_timer_ready = true;
    rc = mt_rpc_engine_create(&c->loop, &c->eng);
    if (rc < 0)
        return mt__set_error(NULL, rc, "cannot start gRPC: %s",
                             mt_strerror(rc));
    rc = mt_rpc_channel_create(c->eng, c->address, 0, &c->ch);
    if (rc < 0)
        return mt__set_error(NULL, rc, "cannot open a channel to %s: %s",
                             c->address, mt_strerror(rc));
    return 0;
}

/* Free what setup_loop made when the thread never started. */
static void teardown_loop(struct mt_client *c)
{
    mt_rpc_channel_destroy(c->ch);
    c->ch = NULL;
    mt_rpc_engine_destroy(c->eng);
    c->eng = NULL;
    if (c->wake_ready)
        uv_close((uv_handle_t *)&c->wake, NULL);
    if (c->timer_ready)
        uv_close((uv_handle_t *)&c->retry_timer, NULL);
    if (c->rel_timer_ready)
        uv_close((uv_handle_t *)&c->rel_timer, NULL);
    if (c->loop_ready) {
        uv_run(&c->loop, UV_RUN_DEFAULT);
        uv_loop_close(&c->loop);
    }
}

static struct mt_client *client_alloc(const char *dir, int rpc_ms)
{
    struct mt_client *c = calloc(1, sizeof(*c));
    pthread_condattr_t ca;

    if (!c)
        return NULL;
    c->temp_dir = dup_str(dir);
    if (!c->temp_dir) {
        free(c);
        return NULL;
    }
    c->magic = MT_CLIENT_MAGIC;
    c->serial = atomic_fetch_add(&next_serial, 1) + 1;
    mt_random_hex(c->owner_id, 16);
    c->rpc_timeout_ms = rpc_ms ? rpc_ms : DEFAULT_RPC_MS;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    mt__queue_init(&c->q);
    return c;
}

/* ---- live clients (for releases from mt_task_release) ------------------ */

static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mt_client **live;
static size_t n_live, cap_live;

static void live_add(struct mt_client *c)
{
    pthread_mutex_lock(&live_mu);
    if (n_live == cap_live) {
        size_t cap = cap_live ? 2 * cap_live : 8;
        struct mt_client **v = realloc(live, cap * sizeof(*v));

        if (!v) { /* releases from tasks of this client are skipped */
            pthread_mutex_unlock(&live_mu);
            return;
        }
        live = v;
        cap_live = cap;
    }
    live[n_live++] = c;
    pthread_mutex_unlock(&live_mu);
}

static void live_remove(struct mt_client *c)
{
    pthread_mutex_lock(&live_mu);
    for (size_t i = 0; i < n_live; i++) {
        if (live[i] == c) {
            live[i] = live[--n_live];
            break;
        }
    }
    if (n_live == 0) {
        free(live);
        live = NULL;
        cap_live = 0;
    }
    pthread_mutex_unlock(&live_mu);
}

void mt__client_post_release(struct mt_client *c, const mt_object_id *id)
{
    bool found = false, wake = false;

    pthread_mutex_lock(&live_mu);
    for (size_t i = 0; i < n_live && !found; i++)
        found = live[i] == c;
    if (found) {
        pthread_mutex_lock(&c->mu);
        if (!c->stopping && c->n_rel == c->cap_rel) {
            size_t cap = c->cap_rel ? 2 * c->cap_rel : 64;
            mt_object_id *v = realloc(c->rel_ids, cap * sizeof(*v));

            if (v) {
                c->rel_ids = v;
                c->cap_rel = cap;
            }
        }
        if (!c->stopping && c->n_rel < c->cap_rel) {
            c->rel_ids[c->n_rel++] = *id;
            /* The loop thread sends them in batches (mt__rel_kick). */
            wake = c->n_rel == 1 || c->n_rel == MT__REL_BATCH;
        }
        pthread_mutex_unlock(&c->mu);
        if (wake)
            uv_async_send(&c->wake);
    }
    pthread_mutex_unlock(&live_mu);
}

/* Let queued releases and registrations reach the head before the
 * channel goes (3 s at most). */
static void flush_releases(struct mt_client *c)
{
    struct timespec dl = mt__deadline(3000);
    int rc = 0;

    pthread_mutex_lock(&c->mu);
    while ((c->n_rel || c->rel_calls || c->n_reg || c->reg_calls) && rc == 0)
        rc = pthread_cond_timedwait(&c->cv, &c->mu, &dl);
    pthread_mutex_unlock(&c->mu);
}

static void client_free(struct mt_client *c)
{
    if (c->thread_started)
        uv_loop_close(&c->loop);
    mt__store_unref(c->store);
    free(c->node_id);
    free(c->worker_address);
    free(c->rel_ids);
    free(c->reg_ids);
    free(c->reg_sizes);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c->address);
    free(c->temp_dir);
    free(c->store_path);
    free(c->owned);
    free(c->wchans);
    free(c->abatches);
    c->magic = 0;
    free(c);
}

/* GetClusterStatus. OUT st filled on success. RET 0 or error (recorded). */
static int get_status(struct mt_client *c, int timeout_ms, unsigned flags,
                      struct mt__status *st)
{
    struct mt__req *r = mt__req_new(MT__REQ_STATUS);
    int rc;

    if (!r)
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    r->timeout_ms = timeout_ms;
    r->rpc_flags = flags;
    rc = mt__req_run(c, r, timeout_ms + WAIT_GRACE_MS);
    if (rc < 0)
        return rc;
    *st = r->status;
    memset(&r->status, 0, sizeof(r->status));
    mt__req_free(r);
    return 0;
}

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
    c->store_path = dup_str(path);
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
                      const struct mt__status *st)
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
        const struct mt__node *n = &st->nodes[i];

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
static int find_node(struct mt_client *c, const struct mt__status *st)
{
    const char *slash = strrchr(c->store_path, '/');
    size_t dlen = slash ? (size_t)(slash - c->store_path) : 0;

    for (size_t i = 0; i < st->n_nodes; i++) {
        const struct mt__node *n = &st->nodes[i];

        if (!n->alive || strlen(n->temp_dir) != dlen ||
            strncmp(n->temp_dir, c->store_path, dlen) != 0)
            continue;
        c->node_id = dup_str(n->node_id);
        c->worker_address = dup_str(n->address);
        if (!c->node_id || !c->worker_address)
            return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
        return 0;
    }
    return 0;
}

static int start_thread(struct mt_client *c)
{
    int rc = pthread_create(&c->thread, NULL, thread_main, c);

    if (rc != 0)
        return mt__set_error(NULL, -rc, "cannot start the client thread: %s",
                             strerror(rc));
    c->thread_started = true;
    return 0;
}

/* Everything after the thread runs: reach the head, find the store. */
static int connect_cluster(struct mt_client *c, const mt_connect_opts *o,
                           bool session)
{
    int ms = o->connect_timeout_ms ? o->connect_timeout_ms
                                   : DEFAULT_CONNECT_MS;
    struct mt__status st;
    int rc;

    memset(&st, 0, sizeof(st));
    rc = get_status(c, ms, MT_RPC_WAIT_FOR_READY, &st);
    if (rc == -MT_ETIMEDOUT)
        rc = -MT_EUNAVAIL;
    if (rc < 0)
        return mt__set_error(NULL, rc, "cannot reach the head at %s within "
                             "%d ms: %s", c->address, ms,
                             mt_client_last_error(c));
    if (o->flags & MT_CONNECT_NO_STORE) {
        snprintf(c->store_why, sizeof(c->store_why), "the client was "
                 "connected with MT_CONNECT_NO_STORE");
    } else if (o->store_socket) {
        rc = try_store(c, o->store_socket);
        if (rc < 0)
            rc = mt__set_error(NULL, rc, "%s", c->store_why);
    } else {
        rc = find_store(c, session, &st);
        if (rc < 0)
            rc = mt__set_error(NULL, rc, "out of memory");
    }
    if (rc == 0 && c->store)
        rc = find_node(c, &st);
    mt__status_release(&st);
    return rc;
}

int mt_client_connect(const char *address, const mt_connect_opts *opts,
                      mt_client_t **out)
{
    struct mt_client *c;
    mt_connect_opts o;
    int rc;

    if (!out)
        return mt__set_error(NULL, -MT_EINVAL, "out is NULL");
    *out = NULL;
    mt__clear_error(NULL);
    if ((rc = copy_opts(opts, &o)) < 0)
        return rc;
    c = client_alloc(pick_temp_dir(&o), o.rpc_timeout_ms);
    if (!c)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    rc = resolve_address(address, c->temp_dir, &c->address);
    if (rc == 0)
        rc = setup_loop(c);
    if (rc == 0)
        rc = start_thread(c);
    if (rc < 0) {
        teardown_loop(c);
        client_free(c);
        return rc;
    }
    rc = connect_cluster(c, &o, address == NULL);
    if (rc == 0 && !(o.flags & MT_CONNECT_NO_BATCH)) /* else one by one */
        mt__cw_connect(c, o.connect_timeout_ms ? o.connect_timeout_ms
                                                : DEFAULT_CONNECT_MS);
    if (rc < 0) {
        char why[512];

        snprintf(why, sizeof(why), "%s", mt_client_last_error(NULL));
        mt_client_disconnect(c);
        return mt__set_error(NULL, rc, "%s", why);
    }
    live_add(c);
    *out = c;
    return 0;
}

void mt_client_disconnect(mt_client_t *c)
{
    struct mt__qnode *n;

    if (!c)
        return;
    live_remove(c);
    if (c->thread_started) {
        flush_releases(c);
        mt__actors_disconnect(c);
        pthread_mutex_lock(&c->mu);
        c->stopping = true;
        mt__queue_push(&c->q, &c->stop_node);
        pthread_mutex_unlock(&c->mu);
        uv_async_send(&c->wake);
        pthread_join(c->thread, NULL);
    }
    /* Requests nobody took (none when callers respect the contract). */
    while ((n = mt__queue_pop(&c->q)))
        if (n != &c->stop_node)
            mt__req_free(REQ_OF(n));
    client_free(c);
}

const char *mt_client_address(const mt_client_t *c)
{
    return c ? c->address : "";
}

int mt_client_has_store(const mt_client_t *c)
{
    return c && c->store ? 1 : 0;
}

/* ---- cluster ------------------------------------------------------------- */

static bool check_client(const struct mt_client *c)
{
    return c && c->magic == MT_CLIENT_MAGIC;
}

int mt_cluster_resources(mt_client_t *c, const char *name, double *total,
                         double *available)
{
    struct mt__status st;
    int rc;

    if (!check_client(c) || !name)
        return mt__set_error(check_client(c) ? c : NULL, -MT_EINVAL,
                             "invalid client or resource name");
    rc = get_status(c, c->rpc_timeout_ms, 0, &st);
    if (rc < 0)
        return rc;
    if (total)
        *total = 0;
    if (available)
        *available = 0;
    for (size_t i = 0; i < st.n_total; i++)
        if (total && strcmp(st.total[i].name, name) == 0)
            *total = (double)st.total[i].qty / 10000.0;
    for (size_t i = 0; i < st.n_avail; i++)
        if (available && strcmp(st.avail[i].name, name) == 0)
            *available = (double)st.avail[i].qty / 10000.0;
    mt__status_release(&st);
    return 0;
}

int mt_cluster_nodes(mt_client_t *c)
{
    struct mt__status st;
    int rc, alive = 0;

    if (!check_client(c))
        return mt__set_error(NULL, -MT_EINVAL, "invalid client");
    rc = get_status(c, c->rpc_timeout_ms, 0, &st);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < st.n_nodes; i++)
        alive += st.nodes[i].alive;
    mt__status_release(&st);
    return alive;
}
