/* After the sale (spec 4.10 to 4.12): following an order, cancelling it, and
 * returning it under the right-item guarantee. docs/orders.md. */
#include <stdlib.h>
#include <string.h>

#include "as_api_internal.h"
#include "as_handlers.h"
#include "as_buy_view.h"
#include "as_person_pages.h"
#include "as_crypto.h"
#include "as_orders.h"
#include "as_util.h"
#include "as_verify.h"
#include "as_view.h"

/* The caller's order, else 404 (another user's is answered as if it did not exist). */
static bool own_order(as_shop *shop, const as_agent *agent, const char *id, as_order *o,
                      as_response *resp)
{
    int rc = as_store_order_get(shop->store, shop->mem, id, o);
    if (rc == AS_EDB) {
        as_respond_storage_failed(resp);
        return false;
    }
    if (rc != AS_OK || strcmp(o->user_id, agent->user_id) != 0) {
        as_respond_error(resp, 404, "NOT_FOUND", NULL, as_printf(shop->mem, "No order '%s'.", id));
        return false;
    }
    return true;
}

/* ---- GET /orders/{id} (spec 4.10) ---- */

void as_api_order_get(as_shop *shop, const as_request *req, const char *id, as_response *resp)
{
    as_agent agent;
    as_order o;
    if (!as_identify(shop, req, &agent, resp) || !own_order(shop, &agent, id, &o, resp)) return;
    if (as_order_settle(shop, &o) != AS_OK) {
        as_respond_storage_failed(resp);
        return;
    }
    as_respond_json(resp, 200,
                    as_view_order_followed(shop->mem, &o, shop->now, shop->cfg->return_window_days));
}

/* ---- POST /orders/{id}/cancel (spec 4.11) ---- */

void as_api_order_cancel(as_shop *shop, const as_request *req, const char *id, as_response *resp)
{
    as_mem *m = shop->mem;
    const as_store *s = shop->store;
    as_agent agent;
    as_order o;
    if (!as_identify(shop, req, &agent, resp) || !own_order(shop, &agent, id, &o, resp)) return;
    int rc = as_store_begin(s);
    if (rc == AS_OK) rc = as_store_order_get(s, m, id, &o);
    if (rc == AS_OK) rc = as_order_fulfil(shop, &o); /* it may have shipped by now */
    bool was_cancelled = rc == AS_OK && o.status == AS_OS_CANCELLED;
    bool refused = false;
    if (rc == AS_OK && !was_cancelled) {
        rc = as_order_apply(
            shop, &o, AS_EV_CANCEL, shop->now, 0,
            as_printf(m, "Cancelled by %s; budget and stock were released.", agent.name));
        if (rc == AS_ECONFLICT) {
            refused = true;
            rc = AS_OK;
        }
    }
    if (rc == AS_OK) rc = as_store_commit(s);
    if (rc != AS_OK) {
        as_store_rollback(s);
        as_respond_storage_failed(resp);
        return;
    }
    if (refused) {
        as_respond_error(resp, 409, "ORDER_NOT_CANCELLABLE", NULL,
                         as_printf(m,
                                   "Order %s is %s and can no longer be cancelled; only orders "
                                   "awaiting confirmation or placed (not yet shipped) can.%s",
                                   id, as_order_state_name(o.status),
                                   as_order_allows(o.status, AS_EV_RETURN)
                                       ? " Start a return with POST /v1/returns instead."
                                       : ""));
        return;
    }
    if (as_store_order_get(s, m, id, &o) != AS_OK) {
        as_respond_saved_unreadable(resp);
        return;
    }
    /* a second cancel sees the same */
    as_respond_json(resp, 200,
                    as_view_order_followed(m, &o, shop->now, shop->cfg->return_window_days));
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
    const as_request *req;
    const char *order_id, *reason_code, *note;
} return_job;

static const char *carrier_for(const char *country)
{
    if (country && strcmp(country, "BE") == 0) return "bpost";
    if (country && strcmp(country, "DE") == 0) return "DHL";
    return "PostNL";
}

/* A part offered instead of the one returned, with its ranking and the
 * order's device. */
typedef struct replacement_offer {
    const as_product *p; /* NULL: none */
    as_ranking r;
    as_device dev;
} replacement_offer;

/* The best-ranked in-stock part of the same type that fits the order's device
 * and whose measurements do not contradict its claims; out->p NULL when none. */
static void replacement(as_shop *shop, const as_order *o, replacement_offer *out)
{
    as_mem *m = shop->mem;
    out->p = NULL;
    if (!o->device_slug) return;
    if (as_store_device_by_slug(shop->store, m, o->device_slug, &out->dev) != AS_OK) return;
    as_search_filter f = {.device_id = out->dev.id, .part_type = o->part_type};
    as_product *ps;
    size_t n;
    if (as_store_search(shop->store, m, &f, &ps, &n) != AS_OK) return;
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
        as_rank_offers(m, p, &w, NULL, as_today(shop), &r);
        if (!r.n_ranked) continue;
        if (!best || r.ranked[0].score > best_r.ranked[0].score ||
            (r.ranked[0].score == best_r.ranked[0].score &&
             r.ranked[0].offer->price_cents < best_r.ranked[0].offer->price_cents)) {
            best = p;
            best_r = r;
        }
    }
    if (!best) return;
    out->p = best;
    out->r = best_r;
}

/* The label page's link is signed: whoever holds it (the person who prints
 * it) may open it without the agent key; nobody can reach a label by its id
 * alone. NULL without a signing key: then only the agent key opens it. */
static const char *label_token(as_shop *shop, const as_return *r)
{
    if (!shop->cfg->signing_key) return NULL;
    const char *msg = as_printf(shop->mem, "agentshop-return-label:v1:%s:%s", r->id, r->order_id);
    return as_hmac_b64url(shop->mem, shop->cfg->signing_key, shop->cfg->signing_key_len, msg);
}

