/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_accel_env.c -- the accelerator env contract: CUDA_VISIBLE_DEVICES
 * (notes/accelerators.md 4.1), then every TPU case of the golden table
 * tests/golden/tpu_env.txt (partial-host grants, host- and device-centric
 * gangs, one-host slices, v7x, multislice), then the properties no single
 * row shows (one address per process, gang_all == per-member calls) and
 * rejected inputs.
 *
 * The TPU goldens live only in that table, which the integration tests
 * read too; its header says how a case reads. Each case is computed here
 * and compared exactly: the variables are also counted, so nothing extra
 * leaks into a member's environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "sched/accel_env.h"
#include "tests/unit/unit.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

#ifndef MT_TPU_GOLDEN_PATH
#error "tests/unit/sched/CMakeLists.txt passes MT_TPU_GOLDEN_PATH"
#endif

static struct mt_tpu_slice slice_of(const char *pod, const char *topo,
                                    uint32_t cph)
{
    struct mt_tpu_slice s;

    memset(&s, 0, sizeof(s));
    CU_ASSERT_EQUAL_FATAL(mt_tpu_slice_parse(pod, topo, cph, &s), 0);
    return s;
}

/* ---------------------------------------------------------------------
 * struct mt_env
 * --------------------------------------------------------------------- */

static void test_env_basics(void)
{
    struct mt_env e;
    int i;
    char name[16];

    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_env_set(&e, "A", "1"), 0);
    CU_ASSERT_EQUAL(mt_env_set(&e, "B", NULL), 0);
    CU_ASSERT_EQUAL(mt_env_set(&e, "A", "2"), 0); /* replaced in place */
    CU_ASSERT_EQUAL(e.n, 2);
    CU_ASSERT_STRING_EQUAL(e.vars[0].name, "A");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "A"), "2");
    CU_ASSERT_PTR_NULL(mt_env_get(&e, "B"));
    CU_ASSERT_PTR_NOT_NULL(mt_env_find(&e, "B"));
    CU_ASSERT_PTR_NULL(mt_env_find(&e, "C"));
    CU_ASSERT_EQUAL(mt_env_set(&e, "B", "x"), 0);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "B"), "x");
    CU_ASSERT_EQUAL(mt_env_set(&e, "A", NULL), 0);
    CU_ASSERT_PTR_NULL(mt_env_get(&e, "A"));
    CU_ASSERT_EQUAL(mt_env_set(&e, "", "1"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_env_set(&e, "A=B", "1"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_env_set(&e, NULL, "1"), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_env_set(NULL, "A", "1"), -MT_EINVAL);
    for (i = 0; i < 100; i++) { /* grows past the first allocation */
        snprintf(name, sizeof(name), "V%d", i);
        CU_ASSERT_EQUAL(mt_env_set(&e, name, name), 0);
    }
    CU_ASSERT_EQUAL(e.n, 102);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "V99"), "V99");
    mt_env_release(&e);
    CU_ASSERT_EQUAL(e.n, 0);
    mt_env_release(&e); /* twice is fine */
    mt_env_release(NULL);
    mt_env_array_free(NULL, 3);
}

/* ---------------------------------------------------------------------
 * GPU (notes 4.1)
 * --------------------------------------------------------------------- */

