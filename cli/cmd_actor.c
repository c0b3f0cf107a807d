/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_actor.c -- `manta actor get|kill ID|--name NAME`: one actor by id or
 * name through libmanta (mt_actor_lookup, mt_actor_lookup_json,
 * mt_actor_kill_id). `manta list actors` is in cmd_list.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/conn.h"
#include "cli/session.h"
#include "common/parse.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta actor get|kill (ACTOR_ID | --name NAME)\n"
            "                   [--address HOST:PORT] [--temp-dir DIR]\n"
            "                   [--restart] [--format text|json]\n"
            "\n"
            "get   print one actor (JSON with --format json)\n"
            "kill  kill the actor's executor; it is DEAD for good, or with\n"
            "      --restart it restarts while its max_restarts allows\n"
            "\n"
            "  --name NAME          the live actor with this name\n"
            "  --address HOST:PORT  the head (default: from the session dir)\n"
            "  --temp-dir DIR       session dir: head.addr, token (default %s)\n"
            "  -h, --help           this text\n"
            "\n"
            "See also: manta list actors\n",
            MT_DEFAULT_TEMP_DIR);
}

#define usage_error(...) mt_cli_usage_error("actor", usage, __VA_ARGS__)

/* Parsed command line of `manta actor`. */
struct actor_args {
    const char *addr, *dir, *name, *id, *format;
    bool restart;
};

/* The lookup failed: say which actor and why. */
static int not_found(mt_client_t *c, const char *id, const char *name)
{
    fprintf(stderr, "manta actor: %s%s: %s\n", id ? "actor " : "name ",
            id ? id : name, mt_client_last_error(c));
    return 1;
}

static int get_actor(mt_client_t *c, const struct actor_args *a)
{
    mt_actor_info info;
    char *json = NULL;

    if (!strcmp(a->format, "json")) {
        if (mt_actor_lookup_json(c, a->id, a->name, &json) < 0)
            return not_found(c, a->id, a->name);
        fputs(json, stdout);
        mt_free(json);
        return 0;
    }
    mt_actor_info_init(&info);
    if (mt_actor_lookup(c, a->id, a->name, &info) < 0)
        return not_found(c, a->id, a->name);
    printf("actor %s  name %s  state %s  node %s  pid %u  restarts %u/%d\n",
           info.actor_id, *info.name ? info.name : "-",
           mt_actor_state_name(info.state),
           *info.node_id ? info.node_id : "-", info.pid, info.num_restarts,
           info.max_restarts);
    if (*info.death_reason)
        printf("death reason: %s\n", info.death_reason);
    mt_actor_info_release(&info);
    return 0;
}

/* Kill the actor named by id or name (looked up first). */
static int kill_actor(mt_client_t *c, const struct actor_args *a)
{
    mt_actor_state state;
    mt_actor_info info;
    int rc;

    mt_actor_info_init(&info);
    if (mt_actor_lookup(c, a->id, a->name, &info) < 0)
        return not_found(c, a->id, a->name);
    rc = mt_actor_kill_id(c, info.actor_id, !a->restart, &state);
    if (rc < 0)
        fprintf(stderr, "manta actor: cannot kill %s: %s\n", info.actor_id,
                mt_client_last_error(c));
    else
        printf("actor %s: kill requested (it was %s; `manta actor get %s` "
               "shows it end)\n", info.actor_id, mt_actor_state_name(state),
               info.actor_id);
    mt_actor_info_release(&info);
    return rc < 0 ? 1 : 0;
}

static int parse(int argc, char **argv, struct actor_args *a)
{
    static const struct option opts[] = {
        MT_CLI_HEAD_OPTIONS,
        {"name", required_argument, NULL, 'n'},
        {"format", required_argument, NULL, 'f'},
        {"restart", no_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    optind = 2;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': a->addr = optarg; break;
        case 't': a->dir = optarg; break;
        case 'n': a->name = optarg; break;
        case 'f': a->format = optarg; break;
        case 'r': a->restart = true; break;
        case 'h': usage(stdout); return -1;
        default:
            return usage_error("unknown or incomplete option '%s'",
                               argv[optind - 1]);
        }
    }
    if (optind < argc)
        a->id = argv[optind++];
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (!a->id == !a->name)
        return usage_error("%s", "give an ACTOR_ID or --name NAME");
    if (a->id && !mt_cli_id_shaped(a->id))
        return usage_error("an actor id is a and 15 hex digits, not '%s'",
                           a->id);
    if (strcmp(a->format, "text") && strcmp(a->format, "json"))
        return usage_error("--format must be text or json, not '%s'",
                           a->format);
    return 0;
}

static int cmd_actor(int argc, char **argv)
{
    struct actor_args a = {NULL, NULL, NULL, NULL, "text", false};
    mt_client_t *c;
    int rc;

    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? MT_EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "get") && strcmp(argv[1], "kill"))
        return usage_error("unknown subcommand '%s': expected get or kill",
                           argv[1]);
    rc = parse(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    rc = mt_cli_connect("actor", a.addr, a.dir, MT_CLI_TIMEOUT_MS, &c);
    if (rc)
        return rc;
    rc = strcmp(argv[1], "kill") ? get_actor(c, &a) : kill_actor(c, &a);
    mt_client_disconnect(c);
    return rc;
}

const struct mt_cli_command mt_cli_cmd_actor = {
    "actor", cmd_actor,
    "show or kill an actor"};
