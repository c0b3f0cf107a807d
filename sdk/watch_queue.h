/* SPDX-License-Identifier: Apache-2.0 */
/*
 * watch_queue.h -- the calls of watch_queue.c: the loop thread queues a
 * watch's events, and the last reference frees the watch. Types in
 * task_int.h; the user-facing side is mt_watch_t in manta/admin.h
 * (watch.c).
 */
#ifndef MT_SDK_WATCH_QUEUE_H
#define MT_SDK_WATCH_QUEUE_H

#include "sdk/task_int.h"

/* mt__watch_event - queue ev (borrowed) of task_id as OUTPUT and STATE
 * events. THREAD any (the loop's). */
void mt__watch_event(struct mt_watch *w, const char *task_id,
                     const struct mt__task_event *ev);

/* mt__watch_end - queue task_id's END: lost 0 (it ended) or why the watch
 * lost it (why borrowed). */
void mt__watch_end(struct mt_watch *w, const char *task_id, int lost,
                   const char *why);

/* mt__watch_unref - drop one reference; frees at zero. */
void mt__watch_unref(struct mt_watch *w);

#endif /* MT_SDK_WATCH_QUEUE_H */
