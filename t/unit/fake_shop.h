/* The fake store with buying (fake_shop.c): fake_store.h's catalogue plus
 * in-memory keys, mandates, quotes, orders, confirmations, Idempotency-Key
 * records, returns, questions, passkeys, enrolments and challenges, which
 * writes change and a rollback puts back. The store checks what a real
 * store's schema and transactions enforce and fails calls as told
 * (fake_faults.h).
 *
 * Two shops:
 *   fake_shop_init: the default catalogue and empty tables, for the golden
 *     request files (t/unit/golden/README.md), whose keys and mandates are
 *       agentshop_sk_test_GoldenUserOne0000000000000000001 (user u1, mandate
 *         md_u1: hand soap and vacuum parts)
 *       agentshop_sk_test_GoldenUserTwo0000000000000000002 (user u2, mandate
 *         md_u2: hand soap only)
 *   fake_shop_init_trading: the wide catalogue and a shop that has been
 *     trading around FAKE_SHOP_NOW, for the fuzzers (t/fuzz/fuzz_api.c): any
 *     well-formed key is key_user's (fake_shop.key_mode twists the answer),
 *     mandates active, expired and revoked, quotes fresh, used and expired,
 *     orders in every state, pending and decided confirmations, returns,
 *     Idempotency-Key records any first claim of their key takes, a passkey,
 *     an enrolment and a challenge any ceremony may answer (fake_shop.c
 *     lists them). */
#ifndef FAKE_SHOP_H
#define FAKE_SHOP_H

#include "fake_store.h"

#include "as_commerce.h"
#include "as_mem.h"

#define FAKE_SHOP_MAX 32    /* rows per table */
#define FAKE_SHOP_EVENTS 12 /* timeline entries per order */
#define FAKE_SHOP_KEEP 8    /* passkeys, enrolments, challenges */

#define FAKE_SHOP_NOW 1772445600LL /* 2026-03-02T10:00:00Z: the trading shop's rows' now */

/* The trading shop's passkey of u1 (a P-256 key nobody holds: assertions
 * reach the signature check and fail there), its enrolment of u1 whose token
 * is FAKE_SHOP_ENROL_TOKEN, and a challenge any ceremony may answer once
 * ("fzchallenge", base64url: a fuzzer reaches registration's CBOR with it). */
#define FAKE_SHOP_PASSKEY "ZnotcGFzc2tleQ"
#define FAKE_SHOP_ENROLMENT "enr_fz"
#define FAKE_SHOP_ENROL_TOKEN "fz-enrol-token"
#define FAKE_SHOP_CHALLENGE "ZnpjaGFsbGVuZ2U"

typedef struct fake_shop_order {
    as_order o;
    as_event events[FAKE_SHOP_EVENTS];
} fake_shop_order;

/* An Idempotency-Key record. user and scope NULL: a record the first claim
 * of its key takes, whoever claims it and wherever; request_hash NULL: the
 * hash of the request claiming it (the same body). */
typedef struct fake_shop_idem {
    const char *user, *scope, *key;
    as_idem rec;
} fake_shop_idem;

/* A WebAuthn challenge; purpose and subject NULL: any; expires_at 0: never. */
typedef struct fake_shop_challenge {
    const char *challenge, *purpose, *subject;
    bool used;
    int64_t expires_at;
} fake_shop_challenge;

/* What writes change: copied whole by begin, put back by rollback. Strings
 * live on the store's arena, which lasts the case. */
typedef struct fake_shop_tables {
    as_quote quotes[FAKE_SHOP_MAX];
    fake_shop_order orders[FAKE_SHOP_MAX];
    as_confirmation confs[FAKE_SHOP_MAX];
    fake_shop_idem idem[FAKE_SHOP_MAX];
    as_return returns[FAKE_SHOP_MAX];
    as_passkey passkeys[FAKE_SHOP_KEEP];
    as_enrolment enrolments[FAKE_SHOP_KEEP];
    fake_shop_challenge challenges[FAKE_SHOP_KEEP];
    fake_live live; /* the catalogue's stock and rank versions (db.live) */
    size_t n_quotes, n_orders, n_confs, n_idem, n_returns, n_questions;
    size_t n_passkeys, n_enrolments, n_challenges;
} fake_shop_tables;

typedef struct fake_shop_key {
    const char *key, *id, *user;
} fake_shop_key;

typedef struct fake_shop {
    fake_db db; /* first: the catalogue's functions take the store as their fake_db */
    as_arena *arena;
    as_mem mem;
    const fake_shop_key *keys; /* the agent keys, unless key_user is set */
    size_t n_keys;
    const as_mandate *mandates;
    size_t n_mandates;
    /* When set, any well-formed key is this user's (key_1), and key_mode
     * says what key_by_hash answers: 0 and 3 the key, 1 revoked, 2 another
     * key's hash. */
    const char *key_user;
    int key_mode;
    fake_shop_tables t, saved;
    int64_t
        units[FAKE_MAX_OFFERS]; /* per offer of t.live: stock + units orders hold, at the start */
    bool in_tx;
} fake_shop;

void fake_shop_init(fake_shop *g);
void fake_shop_init_trading(fake_shop *g);
as_store fake_shop_store(fake_shop *g);
void fake_shop_free(fake_shop *g);

/* Per offer of g->t.live: units in stock plus units orders hold. */
void fake_shop_units(const fake_shop *g, int64_t *units);
/* After a request (fake_faults.c): no transaction open, no unit of stock
 * created or lost, a cancelled/declined/expired order holds no budget;
 * abort()s naming what broke. */
void fake_shop_check_end(const fake_shop *g);

#endif