static void test_gpu(void)
{
    static const struct {
        uint32_t ids[4];
        size_t n;
        int rc;
        const char *want;
    } rows[] = {
        {{0}, 0, 0, ""},             /* no GPU: "" hides the node's GPUs */
        {{0}, 1, 0, "0"},
        {{0, 1}, 2, 0, "0,1"},       /* Slurm step0 */
        {{2}, 1, 0, "2"},            /* step1; also a 0.25 share of GPU 2 */
        {{0, 2}, 2, 0, "0,2"},
        {{3, 1}, 2, 0, "3,1"},       /* grant order is kept */
        {{0, 1, 2, 3}, 4, 0, "0,1,2,3"},
        {{1, 1}, 2, -MT_EINVAL, NULL},
    };
    struct mt_env e;
    size_t i;

    for (i = 0; i < N_ELEMS(rows); i++) {
        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_gpu(rows[i].ids, rows[i].n, &e),
                        rows[i].rc);
        if (rows[i].rc == 0) {
            CU_ASSERT_EQUAL(e.n, 1);
            CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "CUDA_VISIBLE_DEVICES"),
                                   rows[i].want);
        } else {
            CU_ASSERT_EQUAL(e.n, 0);
        }
        mt_env_release(&e);
    }
    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_gpu(NULL, 0, &e), 0);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "CUDA_VISIBLE_DEVICES"), "");
    CU_ASSERT_EQUAL(mt_accel_env_gpu(NULL, 2, &e), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_accel_env_gpu(NULL, 0, NULL), -MT_EINVAL);
    mt_env_release(&e);
}

/* Four tasks sharing GPU 3 at 0.25 each all see device 3. */
static void test_gpu_fractional(void)
{
    const uint32_t shared = 3;
    struct mt_env e;
    int i;

    for (i = 0; i < 4; i++) {
        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_gpu(&shared, 1, &e), 0);
        CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "CUDA_VISIBLE_DEVICES"), "3");
        mt_env_release(&e);
    }
}

/* ---------------------------------------------------------------------
 * The golden table (tests/golden/tpu_env.txt)
 * --------------------------------------------------------------------- */

#define G_TEXT 512     /* longest value or host list */
#define G_VARS 40      /* variables per case */
#define G_HOSTS 8
#define G_CHIPS 8

enum g_kind {
    G_SET,    /* NAME=VALUE */
    G_UNSET,  /* -NAME: present with a NULL value */
    G_ABSENT, /* !NAME: not in the env */
};

struct g_var {
    char name[64];
    char value[G_TEXT];
    enum g_kind kind;
};

/* One case, as read: the call to make and what it must give. */
struct g_case {
    char name[64];
    int line;                  /* of its "case" line */
    char pod[32], topo[32];
    uint32_t cph;
    bool grant, gang;
    uint32_t chips[G_CHIPS];
    size_t n_chips;
    enum mt_tpu_launch launch;
    char host_text[G_TEXT];    /* the hosts, NUL-separated */
    const char *hosts[G_HOSTS];
    size_t n_hosts;
    uint32_t host, local;
    char slice_name[64];
    uint32_t port_base, master_port, megascale_port;
    uint32_t num_slices, slice_id;
    char coord[64];
    struct g_var vars[G_VARS];
    size_t n_vars;
};

static bool copy_text(char *dst, size_t len, const char *src)
{
    if (!src || strlen(src) >= len)
        return false;
    memcpy(dst, src, strlen(src) + 1);
    return true;
}

static bool parse_u32(const char *text, uint32_t *out)
{
    char *end;
    unsigned long v;

    if (!text || !*text)
        return false;
    v = strtoul(text, &end, 10);
    *out = (uint32_t)v;
    return *end == '\0' && v <= UINT32_MAX;
}

/* "a,b,c" into out[]; RET false when malformed or too many. */
static bool parse_chips(struct g_case *c, char *text)
{
    char *save = NULL, *tok;

    c->n_chips = 0;
    for (tok = strtok_r(text, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save))
        if (c->n_chips == G_CHIPS ||
            !parse_u32(tok, &c->chips[c->n_chips++]))
            return false;
    return c->n_chips > 0;
}

