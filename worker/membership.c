/* SPDX-License-Identifier: Apache-2.0 */
/*
 * membership.c -- the node's membership state machine (see membership.h).
 *
 * DESIGN: every transition goes through the one timer: a call that ends
 * (or cannot start) schedules the next one, so at most one call is out
 * and a head that answers slowly is never flooded. Once leaving, nothing
 * is scheduled and answers still out are dropped.
 */
#include "worker/membership.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/procstat.h"
#include "common/sys.h"

#define RETRY_MS 1000
#define REGISTER_TIMEOUT_MS 3000
#define UNREGISTER_TIMEOUT_MS 1000

enum state {
    REGISTERING = 0,
    REGISTERED = 1,
    LEAVING = 2,
};

/* Guarded by: loop thread. */
struct mt_membership {
    struct mt_membership_opts o;
    const struct mt_membership_link *link;
    void *link_arg;
    mt_membership_fn registered;    /* the listeners */
    void *registered_arg;
    void (*lost)(void *);
    void *lost_arg;
    enum state state;
    bool call_in_flight;            /* one register/report at a time */
    bool head_unreachable;          /* for logging transitions once */
    uint64_t seqno;
    int report_period_ms;
    struct mt_cpu_sample cpu_prev;
    struct mt_host_usage last;      /* the latest mt_membership_usage */
    uv_timer_t timer;
    void (*done)(void *);           /* leave, then close */
    void *done_arg;
};

static void on_timer(uv_timer_t *t);

static void schedule(struct mt_membership *m, int ms)
{
    uv_timer_start(&m->timer, on_timer, (uint64_t)ms, 0);
}

struct mt_membership *mt_membership_create(const struct mt_membership_opts *o)
{
    struct mt_membership *m = mt_xcalloc(1, sizeof(*m));

    m->o = *o;
    m->report_period_ms = o->report_period_ms;
    mt_sys_cpu_sample(&m->cpu_prev);
    uv_timer_init(o->loop, &m->timer);
    m->timer.data = m;
    return m;
}

void mt_membership_set_link(struct mt_membership *m,
                            const struct mt_membership_link *link, void *arg)
{
    m->link = link;
    m->link_arg = arg;
}

void mt_membership_on_registered(struct mt_membership *m, mt_membership_fn fn,
                                 void *arg)
{
    m->registered = fn;
    m->registered_arg = arg;
}

void mt_membership_on_lost(struct mt_membership *m, void (*fn)(void *arg),
                           void *arg)
{
    m->lost = fn;
    m->lost_arg = arg;
}

void mt_membership_start(struct mt_membership *m)
{
    schedule(m, 0);
}

bool mt_membership_registered(const struct mt_membership *m)
{
    return m->state == REGISTERED;
}

void mt_membership_usage(struct mt_membership *m, struct mt_host_usage *u)
{
    struct mt_cpu_sample now;
    uint64_t total = 0, avail = 0;

    u->cpu_percent = 0;
    if (mt_sys_cpu_sample(&now) == 0) {
        u->cpu_percent = mt_sys_cpu_percent(&m->cpu_prev, &now);
        m->cpu_prev = now;
    }
    u->mem_total_bytes = u->mem_used_bytes = 0;
    if (mt_sys_meminfo(&total, &avail) == 0) {
        u->mem_total_bytes = total;
        u->mem_used_bytes = total - avail;
    }
    u->num_cpus_online = (uint32_t)mt_sys_num_cpus();
    mt_procstat_disk(m->o.disk_path ? m->o.disk_path : "/",
                     &u->disk_used_bytes, &u->disk_total_bytes);
    mt_procstat_net(NULL, &u->net_rx_bytes, &u->net_tx_bytes);
    m->last = *u;
}

void mt_membership_last_usage(const struct mt_membership *m,
                              struct mt_host_usage *u)
{
    *u = m->last;
}

/* How soon to try again after a failed call: at most RETRY_MS, sooner
 * with a shorter report period (a head back from a restart waits for its
 * nodes to register: recover.h). */
static int retry_ms(const struct mt_membership *m)
{
    return m->report_period_ms < RETRY_MS ? m->report_period_ms : RETRY_MS;
}

