/* The /v1 handlers of buying: the mandate (spec 4.7), quotes (4.8), orders
 * (4.9) and human confirmation through a signed link (4.13, 4.14). Each
 * identifies the agent, validates the request, calls the shop's operation
 * (core/shop/as_buying.h) and renders its outcome; the mandate, quotes and
 * orders as every binding answers them (core/http/as_answers.h).
 * docs/buying.md. */
#include <string.h>
#include <strings.h>

#include "as_handlers.h"
#include "as_answers.h"
#include "as_api_internal.h"
#include "as_buy_view.h"
#include "as_buying.h"
#include "as_person_pages.h"
#include "as_passkey_api.h"
#include "as_util.h"
#include "as_view.h"

/* An operation's outcome as the /v1 answer when it is not DONE; true for DONE. */
static bool shop_done(as_shop_rc rc, const as_problem *prob, as_response *resp)
{
    if (rc == AS_SHOP_DONE) return true;
    as_respond_outcome(resp, rc, prob);
    return false;
}

/* ---- GET /mandates/current (spec 4.7) ---- */

void as_api_mandate_current(as_shop *shop, const as_request *req, const as_route_params *rp,
                            const as_query *q, as_response *resp)
{
    (void)rp;
    (void)q;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    as_answer_mandate(shop, &agent, resp);
}

/* ---- POST /quotes (spec 4.8) ---- */

void as_api_quote_create(as_shop *shop, const as_request *req, const as_route_params *rp,
                         const as_query *q, as_response *resp)
{
    (void)rp;
    (void)q;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    json_t *body = as_json_body(shop, req, resp);
    if (!body) return;
    as_answer_quote(shop, &agent, body, resp);
    json_decref(body);
}

/* ---- POST /orders (spec 4.9) ---- */

void as_api_order_create(as_shop *shop, const as_request *req, const as_route_params *rp,
                         const as_query *q, as_response *resp)
{
    (void)rp;
    (void)q;
    as_agent agent;
    if (!as_identify(shop, req, &agent, resp)) return;
    as_problem prob;
    if (!as_order_precheck(shop, req->idempotency_key, &prob)) {
        as_respond_problem(resp, &prob);
        return;
    }
    json_t *body = as_json_body(shop, req, resp);
    if (!body) return;
    as_answer_order(shop, &agent, req->idempotency_key, body, as_request_base(req), resp);
    json_decref(body);
}

/* ---- confirmations (spec 4.13, 4.14) ---- */

static bool is_form(const as_request *req)
{
    return req->content_type &&
           strncasecmp(req->content_type, "application/x-www-form-urlencoded", 33) == 0;
}

static const char *page_action(as_shop *shop, const as_request *req, const as_confirmation *c)
{
    return as_printf(shop->mem, "%s/confirmations/%s", as_request_base(req), c->id);
}

static const as_param_rule token_rule = {"token", AS_V_TEXT, 8, 200, NULL};

