/* Before the sale (spec 4.5, 4.6): checking whether a part fits a device, and
 * questions about a product answered from measured data. docs/api.md. */
#include <stdlib.h>
#include <string.h>

#include "as_api_internal.h"
#include "as_handlers.h"
#include "as_crypto.h"
#include "as_presale_view.h"
#include "as_questions.h"
#include "as_util.h"
#include "as_view.h"

/* ---- POST /compatibility/check (spec 4.5) ---- */

enum { K_SKU, K_DEVICE, K_N };
static const as_field_rule check_rules[K_N] = {
    [K_SKU] = {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    [K_DEVICE] = {{"device", AS_V_TEXT, 1, 100, NULL}, true},
};

void as_api_compat_check(as_shop *shop, const as_request *req, as_response *resp)
{
    as_mem *m = shop->mem;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    as_param v[K_N];
    if (!as_body_params(shop, req, check_rules, K_N, v, resp)) return;
    as_device dev;
    int rc = as_store_device_by_slug(shop->store, m, v[K_DEVICE].str, &dev);
    if (rc == AS_EDB) {
        as_respond_storage_failed(resp);
        return;
    }
    if (rc != AS_OK) {
        as_respond_error(resp, 404, "NOT_FOUND", "device",
                         as_printf(m,
                                   "No device with slug '%s'; find one with GET "
                                   "/v1/devices?q=",
                                   v[K_DEVICE].str));
        return;
    }
    as_product p;
    rc = as_store_product_by_sku(shop->store, m, v[K_SKU].str, dev.id, &p);
    if (rc == AS_EDB) {
        as_respond_storage_failed(resp);
        return;
    }
    if (rc != AS_OK) {
        as_respond_error(resp, 404, "NOT_FOUND", "sku",
                         as_printf(m, "No product with sku '%s'.", v[K_SKU].str));
        return;
    }
    as_respond_json(resp, 200, as_view_fit_check(m, &p, &dev));
}

/* ---- POST /questions (spec 4.6) ---- */

enum { A_SKU, A_QUESTION, A_N };
static const as_field_rule question_rules[A_N] = {
    [A_SKU] = {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    [A_QUESTION] = {{"question", AS_V_PROSE, 5, 400, NULL}, true},
};

void as_api_question(as_shop *shop, const as_request *req, as_response *resp)
{
    as_mem *m = shop->mem;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    as_param v[A_N];
    if (!as_body_params(shop, req, question_rules, A_N, v, resp)) return;
    as_product p;
    int rc = as_store_product_by_sku(shop->store, m, v[A_SKU].str, 0, &p);
    if (rc == AS_EDB) {
        as_respond_storage_failed(resp);
        return;
    }
    if (rc != AS_OK) {
        as_respond_error(resp, 404, "NOT_FOUND", "sku",
                         as_printf(m, "No product with sku '%s'.", v[A_SKU].str));
        return;
    }
    json_t *answer = as_question_answer(m, &p, v[A_QUESTION].str);
    char *text = json_dumps(answer, JSON_COMPACT | JSON_REAL_PRECISION(12));
    const char *id = as_random_id(m, "qa_", 20, false);
    const char *at = as_time_format(m, shop->now);
    /* the user's questions are counted per UTC day, from its midnight */
    int64_t day = shop->now / 86400;
    const char *since = as_time_format(m, day * 86400);
    int64_t per_day = shop->cfg->questions_per_day;
    rc = text ? as_store_question_insert(shop->store, p.id, id, agent.user_id,
                                            v[A_QUESTION].str, text, at, since, per_day)
              : AS_EDB;
    free(text);
    if (rc != AS_OK) json_decref(answer);
    if (rc == AS_ECONFLICT) {
        int64_t wait = (day + 1) * 86400 - shop->now;
        as_respond_error(resp, 429, "RATE_LIMITED", NULL,
                         as_printf(m,
                                   "This user has asked %lld questions today, the most a day "
                                   "allows; ask again after %s (in %lld seconds).",
                                   (long long)per_day, as_time_format(m, (day + 1) * 86400),
                                   (long long)wait));
        resp->retry_after = (int)wait;
        return;
    }
    if (rc != AS_OK) {
        as_respond_storage_failed(resp);
        return;
    }
    as_respond_json(resp, 200, as_view_question(id, p.sku, v[A_QUESTION].str, answer, at));
}
