/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gangs.c -- the life cycle of gangs (see gangs.h for the story).
 *
 *   PENDING --group created--> RUNNING --all exit 0--> FINISHED
 *      ^                         | a member ends badly, or cancel
 *      |                         v
 *      +--restarts left---- STOPPING --all ended--> FAILED / CANCELLED
 *
 * An attempt: compute every member's environment from the group's slices
 * (sched/accel_env.h), draw the ports it needs from the head's range, and
 * submit one command task per member into its host's bundle with no
 * retries of its own (the gang restarts as a whole instead). Member tasks
 * carry t->gang; the task listener brings their changes back here, and
 * the group listener says when the slices are reserved.
 *
 * Every change of a gang is told to the follower (changed()); restoring
 * (at the end) rebuilds a gang from its stored record, takes its ports
 * back, attaches its member tasks once they are in, and resumes it with
 * the same steps as above once recovery has begun.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "head/checks.h"
#include "head/gangs.h"
#include "sched/accel_env.h"


struct mt_head_gangs {
    struct mt_gang **v;          /* oldest first */
    size_t n, cap;
    uint64_t next;
    struct mt_port_range ports;
    struct mt_head_tasks *tasks;
    struct mt_task_table *tt;
    struct mt_head_pgs *pgs;
    struct mt_head_sched *hs;
    struct mt_node_table *nodes;
    void (*changed_fn)(void *arg, uint64_t num);
    void *changed_arg;
    uint64_t restarts;           /* attempts started again, since start */
};

static void task_changed(void *arg, struct mt_head_task *t);
static void pg_changed(void *arg, struct mt_head_pg *pg);

static const struct mt_task_listener task_listener = {
    .changed = task_changed,
};

static const struct mt_head_pg_listener pg_listener = {
    .changed = pg_changed,
};

struct mt_head_gangs *mt_head_gangs_create(struct mt_head_tasks *tasks,
                                           struct mt_head_pgs *pgs,
                                           struct mt_head_sched *hs,
                                           struct mt_node_table *nodes,
                                           uint16_t port_lo, uint16_t port_hi)
{
    struct mt_head_gangs *gs = mt_xcalloc(1, sizeof(*gs));

    gs->tasks = tasks;
    gs->tt = mt_head_tasks_table(tasks);
    gs->pgs = pgs;
    gs->hs = hs;
    gs->nodes = nodes;
    mt_port_range_init(&gs->ports, port_lo, port_hi);
    mt_head_tasks_listen(tasks, &task_listener, gs);
    mt_head_pgs_listen(pgs, &pg_listener, gs);
    return gs;
}

/* ---- table ------------------------------------------------------------- */

void mt_head_gang_id_of(uint64_t num, char out[17])
{
    mt_num_id(MT_ID_GANG, num, out);
}

struct mt_gang *mt_head_gang_find(struct mt_head_gangs *gs, const char *id)
{
    for (size_t i = 0; id && i < gs->n; i++)
        if (strcmp(gs->v[i]->id, id) == 0)
            return gs->v[i];
    return NULL;
}

size_t mt_head_gangs_count(const struct mt_head_gangs *gs)
{
    return gs->n;
}

struct mt_gang *mt_head_gangs_at(const struct mt_head_gangs *gs, size_t i)
{
    return i < gs->n ? gs->v[i] : NULL;
}

static struct mt_gang *gang_by_num(struct mt_head_gangs *gs, uint64_t num)
{
    for (size_t i = 0; i < gs->n; i++)
        if (gs->v[i]->num == num)
            return gs->v[i];
    return NULL;
}

struct mt_gang *mt_head_gang_find_num(struct mt_head_gangs *gs, uint64_t num)
{
    return gang_by_num(gs, num);
}

void mt_head_gangs_on_changed(struct mt_head_gangs *gs,
                              void (*fn)(void *arg, uint64_t num), void *arg)
{
    gs->changed_fn = fn;
    gs->changed_arg = arg;
}

/* Tell the follower g's record changed. */
static void changed(struct mt_head_gangs *gs, const struct mt_gang *g)
{
    if (gs->changed_fn)
        gs->changed_fn(gs->changed_arg, g->num);
}

