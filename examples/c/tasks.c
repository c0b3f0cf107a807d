/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tasks.c -- fan out 8 command tasks, fan in their outputs.
 *
 * Task N runs `sh -c 'echo $((N*N))'` with N in its environment; the driver
 * waits for all of them, parses each task's stdout and prints the sum of
 * the squares of 1..8 (204). Exits 0 when every task finished with exit
 * code 0 and the sum is right.
 *
 * usage: example_tasks [HEAD_HOST:PORT]   (default: the local session)
 */
#include <stdio.h>
#include <stdlib.h>

#include <manta/manta.h>

#define N_TASKS 8

static int fail(mt_client_t *c, const char *what, int rc)
{
    fprintf(stderr, "example_tasks: %s: %s (%s)\n", what,
            mt_client_last_error(c), mt_error_name(rc));
    return 1;
}

/* Submit task n: sh -c 'echo $((N*N))' with N=n. */
static int submit_square(mt_client_t *c, int n, mt_task_t **out)
{
    const char *argv[] = {"sh", "-c", "echo $((N*N))", NULL};
    mt_task_opts_t *o;
    char val[16], name[32];
    int rc;

    if ((rc = mt_task_opts_create(&o)) < 0)
        return rc;
    snprintf(val, sizeof(val), "%d", n);
    snprintf(name, sizeof(name), "square-%d", n);
    rc = mt_task_opts_set_env(o, "N", val);
    if (rc == 0)
        rc = mt_task_opts_set_name(o, name);
    if (rc == 0)
        rc = mt_task_opts_set_resource(o, "CPU", 0.5);
    if (rc == 0)
        rc = mt_submit_command(c, argv, o, out);
    mt_task_opts_destroy(o);
    return rc;
}

/* Wait for task t and add the number it printed to *sum. */
static int collect(mt_client_t *c, mt_task_t *t, long *sum)
{
    mt_task_result r;
    int rc;

    mt_task_result_init(&r);
    rc = mt_task_wait(c, t, 60000, &r);
    if (rc == 0 && r.exit_code != 0) {
        fprintf(stderr, "example_tasks: task %s exited %d: %s\n",
                mt_task_id(t), r.exit_code, (const char *)r.err);
        rc = -MT_ETASKFAILED;
    }
    if (rc == 0) {
        printf("  task %s on node %.8s: %s", mt_task_id(t), r.node_id,
               (const char *)r.out);
        *sum += strtol((const char *)r.out, NULL, 10);
    }
    mt_task_result_release(&r);
    return rc;
}

int main(int argc, char **argv)
{
    mt_task_t *tasks[N_TASKS] = {0};
    mt_client_t *c;
    long sum = 0;
    int rc, ended, status = 1;

    rc = mt_client_connect(argc > 1 ? argv[1] : NULL, NULL, &c);
    if (rc < 0)
        return fail(NULL, "connect", rc);
    for (int i = 0; i < N_TASKS; i++)
        if ((rc = submit_square(c, i + 1, &tasks[i])) < 0) {
            fail(c, "submit", rc);
            goto out;
        }
    printf("submitted %d tasks; waiting for all of them\n", N_TASKS);
    ended = mt_wait_tasks(c, tasks, N_TASKS, N_TASKS, 60000, NULL);
    if (ended != N_TASKS) {
        fprintf(stderr, "example_tasks: only %d of %d tasks ended\n", ended,
                N_TASKS);
        goto out;
    }
    for (int i = 0; i < N_TASKS; i++)
        if ((rc = collect(c, tasks[i], &sum)) < 0) {
            fail(c, "task", rc);
            goto out;
        }
    printf("sum of squares 1..%d = %ld\n", N_TASKS, sum);
    status = sum == 204 ? 0 : 1;
out:
    for (int i = 0; i < N_TASKS; i++)
        mt_task_release(tasks[i]);
    mt_client_disconnect(c);
    return status;
}
