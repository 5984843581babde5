#include "as_passkey_api.h"

#include <string.h>

#include "as_passkey_view.h"
#include "as_person_pages.h"
#include "as_crypto.h"
#include "as_util.h"
#include "as_webauthn.h"

/* A page's challenge expires on a whole step, one to two steps after it is
 * issued: the schema keeps one per subject and expiry, so a confirmation or an
 * enrolment has at most two live ones however often its link is looked at. */
#define CHALLENGE_STEP 300
#define CHALLENGES_PRUNED 500 /* at most per sweep */

static const char *base_of(const as_request *req)
{
    return req->base_url ? req->base_url : "";
}

static bool passkey_policy(const as_shop *shop)
{
    return !shop->cfg->approval_link;
}

/* The RP, or NULL and *problem (the base URL cannot name one). */
static const as_webauthn_rp *rp_of(as_shop *shop, const as_request *req, const char **problem)
{
    as_webauthn_rp *rp = as_alloc(shop->mem, sizeof(*rp));
    if (as_webauthn_rp_from_base(shop->mem, req->base_url, rp)) return rp;
    *problem = "Passkeys need the shop's address to name a host (AgentShopBaseURL such as "
               "https://shop.example/v1 or http://localhost:8080/v1; not an IP address).";
    as_log(shop, AS_LOG_ERR,
           "passkeys: the base URL %s names no host a passkey can belong to; "
           "set AgentShopBaseURL",
           base_of(req));
    return NULL;
}

/* The challenge a client data answers, or NULL. */
static const char *challenge_in(as_mem *m, const char *client_data)
{
    size_t n;
    unsigned char *raw = as_b64url_decode(m, client_data, &n);
    if (!raw) return NULL;
    json_t *cd = json_loadb((const char *)raw, n, 0, NULL);
    const char *c = json_string_value(json_object_get(cd, "challenge"));
    const char *out = c && strlen(c) <= 200 ? as_strdup(m, c) : NULL;
    json_decref(cd);
    return out;
}

/* The challenge a page for subject offers now: the unused one that expires
 * last while it has as long as a new one would, else a new one. A look at a
 * link thus writes at most once per step. AS_ENOTFOUND: none can be issued
 * (the step's one was used). */
static int challenge_for(as_shop *shop, const char *purpose, const char *subject, as_challenge *out)
{
    const as_store *s = shop->store;
    int64_t slot = (shop->now / CHALLENGE_STEP + 2) * CHALLENGE_STEP;
    int rc = as_store_challenge_live(s, shop->mem, purpose, subject, shop->now, out);
    if (rc != AS_ENOTFOUND && (rc != AS_OK || out->expires_at >= slot)) return rc;
    const char *fresh = as_random_b64url(shop->mem, 32);
    rc = as_store_challenge_insert(s, fresh, purpose, subject, slot);
    if (rc == AS_OK) *out = (as_challenge){fresh, slot};
    /* AS_ECONFLICT: another look issued the step's one first, or it was used */
    return rc == AS_ECONFLICT
               ? as_store_challenge_live(s, shop->mem, purpose, subject, shop->now, out)
               : rc;
}

int as_sweep_challenges(as_shop *shop)
{
    int n = 0;
    if (as_store_challenges_prune(shop->store, shop->now, CHALLENGES_PRUNED, &n) != AS_OK) {
        as_log(shop, AS_LOG_ERR, "passkeys: pruning expired challenges failed");
        return -1;
    }
    return n;
}

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
    const as_store *s = shop->store;
    memset(ui, 0, sizeof(*ui));
    if (!passkey_policy(shop)) return as_view_approval_link();
    ui->passkey = true;
    ui->script = as_printf(shop->mem, "%s/webauthn.js", base_of(req));
    as_passkey *keys;
    size_t n = 0;
    if (as_store_passkeys_of(s, shop->mem, c->user_id, &keys, &n) != AS_OK) return NULL;
    ui->has_passkey = n > 0;
    const as_webauthn_rp *rp = rp_of(shop, req, &ui->problem);
    if (!rp || n == 0 || c->status != AS_CS_PENDING)
        return as_view_approval_unavailable(
            n > 0, ui->problem ? ui->problem
                   : n == 0    ? "Approving needs a passkey of the person, and none is "
                                 "registered: the operator gives them an enrolment link "
                                 "(agentshopctl user enrol). The order waits until the "
                                 "link expires; declining needs no passkey."
                            /* the contract's message is a string: say why none is asked */
                            : as_printf(shop->mem,
                                        "This purchase is %s: there is nothing left to "
                                        "approve.",
                                        as_confirmation_state_name(c->status)));
    as_challenge ch;
    int rc = challenge_for(shop, "approve", c->id, &ch);
    if (rc == AS_ENOTFOUND) {
        ui->problem = "This purchase's passkey challenge was used already: reload the page in a "
                      "few minutes.";
        return as_view_approval_unavailable(true, ui->problem);
    }
    if (rc != AS_OK) return NULL;
    json_t *pk =
        as_view_assertion_options(ch.challenge, rp->id, keys, n, (ch.expires_at - shop->now) * 1000);
    ui->options = script_json(shop->mem, pk);
    return as_view_approval_passkey(pk);
}

