/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.h -- leveled, greppable log lines on stderr (or a file).
 *
 * MT_LOG checks the level before evaluating its arguments. Lines look like
 *   2026-11-30T14:50:01.123Z I head[1234] node registered node=ab12 addr=...
 * Messages are lowercase, one line, no trailing period.
 */
#ifndef MT_LOG_H
#define MT_LOG_H

#include <stdio.h>

enum mt_log_level {
    MT_LOG_DEBUG = 0,
    MT_LOG_INFO = 1,
    MT_LOG_WARN = 2,
    MT_LOG_ERROR = 3,
    MT_LOG_OFF = 4,
};

extern int mt__log_level;

/*
 * mt_log_init - set the process tag, the minimum level and the sink.
 *
 * IN  tag    short name printed on each line (borrowed; must outlive logging)
 * IN  level  minimum level printed
 * IN  sink   stream to write to, or NULL for stderr (borrowed)
 * THREAD     call once from main before other threads start
 */
void mt_log_init(const char *tag, enum mt_log_level level, FILE *sink);

/*
 * mt_log_parse_level - "debug", "info", "warn", "error" or "off" to a level.
 *
 * RET the level, or -1 for an unknown name
 */
int mt_log_parse_level(const char *name);

/* mt__log_write - implementation of MT_LOG; use the macro. THREAD any. */
void mt__log_write(enum mt_log_level level, const char *file, int line,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define MT_LOG(level, ...)                                                     \
    do {                                                                       \
        if ((int)(level) >= mt__log_level)                                     \
            mt__log_write((level), __FILE__, __LINE__, __VA_ARGS__);           \
    } while (0)

#define MT_DEBUG(...) MT_LOG(MT_LOG_DEBUG, __VA_ARGS__)
#define MT_INFO(...) MT_LOG(MT_LOG_INFO, __VA_ARGS__)
#define MT_WARN(...) MT_LOG(MT_LOG_WARN, __VA_ARGS__)
#define MT_ERROR(...) MT_LOG(MT_LOG_ERROR, __VA_ARGS__)

/* Programmer bugs only: never on peer input. Always compiled in. */
#define MT_ASSERT(cond)                                                        \
    do {                                                                       \
        if (!(cond))                                                           \
            mt__bug(__FILE__, __LINE__, "assertion failed: " #cond);           \
    } while (0)
#define MT_BUG(msg) mt__bug(__FILE__, __LINE__, (msg))

void mt__bug(const char *file, int line, const char *msg)
    __attribute__((noreturn));

#endif /* MT_LOG_H */
