/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk_admin.c -- a C driver for test_admin.py: the admin API of libmanta
 * (manta/admin.h, and the by-id calls of actor.h, gang.h, pg.h) against
 * the fake accelerator cluster (accel_cluster.py: TPU, GPU and CPU nodes).
 * Every case connects one-shot (MT_CONNECT_ONESHOT), as the manta command
 * does. Exits 0 when every check holds; a failed check prints its line and
 * exits 1.
 *
 * usage: sdk_admin CASE HEAD_HOST:PORT [LIBDIR]
 *   status   the cluster's status as structs and as JSON; mt_cluster_nodes
 *   tasks    listings with filters (name, state, node), totals, JSON; bad
 *            filters refused before any call
 *   follow   a task submitted not to be followed, followed by a watch: its
 *            output by fd, its final state, its END; an unknown task
 *   cancel   cancel by id (state after), the watch sees CANCELLED; unknown
 *   actors   LIBDIR: a detached named actor looked up by name and id,
 *            listed by name, as JSON, killed by id
 *   gangs    a gang: get, list by state, JSON, cancel, an unknown gang
 *   pgs      a group named by id: wait, listed by state, removed; its
 *            id and a task's differ, and each by-id call given the other
 *            kind says which kind it is
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <manta/manta.h>

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "sdk_admin: %s:%d: check failed: %s (last "       \
                    "error: %s)\n", __FILE__, __LINE__, #cond,                 \
                    mt_client_last_error(c));                                  \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static mt_client_t *c;

static void connect_oneshot(const char *addr)
{
    mt_connect_opts o;

    mt_connect_opts_init(&o);
    o.flags = MT_CONNECT_ONESHOT;
    o.rpc_timeout_ms = 5000;
    CHECK(mt_client_connect(addr, &o, &c) == 0);
    CHECK(!mt_client_has_store(c));
}

static const mt_resource *find(const mt_resource *v, size_t n,
                               const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, name))
            return &v[i];
    return NULL;
}

static void case_status(void)
{
    mt_cluster_status *st;
    size_t alive = 0, gpus = 0;
    char *json;

    CHECK(mt_cluster_status_get(c, &st) == 0);
    CHECK(st->n_nodes >= 1 && *st->cluster_id && *st->head_address);
    for (size_t i = 0; i < st->n_nodes; i++) {
        const mt_node_info *n = &st->nodes[i];

        alive += n->alive;
        gpus += n->n_gpus;
        CHECK(strlen(n->node_id) > 0 && n->n_total > 0 && n->n_labels > 0);
        CHECK(find(n->total, n->n_total, "CPU") != NULL);
    }
    CHECK(find(st->total, st->n_total, "CPU")->amount > 0);
    CHECK(mt_cluster_nodes(c) == (int)alive);
    CHECK(gpus > 0); /* the stub NVML node */
    CHECK(mt_cluster_status_json(c, &json) == 0);
    CHECK(strstr(json, "\"cluster_id\": ") && strstr(json, st->cluster_id) &&
          json[strlen(json) - 1] == '\n');
    printf("status ok: %zu nodes, %zu alive, %zu GPUs\n", st->n_nodes, alive,
           gpus);
    mt_free(json);
    mt_cluster_status_free(st);
}

/* Submit argv as a task named name, not followed. RET its id (owned). */
static char *submit(const char *name, const char *const *argv)
{
    mt_task_opts_t *o;
    mt_task_t *t;
    char *id;

    CHECK(mt_task_opts_create(&o) == 0);
    CHECK(mt_task_opts_set_name(o, name) == 0);
    CHECK(mt_task_opts_set_resource(o, "CPU", 0.1) == 0);
    CHECK(mt_task_opts_set_follow(o, false) == 0);
    CHECK(mt_submit_command(c, argv, o, &t) == 0);
    mt_task_opts_destroy(o);
    CHECK(mt_task_wait(c, t, 0, NULL) == -MT_ESTATE); /* not followed */
    id = strdup(mt_task_id(t));
    CHECK(strlen(id) == 16 && id[0] == 't');
    mt_task_release(t);
    return id;
}

