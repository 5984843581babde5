/* The catalogue feed (docs/catalogue.md, docs/catalogue.schema.json): JSON
 * Lines, one record per line, each with a "type". This is what a record must
 * be on its own (fields, types, ranges, the spec's enumerations); what
 * records say about each other and about the database (an offer's product
 * and merchant, a measurement's specifications) is checked by the importer
 * (sql/as_db_feed.c), which writes them; the records' nouns are storage's
 * (core/model/as_feed_rec.h). Export writes the same records, in the
 * form as_feed_line gives, so export -> import -> export is byte-identical. */
#ifndef AS_FEED_H
#define AS_FEED_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "as_feed_rec.h"
#include "as_mem.h"

/* At most this many specifications per product, values per measurement,
 * aliases per device, image URLs, notes. */
#define AS_FEED_MAX_ITEMS 64
/* A compatibility's evidence: at most this many items, each a flat object of
 * at most this many bytes as compact JSON (the demo's largest is 240), so
 * the fit a product view shows stays a few kilobytes. */
#define AS_FEED_MAX_EVIDENCE 16
#define AS_FEED_MAX_EVIDENCE_BYTES 1024
/* A text in a specification's value (claimed or measured), in bytes. */
#define AS_FEED_MAX_VALUE 200
/* A line longer than this is refused before it is parsed: no record is
 * that large (the demo's largest is under 2 KiB), and a product view is
 * made of a few records. */
#define AS_FEED_MAX_LINE (64 * 1024)

/* The one check of every text a feed brings (names, descriptions, labels,
 * notes, values, evidence): NULL when s[0..n) is UTF-8 without a control,
 * bidirectional control, zero-width or other invisible character
 * (as_text_hidden); lines: a line break (\n) and a tab allowed too (a
 * description). Otherwise why, naming the character and where it is. Such a
 * record is refused, not cleaned: the merchant learns, nothing is changed
 * behind its back, and export -> import stays byte-identical. */
const char *as_feed_text_problem(as_mem *m, const char *s, size_t n, bool lines);
/* NULL when s is an absolute https URL with a host (no user@), of
 * printable ASCII; otherwise why. Image URLs and a source's url. */
const char *as_feed_url_problem(const char *s);

/* Reads line `line` (len bytes, no newline): true with *out filled, or false
 * with every problem of the record added to probs. Strings are UTF-8. */
bool as_feed_read(as_mem *m, const char *text, size_t len, size_t line, as_feed_rec *out,
                  as_feed_problems *probs);

/* A record as one line of the feed (no newline), its keys in the order of
 * docs/catalogue.md, numbers with at most 10 significant digits: export's
 * form. NULL when it cannot be encoded. */
char *as_feed_line(as_mem *m, json_t *rec);

#endif
