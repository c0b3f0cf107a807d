/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manta/manta.h -- libmanta, the C SDK of the Manta cluster scheduler.
 *
 * Include this one header and link with -lmanta (or libmanta_static.a plus
 * gRPC, protobuf-c and libuv). The API is plain C with opaque handles, so
 * the ABI stays stable across releases: option structs carry their size.
 *
 *   error.h   error codes and their text
 *   client.h  connect to a cluster; cluster resources
 *   task.h    command tasks: submit, wait, cancel, captured output
 *   object.h  put and get objects and tensors in the node's store
 *   pg.h      placement groups: reserve bundles, run tasks in them
 *   actor.h   actors: stateful executors whose methods run in order
 *   gang.h    gangs: one program over whole TPU slices
 *   result.h  a command task's result object
 *   admin.h   cluster status, listings, following tasks by id (tools)
 *
 * Guide and complete example: docs/sdk.md.
 */
#ifndef MANTA_H
#define MANTA_H

#include "manta/error.h"
#include "manta/client.h"
#include "manta/object.h"
#include "manta/task.h"
#include "manta/pg.h"
#include "manta/actor.h"
#include "manta/gang.h"
#include "manta/result.h"
#include "manta/admin.h"

#define MT_SDK_VERSION_MAJOR 0
#define MT_SDK_VERSION_MINOR 1

#ifdef __cplusplus
extern "C" {
#endif

/* mt_sdk_version - the library's "MAJOR.MINOR.PATCH". RET static string. */
MT_EXTERN const char *mt_sdk_version(void);

#ifdef __cplusplus
}
#endif

#endif /* MANTA_H */
