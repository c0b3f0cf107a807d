/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_node_table.c -- the head's node table (head/node_table.h):
 * registration and revival, reports (clamping, undeclared resources,
 * unknown or dead nodes), expiry with injected clocks, cluster totals over
 * live nodes, trimming of old dead nodes, and lookups by id through many
 * registrations and removals.
 *
 * Time is passed in: the tests pick the monotonic and wall clock values.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "head/node_table.h"
#include "tests/unit/unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A registration for id with CPU=cpus and memory=1000 (whole units). */
struct reg_fixture {
    struct mt_qty_list total;
    struct mt_kv_list labels;
    struct mt_node_reg reg;
};

static void reg_init(struct reg_fixture *f, const char *id, int64_t cpus)
{
    memset(f, 0, sizeof(*f));
    mt_qty_list_set(&f->total, "CPU", cpus * MT_QTY_SCALE);
    mt_qty_list_set(&f->total, "memory", 1000LL * MT_QTY_SCALE);
    mt_kv_list_set(&f->labels, "zone", "z1");
    f->reg.id = id;
    f->reg.address = "10.0.0.1:7000";
    f->reg.node_ip = "10.0.0.1";
    f->reg.hostname = "host-a";
    f->reg.temp_dir = "/tmp/manta";
    f->reg.version = "0.1.0";
    f->reg.total = &f->total;
    f->reg.labels = &f->labels;
    f->reg.pid = 1234;
    f->reg.start_time_ms = 1700000000000LL;
}

static void reg_release(struct reg_fixture *f)
{
    mt_qty_list_release(&f->total);
    mt_kv_list_release(&f->labels);
}

/* Register id with cpus CPUs at the given monotonic time; must succeed. */
static struct mt_node *add_node(struct mt_node_table *t, const char *id,
                                int64_t cpus, int64_t now_mono)
{
    struct reg_fixture f;
    struct mt_node *n;
    int err = 0;

    reg_init(&f, id, cpus);
    n = mt_node_table_register(t, &f.reg, now_mono, 5000 + now_mono, NULL,
                               &err);
    reg_release(&f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    return n;
}

/* ---- registration -------------------------------------------------------- */

static void test_register_new(void)
{
    struct mt_node_table t;
    struct reg_fixture f;
    char id[8] = "n1";
    struct mt_node *n;
    bool was_new = false;
    int err = 0;

    mt_node_table_init(&t);
    reg_init(&f, id, 4);
    n = mt_node_table_register(&t, &f.reg, 100, 200, &was_new, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    CU_ASSERT_TRUE(was_new);
    CU_ASSERT_EQUAL(err, 0);
    CU_ASSERT_EQUAL(n->magic, MT_NODE_MAGIC);
    CU_ASSERT_EQUAL(n->state, MT_NODE_ALIVE);
    CU_ASSERT_STRING_EQUAL(n->address, "10.0.0.1:7000");
    CU_ASSERT_STRING_EQUAL(n->node_ip, "10.0.0.1");
    CU_ASSERT_STRING_EQUAL(n->hostname, "host-a");
    CU_ASSERT_STRING_EQUAL(n->temp_dir, "/tmp/manta");
    CU_ASSERT_STRING_EQUAL(n->version, "0.1.0");
    CU_ASSERT_PTR_NULL(n->death_reason);
    CU_ASSERT_EQUAL(n->pid, 1234);
    CU_ASSERT_EQUAL(n->start_time_ms, 1700000000000LL);
    CU_ASSERT_EQUAL(n->last_seen_mono, 100);
    CU_ASSERT_EQUAL(n->last_report_ms, 200);
    CU_ASSERT_EQUAL(n->death_time_ms, 0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->total, "CPU"), 40000);
    /* a new node offers everything it has */
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "CPU"), 40000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "memory"), 10000000);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&n->labels, "zone"), "z1");

    /* the table keeps its own copies of everything */
    id[0] = 'X';
    mt_qty_list_set(&f.total, "CPU", 1);
    mt_kv_list_set(&f.labels, "zone", "changed");
    CU_ASSERT_STRING_EQUAL(n->id, "n1");
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->total, "CPU"), 40000);
    CU_ASSERT_STRING_EQUAL(mt_kv_list_get(&n->labels, "zone"), "z1");

    CU_ASSERT_PTR_EQUAL(mt_node_table_find(&t, "n1"), n);
    CU_ASSERT_PTR_NULL(mt_node_table_find(&t, "n2"));
    CU_ASSERT_EQUAL(mt_node_table_count(&t, MT_NODE_ALIVE), 1);
    CU_ASSERT_EQUAL(mt_node_table_count(&t, MT_NODE_DEAD), 0);

    reg_release(&f);
    mt_node_table_release(&t);
    CU_ASSERT_EQUAL(t.n, 0);
    mt_node_table_release(&t);
}