/* Where the label page is: with its token when there is one. */
static const char *label_url(as_shop *shop, const as_request *req, const as_return *r)
{
    const char *token = label_token(shop, r);
    return as_printf(shop->mem, "%s/returns/%s/label%s%s", req->base_url ? req->base_url : "", r->id,
                     token ? "?token=" : "", token ? token : "");
}

static int make_return(void *job, as_response *resp)
{
    return_job *j = job;
    as_shop *shop = j->shop;
    as_mem *m = shop->mem;
    const as_store *s = shop->store;
    as_order o;
    int rc = as_store_order_get(s, m, j->order_id, &o);
    if (rc == AS_EDB) return rc;
    if (rc != AS_OK || strcmp(o.user_id, j->agent->user_id) != 0) {
        as_respond_error(resp, 404, "NOT_FOUND", "order_id",
                         as_printf(m, "No order '%s'.", j->order_id));
        return AS_OK;
    }
    if ((rc = as_order_fulfil(shop, &o)) != AS_OK && rc != AS_ECONFLICT) return rc;
    if (!as_order_allows(o.status, AS_EV_RETURN)) {
        as_respond_error(
            resp, 409, "ORDER_NOT_RETURNABLE", "order_id",
            as_printf(m, "Order %s is %s: only shipped or delivered orders can be returned%s.",
                      o.id, as_order_state_name(o.status),
                      as_order_allows(o.status, AS_EV_CANCEL) ? " (cancel it instead)" : ""));
        return AS_OK;
    }
    int64_t delivered_at = as_order_event_at(&o, AS_OS_DELIVERED);
    int64_t window_end = delivered_at + shop->cfg->return_window_days * 86400;
    if (o.status == AS_OS_DELIVERED && shop->now > window_end) {
        as_respond_error(resp, 422, "RETURN_WINDOW_CLOSED", NULL,
                         as_printf(m,
                                   "The return window of %lld days after delivery closed at %s "
                                   "(delivered %s).",
                                   (long long)shop->cfg->return_window_days,
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
        .created_at = shop->now,
    };
    for (char *c = (char *)r.tracking_code; *c; c++)
        if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
    replacement_offer instead;
    replacement(shop, &o, &instead);
    r.replacement_sku = instead.p ? instead.p->sku : NULL;
    const char *note =
        guaranteed
            ? as_printf(m, "Returned (%s): %s refunded at once under the right-item guarantee.",
                        r.reason_code, as_eur_format(m, r.refund_cents))
            : as_printf(m, "Returned (%s): the refund waits for the merchant's inspection.",
                        r.reason_code);
    /* a refund gives the amount back to the month's budget */
    rc = as_order_apply(shop, &o, AS_EV_RETURN, shop->now, o.budget_cents - r.refund_cents, note);
    if (rc == AS_OK) rc = as_store_return_insert(s, &r);
    if (rc == AS_ECONFLICT) return AS_EDB; /* returned meanwhile: the transaction is rolled back */
    if (rc != AS_OK) return rc;
    as_respond_json(
        resp, 201,
        as_view_return(m, &r, &o, label_url(shop, j->req, &r), instead.p, &instead.r, &instead.dev));
    return AS_OK;
}

void as_api_return_create(as_shop *shop, const as_request *req, as_response *resp)
{
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    if (!as_idem_key_check(req, "POST /returns", resp)) return;
    as_param v[R_N];
    const char *hash = as_body_params(shop, req, return_rules, R_N, v, resp);
    if (!hash) return;
    return_job job = {shop,
                      &agent,
                      req,
                      v[R_ORDER].str,
                      v[R_REASON].str,
                      v[R_NOTE].present && *v[R_NOTE].str ? v[R_NOTE].str : NULL};
    as_idem_run(shop, &agent, "returns", req->idempotency_key, hash, make_return, &job, resp);
}

/* ---- GET /returns/{id}/label: the page a person prints ---- */

static const as_param_rule label_token_rule = {"token", AS_V_TEXT, 8, 200, NULL};

/* Reached with the signed link's token, or with the agent key of the user
 * whose return it is; anything else is the same 404 as an unknown id. */
void as_api_return_label(as_shop *shop, const as_request *req, const char *id, const as_query *q,
                         as_response *resp)
{
    as_mem *m = shop->mem;
    as_param v[1];
    as_problem prob;
    if (!as_validate_query(m, &label_token_rule, 1, q, as_today(shop), v, &prob)) {
        as_respond_problem(resp, &prob);
        return;
    }
    as_agent agent = {0};
    /* a key, when one is sent, must be a valid one (403 otherwise, as everywhere) */
    if (!v[0].present && req->authorization && !as_identify(shop, req, &agent, resp)) return;
    as_return r;
    as_order o;
    int rc = as_store_return_get(shop->store, m, id, &r);
    if (rc == AS_OK) rc = as_store_order_get(shop->store, m, r.order_id, &o);
    if (rc == AS_EDB) {
        as_respond_storage_failed(resp);
        return;
    }
    const char *expected = rc == AS_OK ? label_token(shop, &r) : NULL;
    bool allowed = rc == AS_OK && (v[0].present ? expected && as_secure_equal(expected, v[0].str)
                                                : agent.user_id &&
                                                      strcmp(agent.user_id, r.user_id) == 0);
    if (!allowed) {
        as_respond_error(resp, 404, "NOT_FOUND", NULL,
                         "No such return label: open the label link the return gave (its "
                         "token), or send the agent key of the user who returned the order.");
        return;
    }
    as_respond_json(resp, 200, NULL);
    resp->html = as_return_label_page(m, &r, &o);
}
