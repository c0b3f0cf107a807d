/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chaos_driver.c -- one load-generating driver of the chaos suite
 * (tests/chaos/README.md). Two of them run at once against a cluster
 * that the harness keeps killing.
 *
 *   chaos_driver ADDR LIBDIR REC OUT NAME STOPFILE DRAIN_S
 *
 * Three threads share one client until STOPFILE exists:
 *   tasks   function tasks (work in libmt_chaos_fn.so) and command tasks
 *           (sh), alternating, CHAOS_WINDOW (default 4) in flight;
 *   actor   an actor of its own (actor_new, max_restarts -1), called with
 *           step(1), step(2), ... one at a time;
 *   pgs     placement-group churn: create a group of one 1-CPU bundle,
 *           run one work task in it, remove the group.
 * Then each thread waits at most DRAIN_S seconds for what it still has in
 * flight, the client disconnects (its actor dies with it) and the driver
 * exits 0.
 *
 * Every task body records its executions in REC (chaos_fnlib.c). The
 * driver writes what it saw to OUT, one JSON object per line, flushed at
 * once so a driver that dies still leaves its account:
 *   {"ev":"sub","key":K,"kind":"fn|cmd|actor|pg","id":ID,"retries":R}
 *   {"ev":"subfail","key":K,"kind":...,"rc":NAME,"err":TEXT}
 *   {"ev":"end","key":K,"state":S,"rc":NAME,"ok":B,"value":V,
 *    "expect":V,"attempt":A,"node":N,"err":TEXT}
 *   {"ev":"pg","key":K,"id":ID,"created":B,"remove_rc":NAME,"err":TEXT}
 *   {"ev":"actor","key":K,"id":ID,"rc":NAME,"err":TEXT}
 * S is FINISHED, FAILED, CANCELLED, ACTOR_DIED, LOST (the SDK lost track
 * of it: the head went away, or came back without it), TIMEOUT (still
 * not ended after the drain) or ERROR (any other failure of the wait). "ok" is whether a FINISHED task gave the right result (exit 0
 * and 3*X+1).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <manta/manta.h>

#define RETRIES 3
#define WINDOW_MAX 32
#define BODY_MS 300
#define CALL_WAIT_MS 30000
#define CALL_GAP_MS 20          /* between actor calls: keeps them a part
                                   of the load, not most of it */

/* What every thread shares. Read-only after main() fills it, except out
 * (guarded by out_lock). */
struct drv {
    mt_client_t *c;
    const char *libdir;
    const char *rec;
    const char *name;
    const char *stopfile;
    int drain_s;
    int window;
    char fn_work[4096];
    char fn_actor[4096];
    FILE *out;
    pthread_mutex_t out_lock;
};

/* One task in flight. */
struct flight {
    mt_task_t *t;
    char key[96];
    char kind[8];
    int64_t expect;
};

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static bool stopping(const struct drv *d)
{
    return access(d->stopfile, F_OK) == 0;
}

/* s as a JSON string body (quotes and control bytes escaped) into buf. */
static const char *esc(const char *s, char *buf, size_t len)
{
    size_t j = 0;

    for (; s && *s && j + 7 < len; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == '"' || ch == '\\') {
            buf[j++] = '\\';
            buf[j++] = (char)ch;
        } else if (ch < 0x20) {
            j += (size_t)snprintf(buf + j, len - j, "\\u%04x", ch);
        } else {
            buf[j++] = (char)ch;
        }
    }
    buf[j] = '\0';
    return buf;
}

static void emit(struct drv *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One line to OUT, flushed at once. */
static void emit(struct drv *d, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&d->out_lock);
    va_start(ap, fmt);
    vfprintf(d->out, fmt, ap);
    va_end(ap);
    fputc('\n', d->out);
    fflush(d->out);
    pthread_mutex_unlock(&d->out_lock);
}

