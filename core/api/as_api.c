/* The /v1 router: one table, one row per route, and what HTTP's conventions
 * add to every answer. Only the router names the handlers (as_handlers.h). */
#include "as_api.h"

#include <string.h>

#include "as_buying.h"
#include "as_handlers.h"
#include "as_http.h"
#include "as_passkeys.h"
#include "as_util.h"
#include "as_view.h"

/* Who an endpoint answers, which decides what a browser page of another
 * origin may read (CORS) and whether an answer may be kept (docs/api.md,
 * "Caching, compression and CORS"). */
typedef enum {
    A_PUBLIC, /* the same for everyone: any origin reads it, clients keep it */
    A_AGENT,  /* an agent's, with its key: the origins the operator lists */
    A_PERSON  /* a person's page behind a signed link: its own origin only */
} route_access;

/* A route: its path template, whose "{name}" segments are parameters, named
 * as in docs/openapi.json's paths (the index lists these templates;
 * t/api/openapi.t compares them); its handler for each method it serves (the
 * Allow header lists them); whether it reads its own query parameters (the
 * others refuse any: a misspelt parameter must never pass silently); and
 * where below the path what a 201 or 202 answer created is, for Location
 * ("{id}": the body's id; on a 202 the order_id of the order that awaits its
 * person). */
typedef struct route {
    const char *path;
    route_access access;
    bool own_query;
    as_handler *get; /* GET and HEAD */
    as_handler *post;
    const char *location;
} route;

static as_handler api_root;

/* ---- the routes: GET / lists them in this order, the root aside ---- */

/* clang-format off */
static const route routes[] = {
    /* path                        access    own query GET                      POST                        location */
    {"/",                          A_PUBLIC, false,    api_root,                NULL,                       NULL},
    {"/search",                    A_PUBLIC, true,     as_api_search,           NULL,                       NULL},
    {"/products/{sku}",            A_PUBLIC, true,     as_api_product,          NULL,                       NULL},
    {"/devices",                   A_PUBLIC, true,     as_api_devices,          NULL,                       NULL},
    {"/devices/{slug}/compatible", A_PUBLIC, true,     as_api_compatible,       NULL,                       NULL},
    {"/mandates/current",          A_AGENT,  false,    as_api_mandate_current,  NULL,                       NULL},
    {"/quotes",                    A_AGENT,  false,    NULL,                    as_api_quote_create,        NULL},
    {"/orders",                    A_AGENT,  false,    NULL,                    as_api_order_create,        "{id}"},
    {"/confirmations/{id}",        A_PERSON, true,     as_api_confirmation_get, as_api_confirmation_decide, NULL},
    {"/orders/{id}",               A_AGENT,  false,    as_api_order_get,        NULL,                       NULL},
    {"/orders/{id}/cancel",        A_AGENT,  false,    NULL,                    as_api_order_cancel,        NULL},
    {"/returns",                   A_AGENT,  false,    NULL,                    as_api_return_create,       "{id}/label"},
    {"/returns/{id}/label",        A_PERSON, true,     as_api_return_label,     NULL,                       NULL},
    {"/compatibility/check",       A_AGENT,  false,    NULL,                    as_api_compat_check,        NULL},
    {"/questions",                 A_AGENT,  false,    NULL,                    as_api_question,            NULL},
    {"/openapi.json",              A_PUBLIC, false,    as_api_openapi,          NULL,                       NULL},
    {"/docs",                      A_PUBLIC, false,    as_api_docs,             NULL,                       NULL},
    {"/docs/{page}",               A_PUBLIC, false,    as_api_docs_page,        NULL,                       NULL},
    {"/docs/errors/{code}",        A_PUBLIC, false,    as_api_docs_error,       NULL,                       NULL},
    {"/mcp",                       A_AGENT,  false,    NULL,                    as_api_mcp,                 NULL},
    {"/enrol/{id}",                A_PERSON, true,     as_api_enrol_get,        as_api_enrol_post,          NULL},
    {"/webauthn.js",               A_PUBLIC, false,    as_api_webauthn_js,      NULL,                       NULL},
};
/* clang-format on */

/* The Allow header: the methods that have a handler. */
static const char *route_methods(const route *r)
{
    return r->get && r->post ? "GET, HEAD, POST" : r->get ? "GET, HEAD" : "POST";
}

/* The handler for method, NULL when the route does not serve it. */
static as_handler *route_handler(const route *r, const char *method)
{
    if (!method) return NULL;
    if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) return r->get;
    return strcmp(method, "POST") == 0 ? r->post : NULL;
}