/* Follow id to its END. OUT out, err: what it printed (owned). RET the
 * last state; *exit_code its exit code. */
static mt_task_state follow(const char *id, char **out, char **err,
                            int *exit_code, int *lost)
{
    const mt_watch_event *ev;
    mt_task_state st = MT_TASK_STATE_UNKNOWN;
    size_t n[3] = {0, 0, 0};
    char *buf[3] = {NULL, calloc(1, 1), calloc(1, 1)};
    mt_watch_t *w;
    int rc, ends = 0;

    CHECK(mt_watch_open(c, &id, 1, MT_WATCH_OUTPUT, &w) == 0);
    while ((rc = mt_watch_next(w, 30000, &ev)) == 0) {
        CHECK(!strcmp(ev->task_id, id) && ends == 0);
        if (ev->kind == MT_WATCH_EVENT_OUTPUT) {
            buf[ev->fd] = realloc(buf[ev->fd], n[ev->fd] + ev->len + 1);
            memcpy(buf[ev->fd] + n[ev->fd], ev->data, ev->len);
            n[ev->fd] += ev->len;
            buf[ev->fd][n[ev->fd]] = '\0';
        } else if (ev->kind == MT_WATCH_EVENT_STATE) {
            st = ev->state;
            *exit_code = ev->exit_code;
        } else {
            ends++;
            *lost = ev->lost;
        }
    }
    CHECK(rc == -MT_ENOENT && ends == 1);
    mt_watch_close(w);
    *out = buf[1];
    *err = buf[2];
    return st;
}

static void case_follow(void)
{
    const char *argv[] = {"sh", "-c", "echo one; echo two >&2; sleep 0.5; "
                                      "echo three; exit 5", NULL};
    const char *nobody = "00000000000000ff";
    char *id = submit("adm-follow", argv), *out, *err;
    int code = -1, lost = 1;

    CHECK(follow(id, &out, &err, &code, &lost) == MT_TASK_STATE_FINISHED);
    CHECK(code == 5 && lost == 0);
    CHECK(!strcmp(out, "one\nthree\n") && !strcmp(err, "two\n"));
    printf("follow ok: %s exit %d\n", id, code);
    free(out);
    free(err);
    /* An unknown task: its END says why at once. */
    CHECK(follow(nobody, &out, &err, &code, &lost) == MT_TASK_STATE_UNKNOWN);
    CHECK(lost == -MT_ENOENT);
    free(out);
    free(err);
    free(id);
}

/* Cancel a running task by id, seen through a watch. */
static void case_cancel(void)
{
    const char *argv[] = {"sleep", "60", NULL};
    char *id = submit("adm-cancel", argv);
    const mt_watch_event *ev;
    mt_task_state st = MT_TASK_STATE_UNKNOWN, last = st;
    mt_watch_t *w;
    int rc;

    CHECK(mt_watch_open(c, NULL, 0, 0, &w) == 0);
    CHECK(mt_watch_add(w, id) == 0);
    while ((rc = mt_watch_next(w, 30000, &ev)) == 0) {
        CHECK(ev->kind != MT_WATCH_EVENT_OUTPUT); /* not asked for */
        if (ev->kind == MT_WATCH_EVENT_STATE)
            last = ev->state;
        if (ev->kind == MT_WATCH_EVENT_STATE &&
            ev->state == MT_TASK_STATE_RUNNING) {
            CHECK(mt_task_cancel_id(c, id, true, &st) == 0);
            CHECK(st != MT_TASK_STATE_UNKNOWN);
        }
    }
    CHECK(rc == -MT_ENOENT && last == MT_TASK_STATE_CANCELLED);
    mt_watch_close(w);
    CHECK(mt_task_cancel_id(c, "00000000000000ff", false, NULL) ==
          -MT_ENOENT);
    CHECK(strstr(mt_client_last_error(c), "NOT_FOUND") != NULL);
    printf("cancel ok: %s\n", id);
    free(id);
}

