/* Passkeys for the people behind mandates (issue 17, docs/security.md) as the
 * shop's operations: enrolment through a one-time link, and approvals above
 * the confirm-above threshold that need a WebAuthn assertion from one of the
 * user's passkeys, over a single-use challenge bound to that confirmation.
 * Under the `link` policy (AgentShopApproval link) none of this is asked.
 * base_url: the API's base URL (AgentShopBaseURL); its host is the relying
 * party and its scheme, host and port the origin the browser must report. */
#ifndef AS_PASSKEYS_H
#define AS_PASSKEYS_H

#include "as_commerce.h"
#include "as_shop.h"

/* The assertion fields of a decision. */
typedef struct as_assertion {
    const char *credential_id, *client_data, *authenticator_data, *signature;
} as_assertion;

/* What a confirmation's page can offer for approving it. */
typedef struct as_approval_plan {
    bool passkey;            /* the policy asks for one; false: the link approves */
    bool has_passkey;        /* ... and the user has one */
    const char *problem;     /* why passkeys cannot work here now, or NULL */
    const char *unavailable; /* why no approval can be asked for now; NULL: the options below */
    as_challenge challenge;  /* single use, 5 to 10 minutes left */
    const char *rp_id;
    const as_passkey *keys; /* the user's credentials */
    size_t n_keys;
    int64_t timeout_ms;
} as_approval_plan;

/* For confirmation c under the passkey policy, when it is pending: a
 * challenge for it (the same one for every look within 5 minutes) and the
 * user's credentials. FAILED: storage failed. */
as_shop_rc as_approval_plan_for(as_shop *shop, const char *base_url, const as_confirmation *c,
                                as_approval_plan *out);

/* Inside the decision's transaction, before an approval under the passkey
 * policy: DONE when `a` is an assertion by one of the confirmation's user's
 * passkeys, user verified, answering a challenge issued for this very
 * confirmation (now used up) with a counter that grew (now kept). REFUSED 403
 * PASSKEY_REQUIRED: why not, for the person and the agent. FAILED: storage. */
as_shop_rc as_approval_check(as_shop *shop, const char *base_url, const as_confirmation *c,
                             const as_assertion *a, as_problem *why);

/* What an enrolment link's page offers: the registration's challenge and the
 * passkeys the user has already (not to be registered twice). */
typedef struct as_enrol_offer {
    as_enrolment e;
    const char *problem; /* why passkeys cannot work here (the base URL): no options */
    as_challenge challenge;
    const char *rp_id;
    const as_passkey *keys;
    size_t n_keys;
    int64_t timeout_ms;
} as_enrol_offer;

/* The enrolment behind id and token, while its link is valid. REFUSED 404
 * NOT_FOUND: wrong id or token, used or expired. */
as_shop_rc as_enrol_offer_for(as_shop *shop, const char *base_url, const char *id,
                              const char *token, as_enrol_offer *out, as_problem *why);

/* Registers the passkey a browser created for enrolment id (its base64url
 * client_data and attestation) and uses the link up. REFUSED: 503
 * SERVICE_UNAVAILABLE (the base URL), 404 NOT_FOUND (the link), 400
 * VALIDATION_ERROR naming "attestation" (the registration). */
as_shop_rc as_passkey_enrol(as_shop *shop, const char *base_url, const char *id, const char *token,
                            const char *client_data, const char *attestation, as_passkey *key,
                            as_problem *why);

/* The sweep: challenges that expired deleted, a bounded number at a time (as
 * as_handle sweeps expired confirmations). How many, or -1 (logged). */
int as_sweep_challenges(as_shop *shop);

#endif