static bool gang_live(const struct mt_gang *g)
{
    return g->state == MT_HEAD_GANG_PENDING ||
           g->state == MT_HEAD_GANG_RUNNING ||
           g->state == MT_HEAD_GANG_STOPPING;
}

bool mt_head_gangs_own_pg(struct mt_head_gangs *gs, uint64_t pg)
{
    for (size_t i = 0; i < gs->n; i++)
        if (gs->v[i]->pg == pg && gang_live(gs->v[i]))
            return true;
    return false;
}

static void members_clear(struct mt_gang *g)
{
    for (uint32_t i = 0; i < g->n; i++) {
        free(g->m[i].node_id);
        free(g->m[i].error);
        g->m[i].node_id = g->m[i].error = NULL;
        g->m[i].task = 0;
        g->m[i].task_id[0] = '\0';
        g->m[i].state = 0;
        g->m[i].exit_code = 0;
    }
}

static void gang_free(struct mt_gang *g)
{
    members_clear(g);
    free(g->m);
    free(g->ports);
    for (uint32_t i = 0; g->slice_names && i < g->slices; i++)
        free(g->slice_names[i]);
    free(g->slice_names);
    free(g->error);
    mt_gang_def_release(&g->def);
    free(g);
}

void mt_head_gangs_destroy(struct mt_head_gangs *gs)
{
    if (!gs)
        return;
    for (size_t i = 0; i < gs->n; i++)
        gang_free(gs->v[i]);
    free(gs->v);
    mt_port_range_release(&gs->ports);
    free(gs);
}

static void set_error(struct mt_gang *g, char *owned)
{
    free(g->error);
    g->error = owned;
}

/* ---- ports ------------------------------------------------------------- */

/* Take the n ports a gang needs. RET 0, -MT_ENOSPC (none taken). */
static int ports_take(struct mt_head_gangs *gs, struct mt_gang *g, size_t n)
{
    uint16_t *p = mt_xcalloc(n + 1, sizeof(*p));
    int rc = mt_port_range_take(&gs->ports, n, p);

    if (rc < 0) {
        free(p);
        return rc;
    }
    g->ports = p;
    g->nports = n;
    return 0;
}

static void ports_give(struct mt_head_gangs *gs, struct mt_gang *g)
{
    mt_port_range_give(&gs->ports, g->ports, g->nports);
    free(g->ports);
    g->ports = NULL;
    g->nports = 0;
}

/* ---- ending ------------------------------------------------------------ */

static void gang_end(struct mt_head_gangs *gs, struct mt_gang *g,
                     enum mt_head_gang_state state)
{
    struct mt_head_pg *pg;

    g->state = state;
    g->end_ms = mt_now_wall_ms();
    changed(gs, g);
    ports_give(gs, g);
    if ((pg = mt_head_pg_find_num(gs->pgs, g->pg)))
        mt_head_pg_remove(gs->pgs, pg);
    MT_INFO("gang %s %s%s%s", g->id,
            state == MT_HEAD_GANG_FINISHED    ? "finished"
            : state == MT_HEAD_GANG_CANCELLED ? "cancelled"
                                              : "failed",
            g->error ? ": " : "", g->error ? g->error : "");
}

/* Stop every member still alive, for reason. The changes this causes are
 * only noted meanwhile (g->busy); the caller looks at the whole after. */
static void stop_members(struct mt_head_gangs *gs, struct mt_gang *g,
                         const char *reason)
{
    bool was = g->busy;

    g->busy = true;
    for (uint32_t i = 0; i < g->n; i++) {
        struct mt_head_task *t = g->m[i].task
                                     ? mt_task_table_find(gs->tt,
                                                          g->m[i].task)
                                     : NULL;
        if (t && !mt_head_task_terminal(t))
            mt_head_tasks_stop(gs->tasks, t, reason);
    }
    g->busy = was;
}

/* ---- starting an attempt ----------------------------------------------- */

/* The environment of every member of one attempt, in rank order. */
struct attempt_env {
    struct mt_env *env;          /* n entries */
    uint32_t n;
};

static const char *node_ip_of(struct mt_head_gangs *gs, uint32_t handle)
{
    struct mt_node *n = mt_head_sched_node(gs->hs, handle);

    return n ? n->node_ip : NULL;
}

