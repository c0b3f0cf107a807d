/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.h -- the calls of client.c, the core of a client: building,
 * starting and stopping it with its parts, the live-client registry, the
 * requests public calls hand to the loop thread, the generic call to the
 * head, what frees a result handed out, and deadlines. The types are in
 * client_int.h (its DESIGN); the user-facing side is manta/client.h.
 */
#ifndef MT_SDK_CLIENT_H
#define MT_SDK_CLIENT_H

#include "sdk/client_int.h"

#include <time.h>

struct mt_rpc_method;
struct mt_rpc_status;

/* ---- the store connection ------------------------------------------------ */

/* mt__store_unref - drop one reference; the last disconnects. NULL ok. */
void mt__store_unref(struct mt__store *s);

/* ---- the client ---------------------------------------------------------- */

/*
 * mt__client_new - a client for the head at address (owned copy) with its
 * loop, engine and channel set up but no thread yet.
 * RET 0 with *out, or -MT_E* (last error set, no client)
 */
int mt__client_new(const char *address, const char *temp_dir,
                   int rpc_timeout_ms, unsigned ready_flags,
                   struct mt_client **out);

/* mt__client_add_part - attach a part (before mt__client_start). */
void mt__client_add_part(struct mt_client *c, const struct mt__part_ops *ops,
                         void *st);

/* mt__client_start - start the loop thread. RET 0 or -errno (recorded). */
int mt__client_start(struct mt_client *c);

/* mt__client_free - after mt__client_leave/stop (or without a thread):
 * destroy the parts and free c. */
void mt__client_free(struct mt_client *c);

/*
 * mt__client_stop - disconnect: the parts' leave hooks, then the loop
 * thread stops (the parts' stop hooks run there) and is joined; requests
 * nobody took are freed. c is freed by mt__client_free afterwards.
 */
void mt__client_stop(struct mt_client *c);

/* mt__client_wake - any thread: run the loop's wake-up (and the parts'
 * wake hooks) soon. */
void mt__client_wake(struct mt_client *c);

/* mt__session - the owner_id that puts, releases and held task results
 * carry: c's session id while the head has the session open, else "" (the
 * references are held until released). Any thread. */
const char *mt__session(struct mt_client *c);

/*
 * Live clients: mt_task_release() may run after its client was
 * disconnected, so a module that touches a client from a handle first
 * checks it is alive. mt__client_lock_live returns true with the live
 * lock held when c is a connected client (unlock with
 * mt__client_unlock_live), false (nothing held) otherwise.
 */
void mt__client_set_live(struct mt_client *c, bool live);
bool mt__client_lock_live(const struct mt_client *c);
void mt__client_unlock_live(void);

/* ---- requests ------------------------------------------------------------ */

/* mt__req_new - a zeroed request of size bytes (its kind's struct), with
 * the client's rpc timeout and ready flags. RET NULL on ENOMEM. */
void *mt__req_new(struct mt_client *c, const struct mt__req_ops *ops,
                  size_t size);

/* mt__req_free - free what r owns and r. NULL ok. */
void mt__req_free(struct mt__req *r);

/*
 * mt__req_run - queue r, wake the loop, wait until done or wait_ms (< 0:
 * forever). On success the caller owns r again (free it); on failure r
 * is freed, or abandoned to the loop thread on a timeout.
 * RET r->rc (recorded as c's last error with r->msg), -MT_ETIMEDOUT,
 *     -MT_ECLOSED
 */
int mt__req_run(struct mt_client *c, struct mt__req *r, int wait_ms);

/* mt__req_post - queue r without waiting; the loop thread frees it when
 * it completes. RET 0, -MT_ECLOSED (r freed, recorded). */
int mt__req_post(struct mt_client *c, struct mt__req *r);

/* mt__req_complete - loop thread: end r with rc (and msg, may be NULL).
 * Frees an abandoned r. */
void mt__req_complete(struct mt_client *c, struct mt__req *r, int rc,
                      const char *msg);

/* ---- calls to the head --------------------------------------------------- */

/* mt__head_call flags: wait up to the deadline for an unreachable head to
 * come back (not for one-shot clients, whose calls fail at once). */
#define MT__CALL_WAIT 0x1u
/* ... and: the call counts (a put, a release, a new group), so it is
 * tried again only when it cannot have reached the head (retry.h). Calls
 * without it are safe to repeat and are retried while the head is away,
 * up to the client's reconnect deadline. */
#define MT__CALL_ONCE 0x2u

/*
 * mt__head_call - call method on the head with req and wait for the reply
 * (caller thread). req (a ProtobufCMessage, borrowed) is copied, so it may
 * be a view on the caller's stack.
 * IN  flags  0, MT__CALL_WAIT, MT__CALL_ONCE
 * OUT reply  returns an owned ProtobufCMessage of the method's reply type,
 *            free with mt__msg_free()
 * RET 0, or the call's error; the last error on c is the call's status
 *     ("NOT_FOUND: no such gang"), or, when the head stayed away past the
 *     client's reconnect deadline, "head ADDR unreachable for N s
 *     (MANTA_HEAD_RECONNECT_TIMEOUT)"
 * NOTE a failed attempt is tried again as retry.h decides (not for
 *      one-shot clients); the caller waits up to mt__head_wait_ms()
 */
int mt__head_call(struct mt_client *c, const struct mt_rpc_method *method,
                  const void *req, int timeout_ms, unsigned flags,
                  void **reply);

/* mt__head_wait_ms - how long a caller waits for a head call of
 * timeout_ms, its retries while the head is away included. */
int mt__head_wait_ms(const struct mt_client *c, int timeout_ms);

/* mt__msg_free - free a message from mt__head_call (or client.c's
 * msg_copy). NULL ok. */
void mt__msg_free(void *msg);

/* mt__rpc_text - "STATUS: message" for a failed call (the status's
 * message, or the error's text when it has none). */
void mt__rpc_text(const struct mt_rpc_status *st, char *buf, size_t len);

/* mt__rpc_err - the -MT_E* code of a failed call's status. */
int mt__rpc_err(const struct mt_rpc_status *st);

/* ---- results handed out -------------------------------------------------- */

/* mt__keep_alloc - n zeroed bytes freed with k. RET NULL on ENOMEM. */
void *mt__keep_alloc(struct mt__keep *k, size_t n);

/* mt__keep_release - free the reply and the blocks; k is empty after. */
void mt__keep_release(struct mt__keep *k);

/* mt__json_take - the text of a soft strbuf (common/strbuf.h), moved to
 * *out. RET 0, -MT_ENOMEM (the buffer failed; released). */
struct mt_strbuf;
int mt__json_take(struct mt_strbuf *sb, char **out);

/* ---- time ---------------------------------------------------------------- */

/* mt__deadline - absolute CLOCK_MONOTONIC time timeout_ms from now. */
struct timespec mt__deadline(int timeout_ms);

/* mt__ms_left - milliseconds from now to dl (0 when passed). */
int mt__ms_left(const struct timespec *dl);

#endif /* MT_SDK_CLIENT_H */
