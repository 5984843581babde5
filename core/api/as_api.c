/* The /v1 router: the route table, and what HTTP's conventions add to every
 * answer. */
#include "as_api.h"

#include <string.h>

#include "as_http.h"
#include "as_passkey_api.h"
#include "as_util.h"
#include "as_view.h"

/* Routing: a path splits into decoded segments; each route names its segments,
 * "{name}" standing for a parameter, named as in docs/openapi.json's paths (the
 * index lists these templates; t/api/openapi.t compares them). */
enum { MAX_SEGS = 4 };

typedef enum {
    R_ROOT,
    R_SEARCH,
    R_PRODUCT,
    R_DEVICES,
    R_COMPATIBLE,
    R_MANDATE,
    R_QUOTES,
    R_ORDERS,
    R_CONFIRMATION,
    R_ORDER,
    R_ORDER_CANCEL,
    R_RETURNS,
    R_RETURN_LABEL,
    R_COMPAT_CHECK,
    R_QUESTIONS,
    R_OPENAPI,
    R_DOCS,
    R_DOCS_PAGE,
    R_DOCS_ERROR,
    R_MCP,
    R_ENROL,
    R_WEBAUTHN_JS
} route_id;

/* Who an endpoint answers, which decides what a browser page of another
 * origin may read (CORS) and whether an answer may be kept (docs/api.md,
 * "Caching, compression and CORS"). */
typedef enum {
    A_PUBLIC, /* the same for everyone: any origin reads it, clients keep it */
    A_AGENT,  /* an agent's, with its key: the origins the operator lists */
    A_PERSON  /* a person's page behind a signed link: its own origin only */
} route_access;

typedef struct route {
    route_id id;
    const char *segs[MAX_SEGS];
    size_t nsegs;
    const char *methods; /* the Allow header */
    route_access access;
} route;

static const route routes[] = {
    {R_ROOT, {0}, 0, "GET, HEAD", A_PUBLIC},
    {R_SEARCH, {"search"}, 1, "GET, HEAD", A_PUBLIC},
    {R_PRODUCT, {"products", "{sku}"}, 2, "GET, HEAD", A_PUBLIC},
    {R_DEVICES, {"devices"}, 1, "GET, HEAD", A_PUBLIC},
    {R_COMPATIBLE, {"devices", "{slug}", "compatible"}, 3, "GET, HEAD", A_PUBLIC},
    {R_MANDATE, {"mandates", "current"}, 2, "GET, HEAD", A_AGENT},
    {R_QUOTES, {"quotes"}, 1, "POST", A_AGENT},
    {R_ORDERS, {"orders"}, 1, "POST", A_AGENT},
    {R_CONFIRMATION, {"confirmations", "{id}"}, 2, "GET, HEAD, POST", A_PERSON},
    {R_ORDER, {"orders", "{id}"}, 2, "GET, HEAD", A_AGENT},
    {R_ORDER_CANCEL, {"orders", "{id}", "cancel"}, 3, "POST", A_AGENT},
    {R_RETURNS, {"returns"}, 1, "POST", A_AGENT},
    {R_RETURN_LABEL, {"returns", "{id}", "label"}, 3, "GET, HEAD", A_PERSON},
    {R_COMPAT_CHECK, {"compatibility", "check"}, 2, "POST", A_AGENT},
    {R_QUESTIONS, {"questions"}, 1, "POST", A_AGENT},
    {R_OPENAPI, {"openapi.json"}, 1, "GET, HEAD", A_PUBLIC},
    {R_DOCS, {"docs"}, 1, "GET, HEAD", A_PUBLIC},
    {R_DOCS_PAGE, {"docs", "{page}"}, 2, "GET, HEAD", A_PUBLIC},
    {R_DOCS_ERROR, {"docs", "errors", "{code}"}, 3, "GET, HEAD", A_PUBLIC},
    {R_MCP, {"mcp"}, 1, "POST", A_AGENT},
    {R_ENROL, {"enrol", "{id}"}, 2, "GET, HEAD, POST", A_PERSON},
    {R_WEBAUTHN_JS, {"webauthn.js"}, 1, "GET, HEAD", A_PUBLIC},
};

static bool method_allowed(const route *r, const char *method)
{
    size_t n = method ? strlen(method) : 0;
    if (n == 0) return false;
    const char *p = r->methods;
    while ((p = strstr(p, method)) != NULL) {
        if ((p == r->methods || p[-1] == ' ') && (p[n] == '\0' || p[n] == ',')) return true;
        p += n;
    }
    return false;
}

static bool split_path(as_mem *m, const char *path, char **segs, size_t *n)
{
    *n = 0;
    if (!path || !*path || strcmp(path, "/") == 0) return true;
    if (*path != '/') return false;
    const char *p = path + 1;
    while (1) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0 || *n == MAX_SEGS) return false; /* "//", trailing '/', too deep */
        if (!as_pct_decode_segment(m, p, len, &segs[*n])) return false;
        (*n)++;
        if (!end) return true;
        p = end + 1;
    }
}

