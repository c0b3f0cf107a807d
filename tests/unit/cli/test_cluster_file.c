/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_cluster_file.c -- `manta up`'s cluster file (cli/cluster_file.h):
 * a full file with its defaults filled in, the commands each host runs
 * (ssh argv, quoted remote words, no token), and every kind of bad file
 * with the FILE:LINE message it gets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cluster_file.h"
#include "tests/unit/unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char full[] =
    "# manta cluster file\n"
    "[cluster]\n"
    "name = \"lab\"\n"
    "port = 6390\n"
    "ssh_user = \"ubuntu\"\n"
    "ssh_options = [\"-i\", \"/k/id\"]\n"
    "manta = \"/opt/manta/bin/manta\"\n"
    "[head]\n"
    "host = \"10.0.0.1\"\n"
    "args = [\"--dashboard-host\", \"0.0.0.0\"]\n"
    "[[workers]]\n"
    "host = \"gpu-1\"\n"
    "args = [\"--num-gpus\", \"8\", \"--labels\", \"zone=a b\",\n"
    "        \"--resources\", '{\"a\": 1}', \"x=y\"]\n"
    "[[workers]]\n"
    "host = \"10.0.0.3\"\n"
    "temp_dir = \"/tmp/it's here\"\n";

static void test_full(void)
{
    struct mt_cluster c;
    char err[512] = "";
    char *addr;

    CU_ASSERT_EQUAL_FATAL(mt_cluster_parse(full, "c.toml", &c, err,
                                           sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(c.name, "lab");
    CU_ASSERT_EQUAL(c.port, 6390);
    CU_ASSERT_STRING_EQUAL(c.temp_dir, "/tmp/manta");
    CU_ASSERT_STRING_EQUAL(c.local_dir, "/tmp/manta-up-lab");
    CU_ASSERT_EQUAL(c.n_ssh_command, 1);
    CU_ASSERT_STRING_EQUAL(c.ssh_command[0], "ssh");
    CU_ASSERT_STRING_EQUAL(c.head.node_ip, "10.0.0.1");
    CU_ASSERT_EQUAL(c.head.line, 8);
    CU_ASSERT_EQUAL_FATAL(c.n_workers, 2);
    CU_ASSERT_PTR_NULL(c.workers[0].node_ip); /* a name: manta start picks */
    CU_ASSERT_STRING_EQUAL(c.workers[0].temp_dir, "/tmp/manta");
    CU_ASSERT_STRING_EQUAL(c.workers[1].temp_dir, "/tmp/it's here");
    CU_ASSERT_EQUAL(c.workers[1].line, 15);
    addr = mt_cluster_head_address(&c);
    CU_ASSERT_STRING_EQUAL(addr, "10.0.0.1:6390");
    free(addr);
    mt_cluster_release(&c);
}

static void test_defaults(void)
{
    struct mt_cluster c;
    char err[512] = "";

    CU_ASSERT_EQUAL_FATAL(mt_cluster_parse("[head]\nhost = \"h\"\n", "f",
                                           &c, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(c.name, "manta");
    CU_ASSERT_EQUAL(c.port, MT_CLUSTER_DEFAULT_PORT);
    CU_ASSERT_STRING_EQUAL(c.manta, "manta");
    CU_ASSERT_STRING_EQUAL(c.local_dir, "/tmp/manta-up-manta");
    CU_ASSERT_PTR_NULL(c.ssh_user);
    CU_ASSERT_EQUAL(c.n_workers, 0);
    CU_ASSERT_EQUAL(c.head.n_args, 0);
    mt_cluster_release(&c);
}

static void check_argv(char **argv, const char *const *want, size_t n)
{
    size_t i = 0;

    for (; argv[i] && i < n; i++) {
        CU_ASSERT_STRING_EQUAL(argv[i], want[i]);
        if (strcmp(argv[i], want[i]))
            fprintf(stderr, "argv[%zu] = '%s', want '%s'\n", i, argv[i],
                    want[i]);
    }
    CU_ASSERT_EQUAL(i, n);
    CU_ASSERT_PTR_NULL(argv[i]);
}

static void test_commands(void)
{
    static const char *const head[] = {
        "ssh", "-i", "/k/id", "-o", "BatchMode=yes", "--", "ubuntu@10.0.0.1",
        "/opt/manta/bin/manta start --head --port 6390 --temp-dir "
        "/tmp/manta --node-ip 10.0.0.1 --token-file /dev/stdin "
        "--dashboard-host 0.0.0.0",
    };
    static const char *const w0[] = {
        "ssh", "-i", "/k/id", "-o", "BatchMode=yes", "--", "ubuntu@gpu-1",
        "/opt/manta/bin/manta start --address 10.0.0.1:6390 --temp-dir "
        "/tmp/manta --token-file /dev/stdin --num-gpus 8 --labels "
        "'zone=a b' --resources '{\"a\": 1}' x=y",
    };
    static const char *const stop1[] = {
        "ssh", "-i", "/k/id", "-o", "BatchMode=yes", "--", "ubuntu@10.0.0.3",
        "/opt/manta/bin/manta stop --temp-dir '/tmp/it'\\''s here'",
    };
    struct mt_cluster c;
    char err[512] = "", **argv;

    CU_ASSERT_EQUAL_FATAL(mt_cluster_parse(full, "c.toml", &c, err,
                                           sizeof(err)), 0);
    argv = mt_cluster_argv(&c, &c.head, MT_CLUSTER_START_HEAD);
    check_argv(argv, head, ARRAY_SIZE(head));
    mt_cluster_argv_free(argv);
    argv = mt_cluster_argv(&c, &c.workers[0], MT_CLUSTER_START_WORKER);
    check_argv(argv, w0, ARRAY_SIZE(w0));
    mt_cluster_argv_free(argv);
    argv = mt_cluster_argv(&c, &c.workers[1], MT_CLUSTER_STOP);
    check_argv(argv, stop1, ARRAY_SIZE(stop1));
    mt_cluster_argv_free(argv);
    mt_cluster_release(&c);
}

/* The program given instead of ssh, and a head that binds every address
 * (workers then join its host). */
static void test_ssh_command(void)
{
    static const char text[] =
        "[cluster]\n"
        "ssh_command = [\"/bin/fake-ssh\", \"-v\"]\n"
        "[head]\n"
        "host = \"head.example\"\n"
        "node_ip = \"0.0.0.0\"\n";
    static const char *const stop[] = {
        "/bin/fake-ssh", "-v", "-o", "BatchMode=yes", "--", "head.example",
        "manta stop --temp-dir /tmp/manta",
    };
    struct mt_cluster c;
    char err[512] = "", **argv, *addr;

    CU_ASSERT_EQUAL_FATAL(mt_cluster_parse(text, "f", &c, err, sizeof(err)),
                          0);
    argv = mt_cluster_argv(&c, &c.head, MT_CLUSTER_STOP);
    check_argv(argv, stop, ARRAY_SIZE(stop));
    mt_cluster_argv_free(argv);
    addr = mt_cluster_head_address(&c);
    CU_ASSERT_STRING_EQUAL(addr, "head.example:6380");
    free(addr);
    mt_cluster_release(&c);
}

static void test_errors(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[head]\nhost = \"h\"\nhots = \"x\"\n",
         "f.toml:3: unknown key 'hots' in [head]: expected one of host, "
         "node_ip, temp_dir, args"},
        {"[cluster]\nport = \"6380\"\n",
         "f.toml:2: 'port' must be an integer, not a string"},
        {"[cluster]\nport = 70000\n",
         "f.toml:2: 'port': expected a port from 1 to 65535"},
        {"[cluster]\nname = \"a/b\"\n", "f.toml:2: 'name': expected 1 to 64"},
        {"[cluster]\nssh_user = \"-oProxyCommand=x\"\n",
         "f.toml:2: 'ssh_user': may not start with '-'"},
        {"[cluster]\nmanta = \"A=b\"\n",
         "f.toml:2: 'manta': expected a path without '='"},
        {"[cluster]\nssh_command = []\n",
         "f.toml:2: 'ssh_command': expected a program"},
        {"[head]\nhost = \"-oProxyCommand=x\"\n",
         "f.toml:2: 'host': may not start with '-'"},
        {"[head]\nhost = \"a b\"\n", "f.toml:2: 'host': expected a host"},
        {"[head]\nhost = \"root@h\"\n", "ssh_user in [cluster]"},
        {"[head]\nhost = \"h\"\nnode_ip = \"h\"\n",
         "f.toml:3: 'node_ip': expected an IPv4 address"},
        {"[head]\nhost = \"h\"\nargs = [\"--num-cpus\", \"2\", "
         "\"--temp-dir=/x\"]\n",
         "f.toml:3: 'args': args may not hold --head"},
        {"[head]\nhost = \"h\"\nargs = \"--num-cpus 2\"\n",
         "f.toml:3: 'args' must be an array of strings, not a string"},
        {"[cluster]\n", "f.toml: no [head] table"},
        {"[head]\n\n[[workers]]\nhost = \"w\"\n", "f.toml:1: [head] has no host"},
        {"[head]\nhost = \"h\"\n[[workers]]\n", "f.toml:3: [[workers]] has no "
         "host"},
        {"[head]\nhost = \"h\"\n[[workers]]\nhost = \"h\"\n",
         "f.toml:3: [[workers]] on host h uses temp_dir /tmp/manta like the "
         "node on line 1"},
        {"[head]\nhost = \"h\"\n[workers]\n",
         "f.toml:3: expected [[workers]] (one per worker host)"},
        {"[[head]]\n", "f.toml:1: expected [head] (there is one head)"},
        {"[heads]\n", "f.toml:1: unknown table [heads]: expected [cluster], "
         "[head] or [[workers]]"},
        {"name = \"x\"\n", "f.toml:1: key 'name' outside a table"},
        {"[head]\nhost = \"h\n", "f.toml:2: the string is not closed"},
        {"[head]\nhost = \"h\"\nhost = \"i\"\n",
         "f.toml:3: key 'host' is already set on line 2"},
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct mt_cluster c;
        char err[512] = "";
        int rc = mt_cluster_parse(cases[i].text, "f.toml", &c, err,
                                  sizeof(err));

        CU_ASSERT(rc < 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].want));
        if (rc >= 0 || !strstr(err, cases[i].want))
            fprintf(stderr, "case %zu: rc %d: %s\n", i, rc, err);
        mt_cluster_release(&c);
    }
}

static void test_load_errors(void)
{
    struct mt_cluster c;
    char err[512] = "";

    CU_ASSERT(mt_cluster_load("/nonexistent/c.toml", &c, err, sizeof(err)) <
              0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/c.toml: cannot read"));
    mt_cluster_release(&c);
    CU_ASSERT(mt_cluster_load("/", &c, err, sizeof(err)) < 0);
    CU_ASSERT_STRING_EQUAL(err, "/: not a regular file");
    mt_cluster_release(&c);
}

CU_TestInfo mt_test_cluster_file[] = {
    {"full", test_full},
    {"defaults", test_defaults},
    {"commands", test_commands},
    {"ssh_command", test_ssh_command},
    {"errors", test_errors},
    {"load_errors", test_load_errors},
    CU_TEST_INFO_NULL,
};
