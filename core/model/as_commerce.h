/* Agents, mandates, quotes, orders, confirmations and idempotency records as
 * core sees them. Money is integer cents; times are Unix seconds. */
#ifndef AS_COMMERCE_H
#define AS_COMMERCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "as_catalog.h"
#include "as_order_fsm.h"

typedef struct as_agent {
    const char *key_id, *user_id;
    const char *name; /* the Service-Agent header, name/version */
} as_agent;

typedef struct as_key_row {
    const char *id, *user_id, *key_hash, *revoked_at;
} as_key_row;

/* A mandate's status: the database holds active or revoked; expired is what
 * an active one is past its valid_until (as_mandate_check, GET
 * /mandates/current). */
typedef enum { AS_MS_ACTIVE, AS_MS_REVOKED, AS_MS_EXPIRED, AS_MS_N } as_mandate_state;

typedef struct as_mandate {
    const char *id, *user_id;
    as_mandate_state status; /* AS_MS_N: the database holds a name that is none */
    const char *categories; /* comma separated */
    int64_t per_order_cents, monthly_cents, confirm_above_cents;
    const char *valid_until; /* yyyy-mm-dd or NULL */
    const char *created_at;
} as_mandate;

typedef struct as_quote {
    const char *id, *user_id, *offer_id;
    int64_t product_id, quantity, unit_price_cents, total_cents;
    int delivery_days;
    const char *delivery_by;
    const char *device_slug; /* NULL without a device */
    as_fit fit_status;       /* for device_slug; named only at the edges (as_fit_name) */
    bool guarantee;
    int64_t created_at, expires_at;
    /* joined, read-only */
    const char *sku, *product_name, *category, *merchant_id, *merchant_name;
    const char *order_id; /* the order made from it, or NULL */
} as_quote;

/* An entry of an order's timeline: the state it entered, when and why. */
typedef struct as_event {
    as_order_state status;
    const char *note;
    int64_t at;
} as_event;

typedef struct as_order {
    const char *id, *user_id, *mandate_id, *quote_id, *offer_id;
    int64_t quantity, unit_price_cents, total_cents, budget_cents;
    const char *month, *reason, *agent;
    as_order_state status;      /* AS_OS_N: the database holds a name that is none */
    int64_t confirm_expires_at; /* 0 when not awaiting confirmation */
    int64_t created_at, updated_at;
    /* product_name, category, merchant_name: as the order was placed (the
     * order's row, schema 8); the rest joined from the quote, product and
     * merchant */
    const char *sku, *product_name, *category, *part_type, *merchant_name, *merchant_country;
    const char *delivery_by;
    const char *device_slug; /* NULL without a device */
    as_fit fit_status;       /* the quote's, for device_slug */
    bool guarantee;
    const char *confirmation_id;
    /* the agent key that placed it (NULL for orders from before schema 4),
     * and when that key was revoked (NULL: it was not) */
    const char *key_id, *key_revoked_at;
    as_event *events;
    size_t n_events;
} as_order;

typedef struct as_return {
    const char *id, *order_id, *user_id, *reason_code, *note;
    const char *refund_status; /* refunded | pending_inspection */
    int64_t refund_cents;
    const char *carrier, *tracking_code, *replacement_sku;
    int64_t created_at;
} as_return;

/* A confirmation's status: pending until a person decides or it runs out
 * (spec 4.13, 4.14). */
typedef enum {
    AS_CS_PENDING,
    AS_CS_APPROVED,
    AS_CS_DECLINED,
    AS_CS_EXPIRED,
    AS_CS_CANCELLED,
    AS_CS_N
} as_confirmation_state;

typedef struct as_confirmation {
    const char *id, *order_id, *user_id;
    as_confirmation_state status; /* AS_CS_N: the database holds a name that is none */
    int64_t created_at, expires_at, decided_at;
} as_confirmation;

typedef struct as_enrolment {
    const char *id, *user_id, *token_hash; /* token_hash: hex SHA-256 of the link's token */
    int64_t created_at, expires_at, used_at; /* used_at 0: not used */
} as_enrolment;

/* A WebAuthn challenge a page offers (32 random bytes, base64url). */
typedef struct as_challenge {
    const char *challenge;
    int64_t expires_at;
} as_challenge;

/* An Idempotency-Key record's state: claimed by a request still in flight, or
 * done with its answer kept (core/rules/as_idem.h). */
typedef enum { AS_IDEM_IN_FLIGHT, AS_IDEM_DONE, AS_IDEM_STATE_N } as_idem_state;

typedef struct as_idem {
    const char *request_hash;
    as_idem_state state; /* AS_IDEM_STATE_N: the database holds a name that is none */
    const char *response;
    int status;
    int64_t created_at, lease_until;
} as_idem;

/* COSE algorithms accepted, in the order the server offers them. */
enum { AS_COSE_ES256 = -7, AS_COSE_EDDSA = -8, AS_COSE_RS256 = -257 };

typedef struct as_passkey {
    const char *id;         /* the credential id, base64url */
    const char *user_id;    /* whose it is */
    int64_t alg;            /* AS_COSE_* */
    const char *public_key; /* SubjectPublicKeyInfo (DER), base64url */
    int64_t sign_count;     /* the authenticator's counter last seen (0: it keeps none) */
    int64_t created_at;
} as_passkey;

/* The statuses' names, as the API and the database spell them ("unknown" for
 * AS_MS_N, AS_CS_N, AS_IDEM_STATE_N), and back (the _N for a name that is
 * none, or NULL). Only the edges use these: JSON, pages, messages and SQL. */
const char *as_mandate_state_name(as_mandate_state s);
as_mandate_state as_mandate_state_parse(const char *name);
const char *as_confirmation_state_name(as_confirmation_state s);
as_confirmation_state as_confirmation_state_parse(const char *name);
const char *as_idem_state_name(as_idem_state s);
as_idem_state as_idem_state_parse(const char *name);

/* When the order reached status (from its timeline), 0 when it has not. */
int64_t as_order_event_at(const as_order *o, as_order_state status);

#endif
