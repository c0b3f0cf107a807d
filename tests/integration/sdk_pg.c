/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk_pg.c -- a C driver for test_sdk.py: placement groups through
 * libmanta (manta/pg.h) against a real cluster of N nodes. Exits 0 when
 * every check holds; a failed check prints its line and exits 1.
 *
 * usage: sdk_pg HEAD_HOST:PORT N
 *   1. option errors: no bundles, a bad amount, a bundle out of range;
 *   2. STRICT_SPREAD of N one-CPU bundles: created, one node per bundle,
 *      and a task in bundle i runs on bundle i's node;
 *   3. an infeasible group: the wait times out saying "infeasible";
 *   4. removal: a task running in the group is stopped, waiting on the
 *      group then says it was removed, and a task submitted into it is
 *      refused: FAILED with the head's reason when submits are batched,
 *      -MT_EINVAL from the submit itself with MT_CONNECT_NO_BATCH.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <manta/manta.h>

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "sdk_pg: %s:%d: check failed: %s (last error: "   \
                    "%s)\n", __FILE__, __LINE__, #cond,                        \
                    mt_client_last_error(c));                                  \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static mt_client_t *c;

static mt_pg_t *make_group(mt_pg_strategy s, int n, const char *res,
                           double amount)
{
    const char *names[] = {res};
    const double amounts[] = {amount};
    mt_pg_opts_t *o;
    mt_pg_t *pg = NULL;

    CHECK(mt_pg_opts_create(&o) == 0);
    CHECK(mt_pg_opts_set_strategy(o, s) == 0);
    CHECK(mt_pg_opts_set_name(o, "sdk-pg") == 0);
    for (int i = 0; i < n; i++)
        CHECK(mt_pg_opts_add_bundle(o, names, amounts, 1) == i);
    CHECK(mt_pg_create(c, o, &pg) == 0);
    mt_pg_opts_destroy(o);
    CHECK(strlen(mt_pg_id(pg)) > 0 && mt_pg_num_bundles(pg) == (size_t)n);
    return pg;
}

static void option_errors(void)
{
    const char *names[] = {"CPU"};
    const double bad[] = {-1}, zero[] = {0};
    mt_pg_opts_t *o;
    mt_pg_t *pg = NULL;

    CHECK(mt_pg_opts_create(&o) == 0);
    CHECK(mt_pg_create(c, o, &pg) == -MT_EINVAL && pg == NULL);
    CHECK(mt_pg_opts_add_bundle(o, names, bad, 1) == -MT_EINVAL);
    CHECK(mt_pg_opts_add_bundle(o, names, zero, 1) == -MT_EINVAL);
    CHECK(mt_pg_opts_set_strategy(o, (mt_pg_strategy)9) == -MT_EINVAL);
    mt_pg_opts_destroy(o);
}

/* Run `hostname` in bundle i; RET the node it ran on (owned). */
static char *run_in_bundle(mt_pg_t *pg, int i)
{
    const char *argv[] = {"true", NULL};
    mt_task_opts_t *o;
    mt_task_t *t = NULL;
    mt_task_result r;
    char *node;

    CHECK(mt_task_opts_create(&o) == 0);
    CHECK(mt_task_opts_set_placement_group(o, pg, (int)mt_pg_num_bundles(pg))
          == -MT_EINVAL);
    CHECK(mt_task_opts_set_placement_group(o, pg, i) == 0);
    CHECK(mt_submit_command(c, argv, o, &t) == 0);
    mt_task_opts_destroy(o);
    mt_task_result_init(&r);
    CHECK(mt_task_wait(c, t, 30000, &r) == 0 && r.exit_code == 0);
    node = strdup(r.node_id);
    mt_task_result_release(&r);
    mt_task_release(t);
    return node;
}

