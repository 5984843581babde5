/* Buying as the shop's operations (docs/buying.md): the agent behind a key
 * (spec 5), the mandate (4.7), quotes (4.8), orders (4.9) and the person's
 * confirmation through a signed link (4.13, 4.14). Each takes the as_shop and
 * typed inputs and says what happened as an as_shop_rc (as_shop.h); a refusal
 * names its reason in *why, with the /v1 error code and status. */
#ifndef AS_BUYING_H
#define AS_BUYING_H

#include "as_catalog.h"
#include "as_commerce.h"
#include "as_rank.h"
#include "as_shop.h"

/* ---- the agent (spec 5) ---- */

/* The agent key `key` (its shape already checked): DONE with agent->key_id
 * and agent->user_id (the name is the binding's to set); REFUSED 403
 * AGENT_UNIDENTIFIED when it is unknown or revoked. */
as_shop_rc as_agent_by_key(as_shop *shop, const char *key, as_agent *agent, as_problem *why);

/* ---- the mandate (spec 4.7) ---- */

typedef struct as_mandate_month {
    as_mandate mandate;
    as_mandate_state state; /* today's: AS_MS_ACTIVE when DONE */
    const char *month;      /* yyyy-mm, UTC */
    int64_t spent_cents;    /* what the month's orders hold of the monthly limit */
} as_mandate_month;

/* The user's current mandate and its month, after releasing what expired
 * confirmations held (a write only when something did). REFUSED 403
 * MANDATE_INVALID when there is none, or it is no longer in force. */
as_shop_rc as_mandate_current(as_shop *shop, const char *user_id, as_mandate_month *out,
                              as_problem *why);

/* ---- quotes (spec 4.8) ---- */

typedef struct as_quote_ask {
    const char *sku;
    const char *offer_id; /* NULL: the best ranked offer with the stock */
    int64_t quantity;
    const as_device *device; /* NULL: none (no fit status, no guarantee) */
    as_weights weights;
    int64_t deliver_by; /* the day it must arrive by; 0: any */
} as_quote_ask;

/* Ranks the product's offers, chooses one and stores the quote in *out.
 * REFUSED: 404 NOT_FOUND (sku, offer_id), 409 OUT_OF_STOCK or
 * OFFER_NOT_ELIGIBLE. */
as_shop_rc as_quote_create(as_shop *shop, const as_agent *agent, const as_quote_ask *ask,
                           as_quote *out, as_problem *why);

/* ---- orders (spec 4.9) ---- */

typedef struct as_order_ask {
    const char *quote_id, *reason;
    const char *mandate_id; /* NULL: the user's current mandate */
} as_order_ask;

typedef struct as_placement {
    as_order order; /* placed, or awaiting confirmation */
    bool needs_confirmation;
    /* when it needs confirmation: the person's link is the confirmation's id
     * and token */
    as_confirmation confirmation;
    const char *token;
    int64_t confirm_above_cents; /* the mandate's threshold */
} as_placement;

/* Places an order from a quote under a mandate, inside the caller's
 * transaction (as_idempotent_run's work), which must end in a commit for
 * DONE and REFUSED alike (a refusal changed nothing) and in a rollback for
 * FAILED. REFUSED: 404 NOT_FOUND, 409 QUOTE_ALREADY_USED, 410 QUOTE_EXPIRED,
 * 403 MANDATE_INVALID, 422 CATEGORY_NOT_ALLOWED, 409 OUT_OF_STOCK. Needs the
 * signing key (AgentShopSigningKeyFile): FAILED without it. */
as_shop_rc as_order_place(as_shop *shop, const as_agent *agent, const as_order_ask *ask,
                          as_placement *out, as_problem *why);

/* ---- confirmations (spec 4.13, 4.14) ---- */

typedef struct as_confirm {
    as_confirmation conf;
    as_order order;
} as_confirm;

/* The confirmation `id` and its order when `token` is its link's, a pending
 * one past its expiry expired first (its budget and stock released). REFUSED
 * 404 CONFIRMATION_INVALID when the id or the token is wrong; FAILED without
 * the signing key. */
as_shop_rc as_confirmation_read(as_shop *shop, const char *id, const char *token, as_confirm *out,
                                as_problem *why);

/* Under the passkey policy, inside the decision's transaction, for a pending
 * confirmation: NULL when the person's passkey assertion verified (the
 * binding checks it), else why not, in words for the person; *rc is set on a
 * storage failure. */
typedef const char *(*as_approval_verify_fn)(void *baton, const as_confirmation *c, int *rc);

typedef struct as_decision {
    bool approve;
    /* Approvals under the passkey policy (AgentShopApproval passkey, the
     * default) ask it; under the link policy the link alone suffices and it
     * is not called. NULL under the passkey policy: nothing verifies. */
    as_approval_verify_fn verified;
    void *baton;
} as_decision;

typedef enum {
    AS_DECISION_TAKEN,      /* decided now, or before the same way */
    AS_DECISION_INVALID,    /* the id or the token is wrong: *out holds nothing */
    AS_DECISION_UNVERIFIED, /* the passkey did not verify: nothing changed */
    AS_DECISION_EXPIRED,    /* the link ran out (now or before) */
    AS_DECISION_REFUSED,    /* an approval the world no longer allows: declined instead */
    AS_DECISION_CONFLICT,   /* decided before the other way */
} as_decision_outcome;

typedef struct as_decided {
    as_decision_outcome outcome;
    as_confirm now;  /* the confirmation and its order as they are afterwards */
    const char *why; /* UNVERIFIED, REFUSED: why, in words for the person */
} as_decided;

/* Applies a person's decision to the confirmation `id` whose link's token is
 * `token`, in one transaction. DONE for AS_DECISION_TAKEN; REFUSED for the
 * other outcomes: 404 CONFIRMATION_INVALID, 403 PASSKEY_REQUIRED, 410
 * CONFIRMATION_EXPIRED, 409 CONFIRMATION_DECIDED, and for an approval the
 * world no longer allows 403 MANDATE_INVALID or 409 OUT_OF_STOCK.
 * UNREADABLE: committed, only reading it back failed. */
as_shop_rc as_confirmation_decide(as_shop *shop, const char *id, const char *token,
                                  const as_decision *d, as_decided *out, as_problem *why);

/* Expires orders whose confirmation ran out, any user's, a batch of at most
 * 100 in one transaction; returns how many, or -1 when storage failed (logged). */
int as_sweep_expired(as_shop *shop);

#endif
