/* SPDX-License-Identifier: Apache-2.0 */
/*
 * toml.h -- a reader for the small subset of TOML (toml.io, v1.0) that
 * Manta's configuration files use, such as `manta up`'s cluster file.
 *
 * Understood: comments (# to the end of the line), [table] and
 * [[array-of-tables]] headers with bare names, key = value with bare keys
 * ([A-Za-z0-9_-]), and these values: basic strings "..." (escapes \b \t
 * \n \f \r \" \\ \uXXXX \UXXXXXXXX), literal strings '...', decimal
 * integers (sign, underscores between digits), true/false, and arrays of
 * strings (over several lines, with comments and a trailing comma).
 * Anything else TOML allows (dotted or quoted keys, floats, dates,
 * inline tables, multi-line strings, other arrays) is an error that says
 * it is not supported, never a silent misreading.
 *
 * The result is a flat list of items in file order: table headers and
 * key/value pairs, each with its line, so a schema can walk it and name
 * the line of anything it rejects. A key belongs to the last header
 * before it (none: the root table). The reader enforces TOML's own rules:
 * a key is set once per table, a [table] is defined once, and a name is
 * either a [table], an [[array]] or a key, never two of those.
 *
 * THREAD: any; no shared state.
 */
#ifndef MT_TOML_H
#define MT_TOML_H

#include <stdbool.h>
#include <stddef.h>

enum mt_toml_type {
    MT_TOML_STRING,
    MT_TOML_INT,
    MT_TOML_BOOL,
    MT_TOML_STRINGS, /* an array of strings */
};

struct mt_toml_value {
    enum mt_toml_type type;
    char *str;      /* STRING: UTF-8, may hold no NUL */
    long long i;    /* INT */
    bool b;         /* BOOL */
    char **strs;    /* STRINGS: n entries */
    size_t n;
};

enum mt_toml_kind {
    MT_TOML_KEY,         /* key = value */
    MT_TOML_TABLE,       /* [name] */
    MT_TOML_TABLE_ARRAY, /* [[name]]: one more element of the array */
};

struct mt_toml_item {
    enum mt_toml_kind kind;
    char *name;               /* the key, or the table's name */
    struct mt_toml_value v;   /* KEY only */
    int line;                 /* 1-based */
};

struct mt_toml_doc {
    struct mt_toml_item *items;
    size_t n;
    size_t cap;
};

/* Why a text was rejected. */
struct mt_toml_error {
    int line;       /* 1-based line of the fault */
    char msg[200];  /* what was expected, e.g. "expected '=' after key" */
};

/*
 * mt_toml_parse - read text (the whole file).
 * OUT doc  the items; release with mt_toml_release (also on failure)
 * OUT err  on failure, the line and the reason
 * RET 0 or -MT_EINVAL
 */
int mt_toml_parse(const char *text, struct mt_toml_doc *doc,
                  struct mt_toml_error *err);

/* mt_toml_release - free the items; the doc is empty and reusable. */
void mt_toml_release(struct mt_toml_doc *doc);

/* mt_toml_type_name - "a string", "an integer", ... for messages. */
const char *mt_toml_type_name(enum mt_toml_type t);

#endif /* MT_TOML_H */