static void case_tasks(void)
{
    const char *ok[] = {"true", NULL}, *bad[] = {"sh", "-c", "exit 3", NULL};
    char *a = submit("adm-a", ok), *b = submit("adm-b", bad), *o, *e;
    char node[64];
    mt_list_filter f;
    mt_listing *l;
    char *json;
    int code, lost;

    for (int i = 0; i < 2; i++) {
        follow(i ? b : a, &o, &e, &code, &lost);
        free(o);
        free(e);
    }
    mt_list_filter_init(&f);
    f.name = "adm-b";
    CHECK(mt_list(c, MT_LIST_TASKS, &f, &l) == 0);
    CHECK(l->kind == MT_LIST_TASKS && l->total == 1 && l->n == 1);
    CHECK(!strcmp(l->tasks[0].task_id, b) && l->tasks[0].exit_code == 3);
    CHECK(l->tasks[0].argc == 3 && !strcmp(l->tasks[0].argv[2], "exit 3"));
    CHECK(l->tasks[0].state == MT_TASK_STATE_FINISHED);
    CHECK(find(l->tasks[0].resources, l->tasks[0].n_resources,
               "CPU")->amount == 0.1);
    snprintf(node, sizeof(node), "%s", l->tasks[0].node_id);
    mt_listing_free(l);
    f.node_id = node;
    CHECK(mt_list(c, MT_LIST_TASKS, &f, &l) == 0 && l->n == 1);
    mt_listing_free(l);
    f.name = NULL;
    f.node_id = NULL;
    f.state = "finished"; /* any case */
    f.limit = 1;
    CHECK(mt_list(c, MT_LIST_TASKS, &f, &l) == 0);
    CHECK(l->n == 1 && l->total >= 2);
    mt_listing_free(l);
    CHECK(mt_list_json(c, MT_LIST_TASKS, &f, &json) == 0);
    CHECK(!strncmp(json, "{\"total\": ", 10) && strstr(json, "\"tasks\": ["));
    mt_free(json);
    f.state = "SLEEPING";
    CHECK(mt_list(c, MT_LIST_TASKS, &f, &l) == -MT_EINVAL && !l);
    f.state = NULL;
    f.name = "x";
    CHECK(mt_list(c, MT_LIST_OBJECTS, &f, &l) == -MT_EINVAL);
    f.name = NULL;
    f.state = "ALIVE";
    f.limit = 0;
    CHECK(mt_list(c, MT_LIST_NODES, &f, &l) == 0 && l->n >= 1);
    CHECK(l->nodes[0].alive && l->total == l->n);
    mt_listing_free(l);
    printf("tasks ok\n");
    free(a);
    free(b);
}

static void case_actors(const char *libdir)
{
    mt_task_opts_t *o;
    mt_actor_opts_t *ao;
    mt_actor_t *a;
    mt_actor_info info;
    mt_actor_state st;
    mt_list_filter f;
    mt_listing *l;
    char *json, id[17];

    CHECK(mt_task_opts_create(&o) == 0);
    CHECK(mt_task_opts_add_code_path(o, libdir) == 0);
    CHECK(mt_task_opts_set_resource(o, "CPU", 0) == 0);
    CHECK(mt_actor_opts_create(&ao) == 0);
    CHECK(mt_actor_opts_set_name(ao, "adm-counter") == 0);
    CHECK(mt_actor_opts_set_detached(ao, true) == 0);
    CHECK(mt_actor_create(c, "libexample_counter.so:counter_new", NULL, NULL,
                          0, o, ao, &a) == 0);
    mt_task_opts_destroy(o);
    mt_actor_opts_destroy(ao);
    CHECK(mt_actor_wait_ready(c, a, 30000) == 0);
    snprintf(id, sizeof(id), "%s", mt_actor_id(a));
    mt_actor_release(a);
    mt_actor_info_init(&info);
    CHECK(mt_actor_lookup(c, NULL, "adm-counter", &info) == 0);
    CHECK(!strcmp(info.actor_id, id) && info.state == MT_ACTOR_STATE_ALIVE);
    CHECK(info.detached && strstr(info.function, "counter_new"));
    CHECK(mt_actor_lookup(c, id, NULL, &info) == 0 && info.pid > 0);
    mt_actor_info_release(&info);
    mt_list_filter_init(&f);
    f.name = "adm-counter";
    CHECK(mt_list(c, MT_LIST_ACTORS, &f, &l) == 0 && l->n == 1);
    CHECK(!strcmp(l->actors[0].actor_id, id));
    mt_listing_free(l);
    CHECK(mt_actor_lookup_json(c, NULL, "adm-counter", &json) == 0);
    CHECK(strstr(json, "\"name\": \"adm-counter\"") != NULL);
    mt_free(json);
    CHECK(mt_actor_kill_id(c, id, true, &st) == 0);
    for (int i = 0; i < 100; i++) {
        CHECK(mt_actor_lookup(c, id, NULL, &info) == 0);
        if (info.state == MT_ACTOR_STATE_DEAD)
            break;
        usleep(100000);
    }
    CHECK(info.state == MT_ACTOR_STATE_DEAD && *info.death_reason);
    mt_actor_info_release(&info);
    CHECK(mt_actor_lookup(c, NULL, "nobody", &info) == -MT_ENOENT);
    CHECK(mt_actor_kill_id(c, "ffffffffffffffff", true, NULL) == -MT_ENOENT);
    printf("actors ok: %s killed\n", id);
}

