/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_holdings.c -- worker/tasks.c's side of a head that goes away: the
 * runs with a fake sender and a fake lease listener on a real loop (a
 * LEASE run spawns nothing). Covered: pushed reports wait while the node
 * is not registered and then go in order, once each, also after a failed
 * call; kept reports own copies of what they carried; the leases hear
 * away and back; what a registration lists (runs, pushed reports waiting
 * for the head) and that a run a StopTask stopped is left out; a StopTask
 * of an unknown task does nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "tests/unit/unit.h"
#include "worker/actors.h"
#include "worker/tasks.h"

#define MAXS 8

/* ---- fakes --------------------------------------------------------------- */

struct sent {
    char id[MAXS][24];
    uint64_t seq[MAXS];
    bool owned[MAXS];
    size_t n;
};

struct fake {
    struct sent calls[MAXS];
    size_t n_calls;
    int away[MAXS];                /* 1 away, 0 back, in order */
    size_t n_away;
    uint64_t acked;
    int n_stops;
};

static struct fake F;
static uv_loop_t loop;
static struct mt_hosted_actors *HA;
static struct mt_runs *RS;

static int f_send(void *arg, const struct mt_run_batch *b)
{
    struct fake *f = arg;
    struct sent *s;

    CU_ASSERT_FATAL(f->n_calls < MAXS);
    s = &f->calls[f->n_calls++];
    for (size_t i = 0; i < b->n && i < MAXS; i++) {
        snprintf(s->id[i], sizeof(s->id[i]), "%s", b->v[i].task_id);
        s->seq[i] = b->v[i].seq;
        s->owned[i] = b->v[i].owned;
    }
    s->n = b->n;
    return 0;
}

static int f_started(void *arg, const struct mt_run_spec *s, char *err,
                     size_t len)
{
    (void)arg, (void)s, (void)err, (void)len;
    return 0;
}

static int f_stop(void *arg, const char *lease_id, uint32_t attempt,
                  bool force)
{
    (void)lease_id, (void)attempt, (void)force;
    ((struct fake *)arg)->n_stops++;
    return 0;
}

static void f_acked(void *arg, uint64_t seq)
{
    ((struct fake *)arg)->acked = seq;
}

static void f_away(void *arg, bool away)
{
    struct fake *f = arg;

    if (f->n_away < MAXS)
        f->away[f->n_away++] = away;
}

static const struct mt_runs_lease_listener fake_leases = {
    f_started, f_stop, f_acked, f_away,
};

/* ---- setup --------------------------------------------------------------- */

static void setup(void)
{
    struct mt_runs_opts o;

    memset(&F, 0, sizeof(F));
    CU_ASSERT_FATAL(uv_loop_init(&loop) == 0);
    HA = mt_hosted_actors_create(NULL);
    memset(&o, 0, sizeof(o));
    o.loop = &loop;
    o.node_id = "n1";
    o.head_addr = "127.0.0.1:1";
    o.actors = HA;
    RS = mt_runs_create(&o);
    mt_runs_on_leases(RS, &fake_leases, &F);
    mt_runs_set_sender(RS, f_send, &F);
}

static void closed(void *arg)
{
    *(bool *)arg = true;
}

static void teardown(void)
{
    bool done = false;

    mt_runs_close(RS, closed, &done);
    while (!done)
        uv_run(&loop, UV_RUN_ONCE);
    mt_runs_destroy(RS);
    mt_hosted_actors_destroy(HA);
    uv_run(&loop, UV_RUN_NOWAIT);
    CU_ASSERT(uv_loop_close(&loop) == 0);
}

/* A pushed task's final report; every string from the caller. */
static uint64_t report(char *id, const char *lease, char *result)
{
    struct mt_run_report r;

    memset(&r, 0, sizeof(r));
    r.task_id = id;
    r.lease_id = lease;
    r.name = "noop";
    r.function = "lib.so:noop";
    r.final = true;
    r.end = MT_RUN_END_FINISHED;
    r.result = (const uint8_t *)result;
    r.result_size = strlen(result);
    return mt_runs_report_pushed(RS, &r);
}

static void start_lease(const char *id)
{
    struct mt_run_spec s;

    memset(&s, 0, sizeof(s));
    s.task_id = mt_xstrdup(id);
    s.attempt = 2;
    s.kind = MT_RUN_KIND_LEASE;
    s.owner_id = mt_xstrdup("o1");
    mt_runs_start(RS, &s); /* admit wants executors for a LEASE */
}

struct held {
    char id[MAXS][24];
    uint32_t attempt[MAXS];
    bool pushed[MAXS];
    size_t n;
};

static void on_held(void *arg, const struct mt_held_task *h)
{
    struct held *hd = arg;

    if (hd->n >= MAXS)
        return;
    snprintf(hd->id[hd->n], sizeof(hd->id[0]), "%s", h->task_id);
    hd->attempt[hd->n] = h->attempt;
    hd->pushed[hd->n++] = h->lease_id != NULL;
}

