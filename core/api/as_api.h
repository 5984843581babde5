/* The API as core sees it: a request in, a response out. The glue (mod_agentshop)
 * turns HTTP into an as_request and writes the as_response; everything between
 * is decided here. */
#ifndef AS_API_H
#define AS_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "as_help_view.h"
#include "as_json_write.h"
#include "as_mem.h"
#include "as_request.h"
#include "as_search.h"
#include "as_shop.h"
#include "as_store.h"
#include "as_validate.h"
#include "as_http.h"    /* the glue's HTTP helpers: ETags, CORS, origins */
#include "as_respond.h" /* the error object, a person's error page */






void as_handle(as_shop *shop, const as_request *req, as_response *resp);
/* Expires orders whose confirmation ran out, any user's, a batch of at most
 * 100 in one transaction; returns how many, or -1 when storage failed (logged). */
int as_sweep_expired(as_shop *shop);

/* A device parameter: a slug, or free text naming exactly one device; else a 400
 * naming the candidates (never a silent guess). */
bool as_resolve_device(as_shop *shop, const char *text, const char *field, as_device *out,
                       as_response *resp);




/* Endpoints (as_catalog_api.c). */
void as_api_search(as_shop *shop, const as_query *q, as_response *resp);
void as_api_product(as_shop *shop, const char *sku, const as_query *q, as_response *resp);
void as_api_devices(as_shop *shop, const as_query *q, as_response *resp);
void as_api_compatible(as_shop *shop, const char *slug, const as_query *q, as_response *resp);

/* Buying (as_buy_api.c). */
void as_api_mandate_current(as_shop *shop, const as_request *req, as_response *resp);
void as_api_quote_create(as_shop *shop, const as_request *req, as_response *resp);
void as_api_order_create(as_shop *shop, const as_request *req, as_response *resp);
void as_api_confirmation_get(as_shop *shop, const as_request *req, const char *id, const as_query *q,
                             as_response *resp);
void as_api_confirmation_decide(as_shop *shop, const as_request *req, const char *id,
                                const as_query *q, as_response *resp);

/* After the sale (as_aftersale_api.c). */
void as_api_order_get(as_shop *shop, const as_request *req, const char *id, as_response *resp);
void as_api_order_cancel(as_shop *shop, const as_request *req, const char *id, as_response *resp);
void as_api_return_create(as_shop *shop, const as_request *req, as_response *resp);
void as_api_return_label(as_shop *shop, const as_request *req, const char *id, const as_query *q,
                         as_response *resp);
/* Passkey enrolment (as_passkey_api.c). */
void as_api_enrol(as_shop *shop, const as_request *req, const char *id, const as_query *q,
                  as_response *resp);
/* Before the sale: fit checks and questions (as_presale_api.c). */
void as_api_compat_check(as_shop *shop, const as_request *req, as_response *resp);
void as_api_question(as_shop *shop, const as_request *req, as_response *resp);

/* Documents for clients and people (as_openapi_api.c, as_help_api.c). */
void as_api_openapi(as_shop *shop, const as_request *req, as_response *resp);
/* The compiled-in document as written (its server URL still @BASE_URL@). */
const char *as_openapi_text(size_t *len);
/* page: NULL for the index; code: an error code for docs/errors/{code}. */
void as_api_help(as_shop *shop, const as_request *req, const char *page, const char *code,
                 as_response *resp);

/* The Model Context Protocol over Streamable HTTP (as_mcp.c). */
void as_api_mcp(as_shop *shop, const as_request *req, as_response *resp);

/* The key of an Authorization header "Bearer <key>" (the scheme in any case,
 * spaces after it skipped), NULL when there is none: what identifies an
 * agent, and what the rate limiter counts by. */
const char *as_bearer_key(const char *authorization);
/* Whether key has the shape of an agent key: <prefix>_sk_test_<32 letters or
 * digits>. */
bool as_agent_key_shape(const char *key, const char *prefix);
/* Whether a Content-Type is application/json (with or without parameters). */
bool as_json_media_type(const char *ct);

#endif
