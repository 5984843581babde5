/* After the sale (spec 4.10 to 4.12) and before it (4.5, 4.6): following an
 * order, cancelling it, returning it under the right-item guarantee, checking a
 * fit, and questions answered from measured data. docs/orders.md. */
#include <stdlib.h>
#include <string.h>

#include "as_api_internal.h"
#include "as_buy_view.h"
#include "as_crypto.h"
#include "as_orders.h"
#include "as_questions.h"
#include "as_util.h"
#include "as_verify.h"
#include "as_view.h"

/* The caller's order, else 404 (another user's is answered as if it did not exist). */
static bool own_order(as_ctx *ctx, const as_agent *agent, const char *id, as_order *o,
                      as_response *resp)
{
    int rc = as_store_order_get(ctx->store, ctx->mem, id, o);
    if (rc == AS_EDB) {
        as_respond_storage_failed(resp);
        return false;
    }
    if (rc != AS_OK || strcmp(o->user_id, agent->user_id) != 0) {
        as_respond_error(resp, 404, "NOT_FOUND", NULL, as_printf(ctx->mem, "No order '%s'.", id));
        return false;
    }
    return true;
}

/* The order view plus what follows from its timeline. */
static json_t *order_view(as_ctx *ctx, const as_order *o)
{
    json_t *v = as_view_order(ctx->mem, o);
    int64_t shipped = as_order_event_at(o, "shipped"),
            delivered = as_order_event_at(o, "delivered");
    json_object_set_new(v, "shipped_at",
                        shipped ? json_string(as_time_format(ctx->mem, shipped)) : json_null());
    json_object_set_new(v, "delivered_at",
                        delivered ? json_string(as_time_format(ctx->mem, delivered)) : json_null());
    int64_t window_end = delivered ? delivered + ctx->cfg->return_window_days * 86400 : 0;
    bool returnable = (strcmp(o->status, "shipped") == 0 || strcmp(o->status, "delivered") == 0) &&
                      (!window_end || ctx->now <= window_end);
    json_object_set_new(v, "returnable", json_boolean(returnable));
    json_object_set_new(v, "return_window_ends_at",
                        window_end ? json_string(as_time_format(ctx->mem, window_end))
                                   : json_null());
    json_object_set_new(v, "cancellable",
                        json_boolean(strcmp(o->status, "placed") == 0 ||
                                     strcmp(o->status, "awaiting_confirmation") == 0));
    return v;
}

/* ---- GET /orders/{id} (spec 4.10) ---- */

void as_api_order_get(as_ctx *ctx, const as_request *req, const char *id, as_response *resp)
{
    as_agent agent;
    as_order o;
    if (!as_identify(ctx, req, &agent, resp) || !own_order(ctx, &agent, id, &o, resp)) return;
    if (as_order_settle(ctx, &o) != AS_OK) return as_respond_storage_failed(resp);
    as_respond_json(resp, 200, order_view(ctx, &o));
}

/* ---- POST /orders/{id}/cancel (spec 4.11) ---- */

void as_api_order_cancel(as_ctx *ctx, const as_request *req, const char *id, as_response *resp)
{
    as_mem *m = ctx->mem;
    const as_store *s = ctx->store;
    as_agent agent;
    as_order o;
    if (!as_identify(ctx, req, &agent, resp) || !own_order(ctx, &agent, id, &o, resp)) return;
    int rc = as_store_begin(s);
    if (rc == AS_OK) rc = as_store_order_get(s, m, id, &o);
    if (rc == AS_OK) rc = as_order_fulfil(ctx, &o); /* it may have shipped by now */
    bool was_cancelled = rc == AS_OK && strcmp(o.status, "cancelled") == 0;
    const char *refused = NULL;
    if (rc == AS_OK && !was_cancelled) {
        rc = as_order_apply(
            ctx, &o, AS_EV_CANCEL, ctx->now, 0,
            as_printf(m, "Cancelled by %s; budget and stock were released.", agent.name));
        if (rc == AS_ECONFLICT) {
            refused = o.status;
            rc = AS_OK;
        }
    }
    if (rc == AS_OK) rc = as_store_commit(s);
    if (rc != AS_OK) {
        as_store_rollback(s);
        return as_respond_storage_failed(resp);
    }
    if (refused) {
        as_respond_error(
            resp, 409, "ORDER_NOT_CANCELLABLE", NULL,
            as_printf(m,
                      "Order %s is %s and can no longer be cancelled; only orders "
                      "awaiting confirmation or placed (not yet shipped) can.%s",
                      id, refused,
                      strcmp(refused, "shipped") == 0 || strcmp(refused, "delivered") == 0
                          ? " Start a return with POST /v1/returns instead."
                          : ""));
        return;
    }
    if (as_store_order_get(s, m, id, &o) != AS_OK) return as_respond_saved_unreadable(resp);
    as_respond_json(resp, 200, order_view(ctx, &o)); /* a second cancel sees the same */
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
    as_ctx *ctx;
    const as_agent *agent;
    const as_request *req;
    const char *order_id, *reason_code, *note;
} return_job;