static void case_gangs(void)
{
    const char *argv[] = {"sleep", "60"};
    mt_gang_opts_t *go;
    mt_task_opts_t *o;
    mt_gang_detail *g = NULL;
    mt_list_filter f;
    mt_listing *l;
    char id[32], *json;

    CHECK(mt_task_opts_create(&o) == 0);
    CHECK(mt_task_opts_set_env(o, "ADM", "1") == 0);
    CHECK(mt_gang_opts_create(&go, "v4-16") == 0);
    CHECK(mt_gang_opts_set_name(go, "adm-gang") == 0);
    CHECK(mt_gang_opts_set_task_opts(go, o) == 0);
    CHECK(mt_task_opts_set_label_selector(o, "zone=a") == 0);
    CHECK(mt_gang_opts_set_task_opts(go, o) == -MT_EINVAL);
    mt_task_opts_destroy(o);
    CHECK(mt_gang_submit(c, go, argv, 2, id, sizeof(id)) == 0);
    mt_gang_opts_destroy(go);
    for (int i = 0; i < 100; i++) {
        mt_gang_detail_free(g);
        CHECK(mt_gang_get(c, id, &g) == 0);
        /* Cancel once its members run (not while they start). */
        if (g->state == MT_GANG_RUNNING && g->n_members == 2 &&
            g->members[0].state == MT_TASK_STATE_RUNNING &&
            g->members[1].state == MT_TASK_STATE_RUNNING)
            break;
        usleep(100000);
    }
    CHECK(g->state == MT_GANG_RUNNING && !strcmp(g->name, "adm-gang"));
    CHECK(g->argc == 2 && !strcmp(g->argv[0], "sleep"));
    CHECK(g->n_slice_names == 1 && !strcmp(g->pod_type, "v4-16"));
    mt_gang_detail_free(g);
    mt_list_filter_init(&f);
    f.state = "RUNNING";
    CHECK(mt_list(c, MT_LIST_GANGS, &f, &l) == 0 && l->n >= 1);
    CHECK(l->gangs[0].state == MT_GANG_RUNNING);
    mt_listing_free(l);
    CHECK(mt_gang_get_json(c, id, &json) == 0);
    CHECK(strstr(json, "\"members\": [{\"rank\": 0") != NULL);
    mt_free(json);
    CHECK(mt_gang_cancel(c, id) == 0);
    CHECK(mt_gang_wait(c, id, 30000, NULL) == 0);
    CHECK(mt_gang_get(c, "gffffffffffffff", &g) == -MT_ENOENT);
    CHECK(strstr(mt_client_last_error(c), "NOT_FOUND") != NULL);
    printf("gangs ok: %s\n", id);
}

