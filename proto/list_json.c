/* SPDX-License-Identifier: Apache-2.0 */
/*
 * list_json.c -- the JSON forms of the head's listings (see list_json.h).
 * Resource maps and GPU figures come from status_json.c, so nodes read the
 * same in `manta status` and `manta list nodes`.
 */
#include "proto/list_json.h"

#include <string.h>
#include <strings.h>

#include "common/ids.h"
#include "proto/status_json.h"

/* ---- names of the protocol's enums --------------------------------------- */

static const char *name_of(const char *const *names, size_t n, int v)
{
    return v >= 0 && (size_t)v < n && names[v] ? names[v] : "UNKNOWN";
}

#define NAME_OF(names, v) name_of(names, sizeof(names) / sizeof(names[0]), v)

static const char *task_state(int s)
{
    static const char *const names[] = {
        NULL,      "WAITING_FOR_ARGS", "PENDING",  "SCHEDULED",
        "RUNNING", "FINISHED",         "FAILED",   "CANCELLED"};

    return NAME_OF(names, s);
}

static const char *actor_state(int s)
{
    static const char *const names[] = {NULL, "PENDING_CREATION", "ALIVE",
                                        "RESTARTING", "DEAD"};

    return NAME_OF(names, s);
}

static const char *pg_state(int s)
{
    static const char *const names[] = {NULL, "PENDING", "CREATED",
                                        "RESCHEDULING", "REMOVED"};

    return NAME_OF(names, s);
}

static const char *pg_strategy(int s)
{
    static const char *const names[] = {"PACK", "SPREAD", "STRICT_PACK",
                                        "STRICT_SPREAD"};

    return NAME_OF(names, s);
}

static const char *object_state(int s)
{
    static const char *const names[] = {"UNKNOWN", "PENDING", "READY",
                                        "LOST", "FAILED"};

    return NAME_OF(names, s);
}

static const char *gang_state(int s)
{
    static const char *const names[] = {NULL,       "PENDING",  "RUNNING",
                                        "STOPPING", "FINISHED", "FAILED",
                                        "CANCELLED"};

    return NAME_OF(names, s);
}

/* ---- small pieces -------------------------------------------------------- */

static void json_strings(struct mt_strbuf *sb, char *const *v, size_t n)
{
    mt_strbuf_adds(sb, "[");
    for (size_t i = 0; i < n; i++) {
        mt_strbuf_adds(sb, i ? ", " : "");
        mt_strbuf_add_json_str(sb, v[i]);
    }
    mt_strbuf_adds(sb, "]");
}

/* The list framing: entries on their own lines, "]}" closing. */
static void open_list(struct mt_strbuf *sb, uint64_t total, const char *key)
{
    mt_strbuf_addf(sb, "{\"total\": %llu, \"%s\": [",
                   (unsigned long long)total, key);
}

static void next_entry(struct mt_strbuf *sb, size_t i)
{
    mt_strbuf_adds(sb, i ? ",\n  " : "\n  ");
}

static void close_list(struct mt_strbuf *sb, size_t n)
{
    mt_strbuf_adds(sb, n ? "\n]}\n" : "]}\n");
}

/* ---- nodes --------------------------------------------------------------- */

void mt_json_node(struct mt_strbuf *sb, const Manta__NodeInfo *n)
{
    mt_strbuf_adds(sb, "{\"node_id\": ");
    mt_strbuf_add_json_str(sb, n->node_id);
    mt_strbuf_addf(sb, ", \"state\": \"%s\"",
                   n->state == MANTA__NODE_STATE__NODE_STATE_ALIVE ? "ALIVE"
                                                                   : "DEAD");
    mt_status_json_node_host(sb, n);
    mt_status_json_node_res(sb, n);
    mt_status_json_usage(sb, n->usage);
    mt_strbuf_addf(sb, ", \"start_time_ms\": %lld, \"death_reason\": ",
                   (long long)n->start_time_ms);
    mt_strbuf_add_json_str(sb, n->death_reason);
    mt_strbuf_adds(sb, ", \"gpus\": ");
    mt_status_json_gpus(sb, n->usage);
    mt_strbuf_adds(sb, "}");
}

void mt_list_json_nodes(struct mt_strbuf *sb, Manta__NodeInfo *const *nodes,
                        size_t n, uint64_t total)
{
    open_list(sb, total, "nodes");
    for (size_t i = 0; i < n; i++) {
        next_entry(sb, i);
        mt_json_node(sb, nodes[i]);
    }
    close_list(sb, n);
}

/* ---- tasks --------------------------------------------------------------- */

