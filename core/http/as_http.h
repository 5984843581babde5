/* HTTP's conventions for the API's answers (docs/api.md, "Caching,
 * compression and CORS"): validators, and which browser origins may read
 * which answers. Portable: the glue sends what these decide. */
#ifndef AS_HTTP_H
#define AS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "as_mem.h"

/* Strong entity tags: the 128-bit XXH3 hash of a body in base64url, quoted
 * ("..."; 24 characters with the quotes). A tag tells a client whether its
 * own copy of an answer is still the answer: it must change with every byte
 * and cost little next to the page (XXH3 hashes a 34 KB search page in a
 * microsecond or two; SHA-256 took 22 us, 5% of a search's CPU at 100,000
 * products). It is no signature: nothing trusts a tag but the client's
 * comparison with its own copy (docs/api.md, "Validators"). */
typedef struct as_etag_hash as_etag_hash;
/* A tag's hash taken as a body is written; NULL when out of memory. */
as_etag_hash *as_etag_begin(void);
/* Adds n bytes (h may be NULL: nothing). */
void as_etag_add(as_etag_hash *h, const void *p, size_t n);
/* The tag of what was added, on m; frees h. NULL when h is NULL. */
const char *as_etag_end(as_etag_hash *h, as_mem *m);
/* The entity tag of n bytes at p. */
const char *as_etag_of(as_mem *m, const void *p, size_t n);
/* Whether an If-None-Match header names etag: "*", or one of its tags by the
 * weak comparison RFC 9110 (13.1.2) prescribes for If-None-Match, also as
 * mod_deflate and mod_brotli alter a tag of a body they compress ("-gzip",
 * "-br" before the closing quote). A malformed header names nothing. */
bool as_etag_matches(const char *if_none_match, const char *etag);

/* The request headers a browser page may send to the API (the answer to a
 * preflight's Access-Control-Request-Headers), and the answer headers it
 * may read besides the CORS-safelisted ones. */
extern const char AS_CORS_ALLOW_HEADERS[];
extern const char AS_CORS_EXPOSE_HEADERS[];
/* The first header of a preflight's comma-separated Access-Control-Request-
 * Headers that AS_CORS_ALLOW_HEADERS does not list (case-insensitively),
 * copied on m; NULL when it lists every one. */
const char *as_cors_unlisted_header(as_mem *m, const char *request_headers);

#endif