static const char *carrier_for(const char *country)
{
    if (country && strcmp(country, "BE") == 0) return "bpost";
    if (country && strcmp(country, "DE") == 0) return "DHL";
    return "PostNL";
}

/* The best-ranked in-stock part of the same type that fits the order's device
 * and whose measurements do not contradict its claims; NULL when none. */
static json_t *replacement(as_ctx *ctx, const as_order *o, const char **sku)
{
    as_mem *m = ctx->mem;
    *sku = NULL;
    if (!o->device_slug) return json_null();
    as_device dev;
    if (as_store_device_by_slug(ctx->store, m, o->device_slug, &dev) != AS_OK)
        return json_null();
    as_search_filter f = {.device_id = dev.id, .part_type = o->part_type};
    as_product *ps;
    size_t n;
    if (as_store_search(ctx->store, m, &f, &ps, &n) != AS_OK) return json_null();
    as_weights w;
    as_weights_default(&w);
    const as_product *best = NULL;
    as_ranking best_r;
    for (size_t i = 0; i < n; i++) {
        const as_product *p = &ps[i];
        if (strcmp(p->sku, o->sku) == 0 || !p->compat ||
            strcmp(p->compat->fit_status, "fits") != 0 ||
            strcmp(p->verif_status, "contradicted") == 0)
            continue;
        as_ranking r;
        as_rank_offers(m, p, &w, NULL, as_today(ctx), &r);
        if (!r.n_ranked) continue;
        if (!best || r.ranked[0].score > best_r.ranked[0].score ||
            (r.ranked[0].score == best_r.ranked[0].score &&
             r.ranked[0].offer->price_cents < best_r.ranked[0].offer->price_cents)) {
            best = p;
            best_r = r;
        }
    }
    if (!best) return json_null();
    *sku = best->sku;
    return as_view_summary(m, best, &best_r, &dev);
}

/* The label page's link is signed: whoever holds it (the person who prints
 * it) may open it without the agent key; nobody can reach a label by its id
 * alone. NULL without a signing key: then only the agent key opens it. */
static const char *label_token(as_ctx *ctx, const as_return *r)
{
    if (!ctx->cfg->signing_key) return NULL;
    const char *msg = as_printf(ctx->mem, "agentshop-return-label:v1:%s:%s", r->id, r->order_id);
    return as_hmac_b64url(ctx->mem, ctx->cfg->signing_key, ctx->cfg->signing_key_len, msg);
}

static json_t *return_view(as_ctx *ctx, const as_request *req, const as_return *r,
                           const as_order *o, json_t *suggestion)
{
    as_mem *m = ctx->mem;
    const char *token = label_token(ctx, r);
    return json_pack("{s:s, s:s, s:s, s:o, s:s, s:I, s:o, s:s, s:{s:s, s:s, s:s}, s:o, s:s, "
                     "s:s}",
                     "id", r->id, "order_id", r->order_id, "reason_code", r->reason_code, "note",
                     r->note ? json_string(r->note) : json_null(), "refund_status",
                     r->refund_status, "refund_cents", (json_int_t)r->refund_cents, "refund_eur",
                     as_json_round((double)r->refund_cents / 100.0, 2), "currency", "EUR", "label",
                     "carrier", r->carrier, "tracking_code", r->tracking_code, "url",
                     as_printf(m, "%s/returns/%s/label%s%s", req->base_url ? req->base_url : "",
                               r->id, token ? "?token=" : "", token ? token : ""),
                     "suggested_replacement", suggestion, "order_status", o->status, "created_at",
                     as_time_format(m, r->created_at));
}

