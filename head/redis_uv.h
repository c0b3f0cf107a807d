/* SPDX-License-Identifier: Apache-2.0 */
/*
 * redis_uv.h -- hiredis's asynchronous context driven by a libuv loop.
 *
 * hiredis 0.14 ships a libuv adapter (<hiredis/adapters/libuv.h>) that
 * drops a poll error: a refused or reset connection then never reaches
 * the connect or disconnect callback, pending commands never complete and
 * the loop cannot close (notes/grpc-core.md, section 10). This adapter
 * hands a poll error to hiredis as a write event, so hiredis reads the
 * socket error and reports it: the connect callback gets its failure,
 * every pending callback gets a NULL reply, and the poll handle closes.
 *
 * THREAD: the loop's thread only.
 */
#ifndef MT_HEAD_REDIS_UV_H
#define MT_HEAD_REDIS_UV_H

#include <hiredis/async.h>
#include <uv.h>

/*
 * mt_redis_uv_attach - drive ac on loop until hiredis frees ac (after its
 * disconnect callback, or redisAsyncFree); the poll handle is then closed
 * and freed on its own.
 * RET 0, or -MT_ENOMEM / -MT_EINVAL (ac already attached: leave it)
 */
int mt_redis_uv_attach(redisAsyncContext *ac, uv_loop_t *loop);

#endif /* MT_HEAD_REDIS_UV_H */
