/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_leases.c -- worker/leases.c without processes: the executor pool
 * and the runs are replaced by fakes (struct mt_leases_ops) that record
 * each job, report and lease end, and the tests end jobs by calling their
 * callbacks. Covered: refusals (no lease, another owner, ended), one task
 * at a time in push order across pushes, answers only after the head's
 * acknowledgement, return, idle (a 0 ms timer on a real loop), revoke
 * with and without force, StopTask on queued and running tasks, an
 * executor that dies, jobs the pool ends inside submit, output tails and
 * shutdown; with the head away, answers without the acknowledgement (the
 * reports kept) and the pushed tasks listed as held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "tests/unit/unit.h"
#include "worker/leases.h"

#define MAXJ 64

/* ---- fakes --------------------------------------------------------------- */

struct fake {
    struct mt_exec_job *jobs[MAXJ];  /* submitted, in order */
    size_t n_jobs;
    struct mt_exec_job *stopped[MAXJ];
    size_t n_stopped;
    bool end_in_submit;              /* the pool fails each job at once */
    bool stop_ends_now;              /* a stop ends the job at once */
    char rep_ids[MAXJ][20];          /* reported task ids */
    enum mt_run_end rep_end[MAXJ];
    bool rep_sysfail[MAXJ];
    uint32_t rep_retries[MAXJ];
    char rep_lease[MAXJ][20];
    size_t n_reps;
    size_t n_flush;
    uint64_t kept;                   /* the last keep(seq) */
    size_t n_keep;
    char ended[8][128];              /* "lease:why" */
    size_t n_ended;
};

/* What a push's done callback saw. */
struct answer {
    int calls;
    int err;
    size_t n;
    enum mt_run_end state[8];
    bool not_run[8];
    bool sysfail[8];
    char error[8][128];
    char result[8][32];
    char out[8][32];
    uint64_t out_dropped[8];
};

static struct fake F;
static uv_loop_t loop;
static struct mt_leases *LS;

static void end_job(struct mt_exec_job *j, enum mt_exec_end end,
                    const char *result, const char *error)
{
    struct mt_exec_outcome o;

    memset(&o, 0, sizeof(o));
    o.end = end;
    o.result = (const uint8_t *)result;
    o.result_size = result ? strlen(result) : 0;
    o.error = error ? error : "";
    o.system_failure = end == MT_EXEC_END_DIED;
    j->on_end(j, &o);
}

static void f_submit(void *arg, struct mt_exec_job *j)
{
    struct fake *f = arg;

    CU_ASSERT_FATAL(f->n_jobs < MAXJ);
    f->jobs[f->n_jobs++] = j;
    if (f->end_in_submit)
        end_job(j, MT_EXEC_END_FAILED, NULL, "cannot start an executor");
    else
        j->on_start(j, 42);
}

static int f_stop(void *arg, struct mt_exec_job *j)
{
    struct fake *f = arg;

    f->stopped[f->n_stopped++] = j;
    if (f->stop_ends_now)
        end_job(j, MT_EXEC_END_STOPPED, NULL, "stopped");
    return 0;
}

static uint64_t f_report(void *arg, const struct mt_run_report *r)
{
    struct fake *f = arg;

    CU_ASSERT_FATAL(f->n_reps < MAXJ);
    CU_ASSERT(r->final);
    snprintf(f->rep_ids[f->n_reps], 20, "%s", r->task_id);
    snprintf(f->rep_lease[f->n_reps], 20, "%s", r->lease_id);
    f->rep_end[f->n_reps] = r->end;
    f->rep_sysfail[f->n_reps] = r->system_failure;
    f->rep_retries[f->n_reps] = r->max_retries;
    return ++f->n_reps;
}

static void f_flush(void *arg)
{
    ((struct fake *)arg)->n_flush++;
}

static void f_end(void *arg, const char *lease_id, uint32_t attempt,
                  const char *why)
{
    struct fake *f = arg;

    (void)attempt;
    snprintf(f->ended[f->n_ended++], 128, "%s:%s", lease_id, why);
}

