/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconnect_driver.c -- an SDK driver for tests/integration/
 * test_reconnect.py that lives through head restarts: it connects once,
 * then does what each line of stdin says and answers with one line on
 * stdout, so the test can kill and restart the head between steps.
 *
 *   reconnect_driver ADDR LIBDIR, then lines:
 *   cmd NAME ARGV...   submit a command task: "sub NAME", or
 *                      "suberr NAME MT_E... MESSAGE"
 *   wait NAME MS       wait for it: "done NAME STATE EXIT_CODE", or
 *                      "waiterr NAME MT_E... MESSAGE"
 *   actor              create an anonymous counter actor and wait until
 *                      it is ready: "actor ready", or "actorerr ..."
 *   incr               call its incr: "incr VALUE", or "increrr ..."
 *   quit               disconnect: "bye"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <manta/manta.h>

#define MAX_TASKS 64
#define MAX_WORDS 32

static struct {
    char name[32];
    mt_task_t *t;
} tasks[MAX_TASKS];
static size_t n_tasks;

static mt_task_t *find(const char *name)
{
    for (size_t i = 0; i < n_tasks; i++)
        if (strcmp(tasks[i].name, name) == 0)
            return tasks[i].t;
    return NULL;
}

static void submit(mt_client_t *c, char **w, int n)
{
    mt_task_opts_t *o = NULL;
    mt_task_t *t = NULL;
    int rc;

    if (n < 3 || n_tasks == MAX_TASKS)
        return;
    mt_task_opts_create(&o);
    mt_task_opts_set_output_limit(o, 0);
    w[n] = NULL;
    rc = mt_submit_command(c, (const char *const *)&w[2], o, &t);
    mt_task_opts_destroy(o);
    if (rc < 0) {
        printf("suberr %s %s %s\n", w[1], mt_error_name(rc),
               mt_client_last_error(c));
        return;
    }
    snprintf(tasks[n_tasks].name, sizeof(tasks[0].name), "%s", w[1]);
    tasks[n_tasks++].t = t;
    printf("sub %s\n", w[1]);
}

static void wait_task(mt_client_t *c, const char *name, int ms)
{
    mt_task_t *t = find(name);
    mt_task_result r;
    int rc;

    if (!t) {
        printf("waiterr %s EINVAL no such task\n", name);
        return;
    }
    mt_task_result_init(&r);
    rc = mt_task_wait(c, t, ms, &r);
    if (rc == 0 || rc == -MT_ETASKFAILED || rc == -MT_ECANCELED)
        printf("done %s %s %d\n", name, mt_task_state_name(r.state),
               r.exit_code);
    else
        printf("waiterr %s %s %s\n", name, mt_error_name(rc),
               r.error && *r.error ? r.error : mt_client_last_error(c));
    mt_task_result_release(&r);
}

static void actor(mt_client_t *c, const char *libdir, mt_actor_t **a)
{
    mt_task_opts_t *o = NULL;
    int rc;

    mt_task_opts_create(&o);
    mt_task_opts_add_code_path(o, libdir);
    mt_task_opts_set_resource(o, "CPU", 0.5);
    rc = mt_actor_create(c, "libexample_counter.so:counter_new", NULL, NULL,
                         0, o, NULL, a);
    mt_task_opts_destroy(o);
    if (rc == 0)
        rc = mt_actor_wait_ready(c, *a, 30000);
    if (rc < 0)
        printf("actorerr %s %s\n", mt_error_name(rc),
               mt_client_last_error(c));
    else
        printf("actor ready\n");
}

static void incr(mt_client_t *c, mt_actor_t *a)
{
    mt_task_t *t = NULL;
    mt_task_result r;
    int64_t v = 0;
    int rc = a ? mt_actor_call(c, a, "incr", NULL, NULL, 0, &t) : -MT_EINVAL;

    mt_task_result_init(&r);
    if (rc == 0)
        rc = mt_task_wait(c, t, 10000, &r);
    if (rc == 0 && r.value_len == sizeof(v)) {
        memcpy(&v, r.value, sizeof(v));
        printf("incr %lld\n", (long long)v);
    } else {
        printf("increrr %s %s\n", mt_error_name(rc ? rc : -MT_EPROTO),
               mt_client_last_error(c));
    }
    mt_task_result_release(&r);
    mt_task_release(t);
}

/* Split line into at most MAX_WORDS - 1 words. RET their count. */
static int split(char *line, char **w)
{
    int n = 0;

    for (char *s = strtok(line, " \n"); s && n < MAX_WORDS - 1;
         s = strtok(NULL, " \n"))
        w[n++] = s;
    return n;
}

int main(int argc, char **argv)
{
    mt_client_t *c = NULL;
    mt_actor_t *a = NULL;
    char line[1024], *w[MAX_WORDS];
    int rc, n;

    if (argc < 3)
        return 2;
    if ((rc = mt_client_connect(argv[1], NULL, &c)) < 0) {
        printf("error %s %s\n", mt_error_name(rc), mt_client_last_error(NULL));
        return 2;
    }
    printf("connected\n");
    fflush(stdout);
    while (fgets(line, sizeof(line), stdin) && (n = split(line, w)) > 0) {
        if (strcmp(w[0], "cmd") == 0)
            submit(c, w, n);
        else if (strcmp(w[0], "wait") == 0 && n == 3)
            wait_task(c, w[1], atoi(w[2]));
        else if (strcmp(w[0], "actor") == 0)
            actor(c, argv[2], &a);
        else if (strcmp(w[0], "incr") == 0)
            incr(c, a);
        else if (strcmp(w[0], "quit") == 0)
            break;
        fflush(stdout);
    }
    for (size_t i = 0; i < n_tasks; i++)
        mt_task_release(tasks[i].t);
    mt_actor_release(a);
    mt_client_disconnect(c);
    printf("bye\n");
    return 0;
}
