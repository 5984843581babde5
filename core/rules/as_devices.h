/* Finding devices from free text (spec 4.3) and resolving a `device` parameter. */
#ifndef AS_DEVICES_H
#define AS_DEVICES_H

#include <stdbool.h>
#include <stdint.h>

#include "as_catalog.h"
#include "as_mem.h"

typedef struct as_device_match {
    const as_device *device;
    double confidence; /* 0..1, two decimals */
    bool all_terms;    /* every word of the query matched this device */
} as_device_match;

/* Candidates for q, best first (confidence > 0); with q NULL every device at 1.0. */
size_t as_devices_match(as_mem *m, const as_device *devs, size_t n, const char *q,
                        as_device_match **out);

typedef enum { AS_DEV_FOUND, AS_DEV_NONE, AS_DEV_AMBIGUOUS } as_dev_resolution;

/* A slug, or free text that matches exactly one device; else the candidates. */
as_dev_resolution as_device_resolve(as_mem *m, const as_device *devs, size_t n, const char *q,
                                    const as_device **found, const char **candidates_text);

/* The words of every device (brand and name; brand, name, slug and aliases),
 * made once for the many matches of one set of devices: search reads a
 * device in each query's text against every device of the catalogue. */
typedef struct as_device_words {
    const char **name_t, **all_t;
    size_t nn, na;
    uint64_t heads; /* a bit per all_t word's first two bytes (head_bit in as_devices.c) */
} as_device_words;
as_device_words *as_device_words_make(as_mem *m, const as_device *devs, size_t n);
/* as_devices_match and as_device_resolve with the words made before (w[i] of devs[i]). */
size_t as_devices_match_words(as_mem *m, const as_device *devs, const as_device_words *w,
                              size_t n, const char *q, as_device_match **out);
as_dev_resolution as_device_resolve_words(as_mem *m, const as_device *devs,
                                          const as_device_words *w, size_t n, const char *q,
                                          const as_device **found,
                                          const char **candidates_text);

/* Words of free text: lowercase runs of letters and digits, Latin diacritics
 * folded, split as SQLite's unicode61 tokenizer splits (as_text_char). */
size_t as_text_terms(as_mem *m, const char *s, const char ***out);
/* The character at s: its length in bytes, and whether it belongs to a word. */
size_t as_text_char(const char *s, bool *word);
/* Whether ASCII character c belongs to a word: the C locale's isalnum,
 * whatever locale the process set (as_text_char's, for callers that test
 * ASCII before calling it). */
static inline bool as_text_ascii_word(unsigned char c)
{
    return (unsigned)((c | 0x20) - 'a') < 26 || (unsigned)(c - '0') < 10;
}
/* n bytes of a word, lowercased with Latin diacritics folded, into out (at
 * least n + 1 bytes; the result is never longer); returns its length. */
size_t as_text_fold(const char *s, size_t n, char *out);

#endif