static bool parse_hosts(struct g_case *c, const char *text)
{
    char *save = NULL, *tok;

    if (!copy_text(c->host_text, sizeof(c->host_text), text))
        return false;
    c->n_hosts = 0;
    for (tok = strtok_r(c->host_text, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (c->n_hosts == G_HOSTS)
            return false;
        c->hosts[c->n_hosts++] = tok;
    }
    return c->n_hosts > 0;
}

static bool parse_gang(struct g_case *c, char **w, size_t n)
{
    if (n != 3)
        return false;
    c->gang = true;
    c->launch = strcmp(w[1], "host") == 0     ? MT_TPU_LAUNCH_HOST
                : strcmp(w[1], "device") == 0 ? MT_TPU_LAUNCH_DEVICE
                                              : 0;
    return c->launch != 0 && parse_hosts(c, w[2]);
}

static bool parse_multislice(struct g_case *c, char **w, size_t n)
{
    if (n < 3 || n > 5 || !parse_u32(w[1], &c->num_slices) ||
        !parse_u32(w[2], &c->slice_id))
        return false;
    if (n > 3 && !copy_text(c->coord, sizeof(c->coord), w[3]))
        return false;
    return n < 5 || parse_u32(w[4], &c->megascale_port);
}

/* An input line, split into n words w[0..n-1]. */
static bool parse_input(struct g_case *c, char **w, size_t n)
{
    if (strcmp(w[0], "slice") == 0)
        return n >= 2 && n <= 4 &&
               copy_text(c->pod, sizeof(c->pod), w[1]) &&
               (n < 3 || copy_text(c->topo, sizeof(c->topo), w[2])) &&
               (n < 4 || parse_u32(w[3], &c->cph));
    if (strcmp(w[0], "grant") == 0)
        return n == 2 && (c->grant = true) && parse_chips(c, w[1]);
    if (strcmp(w[0], "gang") == 0)
        return parse_gang(c, w, n);
    if (strcmp(w[0], "member") == 0)
        return n == 3 && parse_u32(w[1], &c->host) &&
               parse_u32(w[2], &c->local);
    if (strcmp(w[0], "name") == 0)
        return n == 2 && copy_text(c->slice_name, sizeof(c->slice_name),
                                   w[1]);
    if (strcmp(w[0], "ports") == 0)
        return n == 3 && parse_u32(w[1], &c->port_base) &&
               parse_u32(w[2], &c->master_port);
    if (strcmp(w[0], "multislice") == 0)
        return parse_multislice(c, w, n);
    return false;
}

/* NAME=VALUE, -NAME or !NAME. */
static bool parse_var(struct g_case *c, const char *line)
{
    struct g_var *v;
    const char *eq = strchr(line, '=');
    size_t len;

    if (c->n_vars == G_VARS)
        return false;
    v = &c->vars[c->n_vars++];
    v->kind = *line == '-' ? G_UNSET : *line == '!' ? G_ABSENT : G_SET;
    if (v->kind != G_SET)
        return copy_text(v->name, sizeof(v->name), line + 1) &&
               !strchr(v->name, '=');
    len = eq ? (size_t)(eq - line) : 0;
    if (len == 0 || len >= sizeof(v->name))
        return false;
    memcpy(v->name, line, len);
    v->name[len] = '\0';
    return copy_text(v->value, sizeof(v->value), eq + 1);
}

static bool is_var_line(const char *line)
{
    return *line == '-' || *line == '!' || (*line >= 'A' && *line <= 'Z');
}

/* A line inside a case (no trailing newline, not blank, not a comment). */
static bool parse_line(struct g_case *c, char *line)
{
    char *w[6], *save = NULL;
    size_t n = 0;

    if (is_var_line(line))
        return parse_var(c, line);
    for (w[n] = strtok_r(line, " \t", &save); w[n] && n < N_ELEMS(w) - 1;
         w[n] = strtok_r(NULL, " \t", &save))
        n++;
    return n > 0 && !w[n] && parse_input(c, w, n);
}

static void golden_check_var(const struct g_case *c, const struct g_var *want,
                             const struct mt_env *env)
{
    const struct mt_env_var *v = mt_env_find(env, want->name);
    bool ok;

    if (want->kind == G_ABSENT)
        ok = v == NULL;
    else if (want->kind == G_UNSET)
        ok = v && !v->value;
    else
        ok = v && v->value && strcmp(v->value, want->value) == 0;
    if (!ok)
        fprintf(stderr, "\ncase %s (line %d): %s is %s%s%s, want %s%s\n",
                c->name, c->line, want->name, !v ? "absent" : "\"",
                !v ? "" : v->value ? v->value : "(unset)", v ? "\"" : "",
                want->kind == G_ABSENT  ? "absent"
                : want->kind == G_UNSET ? "unset"
                                        : "=",
                want->kind == G_SET ? want->value : "");
    CU_ASSERT(ok);
}

/* Compute the case's env and compare it with the row, exactly. */
static void golden_run(struct g_case *c)
{
    struct mt_tpu_slice s;
    struct mt_tpu_gang g;
    struct mt_env e;
    size_t i, named = 0;
    int rc;

    memset(&s, 0, sizeof(s));
    rc = mt_tpu_slice_parse(c->pod, c->topo[0] ? c->topo : NULL, c->cph, &s);
    mt_env_init(&e);
    if (rc == 0 && c->grant) {
        rc = mt_accel_env_tpu_host(&s, c->chips, c->n_chips, &e);
    } else if (rc == 0) {
        g = (struct mt_tpu_gang){
            .slice = &s, .hosts = c->hosts, .n_hosts = c->n_hosts,
            .slice_name = c->slice_name[0] ? c->slice_name : NULL,
            .launch = c->launch, .port_base = (uint16_t)c->port_base,
            .master_port = (uint16_t)c->master_port,
            .num_slices = c->num_slices, .slice_id = c->slice_id,
            .coordinator = c->coord[0] ? c->coord : NULL,
            .megascale_port = (uint16_t)c->megascale_port};
        rc = mt_accel_env_tpu_gang(&g, c->host, c->local, &e);
    }
    if (rc != 0)
        fprintf(stderr, "\ncase %s (line %d): %s\n", c->name, c->line,
                mt_strerror(rc));
    CU_ASSERT_EQUAL(rc, 0);
    for (i = 0; i < c->n_vars; i++) {
        golden_check_var(c, &c->vars[i], &e);
        named += c->vars[i].kind != G_ABSENT;
    }
    if (e.n != named)
        fprintf(stderr, "\ncase %s (line %d): %zu variables, the row names "
                "%zu\n", c->name, c->line, e.n, named);
    CU_ASSERT_EQUAL(e.n, named);
    mt_env_release(&e);
}

/* Close the case being read: check its shape, run it. */
static void golden_end(struct g_case *c, size_t *cases)
{
    if (!c->name[0])
        return;
    if (!c->pod[0] || c->grant == c->gang || c->n_vars == 0) {
        fprintf(stderr, "\ncase %s (line %d): needs a slice, one of grant "
                "or gang, and variables\n", c->name, c->line);
        CU_FAIL("malformed golden case");
    } else {
        golden_run(c);
        (*cases)++;
    }
    memset(c, 0, sizeof(*c));
}

/* Strip the newline and trailing blanks; RET the first non-blank. */
static char *trim(char *line)
{
    size_t n = strlen(line);

    while (n && (line[n - 1] == '\n' || line[n - 1] == ' ' ||
                 line[n - 1] == '\t' || line[n - 1] == '\r'))
        line[--n] = '\0';
    return line + strspn(line, " \t");
}

/* One line of the file; RET false on a syntax error. */
static bool golden_line(struct g_case *c, char *line, int lineno,
                        size_t *cases)
{
    if (!*line) {
        golden_end(c, cases);
        return true;
    }
    if (*line == '#')
        return true;
    if (strncmp(line, "case ", 5) == 0) {
        golden_end(c, cases);
        c->line = lineno;
        return copy_text(c->name, sizeof(c->name), trim(line + 5)) &&
               c->name[0];
    }
    return c->name[0] && parse_line(c, line);
}

static void test_golden_table(void)
{
    char buf[2048];
    struct g_case *c = calloc(1, sizeof(*c));
    FILE *f = fopen(MT_TPU_GOLDEN_PATH, "r");
    size_t cases = 0;
    int lineno = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    if (!f)
        perror(MT_TPU_GOLDEN_PATH);
    CU_ASSERT_PTR_NOT_NULL(f);
    while (f && fgets(buf, sizeof(buf), f)) {
        lineno++;
        if (!strchr(buf, '\n') && !feof(f)) {
            fprintf(stderr, "\n%s:%d: line too long\n", MT_TPU_GOLDEN_PATH,
                    lineno);
            CU_FAIL("golden line too long");
            break;
        }
        if (!golden_line(c, trim(buf), lineno, &cases)) {
            fprintf(stderr, "\n%s:%d: cannot read this line\n",
                    MT_TPU_GOLDEN_PATH, lineno);
            CU_FAIL("golden syntax");
            memset(c, 0, sizeof(*c));
        }
    }
    golden_end(c, &cases);
    /* The table is whole: a truncated file cannot pass unnoticed. */
    CU_ASSERT(cases >= 40);
    if (f)
        fclose(f);
    free(c);
}

/* ---------------------------------------------------------------------
 * TPU: rejected inputs of a standalone grant
 * --------------------------------------------------------------------- */

static void test_tpu_host_errors(void)
{
    static const struct {
        const char *pod;
        uint32_t chips[8];
        size_t n;
        int rc;
    } rows[] = {
        {"v6e-8", {0, 1, 2}, 3, -MT_EINVAL},  /* TPU 3 chips */
        {"v6e-8", {0, 1, 2, 3, 4, 5}, 6, -MT_EINVAL},
        {"v6e-8", {1, 2}, 2, -MT_EINVAL},     /* not NUMA-aligned */
        {"v6e-8", {2, 3, 4, 5}, 4, -MT_EINVAL},
        {"v6e-8", {1, 1}, 2, -MT_EINVAL},
        {"v6e-8", {0}, 0, -MT_EINVAL},
        {"v6e-16", {0, 1, 2, 3, 4, 5, 6, 7}, 8, -MT_ETOOBIG},
        {"v4-16", {4}, 1, -MT_ERANGE},
    };
    struct mt_tpu_slice s;
    struct mt_env e;
    size_t i;

    for (i = 0; i < N_ELEMS(rows); i++) {
        s = slice_of(rows[i].pod, NULL, 0);
        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_tpu_host(&s, rows[i].chips, rows[i].n,
                                              &e),
                        rows[i].rc);
        CU_ASSERT_EQUAL(e.n, 0); /* nothing half-written */
        mt_env_release(&e);
    }
    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_host(NULL, rows[0].chips, 1, &e),
                    -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_host(&s, NULL, 1, &e), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_host(&s, rows[0].chips, 1, NULL),
                    -MT_EINVAL);
    mt_env_release(&e);
}