static void json_selector(struct mt_strbuf *sb, const Manta__TaskSpec *s)
{
    static const char *const ops[] = {"eq",     "ne",     "in",
                                      "notin",  "exists", "notexists"};

    mt_strbuf_adds(sb, "[");
    for (size_t i = 0; i < s->n_label_selector; i++) {
        const Manta__LabelMatch *m = s->label_selector[i];
        unsigned op = (unsigned)m->op;

        mt_strbuf_adds(sb, i ? ", {\"key\": " : "{\"key\": ");
        mt_strbuf_add_json_str(sb, m->key);
        mt_strbuf_addf(sb, ", \"op\": \"%s\", \"values\": ",
                       op < 6 ? ops[op] : "unknown");
        json_strings(sb, m->values, m->n_values);
        mt_strbuf_adds(sb, "}");
    }
    mt_strbuf_adds(sb, "]");
}

static const char *strategy_name(Manta__SchedulingStrategy s)
{
    static const char *const names[] = {"DEFAULT", "SPREAD", "NODE_AFFINITY",
                                        "PLACEMENT_GROUP"};

    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s]
                                                          : "UNKNOWN";
}

static void json_task(struct mt_strbuf *sb, const Manta__TaskInfo *ti)
{
    static const Manta__TaskSpec empty = MANTA__TASK_SPEC__INIT;
    const Manta__TaskSpec *s = ti->spec ? ti->spec : &empty;

    mt_strbuf_adds(sb, "{\"task_id\": ");
    mt_strbuf_add_json_str(sb, s->task_id);
    mt_strbuf_adds(sb, ", \"name\": ");
    mt_strbuf_add_json_str(sb, s->name);
    mt_strbuf_addf(sb, ", \"state\": \"%s\", \"node_id\": ",
                   task_state(ti->state));
    mt_strbuf_add_json_str(sb, ti->node_id);
    mt_strbuf_addf(sb, ", \"attempt\": %u, \"exit_code\": %d, \"error\": ",
                   ti->attempt, ti->exit_code);
    mt_strbuf_add_json_str(sb, ti->error);
    mt_strbuf_adds(sb, ", \"argv\": ");
    json_strings(sb, s->argv, s->n_argv);
    mt_strbuf_adds(sb, ", \"resources\": ");
    mt_status_json_res(sb, s->resources, s->n_resources);
    mt_strbuf_adds(sb, ", \"label_selector\": ");
    json_selector(sb, s);
    mt_strbuf_addf(sb, ", \"priority\": %d, \"max_retries\": %d, "
                       "\"strategy\": \"%s\"",
                   s->priority, s->max_retries, strategy_name(s->strategy));
    if (s->strategy == MANTA__SCHEDULING_STRATEGY__STRATEGY_NODE_AFFINITY) {
        mt_strbuf_adds(sb, ", \"affinity_node\": ");
        mt_strbuf_add_json_str(sb, s->affinity_node_id);
        mt_strbuf_addf(sb, ", \"affinity_soft\": %s",
                       s->affinity_soft ? "true" : "false");
    }
    if (s->n_env) { /* only when asked for (show_env) */
        mt_strbuf_adds(sb, ", \"env\": {");
        for (size_t i = 0; i < s->n_env; i++) {
            mt_strbuf_adds(sb, i ? ", " : "");
            mt_strbuf_add_json_str(sb, s->env[i]->key);
            mt_strbuf_adds(sb, ": ");
            mt_strbuf_add_json_str(sb, s->env[i]->value);
        }
        mt_strbuf_adds(sb, "}");
    }
    if (*ti->gang_id) {
        mt_strbuf_adds(sb, ", \"gang_id\": ");
        mt_strbuf_add_json_str(sb, ti->gang_id);
        mt_strbuf_addf(sb, ", \"gang_rank\": %u", ti->gang_rank);
    }
    mt_strbuf_addf(sb, ", \"submit_time_ms\": %lld, \"start_time_ms\": %lld, "
                       "\"end_time_ms\": %lld}",
                   (long long)ti->submit_time_ms, (long long)ti->start_time_ms,
                   (long long)ti->end_time_ms);
}

void mt_list_json_tasks(struct mt_strbuf *sb, const Manta__ListTasksReply *r)
{
    /* An older head's total may lag the page: never below what is shown. */
    open_list(sb, r->total > r->n_tasks ? r->total : r->n_tasks, "tasks");
    for (size_t i = 0; i < r->n_tasks; i++) {
        next_entry(sb, i);
        json_task(sb, r->tasks[i]);
    }
    close_list(sb, r->n_tasks);
}

/* ---- actors -------------------------------------------------------------- */