static const route *match_route(char **segs, size_t n, const char **params)
{
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        const route *r = &routes[i];
        if (r->nsegs != n) continue;
        size_t np = 0, k = 0;
        for (; k < n; k++) {
            if (r->segs[k][0] == '{')
                params[np++] = segs[k];
            else if (strcmp(r->segs[k], segs[k]) != 0)
                break;
        }
        if (k == n) return r;
    }
    return NULL;
}

static void api_root(as_mem *m, as_response *resp)
{
    size_t n = sizeof(routes) / sizeof(routes[0]) - 1; /* all but the root itself */
    as_endpoint *eps = as_alloc(m, n * sizeof(*eps));
    for (size_t i = 0; i < n; i++) {
        const route *r = &routes[i + 1];
        as_buf b;
        as_buf_init(&b, m);
        for (size_t k = 0; k < r->nsegs; k++)
            as_buf_printf(&b, "/%s", r->segs[k]);
        eps[i] = (as_endpoint){as_buf_str(&b), r->methods};
    }
    as_respond_json(resp, 200, as_view_api_index(eps, n));
}

/* OPTIONS: the methods, or a CORS preflight's answer (docs/api.md). A
 * preflight the endpoint refuses gets an error, so that the person reading
 * the browser's console learns why. */
static void options(as_shop *shop, const as_request *req, const route *r, as_response *resp)
{
    as_mem *m = shop->mem;
    resp->allow = as_printf(m, "%s, OPTIONS", r->methods);
    if (!req->origin || !req->cors_method) { /* not a preflight */
        as_respond_json(resp, 204, NULL);
        resp->no_body = true;
        return;
    }
    if (r->access == A_PERSON || (r->access == A_AGENT && !as_agent_origin_allowed(shop, req))) {
        as_respond_error(
            resp, 403, "FORBIDDEN", NULL,
            r->access == A_PERSON
                ? "This page is for the person who opens its link, not for pages of other "
                  "origins."
                : as_printf(m,
                            "Pages of %s may not call this endpoint: the operator lists the "
                            "origins that may (AgentShopCORSAllowOrigin).",
                            req->origin));
        return;
    }
    if (!method_allowed(r, req->cors_method)) {
        as_respond_error(
            resp, 405, "METHOD_NOT_ALLOWED", NULL,
            as_printf(m, "%s is not allowed here; allowed: %s", req->cors_method, r->methods));
        resp->allow = r->methods;
        return;
    }
    const char *h = as_cors_unlisted_header(m, req->cors_headers);
    if (h) {
        as_respond_error(resp, 403, "FORBIDDEN", NULL,
                         as_printf(m,
                                   "The header %s may not be sent here from a page; these "
                                   "may: %s.",
                                   h, AS_CORS_ALLOW_HEADERS));
        return;
    }
    as_respond_json(resp, 204, NULL);
    resp->no_body = true;
    resp->cors_methods = r->methods;
}

/* What HTTP's conventions add to the endpoint's answer: who may keep it and
 * read it, and where a new resource is. */
static void conventions(as_shop *shop, const as_request *req, const route *r, as_response *resp)
{
    bool read = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
    resp->cacheable = r->access == A_PUBLIC && read && (resp->status == 200 || resp->not_modified);
    if (r->access == A_AGENT) resp->vary_origin = true;
    if (resp->cors_methods) /* a preflight options() accepted */
        resp->cors_origin = r->access == A_PUBLIC ? "*" : req->origin;
    else if (req->origin && r->access == A_PUBLIC)
        resp->cors_origin = "*";
    else if (req->origin && r->access == A_AGENT && as_agent_origin_allowed(shop, req))
        resp->cors_origin = req->origin;
    /* an order (201, or 202 awaiting its person) and a return: their URL,
     * also when the answer is a replay of an earlier request's */
    const char *id = json_string_value(json_object_get(resp->body, "id"));
    if (resp->status == 202) /* the confirmation's answer names its order */
        id = json_string_value(json_object_get(resp->body, "order_id"));
    const char *base = req->base_url ? req->base_url : "";
    if (id && r->id == R_ORDERS && (resp->status == 201 || resp->status == 202))
        resp->location = as_printf(shop->mem, "%s/orders/%s", base, id);
    else if (id && r->id == R_RETURNS && resp->status == 201)
        resp->location = as_printf(shop->mem, "%s/returns/%s/label", base, id);
}

static const route *dispatch(as_shop *shop, const as_request *req, as_response *resp);