static void f_keep(void *arg, uint64_t seq)
{
    struct fake *f = arg;

    f->kept = seq;
    f->n_keep++;
}

static const struct mt_leases_ops fake_ops = {f_submit, f_stop, f_report,
                                              f_flush, f_end, f_keep};

static void on_done(void *arg, int err, const struct mt_push_result *v,
                    size_t n)
{
    struct answer *a = arg;

    a->calls++;
    a->err = err;
    a->n = n;
    for (size_t i = 0; i < n && i < 8; i++) {
        a->state[i] = v[i].state;
        a->not_run[i] = v[i].not_run;
        a->sysfail[i] = v[i].system_failure;
        snprintf(a->error[i], 128, "%s", v[i].error);
        snprintf(a->result[i], 32, "%.*s", (int)v[i].result_size,
                 (const char *)v[i].result);
        snprintf(a->out[i], 32, "%.*s", (int)v[i].out_len,
                 (const char *)v[i].out);
        a->out_dropped[i] = v[i].out_dropped;
    }
}

/* ---- setup --------------------------------------------------------------- */

static void setup(uint32_t idle_ms)
{
    struct mt_leases_opts o;

    memset(&F, 0, sizeof(F));
    CU_ASSERT_FATAL(uv_loop_init(&loop) == 0);
    memset(&o, 0, sizeof(o));
    o.loop = &loop;
    o.store_socket = "/tmp/store.sock";
    o.idle_ms = idle_ms;
    o.ops = &fake_ops;
    o.ops_arg = &F;
    LS = mt_leases_create(&o);
}

static void closed(void *arg)
{
    *(bool *)arg = true;
}

static void teardown(void)
{
    bool done = false;

    mt_leases_close(LS, closed, &done);
    while (!done)
        uv_run(&loop, UV_RUN_ONCE);
    mt_leases_destroy(LS);
    CU_ASSERT(uv_loop_close(&loop) == 0);
}

static void add_lease(const char *id, const char *owner)
{
    struct mt_run_spec s;
    char err[256];

    memset(&s, 0, sizeof(s));
    s.task_id = (char *)id;
    s.attempt = 0;
    s.kind = MT_RUN_KIND_LEASE;
    s.owner_id = (char *)owner;
    mt_kv_list_set(&s.accel_env, "CUDA_VISIBLE_DEVICES", "1");
    CU_ASSERT_FATAL(mt_leases_add(LS, &s, err, sizeof(err)) == 0);
    mt_kv_list_release(&s.accel_env);
}

static const char *const ids[] = {
    "t000000000000001", "t000000000000002", "t000000000000003",
    "t000000000000004", "t000000000000005", "t000000000000006",
};

/* Push tasks ids[first..first+n) to lease l0 for owner o1. */
static void push(struct mt_push_task *tasks, size_t first, size_t n,
                 const char *owner, bool ret, struct answer *a)
{
    struct mt_push_req r;

    for (size_t i = 0; i < n; i++) {
        memset(&tasks[i], 0, sizeof(tasks[i]));
        tasks[i].task_id = ids[first + i];
        tasks[i].name = "noop";
        tasks[i].function = "libfn.so:noop";
        tasks[i].output_limit = 4;
        tasks[i].hold_result = i == 0;
        tasks[i].max_retries = 3;
    }
    memset(a, 0, sizeof(*a));
    r.lease_id = "l0";
    r.owner_id = owner;
    r.tasks = tasks;
    r.n = n;
    r.return_lease = ret;
    mt_leases_push(LS, &r, on_done, a);
}

/* ---- tests --------------------------------------------------------------- */