void as_api_confirmation_get(as_shop *shop, const as_request *req, const as_route_params *rp,
                             const as_query *q, as_response *resp)
{
    const char *id = rp->v[0];
    as_param v[1];
    as_problem prob;
    if (!as_validate_query(shop->mem, &token_rule, 1, q, as_today(shop), v, &prob)) {
        /* a malformed link is as invalid as a wrong one */
        as_respond_error(resp, 404, "CONFIRMATION_INVALID", NULL,
                         "This confirmation link is not valid.");
        return;
    }
    const char *token = v[0].present ? v[0].str : NULL;
    as_confirm cc;
    if (!shop_done(as_confirmation_read(shop, id, token, &cc, &prob), &prob, resp)) return;
    as_approval_ui ui;
    json_t *approval = as_approval_offer(shop, req, &cc.conf, &ui);
    if (!approval) {
        as_respond_storage_failed(resp);
        return;
    }
    if (as_request_wants_html(req)) {
        json_decref(approval);
        as_respond_json(resp, 200, NULL);
        resp->html =
            as_confirmation_page(shop->mem, &cc.conf, &cc.order, page_action(shop, req, &cc.conf),
                                 token, NULL, &ui, shop->now);
        return;
    }
    json_t *b = as_view_confirmation(shop->mem, &cc.conf, &cc.order);
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

/* Under the passkey policy: the person's assertion, verified against the
 * confirmation inside the decision's transaction (as_passkey_api.c). */
typedef struct passkey_check {
    as_shop *shop;
    const as_request *req;
    as_assertion assertion;
} passkey_check;

static const char *passkey_verified(void *baton, const as_confirmation *c, int *rc)
{
    passkey_check *p = baton;
    return as_approval_verify(p->shop, p->req, c, &p->assertion, rc);
}

static const char *param_or_null(const as_param *v)
{
    return v->present ? v->str : NULL;
}

/* What the page tells the person after the decision. */
static const char *decision_notice(as_mem *m, const as_decided *d)
{
    const char *status = as_confirmation_state_name(d->now.conf.status);
    switch (d->outcome) {
    case AS_DECISION_UNVERIFIED:
        return as_printf(m, "Not approved: %s", d->why);
    case AS_DECISION_EXPIRED:
        return "This link has expired. The order was not placed.";
    case AS_DECISION_REFUSED:
        return as_printf(m, "This purchase can no longer be approved: %s The order was not placed.",
                         d->why);
    case AS_DECISION_CONFLICT:
        return as_printf(m, "This purchase was already %s.", status);
    default:
        return d->now.conf.status == AS_CS_APPROVED ? "Approved. The order is placed."
                                                    : "Declined. The order will not be placed.";
    }
}

void as_api_confirmation_decide(as_shop *shop, const as_request *req, const as_route_params *rp,
                                const as_query *q, as_response *resp)
{
    const char *id = rp->v[0];
    as_mem *m = shop->mem;
    as_param v[C_N], qv[1];
    as_problem prob;
    if (!as_validate_query(m, &token_rule, 1, q, as_today(shop), qv, &prob)) {
        as_respond_problem(resp, &prob);
        return;
    }
    if (!decision_input(shop, req, v, resp)) return;
    const char *token = v[C_TOKEN].present ? v[C_TOKEN].str : param_or_null(&qv[0]);
    passkey_check check = {shop,
                           req,
                           {param_or_null(&v[C_CREDENTIAL]), param_or_null(&v[C_CLIENT_DATA]),
                            param_or_null(&v[C_AUTH_DATA]), param_or_null(&v[C_SIGNATURE])}};
    as_decision d = {strcmp(v[C_DECISION].str, "approve") == 0,
                     shop->cfg->approval_link ? NULL : passkey_verified, &check};
    as_decided out;
    as_shop_rc src = as_confirmation_decide(shop, id, token, &d, &out, &prob);
    /* a refusal still shows the confirmation, unless the link itself is wrong */
    bool shown = src == AS_SHOP_REFUSED && out.outcome != AS_DECISION_INVALID;
    if (!shown && !shop_done(src, &prob, resp)) return;
    as_confirm *cc = &out.now;
    as_approval_ui ui = {0}, *page_ui = NULL;
    if (!shop->cfg->approval_link && cc->conf.status == AS_CS_PENDING) {
        /* the page is shown again, with its challenge (a refused one is not used up) */
        json_t *offer = as_approval_offer(shop, req, &cc->conf, &ui);
        if (!offer) {
            as_respond_storage_failed(resp);
            return;
        }
        json_decref(offer);
        page_ui = &ui;
    }
    if (src == AS_SHOP_REFUSED) {
        as_respond_problem(resp, &prob);
    } else {
        json_t *b = as_view_confirmation(m, &cc->conf, &cc->order);
        json_object_set_new(b, "order", as_view_order(m, &cc->order));
        as_respond_json(resp, 200, b);
    }
    if (is_form(req) || as_request_wants_html(req))
        resp->html =
            as_confirmation_page(m, &cc->conf, &cc->order, page_action(shop, req, &cc->conf), token,
                                 decision_notice(m, &out), page_ui, shop->now);
}
