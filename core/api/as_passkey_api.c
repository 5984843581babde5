#include "as_passkey_api.h"

#include <stdlib.h>
#include <string.h>

#include "as_api_internal.h"
#include "as_passkey_view.h"
#include "as_person_pages.h"
#include "as_handlers.h"
#include "as_util.h"

/* JSON for a <script type="application/json"> block: every '<' (only ever
 * inside a string) as \u003c, so nothing in it can close the element. */
static const char *script_json(as_mem *m, const json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    if (!text) return NULL;
    as_buf b;
    as_buf_init(&b, m);
    for (const char *p = text; *p; p++)
        if (*p == '<')
            as_buf_puts(&b, "\\u003c");
        else
            as_buf_add(&b, p, 1);
    free(text);
    return as_buf_str(&b);
}

/* ---- approving a confirmation ---- */

json_t *as_approval_offer(as_shop *shop, const as_request *req, const as_confirmation *c,
                          as_approval_ui *ui)
{
    memset(ui, 0, sizeof(*ui));
    as_approval_plan plan;
    if (as_approval_plan_for(shop, req->base_url, c, &plan) != AS_SHOP_DONE) return NULL;
    if (!plan.passkey) return as_view_approval_link();
    ui->passkey = true;
    ui->script = as_printf(shop->mem, "%s/webauthn.js", as_request_base(req));
    ui->has_passkey = plan.has_passkey;
    ui->problem = plan.problem;
    if (plan.unavailable) return as_view_approval_unavailable(plan.has_passkey, plan.unavailable);
    json_t *pk = as_view_assertion_options(plan.challenge.challenge, plan.rp_id, plan.keys,
                                           plan.n_keys, plan.timeout_ms);
    ui->options = script_json(shop->mem, pk);
    return as_view_approval_passkey(pk);
}

const char *as_approval_verify(as_shop *shop, const as_request *req, const as_confirmation *c,
                               const as_assertion *a, int *rc)
{
    as_problem why;
    as_shop_rc done = as_approval_check(shop, req->base_url, c, a, &why);
    *rc = done == AS_SHOP_FAILED ? AS_EDB : AS_OK;
    return done == AS_SHOP_REFUSED ? why.message : NULL;
}

/* ---- enrolment ---- */

static const as_param_rule enrol_token_rule = {"token", AS_V_TEXT, 8, 200, NULL};

/* The answer of an operation that did not do it. */
static void respond_not_done(as_response *resp, as_shop_rc rc, const as_problem *why)
{
    if (rc == AS_SHOP_REFUSED)
        as_respond_problem(resp, why);
    else
        as_respond_storage_failed(resp);
}

/* GET /enrol/{id}: the page, or its options as JSON. */
void as_api_enrol_get(as_shop *shop, const as_request *req, const as_route_params *rp,
                      const as_query *q, as_response *resp)
{
    const char *id = rp->v[0];
    as_mem *m = shop->mem;
    as_param v[1];
    as_problem why;
    if (!as_validate_query(m, &enrol_token_rule, 1, q, as_today(shop), v, &why)) {
        as_respond_error(resp, 404, "NOT_FOUND", NULL, "This enrolment link is not valid.");
        return;
    }
    as_enrol_offer offer;
    as_shop_rc rc =
        as_enrol_offer_for(shop, req->base_url, id, v[0].present ? v[0].str : NULL, &offer, &why);
    if (rc != AS_SHOP_DONE) {
        respond_not_done(resp, rc, &why);
        return;
    }
    const as_enrolment *e = &offer.e;
    json_t *o =
        offer.problem
            ? NULL
            : as_view_enrol_options(m, offer.challenge.challenge, offer.rp_id, e, offer.keys,
                                    offer.n_keys, as_printf(m, "%s/enrol/%s", as_request_base(req), e->id),
                                    v[0].str, offer.timeout_ms);
    if (as_request_wants_html(req)) {
        const char *options = script_json(m, o);
        json_decref(o);
        as_respond_json(resp, 200, NULL);
        resp->html = as_enrol_page(m, e, options, as_printf(m, "%s/webauthn.js", as_request_base(req)),
                                   offer.problem);
        return;
    }
    if (!o) {
        as_respond_error(resp, 503, "SERVICE_UNAVAILABLE", NULL, offer.problem);
        return;
    }
    as_respond_json(resp, 200, as_view_enrolment(e, o));
}

enum { N_TOKEN, N_CLIENT_DATA, N_ATTESTATION, N_N };
static const as_field_rule enrol_rules[N_N] = {
    [N_TOKEN] = {{"token", AS_V_TEXT, 8, 200, NULL}, true},
    [N_CLIENT_DATA] = {{"client_data", AS_V_SLUG, 1, 8192, NULL}, true},
    [N_ATTESTATION] = {{"attestation", AS_V_SLUG, 1, 16384, NULL}, true},
};

