/* GET /openapi.json: the OpenAPI 3.1 description of this API (docs/openapi.json,
 * compiled in). Its one server URL is written as @BASE_URL@ and becomes the
 * base the request reached, so the document describes the server serving it. */
#include <stdlib.h>
#include <string.h>

#include "as_api.h"
#include "openapi_json.inc"

static const char BASE_MARK[] = "@BASE_URL@";

const char *as_openapi_text(size_t *len)
{
    *len = sizeof(openapi_json) - 1;
    return openapi_json;
}

void as_api_openapi(as_ctx *ctx, const as_request *req, as_response *resp)
{
    const char *doc = openapi_json;
    const char *mark = strstr(doc, BASE_MARK);
    resp->status = 200;
    resp->content_type = "application/json";
    resp->max_age = 300;
    if (!mark) {
        resp->raw = doc;
        resp->raw_len = sizeof(openapi_json) - 1;
        return;
    }
    /* The base as a JSON string's contents: a Host header is the client's text. */
    json_t *s = json_string(req->base_url ? req->base_url : "/v1");
    char *quoted = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    json_decref(s);
    if (!quoted) {
        as_respond_error(resp, 500, "INTERNAL_ERROR", NULL, "The document could not be built.");
        return;
    }
    as_buf b;
    as_buf_init(&b, ctx->mem);
    as_buf_add(&b, doc, (size_t)(mark - doc));
    as_buf_add(&b, quoted + 1, strlen(quoted) - 2);
    as_buf_puts(&b, mark + sizeof(BASE_MARK) - 1);
    free(quoted);
    resp->raw = as_buf_str(&b);
    resp->raw_len = strlen(resp->raw);
}
