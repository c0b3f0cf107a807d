/* SPDX-License-Identifier: Apache-2.0 */
/*
 * refs_driver.c -- the C driver of test_refs.py: object references end
 * to end through the public SDK, on a cluster whose two nodes carry the
 * labels zone=a and zone=b. Functions come from libmt_test_refslib.so
 * (refs_fnlib.c) in LIBDIR.
 *
 *   refs_driver ADDR LIBDIR chain    vec -> add -> add -> total, alternating
 *                                    zones; a put passed to a task
 *   refs_driver ADDR LIBDIR big      256 MiB made on zone a, checksummed on
 *                                    zone b and read back by the driver
 *   refs_driver ADDR LIBDIR big1g    the same with 1 GiB
 *   refs_driver ADDR LIBDIR waiting  a task stays WAITING_FOR_ARGS while
 *                                    its producer sleeps, then runs
 *   refs_driver ADDR LIBDIR failed   a failed producer fails its
 *                                    dependents (transitively) clearly
 *   refs_driver ADDR LIBDIR unknown  unknown ids: clear errors
 *   refs_driver ADDR LIBDIR fanout   one 64 MiB result read by 4 tasks on
 *                                    the other node at once (one pull)
 *   refs_driver ADDR LIBDIR lost     a result made on zone b; after the test
 *                                    stops node b (a line on stdin) it is
 *                                    lost, for gets and for tasks
 *   refs_driver ADDR LIBDIR rebuild  lineage: vec -> add made on node
 *                                    $REFS_NODE_B (soft affinity, 2
 *                                    retries), vec's handle released; after
 *                                    the test kills that node (a line on
 *                                    stdin) both are made again elsewhere
 *                                    and add's result reads right
 *   refs_driver ADDR LIBDIR hold     prints STEP lines and waits for a line
 *                                    on stdin between them, so the test can
 *                                    look at `manta list objects`
 *   refs_driver ADDR LIBDIR leave-exit|leave-crash|leave-quick
 *                                    puts P, puts Q and passes it to an
 *                                    8 s task T (its result R held), prints
 *                                    "LEAVE P Q R", then goes without
 *                                    releasing anything: exit disconnects;
 *                                    crash waits for the test's SIGKILL;
 *                                    quick puts X, prints "QUICK X" and
 *                                    _exit()s at once
 *
 * Prints what it checked; exit 0 when every check held, 1 otherwise.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <manta/manta.h>

#include "refs_stream.h"

#define LIB "libmt_test_refslib.so:"
#define BIG (256ull << 20)

static mt_client_t *cl;
static const char *libdir;
static mt_task_t *leftover;   /* released only after the disconnect */

static int die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "refs_driver: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " [last error: %s]\n", mt_client_last_error(cl));
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Options: LIBDIR as code path, half a CPU, on zone (NULL: anywhere). */
static mt_task_opts_t *opts(const char *zone, int retries)
{
    mt_task_opts_t *o;

    if (mt_task_opts_create(&o) < 0 ||
        mt_task_opts_add_code_path(o, libdir) < 0 ||
        mt_task_opts_set_resource(o, "CPU", 0.5) < 0 ||
        mt_task_opts_set_max_retries(o, retries) < 0 ||
        (zone && mt_task_opts_add_label_match(o, "zone", MT_LABEL_EQ, &zone,
                                              1) < 0))
        die("options");
    return o;
}

static mt_task_t *submit(const char *fn, const char *zone, const mt_arg *a,
                         size_t n)
{
    mt_task_opts_t *o = opts(zone, 0);
    char name[128];
    mt_task_t *t;
    int rc;

    snprintf(name, sizeof(name), LIB "%s", fn);
    rc = mt_submit_function_args(cl, name, a, n, o, &t);
    mt_task_opts_destroy(o);
    if (rc < 0)
        die("submit %s: %s", fn, mt_error_name(rc));
    return t;
}

static mt_object_id ref_of(mt_task_t *t)
{
    mt_object_id id;

    if (mt_task_result_ref(t, &id) < 0)
        die("no result ref for %s", mt_task_id(t));
    return id;
}

/* Wait for t to finish; fill r. Dies unless FINISHED. */
static void finished(mt_task_t *t, mt_task_result *r, const char *what)
{
    int rc = mt_task_wait(cl, t, 120000, r);

    if (rc < 0)
        die("%s: %s: %s", what, mt_error_name(rc), r->error ? r->error : "");
}

