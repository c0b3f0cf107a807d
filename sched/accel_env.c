/* SPDX-License-Identifier: Apache-2.0 */
/*
 * accel_env.c -- the accelerator environment contract, as pure functions.
 *
 * Each builder validates its whole input first, then writes variables into
 * the caller's struct mt_env through mt_env_set(). Comma lists (chips,
 * hostnames, host:port addresses) are built in a small growable buffer.
 * The rules are in accel_env.h; the reasons and sources are in
 * docs/accelerators.md.
 *
 * No I/O, no clock, no globals: the same grant always gives the same env.
 */
#include "sched/accel_env.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

/* ---------------------------------------------------------------------
 * struct mt_env
 * --------------------------------------------------------------------- */

void mt_env_init(struct mt_env *env)
{
    env->vars = NULL;
    env->n = 0;
    env->cap = 0;
}

void mt_env_release(struct mt_env *env)
{
    size_t i;

    if (!env)
        return;
    for (i = 0; i < env->n; i++) {
        free(env->vars[i].name);
        free(env->vars[i].value);
    }
    free(env->vars);
    mt_env_init(env);
}

static struct mt_env_var *find(const struct mt_env *env, const char *name)
{
    size_t i;

    for (i = 0; i < env->n; i++)
        if (strcmp(env->vars[i].name, name) == 0)
            return &env->vars[i];
    return NULL;
}

const struct mt_env_var *mt_env_find(const struct mt_env *env,
                                     const char *name)
{
    if (!env || !name)
        return NULL;
    return find(env, name);
}

const char *mt_env_get(const struct mt_env *env, const char *name)
{
    const struct mt_env_var *v = mt_env_find(env, name);

    return v ? v->value : NULL;
}

static int grow(struct mt_env *env)
{
    size_t cap = env->cap ? env->cap * 2 : 16;
    struct mt_env_var *v;

    if (env->n < env->cap)
        return 0;
    v = realloc(env->vars, cap * sizeof(*v));
    if (!v)
        return -MT_ENOMEM;
    env->vars = v;
    env->cap = cap;
    return 0;
}

int mt_env_set(struct mt_env *env, const char *name, const char *value)
{
    struct mt_env_var *v;
    char *val = NULL;

    if (!env || !name || !*name || strchr(name, '='))
        return -MT_EINVAL;
    if (value && !(val = strdup(value)))
        return -MT_ENOMEM;
    v = find(env, name);
    if (v) {
        free(v->value);
        v->value = val;
        return 0;
    }
    if (grow(env) < 0)
        goto out_free_val;
    v = &env->vars[env->n];
    v->name = strdup(name);
    if (!v->name)
        goto out_free_val;
    v->value = val;
    env->n++;
    return 0;

out_free_val:
    free(val);
    return -MT_ENOMEM;
}

void mt_env_array_free(struct mt_env *envs, size_t n)
{
    size_t i;

    if (!envs)
        return;
    for (i = 0; i < n; i++)
        mt_env_release(&envs[i]);
    free(envs);
}

/* ---------------------------------------------------------------------
 * A growable text buffer for comma lists
 * --------------------------------------------------------------------- */

struct buf {
    char *s;    /* NUL-terminated; NULL before the first append */
    size_t len; /* chars used, excluding NUL */
    size_t cap; /* bytes allocated */
    int err;    /* first failure; later appends are no-ops */
};