/* ---- tests --------------------------------------------------------------- */

/* Reports made while the node is not registered wait, then go in order;
 * a failed call sends them again, once. */
static void test_wait_for_registration(void)
{
    char a[] = "t000000000000001", b[] = "t000000000000002",
         c[] = "t000000000000003", ra[] = "ra", rb[] = "rb";
    struct sent *s;

    setup();
    mt_runs_set_head_up(RS, false);
    CU_ASSERT_EQUAL_FATAL(F.n_away, 1);
    CU_ASSERT_EQUAL(F.away[0], 1);
    CU_ASSERT_EQUAL(report(a, "l1", ra), 1);
    CU_ASSERT_EQUAL(report(b, "l1", rb), 2);
    mt_runs_flush_pushed(RS);
    uv_run(&loop, UV_RUN_NOWAIT);
    CU_ASSERT_EQUAL(F.n_calls, 0);
    /* The leases answered their drivers: the first two stop borrowing. */
    mt_runs_keep_pushed(RS, 2);
    a[1] = b[1] = 'X';
    CU_ASSERT_EQUAL(report(c, "l1", ra), 3);
    mt_runs_set_head_up(RS, true);
    CU_ASSERT_EQUAL_FATAL(F.n_calls, 1);
    s = &F.calls[0];
    CU_ASSERT_EQUAL_FATAL(s->n, 3);
    CU_ASSERT_STRING_EQUAL(s->id[0], "t000000000000001");
    CU_ASSERT_STRING_EQUAL(s->id[1], "t000000000000002");
    CU_ASSERT_STRING_EQUAL(s->id[2], c);
    CU_ASSERT(s->owned[0] && s->owned[1] && !s->owned[2]);
    CU_ASSERT_EQUAL(s->seq[2], 3);
    mt_runs_report_ended(RS, -MT_EUNAVAIL, "UNAVAILABLE: down");
    CU_ASSERT_EQUAL_FATAL(F.n_away, 3); /* back at registration, away */
    CU_ASSERT_EQUAL(F.away[1], 0);
    CU_ASSERT_EQUAL(F.away[2], 1);
    while (F.n_calls < 2)
        uv_run(&loop, UV_RUN_ONCE); /* the retry's backoff */
    s = &F.calls[1];
    CU_ASSERT_EQUAL_FATAL(s->n, 3);
    CU_ASSERT_STRING_EQUAL(s->id[0], "t000000000000001");
    CU_ASSERT_EQUAL(s->seq[0], 1);
    CU_ASSERT_EQUAL(s->seq[2], 3);
    mt_runs_report_ended(RS, 0, "");
    CU_ASSERT_EQUAL(F.acked, 3);
    CU_ASSERT_EQUAL(F.n_away, 4);
    CU_ASSERT_EQUAL(F.away[3], 0);
    uv_run(&loop, UV_RUN_NOWAIT);
    CU_ASSERT_EQUAL(F.n_calls, 2); /* nothing twice */
    teardown();
}

/* What a registration lists, and StopTask of a task not here. */
static void test_visit_held(void)
{
    char a[] = "t00000000000000a", ra[] = "";
    struct held hd;

    setup();
    start_lease("l00000000000001");
    mt_runs_set_head_up(RS, false);
    report(a, "l00000000000001", ra);
    memset(&hd, 0, sizeof(hd));
    CU_ASSERT_EQUAL(mt_runs_visit_held(RS, on_held, &hd), 2);
    CU_ASSERT_EQUAL_FATAL(hd.n, 2);
    CU_ASSERT_STRING_EQUAL(hd.id[0], "l00000000000001");
    CU_ASSERT_EQUAL(hd.attempt[0], 2);
    CU_ASSERT(!hd.pushed[0]);
    CU_ASSERT_STRING_EQUAL(hd.id[1], a);
    CU_ASSERT(hd.pushed[1]);
    CU_ASSERT_EQUAL(mt_runs_stop(RS, "nosuchtask", 1, true), -MT_ENOENT);
    CU_ASSERT_EQUAL(mt_runs_stop(RS, "l00000000000001", 1, true),
                    -MT_ENOENT); /* another attempt */
    CU_ASSERT_EQUAL(F.n_stops, 0);
    CU_ASSERT_EQUAL(mt_runs_stop(RS, "l00000000000001", 2, false), 0);
    CU_ASSERT_EQUAL(F.n_stops, 1);
    memset(&hd, 0, sizeof(hd));
    CU_ASSERT_EQUAL(mt_runs_visit_held(RS, on_held, &hd), 1);
    CU_ASSERT_STRING_EQUAL(hd.id[0], a);
    mt_runs_keep_pushed(RS, 1); /* owned copies are freed at destroy */
    teardown();
}

CU_TestInfo mt_test_holdings[] = {
    {"reports wait for the registration, in order, once",
     test_wait_for_registration},
    {"held: runs and unacknowledged pushed reports; stopped left out",
     test_visit_held},
    CU_TEST_INFO_NULL,
};
