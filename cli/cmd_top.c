/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_top.c -- `manta top`: a terminal view of the cluster that refreshes
 * in place, for people on SSH (htop, `squeue -i` in spirit).
 *
 * Each refresh asks libmanta for the cluster's status
 * (mt_cluster_status_get) and the running tasks (mt_list, state RUNNING:
 * all of them, or the RUNNING_LIMIT submitted first), turns them into top_render.h's plain structs
 * and draws the lines top_render.c makes of them. Nothing here builds a
 * request: the head is reached only through the public SDK.
 *
 * Two ways to draw:
 *   - full screen, when stdout is a terminal: the alternate screen, each
 *     frame drawn from the top left over the last one (every line ends in
 *     "erase to end of line", the frame in "erase below"), sized to the
 *     window (TIOCGWINSZ, redrawn on SIGWINCH); `q` quits when stdin is a
 *     terminal (it is read without echo, a key at a time), as do Ctrl-C,
 *     SIGTERM and SIGHUP, and the terminal is always restored: the main
 *     loop leaves the alternate screen and puts the tty modes back, since
 *     the signal handlers only write a byte to a self-pipe the loop polls.
 *   - plain lines, when stdout is not a terminal or with --once / --plain:
 *     one frame, or one every --interval seconds, with no escapes.
 * A head that cannot be reached at the first refresh is an error (exit
 * 1); later, the last frame stays up with a note until it answers again.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/conn.h"
#include "cli/session.h"
#include "cli/top_render.h"
#include "common/parse.h"
#include "common/strbuf.h"
#include "common/sys.h"

#define RUNNING_LIMIT 1000      /* running tasks asked for per refresh */
#define PLAIN_TASKS 10          /* top tasks in plain mode by default */
#define TOP_TIMEOUT_MS 2000     /* per call: quitting waits at most this */
#define INTERVAL_DEFAULT 2.0

static void usage(FILE *f)
{
    fprintf(f,
            "usage: manta top [--address HOST:PORT] [--temp-dir DIR]\n"
            "                 [--interval S] [--once | --plain] [--tasks N]\n"
            "\n"
            "A live terminal view of the cluster: totals, one line of bars per\n"
            "node (CPU, GPU, TPU, memory, object store: share of each resource\n"
            "in use), running/pending/infeasible tasks and the demand, and the\n"
            "running tasks, longest first. Press q (or Ctrl-C) to quit. When\n"
            "stdout is not a terminal it prints plain lines instead.\n"
            "\n"
            "  --address HOST:PORT  the head (default: read from the session dir)\n"
            "  --temp-dir DIR       session dir: head.addr, token (default %s)\n"
            "  --interval S         refresh every S seconds (default 2; plain\n"
            "                       mode: print a frame every S seconds)\n"
            "  --once               print one frame of plain lines and exit\n"
            "  --plain              plain lines even on a terminal\n"
            "  --tasks N            show at most N running tasks (default: as\n"
            "                       many as fit; plain: %d)\n"
            "  -h, --help           this text\n",
            MT_DEFAULT_TEMP_DIR, PLAIN_TASKS);
}

#define usage_error(...) mt_cli_usage_error("top", usage, __VA_ARGS__)

struct top_opts {
    const char *addr;
    const char *dir;
    double interval_s;
    bool interval_set;
    bool once;
    bool plain;
    long max_tasks;             /* -1: default */
};

/* ---- one refresh --------------------------------------------------------- */

/* What a refresh got, and the view made of it (which borrows from it). */
struct frame {
    mt_cluster_status *st;
    mt_listing *running;
    struct mt_top_node *nodes;
    struct mt_top_task *tasks;
    char clock[16];
    char note[256];
    struct mt_top_view view;
};

/* Free a frame. NULL ok. */
static void frame_free(struct frame *f)
{
    if (!f)
        return;
    mt_cluster_status_free(f->st);
    mt_listing_free(f->running);
    free(f->nodes);
    free(f->tasks);
    free(f);
}

static const char *const res_keys[MT_TOP_NRES] = {
    "CPU", "GPU", "TPU", "memory", "object_store_memory"};

