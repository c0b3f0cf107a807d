/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c -- the sink behind MT_LOG.
 *
 * Each line is formatted into one buffer and written with one fputs so lines
 * from different threads never interleave.
 */
#include "log.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int mt__log_level = MT_LOG_INFO;
static const char *log_tag = "manta";
static FILE *log_sink;

void mt_log_init(const char *tag, enum mt_log_level level, FILE *sink)
{
    log_tag = tag ? tag : "manta";
    mt__log_level = (int)level;
    log_sink = sink;
}

int mt_log_parse_level(const char *name)
{
    static const char *names[] = {"debug", "info", "warn", "error", "off"};

    for (int i = 0; i < 5; i++)
        if (name && strcasecmp(name, names[i]) == 0)
            return i;
    return -1;
}

void mt__log_write(enum mt_log_level level, const char *file, int line,
                   const char *fmt, ...)
{
    static const char letters[] = "DIWEO";
    char buf[2048];
    struct timeval tv;
    struct tm tm;
    size_t n;
    va_list ap;

    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, ".%03dZ %c %s[%d] ",
                          (int)(tv.tv_usec / 1000), letters[level], log_tag,
                          (int)getpid());
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
    va_end(ap);
    n = strlen(buf);
    if (level >= MT_LOG_WARN && n + 1 < sizeof(buf)) {
        const char *base = strrchr(file, '/');
        snprintf(buf + n, sizeof(buf) - n, " (%s:%d)", base ? base + 1 : file,
                 line);
        n = strlen(buf);
    }
    if (n + 2 > sizeof(buf))
        n = sizeof(buf) - 2;
    buf[n++] = '\n';
    buf[n] = '\0';
    fputs(buf, log_sink ? log_sink : stderr);
    fflush(log_sink ? log_sink : stderr);
}

void mt__bug(const char *file, int line, const char *msg)
{
    fprintf(stderr, "BUG: %s at %s:%d\n", msg, file, line);
    fflush(stderr);
    abort();
}
