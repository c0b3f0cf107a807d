/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_actor.c -- the CLI's actors: `manta list actors` (ListActors, newest
 * first, as a table or one JSON object {"total": N, "actors": [...]}) and
 * `manta actor get|kill ID|--name NAME` (GetActor, KillActor).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/session.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/error.h"
#include "common/strbuf.h"
#include "head_service.pb-c.h"
#include "proto/list_json.h"
#include "proto/services.h"

#define ACTOR_TIMEOUT_MS 4000

static const char *state_name(int s)
{
    switch (s) {
    case MANTA__ACTOR_STATE__ACTOR_STATE_PENDING_CREATION:
        return "PENDING_CREATION";
    case MANTA__ACTOR_STATE__ACTOR_STATE_ALIVE: return "ALIVE";
    case MANTA__ACTOR_STATE__ACTOR_STATE_RESTARTING: return "RESTARTING";
    case MANTA__ACTOR_STATE__ACTOR_STATE_DEAD: return "DEAD";
    default: return "UNKNOWN";
    }
}

static void text_actors(const Manta__ListActorsReply *r, struct mt_strbuf *sb)
{
    mt_strbuf_addf(sb, "Total: %llu", (unsigned long long)r->total);
    if (r->n_actors < r->total)
        mt_strbuf_addf(sb, " (showing %zu; raise --limit to see more)",
                       r->n_actors);
    mt_strbuf_addf(sb, "\n\n%-16s  %-16s  %-16s  %-32s  %-8s  %-8s  %s\n",
                   "ACTOR_ID", "NAME", "STATE", "NODE", "PID", "RESTARTS",
                   "DEATH_REASON");
    for (size_t i = 0; i < r->n_actors; i++) {
        const Manta__ActorInfo *a = r->actors[i];

        mt_strbuf_addf(sb, "%-16s  %-16s  %-16s  %-32s  %-8u  %-8u  %s\n",
                       a->actor_id, *a->name ? a->name : "-",
                       state_name(a->state), *a->node_id ? a->node_id : "-",
                       a->pid, a->num_restarts,
                       *a->death_reason ? a->death_reason : "-");
    }
}

int mt_cli_list_actors(const char *addr, long limit, bool json)
{
    Manta__ListActorsRequest req = MANTA__LIST_ACTORS_REQUEST__INIT;
    Manta__ListActorsReply *r;
    struct mt_strbuf sb = MT_STRBUF_INIT;
    ProtobufCMessage *resp;
    char err[512] = "";

    req.limit = (uint32_t)limit;
    if (mt_cli_call(addr, &mt_head_list_actors, &req.base, ACTOR_TIMEOUT_MS,
                    &resp, err, sizeof(err)) < 0) {
        mt_cli_one_line(err);
        fprintf(stderr, "manta list: cannot list actors at %s: %s\n", addr,
                err);
        return 1;
    }
    r = (Manta__ListActorsReply *)resp;
    if (json)
        mt_list_json_actors(&sb, r);
    else
        text_actors(r, &sb);
    fputs(mt_strbuf_str(&sb), stdout);
    mt_strbuf_release(&sb);
    manta__list_actors_reply__free_unpacked(r, NULL);
    return 0;
}

