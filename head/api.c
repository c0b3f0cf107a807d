/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api.c -- the dashboard's JSON API (see api.h; docs/dashboard.md "API").
 *
 * A route parses its query parameters here (common/http.h helpers) into
 * plain C, then asks the head's builders: listings from the rpc adapters'
 * list_json (head_int.h, written by proto/list_json.c), history from
 * history_sampler.h, accelerators from api_accel.h; the new shapes (one node,
 * logs) are written here. Parameters are peer input: every bad value is
 * a 400 with a reason, never an assert.
 *
 * Cost: a listing is one walk of its table (tasks: one sort of the task
 * table, as ListTasks); nothing here is O(tasks x nodes).
 *
 * THREAD: the head's loop thread only.
 */
#include "head/api.h"
#include "head/api_accel.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "head/head_int.h"
#include "head/history.h"
#include "head/history_sampler.h"
#include "head/rpc_services.h"
#include "proto/list_json.h"

#define PARAM_MAX 256 /* bytes of a decoded string parameter */

/* A string parameter's decoded value. */
struct sparam {
    char buf[PARAM_MAX];
    const char *v;                /* buf, or NULL when absent */
};

/* ---- answers ------------------------------------------------------------- */

static int fail(struct mt_strbuf *body, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct mt_strbuf *body, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    body->len = 0;
    mt_strbuf_adds(body, "{\"error\": ");
    mt_strbuf_add_json_str(body, msg);
    mt_strbuf_adds(body, "}\n");
    return code;
}

/* ---- parameters ---------------------------------------------------------- */

/* Parameter name into p. RET 0, or 400 (too long: said in body). */
static int get_str(struct mt_http_str q, const char *name, struct sparam *p,
                   struct mt_strbuf *body)
{
    size_t n;

    p->v = NULL;
    if (!mt_http_param(q, name, NULL, 0, NULL))
        return 0;
    if (!mt_http_param(q, name, p->buf, sizeof(p->buf), &n))
        return fail(body, 400, "parameter %s is over %d bytes", name,
                    PARAM_MAX - 1);
    p->v = p->buf;
    return 0;
}

static int get_uint(struct mt_http_str q, const char *name, uint64_t def,
                    uint64_t max, uint64_t *out, struct mt_strbuf *body)
{
    if (!mt_http_param_uint(q, name, def, max, out))
        return fail(body, 400, "parameter %s must be a whole number from 0 "
                    "to %llu", name, (unsigned long long)max);
    return 0;
}

/* limit and offset. RET 0 or 400. */
static int get_page(struct mt_http_str q, uint32_t *limit, uint32_t *offset,
                    struct mt_strbuf *body)
{
    uint64_t l, o;

    if (get_uint(q, "limit", MT_API_LIMIT_DEFAULT, UINT32_MAX, &l, body) ||
        get_uint(q, "offset", 0, UINT32_MAX, &o, body))
        return 400;
    if (l == 0)
        return fail(body, 400, "parameter limit must be 1 or more");
    *limit = l > MT_API_LIMIT_MAX ? MT_API_LIMIT_MAX : (uint32_t)l;
    *offset = (uint32_t)o;
    return 0;
}

/* state=NAME of kind into *state (0: absent). RET 0 or 400. */
static int get_state(struct mt_http_str q, const char *kind, int *state,
                     struct mt_strbuf *body)
{
    struct sparam p;

    *state = 0;
    if (get_str(q, "state", &p, body))
        return 400;
    if (p.v && !(*state = mt_list_json_state(kind, p.v)))
        return fail(body, 400, "%s have no state \"%.64s\"", kind, p.v);
    return 0;
}

/* ---- listings ------------------------------------------------------------ */

/* A listing route: its kind and which filters it takes. */
struct listing {
    const char *path;
    const char *kind;             /* mt_list_json_state's */
    const struct mt_head_adapter *adapter; /* its list_json */
    const char *node_param;       /* "node", or NULL: no such filter */
    const char *name_param;
    const char *owner_param;
};

