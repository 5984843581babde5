/* Buying: the agent behind a key (spec 5), the mandate (4.7), quotes (4.8),
 * orders (4.9), and releasing what expired confirmations held.
 * docs/buying.md. */
#include <string.h>

#include "as_buying_internal.h"
#include "as_crypto.h"
#include "as_mandate.h"
#include "as_orders.h"
#include "as_util.h"
#include "as_view.h"

static const char *month_of(as_shop *shop)
{
    return as_strndup(shop->mem, as_date_format(shop->mem, as_today(shop)), 7);
}

const char *as_confirmation_token(as_shop *shop, const as_confirmation *c)
{
    const char *msg = as_printf(shop->mem, "agentshop-confirmation:v1:%s:%s:%lld", c->id,
                                c->order_id, (long long)c->expires_at);
    return as_hmac_b64url(shop->mem, shop->cfg->signing_key, shop->cfg->signing_key_len, msg);
}

/* ---- the agent (spec 5) ---- */

as_shop_rc as_agent_by_key(as_shop *shop, const char *key, as_agent *agent, as_problem *why)
{
    const char *hash = as_sha256_hex(shop->mem, key, strlen(key));
    as_key_row row;
    int rc = as_store_key_by_hash(shop->store, shop->mem, hash, &row);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    if (rc != AS_OK || !as_secure_equal(row.key_hash, hash) || row.revoked_at)
        return buying_refuse(why, 403, "AGENT_UNIDENTIFIED", NULL,
                             "The agent key is not accepted (unknown or revoked).");
    agent->key_id = row.id;
    agent->user_id = row.user_id;
    return AS_SHOP_DONE;
}

/* ---- releasing what expired confirmations held ---- */

int as_order_expire(as_shop *shop, as_order *o)
{
    int rc = as_order_apply(shop, o, AS_EV_EXPIRE, shop->now, 0,
                            "Nobody approved the order before the link expired; budget and "
                            "stock were released.");
    return rc == AS_ECONFLICT ? AS_OK : rc; /* someone else moved it first */
}

static int release_expired(as_shop *shop, const char *mandate_id)
{
    as_order *os;
    size_t n;
    int rc = as_store_orders_expired(shop->store, shop->mem, mandate_id, shop->now, &os, &n);
    for (size_t i = 0; rc == AS_OK && i < n; i++)
        rc = as_order_expire(shop, &os[i]);
    return rc;
}

/* Outside a transaction: writes (in one of its own) only when something
 * expired, so that a read does not queue behind writers for nothing. */
static int release_expired_if_due(as_shop *shop, const char *mandate_id)
{
    const as_store *s = shop->store;
    as_order *due;
    size_t n_due = 0;
    int rc = as_store_orders_expired(s, shop->mem, mandate_id, shop->now, &due, &n_due);
    if (rc == AS_OK && n_due && (rc = as_store_begin(s)) == AS_OK) {
        rc = release_expired(shop, mandate_id);
        if (rc == AS_OK) rc = as_store_commit(s);
        /* a failed commit leaves the transaction open (SQLite's busy) */
        if (rc != AS_OK) as_store_rollback(s);
    }
    return rc;
}

int as_sweep_expired(as_shop *shop)
{
    const as_store *s = shop->store;
    as_order *os;
    size_t n;
    /* The look outside a transaction: nearly always nothing is due, and then
     * the sweep takes no write lock. */
    int rc = as_store_orders_expired(s, shop->mem, NULL, shop->now, &os, &n);
    if (rc != AS_OK || n == 0) return rc == AS_OK ? 0 : -1;
    if ((rc = as_store_begin(s)) != AS_OK) return -1;
    /* read again under the lock: another process may have swept them */
    rc = as_store_orders_expired(s, shop->mem, NULL, shop->now, &os, &n);
    for (size_t i = 0; rc == AS_OK && i < n; i++)
        rc = as_order_expire(shop, &os[i]);
    if (rc == AS_OK) rc = as_store_commit(s);
    if (rc != AS_OK) {
        as_store_rollback(s);
        return -1;
    }
    if (n)
        as_log(shop, AS_LOG_INFO,
               "expired %zu order(s) whose confirmation ran out; their budget and stock were "
               "released",
               n);
    return (int)n;
}

/* ---- the mandate (spec 4.7) ---- */

static as_mandate_state mandate_state(as_shop *shop, const as_mandate *md)
{
    int64_t last;
    if (md->status != AS_MS_ACTIVE) return md->status;
    if (md->valid_until && as_date_parse(md->valid_until, &last) && as_today(shop) > last)
        return AS_MS_EXPIRED;
    return AS_MS_ACTIVE;
}

