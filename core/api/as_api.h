/* The API as the glue (mod_agentshop) and the other rooms see it: a request
 * in, a response out. The glue turns HTTP into an as_request and writes the
 * as_response; everything between is decided here. The handlers have their
 * own header (as_handlers.h), which only the router and they include. */
#ifndef AS_API_H
#define AS_API_H

#include <stdbool.h>
#include <stddef.h>

#include "as_request.h"
#include "as_http.h" /* the glue's HTTP helpers: ETags, CORS, origins */
#include "as_call.h" /* agent keys (as_bearer_key), JSON media types */
#include "as_respond.h" /* the error object, a person's error page */
#include "as_shop.h"

/* The router: the endpoint that serves req's path and method answers it,
 * with HTTP's conventions added (docs/api.md). */
void as_handle(as_shop *shop, const as_request *req, as_response *resp);

#endif
