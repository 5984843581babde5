/* HTTP's conventions for the API's answers (docs/api.md, "Caching,
 * compression and CORS"): validators, and which browser origins may read
 * which answers. Portable: the glue sends what these decide. */
#ifndef AS_HTTP_H
#define AS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "as_mem.h"

/* A strong entity tag for the SHA-256 of a body: its first 128 bits in
 * base64url, quoted ("..."; 24 characters with the quotes). */
const char *as_etag_from_digest(as_mem *m, const unsigned char digest[32]);
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
