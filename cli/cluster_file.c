/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cluster_file.c -- the cluster file's schema and the commands it implies
 * (see cluster_file.h).
 *
 * The TOML reader gives a flat list of headers and keys in file order; the
 * schema walks it once, keeping the table it is in, and each key is looked
 * up in its table's field list, which gives the value's type, where it is
 * stored and the check its value must pass. Defaults are filled in at the
 * end, when every key has been seen.
 */
#include "cli/cluster_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/parse.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "common/toml.h"

struct ctx {
    struct mt_cluster *c;
    char *err;
    size_t errlen;
};

static int bad(struct ctx *x, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "PATH:LINE: reason" (no line: "PATH: reason"). RET -MT_EINVAL. */
static int bad(struct ctx *x, int line, const char *fmt, ...)
{
    char why[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (line > 0)
        snprintf(x->err, x->errlen, "%s:%d: %s", x->c->path, line, why);
    else
        snprintf(x->err, x->errlen, "%s: %s", x->c->path, why);
    return -MT_EINVAL;
}

/* ---- value checks: NULL when fine, else what was expected ---------------- */

static const char *check_name(const struct mt_toml_value *v)
{
    size_t n = strlen(v->str);

    return n == 0 || n > 64 || strspn(v->str, "abcdefghijklmnopqrstuvwxyz"
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789_.-") != n
                   ? "expected 1 to 64 letters, digits, '_', '.' or '-'"
                   : NULL;
}

static const char *check_port(const struct mt_toml_value *v)
{
    return v->i < 1 || v->i > 65535 ? "expected a port from 1 to 65535"
                                    : NULL;
}

static const char *check_path(const struct mt_toml_value *v)
{
    return *v->str ? NULL : "expected a path, not an empty string";
}

/* The remote command's first word: a bare NAME=x would be an assignment
 * to the remote shell (mt_strbuf_add_sh leaves '=' unquoted). */
static const char *check_program(const struct mt_toml_value *v)
{
    return strchr(v->str, '=') ? "expected a path without '='"
                               : check_path(v);
}

/* A word ssh takes as a destination or user: no option, no spaces. */
static const char *check_ssh_word(const char *s, bool user)
{
    if (!*s)
        return "expected a name, not an empty string";
    if (*s == '-')
        return "may not start with '-' (ssh would take it as an option)";
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f || *s == '@')
            return user ? "expected a user name without spaces or '@'"
                        : "expected a host name or address without spaces "
                          "or '@' (set the user with ssh_user in [cluster])";
    return NULL;
}

static const char *check_host(const struct mt_toml_value *v)
{
    return check_ssh_word(v->str, false);
}

static const char *check_user(const struct mt_toml_value *v)
{
    return check_ssh_word(v->str, true);
}

static const char *check_ip(const struct mt_toml_value *v)
{
    return mt_valid_ipv4(v->str) ? NULL : "expected an IPv4 address";
}

static const char *check_command(const struct mt_toml_value *v)
{
    return v->n == 0 || !*v->strs[0] ? "expected a program and its "
                                       "arguments, e.g. [\"ssh\"]"
                                     : NULL;
}

/* `manta start` flags that `manta up` sets from the file itself. */
static const char *check_args(const struct mt_toml_value *v)
{
    static const char *const owned[] = {
        "--head", "--address", "--port", "--temp-dir", "--node-ip",
        "--token-file", "--auth", "--block",
    };
    for (size_t i = 0; i < v->n; i++)
        for (size_t j = 0; j < sizeof(owned) / sizeof(owned[0]); j++) {
            size_t n = strlen(owned[j]);

            if (strncmp(v->strs[i], owned[j], n) == 0 &&
                (v->strs[i][n] == '\0' || v->strs[i][n] == '=')) {
                return "args may not hold --head, --address, --port, "
                       "--temp-dir, --node-ip, --token-file, --auth or "
                       "--block: manta up sets them (from host, node_ip, "
                       "temp_dir and port; the token is always on)";
            }
        }
    return NULL;
}

/* ---- fields -------------------------------------------------------------- */

struct field {
    const char *key;
    enum mt_toml_type type;
    size_t off;   /* char *, int, or char ** with its count at off_n */
    size_t off_n;
    /* NULL when the value is fine, else what was expected */
    const char *(*check)(const struct mt_toml_value *v);
};

#define CF(key, type, member, check)                                          \
    {key, type, offsetof(struct mt_cluster, member), 0, check}
#define CV(key, member, check)                                                \
    {key, MT_TOML_STRINGS, offsetof(struct mt_cluster, member),               \
     offsetof(struct mt_cluster, n_##member), check}

static const struct field cluster_fields[] = {
    CF("name", MT_TOML_STRING, name, check_name),
    CF("port", MT_TOML_INT, port, check_port),
    CF("temp_dir", MT_TOML_STRING, temp_dir, check_path),
    CF("local_dir", MT_TOML_STRING, local_dir, check_path),
    CF("manta", MT_TOML_STRING, manta, check_program),
    CF("ssh_user", MT_TOML_STRING, ssh_user, check_user),
    CV("ssh_options", ssh_options, NULL),
    CV("ssh_command", ssh_command, check_command),
    {NULL, 0, 0, 0, NULL},
};

static const struct field node_fields[] = {
    {"host", MT_TOML_STRING, offsetof(struct mt_cluster_node, host), 0,
     check_host},
    {"node_ip", MT_TOML_STRING, offsetof(struct mt_cluster_node, node_ip), 0,
     check_ip},
    {"temp_dir", MT_TOML_STRING, offsetof(struct mt_cluster_node, temp_dir),
     0, check_path},
    {"args", MT_TOML_STRINGS, offsetof(struct mt_cluster_node, args),
     offsetof(struct mt_cluster_node, n_args), check_args},
    {NULL, 0, 0, 0, NULL},
};

static char **copy_strs(const struct mt_toml_value *v)
{
    char **out = mt_xcalloc(v->n + 1, sizeof(*out));

    for (size_t i = 0; i < v->n; i++)
        out[i] = mt_xstrdup(v->strs[i]);
    return out;
}

/* "name, port, ..." of a field list, for messages. */
static void list_keys(const struct field *f, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (; f->key && used < len; f++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 used ? ", " : "", f->key);
}

/* Store one key of a table whose fields are fs into the struct at base. */
static int set_key(struct ctx *x, const char *table, const struct field *fs,
                   void *base, const struct mt_toml_item *it)
{
    const struct field *f = fs;
    const char *why;
    char keys[200];

    while (f->key && strcmp(f->key, it->name) != 0)
        f++;
    if (!f->key) {
        list_keys(fs, keys, sizeof(keys));
        return bad(x, it->line, "unknown key '%s' in %s: expected one of "
                   "%s", it->name, table, keys);
    }
    if (it->v.type != f->type)
        return bad(x, it->line, "'%s' must be %s, not %s", it->name,
                   mt_toml_type_name(f->type), mt_toml_type_name(it->v.type));
    if (f->check && (why = f->check(&it->v)))
        return bad(x, it->line, "'%s': %s", it->name, why);
    if (f->type == MT_TOML_INT) {
        *(int *)((char *)base + f->off) = (int)it->v.i;
    } else if (f->type == MT_TOML_STRING) {
        *(char **)((char *)base + f->off) = mt_xstrdup(it->v.str);
    } else {
        *(char ***)((char *)base + f->off) = copy_strs(&it->v);
        *(size_t *)((char *)base + f->off_n) = it->v.n;
    }
    return 0;
}

/* ---- walking the file ---------------------------------------------------- */

enum where { IN_ROOT, IN_CLUSTER, IN_HEAD, IN_WORKER };

/* A header: the table the keys after it go to. RET 0 or error. */
static int enter(struct ctx *x, const struct mt_toml_item *it,
                 enum where *w)
{
    struct mt_cluster *c = x->c;
    bool array = it->kind == MT_TOML_TABLE_ARRAY;

    if (strcmp(it->name, "cluster") == 0 && !array) {
        *w = IN_CLUSTER;
    } else if (strcmp(it->name, "head") == 0 && !array) {
        *w = IN_HEAD;
        c->head.line = it->line;
    } else if (strcmp(it->name, "workers") == 0 && array) {
        *w = IN_WORKER;
        c->workers = mt_xrealloc(c->workers, (c->n_workers + 1) *
                                                 sizeof(*c->workers));
        memset(&c->workers[c->n_workers], 0, sizeof(*c->workers));
        c->workers[c->n_workers++].line = it->line;
    } else if (strcmp(it->name, "workers") == 0 ||
               strcmp(it->name, "head") == 0 ||
               strcmp(it->name, "cluster") == 0) {
        return bad(x, it->line, "expected %s", array
                   ? (strcmp(it->name, "head") == 0 ? "[head] (there is "
                      "one head)" : "[cluster]")
                   : "[[workers]] (one per worker host)");
    } else {
        return bad(x, it->line, "unknown table %s%s%s: expected [cluster], "
                   "[head] or [[workers]]", array ? "[[" : "[", it->name,
                   array ? "]]" : "]");
    }
    return 0;
}

static int walk(struct ctx *x, const struct mt_toml_doc *d)
{
    enum where w = IN_ROOT;
    int rc = 0;

    for (size_t i = 0; i < d->n && rc == 0; i++) {
        const struct mt_toml_item *it = &d->items[i];

        if (it->kind != MT_TOML_KEY)
            rc = enter(x, it, &w);
        else if (w == IN_ROOT)
            rc = bad(x, it->line, "key '%s' outside a table: expected it "
                     "under [cluster], [head] or [[workers]]", it->name);
        else if (w == IN_CLUSTER)
            rc = set_key(x, "[cluster]", cluster_fields, x->c, it);
        else if (w == IN_HEAD)
            rc = set_key(x, "[head]", node_fields, &x->c->head, it);
        else
            rc = set_key(x, "[[workers]]", node_fields,
                         &x->c->workers[x->c->n_workers - 1], it);
    }
    return rc;
}

/* ---- defaults and whole-file checks -------------------------------------- */

static void node_defaults(const struct mt_cluster *c,
                          struct mt_cluster_node *n)
{
    if (!n->temp_dir)
        n->temp_dir = mt_xstrdup(c->temp_dir);
    if (!n->node_ip && mt_valid_ipv4(n->host))
        n->node_ip = mt_xstrdup(n->host);
    if (!n->args)
        n->args = mt_xcalloc(1, sizeof(*n->args));
}

static int finish_node(struct ctx *x, struct mt_cluster_node *n,
                       const char *what, size_t index)
{
    const struct mt_cluster *c = x->c;

    if (!n->host)
        return bad(x, n->line, "%s has no host: expected host = \"NAME "
                   "OR ADDRESS\"", what);
    node_defaults(c, n);
    /* Two nodes in one session dir would stop each other. */
    for (size_t i = 0; i < index; i++) {
        const struct mt_cluster_node *o = i == 0 ? &c->head
                                                 : &c->workers[i - 1];

        if (strcmp(o->host, n->host) == 0 &&
            strcmp(o->temp_dir, n->temp_dir) == 0)
            return bad(x, n->line, "%s on host %s uses temp_dir %s like the "
                       "node on line %d: give each node on a host its own "
                       "temp_dir", what, n->host, n->temp_dir, o->line);
    }
    return 0;
}

static int finish(struct ctx *x)
{
    struct mt_cluster *c = x->c;
    int rc;

    if (!c->name)
        c->name = mt_xstrdup("manta");
    if (!c->temp_dir)
        c->temp_dir = mt_xstrdup("/tmp/manta");
    if (!c->local_dir)
        c->local_dir = mt_xasprintf("/tmp/manta-up-%s", c->name);
    if (!c->manta)
        c->manta = mt_xstrdup("manta");
    if (!c->ssh_command) {
        c->ssh_command = mt_xcalloc(2, sizeof(char *));
        c->ssh_command[0] = mt_xstrdup("ssh");
        c->n_ssh_command = 1;
    }
    if (!c->ssh_options)
        c->ssh_options = mt_xcalloc(1, sizeof(char *));
    if (!c->head.line)
        return bad(x, 0, "no [head] table: expected [head] with the host "
                   "of the head node");
    if ((rc = finish_node(x, &c->head, "[head]", 0)) < 0)
        return rc;
    for (size_t i = 0; i < c->n_workers; i++)
        if ((rc = finish_node(x, &c->workers[i], "[[workers]]", i + 1)) < 0)
            return rc;
    return 0;
}

int mt_cluster_parse(const char *text, const char *path, struct mt_cluster *c,
                     char *err, size_t errlen)
{
    struct ctx x = {c, err, errlen};
    struct mt_toml_doc d;
    struct mt_toml_error e;
    int rc;

    memset(c, 0, sizeof(*c));
    c->path = mt_xstrdup(path);
    c->port = MT_CLUSTER_DEFAULT_PORT;
    if ((rc = mt_toml_parse(text, &d, &e)) < 0)
        rc = bad(&x, e.line, "%s", e.msg);
    if (rc == 0)
        rc = walk(&x, &d);
    if (rc == 0)
        rc = finish(&x);
    mt_toml_release(&d);
    return rc;
}

int mt_cluster_load(const char *path, struct mt_cluster *c, char *err,
                    size_t errlen)
{
    char *text = mt_sys_read_file(path);
    struct stat st;
    int rc;

    if (!text) {
        rc = -errno;
        memset(c, 0, sizeof(*c));
        snprintf(err, errlen, "%s: cannot read it: %s", path, strerror(-rc));
        return rc;
    }
    /* A NUL would end the text early and hide what follows it. */
    if (stat(path, &st) == 0 && (!S_ISREG(st.st_mode) ||
                                 (size_t)st.st_size != strlen(text))) {
        memset(c, 0, sizeof(*c));
        snprintf(err, errlen, "%s: %s", path, S_ISREG(st.st_mode)
                 ? "holds a NUL byte: not a text file"
                 : "not a regular file");
        free(text);
        return -MT_EINVAL;
    }
    rc = mt_cluster_parse(text, path, c, err, errlen);
    free(text);
    return rc;
}

static void free_strs(char **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void node_release(struct mt_cluster_node *n)
{
    free(n->host);
    free(n->node_ip);
    free(n->temp_dir);
    free_strs(n->args, n->n_args);
}

void mt_cluster_release(struct mt_cluster *c)
{
    free(c->path);
    free(c->name);
    free(c->temp_dir);
    free(c->local_dir);
    free(c->manta);
    free(c->ssh_user);
    free_strs(c->ssh_command, c->n_ssh_command);
    free_strs(c->ssh_options, c->n_ssh_options);
    node_release(&c->head);
    for (size_t i = 0; i < c->n_workers; i++)
        node_release(&c->workers[i]);
    free(c->workers);
    memset(c, 0, sizeof(*c));
}

/* ---- commands ------------------------------------------------------------ */

char *mt_cluster_head_address(const struct mt_cluster *c)
{
    const char *ip = c->head.node_ip;

    if (!ip || strcmp(ip, "0.0.0.0") == 0)
        ip = c->head.host;
    return mt_xasprintf("%s:%d", ip, c->port);
}

/* The remote command's words, each quoted, joined by spaces. */
static void remote_words(const struct mt_cluster *c,
                         const struct mt_cluster_node *n,
                         enum mt_cluster_cmd cmd, struct mt_strbuf *sb)
{
    const char *words[12];
    char port[8], *head = NULL;
    size_t k = 0;

    words[k++] = c->manta;
    words[k++] = cmd == MT_CLUSTER_STOP ? "stop" : "start";
    if (cmd == MT_CLUSTER_START_HEAD) {
        snprintf(port, sizeof(port), "%d", c->port);
        words[k++] = "--head";
        words[k++] = "--port";
        words[k++] = port;
    } else if (cmd == MT_CLUSTER_START_WORKER) {
        head = mt_cluster_head_address(c);
        words[k++] = "--address";
        words[k++] = head;
    }
    words[k++] = "--temp-dir";
    words[k++] = n->temp_dir;
    if (cmd != MT_CLUSTER_STOP && n->node_ip) {
        words[k++] = "--node-ip";
        words[k++] = n->node_ip;
    }
    if (cmd != MT_CLUSTER_STOP) {
        words[k++] = "--token-file";
        words[k++] = "/dev/stdin";
    }
    mt_strbuf_add_sh_words(sb, words, k);
    if (cmd != MT_CLUSTER_STOP)
        mt_strbuf_add_sh_words(sb, (const char *const *)n->args, n->n_args);
    free(head);
}

char **mt_cluster_argv(const struct mt_cluster *c,
                       const struct mt_cluster_node *n,
                       enum mt_cluster_cmd cmd)
{
    size_t max = c->n_ssh_command + c->n_ssh_options + 6, k = 0;
    char **argv = mt_xcalloc(max, sizeof(*argv));
    struct mt_strbuf sb = MT_STRBUF_INIT;

    for (size_t i = 0; i < c->n_ssh_command; i++)
        argv[k++] = mt_xstrdup(c->ssh_command[i]);
    for (size_t i = 0; i < c->n_ssh_options; i++)
        argv[k++] = mt_xstrdup(c->ssh_options[i]);
    argv[k++] = mt_xstrdup("-o");
    argv[k++] = mt_xstrdup("BatchMode=yes");
    argv[k++] = mt_xstrdup("--");
    argv[k++] = c->ssh_user ? mt_xasprintf("%s@%s", c->ssh_user, n->host)
                            : mt_xstrdup(n->host);
    remote_words(c, n, cmd, &sb);
    argv[k++] = mt_xstrdup(mt_strbuf_str(&sb));
    mt_strbuf_release(&sb);
    return argv;
}

void mt_cluster_argv_free(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}
