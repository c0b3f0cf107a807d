/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proc.h -- processes as /proc shows them, and the record a worker keeps of
 * the process groups it started, so that what outlives it can be killed.
 *
 * A process is named by its pid and its start time (field 22 of
 * /proc/<pid>/stat, clock ticks after boot): a pid can be reused, the pair
 * cannot. The record (<session dir>/worker.procs, MT_PROC_RECORD_FILE)
 * holds its owner (the worker) and the leader of each group the owner
 * started (a task's manta-guard, an executor):
 *
 *     # manta-worker process groups: pid start-time
 *     owner 4012 183521
 *     group 4077 183530
 *
 * Sweeping a record kills every process that is still in one of its
 * groups and was started no earlier than the group's leader. A group whose
 * leader's pid now names another process is skipped: a pid is not reused
 * while it names a live process group, so that group is gone. Nothing is
 * swept while the owner itself still runs.
 *
 * THREAD: any; no shared state.
 */
#ifndef MT_PROC_H
#define MT_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_PROC_RECORD_FILE "worker.procs"

/* ---- /proc --------------------------------------------------------------- */

/* What /proc/<pid>/stat says about a process. */
struct mt_proc_stat {
    int pid;
    char state;                 /* R, S, D, Z (zombie), X (dead), ... */
    int ppid;
    int pgrp;                   /* its process group */
    uint64_t start;             /* clock ticks after boot */
};

/*
 * mt_proc_stat_parse - parse the text of a /proc/<pid>/stat file (the
 * command name may hold spaces and parentheses: it ends at the last ')').
 * RET 0 or -MT_EPROTO
 */
int mt_proc_stat_parse(const char *text, struct mt_proc_stat *out);

/* mt_proc_stat_read - read /proc/<pid>/stat. RET 0, -errno (-ENOENT: no
 * such process) or -MT_EPROTO */
int mt_proc_stat_read(int pid, struct mt_proc_stat *out);

/* mt_proc_alive - pid runs (is not a zombie) and was started at start. */
bool mt_proc_alive(int pid, uint64_t start);

/*
 * mt_proc_scan - call fn for every process /proc lists (processes that
 * vanish meanwhile are skipped). Never allocates, so a process that has
 * forked may call it (manta-guard does).
 * RET 0, or -errno when /proc cannot be read
 */
int mt_proc_scan(void (*fn)(const struct mt_proc_stat *st, void *arg),
                 void *arg);

/* ---- the record ---------------------------------------------------------- */

struct mt_proc_ent {
    int pid;
    uint64_t start;
};

struct mt_proc_record {
    struct mt_proc_ent owner;   /* pid 0: none */
    struct mt_proc_ent *groups; /* each group's leader */
    size_t n;
    size_t cap;
};

/* mt_proc_record_release - free the groups; the record can be reused. */
void mt_proc_record_release(struct mt_proc_record *r);

/* mt_proc_record_add - append a group leader. */
void mt_proc_record_add(struct mt_proc_record *r, int pid, uint64_t start);

/* mt_proc_record_format - RET owned text (free with free()), as above. */
char *mt_proc_record_format(const struct mt_proc_record *r);

/*
 * mt_proc_record_parse - read text made by mt_proc_record_format; blank
 * lines and '#' comments are skipped.
 * OUT r    filled (release it, also on failure)
 * RET 0 or -MT_EPROTO (a bad line)
 */
int mt_proc_record_parse(const char *text, struct mt_proc_record *r);

/*
 * mt_proc_record_sweep - kill (SIGKILL) what is left of the record's
 * groups, as described at the top, and wait up to 2 s for them to die.
 * OUT killed  processes signalled (may be NULL)
 * RET 0, -MT_ESTATE (its owner still runs: nothing done)
 */
int mt_proc_record_sweep(const struct mt_proc_record *r, int *killed);

/*
 * mt_proc_record_sweep_file - read the record at path, sweep it and
 * remove the file. No file: nothing to do.
 * OUT killed  as for mt_proc_record_sweep (0 when there is no file)
 * RET 0, -MT_ESTATE (owner alive: the file stays), -MT_EPROTO (bad file:
 *     removed), -errno
 */
int mt_proc_record_sweep_file(const char *path, int *killed);

#endif /* MT_PROC_H */
