/* SPDX-License-Identifier: Apache-2.0 */
/*
 * object.h -- the calls of object.c for the other modules: the client's
 * objects part (connect.c attaches it; the task module switches its
 * batching and queues the release of a task's result; result.c
 * describes tensors with it). The part's type
 * and the object calls are in rpc_object.h; the user-facing side is
 * manta/object.h.
 */
#ifndef MT_SDK_OBJECT_H
#define MT_SDK_OBJECT_H

#include "sdk/client_int.h"

struct mt_tensor_desc;

/* mt__objects_attach - give c its objects part. RET 0, -MT_ENOMEM. */
int mt__objects_attach(struct mt_client *c);

/* mt__objects_set_batching - batch registrations (true) or send each put's
 * at once (false). THREAD any. */
void mt__objects_set_batching(struct mt_client *c, bool on);

/* mt__tensor_desc - a public tensor description (code: an mt_dtype_code)
 * as the store's. RET 0, -MT_EINVAL (recorded on c, which may be NULL). */
int mt__tensor_desc(mt_client_t *c, int code, uint8_t bits,
                    uint32_t ndim, const int64_t *shape,
                    struct mt_tensor_desc *t);

/* mt__objects_post_release - queue a release of id on c without waiting,
 * if c is still connected (c may be a dangling pointer: it is used only
 * when found among the live clients). THREAD any. */
void mt__objects_post_release(struct mt_client *c, const mt_object_id *id);

#endif /* MT_SDK_OBJECT_H */
