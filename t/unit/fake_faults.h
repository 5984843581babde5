/* Failure injection and invariant checks of the fake store (fake_store.c,
 * fake_shop.c), for the unit tests and the fuzzers alike (no cmocka here: the
 * fuzzers link the fake store without it).
 *
 * Failure injection: every store function enters through fake_enter with its
 * FAKE_OP_*; fake_db.fail_op names the function to fail, fail_nth which call
 * of it (0: every call), fail_rc the code (only codes the function may return
 * per as_store.h; otherwise AS_EDB). fake_db.fail fails every call of every
 * function with that code.
 *
 * Invariants: what a real store's schema and transactions would refuse
 * (a nested begin, a multi-step write outside a transaction, rows breaking
 * the schema's NOT NULL / CHECK constraints) abort() with a message naming
 * it, from inside the store function; fake_shop_check_end checks what must
 * hold after a request (no transaction open, no unit of stock created or
 * lost, a released order holding no budget). */
#ifndef FAKE_FAULTS_H
#define FAKE_FAULTS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* The store functions, in the order of the fuzz inputs' byte 2
 * (t/fuzz/fuzz_api.c; t/fuzz/make_seeds.py reads this enum): add new ones at
 * the end, so saved inputs keep their meaning. */
enum {
    FAKE_OP_NONE,
    FAKE_OP_MERCHANTS,
    FAKE_OP_DEVICES,
    FAKE_OP_DEVICE_BY_SLUG,
    FAKE_OP_PRODUCT_BY_SKU,
    FAKE_OP_SEARCH,
    FAKE_OP_BEGIN,
    FAKE_OP_COMMIT,
    FAKE_OP_ROLLBACK,
    FAKE_OP_KEY_BY_HASH,
    FAKE_OP_MANDATE_CURRENT,
    FAKE_OP_MANDATE_GET,
    FAKE_OP_MANDATE_SPENT,
    FAKE_OP_QUOTE_INSERT,
    FAKE_OP_QUOTE_GET,
    FAKE_OP_ORDER_INSERT,
    FAKE_OP_ORDER_GET,
    FAKE_OP_ORDER_MOVE,
    FAKE_OP_EVENT_ADD,
    FAKE_OP_ORDERS_EXPIRED,
    FAKE_OP_STOCK_TAKE,
    FAKE_OP_STOCK_GIVE,
    FAKE_OP_CONF_INSERT,
    FAKE_OP_CONF_GET,
    FAKE_OP_CONF_DECIDE,
    FAKE_OP_IDEM_CLAIM,
    FAKE_OP_IDEM_FINISH,
    FAKE_OP_RETURN_INSERT,
    FAKE_OP_RETURN_GET,
    FAKE_OP_RETURN_BY_ORDER,
    FAKE_OP_QUESTION_INSERT,
    /* the text index's sources */
    FAKE_OP_SEARCH_VERSION,
    FAKE_OP_INDEX_ROWS,
    FAKE_OP_RANK_CHANGES,
    FAKE_OP_OFFERS_STOCK,
    /* product views from the index */
    FAKE_OP_PRODUCT_LIVE,
    /* passkeys (core/api/as_passkey_api.c) */
    FAKE_OP_PASSKEY_INSERT,
    FAKE_OP_PASSKEYS_OF,
    FAKE_OP_PASSKEY_GET,
    FAKE_OP_PASSKEY_COUNT,
    FAKE_OP_ENROLMENT_INSERT,
    FAKE_OP_ENROLMENT_GET,
    FAKE_OP_ENROLMENT_USE,
    FAKE_OP_CHALLENGE_INSERT,
    FAKE_OP_CHALLENGE_USE,
    /* Idempotency-Key records past their time (core/rules/as_idem.c) */
    FAKE_OP_IDEM_FORGET,
    FAKE_OP_IDEM_TAKEOVER,
    /* an approval re-reads whether its offer is still sold */
    FAKE_OP_OFFER_WITHDRAWN,
    /* a page's challenge reused, expired ones pruned (core/api/as_passkey_api.c) */
    FAKE_OP_CHALLENGE_LIVE,
    FAKE_OP_CHALLENGES_PRUNE,
    /* a page of a device's compatible parts */
    FAKE_OP_COMPATIBLE,
    FAKE_OP_N
};

#define FAKE_FAIL(...)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "fake store invariant violated: ");                                        \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        abort();                                                                                   \
    } while (0)
#define FAKE_ASSERT(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) FAKE_FAIL(__VA_ARGS__);                                                       \
    } while (0)

struct fake_db;

/* Counts the call of op; the code to fail it with, or AS_OK. */
int fake_enter(struct fake_db *db, int op);

#define FAKE_ENTER(db, op)                                                                         \
    do {                                                                                           \
        int rc_ = fake_enter((struct fake_db *)(db), op);                                          \
        if (rc_ != AS_OK) return rc_;                                                              \
    } while (0)

#endif