static void add_rendezvous(struct mt_env *e, const struct mt_gang *g,
                           const char *master, uint32_t rank)
{
    char v[32];

    /* Host-centric members are ranks too: one per host, so a PyTorch
     * program runs under either launch model. */
    snprintf(v, sizeof(v), "%u", rank);
    mt_env_set(e, "RANK", v);
    snprintf(v, sizeof(v), "%u", g->n);
    mt_env_set(e, "WORLD_SIZE", v);
    mt_env_set(e, "LOCAL_RANK", "0");
    mt_env_set(e, "MASTER_ADDR", master);
    snprintf(v, sizeof(v), "%u", g->ports[0]);
    mt_env_set(e, "MASTER_PORT", v);
}

static void add_manta_vars(struct mt_env *e, const struct mt_gang *g,
                           uint32_t rank)
{
    char v[32];

    mt_env_set(e, "MANTA_GANG_ID", g->id);
    snprintf(v, sizeof(v), "%u", rank);
    mt_env_set(e, "MANTA_GANG_RANK", v);
    snprintf(v, sizeof(v), "%u", g->n);
    mt_env_set(e, "MANTA_GANG_SIZE", v);
    snprintf(v, sizeof(v), "%u", g->attempt);
    mt_env_set(e, "MANTA_GANG_ATTEMPT", v);
}

/* Env of slice j's members into out->env[j * hosts * procs ...]. */
static int slice_env(struct mt_head_gangs *gs, struct mt_gang *g, uint32_t j,
                     const char *coord, struct attempt_env *out,
                     const char **why)
{
    struct mt_slice_info si;
    const char *hosts[MT_SCHED_PG_MAX_BUNDLES];
    uint32_t per = g->hosts * g->procs;
    struct mt_tpu_gang tg;
    int rc;

    if (mt_sched_pg_slice(mt_head_sched_lib(gs->hs), g->pg, j, &si) < 0 ||
        si.nhosts != g->hosts) {
        *why = "its slice group is not placed";
        return -MT_ESTATE;
    }
    for (uint32_t i = 0; i < si.nhosts; i++)
        if (!(hosts[i] = node_ip_of(gs, si.nodes[i]))) {
            *why = "a host of its slice is not alive";
            return -MT_ESTATE;
        }
    free(g->slice_names[j]);
    g->slice_names[j] = mt_xstrdup(si.name ? si.name : "");
    memset(&tg, 0, sizeof(tg));
    tg.slice = &si.shape;
    tg.hosts = hosts;
    tg.n_hosts = si.nhosts;
    tg.slice_name = si.name;
    tg.launch = g->def.device_launch ? MT_TPU_LAUNCH_DEVICE
                                     : MT_TPU_LAUNCH_HOST;
    tg.master_port = g->ports[0];
    if (tg.launch == MT_TPU_LAUNCH_DEVICE)
        tg.ports = g->ports + 2 + (size_t)j * per;
    tg.num_slices = g->slices;
    tg.slice_id = j;
    tg.coordinator = coord;
    tg.megascale_port = g->ports[1];
    for (uint32_t i = 0; i < per; i++) {
        uint32_t r = j * per + i;
        struct mt_env *e = &out->env[r];

        rc = mt_accel_env_tpu_gang(&tg, i / g->procs, i % g->procs, e);
        if (rc < 0) {
            *why = "cannot compute the slice environment";
            return rc;
        }
        if (tg.launch == MT_TPU_LAUNCH_HOST)
            add_rendezvous(e, g, mt_tpu_gang_master_addr(&tg), r);
        add_manta_vars(e, g, r);
    }
    return 0;
}

static void attempt_env_free(struct attempt_env *a)
{
    mt_env_array_free(a->env, a->n);
    a->env = NULL;
}

/* Add the attempt's contract to d: the user's variables first, the
 * contract's win (later values replace earlier ones); unsets after. */
static void add_contract(struct mt_task_def *d, const struct mt_env *e)
{
    for (size_t i = 0; i < e->n; i++) {
        if (e->vars[i].value) {
            mt_kv_list_set(&d->env, e->vars[i].name, e->vars[i].value);
            continue;
        }
        d->env_unset = mt_xrealloc(d->env_unset, (d->n_env_unset + 1) *
                                                     sizeof(*d->env_unset));
        d->env_unset[d->n_env_unset++] = mt_xstrdup(e->vars[i].name);
    }
}

