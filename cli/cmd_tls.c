/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_tls.c -- `manta tls-init`: a throwaway certificate authority and one
 * certificate for the nodes and clients of a test cluster, made with the
 * openssl command (docs/security.md, "TLS").
 *
 * The certificate names every address the cluster's rpc targets use
 * (gRPC checks the target host against its subjectAltName) and serves as
 * server and client certificate alike, so `--tls-cert/--tls-key/--tls-ca`
 * with these three files gives every node mutual TLS. Keys are written
 * 0600. Real clusters should use their own CA and a certificate per node.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/conn.h"
#include "common/alloc.h"
#include "common/parse.h"
#include "common/strbuf.h"
#include "common/sys.h"

#define MAX_NAMES 64

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta tls-init --dir DIR [--ip IP]... [--dns NAME]...\n"
            "                      [--days N]\n"
            "\n"
            "Make a self-signed CA and a node certificate for a test cluster\n"
            "(with the openssl command): DIR/ca.pem, DIR/ca.key, DIR/node.pem,\n"
            "DIR/node.key. The certificate is valid for 127.0.0.1, localhost,\n"
            "this machine's primary address and hostname, and each --ip and\n"
            "--dns given; it is both server and client certificate. Then on\n"
            "every node:\n"
            "    manta start ... --tls-cert DIR/node.pem --tls-key DIR/node.key \\\n"
            "                    --tls-ca DIR/ca.pem\n"
            "and for drivers: MANTA_TLS_CERT, MANTA_TLS_KEY, MANTA_TLS_CA.\n"
            "\n"
            "  --dir DIR     where to write (created 0700; files there are\n"
            "                replaced)\n"
            "  --ip IP       one more address the cluster's nodes use\n"
            "  --dns NAME    one more host name\n"
            "  --days N      validity (default 365)\n"
            "  -h, --help    this text\n");
}

#define usage_error(...) mt_cli_usage_error("tls-init", usage, __VA_ARGS__)

/* Run openssl with args (NULL-ended, args[0] = "openssl"); its chatter
 * goes to log, shown only when it fails. RET 0 or 1 (said why). */
