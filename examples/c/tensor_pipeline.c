/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tensor_pipeline.c -- a tensor made by a task on one node, passed by
 * reference to a task on another node, which transforms it; the driver
 * reads the result and checks every element.
 *
 *   t1 = make_ramp(1024, 1024)      on a node labelled KEY=VALUE_A
 *   t2 = scale_add(ref(t1), 2, 1)   on a node labelled KEY=VALUE_B
 *   check: result[i] == 2*i + 1
 *
 * The 4 MiB tensor never passes through the driver or the head: t1's
 * executor puts it in its node's store, t2's worker pulls it to its own
 * node and t2 maps it from there. The driver submits both at once: the
 * head holds t2 (WAITING_FOR_ARGS) until t1's result exists. mt_get of
 * t2's result pulls it to the driver's node. Releasing both tasks frees
 * both tensors on every node.
 *
 * usage: example_tensor_pipeline [HEAD_HOST:PORT [KEY VALUE_A VALUE_B]]
 *        (default labels: zone demo-a demo-b, as `make demo` starts them)
 */
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <manta/manta.h>

#define ROWS 1024u
#define COLS 1024u

static int fail(mt_client_t *c, const char *what, int rc)
{
    fprintf(stderr, "example_tensor_pipeline: %s: %s (%s)\n", what,
            mt_client_last_error(c), mt_error_name(rc));
    return 1;
}

/* <dir of this program>/../lib, where the build puts the library. */
static int lib_dir(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n <= 0)
        return -1;
    self[n] = '\0';
    snprintf(out, len, "%s/../lib", dirname(self));
    return 0;
}

/* Options: the library's folder, and run where key=value. */
static int opts_on(mt_client_t *c, const char *dir, const char *key,
                   const char *value, mt_task_opts_t **o)
{
    int rc;

    if ((rc = mt_task_opts_create(o)) < 0 ||
        (rc = mt_task_opts_add_code_path(*o, dir)) < 0 ||
        (rc = mt_task_opts_set_resource(*o, "CPU", 0.5)) < 0 ||
        (rc = mt_task_opts_add_label_match(*o, key, MT_LABEL_EQ, &value,
                                           1)) < 0)
        return fail(c, "options", rc);
    return 0;
}

/* Every element is 2*i + 1. RET 0 or 1. */
static int check(const mt_buffer_t *b)
{
    const float *v = mt_buffer_data(b);

    if (mt_buffer_size(b) != (size_t)ROWS * COLS * sizeof(float))
        return 1;
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        if (v[i] != 2.0f * (float)i + 1.0f)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *key = argc > 4 ? argv[2] : "zone";
    const char *va = argc > 4 ? argv[3] : "demo-a";
    const char *vb = argc > 4 ? argv[4] : "demo-b";
    uint32_t rows = ROWS, cols = COLS;
    float a = 2.0f, b = 1.0f;
    mt_task_opts_t *oa = NULL, *ob = NULL;
    mt_task_t *t1 = NULL, *t2 = NULL;
    mt_task_result r1, r2;
    mt_buffer_t *buf = NULL;
    mt_object_id ref;
    char dir[PATH_MAX], hex[MT_OBJECT_ID_HEX_SIZE];
    mt_client_t *c;
    mt_arg args[3];
    int rc, status = 1;

    if (lib_dir(dir, sizeof(dir)) < 0)
        return fail(NULL, "finding the library", -MT_ENOENT);
    rc = mt_client_connect(argc > 1 ? argv[1] : NULL, NULL, &c);
    if (rc < 0)
        return fail(NULL, "connect", rc);
    mt_task_result_init(&r1);
    mt_task_result_init(&r2);
    if (opts_on(c, dir, key, va, &oa) || opts_on(c, dir, key, vb, &ob))
        goto out;
    /* t1 makes the tensor on node A. */
    args[0] = mt_arg_value(&rows, sizeof(rows));
    args[1] = mt_arg_value(&cols, sizeof(cols));
    rc = mt_submit_function_args(c, "libexample_tensors.so:make_ramp", args,
                                 2, oa, &t1);
    if (rc < 0 || (rc = mt_task_result_ref(t1, &ref)) < 0) {
        fail(c, "submit make_ramp", rc);
        goto out;
    }
    /* t2 transforms it on node B, taking it by reference. */
    args[0] = mt_arg_ref(&ref);
    args[1] = mt_arg_value(&a, sizeof(a));
    args[2] = mt_arg_value(&b, sizeof(b));
    rc = mt_submit_function_args(c, "libexample_tensors.so:scale_add", args,
                                 3, ob, &t2);
    if (rc < 0) {
        fail(c, "submit scale_add", rc);
        goto out;
    }
    if ((rc = mt_task_wait(c, t1, 60000, &r1)) < 0 ||
        (rc = mt_task_wait(c, t2, 60000, &r2)) < 0) {
        fprintf(stderr, "example_tensor_pipeline: a task failed: %s %s\n",
                r1.error ? r1.error : "", r2.error ? r2.error : "");
        goto out;
    }
    printf("make_ramp %ux%u float32 ran on node %.12s, result %s\n", rows,
           cols, r1.node_id, mt_object_id_format(&ref, hex));
    if ((rc = mt_task_result_ref(t2, &ref)) < 0 ||
        (rc = mt_get(c, &ref, 60000, &buf)) < 0) {
        fail(c, "get the result", rc);
        goto out;
    }
    printf("scale_add(ref, 2, 1) ran on node %.12s, result %s (%zu bytes)\n",
           r2.node_id, mt_object_id_format(&ref, hex), mt_buffer_size(buf));
    if (check(buf) != 0) {
        fprintf(stderr, "example_tensor_pipeline: wrong result values\n");
        goto out;
    }
    printf("all %u elements are 2*i+1: ok%s\n", rows * cols,
           strcmp(r1.node_id, r2.node_id) ? " (crossed nodes)" : "");
    status = 0;
out:
    mt_buffer_release(buf);
    mt_task_result_release(&r1);
    mt_task_result_release(&r2);
    mt_task_release(t1); /* frees both tensors on every node */
    mt_task_release(t2);
    mt_task_opts_destroy(oa);
    mt_task_opts_destroy(ob);
    mt_client_disconnect(c);
    return status;
}