void mt_json_actor(struct mt_strbuf *sb, const Manta__ActorInfo *a)
{
    mt_strbuf_adds(sb, "{\"actor_id\": ");
    mt_strbuf_add_json_str(sb, a->actor_id);
    mt_strbuf_adds(sb, ", \"name\": ");
    mt_strbuf_add_json_str(sb, a->name);
    mt_strbuf_addf(sb, ", \"state\": \"%s\", \"node_id\": ",
                   actor_state(a->state));
    mt_strbuf_add_json_str(sb, a->node_id);
    mt_strbuf_adds(sb, ", \"function\": ");
    mt_strbuf_add_json_str(sb, a->function);
    mt_strbuf_addf(sb, ", \"detached\": %s, \"max_restarts\": %d, "
                   "\"num_restarts\": %u, \"pid\": %u, \"death_reason\": ",
                   a->detached ? "true" : "false", a->max_restarts,
                   a->num_restarts, a->pid);
    mt_strbuf_add_json_str(sb, a->death_reason);
    mt_strbuf_adds(sb, ", \"owner_id\": ");
    mt_strbuf_add_json_str(sb, a->owner_id);
    mt_strbuf_addf(sb, ", \"calls_queued\": %llu, \"calls_dispatched\": %llu"
                   ", \"create_time_ms\": %lld, \"end_time_ms\": %lld}",
                   (unsigned long long)a->calls_queued,
                   (unsigned long long)a->calls_dispatched,
                   (long long)a->create_time_ms, (long long)a->end_time_ms);
}

void mt_list_json_actors(struct mt_strbuf *sb,
                         const Manta__ListActorsReply *r)
{
    open_list(sb, r->total, "actors");
    for (size_t i = 0; i < r->n_actors; i++) {
        next_entry(sb, i);
        mt_json_actor(sb, r->actors[i]);
    }
    close_list(sb, r->n_actors);
}

/* ---- placement groups ---------------------------------------------------- */

static void json_pg(struct mt_strbuf *sb, const Manta__PlacementGroupInfo *g)
{
    mt_strbuf_adds(sb, "{\"pg_id\": ");
    mt_strbuf_add_json_str(sb, g->pg_id);
    mt_strbuf_adds(sb, ", \"name\": ");
    mt_strbuf_add_json_str(sb, g->name);
    mt_strbuf_addf(sb, ", \"state\": \"%s\", \"strategy\": \"%s\"",
                   pg_state(g->state), pg_strategy(g->strategy));
    mt_strbuf_adds(sb, ", \"bundles\": [");
    for (size_t b = 0; b < g->n_bundles; b++) {
        mt_strbuf_adds(sb, b ? ", " : "");
        mt_status_json_res(sb, g->bundles[b]->resources,
                           g->bundles[b]->n_resources);
    }
    mt_strbuf_adds(sb, "], \"bundle_node_ids\": ");
    json_strings(sb, g->bundle_node_ids, g->n_bundle_node_ids);
    mt_strbuf_adds(sb, ", \"error\": ");
    mt_strbuf_add_json_str(sb, g->error);
    mt_strbuf_addf(sb, ", \"create_time_ms\": %lld}",
                   (long long)g->create_time_ms);
}

void mt_list_json_pgs(struct mt_strbuf *sb,
                      const Manta__ListPlacementGroupsReply *r)
{
    open_list(sb, r->total, "placement_groups");
    for (size_t i = 0; i < r->n_groups; i++) {
        next_entry(sb, i);
        json_pg(sb, r->groups[i]);
    }
    close_list(sb, r->n_groups);
}

/* ---- objects ------------------------------------------------------------- */

static void json_obj(struct mt_strbuf *sb, const Manta__ObjectRecord *o)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1] = "?";
    mt_object_id id;

    if (o->object_id.len == MT_OBJECT_ID_LEN) {
        memcpy(id.b, o->object_id.data, MT_OBJECT_ID_LEN);
        mt_object_id_hex(&id, hex);
    }
    mt_strbuf_addf(sb, "{\"object_id\": \"%s\", \"state\": \"%s\", "
                   "\"size\": %llu, \"inline\": %s, \"ref_count\": %u, "
                   "\"locations\": ", hex, object_state(o->state),
                   (unsigned long long)o->size,
                   o->is_inline ? "true" : "false", o->ref_count);
    json_strings(sb, o->node_ids, o->n_node_ids);
    mt_strbuf_adds(sb, ", \"owner\": ");
    mt_strbuf_add_json_str(sb, o->owner);
    mt_strbuf_adds(sb, ", \"error\": ");
    mt_strbuf_add_json_str(sb, o->error);
    mt_strbuf_adds(sb, "}");
}