/* Register or report, whichever the state asks for. */
static int send_call(struct mt_membership *m)
{
    if (!m->link)
        return -MT_ECLOSED;
    if (m->state == REGISTERING)
        return m->link->register_node(m->link_arg, REGISTER_TIMEOUT_MS);
    return m->link->report_node(m->link_arg, ++m->seqno,
                                m->report_period_ms * 2);
}

static void on_timer(uv_timer_t *t)
{
    struct mt_membership *m = t->data;
    int rc;

    if (m->state == LEAVING || m->call_in_flight)
        return;
    rc = send_call(m);
    if (rc < 0) {
        MT_WARN("cannot contact head: %s", mt_strerror(rc));
        schedule(m, retry_ms(m));
        return;
    }
    m->call_in_flight = true;
}

static void head_lost(struct mt_membership *m, const char *msg)
{
    if (!m->head_unreachable)
        MT_WARN("head %s unreachable: %s; retrying", m->o.head_addr, msg);
    m->head_unreachable = true;
}

static void head_found(struct mt_membership *m)
{
    if (m->head_unreachable)
        MT_INFO("head %s reachable again", m->o.head_addr);
    m->head_unreachable = false;
}

void mt_membership_register_ended(struct mt_membership *m, int err,
                                  const char *msg, const char *cluster_id,
                                  uint32_t period_ms)
{
    m->call_in_flight = false;
    if (m->state == LEAVING)
        return;
    if (err) {
        if (err == -MT_EINVAL || err == -MT_EPERM || err == -MT_EAUTH)
            MT_ERROR("head rejected registration: %s", msg);
        else
            head_lost(m, msg);
        schedule(m, retry_ms(m));
        return;
    }
    head_found(m);
    if (period_ms >= 10 && period_ms <= 600000)
        m->report_period_ms = (int)period_ms;
    m->state = REGISTERED;
    MT_INFO("registered with head %s node=%s cluster=%s period=%dms",
            m->o.head_addr, m->o.node_id, cluster_id, m->report_period_ms);
    if (m->registered)
        m->registered(m->registered_arg, cluster_id);
    schedule(m, m->report_period_ms);
}

/* Back to REGISTERING, and tell who listens. */
static void reregister(struct mt_membership *m, int ms)
{
    m->state = REGISTERING;
    if (m->lost)
        m->lost(m->lost_arg);
    schedule(m, ms);
}

void mt_membership_report_ended(struct mt_membership *m, int err,
                                const char *msg, bool known)
{
    m->call_in_flight = false;
    if (m->state == LEAVING)
        return;
    if (err) {
        /* A head back from an outage may be a new one that loaded the
         * node from storage: it needs the node's holdings all the same. */
        head_lost(m, msg);
        reregister(m, retry_ms(m));
        return;
    }
    head_found(m);
    if (!known) {
        MT_WARN("head does not know this node (restarted?); registering again");
        reregister(m, 0);
        return;
    }
    schedule(m, m->report_period_ms);
}

/* Leaving is over: hand over to who asked. */
static void left(struct mt_membership *m)
{
    void (*done)(void *) = m->done;

    m->done = NULL;
    if (done)
        done(m->done_arg);
}

void mt_membership_unregister_ended(struct mt_membership *m, int err,
                                    const char *msg)
{
    if (err)
        MT_WARN("could not unregister from head: %s", msg);
    left(m);
}

void mt_membership_leave(struct mt_membership *m, const char *reason,
                         void (*done)(void *), void *arg)
{
    bool was_registered = m->state == REGISTERED;

    m->state = LEAVING;
    m->done = done;
    m->done_arg = arg;
    uv_timer_stop(&m->timer);
    if (!was_registered || !m->link ||
        m->link->unregister_node(m->link_arg, reason,
                                 UNREGISTER_TIMEOUT_MS) < 0)
        left(m);
}

static void on_timer_closed(uv_handle_t *h)
{
    left(h->data);
}

void mt_membership_close(struct mt_membership *m, void (*done)(void *),
                         void *arg)
{
    m->done = done;
    m->done_arg = arg;
    uv_close((uv_handle_t *)&m->timer, on_timer_closed);
}

void mt_membership_destroy(struct mt_membership *m)
{
    free(m);
}