const char *as_approval_verify(as_shop *shop, const as_request *req, const as_confirmation *c,
                               const as_assertion *a, int *rc)
{
    const as_store *s = shop->store;
    as_mem *m = shop->mem;
    *rc = AS_OK;
    if (!a->credential_id || !a->client_data || !a->authenticator_data || !a->signature)
        return "Approving this purchase needs the person's passkey: open the link in a browser "
               "and approve there. The link alone can decline, never approve.";
    const char *problem = NULL;
    const as_webauthn_rp *rp = rp_of(shop, req, &problem);
    if (!rp) return problem;
    as_passkey key;
    int got = as_store_passkey_get(s, m, a->credential_id, &key);
    if (got == AS_EDB) {
        *rc = AS_EDB;
        return NULL;
    }
    if (got != AS_OK || strcmp(key.user_id, c->user_id) != 0)
        return "The passkey is not one of the passkeys of the person this purchase is for.";
    const char *challenge = challenge_in(m, a->client_data);
    if (!challenge) return "The passkey's answer carries no challenge.";
    int used = as_store_challenge_use(s, challenge, "approve", c->id, shop->now);
    if (used == AS_EDB) {
        *rc = AS_EDB;
        return NULL;
    }
    if (used != AS_OK)
        return "The passkey answered a challenge this page did not issue for this purchase, or "
               "one already used or expired: reload the page and approve again.";
    const char *why = NULL;
    int64_t count = 0;
    if (!as_webauthn_verify(m, rp, challenge, &key, a->client_data, a->authenticator_data,
                            a->signature, &count, &why))
        return as_printf(m, "The passkey's answer was refused: %s.", why);
    int moved = as_store_passkey_count(s, key.id, key.sign_count, count);
    if (moved == AS_EDB) {
        *rc = AS_EDB;
        return NULL;
    }
    if (moved != AS_OK) return "Another approval with this passkey came first: reload the page.";
    return NULL;
}

/* ---- enrolment ---- */

static const as_param_rule enrol_token_rule = {"token", AS_V_TEXT, 8, 200, NULL};

/* The enrolment behind id and token, when the link is valid now. */
static bool enrolment_ok(as_shop *shop, const char *id, const char *token, as_enrolment *e,
                         as_response *resp)
{
    const as_store *s = shop->store;
    memset(e, 0, sizeof(*e));
    int rc = as_store_enrolment_get(s, shop->mem, id, e);
    if (rc == AS_EDB) {
        as_respond_storage_failed(resp);
        return false;
    }
    bool ok = rc == AS_OK && token &&
              as_secure_equal(as_sha256_hex(shop->mem, token, strlen(token)), e->token_hash) &&
              e->used_at == 0 && shop->now < e->expires_at;
    if (!ok)
        as_respond_error(resp, 404, "NOT_FOUND", NULL,
                         "This enrolment link is not valid: its id or token is wrong, it was "
                         "used already, or it expired. Ask the shop's operator for a new one.");
    return ok;
}

static bool wants_html(const as_request *req)
{
    return as_accept_html(req->accept);
}

void as_api_enrol_get(as_shop *shop, const as_request *req, const char *id, const as_query *q,
                      as_response *resp)
{
    const as_store *s = shop->store;
    as_mem *m = shop->mem;
    as_param v[1];
    as_problem prob;
    if (!as_validate_query(m, &enrol_token_rule, 1, q, as_today(shop), v, &prob)) {
        as_respond_error(resp, 404, "NOT_FOUND", NULL, "This enrolment link is not valid.");
        return;
    }
    as_enrolment e;
    if (!enrolment_ok(shop, id, v[0].present ? v[0].str : NULL, &e, resp)) return;
    const char *problem = NULL;
    const as_webauthn_rp *rp = rp_of(shop, req, &problem);
    json_t *o = NULL;
    if (rp) {
        as_challenge ch;
        if (challenge_for(shop, "enrol", e.id, &ch) != AS_OK) {
            as_respond_storage_failed(resp);
            return;
        }
        as_passkey *keys;
        size_t n = 0;
        if (as_store_passkeys_of(s, m, e.user_id, &keys, &n) != AS_OK) {
            as_respond_storage_failed(resp);
            return;
        }
        o = as_view_enrol_options(m, ch.challenge, rp->id, &e, keys, n,
                                  as_printf(m, "%s/enrol/%s", base_of(req), e.id), v[0].str,
                                  (ch.expires_at - shop->now) * 1000);
    }
    if (wants_html(req)) {
        const char *options = script_json(m, o);
        json_decref(o);
        as_respond_json(resp, 200, NULL);
        resp->html =
            as_enrol_page(m, &e, options, as_printf(m, "%s/webauthn.js", base_of(req)), problem);
        return;
    }
    if (!o) {
        as_respond_error(resp, 503, "SERVICE_UNAVAILABLE", NULL, problem);
        return;
    }
    as_respond_json(resp, 200, as_view_enrolment(&e, o));
}

