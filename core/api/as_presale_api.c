/* Before the sale (spec 4.5, 4.6): checking whether a part fits a device, and
 * questions about a product answered from measured data, over the shop's
 * operations (core/shop/as_presale.h). docs/api.md. */
#include "as_api_internal.h"
#include "as_handlers.h"
#include "as_presale.h"
#include "as_presale_view.h"

/* ---- POST /compatibility/check (spec 4.5) ---- */

enum { K_SKU, K_DEVICE, K_N };
static const as_field_rule check_rules[K_N] = {
    [K_SKU] = {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    [K_DEVICE] = {{"device", AS_V_TEXT, 1, 100, NULL}, true},
};

void as_api_compat_check(as_shop *shop, const as_request *req, const as_route_params *rp,
                         const as_query *q, as_response *resp)
{
    (void)rp;
    (void)q;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    as_param v[K_N];
    if (!as_body_params(shop, req, check_rules, K_N, v, resp)) return;
    as_product p;
    as_device dev;
    as_problem why;
    as_shop_rc rc = as_fit_check(shop, v[K_SKU].str, v[K_DEVICE].str, &p, &dev, &why);
    if (rc == AS_SHOP_REFUSED)
        as_respond_problem(resp, &why);
    else if (rc != AS_SHOP_DONE)
        as_respond_storage_failed(resp);
    else
        as_respond_json(resp, 200, as_view_fit_check(shop->mem, &p, &dev));
}

/* ---- POST /questions (spec 4.6) ---- */

enum { A_SKU, A_QUESTION, A_N };
static const as_field_rule question_rules[A_N] = {
    [A_SKU] = {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    [A_QUESTION] = {{"question", AS_V_PROSE, 5, 400, NULL}, true},
};

void as_api_question(as_shop *shop, const as_request *req, const as_route_params *rp,
                     const as_query *q, as_response *resp)
{
    (void)rp;
    (void)q;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    as_param v[A_N];
    if (!as_body_params(shop, req, question_rules, A_N, v, resp)) return;
    as_answered a;
    as_problem why;
    as_shop_rc rc = as_question_ask(shop, agent.user_id, v[A_SKU].str, v[A_QUESTION].str, &a, &why);
    if (rc == AS_SHOP_REFUSED) {
        as_respond_problem(resp, &why);
        if (why.status == 429) resp->retry_after = (int)a.retry_after;
    } else if (rc != AS_SHOP_DONE) {
        as_respond_storage_failed(resp);
    } else {
        as_respond_json(resp, 200, as_view_question(a.id, a.sku, a.question, a.answer, a.asked_at));
    }
}