static void test_refused(void)
{
    struct mt_push_task t[2];
    struct answer a;

    setup(1000);
    push(t, 0, 2, "o1", false, &a); /* no lease */
    CU_ASSERT_EQUAL(a.calls, 1);
    CU_ASSERT_EQUAL(a.n, 2);
    CU_ASSERT(a.not_run[0] && a.not_run[1]);
    CU_ASSERT_EQUAL(a.state[1], MT_RUN_END_FAILED);
    CU_ASSERT_PTR_NOT_NULL(strstr(a.error[0], "not held"));
    add_lease("l0", "o1");
    push(t, 0, 2, "o2", false, &a); /* another owner */
    CU_ASSERT_EQUAL(a.calls, 1);
    CU_ASSERT(a.not_run[0]);
    CU_ASSERT_PTR_NOT_NULL(strstr(a.error[0], "another owner"));
    CU_ASSERT_EQUAL(F.n_jobs, 0);
    CU_ASSERT_EQUAL(F.n_reps, 0);
    teardown();
}

static void test_one_at_a_time(void)
{
    struct mt_push_task t1[2], t2[1];
    struct answer a1, a2;
    struct mt_exec_request *r;

    setup(1000);
    add_lease("l0", "o1");
    push(t1, 0, 2, "o1", false, &a1);
    push(t2, 2, 1, "o1", false, &a2);
    CU_ASSERT_EQUAL_FATAL(F.n_jobs, 1);
    r = &F.jobs[0]->req;
    CU_ASSERT_STRING_EQUAL(r->task_id, ids[0]);
    CU_ASSERT_EQUAL(r->store_results, 1);
    CU_ASSERT_STRING_EQUAL(r->store_socket, "/tmp/store.sock");
    CU_ASSERT_EQUAL_FATAL(r->n_env, 3);
    CU_ASSERT_STRING_EQUAL(r->env[0], "CUDA_VISIBLE_DEVICES=1");
    CU_ASSERT_STRING_EQUAL(r->env[1], "MANTA_TASK_ID=t000000000000001");
    CU_ASSERT_STRING_EQUAL(r->env[2], "MANTA_TASK_ATTEMPT=0");
    end_job(F.jobs[0], MT_EXEC_END_OK, "r1", NULL);
    CU_ASSERT_EQUAL_FATAL(F.n_jobs, 2);
    CU_ASSERT_STRING_EQUAL(F.jobs[1]->req.env[1],
                           "MANTA_TASK_ID=t000000000000002");
    CU_ASSERT_EQUAL(F.jobs[1]->req.store_results, 0);
    end_job(F.jobs[1], MT_EXEC_END_FAILED, NULL, "it failed");
    CU_ASSERT_EQUAL_FATAL(F.n_jobs, 3); /* the second push's, in order */
    CU_ASSERT_STRING_EQUAL(F.jobs[2]->req.task_id, ids[2]);
    CU_ASSERT_EQUAL(a1.calls, 0);       /* reports not acked yet */
    CU_ASSERT_EQUAL(F.n_flush, 1);      /* the first push waits for them */
    mt_leases_acked(LS, 1);
    CU_ASSERT_EQUAL(a1.calls, 0);
    mt_leases_acked(LS, 2);
    CU_ASSERT_EQUAL_FATAL(a1.calls, 1);
    CU_ASSERT_EQUAL(a1.err, 0);
    CU_ASSERT_EQUAL(a1.state[0], MT_RUN_END_FINISHED);
    CU_ASSERT_STRING_EQUAL(a1.result[0], "r1");
    CU_ASSERT_EQUAL(a1.state[1], MT_RUN_END_FAILED);
    CU_ASSERT(!a1.not_run[1] && !a1.sysfail[1]);
    CU_ASSERT_STRING_EQUAL(a1.error[1], "it failed");
    CU_ASSERT_EQUAL(F.n_reps, 2);
    CU_ASSERT_STRING_EQUAL(F.rep_lease[0], "l0");
    CU_ASSERT_EQUAL(F.rep_retries[1], 3);
    end_job(F.jobs[2], MT_EXEC_END_OK, NULL, NULL);
    mt_leases_acked(LS, 3);
    CU_ASSERT_EQUAL(a2.calls, 1);
    CU_ASSERT(mt_leases_held(LS, "l0"));
    teardown();
}

