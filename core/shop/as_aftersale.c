#include "as_aftersale.h"

#include <string.h>

#include "as_crypto.h"
#include "as_orders.h"
#include "as_util.h"

/* The user's order; another user's is answered as if it did not exist. */
static as_shop_rc own_order(as_shop *shop, const char *user_id, const char *id, const char *field,
                            as_order *o, as_problem *why)
{
    int rc = as_store_order_get(shop->store, shop->mem, id, o);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    if (rc != AS_OK || strcmp(o->user_id, user_id) != 0) {
        as_problem_set(why, 404, "NOT_FOUND", field, as_printf(shop->mem, "No order '%s'.", id));
        return AS_SHOP_REFUSED;
    }
    return AS_SHOP_DONE;
}

/* ---- following an order (spec 4.10) ---- */

as_shop_rc as_order_follow(as_shop *shop, const char *user_id, const char *id, as_order *o,
                           as_problem *why)
{
    as_shop_rc rc = own_order(shop, user_id, id, NULL, o, why);
    if (rc != AS_SHOP_DONE) return rc;
    return as_order_settle(shop, o) == AS_OK ? AS_SHOP_DONE : AS_SHOP_FAILED;
}

/* ---- cancelling (spec 4.11) ---- */

static void not_cancellable(as_shop *shop, const char *id, const as_order *o, as_problem *why)
{
    as_problem_set(why, 409, "ORDER_NOT_CANCELLABLE", NULL,
                   as_printf(shop->mem,
                             "Order %s is %s and can no longer be cancelled; only orders "
                             "awaiting confirmation or placed (not yet shipped) can.%s",
                             id, as_order_state_name(o->status),
                             as_order_allows(o->status, AS_EV_RETURN)
                                 ? " Start a return with POST /v1/returns instead."
                                 : ""));
}

as_shop_rc as_order_cancel(as_shop *shop, const as_agent *agent, const char *id, as_order *o,
                           as_problem *why)
{
    as_mem *m = shop->mem;
    const as_store *s = shop->store;
    as_shop_rc own = own_order(shop, agent->user_id, id, NULL, o, why);
    if (own != AS_SHOP_DONE) return own;
    int rc = as_store_begin(s);
    if (rc == AS_OK) rc = as_store_order_get(s, m, id, o);
    if (rc == AS_OK) rc = as_order_fulfil(shop, o); /* it may have shipped by now */
    bool refused = false;
    if (rc == AS_OK && o->status != AS_OS_CANCELLED) {
        rc = as_order_apply(
            shop, o, AS_EV_CANCEL, shop->now, 0,
            as_printf(m, "Cancelled by %s; budget and stock were released.", agent->name));
        if (rc == AS_ECONFLICT) {
            refused = true;
            rc = AS_OK;
        }
    }
    if (rc == AS_OK) rc = as_store_commit(s); /* what fell due stands even when refused */
    if (rc != AS_OK) {
        as_store_rollback(s);
        return AS_SHOP_FAILED;
    }
    if (refused) {
        not_cancellable(shop, id, o, why);
        return AS_SHOP_REFUSED;
    }
    /* a second cancel sees the same */
    return as_store_order_get(s, m, id, o) == AS_OK ? AS_SHOP_DONE : AS_SHOP_UNREADABLE;
}

/* ---- returning (spec 4.12) ---- */

static const char *carrier_for(const char *country)
{
    if (country && strcmp(country, "BE") == 0) return "bpost";
    if (country && strcmp(country, "DE") == 0) return "DHL";
    return "PostNL";
}

/* Whether a is a better offer than b (NULL): scored higher, or as high and cheaper. */
static bool ranks_above(const as_ranking *a, const as_ranking *b)
{
    if (!b) return true;
    const as_scored *x = &a->ranked[0], *y = &b->ranked[0];
    return x->score > y->score ||
           (x->score == y->score && x->offer->price_cents < y->offer->price_cents);
}

/* The best-ranked in-stock part of the same type that fits the order's device
 * and whose measurements do not contradict its claims; out->p NULL when none. */
static void replacement(as_shop *shop, const as_order *o, as_replacement *out)
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
    for (size_t i = 0; i < n; i++) {
        const as_product *p = &ps[i];
        if (strcmp(p->sku, o->sku) == 0 || as_fit_of(p) != AS_FIT_FITS ||
            p->verif_status == AS_VERIF_CONTRADICTED)
            continue;
        as_ranking r;
        as_rank_offers(m, p, &w, NULL, as_today(shop), &r);
        if (!r.n_ranked || !ranks_above(&r, out->p ? &out->r : NULL)) continue;
        out->p = p;
        out->r = r;
    }
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
static const char *label_url(as_shop *shop, const char *base, const as_return *r)
{
    const char *token = label_token(shop, r);
    return as_printf(shop->mem, "%s/returns/%s/label%s%s", base ? base : "", r->id,
                     token ? "?token=" : "", token ? token : "");
}

