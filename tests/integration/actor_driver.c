/* SPDX-License-Identifier: Apache-2.0 */
/*
 * actor_driver.c -- a small SDK driver for tests/integration/test_actors.py:
 * each run is one driver process doing one thing with actors, so the test
 * can check that a second process finds a named actor the first created.
 *
 *   actor_driver ADDR LIBDIR create NAME DETACHED MAX_RESTARTS CPUS FACTORY
 *                [ARG]      NAME "-" = anonymous; prints "id ID", then
 *                           "ready" (exit 0) or "dead REASON" (exit 3);
 *                           with DETACHED 0 the actor dies as we exit
 *   actor_driver ADDR LIBDIR call WHO METHOD N [ARG]
 *                           WHO = a name or "id:ID"; N calls without
 *                           waiting ("sent N" on stderr once they are
 *                           made, so a test knows they are in flight),
 *                           then one line each in call order:
 *                           "ok VALUE" or "err MT_E... MESSAGE"
 *   actor_driver ADDR LIBDIR kill WHO NO_RESTART
 *   actor_driver ADDR LIBDIR hold WHO METHOD N [SLEEP_MS]
 *                           one handle on WHO: a "pid" call through it
 *                           ("pid PID"; with SLEEP_MS a sleep_ms call
 *                           follows, not waited for), then a line on
 *                           stdin (the test kills the actor meanwhile),
 *                           then N calls of METHOD through the same
 *                           handle; the outcomes (the sleep's first) are
 *                           printed as call prints them
 *
 * Other failures print "error MT_E... MESSAGE" and exit 2. With
 * ACTOR_DRIVER_CRASH=1 in the environment, create ends the process with
 * _exit() once the actor is ready, without disconnecting (a driver crash).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <manta/manta.h>

static int die(mt_client_t *c, int rc)
{
    printf("error %s %s\n", mt_error_name(rc), mt_client_last_error(c));
    return 2;
}

static int find(mt_client_t *c, const char *who, mt_actor_t **a)
{
    if (strncmp(who, "id:", 3) == 0)
        return mt_actor_get_id(c, who + 3, a);
    return mt_actor_get(c, who, a);
}

static int create(mt_client_t *c, const char *libdir, char **av, int n)
{
    mt_task_opts_t *o = NULL;
    mt_actor_opts_t *ao = NULL;
    mt_actor_t *a = NULL;
    const void *args[1];
    size_t sizes[1];
    int rc;

    if (n < 5)
        return 2;
    mt_task_opts_create(&o);
    mt_actor_opts_create(&ao);
    mt_task_opts_add_code_path(o, libdir);
    mt_task_opts_set_resource(o, "CPU", atof(av[3]));
    if (strcmp(av[0], "-"))
        mt_actor_opts_set_name(ao, av[0]);
    mt_actor_opts_set_detached(ao, atoi(av[1]) != 0);
    mt_actor_opts_set_max_restarts(ao, atoi(av[2]));
    if (n > 5) {
        args[0] = av[5];
        sizes[0] = strlen(av[5]);
    }
    rc = mt_actor_create(c, av[4], args, sizes, n > 5 ? 1 : 0, o, ao, &a);
    mt_task_opts_destroy(o);
    mt_actor_opts_destroy(ao);
    if (rc < 0)
        return die(c, rc);
    printf("id %s\n", mt_actor_id(a));
    fflush(stdout);
    rc = mt_actor_wait_ready(c, a, 30000);
    mt_actor_release(a);
    if (rc == -MT_EACTORDIED) {
        printf("dead %s\n", mt_client_last_error(c));
        return 3;
    }
    if (rc < 0)
        return die(c, rc);
    printf("ready\n");
    if (getenv("ACTOR_DRIVER_CRASH"))
        _exit(0);
    return 0;
}

/* Wait for call t and (with say) print its outcome as one line. RET its
 * value (0 when it failed). */