static void test_returned(void)
{
    struct mt_push_task t1[1], t2[1];
    struct answer a1, a2;

    setup(1000);
    add_lease("l0", "o1");
    push(t1, 0, 1, "o1", true, &a1);
    CU_ASSERT_EQUAL(F.n_ended, 0);
    push(t2, 1, 1, "o1", false, &a2); /* after the return: refused */
    CU_ASSERT_EQUAL(a2.calls, 1);
    CU_ASSERT(a2.not_run[0]);
    CU_ASSERT_PTR_NOT_NULL(strstr(a2.error[0], "returned"));
    end_job(F.jobs[0], MT_EXEC_END_OK, NULL, NULL);
    CU_ASSERT_EQUAL_FATAL(F.n_ended, 1);
    CU_ASSERT_STRING_EQUAL(F.ended[0], "l0:lease returned by its owner");
    CU_ASSERT(!mt_leases_held(LS, "l0"));
    mt_leases_acked(LS, 1);
    CU_ASSERT_EQUAL(a1.calls, 1);
    CU_ASSERT_EQUAL(a1.state[0], MT_RUN_END_FINISHED);
    teardown();
}

static void test_idle(void)
{
    struct mt_push_task t[1];
    struct answer a;

    setup(0);
    add_lease("l0", "o1");
    push(t, 0, 1, "o1", false, &a); /* held: not idle */
    uv_run(&loop, UV_RUN_NOWAIT);
    CU_ASSERT_EQUAL(F.n_ended, 0);
    end_job(F.jobs[0], MT_EXEC_END_OK, NULL, NULL);
    uv_run(&loop, UV_RUN_NOWAIT); /* still held: waits for the ack */
    CU_ASSERT_EQUAL(F.n_ended, 0);
    mt_leases_acked(LS, 1);
    CU_ASSERT_EQUAL(a.calls, 1);
    uv_run(&loop, UV_RUN_NOWAIT);
    CU_ASSERT_EQUAL_FATAL(F.n_ended, 1);
    CU_ASSERT_STRING_EQUAL(F.ended[0], "l0:lease idle");
    teardown();
}

static void test_revoke(void)
{
    struct mt_push_task t[3];
    struct answer a;

    setup(1000);
    add_lease("l0", "o1");
    push(t, 0, 3, "o1", false, &a);
    CU_ASSERT_EQUAL(mt_leases_revoke(LS, "l0", 1, false), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_leases_revoke(LS, "l0", 0, false), 0);
    CU_ASSERT_EQUAL(F.n_stopped, 0);  /* the running task finishes */
    CU_ASSERT_EQUAL(F.n_ended, 0);
    end_job(F.jobs[0], MT_EXEC_END_OK, NULL, NULL);
    CU_ASSERT_EQUAL_FATAL(F.n_ended, 1);
    CU_ASSERT_STRING_EQUAL(F.ended[0], "l0:lease revoked");
    CU_ASSERT_EQUAL(F.n_jobs, 1);
    CU_ASSERT_EQUAL(a.calls, 0);
    mt_leases_acked(LS, 1);
    CU_ASSERT_EQUAL_FATAL(a.calls, 1);
    CU_ASSERT(!a.not_run[0]);
    CU_ASSERT(a.not_run[1] && a.not_run[2]);
    CU_ASSERT_PTR_NOT_NULL(strstr(a.error[1], "revoked"));
    CU_ASSERT_EQUAL(F.n_reps, 1);     /* not_run tasks are not reported */
    CU_ASSERT_EQUAL(mt_leases_revoke(LS, "l0", 0, true), -MT_ENOENT);
    teardown();
}

