/* The fake store's failure injection and the checks after a request
 * (fake_faults.h). */
#include "fake_faults.h"

#include "as_commerce.h"
#include "fake_shop.h"

/* Which codes other than AS_EDB each function may return (as_store.h); not
 * the Idempotency-Key claim's AS_ECONFLICT, which comes with the record found. */
static const unsigned fake_op_codes[FAKE_OP_N] = {
    [FAKE_OP_DEVICE_BY_SLUG] = 1u << AS_ENOTFOUND,   [FAKE_OP_PRODUCT_BY_SKU] = 1u << AS_ENOTFOUND,
    [FAKE_OP_KEY_BY_HASH] = 1u << AS_ENOTFOUND,      [FAKE_OP_MANDATE_CURRENT] = 1u << AS_ENOTFOUND,
    [FAKE_OP_MANDATE_GET] = 1u << AS_ENOTFOUND,      [FAKE_OP_QUOTE_GET] = 1u << AS_ENOTFOUND,
    [FAKE_OP_ORDER_GET] = 1u << AS_ENOTFOUND,        [FAKE_OP_CONF_GET] = 1u << AS_ENOTFOUND,
    [FAKE_OP_RETURN_GET] = 1u << AS_ENOTFOUND,       [FAKE_OP_RETURN_BY_ORDER] = 1u << AS_ENOTFOUND,
    [FAKE_OP_ORDER_INSERT] = 1u << AS_ECONFLICT,     [FAKE_OP_ORDER_MOVE] = 1u << AS_ECONFLICT,
    [FAKE_OP_STOCK_TAKE] = 1u << AS_ECONFLICT,       [FAKE_OP_RETURN_INSERT] = 1u << AS_ECONFLICT,
    [FAKE_OP_CONF_DECIDE] = 1u << AS_ECONFLICT,      [FAKE_OP_PASSKEY_INSERT] = 1u << AS_ECONFLICT,
    [FAKE_OP_PASSKEY_GET] = 1u << AS_ENOTFOUND,      [FAKE_OP_PASSKEY_COUNT] = 1u << AS_ECONFLICT,
    [FAKE_OP_ENROLMENT_GET] = 1u << AS_ENOTFOUND,    [FAKE_OP_ENROLMENT_USE] = 1u << AS_ECONFLICT,
    [FAKE_OP_CHALLENGE_USE] = 1u << AS_ECONFLICT,    [FAKE_OP_OFFER_WITHDRAWN] = 1u << AS_ENOTFOUND,
    [FAKE_OP_CHALLENGE_INSERT] = 1u << AS_ECONFLICT, [FAKE_OP_CHALLENGE_LIVE] = 1u << AS_ENOTFOUND,
    [FAKE_OP_QUESTION_INSERT] = 1u << AS_ECONFLICT, /* the day's quota reached */
};

int fake_enter(struct fake_db *db, int op)
{
    db->calls++;
    if (db->fail) return db->fail;
    int n = ++db->op_calls[op];
    if (db->fail_op != op || (db->fail_nth && db->fail_nth != n)) return AS_OK;
    if (db->fail_rc != AS_EDB && (fake_op_codes[op] & (1u << db->fail_rc))) return db->fail_rc;
    return AS_EDB;
}

void fake_shop_check_end(const fake_shop *g)
{
    FAKE_ASSERT(!g->in_tx, "a transaction was left open");
    int64_t units[FAKE_MAX_OFFERS];
    fake_shop_units(g, units);
    for (size_t i = 0; i < g->t.live.n_offers; i++)
        FAKE_ASSERT(g->t.live.offer[i].withdrawn || units[i] == g->units[i],
                    "offer %s: %lld units (stock + held), was %lld", g->t.live.offer[i].offer_id,
                    (long long)units[i], (long long)g->units[i]);
    for (size_t i = 0; i < g->t.n_orders; i++) {
        const as_order *o = &g->t.orders[i].o;
        bool released = o->status == AS_OS_CANCELLED || o->status == AS_OS_DECLINED ||
                        o->status == AS_OS_EXPIRED;
        FAKE_ASSERT(!released || o->budget_cents == 0,
                    "order %s is %s but holds %lld cents of budget", o->id,
                    as_order_state_name(o->status), (long long)o->budget_cents);
    }
}
