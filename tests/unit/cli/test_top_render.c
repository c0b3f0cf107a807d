/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_top_render.c -- `manta top`'s frames (cli/top_render.h): bars,
 * durations and the infeasible count as figures, then whole frames from
 * a fixed cluster: what they show, that no line passes the width or the
 * frame the height, that long lists end in "... N more", and that a task
 * name cannot put an escape on the terminal.
 */
#include <stdio.h>
#include <string.h>

#include "cli/top_render.h"
#include "tests/unit/unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GIB (1024.0 * 1024 * 1024)

/* ---- figures ------------------------------------------------------------- */

static void test_bar(void)
{
    static const struct {
        double ratio;
        int inner;
        const char *want;
    } cases[] = {
        {0, 10, "[..........]   0%"},
        {0.48, 10, "[#####.....]  48%"},
        {1, 10, "[##########] 100%"},
        {0.001, 10, "[#.........]   0%"},  /* some use shows */
        {0.99, 10, "[#########.]  99%"},   /* only full use fills */
        {7, 4, "[####] 100%"},
        {-1, 4, "[....]   0%"},
        {0.5, 0, "[#]  50%"},
    };
    char buf[64];

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        mt_top_bar(cases[i].ratio, cases[i].inner, buf, sizeof(buf));
        CU_ASSERT_STRING_EQUAL(buf, cases[i].want);
        if (strcmp(buf, cases[i].want))
            fprintf(stderr, "bar(%g, %d) = '%s'\n", cases[i].ratio,
                    cases[i].inner, buf);
    }
    mt_top_bar(0.0 / 0.0, 3, buf, sizeof(buf));
    CU_ASSERT_STRING_EQUAL(buf, "[...]   0%");
}

static void test_elapsed(void)
{
    static const struct {
        long long ms;
        const char *want;
    } cases[] = {
        {-5, "0s"},           {0, "0s"},           {42999, "42s"},
        {184000, "3m04s"},    {3720000, "1h02m"},  {97200000, "1d03h"},
        {86400000LL * 400, "400d00h"},
    };
    char buf[16];

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        mt_top_elapsed(cases[i].ms, buf, sizeof(buf));
        CU_ASSERT_STRING_EQUAL(buf, cases[i].want);
    }
}

static void test_infeasible(void)
{
    static const char *const demands[] = {
        "{CPU: 1}: 385+ pending tasks/actors",
        "{GPU: 8}: 3+ infeasible tasks/actors",
        "{TPU: 4} * 2 (STRICT_SPREAD): 1+ infeasible placement groups",
        "{CPU: 64}: 12+ infeasible tasks/actors",
        "nonsense + infeasible ",
        "",
    };

    CU_ASSERT_EQUAL(mt_top_infeasible(demands, ARRAY_SIZE(demands)), 16);
    CU_ASSERT_EQUAL(mt_top_infeasible(demands, 1), 0);
    CU_ASSERT_EQUAL(mt_top_infeasible(NULL, 0), 0);
}

static void test_sort(void)
{
    struct mt_top_task t[] = {
        {"t2", "", "n", 5}, {"t3", "", "n", 900}, {"t1", "", "n", 5},
        {"t4", "", "n", 0},
    };

    mt_top_tasks_sort(t, ARRAY_SIZE(t));
    CU_ASSERT_STRING_EQUAL(t[0].task_id, "t3");
    CU_ASSERT_STRING_EQUAL(t[1].task_id, "t1");
    CU_ASSERT_STRING_EQUAL(t[2].task_id, "t2");
    CU_ASSERT_STRING_EQUAL(t[3].task_id, "t4");
}

/* ---- frames -------------------------------------------------------------- */

static const char *const fixture_demands[] = {
    "{CPU: 1}: 3+ pending tasks/actors",
    "{GPU: 8}: 2+ infeasible tasks/actors",
};

static struct mt_top_node fixture_nodes[] = {
    {"n000000000000001", true,
     {{6, 8}, {1, 4}, {0, 0}, {4 * GIB, 16 * GIB}, {0, 2 * GIB}}, 0.37, 0.5},
    {"n000000000000002", true,
     {{8, 8}, {0, 0}, {4, 8}, {1 * GIB, 16 * GIB}, {1 * GIB, 2 * GIB}},
     -1, -1},
    {"n000000000000003", false,
     {{0, 8}, {0, 0}, {0, 0}, {0, 16 * GIB}, {0, 2 * GIB}}, -1, -1},
};

static struct mt_top_task fixture_tasks[] = {
    {"t00000000000000a", "train", "n000000000000001", 3720000},
    {"t00000000000000b", "", "n000000000000002", 184000},
    {"t00000000000000c", "eval", "n000000000000001", 1000},
};