static int openssl(char *const args[], const char *log)
{
    int status;
    char *out;
    pid_t pid = fork();

    if (pid < 0) {
        fprintf(stderr, "manta tls-init: fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp("openssl", args);
        fprintf(stderr, "cannot run openssl: %s (install the openssl "
                "package)\n", strerror(errno));
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    out = mt_sys_read_file(log);
    fprintf(stderr, "manta tls-init: openssl %s failed:\n%s", args[1],
            out ? out : "");
    free(out);
    return 1;
}

/* The subjectAltName: the defaults and every --ip / --dns. */
static char *alt_names(char **ips, int n_ips, char **dns, int n_dns)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char ip[64], host[256], *san;

    mt_sys_primary_ip(ip, sizeof(ip));
    mt_sys_hostname(host, sizeof(host));
    mt_strbuf_addf(&sb, "subjectAltName=IP:127.0.0.1,DNS:localhost");
    if (strcmp(ip, "127.0.0.1") != 0)
        mt_strbuf_addf(&sb, ",IP:%s", ip);
    if (strcmp(host, "localhost") != 0)
        mt_strbuf_addf(&sb, ",DNS:%s", host);
    for (int i = 0; i < n_ips; i++)
        mt_strbuf_addf(&sb, ",IP:%s", ips[i]);
    for (int i = 0; i < n_dns; i++)
        mt_strbuf_addf(&sb, ",DNS:%s", dns[i]);
    san = mt_xstrdup(mt_strbuf_str(&sb));
    mt_strbuf_release(&sb);
    return san;
}

/* The three openssl runs. RET 0 or 1. */
static int make_certs(const char *dir, const char *days, const char *san)
{
    char *ca = mt_xasprintf("%s/ca.pem", dir);
    char *ca_key = mt_xasprintf("%s/ca.key", dir);
    char *node = mt_xasprintf("%s/node.pem", dir);
    char *node_key = mt_xasprintf("%s/node.key", dir);
    char *csr = mt_xasprintf("%s/node.csr", dir);
    char *serial = mt_xasprintf("%s/ca.srl", dir);
    char *log = mt_xasprintf("%s/openssl.log", dir);
    char *mk_ca[] = {"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                     "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                     ca_key, "-out", ca, "-days", (char *)days, "-subj",
                     "/CN=manta test CA", "-addext",
                     "basicConstraints=critical,CA:TRUE", "-addext",
                     "keyUsage=critical,keyCertSign,cRLSign", NULL};
    char *mk_csr[] = {"openssl", "req", "-newkey", "ec", "-pkeyopt",
                      "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                      node_key, "-out", csr, "-subj", "/CN=manta node",
                      "-addext", (char *)san, "-addext",
                      "extendedKeyUsage=serverAuth,clientAuth", NULL};
    char *sign[] = {"openssl", "x509", "-req", "-in", csr, "-CA", ca,
                    "-CAkey", ca_key, "-CAserial", serial, "-CAcreateserial",
                    "-out", node, "-days", (char *)days, "-copy_extensions",
                    "copyall", NULL};
    int rc = openssl(mk_ca, log) || openssl(mk_csr, log) ||
             openssl(sign, log);

    unlink(csr);
    unlink(serial);
    unlink(log);
    if (rc == 0)
        printf("Wrote %s (CA), %s and %s (node certificate and key).\n"
               "Start every node with:\n"
               "    --tls-cert %s --tls-key %s --tls-ca %s\n",
               ca, node, node_key, node, node_key, ca);
    free(ca);
    free(ca_key);
    free(node);
    free(node_key);
    free(csr);
    free(serial);
    free(log);
    return rc;
}

static int cmd_tls_init(int argc, char **argv)
{
    static const struct option opts[] = {
        {"dir", required_argument, NULL, 'd'},
        {"ip", required_argument, NULL, 'i'},
        {"dns", required_argument, NULL, 'n'},
        {"days", required_argument, NULL, 'D'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char *ips[MAX_NAMES], *dns[MAX_NAMES], *san;
    const char *dir = NULL, *days = "365";
    int c, n_ips = 0, n_dns = 0, rc;
    long v;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 'i':
            if (!mt_valid_ipv4(optarg) || n_ips == MAX_NAMES)
                return usage_error("--ip wants an IPv4 address (at most %d), "
                                   "not '%s'", MAX_NAMES, optarg);
            ips[n_ips++] = optarg;
            break;
        case 'n':
            if (!*optarg || strpbrk(optarg, ",= \t") || n_dns == MAX_NAMES)
                return usage_error("--dns wants a host name (at most %d), "
                                   "not '%s'", MAX_NAMES, optarg);
            dns[n_dns++] = optarg;
            break;
        case 'D':
            if (!mt_parse_int(optarg, 1, 36500, &v))
                return usage_error("--days wants 1 to 36500, not '%s'",
                                   optarg);
            days = optarg;
            break;
        case 'h': usage(stdout); return 0;
        default:
            return usage_error("unknown or incomplete option '%s'",
                               argv[optind - 1]);
        }
    }
    if (!dir)
        return usage_error("%s", "--dir is required");
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if ((rc = mt_sys_mkdir_private(dir)) < 0) {
        fprintf(stderr, "manta tls-init: cannot use %s: %s\n", dir,
                rc == -EPERM ? "not a directory of this user" : strerror(-rc));
        return 1;
    }
    umask(077); /* the keys */
    san = alt_names(ips, n_ips, dns, n_dns);
    rc = make_certs(dir, days, san);
    free(san);
    return rc;
}

const struct mt_cli_command mt_cli_cmd_tls_init = {
    "tls-init", cmd_tls_init,
    "make a test CA and node certificate for a TLS cluster"};
