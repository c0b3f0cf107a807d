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
 *
 * Other failures print "error MT_E... MESSAGE" and exit 2. With
 * ACTOR_DRIVER_CRASH=1 in the environment, create ends the process with
 * _exit() once the actor is ready, without disconnecting (a driver crash).
 */
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

static int call(mt_client_t *c, char **av, int n)
{
    mt_task_t **ts;
    mt_actor_t *a;
    const void *args[1];
    size_t sizes[1];
    int k, rc;

    if (n < 3)
        return 2;
    k = atoi(av[2]);
    if ((rc = find(c, av[0], &a)) < 0)
        return die(c, rc);
    if (n > 3) {
        args[0] = av[3];
        sizes[0] = strlen(av[3]);
    }
    ts = calloc((size_t)k + 1, sizeof(*ts));
    for (int i = 0; i < k; i++)
        if ((rc = mt_actor_call(c, a, av[1], args, sizes, n > 3, &ts[i])) < 0)
            return die(c, rc);
    fprintf(stderr, "sent %d\n", k);
    for (int i = 0; i < k; i++) {
        mt_task_result r;
        int64_t v = 0;

        mt_task_result_init(&r);
        rc = mt_task_wait(c, ts[i], 60000, &r);
        if (rc == 0 && r.value_len == sizeof(v)) {
            memcpy(&v, r.value, sizeof(v));
            printf("ok %lld\n", (long long)v);
        } else {
            printf("err %s %s\n", mt_error_name(rc ? rc : -MT_EPROTO),
                   r.error ? r.error : "");
        }
        mt_task_result_release(&r);
        mt_task_release(ts[i]);
    }
    free(ts);
    mt_actor_release(a);
    return 0;
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
        fprintf(stderr, "usage: actor_driver ADDR LIBDIR create|call|kill "
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
    else
        rc = 2;
    mt_client_disconnect(c);
    return rc;
}
