/* HTTP's conventions for the API's answers (docs/api.md, "Caching,
 * compression and CORS"): validators, and which browser origins may read
 * which answers. Portable: the glue sends what these decide. */
#ifndef AS_HTTP_H
#define AS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "as_mem.h"
#include "as_request.h"
#include "as_shop.h"

/* The compiled-in OpenAPI document as written (its server URL still
 * @BASE_URL@), len bytes. */
const char *as_openapi_text(size_t *len);

/* The /v1 error object (docs/api.md, "Errors"; as_error_object) as the
 * answer, for the /v1 handlers and every binding that gives /v1's bodies. */
void as_respond_error(as_response *resp, int status, const char *code, const char *field,
                      const char *message);
void as_respond_problem(as_response *resp, const as_problem *p);
/* 503: storage failed; nothing was changed (the store logged why). */
void as_respond_storage_failed(as_response *resp);
/* 503 after a commit: the change stands, only reading it back failed. */
void as_respond_saved_unreadable(as_response *resp);
/* The answer of a shop operation that did not do it (rc not AS_SHOP_DONE):
 * a refusal's problem, else the problem every binding gives the failure. */
void as_respond_outcome(as_response *resp, as_shop_rc rc, const as_problem *why);

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
/* An origin as "scheme://host[:port]": http or https, lowercase, the default
 * port dropped; NULL when s is not such an origin (a path, a user, a query...). */
const char *as_origin_normalize(as_mem *m, const char *s);
/* Whether req's Origin may call the agent endpoints and /mcp from a page: the
 * API's own origin, or one AgentShopCORSAllowOrigin lists. */
bool as_agent_origin_allowed(as_shop *shop, const as_request *req);

/* Content negotiation (RFC 9110 12.5.1): how an Accept header's range names
 * a media type, from none to the type itself. */
typedef enum {
    AS_ACCEPT_NONE = -1,
    AS_ACCEPT_ANY,   /* the range of every type */
    AS_ACCEPT_MAJOR, /* the range of its major type ("text/" and a star) */
    AS_ACCEPT_EXACT  /* the type itself, in any case, parameters aside */
} as_accept_match;
/* The weight in thousandths (0 to 1000) an Accept header gives type (lowercase,
 * "text/html") by its most specific range naming it, the greatest among ranges
 * as specific; -1 when none names it (as for NULL). A weight that is no qvalue
 * (12.4.2: "0" to "1", at most three decimals) counts as 0, so a range with a
 * malformed weight is not taken as acceptable. *how (may be NULL): that
 * range's kind. */
int as_accept_q(const char *accept, const char *type, as_accept_match *how);
/* Whether an Accept header prefers a page to JSON: text/html (or text/any)
 * named with a q above 0 and not below application/json's, as a browser's
 * "text/html,application/xhtml+xml,...;q=0.8". No header, a bare wildcard or
 * application/json: false. */
bool as_accept_html(const char *accept);

#endif
