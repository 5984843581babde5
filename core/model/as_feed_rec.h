/* A catalogue feed's records as storage takes them (docs/catalogue.md): the
 * nouns the feed's reader (core/rules/as_feed.h) gives and the importer
 * (sql/as_db_feed.c) writes, and the problems either finds. What a record
 * must be is the reader's; storage never includes it. */
#ifndef AS_FEED_REC_H
#define AS_FEED_REC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "as_mem.h"

typedef enum {
    AS_FEED_MERCHANT,
    AS_FEED_DEVICE,
    AS_FEED_PRODUCT,
    AS_FEED_OFFER,
    AS_FEED_MEASUREMENT,
    AS_FEED_COMPAT, /* "compatibility" */
    AS_FEED_N
} as_feed_type;

/* A record's "type": "merchant", ..., "compatibility"; "?" past AS_FEED_N. */
const char *as_feed_type_name(as_feed_type t);

/* One rejected record (or one field of it). */
typedef struct as_feed_problem {
    size_t line;
    const char *field; /* "offer.price_cents", "specs[2].kind"; NULL: the record */
    const char *reason;
} as_feed_problem;

typedef struct as_feed_problems {
    as_mem *m;
    as_feed_problem *v;
    size_t n, cap;
} as_feed_problems;

void as_feed_problem_add(as_feed_problems *p, size_t line, const char *field, const char *reason);

/* A record that passed: v is the object (a reference the caller releases
 * with json_decref), key its identity (merchant id, device slug, sku, offer
 * id; the sku for a measurement or compatibility), key2 the device of a
 * compatibility record. */
typedef struct as_feed_rec {
    as_feed_type type;
    bool withdrawn;
    size_t line;
    json_t *v;
    const char *key, *key2;
} as_feed_rec;

/* How the feed writes JSON: compact, numbers with at most 10 significant
 * digits (an exported line, and a value as the database keeps it). */
#define AS_FEED_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(10))

/* The JSON encoding of a specification's value (claimed or measured) as the
 * database keeps it: NULL for JSON null. */
char *as_feed_value_text(as_mem *m, json_t *v);

#endif
