/* A per-process cache of encoded responses (the product views), shared by the
 * threads of one httpd child. An entry is served only while its validator, a
 * string the store derives from the data the response was built from, is still
 * the store's current one: the cache saves building and encoding a view, never
 * the question whether it is still true. Bounded: a fixed number of slots in
 * sets of four, each slot holding at most max_bytes; a full set replaces its
 * least recently used slot. docs/performance.md has the design. */
#ifndef AS_VIEW_CACHE_H
#define AS_VIEW_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "as_mem.h"

typedef struct as_view_cache as_view_cache;

/* slots: total entries (rounded up to a multiple of 4); max_bytes: the largest
 * key + validator + body kept. NULL when out of memory. */
as_view_cache *as_view_cache_create(size_t slots, size_t max_bytes);
void as_view_cache_destroy(as_view_cache *c);

/* When key is cached with this validator: a copy of its body on m, true. */
bool as_view_cache_get(as_view_cache *c, as_mem *m, const char *key, const char *validator,
                       const char **body, size_t *len);
/* Whether key is cached under some validator (it may no longer be current):
 * when not, looking up its validator first cannot save anything. */
bool as_view_cache_holds(as_view_cache *c, const char *key);
/* Keeps body under key and validator (replacing what key held); false when it
 * is too large to keep. */
bool as_view_cache_put(as_view_cache *c, const char *key, const char *validator, const char *body,
                       size_t len);

typedef struct as_view_cache_stats {
    unsigned long long hits, misses, stores, too_large;
} as_view_cache_stats;
void as_view_cache_stats_get(as_view_cache *c, as_view_cache_stats *out);

#endif
