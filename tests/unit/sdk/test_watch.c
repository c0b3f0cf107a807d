/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_watch.c -- sdk/watch.c and the event decoding of sdk/rpc_task.c:
 * a TaskEvent becomes plain C; an event with output and a state becomes
 * an OUTPUT then a STATE event holding copies; a task's END comes last;
 * mt_watch_next says when nothing came in time and when every task ended.
 * No cluster: the watch's client is only a handle here (no stream opens
 * for a watch that follows nothing).
 */
#include <stdlib.h>
#include <string.h>

#include "sdk/rpc_task.h"
#include "sdk/task_state.h"
#include "sdk/watch_queue.h"
#include "head_service.pb-c.h"
#include "tests/unit/unit.h"

static void test_decode(void)
{
    Manta__TaskEvent m = MANTA__TASK_EVENT__INIT;
    struct mt__task_event ev;

    m.state = MANTA__TASK_STATE__TASK_STATE_FINISHED;
    m.output.data = (uint8_t *)"out";
    m.output.len = 3;
    m.fd = 2;
    m.exit_code = 7;
    m.node_id = "n1";
    m.attempt = 1;
    m.result.data = (uint8_t *)"v";
    m.result.len = 1;
    m.result_in_store = true;
    m.result_size = 99;
    m.task_id = "t1";
    m.client_tag = 42;
    mt__task_event_decode(&m, &ev);
    CU_ASSERT_EQUAL(ev.state, MT_TASK_STATE_FINISHED);
    CU_ASSERT_EQUAL(ev.output_len, 3);
    CU_ASSERT_EQUAL(ev.fd, 2);
    CU_ASSERT_EQUAL(ev.exit_code, 7);
    CU_ASSERT_STRING_EQUAL(ev.node_id, "n1");
    CU_ASSERT_STRING_EQUAL(ev.error, "");
    CU_ASSERT_EQUAL(ev.attempt, 1);
    CU_ASSERT_EQUAL(ev.result_len, 1);
    CU_ASSERT_TRUE(ev.result_in_store);
    CU_ASSERT_EQUAL(ev.result_size, 99);
    CU_ASSERT_STRING_EQUAL(ev.task_id, "t1");
    CU_ASSERT_EQUAL(ev.tag, 42);
    CU_ASSERT_TRUE(mt__task_final(ev.state));
    CU_ASSERT_FALSE(mt__task_final(MT_TASK_STATE_RUNNING));
}

/* A watch on a client that is only a handle, following one task. */
static mt_watch_t *watch_one(struct mt_client *c)
{
    mt_watch_t *w = NULL;

    memset(c, 0, sizeof(*c));
    c->magic = MT_CLIENT_MAGIC;
    CU_ASSERT_FATAL(mt_watch_open(c, NULL, 0, MT_WATCH_OUTPUT, &w) == 0);
    w->open = 1; /* as mt_watch_add would, before its stream opens */
    return w;
}

static void test_events_in_order(void)
{
    struct mt__task_event in = {0};
    const mt_watch_event *ev;
    struct mt_client c;
    mt_watch_t *w = watch_one(&c);
    char out[] = "hello\n";

    CU_ASSERT_EQUAL(mt_watch_next(w, 0, &ev), -MT_ETIMEDOUT);
    CU_ASSERT_PTR_NULL(ev);
    in.state = MT_TASK_STATE_RUNNING;
    in.output = (uint8_t *)out;
    in.output_len = 6;
    in.fd = 2;
    in.node_id = "n1";
    in.error = "";
    mt__watch_event(w, "t1", &in);
    out[0] = 'X'; /* the event holds a copy */
    in.state = MT_TASK_STATE_FINISHED;
    in.output_len = 0;
    in.exit_code = 3;
    in.result = (uint8_t *)"42";
    in.result_len = 2;
    mt__watch_event(w, "t1", &in);
    mt__watch_end(w, "t1", 0, NULL);
    CU_ASSERT_FATAL(mt_watch_next(w, -1, &ev) == 0);
    CU_ASSERT_EQUAL(ev->kind, MT_WATCH_EVENT_OUTPUT);
    CU_ASSERT_STRING_EQUAL(ev->task_id, "t1");
    CU_ASSERT_EQUAL(ev->fd, 2);
    CU_ASSERT_EQUAL(ev->len, 6);
    CU_ASSERT_EQUAL(memcmp(ev->data, "hello\n", 6), 0);
    CU_ASSERT_FATAL(mt_watch_next(w, -1, &ev) == 0);
    CU_ASSERT_EQUAL(ev->kind, MT_WATCH_EVENT_STATE);
    CU_ASSERT_EQUAL(ev->state, MT_TASK_STATE_RUNNING);
    CU_ASSERT_STRING_EQUAL(ev->node_id, "n1");
    CU_ASSERT_FATAL(mt_watch_next(w, -1, &ev) == 0);
    CU_ASSERT_EQUAL(ev->state, MT_TASK_STATE_FINISHED);
    CU_ASSERT_EQUAL(ev->exit_code, 3);
    CU_ASSERT_EQUAL(ev->result_len, 2);
    CU_ASSERT_EQUAL(memcmp(ev->result, "42", 2), 0);
    CU_ASSERT_FATAL(mt_watch_next(w, -1, &ev) == 0);
    CU_ASSERT_EQUAL(ev->kind, MT_WATCH_EVENT_END);
    CU_ASSERT_EQUAL(ev->lost, 0);
    CU_ASSERT_STRING_EQUAL(ev->error, "");
    /* Every task ended and every event was taken. */
    CU_ASSERT_EQUAL(mt_watch_next(w, -1, &ev), -MT_ENOENT);
    mt_watch_close(w);
}

static void test_lost_and_close(void)
{
    const mt_watch_event *ev;
    struct mt_client c;
    mt_watch_t *w = watch_one(&c);

    mt__watch_end(w, "t2", -MT_ENOENT, "NOT_FOUND: no such task");
    CU_ASSERT_FATAL(mt_watch_next(w, 10, &ev) == 0);
    CU_ASSERT_EQUAL(ev->kind, MT_WATCH_EVENT_END);
    CU_ASSERT_EQUAL(ev->lost, -MT_ENOENT);
    CU_ASSERT_STRING_EQUAL(ev->error, "NOT_FOUND: no such task");
    /* Events still queued are freed with the watch. */
    w->open = 1;
    mt__watch_end(w, "t3", 0, NULL);
    CU_ASSERT_EQUAL(mt_watch_add(w, ""), -MT_EINVAL);
    mt_watch_close(w);
    mt_watch_close(NULL);
    CU_ASSERT_EQUAL(mt_watch_open(NULL, NULL, 0, 0, &w), -MT_EINVAL);
}

CU_TestInfo mt_test_sdk_watch[] = {
    {"decode", test_decode},
    {"events_in_order", test_events_in_order},
    {"lost_and_close", test_lost_and_close},
    CU_TEST_INFO_NULL,
};