/* POST /enrol/{id}: the passkey registered. */
void as_api_enrol_post(as_shop *shop, const as_request *req, const as_route_params *rp,
                       const as_query *q, as_response *resp)
{
    if (q->n) {
        as_respond_error(resp, 400, "VALIDATION_ERROR", q->items[0].key,
                         "POST /enrol/{id} takes the token in its body, not the URL.");
        return;
    }
    const char *id = rp->v[0];
    as_param v[N_N];
    if (!as_body_params(shop, req, enrol_rules, N_N, v, resp)) return;
    as_passkey key;
    as_problem why;
    as_shop_rc rc = as_passkey_enrol(shop, req->base_url, id, v[N_TOKEN].str, v[N_CLIENT_DATA].str,
                                     v[N_ATTESTATION].str, &key, &why);
    if (rc != AS_SHOP_DONE) {
        respond_not_done(resp, rc, &why);
        return;
    }
    as_respond_json(resp, 201, as_view_passkey_registered(shop->mem, &key));
}

/* ---- the script ---- */

static const char WEBAUTHN_JS[] =
    "'use strict';\n"
    "// mod_agentshop: the passkey ceremonies of the enrolment and confirmation pages.\n"
    "(function () {\n"
    "  const b64u = {\n"
    "    enc: (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)))\n"
    "      .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, ''),\n"
    "    dec: (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') +\n"
    "      '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0)),\n"
    "  };\n"
    "  const el = document.getElementById('webauthn-options');\n"
    "  if (!el) return;\n"
    "  const opts = JSON.parse(el.textContent);\n"
    "  const status = document.getElementById('status');\n"
    "  const say = (t) => { if (status) status.textContent = t; };\n"
    "  const enrol = document.getElementById('enrol');\n"
    "  if (enrol) enrol.addEventListener('click', async () => {\n"
    "    enrol.disabled = true;\n"
    "    try {\n"
    "      const cred = await navigator.credentials.create({ publicKey: {\n"
    "        challenge: b64u.dec(opts.challenge),\n"
    "        rp: { id: opts.rp_id, name: opts.rp_name },\n"
    "        user: { id: b64u.dec(opts.user_handle), name: opts.user, displayName: opts.user },\n"
    "        pubKeyCredParams: opts.algorithms.map((alg) => ({ type: 'public-key', alg })),\n"
    "        excludeCredentials: opts.exclude_credentials.map((id) =>\n"
    "          ({ type: 'public-key', id: b64u.dec(id) })),\n"
    "        authenticatorSelection: { userVerification: 'required', residentKey: 'preferred' },\n"
    "        attestation: 'none', timeout: opts.timeout_ms } });\n"
    "      const res = await fetch(opts.action, { method: 'POST',\n"
    "        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },\n"
    "        body: JSON.stringify({ token: opts.token,\n"
    "          client_data: b64u.enc(cred.response.clientDataJSON),\n"
    "          attestation: b64u.enc(cred.response.attestationObject) }) });\n"
    "      const body = await res.json();\n"
    "      say(res.ok ? body.message : 'Not registered: ' + body.message);\n"
    "      if (!res.ok) enrol.disabled = false;\n"
    "    } catch (e) { say('Not registered: ' + e.message); enrol.disabled = false; }\n"
    "  });\n"
    "  const form = document.getElementById('decide');\n"
    "  const approve = document.getElementById('approve');\n"
    "  if (form && approve) approve.addEventListener('click', async (ev) => {\n"
    "    ev.preventDefault();\n"
    "    approve.disabled = true;\n"
    "    try {\n"
    "      const cred = await navigator.credentials.get({ publicKey: {\n"
    "        challenge: b64u.dec(opts.challenge), rpId: opts.rp_id,\n"
    "        allowCredentials: opts.allow_credentials.map((id) =>\n"
    "          ({ type: 'public-key', id: b64u.dec(id) })),\n"
    "        userVerification: 'required', timeout: opts.timeout_ms } });\n"
    "      const set = (name, value) => {\n"
    "        const i = document.createElement('input');\n"
    "        i.type = 'hidden'; i.name = name; i.value = value;\n"
    "        form.appendChild(i);\n"
    "      };\n"
    "      set('credential_id', b64u.enc(cred.rawId));\n"
    "      set('client_data', b64u.enc(cred.response.clientDataJSON));\n"
    "      set('authenticator_data', b64u.enc(cred.response.authenticatorData));\n"
    "      set('signature', b64u.enc(cred.response.signature));\n"
    "      set('decision', 'approve');\n"
    "      form.submit();\n"
    "    } catch (e) { say('Not approved: ' + e.message); approve.disabled = false; }\n"
    "  });\n"
    "})();\n";

void as_api_webauthn_js(as_shop *shop, const as_request *req, const as_route_params *rp,
                        const as_query *q, as_response *resp)
{
    (void)shop;
    (void)req;
    (void)rp;
    (void)q;
    as_respond_json(resp, 200, NULL);
    resp->raw = WEBAUTHN_JS;
    resp->raw_len = sizeof(WEBAUTHN_JS) - 1;
    resp->content_type = "text/javascript; charset=utf-8";
    resp->max_age = 300;
}