static void test_register_optional_fields(void)
{
    struct mt_node_table t;
    struct mt_node_reg r;
    struct mt_node *n;
    int err = 0;

    mt_node_table_init(&t);
    memset(&r, 0, sizeof(r));
    r.id = "bare";
    r.address = "h:1";
    n = mt_node_table_register(&t, &r, 0, 0, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    CU_ASSERT_STRING_EQUAL(n->node_ip, "");
    CU_ASSERT_STRING_EQUAL(n->hostname, "");
    CU_ASSERT_STRING_EQUAL(n->temp_dir, "");
    CU_ASSERT_STRING_EQUAL(n->version, "");
    CU_ASSERT_EQUAL(n->total.n, 0);
    CU_ASSERT_EQUAL(n->avail.n, 0);
    CU_ASSERT_EQUAL(n->labels.n, 0);
    mt_node_table_release(&t);
}

static void test_register_invalid(void)
{
    static const struct {
        const char *id, *address;
    } cases[] = {
        {"", "h:1"}, {NULL, "h:1"}, {"n1", ""}, {"n1", NULL}, {"", ""},
    };
    struct mt_node_table t;

    mt_node_table_init(&t);
    add_node(&t, "keep", 1, 0);
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_node_reg r;
        int err = 0;

        memset(&r, 0, sizeof(r));
        r.id = cases[i].id;
        r.address = cases[i].address;
        CU_ASSERT_PTR_NULL(mt_node_table_register(&t, &r, 1, 1, NULL, &err));
        CU_ASSERT_EQUAL(err, -MT_EINVAL);
    }
    CU_ASSERT_EQUAL(t.n, 1);
    mt_node_table_release(&t);
}

static void test_reregister(void)
{
    struct mt_node_table t;
    struct reg_fixture f;
    struct mt_node *n, *again;
    bool was_new = true;
    int err = 0;

    mt_node_table_init(&t);
    n = add_node(&t, "n1", 4, 0);
    CU_ASSERT_EQUAL(mt_node_table_report(&t, "n1", 7, NULL, NULL, 10, 10), 0);

    /* same id, new address and resources: same node, refreshed */
    reg_init(&f, "n1", 8);
    f.reg.address = "10.0.0.9:7001";
    f.reg.pid = 99;
    again = mt_node_table_register(&t, &f.reg, 50, 60, &was_new, &err);
    CU_ASSERT_PTR_EQUAL(again, n);
    CU_ASSERT_FALSE(was_new);
    CU_ASSERT_EQUAL(t.n, 1);
    CU_ASSERT_STRING_EQUAL(n->address, "10.0.0.9:7001");
    CU_ASSERT_EQUAL(n->pid, 99);
    CU_ASSERT_EQUAL(n->seqno, 0);
    CU_ASSERT_EQUAL(n->last_seen_mono, 50);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->total, "CPU"), 80000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "CPU"), 80000);
    reg_release(&f);
    mt_node_table_release(&t);
}