/* Each by-id call refuses another kind's id, naming its kind. */
static void wrong_kinds(const char *pg_id, const char *task_id)
{
    const char *const ids[] = {pg_id};
    char want[128];
    mt_gang_detail *g;
    mt_watch_t *w;
    mt_pg_t *pg;

    snprintf(want, sizeof(want), "%s is a placement group id, not a task "
             "id", pg_id);
    CHECK(mt_task_cancel_id(c, pg_id, false, NULL) == -MT_EINVAL);
    CHECK(!strcmp(mt_client_last_error(c), want));
    CHECK(mt_watch_open(c, ids, 1, 0, &w) == -MT_EINVAL);
    CHECK(!strcmp(mt_client_last_error(c), want));
    CHECK(mt_actor_kill_id(c, pg_id, false, NULL) == -MT_EINVAL);
    CHECK(strstr(mt_client_last_error(c), "not an actor id") != NULL);
    CHECK(mt_gang_get(c, pg_id, &g) == -MT_EINVAL);
    CHECK(strstr(mt_client_last_error(c), "not a gang id") != NULL);
    CHECK(mt_pg_from_id(task_id, &pg) == -MT_EINVAL);
    snprintf(want, sizeof(want), "%s is a task id, not a placement group "
             "id", task_id);
    CHECK(!strcmp(mt_client_last_error(NULL), want));
}

static void case_pgs(void)
{
    const char *argv[] = {"true", NULL};
    char *task_id;
    const char *cpu[] = {"CPU"};
    const double one[] = {0.5};
    mt_pg_opts_t *po;
    mt_pg_t *pg, *byid;
    mt_list_filter f;
    mt_listing *l;

    CHECK(mt_pg_opts_create(&po) == 0);
    CHECK(mt_pg_opts_add_bundle(po, cpu, one, 1) == 0);
    CHECK(mt_pg_opts_set_name(po, "adm-pg") == 0);
    CHECK(mt_pg_create(c, po, &pg) == 0);
    mt_pg_opts_destroy(po);
    task_id = submit("adm-kinds", argv);
    CHECK(mt_pg_id(pg)[0] == 'p' && task_id[0] == 't');
    wrong_kinds(mt_pg_id(pg), task_id);
    free(task_id);
    CHECK(mt_pg_from_id(mt_pg_id(pg), &byid) == 0);
    CHECK(mt_pg_num_bundles(byid) == 0); /* not known until waited */
    CHECK(mt_pg_wait(c, byid, 10000, NULL) == 0);
    CHECK(mt_pg_num_bundles(byid) == 1 && *mt_pg_bundle_node(byid, 0));
    mt_list_filter_init(&f);
    f.state = "CREATED";
    CHECK(mt_list(c, MT_LIST_PLACEMENT_GROUPS, &f, &l) == 0 && l->n >= 1);
    CHECK(l->pgs[0].n_bundles == 1 && l->pgs[0].bundle_sizes[0] == 1);
    CHECK(l->pgs[0].bundles[0][0].amount == 0.5);
    mt_listing_free(l);
    CHECK(mt_pg_remove(c, byid) == 0);
    mt_pg_release(byid);
    mt_pg_release(pg);
    CHECK(mt_pg_from_id("0000000000000000", &pg) == 0);
    CHECK(mt_pg_remove(c, pg) == -MT_ENOENT);
    mt_pg_release(pg);
    printf("pgs ok\n");
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";

    if (argc < 3) {
        fprintf(stderr, "usage: sdk_admin CASE HEAD_HOST:PORT [LIBDIR]\n");
        return 2;
    }
    connect_oneshot(argv[2]);
    if (!strcmp(cmd, "status"))
        case_status();
    else if (!strcmp(cmd, "tasks"))
        case_tasks();
    else if (!strcmp(cmd, "follow"))
        case_follow();
    else if (!strcmp(cmd, "cancel"))
        case_cancel();
    else if (!strcmp(cmd, "actors") && argc > 3)
        case_actors(argv[3]);
    else if (!strcmp(cmd, "gangs"))
        case_gangs();
    else if (!strcmp(cmd, "pgs"))
        case_pgs();
    else
        return 2;
    mt_client_disconnect(c);
    return 0;
}
