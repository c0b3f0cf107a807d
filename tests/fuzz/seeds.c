/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seeds.c -- mt-fuzz-seeds: writes the seed corpora of tests/fuzz/corpus/
 * with the real encoders, so seeds follow the formats as they change.
 *   build-fuzz/bin/mt-fuzz-seeds tests/fuzz/corpus
 * writes <dir>/<harness>/seed-<what> for each harness it knows; the output
 * is committed. Seeds are small: valid messages and a few near misses
 * (cut short, one field over its limit).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/seeds.h"

static const char *root;

void mt_seed_write(const char *harness, const char *what, const void *p,
                   size_t n)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", root, harness);
    if (mkdir(path, 0777) < 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/%s/seed-%s", root, harness, what);
    if (!(f = fopen(path, "wb")) || fwrite(p, 1, n, f) != n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mt-fuzz-seeds CORPUS_DIR\n");
        return 2;
    }
    root = argv[1];
    mt_seeds_exec();
    mt_seeds_head();
    mt_seeds_worker();
    return 0;
}