as_shop_rc as_mandate_current(as_shop *shop, const char *user_id, as_mandate_month *out,
                              as_problem *why)
{
    const as_store *s = shop->store;
    as_mandate *md = &out->mandate;
    int rc = as_store_mandate_current(s, shop->mem, user_id, false, md);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    if (rc != AS_OK)
        return buying_refuse(why, 403, "MANDATE_INVALID", NULL,
                             "There is no active mandate for the user this agent acts for.");
    out->state = mandate_state(shop, md);
    if (out->state != AS_MS_ACTIVE)
        return buying_refuse(
            why, 403, "MANDATE_INVALID", NULL,
            as_printf(shop->mem, "Mandate %s is %s.", md->id, as_mandate_state_name(out->state)));
    out->month = month_of(shop);
    out->spent_cents = 0;
    rc = release_expired_if_due(shop, md->id);
    if (rc == AS_OK) rc = as_store_mandate_spent(s, md->id, out->month, &out->spent_cents);
    return rc == AS_OK ? AS_SHOP_DONE : AS_SHOP_FAILED;
}

/* ---- quotes (spec 4.8) ---- */

/* The offer asked for, when it has the stock; else why it cannot be quoted. */
static as_shop_rc offer_asked(as_mem *m, const as_ranking *r, const char *offer_id, int64_t qty,
                              const as_offer **out, as_problem *why)
{
    for (size_t i = 0; i < r->n_ranked; i++) {
        const as_offer *o = r->ranked[i].offer;
        if (strcmp(o->id, offer_id) != 0) continue;
        if (o->stock >= qty) {
            *out = o;
            return AS_SHOP_DONE;
        }
        return buying_refuse(why, 409, "OUT_OF_STOCK", NULL,
                             as_printf(m, "Offer %s has %lld unit%s left; %lld asked.", o->id,
                                       (long long)o->stock, o->stock == 1 ? "" : "s",
                                       (long long)qty));
    }
    for (size_t i = 0; i < r->n_inel; i++) {
        if (strcmp(r->inel[i].offer->id, offer_id) != 0) continue;
        if (r->inel[i].kind == AS_INEL_OUT_OF_STOCK)
            return buying_refuse(why, 409, "OUT_OF_STOCK", NULL,
                                 as_printf(m, "Offer %s is out of stock.", offer_id));
        return buying_refuse(
            why, 409, "OFFER_NOT_ELIGIBLE", NULL,
            as_printf(m, "Offer %s cannot be quoted: %s.", offer_id, r->inel[i].reason));
    }
    return buying_refuse(why, 404, "NOT_FOUND", "offer_id",
                         as_printf(m, "This product has no offer '%s'.", offer_id));
}

/* The offer to quote: the one asked for, or the best ranked with enough stock. */
static as_shop_rc choose_offer(as_mem *m, const as_ranking *r, const char *offer_id, int64_t qty,
                               const as_offer **out, as_problem *why)
{
    if (offer_id) return offer_asked(m, r, offer_id, qty, out, why);
    for (size_t i = 0; i < r->n_ranked; i++)
        if (r->ranked[i].offer->stock >= qty) {
            *out = r->ranked[i].offer;
            return AS_SHOP_DONE;
        }
    bool only_stock = true;
    for (size_t i = 0; i < r->n_inel; i++)
        if (r->inel[i].kind != AS_INEL_OUT_OF_STOCK) only_stock = false;
    if (r->n_ranked > 0 || only_stock)
        return buying_refuse(why, 409, "OUT_OF_STOCK", NULL,
                             r->n_ranked
                                 ? as_printf(m, "No offer has %lld units in stock.", (long long)qty)
                                 : "The product is out of stock.");
    return buying_refuse(why, 409, "OFFER_NOT_ELIGIBLE", NULL,
                         as_printf(m, "No offer can be quoted: %s", r->explanation));
}