/* ---- manta actor get|kill ------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta actor get|kill (ACTOR_ID | --name NAME)\n"
            "                   [--address HOST:PORT | --temp-dir DIR]\n"
            "                   [--restart] [--format text|json]\n"
            "\n"
            "get   print one actor (JSON with --format json)\n"
            "kill  kill the actor's executor; it is DEAD for good, or with\n"
            "      --restart it restarts while its max_restarts allows\n"
            "\n"
            "  --name NAME          the live actor with this name\n"
            "  --address HOST:PORT  the head (default: from the session dir)\n"
            "  --temp-dir DIR       session dir holding head.addr (default %s)\n"
            "  -h, --help           this text\n"
            "\n"
            "See also: manta list actors\n",
            MT_DEFAULT_TEMP_DIR);
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "manta actor: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return MT_EXIT_USAGE;
}

/* GetActor by id or name. RET 0 with *out owned, or 1 (printed why). */
static int get_actor(const char *head, const char *id, const char *name,
                     Manta__GetActorReply **out)
{
    Manta__GetActorRequest req = MANTA__GET_ACTOR_REQUEST__INIT;
    ProtobufCMessage *resp;
    char err[512] = "";

    req.actor_id = (char *)(id ? id : "");
    req.name = (char *)(name ? name : "");
    if (mt_cli_call(head, &mt_head_get_actor, &req.base, ACTOR_TIMEOUT_MS,
                    &resp, err, sizeof(err)) < 0) {
        mt_cli_one_line(err);
        fprintf(stderr, "manta actor: %s%s: %s\n", id ? "actor " : "name ",
                id ? id : name, err);
        return 1;
    }
    *out = (Manta__GetActorReply *)resp;
    if (!(*out)->actor) {
        manta__get_actor_reply__free_unpacked(*out, NULL);
        fprintf(stderr, "manta actor: the head sent no actor\n");
        return 1;
    }
    return 0;
}

static int kill_actor(const char *head, const char *id, bool restart)
{
    Manta__KillActorRequest req = MANTA__KILL_ACTOR_REQUEST__INIT;
    ProtobufCMessage *resp;
    char err[512] = "";
    int state;

    req.actor_id = (char *)id;
    req.no_restart = !restart;
    if (mt_cli_call(head, &mt_head_kill_actor, &req.base, ACTOR_TIMEOUT_MS,
                    &resp, err, sizeof(err)) < 0) {
        mt_cli_one_line(err);
        fprintf(stderr, "manta actor: cannot kill %s: %s\n", id, err);
        return 1;
    }
    state = ((Manta__KillActorReply *)resp)->state;
    printf("actor %s: kill requested (it was %s; `manta actor get %s` "
           "shows it end)\n", id, state_name(state), id);
    manta__kill_actor_reply__free_unpacked((Manta__KillActorReply *)resp,
                                           NULL);
    return 0;
}

/* Parsed command line of `manta actor`. */
struct actor_args {
    const char *addr, *dir, *name, *id, *format;
    bool restart;
};

static int parse(int argc, char **argv, struct actor_args *a)
{
    static const struct option opts[] = {
        {"address", required_argument, NULL, 'a'},
        {"temp-dir", required_argument, NULL, 't'},
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
    if (a->id && strlen(a->id) != 16)
        return usage_error("an actor id is 16 hex digits, not '%s'", a->id);
    if (strcmp(a->format, "text") && strcmp(a->format, "json"))
        return usage_error("--format must be text or json, not '%s'",
                           a->format);
    return 0;
}

int mt_cmd_actor(int argc, char **argv)
{
    struct actor_args a = {NULL, NULL, NULL, NULL, "text", false};
    Manta__GetActorReply *r = NULL;
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char *head = NULL;
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
    rc = mt_cli_head_addr("actor", a.addr, a.dir, &head);
    if (rc)
        return rc;
    rc = get_actor(head, a.id, a.name, &r);
    if (rc == 0 && !strcmp(argv[1], "kill")) {
        rc = kill_actor(head, r->actor->actor_id, a.restart);
    } else if (rc == 0) {
        if (!strcmp(a.format, "json")) {
            mt_json_actor(&sb, r->actor);
            mt_strbuf_adds(&sb, "\n");
        } else {
            mt_strbuf_addf(&sb, "actor %s  name %s  state %s  node %s  pid %u"
                           "  restarts %u/%d\n", r->actor->actor_id,
                           *r->actor->name ? r->actor->name : "-",
                           state_name(r->actor->state),
                           *r->actor->node_id ? r->actor->node_id : "-",
                           r->actor->pid, r->actor->num_restarts,
                           r->actor->max_restarts);
            if (*r->actor->death_reason)
                mt_strbuf_addf(&sb, "death reason: %s\n",
                               r->actor->death_reason);
        }
        fputs(mt_strbuf_str(&sb), stdout);
    }
    mt_strbuf_release(&sb);
    if (r)
        manta__get_actor_reply__free_unpacked(r, NULL);
    free(head);
    return rc;
}
