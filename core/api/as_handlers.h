/* The /v1 handlers as the router (as_api.c) sees them: only the router and
 * the files that define them include this. A new endpoint is one row in the
 * router's table and one handler of the as_handler signature, named by it. */
#ifndef AS_HANDLERS_H
#define AS_HANDLERS_H

#include "as_api.h"

/* The most segments a /v1 path has ("/devices/{slug}/compatible"). */
#define AS_ROUTE_MAX_SEGS 4

/* The values of a route's "{name}" segments, percent-decoded, in the order
 * of its path template: "/orders/{id}/cancel" gives v[0] the id. */
typedef struct as_route_params {
    const char *v[AS_ROUTE_MAX_SEGS];
    size_t n;
} as_route_params;

/* What a route's row names for a method: the answer to req in resp. q is the
 * query string parsed (empty unless the route reads its own parameters). */
typedef void as_handler(as_shop *shop, const as_request *req, const as_route_params *p,
                        const as_query *q, as_response *resp);

/* The endpoints, each named by one row of the router's table. */

/* The catalogue (as_catalog_api.c). */
as_handler as_api_search;     /* GET /search */
as_handler as_api_product;    /* GET /products/{sku} */
as_handler as_api_devices;    /* GET /devices */
as_handler as_api_compatible; /* GET /devices/{slug}/compatible */

/* Buying (as_buy_api.c). */
as_handler as_api_mandate_current;     /* GET /mandates/current */
as_handler as_api_quote_create;        /* POST /quotes */
as_handler as_api_order_create;        /* POST /orders */
as_handler as_api_confirmation_get;    /* GET /confirmations/{id} */
as_handler as_api_confirmation_decide; /* POST /confirmations/{id} */

/* After the sale (as_aftersale_api.c). */
as_handler as_api_order_get;     /* GET /orders/{id} */
as_handler as_api_order_cancel;  /* POST /orders/{id}/cancel */
as_handler as_api_return_create; /* POST /returns */
as_handler as_api_return_label;  /* GET /returns/{id}/label */

/* Passkeys (as_passkey_api.c). */
as_handler as_api_enrol_get;   /* GET /enrol/{id} */
as_handler as_api_enrol_post;  /* POST /enrol/{id} */
as_handler as_api_webauthn_js; /* GET /webauthn.js: the pages' ceremonies */

/* Before the sale: fit checks and questions (as_presale_api.c). */
as_handler as_api_compat_check; /* POST /compatibility/check */
as_handler as_api_question;     /* POST /questions */

/* Documents for clients and people (as_openapi_api.c, as_help_api.c). */
as_handler as_api_openapi;    /* GET /openapi.json */
as_handler as_api_docs;       /* GET /docs: the help index */
as_handler as_api_docs_page;  /* GET /docs/{page} */
as_handler as_api_docs_error; /* GET /docs/errors/{code} */

/* The Model Context Protocol over Streamable HTTP (core/mcp/as_mcp.c).
 * TODO(60): still in its old signature, adapted by the router's `mcp`, until
 * core/mcp takes as_handler's. */
void as_api_mcp(as_shop *shop, const as_request *req, as_response *resp);

#endif