/* ---- chain ------------------------------------------------------------------ */

static void cmd_chain(void)
{
    uint32_t n = 32768;                    /* 256 KiB of doubles: stored */
    double one = 1.0, total, want = 3.0 * n;
    static const char *zones[] = {"a", "b", "a", "b"};
    mt_task_t *t[4];
    mt_task_result r[4];
    mt_object_id id;
    mt_arg a[2];
    uint8_t *blob = malloc(1 << 20);
    uint64_t sum[2];

    a[0] = mt_arg_value(&n, 4);
    a[1] = mt_arg_value(&one, 8);
    t[0] = submit("vec", zones[0], a, 2);
    for (int i = 1; i < 3; i++) {
        id = ref_of(t[i - 1]);
        a[0] = mt_arg_ref(&id);
        a[1] = mt_arg_value(&one, 8);
        t[i] = submit("add", zones[i], a, 2);
    }
    id = ref_of(t[2]);
    a[0] = mt_arg_ref(&id);
    t[3] = submit("total", zones[3], a, 1);
    for (int i = 0; i < 4; i++) {
        mt_task_result_init(&r[i]);
        finished(t[i], &r[i], "chain step");
    }
    if (r[3].value_len != 8)
        die("total: %zu bytes", r[3].value_len);
    memcpy(&total, r[3].value, 8);
    if (total != want)
        die("chain total %.1f, want %.1f", total, want);
    if (!strcmp(r[0].node_id, r[1].node_id) ||
        strcmp(r[0].node_id, r[2].node_id) ||
        strcmp(r[1].node_id, r[3].node_id))
        die("chain did not alternate nodes: %s %s %s %s", r[0].node_id,
            r[1].node_id, r[2].node_id, r[3].node_id);
    if (r[0].value_len || r[1].value_len)
        die("a 256 KiB result came inline");
    printf("chain ok: total %.0f, nodes %.8s %.8s %.8s %.8s\n", total,
           r[0].node_id, r[1].node_id, r[2].node_id, r[3].node_id);
    for (int i = 0; i < 4; i++) {
        mt_task_result_release(&r[i]);
        mt_task_release(t[i]);
    }
    /* A put passed by reference to a task on each zone. */
    mt_refs_stream(blob, 1 << 20, 3);
    if (mt_put(cl, blob, 1 << 20, 0, &id) < 0)
        die("put");
    for (int i = 0; i < 2; i++) {
        mt_task_t *c;
        mt_task_result cr;

        a[0] = mt_arg_ref(&id);
        c = submit("checksum", zones[i], a, 1);
        mt_task_result_init(&cr);
        finished(c, &cr, "checksum of a put");
        memcpy(sum, cr.value, sizeof(sum));
        if (cr.value_len != 16 || sum[1] != (1 << 20) ||
            sum[0] != mt_refs_checksum(blob, 1 << 20))
            die("checksum of the put differs on zone %s", zones[i]);
        mt_task_result_release(&cr);
        mt_task_release(c);
    }
    if (mt_object_release(cl, &id, 1) < 0)
        die("release of the put");
    if (mt_object_release(cl, &id, 1) != -MT_ENOENT)
        die("a second release did not say ENOENT");
    printf("put by reference ok on both zones\n");
    free(blob);
}

/* ---- big ------------------------------------------------------------------ */