as_shop_rc as_quote_create(as_shop *shop, const as_agent *agent, const as_quote_ask *ask,
                           as_quote *out, as_problem *why)
{
    as_mem *m = shop->mem;
    const as_device *dev = ask->device;
    as_product p;
    int rc = as_store_product_by_sku(shop->store, m, ask->sku, dev ? dev->id : 0, &p);
    if (rc == AS_ENOTFOUND)
        return buying_refuse(why, 404, "NOT_FOUND", "sku",
                             as_printf(m, "No product with sku '%s'.", ask->sku));
    if (rc != AS_OK) return AS_SHOP_FAILED;

    as_offer_filter f = {ask->deliver_by, 0, NULL};
    as_ranking r;
    as_rank_offers(m, &p, &ask->weights, &f, as_today(shop), &r);
    const as_offer *o;
    as_shop_rc src = choose_offer(m, &r, ask->offer_id, ask->quantity, &o, why);
    if (src != AS_SHOP_DONE) return src;

    *out = (as_quote){
        .id = as_random_id(m, "q_", 24, false),
        .user_id = agent->user_id,
        .offer_id = o->id,
        .product_id = p.id,
        .quantity = ask->quantity,
        .unit_price_cents = o->price_cents,
        .total_cents = o->price_cents * ask->quantity,
        .delivery_days = o->delivery_days,
        .delivery_by = as_date_format(m, as_today(shop) + o->delivery_days),
        .created_at = shop->now,
        .expires_at = shop->now + shop->cfg->quote_ttl,
        .sku = p.sku,
        .product_name = p.name,
        .category = p.category,
        .merchant_id = o->merchant.id,
        .merchant_name = o->merchant.name,
    };
    if (dev) {
        out->device_slug = dev->slug;
        out->fit_status = as_fit_of(&p);
        out->guarantee = out->fit_status == AS_FIT_FITS;
    }
    return as_store_quote_insert(shop->store, out) == AS_OK ? AS_SHOP_DONE : AS_SHOP_FAILED;
}

/* ---- orders (spec 4.9) ---- */

/* The quote the order is made from, when it is the user's, unused and
 * unexpired. */
static as_shop_rc usable_quote(as_shop *shop, const as_agent *agent, const char *quote_id,
                               as_quote *q, as_problem *why)
{
    as_mem *m = shop->mem;
    int rc = as_store_quote_get(shop->store, m, quote_id, q);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    if (rc != AS_OK || strcmp(q->user_id, agent->user_id) != 0)
        return buying_refuse(why, 404, "NOT_FOUND", "quote_id",
                             as_printf(m, "No quote '%s'.", quote_id));
    if (q->order_id)
        return buying_refuse(why, 409, "QUOTE_ALREADY_USED", "quote_id",
                             as_printf(m,
                                       "Quote %s was already used for order %s; take a new quote.",
                                       q->id, q->order_id));
    if (shop->now >= q->expires_at)
        return buying_refuse(why, 410, "QUOTE_EXPIRED", "quote_id",
                             as_printf(m, "Quote %s expired at %s; take a new quote.", q->id,
                                       as_time_format(m, q->expires_at)));
    return AS_SHOP_DONE;
}

/* The mandate, locked for the rest of the transaction (one read): the one
 * named, else the user's current one. */
static as_shop_rc order_mandate(as_shop *shop, const as_agent *agent, const char *mandate_id,
                                as_mandate *md, as_problem *why)
{
    as_mem *m = shop->mem;
    const as_store *s = shop->store;
    int rc = mandate_id ? as_store_mandate_get(s, m, mandate_id, true, md)
                        : as_store_mandate_current(s, m, agent->user_id, true, md);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    if (rc != AS_OK || strcmp(md->user_id, agent->user_id) != 0)
        return buying_refuse(why, 403, "MANDATE_INVALID", mandate_id ? "mandate_id" : NULL,
                             mandate_id
                                 ? as_printf(m, "No mandate '%s' for this user.", mandate_id)
                                 : "There is no active mandate for the user this agent acts for.");
    return AS_SHOP_DONE;
}

/* The order the quote becomes, holding its total of the month's budget. */
static as_order order_of(as_shop *shop, const as_agent *agent, const as_order_ask *ask,
                         const as_quote *q, const as_mandate *md, const char *month,
                         bool needs_confirmation)
{
    return (as_order){
        .id = as_random_id(shop->mem, "ord_", 20, false),
        .user_id = agent->user_id,
        .mandate_id = md->id,
        .quote_id = q->id,
        .offer_id = q->offer_id,
        .quantity = q->quantity,
        .unit_price_cents = q->unit_price_cents,
        .total_cents = q->total_cents,
        .budget_cents = q->total_cents,
        .month = month,
        .reason = ask->reason,
        .agent = agent->name,
        .key_id = agent->key_id,
        .status = needs_confirmation ? AS_OS_AWAITING : AS_OS_PLACED,
        .confirm_expires_at = needs_confirmation ? shop->now + shop->cfg->confirmation_ttl : 0,
        .created_at = shop->now,
        .updated_at = shop->now,
        .sku = q->sku,
        .product_name = q->product_name,
        .category = q->category,
        .merchant_name = q->merchant_name,
        .delivery_by = q->delivery_by,
        .device_slug = q->device_slug,
        .fit_status = q->fit_status,
        .guarantee = q->guarantee,
    };
}