/* ---------------------------------------------------------------------
 * Slice gangs
 * --------------------------------------------------------------------- */

static const char *const h4[] = {"h0", "h1", "h2", "h3"};

/*
 * A one-host slice is "localhost" to its own members, MASTER_ADDR
 * included; across slices the coordinator keeps its real address.
 */
static void test_master_addr(void)
{
    static const char *const one[] = {"10.0.0.5"};
    struct mt_tpu_slice s = slice_of("v4-8", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = one, .n_hosts = 1,
                            .launch = MT_TPU_LAUNCH_HOST};

    CU_ASSERT_STRING_EQUAL(mt_tpu_gang_master_addr(&g), "localhost");
    g.num_slices = 2;
    CU_ASSERT_STRING_EQUAL(mt_tpu_gang_master_addr(&g), "10.0.0.5");
    g.coordinator = "10.0.9.9";
    CU_ASSERT_STRING_EQUAL(mt_tpu_gang_master_addr(&g), "10.0.9.9");
    s = slice_of("v6e-16", NULL, 0);
    g = (struct mt_tpu_gang){.slice = &s, .hosts = h4, .n_hosts = 4};
    CU_ASSERT_STRING_EQUAL(mt_tpu_gang_master_addr(&g), "h0");
    g.n_hosts = 0;
    CU_ASSERT_PTR_NULL(mt_tpu_gang_master_addr(&g));
    CU_ASSERT_PTR_NULL(mt_tpu_gang_master_addr(NULL));
}

