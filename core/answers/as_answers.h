/* The agent's calls answered as /v1 answers them (docs/api.md): each checks
 * the call's JSON body against its fields' rules, calls the shop's operation
 * and leaves the /v1 status and body, or the /v1 error, in resp. The /v1
 * handlers and MCP's tools (whose results are the /v1 bodies) both call them,
 * once they have identified the agent (as_call_agent) and read the body. */
#ifndef AS_ANSWERS_H
#define AS_ANSWERS_H

#include <jansson.h>

#include "as_commerce.h"
#include "as_request.h"
#include "as_shop.h"

/* POST /compatibility/check (spec 4.5). */
void as_answer_fit_check(as_shop *shop, const json_t *body, as_response *resp);
/* POST /questions (spec 4.6); a 429 carries resp->retry_after. */
void as_answer_question(as_shop *shop, const as_agent *agent, const json_t *body,
                        as_response *resp);

/* GET /mandates/current (spec 4.7). */
void as_answer_mandate(as_shop *shop, const as_agent *agent, as_response *resp);
/* POST /quotes (spec 4.8). */
void as_answer_quote(as_shop *shop, const as_agent *agent, const json_t *body, as_response *resp);

/* What POST /orders checks before it reads its body: the Idempotency-Key,
 * and the signing key (before the key is claimed: nothing to remember). */
bool as_order_precheck(as_shop *shop, const char *key, as_problem *why);
/* POST /orders (spec 4.9) under the Idempotency-Key key (as_order_precheck'd):
 * 201 placed, or 202 CONFIRMATION_REQUIRED with the person's link below base
 * (then the confirmation's line goes to shop->notify, once committed), or a
 * refusal; a replay of the key's first answer (resp->replayed). */
void as_answer_order(as_shop *shop, const as_agent *agent, const char *key, const json_t *body,
                     const char *base, as_response *resp);

/* GET /orders/{id} (spec 4.10). */
void as_answer_order_follow(as_shop *shop, const as_agent *agent, const char *id,
                            as_response *resp);
/* POST /orders/{id}/cancel (spec 4.11). */
void as_answer_order_cancel(as_shop *shop, const as_agent *agent, const char *id,
                            as_response *resp);
/* What POST /returns checks before it reads its body: the Idempotency-Key. */
bool as_return_precheck(as_shop *shop, const char *key, as_problem *why);
/* POST /returns (spec 4.12) under the Idempotency-Key key (as_return_precheck'd); the
 * label's link below label_base (NULL: none). */
void as_answer_return(as_shop *shop, const as_agent *agent, const char *key, const json_t *body,
                      const char *label_base, as_response *resp);

#endif