enum { N_TOKEN, N_CLIENT_DATA, N_ATTESTATION, N_N };
static const as_field_rule enrol_rules[N_N] = {
    [N_TOKEN] = {{"token", AS_V_TEXT, 8, 200, NULL}, true},
    [N_CLIENT_DATA] = {{"client_data", AS_V_SLUG, 1, 8192, NULL}, true},
    [N_ATTESTATION] = {{"attestation", AS_V_SLUG, 1, 16384, NULL}, true},
};

void as_api_enrol_post(as_shop *shop, const as_request *req, const char *id, as_response *resp)
{
    const as_store *s = shop->store;
    as_mem *m = shop->mem;
    as_param v[N_N];
    if (!as_body_params(shop, req, enrol_rules, N_N, v, resp)) return;
    const char *problem = NULL;
    const as_webauthn_rp *rp = rp_of(shop, req, &problem);
    if (!rp) {
        as_respond_error(resp, 503, "SERVICE_UNAVAILABLE", NULL, problem);
        return;
    }
    as_enrolment e;
    int rc = as_store_begin(s);
    if (rc != AS_OK) {
        as_respond_storage_failed(resp);
        return;
    }
    if (!enrolment_ok(shop, id, v[N_TOKEN].str, &e, resp)) {
        as_store_rollback(s);
        return;
    }
    const char *challenge = challenge_in(m, v[N_CLIENT_DATA].str);
    int used =
        challenge ? as_store_challenge_use(s, challenge, "enrol", e.id, shop->now) : AS_ECONFLICT;
    const char *why = NULL;
    as_passkey key;
    if (used == AS_OK && !as_webauthn_register(m, rp, challenge, v[N_CLIENT_DATA].str,
                                               v[N_ATTESTATION].str, &key, &why))
        used = AS_ECONFLICT;
    else if (used != AS_OK && used != AS_EDB)
        why = "it answers a challenge this page did not issue, or one already used or expired "
              "(reload the page)";
    if (used == AS_OK) {
        key.user_id = e.user_id;
        key.created_at = shop->now;
        used = as_store_passkey_insert(s, &key);
        if (used == AS_ECONFLICT) why = "this passkey is registered already";
    }
    if (used == AS_OK) used = as_store_enrolment_use(s, e.id, shop->now);
    if (used == AS_OK) used = as_store_commit(s);
    if (used != AS_OK) {
        as_store_rollback(s);
        if (used == AS_EDB) {
            as_respond_storage_failed(resp);
            return;
        }
        as_respond_error(resp, 400, "VALIDATION_ERROR", "attestation",
                         as_printf(m, "The passkey could not be registered: %s.",
                                   why ? why : "the enrolment changed meanwhile"));
        return;
    }
    as_log(shop, AS_LOG_INFO, "passkey %s registered for user %s (enrolment %s)", key.id, e.user_id,
           e.id);
    as_respond_json(resp, 201, as_view_passkey_registered(m, &key));
}

void as_api_enrol(as_shop *shop, const as_request *req, const char *id, const as_query *q,
                  as_response *resp)
{
    if (strcmp(req->method, "POST") == 0) {
        if (q->n) {
            as_respond_error(resp, 400, "VALIDATION_ERROR", q->items[0].key,
                             "POST /enrol/{id} takes the token in its body, not the URL.");
            return;
        }
        as_api_enrol_post(shop, req, id, resp);
    } else {
        as_api_enrol_get(shop, req, id, q, resp);
    }
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

void as_api_webauthn_js(as_response *resp)
{
    as_respond_json(resp, 200, NULL);
    resp->raw = WEBAUTHN_JS;
    resp->raw_len = sizeof(WEBAUTHN_JS) - 1;
    resp->content_type = "text/javascript; charset=utf-8";
    resp->max_age = 300;
}