static void cmd_big(uint64_t big)
{
    uint64_t n = big, seed = 7, sum[2], want;
    mt_task_t *mk, *ck;
    mt_task_result rm, rc;
    mt_buffer_t *b;
    mt_object_id id;
    uint8_t *p = malloc(big);
    double t0 = now_s(), t1;
    mt_arg a[2];

    if (!p)
        die("out of memory");
    mt_refs_stream(p, n, seed);
    want = mt_refs_checksum(p, n);
    free(p);
    a[0] = mt_arg_value(&n, 8);
    a[1] = mt_arg_value(&seed, 8);
    t0 = now_s();
    mk = submit("fill", "a", a, 2);
    id = ref_of(mk);
    a[0] = mt_arg_ref(&id);
    ck = submit("checksum", "b", a, 1);
    mt_task_result_init(&rm);
    mt_task_result_init(&rc);
    finished(mk, &rm, "fill");
    finished(ck, &rc, "checksum on the other node");
    t1 = now_s();
    if (!strcmp(rm.node_id, rc.node_id))
        die("producer and consumer ran on the same node");
    memcpy(sum, rc.value, sizeof(sum));
    if (rc.value_len != 16 || sum[1] != big || sum[0] != want)
        die("%llu MiB arrived changed: size %llu checksum %llx want %llx",
            (unsigned long long)(big >> 20), (unsigned long long)sum[1],
            (unsigned long long)sum[0], (unsigned long long)want);
    printf("big ok: %llu MiB made on %.8s, checksummed on %.8s, %.2fs\n",
           (unsigned long long)(big >> 20), rm.node_id, rc.node_id, t1 - t0);
    if (mt_get(cl, &id, 60000, &b) < 0)
        die("get of the big result");
    if (mt_buffer_size(b) != big ||
        mt_refs_checksum(mt_buffer_data(b), big) != want)
        die("the driver's view of the big result differs");
    mt_buffer_release(b);
    printf("big get ok: %.2fs in all\n", now_s() - t0);
    mt_task_result_release(&rm);
    mt_task_result_release(&rc);
    mt_task_release(mk);
    mt_task_release(ck);
}

/* ---- waiting --------------------------------------------------------------- */

static void cmd_waiting(void)
{
    uint32_t ms = 1500;
    uint64_t v = 42;
    mt_task_t *s, *d;
    mt_task_result r;
    mt_object_id id;
    mt_arg a[2];
    int seen_waiting = 0, rc;
    double t0;

    a[0] = mt_arg_value(&ms, 4);
    a[1] = mt_arg_value(&v, 8);
    s = submit("slow", "a", a, 2);
    id = ref_of(s);
    a[0] = mt_arg_ref(&id);
    d = submit("checksum", "b", a, 1);
    mt_task_result_init(&r);
    /*
     * An absence (the dependent does not end while its producer sleeps
     * 1.5 s) shows only over a bounded window: 1 s, looked at in 50 ms
     * waits on the dependent itself, so an early end is seen at once.
     */
    t0 = now_s();
    while (now_s() - t0 < 1.0) {
        rc = mt_task_wait(cl, d, 50, &r);
        if (rc == 0 || (rc != -MT_ETIMEDOUT))
            die("the dependent ended while its producer slept");
        if (r.state == MT_TASK_STATE_WAITING_FOR_ARGS)
            seen_waiting++;
        else if (r.state != MT_TASK_STATE_UNKNOWN)
            die("dependent in state %s while its producer slept",
                mt_task_state_name(r.state));
    }
    if (!seen_waiting)
        die("never saw WAITING_FOR_ARGS");
    finished(d, &r, "the dependent after its producer");
    printf("waiting ok: WAITING_FOR_ARGS seen %d times, then FINISHED\n",
           seen_waiting);
    mt_task_result_release(&r);
    mt_task_release(s);
    mt_task_release(d);
}

/* ---- failed ---------------------------------------------------------------- */

static void cmd_failed(void)
{
    mt_task_t *b, *d1, *d2;
    mt_task_result r;
    mt_buffer_t *buf;
    mt_object_id id;
    mt_arg a[1];
    int rc;

    b = submit("boom", "a", NULL, 0);
    id = ref_of(b);
    a[0] = mt_arg_ref(&id);
    d1 = submit("checksum", "b", a, 1);
    id = ref_of(d1);
    a[0] = mt_arg_ref(&id);
    d2 = submit("checksum", "a", a, 1);
    mt_task_result_init(&r);
    rc = mt_task_wait(cl, d2, 60000, &r);
    if (rc != -MT_ETASKFAILED || !strstr(r.error, "dependency failed") ||
        !strstr(r.error, "boom"))
        die("transitive dependent: %s %s", mt_error_name(rc), r.error);
    printf("failed ok: %s\n", r.error);
    rc = mt_task_wait(cl, d1, 60000, &r);
    if (rc != -MT_ETASKFAILED || !strstr(r.error, "dependency failed"))
        die("dependent: %s %s", mt_error_name(rc), r.error);
    mt_task_result_release(&r);
    id = ref_of(b);
    rc = mt_get(cl, &id, 1000, &buf);
    if (rc != -MT_ETASKFAILED || !strstr(mt_client_last_error(cl), "boom"))
        die("get of a failed result: %s", mt_error_name(rc));
    printf("failed get ok: %s\n", mt_client_last_error(cl));
    /* A dependent submitted after the failure fails at once. */
    a[0] = mt_arg_ref(&id);
    mt_task_release(d1);
    d1 = submit("checksum", "b", a, 1);
    rc = mt_task_wait(cl, d1, 10000, &r);
    if (rc != -MT_ETASKFAILED || !strstr(r.error, "boom"))
        die("late dependent: %s %s", mt_error_name(rc), r.error);
    mt_task_result_release(&r);
    mt_task_release(b);
    mt_task_release(d1);
    mt_task_release(d2);
}