static void test_revoke_force(void)
{
    struct mt_push_task t[2];
    struct answer a;

    setup(1000);
    add_lease("l0", "o1");
    push(t, 0, 2, "o1", false, &a);
    CU_ASSERT_EQUAL(mt_leases_revoke(LS, "l0", 0, true), 0);
    CU_ASSERT_EQUAL_FATAL(F.n_stopped, 1);
    CU_ASSERT_EQUAL(F.n_ended, 0);    /* until the executor is gone */
    end_job(F.stopped[0], MT_EXEC_END_STOPPED, NULL, "stopped");
    CU_ASSERT_EQUAL(F.n_ended, 1);
    mt_leases_acked(LS, 1);
    CU_ASSERT_EQUAL_FATAL(a.calls, 1);
    CU_ASSERT_EQUAL(a.state[0], MT_RUN_END_FAILED);
    CU_ASSERT(a.sysfail[0] && !a.not_run[0]);
    CU_ASSERT_STRING_EQUAL(a.error[0], "its lease was revoked");
    CU_ASSERT(F.rep_sysfail[0]);
    CU_ASSERT(a.not_run[1]);
    teardown();
}

static void test_stop_task(void)
{
    struct mt_push_task t[3];
    struct answer a;

    setup(1000);
    add_lease("l0", "o1");
    push(t, 0, 3, "o1", false, &a);
    CU_ASSERT_EQUAL(mt_leases_stop_task(LS, ids[2], 0), 0); /* queued */
    CU_ASSERT_EQUAL(F.n_reps, 1);
    CU_ASSERT_EQUAL(F.rep_end[0], MT_RUN_END_CANCELLED);
    CU_ASSERT_EQUAL(mt_leases_stop_task(LS, ids[2], 0), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_leases_stop_task(LS, ids[0], 1), -MT_ENOENT);
    F.stop_ends_now = true;
    CU_ASSERT_EQUAL(mt_leases_stop_task(LS, ids[0], 0), 0); /* running */
    CU_ASSERT_EQUAL(F.n_stopped, 1);
    CU_ASSERT_EQUAL_FATAL(F.n_jobs, 2); /* the next one started */
    end_job(F.jobs[1], MT_EXEC_END_DIED, NULL, "executor died: signal 9");
    mt_leases_acked(LS, F.n_reps);
    CU_ASSERT_EQUAL_FATAL(a.calls, 1);
    CU_ASSERT_EQUAL(a.state[0], MT_RUN_END_CANCELLED);
    CU_ASSERT_EQUAL(a.state[1], MT_RUN_END_FAILED);
    CU_ASSERT(a.sysfail[1]);           /* the executor died: retryable */
    CU_ASSERT_EQUAL(a.state[2], MT_RUN_END_CANCELLED);
    CU_ASSERT(!a.not_run[2]);
    teardown();
}

static void test_end_in_submit(void)
{
    struct mt_push_task t[5];
    struct answer a;

    setup(1000);
    F.end_in_submit = true;
    add_lease("l0", "o1");
    push(t, 0, 5, "o1", true, &a);
    CU_ASSERT_EQUAL(F.n_jobs, 5);
    CU_ASSERT_EQUAL(F.n_reps, 5);
    CU_ASSERT_EQUAL(F.n_ended, 1);
    CU_ASSERT_EQUAL(a.calls, 0);
    mt_leases_acked(LS, 5);
    CU_ASSERT_EQUAL_FATAL(a.calls, 1);
    CU_ASSERT_EQUAL(a.state[4], MT_RUN_END_FAILED);
    CU_ASSERT_STRING_EQUAL(a.error[4], "cannot start an executor");
    teardown();
}

