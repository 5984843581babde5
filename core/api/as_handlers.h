/* The /v1 handlers as the router (as_api.c) sees them: only the router and
 * the files that define them include this. A new endpoint is one row in the
 * router's table and one handler of the as_handler signature, named by it. */
#ifndef AS_HANDLERS_H
#define AS_HANDLERS_H

#include "as_api.h"
#include "as_mcp.h"

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

/* The endpoints, in the signatures they had before the table: the router's
 * rows adapt them (a new handler takes as_handler's signature instead). */

/* The catalogue (as_catalog_api.c). */
void as_api_search(as_shop *shop, const as_query *q, as_response *resp);
void as_api_product(as_shop *shop, const char *sku, const as_query *q, as_response *resp);
void as_api_devices(as_shop *shop, const as_query *q, as_response *resp);
void as_api_compatible(as_shop *shop, const char *slug, const as_query *q, as_response *resp);

/* Buying (as_buy_api.c). */
void as_api_mandate_current(as_shop *shop, const as_request *req, as_response *resp);
void as_api_quote_create(as_shop *shop, const as_request *req, as_response *resp);
void as_api_order_create(as_shop *shop, const as_request *req, as_response *resp);
void as_api_confirmation_get(as_shop *shop, const as_request *req, const char *id,
                             const as_query *q, as_response *resp);
void as_api_confirmation_decide(as_shop *shop, const as_request *req, const char *id,
                                const as_query *q, as_response *resp);

/* After the sale (as_aftersale_api.c). */
void as_api_order_get(as_shop *shop, const as_request *req, const char *id, as_response *resp);
void as_api_order_cancel(as_shop *shop, const as_request *req, const char *id, as_response *resp);
void as_api_return_create(as_shop *shop, const as_request *req, as_response *resp);
void as_api_return_label(as_shop *shop, const as_request *req, const char *id, const as_query *q,
                         as_response *resp);

/* Passkey enrolment (as_passkey_api.c; its sweep and script in as_passkey_api.h). */
void as_api_enrol(as_shop *shop, const as_request *req, const char *id, const as_query *q,
                  as_response *resp);

/* Before the sale: fit checks and questions (as_presale_api.c). */
void as_api_compat_check(as_shop *shop, const as_request *req, as_response *resp);
void as_api_question(as_shop *shop, const as_request *req, as_response *resp);

/* Documents for clients and people (as_openapi_api.c, as_help_api.c). */
void as_api_openapi(as_shop *shop, const as_request *req, as_response *resp);
/* page: NULL for the index; code: an error code for docs/errors/{code}. */
void as_api_help(as_shop *shop, const as_request *req, const char *page, const char *code,
                 as_response *resp);

/* The Model Context Protocol over Streamable HTTP: as_api_mcp (core/mcp/as_mcp.h). */

#endif
