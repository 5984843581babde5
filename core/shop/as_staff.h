/* What the shop's staff does by hand (agentshopctl): moving an order on when
 * the merchant shipped it or the carrier delivered it (docs/orders.md). */
#ifndef AS_STAFF_H
#define AS_STAFF_H

#include "as_commerce.h"
#include "as_shop.h"

typedef struct as_staff_move {
    const char *order_id;
    /* false: ship (a placed order); true: deliver (a placed or shipped one; a
     * placed one ships first, at the same time) */
    bool deliver;
    int64_t at; /* when it happened, no later than now */
    /* at is in a day the staff named (not now): on the day of the order's
     * last change it is taken no earlier than that change, and a day before
     * it is refused */
    bool named_day;
} as_staff_move;

/* In one transaction. DONE: *out is the order afterwards. REFUSED, *out the
 * order as it was: 404 NOT_FOUND (none: *out holds nothing), 409
 * ORDER_NOT_MOVABLE (its state forbids the move), 422 BEFORE_LAST_CHANGE (a
 * named day before the order's last change). UNREADABLE: moved, only reading
 * it back failed. */
as_shop_rc as_order_move_by_hand(as_shop *shop, const as_staff_move *mv, as_order *out,
                                 as_problem *why);

#endif