/* notes 6.2: one address per process, unique, task ids 0..N-1. */
static void test_device_centric_invariants(void)
{
    struct mt_tpu_slice s = slice_of("v6e-16", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = h4, .n_hosts = 4,
                            .launch = MT_TPU_LAUNCH_DEVICE,
                            .port_base = 8070, .master_port = 29500};
    struct mt_env *envs = NULL;
    char *list, *tok, *save, *seen[16];
    size_t n = 0, i, j, count = 0;
    uint32_t task_seen = 0;

    CU_ASSERT_EQUAL_FATAL(mt_accel_env_tpu_gang_all(&g, &envs, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 16);
    list = strdup(mt_env_get(&envs[0], "TPU_PROCESS_ADDRESSES"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(list);
    for (tok = strtok_r(list, ",", &save); tok && count < 16;
         tok = strtok_r(NULL, ",", &save))
        seen[count++] = tok;
    CU_ASSERT_PTR_NULL(tok);
    CU_ASSERT_EQUAL(count, (size_t)atoi(mt_env_get(&envs[0], "WORLD_SIZE")));
    for (i = 0; i < count; i++)
        for (j = 0; j < i; j++)
            CU_ASSERT_NOT_EQUAL(strcmp(seen[i], seen[j]), 0);
    for (i = 0; i < n; i++) {
        task_seen |= 1u << atoi(mt_env_get(&envs[i], "CLOUD_TPU_TASK_ID"));
        /* Every member gets the same slice-wide values. */
        CU_ASSERT_STRING_EQUAL(mt_env_get(&envs[i], "TPU_PROCESS_ADDRESSES"),
                               mt_env_get(&envs[0], "TPU_PROCESS_ADDRESSES"));
        CU_ASSERT_STRING_EQUAL(mt_env_get(&envs[i], "TORCH_TPU_TOPOLOGY"),
                               "4,4,1");
    }
    CU_ASSERT_EQUAL(task_seen, 0xffff);
    /* Member i of the array is (host i / 4, local i % 4). */
    CU_ASSERT_STRING_EQUAL(mt_env_get(&envs[6], "TPU_WORKER_ID"), "1");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&envs[6], "TPU_VISIBLE_CHIPS"), "2");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&envs[6], "TPU_PROCESS_PORT"), "8072");
    free(list);
    mt_env_array_free(envs, n);
}

