/* What every binding of the agent's calls (the /v1 handlers, MCP's tools)
 * does around a shop operation: who the agent is (spec 5), the JSON body
 * against its fields' rules, the Idempotency-Key, and the idempotent
 * transaction (docs/buying.md, "Retries"). Each says what is wrong as an
 * as_problem (the /v1 error), for the binding to answer its own way. */
#ifndef AS_CALL_H
#define AS_CALL_H

#include <jansson.h>
#include <stdbool.h>

#include "as_commerce.h"
#include "as_request.h"
#include "as_shop.h"

/* The key of an Authorization header "Bearer <key>" (the scheme in any case,
 * spaces after it skipped), NULL when there is none: what identifies an
 * agent, and what the rate limiter counts by. */
const char *as_bearer_key(const char *authorization);
/* Whether key has the shape of an agent key: <prefix>_sk_test_<32 letters or
 * digits>. */
bool as_agent_key_shape(const char *key, const char *prefix);
/* Whether a Content-Type is application/json (with or without parameters). */
bool as_json_media_type(const char *ct);

/* The calling agent from req's Authorization and Service-Agent headers (the
 * key's lookup: as_agent_by_key); else false with 403 AGENT_UNIDENTIFIED, or
 * the 503 of a storage failure. */
bool as_call_agent(as_shop *shop, const as_request *req, as_agent *agent, as_problem *why);

/* req's body as JSON (a new reference); else NULL with 415 (another media
 * type) or 400 naming "body" (none, nested too deep, not JSON). */
json_t *as_call_body(as_shop *shop, const as_request *req, as_problem *why);
/* Whether a body given as JSON (MCP's arguments) nests no deeper than a
 * /v1 body may; else 400 naming "body", as as_call_body says it. */
bool as_call_body_depth_ok(const json_t *body, as_problem *why);
/* Validates body against rules into vals; returns the hash of its canonical
 * form (for Idempotency-Key comparisons), or NULL with the 400 in *why. */
const char *as_call_fields(as_shop *shop, const json_t *body, const as_field_rule *rules, size_t n,
                           as_param *vals, as_problem *why);

/* Idempotency-Key: 1 to 255 visible ASCII characters. */
bool as_idem_key_ok(const char *key);
/* key present and well formed, else 400 (IDEMPOTENCY_KEY_REQUIRED naming
 * endpoint, "POST /orders", or VALIDATION_ERROR). */
bool as_idem_key_valid(as_mem *m, const char *key, const char *endpoint, as_problem *why);

/* as_idempotent_run (core/shop) for a binding that answers with the /v1
 * body: claims (user_id, scope, key) for a body hashing to hash, runs work,
 * which leaves its answer (a success or a refusal) in resp and returns AS_OK,
 * or AS_EDB to roll back, and remembers that answer under the key. A replay
 * is the first answer again (resp->replayed); a refusal of the key is its
 * 422 or 409 (resp->retry_after); a storage failure, which rolls everything
 * back with the claim, is 503. The scope is the call's, whichever binding
 * makes it ("orders"), so a key replays across bindings. */
void as_idem_respond(as_shop *shop, const char *user_id, const char *scope, const char *key,
                     const char *hash, int (*work)(void *job, as_response *resp), void *job,
                     as_response *resp);

#endif