static void test_output_tail(void)
{
    struct mt_push_task t[1];
    struct answer a;

    setup(1000);
    add_lease("l0", "o1");
    push(t, 0, 1, "o1", false, &a); /* output_limit 4 */
    F.jobs[0]->on_output(F.jobs[0], 1, "hello", 5);
    F.jobs[0]->on_output(F.jobs[0], 1, "ab", 2);
    F.jobs[0]->on_output(F.jobs[0], 7, "zz", 2); /* not a stream */
    end_job(F.jobs[0], MT_EXEC_END_OK, NULL, NULL);
    mt_leases_acked(LS, 1);
    CU_ASSERT_EQUAL_FATAL(a.calls, 1);
    CU_ASSERT_STRING_EQUAL(a.out[0], "loab");
    CU_ASSERT_EQUAL(a.out_dropped[0], 3);
    teardown();
}

static struct mt_push_result big_res;
static uint8_t big_out[1000];

static void on_done_big(void *arg, int err, const struct mt_push_result *v,
                        size_t n)
{
    (void)arg;
    CU_ASSERT_FATAL(err == 0 && n == 1 && v[0].err_len == 1000);
    big_res = v[0];
    memcpy(big_out, v[0].err, v[0].err_len);
}

/* A buffer grows to what is kept, up to output_limit. */
static void test_output_grows(void)
{
    struct mt_push_task t;
    struct mt_push_req r;
    char chunk[300];

    setup(1000);
    add_lease("l0", "o1");
    memset(&t, 0, sizeof(t));
    t.task_id = ids[0];
    t.function = "f";
    t.output_limit = 1000;
    memset(&r, 0, sizeof(r));
    r.lease_id = "l0";
    r.owner_id = "o1";
    r.tasks = &t;
    r.n = 1;
    mt_leases_push(LS, &r, on_done_big, NULL);
    for (int i = 0; i < 5; i++) {
        memset(chunk, 'a' + i, sizeof(chunk));
        F.jobs[0]->on_output(F.jobs[0], 2, chunk, sizeof(chunk));
    }
    end_job(F.jobs[0], MT_EXEC_END_OK, NULL, NULL);
    mt_leases_acked(LS, 1);
    CU_ASSERT_EQUAL(big_res.err_dropped, 500);
    CU_ASSERT_EQUAL(big_res.out_len, 0);
    CU_ASSERT(big_out[0] == 'b' && big_out[99] == 'b');
    CU_ASSERT(big_out[100] == 'c' && big_out[999] == 'e');
    teardown();
}

static void test_shutdown(void)
{
    struct mt_push_task t[2];
    struct answer a, b;

    setup(1000);
    add_lease("l0", "o1");
    push(t, 0, 2, "o1", false, &a);
    mt_leases_shutdown(LS);
    CU_ASSERT_EQUAL(a.calls, 1);
    CU_ASSERT_EQUAL(a.err, -MT_EUNAVAIL);
    push(t, 0, 1, "o1", false, &b);
    CU_ASSERT_EQUAL(b.calls, 1);
    CU_ASSERT_EQUAL(b.err, -MT_EUNAVAIL);
    CU_ASSERT_EQUAL(F.n_ended, 0);    /* nothing is reported any more */
    teardown();
}

/* The head goes away while a push waits for its acknowledgement: answered
 * at once, its reports kept; while away, a push is answered when its
 * tasks end; back, answers wait for the acknowledgement again. */
static void test_head_away(void)
{
    struct mt_push_task t1[1], t2[1], t3[1];
    struct answer a1, a2, a3;

    setup(1000);
    add_lease("l0", "o1");
    push(t1, 0, 1, "o1", false, &a1);
    end_job(F.jobs[0], MT_EXEC_END_OK, "r1", NULL);
    CU_ASSERT_EQUAL(a1.calls, 0);
    mt_leases_head_away(LS, true);
    CU_ASSERT_EQUAL(a1.calls, 1);
    CU_ASSERT_STRING_EQUAL(a1.result[0], "r1");
    CU_ASSERT_EQUAL(F.kept, 1);
    push(t2, 1, 1, "o1", false, &a2);
    CU_ASSERT_EQUAL(a2.calls, 0); /* it runs */
    end_job(F.jobs[1], MT_EXEC_END_FAILED, NULL, "boom");
    CU_ASSERT_EQUAL(a2.calls, 1);
    CU_ASSERT_STRING_EQUAL(a2.error[0], "boom");
    CU_ASSERT_EQUAL(F.kept, 2);
    CU_ASSERT_EQUAL(F.n_reps, 2); /* reported all the same */
    mt_leases_head_away(LS, false);
    push(t3, 2, 1, "o1", false, &a3);
    end_job(F.jobs[2], MT_EXEC_END_OK, NULL, NULL);
    CU_ASSERT_EQUAL(a3.calls, 0);
    CU_ASSERT_EQUAL(F.n_keep, 2);
    mt_leases_acked(LS, 3);
    CU_ASSERT_EQUAL(a3.calls, 1);
    teardown();
}