/* Ports chosen by the scheduler per host; IPv6 literals get brackets. */
static void test_ports_and_ipv6(void)
{
    static const char *const h2[] = {"h0", "h1"};
    static const char *const v6[] = {"fd00::1", "fd00::2"};
    static const uint16_t ports[] = {9000, 9001, 9002, 9003,
                                     9103, 9102, 9101, 9100};
    struct mt_tpu_slice s = slice_of("v5p-16", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = h2, .n_hosts = 2,
                            .launch = MT_TPU_LAUNCH_DEVICE, .ports = ports,
                            .master_port = 12345};
    struct mt_env e;

    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 1, 3, &e), 0);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "TPU_PROCESS_PORT"), "9100");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "TPU_PROCESS_ADDRESSES"),
                           "h0:9000,h0:9001,h0:9002,h0:9003,"
                           "h1:9103,h1:9102,h1:9101,h1:9100");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "MASTER_PORT"), "12345");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "TPU_ACCELERATOR_TYPE"), "v5p-16");
    mt_env_release(&e);

    g.hosts = v6;
    g.ports = NULL;
    g.port_base = 8471;
    mt_env_init(&e);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 0, 0, &e), 0);
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "TPU_PROCESS_ADDRESSES"),
                           "[fd00::1]:8471,[fd00::1]:8472,[fd00::1]:8473,"
                           "[fd00::1]:8474,[fd00::2]:8471,[fd00::2]:8472,"
                           "[fd00::2]:8473,[fd00::2]:8474");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "TPU_WORKER_HOSTNAMES"),
                           "fd00::1,fd00::2");
    CU_ASSERT_STRING_EQUAL(mt_env_get(&e, "MASTER_ADDR"), "fd00::1");
    mt_env_release(&e);
}