static int make_return(void *job, as_response *resp)
{
    return_job *j = job;
    as_ctx *ctx = j->ctx;
    as_mem *m = ctx->mem;
    const as_store *s = ctx->store;
    as_order o;
    int rc = as_store_order_get(s, m, j->order_id, &o);
    if (rc == AS_EDB) return rc;
    if (rc != AS_OK || strcmp(o.user_id, j->agent->user_id) != 0) {
        as_respond_error(resp, 404, "NOT_FOUND", "order_id",
                         as_printf(m, "No order '%s'.", j->order_id));
        return AS_OK;
    }
    if ((rc = as_order_fulfil(ctx, &o)) != AS_OK && rc != AS_ECONFLICT) return rc;
    bool shipped = strcmp(o.status, "shipped") == 0, delivered = strcmp(o.status, "delivered") == 0;
    if (!shipped && !delivered) {
        as_respond_error(
            resp, 409, "ORDER_NOT_RETURNABLE", "order_id",
            as_printf(m, "Order %s is %s: only shipped or delivered orders can be returned%s.",
                      o.id, o.status,
                      strcmp(o.status, "placed") == 0 ||
                              strcmp(o.status, "awaiting_confirmation") == 0
                          ? " (cancel it instead)"
                          : ""));
        return AS_OK;
    }
    int64_t delivered_at = as_order_event_at(&o, "delivered");
    int64_t window_end = delivered_at + ctx->cfg->return_window_days * 86400;
    if (delivered && ctx->now > window_end) {
        as_respond_error(resp, 422, "RETURN_WINDOW_CLOSED", NULL,
                         as_printf(m,
                                   "The return window of %lld days after delivery closed at %s "
                                   "(delivered %s).",
                                   (long long)ctx->cfg->return_window_days,
                                   as_time_format(m, window_end), as_time_format(m, delivered_at)));
        return AS_OK;
    }
    /* The right-item guarantee: a part bought for a device it was verified to fit. */
    bool wrong =
        strcmp(j->reason_code, "wrong_item") == 0 || strcmp(j->reason_code, "does_not_fit") == 0;
    bool guaranteed = wrong && o.device_slug && o.guarantee;
    as_return r = {
        .id = as_random_id(m, "ret_", 20, false),
        .order_id = o.id,
        .user_id = o.user_id,
        .reason_code = j->reason_code,
        .note = j->note,
        .refund_status = guaranteed ? "refunded" : "pending_inspection",
        .refund_cents = guaranteed ? o.total_cents : 0,
        .carrier = carrier_for(o.merchant_country),
        .tracking_code = as_random_id(m, "RT", 12, false),
        .created_at = ctx->now,
    };
    for (char *c = (char *)r.tracking_code; *c; c++)
        if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
    json_t *suggestion = replacement(ctx, &o, &r.replacement_sku);
    const char *note =
        guaranteed
            ? as_printf(m, "Returned (%s): %s refunded at once under the right-item guarantee.",
                        r.reason_code, as_eur_format(m, r.refund_cents))
            : as_printf(m, "Returned (%s): the refund waits for the merchant's inspection.",
                        r.reason_code);
    /* a refund gives the amount back to the month's budget */
    rc = as_order_apply(ctx, &o, AS_EV_RETURN, ctx->now, o.budget_cents - r.refund_cents, note);
    if (rc == AS_OK) rc = as_store_return_insert(s, &r);
    if (rc == AS_ECONFLICT) { /* returned meanwhile: the transaction is rolled back */
        json_decref(suggestion);
        return AS_EDB;
    }
    if (rc != AS_OK) {
        json_decref(suggestion);
        return rc;
    }
    as_respond_json(resp, 201, return_view(ctx, j->req, &r, &o, suggestion));
    return AS_OK;
}