static void test_reregister_revives_dead(void)
{
    struct mt_node_table t;
    struct reg_fixture f;
    struct mt_node *n;
    bool was_new = true;
    int err = 0;

    mt_node_table_init(&t);
    n = add_node(&t, "n1", 4, 0);
    mt_node_table_mark_dead(&t, n, "lost", 77);
    CU_ASSERT_EQUAL(n->state, MT_NODE_DEAD);
    CU_ASSERT_STRING_EQUAL(n->death_reason, "lost");
    CU_ASSERT_EQUAL(n->death_time_ms, 77);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "CPU"), 0);

    reg_init(&f, "n1", 4);
    CU_ASSERT_PTR_EQUAL(
        mt_node_table_register(&t, &f.reg, 1000, 2000, &was_new, &err), n);
    CU_ASSERT_FALSE(was_new);
    CU_ASSERT_EQUAL(n->state, MT_NODE_ALIVE);
    CU_ASSERT_PTR_NULL(n->death_reason);
    CU_ASSERT_EQUAL(n->death_time_ms, 0);
    CU_ASSERT_EQUAL(n->last_seen_mono, 1000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "CPU"), 40000);
    CU_ASSERT_EQUAL(mt_node_table_count(&t, MT_NODE_ALIVE), 1);
    CU_ASSERT_EQUAL(mt_node_table_count(&t, MT_NODE_DEAD), 0);
    /* and reports are accepted again */
    CU_ASSERT_EQUAL(mt_node_table_report(&t, "n1", 1, NULL, NULL, 1001, 2001),
                    0);
    reg_release(&f);
    mt_node_table_release(&t);
}

/* ---- reports ------------------------------------------------------------- */

static void test_report(void)
{
    struct mt_node_table t;
    struct mt_node_usage u = {.cpu_percent = 42.5,
                              .mem_used_bytes = 100,
                              .mem_total_bytes = 200,
                              .num_cpus_online = 3};
    struct mt_qty_list avail = {NULL, 0, 0};
    struct mt_node *n;

    mt_node_table_init(&t);
    n = add_node(&t, "n1", 4, 0);

    mt_qty_list_set(&avail, "CPU", 15000);
    CU_ASSERT_EQUAL(mt_node_table_report(&t, "n1", 5, &avail, &u, 300, 400),
                    0);
    CU_ASSERT_EQUAL(n->seqno, 5);
    CU_ASSERT_EQUAL(n->last_seen_mono, 300);
    CU_ASSERT_EQUAL(n->last_report_ms, 400);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "CPU"), 15000);
    /* resources the report leaves out keep their value */
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "memory"), 10000000);
    CU_ASSERT_DOUBLE_EQUAL(n->usage.cpu_percent, 42.5, 1e-9);
    CU_ASSERT_EQUAL(n->usage.mem_used_bytes, 100);
    CU_ASSERT_EQUAL(n->usage.mem_total_bytes, 200);
    CU_ASSERT_EQUAL(n->usage.num_cpus_online, 3);

    /* NULL avail and usage keep the old ones */
    CU_ASSERT_EQUAL(mt_node_table_report(&t, "n1", 6, NULL, NULL, 310, 410),
                    0);
    CU_ASSERT_EQUAL(n->seqno, 6);
    CU_ASSERT_EQUAL(n->last_seen_mono, 310);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "CPU"), 15000);
    CU_ASSERT_DOUBLE_EQUAL(n->usage.cpu_percent, 42.5, 1e-9);

    mt_qty_list_release(&avail);
    mt_node_table_release(&t);
}

static void test_report_clamps(void)
{
    static const struct {
        int64_t reported, want;
    } cases[] = {
        {0, 0},          {1, 1},           {40000, 40000},
        {40001, 40000},  {999999, 40000},  {-1, 0},
        {-50000, 0},     {20000, 20000},
    };
    struct mt_node_table t;
    struct mt_node *n;

    mt_node_table_init(&t);
    n = add_node(&t, "n1", 4, 0);
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_qty_list avail = {NULL, 0, 0};

        mt_qty_list_set(&avail, "CPU", cases[i].reported);
        CU_ASSERT_EQUAL(mt_node_table_report(&t, "n1", i, &avail, NULL,
                                             (int64_t)i, (int64_t)i),
                        0);
        CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "CPU"), cases[i].want);
        mt_qty_list_release(&avail);
    }
    mt_node_table_release(&t);
}

