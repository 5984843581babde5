#include "as_staff.h"

#include "as_orders.h"
#include "as_util.h"

/* Inside the transaction: the moves on the order as read, at `at`. */
static int move_order(as_shop *shop, const as_staff_move *mv, as_order *o, int64_t at)
{
    int rc = AS_OK;
    if (o->status == AS_OS_PLACED)
        rc = as_order_apply(shop, o, AS_EV_SHIP, at, o->budget_cents,
                            "Shipped (moved on by the shop's staff).");
    else if (!mv->deliver)
        rc = AS_ECONFLICT;
    if (rc == AS_OK && mv->deliver)
        rc = as_order_apply(shop, o, AS_EV_DELIVER, at, o->budget_cents,
                            "Delivered (recorded by the shop's staff).");
    return rc;
}

static as_shop_rc refuse(as_problem *why, int status, const char *code, const char *message)
{
    *why = (as_problem){status, code, NULL, message};
    return AS_SHOP_REFUSED;
}

as_shop_rc as_order_move_by_hand(as_shop *shop, const as_staff_move *mv, as_order *out,
                                 as_problem *why)
{
    const as_store *s = shop->store;
    as_mem *m = shop->mem;
    int64_t at = mv->at;
    as_order o;
    int rc = as_store_begin(s);
    if (rc == AS_OK) rc = as_store_order_get(s, m, mv->order_id, &o);
    if (rc == AS_ENOTFOUND) {
        as_store_rollback(s);
        return refuse(why, 404, "NOT_FOUND", as_printf(m, "No order '%s'.", mv->order_id));
    }
    if (rc == AS_OK) *out = o; /* as it was, for a refusal to name */
    /* the day of the order's last change: at a later hour than noon */
    if (rc == AS_OK && mv->named_day && at / 86400 == o.updated_at / 86400 && at < o.updated_at)
        at = o.updated_at;
    if (rc == AS_OK && mv->named_day && at < o.updated_at) {
        as_store_rollback(s);
        return refuse(why, 422, "BEFORE_LAST_CHANGE",
                      "A delivery cannot come before the order's last change.");
    }
    if (rc == AS_OK) rc = move_order(shop, mv, &o, at);
    if (rc == AS_ECONFLICT) {
        as_store_rollback(s);
        return refuse(
            why, 409, "ORDER_NOT_MOVABLE",
            as_printf(m, "Order %s is %s.", mv->order_id, as_order_state_name(out->status)));
    }
    if (rc == AS_OK) rc = as_store_commit(s);
    if (rc != AS_OK) {
        as_store_rollback(s);
        return AS_SHOP_FAILED;
    }
    return as_store_order_get(s, m, mv->order_id, out) == AS_OK ? AS_SHOP_DONE : AS_SHOP_UNREADABLE;
}
