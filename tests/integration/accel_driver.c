/* SPDX-License-Identifier: Apache-2.0 */
/*
 * accel_driver.c -- an SDK driver for tests/integration/test_accel.py: what
 * a function task and an actor see of their accelerator env when created
 * through the SDK with mt_task_opts_set_env / mt_task_opts_unset_env.
 *
 *   accel_driver ADDR LIBDIR NODE_ID TPU K=V|-NAME... -- VAR...
 *
 * With opts that pin to NODE_ID (label manta.io/node-id), ask TPU chips
 * (0: none) and 0 CPU, set each K=V and unset each -NAME:
 *   1. a function task libmt_test_fnlib.so:env per VAR: prints
 *      "fn VAR=VALUE" or "fn VAR unset";
 *   2. an actor (factory libmt_test_fnlib.so:hello) whose method env is
 *      called per VAR: prints "actor VAR=VALUE" or "actor VAR unset";
 *      then the actor is killed.
 * Failures print "error MT_E... MESSAGE" and exit 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <manta/manta.h>

#define FN "libmt_test_fnlib.so:env"

static int die(mt_client_t *c, const char *what, int rc)
{
    printf("error %s %s: %s\n", mt_error_name(rc), what,
           mt_client_last_error(c));
    return 2;
}

/* Print "who VAR=VALUE" or "who VAR unset" from a finished env call. */
static int show(mt_client_t *c, const char *who, const char *var,
                mt_task_t *t)
{
    mt_task_result r;
    int rc, ret = 0;

    mt_task_result_init(&r);
    rc = mt_task_wait(c, t, 60000, &r);
    if (rc == 0) {
        printf("%s %s=%.*s\n", who, var, (int)r.value_len,
               (const char *)r.value);
    } else if (r.error && strstr(r.error, "is not set")) {
        printf("%s %s unset\n", who, var);
    } else {
        printf("error %s %s %s: %s\n", mt_error_name(rc), who, var,
               r.error ? r.error : "");
        ret = 2;
    }
    mt_task_result_release(&r);
    mt_task_release(t);
    return ret;
}

static int build_opts(char **av, int n, const char *libdir,
                      const char *node, double tpu, mt_task_opts_t **out)
{
    const char *vals[1] = {node};
    mt_task_opts_t *o;
    int rc;

    if ((rc = mt_task_opts_create(&o)) < 0)
        return rc;
    *out = o;
    if ((rc = mt_task_opts_add_code_path(o, libdir)) < 0 ||
        (rc = mt_task_opts_set_resource(o, "CPU", 0)) < 0 ||
        (tpu > 0 && (rc = mt_task_opts_set_resource(o, "TPU", tpu)) < 0) ||
        (rc = mt_task_opts_add_label_match(o, "manta.io/node-id",
                                           MT_LABEL_EQ, vals, 1)) < 0)
        return rc;
    for (int i = 0; i < n; i++) {
        char *eq = strchr(av[i], '=');

        if (av[i][0] == '-') {
            rc = mt_task_opts_unset_env(o, av[i] + 1);
        } else if (eq) {
            *eq = '\0';
            rc = mt_task_opts_set_env(o, av[i], eq + 1);
            *eq = '=';
        } else {
            rc = -MT_EINVAL;
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int run_actor(mt_client_t *c, const mt_task_opts_t *o, char **vars,
                     int nvars)
{
    mt_actor_t *a = NULL;
    mt_task_t *t;
    int rc;

    if ((rc = mt_actor_create(c, "libmt_test_fnlib.so:hello", NULL, NULL, 0,
                              o, NULL, &a)) < 0)
        return die(c, "actor create", rc);
    if ((rc = mt_actor_wait_ready(c, a, 30000)) < 0) {
        mt_actor_release(a);
        return die(c, "actor ready", rc);
    }
    for (int i = 0; i < nvars && rc == 0; i++) {
        const void *args[1] = {vars[i]};
        size_t sizes[1] = {strlen(vars[i])};

        if ((rc = mt_actor_call(c, a, "env", args, sizes, 1, &t)) < 0)
            rc = die(c, "actor call", rc);
        else
            rc = show(c, "actor", vars[i], t);
    }
    mt_actor_kill(c, a, true);
    mt_actor_release(a);
    return rc;
}

int main(int argc, char **argv)
{
    mt_client_t *c;
    mt_task_opts_t *o = NULL;
    mt_task_t *t;
    int dash = 5, rc;

    while (dash < argc && strcmp(argv[dash], "--"))
        dash++;
    if (argc < 5 || dash >= argc) {
        fprintf(stderr, "usage: accel_driver ADDR LIBDIR NODE_ID TPU "
                        "[K=V|-NAME]... -- VAR...\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if ((rc = mt_client_connect(argv[1], NULL, &c)) < 0) {
        printf("error %s connect\n", mt_error_name(rc));
        return 2;
    }
    rc = build_opts(argv + 5, dash - 5, argv[2], argv[3], atof(argv[4]), &o);
    if (rc < 0) {
        rc = die(c, "options", rc);
        goto out;
    }
    for (int i = dash + 1; i < argc && rc == 0; i++) {
        const void *args[1] = {argv[i]};
        size_t sizes[1] = {strlen(argv[i])};

        if ((rc = mt_submit_function(c, FN, args, sizes, 1, o, &t)) < 0)
            rc = die(c, "submit", rc);
        else
            rc = show(c, "fn", argv[i], t);
    }
    if (rc == 0)
        rc = run_actor(c, o, argv + dash + 1, argc - dash - 1);
out:
    mt_task_opts_destroy(o);
    mt_client_disconnect(c);
    return rc;
}
