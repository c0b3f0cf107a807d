/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_cluster_file.c -- `manta up`'s cluster file on arbitrary text: the
 * TOML subset reader (common/toml.c) and the schema over it, then the
 * commands of every host of a file that passed (cli/cluster_file.c).
 *
 * Properties: a rejected text names a line of the text (1 to its number
 * of lines) and a reason, and the schema's message starts with the file
 * name; an accepted file gives each host an ssh argv that ends with its
 * destination and one remote command, and never NULL holes.
 */
#include <string.h>

#include "cli/cluster_file.h"
#include "common/toml.h"
#include "tests/fuzz/fuzz.h"

static void check_argv(const struct mt_cluster *c,
                       const struct mt_cluster_node *n)
{
    for (int cmd = MT_CLUSTER_START_HEAD; cmd <= MT_CLUSTER_STOP; cmd++) {
        char **argv = mt_cluster_argv(c, n, (enum mt_cluster_cmd)cmd);
        size_t k = 0;

        while (argv[k])
            k++;
        MT_FUZZ_CHECK(k == c->n_ssh_command + c->n_ssh_options + 5);
        MT_FUZZ_CHECK(strcmp(argv[k - 3], "--") == 0);
        MT_FUZZ_CHECK(strstr(argv[k - 2], n->host) != NULL);
        mt_cluster_argv_free(argv);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = mt_fuzz_str(data, size), err[512];
    struct mt_toml_doc d;
    struct mt_toml_error e;
    struct mt_cluster c;
    int lines = 1;

    for (const char *p = s; *p; p++)
        lines += *p == '\n';
    if (mt_toml_parse(s, &d, &e) < 0)
        MT_FUZZ_CHECK(e.line >= 1 && e.line <= lines && e.msg[0]);
    mt_toml_release(&d);
    if (mt_cluster_parse(s, "f.toml", &c, err, sizeof(err)) < 0) {
        MT_FUZZ_CHECK(strncmp(err, "f.toml:", 7) == 0);
    } else {
        check_argv(&c, &c.head);
        for (size_t i = 0; i < c.n_workers; i++)
            check_argv(&c, &c.workers[i]);
    }
    mt_cluster_release(&c);
    free(s);
    return 0;
}
