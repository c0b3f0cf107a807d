/* SPDX-License-Identifier: Apache-2.0 */
/*
 * executor_main.c -- manta-executor: runs function tasks for a worker, one
 * at a time, in a process the worker prestarts and reuses.
 *
 * The worker passes one end of a Unix socket pair as fd 3 (MT_EXEC_FD) and
 * pipes as stdout and stderr; what a function prints there is relayed as
 * the output of the task it belongs to. The executor reads a REQUEST frame
 * (exec_proto.h), finds the function, calls it on this (main) thread with
 * a struct mt_fn_call (manta/function.h), flushes stdio and writes the
 * REPLY. EOF on fd 3 means the worker is done with us: exit 0. A malformed
 * frame is fatal for this process only: say why on stderr and exit 2.
 *
 * Finding "lib.so:fn": dlopen lib as given, then <dir>/lib for each dir of
 * the task's code path; handles are cached for the life of the process, so
 * globals in a library persist across tasks. In the library the symbol
 * "manta_fn_<fn>" (MT_FUNCTION) is tried before "<fn>". A bare "fn" is
 * looked up in every library loaded so far, then in every *.so of the code
 * path folders (alphabetical order), loading each. Failures are replies
 * with a reason, never a crash of the executor.
 *
 * The task's environment (MANTA_TASK_ID, the spec's env, the grant's
 * accelerator env) is set with setenv for the call and undone after it.
 * A library that read a variable at load time (e.g. CUDA reading
 * CUDA_VISIBLE_DEVICES) keeps what it saw first.
 *
 * Actors: a worker gives each actor an executor of its own. Its first
 * request is MT_EXEC_ACTOR_CREATE (the factory); what the factory leaves
 * in call->actor is kept for the life of the process and handed to every
 * MT_EXEC_ACTOR_METHOD request after it. A bare method name is looked up
 * in the factory's library first. Actor requests in the wrong order (a
 * method before a successful factory, a second factory) fail with
 * MT_EXEC_BAD_REQUEST.
 *
 * The executor goes when the worker goes, even in the middle of a task,
 * and takes its process group (it leads one: whatever a function forked)
 * with it: its parent-death signal is SIGHUP, whose handler SIGKILLs the
 * group once getppid() is no longer the worker (MANTA_WORKER_PID, set by
 * the worker; checked right after the signal is armed, in case the worker
 * died first). The handler is set again before every task, in case a
 * function replaced it; a function that ignores SIGHUP for good keeps the
 * executor alive, and the worker's record (procs.h) is then what finds it.
 *
 * Deliberately small: libc, libdl and the framing; no gRPC, no libuv.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "manta/function.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/ids.h"
#include "common/strbuf.h"
#include "objstore/client.h"
#include "worker/exec_proto.h"

#define MAX_LIBS 1024

/* A library loaded so far. */
struct lib {
    char *name;                /* as the task named it, or the path */
    char *path;                /* what dlopen succeeded with */
    void *handle;
};

static struct lib libs[MAX_LIBS];
static size_t n_libs;

/* This executor's actor, once its factory succeeded. */
static bool actor_alive;
static void *actor_state;
static char *actor_lib;        /* the factory's "lib.so", or NULL */

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "manta-executor[%d]: ", (int)getpid());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

/* ---- I/O on the socket --------------------------------------------------- */

