/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cluster_file.h -- the cluster file of `manta up` and `manta down`: which
 * hosts run the head and the workers, how to reach them over SSH, and the
 * commands each one runs (docs/deploy.md, deploy/cluster.example.toml).
 *
 * The file is TOML (the subset of common/toml.h):
 *
 *   [cluster]   name, port, temp_dir, local_dir, manta, ssh_user,
 *               ssh_options, ssh_command           (all optional)
 *   [head]      host, node_ip, temp_dir, args      (host required)
 *   [[workers]] host, node_ip, temp_dir, args      (one per worker node)
 *
 * Loading checks everything before anything runs: unknown tables and keys,
 * wrong types, bad values (a host that starts with '-' would be an ssh
 * option; two nodes with the same host and temp_dir would share a
 * session), and flags in args that `manta up` sets itself. Every message
 * reads "FILE:LINE: ...".
 *
 * The commands are argv arrays: the remote command is one ssh argument,
 * each of its words quoted for the remote shell (mt_strbuf_add_sh), so no
 * value from the file is ever interpreted by a shell. The cluster token
 * never appears in them: `manta start` reads it from its stdin
 * (--token-file /dev/stdin), which the caller feeds through ssh.
 *
 * Pure: no I/O but reading the file, no processes.
 */
#ifndef MT_CLI_CLUSTER_FILE_H
#define MT_CLI_CLUSTER_FILE_H

#include <stdbool.h>
#include <stddef.h>

#define MT_CLUSTER_DEFAULT_PORT 6380

/* A host of the cluster: the head's or a worker's. */
struct mt_cluster_node {
    char *host;      /* ssh destination: a name or an address */
    char *node_ip;   /* --node-ip: node_ip, else host when it is an IPv4
                        address, else NULL (manta start picks one) */
    char *temp_dir;  /* its session dir (node's, else [cluster]'s) */
    char **args;     /* extra `manta start` arguments */
    size_t n_args;
    int line;        /* line of its [head] / [[workers]] header */
};

struct mt_cluster {
    char *path;        /* the file, for messages */
    char *name;        /* default "manta" */
    int port;          /* the head's rpc port */
    char *temp_dir;    /* default session dir on the hosts (/tmp/manta) */
    char *local_dir;   /* on this machine: token, head.addr (default
                          /tmp/manta-up-<name>) */
    char *manta;       /* the manta command on the hosts ("manta") */
    char *ssh_user;    /* NULL: ssh's default */
    char **ssh_command; /* the program run instead of ssh (["ssh"]) */
    size_t n_ssh_command;
    char **ssh_options;
    size_t n_ssh_options;
    struct mt_cluster_node head;
    struct mt_cluster_node *workers;
    size_t n_workers;
};

/*
 * mt_cluster_parse - read a cluster file's text.
 * IN  path  named in messages
 * OUT c     filled; release with mt_cluster_release (also on failure)
 * OUT err   on failure "PATH:LINE: reason" (or "PATH: reason")
 * RET 0 or -MT_EINVAL
 */
int mt_cluster_parse(const char *text, const char *path, struct mt_cluster *c,
                     char *err, size_t errlen);

/* mt_cluster_load - read the file at path and parse it. RET as above,
 * or -errno when it cannot be read (err says so). */
int mt_cluster_load(const char *path, struct mt_cluster *c, char *err,
                    size_t errlen);

/* mt_cluster_release - free everything; c is zeroed. */
void mt_cluster_release(struct mt_cluster *c);

/* mt_cluster_head_address - "HOST:PORT" workers join: the head's
 * node_ip (unless 0.0.0.0), else its host. RET owned, free(). */
char *mt_cluster_head_address(const struct mt_cluster *c);

/* Which command a host runs. */
enum mt_cluster_cmd {
    MT_CLUSTER_START_HEAD,   /* manta start --head ... --token-file /dev/stdin */
    MT_CLUSTER_START_WORKER, /* manta start --address HEAD ... (same) */
    MT_CLUSTER_STOP,         /* manta stop --temp-dir D */
};

/*
 * mt_cluster_argv - the local argv that runs cmd on node n:
 *   SSH_COMMAND... SSH_OPTIONS... -o BatchMode=yes -- [USER@]HOST 'REMOTE'
 * where REMOTE is the command's words, each quoted for the remote shell.
 * RET owned NULL-terminated array, free with mt_cluster_argv_free()
 */
char **mt_cluster_argv(const struct mt_cluster *c,
                       const struct mt_cluster_node *n,
                       enum mt_cluster_cmd cmd);

/* mt_cluster_argv_free - free an array from mt_cluster_argv. */
void mt_cluster_argv_free(char **argv);

#endif /* MT_CLI_CLUSTER_FILE_H */