static void test_report_ignores_undeclared(void)
{
    struct mt_node_table t;
    struct mt_qty_list avail = {NULL, 0, 0};
    struct mt_node *n;

    mt_node_table_init(&t);
    n = add_node(&t, "n1", 4, 0);
    mt_qty_list_set(&avail, "GPU", 80000);
    mt_qty_list_set(&avail, "CPU", 10000);
    mt_qty_list_set(&avail, "made_up", 1);
    CU_ASSERT_EQUAL(mt_node_table_report(&t, "n1", 1, &avail, NULL, 1, 1), 0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "GPU"), -1);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "made_up"), -1);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "CPU"), 10000);
    CU_ASSERT_EQUAL(n->avail.n, 2);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->total, "GPU"), -1);
    mt_qty_list_release(&avail);
    mt_node_table_release(&t);
}

static void test_report_unknown_or_dead(void)
{
    struct mt_node_table t;
    struct mt_qty_list avail = {NULL, 0, 0};
    struct mt_node *n;

    mt_node_table_init(&t);
    CU_ASSERT_EQUAL(mt_node_table_report(&t, "nobody", 1, NULL, NULL, 1, 1),
                    -MT_ENOENT);
    n = add_node(&t, "n1", 4, 0);
    CU_ASSERT_EQUAL(mt_node_table_report(&t, "n2", 1, NULL, NULL, 1, 1),
                    -MT_ENOENT);

    mt_node_table_mark_dead(&t, n, "gone", 5);
    mt_qty_list_set(&avail, "CPU", 40000);
    CU_ASSERT_EQUAL(mt_node_table_report(&t, "n1", 9, &avail, NULL, 50, 50),
                    -MT_ENOENT);
    /* nothing about the dead node changed */
    CU_ASSERT_EQUAL(n->state, MT_NODE_DEAD);
    CU_ASSERT_EQUAL(n->seqno, 0);
    CU_ASSERT_EQUAL(n->last_seen_mono, 0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&n->avail, "CPU"), 0);
    mt_qty_list_release(&avail);
    mt_node_table_release(&t);
}

/* ---- death and expiry ---------------------------------------------------- */

static void test_mark_dead_twice(void)
{
    struct mt_node_table t;
    struct mt_node *n;
    uint64_t order;

    mt_node_table_init(&t);
    n = add_node(&t, "n1", 4, 0);
    n->usage.cpu_percent = 80;
    mt_node_table_mark_dead(&t, n, "first", 10);
    order = n->death_order;
    CU_ASSERT_DOUBLE_EQUAL(n->usage.cpu_percent, 0.0, 1e-9);
    /* a second death changes nothing */
    mt_node_table_mark_dead(&t, n, "second", 20);
    CU_ASSERT_STRING_EQUAL(n->death_reason, "first");
    CU_ASSERT_EQUAL(n->death_time_ms, 10);
    CU_ASSERT_EQUAL(n->death_order, order);
    CU_ASSERT_EQUAL(mt_node_table_count(&t, MT_NODE_DEAD), 1);
    mt_node_table_release(&t);
}

struct death_log {
    int calls;
    struct mt_node *last;
    char ids[8][16];
};

static void on_death(void *arg, struct mt_node *node)
{
    struct death_log *d = arg;

    CU_ASSERT_EQUAL(node->state, MT_NODE_DEAD);
    if (d->calls < 8)
        snprintf(d->ids[d->calls], sizeof(d->ids[0]), "%s", node->id);
    d->calls++;
    d->last = node;
}

