/* Before the sale (spec 4.5, 4.6): checking whether a part fits a device, and
 * questions about a product answered from measured data. docs/api.md. */
#include <stdlib.h>
#include <string.h>

#include "as_api_internal.h"
#include "as_crypto.h"
#include "as_questions.h"
#include "as_util.h"
#include "as_view.h"

/* ---- POST /compatibility/check (spec 4.5) ---- */

enum { K_SKU, K_DEVICE, K_N };
static const as_field_rule check_rules[K_N] = {
    [K_SKU] = {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    [K_DEVICE] = {{"device", AS_V_TEXT, 1, 100, NULL}, true},
};

void as_api_compat_check(as_ctx *ctx, const as_request *req, as_response *resp)
{
    as_mem *m = ctx->mem;
    as_agent agent;
    if (!as_identify(ctx, req, &agent, resp)) return;
    as_param v[K_N];
    if (!as_body_params(ctx, req, check_rules, K_N, v, resp)) return;
    as_device dev;
    int rc = ctx->store->device_by_slug(ctx->store->h, m, v[K_DEVICE].str, &dev);
    if (rc == AS_EDB) return as_respond_storage_failed(resp);
    if (rc != AS_OK) {
        as_respond_error(resp, 404, "NOT_FOUND", "device",
                         as_printf(m,
                                   "No device with slug '%s'; find one with GET "
                                   "/v1/devices?q=",
                                   v[K_DEVICE].str));
        return;
    }
    as_product p;
    rc = ctx->store->product_by_sku(ctx->store->h, m, v[K_SKU].str, dev.id, &p);
    if (rc == AS_EDB) return as_respond_storage_failed(resp);
    if (rc != AS_OK) {
        as_respond_error(resp, 404, "NOT_FOUND", "sku",
                         as_printf(m, "No product with sku '%s'.", v[K_SKU].str));
        return;
    }
    json_t *evidence = json_array(), *deltas = json_array();
    json_t *ev = p.compat ? as_json_parse_or(p.compat->evidence, json_array()) : json_array();
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e)
    {
        json_array_append_new(evidence, as_view_evidence_item(m, e));
        json_t *pv = json_object_get(e, "part_value"), *dv = json_object_get(e, "device_value");
        if (!json_is_number(pv) || !json_is_number(dv)) continue;
        double d = json_number_value(pv) - json_number_value(dv);
        double tol = json_number_value(json_object_get(e, "tolerance"));
        json_array_append_new(
            deltas,
            json_pack(
                "{s:O, s:O, s:O, s:o, s:o, s:o, s:o, s:b}", "dimension",
                json_object_get(e, "dimension") ? json_object_get(e, "dimension") : json_null(),
                "label", json_object_get(e, "label") ? json_object_get(e, "label") : json_null(),
                "unit", json_object_get(e, "unit") ? json_object_get(e, "unit") : json_null(),
                "part_value", as_json_round(json_number_value(pv), 3), "device_value",
                as_json_round(json_number_value(dv), 3), "delta", as_json_round(d, 3), "tolerance",
                as_json_round(tol, 3), "ok", d <= tol + 1e-9 && -d <= tol + 1e-9));
    }
    json_decref(ev);
    const char *fit = as_fit_status(&p);
    const char *summary =
        p.compat ? as_fit_summary(m, p.compat)
                 : "This part has not been checked against this device: nothing was measured "
                   "or declared.";
    json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:o, s:o, s:o, s:b, s:s}", "sku",
                          p.sku, "name", p.name, "device", "slug", dev.slug, "name", dev.name,
                          "fit_status", fit, "summary", summary, "checked_at",
                          p.compat && p.compat->checked_at ? json_string(p.compat->checked_at)
                                                           : json_null(),
                          "evidence", evidence, "deltas", deltas, "right_item_guarantee",
                          strcmp(fit, "fits") == 0, "verification_status", p.verif_status);
    as_respond_json(resp, 200, o);
}

/* ---- POST /questions (spec 4.6) ---- */

enum { A_SKU, A_QUESTION, A_N };
static const as_field_rule question_rules[A_N] = {
    [A_SKU] = {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    [A_QUESTION] = {{"question", AS_V_PROSE, 5, 400, NULL}, true},
};

void as_api_question(as_ctx *ctx, const as_request *req, as_response *resp)
{
    as_mem *m = ctx->mem;
    as_agent agent;
    if (!as_identify(ctx, req, &agent, resp)) return;
    as_param v[A_N];
    if (!as_body_params(ctx, req, question_rules, A_N, v, resp)) return;
    as_product p;
    int rc = ctx->store->product_by_sku(ctx->store->h, m, v[A_SKU].str, 0, &p);
    if (rc == AS_EDB) return as_respond_storage_failed(resp);
    if (rc != AS_OK) {
        as_respond_error(resp, 404, "NOT_FOUND", "sku",
                         as_printf(m, "No product with sku '%s'.", v[A_SKU].str));
        return;
    }
    json_t *answer = as_question_answer(m, &p, v[A_QUESTION].str);
    char *text = json_dumps(answer, JSON_COMPACT | JSON_REAL_PRECISION(12));
    const char *id = as_random_id(m, "qa_", 20, false);
    const char *at = as_time_format(m, ctx->now);
    /* the user's questions are counted per UTC day, from its midnight */
    int64_t day = ctx->now / 86400;
    const char *since = as_time_format(m, day * 86400);
    int64_t per_day = ctx->cfg->questions_per_day;
    rc = text ? ctx->store->question_insert(ctx->store->h, p.id, id, agent.user_id,
                                            v[A_QUESTION].str, text, at, since, per_day)
              : AS_EDB;
    free(text);
    if (rc != AS_OK) json_decref(answer);
    if (rc == AS_ECONFLICT) {
        int64_t wait = (day + 1) * 86400 - ctx->now;
        as_respond_error(resp, 429, "RATE_LIMITED", NULL,
                         as_printf(m,
                                   "This user has asked %lld questions today, the most a day "
                                   "allows; ask again after %s (in %lld seconds).",
                                   (long long)per_day, as_time_format(m, (day + 1) * 86400),
                                   (long long)wait));
        resp->retry_after = (int)wait;
        return;
    }
    if (rc != AS_OK) return as_respond_storage_failed(resp);
    as_respond_json(resp, 200,
                    json_pack("{s:s, s:s, s:s, s:o, s:s}", "id", id, "sku", p.sku, "question",
                              v[A_QUESTION].str, "answer", answer, "asked_at", at));
}