static double amount_of(const mt_resource *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return v[i].amount;
    return 0;
}

/* used/total of each resource with a bar, from total and available. */
static void res_fill(struct mt_top_res *out, const mt_resource *tot,
                     size_t n_tot, const mt_resource *avail, size_t n_avail)
{
    for (int k = 0; k < MT_TOP_NRES; k++) {
        out[k].total = amount_of(tot, n_tot, res_keys[k]);
        out[k].used = out[k].total - amount_of(avail, n_avail, res_keys[k]);
    }
}

static void node_fill(struct mt_top_node *tn, const mt_node_info *n)
{
    int known = 0;
    double sum = 0;

    tn->node_id = n->node_id;
    tn->alive = n->alive;
    res_fill(tn->res, n->total, n->n_total, n->available, n->n_available);
    tn->host_cpu_ratio = n->alive && n->has_usage ? n->cpu_percent / 100 : -1;
    /* The bytes in its store, where its worker says; else the resource. */
    if (n->has_usage && n->store_capacity_bytes) {
        tn->res[MT_TOP_OBJ].used = (double)n->store_used_bytes;
        tn->res[MT_TOP_OBJ].total = (double)n->store_capacity_bytes;
    }
    for (size_t g = 0; g < n->n_gpus; g++) {
        if (n->gpus[g].utilization_percent < 0)
            continue;
        sum += n->gpus[g].utilization_percent;
        known++;
    }
    tn->gpu_util_ratio = n->alive && known ? sum / known / 100 : -1;
}

static void tasks_fill(struct frame *f, long max_tasks)
{
    const mt_listing *l = f->running;
    int64_t now = mt_now_wall_ms();
    size_t n = l ? l->n : 0;

    f->tasks = calloc(n ? n : 1, sizeof(*f->tasks));
    if (!f->tasks)
        return;
    for (size_t i = 0; i < n; i++) {
        const mt_task_info *ti = &l->tasks[i];
        int64_t start = ti->start_time_ms ? ti->start_time_ms
                                          : ti->submit_time_ms;

        f->tasks[i].task_id = ti->task_id;
        f->tasks[i].name = ti->name;
        f->tasks[i].node_id = ti->node_id;
        f->tasks[i].elapsed_ms = start ? now - start : 0;
    }
    mt_top_tasks_sort(f->tasks, n);
    if (max_tasks >= 0 && (size_t)max_tasks < n)
        n = (size_t)max_tasks;
    f->view.tasks = f->tasks;
    f->view.n_tasks = n;
}

/* The cluster's object store bar: the sum of its alive nodes' (their
 * stores' bytes, or the resource where a worker does not say). */
static void store_total(struct mt_top_view *v)
{
    struct mt_top_res *t = &v->total[MT_TOP_OBJ];

    t->used = t->total = 0;
    for (size_t i = 0; i < v->n_nodes; i++) {
        if (!v->nodes[i].alive)
            continue;
        t->used += v->nodes[i].res[MT_TOP_OBJ].used;
        t->total += v->nodes[i].res[MT_TOP_OBJ].total;
    }
}

/* Make f->view of f->st and f->running. RET 0 or -MT_ENOMEM. */
static int view_fill(struct frame *f, long max_tasks)
{
    const mt_cluster_status *st = f->st;
    struct mt_top_view *v = &f->view;

    memset(v, 0, sizeof(*v));
    v->cluster_id = st->cluster_id;
    v->head_address = st->head_address;
    v->clock = f->clock;
    v->note = f->note[0] ? f->note : NULL;
    res_fill(v->total, st->total, st->n_total, st->available,
             st->n_available);
    f->nodes = calloc(st->n_nodes ? st->n_nodes : 1, sizeof(*f->nodes));
    if (!f->nodes)
        return -MT_ENOMEM;
    for (size_t i = 0; i < st->n_nodes; i++) {
        node_fill(&f->nodes[i], &st->nodes[i]);
        if (st->nodes[i].alive)
            v->nodes_alive++;
        else
            v->nodes_dead++;
    }
    v->nodes = f->nodes;
    v->n_nodes = st->n_nodes;
    store_total(v);
    v->running = st->running_tasks;
    v->pending = st->pending_tasks;
    v->demands = st->demands;
    v->n_demands = st->n_demands;
    v->infeasible = mt_top_infeasible(st->demands, st->n_demands);
    tasks_fill(f, max_tasks);
    return f->tasks ? 0 : -MT_ENOMEM;
}

