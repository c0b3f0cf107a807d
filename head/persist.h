/* SPDX-License-Identifier: Apache-2.0 */
/*
 * persist.h -- the head's durable state: what it writes to its storage
 * (storage.h) and how a restarted head reads it back.
 *
 * Rows (proto/storage.proto, one per record): "tasks" (every task the
 * table holds, keyed by id, with the object references it holds),
 * "objects" (the object directory, with the references each driver
 * session holds), "actors", "gangs" (the current attempt's member tasks,
 * ports and slices), "pgs" (with where each bundle is) and "head"
 * (cluster id, the numbers handed out, the token's fingerprint). Nodes
 * and their credentials' digests are written by rpc_nodes.c. A change
 * marks its record dirty; the dirty records are written once per loop
 * turn (a uv_check), so a task that is submitted, placed and started in
 * one turn costs one write, and a turn's writes go to the backend
 * together (one batch: one pwrite, or one MULTI/EXEC).
 *
 * Loading restores the records into the services as they were (tasks
 * keep their numbers, state, attempt, node and grant's devices; objects
 * their references) without placing anything: recover.h resumes them
 * and squares them with what the workers really run, holding the
 * scheduler until it has.
 *
 * Not durable yet: task output, parked GetObject calls; a gang member
 * task of an attempt before the current one comes back without its gang.
 *
 * THREAD: the head's loop thread only.
 */
#ifndef MT_HEAD_PERSIST_H
#define MT_HEAD_PERSIST_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>

struct mt_rpc_call;
struct mt_head;
struct mt_head_persist;

/*
 * mt_head_persist_create - follow the services of h (created, not yet
 * serving) and write their changes to h->store from now on.
 * RET owned; free with mt_head_persist_destroy after _close's callback
 */
struct mt_head_persist *mt_head_persist_create(struct mt_head *h);

/*
 * mt_head_persist_load - read every stored table into the services; the
 * tasks that were placed are left for recover.h (mt_head_recover_begin).
 * done(arg, err) runs once everything is loaded (err 0) or a table could
 * not be read (then the head starts with what it read, and says so).
 * Storage answers may come later (a network backend): the caller runs the
 * loop until done.
 */
void mt_head_persist_load(struct mt_head_persist *p,
                          void (*done)(void *arg, int err), void *arg);

/*
 * mt_head_persist_reply - answer unary call with resp once what the head
 * changed so far is stored (the backend acknowledged this turn's writes),
 * so that whoever is told "done" (a submit taken, a report filed) never
 * meets a restarted head that forgot it. At once with the memory backend;
 * after at most a second when the backend sits on writes (Redis away:
 * the head serves on from memory).
 * IN  resp  borrowed (copied)
 */
void mt_head_persist_reply(struct mt_head_persist *p, struct mt_rpc_call *call,
                           const ProtobufCMessage *resp);

/* mt_head_persist_flush - write what is dirty now (also at each turn). */
void mt_head_persist_flush(struct mt_head_persist *p);

/* mt_head_persist_close - flush, stop following; done(arg) once the
 * handle is closed. */
void mt_head_persist_close(struct mt_head_persist *p, void (*done)(void *arg),
                           void *arg);
void mt_head_persist_destroy(struct mt_head_persist *p);

#endif /* MT_HEAD_PERSIST_H */