static const struct listing listings[] = {
    {"/api/nodes", "nodes", &mt_head_rpc_nodes, NULL, NULL, NULL},
    {"/api/tasks", "tasks", &mt_head_rpc_tasks, "node", "name",
     "driver"},
    {"/api/actors", "actors", &mt_head_rpc_actors, NULL, "name", NULL},
    {"/api/placement_groups", "placement_groups", &mt_head_rpc_pgs,
     NULL, NULL, NULL},
    {"/api/gangs", "gangs", &mt_head_rpc_gangs, NULL, NULL, NULL},
    {"/api/objects", "objects", &mt_head_rpc_objects, "node", NULL,
     NULL},
};

/* The filters l has, from q. RET 0 or 400. */
static int get_filters(const struct listing *l, struct mt_http_str q,
                       struct sparam p[3], struct mt_head_list_query *lq,
                       struct mt_strbuf *body)
{
    const char *names[3] = {l->node_param, l->name_param, l->owner_param};

    for (int i = 0; i < 3; i++) {
        p[i].v = NULL;
        if (names[i] && get_str(q, names[i], &p[i], body))
            return 400;
    }
    lq->node_id = p[0].v;
    lq->name = p[1].v;
    lq->owner_id = p[2].v;
    return 0;
}

/* Render a listing and add the page to it. */
static void paged(struct mt_head *h, const struct listing *l,
                  const struct mt_head_list_query *lq, struct mt_strbuf *body)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    l->adapter->list_json(h, lq, &sb);
    mt_list_json_paged(body, sb.buf, sb.len, lq->offset, lq->limit);
    mt_strbuf_release(&sb);
}

static int serve_listing(struct mt_head *h, const struct listing *l,
                         struct mt_http_str q, struct mt_strbuf *body)
{
    struct mt_head_list_query lq;
    struct sparam p[3];

    memset(&lq, 0, sizeof(lq));
    if (get_page(q, &lq.limit, &lq.offset, body) ||
        get_state(q, l->kind, &lq.state, body) ||
        get_filters(l, q, p, &lq, body))
        return 400;
    paged(h, l, &lq, body);
    return 200;
}

/* ---- history and one node ------------------------------------------------ */

/* history for node (NULL: the cluster's), or a 404/400 reason. */
static int history(struct mt_head *h, const char *node, struct mt_http_str q,
                   struct mt_strbuf *body)
{
    uint64_t sec;
    int rc;

    if (get_uint(q, "seconds", MT_API_HISTORY_DEFAULT_SECONDS,
                 MT_HISTORY_MAX_SECONDS, &sec, body))
        return 400;
    rc = mt_head_history_json(h, node, (uint32_t)sec, body);
    if (rc == -MT_ENOTSUP)
        return fail(body, 404, "history is off (manta-head "
                    "--history-seconds 0)");
    if (rc < 0)
        return fail(body, 404, "no history for node %.64s", node);
    return 200;
}

static int serve_history(struct mt_head *h, struct mt_http_str q,
                         struct mt_strbuf *body)
{
    struct sparam node;

    if (get_str(q, "node", &node, body))
        return 400;
    return history(h, node.v, q, body);
}

/*
 * /api/nodes/ID: {"node": entry, "tasks": its running tasks (paged),
 * "history": its series, or null when there are none}.
 */
static int serve_node(struct mt_head *h, const char *id, struct mt_http_str q,
                      struct mt_strbuf *body)
{
    struct mt_head_list_query lq;
    struct mt_strbuf hist = MT_STRBUF_INIT;
    uint64_t sec;

