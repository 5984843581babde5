/* Buying: identity (spec 5), the mandate (4.7), quotes (4.8), orders (4.9) and
 * human confirmation through a signed link (4.13, 4.14). docs/buying.md. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "as_handlers.h"
#include "as_api_internal.h"
#include "as_buy_view.h"
#include "as_person_pages.h"
#include "as_passkey_api.h"
#include "as_crypto.h"
#include "as_devices.h"
#include "as_mandate.h"
#include "as_orders.h"
#include "as_util.h"
#include "as_view.h"

/* HMAC over what the link stands for: the confirmation, its order and expiry. */
static const char *confirmation_token(as_shop *shop, const as_confirmation *c)
{
    const char *msg = as_printf(shop->mem, "agentshop-confirmation:v1:%s:%s:%lld", c->id,
                                c->order_id, (long long)c->expires_at);
    return as_hmac_b64url(shop->mem, shop->cfg->signing_key, shop->cfg->signing_key_len, msg);
}

/* Without AgentShopSigningKeyFile no confirmation link can be signed or
 * checked: the server is misconfigured, which no retry mends (500, not 503). */
static bool signing_key_missing(as_shop *shop, as_response *resp)
{
    if (shop->cfg->signing_key) return false;
    as_log(shop, AS_LOG_ERR, "no signing key: set AgentShopSigningKeyFile");
    as_respond_error(resp, 500, "INTERNAL_ERROR", NULL,
                     "The shop is misconfigured: it has no signing key (AgentShopSigningKeyFile), "
                     "so it cannot sign or check confirmation links. Nothing was changed; tell "
                     "the shop's operator.");
    return true;
}

static const char *month_of(as_shop *shop)
{
    return as_strndup(shop->mem, as_date_format(shop->mem, as_today(shop)), 7);
}

/* ---- releasing what expired confirmations held ---- */

/* An order that waited past its confirmation's expiry gives back its budget and
 * stock. Runs inside the caller's transaction. */
static int expire_order(as_shop *shop, as_order *o)
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
        rc = expire_order(shop, &os[i]);
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
        rc = expire_order(shop, &os[i]);
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

/* ---- GET /mandates/current (spec 4.7) ---- */

static const char *mandate_state(as_shop *shop, const as_mandate *md)
{
    int64_t last;
    if (strcmp(md->status, "active") != 0) return md->status;
    if (md->valid_until && as_date_parse(md->valid_until, &last) && as_today(shop) > last)
        return "expired";
    return "active";
}

void as_api_mandate_current(as_shop *shop, const as_request *req, as_response *resp)
{
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    const as_store *s = shop->store;
    as_mandate md;
    int rc = as_store_mandate_current(s, shop->mem, agent.user_id, false, &md);
    if (rc == AS_EDB) {
        as_respond_storage_failed(resp);
        return;
    }
    if (rc != AS_OK) {
        as_respond_error(resp, 403, "MANDATE_INVALID", NULL,
                         "There is no active mandate for the user this agent acts for.");
        return;
    }
    const char *state = mandate_state(shop, &md);
    if (strcmp(state, "active") != 0) {
        as_respond_error(resp, 403, "MANDATE_INVALID", NULL,
                         as_printf(shop->mem, "Mandate %s is %s.", md.id, state));
        return;
    }
    int64_t spent = 0;
    /* A read: it writes (releasing what expired) only when something did, so
     * it does not queue behind writers for nothing. */
    as_order *due;
    size_t n_due = 0;
    rc = as_store_orders_expired(s, shop->mem, md.id, shop->now, &due, &n_due);
    if (rc == AS_OK && n_due && (rc = as_store_begin(s)) == AS_OK) {
        rc = release_expired(shop, md.id);
        if (rc == AS_OK) rc = as_store_commit(s);
        /* a failed commit leaves the transaction open (SQLite's busy) */
        if (rc != AS_OK) as_store_rollback(s);
    }
    if (rc == AS_OK) rc = as_store_mandate_spent(s, md.id, month_of(shop), &spent);
    if (rc != AS_OK) {
        as_respond_storage_failed(resp);
        return;
    }
    as_respond_json(resp, 200, as_view_mandate(shop->mem, &md, state, month_of(shop), spent));
}

