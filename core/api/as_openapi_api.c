/* GET /openapi.json: the OpenAPI 3.1 description of this API (docs/openapi.json,
 * compiled in). Its server URL (and its contact's, the help pages) is written
 * with @BASE_URL@, which becomes the base the request reached, so the document
 * describes the server serving it. */
#include <stdlib.h>
#include <string.h>

#include <threads.h>

#include "as_handlers.h"
#include "as_crypto.h"
#include "as_http.h"

static const char BASE_MARK[] = "@BASE_URL@";

/* The compiled-in document's SHA-256, once per process: with the base URL,
 * all an answer depends on, so a client's copy is validated without
 * building the document again. */
static unsigned char doc_digest[32];
static once_flag doc_once = ONCE_FLAG_INIT;

static void digest_doc(void)
{
    size_t len;
    const char *doc = as_openapi_text(&len);
    as_sha256 *h = as_sha256_begin();
    as_sha256_add(h, doc, len);
    if (!as_sha256_end(h, doc_digest)) memset(doc_digest, 0, sizeof(doc_digest));
}

void as_api_openapi(as_shop *shop, const as_request *req, const as_route_params *rp,
                    const as_query *q, as_response *resp)
{
    (void)rp;
    (void)q;
    size_t len;
    const char *doc = as_openapi_text(&len);
    const char *mark = strstr(doc, BASE_MARK);
    resp->status = 200;
    resp->content_type = "application/json";
    resp->max_age = 300;
    call_once(&doc_once, digest_doc);
    const char *base = req->base_url ? req->base_url : "/v1";
    const char *key =
        as_printf(shop->mem, "%s %s", as_b64url_encode(shop->mem, doc_digest, 32), base);
    resp->etag = as_etag_of(shop->mem, key, strlen(key));
    if (as_etag_matches(req->if_none_match, resp->etag)) {
        resp->status = 304;
        resp->not_modified = true;
        return;
    }
    if (!mark) {
        resp->raw = doc;
        resp->raw_len = len;
        return;
    }
    /* The base as a JSON string's contents: a Host header is the client's text. */
    json_t *s = json_string(base);
    char *quoted = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    json_decref(s);
    if (!quoted) {
        as_respond_error(resp, 500, "INTERNAL_ERROR", NULL, "The document could not be built.");
        return;
    }
    as_buf b;
    as_buf_init(&b, shop->mem);
    for (; mark; doc = mark + sizeof(BASE_MARK) - 1, mark = strstr(doc, BASE_MARK)) {
        as_buf_add(&b, doc, (size_t)(mark - doc));
        as_buf_add(&b, quoted + 1, strlen(quoted) - 2);
    }
    as_buf_puts(&b, doc);
    free(quoted);
    resp->raw = as_buf_str(&b);
    resp->raw_len = strlen(resp->raw);
}
