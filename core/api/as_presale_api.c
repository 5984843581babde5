/* Before the sale (spec 4.5, 4.6): checking whether a part fits a device, and
 * questions about a product answered from measured data, over the shop's
 * operations (core/shop/as_presale.h) as every binding answers them
 * (core/http/as_answers.h). docs/api.md. */
#include "as_answers.h"
#include "as_api_internal.h"
#include "as_handlers.h"

/* ---- POST /compatibility/check (spec 4.5) ---- */

void as_api_compat_check(as_shop *shop, const as_request *req, const as_route_params *rp,
                         const as_query *q, as_response *resp)
{
    (void)rp;
    (void)q;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    json_t *body = as_json_body(shop, req, resp);
    if (!body) return;
    as_answer_fit_check(shop, body, resp);
    json_decref(body);
}

/* ---- POST /questions (spec 4.6) ---- */

void as_api_question(as_shop *shop, const as_request *req, const as_route_params *rp,
                     const as_query *q, as_response *resp)
{
    (void)rp;
    (void)q;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    json_t *body = as_json_body(shop, req, resp);
    if (!body) return;
    as_answer_question(shop, &agent, body, resp);
    json_decref(body);
}
