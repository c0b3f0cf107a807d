/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gang.c -- gangs in the SDK (manta/gang.h): options as plain C, then
 * SubmitGang / GetGang / CancelGang on the head through the client's
 * generic unary request (mt__req_unary). The head runs the gang (head/
 * gangs.c); a wait here is a poll of GetGang.
 *
 * THREAD: any.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "head_service.pb-c.h"
#include "proto/services.h"
#include "sdk/sdk_int.h"
#include "manta/gang.h"

#define MAX_STR 4096
#define MAX_ENV 1024
#define POLL_MS 100

struct mt_gang_opts {
    char *pod_type, *topology, *name, *cwd;
    char **env;                  /* key, value pairs: 2 * nenv strings */
    size_t nenv;
    unsigned slices;
    int launch, max_restarts;
};

static int set_str(char **dst, const char *s)
{
    char *p = NULL;

    if (s && strlen(s) > MAX_STR)
        return mt__set_error(NULL, -MT_EINVAL, "string too long");
    if (s && !(p = strdup(s)))
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    free(*dst);
    *dst = p;
    return 0;
}

int mt_gang_opts_create(mt_gang_opts_t **out, const char *pod_type)
{
    if (!out || !pod_type || !*pod_type)
        return mt__set_error(NULL, -MT_EINVAL, "a gang needs a pod type, "
                             "e.g. v4-16");
    if (!(*out = calloc(1, sizeof(**out))))
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    (*out)->slices = 1;
    (*out)->launch = MT_GANG_LAUNCH_HOST;
    if (set_str(&(*out)->pod_type, pod_type) < 0) {
        free(*out);
        *out = NULL;
        return -MT_EINVAL;
    }
    return 0;
}

void mt_gang_opts_destroy(mt_gang_opts_t *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < 2 * o->nenv; i++)
        free(o->env[i]);
    free(o->env);
    free(o->pod_type);
    free(o->topology);
    free(o->name);
    free(o->cwd);
    free(o);
}

int mt_gang_opts_set_launch(mt_gang_opts_t *o, mt_gang_launch l)
{
    if (!o || (l != MT_GANG_LAUNCH_HOST && l != MT_GANG_LAUNCH_DEVICE))
        return mt__set_error(NULL, -MT_EINVAL, "launch is host or device");
    o->launch = l;
    return 0;
}

int mt_gang_opts_set_slices(mt_gang_opts_t *o, unsigned slices)
{
    if (!o || slices < 1 || slices > 64)
        return mt__set_error(NULL, -MT_EINVAL, "slices must be 1..64");
    o->slices = slices;
    return 0;
}

int mt_gang_opts_set_topology(mt_gang_opts_t *o, const char *t)
{
    return o ? set_str(&o->topology, t && *t ? t : NULL)
             : mt__set_error(NULL, -MT_EINVAL, "no options");
}

int mt_gang_opts_set_max_restarts(mt_gang_opts_t *o, int n)
{
    if (!o || n < -1)
        return mt__set_error(NULL, -MT_EINVAL, "max_restarts must be >= -1");
    o->max_restarts = n;
    return 0;
}

int mt_gang_opts_set_name(mt_gang_opts_t *o, const char *name)
{
    return o ? set_str(&o->name, name)
             : mt__set_error(NULL, -MT_EINVAL, "no options");
}

int mt_gang_opts_set_cwd(mt_gang_opts_t *o, const char *dir)
{
    return o ? set_str(&o->cwd, dir)
             : mt__set_error(NULL, -MT_EINVAL, "no options");
}

int mt_gang_opts_set_env(mt_gang_opts_t *o, const char *key,
                         const char *value)
{
    char **v, *k = NULL, *x = NULL;

    if (!o || !key || !*key || strchr(key, '=') || !value ||
        o->nenv >= MAX_ENV)
        return mt__set_error(NULL, -MT_EINVAL, "bad environment variable");
    if (set_str(&k, key) < 0 || set_str(&x, value) < 0 ||
        !(v = realloc(o->env, (2 * o->nenv + 2) * sizeof(*v)))) {
        free(k);
        free(x);
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    }
    o->env = v;
    v[2 * o->nenv] = k;
    v[2 * o->nenv + 1] = x;
    o->nenv++;
    return 0;
}

/* ---- calls --------------------------------------------------------------- */