/*
 * The running tasks most likely to have run longest: listings come newest
 * first, so with more than RUNNING_LIMIT running the page asked for is the
 * last one, the RUNNING_LIMIT submitted first.
 * OUT out  returns owned listing, free with mt_listing_free()
 * RET as mt_list
 */
static int list_running(mt_client_t *c, mt_listing **out)
{
    mt_list_filter flt;
    int rc;

    mt_list_filter_init(&flt);
    flt.state = "RUNNING";
    flt.limit = RUNNING_LIMIT;
    rc = mt_list(c, MT_LIST_TASKS, &flt, out);
    if (rc < 0 || (*out)->total <= (*out)->n)
        return rc;
    flt.offset = (uint32_t)((*out)->total - RUNNING_LIMIT);
    mt_listing_free(*out);
    *out = NULL;
    return mt_list(c, MT_LIST_TASKS, &flt, out);
}

/*
 * Refresh: a new frame. The running tasks are extra: when only they fail,
 * the frame has a note instead.
 * OUT out  returns owned frame, free with frame_free()
 * RET 0, mt_cluster_status_get's error, -MT_ENOMEM
 */
static int fetch(mt_client_t *c, long max_tasks, struct frame **out)
{
    struct frame *f = calloc(1, sizeof(*f));
    time_t now = time(NULL);
    struct tm tm;
    int rc;

    *out = NULL;
    if (!f)
        return -MT_ENOMEM;
    rc = mt_cluster_status_get(c, &f->st);
    if (rc < 0)
        goto out_free;
    if (list_running(c, &f->running) < 0)
        snprintf(f->note, sizeof(f->note), "running tasks not listed: %s",
                 mt_client_last_error(c));
    localtime_r(&now, &tm);
    strftime(f->clock, sizeof(f->clock), "%H:%M:%S", &tm);
    rc = view_fill(f, max_tasks);
    if (rc < 0)
        goto out_free;
    *out = f;
    return 0;

out_free:
    frame_free(f);
    return rc;
}

static void say_unreachable(mt_client_t *c)
{
    fprintf(stderr, "manta top: cannot reach the head at %s: %s\n",
            mt_client_address(c), mt_client_last_error(c));
}

/* ---- signals ------------------------------------------------------------- */

/* The handlers only note the signal and wake the loop through the pipe. */
static int wake_fd[2] = {-1, -1};
static volatile sig_atomic_t got_quit;  /* the signal that asks to quit */
static volatile sig_atomic_t got_winch;

static void on_signal(int sig)
{
    int saved = errno;
    char b = 1;

    if (sig == SIGWINCH)
        got_winch = 1;
    else
        got_quit = sig;
    if (write(wake_fd[1], &b, 1) < 0) {
        /* Full: the loop wakes anyway. */
    }
    errno = saved;
}

static int signals_start(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH};
    struct sigaction sa;

    if (pipe(wake_fd) < 0)
        return -errno;
    for (int i = 0; i < 2; i++) {
        fcntl(wake_fd[i], F_SETFL, O_NONBLOCK);
        fcntl(wake_fd[i], F_SETFD, FD_CLOEXEC);
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
    return 0;
}

static void drain_wake(void)
{
    char buf[64];

    while (read(wake_fd[0], buf, sizeof(buf)) > 0)
        ;
}

/* ---- output -------------------------------------------------------------- */

static void write_all(const char *s, size_t len)
{
    while (len) {
        ssize_t w = write(STDOUT_FILENO, s, len);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        len -= (size_t)w;
    }
}

/* The terminal's size; 0 for what is not known. */
static void term_size(int *cols, int *rows)
{
    struct winsize ws;

    *cols = *rows = 0;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
        *cols = ws.ws_col;
        *rows = ws.ws_row;
    }
}