/* RET 1 read all, 0 EOF before the first byte; dies on errors. */
static int read_full(int fd, void *p, size_t n)
{
    size_t got = 0;
    ssize_t k;

    while (got < n) {
        k = read(fd, (char *)p + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            die("read: %s", strerror(errno));
        if (k == 0) {
            if (got == 0)
                return 0;
            die("truncated frame from the worker");
        }
        got += (size_t)k;
    }
    return 1;
}

static void write_full(int fd, const uint8_t *p, size_t n)
{
    ssize_t k;

    while (n > 0) {
        k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            exit(errno == EPIPE ? 0 : 2); /* the worker is gone */
        p += k;
        n -= (size_t)k;
    }
}

/* ---- finding functions --------------------------------------------------- */

static struct lib *lib_add(const char *name, const char *path, void *h)
{
    struct lib *l;

    if (n_libs == MAX_LIBS) {
        dlclose(h);
        return NULL;
    }
    l = &libs[n_libs++];
    l->name = mt_xstrdup(name);
    l->path = mt_xstrdup(path);
    l->handle = h;
    return l;
}

static struct lib *lib_find(const char *name)
{
    for (size_t i = 0; i < n_libs; i++)
        if (!strcmp(libs[i].name, name) || !strcmp(libs[i].path, name))
            return &libs[i];
    return NULL;
}

/* Remember a dlopen failure other than a missing file. */
static void note_dlerror(struct mt_strbuf *why)
{
    const char *e = dlerror();

    if (e && !strstr(e, "No such file or directory") && why->len < 1024)
        mt_strbuf_addf(why, "%s%s", why->len ? "; " : "", e);
}

/* Open lib as given, then from each code path dir. */
static struct lib *lib_open(const char *lib, const struct mt_exec_request *r,
                            struct mt_strbuf *searched, struct mt_strbuf *why)
{
    struct lib *l = lib_find(lib);
    void *h;

    if (l)
        return l;
    mt_strbuf_addf(searched, "%s", lib);
    if ((h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)))
        return lib_add(lib, lib, h);
    note_dlerror(why);
    for (uint32_t i = 0; i < r->n_code_path && !strchr(lib, '/'); i++) {
        char *path = mt_xasprintf("%s/%s", r->code_path[i], lib);

        mt_strbuf_addf(searched, ", %s", path);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            l = lib_add(lib, path, h);
            free(path);
            return l;
        }
        note_dlerror(why);
        free(path);
    }
    return NULL;
}

static mt_fn lib_sym(struct lib *l, const char *fn)
{
    char sym[MT_EXEC_MAX_FUNCTION + 16];
    void *p;

    snprintf(sym, sizeof(sym), MT_FN_SYMBOL_PREFIX "%s", fn);
    p = dlsym(l->handle, sym);
    if (!p)
        p = dlsym(l->handle, fn);
    return (mt_fn)p;
}

static int so_filter(const struct dirent *d)
{
    size_t n = strlen(d->d_name);

    return n > 3 && !strcmp(d->d_name + n - 3, ".so");
}

/* A bare name: the loaded libraries, then every *.so of the code path. */
static mt_fn find_bare(const char *fn, const struct mt_exec_request *r,
                       struct mt_strbuf *searched, struct mt_strbuf *why)
{
    struct dirent **ents;
    mt_fn f = NULL;
    int n;

