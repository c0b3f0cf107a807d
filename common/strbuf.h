/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strbuf.h -- a growable, always NUL-terminated string buffer (git's strbuf
 * in miniature), plus JSON string escaping for the writers built on it
 * and shell quoting for command lines run elsewhere (`manta up`).
 */
#ifndef MT_STRBUF_H
#define MT_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct mt_strbuf {
    char *buf;   /* NUL-terminated; "" before the first append */
    size_t len;
    size_t cap;
    bool soft;   /* out of memory: set failed instead of aborting */
    bool failed; /* soft only: an append was dropped (contents cut) */
};

#define MT_STRBUF_INIT {NULL, 0, 0, false, false}
/* For library code (the SDK): out-of-memory drops the append and every
 * later one and sets failed, which the caller checks at the end. */
#define MT_STRBUF_INIT_SOFT {NULL, 0, 0, true, false}

/* Append; the buffer grows as needed (aborts on out-of-memory, unless
 * soft). */
void mt_strbuf_add(struct mt_strbuf *sb, const char *s, size_t n);
void mt_strbuf_adds(struct mt_strbuf *sb, const char *s);
void mt_strbuf_addf(struct mt_strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Append n bytes of s percent-encoded for a URL query or a cookie: every
 * byte but [A-Za-z0-9-._~] as %XX. */
void mt_strbuf_add_pct(struct mt_strbuf *sb, const char *s, size_t n);

/*
 * Append s as one word of a POSIX shell command line (sh, bash, dash,
 * zsh): as it is when it holds only [A-Za-z0-9_@%+=:,./-] and is not
 * empty, else in single quotes, each ' written '\''. The shell gives back
 * exactly s: nothing in it is expanded or split. NOTE: a bare NAME=value
 * as the command's first word would be an assignment: the caller makes
 * sure the first word holds no '='.
 */
void mt_strbuf_add_sh(struct mt_strbuf *sb, const char *s);

/* Append n words, each as mt_strbuf_add_sh does, separated by one space
 * from each other and from what sb already holds. */
void mt_strbuf_add_sh_words(struct mt_strbuf *sb, const char *const *words,
                            size_t n);

/* Append s as a JSON string literal, quotes included. */
void mt_strbuf_add_json_str(struct mt_strbuf *sb, const char *s);

/* The contents ("" when empty). RET borrowed until the next append. */
const char *mt_strbuf_str(const struct mt_strbuf *sb);

/* Free the storage; the buffer is empty and reusable afterwards. */
void mt_strbuf_release(struct mt_strbuf *sb);

#endif /* MT_STRBUF_H */
