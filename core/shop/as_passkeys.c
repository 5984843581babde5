#include "as_passkeys.h"

#include <string.h>

#include "as_crypto.h"
#include "as_util.h"
#include "as_webauthn.h"

/* A page's challenge expires on a whole step, one to two steps after it is
 * issued: the schema keeps one per subject and expiry, so a confirmation or an
 * enrolment has at most two live ones however often its link is looked at. */
#define CHALLENGE_STEP 300
#define CHALLENGES_PRUNED 500 /* at most per sweep */

static bool passkey_policy(const as_shop *shop)
{
    return !shop->cfg->approval_link;
}

/* The RP, or NULL and *problem (the base URL cannot name one). */
static const as_webauthn_rp *rp_of(as_shop *shop, const char *base_url, const char **problem)
{
    as_webauthn_rp *rp = as_alloc(shop->mem, sizeof(*rp));
    if (as_webauthn_rp_from_base(shop->mem, base_url, rp)) return rp;
    *problem = "Passkeys need the shop's address to name a host (AgentShopBaseURL such as "
               "https://shop.example/v1 or http://localhost:8080/v1; not an IP address).";
    as_log(shop, AS_LOG_ERR,
           "passkeys: the base URL %s names no host a passkey can belong to; "
           "set AgentShopBaseURL",
           base_url ? base_url : "");
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

/* ---- approving a confirmation ---- */

/* Why no approval of c can be asked for (n: the user's passkeys), or NULL. */
static const char *approval_unavailable(as_shop *shop, const as_confirmation *c, size_t n,
                                        const char *problem)
{
    if (problem) return problem;
    if (n == 0)
        return "Approving needs a passkey of the person, and none is registered: the operator "
               "gives them an enrolment link (agentshopctl user enrol). The order waits until "
               "the link expires; declining needs no passkey.";
    /* the contract's message is a string: say why none is asked */
    if (c->status != AS_CS_PENDING)
        return as_printf(shop->mem, "This purchase is %s: there is nothing left to approve.",
                         as_confirmation_state_name(c->status));
    return NULL;
}

as_shop_rc as_approval_plan_for(as_shop *shop, const char *base_url, const as_confirmation *c,
                                as_approval_plan *out)
{
    memset(out, 0, sizeof(*out));
    if (!passkey_policy(shop)) return AS_SHOP_DONE;
    out->passkey = true;
    as_passkey *keys;
    size_t n = 0;
    if (as_store_passkeys_of(shop->store, shop->mem, c->user_id, &keys, &n) != AS_OK)
        return AS_SHOP_FAILED;
    out->has_passkey = n > 0;
    const as_webauthn_rp *rp = rp_of(shop, base_url, &out->problem);
    if ((out->unavailable = approval_unavailable(shop, c, n, rp ? NULL : out->problem)))
        return AS_SHOP_DONE;
    int rc = challenge_for(shop, "approve", c->id, &out->challenge);
    if (rc == AS_ENOTFOUND) {
        out->problem = out->unavailable = "This purchase's passkey challenge was used already: "
                                          "reload the page in a few minutes.";
        return AS_SHOP_DONE;
    }
    if (rc != AS_OK) return AS_SHOP_FAILED;
    out->rp_id = rp->id;
    out->keys = keys;
    out->n_keys = n;
    out->timeout_ms = (out->challenge.expires_at - shop->now) * 1000;
    return AS_SHOP_DONE;
}

static as_shop_rc not_approved(as_problem *why, const char *message)
{
    as_problem_set(why, 403, "PASSKEY_REQUIRED", NULL, message);
    return AS_SHOP_REFUSED;
}

/* The user's passkey that signed `a`, else why not (*rc: the store's). */
static const char *signer(as_shop *shop, const as_confirmation *c, const as_assertion *a,
                          as_passkey *key, int *rc)
{
    *rc = as_store_passkey_get(shop->store, shop->mem, a->credential_id, key);
    if (*rc == AS_EDB) return NULL;
    if (*rc != AS_OK || strcmp(key->user_id, c->user_id) != 0) {
        *rc = AS_OK;
        return "The passkey is not one of the passkeys of the person this purchase is for.";
    }
    return NULL;
}

as_shop_rc as_approval_check(as_shop *shop, const char *base_url, const as_confirmation *c,
                             const as_assertion *a, as_problem *why)
{
    const as_store *s = shop->store;
    as_mem *m = shop->mem;
    if (!a->credential_id || !a->client_data || !a->authenticator_data || !a->signature)
        return not_approved(why, "Approving this purchase needs the person's passkey: open the "
                                 "link in a browser and approve there. The link alone can "
                                 "decline, never approve.");
    const char *problem = NULL;
    const as_webauthn_rp *rp = rp_of(shop, base_url, &problem);
    if (!rp) return not_approved(why, problem);
    as_passkey key;
    int rc;
    if ((problem = signer(shop, c, a, &key, &rc))) return not_approved(why, problem);
    if (rc != AS_OK) return AS_SHOP_FAILED;
    const char *challenge = challenge_in(m, a->client_data);
    if (!challenge) return not_approved(why, "The passkey's answer carries no challenge.");
    rc = as_store_challenge_use(s, challenge, "approve", c->id, shop->now);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    if (rc != AS_OK)
        return not_approved(why, "The passkey answered a challenge this page did not issue for "
                                 "this purchase, or one already used or expired: reload the "
                                 "page and approve again.");
    int64_t count = 0;
    if (!as_webauthn_verify(m, rp, challenge, &key, a->client_data, a->authenticator_data,
                            a->signature, &count, &problem))
        return not_approved(why, as_printf(m, "The passkey's answer was refused: %s.", problem));
    rc = as_store_passkey_count(s, key.id, key.sign_count, count);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    if (rc != AS_OK)
        return not_approved(why, "Another approval with this passkey came first: reload the page.");
    return AS_SHOP_DONE;
}

/* ---- enrolment ---- */

/* The enrolment behind id and token, when the link is valid now. */
static as_shop_rc enrolment_ok(as_shop *shop, const char *id, const char *token, as_enrolment *e,
                               as_problem *why)
{
    memset(e, 0, sizeof(*e));
    int rc = as_store_enrolment_get(shop->store, shop->mem, id, e);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    bool ok = rc == AS_OK && token &&
              as_secure_equal(as_sha256_hex(shop->mem, token, strlen(token)), e->token_hash) &&
              e->used_at == 0 && shop->now < e->expires_at;
    if (ok) return AS_SHOP_DONE;
    as_problem_set(why, 404, "NOT_FOUND", NULL,
                   "This enrolment link is not valid: its id or token is wrong, it was used "
                   "already, or it expired. Ask the shop's operator for a new one.");
    return AS_SHOP_REFUSED;
}

as_shop_rc as_enrol_offer_for(as_shop *shop, const char *base_url, const char *id,
                              const char *token, as_enrol_offer *out, as_problem *why)
{
    memset(out, 0, sizeof(*out));
    as_shop_rc ok = enrolment_ok(shop, id, token, &out->e, why);
    if (ok != AS_SHOP_DONE) return ok;
    const as_webauthn_rp *rp = rp_of(shop, base_url, &out->problem);
    if (!rp) return AS_SHOP_DONE;
    if (challenge_for(shop, "enrol", out->e.id, &out->challenge) != AS_OK) return AS_SHOP_FAILED;
    as_passkey *keys;
    size_t n = 0;
    if (as_store_passkeys_of(shop->store, shop->mem, out->e.user_id, &keys, &n) != AS_OK)
        return AS_SHOP_FAILED;
    out->rp_id = rp->id;
    out->keys = keys;
    out->n_keys = n;
    out->timeout_ms = (out->challenge.expires_at - shop->now) * 1000;
    return AS_SHOP_DONE;
}

/* Inside the enrolment's transaction: the passkey registered for e, else
 * the store's error (*why set when it is the registration's fault). */
static int register_passkey(as_shop *shop, const as_webauthn_rp *rp, const as_enrolment *e,
                            const char *client_data, const char *attestation, as_passkey *key,
                            const char **why)
{
    as_mem *m = shop->mem;
    const char *challenge = challenge_in(m, client_data);
    int rc = challenge ? as_store_challenge_use(shop->store, challenge, "enrol", e->id, shop->now)
                       : AS_ECONFLICT;
    if (rc == AS_OK && !as_webauthn_register(m, rp, challenge, client_data, attestation, key, why))
        rc = AS_ECONFLICT;
    else if (rc != AS_OK && rc != AS_EDB)
        *why = "it answers a challenge this page did not issue, or one already used or expired "
               "(reload the page)";
    if (rc != AS_OK) return rc;
    key->user_id = e->user_id;
    key->created_at = shop->now;
    rc = as_store_passkey_insert(shop->store, key);
    if (rc == AS_ECONFLICT) *why = "this passkey is registered already";
    if (rc == AS_OK) rc = as_store_enrolment_use(shop->store, e->id, shop->now);
    return rc;
}

as_shop_rc as_passkey_enrol(as_shop *shop, const char *base_url, const char *id, const char *token,
                            const char *client_data, const char *attestation, as_passkey *key,
                            as_problem *why)
{
    const as_store *s = shop->store;
    const char *problem = NULL;
    const as_webauthn_rp *rp = rp_of(shop, base_url, &problem);
    if (!rp) {
        as_problem_set(why, 503, "SERVICE_UNAVAILABLE", NULL, problem);
        return AS_SHOP_REFUSED;
    }
    if (as_store_begin(s) != AS_OK) return AS_SHOP_FAILED;
    as_enrolment e;
    as_shop_rc ok = enrolment_ok(shop, id, token, &e, why);
    if (ok != AS_SHOP_DONE) {
        as_store_rollback(s);
        return ok;
    }
    const char *bad = NULL;
    int rc = register_passkey(shop, rp, &e, client_data, attestation, key, &bad);
    if (rc == AS_OK) rc = as_store_commit(s);
    if (rc != AS_OK) {
        as_store_rollback(s);
        if (rc == AS_EDB) return AS_SHOP_FAILED;
        as_problem_set(why, 400, "VALIDATION_ERROR", "attestation",
                       as_printf(shop->mem, "The passkey could not be registered: %s.",
                                 bad ? bad : "the enrolment changed meanwhile"));
        return AS_SHOP_REFUSED;
    }
    as_log(shop, AS_LOG_INFO, "passkey %s registered for user %s (enrolment %s)", key->id,
           e.user_id, e.id);
    return AS_SHOP_DONE;
}
