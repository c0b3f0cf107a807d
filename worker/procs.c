/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procs.c -- the worker's record of its process groups (see procs.h).
 *
 * DESIGN: an in-memory mt_proc_record mirrors the file; a change marks it
 * dirty and starts a uv_check handle, whose callback (after the loop's I/O
 * callbacks of the iteration) writes the file once and stops the handle.
 * So a batch of tasks started by one call costs one write.
 *
 * THREAD: loop thread only.
 */
#include "worker/procs.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/sys.h"

/* Guarded by: loop thread. */
struct mt_procs {
    char *path;                 /* <temp_dir>/worker.procs */
    struct mt_proc_record rec;  /* owner: this worker */
    uv_check_t check;           /* writes the file when dirty */
    bool dirty;
    bool warned;                /* a failed write was logged */
    void (*closed)(void *);
    void *closed_arg;
};

static void write_record(struct mt_procs *p)
{
    char *text;
    int rc;

    p->dirty = false;
    if (p->rec.n == 0) {
        unlink(p->path);
        return;
    }
    text = mt_proc_record_format(&p->rec);
    rc = mt_sys_write_file_atomic(p->path, text);
    free(text);
    if (rc < 0 && !p->warned)
        MT_WARN("cannot write %s: %s; task processes that outlive this "
                "worker will not be found by its successor", p->path,
                mt_strerror(rc));
    p->warned = rc < 0;
}

static void on_check(uv_check_t *h)
{
    struct mt_procs *p = h->data;

    uv_check_stop(h);
    if (p->dirty)
        write_record(p);
}

static void mark_dirty(struct mt_procs *p)
{
    p->dirty = true;
    uv_check_start(&p->check, on_check);
}

/* Kill what a predecessor left behind. RET 0 or -MT_ESTATE. */
static int sweep(const char *path)
{
    int killed = 0, rc = mt_proc_record_sweep_file(path, &killed);

    if (rc == -MT_ESTATE) {
        MT_ERROR("%s belongs to a worker that still runs: one session dir "
                 "serves one worker", path);
        return rc;
    }
    if (rc < 0)
        MT_WARN("cannot sweep %s: %s", path, mt_strerror(rc));
    if (killed > 0)
        MT_WARN("killed %d process%s left running by the previous worker "
                "of this session dir", killed, killed == 1 ? "" : "es");
    return 0;
}

int mt_procs_create(uv_loop_t *loop, const char *temp_dir,
                    struct mt_procs **out)
{
    struct mt_procs *p;
    struct mt_proc_stat self;
    char *path;

    *out = NULL;
    if (!temp_dir)
        return 0;
    path = mt_xasprintf("%s/%s", temp_dir, MT_PROC_RECORD_FILE);
    if (sweep(path) < 0) {
        free(path);
        return -MT_ESTATE;
    }
    p = mt_xcalloc(1, sizeof(*p));
    p->path = path;
    p->rec.owner.pid = (int)getpid();
    if (mt_proc_stat_read(p->rec.owner.pid, &self) == 0)
        p->rec.owner.start = self.start;
    uv_check_init(loop, &p->check);
    p->check.data = p;
    *out = p;
    return 0;
}

void mt_procs_add(struct mt_procs *p, int pid)
{
    struct mt_proc_stat st;

    if (!p || pid <= 0)
        return;
    if (mt_proc_stat_read(pid, &st) < 0) {
        MT_DEBUG("pid %d vanished before it could be recorded", pid);
        return;
    }
    mt_proc_record_add(&p->rec, pid, st.start);
    mark_dirty(p);
}

void mt_procs_remove(struct mt_procs *p, int pid)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->rec.n; i++) {
        if (p->rec.groups[i].pid != pid)
            continue;
        p->rec.groups[i] = p->rec.groups[--p->rec.n];
        mark_dirty(p);
        return;
    }
}

static void on_closed(uv_handle_t *h)
{
    struct mt_procs *p = h->data;

    p->closed(p->closed_arg);
}

void mt_procs_close(struct mt_procs *p, void (*done)(void *), void *arg)
{
    if (!p) {
        done(arg);
        return;
    }
    write_record(p);
    p->closed = done;
    p->closed_arg = arg;
    uv_close((uv_handle_t *)&p->check, on_closed);
}

void mt_procs_destroy(struct mt_procs *p)
{
    if (!p)
        return;
    mt_proc_record_release(&p->rec);
    free(p->path);
    free(p);
}
