/* SPDX-License-Identifier: Apache-2.0 */
/*
 * objects.c -- put a float32 tensor into the node's object store and get it
 * back without a copy.
 *
 * The driver must run on a node of the cluster (it maps that node's shared
 * memory). Exits 0 when the tensor comes back with the same dtype, shape
 * and values, read in place from the store.
 *
 * usage: example_objects [HEAD_HOST:PORT]   (default: the local session)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <manta/manta.h>

#define ROWS 256
#define COLS 512

static int fail(mt_client_t *c, const char *what, int rc)
{
    fprintf(stderr, "example_objects: %s: %s (%s)\n", what,
            mt_client_last_error(c), mt_error_name(rc));
    return 1;
}

/* Is the buffer a ROWS x COLS float32 tensor equal to src? */
static int check(const mt_buffer_t *b, const float *src)
{
    int64_t shape[MT_TENSOR_MAX_NDIM];
    mt_dtype_code code;
    uint8_t bits;
    uint32_t ndim;

    if (mt_buffer_tensor(b, &code, &bits, &ndim, shape) < 0 ||
        code != MT_DTYPE_FLOAT || bits != 32 || ndim != 2 ||
        shape[0] != ROWS || shape[1] != COLS) {
        fprintf(stderr, "example_objects: wrong tensor description\n");
        return 1;
    }
    if (mt_buffer_size(b) != sizeof(float) * ROWS * COLS ||
        memcmp(mt_buffer_data(b), src, mt_buffer_size(b)) != 0) {
        fprintf(stderr, "example_objects: tensor bytes differ\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const int64_t shape[2] = {ROWS, COLS};
    char hex[MT_OBJECT_ID_HEX_SIZE];
    mt_buffer_t *b = NULL;
    mt_client_t *c;
    mt_object_id id;
    float *src;
    int rc, status = 1;

    rc = mt_client_connect(argc > 1 ? argv[1] : NULL, NULL, &c);
    if (rc < 0)
        return fail(NULL, "connect", rc);
    src = malloc(sizeof(float) * ROWS * COLS);
    if (!src)
        goto out;
    for (int i = 0; i < ROWS * COLS; i++)
        src[i] = (float)i * 0.5f;
    rc = mt_put_tensor(c, src, sizeof(float) * ROWS * COLS, 0, MT_DTYPE_FLOAT,
                       32, 2, shape, &id);
    if (rc < 0) {
        fail(c, "put", rc);
        goto out;
    }
    printf("put a %dx%d float32 tensor as object %s\n", ROWS, COLS,
           mt_object_id_format(&id, hex));
    rc = mt_get(c, &id, 1000, &b);
    if (rc < 0) {
        fail(c, "get", rc);
        goto out;
    }
    status = check(b, src);
    if (status == 0)
        printf("got it back zero-copy at %p (%zu bytes), values match\n",
               mt_buffer_data(b), mt_buffer_size(b));
out:
    mt_buffer_release(b);
    free(src);
    mt_client_disconnect(c);
    return status;
}