/* Plain mode's width: the terminal's, else $COLUMNS, else no cut. */
static int plain_width(void)
{
    const char *env = getenv("COLUMNS");
    int cols, rows;
    long v;

    term_size(&cols, &rows);
    if (cols > 0 && isatty(STDOUT_FILENO))
        return cols;
    if (env && mt_parse_int(env, 1, 100000, &v))
        return (int)v;
    return MT_TOP_PLAIN_WIDTH;
}

static void print_plain(const struct mt_top_view *v)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;

    mt_top_render(v, plain_width(), 0, &sb);
    fputs(mt_strbuf_str(&sb), stdout);
    fflush(stdout);
    mt_strbuf_release(&sb);
}

/* Draw a frame over the last one: home, each line erased to its end,
 * the rest of the screen erased. */
static void draw_screen(const struct mt_top_view *v)
{
    struct mt_strbuf lines = MT_STRBUF_INIT, out = MT_STRBUF_INIT;
    int cols, rows;
    const char *p, *nl;

    term_size(&cols, &rows);
    mt_top_render(v, cols > 0 ? cols : 80, rows > 0 ? rows : 24, &lines);
    mt_strbuf_adds(&out, "\033[H");
    for (p = mt_strbuf_str(&lines); (nl = strchr(p, '\n')); p = nl + 1) {
        if (p != mt_strbuf_str(&lines))
            mt_strbuf_adds(&out, "\r\n");
        mt_strbuf_add(&out, p, (size_t)(nl - p));
        mt_strbuf_adds(&out, "\033[K");
    }
    mt_strbuf_adds(&out, "\033[J");
    write_all(mt_strbuf_str(&out), out.len);
    mt_strbuf_release(&out);
    mt_strbuf_release(&lines);
}

/* ---- plain mode ---------------------------------------------------------- */

static int run_plain(mt_client_t *c, const struct top_opts *o)
{
    struct frame *f;
    long max_tasks = o->max_tasks >= 0 ? o->max_tasks : PLAIN_TASKS;
    bool loop = o->interval_set && !o->once;
    int rc = 0;

    do {
        if (fetch(c, max_tasks, &f) < 0) {
            say_unreachable(c);
            rc = 1;
            if (!loop)
                break;
        } else {
            print_plain(&f->view);
            frame_free(f);
            rc = 0;
        }
        if (loop) {
            struct pollfd p = {wake_fd[0], POLLIN, 0};

            fputs("\n", stdout);
            fflush(stdout);
            poll(&p, 1, (int)(o->interval_s * 1000));
            drain_wake();
        }
    } while (loop && !got_quit);
    return rc;
}

/* ---- full screen --------------------------------------------------------- */

static struct termios saved_tio;
static bool tio_saved;

/* The alternate screen, no cursor; stdin (a terminal) a key at a time,
 * without echo. */
static void screen_enter(void)
{
    struct termios raw;

    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
        raw = saved_tio;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        tio_saved = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
    write_all("\033[?1049h\033[?25l", 14);
}

static void screen_leave(void)
{
    write_all("\033[?25h\033[?1049l", 14);
    if (tio_saved)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
    tio_saved = false;
}

/* Read the keys waiting on stdin. RET true when one asks to quit. Sets
 * *eof when stdin has ended (it is then no longer polled). */
static bool keys_quit(bool *eof)
{
    char buf[64];
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

    if (n <= 0) {
        *eof = n == 0 || (errno != EINTR && errno != EAGAIN);
        return false;
    }
    return memchr(buf, 'q', (size_t)n) || memchr(buf, 'Q', (size_t)n);
}

/* Wait until the next refresh is due, a key quits, or a signal comes.
 * RET true to quit. */
