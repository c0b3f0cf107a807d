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
 * carry t->gang so their changes come back here.
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
#include "head/gangs.h"
#include "head/taskq.h"
#include "head_service.pb-c.h"
#include "sched/accel_env.h"

#define MAX_SLICES 64

/* ---- table ------------------------------------------------------------- */

void mt__gang_id_of(uint64_t num, char out[17])
{
    snprintf(out, 17, "g%015" PRIx64, num & (uint64_t)0xfffffffffffffff);
}

struct mt_gang *mt__gang_find(struct mt_head *h, const char *id)
{
    struct mt_gang_table *gt = &h->tq->gangs;

    for (size_t i = 0; id && i < gt->n; i++)
        if (strcmp(gt->v[i]->id, id) == 0)
            return gt->v[i];
    return NULL;
}

static struct mt_gang *gang_by_num(struct mt_head *h, uint64_t num)
{
    struct mt_gang_table *gt = &h->tq->gangs;

    for (size_t i = 0; i < gt->n; i++)
        if (gt->v[i]->num == num)
            return gt->v[i];
    return NULL;
}

static bool gang_live(const struct mt_gang *g)
{
    return g->state == MANTA__GANG_STATE__GANG_STATE_PENDING ||
           g->state == MANTA__GANG_STATE__GANG_STATE_RUNNING ||
           g->state == MANTA__GANG_STATE__GANG_STATE_STOPPING;
}

bool mt__gang_owns_pg(struct mt_head *h, uint64_t pg)
{
    struct mt_gang_table *gt = &h->tq->gangs;

    for (size_t i = 0; i < gt->n; i++)
        if (gt->v[i]->pg == pg && gang_live(gt->v[i]))
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
    if (g->req)
        manta__submit_gang_request__free_unpacked(g->req, NULL);
    free(g);
}

void mt__gangs_release(struct mt_head *h)
{
    struct mt_gang_table *gt = &h->tq->gangs;

    for (size_t i = 0; i < gt->n; i++)
        gang_free(gt->v[i]);
    free(gt->v);
    mt_port_range_release(&gt->ports);
    memset(gt, 0, sizeof(*gt));
}

static void set_error(struct mt_gang *g, char *owned)
{
    free(g->error);
    g->error = owned;
}

/* ---- ports ------------------------------------------------------------- */

/* Take the n ports a gang needs. RET 0, -MT_ENOSPC (none taken). */
static int ports_take(struct mt_gang_table *gt, struct mt_gang *g, size_t n)
{
    uint16_t *p = mt_xcalloc(n + 1, sizeof(*p));
    int rc = mt_port_range_take(&gt->ports, n, p);

    if (rc < 0) {
        free(p);
        return rc;
    }
    g->ports = p;
    g->nports = n;
    return 0;
}

static void ports_give(struct mt_gang_table *gt, struct mt_gang *g)
{
    mt_port_range_give(&gt->ports, g->ports, g->nports);
    free(g->ports);
    g->ports = NULL;
    g->nports = 0;
}

/* ---- ending ------------------------------------------------------------ */

static void gang_end(struct mt_head *h, struct mt_gang *g, int state)
{
    struct mt_pg *pg;
    char id[17];

    g->state = state;
    g->end_ms = mt_now_wall_ms();
    ports_give(&h->tq->gangs, g);
    snprintf(id, sizeof(id), "%016" PRIx64, g->pg);
    if ((pg = mt__head_pg_find(h, id)))
        mt__head_pg_remove(h, pg);
    MT_INFO("gang %s %s%s%s", g->id,
            state == MANTA__GANG_STATE__GANG_STATE_FINISHED ? "finished"
            : state == MANTA__GANG_STATE__GANG_STATE_CANCELLED ? "cancelled"
                                                               : "failed",
            g->error ? ": " : "", g->error ? g->error : "");
}

/* Stop every member still alive, for reason. The changes this causes are
 * only noted meanwhile (g->busy); the caller looks at the whole after. */
static void stop_members(struct mt_head *h, struct mt_gang *g,
                         const char *reason)
{
    bool was = g->busy;

    g->busy = true;
    for (uint32_t i = 0; i < g->n; i++) {
        struct mt_task *t = g->m[i].task
                                ? mt_task_find(&h->tq->table, g->m[i].task)
                                : NULL;
        if (t && !mt_task_terminal(t))
            mt__task_stop(h, t, reason);
    }
    g->busy = was;
}

/* ---- starting an attempt ----------------------------------------------- */

/* The environment of every member of one attempt, in rank order. */
struct attempt_env {
    struct mt_env *env;          /* n entries */
    uint32_t n;
};