static void fixture(struct mt_top_view *v)
{
    memset(v, 0, sizeof(*v));
    v->cluster_id = "c0ffee";
    v->head_address = "127.0.0.1:6380";
    v->clock = "12:34:56";
    v->nodes_alive = 2;
    v->nodes_dead = 1;
    v->total[MT_TOP_CPU] = (struct mt_top_res){14, 16};
    v->total[MT_TOP_GPU] = (struct mt_top_res){1, 4};
    v->total[MT_TOP_TPU] = (struct mt_top_res){4, 8};
    v->total[MT_TOP_MEM] = (struct mt_top_res){5 * GIB, 32 * GIB};
    v->total[MT_TOP_OBJ] = (struct mt_top_res){1 * GIB, 4 * GIB};
    v->running = 3;
    v->pending = 5;
    v->infeasible = 2;
    v->demands = fixture_demands;
    v->n_demands = ARRAY_SIZE(fixture_demands);
    v->nodes = fixture_nodes;
    v->n_nodes = ARRAY_SIZE(fixture_nodes);
    v->tasks = fixture_tasks;
    v->n_tasks = ARRAY_SIZE(fixture_tasks);
}

/* The longest line of text, and its number of lines. */
static size_t longest(const char *text, size_t *n_lines)
{
    size_t max = 0, n = 0;
    const char *nl;

    for (; (nl = strchr(text, '\n')); text = nl + 1, n++)
        if ((size_t)(nl - text) > max)
            max = (size_t)(nl - text);
    *n_lines = n;
    return max;
}

/* The line holding needle, as an owned copy in buf; "" when none. */
static const char *line_with(const char *text, const char *needle,
                             char *buf, size_t len)
{
    const char *p = strstr(text, needle), *start, *end;

    buf[0] = '\0';
    if (!p)
        return buf;
    for (start = p; start > text && start[-1] != '\n'; start--)
        ;
    end = strchr(p, '\n');
    snprintf(buf, len, "%.*s", (int)(end - start), start);
    return buf;
}

static void test_frame_plain(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    struct mt_top_view v;
    const char *s;
    char line[512];
    size_t n_lines, n;

    fixture(&v);
    n = mt_top_render(&v, MT_TOP_PLAIN_WIDTH, 0, &sb);
    s = mt_strbuf_str(&sb);
    longest(s, &n_lines);
    CU_ASSERT_EQUAL(n, n_lines);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "cluster c0ffee - head 127.0.0.1:6380"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "Nodes: 2 alive, 1 dead    Tasks: 3 "
                                     "running, 5 pending (2 infeasible)"));
    CU_ASSERT_STRING_EQUAL(line_with(s, "CPU  [", line, sizeof(line)),
                           "CPU  [##################..]  88%  14/16");
    CU_ASSERT_STRING_EQUAL(line_with(s, "MEM  [", line, sizeof(line)),
                           "MEM  [###.................]  16%  "
                           "5.0GiB/32.0GiB");
    CU_ASSERT_PTR_NOT_NULL(strstr(s, " {GPU: 8}: 2+ infeasible"));
    /* Node rows: bars of 10, "-" where a node has none, host figures. */
    line_with(s, "n000000000000001", line, sizeof(line));
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "ALIVE  [########..]  75%"));
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "[###.......]  25%"));
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "cpu 37% gpu 50%"));
    line_with(s, "n000000000000002  ", line, sizeof(line));
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "[##########] 100%"));
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "cpu ?"));
    line_with(s, "n000000000000003", line, sizeof(line));
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "DEAD"));
    CU_ASSERT_PTR_NULL(strstr(line, "["));
    /* Tasks in the given order, with elapsed time and node. */
    CU_ASSERT_STRING_EQUAL(line_with(s, "t00000000000000a", line,
                                     sizeof(line)),
                           "t00000000000000a    1h02m  n000000000000001  "
                           "train");
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "t00000000000000b    3m04s  "
                                     "n000000000000002  -\n"));
    CU_ASSERT_TRUE(strstr(s, "t00000000000000a") <
                   strstr(s, "t00000000000000c"));
    CU_ASSERT_PTR_NULL(strstr(s, "more"));
    mt_strbuf_release(&sb);
}