    memset(&lq, 0, sizeof(lq));
    if (get_page(q, &lq.limit, &lq.offset, body) ||
        get_uint(q, "seconds", MT_API_HISTORY_DEFAULT_SECONDS,
                 MT_HISTORY_MAX_SECONDS, &sec, body))
        return 400;
    mt_strbuf_adds(body, "{\"node\": ");
    if (mt_head_node_json(h, id, body) < 0)
        return fail(body, 404, "no such node: %.64s", id);
    mt_strbuf_adds(body, ",\n\"tasks\": ");
    lq.state = MT_TASK_RUNNING;
    lq.node_id = id;
    paged(h, &listings[1], &lq, body); /* the tasks listing */
    body->len--; /* the listing's newline */
    mt_strbuf_adds(body, ",\n\"history\": ");
    if (mt_head_history_json(h, id, (uint32_t)sec, &hist) == 0)
        mt_strbuf_add(body, hist.buf, hist.len - 1);
    else
        mt_strbuf_adds(body, "null");
    mt_strbuf_adds(body, "}\n");
    mt_strbuf_release(&hist);
    return 200;
}

/* ---- logs ---------------------------------------------------------------- */

static bool lead_ok(unsigned char c, unsigned *len, uint32_t *min)
{
    if (c >= 0xc2 && c <= 0xdf)
        *len = 2, *min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        *len = 3, *min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        *len = 4, *min = 0x10000;
    else
        return false;
    return true;
}

/*
 * The length of the valid UTF-8 character at p (n bytes left): RET its
 * length, 0 when invalid, or -1 when it is a valid start cut short by n.
 */