static void api_root(as_shop *shop, const as_request *req, const as_route_params *p,
                     const as_query *q, as_response *resp)
{
    (void)req;
    (void)p;
    (void)q;
    size_t n = 0;
    as_endpoint *eps = as_alloc(shop->mem, sizeof(routes) / sizeof(routes[0]) * sizeof(*eps));
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (routes[i].get != api_root) /* all but the root itself */
            eps[n++] = (as_endpoint){routes[i].path, route_methods(&routes[i])};
    as_respond_json(resp, 200, as_view_api_index(eps, n));
}

/* ---- matching a path ---- */

/* A path splits into decoded segments, at most AS_ROUTE_MAX_SEGS. */
static bool split_path(as_mem *m, const char *path, char **segs, size_t *n)
{
    *n = 0;
    if (!path || !*path || strcmp(path, "/") == 0) return true;
    if (*path != '/') return false;
    const char *p = path + 1;
    while (1) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0 || *n == AS_ROUTE_MAX_SEGS) return false; /* "//", trailing '/', too deep */
        if (!as_pct_decode_segment(m, p, len, &segs[*n])) return false;
        (*n)++;
        if (!end) return true;
        p = end + 1;
    }
}

/* Whether the segments fit r's template; the values of its "{name}"
 * segments into *p. */
static bool route_fits(const route *r, char **segs, size_t n, as_route_params *p)
{
    const char *t = r->path + 1;
    p->n = 0;
    for (size_t k = 0; k < n; k++) {
        size_t len = strcspn(t, "/");
        if (len == 0) return false; /* the template ended first */
        if (t[0] == '{')
            p->v[p->n++] = segs[k];
        else if (strlen(segs[k]) != len || memcmp(t, segs[k], len) != 0)
            return false;
        t += len + (t[len] == '/');
    }
    return *t == '\0';
}

static const route *match_route(char **segs, size_t n, as_route_params *p)
{
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (route_fits(&routes[i], segs, n, p)) return &routes[i];
    return NULL;
}

/* ---- what HTTP adds ---- */

/* OPTIONS: the methods, or a CORS preflight's answer (docs/api.md). A
 * preflight the endpoint refuses gets an error, so that the person reading
 * the browser's console learns why. */
static void options(as_shop *shop, const as_request *req, const route *r, as_response *resp)
{
    as_mem *m = shop->mem;
    resp->allow = as_printf(m, "%s, OPTIONS", route_methods(r));
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
    if (!route_handler(r, req->cors_method)) {
        as_respond_error(resp, 405, "METHOD_NOT_ALLOWED", NULL,
                         as_printf(m, "%s is not allowed here; allowed: %s", req->cors_method,
                                   route_methods(r)));
        resp->allow = route_methods(r);
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
    resp->cors_methods = route_methods(r);
}

/* The URL of what r created: its location below its path, id in it. */
static const char *created_at(as_mem *m, const char *base, const route *r, const char *id)
{
    const char *t = r->location, *at = strstr(t, "{id}");
    if (!at) return as_printf(m, "%s%s/%s", base, r->path, t);
    return as_printf(m, "%s%s/%.*s%s%s", base, r->path, (int)(at - t), t, id, at + 4);
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
    if (id && r->location && (resp->status == 201 || resp->status == 202))
        resp->location = created_at(shop->mem, as_request_base(req), r, id);
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
    char *segs[AS_ROUTE_MAX_SEGS];
    as_route_params params;
    size_t n;
    /* The help index answers at "/docs/" too (people type it); every other
     * trailing slash stays a 404. */
    const char *path = req->path && strcmp(req->path, "/docs/") == 0 ? "/docs" : req->path;
    const route *r = NULL;
    if (split_path(shop->mem, path, segs, &n)) r = match_route(segs, n, &params);
    if (!r) {
        as_respond_error(resp, 404, "NOT_FOUND", NULL,
                         "No such endpoint; GET the API base (/v1) for the list of endpoints.");
        return NULL;
    }
    if (req->method && strcmp(req->method, "OPTIONS") == 0) {
        options(shop, req, r, resp);
        return r;
    }
    as_handler *handler = route_handler(r, req->method);
    if (!handler) {
        as_respond_error(resp, 405, "METHOD_NOT_ALLOWED", NULL,
                         as_printf(shop->mem, "%s is not allowed here; allowed: %s", req->method,
                                   route_methods(r)));
        resp->allow = route_methods(r);
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
    as_problem prob;
    as_param none;
    if (!r->own_query && !as_validate_query(shop->mem, NULL, 0, &q, as_today(shop), &none, &prob)) {
        as_respond_problem(resp, &prob);
        return r;
    }
    handler(shop, req, &params, &q, resp);
    return r;
}
