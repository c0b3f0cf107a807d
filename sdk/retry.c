/* SPDX-License-Identifier: Apache-2.0 */
/*
 * retry.c -- riding out a head that went away (retry.h): the one place
 * that decides whether a failed call or a broken stream to the head is
 * tried again, how long to wait before it and when to give up.
 *
 * DESIGN: the client remembers since when its head is away (the first
 * UNAVAILABLE since the last answer: a refused connect, a reset, a stream
 * cut when the head died). Every failed head call asks mt__retry_after;
 * retried attempts wait 50 ms doubling to 1 s (gRPC's own reconnect backs
 * off to 1 s, common/rpc.h) and fail fast while the head is away, so a
 * head back on its port is found within about a second. Once the head has
 * been away MANTA_HEAD_RECONNECT_TIMEOUT seconds (default 60, 0: never
 * retry) every call still retrying fails with one clear message naming
 * the head and the variable. One-shot clients (the manta command) never
 * retry: their limit is 0.
 *
 * The pending retries are timers on the client's loop, linked in a list
 * so that a disconnect runs them at once (closing) instead of waiting.
 *
 * THREAD: the policy is pure; the rest runs on the loop thread.
 */
#include "sdk/retry.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <grpc/status.h>

#include "common/error.h"
#include "common/rpc.h"

/* ---- the policy ---------------------------------------------------------- */

int mt__retry_limit_ms(const char *env)
{
    char *end;
    long s;

    if (!env || !*env)
        return MT__RECONNECT_DEFAULT_S * 1000;
    s = strtol(env, &end, 10);
    if (*end || s < 0 || s > MT__RECONNECT_MAX_S)
        return MT__RECONNECT_DEFAULT_S * 1000;
    return (int)s * 1000;
}

int mt__retry_backoff_ms(unsigned n)
{
    int ms = MT__RETRY_FIRST_MS;

    for (unsigned i = 1; i < n && ms < MT__RETRY_MAX_MS; i++)
        ms *= 2;
    return ms < MT__RETRY_MAX_MS ? ms : MT__RETRY_MAX_MS;
}

bool mt__retry_wanted(int grpc_code, enum mt__repeat how, bool away,
                      bool started_away)
{
    if (how == MT__REPEAT_UNSENT && !started_away)
        return false;
    if (grpc_code == GRPC_STATUS_UNAVAILABLE)
        return true;
    return grpc_code == GRPC_STATUS_DEADLINE_EXCEEDED && away;
}

bool mt__retry_due(uint64_t away_since_ms, uint64_t now_ms, int limit_ms)
{
    if (limit_ms <= 0)
        return true;
    return away_since_ms && now_ms >= away_since_ms + (uint64_t)limit_ms;
}

void mt__retry_give_up_text(const char *address, int limit_ms, char *buf,
                            size_t len)
{
    snprintf(buf, len, "head %s unreachable for %d s (%s)", address,
             limit_ms / 1000, MT__RECONNECT_ENV);
}

/* ---- the client's side --------------------------------------------------- */

uint64_t mt__now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void mt__head_back(struct mt_client *c)
{
    c->away_since_ms = 0;
}

bool mt__head_away(const struct mt_client *c)
{
    return c->away_since_ms != 0;
}

unsigned mt__attempt_flags(const struct mt_client *c, unsigned flags)
{
    return mt__head_away(c) ? 0 : flags;
}

int mt__retry_after(struct mt_client *c, const struct mt_rpc_status *st,
                    enum mt__repeat how, unsigned attempt, bool started_away,
                    char *why, size_t len)
{
    uint64_t now = mt__now_ms();

    if (c->closing || c->reconnect_ms <= 0)
        return -1;
    if (st->code == GRPC_STATUS_UNAVAILABLE && !c->away_since_ms)
        c->away_since_ms = now;
    if (!mt__retry_wanted(st->code, how, mt__head_away(c), started_away))
        return -1;
    if (mt__retry_due(c->away_since_ms, now, c->reconnect_ms)) {
        if (why)
            mt__retry_give_up_text(c->address, c->reconnect_ms, why, len);
        return -1;
    }
    return mt__retry_backoff_ms(attempt);
}

/* A retry waiting on the loop. */
struct mt__later {
    uv_timer_t timer;
    struct mt__later *next, *prev;
    mt__retry_fn fn;
    void *arg;
};

static void on_closed(uv_handle_t *h)
{
    free(h->data);
}

static void unlink_retry(struct mt_client *c, struct mt__later *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        c->retries = r->next;
    if (r->next)
        r->next->prev = r->prev;
    uv_close((uv_handle_t *)&r->timer, on_closed);
}

static void on_retry_timer(uv_timer_t *h)
{
    struct mt__later *r = h->data;
    struct mt_client *c = h->loop->data;

    unlink_retry(c, r);
    r->fn(c, r->arg, c->closing);
}

int mt__retry_later(struct mt_client *c, int delay_ms, mt__retry_fn fn,
                    void *arg)
{
    struct mt__later *r = calloc(1, sizeof(*r));

    if (!r)
        return -MT_ENOMEM;
    uv_timer_init(&c->loop, &r->timer);
    r->timer.data = r;
    r->fn = fn;
    r->arg = arg;
    r->next = c->retries;
    if (c->retries)
        c->retries->prev = r;
    c->retries = r;
    uv_timer_start(&r->timer, on_retry_timer, (uint64_t)delay_ms, 0);
    return 0;
}

void mt__retry_stop(struct mt_client *c)
{
    struct mt__later *r;

    while ((r = c->retries)) {
        uv_timer_stop(&r->timer);
        unlink_retry(c, r);
        r->fn(c, r->arg, true);
    }
}