/* ---- POST /quotes (spec 4.8) ---- */

enum { Q_SKU, Q_QUANTITY, Q_OFFER, Q_DEVICE, Q_POSTCODE, Q_DELIVER_BY, Q_WEIGHTS, Q_N };
static const as_field_rule quote_rules[Q_N] = {
    [Q_SKU] = {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    [Q_QUANTITY] = {{"quantity", AS_V_INT, 1, 10, NULL}, false},
    [Q_OFFER] = {{"offer_id", AS_V_SLUG, 1, 60, NULL}, false},
    [Q_DEVICE] = {{"device", AS_V_TEXT, 1, 100, NULL}, false},
    [Q_POSTCODE] = {{"postcode", AS_V_POSTCODE, 1, 12, NULL}, false},
    [Q_DELIVER_BY] = {{"deliver_by", AS_V_DATE, 0, 0, NULL}, false},
    [Q_WEIGHTS] = {{"weights", AS_V_WEIGHTS, 0, 0, NULL}, false},
};

/* The offer to quote: the one asked for, or the best ranked with enough stock. */
static const as_offer *choose_offer(as_shop *shop, const as_ranking *r, const char *offer_id,
                                    int64_t qty, as_response *resp)
{
    as_mem *m = shop->mem;
    if (offer_id) {
        for (size_t i = 0; i < r->n_ranked; i++) {
            const as_offer *o = r->ranked[i].offer;
            if (strcmp(o->id, offer_id) != 0) continue;
            if (o->stock >= qty) return o;
            as_respond_error(resp, 409, "OUT_OF_STOCK", NULL,
                             as_printf(m, "Offer %s has %lld unit%s left; %lld asked.", o->id,
                                       (long long)o->stock, o->stock == 1 ? "" : "s",
                                       (long long)qty));
            return NULL;
        }
        for (size_t i = 0; i < r->n_inel; i++) {
            if (strcmp(r->inel[i].offer->id, offer_id) != 0) continue;
            if (strcmp(r->inel[i].reason, "Out of stock") == 0)
                as_respond_error(resp, 409, "OUT_OF_STOCK", NULL,
                                 as_printf(m, "Offer %s is out of stock.", offer_id));
            else
                as_respond_error(
                    resp, 409, "OFFER_NOT_ELIGIBLE", NULL,
                    as_printf(m, "Offer %s cannot be quoted: %s.", offer_id, r->inel[i].reason));
            return NULL;
        }
        as_respond_error(resp, 404, "NOT_FOUND", "offer_id",
                         as_printf(m, "This product has no offer '%s'.", offer_id));
        return NULL;
    }
    for (size_t i = 0; i < r->n_ranked; i++)
        if (r->ranked[i].offer->stock >= qty) return r->ranked[i].offer;
    bool only_stock = true;
    for (size_t i = 0; i < r->n_inel; i++)
        if (strcmp(r->inel[i].reason, "Out of stock") != 0) only_stock = false;
    if (r->n_ranked > 0 || only_stock)
        as_respond_error(resp, 409, "OUT_OF_STOCK", NULL,
                         r->n_ranked
                             ? as_printf(m, "No offer has %lld units in stock.", (long long)qty)
                             : "The product is out of stock.");
    else
        as_respond_error(resp, 409, "OFFER_NOT_ELIGIBLE", NULL,
                         as_printf(m, "No offer can be quoted: %s", r->explanation));
    return NULL;
}

void as_api_quote_create(as_shop *shop, const as_request *req, as_response *resp)
{
    as_mem *m = shop->mem;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    json_t *body = as_json_body(shop, req, resp);
    if (!body) return;
    as_param v[Q_N];
    as_problem prob;
    bool ok = as_validate_body(m, quote_rules, Q_N, body, as_today(shop), v, &prob);
    json_decref(body);
    if (!ok) {
        as_respond_problem(resp, &prob);
        return;
    }

    as_device dev;
    bool has_dev = v[Q_DEVICE].present;
    if (has_dev && !as_resolve_device(shop, v[Q_DEVICE].str, "device", &dev, resp)) return;
    as_product p;
    int rc = as_store_product_by_sku(shop->store, m, v[Q_SKU].str, has_dev ? dev.id : 0, &p);
    if (rc == AS_ENOTFOUND) {
        as_respond_error(resp, 404, "NOT_FOUND", "sku",
                         as_printf(m, "No product with sku '%s'.", v[Q_SKU].str));
        return;
    }
    if (rc != AS_OK) {
        as_respond_storage_failed(resp);
        return;
    }

    as_weights w = as_param_weights(&v[Q_WEIGHTS]);
    as_offer_filter f = {v[Q_DELIVER_BY].present ? v[Q_DELIVER_BY].num : 0, 0, NULL};
    as_ranking r;
    as_rank_offers(m, &p, &w, &f, as_today(shop), &r);
    int64_t qty = v[Q_QUANTITY].present ? v[Q_QUANTITY].num : 1;
    const as_offer *o =
        choose_offer(shop, &r, v[Q_OFFER].present ? v[Q_OFFER].str : NULL, qty, resp);
    if (!o) return;

    as_quote q = {
        .id = as_random_id(m, "q_", 24, false),
        .user_id = agent.user_id,
        .offer_id = o->id,
        .product_id = p.id,
        .quantity = qty,
        .unit_price_cents = o->price_cents,
        .total_cents = o->price_cents * qty,
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
    if (has_dev) {
        q.device_slug = dev.slug;
        q.fit_status = as_fit_status(&p);
        q.guarantee = strcmp(q.fit_status, "fits") == 0;
    }
    if (as_store_quote_insert(shop->store, &q) != AS_OK) {
        as_respond_storage_failed(resp);
        return;
    }
    as_respond_json(resp, 201, as_view_quote(m, &q));
}

/* ---- POST /orders (spec 4.9) ---- */

enum { O_QUOTE, O_REASON, O_MANDATE, O_N };
static const as_field_rule order_rules[O_N] = {
    [O_QUOTE] = {{"quote_id", AS_V_SLUG, 3, 40, NULL}, true},
    [O_REASON] = {{"reason", AS_V_PROSE, 20, 500, NULL}, true},
    [O_MANDATE] = {{"mandate_id", AS_V_SLUG, 1, 40, NULL}, false},
};

typedef struct order_job {
    as_shop *shop;
    const as_agent *agent;
    const as_request *req;
    const char *quote_id, *reason, *mandate_id;
    const char *notice; /* the confirmation's line for shop->notify, once committed */
} order_job;

/* The business outcome, inside the transaction: AS_OK with resp filled (a
 * 201, a 202 or a refusal to remember), or AS_EDB to roll back. */
static int place_order(order_job *j, as_response *resp);

static int place_order_cb(void *job, as_response *resp)
{
    return place_order(job, resp);
}

static int place_order(order_job *j, as_response *resp)
{
    as_shop *shop = j->shop;
    as_mem *m = shop->mem;
    const as_store *s = shop->store;
    as_quote q;
    int rc = as_store_quote_get(s, m, j->quote_id, &q);
    if (rc == AS_EDB) return rc;
    if (rc != AS_OK || strcmp(q.user_id, j->agent->user_id) != 0) {
        as_respond_error(resp, 404, "NOT_FOUND", "quote_id",
                         as_printf(m, "No quote '%s'.", j->quote_id));
        return AS_OK;
    }
    if (q.order_id) {
        as_respond_error(resp, 409, "QUOTE_ALREADY_USED", "quote_id",
                         as_printf(m, "Quote %s was already used for order %s; take a new quote.",
                                   q.id, q.order_id));
        return AS_OK;
    }
    if (shop->now >= q.expires_at) {
        as_respond_error(resp, 410, "QUOTE_EXPIRED", "quote_id",
                         as_printf(m, "Quote %s expired at %s; take a new quote.", q.id,
                                   as_time_format(m, q.expires_at)));
        return AS_OK;
    }
    /* The mandate, locked for the rest of the transaction (one read). */
    as_mandate md;
    rc = j->mandate_id ? as_store_mandate_get(s, m, j->mandate_id, true, &md)
                       : as_store_mandate_current(s, m, j->agent->user_id, true, &md);
    if (rc == AS_EDB) return rc;
    if (rc != AS_OK || strcmp(md.user_id, j->agent->user_id) != 0) {
        as_respond_error(resp, 403, "MANDATE_INVALID", j->mandate_id ? "mandate_id" : NULL,
                         j->mandate_id ? as_printf(m, "No mandate '%s' for this user.", j->mandate_id)
                                       : "There is no active mandate for the user this agent "
                                         "acts for.");
        return AS_OK;
    }
    if ((rc = release_expired(shop, md.id)) != AS_OK) return rc;
    int64_t spent = 0;
    const char *month = month_of(shop);
    if ((rc = as_store_mandate_spent(s, md.id, month, &spent)) != AS_OK) return rc;
    as_mandate_decision d = as_mandate_check(&md, q.category, q.total_cents, spent, as_today(shop));
    if (d.verdict != AS_MANDATE_OK) {
        const char *msg = as_mandate_message(m, &md, &d, q.category, q.total_cents);
        if (d.verdict == AS_MANDATE_CATEGORY)
            as_respond_error(resp, 422, "CATEGORY_NOT_ALLOWED", NULL, msg);
        else
            as_respond_error(resp, 403, "MANDATE_INVALID", NULL, msg);
        return AS_OK;
    }
    rc = as_store_stock_take(s, q.offer_id, q.quantity);
    if (rc == AS_ECONFLICT) {
        as_respond_error(resp, 409, "OUT_OF_STOCK", NULL,
                         as_printf(m, "Offer %s no longer has %lld unit%s in stock.", q.offer_id,
                                   (long long)q.quantity, q.quantity == 1 ? "" : "s"));
        return AS_OK;
    }
    if (rc != AS_OK) return rc;

    as_order o = {
        .id = as_random_id(m, "ord_", 20, false),
        .user_id = j->agent->user_id,
        .mandate_id = md.id,
        .quote_id = q.id,
        .offer_id = q.offer_id,
        .quantity = q.quantity,
        .unit_price_cents = q.unit_price_cents,
        .total_cents = q.total_cents,
        .budget_cents = q.total_cents,
        .month = month,
        .reason = j->reason,
        .agent = j->agent->name,
        .key_id = j->agent->key_id,
        .status = d.needs_confirmation ? AS_OS_AWAITING : AS_OS_PLACED,
        .confirm_expires_at = d.needs_confirmation ? shop->now + shop->cfg->confirmation_ttl : 0,
        .created_at = shop->now,
        .updated_at = shop->now,
        .sku = q.sku,
        .product_name = q.product_name,
        .category = q.category,
        .merchant_name = q.merchant_name,
        .delivery_by = q.delivery_by,
        .device_slug = q.device_slug,
        .fit_status = q.fit_status,
        .guarantee = q.guarantee,
    };
    rc = as_store_order_insert(s, &o);
    if (rc == AS_ECONFLICT) { /* another request turned the quote into an order first */
        as_respond_error(resp, 409, "QUOTE_ALREADY_USED", "quote_id",
                         as_printf(m, "Quote %s was already used; take a new quote.", q.id));
        return as_store_stock_give(s, q.offer_id, q.quantity); /* undo the take above */
    }
    if (rc != AS_OK) return rc;
    as_event ev = {o.status,
                   d.needs_confirmation
                       ? as_printf(m,
                                   "Above the confirm-above threshold of %s: waiting for a "
                                   "human to approve.",
                                   as_eur_format(m, md.confirm_above_cents))
                       : as_printf(m, "Placed by %s within mandate %s.", o.agent, md.id),
                   shop->now};
    o.events = &ev;
    o.n_events = 1;
    if ((rc = as_store_event_add(s, o.id, ev.status, ev.at, ev.note)) != AS_OK) return rc;
    if (!d.needs_confirmation) {
        as_respond_json(resp, 201, as_view_order(m, &o));
        return AS_OK;
    }
    as_confirmation c = {as_random_id(m, "conf_", 20, false),
                         o.id,
                         o.user_id,
                         "pending",
                         shop->now,
                         o.confirm_expires_at,
                         0};
    if ((rc = as_store_confirmation_insert(s, &c)) != AS_OK) return rc;
    o.confirmation_id = c.id;
    const char *token = confirmation_token(shop, &c);
    const char *url =
        as_printf(m, "%s/confirmations/%s?token=%s", as_request_base(j->req), c.id, token);
    as_respond_json(resp, 202,
                    as_view_confirmation_required(m, &o, &c, url, md.confirm_above_cents));
    if (shop->notify) j->notice = as_view_confirmation_notice(m, &o, &c, url);
    return AS_OK;
}

void as_api_order_create(as_shop *shop, const as_request *req, as_response *resp)
{
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    if (!as_idem_key_check(req, "POST /orders", resp)) return;
    if (signing_key_missing(shop, resp)) return;
    as_param v[O_N];
    const char *hash = as_body_params(shop, req, order_rules, O_N, v, resp);
    if (!hash) return;
    order_job job = {shop,
                     &agent,
                     req,
                     v[O_QUOTE].str,
                     v[O_REASON].str,
                     v[O_MANDATE].present ? v[O_MANDATE].str : NULL,
                     NULL};
    as_idem_run(shop, &agent, "orders", req->idempotency_key, hash, place_order_cb, &job, resp);
    /* only once the order and its confirmation are committed (a replay runs
     * no job and tells nobody again) */
    if (job.notice && resp->status == 202) shop->notify(shop->notify_baton, job.notice);
}

/* ---- confirmations (spec 4.13, 4.14) ---- */

typedef struct conf_ctx {
    as_confirmation c;
    as_order o;
    const char *token;
} conf_ctx;

/* The confirmation and its order, when the id and token are right. */
static bool confirmation_load(as_shop *shop, const char *id, const char *token, conf_ctx *cc,
                              as_response *resp)
{
    const as_store *s = shop->store;
    if (signing_key_missing(shop, resp)) return false;
    int rc = as_store_confirmation_get(s, shop->mem, id, &cc->c);
    if (rc == AS_EDB) {
        as_respond_storage_failed(resp);
        return false;
    }
    bool valid = rc == AS_OK && token && as_secure_equal(confirmation_token(shop, &cc->c), token);
    if (valid) {
        rc = as_store_order_get(s, shop->mem, cc->c.order_id, &cc->o);
        if (rc == AS_EDB) {
            as_respond_storage_failed(resp);
            return false;
        }
        valid = rc == AS_OK;
    }
    if (!valid) {
        as_respond_error(resp, 404, "CONFIRMATION_INVALID", NULL,
                         "This confirmation link is not valid: the id or the token is wrong.");
        return false;
    }
    cc->token = token;
    return true;
}

static bool is_form(const as_request *req)
{
    return req->content_type &&
           strncasecmp(req->content_type, "application/x-www-form-urlencoded", 33) == 0;
}

static const char *page_action(as_shop *shop, const as_request *req, const as_confirmation *c)
{
    return as_printf(shop->mem, "%s/confirmations/%s", as_request_base(req), c->id);
}

/* Expires a pending confirmation past its time, in its own transaction. */
static int settle_expiry(as_shop *shop, conf_ctx *cc)
{
    if (strcmp(cc->c.status, "pending") != 0 || shop->now < cc->c.expires_at) return AS_OK;
    const as_store *s = shop->store;
    int rc = as_store_begin(s);
    if (rc == AS_OK) rc = expire_order(shop, &cc->o);
    if (rc == AS_OK) rc = as_store_commit(s);
    if (rc != AS_OK) {
        as_store_rollback(s);
        return rc;
    }
    cc->c.status = "expired";
    return as_store_order_get(s, shop->mem, cc->c.order_id, &cc->o);
}

static const as_param_rule token_rule = {"token", AS_V_TEXT, 8, 200, NULL};

void as_api_confirmation_get(as_shop *shop, const as_request *req, const char *id, const as_query *q,
                             as_response *resp)
{
    as_param v[1];
    as_problem prob;
    if (!as_validate_query(shop->mem, &token_rule, 1, q, as_today(shop), v, &prob)) {
        /* a malformed link is as invalid as a wrong one */
        as_respond_error(resp, 404, "CONFIRMATION_INVALID", NULL,
                         "This confirmation link is not valid.");
        return;
    }
    conf_ctx cc;
    if (!confirmation_load(shop, id, v[0].present ? v[0].str : NULL, &cc, resp)) return;
    if (settle_expiry(shop, &cc) != AS_OK) {
        as_respond_storage_failed(resp);
        return;
    }
    as_approval_ui ui;
    json_t *approval = as_approval_offer(shop, req, &cc.c, &ui);
    if (!approval) {
        as_respond_storage_failed(resp);
        return;
    }
    if (as_request_wants_html(req)) {
        json_decref(approval);
        as_respond_json(resp, 200, NULL);
        resp->html = as_confirmation_page(shop->mem, &cc.c, &cc.o, page_action(shop, req, &cc.c),
                                          cc.token, NULL, &ui, shop->now);
        return;
    }
    json_t *b = as_view_confirmation(shop->mem, &cc.c, &cc.o);
    json_object_set_new(b, "approval", approval);
    as_respond_json(resp, 200, b);
}

enum { C_DECISION, C_TOKEN, C_CREDENTIAL, C_CLIENT_DATA, C_AUTH_DATA, C_SIGNATURE, C_N };
static const char *const decisions[] = {"approve", "decline", NULL};
/* The assertion's fields are base64url (the slug alphabet holds it). */
static const as_field_rule decide_rules[C_N] = {
    [C_DECISION] = {{"decision", AS_V_ENUM, 1, 10, decisions}, true},
    [C_TOKEN] = {{"token", AS_V_TEXT, 8, 200, NULL}, false},
    [C_CREDENTIAL] = {{"credential_id", AS_V_SLUG, 1, 1400, NULL}, false},
    [C_CLIENT_DATA] = {{"client_data", AS_V_SLUG, 1, 8192, NULL}, false},
    [C_AUTH_DATA] = {{"authenticator_data", AS_V_SLUG, 1, 4096, NULL}, false},
    [C_SIGNATURE] = {{"signature", AS_V_SLUG, 1, 2048, NULL}, false},
};

/* The decision from a JSON body, or from the page's form. */
static bool decision_input(as_shop *shop, const as_request *req, as_param *v, as_response *resp)
{
    as_problem prob;
    if (is_form(req)) {
        as_query form;
        const char *bad = NULL;
        char *text = as_strndup(shop->mem, req->body ? req->body : "", req->body_len);
        if (!as_query_parse(shop->mem, text, &form, &bad)) {
            as_respond_error(resp, 400, "VALIDATION_ERROR", bad, "The form is not valid.");
            return false;
        }
        json_t *o = json_object();
        for (size_t i = 0; i < form.n; i++)
            json_object_set_new(o, form.items[i].key, json_string(form.items[i].val));
        bool ok = as_validate_body(shop->mem, decide_rules, C_N, o, as_today(shop), v, &prob);
        json_decref(o);
        if (!ok) as_respond_problem(resp, &prob);
        return ok;
    }
    json_t *body = as_json_body(shop, req, resp);
    if (!body) return false;
    bool ok = as_validate_body(shop->mem, decide_rules, C_N, body, as_today(shop), v, &prob);
    json_decref(body);
    if (!ok) as_respond_problem(resp, &prob);
    return ok;
}

/* Why an approval can no longer place the order: what the person and the
 * agent are told, with the error it is answered with. */
typedef struct refusal {
    int status;
    const char *code, *why;
} refusal;

/* What a withdrawal took off sale, said for the person (NULL: it is sold). */
static const char *withdrawn_why(as_mem *m, const as_order *o, unsigned what)
{
    if (what & AS_WITHDRAWN_PRODUCT)
        return as_printf(m, "%s (%s) was withdrawn from sale: it can no longer be bought.",
                         o->product_name, o->sku);
    if (what & AS_WITHDRAWN_MERCHANT)
        return as_printf(m,
                         "%s no longer sells through this shop: %s (%s) can no longer be "
                         "bought from it.",
                         o->merchant_name, o->product_name, o->sku);
    if (what)
        return as_printf(m,
                         "%s withdrew its offer %s of %s (%s) from sale: it can no longer "
                         "be bought.",
                         o->merchant_name, o->offer_id, o->product_name, o->sku);
    return NULL;
}

/* The world may have changed since the agent ordered. The mandate (locked)
 * must still be active, within its dates, allow the category, the per-order
 * limit and the order's month's budget (what the order holds counted once);
 * the key that placed the order must not have been revoked; and the offer
 * must still be sold (a withdrawal by the catalogue feed: the offer, its
 * product or its merchant; 409 OUT_OF_STOCK, as an order of it would get).
 * In the transaction; *rc reports a storage failure. Returns false when the
 * approval may place the order. */
static bool approval_refusal(as_shop *shop, const as_order *o, refusal *r, int *rc)
{
    const as_store *s = shop->store;
    as_mandate md;
    int64_t spent = 0;
    unsigned withdrawn = 0;
    *r = (refusal){403, "MANDATE_INVALID", NULL};
    *rc = as_store_mandate_get(s, shop->mem, o->mandate_id, true, &md);
    if (*rc == AS_ENOTFOUND) {
        *rc = AS_OK;
        r->why = as_printf(shop->mem, "Mandate %s no longer exists.", o->mandate_id);
        return true;
    }
    if (*rc == AS_OK) *rc = as_store_mandate_spent(s, md.id, o->month, &spent);
    /* the offer's row after the mandate's, as an order takes them */
    if (*rc == AS_OK) *rc = as_store_offer_withdrawn(s, o->offer_id, &withdrawn);
    if (*rc != AS_OK) return false;
    if ((r->why = withdrawn_why(shop->mem, o, withdrawn))) {
        *r = (refusal){409, "OUT_OF_STOCK", r->why};
        return true;
    }
    as_mandate_decision d = as_mandate_check(&md, o->category, o->total_cents,
                                             spent - o->budget_cents, as_today(shop));
    if (d.verdict != AS_MANDATE_OK)
        r->why = as_mandate_message(shop->mem, &md, &d, o->category, o->total_cents);
    else if (o->key_revoked_at)
        r->why = as_printf(shop->mem, "The agent key that placed this order (%s) was revoked.",
                           o->key_id);
    return r->why != NULL;
}

/* Applies a decision to a pending, unexpired confirmation, in the transaction.
 * An approval the world no longer allows declines the order instead and sets
 * *refused to why. */
static int apply_decision(as_shop *shop, conf_ctx *cc, bool approve, refusal *refused)
{
    as_order *o = &cc->o;
    int rc = AS_OK;
    bool refuse = approve && approval_refusal(shop, o, refused, &rc);
    if (rc != AS_OK) return rc;
    if (refuse)
        return as_order_apply(shop, o, AS_EV_DECLINE, shop->now, 0,
                              as_printf(shop->mem,
                                        "Approval refused: %s The order was not placed; budget "
                                        "and stock were released.",
                                        refused->why));
    return approve ? as_order_apply(shop, o, AS_EV_APPROVE, shop->now, o->budget_cents,
                                    "Approved by a human.")
                   : as_order_apply(shop, o, AS_EV_DECLINE, shop->now, 0,
                                    "Declined by a human; budget and stock were released.");
}

void as_api_confirmation_decide(as_shop *shop, const as_request *req, const char *id,
                                const as_query *q, as_response *resp)
{
    as_mem *m = shop->mem;
    const as_store *s = shop->store;
    as_param v[C_N], qv[1];
    as_problem qprob;
    if (!as_validate_query(m, &token_rule, 1, q, as_today(shop), qv, &qprob)) {
        as_respond_problem(resp, &qprob);
        return;
    }
    if (!decision_input(shop, req, v, resp)) return;
    const char *token = v[C_TOKEN].present ? v[C_TOKEN].str : qv[0].present ? qv[0].str : NULL;
    conf_ctx cc;
    if (!confirmation_load(shop, id, token, &cc, resp)) return;
    bool approve = strcmp(v[C_DECISION].str, "approve") == 0;

    int rc = as_store_begin(s);
    /* Re-read inside the transaction: another decision may have landed. */
    if (rc == AS_OK) rc = as_store_confirmation_get(s, m, id, &cc.c);
    if (rc == AS_OK) rc = as_store_order_get(s, m, cc.c.order_id, &cc.o);
    const char *outcome = NULL, *unverified = NULL;
    refusal refused = {0, NULL, NULL};
    as_assertion assertion = {
        v[C_CREDENTIAL].present ? v[C_CREDENTIAL].str : NULL,
        v[C_CLIENT_DATA].present ? v[C_CLIENT_DATA].str : NULL,
        v[C_AUTH_DATA].present ? v[C_AUTH_DATA].str : NULL,
        v[C_SIGNATURE].present ? v[C_SIGNATURE].str : NULL,
    };
    if (rc == AS_OK) {
        if (strcmp(cc.c.status, "pending") == 0 && shop->now >= cc.c.expires_at) {
            rc = expire_order(shop, &cc.o);
            outcome = "expired";
        } else if (strcmp(cc.c.status, "expired") == 0) {
            outcome = "expired";
        } else if (strcmp(cc.c.status, "pending") == 0 && approve && !shop->cfg->approval_link &&
                   (unverified = as_approval_verify(shop, req, &cc.c, &assertion, &rc))) {
            outcome = "unverified"; /* nothing changes: rolled back below */
        } else if (strcmp(cc.c.status, "pending") == 0 && rc == AS_OK) {
            rc = apply_decision(shop, &cc, approve, &refused);
            outcome = refused.why ? "refused" : "decided";
        } else {
            outcome =
                strcmp(cc.c.status, approve ? "approved" : "declined") == 0 ? "same" : "conflict";
        }
    }
    if (rc == AS_OK && unverified) rc = as_store_rollback(s);
    else if (rc == AS_OK) rc = as_store_commit(s);
    if (rc != AS_OK) {
        as_store_rollback(s);
        as_respond_storage_failed(resp);
        return;
    }
    if (as_store_confirmation_get(s, m, id, &cc.c) != AS_OK ||
        as_store_order_get(s, m, cc.c.order_id, &cc.o) != AS_OK) {
        as_respond_saved_unreadable(resp);
        return;
    }

    const char *notice = NULL;
    as_approval_ui ui = {0}, *page_ui = NULL;
    if (!shop->cfg->approval_link && strcmp(cc.c.status, "pending") == 0) {
        /* the page is shown again, with its challenge (a refused one is not used up) */
        json_t *offer = as_approval_offer(shop, req, &cc.c, &ui);
        if (!offer) {
            as_respond_storage_failed(resp);
            return;
        }
        json_decref(offer);
        page_ui = &ui;
    }
    if (strcmp(outcome, "unverified") == 0) {
        as_respond_error(resp, 403, "PASSKEY_REQUIRED", NULL,
                         as_printf(m, "%s The order still waits for the person.", unverified));
        notice = as_printf(m, "Not approved: %s", unverified);
    } else if (strcmp(outcome, "expired") == 0) {
        as_respond_error(resp, 410, "CONFIRMATION_EXPIRED", NULL,
                         as_printf(m,
                                   "This confirmation expired at %s; the order was not "
                                   "placed and its budget and stock were released.",
                                   as_time_format(m, cc.c.expires_at)));
        notice = "This link has expired. The order was not placed.";
    } else if (strcmp(outcome, "refused") == 0) {
        as_respond_error(resp, refused.status, refused.code, NULL,
                         as_printf(m,
                                   "This order can no longer be approved: %s It was declined; "
                                   "its budget and stock were released.",
                                   refused.why));
        notice = as_printf(m,
                           "This purchase can no longer be approved: %s The order was not "
                           "placed.",
                           refused.why);
    } else if (strcmp(outcome, "conflict") == 0) {
        as_respond_error(
            resp, 409, "CONFIRMATION_DECIDED", NULL,
            as_printf(m, "This confirmation was already %s; it cannot be changed.", cc.c.status));
        notice = as_printf(m, "This purchase was already %s.", cc.c.status);
    } else {
        json_t *b = as_view_confirmation(m, &cc.c, &cc.o);
        json_object_set_new(b, "order", as_view_order(m, &cc.o));
        as_respond_json(resp, 200, b);
        notice = strcmp(cc.c.status, "approved") == 0 ? "Approved. The order is placed."
                                                      : "Declined. The order will not be placed.";
    }
    if (is_form(req) || as_request_wants_html(req))
        resp->html = as_confirmation_page(m, &cc.c, &cc.o, page_action(shop, req, &cc.c), token,
                                          notice, page_ui, shop->now);
}