static void strict_spread(int n)
{
    mt_pg_t *pg = make_group(MT_PG_STRICT_SPREAD, n, "CPU", 1);
    mt_pg_state st = MT_PG_STATE_UNKNOWN;

    CHECK(mt_pg_wait(c, pg, 20000, &st) == 0 && st == MT_PG_STATE_CREATED);
    for (int i = 0; i < n; i++) {
        const char *want = mt_pg_bundle_node(pg, (size_t)i);
        char *got;

        CHECK(want && *want);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(want, mt_pg_bundle_node(pg, (size_t)j)) != 0);
        got = run_in_bundle(pg, i);
        CHECK(strcmp(got, want) == 0);
        printf("bundle %d on %s\n", i, got);
        free(got);
    }
    CHECK(mt_pg_bundle_node(pg, (size_t)n) == NULL);
    CHECK(mt_pg_remove(c, pg) == 0);
    mt_pg_release(pg);
}

static void infeasible(void)
{
    mt_pg_t *pg = make_group(MT_PG_PACK, 1, "CPU", 1000);
    mt_pg_state st = MT_PG_STATE_UNKNOWN;

    CHECK(mt_pg_wait(c, pg, 300, &st) == -MT_ETIMEDOUT);
    CHECK(st == MT_PG_STATE_PENDING);
    CHECK(strstr(mt_client_last_error(c), "infeasible") != NULL);
    printf("infeasible: %s\n", mt_client_last_error(c));
    CHECK(mt_pg_remove(c, pg) == 0);
    mt_pg_release(pg);
}

/* A task into removed group pg is refused, on both submit paths. */
static void refused(mt_pg_t *pg, mt_task_result *r)
{
    const char *argv[] = {"true", NULL};
    mt_client_t *batched = c, *plain = NULL;
    mt_connect_opts co;
    mt_task_opts_t *o;
    mt_task_t *t = NULL;

    CHECK(mt_task_opts_create(&o) == 0);
    CHECK(mt_task_opts_set_placement_group(o, pg, 0) == 0);
    CHECK(mt_submit_command(batched, argv, o, &t) == 0);
    CHECK(mt_task_wait(batched, t, 20000, r) == -MT_ETASKFAILED);
    CHECK(strstr(r->error, "refused") != NULL);
    CHECK(strcmp(mt_task_id(t), "") == 0);
    printf("batched submit into a removed group: %s\n", r->error);
    mt_task_release(t);
    mt_connect_opts_init(&co);
    co.flags = MT_CONNECT_NO_BATCH;
    CHECK(mt_client_connect(mt_client_address(c), &co, &plain) == 0);
    t = NULL;
    c = plain; /* for CHECK's message */
    CHECK(mt_submit_command(plain, argv, o, &t) == -MT_EINVAL && !t);
    printf("plain submit into a removed group: %s\n",
           mt_client_last_error(plain));
    c = batched;
    mt_client_disconnect(plain);
    mt_task_opts_destroy(o);
}

static void removal(void)
{
    const char *argv[] = {"sleep", "60", NULL};
    mt_pg_t *pg = make_group(MT_PG_PACK, 1, "CPU", 1);
    mt_task_opts_t *o;
    mt_task_t *t = NULL;
    mt_task_result r;

    CHECK(mt_pg_wait(c, pg, 20000, NULL) == 0);
    CHECK(mt_task_opts_create(&o) == 0);
    CHECK(mt_task_opts_set_placement_group(o, pg, -1) == 0);
    CHECK(mt_submit_command(c, argv, o, &t) == 0);
    mt_task_opts_destroy(o);
    mt_task_result_init(&r);
    while (mt_task_wait(c, t, 50, &r) == -MT_ETIMEDOUT &&
           r.state != MT_TASK_STATE_RUNNING)
        ;
    CHECK(r.state == MT_TASK_STATE_RUNNING);
    CHECK(mt_pg_remove(c, pg) == 0);
    CHECK(mt_task_wait(c, t, 20000, &r) < 0);
    printf("task in the removed group: %s (%s)\n",
           mt_task_state_name(r.state), r.error);
    CHECK(mt_pg_wait(c, pg, 0, NULL) == -MT_ESTATE);
    CHECK(mt_pg_remove(c, pg) == 0);
    mt_task_release(t);
    refused(pg, &r);
    mt_task_result_release(&r);
    mt_pg_release(pg);
}

int main(int argc, char **argv)
{
    CHECK(argc == 3);
    CHECK(mt_client_connect(argv[1], NULL, &c) == 0);
    option_errors();
    strict_spread(atoi(argv[2]));
    infeasible();
    removal();
    mt_client_disconnect(c);
    return 0;
}