/* Build the def of member r and submit it. RET the task or NULL (why). */
static struct mt_head_task *submit_member(struct mt_head_gangs *gs,
                                          struct mt_gang *g, uint32_t r,
                                          const struct mt_env *e,
                                          const char **why)
{
    struct mt_task_def d;
    struct mt_head_task *t;
    char name[300], pg_id[17];
    int err;

    mt_task_def_init(&d);
    if (mt_task_def_copy(&d, &g->def.member) < 0)
        mt_xoom(sizeof(d));
    add_contract(&d, e);
    snprintf(name, sizeof(name), "%s/rank%u",
             g->def.name ? g->def.name : g->id, r);
    mt_num_id(MT_ID_PG, g->pg, pg_id);
    if (mt_def_set_str(&d.name, name) < 0 ||
        mt_def_set_str(&d.pg_id, pg_id) < 0)
        mt_xoom(sizeof(name));
    d.kind = MT_TASK_KIND_COMMAND;
    d.place = MT_PLACE_PG;
    d.bundle = (int32_t)(g->m[r].slice * g->hosts + g->m[r].host);
    d.max_retries = 0;
    if (d.res.n == 0) /* members take no CPU unless they ask */
        mt_qty_list_set(&d.res, "CPU", 0);
    t = mt_head_tasks_submit(gs->tasks, &d, why, &err);
    if (t) {
        t->gang = g->num;
        t->gang_rank = r;
    }
    return t;
}

static void fail_now(struct mt_head_gangs *gs, struct mt_gang *g,
                     const char *why)
{
    set_error(g, mt_xasprintf("cannot start attempt %u: %s", g->attempt + 1,
                              why));
    g->exit_code = 1;
    stop_members(gs, g, "its gang could not start");
    members_clear(g);
    gang_end(gs, g, MT_HEAD_GANG_FAILED);
}

/* The group is created: compute the env and submit every member. */
static void start_attempt(struct mt_head_gangs *gs, struct mt_gang *g)
{
    struct attempt_env a = {mt_xcalloc(g->n, sizeof(struct mt_env)), g->n};
    const char *why = NULL, *coord;
    struct mt_slice_info s0;
    int rc = 0;

    for (uint32_t i = 0; i < g->n; i++)
        mt_env_init(&a.env[i]);
    if (mt_sched_pg_slice(mt_head_sched_lib(gs->hs), g->pg, 0, &s0) < 0 ||
        !(coord = node_ip_of(gs, s0.nodes[0]))) {
        attempt_env_free(&a);
        return; /* not placed (any more): wait for the group */
    }
    coord = mt_xstrdup(coord);
    for (uint32_t j = 0; j < g->slices && rc == 0; j++)
        rc = slice_env(gs, g, j, coord, &a, &why);
    free((char *)coord);
    if (rc < 0) {
        attempt_env_free(&a);
        if (rc == -MT_ESTATE)
            return; /* a host went away meanwhile: wait for the group */
        fail_now(gs, g, why);
        return;
    }
    members_clear(g);
    g->state = MT_HEAD_GANG_RUNNING;
    for (uint32_t r = 0; r < g->n; r++) {
        struct mt_head_task *t = submit_member(gs, g, r, &a.env[r], &why);

        if (!t) {
            attempt_env_free(&a);
            fail_now(gs, g, why ? why : "a member was refused");
            return;
        }
        g->m[r].task = t->num;
        memcpy(g->m[r].task_id, t->id, sizeof(t->id));
        g->m[r].state = t->state;
    }
    attempt_env_free(&a);
    changed(gs, g);
    MT_INFO("gang %s attempt %u: %u members started on %u slice(s)", g->id,
            g->attempt + 1, g->n, g->slices);
}

/* Group pg was created (or re-created after a node died): start a gang
 * that waits for it. */
static void pg_changed(void *arg, struct mt_head_pg *pg)
{
    struct mt_head_gangs *gs = arg;

    if (pg->state != MT_HEAD_PG_CREATED)
        return;
    for (size_t i = 0; i < gs->n; i++)
        if (gs->v[i]->pg == pg->num && gs->v[i]->state == MT_HEAD_GANG_PENDING)
            start_attempt(gs, gs->v[i]);
}

/* ---- members ending ---------------------------------------------------- */