static void emit_sub(struct drv *d, const struct flight *f, int rc)
{
    char e[1024];

    if (rc < 0)
        emit(d, "{\"ev\":\"subfail\",\"key\":\"%s\",\"kind\":\"%s\","
             "\"rc\":\"%s\",\"err\":\"%s\"}", f->key, f->kind,
             mt_error_name(rc), esc(mt_client_last_error(d->c), e, sizeof(e)));
    else
        emit(d, "{\"ev\":\"sub\",\"key\":\"%s\",\"kind\":\"%s\","
             "\"id\":\"%s\",\"retries\":%d}", f->key, f->kind,
             mt_task_id(f->t), strcmp(f->kind, "actor") ? RETRIES : 0);
}

static const char *state_of(int rc)
{
    switch (rc) {
    case 0: return "FINISHED";
    case -MT_ETASKFAILED: return "FAILED";
    case -MT_EACTORDIED: return "ACTOR_DIED";
    case -MT_ECANCELED: return "CANCELLED";
    case -MT_EUNAVAIL: return "LOST";   /* the head went away */
    case -MT_ENOENT: return "LOST";     /* the head forgot it */
    case -MT_ETIMEDOUT: return "TIMEOUT";
    default: return "ERROR";
    }
}

/* What a FINISHED task returned, as an integer; RET false if unreadable. */
static bool value_of(const struct flight *f, const mt_task_result *r,
                     int64_t *v)
{
    char buf[32];

    if (strcmp(f->kind, "cmd") == 0) {
        if (r->exit_code != 0 || r->out_len == 0 || r->out_len >= 32)
            return false;
        memcpy(buf, r->out, r->out_len);
        buf[r->out_len] = '\0';
        *v = strtoll(buf, NULL, 10);
        return true;
    }
    if (r->value_len != sizeof(*v))
        return false;
    memcpy(v, r->value, sizeof(*v));
    return true;
}

/* Record how f ended (rc from mt_task_wait) and release it. */
static void finish(struct drv *d, struct flight *f, int rc,
                   const mt_task_result *r)
{
    char e[1024];
    int64_t v = 0;
    bool have = rc == 0 && value_of(f, r, &v);

    emit(d, "{\"ev\":\"end\",\"key\":\"%s\",\"state\":\"%s\",\"rc\":\"%s\","
         "\"ok\":%s,\"value\":%lld,\"expect\":%lld,\"exit\":%d,"
         "\"attempt\":%u,\"node\":\"%s\",\"err\":\"%s\"}", f->key,
         state_of(rc), rc ? mt_error_name(rc) : "OK",
         have && v == f->expect ? "true" : "false", (long long)v,
         (long long)f->expect, r->exit_code, r->attempt,
         r->node_id ? r->node_id : "", esc(r->error, e, sizeof(e)));
    mt_task_release(f->t);
    f->t = NULL;
}

/* Wait for f at most ms; RET true when it ended (and was recorded). */
static bool reap(struct drv *d, struct flight *f, int ms)
{
    mt_task_result r;
    int rc;

    mt_task_result_init(&r);
    rc = mt_task_wait(d->c, f->t, ms, &r);
    if (rc == -MT_ETIMEDOUT && ms >= 0) {
        mt_task_result_release(&r);
        return false;
    }
    finish(d, f, rc, &r);
    mt_task_result_release(&r);
    return true;
}

/* Record f as never ended (the drain ran out) and release it. */
static void give_up(struct drv *d, struct flight *f)
{
    mt_task_result r;

    mt_task_result_init(&r);
    r.exit_code = -1;
    finish(d, f, -MT_ETIMEDOUT, &r);
}

static mt_task_opts_t *task_opts(const struct drv *d)
{
    mt_task_opts_t *o = NULL;

    if (mt_task_opts_create(&o) < 0)
        return NULL;
    mt_task_opts_add_code_path(o, d->libdir);
    mt_task_opts_set_max_retries(o, RETRIES);
    mt_task_opts_set_output_limit(o, 4096);
    return o;
}