void as_api_return_create(as_ctx *ctx, const as_request *req, as_response *resp)
{
    as_agent agent;
    if (!as_identify(ctx, req, &agent, resp)) return;
    if (!as_idem_key_check(req, "POST /returns", resp)) return;
    as_param v[R_N];
    const char *hash = as_body_params(ctx, req, return_rules, R_N, v, resp);
    if (!hash) return;
    return_job job = {ctx,
                      &agent,
                      req,
                      v[R_ORDER].str,
                      v[R_REASON].str,
                      v[R_NOTE].present && *v[R_NOTE].str ? v[R_NOTE].str : NULL};
    as_idem_run(ctx, &agent, "returns", req->idempotency_key, hash, make_return, &job, resp);
}

/* ---- GET /returns/{id}/label: the page a person prints ---- */

static const as_param_rule label_token_rule = {"token", AS_V_TEXT, 8, 200, NULL};

/* Reached with the signed link's token, or with the agent key of the user
 * whose return it is; anything else is the same 404 as an unknown id. */
void as_api_return_label(as_ctx *ctx, const as_request *req, const char *id, const as_query *q,
                         as_response *resp)
{
    as_mem *m = ctx->mem;
    as_param v[1];
    as_problem prob;
    if (!as_validate_query(m, &label_token_rule, 1, q, as_today(ctx), v, &prob))
        return as_respond_problem(resp, &prob);
    as_agent agent = {0};
    /* a key, when one is sent, must be a valid one (403 otherwise, as everywhere) */
    if (!v[0].present && req->authorization && !as_identify(ctx, req, &agent, resp)) return;
    as_return r;
    as_order o;
    int rc = as_store_return_get(ctx->store, m, id, &r);
    if (rc == AS_OK) rc = as_store_order_get(ctx->store, m, r.order_id, &o);
    if (rc == AS_EDB) return as_respond_storage_failed(resp);
    const char *expected = rc == AS_OK ? label_token(ctx, &r) : NULL;
    bool allowed = rc == AS_OK && (v[0].present ? expected && as_secure_equal(expected, v[0].str)
                                                : agent.user_id &&
                                                      strcmp(agent.user_id, r.user_id) == 0);
    if (!allowed) {
        as_respond_error(resp, 404, "NOT_FOUND", NULL,
                         "No such return label: open the label link the return gave (its "
                         "token), or send the agent key of the user who returned the order.");
        return;
    }
#define E(s) as_html_escape(m, s)
    as_respond_json(resp, 200, NULL);
    resp->html = as_printf(
        m,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Return label "
        "%s</title></head>\n<body>\n<main>\n<h1>Return label</h1>\n<dl>\n<dt>Carrier</dt><dd "
        "id=\"carrier\">%s</dd>\n<dt>Tracking code</dt><dd id=\"tracking\">%s</dd>\n"
        "<dt>Return to</dt><dd>%s</dd>\n<dt>Order</dt><dd>%s: %s &times; %lld</dd>\n"
        "<dt>Reason</dt><dd>%s</dd>\n</dl>\n<p>Print this page, attach it to the parcel and hand "
        "it to %s.</p>\n</main>\n</body>\n</html>\n",
        E(r.tracking_code), E(r.carrier), E(r.tracking_code), E(o.merchant_name), E(o.id),
        E(o.product_name), (long long)o.quantity, E(r.reason_code), E(r.carrier));
#undef E
}

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
    int rc = as_store_device_by_slug(ctx->store, m, v[K_DEVICE].str, &dev);
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
    rc = as_store_product_by_sku(ctx->store, m, v[K_SKU].str, dev.id, &p);
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
    int rc = as_store_product_by_sku(ctx->store, m, v[A_SKU].str, 0, &p);
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
    rc = text ? as_store_question_insert(ctx->store, p.id, id, agent.user_id,
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