static bool member_ended(const struct mt_gang_member *m)
{
    return m->state == MT_TASK_FINISHED || m->state == MT_TASK_FAILED ||
           m->state == MT_TASK_CANCELLED;
}

static bool member_ok(const struct mt_gang_member *m)
{
    return m->state == MT_TASK_FINISHED && m->exit_code == 0;
}

/* Why member m ended badly, for people. RET owned string. */
static char *member_why(const struct mt_gang_member *m)
{
    if (m->state == MT_TASK_FINISHED)
        return mt_xasprintf("rank %u (task %s) exited with code %d", m->rank,
                            m->task_id, m->exit_code);
    return mt_xasprintf("rank %u (task %s) %s: %s", m->rank, m->task_id,
                        m->state == MT_TASK_CANCELLED ? "was cancelled"
                                                      : "failed",
                        m->error ? m->error : "no reason given");
}

/* Every member has ended: finish, restart or fail the gang. */
static void attempt_over(struct mt_head_gangs *gs, struct mt_gang *g)
{
    int32_t max = g->def.max_restarts;
    enum mt_sched_pg_state st;

    if (g->cancel) {
        gang_end(gs, g, MT_HEAD_GANG_CANCELLED);
        return;
    }
    if (g->state == MT_HEAD_GANG_RUNNING) {
        g->exit_code = 0;
        set_error(g, NULL);
        gang_end(gs, g, MT_HEAD_GANG_FINISHED);
        return;
    }
    if (max >= 0 && g->attempt >= (uint32_t)max) {
        gang_end(gs, g, MT_HEAD_GANG_FAILED);
        return;
    }
    g->attempt++;
    gs->restarts++;
    g->state = MT_HEAD_GANG_PENDING;
    changed(gs, g);
    MT_INFO("gang %s restarting (attempt %u): %s", g->id, g->attempt + 1,
            g->error ? g->error : "");
    if (mt_sched_pg_state(mt_head_sched_lib(gs->hs), g->pg, &st) == 0 &&
        st == MT_SCHED_PG_CREATED)
        start_attempt(gs, g);
}

static void check_all_ended(struct mt_head_gangs *gs, struct mt_gang *g)
{
    for (uint32_t i = 0; i < g->n; i++)
        if (!member_ended(&g->m[i]))
            return;
    attempt_over(gs, g);
}

/* After member m ended: stop the rest if it failed; end the attempt once
 * every member has ended. */
static void gang_check(struct mt_head_gangs *gs, struct mt_gang *g,
                       const struct mt_gang_member *m)
{
    if (!member_ok(m) && g->state == MT_HEAD_GANG_RUNNING) {
        char *why = member_why(m);

        g->state = MT_HEAD_GANG_STOPPING;
        changed(gs, g);
        g->exit_code = m->state == MT_TASK_FINISHED && m->exit_code > 0 &&
                               m->exit_code < 256
                           ? m->exit_code : 1;
        if (!g->cancel)
            set_error(g, why);
        else
            free(why);
        MT_WARN("gang %s: %s; stopping the other members", g->id,
                g->error ? g->error : "cancelled");
        stop_members(gs, g, g->cancel ? "its gang was cancelled"
                                      : "another member of its gang failed");
    }
    check_all_ended(gs, g);
}

/* Member task t changed state; its end drives the gang. */
static void task_changed(void *arg, struct mt_head_task *t)
{
    struct mt_head_gangs *gs = arg;
    struct mt_gang *g = t->gang ? gang_by_num(gs, t->gang) : NULL;
    struct mt_gang_member *m;

    if (!g || t->gang_rank >= g->n || g->m[t->gang_rank].task != t->num)
        return; /* not a member, or one of an attempt already over */
    m = &g->m[t->gang_rank];
    m->state = t->state;
    changed(gs, g);
    if (t->node_id && *t->node_id && (!m->node_id ||
                                      strcmp(m->node_id, t->node_id))) {
        free(m->node_id);
        m->node_id = mt_xstrdup(t->node_id);
    }
    if (!mt_head_task_terminal(t))
        return;
    m->exit_code = t->exit_code;
    free(m->error);
    m->error = t->error ? mt_xstrdup(t->error) : NULL;
    if (!g->busy)
        gang_check(gs, g, m);
}