static const char *node_ip_of(struct mt_head *h, uint32_t handle)
{
    for (size_t i = 0; i < h->nodes.n; i++)
        if (h->nodes.v[i]->sched_node == handle &&
            h->nodes.v[i]->state == MT_NODE_ALIVE)
            return h->nodes.v[i]->node_ip;
    return NULL;
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
static int slice_env(struct mt_head *h, struct mt_gang *g, uint32_t j,
                     const char *coord, struct attempt_env *out,
                     const char **why)
{
    struct mt_slice_info si;
    const char *hosts[MT_PG_MAX_BUNDLES];
    uint32_t per = g->hosts * g->procs;
    struct mt_tpu_gang tg;
    int rc;

    if (mt_sched_pg_slice(h->tq->sched, g->pg, j, &si) < 0 ||
        si.nhosts != g->hosts) {
        *why = "its slice group is not placed";
        return -MT_ESTATE;
    }
    for (uint32_t i = 0; i < si.nhosts; i++)
        if (!(hosts[i] = node_ip_of(h, si.nodes[i]))) {
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
    tg.launch = g->req->launch == MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE
                    ? MT_TPU_LAUNCH_DEVICE : MT_TPU_LAUNCH_HOST;
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
            add_rendezvous(e, g, coord, r);
        add_manta_vars(e, g, r);
    }
    return 0;
}

static void attempt_env_free(struct attempt_env *a)
{
    mt_env_array_free(a->env, a->n);
    a->env = NULL;
}

/* Build the spec of member r and submit it. RET the task or NULL (why). */
static struct mt_task *submit_member(struct mt_head *h, struct mt_gang *g,
                                     uint32_t r, const struct mt_env *e,
                                     const char **why)
{
    const Manta__TaskSpec *tpl = g->req->member;
    Manta__TaskSpec s = *tpl;
    Manta__ResourceEntry cpu0 = MANTA__RESOURCE_ENTRY__INIT, *cpu0p = &cpu0;
    size_t nenv = tpl->n_env + e->n, k = 0;
    Manta__Label *labs = mt_xcalloc(nenv + 1, sizeof(*labs));
    Manta__Label **labp = mt_xcalloc(nenv + 1, sizeof(*labp));
    char **unset = mt_xcalloc(tpl->n_env_unset + e->n + 1, sizeof(*unset));
    char name[300], pg_id[17];
    struct mt_task *t;
    int err;

    /* The user's variables first; the contract's win (later entries of a
     * spec's env replace earlier ones on the worker). */
    for (size_t i = 0; i < tpl->n_env; i++)
        labp[k++] = tpl->env[i];
    s.n_env_unset = 0;
    for (size_t i = 0; i < tpl->n_env_unset; i++)
        unset[s.n_env_unset++] = tpl->env_unset[i];
    for (size_t i = 0; i < e->n; i++) {
        if (!e->vars[i].value) {
            unset[s.n_env_unset++] = e->vars[i].name;
            continue;
        }
        manta__label__init(&labs[i]);
        labs[i].key = e->vars[i].name;
        labs[i].value = e->vars[i].value;
        labp[k++] = &labs[i];
    }
    s.env = labp;
    s.n_env = k;
    s.env_unset = unset;
    snprintf(name, sizeof(name), "%s/rank%u", *g->req->name ? g->req->name
                                                             : g->id, r);
    s.name = name;
    s.kind = MANTA__TASK_KIND__TASK_KIND_COMMAND;
    s.strategy = MANTA__SCHEDULING_STRATEGY__STRATEGY_PLACEMENT_GROUP;
    snprintf(pg_id, sizeof(pg_id), "%016" PRIx64, g->pg);
    s.placement_group_id = pg_id;
    s.bundle_index = (int32_t)(g->m[r].slice * g->hosts + g->m[r].host);
    s.max_retries = 0;
    if (s.n_resources == 0) {
        cpu0.name = (char *)"CPU";
        s.resources = &cpu0p;
        s.n_resources = 1;
    }
    t = mt__task_submit(h, &s, why, &err);
    free(labs);
    free(labp);
    free(unset);
    if (t) {
        t->gang = g->num;
        t->gang_rank = r;
    }
    return t;
}

static void fail_now(struct mt_head *h, struct mt_gang *g, const char *why)
{
    set_error(g, mt_xasprintf("cannot start attempt %u: %s", g->attempt + 1,
                              why));
    g->exit_code = 1;
    stop_members(h, g, "its gang could not start");
    members_clear(g);
    gang_end(h, g, MANTA__GANG_STATE__GANG_STATE_FAILED);
}

/* The group is created: compute the env and submit every member. */
static void start_attempt(struct mt_head *h, struct mt_gang *g)
{
    struct attempt_env a = {mt_xcalloc(g->n, sizeof(struct mt_env)), g->n};
    const char *why = NULL, *coord;
    struct mt_slice_info s0;
    int rc = 0;

    for (uint32_t i = 0; i < g->n; i++)
        mt_env_init(&a.env[i]);
    if (mt_sched_pg_slice(h->tq->sched, g->pg, 0, &s0) < 0 ||
        !(coord = node_ip_of(h, s0.nodes[0]))) {
        attempt_env_free(&a);
        return; /* not placed (any more): wait for mt__gang_pg_created */
    }
    coord = mt_xstrdup(coord);
    for (uint32_t j = 0; j < g->slices && rc == 0; j++)
        rc = slice_env(h, g, j, coord, &a, &why);
    free((char *)coord);
    if (rc < 0) {
        attempt_env_free(&a);
        if (rc == -MT_ESTATE)
            return; /* a host went away meanwhile: wait for the group */
        fail_now(h, g, why);
        return;
    }
    members_clear(g);
    g->state = MANTA__GANG_STATE__GANG_STATE_RUNNING;
    for (uint32_t r = 0; r < g->n; r++) {
        struct mt_task *t = submit_member(h, g, r, &a.env[r], &why);

        if (!t) {
            attempt_env_free(&a);
            fail_now(h, g, why ? why : "a member was refused");
            return;
        }
        g->m[r].task = t->num;
        memcpy(g->m[r].task_id, t->id, sizeof(t->id));
        g->m[r].state = (int)t->state;
    }
    attempt_env_free(&a);
    MT_INFO("gang %s attempt %u: %u members started on %u slice(s)", g->id,
            g->attempt + 1, g->n, g->slices);
}

void mt__gang_pg_created(struct mt_head *h, uint64_t pg)
{
    struct mt_gang_table *gt = &h->tq->gangs;

    for (size_t i = 0; i < gt->n; i++)
        if (gt->v[i]->pg == pg &&
            gt->v[i]->state == MANTA__GANG_STATE__GANG_STATE_PENDING)
            start_attempt(h, gt->v[i]);
}

/* ---- members ending ---------------------------------------------------- */

static bool member_ok(const struct mt_gang_member *m)
{
    return m->state == MANTA__TASK_STATE__TASK_STATE_FINISHED &&
           m->exit_code == 0;
}

static bool member_ended(const struct mt_gang_member *m)
{
    return m->state == MANTA__TASK_STATE__TASK_STATE_FINISHED ||
           m->state == MANTA__TASK_STATE__TASK_STATE_FAILED ||
           m->state == MANTA__TASK_STATE__TASK_STATE_CANCELLED;
}

/* Why member m ended badly, for people. RET owned string. */
static char *member_why(const struct mt_gang_member *m)
{
    if (m->state == MANTA__TASK_STATE__TASK_STATE_FINISHED)
        return mt_xasprintf("rank %u (task %s) exited with code %d", m->rank,
                            m->task_id, m->exit_code);
    return mt_xasprintf("rank %u (task %s) %s: %s", m->rank, m->task_id,
                        m->state == MANTA__TASK_STATE__TASK_STATE_CANCELLED
                            ? "was cancelled" : "failed",
                        m->error ? m->error : "no reason given");
}

/* Every member has ended: finish, restart or fail the gang. */
static void attempt_over(struct mt_head *h, struct mt_gang *g)
{
    int32_t max = g->req->max_restarts;
    enum mt_pg_state st;

    if (g->cancel) {
        gang_end(h, g, MANTA__GANG_STATE__GANG_STATE_CANCELLED);
        return;
    }
    if (g->state == MANTA__GANG_STATE__GANG_STATE_RUNNING) {
        g->exit_code = 0;
        set_error(g, NULL);
        gang_end(h, g, MANTA__GANG_STATE__GANG_STATE_FINISHED);
        return;
    }
    if (max >= 0 && g->attempt >= (uint32_t)max) {
        gang_end(h, g, MANTA__GANG_STATE__GANG_STATE_FAILED);
        return;
    }
    g->attempt++;
    g->state = MANTA__GANG_STATE__GANG_STATE_PENDING;
    MT_INFO("gang %s restarting (attempt %u): %s", g->id, g->attempt + 1,
            g->error ? g->error : "");
    if (mt_sched_pg_state(h->tq->sched, g->pg, &st) == 0 &&
        st == MT_PG_CREATED)
        start_attempt(h, g);
}

static void gang_check(struct mt_head *h, struct mt_gang *g,
                       const struct mt_gang_member *m);

static void check_all_ended(struct mt_head *h, struct mt_gang *g)
{
    for (uint32_t i = 0; i < g->n; i++)
        if (!member_ended(&g->m[i]))
            return;
    attempt_over(h, g);
}

void mt__gang_task_changed(struct mt_head *h, struct mt_task *t)
{
    struct mt_gang *g = gang_by_num(h, t->gang);
    struct mt_gang_member *m;

    if (!g || t->gang_rank >= g->n || g->m[t->gang_rank].task != t->num)
        return; /* a member of an attempt already over */
    m = &g->m[t->gang_rank];
    m->state = (int)t->state;
    if (t->node_id && *t->node_id && (!m->node_id ||
                                      strcmp(m->node_id, t->node_id))) {
        free(m->node_id);
        m->node_id = mt_xstrdup(t->node_id);
    }
    if (!mt_task_terminal(t))
        return;
    m->exit_code = t->exit_code;
    free(m->error);
    m->error = t->error ? mt_xstrdup(t->error) : NULL;
    if (!g->busy)
        gang_check(h, g, m);
}

/* After member m ended: stop the rest if it failed; end the attempt once
 * every member has ended. */
static void gang_check(struct mt_head *h, struct mt_gang *g,
                       const struct mt_gang_member *m)
{
    if (!member_ok(m) && g->state == MANTA__GANG_STATE__GANG_STATE_RUNNING) {
        char *why = member_why(m);

        g->state = MANTA__GANG_STATE__GANG_STATE_STOPPING;
        g->exit_code = m->state == MANTA__TASK_STATE__TASK_STATE_FINISHED &&
                               m->exit_code > 0 && m->exit_code < 256
                           ? m->exit_code : 1;
        if (!g->cancel)
            set_error(g, why);
        else
            free(why);
        MT_WARN("gang %s: %s; stopping the other members", g->id,
                g->error ? g->error : "cancelled");
        stop_members(h, g, g->cancel ? "its gang was cancelled"
                                     : "another member of its gang failed");
    }
    check_all_ended(h, g);
}

void mt__gang_cancel(struct mt_head *h, struct mt_gang *g)
{
    bool any = false;

    if (!gang_live(g) || g->cancel)
        return;
    g->cancel = true;
    set_error(g, mt_xstrdup("cancelled"));
    for (uint32_t i = 0; i < g->n; i++)
        any |= g->m[i].task && !member_ended(&g->m[i]);
    if (!any) {
        gang_end(h, g, MANTA__GANG_STATE__GANG_STATE_CANCELLED);
        return;
    }
    g->state = MANTA__GANG_STATE__GANG_STATE_STOPPING;
    stop_members(h, g, "its gang was cancelled");
    check_all_ended(h, g);
}

/* ---- submitting -------------------------------------------------------- */

/* RET NULL or why req cannot be a gang (shape filled on success). */
static const char *check_req(const Manta__SubmitGangRequest *req,
                             struct mt_tpu_slice *shape)
{
    const Manta__TaskSpec *m = req->member;
    uint32_t k = req->tpu_slices ? req->tpu_slices : 1;
    Manta__TaskSpec as_member;
    const char *why;
    int err;

    if (!m || m->n_argv == 0 || !*m->argv[0])
        return "a gang needs a program to run";
    if (m->kind != MANTA__TASK_KIND__TASK_KIND_COMMAND &&
        m->kind != MANTA__TASK_KIND__TASK_KIND_UNSPECIFIED)
        return "gang members run programs (COMMAND tasks)";
    if (*m->placement_group_id || m->n_arg_refs)
        return "gang members are placed by the gang";
    if (strlen(req->name) > 256)
        return "name too long";
    if ((unsigned)req->launch > MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE)
        return "unknown launch model (host or device)";
    if (k > MAX_SLICES)
        return "at most 64 slices";
    if (req->max_restarts < -1)
        return "max_restarts must be -1 (no limit) or more";
    for (size_t i = 0; i < m->n_resources; i++)
        if (strcmp(m->resources[i]->name, "TPU") == 0)
            return "gang members get their slice's chips: do not ask for TPU";
    as_member = *m; /* checked now as every member will be submitted */
    as_member.kind = MANTA__TASK_KIND__TASK_KIND_COMMAND;
    if ((why = mt__task_spec_check(&as_member, &err)))
        return why;
    if (!*req->tpu_pod_type ||
        mt_tpu_slice_parse(req->tpu_pod_type,
                           *req->tpu_topology ? req->tpu_topology : NULL, 0,
                           shape) < 0)
        return "unknown TPU pod type or topology (e.g. v4-16, v6e-16, "
               "v5p-8; topology 2x2x2)";
    return NULL;
}

static uint32_t procs_per_host(const Manta__SubmitGangRequest *req,
                               const struct mt_tpu_slice *shape)
{
    struct mt_tpu_gang tg = {.slice = shape};

    tg.launch = req->launch == MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE
                    ? MT_TPU_LAUNCH_DEVICE : MT_TPU_LAUNCH_HOST;
    return mt_tpu_gang_procs_per_host(&tg);
}

/* Member resources x procs: what each host's bundle holds beyond chips. */
static const char *per_host_res(struct mt_head *h,
                                const Manta__TaskSpec *m, uint32_t procs,
                                struct mt_res_set *out)
{
    mt_res_set_init(out);
    for (size_t i = 0; i < m->n_resources; i++) {
        int id = mt_sched_resource_id(h->tq->sched, m->resources[i]->name);
        int64_t q = m->resources[i]->quantity;

        if (id < 0 || q < 0 || q > INT64_MAX / (int64_t)procs ||
            (q && mt_res_set_add(out, id, q * procs) < 0))
            return "bad member resource (name or quantity)";
    }
    return NULL;
}

static struct mt_gang *gang_new(struct mt_head *h,
                                const Manta__SubmitGangRequest *req,
                                const struct mt_tpu_slice *shape)
{
    struct mt_gang_table *gt = &h->tq->gangs;
    struct mt_gang *g = mt_xcalloc(1, sizeof(*g));
    size_t len = manta__submit_gang_request__get_packed_size(req);
    uint8_t *buf = mt_xmalloc(len ? len : 1);

    manta__submit_gang_request__pack(req, buf);
    g->req = manta__submit_gang_request__unpack(NULL, len, buf);
    free(buf);
    if (!g->req) {
        free(g);
        return NULL;
    }
    g->num = ++gt->next;
    mt__gang_id_of(g->num, g->id);
    g->state = MANTA__GANG_STATE__GANG_STATE_PENDING;
    g->hosts = shape->hosts;
    g->slices = req->tpu_slices ? req->tpu_slices : 1;
    g->procs = procs_per_host(req, shape);
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

static void gang_add(struct mt_gang_table *gt, struct mt_gang *g)
{
    mt_xgrow((void **)&gt->v, &gt->cap, gt->n + 1, sizeof(*gt->v));
    gt->v[gt->n++] = g;
}

struct mt_gang *mt__gang_submit(struct mt_head *h,
                                const Manta__SubmitGangRequest *req,
                                const char **why, int *err)
{
    Manta__CreatePlacementGroupRequest pr =
        MANTA__CREATE_PLACEMENT_GROUP_REQUEST__INIT;
    struct mt_gang_table *gt = &h->tq->gangs;
    struct mt_tpu_slice shape;
    struct mt_res_set extra;
    struct mt_gang *g;
    struct mt_pg *pg;

    *err = -MT_EINVAL;
    if ((*why = check_req(req, &shape)))
        return NULL;
    if (!(g = gang_new(h, req, &shape))) {
        *why = "cannot copy the request";
        return NULL;
    }
    if ((*why = per_host_res(h, req->member, g->procs, &extra))) {
        gang_free(g);
        return NULL;
    }
    /* master, megascale, then one per device-centric process */
    if (ports_take(gt, g, 2 + (req->launch ==
                               MANTA__GANG_LAUNCH__GANG_LAUNCH_DEVICE
                               ? g->n : 0)) < 0) {
        gang_free(g);
        *err = -MT_ENOSPC;
        *why = "not enough free ports in the head's gang port range "
               "(manta-head --gang-ports)";
        return NULL;
    }
    pr.name = g->id;
    pr.tpu_pod_type = req->tpu_pod_type;
    pr.tpu_topology = req->tpu_topology;
    pr.tpu_slices = g->slices;
    if (!(pg = mt__head_pg_create(h, &pr, &extra, why, err))) {
        ports_give(gt, g);
        gang_free(g);
        return NULL;
    }
    g->pg = pg->num;
    gang_add(gt, g);
    MT_INFO("gang %s submitted: %u x %s, %u members", g->id, g->slices,
            req->tpu_pod_type, g->n);
    if (pg->state == MANTA__PLACEMENT_GROUP_STATE__PG_STATE_CREATED)
        start_attempt(h, g);
    return g;
}
