/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk_smoke.c -- a C driver for test_sdk.py: each subcommand exercises one
 * part of libmanta against a real cluster and exits 0 when every check
 * holds (a failed check prints its line and exits 1).
 *
 * usage: sdk_smoke CASE HEAD_HOST:PORT
 *   concurrent  4 threads submit and wait for 10 tasks each
 *   many        530 tasks at once: more than the client's watch slots
 *   wait        wait any / all with timeouts, cancel running and pending
 *   output      exit code, stdout/stderr capture, the output limit
 *   missing     a program that does not exist ends FAILED with a message
 *   inflight    disconnect with tasks in flight, release handles after
 *   unreachable connect to a dead address fails within the timeout
 *   headdies    connect and start a task, wait for a line on stdin (the
 *               test kills the head): the task is reported lost and a
 *               submit fails, both within the timeouts
 *   rewatch     follow a task across a broken connection (the test cuts
 *               its proxy when told on stdout, then writes a line)
 *   objects     put/get round trips, timeouts, buffers after disconnect
 *   nostore     object calls without a store fail with a message
 *   create      zero-copy create/write/seal: bad use fails with clear
 *               errors, an unsealed object is unreadable, an aborted one
 *               vanishes; then prints "sealed HEX" for a 4 MiB float32
 *               tensor and waits for a line on stdin (its session owns it)
 *   readback    argv[3] = HEX, argv[4] = a store socket (another node):
 *               get the object there (pulled) and check every byte
 *   resources   cluster totals (argv[3] = expected CPU total)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <manta/manta.h>

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "sdk_smoke: %s:%d: check failed: %s (last "       \
                    "error: %s)\n", __FILE__, __LINE__, #cond,                 \
                    mt_client_last_error(c));                                  \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static const char *addr;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static mt_client_t *connect_or_die(void)
{
    mt_client_t *c = NULL;
    int rc = mt_client_connect(addr, NULL, &c);

    CHECK(rc == 0);
    return c;
}

static mt_task_t *submit(mt_client_t *c, const char *cmd, double cpus)
{
    const char *argv[] = {"sh", "-c", cmd, NULL};
    mt_task_opts_t *o;
    mt_task_t *t = NULL;

    CHECK(mt_task_opts_create(&o) == 0);
    CHECK(mt_task_opts_set_resource(o, "CPU", cpus) == 0);
    CHECK(mt_submit_command(c, argv, o, &t) == 0);
    mt_task_opts_destroy(o);
    CHECK(strlen(mt_task_id(t)) > 0);
    return t;
}

/* ---- concurrent --------------------------------------------------------- */

struct worker_arg {
    mt_client_t *c;
    int id;
};

static void *worker(void *p)
{
    struct worker_arg *a = p;
    mt_client_t *c = a->c;

    for (int i = 0; i < 10; i++) {
        char cmd[64], want[32];
        mt_task_result r;
        mt_task_t *t;

        snprintf(cmd, sizeof(cmd), "echo t%d-%d", a->id, i);
        snprintf(want, sizeof(want), "t%d-%d\n", a->id, i);
        t = submit(c, cmd, 0.1);
        mt_task_result_init(&r);
        CHECK(mt_task_wait(c, t, 60000, &r) == 0);
        CHECK(r.state == MT_TASK_STATE_FINISHED && r.exit_code == 0);
        CHECK(strcmp((const char *)r.out, want) == 0);
        mt_task_result_release(&r);
        mt_task_release(t);
    }
    return NULL;
}