static bool screen_wait(int64_t due_ms, bool *stdin_eof)
{
    struct pollfd p[2] = {{wake_fd[0], POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    bool keys = isatty(STDIN_FILENO) && !*stdin_eof;
    int64_t left;

    while (!got_quit && !got_winch &&
           (left = due_ms - mt_now_mono_ms()) > 0) {
        if (poll(p, keys ? 2 : 1, (int)left) <= 0)
            continue;
        drain_wake();
        if (keys && (p[1].revents & (POLLIN | POLLHUP)) &&
            keys_quit(stdin_eof))
            return true;
        keys = keys && !*stdin_eof;
    }
    return got_quit != 0;
}

/* Takes f (the first frame). */
static int run_screen(mt_client_t *c, const struct top_opts *o,
                      struct frame *f)
{
    int64_t every = (int64_t)(o->interval_s * 1000), due;
    bool stdin_eof = false;
    struct frame *next;

    screen_enter();
    due = mt_now_mono_ms() + every;
    for (;;) {
        draw_screen(&f->view);
        if (screen_wait(due, &stdin_eof))
            break;
        if (got_winch) {
            got_winch = 0;
            continue;
        }
        due = mt_now_mono_ms() + every;
        if (fetch(c, o->max_tasks, &next) == 0) {
            frame_free(f);
            f = next;
            continue;
        }
        /* Keep the last frame up, saying why it is old. */
        snprintf(f->note, sizeof(f->note),
                 "head unreachable at %s: %s (retrying every %gs)",
                 mt_client_address(c), mt_client_last_error(c),
                 o->interval_s);
        f->view.note = f->note;
    }
    screen_leave();
    frame_free(f);
    return got_quit == SIGINT || !got_quit ? 0 : 128 + got_quit;
}

/* ---- command ------------------------------------------------------------- */

static bool parse_interval(const char *s, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0.1 || v > 3600)
        return false;
    *out = v;
    return true;
}

/* RET 0, -1 (help printed) or the exit code of bad usage. */
static int parse_args(int argc, char **argv, struct top_opts *o)
{
    static const struct option opts[] = {
        MT_CLI_HEAD_OPTIONS,
        {"interval", required_argument, NULL, 'i'},
        {"once", no_argument, NULL, 'o'},
        {"plain", no_argument, NULL, 'p'},
        {"tasks", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;

    memset(o, 0, sizeof(*o));
    o->interval_s = INTERVAL_DEFAULT;
    o->max_tasks = -1;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'a': o->addr = optarg; break;
        case 't': o->dir = optarg; break;
        case 'o': o->once = true; break;
        case 'p': o->plain = true; break;
        case 'i':
            if (!parse_interval(optarg, &o->interval_s))
                return usage_error("--interval must be seconds between "
                                   "0.1 and 3600, not '%s'", optarg);
            o->interval_set = true;
            break;
        case 'n':
            if (!mt_parse_int(optarg, 0, RUNNING_LIMIT, &o->max_tasks))
                return usage_error("--tasks must be 0 to %d, not '%s'",
                                   RUNNING_LIMIT, optarg);
            break;
        case 'h': usage(stdout); return -1;
        default:
            return usage_error("unknown or incomplete option '%s'",
                               argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    return 0;
}

static int cmd_top(int argc, char **argv)
{
    struct top_opts o;
    struct frame *f;
    mt_client_t *cl;
    int rc = parse_args(argc, argv, &o);

    if (rc)
        return rc < 0 ? 0 : rc;
    rc = mt_cli_connect("top", o.addr, o.dir, TOP_TIMEOUT_MS, &cl);
    if (rc) {
        if (rc == MT_EXIT_USAGE)
            usage(stderr);
        return rc;
    }
    if (signals_start() < 0) {
        fprintf(stderr, "manta top: %s\n", strerror(errno));
        rc = 1;
    } else if (o.once || o.plain || !isatty(STDOUT_FILENO)) {
        rc = run_plain(cl, &o);
    } else if (fetch(cl, o.max_tasks, &f) < 0) {
        say_unreachable(cl);
        rc = 1;
    } else {
        rc = run_screen(cl, &o, f);
    }
    mt_client_disconnect(cl);
    return rc;
}

const struct mt_cli_command mt_cli_cmd_top = {
    "top", cmd_top,
    "a live terminal view of nodes, resources and running tasks"};
