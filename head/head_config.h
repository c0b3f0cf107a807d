/* SPDX-License-Identifier: Apache-2.0 */
/*
 * head_config.h -- what the head is started with (main.c fills it from
 * flags): addresses, the session dir, storage, timing, port ranges and
 * the credentials every caller must present.
 */
#ifndef MT_HEAD_CONFIG_H
#define MT_HEAD_CONFIG_H

#include <stdbool.h>

#define MT_HEAD_DEFAULT_PORT 6380
#define MT_DASHBOARD_DEFAULT_PORT 8265
#define MT_HISTORY_DEFAULT_SECONDS 3600

struct mt_security;

struct mt_head_config {
    const char *bind_addr;      /* "0.0.0.0:6380" */
    const char *node_ip;        /* advertised address host */
    const char *temp_dir;       /* session dir; NULL: write nothing */
    const char *storage;        /* "memory" */
    int report_period_ms;       /* what workers are told; default 1000 */
    int node_timeout_ms;        /* silence before DEAD; default 3000 */
    int grace_ms;               /* graceful shutdown budget; default 2000 */
    int dashboard_port;         /* HTTP dashboard; 0 picks one, -1 = off */
    bool dashboard_port_given;  /* set by a flag: taken fails the start;
                                   else (the default port) a taken port
                                   falls back to a free one */
    const char *dashboard_host; /* its bind address; default 127.0.0.1 */
    const struct mt_security *sec; /* token (NULL: --auth none) and TLS
                                      PEMs; borrowed, outlives the head */
    int gang_port_lo;           /* ports gangs hand their members */
    int gang_port_hi;           /* (inclusive; 0, 0: 8470-8999) */
    int history_seconds;        /* samples kept (1 s apart); 0 = off */
    long keep_finished_tasks;   /* ended tasks kept for listing; 0:
                                   MT_TASK_KEEP_DONE (task_table.h) */
};

#endif /* MT_HEAD_CONFIG_H */
