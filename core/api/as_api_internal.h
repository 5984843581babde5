/* Helpers shared by the endpoints (not a public API). */
#ifndef AS_API_INTERNAL_H
#define AS_API_INTERNAL_H

#include "as_api.h"
#include "as_call.h"
#include "as_commerce.h"

/* The binding-neutral forms of these (as_call.h) say what is wrong as an
 * as_problem; these answer it as the /v1 error. */

/* Identifies the calling agent (spec 5) from its headers (as_call_agent),
 * else answers 403 AGENT_UNIDENTIFIED. */
bool as_identify(as_shop *shop, const as_request *req, as_agent *agent, as_response *resp);
/* The body as JSON (as_call_body), else a 415, or a 400 naming "body". */
json_t *as_json_body(as_shop *shop, const as_request *req, as_response *resp);
/* Validates the body against rules into vals; returns the hash of its canonical
 * form (for Idempotency-Key comparisons), or NULL with a 400 in resp. */
const char *as_body_params(as_shop *shop, const as_request *req, const as_field_rule *rules, size_t n,
                           as_param *vals, as_response *resp);

/* as_idem_respond (core/http) for a /v1 handler: claims the Idempotency-Key
 * (or answers from its record: replay, 422, 409), runs work and remembers the
 * response it leaves in resp under the key. On a storage failure everything,
 * the claim included, is rolled back: 503. */
void as_idem_run(as_shop *shop, const as_agent *agent, const char *scope, const char *key,
                 const char *hash, int (*work)(void *job, as_response *resp), void *job,
                 as_response *resp);

#endif
