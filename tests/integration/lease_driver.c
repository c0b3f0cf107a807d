/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lease_driver.c -- the C driver of test_leases.py: function tasks with
 * value arguments, which the SDK pushes to leased workers, from
 * libmt_test_fnlib.so (fnlib.c) in LIBDIR.
 *
 *   lease_driver ADDR LIBDIR many N
 *       N `echo` tasks, each given its index; waits for them in batches of
 *       1,000 and checks every value. Prints "DONE n=N nodes=K" with K the
 *       nodes they ran on.
 *   lease_driver ADDR LIBDIR sleep N MS PRIO
 *       N `sleep_ms` tasks of MS ms at priority PRIO, submitted at once;
 *       prints "START" when submitted and "END <i> <ms>" as each of the
 *       first, middle and last ends (ms since START), then "DONE".
 *   lease_driver ADDR LIBDIR retry N MS
 *       N `sleep_ms` tasks of MS ms with 3 retries; prints "SUBMITTED"
 *       then, when all ended, "DONE ok=A failed=B attempts=C nodes=..."
 *       (C: the sum of attempt numbers) and each failure's error.
 *
 * Exit 0 when every check held, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <manta/manta.h>

#define BATCH 1000

static char fn_echo[4096], fn_sleep[4096];

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Remember node (a few distinct ones at most). */
static void note_node(char nodes[8][64], int *n, const char *node)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(nodes[i], node) == 0)
            return;
    if (*n < 8)
        snprintf(nodes[(*n)++], 64, "%s", node);
}

static int many(mt_client_t *c, long n)
{
    mt_task_t **v = calloc(BATCH, sizeof(*v));
    char nodes[8][64];
    int n_nodes = 0, bad = 0;

    for (long base = 0; base < n; base += BATCH) {
        long k = n - base < BATCH ? n - base : BATCH;

        for (long i = 0; i < k; i++) {
            int64_t x = base + i;
            mt_arg a = mt_arg_value(&x, sizeof(x));

            if (mt_submit_function_args(c, fn_echo, &a, 1, NULL, &v[i]) < 0) {
                fprintf(stderr, "submit %ld: %s\n", (long)x,
                        mt_client_last_error(c));
                return 1;
            }
        }
        for (long i = 0; i < k; i++) {
            mt_task_result r;
            int64_t got = -1;

            mt_task_result_init(&r);
            if (mt_task_wait(c, v[i], 120000, &r) < 0 ||
                r.value_len != 8) {
                if (bad++ < 5)
                    fprintf(stderr, "task %s: %s (%s)\n", mt_task_id(v[i]),
                            mt_client_last_error(c), r.error ? r.error : "");
            } else {
                memcpy(&got, r.value, 8);
                if (got != base + i && bad++ < 5)
                    fprintf(stderr, "task %ld gave %lld\n", base + i,
                            (long long)got);
                note_node(nodes, &n_nodes, r.node_id);
            }
            mt_task_result_release(&r);
            mt_task_release(v[i]);
        }
    }
    free(v);
    printf("DONE n=%ld nodes=%d bad=%d\n", n, n_nodes, bad);
    return bad ? 1 : 0;
}

/* sleep_ms takes its milliseconds as decimal text. */
static mt_arg ms_arg(char buf[16], int32_t ms)
{
    return mt_arg_value(buf, (size_t)snprintf(buf, 16, "%d", (int)ms));
}

static int sleep_tasks(mt_client_t *c, long n, int32_t ms, int prio)
{
    char buf[16];

    mt_task_t **v = calloc((size_t)n, sizeof(*v));
    mt_task_opts_t *o;
    int64_t t0;
    int bad = 0;

    mt_task_opts_create(&o);
    mt_task_opts_set_priority(o, prio);
    t0 = now_ms();
    for (long i = 0; i < n; i++) {
        mt_arg a = ms_arg(buf, ms);

        if (mt_submit_function_args(c, fn_sleep, &a, 1, o, &v[i]) < 0)
            return 1;
    }
    printf("START\n");
    fflush(stdout);
    for (long i = 0; i < n; i++) {
        mt_task_result r;

        mt_task_result_init(&r);
        if (mt_task_wait(c, v[i], 300000, &r) < 0 ||
            r.state != MT_TASK_STATE_FINISHED) {
            bad++;
            fprintf(stderr, "task %ld: %s\n", i, r.error ? r.error : "?");
        }
        if (i == 0 || i == n / 2 || i == n - 1) {
            printf("END %ld %lld\n", i, (long long)(now_ms() - t0));
            fflush(stdout);
        }
        mt_task_result_release(&r);
        mt_task_release(v[i]);
    }
    mt_task_opts_destroy(o);
    free(v);
    printf("DONE bad=%d\n", bad);
    return bad ? 1 : 0;
}

static int retry(mt_client_t *c, long n, int32_t ms)
{
    char buf[16];
    mt_task_t **v = calloc((size_t)n, sizeof(*v));
    mt_task_opts_t *o;
    char nodes[8][64];
    int n_nodes = 0, ok = 0, failed = 0;
    long attempts = 0;

    mt_task_opts_create(&o);
    mt_task_opts_set_max_retries(o, 3);
    for (long i = 0; i < n; i++) {
        mt_arg a = ms_arg(buf, ms);

        if (mt_submit_function_args(c, fn_sleep, &a, 1, o, &v[i]) < 0)
            return 1;
    }
    printf("SUBMITTED\n");
    fflush(stdout);
    for (long i = 0; i < n; i++) {
        mt_task_result r;

        mt_task_result_init(&r);
        if (mt_task_wait(c, v[i], 300000, &r) == 0 &&
            r.state == MT_TASK_STATE_FINISHED) {
            ok++;
            note_node(nodes, &n_nodes, r.node_id);
        } else {
            failed++;
            fprintf(stderr, "task %s: %s\n", mt_task_id(v[i]),
                    r.error ? r.error : mt_client_last_error(c));
        }
        attempts += r.attempt;
        mt_task_result_release(&r);
        mt_task_release(v[i]);
    }
    mt_task_opts_destroy(o);
    free(v);
    printf("DONE ok=%d failed=%d attempts=%ld nodes=", ok, failed, attempts);
    for (int i = 0; i < n_nodes; i++)
        printf("%s%s", i ? "," : "", nodes[i]);
    printf("\n");
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    mt_client_t *c;
    int rc;

    if (argc < 5) {
        fprintf(stderr, "usage: lease_driver ADDR LIBDIR many|sleep|retry "
                        "N [MS [PRIO]]\n");
        return 2;
    }
    snprintf(fn_echo, sizeof(fn_echo), "%s/libmt_test_fnlib.so:echo",
             argv[2]);
    snprintf(fn_sleep, sizeof(fn_sleep), "%s/libmt_test_fnlib.so:sleep_ms",
             argv[2]);
    if ((rc = mt_client_connect(argv[1], NULL, &c)) < 0) {
        fprintf(stderr, "connect: %s\n", mt_client_last_error(NULL));
        return 1;
    }
    if (strcmp(argv[3], "many") == 0)
        rc = many(c, atol(argv[4]));
    else if (strcmp(argv[3], "sleep") == 0 && argc >= 7)
        rc = sleep_tasks(c, atol(argv[4]), atoi(argv[5]), atoi(argv[6]));
    else if (strcmp(argv[3], "retry") == 0 && argc >= 6)
        rc = retry(c, atol(argv[4]), atoi(argv[5]));
    else
        rc = 2;
    mt_client_disconnect(c);
    return rc;
}