/* ---- unknown ---------------------------------------------------------------- */

static void cmd_unknown(void)
{
    mt_task_opts_t *o = opts(NULL, 0);
    mt_buffer_t *b;
    mt_object_id id;
    mt_task_t *t;
    mt_arg a[1];
    int rc;

    memset(&id, 0x5a, sizeof(id));
    a[0] = mt_arg_ref(&id);
    rc = mt_submit_function_args(cl, LIB "checksum", a, 1, o, &t);
    mt_task_opts_destroy(o);
    if (rc == 0) { /* a batched submit: the refusal ends the task */
        mt_task_result r;

        mt_task_result_init(&r);
        rc = mt_task_wait(cl, t, 10000, &r);
        if (rc != -MT_ETASKFAILED || !strstr(r.error, "unknown"))
            die("task with an unknown ref: %s %s", mt_error_name(rc),
                r.error ? r.error : "");
        printf("unknown submit ok: %s\n", r.error);
        mt_task_result_release(&r);
        mt_task_release(t);
    } else if (rc != -MT_ENOENT ||
               !strstr(mt_client_last_error(cl), "unknown")) {
        die("submit with an unknown ref: %s", mt_error_name(rc));
    } else {
        printf("unknown submit ok: %s\n", mt_client_last_error(cl));
    }
    rc = mt_get(cl, &id, 0, &b);
    if (rc != -MT_ENOENT || !strstr(mt_client_last_error(cl), "unknown"))
        die("get of an unknown id: %s", mt_error_name(rc));
    printf("unknown get ok: %s\n", mt_client_last_error(cl));
}

/* ---- hold ------------------------------------------------------------------- */

static void step(const char *line)
{
    char buf[64];

    printf("%s\n", line);
    fflush(stdout);
    if (!fgets(buf, sizeof(buf), stdin))
        die("stdin closed");
}

static void cmd_hold(void)
{
    char hp[MT_OBJECT_ID_HEX_SIZE], hs[MT_OBJECT_ID_HEX_SIZE], line[200];
    uint8_t blob[200 << 10];
    uint32_t ms = 2500;
    mt_object_id p, s;
    mt_task_t *ts, *td;
    mt_task_result r;
    mt_arg a[2];

    memset(blob, 7, sizeof(blob));
    if (mt_put(cl, blob, sizeof(blob), 0, &p) < 0)
        die("put");
    a[0] = mt_arg_value(&ms, 4);
    a[1] = mt_arg_value("x", 1);
    ts = submit("slow", "a", a, 2);
    s = ref_of(ts);
    a[0] = mt_arg_ref(&p);
    a[1] = mt_arg_ref(&s);
    td = submit("pair", "b", a, 2);
    snprintf(line, sizeof(line), "STEP1 %s %s", mt_object_id_format(&p, hp),
             mt_object_id_format(&s, hs));
    step(line);       /* p: refs 2 (us, td); s: PENDING, refs 2 */
    if (mt_object_release(cl, &p, 1) < 0)
        die("release");
    step("STEP2");    /* p: refs 1 (td) */
    mt_task_result_init(&r);
    finished(td, &r, "pair");
    mt_task_result_release(&r);
    mt_task_release(td);
    mt_task_release(ts);
    printf("hold ok\n");
}

/* ---- leave --------------------------------------------------------------- */

