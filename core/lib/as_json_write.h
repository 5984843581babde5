/* JSON text written directly, without a jansson tree: the bytes jansson's
 * json_dumps gives for the same values with AS_JSON_DUMP_FLAGS (compact, reals
 * with 12 significant digits), at a fraction of the cost (no allocation per
 * value, no printf per number). For large views served often (the product
 * view); smaller responses keep building jansson values. */
#ifndef AS_JSON_WRITE_H
#define AS_JSON_WRITE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "as_mem.h"

#define AS_JSON_PRECISION 12 /* significant digits of reals */
/* How every JSON body is encoded (the glue, the caches, and this writer). */
#define AS_JSON_DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(AS_JSON_PRECISION))
#define AS_JW_MAX_DEPTH 32

typedef struct as_jw {
    as_buf b;
    int depth;
    bool after_key;                 /* the next value is a member's */
    bool more[AS_JW_MAX_DEPTH + 1]; /* the container at that depth has a value */
    bool bad;                       /* something could not be encoded (see below) */
} as_jw;

void as_jw_init(as_jw *w, as_mem *m);
/* Room for about n bytes of text at once, so that a text whose size is known
 * roughly is not copied as its buffer grows. */
void as_jw_expect(as_jw *w, size_t n);
/* The text so far, NUL-terminated; NULL when something could not be encoded
 * (a string that is not UTF-8, a real that is not finite, nesting too deep):
 * jansson refuses those too. */
const char *as_jw_text(as_jw *w, size_t *len);

void as_jw_obj(as_jw *w);
void as_jw_obj_end(as_jw *w);
void as_jw_arr(as_jw *w);
void as_jw_arr_end(as_jw *w);
/* Before each member's value. key is a name as the code spells it (letters,
 * digits, '_'), written as it is: nothing in it needs escaping. */
void as_jw_key(as_jw *w, const char *key);

void as_jw_str(as_jw *w, const char *s); /* NULL writes null */
void as_jw_int(as_jw *w, int64_t v);
void as_jw_bool(as_jw *w, bool v);
void as_jw_null(as_jw *w);
void as_jw_real(as_jw *w, double v);
/* A real rounded to `decimals` places (0..6), as as_json_round. */
void as_jw_round(as_jw *w, double v, int decimals);
/* A value built with jansson, for the rare parts of a view (borrowed). */
void as_jw_value(as_jw *w, const json_t *v);
/* Text this writer wrote before, kept: one value, or one or more members of
 * an object (then written first in it, and without the braces). */
void as_jw_raw(as_jw *w, const char *text, size_t len);
/* Stored JSON text (as_json_parse_or): its value as jansson would write it
 * after decoding it, or the JSON text `fallback` when text is NULL or not JSON. */
void as_jw_json(as_jw *w, const char *text, const char *fallback);

/* The first element of stored JSON text that is an array, as jansson writes
 * it after decoding; null when the text is NULL, not JSON, not an array or
 * an empty one. */
void as_jw_json_first(as_jw *w, const char *text);

/* key + value in one call, for objects written member by member. */
void as_jw_kstr(as_jw *w, const char *key, const char *s);
void as_jw_kint(as_jw *w, const char *key, int64_t v);
void as_jw_kbool(as_jw *w, const char *key, bool v);
void as_jw_knull(as_jw *w, const char *key);
void as_jw_kround(as_jw *w, const char *key, double v, int decimals);
void as_jw_kjson(as_jw *w, const char *key, const char *text, const char *fallback);

#endif
