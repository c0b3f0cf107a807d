/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gang.c -- gangs in the SDK (manta/gang.h): options as a struct
 * mt_gang_def checked as they are set, then SubmitGang / GetGang /
 * CancelGang on the head (rpc_gang.c). The head runs the gang (head/
 * gangs.c); a wait here is a poll of GetGang.
 *
 * THREAD: any.
 */
#include "sdk/rpc_gang.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdk/client.h"
#include "sdk/error.h"
#include "sdk/task_int.h"
#include "sdk/task_opts.h"

#define MAX_ENV 1024
#define POLL_MS 100

struct mt_gang_opts {
    struct mt_gang_def def;      /* member: argv set at submit */
};

int mt_gang_opts_create(mt_gang_opts_t **out, const char *pod_type)
{
    struct mt_gang_opts *o;

    if (!out || !pod_type || !*pod_type)
        return mt__set_error(NULL, -MT_EINVAL, "a gang needs a pod type, "
                             "e.g. v4-16");
    *out = NULL;
    if (!(o = calloc(1, sizeof(*o))))
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    mt_task_def_init(&o->def.member);
    o->def.slices = 1;
    if (mt__opts_set_str(&o->def.pod_type, pod_type, "pod_type") < 0 ||
        mt_qty_list_put(&o->def.member.res, "CPU", 0) < 0) {
        mt_gang_opts_destroy(o);
        return -MT_EINVAL;
    }
    *out = o;
    return 0;
}

void mt_gang_opts_destroy(mt_gang_opts_t *o)
{
    if (!o)
        return;
    mt_gang_def_release(&o->def);
    free(o);
}

int mt_gang_opts_set_launch(mt_gang_opts_t *o, mt_gang_launch l)
{
    if (!o || (l != MT_GANG_LAUNCH_HOST && l != MT_GANG_LAUNCH_DEVICE))
        return mt__set_error(NULL, -MT_EINVAL, "launch is host or device");
    o->def.device_launch = l == MT_GANG_LAUNCH_DEVICE;
    return 0;
}

int mt_gang_opts_set_slices(mt_gang_opts_t *o, unsigned slices)
{
    if (!o || slices < 1 || slices > 64)
        return mt__set_error(NULL, -MT_EINVAL, "slices must be 1..64");
    o->def.slices = slices;
    return 0;
}

int mt_gang_opts_set_topology(mt_gang_opts_t *o, const char *t)
{
    return o ? mt__opts_set_str(&o->def.topology, t, "topology")
             : mt__set_error(NULL, -MT_EINVAL, "no options");
}

int mt_gang_opts_set_max_restarts(mt_gang_opts_t *o, int n)
{
    if (!o || n < -1)
        return mt__set_error(NULL, -MT_EINVAL, "max_restarts must be >= -1");
    o->def.max_restarts = n;
    return 0;
}

int mt_gang_opts_set_name(mt_gang_opts_t *o, const char *name)
{
    return o ? mt__opts_set_str(&o->def.name, name, "name")
             : mt__set_error(NULL, -MT_EINVAL, "no options");
}

int mt_gang_opts_set_cwd(mt_gang_opts_t *o, const char *dir)
{
    return o ? mt__opts_set_str(&o->def.member.cwd, dir, "cwd")
             : mt__set_error(NULL, -MT_EINVAL, "no options");
}

int mt_gang_opts_set_env(mt_gang_opts_t *o, const char *key,
                         const char *value)
{
    if (!o || !key || !*key || strchr(key, '=') || !value ||
        strlen(key) > MT__OPT_STR_MAX || strlen(value) > MT__OPT_STR_MAX ||
        o->def.member.env.n >= MAX_ENV)
        return mt__set_error(NULL, -MT_EINVAL, "bad environment variable");
    if (mt_kv_list_put(&o->def.member.env, key, value) < 0)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    return 0;
}

int mt_gang_opts_set_task_opts(mt_gang_opts_t *o,
                               const mt_task_opts_t *task_opts)
{
    struct mt_task_def d;

    if (!o || !task_opts)
        return mt__set_error(NULL, -MT_EINVAL, "no options");
    if (task_opts->def.pg_id || task_opts->def.sel.n ||
        task_opts->def.place != MT_PLACE_DEFAULT)
        return mt__set_error(NULL, -MT_EINVAL, "a gang places its members "
                             "itself: no placement group, label selector "
                             "or strategy in their task options");
    mt_task_def_init(&d);
    if (mt_task_def_copy(&d, &task_opts->def) < 0)
        return mt__set_error(NULL, -MT_ENOMEM, "out of memory");
    mt_task_def_release(&o->def.member);
    o->def.member = d;
    return 0;
}