static int case_concurrent(void)
{
    mt_client_t *c = connect_or_die();
    struct worker_arg args[4];
    pthread_t th[4];

    for (int i = 0; i < 4; i++) {
        args[i].c = c;
        args[i].id = i;
        CHECK(pthread_create(&th[i], NULL, worker, &args[i]) == 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    mt_client_disconnect(c);
    return 0;
}

/* More tasks than watch slots (512): the rest wait for one, none lost. */
static int case_many(void)
{
    enum { N = 530 };
    const char *argv[] = {"sh", "-c", "echo $MANTA_TASK_ID", NULL};
    mt_client_t *c = connect_or_die();
    mt_task_t **t = calloc(N, sizeof(*t));
    mt_task_opts_t *o;
    mt_task_result r;

    CHECK(t && mt_task_opts_create(&o) == 0);
    CHECK(mt_task_opts_set_resource(o, "CPU", 0.1) == 0);
    for (int i = 0; i < N; i++)
        CHECK(mt_submit_command(c, argv, o, &t[i]) == 0);
    CHECK(mt_wait_tasks(c, t, N, N, 120000, NULL) == N);
    mt_task_result_init(&r);
    for (int i = 0; i < N; i++) {
        CHECK(mt_task_wait(c, t[i], 0, &r) == 0 && r.exit_code == 0);
        mt_task_release(t[i]);
    }
    printf("%d tasks finished\n", N);
    mt_task_result_release(&r);
    mt_task_opts_destroy(o);
    free(t);
    mt_client_disconnect(c);
    return 0;
}

/* ---- wait and cancel ---------------------------------------------------- */

static int case_wait(void)
{
    mt_client_t *c = connect_or_die();
    mt_task_t *t[3];
    mt_task_result r;
    bool ready[3];
    double t0;
    int n;

    t[0] = submit(c, "true", 0.1);
    t[1] = submit(c, "sleep 30", 0.1);
    t[2] = submit(c, "true", 1000); /* infeasible: stays pending */
    /* Any: the quick one. */
    n = mt_wait_tasks(c, t, 2, 1, 20000, ready);
    CHECK(n == 1 && ready[0] && !ready[1]);
    /* The same two the other way round: an ended task after one that has
     * not is counted and flagged, for "all" (timing out) and for "any". */
    {
        mt_task_t *rev[2] = {t[1], t[0]};
        bool r2[2] = {true, false};

        n = mt_wait_tasks(c, rev, 2, 2, 300, r2);
        CHECK(n == 1 && !r2[0] && r2[1]);
        r2[0] = true;
        r2[1] = false;
        n = mt_wait_tasks(c, rev, 2, 1, 20000, r2);
        CHECK(n == 1 && !r2[0] && r2[1]);
    }
    /* All, with a timeout: returns after about 500 ms with one ended. */
    t0 = now_s();
    n = mt_wait_tasks(c, t, 3, 3, 500, ready);
    CHECK(n == 1 && ready[0] && !ready[1] && !ready[2]);
    CHECK(now_s() - t0 >= 0.45 && now_s() - t0 < 3);
    /* Zero timeout just looks. */
    CHECK(mt_wait_tasks(c, t, 3, 3, 0, NULL) == 1);
    mt_task_result_init(&r);
    /* A task that can never run says why while it waits. */
    CHECK(mt_task_wait(c, t[2], 100, &r) == -MT_ETIMEDOUT);
    CHECK(r.state == MT_TASK_STATE_PENDING);
    CHECK(strstr(mt_client_last_error(c), "infeasible") != NULL);
    printf("infeasible: %s\n", mt_client_last_error(c));
    CHECK(mt_task_wait(c, t[1], 200, &r) == -MT_ETIMEDOUT);
    CHECK(r.state == MT_TASK_STATE_RUNNING || r.state == MT_TASK_STATE_SCHEDULED
          || r.state == MT_TASK_STATE_PENDING);
    /* Cancel the running one and the pending one. */
    CHECK(mt_task_cancel(c, t[1], false) == 0);
    CHECK(mt_task_cancel(c, t[2], false) == 0);
    CHECK(mt_wait_tasks(c, t, 3, 3, 20000, NULL) == 3);
    CHECK(mt_task_wait(c, t[1], 0, &r) == -MT_ECANCELED);
    CHECK(r.state == MT_TASK_STATE_CANCELLED);
    CHECK(mt_task_wait(c, t[2], 0, &r) == -MT_ECANCELED);
    CHECK(r.state == MT_TASK_STATE_CANCELLED && r.error[0]);
    printf("cancelled pending task: %s\n", r.error);
    mt_task_result_release(&r);
    for (int i = 0; i < 3; i++)
        mt_task_release(t[i]);
    mt_client_disconnect(c);
    return 0;
}

/* ---- output ------------------------------------------------------------- */

static int case_output(void)
{
    mt_client_t *c = connect_or_die();
    const char *argv[] = {"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x",
                          NULL};
    mt_task_opts_t *o;
    mt_task_result r;
    mt_task_t *t;

    t = submit(c, "echo out; echo err >&2; exit 3", 0.1);
    mt_task_result_init(&r);
    CHECK(mt_task_wait(c, t, 30000, &r) == 0);
    CHECK(r.state == MT_TASK_STATE_FINISHED && r.exit_code == 3);
    CHECK(r.out_len == 4 && strcmp((char *)r.out, "out\n") == 0);
    CHECK(r.err_len == 4 && strcmp((char *)r.err, "err\n") == 0);
    CHECK(r.node_id[0] != '\0');
    mt_task_release(t);
    /* Environment, cwd, and the output limit keeping the last bytes. */
    CHECK(mt_task_opts_create(&o) == 0);
    CHECK(mt_task_opts_set_output_limit(o, 1000) == 0);
    CHECK(mt_task_opts_set_cwd(o, "/tmp") == 0);
    CHECK(mt_task_opts_set_env(o, "GREETING", "hi") == 0);
    CHECK(mt_task_opts_set_name(o, "sdk-output") == 0);
    CHECK(mt_submit_command(c, argv, o, &t) == 0);
    CHECK(mt_task_wait(c, t, 30000, &r) == 0);
    CHECK(r.out_len == 1000 && r.out_dropped == 99000);
    CHECK(r.out[0] == 'x' && r.out[999] == 'x');
    mt_task_release(t);
    argv[2] = "echo $GREETING; pwd";
    CHECK(mt_task_opts_set_output_limit(o, 4096) == 0);
    CHECK(mt_submit_command(c, argv, o, &t) == 0);
    CHECK(mt_task_wait(c, t, 30000, &r) == 0);
    CHECK(strcmp((char *)r.out, "hi\n/tmp\n") == 0);
    mt_task_release(t);
    mt_task_opts_destroy(o);
    mt_task_result_release(&r);
    mt_client_disconnect(c);
    return 0;
}

/* ---- failures ----------------------------------------------------------- */

static int case_missing(void)
{
    mt_client_t *c = connect_or_die();
    const char *argv[] = {"/no/such/program", "x", NULL};
    mt_task_result r;
    mt_task_t *t;

    CHECK(mt_submit_command(c, argv, NULL, &t) == 0);
    mt_task_result_init(&r);
    CHECK(mt_task_wait(c, t, 20000, &r) == -MT_ETASKFAILED);
    CHECK(r.state == MT_TASK_STATE_FAILED && r.error[0]);
    CHECK(strlen(mt_client_last_error(c)) > 0);
    printf("missing program: %s\n", r.error);
    printf("last error: %s\n", mt_client_last_error(c));
    mt_task_result_release(&r);
    mt_task_release(t);
    /* Bad arguments fail at once. */
    argv[0] = NULL;
    CHECK(mt_submit_command(c, argv, NULL, &t) == -MT_EINVAL);
    mt_client_disconnect(c);
    return 0;
}

static int case_inflight(void)
{
    mt_client_t *c = connect_or_die();
    mt_task_t *t[3];
    double t0;

    for (int i = 0; i < 3; i++)
        t[i] = submit(c, "sleep 30", 0.1);
    t0 = now_s();
    mt_client_disconnect(c);
    c = NULL;
    CHECK(now_s() - t0 < 3);
    for (int i = 0; i < 3; i++) {
        CHECK(strlen(mt_task_id(t[i])) > 0);
        mt_task_release(t[i]);
    }
    printf("disconnected in %.3fs with 3 tasks in flight\n", now_s() - t0);
    return 0;
}

static int case_unreachable(void)
{
    mt_client_t *c = NULL;
    mt_connect_opts o;
    double t0 = now_s();
    int rc;

    mt_connect_opts_init(&o);
    o.connect_timeout_ms = 1000;
    rc = mt_client_connect(addr, &o, &c);
    CHECK(rc == -MT_EUNAVAIL && c == NULL);
    CHECK(now_s() - t0 < 4);
    CHECK(strlen(mt_client_last_error(NULL)) > 0);
    printf("unreachable: %s (%.2fs)\n", mt_client_last_error(NULL),
           now_s() - t0);
    return 0;
}

static int case_headdies(void)
{
    const char *argv[] = {"true", NULL};
    const char *sleeper[] = {"sleep", "30", NULL};
    mt_task_t *t = NULL, *running = NULL;
    mt_client_t *c = NULL;
    mt_task_result r;
    mt_connect_opts o;
    char line[16];
    double t0;
    int rc;

    mt_connect_opts_init(&o);
    o.rpc_timeout_ms = 1500;
    CHECK(mt_client_connect(addr, &o, &c) == 0);
    CHECK(mt_submit_command(c, sleeper, NULL, &running) == 0);
    printf("connected\n");
    fflush(stdout);
    if (!fgets(line, sizeof(line), stdin))
        return 1;
    /* The task being followed is reported lost, not waited for forever. */
    t0 = now_s();
    mt_task_result_init(&r);
    rc = mt_task_wait(c, running, 20000, &r);
    CHECK(rc == -MT_EUNAVAIL && r.error[0]);
    CHECK(now_s() - t0 < 4);
    printf("task while the head died: %s (%.2fs)\n", r.error, now_s() - t0);
    mt_task_result_release(&r);
    mt_task_release(running);
    t0 = now_s();
    rc = mt_submit_command(c, argv, NULL, &t);
    CHECK(rc < 0 && t == NULL && mt_error_retryable(rc));
    CHECK(now_s() - t0 < 4);
    printf("submit after the head died: %s: %s (%.2fs)\n", mt_error_name(rc),
           mt_client_last_error(c), now_s() - t0);
    mt_client_disconnect(c);
    return 0;
}

static int case_rewatch(void)
{
    const char *argv[] = {"sh", "-c", "echo start; sleep 2; echo done",
                          NULL};
    mt_client_t *c = connect_or_die();
    mt_task_result r;
    mt_task_t *t;
    char line[16];

    CHECK(mt_submit_command(c, argv, NULL, &t) == 0);
    printf("submitted\n");
    fflush(stdout);
    if (!fgets(line, sizeof(line), stdin)) /* the test broke the link */
        return 1;
    mt_task_result_init(&r);
    CHECK(mt_task_wait(c, t, 30000, &r) == 0);
    CHECK(r.exit_code == 0 && strcmp((char *)r.out, "start\ndone\n") == 0);
    printf("followed across a broken connection: %s", (char *)r.out);
    mt_task_result_release(&r);
    mt_task_release(t);
    mt_client_disconnect(c);
    return 0;
}

/* ---- objects ------------------------------------------------------------ */

/* Put a tensor, read back its description: code, bits, ndim, shape. */
static int tensor_round_trip(mt_client_t *c, const void *data, size_t size,
                             mt_dtype_code code, uint8_t bits, uint32_t ndim,
                             const int64_t *shape)
{
    int64_t got[MT_TENSOR_MAX_NDIM];
    mt_dtype_code gcode;
    uint32_t gndim;
    mt_object_id id;
    mt_buffer_t *b;
    uint8_t gbits;

    CHECK(mt_put_tensor(c, data, size, 0, code, bits, ndim, shape, &id) == 0);
    CHECK(mt_get(c, &id, 0, &b) == 0 && mt_buffer_is_tensor(b));
    CHECK(mt_buffer_tensor(b, &gcode, &gbits, &gndim, got) == 0);
    CHECK(gcode == code && gbits == bits && gndim == ndim);
    for (uint32_t i = 0; i < ndim; i++)
        CHECK(got[i] == shape[i]);
    CHECK(mt_buffer_size(b) == size &&
          memcmp(mt_buffer_data(b), data, size) == 0);
    mt_buffer_release(b);
    return 0;
}

/* complex, bool (DLPack codes 5 and 6) and 0-d scalars, which need no
 * shape; widths a type cannot have are refused. */
static int tensor_dtypes(mt_client_t *c)
{
    static const double z[2] = {1.5, -2.0};
    static const uint8_t flags[6] = {1, 0, 0, 1, 1, 0};
    static const int64_t shape[2] = {2, 3};
    mt_object_id id;

    CHECK(tensor_round_trip(c, z, sizeof(z), MT_DTYPE_COMPLEX, 128, 0,
                            NULL) == 0);
    CHECK(tensor_round_trip(c, z, sizeof(z), MT_DTYPE_COMPLEX, 64, 1,
                            (const int64_t[]){2}) == 0);
    CHECK(tensor_round_trip(c, flags, sizeof(flags), MT_DTYPE_BOOL, 8, 2,
                            shape) == 0);
    CHECK(tensor_round_trip(c, flags, 1, MT_DTYPE_BOOL, 8, 0, NULL) == 0);
    CHECK(mt_put_tensor(c, flags, 6, 0, MT_DTYPE_BOOL, 16, 1,
                        (const int64_t[]){3}, &id) == -MT_EINVAL);
    CHECK(mt_put_tensor(c, flags, 6, 0, (mt_dtype_code)3, 8, 1,
                        (const int64_t[]){6}, &id) == -MT_EINVAL);
    return 0;
}

static int case_objects(void)
{
    mt_client_t *c = connect_or_die();
    size_t sizes[] = {0, 100, 1 << 20, 10 << 20};
    int64_t shape[2] = {3, 5};
    char hex[MT_OBJECT_ID_HEX_SIZE];
    mt_object_id id, id2, missing;
    mt_buffer_t *b;
    double t0;

    CHECK(mt_client_has_store(c));
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        unsigned char *p = malloc(sizes[k] + 1);

        for (size_t i = 0; i < sizes[k]; i++)
            p[i] = (unsigned char)(i * 7 + k);
        CHECK(mt_put(c, p, sizes[k], 0, &id) == 0);
        CHECK(mt_get(c, &id, 1000, &b) == 0);
        CHECK(mt_buffer_size(b) == sizes[k] && !mt_buffer_is_tensor(b));
        CHECK(sizes[k] == 0 || memcmp(mt_buffer_data(b), p, sizes[k]) == 0);
        CHECK(mt_object_id_equal(mt_buffer_id(b), &id));
        mt_buffer_release(b);
        free(p);
    }
    /* Ids: distinct, hex round trip. */
    CHECK(mt_put(c, "a", 1, MT_PUT_EVICTABLE, &id2) == 0);
    CHECK(!mt_object_id_equal(&id, &id2));
    CHECK(mt_object_id_parse(mt_object_id_format(&id2, hex), &id) == 0);
    CHECK(mt_object_id_equal(&id, &id2));
    /* Absent objects: at once, or after the timeout. */
    memset(&missing, 0xab, sizeof(missing));
    CHECK(mt_get(c, &missing, 0, &b) == -MT_ENOENT && b == NULL);
    t0 = now_s();
    CHECK(mt_get(c, &missing, 300, &b) == -MT_ETIMEDOUT);
    CHECK(now_s() - t0 >= 0.25 && now_s() - t0 < 3);
    /* Tensors: shape must match the size. */
    CHECK(mt_put_tensor(c, "0123456789abcde", 15, 0, MT_DTYPE_UINT, 8, 2,
                        shape, &id) == 0);
    CHECK(mt_put_tensor(c, "0123456789abcde", 14, 0, MT_DTYPE_UINT, 8, 2,
                        shape, &id2) == -MT_EINVAL);
    CHECK(mt_get(c, &id, 0, &b) == 0 && mt_buffer_is_tensor(b));
    CHECK(tensor_dtypes(c) == 0);
    /* A buffer outlives its client. */
    mt_client_disconnect(c);
    c = NULL;
    CHECK(memcmp(mt_buffer_data(b), "0123456789abcde", 15) == 0);
    mt_buffer_release(b);
    return 0;
}

static int case_nostore(void)
{
    mt_client_t *c = NULL;
    mt_connect_opts o;
    mt_object_id id;

    mt_connect_opts_init(&o);
    o.flags = MT_CONNECT_NO_STORE;
    CHECK(mt_client_connect(addr, &o, &c) == 0);
    CHECK(!mt_client_has_store(c));
    CHECK(mt_put(c, "x", 1, 0, &id) == -MT_EUNAVAIL);
    CHECK(strstr(mt_client_last_error(c), "no object store") != NULL);
    printf("no store: %s\n", mt_client_last_error(c));
    mt_client_disconnect(c);
    return 0;
}

/* The pattern case_create writes: float32 i * 0.5 at element i. */
static bool pattern_ok(const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (f[i] != (float)i * 0.5f)
            return false;
    return true;
}

#define CREATE_ROWS 1024
#define CREATE_COLS 1024

/* Bad use of mt_create / mt_seal: each fails with a clear error. */
static void create_bad_use(mt_client_t *c)
{
    mt_wbuffer_t *w = (mt_wbuffer_t *)1;
    mt_object_id id;
    int64_t zero[1] = {0};

    CHECK(mt_create(c, 0, 0, &id, &w) == -MT_EINVAL && w == NULL);
    CHECK(strstr(mt_client_last_error(c), "0 bytes") != NULL);
    CHECK(mt_create_tensor(c, 0, MT_DTYPE_FLOAT, 32, 1, zero, &id, &w) ==
          -MT_EINVAL);
    CHECK(mt_create(c, (size_t)1 << 40, 0, &id, &w) == -MT_ETOOBIG);
    CHECK(strstr(mt_client_last_error(c), "larger than") != NULL);
    printf("too big: %s\n", mt_client_last_error(c));
    CHECK(mt_create(c, 64, 0x80, &id, &w) == -MT_EINVAL);
    CHECK(mt_create(NULL, 64, 0, &id, &w) == -MT_EINVAL);
    CHECK(mt_seal(c, NULL) == -MT_EINVAL);
    CHECK(mt_wbuffer_data(NULL) == NULL && mt_wbuffer_size(NULL) == 0);
    mt_wbuffer_release(NULL);
}

/* Create then release without sealing: the object never appears. */
static void create_abort(mt_client_t *c)
{
    mt_wbuffer_t *w;
    mt_buffer_t *b = NULL;
    mt_object_id id;

    CHECK(mt_create(c, 1 << 20, 0, &id, &w) == 0);
    memset(mt_wbuffer_data(w), 1, 1 << 20);
    CHECK(mt_get(c, &id, 0, &b) < 0 && b == NULL);
    mt_wbuffer_release(w);
    CHECK(mt_get(c, &id, 0, &b) == -MT_ENOENT && b == NULL);
}

static int case_create(void)
{
    mt_client_t *c = connect_or_die();
    int64_t shape[2] = {CREATE_ROWS, CREATE_COLS}, got[MT_TENSOR_MAX_NDIM];
    char hex[MT_OBJECT_ID_HEX_SIZE], line[16];
    mt_wbuffer_t *w;
    mt_buffer_t *b = NULL;
    mt_object_id id;
    uint32_t ndim;
    float *f;

    create_bad_use(c);
    create_abort(c);
    CHECK(mt_create_tensor(c, 0, MT_DTYPE_FLOAT, 32, 2, shape, &id, &w) == 0);
    CHECK(mt_wbuffer_size(w) == CREATE_ROWS * CREATE_COLS * 4);
    CHECK(mt_object_id_equal(mt_wbuffer_id(w), &id));
    f = mt_wbuffer_data(w);
    CHECK(f != NULL && ((uintptr_t)f & 63) == 0);
    for (size_t i = 0; i < CREATE_ROWS * CREATE_COLS; i++)
        f[i] = (float)i * 0.5f;
    /* Unsealed: unreadable, even with a wait. */
    CHECK(mt_get(c, &id, 0, &b) < 0 && b == NULL);
    CHECK(mt_get(c, &id, 200, &b) < 0 && b == NULL);
    CHECK(mt_seal(c, w) == 0);
    CHECK(mt_wbuffer_data(w) == NULL); /* no writes after the seal */
    CHECK(mt_seal(c, w) == -MT_ESTATE);
    CHECK(strstr(mt_client_last_error(c), "sealed already") != NULL);
    mt_wbuffer_release(w);
    CHECK(mt_get(c, &id, 1000, &b) == 0 && mt_buffer_is_tensor(b));
    CHECK(mt_buffer_tensor(b, NULL, NULL, &ndim, got) == 0 && ndim == 2 &&
          got[0] == CREATE_ROWS && got[1] == CREATE_COLS);
    CHECK(pattern_ok(mt_buffer_data(b), CREATE_ROWS * CREATE_COLS));
    mt_buffer_release(b);
    printf("sealed %s\n", mt_object_id_format(&id, hex));
    fflush(stdout);
    /* The object is this session's: keep it until told. */
    if (!fgets(line, sizeof(line), stdin))
        line[0] = 0;
    mt_client_disconnect(c);
    return 0;
}

static int case_readback(const char *hex, const char *sock)
{
    mt_client_t *c = NULL;
    mt_connect_opts o;
    mt_buffer_t *b = NULL;
    mt_object_id id;

    mt_connect_opts_init(&o);
    o.store_socket = sock;
    CHECK(mt_client_connect(addr, &o, &c) == 0);
    CHECK(mt_object_id_parse(hex, &id) == 0);
    CHECK(mt_get(c, &id, 30000, &b) == 0);
    CHECK(mt_buffer_size(b) == CREATE_ROWS * CREATE_COLS * 4);
    CHECK(pattern_ok(mt_buffer_data(b), CREATE_ROWS * CREATE_COLS));
    printf("read back %zu bytes\n", mt_buffer_size(b));
    mt_buffer_release(b);
    mt_client_disconnect(c);
    return 0;
}

static int case_resources(const char *want)
{
    mt_client_t *c = connect_or_die();
    double total = -1, avail = -1, gpus = -1, after = -1;
    mt_task_result r;
    mt_task_t *t;

    CHECK(mt_cluster_resources(c, "CPU", &total, &avail) == 0);
    CHECK(total == atof(want) && avail <= total && avail >= 0);
    CHECK(mt_cluster_resources(c, "GPU", &gpus, NULL) == 0 && gpus == 0);
    CHECK(mt_cluster_nodes(c) >= 1);
    printf("CPU %.1f of %.1f free, %d nodes\n", avail, total,
           mt_cluster_nodes(c));
    /* A task asking for 0 CPU takes none (not the default 1). */
    t = submit(c, "sleep 30", 0);
    mt_task_result_init(&r);
    while (mt_task_wait(c, t, 50, &r) == -MT_ETIMEDOUT &&
           r.state != MT_TASK_STATE_RUNNING)
        ;
    CHECK(r.state == MT_TASK_STATE_RUNNING);
    CHECK(mt_cluster_resources(c, "CPU", NULL, &after) == 0 &&
          after == avail);
    CHECK(mt_task_cancel(c, t, true) == 0);
    CHECK(mt_task_wait(c, t, 20000, &r) == -MT_ECANCELED);
    mt_task_result_release(&r);
    mt_task_release(t);
    mt_client_disconnect(c);
    return 0;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    mt_client_t *c = NULL; /* for CHECK */

    addr = argc > 2 ? argv[2] : NULL;
    if (!strcmp(cmd, "concurrent"))
        return case_concurrent();
    if (!strcmp(cmd, "wait"))
        return case_wait();
    if (!strcmp(cmd, "many"))
        return case_many();
    if (!strcmp(cmd, "output"))
        return case_output();
    if (!strcmp(cmd, "missing"))
        return case_missing();
    if (!strcmp(cmd, "inflight"))
        return case_inflight();
    if (!strcmp(cmd, "unreachable"))
        return case_unreachable();
    if (!strcmp(cmd, "headdies"))
        return case_headdies();
    if (!strcmp(cmd, "objects"))
        return case_objects();
    if (!strcmp(cmd, "rewatch"))
        return case_rewatch();
    if (!strcmp(cmd, "nostore"))
        return case_nostore();
    if (!strcmp(cmd, "create"))
        return case_create();
    if (!strcmp(cmd, "readback") && argc > 4)
        return case_readback(argv[3], argv[4]);
    if (!strcmp(cmd, "resources") && argc > 3)
        return case_resources(argv[3]);
    CHECK(!"usage: sdk_smoke CASE HEAD_HOST:PORT");
    return 2;
}