static void test_expire(void)
{
    struct mt_node_table t;
    struct death_log d;
    struct mt_node *quiet, *chatty, *edge;

    memset(&d, 0, sizeof(d));
    mt_node_table_init(&t);
    quiet = add_node(&t, "quiet", 4, 0);
    chatty = add_node(&t, "chatty", 2, 0);
    edge = add_node(&t, "edge", 1, 1000);
    CU_ASSERT_EQUAL(mt_node_table_report(&t, "chatty", 1, NULL, NULL, 3500,
                                         3500),
                    0);

    /* nobody has been silent for more than 5000 ms yet */
    CU_ASSERT_EQUAL(mt_node_table_expire(&t, 4000, 9000, 5000, on_death, &d),
                    0);
    CU_ASSERT_EQUAL(d.calls, 0);

    /* at 4000, timeout 3000: quiet (4000 ms) dies, edge (exactly 3000 ms)
     * and chatty (500 ms) stay */
    CU_ASSERT_EQUAL(mt_node_table_expire(&t, 4000, 9000, 3000, on_death, &d),
                    1);
    CU_ASSERT_EQUAL(d.calls, 1);
    CU_ASSERT_PTR_EQUAL(d.last, quiet);
    CU_ASSERT_STRING_EQUAL(d.ids[0], "quiet");
    CU_ASSERT_EQUAL(quiet->state, MT_NODE_DEAD);
    CU_ASSERT_EQUAL(quiet->death_time_ms, 9000);
    CU_ASSERT_PTR_NOT_NULL(quiet->death_reason);
    CU_ASSERT_PTR_NOT_NULL(strstr(quiet->death_reason, "4000"));
    CU_ASSERT_EQUAL(mt_qty_list_get(&quiet->avail, "CPU"), 0);
    CU_ASSERT_EQUAL(mt_qty_list_get(&quiet->total, "CPU"), 40000);
    /* the live ones are untouched */
    CU_ASSERT_EQUAL(chatty->state, MT_NODE_ALIVE);
    CU_ASSERT_EQUAL(chatty->last_seen_mono, 3500);
    CU_ASSERT_EQUAL(mt_qty_list_get(&chatty->avail, "CPU"), 20000);
    CU_ASSERT_PTR_NULL(chatty->death_reason);
    CU_ASSERT_EQUAL(edge->state, MT_NODE_ALIVE);

    /* the callback fires once per death: later sweeps skip the dead */
    CU_ASSERT_EQUAL(mt_node_table_expire(&t, 4000, 9000, 3000, on_death, &d),
                    0);
    CU_ASSERT_EQUAL(mt_node_table_expire(&t, 4400, 9400, 3500, on_death, &d),
                    0);
    CU_ASSERT_EQUAL(d.calls, 1);
    CU_ASSERT_EQUAL(quiet->death_time_ms, 9000);

    /* later both others die in one sweep; no callback is fine too */
    CU_ASSERT_EQUAL(mt_node_table_expire(&t, 10000, 15000, 3000, on_death, &d),
                    2);
    CU_ASSERT_EQUAL(d.calls, 3);
    CU_ASSERT_EQUAL(mt_node_table_count(&t, MT_NODE_DEAD), 3);
    CU_ASSERT_EQUAL(mt_node_table_expire(&t, 99999, 99999, 1, NULL, NULL), 0);
    mt_node_table_release(&t);
}

static void test_expire_without_callback(void)
{
    struct mt_node_table t;

    mt_node_table_init(&t);
    CU_ASSERT_EQUAL(mt_node_table_expire(&t, 1000, 1000, 10, NULL, NULL), 0);
    add_node(&t, "a", 1, 0);
    add_node(&t, "b", 1, 0);
    CU_ASSERT_EQUAL(mt_node_table_expire(&t, 1000, 1000, 10, NULL, NULL), 2);
    CU_ASSERT_EQUAL(mt_node_table_count(&t, MT_NODE_DEAD), 2);
    mt_node_table_release(&t);
}

/* ---- totals and trimming ------------------------------------------------- */