void mt_head_gang_cancel(struct mt_head_gangs *gs, struct mt_gang *g)
{
    bool any = false;

    if (!gang_live(g) || g->cancel)
        return;
    g->cancel = true;
    changed(gs, g);
    set_error(g, mt_xstrdup("cancelled"));
    for (uint32_t i = 0; i < g->n; i++)
        any |= g->m[i].task && !member_ended(&g->m[i]);
    if (!any) {
        gang_end(gs, g, MT_HEAD_GANG_CANCELLED);
        return;
    }
    g->state = MT_HEAD_GANG_STOPPING;
    stop_members(gs, g, "its gang was cancelled");
    check_all_ended(gs, g);
}

/* ---- submitting -------------------------------------------------------- */

static uint32_t procs_per_host(const struct mt_gang_def *def,
                               const struct mt_tpu_slice *shape)
{
    struct mt_tpu_gang tg = {.slice = shape};

    tg.launch = def->device_launch ? MT_TPU_LAUNCH_DEVICE : MT_TPU_LAUNCH_HOST;
    return mt_tpu_gang_procs_per_host(&tg);
}

/* Member resources x procs: what each host's bundle holds beyond chips. */
static const char *per_host_res(struct mt_head_gangs *gs,
                                const struct mt_task_def *m, uint32_t procs,
                                struct mt_res_set *out)
{
    struct mt_sched *s = mt_head_sched_lib(gs->hs);

    mt_res_set_init(out);
    for (size_t i = 0; i < m->res.n; i++) {
        int id = mt_sched_resource_id(s, m->res.v[i].name);
        int64_t q = m->res.v[i].qty;

        if (id < 0 || q < 0 || q > INT64_MAX / (int64_t)procs ||
            (q && mt_res_set_add(out, id, q * procs) < 0))
            return "bad member resource (name or quantity)";
    }
    return NULL;
}

/* A gang from def (taken) numbered num (0: the next number). */
static struct mt_gang *gang_new(struct mt_head_gangs *gs,
                                struct mt_gang_def *def,
                                const struct mt_tpu_slice *shape,
                                uint64_t num)
{
    struct mt_gang *g = mt_xcalloc(1, sizeof(*g));

    g->def = *def;
    memset(def, 0, sizeof(*def));
    mt_task_def_init(&def->member);
    g->num = num ? num : ++gs->next;
    mt_head_gang_id_of(g->num, g->id);
    g->state = MT_HEAD_GANG_PENDING;
    g->hosts = shape->hosts;
    g->slices = g->def.slices ? g->def.slices : 1;
    g->procs = procs_per_host(&g->def, shape);
    g->n = g->slices * g->hosts * g->procs;
    g->m = mt_xcalloc(g->n, sizeof(*g->m));
    for (uint32_t r = 0; r < g->n; r++) {
        g->m[r].rank = r;
        g->m[r].slice = r / (g->hosts * g->procs);
        g->m[r].host = (r / g->procs) % g->hosts;
        g->m[r].local = r % g->procs;
    }
    g->slice_names = mt_xcalloc(g->slices, sizeof(*g->slice_names));
    g->submit_ms = mt_now_wall_ms();
    return g;
}

/* The gang's slice group: whole slices, each host's bundle holding
 * extra on top of its chips. RET the group or NULL (why, err). */
static struct mt_head_pg *slice_group(struct mt_head_gangs *gs,
                                      const struct mt_gang *g,
                                      const struct mt_res_set *extra,
                                      const char **why, int *err)
{
    struct mt_pg_def pd;

    memset(&pd, 0, sizeof(pd));
    pd.tpu_slices = g->slices;
    if (mt_def_set_str(&pd.name, g->id) < 0 ||
        mt_def_set_str(&pd.tpu_pod_type, g->def.pod_type) < 0 ||
        mt_def_set_str(&pd.tpu_topology, g->def.topology) < 0)
        mt_xoom(sizeof(g->id));
    return mt_head_pg_create(gs->pgs, &pd, extra, why, err);
}

