/* After the sale (spec 4.10 to 4.12): following an order, cancelling it, and
 * returning it under the right-item guarantee, over the shop's operations
 * (core/shop/as_aftersale.h). docs/orders.md. */
#include <string.h>

#include "as_aftersale.h"
#include "as_api_internal.h"
#include "as_handlers.h"
#include "as_buy_view.h"
#include "as_person_pages.h"

/* The answer of an operation that did not do it. */
static void respond_not_done(as_response *resp, as_shop_rc rc, const as_problem *why)
{
    if (rc == AS_SHOP_REFUSED)
        as_respond_problem(resp, why);
    else if (rc == AS_SHOP_UNREADABLE)
        as_respond_saved_unreadable(resp);
    else
        as_respond_storage_failed(resp);
}

/* The order as the agent follows it: 200. */
static void respond_followed(as_shop *shop, const as_order *o, as_response *resp)
{
    as_respond_json(resp, 200,
                    as_view_order_followed(shop->mem, o, shop->now, shop->cfg->return_window_days));
}

/* ---- GET /orders/{id} (spec 4.10) ---- */

void as_api_order_get(as_shop *shop, const as_request *req, const as_route_params *rp,
                      const as_query *q, as_response *resp)
{
    (void)q;
    const char *id = rp->v[0];
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    as_order o;
    as_problem why;
    as_shop_rc rc = as_order_follow(shop, agent.user_id, id, &o, &why);
    if (rc != AS_SHOP_DONE) {
        respond_not_done(resp, rc, &why);
        return;
    }
    respond_followed(shop, &o, resp);
}

/* ---- POST /orders/{id}/cancel (spec 4.11) ---- */

void as_api_order_cancel(as_shop *shop, const as_request *req, const as_route_params *rp,
                         const as_query *q, as_response *resp)
{
    (void)q;
    const char *id = rp->v[0];
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    as_order o;
    as_problem why;
    as_shop_rc rc = as_order_cancel(shop, &agent, id, &o, &why);
    if (rc != AS_SHOP_DONE) {
        respond_not_done(resp, rc, &why);
        return;
    }
    respond_followed(shop, &o, resp);
}

/* ---- POST /returns (spec 4.12) ---- */

enum { R_ORDER, R_REASON, R_NOTE, R_N };
static const char *const reason_codes[] = {"wrong_item",         "does_not_fit",     "defective",
                                           "damaged_in_transit", "no_longer_needed", NULL};
static const as_field_rule return_rules[R_N] = {
    [R_ORDER] = {{"order_id", AS_V_SLUG, 3, 40, NULL}, true},
    [R_REASON] = {{"reason_code", AS_V_ENUM, 1, 40, reason_codes}, true},
    [R_NOTE] = {{"note", AS_V_PROSE, 0, 400, NULL}, false},
};

typedef struct return_job {
    as_shop *shop;
    const as_agent *agent;
    const char *base_url;
    const char *order_id, *reason_code, *note;
} return_job;

/* as_idem_run's work: the return, answered 201 or with its refusal (both
 * kept under the key); AS_EDB rolls everything back. */
static int make_return(void *job, as_response *resp)
{
    return_job *j = job;
    as_return_made made;
    as_problem why;
    as_shop_rc rc = as_return_create(j->shop, j->agent->user_id, j->order_id, j->reason_code,
                                     j->note, j->base_url, &made, &why);
    if (rc == AS_SHOP_REFUSED) {
        as_respond_problem(resp, &why);
        return AS_OK;
    }
    if (rc != AS_SHOP_DONE) return AS_EDB;
    as_respond_json(resp, 201,
                    as_view_return(j->shop->mem, &made.r, &made.o, made.label_url, made.instead.p,
                                   &made.instead.r, &made.instead.dev));
    return AS_OK;
}

void as_api_return_create(as_shop *shop, const as_request *req, const as_route_params *rp,
                          const as_query *q, as_response *resp)
{
    (void)rp;
    (void)q;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    if (!as_idem_key_check(req, "POST /returns", resp)) return;
    as_param v[R_N];
    const char *hash = as_body_params(shop, req, return_rules, R_N, v, resp);
    if (!hash) return;
    return_job job = {shop,
                      &agent,
                      req->base_url,
                      v[R_ORDER].str,
                      v[R_REASON].str,
                      v[R_NOTE].present && *v[R_NOTE].str ? v[R_NOTE].str : NULL};
    as_idem_run(shop, &agent, "returns", req->idempotency_key, hash, make_return, &job, resp);
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
        respond_not_done(resp, rc, &why);
        return;
    }
    as_respond_json(resp, 200, NULL);
    resp->html = as_return_label_page(shop->mem, &r, &o);
}