static void test_totals(void)
{
    struct mt_node_table t;
    struct mt_qty_list total = {NULL, 0, 0}, avail = {NULL, 0, 0};
    struct mt_qty_list rep = {NULL, 0, 0};
    struct reg_fixture f;
    struct mt_node *dead;
    int err = 0;

    mt_node_table_init(&t);
    /* empty table: empty sums */
    mt_node_table_totals(&t, &total, &avail);
    CU_ASSERT_EQUAL(total.n, 0);
    CU_ASSERT_EQUAL(avail.n, 0);

    add_node(&t, "a", 4, 0);
    add_node(&t, "b", 2, 0);
    dead = add_node(&t, "c", 16, 0);
    reg_init(&f, "gpu", 8);
    mt_qty_list_set(&f.total, "GPU", 20000);
    CU_ASSERT_PTR_NOT_NULL(
        mt_node_table_register(&t, &f.reg, 0, 0, NULL, &err));
    reg_release(&f);
    mt_node_table_mark_dead(&t, dead, "test", 1);

    mt_qty_list_set(&rep, "CPU", 10000);
    CU_ASSERT_EQUAL(mt_node_table_report(&t, "a", 1, &rep, NULL, 1, 1), 0);
    mt_qty_list_set(&rep, "GPU", 5000);
    CU_ASSERT_EQUAL(mt_node_table_report(&t, "gpu", 1, &rep, NULL, 1, 1), 0);

    mt_node_table_totals(&t, &total, &avail);
    CU_ASSERT_EQUAL(mt_qty_list_get(&total, "CPU"), (4 + 2 + 8) * 10000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&total, "memory"), 3000LL * 10000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&total, "GPU"), 20000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&avail, "CPU"), (1 + 2 + 1) * 10000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&avail, "memory"), 3000LL * 10000);
    CU_ASSERT_EQUAL(mt_qty_list_get(&avail, "GPU"), 5000);
    CU_ASSERT_EQUAL(total.n, 3);

    mt_qty_list_release(&rep);
    mt_qty_list_release(&total);
    mt_qty_list_release(&avail);
    mt_node_table_release(&t);
}

static void test_trim(void)
{
    const size_t extra = 5, ndead = MT_NODE_TABLE_MAX_DEAD + extra;
    struct mt_node_table t;
    char id[32];

    mt_node_table_init(&t);
    add_node(&t, "alive-1", 1, 0);
    for (size_t i = 0; i < ndead; i++) {
        snprintf(id, sizeof(id), "dead-%zu", i);
        add_node(&t, id, 1, 0);
    }
    add_node(&t, "alive-2", 1, 0);
    /* die in order dead-0, dead-1, ... */
    for (size_t i = 0; i < ndead; i++) {
        snprintf(id, sizeof(id), "dead-%zu", i);
        mt_node_table_mark_dead(&t, mt_node_table_find(&t, id), "test",
                                (int64_t)i);
    }
    /* marking alone keeps them all */
    CU_ASSERT_EQUAL(mt_node_table_count(&t, MT_NODE_DEAD), ndead);

    mt_node_table_trim(&t);
    CU_ASSERT_EQUAL(mt_node_table_count(&t, MT_NODE_DEAD),
                    MT_NODE_TABLE_MAX_DEAD);
    CU_ASSERT_EQUAL(mt_node_table_count(&t, MT_NODE_ALIVE), 2);
    CU_ASSERT_EQUAL(t.n, MT_NODE_TABLE_MAX_DEAD + 2);
    /* the oldest deaths went first */
    for (size_t i = 0; i < extra; i++) {
        snprintf(id, sizeof(id), "dead-%zu", i);
        CU_ASSERT_PTR_NULL(mt_node_table_find(&t, id));
    }
    snprintf(id, sizeof(id), "dead-%zu", extra);
    CU_ASSERT_PTR_NOT_NULL(mt_node_table_find(&t, id));
    snprintf(id, sizeof(id), "dead-%zu", ndead - 1);
    CU_ASSERT_PTR_NOT_NULL(mt_node_table_find(&t, id));
    CU_ASSERT_PTR_NOT_NULL(mt_node_table_find(&t, "alive-1"));
    CU_ASSERT_PTR_NOT_NULL(mt_node_table_find(&t, "alive-2"));

    /* at the limit, trimming does nothing */
    mt_node_table_trim(&t);
    CU_ASSERT_EQUAL(t.n, MT_NODE_TABLE_MAX_DEAD + 2);
    mt_node_table_release(&t);
}

/* Lookups stay right through many registrations and many removals: the
 * index by id grows, and trimming removes entries from it and moves the
 * last node into each freed place. */