static void buf_printf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    size_t need;
    char *s;
    int n;

    if (b->err)
        return;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    need = b->len + (size_t)n + 1;
    if (n < 0 || need > b->cap) {
        s = n < 0 ? NULL : realloc(b->s, need * 2);
        if (!s) {
            b->err = -MT_ENOMEM;
            return;
        }
        b->s = s;
        b->cap = need * 2;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* Set name to the buffer's text, then free the buffer. */
static int buf_set(struct buf *b, struct mt_env *env, const char *name)
{
    int rc = b->err ? b->err : mt_env_set(env, name, b->s ? b->s : "");

    free(b->s);
    memset(b, 0, sizeof(*b));
    return rc;
}

static int set_u32(struct mt_env *env, const char *name, uint64_t v)
{
    char text[24];

    snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
    return mt_env_set(env, name, text);
}

static int set_bounds(struct mt_env *env, const char *name,
                      const uint32_t *bounds, size_t n)
{
    char text[64];
    int rc = mt_tpu_bounds_format(bounds, n, text, sizeof(text));

    return rc < 0 ? rc : mt_env_set(env, name, text);
}

/*
 * The chip grid of one process and the process grid, under both names:
 * libtpu and PyTorch/XLA read TPU_CHIPS_PER_PROCESS_BOUNDS and
 * TPU_PROCESS_BOUNDS first and fall back to the _HOST_ spellings, which
 * JAX, Ray and TorchTPU set. Writing both keeps a stale value of either
 * (from the worker's own environment) from winning over the grant's.
 */
static int set_grids(struct mt_env *env, const uint32_t *chips_per_proc,
                     const uint32_t *procs, size_t n)
{
    int rc;

    if ((rc = set_bounds(env, "TPU_CHIPS_PER_HOST_BOUNDS", chips_per_proc,
                         n)) < 0 ||
        (rc = set_bounds(env, "TPU_HOST_BOUNDS", procs, n)) < 0 ||
        (rc = set_bounds(env, "TPU_CHIPS_PER_PROCESS_BOUNDS", chips_per_proc,
                         n)) < 0)
        return rc;
    return set_bounds(env, "TPU_PROCESS_BOUNDS", procs, n);
}

/* ---------------------------------------------------------------------
 * GPU
 * --------------------------------------------------------------------- */

int mt_accel_env_gpu(const uint32_t *ids, size_t n, struct mt_env *env)
{
    struct buf b = {0};
    size_t i, j;

    if (!env || (n && !ids))
        return -MT_EINVAL;
    for (i = 0; i < n; i++)
        for (j = 0; j < i; j++)
            if (ids[i] == ids[j])
                return -MT_EINVAL;
    for (i = 0; i < n; i++)
        buf_printf(&b, i ? ",%u" : "%u", ids[i]);
    return buf_set(&b, env, "CUDA_VISIBLE_DEVICES");
}

/* ---------------------------------------------------------------------
 * TPU: chips on one host
 * --------------------------------------------------------------------- */

/* The shape of k chips on one host, written as the generation writes it. */
static int grant_topology(const struct mt_tpu_slice *s, const uint32_t b[3],
                          char *text, size_t len)
{
    struct mt_tpu_topo t = {{b[0], b[1], b[2]}, s->topo.ndims};

    return mt_tpu_topo_format(&t, text, len);
}

/* Identity shared by every TPU env: type, topology, MDS skip. */
static int set_identity(struct mt_env *env, const struct mt_tpu_slice *s,
                        const char *topology)
{
    char type[MT_TPU_NAME_MAX];
    int rc;

    rc = mt_tpu_slice_accelerator_type(s, type, sizeof(type));
    if (rc < 0)
        return rc;
    if ((rc = mt_env_set(env, "TPU_ACCELERATOR_TYPE", type)) < 0 ||
        (rc = mt_env_set(env, "TPU_TOPOLOGY", topology)) < 0)
        return rc;
    return mt_env_set(env, "TPU_SKIP_MDS_QUERY", "true");
}

static int set_visible_chips(struct mt_env *env, const uint32_t *chips,
                             size_t n, uint32_t host_chips)
{
    uint32_t lo = UINT32_MAX;
    struct buf b = {0};
    size_t i;

    if (n == host_chips)
        return mt_env_set(env, "TPU_VISIBLE_CHIPS", NULL);
    for (i = 0; i < n; i++)
        if (chips[i] < lo)
            lo = chips[i];
    /* An aligned block is contiguous, so ascending order is lo..lo+n-1. */
    for (i = 0; i < n; i++)
        buf_printf(&b, i ? ",%u" : "%u", lo + (uint32_t)i);
    return buf_set(&b, env, "TPU_VISIBLE_CHIPS");
}

int mt_accel_env_tpu_host(const struct mt_tpu_slice *slice,
                          const uint32_t *chips, size_t n, struct mt_env *env)
{
    static const uint32_t one[3] = {1, 1, 1};
    char topology[MT_TPU_NAME_MAX];
    uint32_t bounds[3];
    int rc;

    if (!slice || !env || !chips)
        return -MT_EINVAL;
    rc = mt_tpu_host_chips_check(slice->chips_per_host, chips, n);
    if (rc < 0)
        return rc;
    if ((rc = mt_tpu_chip_bounds((uint32_t)n, bounds)) < 0 ||
        (rc = grant_topology(slice, bounds, topology, sizeof(topology))) < 0)
        return rc;
    if ((rc = set_identity(env, slice, topology)) < 0 ||
        (rc = mt_env_set(env, "TPU_WORKER_ID", "0")) < 0 ||
        (rc = mt_env_set(env, "TPU_WORKER_HOSTNAMES", "localhost")) < 0 ||
        (rc = set_grids(env, bounds, one, 3)) < 0)
        return rc;
    return set_visible_chips(env, chips, n, slice->chips_per_host);
}

/* ---------------------------------------------------------------------
 * TPU: gangs over a slice
 * --------------------------------------------------------------------- */

uint32_t mt_tpu_gang_procs_per_host(const struct mt_tpu_gang *g)
{
    if (!g || !g->slice)
        return 0;
    if (g->launch == MT_TPU_LAUNCH_HOST)
        return 1;
    if (g->launch == MT_TPU_LAUNCH_DEVICE)
        return g->slice->chips_per_host *
               mt_tpu_gen_devices_per_chip(g->slice->gen);
    return 0;
}

static uint16_t gang_port(const struct mt_tpu_gang *g, uint32_t host,
                          uint32_t local, uint32_t per_host)
{
    if (g->ports)
        return g->ports[(size_t)host * per_host + local];
    return (uint16_t)(g->port_base + local);
}

/* Device-centric ports: non-zero, no overflow, unique on each host. */
static int check_ports(const struct mt_tpu_gang *g, uint32_t per_host)
{
    uint32_t h, i, j;

    if (g->master_port == 0)
        return -MT_EINVAL;
    if (!g->ports)
        return (g->port_base == 0 || g->port_base + per_host - 1 > 65535)
                   ? -MT_EINVAL
                   : 0;
    for (h = 0; h < g->n_hosts; h++) {
        for (i = 0; i < per_host; i++) {
            if (gang_port(g, h, i, per_host) == 0)
                return -MT_EINVAL;
            for (j = 0; j < i; j++)
                if (gang_port(g, h, i, per_host) ==
                    gang_port(g, h, j, per_host))
                    return -MT_EINVAL;
        }
    }
    return 0;
}

static bool host_name_ok(const char *h)
{
    return h && *h && !strchr(h, ',') && !strchr(h, '=');
}

static int check_gang(const struct mt_tpu_gang *g, uint32_t host,
                      uint32_t local)
{
    uint32_t per_host = mt_tpu_gang_procs_per_host(g);
    size_t i;

    if (!g || !g->slice || !g->hosts || per_host == 0 ||
        g->n_hosts != g->slice->hosts)
        return -MT_EINVAL;
    for (i = 0; i < g->n_hosts; i++)
        if (!host_name_ok(g->hosts[i]))
            return -MT_EINVAL;
    if (g->num_slices > 1 && (g->slice_id >= g->num_slices ||
                              (!g->coordinator && g->slice_id != 0) ||
                              (g->coordinator && !*g->coordinator)))
        return -MT_EINVAL;
    if (g->num_slices <= 1 && g->slice_id != 0)
        return -MT_EINVAL;
    if (g->launch == MT_TPU_LAUNCH_DEVICE && check_ports(g, per_host) < 0)
        return -MT_EINVAL;
    if (host >= g->n_hosts || local >= per_host)
        return -MT_ERANGE;
    return 0;
}

static const char *coordinator(const struct mt_tpu_gang *g)
{
    return g->coordinator ? g->coordinator : g->hosts[0];
}

/*
 * How members name host i of their slice. Every process of a one-host
 * slice runs on that host, so it is "localhost", as the GKE device plugin
 * writes TPU_WORKER_HOSTNAMES for one host and as PyTorch/XLA
 * (get_worker_ips) and TorchTPU's single-host launcher address their
 * processes: nothing to resolve, and it binds whatever address the node
 * registered with. The multislice coordinator stays the real address.
 */
static const char *slice_host(const struct mt_tpu_gang *g, size_t i)
{
    return g->n_hosts == 1 ? "localhost" : g->hosts[i];
}

const char *mt_tpu_gang_master_addr(const struct mt_tpu_gang *g)
{
    if (!g || !g->hosts || g->n_hosts == 0 || !g->hosts[0])
        return NULL;
    return g->num_slices > 1 ? coordinator(g) : slice_host(g, 0);
}

/* Identity every member gets, in both launch models. */
static int set_gang_identity(struct mt_env *env, const struct mt_tpu_gang *g,
                             uint32_t host)
{
    char topology[MT_TPU_NAME_MAX];
    struct buf b = {0};
    size_t i;
    int rc;

    rc = mt_tpu_slice_topology(g->slice, topology, sizeof(topology));
    if (rc < 0 || (rc = set_identity(env, g->slice, topology)) < 0)
        return rc;
    for (i = 0; i < g->n_hosts; i++)
        buf_printf(&b, i ? ",%s" : "%s", slice_host(g, i));
    if ((rc = buf_set(&b, env, "TPU_WORKER_HOSTNAMES")) < 0 ||
        (rc = set_u32(env, "TPU_WORKER_ID", host)) < 0)
        return rc;
    if (g->slice_name)
        return mt_env_set(env, "TPU_NAME", g->slice_name);
    return 0;
}

static int set_megascale(struct mt_env *env, const struct mt_tpu_gang *g)
{
    uint16_t port = g->megascale_port ? g->megascale_port
                                      : MT_TPU_MEGASCALE_PORT_DEFAULT;
    int rc;

    if (g->num_slices <= 1)
        return 0;
    if ((rc = set_u32(env, "MEGASCALE_NUM_SLICES", g->num_slices)) < 0 ||
        (rc = set_u32(env, "MEGASCALE_SLICE_ID", g->slice_id)) < 0 ||
        (rc = mt_env_set(env, "MEGASCALE_COORDINATOR_ADDRESS",
                         coordinator(g))) < 0)
        return rc;
    return set_u32(env, "MEGASCALE_PORT", port);
}

static int set_host_centric(struct mt_env *env, const struct mt_tpu_gang *g)
{
    int rc = set_grids(env, g->slice->chips_per_host_bounds,
                       g->slice->host_bounds, 3);

    return rc < 0 ? rc : mt_env_set(env, "TPU_VISIBLE_CHIPS", NULL);
}

/* host:port of every process of the slice, in CLOUD_TPU_TASK_ID order. */
static int set_addresses(struct mt_env *env, const struct mt_tpu_gang *g,
                         uint32_t per_host)
{
    struct buf b = {0};
    const char *h;
    uint32_t i, c;
    int rc;

    for (i = 0; i < g->n_hosts; i++) {
        h = slice_host(g, i);
        for (c = 0; c < per_host; c++)
            buf_printf(&b, strchr(h, ':') ? "%s[%s]:%u" : "%s%s:%u",
                       (i || c) ? "," : "", h, gang_port(g, i, c, per_host));
    }
    if (b.err) {
        free(b.s);
        return b.err;
    }
    rc = mt_env_set(env, "TORCH_TPU_SLICEBUILDER_ADDRESSES", b.s);
    if (rc == 0)
        rc = buf_set(&b, env, "TPU_PROCESS_ADDRESSES");
    else
        free(b.s);
    return rc;
}

/* Process grid = chip grid (x,y,z), with the device axis on v7x. */
static int set_process_grid(struct mt_env *env, const struct mt_tpu_slice *s)
{
    uint32_t devs = mt_tpu_gen_devices_per_chip(s->gen);
    uint32_t grid[MT_TPU_BOUNDS_MAX] = {s->topo.dims[0], s->topo.dims[1],
                                        s->topo.dims[2], devs};
    uint32_t ones[MT_TPU_BOUNDS_MAX] = {1, 1, 1, 1};
    size_t nb = devs > 1 ? 4 : 3;
    int rc;

    if ((rc = set_grids(env, ones, grid, nb)) < 0)
        return rc;
    return set_bounds(env, "TORCH_TPU_TOPOLOGY", grid, nb);
}

static int set_device_centric(struct mt_env *env, const struct mt_tpu_gang *g,
                              uint32_t host, uint32_t local)
{
    uint32_t per_host = mt_tpu_gang_procs_per_host(g);
    uint32_t devs = mt_tpu_gen_devices_per_chip(g->slice->gen);
    uint64_t world = (uint64_t)per_host * g->n_hosts;
    uint64_t rank = (uint64_t)host * per_host + local;
    uint64_t slices = g->num_slices > 1 ? g->num_slices : 1;
    int rc;

    if ((rc = set_u32(env, "TPU_VISIBLE_CHIPS", local / devs)) < 0 ||
        (rc = set_process_grid(env, g->slice)) < 0 ||
        (rc = set_u32(env, "CLOUD_TPU_TASK_ID", rank)) < 0 ||
        (rc = set_u32(env, "TPU_PROCESS_PORT",
                      gang_port(g, host, local, per_host))) < 0 ||
        (rc = set_addresses(env, g, per_host)) < 0)
        return rc;
    if ((rc = set_u32(env, "WORLD_SIZE", slices * world)) < 0 ||
        (rc = set_u32(env, "RANK", g->slice_id * world + rank)) < 0 ||
        (rc = set_u32(env, "LOCAL_RANK", local)) < 0 ||
        (rc = mt_env_set(env, "MASTER_ADDR", mt_tpu_gang_master_addr(g))) <
            0)
        return rc;
    return set_u32(env, "MASTER_PORT", g->master_port);
}

int mt_accel_env_tpu_gang(const struct mt_tpu_gang *g, uint32_t host,
                          uint32_t local, struct mt_env *env)
{
    int rc;

    if (!env)
        return -MT_EINVAL;
    rc = check_gang(g, host, local);
    if (rc < 0)
        return rc;
    rc = set_gang_identity(env, g, host);
    if (rc < 0)
        return rc;
    if (g->launch == MT_TPU_LAUNCH_HOST)
        rc = set_host_centric(env, g);
    else
        rc = set_device_centric(env, g, host, local);
    if (rc < 0)
        return rc;
    return set_megascale(env, g);
}

int mt_accel_env_tpu_gang_all(const struct mt_tpu_gang *g,
                              struct mt_env **envs, size_t *n)
{
    uint32_t per_host = mt_tpu_gang_procs_per_host(g);
    struct mt_env *out;
    size_t i, total;
    int rc;

    if (!envs || !n)
        return -MT_EINVAL;
    rc = check_gang(g, 0, 0);
    if (rc < 0)
        return rc;
    total = (size_t)per_host * g->n_hosts;
    out = calloc(total, sizeof(*out));
    if (!out)
        return -MT_ENOMEM;
    for (i = 0; i < total; i++) {
        mt_env_init(&out[i]);
        rc = mt_accel_env_tpu_gang(g, (uint32_t)(i / per_host),
                                   (uint32_t)(i % per_host), &out[i]);
        if (rc < 0) {
            mt_env_array_free(out, i + 1);
            return rc;
        }
    }
    *envs = out;
    *n = total;
    return 0;
}
