/* The /v1 handlers as the router (as_api.c) sees them: only the router and
 * the files that define them include this. A new endpoint is one row in the
 * router's table and one handler of the as_handler signature, named by it. */
#ifndef AS_HANDLERS_H
#define AS_HANDLERS_H

#include "as_api.h"
#include "as_mcp.h"

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

/* The Model Context Protocol over Streamable HTTP: as_api_mcp (core/mcp/as_mcp.h). */

#endif