static void test_find_many(void)
{
    const size_t n = 3000, die = 2500, gone = die - MT_NODE_TABLE_MAX_DEAD;
    struct mt_node_table t;
    struct mt_node *nd;
    char id[32];

    mt_node_table_init(&t);
    for (size_t i = 0; i < n; i++) {
        snprintf(id, sizeof(id), "node-%zu", i);
        add_node(&t, id, 1, 0);
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(id, sizeof(id), "node-%zu", i);
        nd = mt_node_table_find(&t, id);
        CU_ASSERT_FATAL(nd && strcmp(nd->id, id) == 0);
    }
    CU_ASSERT_PTR_NULL(mt_node_table_find(&t, "node-3000"));
    CU_ASSERT_PTR_NULL(mt_node_table_find(&t, ""));
    for (size_t i = 0; i < die; i++) {
        snprintf(id, sizeof(id), "node-%zu", i);
        mt_node_table_mark_dead(&t, mt_node_table_find(&t, id), "test",
                                (int64_t)i);
    }
    mt_node_table_trim(&t);
    CU_ASSERT_EQUAL(t.n, n - gone);
    for (size_t i = 0; i < n; i++) {
        snprintf(id, sizeof(id), "node-%zu", i);
        nd = mt_node_table_find(&t, id);
        if (i < gone) {
            CU_ASSERT_PTR_NULL(nd);
        } else {
            CU_ASSERT(nd && strcmp(nd->id, id) == 0);
        }
    }
    /* A forgotten id registers anew and is found again. */
    nd = add_node(&t, "node-0", 2, 1);
    CU_ASSERT_PTR_EQUAL(mt_node_table_find(&t, "node-0"), nd);
    CU_ASSERT_EQUAL(t.n, n - gone + 1);
    mt_node_table_release(&t);
}

/* expire trims: the deaths it causes push the oldest dead nodes out. */
static void test_expire_trims(void)
{
    struct mt_node_table t;
    char id[32];

    mt_node_table_init(&t);
    for (size_t i = 0; i < MT_NODE_TABLE_MAX_DEAD; i++) {
        snprintf(id, sizeof(id), "old-%zu", i);
        mt_node_table_mark_dead(&t, add_node(&t, id, 1, 0), "test", 0);
    }
    add_node(&t, "late-0", 1, 100);
    add_node(&t, "late-1", 1, 100);
    add_node(&t, "fresh", 1, 5000);
    CU_ASSERT_EQUAL(mt_node_table_expire(&t, 5000, 5000, 1000, NULL, NULL), 2);
    CU_ASSERT_EQUAL(mt_node_table_count(&t, MT_NODE_DEAD),
                    MT_NODE_TABLE_MAX_DEAD);
    CU_ASSERT_PTR_NULL(mt_node_table_find(&t, "old-0"));
    CU_ASSERT_PTR_NULL(mt_node_table_find(&t, "old-1"));
    CU_ASSERT_PTR_NOT_NULL(mt_node_table_find(&t, "old-2"));
    CU_ASSERT_PTR_NOT_NULL(mt_node_table_find(&t, "late-0"));
    CU_ASSERT_PTR_NOT_NULL(mt_node_table_find(&t, "late-1"));
    CU_ASSERT_EQUAL(mt_node_table_find(&t, "fresh")->state, MT_NODE_ALIVE);
    mt_node_table_release(&t);
}

static void test_set_gpus(void)
{
    struct mt_node_table t;
    struct mt_node_gpu v[MT_NODE_MAX_GPUS + 2];
    struct mt_node *n;

    mt_node_table_init(&t);
    n = add_node(&t, "g1", 4, 100);
    CU_ASSERT_PTR_NULL(n->gpus);
    CU_ASSERT_EQUAL(n->n_gpus, 0);
    memset(v, 0, sizeof(v));
    for (int i = 0; i < MT_NODE_MAX_GPUS + 2; i++) {
        v[i].index = i;
        snprintf(v[i].id, sizeof(v[i].id), "%d", i);
        v[i].mem_used = i;
        v[i].util_percent = -1;
    }
    mt_node_table_set_gpus(n, v, 2);
    CU_ASSERT_EQUAL_FATAL(n->n_gpus, 2);
    CU_ASSERT_STRING_EQUAL(n->gpus[1].id, "1");
    CU_ASSERT_EQUAL(n->gpus[1].mem_used, 1);
    CU_ASSERT_EQUAL(n->gpus[1].util_percent, -1);
    /* Replaced, not appended; capped at MT_NODE_MAX_GPUS. */
    mt_node_table_set_gpus(n, v, MT_NODE_MAX_GPUS + 2);
    CU_ASSERT_EQUAL(n->n_gpus, MT_NODE_MAX_GPUS);
    mt_node_table_set_gpus(n, v, 0);
    CU_ASSERT_EQUAL(n->n_gpus, 0);
    CU_ASSERT_PTR_NULL(n->gpus);
    mt_node_table_set_gpus(n, v, 1);
    mt_node_table_release(&t); /* frees the GPU figures too */
}

