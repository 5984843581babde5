/* Small portable helpers: UTF-8, dates, money, query strings, JSON numbers. */
#ifndef AS_UTIL_H
#define AS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "as_mem.h"

/* UTF-8: validity (no NUL, no overlongs, no surrogates) and length in code points. */
bool as_utf8_valid(const char *s, size_t n);
/* The length of the valid UTF-8 sequence that begins s[0..n), n > 0 (no
 * NUL, no overlong, no surrogate, nothing above U+10FFFF: jansson's rules);
 * 0 when none begins there. */
size_t as_utf8_seq(const char *s, size_t n);
/* The same, with the code point in *cp. */
size_t as_utf8_next(const char *s, size_t n, uint32_t *cp);
size_t as_utf8_len(const char *s);
/* s[0..n) into out (n + 1 bytes, NUL-terminated) with each byte that begins
 * no valid UTF-8 sequence written '?': for text that quotes a client's bytes
 * (jansson's parse errors quote the text near the error, and may cut a
 * character in half) into a message that must be UTF-8. as_utf8_clean: the
 * same on m. */
void as_utf8_repair(char *out, const char *s, size_t n);
char *as_utf8_clean(as_mem *m, const char *s);

/* Text that reaches people and agents (names, descriptions, error messages)
 * must not hold a character that changes what else is read or hides what
 * it holds: what kind of such a character cp is ("a control character", "a
 * bidirectional control", "a zero-width character", "a line separator", "an
 * invisible character"), or NULL for a visible one, space, or a variation
 * selector of U+FE00-U+FE0F. docs/catalogue.md "Text" lists them. */
const char *as_text_hidden(uint32_t cp);
/* s[0..n) with each such character as \u001b (a surrogate pair above
 * U+FFFF) and each byte that begins no UTF-8 character as '?': quote, a JSON
 * string, in quotes with '"' and '\' escaped too. Feed values quoted in an
 * error, MCP's summaries: nothing in them moves a terminal or starts a line. */
void as_text_escape_to(as_buf *b, const char *s, size_t n, bool quote);
char *as_text_escape(as_mem *m, const char *s);

/* Dates are days since 1970-01-01 (UTC); times are Unix seconds. */
bool as_date_parse(const char *s, int64_t *days);
char *as_date_format(as_mem *m, int64_t days);
/* The same text into out, without allocating; its length. */
#define AS_DATE_TEXT 32
size_t as_date_text(char out[AS_DATE_TEXT], int64_t days);
char *as_time_format(as_mem *m, int64_t t); /* ISO 8601 UTC, "2026-11-20T21:45:00Z" */
bool as_time_parse(const char *s, int64_t *t);
/* As a person reads them (the confirmation page): "Sat 28 Nov 2026, 14:05 UTC",
 * "Tue 1 Dec 2026"; and how far from now: "in 23 hours", "in 9 minutes",
 * "5 minutes ago", "just now" (the same second); for dates "today", "tomorrow", "in 4 days". */
char *as_time_human(as_mem *m, int64_t t);
char *as_date_human(as_mem *m, int64_t days);
char *as_time_relative(as_mem *m, int64_t t, int64_t now);
char *as_date_relative(as_mem *m, int64_t days, int64_t today);

/* "12", "12.5", "12.50" -> 1200, 1250, 1250; more than two decimals, signs,
 * exponents or values above max_cents are rejected. */
bool as_eur_parse_cents(const char *s, int64_t max_cents, int64_t *cents);
char *as_eur_format(as_mem *m, int64_t cents); /* "€12.50" */
/* as_eur_format's text into out, without a terminator; its length. */
#define AS_EUR_TEXT 32
size_t as_eur_text(char out[AS_EUR_TEXT], int64_t cents);

/* Strict integer parse: optional '-', digits only, within [min, max]. */
bool as_int_parse(const char *s, int64_t min, int64_t max, int64_t *out);

/* Query strings: a=b&c=d with %XX and '+' decoding. Values are decoded copies. */
typedef struct as_kv {
    const char *key;
    const char *val;
} as_kv;

typedef struct as_query {
    as_kv *items;
    size_t n;
} as_query;

/* Returns false when a key or value is not valid percent-encoding / UTF-8;
 * *bad then names the offending key (or "query"). */
bool as_query_parse(as_mem *m, const char *raw, as_query *q, const char **bad);
const char *as_query_get(const as_query *q, const char *key);
/* Percent-decode one path segment; false on bad escapes, NUL or '/' inside. */
bool as_pct_decode_segment(as_mem *m, const char *s, size_t n, char **out);

/* v rounded to `decimals` places (0..6, as as_round) as printf's "%.Nf" writes
 * it, without the trailing zeros of its fraction nor a point when it is whole
 * ("12.5", "-0.05", "3", "-0"); false when it has 15 digits or more, or is
 * not finite (the callers' printf then). */
#define AS_FIXED_TEXT 40
bool as_fixed_text(char out[AS_FIXED_TEXT], double v, int decimals);

/* round(x) (halves away from zero, the sign of a zero kept), the same
 * double for every x, without libm's call: by the integer conversion
 * (cvttsd2si) where |x| < 2^62, where x - trunc(x) is exact; round() itself
 * beyond (and for NaN). A search page rounds about a dozen values a result
 * (the offer's components and weighted parts), each a call otherwise:
 * x86-64's baseline has no instruction for round(). */
static inline double as_round_half(double x)
{
    if (!(x > -4611686018427387904.0 && x < 4611686018427387904.0)) return __builtin_round(x);
    int64_t i = (int64_t)x;
    double f = x - (double)i;
    i += (f >= 0.5) - (f <= -0.5);
    return i ? (double)i : __builtin_copysign(0.0, x);
}

/* A JSON real rounded to `decimals` places (so 0.35 prints as 0.35). */
json_t *as_json_round(double v, int decimals);
double as_round(double v, int decimals);

/* ASCII lowercase copy. */
char *as_lower(as_mem *m, const char *s);

#endif