static void cmd_leave(const char *how)
{
    char hp[MT_OBJECT_ID_HEX_SIZE], hq[MT_OBJECT_ID_HEX_SIZE],
        hr[MT_OBJECT_ID_HEX_SIZE];
    static uint8_t blob[200 << 10];
    mt_object_id p, q, r;
    uint32_t ms = 8000;
    mt_task_t *t;
    mt_arg a[2];

    memset(blob, 3, sizeof(blob));
    if (mt_put(cl, blob, sizeof(blob), 0, &p) < 0 ||
        mt_put(cl, blob, sizeof(blob), 0, &q) < 0)
        die("put");
    a[0] = mt_arg_value(&ms, 4);
    a[1] = mt_arg_ref(&q);
    t = submit("slow", NULL, a, 2);
    r = ref_of(t);
    leftover = t;
    printf("LEAVE %s %s %s\n", mt_object_id_format(&p, hp),
           mt_object_id_format(&q, hq), mt_object_id_format(&r, hr));
    fflush(stdout);
    if (!strcmp(how, "leave-crash")) {
        step("CRASH"); /* killed while it waits */
    } else if (!strcmp(how, "leave-quick")) {
        if (mt_put(cl, blob, sizeof(blob), 0, &p) < 0)
            die("put");
        printf("QUICK %s\n", mt_object_id_format(&p, hp));
        fflush(stdout);
        _exit(0);
    }
    /* exit: disconnect (main) with nothing released; the task handle is
     * freed after that, which releases nothing any more. */
}

/* ---- fanout ---------------------------------------------------------------- */

static void cmd_fanout(void)
{
    uint64_t n = 64ull << 20, seed = 11, sum[2], want;
    uint8_t *p = malloc(n);
    mt_task_t *mk, *ck[4];
    mt_task_result r;
    mt_object_id id;
    mt_arg a[2];

    if (!p)
        die("out of memory");
    mt_refs_stream(p, n, seed);
    want = mt_refs_checksum(p, n);
    free(p);
    a[0] = mt_arg_value(&n, 8);
    a[1] = mt_arg_value(&seed, 8);
    mk = submit("fill", "a", a, 2);
    id = ref_of(mk);
    a[0] = mt_arg_ref(&id);
    for (int i = 0; i < 4; i++)
        ck[i] = submit("checksum", "b", a, 1);
    mt_task_result_init(&r);
    for (int i = 0; i < 4; i++) {
        finished(ck[i], &r, "a fan-out reader");
        memcpy(sum, r.value, sizeof(sum));
        if (r.value_len != 16 || sum[0] != want || sum[1] != n)
            die("fan-out reader %d saw other bytes", i);
    }
    mt_task_result_release(&r);
    printf("fanout ok: 4 readers on the other node\n");
    for (int i = 0; i < 4; i++)
        mt_task_release(ck[i]);
    mt_task_release(mk);
}

/* ---- lost ------------------------------------------------------------------ */

static void cmd_lost(void)
{
    char hex[MT_OBJECT_ID_HEX_SIZE], line[128];
    uint32_t n = 32768;
    double one = 1.0;
    mt_task_t *v, *d;
    mt_task_result r;
    mt_buffer_t *b;
    mt_object_id id;
    mt_arg a[2];
    int rc;

    a[0] = mt_arg_value(&n, 4);
    a[1] = mt_arg_value(&one, 8);
    v = submit("vec", "b", a, 2);
    mt_task_result_init(&r);
    finished(v, &r, "vec on zone b");
    mt_task_result_release(&r);
    id = ref_of(v);
    snprintf(line, sizeof(line), "LOST1 %s", mt_object_id_format(&id, hex));
    step(line);       /* the test stops node b */
    rc = mt_get(cl, &id, 5000, &b);
    if (rc != -MT_EWORKERDIED || !strstr(mt_client_last_error(cl), "lost"))
        die("get of a lost object: %s", mt_error_name(rc));
    printf("lost get ok: %s\n", mt_client_last_error(cl));
    a[0] = mt_arg_ref(&id);
    d = submit("checksum", "a", a, 1);
    rc = mt_task_wait(cl, d, 10000, &r);
    if (rc != -MT_ETASKFAILED || !strstr(r.error, "lost"))
        die("task on a lost object: %s %s", mt_error_name(rc), r.error);
    printf("lost task ok: %s\n", r.error);
    mt_task_result_release(&r);
    mt_task_release(d);
    mt_task_release(v);
}

/* ---- rebuild ---------------------------------------------------------------- */