static void test_state_name(void)
{
    CU_ASSERT_STRING_EQUAL(mt_node_state_name(MT_NODE_ALIVE), "ALIVE");
    CU_ASSERT_STRING_EQUAL(mt_node_state_name(MT_NODE_DEAD), "DEAD");
    CU_ASSERT_STRING_EQUAL(mt_node_state_name((enum mt_node_state)0),
                           "UNKNOWN");
}

/* A live node's id is only taken with its credential; a dead one's anew. */
static void test_node_credential(void)
{
    struct mt_node_table t;
    struct reg_fixture f;
    struct mt_node *n;
    int err = 0;

    mt_node_table_init(&t);
    reg_init(&f, "n1", 4);
    f.reg.secret = "secret-one-0123456789";
    n = mt_node_table_register(&t, &f.reg, 0, 0, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    CU_ASSERT_TRUE(mt_node_secret_ok(n, "secret-one-0123456789"));
    CU_ASSERT_FALSE(mt_node_secret_ok(n, "secret-two-0123456789"));
    CU_ASSERT_FALSE(mt_node_secret_ok(n, ""));
    CU_ASSERT_FALSE(mt_node_secret_ok(n, NULL));
    f.reg.secret = "secret-two-0123456789";
    f.reg.address = "10.6.6.6:1";
    CU_ASSERT_PTR_NULL(mt_node_table_register(&t, &f.reg, 1, 1, NULL, &err));
    CU_ASSERT_EQUAL(err, -MT_EPERM);
    CU_ASSERT_STRING_EQUAL(n->address, "10.0.0.1:7000"); /* untouched */
    CU_ASSERT_TRUE(mt_node_table_speaks_for(&t, "n1",
                                            "secret-one-0123456789"));
    CU_ASSERT_FALSE(mt_node_table_speaks_for(&t, "n1",
                                             "secret-two-0123456789"));
    CU_ASSERT_TRUE(mt_node_table_speaks_for(&t, "nobody", NULL));
    f.reg.secret = "secret-one-0123456789"; /* its own: refreshed */
    CU_ASSERT_PTR_EQUAL(mt_node_table_register(&t, &f.reg, 2, 2, NULL, &err),
                        n);
    mt_node_table_mark_dead(&t, n, "gone", 3);
    f.reg.secret = "secret-two-0123456789"; /* a restarted worker */
    CU_ASSERT_PTR_EQUAL(mt_node_table_register(&t, &f.reg, 3, 3, NULL, &err),
                        n);
    CU_ASSERT_TRUE(mt_node_secret_ok(n, "secret-two-0123456789"));
    CU_ASSERT_FALSE(mt_node_secret_ok(n, "secret-one-0123456789"));
    reg_release(&f);
    mt_node_table_release(&t);
}

CU_TestInfo mt_test_node_table[] = {
    {"node_credential", test_node_credential},
    {"register_new", test_register_new},
    {"register_optional_fields", test_register_optional_fields},
    {"register_invalid", test_register_invalid},
    {"reregister", test_reregister},
    {"reregister_revives_dead", test_reregister_revives_dead},
    {"report", test_report},
    {"set_gpus", test_set_gpus},
    {"report_clamps", test_report_clamps},
    {"report_ignores_undeclared", test_report_ignores_undeclared},
    {"report_unknown_or_dead", test_report_unknown_or_dead},
    {"mark_dead_twice", test_mark_dead_twice},
    {"expire", test_expire},
    {"expire_without_callback", test_expire_without_callback},
    {"totals", test_totals},
    {"trim", test_trim},
    {"find_many", test_find_many},
    {"expire_trims", test_expire_trims},
    {"state_name", test_state_name},
    CU_TEST_INFO_NULL,
};
