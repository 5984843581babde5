/* One JSON value read from its text as jansson reads it (json_loads with
 * JSON_DECODE_ANY), without making a json_t: its kind, and its number or its
 * string, decoded. For the values of spec rows, which the search index's
 * build and every verification read by the million (core/lib/as_json_value.c). */
#ifndef AS_JSON_VALUE_H
#define AS_JSON_VALUE_H

#include <jansson.h>

#include "as_mem.h"

typedef enum {
    AS_JSON_ABSENT, /* NULL, not valid UTF-8, not one JSON value, or one jansson refuses */
    AS_JSON_NULL,
    AS_JSON_FALSE,
    AS_JSON_TRUE,
    AS_JSON_NUMBER,
    AS_JSON_STRING,
    AS_JSON_OTHER /* an array or an object, read past (nested at most 32 deep, else absent) */
} as_json_kind;

typedef struct as_json_value {
    as_json_kind kind;
    /* AS_JSON_NUMBER: an integer's is (double) of the integer, as json_number_value */
    double number;
    /* AS_JSON_STRING: decoded, on the as_mem given (never with a NUL inside) */
    const char *text;
} as_json_value;

as_json_value as_json_value_read(as_mem *m, const char *json);

/* JSON text from storage to a value; invalid or NULL text gives `fallback`. */
json_t *as_json_parse_or(const char *text, json_t *fallback);

#endif
