/* The API as the glue (mod_agentshop) and the other rooms see it: a request
 * in, a response out. The glue turns HTTP into an as_request and writes the
 * as_response; everything between is decided here. The handlers have their
 * own header (as_handlers.h), which only the router and they include. */
#ifndef AS_API_H
#define AS_API_H

#include <stdbool.h>
#include <stddef.h>

#include "as_request.h"
#include "as_respond.h" /* the error object, a person's error page */
#include "as_shop.h"

/* The router: the endpoint that serves req's path and method answers it,
 * with HTTP's conventions added (docs/api.md). */
void as_handle(as_shop *shop, const as_request *req, as_response *resp);

/* The compiled-in OpenAPI document as written (its server URL still
 * @BASE_URL@): MCP's tools take their output schemas from it
 * (as_openapi_api.c). */
const char *as_openapi_text(size_t *len);

/* The glue's rate limiter and MCP read requests as the handlers do
 * (as_api_internal.c). */

/* The key of an Authorization header "Bearer <key>" (the scheme in any case,
 * spaces after it skipped), NULL when there is none: what identifies an
 * agent, and what the rate limiter counts by. */
const char *as_bearer_key(const char *authorization);
/* Whether key has the shape of an agent key: <prefix>_sk_test_<32 letters or
 * digits>. */
bool as_agent_key_shape(const char *key, const char *prefix);
/* Whether a Content-Type is application/json (with or without parameters). */
bool as_json_media_type(const char *ct);

#endif