/* Submit work(REC, key, ms, x) with o. RET as mt_submit_function. */
static int submit_work(struct drv *d, struct flight *f, long x,
                       const mt_task_opts_t *o)
{
    char ms[16], xs[32];
    const void *args[4] = {d->rec, f->key, ms, xs};
    size_t sizes[4];

    snprintf(ms, sizeof(ms), "%d", BODY_MS);
    snprintf(xs, sizeof(xs), "%ld", x);
    for (int i = 0; i < 4; i++)
        sizes[i] = strlen(args[i]);
    f->expect = 3 * (int64_t)x + 1;
    return mt_submit_function(d->c, d->fn_work, args, sizes, 4, o, &f->t);
}

/* The command task's body: the records work() writes, from sh. */
static const char CMD_SCRIPT[] =
    "r=$1; k=$2; "
    "echo \"S $k ${MANTA_TASK_ATTEMPT:--} $$ ${MANTA_NODE_ID:-?} 1 "
    "$(date +%s%N)\" >> \"$r\"; "
    "sleep $3; "
    "echo \"E $k $$ $(date +%s%N)\" >> \"$r\"; "
    "echo $((3 * $4 + 1))";

static int submit_cmd(struct drv *d, struct flight *f, long x,
                      const mt_task_opts_t *o)
{
    char secs[16], xs[32];
    const char *argv[] = {"sh", "-c", CMD_SCRIPT, "chaos", d->rec, f->key,
                          secs, xs, NULL};

    snprintf(secs, sizeof(secs), "%d.%03d", BODY_MS / 1000, BODY_MS % 1000);
    snprintf(xs, sizeof(xs), "%ld", x);
    f->expect = 3 * (int64_t)x + 1;
    return mt_submit_command(d->c, argv, o, &f->t);
}

/* Fill free slot f with the n-th task (function or command by parity). */
static void launch(struct drv *d, struct flight *f, long n,
                   const mt_task_opts_t *o)
{
    bool fn = n % 2 == 0;
    int rc;

    snprintf(f->kind, sizeof(f->kind), "%s", fn ? "fn" : "cmd");
    snprintf(f->key, sizeof(f->key), "%s-%s-%ld", d->name, f->kind, n);
    rc = fn ? submit_work(d, f, n, o) : submit_cmd(d, f, n, o);
    emit_sub(d, f, rc);
    if (rc < 0) {
        f->t = NULL;
        nap_ms(200);
    }
}

/* Reap whatever of fl[0..n) ended within ms; RET how many are left. */
static int reap_ready(struct drv *d, struct flight *fl, int n, int ms)
{
    mt_task_t *ts[WINDOW_MAX];
    bool ready[WINDOW_MAX];
    int k = 0, idx[WINDOW_MAX], left = 0;

    for (int i = 0; i < n; i++)
        if (fl[i].t) {
            idx[k] = i;
            ts[k++] = fl[i].t;
        }
    if (k == 0)
        return 0;
    if (mt_wait_tasks(d->c, ts, (size_t)k, 1, ms, ready) < 0)
        memset(ready, 0, sizeof(ready));
    for (int j = 0; j < k; j++)
        if (!ready[j] || !reap(d, &fl[idx[j]], 0))
            left++;
    return left;
}

static void *tasks_main(void *arg)
{
    struct drv *d = arg;
    struct flight fl[WINDOW_MAX];
    mt_task_opts_t *o = task_opts(d);
    int64_t deadline;
    long n = 0;

    memset(fl, 0, sizeof(fl));
    while (!stopping(d)) {
        for (int i = 0; i < d->window && !stopping(d); i++)
            if (!fl[i].t)
                launch(d, &fl[i], n++, o);
        reap_ready(d, fl, d->window, 200);
    }
    deadline = now_ms() + (int64_t)d->drain_s * 1000;
    while (reap_ready(d, fl, d->window, 200) > 0 && now_ms() < deadline)
        ;
    for (int i = 0; i < d->window; i++)
        if (fl[i].t)
            give_up(d, &fl[i]);
    mt_task_opts_destroy(o);
    return NULL;
}