/* gang_all gives exactly what per-member calls give. */
static void test_gang_all(void)
{
    struct mt_tpu_slice s = slice_of("v6e-16", NULL, 0);
    struct mt_tpu_gang g = {.slice = &s, .hosts = h4, .n_hosts = 4,
                            .launch = MT_TPU_LAUNCH_HOST, .num_slices = 1};
    struct mt_env *envs = NULL, e;
    size_t n = 0, i, j;

    CU_ASSERT_EQUAL_FATAL(mt_accel_env_tpu_gang_all(&g, &envs, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    for (i = 0; i < n; i++) {
        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, (uint32_t)i, 0, &e), 0);
        CU_ASSERT_EQUAL_FATAL(e.n, envs[i].n);
        for (j = 0; j < e.n; j++) {
            CU_ASSERT_STRING_EQUAL(e.vars[j].name, envs[i].vars[j].name);
            CU_ASSERT((!e.vars[j].value && !envs[i].vars[j].value) ||
                      (e.vars[j].value && envs[i].vars[j].value &&
                       !strcmp(e.vars[j].value, envs[i].vars[j].value)));
        }
        mt_env_release(&e);
    }
    mt_env_array_free(envs, n);

    g.n_hosts = 3;
    envs = NULL;
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang_all(&g, &envs, &n), -MT_EINVAL);
    CU_ASSERT_PTR_NULL(envs);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang_all(NULL, &envs, &n), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang_all(&g, NULL, &n), -MT_EINVAL);
}

/* Each row breaks one thing of a valid v6e-16 device-centric gang. */
enum gang_break {
    BRK_HOSTS_5,      /* too many hosts for the slice */
    BRK_HOSTS_3,
    BRK_HOST_EMPTY,
    BRK_HOST_COMMA,
    BRK_HOST_NULL,
    BRK_NO_SLICE,
    BRK_LAUNCH_0,
    BRK_PORT_BASE_0,
    BRK_PORT_WRAP,
    BRK_MASTER_0,
    BRK_DUP_PORTS,
    BRK_ZERO_PORT,
    BRK_SLICE_ID,     /* slice_id >= num_slices */
    BRK_SLICE_ID_1,   /* slice_id without multislice */
    BRK_COORD_EMPTY,
    BRK_COORD_NULL,   /* slice 1 cannot name slice 0's worker 0 */
    BRK_MEMBER_HOST,  /* member host out of range */
    BRK_MEMBER_LOCAL,
    BRK_HOST_LOCAL_1, /* host-centric has one process per host */
    BRK_COUNT
};

static const int break_rc[BRK_COUNT] = {
    [BRK_HOSTS_5] = -MT_EINVAL,    [BRK_HOSTS_3] = -MT_EINVAL,
    [BRK_HOST_EMPTY] = -MT_EINVAL, [BRK_HOST_COMMA] = -MT_EINVAL,
    [BRK_HOST_NULL] = -MT_EINVAL,  [BRK_NO_SLICE] = -MT_EINVAL,
    [BRK_LAUNCH_0] = -MT_EINVAL,   [BRK_PORT_BASE_0] = -MT_EINVAL,
    [BRK_PORT_WRAP] = -MT_EINVAL,  [BRK_MASTER_0] = -MT_EINVAL,
    [BRK_DUP_PORTS] = -MT_EINVAL,  [BRK_ZERO_PORT] = -MT_EINVAL,
    [BRK_SLICE_ID] = -MT_EINVAL,   [BRK_SLICE_ID_1] = -MT_EINVAL,
    [BRK_COORD_EMPTY] = -MT_EINVAL, [BRK_COORD_NULL] = -MT_EINVAL,
    [BRK_MEMBER_HOST] = -MT_ERANGE,
    [BRK_MEMBER_LOCAL] = -MT_ERANGE, [BRK_HOST_LOCAL_1] = -MT_ERANGE,
};

