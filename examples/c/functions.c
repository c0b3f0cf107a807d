/* SPDX-License-Identifier: Apache-2.0 */
/*
 * functions.c -- fan out 8 C function tasks, fan in their results.
 *
 * Each task calls square() from libexample_squares.so (squares_lib.c) in
 * one of the workers' prestarted executors; the driver sums the results
 * (204 for 1..8). The library is found through the task's code path: the
 * lib/ folder next to this program's bin/ folder.
 *
 * usage: example_functions [HEAD_HOST:PORT]   (default: the local session)
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <manta/manta.h>

#define N_TASKS 8

static int fail(mt_client_t *c, const char *what, int rc)
{
    fprintf(stderr, "example_functions: %s: %s (%s)\n", what,
            mt_client_last_error(c), mt_error_name(rc));
    return 1;
}

/* <dir of this program>/../lib, where the build puts the library. */
static int lib_dir(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n <= 0)
        return -1;
    self[n] = '\0';
    snprintf(out, len, "%s/../lib", dirname(self));
    return 0;
}

int main(int argc, char **argv)
{
    mt_task_t *tasks[N_TASKS] = {0};
    mt_task_opts_t *o = NULL;
    mt_client_t *c;
    char dir[PATH_MAX], nums[N_TASKS][8];
    long sum = 0;
    int rc, status = 1;

    if (lib_dir(dir, sizeof(dir)) < 0)
        return fail(NULL, "finding the library", -MT_ENOENT);
    rc = mt_client_connect(argc > 1 ? argv[1] : NULL, NULL, &c);
    if (rc < 0)
        return fail(NULL, "connect", rc);
    if ((rc = mt_task_opts_create(&o)) < 0 ||
        (rc = mt_task_opts_add_code_path(o, dir)) < 0 ||
        (rc = mt_task_opts_set_resource(o, "CPU", 0.5)) < 0) {
        fail(c, "options", rc);
        goto out;
    }
    for (int i = 0; i < N_TASKS; i++) {
        const void *args[1] = {nums[i]};
        size_t sizes[1];

        sizes[0] = (size_t)snprintf(nums[i], sizeof(nums[i]), "%d", i + 1);
        rc = mt_submit_function(c, "libexample_squares.so:square", args,
                                sizes, 1, o, &tasks[i]);
        if (rc < 0) {
            fail(c, "submit", rc);
            goto out;
        }
    }
    for (int i = 0; i < N_TASKS; i++) {
        mt_task_result r;

        mt_task_result_init(&r);
        rc = mt_task_wait(c, tasks[i], 60000, &r);
        if (rc == 0)
            printf("  square(%s) = %s on node %.8s\n", nums[i],
                   (const char *)r.value, r.node_id);
        if (rc == 0)
            sum += strtol((const char *)r.value, NULL, 10);
        mt_task_result_release(&r);
        if (rc < 0) {
            fail(c, "task", rc);
            goto out;
        }
    }
    printf("sum of squares 1..%d = %ld (function tasks)\n", N_TASKS, sum);
    status = sum == 204 ? 0 : 1;
out:
    for (int i = 0; i < N_TASKS; i++)
        mt_task_release(tasks[i]);
    mt_task_opts_destroy(o);
    mt_client_disconnect(c);
    return status;
}