/* Wait for f until it ends or the drain after a stop runs out. */
static void follow(struct drv *d, struct flight *f)
{
    int64_t deadline = 0;

    while (!reap(d, f, 200)) {
        if (!deadline && stopping(d))
            deadline = now_ms() + (int64_t)d->drain_s * 1000;
        if (deadline && now_ms() >= deadline) {
            give_up(d, f);
            return;
        }
    }
}

/* A new actor (life key NAME-life-G); RET 0 or the error. */
static int actor_start(struct drv *d, int gen, mt_actor_t **a)
{
    char key[96], e[1024];
    const void *args[2] = {d->rec, key};
    size_t sizes[2];
    mt_task_opts_t *o = task_opts(d);
    mt_actor_opts_t *ao = NULL;
    int rc;

    snprintf(key, sizeof(key), "%s-life-%d", d->name, gen);
    sizes[0] = strlen(d->rec);
    sizes[1] = strlen(key);
    mt_actor_opts_create(&ao);
    mt_actor_opts_set_max_restarts(ao, -1);
    rc = mt_actor_create(d->c, d->fn_actor, args, sizes, 2, o, ao, a);
    mt_task_opts_destroy(o);
    mt_actor_opts_destroy(ao);
    if (rc == 0)
        rc = mt_actor_wait_ready(d->c, *a, CALL_WAIT_MS);
    emit(d, "{\"ev\":\"actor\",\"key\":\"%s\",\"id\":\"%s\",\"rc\":\"%s\","
         "\"err\":\"%s\"}", key, *a ? mt_actor_id(*a) : "",
         rc ? mt_error_name(rc) : "OK",
         esc(rc ? mt_client_last_error(d->c) : "", e, sizeof(e)));
    return rc;
}

/* Call step(seq) on a and follow the call to its end. */
static void actor_call(struct drv *d, mt_actor_t *a, long seq, int gen)
{
    struct flight f;
    char s[32];
    const void *args[1] = {s};
    size_t sizes[1];
    int rc;

    memset(&f, 0, sizeof(f));
    snprintf(s, sizeof(s), "%ld", seq);
    sizes[0] = strlen(s);
    snprintf(f.kind, sizeof(f.kind), "actor");
    snprintf(f.key, sizeof(f.key), "%s-life-%d-call-%ld", d->name, gen, seq);
    f.expect = seq;
    rc = mt_actor_call(d->c, a, "step", args, sizes, 1, &f.t);
    emit_sub(d, &f, rc);
    if (rc < 0) {
        nap_ms(200);
        return;
    }
    follow(d, &f);
}

static void *actor_main(void *arg)
{
    struct drv *d = arg;
    mt_actor_t *a = NULL;
    mt_actor_info info;
    int gen = 0;
    long seq = 0;

    mt_actor_info_init(&info);
    while (!stopping(d)) {
        if (!a && actor_start(d, gen, &a) < 0) {
            /* Not ready: a new actor next time, the old one dies with
             * the client or lives on in the records. */
            mt_actor_release(a);
            a = NULL;
            gen++;
            nap_ms(500);
            continue;
        }
        actor_call(d, a, ++seq, gen);
        nap_ms(CALL_GAP_MS);
        if (mt_actor_info_get(d->c, a, &info) == -MT_ENOENT ||
            info.state == MT_ACTOR_STATE_DEAD) {
            mt_actor_release(a);
            a = NULL;
            gen++;
        }
    }
    mt_actor_info_release(&info);
    mt_actor_release(a);
    return NULL;
}

