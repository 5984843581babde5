/* After the sale (spec 4.10 to 4.12) as the shop's operations: following an
 * order, cancelling it, returning it under the right-item guarantee, and the
 * return's label. docs/orders.md. */
#ifndef AS_AFTERSALE_H
#define AS_AFTERSALE_H

#include "as_commerce.h"
#include "as_rank.h"
#include "as_shop.h"

/* The user's order with what is due by now applied (shipped, delivered).
 * REFUSED 404 NOT_FOUND: no such order, or another user's (answered alike). */
as_shop_rc as_order_follow(as_shop *shop, const char *user_id, const char *id, as_order *o,
                           as_problem *why);

/* Cancels the agent's user's order (spec 4.11); cancelling a cancelled order
 * answers it as it is. DONE: *o as it is now. REFUSED: 404 NOT_FOUND, or 409
 * ORDER_NOT_CANCELLABLE once it shipped (what was due is committed). */
as_shop_rc as_order_cancel(as_shop *shop, const as_agent *agent, const char *id, as_order *o,
                           as_problem *why);

/* A part offered instead of the one returned, with its ranking and the
 * order's device. */
typedef struct as_replacement {
    const as_product *p; /* NULL: none */
    as_ranking r;
    as_device dev;
} as_replacement;

/* A return made: the return, its order after it, where its label is, and the
 * replacement offered. */
typedef struct as_return_made {
    as_return r;
    as_order o;
    const char *label_url;
    as_replacement instead;
} as_return_made;

/* Returns the user's order (spec 4.12) inside the caller's transaction (the
 * Idempotency-Key's): a wrong item or a part that does not fit is refunded at
 * once when the order was guaranteed, else the refund waits for inspection.
 * label_base: the API's base URL the label link starts with (NULL: none).
 * REFUSED: 404 NOT_FOUND, 409 ORDER_NOT_RETURNABLE, 422 RETURN_WINDOW_CLOSED
 * (what was due may have been applied: commit it). FAILED: roll back. */
as_shop_rc as_return_create(as_shop *shop, const char *user_id, const char *order_id,
                            const char *reason_code, const char *note, const char *label_base,
                            as_return_made *out, as_problem *why);

/* Return id's label, for whoever holds the label link's token, or (token
 * NULL) for the user whose return it is (user_id NULL: nobody). REFUSED: the
 * same 404 NOT_FOUND for anything else as for an unknown id. */
as_shop_rc as_return_label_open(as_shop *shop, const char *id, const char *token,
                                const char *user_id, as_return *r, as_order *o, as_problem *why);

#endif
