/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_opts.h -- the calls of task_opts.c: a resource amount checked as
 * mt_task_opts_set_resource does it, the def a submit sends, and a task's
 * bounded output buffer. Types in task_int.h; the user-facing side is
 * mt_task_opts_t in manta/task.h.
 */
#ifndef MT_SDK_TASK_OPTS_H
#define MT_SDK_TASK_OPTS_H

#include "sdk/task_int.h"

#define MT__OPT_STR_MAX 4096 /* bytes in one string option */

/*
 * mt__res_amount - check a resource name and amount (the rules of
 * mt_task_opts_set_resource) and convert the amount to fixed point.
 * RET 0, -MT_EINVAL (last error set, no client)
 */
int mt__res_amount(const char *name, double amount, int64_t *q);

/* mt__opts_set_str - replace *dst by a copy of s (NULL or "" clears) for
 * an option setter; what names the option in the error.
 * RET 0, -MT_EINVAL (over MT__OPT_STR_MAX bytes), -MT_ENOMEM (recorded,
 * no client) */
int mt__opts_set_str(char **dst, const char *s, const char *what);

/* mt__task_def_new - a copy of o's def (the defaults when o is NULL) for
 * a submit. RET NULL on ENOMEM. */
struct mt_task_def *mt__task_def_new(const struct mt_task_opts *o);

/* mt__task_def_free - release and free a def. NULL ok. */
void mt__task_def_free(struct mt_task_def *d);

/* mt__outbuf_append - keep the last limit bytes. RET 0, -MT_ENOMEM. */
int mt__outbuf_append(struct mt__outbuf *b, size_t limit, const void *p,
                      size_t n);

#endif /* MT_SDK_TASK_OPTS_H */