struct mt_gang *mt_head_gang_submit(struct mt_head_gangs *gs,
                                    struct mt_gang_def *def, const char **why,
                                    int *err)
{
    struct mt_tpu_slice shape;
    struct mt_res_set extra;
    struct mt_head_pg *pg;
    struct mt_gang *g;

    *err = -MT_EINVAL;
    if ((*why = mt_head_gang_def_check(def, &shape))) {
        mt_gang_def_release(def);
        return NULL;
    }
    g = gang_new(gs, def, &shape, 0);
    if ((*why = per_host_res(gs, &g->def.member, g->procs, &extra))) {
        gang_free(g);
        return NULL;
    }
    /* master, megascale, then one per device-centric process */
    if (ports_take(gs, g, 2 + (g->def.device_launch ? g->n : 0)) < 0) {
        gang_free(g);
        *err = -MT_ENOSPC;
        *why = "not enough free ports in the head's gang port range "
               "(manta-head --gang-ports)";
        return NULL;
    }
    if (!(pg = slice_group(gs, g, &extra, why, err))) {
        ports_give(gs, g);
        gang_free(g);
        return NULL;
    }
    g->pg = pg->num;
    mt_xgrow((void **)&gs->v, &gs->cap, gs->n + 1, sizeof(*gs->v));
    gs->v[gs->n++] = g;
    changed(gs, g);
    MT_INFO("gang %s submitted: %u x %s, %u members", g->id, g->slices,
            g->def.pod_type, g->n);
    if (pg->state == MT_HEAD_PG_CREATED)
        start_attempt(gs, g);
    return g;
}

/* ---- restoring (persist.h) --------------------------------------------- */

/* Does the stored record fit the gang def made (its shape, members)? */
static const char *saved_fits(const struct mt_gang *g,
                              const struct mt_gang_saved *sv)
{
    if (sv->hosts != g->hosts || sv->slices != g->slices ||
        sv->procs != g->procs || sv->n_members != g->n)
        return "its shape or members do not match its definition";
    if (sv->state < MT_HEAD_GANG_PENDING ||
        sv->state > MT_HEAD_GANG_CANCELLED)
        return "unknown state";
    if (sv->nports > 2 + (size_t)g->n)
        return "too many ports";
    return NULL;
}

/* The stored record's fields onto g, made from its def. */
static void saved_fill(struct mt_head_gangs *gs, struct mt_gang *g,
                       const struct mt_gang_saved *sv)
{
    g->state = sv->state;
    g->pg = sv->pg;
    g->attempt = sv->attempt;
    g->cancel = sv->cancel;
    g->exit_code = sv->exit_code;
    if (sv->error && *sv->error)
        set_error(g, mt_xstrdup(sv->error));
    g->submit_ms = sv->submit_ms;
    g->end_ms = sv->end_ms;
    for (size_t j = 0; j < g->slices && j < sv->n_slice_names; j++)
        if (sv->slice_names[j] && *sv->slice_names[j])
            g->slice_names[j] = mt_xstrdup(sv->slice_names[j]);
    for (uint32_t r = 0; r < g->n; r++) {
        g->m[r].task = sv->member_tasks[r];
        if (g->m[r].task)
            mt_num_id(MT_ID_TASK, g->m[r].task, g->m[r].task_id);
    }
    if (gang_live(g) && sv->nports) {
        g->ports = mt_xcalloc(sv->nports, sizeof(*g->ports));
        memcpy(g->ports, sv->ports, sv->nports * sizeof(*g->ports));
        g->nports = sv->nports;
        mt_port_range_mark(&gs->ports, g->ports, g->nports);
    }
}

/* Put g into the table, which stays in number order (oldest first). */
static void table_insert(struct mt_head_gangs *gs, struct mt_gang *g)
{
    size_t i = gs->n;

    mt_xgrow((void **)&gs->v, &gs->cap, gs->n + 1, sizeof(*gs->v));
    while (i > 0 && gs->v[i - 1]->num > g->num) {
        gs->v[i] = gs->v[i - 1];
        i--;
    }
    gs->v[i] = g;
    gs->n++;
    if (g->num > gs->next)
        gs->next = g->num;
}