static int64_t outcome(mt_client_t *c, mt_task_t *t, bool say)
{
    mt_task_result r;
    int64_t v = 0;
    int rc;

    mt_task_result_init(&r);
    rc = mt_task_wait(c, t, 60000, &r);
    if (rc == 0 && r.value_len == sizeof(v)) {
        memcpy(&v, r.value, sizeof(v));
        if (say)
            printf("ok %lld\n", (long long)v);
    } else if (say) {
        printf("err %s %s\n", mt_error_name(rc ? rc : -MT_EPROTO),
               r.error ? r.error : "");
    }
    mt_task_result_release(&r);
    mt_task_release(t);
    return v;
}

/* k calls of method on a without waiting, then their outcomes in order. */
static int call_many(mt_client_t *c, mt_actor_t *a, const char *method,
                     int k, const char *arg)
{
    mt_task_t **ts = calloc((size_t)k + 1, sizeof(*ts));
    const void *args[1] = {arg};
    size_t sizes[1] = {arg ? strlen(arg) : 0};
    int rc;

    for (int i = 0; i < k; i++)
        if ((rc = mt_actor_call(c, a, method, args, sizes, arg != NULL,
                                &ts[i])) < 0)
            return die(c, rc);
    fprintf(stderr, "sent %d\n", k);
    for (int i = 0; i < k; i++)
        outcome(c, ts[i], true);
    free(ts);
    return 0;
}

static int call(mt_client_t *c, char **av, int n)
{
    mt_actor_t *a;
    int rc;

    if (n < 3)
        return 2;
    if ((rc = find(c, av[0], &a)) < 0)
        return die(c, rc);
    rc = call_many(c, a, av[1], atoi(av[2]), n > 3 ? av[3] : NULL);
    mt_actor_release(a);
    return rc;
}

static int hold(mt_client_t *c, char **av, int n)
{
    const void *args[1] = {n > 3 ? av[3] : ""};
    size_t sizes[1] = {n > 3 ? strlen(av[3]) : 0};
    mt_task_t *t, *sleeper = NULL;
    char line[64];
    mt_actor_t *a;
    int rc;

    if (n < 3)
        return 2;
    if ((rc = find(c, av[0], &a)) < 0)
        return die(c, rc);
    if ((rc = mt_actor_call(c, a, "pid", NULL, NULL, 0, &t)) < 0)
        return die(c, rc);
    printf("pid %lld\n", (long long)outcome(c, t, false));
    if (n > 3 && (rc = mt_actor_call(c, a, "sleep_ms", args, sizes, 1,
                                     &sleeper)) < 0)
        return die(c, rc);
    if (!fgets(line, sizeof(line), stdin))
        return 2;
    if (sleeper)
        outcome(c, sleeper, true);
    rc = call_many(c, a, av[1], atoi(av[2]), NULL);
    mt_actor_release(a);
    return rc;
}

static int kill_it(mt_client_t *c, char **av, int n)
{
    mt_actor_t *a;
    int rc;

    if (n < 2)
        return 2;
    if ((rc = find(c, av[0], &a)) < 0)
        return die(c, rc);
    rc = mt_actor_kill(c, a, atoi(av[1]) != 0);
    mt_actor_release(a);
    if (rc < 0)
        return die(c, rc);
    printf("killed\n");
    return 0;
}

int main(int argc, char **argv)
{
    mt_client_t *c;
    int rc;

    if (argc < 4) {
        fprintf(stderr, "usage: actor_driver ADDR LIBDIR create|call|kill|hold "
                        "...\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if ((rc = mt_client_connect(argv[1], NULL, &c)) < 0)
        return die(NULL, rc);
    if (strcmp(argv[3], "create") == 0)
        rc = create(c, argv[2], argv + 4, argc - 4);
    else if (strcmp(argv[3], "call") == 0)
        rc = call(c, argv + 4, argc - 4);
    else if (strcmp(argv[3], "kill") == 0)
        rc = kill_it(c, argv + 4, argc - 4);
    else if (strcmp(argv[3], "hold") == 0)
        rc = hold(c, argv + 4, argc - 4);
    else
        rc = 2;
    mt_client_disconnect(c);
    return rc;
}