    for (size_t i = 0; i < n_libs; i++)
        if ((f = lib_sym(&libs[i], fn)))
            return f;
    mt_strbuf_addf(searched, "%zu loaded libraries", n_libs);
    for (uint32_t i = 0; i < r->n_code_path && !f; i++) {
        mt_strbuf_addf(searched, ", %s/*.so", r->code_path[i]);
        n = scandir(r->code_path[i], &ents, so_filter, alphasort);
        for (int j = 0; j < n; j++) {
            char *path = mt_xasprintf("%s/%s", r->code_path[i],
                                      ents[j]->d_name);
            struct lib *l = lib_find(path);
            void *h;

            if (!l && !f && (h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
                l = lib_add(path, path, h);
            else if (!l && !f)
                note_dlerror(why);
            if (l && !f)
                f = lib_sym(l, fn);
            free(path);
            free(ents[j]);
        }
        if (n >= 0)
            free(ents);
    }
    return f;
}

static bool valid_symbol(const char *s)
{
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return false;
    return true;
}

/*
 * Resolve r->function. RET the function, or NULL with rep->status and
 * *err (owned) saying why.
 */
static mt_fn resolve(const struct mt_exec_request *r, uint32_t *status,
                     char **err)
{
    struct mt_strbuf searched = MT_STRBUF_INIT, why = MT_STRBUF_INIT;
    char *lib = mt_xstrdup(r->function), *fn = strrchr(lib, ':');
    struct lib *l = NULL;
    mt_fn f = NULL;

    if (fn)
        *fn++ = '\0';
    if (!fn ? !valid_symbol(lib) : !*lib || !valid_symbol(fn)) {
        *status = MT_EXEC_BAD_REQUEST;
        *err = mt_xasprintf("bad function name '%s': expected \"lib.so:name\""
                            " or \"name\"", r->function);
        goto out;
    }
    if (fn) {
        l = lib_open(lib, r, &searched, &why);
        f = l ? lib_sym(l, fn) : NULL;
    } else {
        f = find_bare(lib, r, &searched, &why);
    }
    if (f)
        goto out;
    *status = MT_EXEC_NOT_FOUND;
    if (fn && l)
        *err = mt_xasprintf("function '%s' not found in %s (loaded from %s; "
                            "looked for " MT_FN_SYMBOL_PREFIX "%s and %s)",
                            fn, lib, l->path, fn, fn);
    else
        *err = mt_xasprintf("function '%s' not found%s%s (searched: %s)%s%s",
                            fn ? fn : lib, fn ? ": cannot load " : "",
                            fn ? lib : "", mt_strbuf_str(&searched),
                            why.len ? "; " : "", mt_strbuf_str(&why));
out:
    mt_strbuf_release(&searched);
    mt_strbuf_release(&why);
    free(lib);
    return f;
}

/* ---- running one task ---------------------------------------------------- */

/* Set the task's environment ("K=V" sets, a bare "K" unsets); RET what to
 * restore afterwards ("K=old" or "K" for unset), owned. */
static char **env_push(const struct mt_exec_request *r)
{
    char **undo = mt_xcalloc(r->n_env + 1, sizeof(*undo));

    for (uint32_t i = 0; i < r->n_env; i++) {
        char *kv = r->env[i], *eq = strchr(kv, '=');
        const char *old;

        if (eq)
            *eq = '\0';
        old = getenv(kv);
        undo[i] = old ? mt_xasprintf("%s=%s", kv, old) : mt_xstrdup(kv);
        if (!eq) {
            unsetenv(kv);
            continue;
        }
        setenv(kv, eq + 1, 1);
        *eq = '=';
    }
    return undo;
}

/* Undo env_push, or with keep (an actor's creation: the actor lives on in
 * this executor with its grant's environment) only free the record. */
static void env_pop(const struct mt_exec_request *r, char **undo, bool keep)
{
    for (uint32_t i = r->n_env; i-- > 0;) {
        char *eq = strchr(undo[i], '=');

        if (!keep && eq) {
            *eq = '\0';
            setenv(undo[i], eq + 1, 1);
        } else if (!keep) {
            unsetenv(undo[i]);
        }
        free(undo[i]);
    }
    free(undo);
}

/* ---- objects: arguments mapped from the store, big results put there ---- */

static struct mt_objc *store;      /* connected on first use */
static char *store_path;

/* RET the store client for path, or NULL (err says why). */
static struct mt_objc *store_for(const char *path, char **err)
{
    int rc;

    if (store && strcmp(store_path, path) == 0)
        return store;
    if (store) {
        mt_objc_disconnect(store);
        free(store_path);
        store = NULL;
    }
    rc = mt_objc_connect(path, NULL, &store);
    if (rc < 0) {
        *err = mt_xasprintf("cannot connect to the object store at %s: %s",
                            path, mt_strerror(rc));
        store = NULL;
        return NULL;
    }
    store_path = mt_xstrdup(path);
    return store;
}

/* Map every object argument into args (zero-copy, pinned). RET the number
 * pinned; on failure *err is set and what was pinned is released. */
static uint32_t map_refs(const struct mt_exec_request *r,
                         struct mt_fn_arg *args, char **err)
{
    char hex[MT_OBJECT_ID_HEX_LEN + 1];
    struct mt_objc_buf ob;
    mt_object_id id;
    uint32_t i;
    int rc;

    if (r->n_refs == 0)
        return 0;
    if (!r->store_socket || !*r->store_socket) {
        *err = mt_xstrdup("object arguments but no object store");
        return 0;
    }
    if (!store_for(r->store_socket, err))
        return 0;
    for (i = 0; i < r->n_refs; i++) {
        memcpy(id.b, r->refs[i].id, sizeof(id.b));
        rc = mt_objc_get(store, &id, 0, &ob);
        if (rc < 0) {
            *err = mt_xasprintf("argument %u: object %s is not in this "
                                "node's store: %s", r->refs[i].index,
                                mt_object_id_hex(&id, hex), mt_strerror(rc));
            break;
        }
        args[r->refs[i].index].data = ob.info.data_size ? ob.data : NULL;
        args[r->refs[i].index].size = ob.info.data_size;
    }
    if (i < r->n_refs) {
        while (i-- > 0) {
            memcpy(id.b, r->refs[i].id, sizeof(id.b));
            mt_objc_release(store, &id);
        }
        return 0;
    }
    return r->n_refs;
}

/* Unpin the arguments now (not deferred): an object whose last reference
 * goes with this task is then freed at once when the head deletes it. */
static void unmap_refs(const struct mt_exec_request *r, uint32_t n)
{
    mt_object_id id;

    for (uint32_t i = 0; i < n; i++) {
        memcpy(id.b, r->refs[i].id, sizeof(id.b));
        mt_objc_release(store, &id);
    }
    if (n)
        mt_objc_flush(store);
}

/* Put a big result in the store under the task's result id. RET NULL or
 * the error (owned). */
static char *store_result(const struct mt_exec_request *r,
                          const struct mt_fn_call *call)
{
    mt_object_id id;
    char *err = NULL;
    int rc;

    if (mt_object_id_for_task(r->task_id, &id) < 0)
        return mt_xasprintf("task id %s has no result object id", r->task_id);
    if (!store_for(r->store_socket, &err))
        return err;
    rc = mt_objc_put(store, &id, call->result, call->result_size, NULL, 0, 0,
                     NULL);
    if (rc == -MT_EEXIST) /* an earlier attempt put it already */
        rc = 0;
    if (rc < 0)
        return mt_xasprintf("cannot put the result of %llu bytes in the "
                            "object store: %s",
                            (unsigned long long)call->result_size,
                            mt_strerror(rc));
    return NULL;
}

static bool result_to_store(const struct mt_exec_request *r,
                            const struct mt_fn_call *call)
{
    return call->result && call->result_size > MT_EXEC_INLINE_MAX &&
           r->store_results && r->store_socket && *r->store_socket;
}

/* RET NULL when r may run now, else why not (static text). */
static const char *actor_check(const struct mt_exec_request *r)
{
    if (r->actor_op == MT_EXEC_ACTOR_CREATE && actor_alive)
        return "this executor already hosts an actor";
    if (r->actor_op != MT_EXEC_ACTOR_CREATE && actor_alive)
        return r->actor_op == MT_EXEC_ACTOR_METHOD
                   ? NULL
                   : "this executor hosts an actor: no plain tasks";
    if (r->actor_op == MT_EXEC_ACTOR_METHOD)
        return "method call before the actor was created";
    return NULL;
}

/* Resolve r->function; a method's bare name in the factory's library. */
static mt_fn resolve_call(struct mt_exec_request *r, uint32_t *status,
                          char **err)
{
    char *orig = r->function, *full;
    mt_fn f;

    if (r->actor_op != MT_EXEC_ACTOR_METHOD || !actor_lib ||
        strchr(orig, ':'))
        return resolve(r, status, err);
    full = mt_xasprintf("%s:%s", actor_lib, orig);
    r->function = full;
    f = resolve(r, status, err);
    r->function = orig;
    free(full);
    return f;
}

/* The factory succeeded: keep what it made. */
static void actor_keep(const struct mt_exec_request *r, void *state)
{
    const char *colon = strrchr(r->function, ':');

    actor_alive = true;
    actor_state = state;
    if (colon)
        actor_lib = mt_xstrndup(r->function, (size_t)(colon - r->function));
}

/* ---- the worker's death ------------------------------------------------- */

static volatile pid_t worker_pid; /* our parent */

static void on_worker_gone(int sig)
{
    (void)sig;
    if (getppid() != worker_pid)
        kill(0, SIGKILL);
}

static void watch_worker(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_worker_gone;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGHUP, &sa, NULL);
}

/* Arm the parent-death signal, then make sure the parent is still the
 * worker: a worker that died before the signal was armed never sends it. */
static void arm_death_signal(void)
{
    const char *v = getenv("MANTA_WORKER_PID");
    long pid = v ? strtol(v, NULL, 10) : 0;

    worker_pid = pid > 1 ? (pid_t)pid : getppid();
    watch_worker();
    prctl(PR_SET_PDEATHSIG, SIGHUP);
    if (getppid() != worker_pid)
        die("the worker (pid %d) is gone", (int)worker_pid);
}

static void run(struct mt_exec_request *r, int fd)
{
    struct mt_exec_reply rep = {MT_EXEC_OK, {NULL, 0}, NULL, 0};
    struct mt_fn_call call;
    struct mt_fn_arg *args;
    char *err = NULL, **undo;
    uint8_t *frame;
    size_t len;
    uint32_t mapped = 0;
    mt_fn f;
    int rc;

    f = NULL;
    if ((err = (char *)actor_check(r))) {
        rep.status = MT_EXEC_BAD_REQUEST;
        err = mt_xstrdup(err);
    } else {
        f = resolve_call(r, &rep.status, &err);
    }
    memset(&call, 0, sizeof(call));
    if (f) {
        args = mt_xcalloc(r->nargs + 1, sizeof(*args));
        for (uint32_t i = 0; i < r->nargs; i++) {
            args[i].data = r->args[i].size ? r->args[i].data : NULL;
            args[i].size = r->args[i].size;
        }
        mapped = map_refs(r, args, &err);
        if (err) {
            rep.status = MT_EXEC_FAILED;
            free(args);
            f = NULL;
        }
    }
    if (f) {
        call.abi_version = MT_FN_ABI_VERSION;
        call.nargs = r->nargs;
        call.args = args;
        call.actor = r->actor_op == MT_EXEC_ACTOR_METHOD ? actor_state : NULL;
        undo = env_push(r);
        rc = f(&call);
        env_pop(r, undo, r->actor_op == MT_EXEC_ACTOR_CREATE && rc == 0);
        unmap_refs(r, mapped);
        call.error[sizeof(call.error) - 1] = '\0';
        free(args);
        if (rc != 0) {
            rep.status = MT_EXEC_FAILED;
            err = call.error[0] ? mt_xstrdup(call.error)
                                : mt_xasprintf("function '%s' returned %d",
                                               r->function, rc);
        } else if (result_to_store(r, &call)) {
            err = store_result(r, &call);
            if (err)
                rep.status = MT_EXEC_FAILED;
            else
                rep.stored = call.result_size;
        } else if (call.result_size > MT_EXEC_MAX_RESULT) {
            rep.status = MT_EXEC_TOO_BIG;
            err = mt_xasprintf("result of %llu bytes exceeds the 8 MiB "
                               "inline limit",
                               (unsigned long long)call.result_size);
        } else if (call.result_size && !call.result) {
            rep.status = MT_EXEC_FAILED;
            err = mt_xasprintf("function '%s' set result_size %llu without "
                               "a result", r->function,
                               (unsigned long long)call.result_size);
        } else {
            rep.result.data = call.result;
            rep.result.size = (uint32_t)call.result_size;
        }
        if (rep.status == MT_EXEC_OK && r->actor_op == MT_EXEC_ACTOR_CREATE)
            actor_keep(r, call.actor);
    }
    if (err && strlen(err) > MT_EXEC_MAX_ERROR)
        err[MT_EXEC_MAX_ERROR] = '\0';
    rep.error = err ? err : "";
    fflush(stdout);
    fflush(stderr);
    if (mt_exec_reply_encode(&rep, &frame, &len) < 0)
        die("cannot encode a reply");
    free(call.result);
    free(err);
    write_full(fd, frame, len);
    free(frame);
}

int main(int argc, char **argv)
{
    struct mt_exec_request r;
    uint8_t hdr[MT_EXEC_HDR], *payload;
    uint32_t type, len;
    int fd = MT_EXEC_FD;

    (void)argc;
    (void)argv;
    if (fcntl(fd, F_GETFD) < 0)
        die("fd %d is not open: manta-executor is started by manta-worker",
            fd);
    arm_death_signal();
    signal(SIGPIPE, SIG_IGN);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    while (read_full(fd, hdr, sizeof(hdr))) {
        if (mt_exec_header_parse(hdr, &type, &len) < 0 ||
            type != MT_EXEC_REQUEST)
            die("malformed frame header from the worker");
        payload = mt_xmalloc(len ? len : 1);
        if (len && !read_full(fd, payload, len))
            die("truncated frame from the worker");
        if (mt_exec_request_decode(payload, len, &r) < 0)
            die("malformed request from the worker");
        watch_worker(); /* a function may have replaced it */
        run(&r, fd);
        mt_exec_request_release(&r);
        free(payload);
    }
    return 0;
}
