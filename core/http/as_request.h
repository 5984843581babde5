/* A request in, a response out: HTTP as core's bindings see it. The glue
 * (mod_agentshop) turns HTTP into an as_request and writes the as_response;
 * the router (as_api.c) hands both to the binding that serves the path. The
 * shop's operations never see either. */
#ifndef AS_REQUEST_H
#define AS_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "as_shop.h"
#include "as_util.h" /* as_query */

typedef struct as_request {
    const char *method; /* "GET", "HEAD", "POST", ... */
    const char *path;   /* below the API base, still percent-encoded, e.g. "/products/X" */
    const char *query;  /* raw query string or NULL */
    const char *body;   /* request body (at most 64 KiB, read by the glue) or NULL */
    size_t body_len;
    const char *content_type, *accept;
    const char *authorization, *service_agent, *idempotency_key; /* headers or NULL */
    const char *if_none_match; /* a conditional GET's validators, or NULL */
    /* a CORS preflight (OPTIONS): Access-Control-Request-Method and -Headers */
    const char *cors_method, *cors_headers;
    const char *base_url; /* absolute URL of the API base, e.g. "https://shop.example/v1" */
    /* MCP's Streamable HTTP transport (POST /mcp): headers or NULL. */
    const char *origin, *mcp_protocol_version;
} as_request;

typedef struct as_response {
    int status;
    json_t *body;      /* owned: as_response_clear releases it */
    const char *allow; /* for 405 */
    const char *html;  /* a page for a browser instead of JSON, when set */
    /* A ready-made body instead of JSON (the OpenAPI document, help pages):
     * raw_len bytes of raw, sent as content_type. */
    const char *raw;
    size_t raw_len;
    const char *content_type;
    int max_age;     /* > 0: the body may be cached this many seconds (static documents) */
    bool no_body;    /* the status alone (202 to an MCP notification) */
    int retry_after; /* seconds for Retry-After, 0 for none */
    bool replayed;   /* Idempotent-Replayed: true */
    /* HTTP's conventions (as_handle; docs/api.md, "Caching, compression and
     * CORS"): */
    bool cacheable;       /* a public read: a 200 gets an ETag and may be kept
                           * (Cache-Control no-cache, or max_age), else no-store */
    const char *etag;     /* the ETag when known before the body; else the
                           * glue derives it from the body */
    bool not_modified;    /* 304: If-None-Match named etag; no body was built */
    const char *location; /* Location: what a 201 or 202 created */
    const char *cors_origin;  /* Access-Control-Allow-Origin: "*" or the Origin */
    bool vary_origin;         /* the answer depends on the Origin header */
    const char *cors_methods; /* a preflight's answer: the methods allowed */
} as_response;

/* The most segments a routed path has ("/devices/{slug}/compatible"). */
#define AS_ROUTE_MAX_SEGS 4

/* The values of a route's "{name}" segments, percent-decoded, in the order
 * of its path template: "/orders/{id}/cancel" gives v[0] the id. */
typedef struct as_route_params {
    const char *v[AS_ROUTE_MAX_SEGS];
    size_t n;
} as_route_params;

/* What a route's row names for a method, in any binding the router serves:
 * the answer to req in resp. q is the query string parsed (empty unless the
 * route reads its own parameters). */
typedef void as_handler(as_shop *shop, const as_request *req, const as_route_params *p,
                        const as_query *q, as_response *resp);

/* The absolute URL of the API base, "" when unknown: links in answers. */
const char *as_request_base(const as_request *req);
/* Whether the request's Accept prefers a page to JSON (as_accept_html). */
bool as_request_wants_html(const as_request *req);

void as_response_clear(as_response *resp);
/* Sets status and body (owned; the previous body is released). */
void as_respond_json(as_response *resp, int status, json_t *body);

#endif