/* One round of churn: a group, a task in it, its removal. */
static void pg_round(struct drv *d, long n)
{
    const char *cpu[] = {"CPU"};
    const double one[] = {1.0};
    mt_pg_opts_t *po = NULL;
    mt_pg_t *pg = NULL;
    mt_task_opts_t *o;
    struct flight f;
    char e[1024];
    int rc, rrc = 1;

    mt_pg_opts_create(&po);
    mt_pg_opts_add_bundle(po, cpu, one, 1);
    rc = mt_pg_create(d->c, po, &pg);
    mt_pg_opts_destroy(po);
    if (rc == 0)
        rc = mt_pg_wait(d->c, pg, 10000, NULL);
    memset(&f, 0, sizeof(f));
    snprintf(f.kind, sizeof(f.kind), "pg");
    snprintf(f.key, sizeof(f.key), "%s-pg-%ld", d->name, n);
    if (rc == 0 && (o = task_opts(d))) {
        mt_task_opts_set_placement_group(o, pg, 0);
        rc = submit_work(d, &f, n, o);
        mt_task_opts_destroy(o);
        emit_sub(d, &f, rc);
        if (rc == 0)
            follow(d, &f);
    }
    if (pg)
        rrc = mt_pg_remove(d->c, pg);
    emit(d, "{\"ev\":\"pg\",\"key\":\"%s\",\"id\":\"%s\",\"created\":%s,"
         "\"remove_rc\":\"%s\",\"err\":\"%s\"}", f.key, pg ? mt_pg_id(pg) : "",
         rc == 0 ? "true" : "false", rrc == 1 ? "NONE" : rrc ? mt_error_name(rrc) : "OK",
         esc(rc ? mt_client_last_error(d->c) : "", e, sizeof(e)));
    mt_pg_release(pg);
    if (rc < 0)
        nap_ms(200);
}

static void *pgs_main(void *arg)
{
    struct drv *d = arg;
    long n = 0;

    while (!stopping(d))
        pg_round(d, n++);
    return NULL;
}

/* Connect, retrying while the head is away (it may be restarting). */
static int connect_head(const char *addr, mt_client_t **c)
{
    mt_connect_opts co;
    int rc = -MT_EUNAVAIL;

    mt_connect_opts_init(&co);
    co.flags = MT_CONNECT_NO_STORE;
    for (int i = 0; i < 60 && rc < 0; i++)
        if ((rc = mt_client_connect(addr, &co, c)) < 0)
            nap_ms(500);
    return rc;
}

int main(int argc, char **argv)
{
    static struct drv d;
    pthread_t th[3];
    void *(*mains[3])(void *) = {tasks_main, actor_main, pgs_main};
    const char *w = getenv("CHAOS_WINDOW");
    int rc;

    if (argc != 8) {
        fprintf(stderr, "usage: chaos_driver ADDR LIBDIR REC OUT NAME "
                "STOPFILE DRAIN_S\n");
        return 2;
    }
    d.libdir = argv[2];
    d.rec = argv[3];
    d.name = argv[5];
    d.stopfile = argv[6];
    d.drain_s = atoi(argv[7]);
    d.window = w ? atoi(w) : 4;
    if (d.window < 1 || d.window > WINDOW_MAX)
        d.window = 4;
    snprintf(d.fn_work, sizeof(d.fn_work), "libmt_chaos_fn.so:work");
    snprintf(d.fn_actor, sizeof(d.fn_actor), "libmt_chaos_fn.so:actor_new");
    pthread_mutex_init(&d.out_lock, NULL);
    if (!(d.out = fopen(argv[4], "a"))) {
        fprintf(stderr, "chaos_driver: %s: %s\n", argv[4], strerror(errno));
        return 2;
    }
    if ((rc = connect_head(argv[1], &d.c)) < 0) {
        fprintf(stderr, "chaos_driver: connect: %s\n",
                mt_client_last_error(NULL));
        return 2;
    }
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, mains[i], &d);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    mt_client_disconnect(d.c);
    fclose(d.out);
    return 0;
}
