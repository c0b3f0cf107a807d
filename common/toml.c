/* SPDX-License-Identifier: Apache-2.0 */
/*
 * toml.c -- the TOML subset reader (see toml.h).
 *
 * A recursive-descent reader over the whole text with a line counter. Each
 * line holds nothing, a header or one key = value (an array of strings may
 * run over several lines); whatever follows on the line must be blanks or
 * a comment. Every failure fills the error with the line and returns
 * -MT_EINVAL; nothing here aborts on any input.
 */
#include "common/toml.h"

#include <limits.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/strbuf.h"

struct reader {
    const char *p;
    int line;
    struct mt_toml_doc *doc;
    struct mt_toml_error *err;
    size_t section;      /* index of the last header item + 1; 0: root */
    size_t first_header; /* index of the first header; SIZE_MAX: none */
};

static int fail(struct reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int fail(struct reader *r, const char *fmt, ...)
{
    va_list ap;

    r->err->line = r->line;
    va_start(ap, fmt);
    vsnprintf(r->err->msg, sizeof(r->err->msg), fmt, ap);
    va_end(ap);
    return -MT_EINVAL;
}

/* ---- characters ---------------------------------------------------------- */

static bool is_bare(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static void skip_blanks(struct reader *r)
{
    while (*r->p == ' ' || *r->p == '\t')
        r->p++;
}

/* Blanks and a comment, then a line end: step over it. RET 1 (stepped
 * over one), 0 (none here: r->p is what is there instead, maybe the
 * text's end) or the error. */
static int line_end(struct reader *r)
{
    skip_blanks(r);
    if (*r->p == '#')
        r->p += strcspn(r->p, "\n");
    if (*r->p == '\r' && r->p[1] == '\n')
        r->p++;
    if (*r->p == '\r')
        return fail(r, "a carriage return must be followed by a line feed");
    if (*r->p != '\n')
        return 0;
    r->p++;
    r->line++;
    return 1;
}

/* At a line end (or the text's end): step over it. RET 0 or the error. */
static int end_line(struct reader *r, const char *after)
{
    int rc = line_end(r);

    if (rc < 0)
        return rc;
    if (rc == 0 && *r->p != '\0')
        return fail(r, "expected the end of the line after %s", after);
    return 0;
}

/* Blanks, comments and line ends, as inside an array. RET 0 or error. */
static int skip_space(struct reader *r)
{
    int rc;

    while ((rc = line_end(r)) == 1)
        ;
    return rc;
}

/* ---- strings ------------------------------------------------------------- */

static void add_utf8(struct mt_strbuf *sb, unsigned long cp)
{
    char b[4];
    size_t n;

    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xc0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xe0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        b[0] = (char)(0xf0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    mt_strbuf_add(sb, b, n);
}

/* \uXXXX or \UXXXXXXXX after the backslash and letter. RET 0 or error. */
static int unicode_escape(struct reader *r, int digits, struct mt_strbuf *sb)
{
    unsigned long cp = 0;

    for (int i = 0; i < digits; i++, r->p++) {
        char c = *r->p;
        int v = is_digit(c) ? c - '0'
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;

        if (v < 0)
            return fail(r, "expected %d hex digits after \\%c", digits,
                        digits == 4 ? 'u' : 'U');
        cp = cp * 16 + (unsigned long)v;
    }
    if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return fail(r, "escape \\%c%0*lX is not an allowed character",
                    digits == 4 ? 'u' : 'U', digits, cp);
    add_utf8(sb, cp);
    return 0;
}

static int escape(struct reader *r, struct mt_strbuf *sb)
{
    static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
    const char *hit;
    char c = *r->p++;

    if (c == 'u' || c == 'U')
        return unicode_escape(r, c == 'u' ? 4 : 8, sb);
    if (c == '\0' || !(hit = strchr(from, c)))
        return fail(r, "unknown escape in a string: expected one of \\b \\t "
                    "\\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX");
    mt_strbuf_add(sb, &to[hit - from], 1);
    return 0;
}

/* A "basic" or 'literal' string at r->p. OUT out owned. RET 0 or error. */
static int string(struct reader *r, char **out)
{
    struct mt_strbuf sb = MT_STRBUF_INIT;
    char quote = *r->p++;
    int rc = 0;

    if (r->p[0] == quote && r->p[1] == quote)
        return fail(r, "multi-line strings are not supported");
    while (rc == 0 && *r->p != quote) {
        unsigned char c = (unsigned char)*r->p;

        if (c == '\0' || c == '\n' || c == '\r') {
            rc = fail(r, "the string is not closed on its line: expected "
                      "%c", quote);
        } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
            rc = fail(r, "control character 0x%02x in a string (write it "
                      "as an escape)", c);
        } else if (c == '\\' && quote == '"') {
            r->p++;
            rc = escape(r, &sb);
        } else {
            mt_strbuf_add(&sb, r->p++, 1);
        }
    }
    if (rc < 0) {
        mt_strbuf_release(&sb);
        return rc;
    }
    r->p++;
    *out = mt_xstrdup(mt_strbuf_str(&sb));
    mt_strbuf_release(&sb);
    return 0;
}

/* ---- other values -------------------------------------------------------- */

static int integer(struct reader *r, long long *out)
{
    const char *s = r->p;
    bool neg = *s == '-';
    unsigned long long v = 0, lim = neg ? (unsigned long long)LLONG_MAX + 1
                                        : LLONG_MAX;

    if (*s == '+' || *s == '-')
        s++;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b'))
        return fail(r, "hexadecimal, octal and binary integers are not "
                    "supported");
    if (!is_digit(*s))
        return fail(r, "expected a value (a string, an integer, true, "
                    "false or an array of strings)");
    if (s[0] == '0' && (is_digit(s[1]) || s[1] == '_'))
        return fail(r, "an integer may not have leading zeros");
    for (; is_digit(*s) || *s == '_'; s++) {
        if (*s == '_') {
            if (!is_digit(s[-1]) || !is_digit(s[1]))
                return fail(r, "an underscore in an integer must sit "
                            "between digits");
            continue;
        }
        if (v > (lim - (unsigned long long)(*s - '0')) / 10)
            return fail(r, "integer out of range");
        v = v * 10 + (unsigned long long)(*s - '0');
    }
    if (*s == '.' || *s == 'e' || *s == 'E')
        return fail(r, "floating-point numbers are not supported");
    if (*s == ':' || *s == '-' || *s == 'T' || *s == 'Z')
        return fail(r, "dates and times are not supported");
    *out = neg ? (long long)(0 - v) : (long long)v;
    r->p = s;
    return 0;
}

static int strings(struct reader *r, struct mt_toml_value *v)
{
    size_t cap = 0;
    int rc;

    r->p++; /* [ */
    for (;;) {
        char *s;

        if ((rc = skip_space(r)) < 0)
            return rc;
        if (*r->p == ']')
            break;
        if (*r->p != '"' && *r->p != '\'')
            return fail(r, *r->p ? "expected a string or ']' in the array "
                        "(only arrays of strings are supported)"
                        : "the array is not closed: expected ']'");
        if ((rc = string(r, &s)) < 0)
            return rc;
        mt_xgrow((void **)&v->strs, &cap, v->n + 1,
                 sizeof(*v->strs));
        v->strs[v->n++] = s;
        if ((rc = skip_space(r)) < 0)
            return rc;
        if (*r->p == ',')
            r->p++;
        else if (*r->p != ']')
            return fail(r, *r->p ? "expected ',' or ']' after a string in "
                        "the array" : "the array is not closed: expected "
                        "']'");
    }
    r->p++;
    return 0;
}

static bool word(struct reader *r, const char *w)
{
    size_t n = strlen(w);

    if (strncmp(r->p, w, n) != 0 || is_bare(r->p[n]))
        return false;
    r->p += n;
    return true;
}

/* The value after "key =". OUT v filled (release it also on failure). */
static int value(struct reader *r, struct mt_toml_value *v)
{
    char c = *r->p;

    if (c == '"' || c == '\'') {
        v->type = MT_TOML_STRING;
        return string(r, &v->str);
    }
    if (c == '[') {
        v->type = MT_TOML_STRINGS;
        return strings(r, v);
    }
    if (c == '{')
        return fail(r, "inline tables are not supported: use a [table]");
    v->type = MT_TOML_BOOL;
    if ((v->b = word(r, "true")) || word(r, "false"))
        return 0;
    if (word(r, "inf") || word(r, "nan") || word(r, "+inf") ||
        word(r, "-inf") || word(r, "+nan") || word(r, "-nan"))
        return fail(r, "floating-point numbers are not supported");
    v->type = MT_TOML_INT;
    return integer(r, &v->i);
}

/* ---- items --------------------------------------------------------------- */

static void value_release(struct mt_toml_value *v)
{
    free(v->str);
    for (size_t i = 0; i < v->n; i++)
        free(v->strs[i]);
    free(v->strs);
    memset(v, 0, sizeof(*v));
}

static struct mt_toml_item *push(struct reader *r, enum mt_toml_kind kind,
                                 char *name)
{
    struct mt_toml_doc *d = r->doc;
    struct mt_toml_item *it;

    mt_xgrow((void **)&d->items, &d->cap, d->n + 1, sizeof(*d->items));
    it = &d->items[d->n++];
    memset(it, 0, sizeof(*it));
    it->kind = kind;
    it->name = name;
    it->line = r->line;
    return it;
}

/* A bare name at r->p. OUT out owned. RET 0 or error. */
static int bare_name(struct reader *r, const char *what, char **out)
{
    size_t n = 0;

    skip_blanks(r);
    while (is_bare(r->p[n]))
        n++;
    if (n == 0)
        return fail(r, r->p[0] == '"' || r->p[0] == '\''
                    ? "quoted %ss are not supported: use letters, digits, "
                      "'_' and '-'"
                    : "expected a %s (letters, digits, '_' and '-')", what);
    if (r->p[n] == '.' || (r->p[n + strspn(r->p + n, " \t")] == '.'))
        return fail(r, "dotted %ss are not supported", what);
    *out = mt_xasprintf("%.*s", (int)n, r->p);
    r->p += n;
    skip_blanks(r);
    return 0;
}

/* TOML's rules for a new header: a name is one table, one array of
 * tables or one root key. RET 0 or error. */
static int check_header(struct reader *r, enum mt_toml_kind kind,
                        const char *name)
{
    for (size_t i = 0; i < r->doc->n; i++) {
        const struct mt_toml_item *it = &r->doc->items[i];

        if (strcmp(it->name, name) != 0)
            continue;
        if (it->kind == MT_TOML_KEY && i < r->first_header)
            return fail(r, "'%s' is already a key (line %d)", name,
                        it->line);
        if (it->kind == MT_TOML_TABLE)
            return fail(r, "table [%s] is already defined on line %d", name,
                        it->line);
        if (it->kind == MT_TOML_TABLE_ARRAY && kind == MT_TOML_TABLE)
            return fail(r, "[%s] is already an array of tables ([[%s]] on "
                        "line %d)", name, name, it->line);
    }
    return 0;
}

/* [name] or [[name]] at r->p. RET 0 or error. */
static int header(struct reader *r)
{
    bool array = r->p[1] == '[';
    char *name;
    int rc;

    r->p += array ? 2 : 1;
    if ((rc = bare_name(r, "table name", &name)) < 0)
        return rc;
    if (strncmp(r->p, array ? "]]" : "]", array ? 2 : 1) != 0) {
        free(name);
        return fail(r, "expected '%s' after the table name", array ? "]]"
                                                                   : "]");
    }
    r->p += array ? 2 : 1;
    if ((rc = check_header(r, array ? MT_TOML_TABLE_ARRAY : MT_TOML_TABLE,
                           name)) < 0) {
        free(name);
        return rc;
    }
    push(r, array ? MT_TOML_TABLE_ARRAY : MT_TOML_TABLE, name);
    r->section = r->doc->n;
    if (r->first_header == SIZE_MAX)
        r->first_header = r->doc->n - 1;
    return end_line(r, "the table header");
}

/* key = value at r->p. RET 0 or error. */
static int pair(struct reader *r)
{
    struct mt_toml_value v = {0};
    char *key;
    int line = r->line, rc;

    if ((rc = bare_name(r, "key", &key)) < 0)
        return rc;
    for (size_t i = r->section; i < r->doc->n; i++)
        if (strcmp(r->doc->items[i].name, key) == 0) {
            rc = fail(r, "key '%s' is already set on line %d", key,
                      r->doc->items[i].line);
            free(key);
            return rc;
        }
    if (*r->p != '=') {
        free(key);
        return fail(r, "expected '=' after the key");
    }
    r->p++;
    skip_blanks(r);
    if ((rc = value(r, &v)) < 0) {
        free(key);
        value_release(&v);
        return rc;
    }
    push(r, MT_TOML_KEY, key)->v = v;
    r->doc->items[r->doc->n - 1].line = line;
    return end_line(r, "the value");
}

int mt_toml_parse(const char *text, struct mt_toml_doc *doc,
                  struct mt_toml_error *err)
{
    struct reader r = {text, 1, doc, err, 0, SIZE_MAX};
    int rc = 0;

    memset(doc, 0, sizeof(*doc));
    memset(err, 0, sizeof(*err));
    while (rc == 0 && *r.p) {
        skip_blanks(&r);
        if (*r.p == '[')
            rc = header(&r);
        else if (*r.p == '#' || *r.p == '\n' || *r.p == '\r' || !*r.p)
            rc = end_line(&r, "a comment");
        else
            rc = pair(&r);
    }
    return rc;
}

void mt_toml_release(struct mt_toml_doc *doc)
{
    for (size_t i = 0; i < doc->n; i++) {
        free(doc->items[i].name);
        value_release(&doc->items[i].v);
    }
    free(doc->items);
    memset(doc, 0, sizeof(*doc));
}

const char *mt_toml_type_name(enum mt_toml_type t)
{
    switch (t) {
    case MT_TOML_STRING: return "a string";
    case MT_TOML_INT: return "an integer";
    case MT_TOML_BOOL: return "true or false";
    case MT_TOML_STRINGS: return "an array of strings";
    }
    return "a value";
}