/* Why order o cannot be returned now, or false. */
static bool not_returnable(as_shop *shop, const as_order *o, as_problem *why)
{
    as_mem *m = shop->mem;
    if (!as_order_allows(o->status, AS_EV_RETURN)) {
        as_problem_set(
            why, 409, "ORDER_NOT_RETURNABLE", "order_id",
            as_printf(m, "Order %s is %s: only shipped or delivered orders can be returned%s.",
                      o->id, as_order_state_name(o->status),
                      as_order_allows(o->status, AS_EV_CANCEL) ? " (cancel it instead)" : ""));
        return true;
    }
    int64_t delivered_at = as_order_event_at(o, AS_OS_DELIVERED);
    int64_t window_end = delivered_at + shop->cfg->return_window_days * 86400;
    if (o->status == AS_OS_DELIVERED && shop->now > window_end) {
        as_problem_set(why, 422, "RETURN_WINDOW_CLOSED", NULL,
                       as_printf(m,
                                 "The return window of %lld days after delivery closed at %s "
                                 "(delivered %s).",
                                 (long long)shop->cfg->return_window_days,
                                 as_time_format(m, window_end), as_time_format(m, delivered_at)));
        return true;
    }
    return false;
}

/* The right-item guarantee: a part bought for a device it was verified to fit,
 * returned as the wrong item, is refunded at once. */
static bool guaranteed(const as_order *o, const char *reason_code)
{
    bool wrong = strcmp(reason_code, "wrong_item") == 0 || strcmp(reason_code, "does_not_fit") == 0;
    return wrong && o->device_slug && o->guarantee;
}

/* The return of order o for reason_code; refund_now: under the guarantee. */
static as_return return_of(as_shop *shop, const as_order *o, const char *reason_code,
                           const char *note, bool refund_now)
{
    as_mem *m = shop->mem;
    as_return r = {
        .id = as_random_id(m, "ret_", 20, false),
        .order_id = o->id,
        .user_id = o->user_id,
        .reason_code = reason_code,
        .note = note,
        .refund_status = refund_now ? "refunded" : "pending_inspection",
        .refund_cents = refund_now ? o->total_cents : 0,
        .carrier = carrier_for(o->merchant_country),
        .tracking_code = as_random_id(m, "RT", 12, false),
        .created_at = shop->now,
    };
    for (char *c = (char *)r.tracking_code; *c; c++)
        if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
    return r;
}

as_shop_rc as_return_create(as_shop *shop, const char *user_id, const char *order_id,
                            const char *reason_code, const char *note, const char *label_base,
                            as_return_made *out, as_problem *why)
{
    as_mem *m = shop->mem;
    as_order *o = &out->o;
    as_shop_rc own = own_order(shop, user_id, order_id, "order_id", o, why);
    if (own != AS_SHOP_DONE) return own;
    int rc = as_order_fulfil(shop, o);
    if (rc != AS_OK && rc != AS_ECONFLICT) return AS_SHOP_FAILED;
    if (not_returnable(shop, o, why)) return AS_SHOP_REFUSED;
    as_return *r = &out->r;
    bool refunded = guaranteed(o, reason_code);
    *r = return_of(shop, o, reason_code, note, refunded);
    replacement(shop, o, &out->instead);
    r->replacement_sku = out->instead.p ? out->instead.p->sku : NULL;
    const char *event_note =
        refunded
            ? as_printf(m, "Returned (%s): %s refunded at once under the right-item guarantee.",
                        r->reason_code, as_eur_format(m, r->refund_cents))
            : as_printf(m, "Returned (%s): the refund waits for the merchant's inspection.",
                        r->reason_code);
    /* a refund gives the amount back to the month's budget */
    rc = as_order_apply(shop, o, AS_EV_RETURN, shop->now, o->budget_cents - r->refund_cents,
                        event_note);
    if (rc == AS_OK) rc = as_store_return_insert(shop->store, r);
    /* AS_ECONFLICT: returned meanwhile; the caller rolls the transaction back */
    if (rc != AS_OK) return AS_SHOP_FAILED;
    out->label_url = label_url(shop, label_base, r);
    return AS_SHOP_DONE;
}

/* ---- the label ---- */

as_shop_rc as_return_label_open(as_shop *shop, const char *id, const char *token,
                                const char *user_id, as_return *r, as_order *o, as_problem *why)
{
    as_mem *m = shop->mem;
    int rc = as_store_return_get(shop->store, m, id, r);
    if (rc == AS_OK) rc = as_store_order_get(shop->store, m, r->order_id, o);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    const char *expected = rc == AS_OK ? label_token(shop, r) : NULL;
    bool allowed = rc == AS_OK && (token ? expected && as_secure_equal(expected, token)
                                         : user_id && strcmp(user_id, r->user_id) == 0);
    if (allowed) return AS_SHOP_DONE;
    as_problem_set(why, 404, "NOT_FOUND", NULL,
                   "No such return label: open the label link the return gave (its token), or "
                   "send the agent key of the user who returned the order.");
    return AS_SHOP_REFUSED;
}