/* The order stored with its first timeline entry, and its confirmation when a
 * person must approve it. */
static as_shop_rc order_store(as_shop *shop, const as_mandate *md, as_placement *out,
                              as_problem *why)
{
    as_mem *m = shop->mem;
    const as_store *s = shop->store;
    as_order *o = &out->order;
    int rc = as_store_order_insert(s, o);
    if (rc == AS_ECONFLICT) { /* another request turned the quote into an order first */
        buying_refuse(why, 409, "QUOTE_ALREADY_USED", "quote_id",
                      as_printf(m, "Quote %s was already used; take a new quote.", o->quote_id));
        /* undo the stock taken */
        return as_store_stock_give(s, o->offer_id, o->quantity) == AS_OK ? AS_SHOP_REFUSED
                                                                         : AS_SHOP_FAILED;
    }
    if (rc != AS_OK) return AS_SHOP_FAILED;
    as_event *ev = as_alloc(m, sizeof(*ev));
    if (!ev) return AS_SHOP_FAILED;
    *ev = (as_event){o->status,
                     out->needs_confirmation
                         ? as_printf(m,
                                     "Above the confirm-above threshold of %s: waiting for a "
                                     "human to approve.",
                                     as_eur_format(m, md->confirm_above_cents))
                         : as_printf(m, "Placed by %s within mandate %s.", o->agent, md->id),
                     shop->now};
    o->events = ev;
    o->n_events = 1;
    if (as_store_event_add(s, o->id, ev->status, ev->at, ev->note) != AS_OK) return AS_SHOP_FAILED;
    if (!out->needs_confirmation) return AS_SHOP_DONE;
    out->confirmation = (as_confirmation){as_random_id(m, "conf_", 20, false),
                                          o->id,
                                          o->user_id,
                                          AS_CS_PENDING,
                                          shop->now,
                                          o->confirm_expires_at,
                                          0};
    if (as_store_confirmation_insert(s, &out->confirmation) != AS_OK) return AS_SHOP_FAILED;
    o->confirmation_id = out->confirmation.id;
    out->token = as_confirmation_token(shop, &out->confirmation);
    return AS_SHOP_DONE;
}

as_shop_rc as_order_place(as_shop *shop, const as_agent *agent, const as_order_ask *ask,
                          as_placement *out, as_problem *why)
{
    as_mem *m = shop->mem;
    const as_store *s = shop->store;
    if (!shop->cfg->signing_key) return AS_SHOP_FAILED; /* the binding asked as_shop_can_sign */
    as_quote q;
    as_mandate md;
    as_shop_rc src = usable_quote(shop, agent, ask->quote_id, &q, why);
    if (src == AS_SHOP_DONE) src = order_mandate(shop, agent, ask->mandate_id, &md, why);
    if (src != AS_SHOP_DONE) return src;
    if (release_expired(shop, md.id) != AS_OK) return AS_SHOP_FAILED;
    int64_t spent = 0;
    const char *month = month_of(shop);
    if (as_store_mandate_spent(s, md.id, month, &spent) != AS_OK) return AS_SHOP_FAILED;
    as_mandate_decision d = as_mandate_check(&md, q.category, q.total_cents, spent, as_today(shop));
    if (d.verdict != AS_MANDATE_OK) {
        const char *msg = as_mandate_message(m, &md, &d, q.category, q.total_cents);
        return d.verdict == AS_MANDATE_CATEGORY
                   ? buying_refuse(why, 422, "CATEGORY_NOT_ALLOWED", NULL, msg)
                   : buying_refuse(why, 403, "MANDATE_INVALID", NULL, msg);
    }
    int rc = as_store_stock_take(s, q.offer_id, q.quantity);
    if (rc == AS_ECONFLICT)
        return buying_refuse(why, 409, "OUT_OF_STOCK", NULL,
                             as_printf(m, "Offer %s no longer has %lld unit%s in stock.",
                                       q.offer_id, (long long)q.quantity,
                                       q.quantity == 1 ? "" : "s"));
    if (rc != AS_OK) return AS_SHOP_FAILED;
    *out = (as_placement){.needs_confirmation = d.needs_confirmation,
                          .confirm_above_cents = md.confirm_above_cents};
    out->order = order_of(shop, agent, ask, &q, &md, month, d.needs_confirmation);
    return order_store(shop, &md, out, why);
}