static void test_frame_fits_width(void)
{
    static const int widths[] = {200, 120, 80, 60, 30, 1};
    struct mt_top_view v;

    fixture(&v);
    for (size_t i = 0; i < ARRAY_SIZE(widths); i++) {
        struct mt_strbuf sb = MT_STRBUF_INIT;
        size_t n_lines, max;

        mt_top_render(&v, widths[i], 0, &sb);
        max = longest(mt_strbuf_str(&sb), &n_lines);
        CU_ASSERT_TRUE(max <= (size_t)widths[i]);
        if (max > (size_t)widths[i])
            fprintf(stderr, "width %d: a line of %zu\n", widths[i], max);
        /* The node table uses the room it has: bars grow with it. */
        if (widths[i] == 200)
            CU_ASSERT_PTR_NOT_NULL(strstr(mt_strbuf_str(&sb),
                                          "[####################]"));
        mt_strbuf_release(&sb);
    }
}

static void test_frame_fits_height(void)
{
    struct mt_top_node nodes[40];
    struct mt_top_task tasks[30];
    char ids[70][20];
    struct mt_top_view v;

    fixture(&v);
    for (size_t i = 0; i < ARRAY_SIZE(nodes); i++) {
        snprintf(ids[i], sizeof(ids[i]), "n%015zu", i);
        nodes[i] = fixture_nodes[0];
        nodes[i].node_id = ids[i];
    }
    for (size_t i = 0; i < ARRAY_SIZE(tasks); i++) {
        snprintf(ids[40 + i], sizeof(ids[i]), "t%015zu", i);
        tasks[i] = (struct mt_top_task){ids[40 + i], "x", ids[0],
                                        (int64_t)(100 - i) * 1000};
    }
    v.nodes = nodes;
    v.n_nodes = ARRAY_SIZE(nodes);
    v.tasks = tasks;
    v.n_tasks = ARRAY_SIZE(tasks);
    v.running = 50;
    for (int h = 30; h >= 1; h -= 29) {
        struct mt_strbuf sb = MT_STRBUF_INIT;
        size_t n_lines, n = mt_top_render(&v, 120, h, &sb);
        const char *s = mt_strbuf_str(&sb);

        longest(s, &n_lines);
        CU_ASSERT_EQUAL(n, n_lines);
        CU_ASSERT_TRUE(n <= (size_t)h);
        if (h == 30) {
            CU_ASSERT_EQUAL(n, 30);
            CU_ASSERT_PTR_NOT_NULL(strstr(s, "more nodes"));
            CU_ASSERT_PTR_NOT_NULL(strstr(s, "more running"));
            CU_ASSERT_PTR_NOT_NULL(strstr(s, "t000000000000000"));
        }
        mt_strbuf_release(&sb);
    }
}

static void test_frame_more_running(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    struct mt_top_view v;

    fixture(&v);
    v.running = 1003; /* listed: 3 of them */
    mt_top_render(&v, 0, 0, &sb);
    CU_ASSERT_PTR_NOT_NULL(strstr(mt_strbuf_str(&sb), "... 1000 more running"));
    mt_strbuf_release(&sb);
}

static void test_frame_empty(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    struct mt_top_view v;
    const char *s;

    memset(&v, 0, sizeof(v));
    mt_top_render(&v, 80, 24, &sb);
    s = mt_strbuf_str(&sb);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "cluster ? - head ?"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "(no resources)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "Demands: (none)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "(no nodes)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "(no running tasks)"));
    mt_strbuf_release(&sb);
}

static void test_frame_sanitizes(void)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    struct mt_top_task t = {"t1", "evil\033[2J\tname\xc3\xa9", "n\nx", 0};
    const char *demand = "{CPU: 1}: 1+ pending \033]0;title\a";
    struct mt_top_view v;
    const char *s;

    fixture(&v);
    v.note = "note\r";
    v.tasks = &t;
    v.n_tasks = 1;
    v.demands = &demand;
    v.n_demands = 1;
    mt_top_render(&v, 0, 0, &sb);
    s = mt_strbuf_str(&sb);
    for (const char *p = s; *p; p++) {
        unsigned char ch = (unsigned char)*p;

        CU_ASSERT_TRUE(ch == '\n' || (ch >= 0x20 && ch < 0x7f));
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "evil?[2J?name??"));
    mt_strbuf_release(&sb);
}

CU_TestInfo mt_test_top_render[] = {
    {"bar", test_bar},
    {"elapsed", test_elapsed},
    {"infeasible", test_infeasible},
    {"sort", test_sort},
    {"frame_plain", test_frame_plain},
    {"frame_fits_width", test_frame_fits_width},
    {"frame_fits_height", test_frame_fits_height},
    {"frame_more_running", test_frame_more_running},
    {"frame_empty", test_frame_empty},
    {"frame_sanitizes", test_frame_sanitizes},
    CU_TEST_INFO_NULL,
};
