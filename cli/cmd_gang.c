/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_gang.c -- `manta gang get|cancel ID`: show and stop gangs through
 * libmanta (manta/gang.h). Submitting and following a gang is
 * follow_gang.c; `manta list gangs` is in cmd_list.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/conn.h"
#include "common/alloc.h"
#include "common/parse.h"

static void gang_usage(FILE *f)
{
    fprintf(f,
            "usage: manta gang get|cancel GANG_ID\n"
            "                  [--address HOST:PORT] [--temp-dir DIR]\n"
            "                  [--format text|json]\n"
            "\n"
            "Show a gang (state, slices, members of the current attempt) or\n"
            "cancel it: every member is stopped and its slices freed. Gangs\n"
            "are started by `manta submit --tpu TYPE -- PROGRAM`; list them\n"
            "with `manta list gangs`.\n");
}

static int gang_usage_error(const char *what)
{
    fprintf(stderr, "manta gang: %s\n", what);
    gang_usage(stderr);
    return MT_EXIT_USAGE;
}

static void text_gang(const mt_gang_detail *g)
{
    printf("gang %s  state %s  %u x %s  launch %s  attempt %u\n", g->gang_id,
           mt_gang_state_name(g->state), g->slices, g->pod_type,
           g->launch == MT_GANG_LAUNCH_DEVICE ? "device" : "host",
           g->attempt + 1);
    for (size_t i = 0; i < g->n_slice_names; i++)
        printf("slice %zu: %s\n", i, g->slice_names[i]);
    if (*g->error)
        printf("error: %s\n", g->error);
    for (size_t i = 0; i < g->n_members; i++) {
        const mt_gang_member_info *m = &g->members[i];

        printf("  rank %-3u host %-3u local %-3u task %-16s  %-9s  node %s\n",
               m->rank, m->host, m->local, *m->task_id ? m->task_id : "-",
               mt_task_state_name(m->state), *m->node_id ? m->node_id : "-");
    }
}

/* get (text or JSON) or cancel. RET the exit code. */
static int gang_cmd(mt_client_t *c, const char *verb, const char *id,
                    bool json)
{
    mt_gang_detail *g = NULL;
    char *text = NULL;
    int rc = strcmp(verb, "get") ? mt_gang_cancel(c, id)
             : json              ? mt_gang_get_json(c, id, &text)
                                 : mt_gang_get(c, id, &g);

    if (rc < 0) {
        fprintf(stderr, "manta gang %s: %s\n", verb, mt_client_last_error(c));
        return 1;
    }
    if (text)
        fputs(text, stdout);
    else if (g)
        text_gang(g);
    mt_free(text);
    mt_gang_detail_free(g);
    return 0;
}

static int cmd_gang(int argc, char **argv)
{
    const char *addr = NULL, *dir = NULL, *format = "text", *id = NULL;
    mt_client_t *c;
    int rc;

    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        gang_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? MT_EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "get") && strcmp(argv[1], "cancel"))
        return gang_usage_error("expected get or cancel");
    for (int i = 2; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--address") && v)
            addr = argv[++i];
        else if (!strcmp(argv[i], "--temp-dir") && v)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--format") && v &&
                 (!strcmp(v, "text") || !strcmp(v, "json")))
            format = argv[++i];
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            gang_usage(stdout);
            return 0;
        } else if (argv[i][0] != '-' && !id)
            id = argv[i];
        else
            return gang_usage_error("bad or incomplete argument");
    }
    if (!id)
        return gang_usage_error("which gang? give its id");
    if ((rc = mt_cli_connect("gang", addr, dir, MT_CLI_TIMEOUT_MS, &c)))
        return rc;
    rc = gang_cmd(c, argv[1], id, !strcmp(format, "json"));
    mt_client_disconnect(c);
    return rc;
}

const struct mt_cli_command mt_cli_cmd_gang = {
    "gang", cmd_gang,
    "show or cancel a gang (TPU slice program)"};
