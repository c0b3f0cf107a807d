/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manta/function.h -- the ABI of Manta function tasks: how a C function in
 * a user's shared library is called by a worker's executor process.
 *
 * A function task names "libfoo.so:fn" (or a bare "fn") and carries its
 * arguments as byte strings. The executor dlopens the library (as given,
 * then from each folder of the task's code path), looks up the exported
 * symbol "manta_fn_<fn>" (falling back to "<fn>"), and calls it with a
 * struct mt_fn_call on its main thread, one task at a time.
 *
 *     #include <manta/function.h>
 *
 *     MT_FUNCTION(add)
 *     {
 *         int64_t a, b, sum;
 *
 *         if (call->nargs != 2 || call->args[0].size != 8 ||
 *             call->args[1].size != 8)
 *             return mt_fn_error(call, "add takes two int64 arguments");
 *         memcpy(&a, call->args[0].data, 8);
 *         memcpy(&b, call->args[1].data, 8);
 *         sum = a + b;
 *         return mt_fn_result(call, &sum, sizeof(sum));
 *     }
 *
 * Build with `cc -shared -fPIC -o libfoo.so foo.c`; the macro gives the
 * symbol default visibility, so -fvisibility=hidden is fine.
 *
 * OWNERSHIP: the arguments are borrowed for the duration of the call (do
 * not keep pointers into them). The result is allocated by the function
 * with malloc() and freed by the runtime after the call; on error the
 * runtime frees a result that was set anyway. The error text is copied
 * out of call->error when the function returns non-zero.
 *
 * THREAD: each call runs on the executor's main thread; the executor runs
 * one task at a time and is reused for later tasks, so globals persist
 * between calls. A function may start threads, but they must not write to
 * the call after it returns.
 *
 * ACTORS (manta/actor.h): an actor is a factory and methods, all
 * MT_FUNCTIONs of one library. The factory runs first, in an executor
 * of the actor's own, and stores the actor's state in call->actor; every
 * method call of that actor then runs in the same process, one at a time
 * in submission order, and gets the same call->actor back:
 *
 *     struct counter { int64_t n; };
 *
 *     MT_FUNCTION(counter_new)
 *     {
 *         struct counter *c = calloc(1, sizeof(*c));
 *
 *         if (!c)
 *             return mt_fn_error(call, "out of memory");
 *         call->actor = c;
 *         return 0;
 *     }
 *
 *     MT_FUNCTION(incr)
 *     {
 *         struct counter *c = MT_ACTOR_STATE(call, struct counter);
 *
 *         c->n++;
 *         return mt_fn_result(call, &c->n, sizeof(c->n));
 *     }
 *
 * A factory that returns non-zero fails the creation (the actor is DEAD
 * with its error); a method that returns non-zero fails that call only.
 * The state lives until the actor's executor exits (kill, restart, or
 * the worker stopping): the process ends, there is no destructor call.
 *
 * The ABI is plain C with no dependencies; struct layouts only grow at the
 * end, and abi_version says which layout the runtime filled in.
 */
#ifndef MANTA_FUNCTION_H
#define MANTA_FUNCTION_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The layout of struct mt_fn_call this header describes. */
#define MT_FN_ABI_VERSION 2

/* Prefix of exported task functions: MT_FUNCTION(x) defines manta_fn_x. */
#define MT_FN_SYMBOL_PREFIX "manta_fn_"

/* Length of call->error, including its terminating NUL. */
#define MT_FN_ERROR_LEN 512

/* One argument: size bytes at data. data is not NUL-terminated. */
struct mt_fn_arg {
    const void *data;          /* borrowed for the call; NULL when size 0 */
    uint64_t size;             /* bytes */
};

/* One call of a task function. Filled in by the runtime, except result,
 * result_size and error, which belong to the function. */
struct mt_fn_call {
    uint32_t abi_version;      /* MT_FN_ABI_VERSION of the runtime */
    uint32_t nargs;            /* entries in args */
    const struct mt_fn_arg *args; /* borrowed for the call */
    void *result;              /* set by the function: malloc'd, freed by
                                  the runtime; NULL = empty result */
    uint64_t result_size;      /* bytes at result */
    char error[MT_FN_ERROR_LEN]; /* set when returning non-zero; the runtime
                                    zeroes it before the call */
    /* ABI 2: the actor's state. A factory (actor creation) finds NULL and
     * sets it to its own (e.g. malloc'd) state; each method of that actor
     * then finds what the factory set. NULL in plain function tasks. */
    void *actor;
};

/*
 * A task function. RET 0 on success (the result is the task's result), any
 * other value on failure (call->error says why; the task is FAILED with that
 * text and is not retried).
 */
typedef int (*mt_fn)(struct mt_fn_call *call);

#if defined(__GNUC__) || defined(__clang__)
#define MT_FN_EXPORT __attribute__((visibility("default")))
#else
#define MT_FN_EXPORT
#endif

#ifdef __cplusplus
#define MT_FN_EXTERN_C extern "C"
#else
#define MT_FN_EXTERN_C
#endif

/*
 * MT_FUNCTION(name) - declare and define the task function findable as
 * "name" (exported symbol manta_fn_<name>); the body follows and sees the
 * call as `call`:  MT_FUNCTION(square) { ... return 0; }
 */
#define MT_FUNCTION(name)                                                     \
    MT_FN_EXTERN_C MT_FN_EXPORT int manta_fn_##name(struct mt_fn_call *call); \
    MT_FN_EXTERN_C MT_FN_EXPORT int manta_fn_##name(struct mt_fn_call *call)

/*
 * MT_ACTOR_STATE(call, type) - the actor state a factory stored, as a
 * pointer to type (NULL outside an actor or with a runtime older than
 * ABI 2).
 */
#define MT_ACTOR_STATE(call, type)                                            \
    ((call)->abi_version >= 2 ? (type *)(call)->actor : (type *)NULL)

/*
 * mt_fn_result - set the call's result to a malloc'd copy of n bytes at p,
 * replacing (and freeing) any result set before.
 * RET 0, or -1 when out of memory (call->error then says so)
 */
static inline int mt_fn_result(struct mt_fn_call *call, const void *p,
                               uint64_t n)
{
    void *copy = NULL;

    if (n > 0) {
        if (n > (uint64_t)SIZE_MAX || !(copy = malloc((size_t)n))) {
            snprintf(call->error, sizeof(call->error),
                     "out of memory for a result of %llu bytes",
                     (unsigned long long)n);
            return -1;
        }
        memcpy(copy, p, (size_t)n);
    }
    free(call->result);
    call->result = copy;
    call->result_size = n;
    return 0;
}

/*
 * mt_fn_error - format the call's error text (truncated to fit).
 * RET -1, so a function can `return mt_fn_error(call, "bad %s", what);`
 */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static inline int mt_fn_error(struct mt_fn_call *call, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(call->error, sizeof(call->error), fmt, ap);
    va_end(ap);
    return -1;
}

#ifdef __cplusplus
}
#endif

#endif /* MANTA_FUNCTION_H */
