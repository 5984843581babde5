/* Changing orders: every path goes through as_order_apply and the state table
 * of as_order_fsm.h. */
#ifndef AS_ORDERS_H
#define AS_ORDERS_H

#include "as_shop.h"
#include "as_commerce.h"
#include "as_order_fsm.h"

/* Applies ev to o inside the caller's transaction: status, budget (0 when the
 * transition releases it, else budget_after), stock, timeline entry at `at`
 * with `note`, and the confirmation. AS_ECONFLICT when the state table forbids
 * the event or the order moved meanwhile; o->status and o->budget_cents follow. */
int as_order_apply(as_shop *shop, as_order *o, as_order_event ev, int64_t at, int64_t budget_after,
                   const char *note);

/* The demo store's simulated fulfilment (docs/orders.md): an order ships
 * AgentShopShipAfter seconds after it was placed and is delivered at noon UTC
 * of its delivery date. Times of what is due by now; 0 when nothing is. */
int64_t as_order_ship_due(const as_shop *shop, const as_order *o);
int64_t as_order_deliver_due(const as_shop *shop, const as_order *o);
/* Applies whatever is due, inside the caller's transaction. */
int as_order_fulfil(as_shop *shop, as_order *o);
/* Outside a transaction: settles what is due (in one of its own) and re-reads. */
int as_order_settle(as_shop *shop, as_order *o);

#endif
