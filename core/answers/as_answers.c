/* The agent's calls as /v1 answers them: the field rules of their bodies,
 * the shop's operation, and its outcome rendered with /v1's views. */
#include "as_answers.h"

#include "as_aftersale.h"
#include "as_buy_view.h"
#include "as_buying.h"
#include "as_call.h"
#include "as_http.h"
#include "as_presale.h"
#include "as_presale_view.h"
#include "as_reads.h"
#include "as_util.h"

/* Validates body against rules into v: the hash of its canonical form (an
 * Idempotency-Key's record compares it), else NULL with the 400 in resp. */
static const char *fields(as_shop *shop, const json_t *body, const as_field_rule *rules, size_t n,
                          as_param *v, as_response *resp)
{
    as_problem why;
    const char *hash = as_call_fields(shop, body, rules, n, v, &why);
    if (!hash) as_respond_problem(resp, &why);
    return hash;
}

/* Whether the operation did it; else its answer is in resp. */
static bool done(as_shop_rc rc, const as_problem *why, as_response *resp)
{
    if (rc == AS_SHOP_DONE) return true;
    as_respond_outcome(resp, rc, why);
    return false;
}

/* ---- POST /compatibility/check (spec 4.5) ---- */

enum { K_SKU, K_DEVICE, K_N };
static const as_field_rule check_rules[K_N] = {
    [K_SKU] = {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    [K_DEVICE] = {{"device", AS_V_TEXT, 1, 100, NULL}, true},
};

void as_answer_fit_check(as_shop *shop, const json_t *body, as_response *resp)
{
    as_param v[K_N];
    if (!fields(shop, body, check_rules, K_N, v, resp)) return;
    as_product p;
    as_device dev;
    as_problem why;
    if (!done(as_fit_check(shop, v[K_SKU].str, v[K_DEVICE].str, &p, &dev, &why), &why, resp))
        return;
    as_respond_json(resp, 200, as_view_fit_check(shop->mem, &p, &dev));
}

/* ---- POST /questions (spec 4.6) ---- */

enum { A_SKU, A_QUESTION, A_N };
static const as_field_rule question_rules[A_N] = {
    [A_SKU] = {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    [A_QUESTION] = {{"question", AS_V_PROSE, 5, 400, NULL}, true},
};

void as_answer_question(as_shop *shop, const as_agent *agent, const json_t *body, as_response *resp)
{
    as_param v[A_N];
    if (!fields(shop, body, question_rules, A_N, v, resp)) return;
    as_answered a;
    as_problem why;
    as_shop_rc rc =
        as_question_ask(shop, agent->user_id, v[A_SKU].str, v[A_QUESTION].str, &a, &why);
    if (!done(rc, &why, resp)) {
        if (rc == AS_SHOP_REFUSED && why.status == 429) resp->retry_after = (int)a.retry_after;
        return;
    }
    as_respond_json(resp, 200, as_view_question(a.id, a.sku, a.question, a.answer, a.asked_at));
}

/* ---- GET /mandates/current (spec 4.7) ---- */

void as_answer_mandate(as_shop *shop, const as_agent *agent, as_response *resp)
{
    as_mandate_month mm;
    as_problem why;
    if (!done(as_mandate_current(shop, agent->user_id, &mm, &why), &why, resp)) return;
    as_respond_json(resp, 200,
                    as_view_mandate(shop->mem, &mm.mandate, as_mandate_state_name(mm.state),
                                    mm.month, mm.spent_cents));
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

void as_answer_quote(as_shop *shop, const as_agent *agent, const json_t *body, as_response *resp)
{
    as_param v[Q_N];
    if (!fields(shop, body, quote_rules, Q_N, v, resp)) return;
    as_device dev;
    as_problem why;
    bool has_dev = v[Q_DEVICE].present;
    if (has_dev && !done(as_read_device(shop, v[Q_DEVICE].str, "device", &dev, &why), &why, resp))
        return;
    as_quote_ask ask = {
        .sku = v[Q_SKU].str,
        .offer_id = v[Q_OFFER].present ? v[Q_OFFER].str : NULL,
        .quantity = v[Q_QUANTITY].present ? v[Q_QUANTITY].num : 1,
        .device = has_dev ? &dev : NULL,
        .weights = as_param_weights(&v[Q_WEIGHTS]),
        .deliver_by = v[Q_DELIVER_BY].present ? v[Q_DELIVER_BY].num : 0,
    };
    as_quote q;
    if (!done(as_quote_create(shop, agent, &ask, &q, &why), &why, resp)) return;
    as_respond_json(resp, 201, as_view_quote(shop->mem, &q));
}

/* ---- POST /orders (spec 4.9) ---- */

enum { O_QUOTE, O_REASON, O_MANDATE, O_N };
static const as_field_rule order_rules[O_N] = {
    [O_QUOTE] = {{"quote_id", AS_V_SLUG, 3, 40, NULL}, true},
    [O_REASON] = {{"reason", AS_V_PROSE, 20, 500, NULL}, true},
    [O_MANDATE] = {{"mandate_id", AS_V_SLUG, 1, 40, NULL}, false},
};

bool as_order_precheck(as_shop *shop, const char *key, as_problem *why)
{
    return as_idem_key_valid(shop->mem, key, "POST /orders", why) && as_shop_can_sign(shop, why);
}

typedef struct order_job {
    as_shop *shop;
    const as_agent *agent;
    const char *base;
    as_order_ask ask;
    const char *notice; /* the confirmation's line for shop->notify, once committed */
} order_job;

/* Inside the idempotent transaction: the placement as the response to keep
 * (a 201, a 202 or a refusal), or AS_EDB to roll back. */
static int place_order(void *job, as_response *resp)
{
    order_job *j = job;
    as_shop *shop = j->shop;
    as_mem *m = shop->mem;
    as_placement pl;
    as_problem why;
    switch (as_order_place(shop, j->agent, &j->ask, &pl, &why)) {
    case AS_SHOP_DONE:
        break;
    case AS_SHOP_REFUSED:
        as_respond_problem(resp, &why);
        return AS_OK;
    default:
        return AS_EDB;
    }
    if (!pl.needs_confirmation) {
        as_respond_json(resp, 201, as_view_order(m, &pl.order));
        return AS_OK;
    }
    const char *url =
        as_printf(m, "%s/confirmations/%s?token=%s", j->base, pl.confirmation.id, pl.token);
    as_respond_json(
        resp, 202,
        as_view_confirmation_required(m, &pl.order, &pl.confirmation, url, pl.confirm_above_cents));
    if (shop->notify) j->notice = as_view_confirmation_notice(m, &pl.order, &pl.confirmation, url);
    return AS_OK;
}

void as_answer_order(as_shop *shop, const as_agent *agent, const char *key, const json_t *body,
                     const char *base, as_response *resp)
{
    as_param v[O_N];
    const char *hash = fields(shop, body, order_rules, O_N, v, resp);
    if (!hash) return;
    order_job job = {
        shop,
        agent,
        base,
        {v[O_QUOTE].str, v[O_REASON].str, v[O_MANDATE].present ? v[O_MANDATE].str : NULL},
        NULL};
    as_idem_respond(shop, agent->user_id, "orders", key, hash, place_order, &job, resp);
    /* only once the order and its confirmation are committed (a replay runs
     * no job and tells nobody again) */
    if (job.notice && resp->status == 202) shop->notify(shop->notify_baton, job.notice);
}

/* ---- GET /orders/{id}, POST /orders/{id}/cancel (spec 4.10, 4.11) ---- */

/* The order as the agent follows it: 200. */
static void respond_followed(as_shop *shop, const as_order *o, as_response *resp)
{
    as_respond_json(resp, 200,
                    as_view_order_followed(shop->mem, o, shop->now, shop->cfg->return_window_days));
}

void as_answer_order_follow(as_shop *shop, const as_agent *agent, const char *id, as_response *resp)
{
    as_order o;
    as_problem why;
    if (done(as_order_follow(shop, agent->user_id, id, &o, &why), &why, resp))
        respond_followed(shop, &o, resp);
}

void as_answer_order_cancel(as_shop *shop, const as_agent *agent, const char *id, as_response *resp)
{
    as_order o;
    as_problem why;
    if (done(as_order_cancel(shop, agent, id, &o, &why), &why, resp))
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

bool as_return_precheck(as_shop *shop, const char *key, as_problem *why)
{
    return as_idem_key_valid(shop->mem, key, "POST /returns", why);
}

typedef struct return_job {
    as_shop *shop;
    const as_agent *agent;
    const char *label_base;
    const char *order_id, *reason_code, *note;
} return_job;

/* as_idem_respond's work: the return, answered 201 or with its refusal
 * (both kept under the key); AS_EDB rolls everything back. */
static int make_return(void *job, as_response *resp)
{
    return_job *j = job;
    as_return_made made;
    as_problem why;
    as_shop_rc rc = as_return_create(j->shop, j->agent->user_id, j->order_id, j->reason_code,
                                     j->note, j->label_base, &made, &why);
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

void as_answer_return(as_shop *shop, const as_agent *agent, const char *key, const json_t *body,
                      const char *label_base, as_response *resp)
{
    as_param v[R_N];
    const char *hash = fields(shop, body, return_rules, R_N, v, resp);
    if (!hash) return;
    return_job job = {shop,
                      agent,
                      label_base,
                      v[R_ORDER].str,
                      v[R_REASON].str,
                      v[R_NOTE].present && *v[R_NOTE].str ? v[R_NOTE].str : NULL};
    as_idem_respond(shop, agent->user_id, "returns", key, hash, make_return, &job, resp);
}
