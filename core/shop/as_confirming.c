/* A person's confirmation of an order above the confirm-above threshold,
 * through a signed link (spec 4.13, 4.14; docs/buying.md): reading it, and
 * deciding it in one transaction against the world as it is by then. */
#include <string.h>

#include "as_buying_internal.h"
#include "as_crypto.h"
#include "as_mandate.h"
#include "as_orders.h"
#include "as_util.h"

/* The confirmation and its order, when the id and token are right. */
static as_shop_rc confirmation_load(as_shop *shop, const char *id, const char *token,
                                    as_confirm *cc, as_problem *why)
{
    const as_store *s = shop->store;
    if (!as_shop_can_sign(shop, why)) return AS_SHOP_REFUSED;
    int rc = as_store_confirmation_get(s, shop->mem, id, &cc->conf);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    bool valid =
        rc == AS_OK && token && as_secure_equal(as_confirmation_token(shop, &cc->conf), token);
    if (valid) {
        rc = as_store_order_get(s, shop->mem, cc->conf.order_id, &cc->order);
        if (rc == AS_EDB) return AS_SHOP_FAILED;
        valid = rc == AS_OK;
    }
    if (!valid)
        return buying_refuse(why, 404, "CONFIRMATION_INVALID", NULL,
                             "This confirmation link is not valid: the id or the token is wrong.");
    return AS_SHOP_DONE;
}

/* Expires a pending confirmation past its time, in its own transaction. */
static int settle_expiry(as_shop *shop, as_confirm *cc)
{
    if (cc->conf.status != AS_CS_PENDING || shop->now < cc->conf.expires_at) return AS_OK;
    const as_store *s = shop->store;
    int rc = as_store_begin(s);
    if (rc == AS_OK) rc = as_order_expire(shop, &cc->order);
    if (rc == AS_OK) rc = as_store_commit(s);
    if (rc != AS_OK) {
        as_store_rollback(s);
        return rc;
    }
    cc->conf.status = AS_CS_EXPIRED;
    return as_store_order_get(s, shop->mem, cc->conf.order_id, &cc->order);
}

as_shop_rc as_confirmation_read(as_shop *shop, const char *id, const char *token, as_confirm *out,
                                as_problem *why)
{
    as_shop_rc src = confirmation_load(shop, id, token, out, why);
    if (src != AS_SHOP_DONE) return src;
    return settle_expiry(shop, out) == AS_OK ? AS_SHOP_DONE : AS_SHOP_FAILED;
}

/* ---- the decision ---- */

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
    as_mandate_decision d =
        as_mandate_check(&md, o->category, o->total_cents, spent - o->budget_cents, as_today(shop));
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
static int apply_decision(as_shop *shop, as_confirm *cc, bool approve, refusal *refused)
{
    as_order *o = &cc->order;
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

/* Under the passkey policy: why the approval is not the person's (NULL: it
 * is), asked of the binding's check. */
static const char *unverified_approval(as_shop *shop, const as_decision *d,
                                       const as_confirmation *c, int *rc)
{
    if (!d->approve || shop->cfg->approval_link) return NULL;
    if (!d->verified) return "Approving needs the person's passkey.";
    return d->verified(d->baton, c, rc);
}

/* Inside the transaction, the confirmation and its order read again (another
 * decision may have landed): what the decision comes to, and its changes. */
static int decide_in_tx(as_shop *shop, const as_decision *d, as_decided *out, refusal *refused)
{
    as_confirm *cc = &out->now;
    as_confirmation_state st = cc->conf.status;
    bool pending = st == AS_CS_PENDING;
    int rc = AS_OK;
    if (pending && shop->now >= cc->conf.expires_at) {
        rc = as_order_expire(shop, &cc->order);
        out->outcome = AS_DECISION_EXPIRED;
    } else if (st == AS_CS_EXPIRED) {
        out->outcome = AS_DECISION_EXPIRED;
    } else if (pending && (out->why = unverified_approval(shop, d, &cc->conf, &rc))) {
        out->outcome = AS_DECISION_UNVERIFIED; /* nothing changes: rolled back */
    } else if (pending && rc == AS_OK) {
        rc = apply_decision(shop, cc, d->approve, refused);
        out->outcome = refused->why ? AS_DECISION_REFUSED : AS_DECISION_TAKEN;
        out->why = refused->why;
    } else {
        out->outcome = st == (d->approve ? AS_CS_APPROVED : AS_CS_DECLINED) ? AS_DECISION_TAKEN
                                                                            : AS_DECISION_CONFLICT;
    }
    return rc;
}

/* The outcome other than TAKEN as the problem the agent is told. */
static as_shop_rc decision_refused(as_shop *shop, const as_decided *out, const refusal *refused,
                                   as_problem *why)
{
    as_mem *m = shop->mem;
    const as_confirmation *c = &out->now.conf;
    switch (out->outcome) {
    case AS_DECISION_UNVERIFIED:
        return buying_refuse(why, 403, "PASSKEY_REQUIRED", NULL,
                             as_printf(m, "%s The order still waits for the person.", out->why));
    case AS_DECISION_EXPIRED:
        return buying_refuse(why, 410, "CONFIRMATION_EXPIRED", NULL,
                             as_printf(m,
                                       "This confirmation expired at %s; the order was not "
                                       "placed and its budget and stock were released.",
                                       as_time_format(m, c->expires_at)));
    case AS_DECISION_REFUSED:
        return buying_refuse(why, refused->status, refused->code, NULL,
                             as_printf(m,
                                       "This order can no longer be approved: %s It was "
                                       "declined; its budget and stock were released.",
                                       refused->why));
    case AS_DECISION_CONFLICT:
        return buying_refuse(why, 409, "CONFIRMATION_DECIDED", NULL,
                             as_printf(m, "This confirmation was already %s; it cannot be changed.",
                                       as_confirmation_state_name(c->status)));
    default:
        return AS_SHOP_DONE;
    }
}

as_shop_rc as_confirmation_decide(as_shop *shop, const char *id, const char *token,
                                  const as_decision *d, as_decided *out, as_problem *why)
{
    as_mem *m = shop->mem;
    const as_store *s = shop->store;
    as_confirm *cc = &out->now;
    *out = (as_decided){.outcome = AS_DECISION_INVALID};
    as_shop_rc src = confirmation_load(shop, id, token, cc, why);
    if (src != AS_SHOP_DONE) return src;

    refusal refused = {0, NULL, NULL};
    int rc = as_store_begin(s);
    if (rc == AS_OK) rc = as_store_confirmation_get(s, m, id, &cc->conf);
    if (rc == AS_OK) rc = as_store_order_get(s, m, cc->conf.order_id, &cc->order);
    if (rc == AS_OK) rc = decide_in_tx(shop, d, out, &refused);
    if (rc == AS_OK && out->outcome == AS_DECISION_UNVERIFIED)
        rc = as_store_rollback(s);
    else if (rc == AS_OK)
        rc = as_store_commit(s);
    if (rc != AS_OK) {
        as_store_rollback(s);
        return AS_SHOP_FAILED;
    }
    if (as_store_confirmation_get(s, m, id, &cc->conf) != AS_OK ||
        as_store_order_get(s, m, cc->conf.order_id, &cc->order) != AS_OK)
        return AS_SHOP_UNREADABLE;
    return decision_refused(shop, out, &refused, why);
}
