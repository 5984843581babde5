/* After the sale (spec 4.10 to 4.12): following an order, cancelling it, and
 * returning it under the right-item guarantee, over the shop's operations
 * (core/shop/as_aftersale.h) as every binding answers them
 * (core/http/as_answers.h). docs/orders.md. */
#include <string.h>

#include "as_aftersale.h"
#include "as_answers.h"
#include "as_api_internal.h"
#include "as_handlers.h"
#include "as_person_pages.h"

/* ---- GET /orders/{id} (spec 4.10) ---- */

void as_api_order_get(as_shop *shop, const as_request *req, const as_route_params *rp,
                      const as_query *q, as_response *resp)
{
    (void)q;
    const char *id = rp->v[0];
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    as_answer_order_follow(shop, &agent, id, resp);
}

/* ---- POST /orders/{id}/cancel (spec 4.11) ---- */

void as_api_order_cancel(as_shop *shop, const as_request *req, const as_route_params *rp,
                         const as_query *q, as_response *resp)
{
    (void)q;
    const char *id = rp->v[0];
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    as_answer_order_cancel(shop, &agent, id, resp);
}

/* ---- POST /returns (spec 4.12) ---- */

void as_api_return_create(as_shop *shop, const as_request *req, const as_route_params *rp,
                          const as_query *q, as_response *resp)
{
    (void)rp;
    (void)q;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    as_problem why;
    if (!as_return_precheck(shop, req->idempotency_key, &why)) {
        as_respond_problem(resp, &why);
        return;
    }
    json_t *body = as_json_body(shop, req, resp);
    if (!body) return;
    as_answer_return(shop, &agent, req->idempotency_key, body, req->base_url, resp);
    json_decref(body);
}

/* ---- GET /returns/{id}/label: the page a person prints ---- */

static const as_param_rule label_token_rule = {"token", AS_V_TEXT, 8, 200, NULL};

/* Reached with the signed link's token, or with the agent key of the user
 * whose return it is; anything else is the same 404 as an unknown id. */
void as_api_return_label(as_shop *shop, const as_request *req, const as_route_params *rp,
                         const as_query *q, as_response *resp)
{
    const char *id = rp->v[0];
    as_param v[1];
    as_problem why;
    if (!as_validate_query(shop->mem, &label_token_rule, 1, q, as_today(shop), v, &why)) {
        as_respond_problem(resp, &why);
        return;
    }
    as_agent agent = {0};
    /* a key, when one is sent, must be a valid one (403 otherwise, as everywhere) */
    if (!v[0].present && req->authorization && !as_identify(shop, req, &agent, resp)) return;
    as_return r;
    as_order o;
    as_shop_rc rc =
        as_return_label_open(shop, id, v[0].present ? v[0].str : NULL, agent.user_id, &r, &o, &why);
    if (rc != AS_SHOP_DONE) {
        as_respond_outcome(resp, rc, &why);
        return;
    }
    as_respond_json(resp, 200, NULL);
    resp->html = as_return_label_page(shop->mem, &r, &o);
}