struct mt_gang *mt_head_gang_restore(struct mt_head_gangs *gs,
                                     struct mt_gang_saved *sv,
                                     const char **why)
{
    struct mt_tpu_slice shape;
    struct mt_gang *g;

    if (!sv->num || gang_by_num(gs, sv->num)) {
        mt_gang_def_release(&sv->def);
        *why = "a gang with that number exists";
        return NULL;
    }
    if ((*why = mt_head_gang_def_check(&sv->def, &shape))) {
        mt_gang_def_release(&sv->def);
        return NULL;
    }
    g = gang_new(gs, &sv->def, &shape, sv->num);
    if ((*why = saved_fits(g, sv))) {
        gang_free(g);
        return NULL;
    }
    saved_fill(gs, g, sv);
    table_insert(gs, g);
    return g;
}

bool mt_head_gangs_pg_hint(struct mt_head_gangs *gs, uint64_t pg,
                           const char *const **names,
                           struct mt_res_set *per_host)
{
    struct mt_gang *g = NULL;

    *names = NULL;
    mt_res_set_init(per_host);
    for (size_t i = 0; i < gs->n && !g; i++)
        if (gs->v[i]->pg == pg && gang_live(gs->v[i]))
            g = gs->v[i];
    if (!g || per_host_res(gs, &g->def.member, g->procs, per_host))
        return g != NULL;
    for (uint32_t j = 0; j < g->slices; j++)
        if (!g->slice_names[j] || !*g->slice_names[j])
            return true;
    *names = (const char *const *)g->slice_names;
    return true;
}

/* Member m of g takes the state of its restored task t. */
static void member_attach(struct mt_gang *g, struct mt_gang_member *m,
                          struct mt_head_task *t)
{
    t->gang = g->num;
    t->gang_rank = m->rank;
    m->state = t->state;
    m->exit_code = t->exit_code;
    free(m->node_id);
    m->node_id = t->node_id && *t->node_id ? mt_xstrdup(t->node_id) : NULL;
    free(m->error);
    m->error = t->error ? mt_xstrdup(t->error) : NULL;
}

void mt_head_gangs_attach(struct mt_head_gangs *gs)
{
    for (size_t i = 0; i < gs->n; i++) {
        struct mt_gang *g = gs->v[i];

        for (uint32_t r = 0; r < g->n; r++) {
            struct mt_gang_member *m = &g->m[r];
            struct mt_head_task *t = m->task ? mt_task_table_find(gs->tt,
                                                                  m->task)
                                             : NULL;
            if (t) {
                member_attach(g, m, t);
            } else if (m->task && gang_live(g)) {
                m->state = MT_TASK_FAILED;
                free(m->error);
                m->error = mt_xstrdup("its task was lost in a head restart");
            }
        }
    }
}

/* The first member of g that ended badly, or NULL. */
static const struct mt_gang_member *bad_member(const struct mt_gang *g)
{
    for (uint32_t r = 0; r < g->n; r++)
        if (member_ended(&g->m[r]) && !member_ok(&g->m[r]))
            return &g->m[r];
    return NULL;
}

static void resume_one(struct mt_head_gangs *gs, struct mt_gang *g)
{
    const struct mt_gang_member *m;
    enum mt_sched_pg_state st;

    switch (g->state) {
    case MT_HEAD_GANG_PENDING:
        if (mt_sched_pg_state(mt_head_sched_lib(gs->hs), g->pg, &st) == 0 &&
            st == MT_SCHED_PG_CREATED)
            start_attempt(gs, g);
        return;
    case MT_HEAD_GANG_STOPPING:
        stop_members(gs, g, g->cancel ? "its gang was cancelled"
                                      : "another member of its gang failed");
        check_all_ended(gs, g);
        return;
    case MT_HEAD_GANG_RUNNING:
        if ((m = bad_member(g)))
            gang_check(gs, g, m);
        else
            check_all_ended(gs, g);
        return;
    default:
        return;
    }
}

void mt_head_gangs_resume(struct mt_head_gangs *gs)
{
    size_t n = gs->n;

    for (size_t i = 0; i < n; i++) {
        struct mt_gang *g = gs->v[i];

        if (!gang_live(g))
            continue;
        MT_INFO("gang %s restored: %s, attempt %u", g->id,
                g->state == MT_HEAD_GANG_PENDING   ? "pending"
                : g->state == MT_HEAD_GANG_RUNNING ? "running"
                                                   : "stopping",
                g->attempt + 1);
        resume_one(gs, g);
    }
}

uint64_t mt_head_gangs_restarts(const struct mt_head_gangs *gs)
{
    return gs->restarts;
}