void mt_list_json_objects(struct mt_strbuf *sb,
                          const Manta__ListObjectsReply *r)
{
    open_list(sb, r->total, "objects");
    for (size_t i = 0; i < r->n_objects; i++) {
        next_entry(sb, i);
        json_obj(sb, r->objects[i]);
    }
    close_list(sb, r->n_objects);
}

/* ---- gangs --------------------------------------------------------------- */

static void json_member(struct mt_strbuf *sb, const Manta__GangMember *m)
{
    mt_strbuf_addf(sb, "{\"rank\": %u, \"slice\": %u, \"host\": %u, "
                   "\"local\": %u, \"task_id\": ", m->rank, m->slice,
                   m->host, m->local);
    mt_strbuf_add_json_str(sb, m->task_id);
    mt_strbuf_adds(sb, ", \"node_id\": ");
    mt_strbuf_add_json_str(sb, m->node_id);
    mt_strbuf_addf(sb, ", \"state\": \"%s\", \"exit_code\": %d, "
                   "\"error\": ", task_state(m->state), m->exit_code);
    mt_strbuf_add_json_str(sb, m->error);
    mt_strbuf_adds(sb, "}");
}

void mt_json_gang(struct mt_strbuf *sb, const Manta__GangInfo *g)
{
    mt_strbuf_adds(sb, "{\"gang_id\": ");
    mt_strbuf_add_json_str(sb, g->gang_id);
    mt_strbuf_adds(sb, ", \"name\": ");
    mt_strbuf_add_json_str(sb, g->name);
    mt_strbuf_addf(sb, ", \"state\": \"%s\", \"tpu_pod_type\": ",
                   gang_state(g->state));
    mt_strbuf_add_json_str(sb, g->tpu_pod_type);
    mt_strbuf_addf(sb, ", \"slices\": %u, \"launch\": \"%s\", \"pg_id\": ",
                   g->tpu_slices,
                   g->launch == MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE
                       ? "device" : "host");
    mt_strbuf_add_json_str(sb, g->pg_id);
    mt_strbuf_adds(sb, ", \"slice_names\": ");
    json_strings(sb, g->slice_names, g->n_slice_names);
    mt_strbuf_addf(sb, ", \"attempt\": %u, \"max_restarts\": %d, "
                   "\"exit_code\": %d, \"error\": ", g->attempt,
                   g->max_restarts, g->exit_code);
    mt_strbuf_add_json_str(sb, g->error);
    mt_strbuf_addf(sb, ", \"submit_time_ms\": %lld, \"end_time_ms\": %lld, "
                   "\"members\": [", (long long)g->submit_time_ms,
                   (long long)g->end_time_ms);
    for (size_t i = 0; i < g->n_members; i++) {
        mt_strbuf_adds(sb, i ? ", " : "");
        json_member(sb, g->members[i]);
    }
    mt_strbuf_adds(sb, "]}");
}

void mt_list_json_gangs(struct mt_strbuf *sb, const Manta__ListGangsReply *r)
{
    mt_strbuf_addf(sb, "{\"total\": %llu, \"gangs\": [",
                   (unsigned long long)r->total);
    for (size_t i = 0; i < r->n_gangs; i++) {
        mt_strbuf_adds(sb, i ? ", " : "");
        mt_json_gang(sb, r->gangs[i]);
    }
    mt_strbuf_adds(sb, "]}\n");
}

/* ---- the dashboard's pages and filters ----------------------------------- */

void mt_list_json_paged(struct mt_strbuf *sb, const char *listing,
                        size_t len, uint32_t offset, uint32_t limit)
{
    mt_strbuf_addf(sb, "{\"offset\": %u, \"limit\": %u", offset, limit);
    if (len > 1 && listing[0] == '{') {
        mt_strbuf_adds(sb, ", ");
        mt_strbuf_add(sb, listing + 1, len - 1);
    } else {
        mt_strbuf_adds(sb, "}\n");
    }
}

static const char *node_state(int s)
{
    return s == 1 ? "ALIVE" : s == 2 ? "DEAD" : "UNKNOWN";
}

int mt_list_json_state(const char *kind, const char *name)
{
    static const struct {
        const char *kind;
        const char *(*name_of)(int s);
    } kinds[] = {
        {"tasks", task_state},     {"actors", actor_state},
        {"placement_groups", pg_state}, {"objects", object_state},
        {"gangs", gang_state},     {"nodes", node_state},
    };

    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        if (strcmp(kind, kinds[k].kind) != 0)
            continue;
        for (int v = 1; v < 32; v++) {
            const char *n = kinds[k].name_of(v);

            if (strcmp(n, "UNKNOWN") == 0)
                break;
            if (strcasecmp(n, name) == 0)
                return v;
        }
    }
    return 0;
}
