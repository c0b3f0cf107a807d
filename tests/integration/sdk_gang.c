/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk_gang.c -- a C driver for test_gangs.py: TPU slice groups and gangs
 * through libmanta (manta/pg.h, manta/gang.h) against the fake accelerator
 * cluster (two v4-16 slices of 2 hosts). Exits 0 when every check holds; a
 * failed check prints its line and exits 1.
 *
 * usage: sdk_gang HEAD_HOST:PORT
 *   1. option errors;
 *   2. a slice group: created, 2 bundles on 2 distinct nodes, removed;
 *   3. a device-launch gang whose 8 members check their env: FINISHED;
 *   4. a gang exiting 7 with one restart: FAILED, exit code 7, attempt 1;
 *   5. a sleeping gang cancelled: CANCELLED;
 *   6. an unknown pod type is refused with a reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <manta/manta.h>

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "sdk_gang: %s:%d: check failed: %s (last error: " \
                    "%s)\n", __FILE__, __LINE__, #cond,                        \
                    mt_client_last_error(c));                                  \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static mt_client_t *c;

static void option_errors(void)
{
    mt_gang_opts_t *o = NULL;
    mt_pg_opts_t *po;

    CHECK(mt_gang_opts_create(&o, "") == -MT_EINVAL && !o);
    CHECK(mt_gang_opts_create(&o, "v4-16") == 0);
    CHECK(mt_gang_opts_set_slices(o, 0) == -MT_EINVAL);
    CHECK(mt_gang_opts_set_launch(o, (mt_gang_launch)7) == -MT_EINVAL);
    CHECK(mt_gang_opts_set_max_restarts(o, -2) == -MT_EINVAL);
    CHECK(mt_gang_opts_set_env(o, "A=B", "x") == -MT_EINVAL);
    mt_gang_opts_destroy(o);
    CHECK(mt_pg_opts_create(&po) == 0);
    CHECK(mt_pg_opts_set_tpu_slice(po, "v4-16", NULL, 0) == -MT_EINVAL);
    mt_pg_opts_destroy(po);
}

static void slice_group(void)
{
    mt_pg_opts_t *po;
    mt_pg_t *pg = NULL;

    CHECK(mt_pg_opts_create(&po) == 0);
    CHECK(mt_pg_opts_set_tpu_slice(po, "v4-16", "2x2x2", 1) == 0);
    CHECK(mt_pg_create(c, po, &pg) == 0);
    mt_pg_opts_destroy(po);
    CHECK(mt_pg_wait(c, pg, 10000, NULL) == 0);
    CHECK(mt_pg_num_bundles(pg) == 2);
    CHECK(*mt_pg_bundle_node(pg, 0) && *mt_pg_bundle_node(pg, 1));
    CHECK(strcmp(mt_pg_bundle_node(pg, 0), mt_pg_bundle_node(pg, 1)) != 0);
    CHECK(mt_pg_remove(c, pg) == 0);
    mt_pg_release(pg);
}

/* Submit argv as a gang; wait for its end into gi. */
static void run_gang(mt_gang_opts_t *o, const char *script, int cancel_ms,
                     mt_gang_info_t *gi)
{
    const char *argv[] = {"sh", "-c", script};
    char id[32];

    CHECK(mt_gang_submit(c, o, argv, 3, id, sizeof(id)) == 0);
    if (cancel_ms) {
        CHECK(mt_gang_wait(c, id, cancel_ms, gi) == -MT_ETIMEDOUT);
        CHECK(mt_gang_cancel(c, id) == 0);
    }
    CHECK(mt_gang_wait(c, id, 60000, gi) == 0);
    printf("gang %s: state %d attempt %u members %u exit %d slice %s: %s\n",
           id, gi->state, gi->attempt, gi->members, gi->exit_code, gi->slice,
           gi->error);
}

int main(int argc, char **argv)
{
    mt_gang_opts_t *o;
    mt_gang_info_t gi;
    char id[32];

    CHECK(argc == 2);
    CHECK(mt_client_connect(argv[1], NULL, &c) == 0);
    option_errors();
    slice_group();

    CHECK(mt_gang_opts_create(&o, "v4-16") == 0);
    CHECK(mt_gang_opts_set_launch(o, MT_GANG_LAUNCH_DEVICE) == 0);
    CHECK(mt_gang_opts_set_env(o, "WANT", "8") == 0);
    CHECK(mt_gang_opts_set_name(o, "sdk-gang") == 0);
    run_gang(o, "test \"$WORLD_SIZE\" = \"$WANT\" && "
             "test \"$TPU_VISIBLE_CHIPS\" = \"$LOCAL_RANK\" && "
             "test -n \"$TPU_PROCESS_PORT\"", 0, &gi);
    CHECK(gi.state == MT_GANG_FINISHED && gi.members == 8 && *gi.slice);
    mt_gang_opts_destroy(o);

    CHECK(mt_gang_opts_create(&o, "v4-16") == 0);
    CHECK(mt_gang_opts_set_max_restarts(o, 1) == 0);
    run_gang(o, "exit 7", 0, &gi);
    CHECK(gi.state == MT_GANG_FAILED && gi.exit_code == 7 &&
          gi.attempt == 1 && strstr(gi.error, "exited with code 7"));
    run_gang(o, "sleep 60", 1500, &gi);
    CHECK(gi.state == MT_GANG_CANCELLED);
    mt_gang_opts_destroy(o);

    CHECK(mt_gang_opts_create(&o, "v9-99") == 0);
    CHECK(mt_gang_submit(c, o, (const char *[]){"true"}, 1, id,
                         sizeof(id)) == -MT_EINVAL);
    CHECK(strstr(mt_client_last_error(c), "pod type") != NULL);
    mt_gang_opts_destroy(o);
    mt_client_disconnect(c);
    printf("sdk_gang: all checks passed\n");
    return 0;
}