static void test_gang_errors(void)
{
    static const char *const h5[] = {"h0", "h1", "h2", "h3", "h4"};
    static const char *const bad_empty[] = {"h0", "", "h2", "h3"};
    static const char *const bad_comma[] = {"h0", "h1,h2", "h2", "h3"};
    static const char *const bad_null[] = {"h0", NULL, "h2", "h3"};
    static const uint16_t dup[16] = {1, 2, 3, 3, 5, 6, 7, 8,
                                     1, 2, 3, 4, 5, 6, 7, 8};
    static const uint16_t zero[16] = {1, 2, 3, 4, 5, 6, 7, 8,
                                      1, 2, 3, 4, 5, 6, 7, 0};
    struct mt_tpu_slice s = slice_of("v6e-16", NULL, 0);
    struct mt_tpu_gang g;
    struct mt_env e;
    uint32_t host, local;
    int b;

    for (b = 0; b < BRK_COUNT; b++) {
        g = (struct mt_tpu_gang){.slice = &s, .hosts = h4, .n_hosts = 4,
                                 .launch = MT_TPU_LAUNCH_DEVICE,
                                 .port_base = 8471, .master_port = 29500};
        host = 1;
        local = 1;
        switch ((enum gang_break)b) {
        case BRK_HOSTS_5: g.hosts = h5; g.n_hosts = 5; break;
        case BRK_HOSTS_3: g.n_hosts = 3; break;
        case BRK_HOST_EMPTY: g.hosts = bad_empty; break;
        case BRK_HOST_COMMA: g.hosts = bad_comma; break;
        case BRK_HOST_NULL: g.hosts = bad_null; break;
        case BRK_NO_SLICE: g.slice = NULL; break;
        case BRK_LAUNCH_0: g.launch = 0; break;
        case BRK_PORT_BASE_0: g.port_base = 0; break;
        case BRK_PORT_WRAP: g.port_base = 65534; break;
        case BRK_MASTER_0: g.master_port = 0; break;
        case BRK_DUP_PORTS: g.ports = dup; break;
        case BRK_ZERO_PORT: g.ports = zero; break;
        case BRK_SLICE_ID: g.num_slices = 2; g.slice_id = 2; break;
        case BRK_SLICE_ID_1: g.slice_id = 1; break;
        case BRK_COORD_EMPTY: g.num_slices = 2; g.coordinator = ""; break;
        case BRK_COORD_NULL: g.num_slices = 2; g.slice_id = 1; break;
        case BRK_MEMBER_HOST: host = 4; break;
        case BRK_MEMBER_LOCAL: local = 4; break;
        case BRK_HOST_LOCAL_1: g.launch = MT_TPU_LAUNCH_HOST; break;
        case BRK_COUNT: break;
        }
        mt_env_init(&e);
        CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, host, local, &e),
                        break_rc[b]);
        CU_ASSERT_EQUAL(e.n, 0);
        mt_env_release(&e);
    }
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(NULL, 0, 0, &e), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_accel_env_tpu_gang(&g, 0, 0, NULL), -MT_EINVAL);
    CU_ASSERT_EQUAL(mt_tpu_gang_procs_per_host(NULL), 0);
}

CU_TestInfo mt_test_accel_env[] = {
    {"env_basics", test_env_basics},
    {"gpu", test_gpu},
    {"gpu_fractional", test_gpu_fractional},
    {"golden_table", test_golden_table},
    {"master_addr", test_master_addr},
    {"tpu_host_errors", test_tpu_host_errors},
    {"device_centric_invariants", test_device_centric_invariants},
    {"ports_and_ipv6", test_ports_and_ipv6},
    {"gang_all", test_gang_all},
    {"gang_errors", test_gang_errors},
    CU_TEST_INFO_NULL,
};
