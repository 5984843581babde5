/* Search, stage 1 (parse): the words of a text as search sees them, the same
 * in products (name, brand, description, labels, specifications) and in
 * queries. docs/search.md, "How a query is read". */
#ifndef AS_SEARCH_WORDS_H
#define AS_SEARCH_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "as_catalog.h"
#include "as_mem.h"

#define AS_SWORD_MAX 64 /* longer runs are cut to this many bytes */
/* Moves with every change to how a text becomes words (folding, splitting,
 * units, numbers, stems): an index file written by other rules is built again. */
#define AS_SEARCH_WORDS_RULES 2

typedef struct as_sword {
    const char *text; /* folded: lower case, Latin diacritics removed (é → e, ß → ss) */
    const char *stem; /* Snowball English stem of text ("filters" → "filter"); text itself
                         for numbers and words of letters and digits */
    const char *orig; /* the run as written in the text */
    bool part;        /* a part of the word before it where letters and digits meet:
                         "2m" gives "2m", then "2" and "m" with part set */
    size_t at;        /* byte offset of orig in the text */
    bool unit;        /* text is a unit written one way ("liters" -> "l"), or a number
                         and a unit ("1Liter" -> "1l", its parts "1" and "l") */
} as_sword;

/* The words of text, in order (*out on m; the count is returned). A word is a
 * run of letters and digits (as_text_char); a unit word is written one way
 * ("litre", "liters", "ltr" → "l"; "metre" → "m"; "watts" → "w"; ...), so
 * "1 liter", "1 l" and "1l" meet. NULL text gives 0.
 * Also: a run of letters and digits is followed by its parts, and its text is
 * its parts' texts joined ("1000mls" → "1000ml", then "1000", "ml"); a letter
 * part is read as a unit only after a digit part ("65w", but "v11" stays);
 * ASCII digits are the digits, every other word character a letter. A number
 * with one or two decimals is one word written one way ("2,50" → "2.5", "5.0Ah"
 * → "5ah": "5", "ah"), not in a thousands group or a code ("1,000", "3.1.2"). */
size_t as_search_words(as_mem *m, const char *text, as_sword **out);
/* as_search_words without stemming: each word's stem is its text (the index
 * stems each distinct catalogue word once, not each of its occurrences). */
size_t as_search_words_unstemmed(as_mem *m, const char *text, as_sword **out);

/* The Snowball English stem of a folded word, on m. Thread-safe. */
const char *as_search_stem(as_mem *m, const char *word);

/* Word correction, one rule for the catalogue's words (as_search_match.c) and
 * for devices named in a query (as_query_read). A typed word may be corrected
 * when it has 5 bytes or more and does not begin with a digit: by one edit
 * (a letter added, removed, changed, or two neighbours swapped), by two from 9
 * bytes; the first letter must be as typed. */
int as_search_typo_max(const char *typed); /* edits allowed: 0 (never corrected), 1 or 2 */
/* The optimal string alignment distance of a and b, or max + 1 once above max. */
int as_search_distance(const char *a, size_t la, const char *b, size_t lb, int max);
/* How many edits word is from typed when it is a correction of it by the rule
 * above (0 when they are equal), else -1. */
int as_search_typo(const char *typed, const char *word);

/* Stop words and shopping filler ("for", "my", "the", "with", "cheap",
 * "best", ...): matched when a product has them, never required. */
bool as_search_filler(const char *word);

/* A query's text, read (stage 1). */
typedef struct as_qword {
    const char *text, *stem, *orig; /* as in as_sword */
    bool filler;                    /* not required to match */
    bool part;                      /* as in as_sword */
    size_t at;                      /* as in as_sword: byte offset of orig in q */
    bool device;                    /* one of the words that named device (so filler) */
} as_qword;

typedef struct as_query_text {
    as_qword *words; /* what is left to match, in order (filler included, flagged) */
    size_t n;
    int64_t max_price_cents; /* a price cap read from the text, else 0 */
    const char *price_text;  /* the words it was read from, as written */
    const as_device *device; /* a device named in the text (into devs), else NULL */
    const char *device_text; /* the words that named it, as written */
} as_query_text;

/* Reads q: its words; a price cap ("under 20 euros", "below €15.50", "max 30
 * eur", "less than 10", "up to 25€") whose words are taken out; a device of
 * devs named by some of its words ("for my dyson v11", "iphone 13 case"),
 * resolved as GET /devices resolves one (exactly one device, as_device_resolve;
 * a device word typed with a typo read as corrected: "macbok air"), or by its
 * brand and kind when the brand has one device of that kind ("bosch drill");
 * its words stay as filler. Never fails: at worst every word is filler. */
void as_query_read(as_mem *m, const char *q, const as_device *devs, size_t n_devs,
                   as_query_text *out);
/* The same with the devices' words made before (as_query_devices_make, on a
 * memory that outlives the reads): search makes them once per index. */
typedef struct as_query_devices as_query_devices;
const as_query_devices *as_query_devices_make(as_mem *m, const as_device *devs, size_t n);
void as_query_read_with(as_mem *m, const char *q, const as_query_devices *qd, as_query_text *out);
/* The device text names, as as_device_resolve_words finds one (AS_DEV_FOUND)
 * among qd's devices, else NULL: what as_query_read asks of each span of
 * words, from qd's tables instead of a pass over every device. */
const as_device *as_query_devices_resolve(as_mem *m, const as_query_devices *qd,
                                          const char *text);

#endif
