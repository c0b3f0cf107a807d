/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actor_counter.c -- an actor: a counter that lives in one executor
 * process of the cluster; 10 increments called without waiting come back
 * as 1..10, in call order.
 *
 * The actor's factory and methods are in libexample_counter.so
 * (counter_lib.c), found through the code path: the lib/ folder next to
 * this program's bin/ folder. The actor is not detached, so disconnecting
 * kills it.
 *
 * usage: example_actor_counter [HEAD_HOST:PORT]  (default: local session)
 */
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <manta/manta.h>

#define N_CALLS 10

static int fail(mt_client_t *c, const char *what, int rc)
{
    fprintf(stderr, "example_actor_counter: %s: %s (%s)\n", what,
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

/* Wait for each call; check they count 1..N in order. */
static int collect(mt_client_t *c, mt_task_t **calls)
{
    int bad = 0;

    for (int i = 0; i < N_CALLS; i++) {
        mt_task_result r;
        int64_t v = -1;
        int rc;

        mt_task_result_init(&r);
        rc = mt_task_wait(c, calls[i], 60000, &r);
        if (rc == 0 && r.value_len == sizeof(v))
            memcpy(&v, r.value, sizeof(v));
        else
            fail(c, "incr", rc);
        printf("incr #%d -> %lld\n", i + 1, (long long)v);
        bad += v != i + 1;
        mt_task_result_release(&r);
    }
    return bad;
}

int main(int argc, char **argv)
{
    mt_task_t *calls[N_CALLS] = {0};
    mt_task_opts_t *o = NULL;
    mt_actor_t *a = NULL;
    mt_client_t *c;
    char dir[PATH_MAX];
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
    rc = mt_actor_create(c, "libexample_counter.so:counter_new", NULL, NULL,
                         0, o, NULL, &a);
    if (rc < 0 || (rc = mt_actor_wait_ready(c, a, 60000)) < 0) {
        fail(c, "create the actor", rc);
        goto out;
    }
    printf("actor %s is alive\n", mt_actor_id(a));
    for (int i = 0; i < N_CALLS; i++) {
        if ((rc = mt_actor_call(c, a, "incr", NULL, NULL, 0, &calls[i])) < 0) {
            fail(c, "call incr", rc);
            goto out;
        }
    }
    if (collect(c, calls) == 0) {
        printf("the counter counted 1..%d in call order\n", N_CALLS);
        status = 0;
    }
out:
    for (int i = 0; i < N_CALLS; i++)
        mt_task_release(calls[i]);
    mt_actor_release(a);
    mt_task_opts_destroy(o);
    mt_client_disconnect(c); /* kills the (non-detached) actor */
    return status;
}