/* ---- calls --------------------------------------------------------------- */

int mt_gang_submit(mt_client_t *c, const mt_gang_opts_t *o,
                   const char *const *argv, size_t argc, char *id,
                   size_t idlen)
{
    struct mt_gang_def d;
    int rc;

    if (!mt__client_check(c) || !o || !argv || argc == 0 || !argv[0] ||
        !id || idlen < 17)
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "bad gang submit arguments");
    /* A shallow copy whose member takes argv (borrowed) for this call. */
    d = o->def;
    d.member.kind = MT_TASK_KIND_COMMAND;
    d.member.argv = (char **)argv;
    d.member.argc = argc;
    rc = mt__gang_submit(c, &d, id, idlen);
    if (rc == 0)
        mt__clear_error(c);
    return rc;
}

const char *mt_gang_state_name(mt_gang_state s)
{
    switch (s) {
    case MT_GANG_PENDING: return "PENDING";
    case MT_GANG_RUNNING: return "RUNNING";
    case MT_GANG_STOPPING: return "STOPPING";
    case MT_GANG_FINISHED: return "FINISHED";
    case MT_GANG_FAILED: return "FAILED";
    case MT_GANG_CANCELLED: return "CANCELLED";
    default: return "UNKNOWN";
    }
}

int mt_gang_get(mt_client_t *c, const char *id, mt_gang_detail **out)
{
    struct mt__gang_detail *d;
    int rc;

    if (!mt__client_check(c) || !id || !out)
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "bad gang get arguments");
    *out = NULL;
    if (mt__check_id(c, id, MT_ID_GANG) < 0)
        return -MT_EINVAL;
    rc = mt__gang_get(c, id, &d, NULL);
    if (rc == 0)
        *out = &d->pub;
    return rc;
}

void mt_gang_detail_free(mt_gang_detail *g)
{
    struct mt__gang_detail *d;

    if (!g)
        return;
    d = (struct mt__gang_detail *)((char *)g -
                                   offsetof(struct mt__gang_detail, pub));
    mt__keep_release(&d->keep);
    free(d);
}

int mt_gang_get_json(mt_client_t *c, const char *id, char **json)
{
    if (!mt__client_check(c) || !id || !json)
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "bad gang get arguments");
    *json = NULL;
    if (mt__check_id(c, id, MT_ID_GANG) < 0)
        return -MT_EINVAL;
    return mt__gang_get(c, id, NULL, json);
}

static bool ended(int s)
{
    return s == MT_GANG_FINISHED || s == MT_GANG_FAILED ||
           s == MT_GANG_CANCELLED;
}

/* One GetGang into info. RET 0 or the call's error. */
static int get_once(mt_client_t *c, const char *id, mt_gang_info_t *info)
{
    mt_gang_detail *g;
    int rc = mt_gang_get(c, id, &g);

    if (rc < 0)
        return rc;
    memset(info, 0, sizeof(*info));
    info->state = g->state;
    info->attempt = g->attempt;
    info->members = (uint32_t)g->n_members;
    info->exit_code = g->exit_code;
    snprintf(info->slice, sizeof(info->slice), "%s",
             g->n_slice_names ? g->slice_names[0] : "");
    snprintf(info->error, sizeof(info->error), "%s", g->error);
    mt_gang_detail_free(g);
    return 0;
}

int mt_gang_wait(mt_client_t *c, const char *id, int timeout_ms,
                 mt_gang_info_t *info)
{
    struct timespec dl = mt__deadline(timeout_ms < 0 ? 0 : timeout_ms);
    struct timespec pause = {0, POLL_MS * 1000000L};
    mt_gang_info_t mine;
    int rc;

    if (!mt__client_check(c) || !id)
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "bad gang wait arguments");
    if (!info)
        info = &mine;
    for (;;) {
        if ((rc = get_once(c, id, info)) < 0)
            return rc;
        if (ended(info->state))
            return 0;
        if (timeout_ms >= 0 && mt__ms_left(&dl) == 0)
            return mt__set_error(c, -MT_ETIMEDOUT, "gang %s still %s", id,
                                 info->state == MT_GANG_PENDING
                                     ? "waiting for slices" : "running");
        nanosleep(&pause, NULL);
    }
}

int mt_gang_cancel(mt_client_t *c, const char *id)
{
    if (!mt__client_check(c) || !id)
        return mt__set_error(mt__client_check(c) ? c : NULL, -MT_EINVAL,
                             "bad gang cancel arguments");
    if (mt__check_id(c, id, MT_ID_GANG) < 0)
        return -MT_EINVAL;
    return mt__gang_cancel(c, id);
}