static int utf8_char(const unsigned char *p, size_t n)
{
    unsigned len;
    uint32_t min, cp;

    if (!lead_ok(p[0], &len, &min))
        return 0;
    cp = p[0] & (0x7f >> len);
    for (unsigned i = 1; i < len; i++) {
        if (i >= n)
            return -1;
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return (int)len;
}

size_t mt_json_utf8(struct mt_strbuf *sb, const unsigned char *p, size_t n,
                    bool hold_tail)
{
    size_t i = 0;
    int len;

    while (i < n) {
        unsigned char c = p[i];

        if (c == '"' || c == '\\') {
            mt_strbuf_addf(sb, "\\%c", c);
        } else if (c == '\n') {
            mt_strbuf_adds(sb, "\\n");
        } else if (c < 0x20 || c == 0x7f) {
            mt_strbuf_addf(sb, "\\u%04x", c);
        } else if (c < 0x80) {
            mt_strbuf_add(sb, (const char *)&p[i], 1);
        } else if ((len = utf8_char(p + i, n - i)) > 0) {
            mt_strbuf_add(sb, (const char *)&p[i], (size_t)len);
            i += (size_t)len;
            continue;
        } else if (len < 0 && hold_tail) {
            return i; /* the rest of it may come */
        } else {
            mt_strbuf_adds(sb, "\\ufffd");
        }
        i++;
    }
    return n;
}

/* Bytes [from, from + n) of t's kept output (from counts dropped bytes). */
static unsigned char *output_copy(const struct mt_head_task *t, uint64_t from,
                                  size_t n)
{
    unsigned char *buf = malloc(n + 1);
    uint64_t at = t->out_dropped;
    size_t got = 0;

    if (!buf)
        return NULL;
    for (const struct mt_task_output *o = t->out_head; o && got < n;
         o = o->next) {
        uint64_t end = at + o->len;

        if (end > from) {
            size_t skip = from > at ? (size_t)(from - at) : 0;
            size_t take = o->len - skip;

            if (take > n - got)
                take = n - got;
            memcpy(buf + got, o->data + skip, take);
            got += take;
            from += take;
        }
        at = end;
    }
    return buf;
}

static void logs_json(const struct mt_head_task *t, uint64_t offset,
                      struct mt_strbuf *body)
{
    uint64_t end = t->out_dropped + t->out_bytes;
    uint64_t from = offset < t->out_dropped ? t->out_dropped : offset;
    size_t n = from < end ? (size_t)(end - from) : 0, used;
    bool done = mt_head_task_terminal(t);
    unsigned char *buf;

    if (from > end)
        from = end;
    if (n > MT_API_LOG_CHUNK)
        n = MT_API_LOG_CHUNK;
    mt_strbuf_adds(body, "{\"task_id\": ");
    mt_strbuf_add_json_str(body, t->id);
    mt_strbuf_addf(body, ", \"state\": \"%s\", \"offset\": %llu, \"data\": \"",
                   mt_head_task_state_name(t->state),
                   (unsigned long long)from);
    buf = n ? output_copy(t, from, n) : NULL;
    used = buf ? mt_json_utf8(body, buf, n, !done || from + n < end) : 0;
    free(buf);
    mt_strbuf_addf(body, "\", \"next_offset\": %llu, \"truncated\": %s, "
                         "\"done\": %s}\n",
                   (unsigned long long)(from + used),
                   offset < t->out_dropped ? "true" : "false",
                   done && from + used >= end ? "true" : "false");
}

/*
 * /api/logs?task=ID or ?actor=ID, &offset=N. An actor's output is its
 * creation task's (the task of the actor's number): the head keeps what
 * the actor's executor prints there.
 */
static int serve_logs(struct mt_head *h, struct mt_http_str q,
                      struct mt_strbuf *body)
{
    struct mt_task_table *tt = mt_head_tasks_table(h->tasks);
    struct sparam task, actor;
    struct mt_head_actor *a = NULL;
    struct mt_head_task *t;
    uint64_t offset;

    if (get_str(q, "task", &task, body) || get_str(q, "actor", &actor, body) ||
        get_uint(q, "offset", 0, UINT64_MAX / 2, &offset, body))
        return 400;
    if (!task.v == !actor.v)
        return fail(body, 400, "give one of task=ID or actor=ID");
    if (actor.v && !(a = mt_actor_table_find_id(
                         mt_head_actors_table(h->actors), actor.v)))
        return fail(body, 404, "no such actor: %.64s", actor.v);
    t = a ? mt_task_table_find(tt, a->num) : mt_task_table_find_id(tt, task.v);
    if (!t)
        return fail(body, 404, "no output kept for %.64s (finished tasks "
                    "are forgotten after %d newer ones)", task.v ? task.v
                                                            : actor.v,
                    MT_TASK_KEEP_DONE);
    logs_json(t, offset, body);
    return 200;
}

/* ---- routes -------------------------------------------------------------- */

static bool path_is(struct mt_http_str path, const char *lit)
{
    return mt_http_str_eq(path, lit, false);
}

/* /api/nodes/ID: the ID (at most PARAM_MAX - 1 bytes) into id. */
static bool node_path(struct mt_http_str path, char id[PARAM_MAX])
{
    static const char pre[] = "/api/nodes/";
    size_t n = sizeof(pre) - 1;

    if (path.n <= n || path.n - n >= PARAM_MAX ||
        memcmp(path.p, pre, n) != 0 || memchr(path.p + n, '/', path.n - n))
        return false;
    memcpy(id, path.p + n, path.n - n);
    id[path.n - n] = '\0';
    return true;
}

int mt_head_api(struct mt_head *h, struct mt_http_str path,
                struct mt_http_str query, struct mt_strbuf *body)
{
    char id[PARAM_MAX];

    if (path_is(path, "/api/cluster_status")) {
        mt_head_status_json(h, body);
        return 200;
    }
    if (path_is(path, "/api/history"))
        return serve_history(h, query, body);
    if (path_is(path, "/api/accelerators")) {
        mt_head_api_accelerators(h, body);
        return 200;
    }
    if (path_is(path, "/api/logs"))
        return serve_logs(h, query, body);
    for (size_t i = 0; i < sizeof(listings) / sizeof(listings[0]); i++)
        if (path_is(path, listings[i].path))
            return serve_listing(h, &listings[i], query, body);
    if (node_path(path, id))
        return serve_node(h, id, query, body);
    return fail(body, 404, "no such route: %.*s", (int)(path.n > 64 ? 64
                                                                    : path.n),
                path.p);
}
