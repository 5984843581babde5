/* The /v1 answers shared by the router, the handlers and the glue: the error
 * object a client reads, and the page a person's browser gets instead. */
#include "as_respond.h"

#include <string.h>

#include "as_help_view.h"
#include "as_person_pages.h"
#include "as_shop.h"
#include "as_util.h"

/* ---- for clients: the error object of a status httpd raised ---- */

void as_respond_http_refusal(as_response *resp, int status, const char *part)
{
    static const struct {
        const char *part, *message;
    } bad[] = {
        /* inside a location httpd refuses the path only for a bad escape */
        {"path", "The path is not valid: write it in percent-encoded UTF-8 (a '%' followed by "
                 "two hex digits)."},
        /* before any URL mapping: a header over LimitRequestFieldSize, a
         * malformed header, a missing Host */
        {"headers", "The request headers are not valid: one is too long or malformed, or Host "
                    "is missing."},
        {"body", "The body could not be read: a malformed Content-Length or chunk."},
    };
    if (status == 400 && part)
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
            if (strcmp(bad[i].part, part) == 0) {
                as_respond_error(resp, 400, "VALIDATION_ERROR", part, bad[i].message);
                return;
            }
    as_respond_http_status(resp, status);
}

void as_respond_http_status(as_response *resp, int status)
{
    static const struct {
        int status;
        const char *code, *message;
    } map[] = {
        {400, "VALIDATION_ERROR", "The request could not be understood."},
        {403, "FORBIDDEN", "Access to this resource is not allowed."},
        {404, "NOT_FOUND", "No such resource."},
        {405, "METHOD_NOT_ALLOWED", "This method is not allowed here."},
        {408, "REQUEST_TIMEOUT", "The request was not received in time."},
        {411, "LENGTH_REQUIRED", "A request body needs a Content-Length or chunked encoding."},
        {413, "PAYLOAD_TOO_LARGE", "The request body is larger than 64 KiB."},
        {414, "URI_TOO_LONG", "The request URI is too long."},
        {415, "UNSUPPORTED_MEDIA_TYPE", "Send bodies as application/json."},
        {429, "RATE_LIMITED", "Too many requests; retry later."},
        {431, "HEADERS_TOO_LARGE", "The request headers are too large."},
        {501, "NOT_IMPLEMENTED", "This method is not implemented."},
        {503, "SERVICE_UNAVAILABLE", "The service is unavailable; retry shortly."},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (map[i].status == status) {
            as_respond_error(resp, status, map[i].code, NULL, map[i].message);
            return;
        }
    as_respond_error(resp, status >= 400 && status < 600 ? status : 500, "INTERNAL_ERROR", NULL,
                     "The server could not complete the request.");
}

/* ---- for a person's browser ---- */

/* A person's browser (Accept prefers text/html) on a confirmation link gets
 * a page for every error the link can answer, with the same status: a cut-off
 * link, a storage failure, the rate limit. API clients keep the error object;
 * so do other methods and paths that are not a link (docs/openapi.json
 * declares the page for GET and POST /confirmations/{id} alone). Called for
 * every response (as_handle, and the glue's own refusals). */
void as_person_error(as_mem *m, const as_request *req, as_response *resp)
{
    static const char prefix[] = "/confirmations/";
    const size_t n = sizeof prefix - 1;
    const char *method = req->method ? req->method : "";
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (resp->html || resp->raw || !resp->body || resp->status < 400 || !req->path ||
        strncmp(req->path, prefix, n) != 0 || !req->path[n] || strchr(req->path + n, '/') ||
        (!get && strcmp(method, "POST") != 0) || !as_request_wants_html(req))
        return;
    const char *code = json_string_value(json_object_get(resp->body, "error"));
    if (!code) return;
    const char *base = req->base_url;
    /* a GET can be tried again as it was (its token stays in the link); a
     * form's token was in its body */
    bool transient = resp->status == 429 || resp->status >= 500;
    const char *again = base && get && transient
                            ? as_printf(m, "%s%s%s%s", base, req->path, req->query ? "?" : "",
                                        req->query ? req->query : "")
                            : NULL;
    const char *docs = base ? as_printf(m, "%s/%s", base, as_error_docs(code)) : NULL;
    resp->html = as_person_error_page(m, resp->status, code, resp->retry_after, again, docs);
}