void as_handle(as_shop *shop, const as_request *req, as_response *resp)
{
    memset(resp, 0, sizeof(*resp));
    resp->status = 500;
    if (shop->sweep) {
        shop->sweep = false;          /* once, also when MCP calls back in */
        (void)as_sweep_expired(shop); /* a failure is logged; the request goes on */
        (void)as_sweep_challenges(shop);
    }
    const route *r = dispatch(shop, req, resp);
    if (r) conventions(shop, req, r, resp);
    as_person_error(shop->mem, req, resp);
}

/* The endpoint's answer; the route, NULL when there is none. */
static const route *dispatch(as_shop *shop, const as_request *req, as_response *resp)
{
    char *segs[MAX_SEGS];
    const char *params[MAX_SEGS];
    size_t n;
    /* The help index answers at "/docs/" too (people type it); every other
     * trailing slash stays a 404. */
    const char *path = req->path && strcmp(req->path, "/docs/") == 0 ? "/docs" : req->path;
    const route *r = NULL;
    if (split_path(shop->mem, path, segs, &n)) r = match_route(segs, n, params);
    if (!r) {
        as_respond_error(resp, 404, "NOT_FOUND", NULL,
                         "No such endpoint; GET the API base (/v1) for the list of endpoints.");
        return NULL;
    }
    if (req->method && strcmp(req->method, "OPTIONS") == 0) {
        options(shop, req, r, resp);
        return r;
    }
    if (!method_allowed(r, req->method)) {
        as_respond_error(
            resp, 405, "METHOD_NOT_ALLOWED", NULL,
            as_printf(shop->mem, "%s is not allowed here; allowed: %s", req->method, r->methods));
        resp->allow = r->methods;
        return r;
    }
    as_query q;
    const char *badkey = NULL;
    if (!as_query_parse(shop->mem, req->query, &q, &badkey)) {
        as_respond_error(resp, 400, "VALIDATION_ERROR", badkey,
                         "The query string is not valid: use percent-encoded UTF-8 "
                         "(no NUL bytes).");
        return r;
    }
    /* Endpoints that take no query parameters refuse any, as the others
     * refuse unknown ones: a misspelt parameter must never pass silently. */
    bool own_query = r->id == R_SEARCH || r->id == R_PRODUCT || r->id == R_DEVICES ||
                     r->id == R_COMPATIBLE || r->id == R_CONFIRMATION || r->id == R_RETURN_LABEL ||
                     r->id == R_ENROL;
    as_problem prob;
    as_param none;
    if (!own_query && !as_validate_query(shop->mem, NULL, 0, &q, as_today(shop), &none, &prob)) {
        as_respond_problem(resp, &prob);
        return r;
    }
    switch (r->id) {
    case R_ROOT:
        api_root(shop->mem, resp);
        break;
    case R_SEARCH:
        as_api_search(shop, &q, resp);
        break;
    case R_PRODUCT:
        as_api_product(shop, params[0], &q, resp);
        break;
    case R_DEVICES:
        as_api_devices(shop, &q, resp);
        break;
    case R_COMPATIBLE:
        as_api_compatible(shop, params[0], &q, resp);
        break;
    case R_MANDATE:
        as_api_mandate_current(shop, req, resp);
        break;
    case R_QUOTES:
        as_api_quote_create(shop, req, resp);
        break;
    case R_ORDERS:
        as_api_order_create(shop, req, resp);
        break;
    case R_CONFIRMATION:
        if (strcmp(req->method, "POST") == 0)
            as_api_confirmation_decide(shop, req, params[0], &q, resp);
        else
            as_api_confirmation_get(shop, req, params[0], &q, resp);
        break;
    case R_ORDER:
        as_api_order_get(shop, req, params[0], resp);
        break;
    case R_ORDER_CANCEL:
        as_api_order_cancel(shop, req, params[0], resp);
        break;
    case R_RETURNS:
        as_api_return_create(shop, req, resp);
        break;
    case R_ENROL:
        as_api_enrol(shop, req, params[0], &q, resp);
        break;
    case R_WEBAUTHN_JS:
        as_api_webauthn_js(resp);
        break;
    case R_RETURN_LABEL:
        as_api_return_label(shop, req, params[0], &q, resp);
        break;
    case R_COMPAT_CHECK:
        as_api_compat_check(shop, req, resp);
        break;
    case R_QUESTIONS:
        as_api_question(shop, req, resp);
        break;
    case R_OPENAPI:
        as_api_openapi(shop, req, resp);
        break;
    case R_DOCS:
        as_api_help(shop, req, NULL, NULL, resp);
        break;
    case R_DOCS_PAGE:
        as_api_help(shop, req, params[0], NULL, resp);
        break;
    case R_DOCS_ERROR:
        as_api_help(shop, req, "errors", params[0], resp);
        break;
    case R_MCP:
        as_api_mcp(shop, req, resp);
        break;
    }
    return r;
}
