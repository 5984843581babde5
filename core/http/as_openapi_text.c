/* The OpenAPI document (docs/openapi.json, compiled in once): GET
 * /openapi.json serves it, MCP's tools take their output schemas from it. */
#include "as_http.h"

#include "openapi_json.inc"

const char *as_openapi_text(size_t *len)
{
    *len = sizeof(openapi_json) - 1;
    return openapi_json;
}