static mt_task_t *submit_soft(const char *fn, const char *node,
                              const mt_arg *a, size_t n)
{
    mt_task_opts_t *o = opts(NULL, 2);
    char name[128];
    mt_task_t *t;

    snprintf(name, sizeof(name), LIB "%s", fn);
    if (mt_task_opts_set_node_affinity(o, node, true) < 0 ||
        mt_submit_function_args(cl, name, a, n, o, &t) < 0)
        die("submit %s", fn);
    mt_task_opts_destroy(o);
    return t;
}

static void cmd_rebuild(void)
{
    const char *node = getenv("REFS_NODE_B");
    char hv[MT_OBJECT_ID_HEX_SIZE], hw[MT_OBJECT_ID_HEX_SIZE], line[200];
    uint32_t n = 32768; /* 256 KiB: kept in a store, not inline */
    double one = 1.0, sum;
    mt_object_id vid, wid;
    mt_task_t *v, *w, *s;
    mt_task_result r;
    mt_buffer_t *b;
    mt_arg a[2];
    int rc;

    if (!node)
        die("REFS_NODE_B is not set");
    a[0] = mt_arg_value(&n, 4);
    a[1] = mt_arg_value(&one, 8);
    v = submit_soft("vec", node, a, 2);
    vid = ref_of(v);
    a[0] = mt_arg_ref(&vid);
    w = submit_soft("add", node, a, 2);
    wid = ref_of(w);
    mt_task_result_init(&r);
    finished(w, &r, "add on node b");
    mt_task_result_release(&r);
    mt_task_release(v); /* only w's lineage keeps vec's result now */
    snprintf(line, sizeof(line), "REBUILD %s %s",
             mt_object_id_format(&vid, hv), mt_object_id_format(&wid, hw));
    step(line);        /* the test kills node b */
    rc = mt_get(cl, &wid, 60000, &b);
    if (rc < 0)
        die("get of the rebuilt object: %s", mt_error_name(rc));
    if (mt_buffer_size(b) != n * 8)
        die("rebuilt object has %zu bytes", (size_t)mt_buffer_size(b));
    for (uint32_t i = 0; i < n; i++) {
        double x;

        memcpy(&x, (const uint8_t *)mt_buffer_data(b) + i * 8, 8);
        if (x != 2.0)
            die("rebuilt element %u is %g", i, x);
    }
    mt_buffer_release(b);
    printf("rebuild get ok: %u elements of 2\n", n);
    a[0] = mt_arg_ref(&wid);
    s = submit("total", NULL, a, 1);
    finished(s, &r, "total of the rebuilt object");
    memcpy(&sum, r.value, 8);
    if (r.value_len != 8 || sum != 2.0 * n)
        die("total of the rebuilt object: %g", sum);
    mt_task_result_release(&r);
    printf("rebuild task ok: total %g\n", sum);
    mt_task_release(s);
    mt_task_release(w);
}

int main(int argc, char **argv)
{
    int rc;

    if (argc != 4) {
        fprintf(stderr, "usage: refs_driver ADDR LIBDIR chain|big|big1g|waiting|"
                        "failed|unknown|hold|lost|fanout|leave-*\n");
        return 2;
    }
    libdir = argv[2];
    rc = mt_client_connect(argv[1], NULL, &cl);
    if (rc < 0)
        die("connect: %s", mt_error_name(rc));
    if (!strcmp(argv[3], "chain"))
        cmd_chain();
    else if (!strcmp(argv[3], "big"))
        cmd_big(BIG);
    else if (!strcmp(argv[3], "big1g"))
        cmd_big(1ull << 30);
    else if (!strcmp(argv[3], "waiting"))
        cmd_waiting();
    else if (!strcmp(argv[3], "failed"))
        cmd_failed();
    else if (!strcmp(argv[3], "unknown"))
        cmd_unknown();
    else if (!strcmp(argv[3], "hold"))
        cmd_hold();
    else if (!strcmp(argv[3], "lost"))
        cmd_lost();
    else if (!strcmp(argv[3], "rebuild"))
        cmd_rebuild();
    else if (!strcmp(argv[3], "fanout"))
        cmd_fanout();
    else if (!strncmp(argv[3], "leave-", 6))
        cmd_leave(argv[3]);
    else
        die("unknown command %s", argv[3]);
    mt_client_disconnect(cl);
    mt_task_release(leftover);
    return 0;
}
