/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strbuf.c -- growable string buffer (see strbuf.h).
 */
#include "common/strbuf.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"

/* Room for extra more bytes. RET false when a soft buffer could not grow
 * (or failed before): the append is dropped. */
static bool reserve(struct mt_strbuf *sb, size_t extra)
{
    size_t need = sb->len + extra + 1, cap;
    char *p;

    if (sb->failed)
        return false;
    if (need <= sb->cap)
        return true;
    cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap *= 2;
    if (!sb->soft) {
        sb->buf = mt_xrealloc(sb->buf, cap);
    } else if ((p = realloc(sb->buf, cap))) {
        sb->buf = p;
    } else {
        sb->failed = true;
        return false;
    }
    sb->cap = cap;
    return true;
}

void mt_strbuf_add(struct mt_strbuf *sb, const char *s, size_t n)
{
    if (!reserve(sb, n))
        return;
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void mt_strbuf_adds(struct mt_strbuf *sb, const char *s)
{
    mt_strbuf_add(sb, s, strlen(s));
}

void mt_strbuf_addf(struct mt_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0 || !reserve(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void mt_strbuf_add_pct(struct mt_strbuf *sb, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if (isalnum(c) || (c && strchr("-._~", c)))
            mt_strbuf_add(sb, (const char *)&c, 1);
        else
            mt_strbuf_addf(sb, "%%%02X", c);
    }
}

/* A byte the shell takes literally anywhere in a word. */
static bool sh_plain(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || (c && strchr("_@%+=:,./-", c));
}

void mt_strbuf_add_sh(struct mt_strbuf *sb, const char *s)
{
    const char *p = s;

    while (sh_plain((unsigned char)*p))
        p++;
    if (*s && !*p) {
        mt_strbuf_adds(sb, s);
        return;
    }
    /* Inside single quotes every byte is literal but ' itself: close the
     * quotes, add an escaped ', and open them again. */
    mt_strbuf_add(sb, "'", 1);
    for (p = s; *p; p++) {
        if (*p == '\'')
            mt_strbuf_add(sb, "'\\''", 4);
        else
            mt_strbuf_add(sb, p, 1);
    }
    mt_strbuf_add(sb, "'", 1);
}

void mt_strbuf_add_sh_words(struct mt_strbuf *sb, const char *const *words,
                            size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (sb->len)
            mt_strbuf_add(sb, " ", 1);
        mt_strbuf_add_sh(sb, words[i]);
    }
}

void mt_strbuf_add_json_str(struct mt_strbuf *sb, const char *s)
{
    mt_strbuf_add(sb, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;
         p++) {
        switch (*p) {
        case '"':
            mt_strbuf_add(sb, "\\\"", 2);
            break;
        case '\\':
            mt_strbuf_add(sb, "\\\\", 2);
            break;
        case '\n':
            mt_strbuf_add(sb, "\\n", 2);
            break;
        case '\r':
            mt_strbuf_add(sb, "\\r", 2);
            break;
        case '\t':
            mt_strbuf_add(sb, "\\t", 2);
            break;
        default:
            if (*p < 0x20)
                mt_strbuf_addf(sb, "\\u%04x", *p);
            else
                mt_strbuf_add(sb, (const char *)p, 1);
        }
    }
    mt_strbuf_add(sb, "\"", 1);
}

const char *mt_strbuf_str(const struct mt_strbuf *sb)
{
    return sb->buf ? sb->buf : "";
}

void mt_strbuf_release(struct mt_strbuf *sb)
{
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    sb->failed = false;
}