struct held {
    char id[8][20];
    char lease[8][20];
    size_t n;
};

static void on_held(void *arg, const struct mt_held_task *h)
{
    struct held *hd = arg;

    if (hd->n >= 8)
        return;
    snprintf(hd->id[hd->n], 20, "%s", h->task_id);
    snprintf(hd->lease[hd->n++], 20, "%s", h->lease_id);
}

/* What a registration lists: the running task and the queued ones, with
 * their lease, not one a StopTask cancelled nor one that ended. */
static void test_visit_held(void)
{
    struct mt_push_task t[4];
    struct answer a;
    struct held hd;

    setup(1000);
    add_lease("l0", "o1");
    push(t, 0, 4, "o1", false, &a);
    end_job(F.jobs[0], MT_EXEC_END_OK, NULL, NULL); /* ids[1] runs */
    CU_ASSERT(mt_leases_stop_task(LS, ids[3], 0) == 0);
    memset(&hd, 0, sizeof(hd));
    CU_ASSERT_EQUAL(mt_leases_visit_held(LS, on_held, &hd), 2);
    CU_ASSERT_EQUAL_FATAL(hd.n, 2);
    CU_ASSERT_STRING_EQUAL(hd.id[0], ids[1]);
    CU_ASSERT_STRING_EQUAL(hd.id[1], ids[2]);
    CU_ASSERT_STRING_EQUAL(hd.lease[0], "l0");
    CU_ASSERT_STRING_EQUAL(hd.lease[1], "l0");
    CU_ASSERT(mt_leases_stop_task(LS, "t0000000000000ff", 0) == -MT_ENOENT);
    F.stop_ends_now = true;
    CU_ASSERT(mt_leases_stop_task(LS, ids[1], 0) == 0);
    memset(&hd, 0, sizeof(hd));
    CU_ASSERT_EQUAL(mt_leases_visit_held(LS, on_held, &hd), 1);
    CU_ASSERT_STRING_EQUAL(hd.id[0], ids[2]);
    end_job(F.jobs[2], MT_EXEC_END_OK, NULL, NULL);
    mt_leases_acked(LS, 10);
    CU_ASSERT_EQUAL(a.calls, 1);
    teardown();
}

CU_TestInfo mt_test_leases[] = {
    {"refused: no lease, another owner", test_refused},
    {"one task at a time, in push order; answers after the ack",
     test_one_at_a_time},
    {"returned: ends after its tasks; later pushes refused", test_returned},
    {"idle: ends when nothing is queued, running or held", test_idle},
    {"revoke: running finishes, queued not_run", test_revoke},
    {"revoke with force: killed, system failure", test_revoke_force},
    {"StopTask: queued and running cancelled; executor died",
     test_stop_task},
    {"jobs ended inside submit", test_end_in_submit},
    {"output: the last output_limit bytes", test_output_tail},
    {"output: buffers grow to what is kept", test_output_grows},
    {"shutdown: held pushes unavailable", test_shutdown},
    {"head away: answers without the ack, reports kept", test_head_away},
    {"held: running and queued pushed tasks", test_visit_held},
    CU_TEST_INFO_NULL,
};