int mt_gang_submit(mt_client_t *c, const mt_gang_opts_t *o,
                   const char *const *argv, size_t argc, char *id,
                   size_t idlen)
{
    Manta__SubmitGangRequest req = MANTA__SUBMIT_GANG_REQUEST__INIT;
    Manta__SubmitGangReply *reply = NULL;
    Manta__TaskSpec spec = MANTA__TASK_SPEC__INIT;
    Manta__ResourceEntry cpu0 = MANTA__RESOURCE_ENTRY__INIT, *cpu0p = &cpu0;
    Manta__Label *labs;
    Manta__Label **labp;
    int rc;

    if (!c || !o || !argv || argc == 0 || !argv[0] || !id || idlen < 17)
        return mt__set_error(c, -MT_EINVAL, "bad gang submit arguments");
    labs = calloc(o->nenv + 1, sizeof(*labs));
    labp = calloc(o->nenv + 1, sizeof(*labp));
    if (!labs || !labp) {
        free(labs);
        free(labp);
        return mt__set_error(c, -MT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < o->nenv; i++) {
        manta__label__init(&labs[i]);
        labs[i].key = o->env[2 * i];
        labs[i].value = o->env[2 * i + 1];
        labp[i] = &labs[i];
    }
    spec.kind = MANTA__TASK_KIND__TASK_KIND_COMMAND;
    spec.argv = (char **)argv;
    spec.n_argv = argc;
    spec.env = labp;
    spec.n_env = o->nenv;
    spec.cwd = o->cwd ? o->cwd : (char *)"";
    cpu0.name = (char *)"CPU";
    spec.resources = &cpu0p;
    spec.n_resources = 1;
    req.name = o->name ? o->name : (char *)"";
    req.tpu_pod_type = o->pod_type;
    req.tpu_topology = o->topology ? o->topology : (char *)"";
    req.tpu_slices = o->slices;
    req.launch = (Manta__GangLaunch)o->launch;
    req.member = &spec;
    req.max_restarts = o->max_restarts;
    rc = mt__req_unary(c, &mt_head_submit_gang, &req.base, c->rpc_timeout_ms,
                       (void **)&reply);
    free(labs);
    free(labp);
    if (rc < 0)
        return rc;
    if (!*reply->gang_id || strlen(reply->gang_id) >= idlen)
        rc = mt__set_error(c, -MT_EPROTO, "the head returned no gang id");
    else
        snprintf(id, idlen, "%s", reply->gang_id);
    mt__rpc_submit_free(reply);
    if (rc == 0)
        mt__clear_error(c);
    return rc;
}

static bool ended(int s)
{
    return s == MT_GANG_FINISHED || s == MT_GANG_FAILED ||
           s == MT_GANG_CANCELLED;
}

/* One GetGang into info. RET 0 or the call's error. */
static int get_once(mt_client_t *c, const char *id, mt_gang_info_t *info)
{
    Manta__GetGangRequest req = MANTA__GET_GANG_REQUEST__INIT;
    Manta__GetGangReply *reply = NULL;
    const Manta__GangInfo *g;
    int rc;

    req.gang_id = (char *)id;
    rc = mt__req_unary(c, &mt_head_get_gang, &req.base, c->rpc_timeout_ms,
                       (void **)&reply);
    if (rc < 0)
        return rc;
    if (!(g = reply->gang)) {
        mt__rpc_submit_free(reply);
        return mt__set_error(c, -MT_EPROTO, "the head sent no gang");
    }
    memset(info, 0, sizeof(*info));
    info->state = (mt_gang_state)g->state;
    info->attempt = g->attempt;
    info->members = (uint32_t)g->n_members;
    info->exit_code = g->exit_code;
    snprintf(info->slice, sizeof(info->slice), "%s",
             g->n_slice_names ? g->slice_names[0] : "");
    snprintf(info->error, sizeof(info->error), "%s", g->error);
    mt__rpc_submit_free(reply);
    return 0;
}

int mt_gang_wait(mt_client_t *c, const char *id, int timeout_ms,
                 mt_gang_info_t *info)
{
    struct timespec dl = mt__deadline(timeout_ms < 0 ? 0 : timeout_ms);
    struct timespec pause = {0, POLL_MS * 1000000L}, now;
    mt_gang_info_t mine;
    int rc;

    if (!c || !id)
        return mt__set_error(c, -MT_EINVAL, "bad gang wait arguments");
    for (;;) {
        if ((rc = get_once(c, id, info ? info : &mine)) < 0)
            return rc;
        if (ended((info ? info : &mine)->state))
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (timeout_ms >= 0 && (now.tv_sec > dl.tv_sec ||
                                (now.tv_sec == dl.tv_sec &&
                                 now.tv_nsec >= dl.tv_nsec)))
            return mt__set_error(c, -MT_ETIMEDOUT, "gang %s still %s", id,
                                 (info ? info : &mine)->state ==
                                         MT_GANG_PENDING
                                     ? "waiting for slices" : "running");
        nanosleep(&pause, NULL);
    }
}

int mt_gang_cancel(mt_client_t *c, const char *id)
{
    Manta__CancelGangRequest req = MANTA__CANCEL_GANG_REQUEST__INIT;
    Manta__CancelGangReply *reply = NULL;
    int rc;

    if (!c || !id)
        return mt__set_error(c, -MT_EINVAL, "bad gang cancel arguments");
    req.gang_id = (char *)id;
    rc = mt__req_unary(c, &mt_head_cancel_gang, &req.base, c->rpc_timeout_ms,
                       (void **)&reply);
    if (rc == 0)
        mt__rpc_submit_free(reply);
    return rc;
}
