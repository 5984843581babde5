/* JSON views of quotes, orders, mandates, confirmations and returns
 * (docs/buying.md, docs/orders.md). Each returns a new reference. */
#ifndef AS_BUY_VIEW_H
#define AS_BUY_VIEW_H

#include <jansson.h>
#include <stdbool.h>

#include "as_catalog.h"
#include "as_commerce.h"
#include "as_mem.h"
#include "as_rank.h"

json_t *as_view_quote(as_mem *m, const as_quote *q);
/* The order as placed (POST /orders, a confirmation's decision). */
json_t *as_view_order(as_mem *m, const as_order *o);
/* The order as followed (GET /orders/{id}, spec 4.10): the same and what
 * follows from its timeline at `now`: when it shipped and was delivered, the
 * return window, and what the state table still allows (cancel, return). */
json_t *as_view_order_followed(as_mem *m, const as_order *o, int64_t now,
                               int64_t return_window_days);
json_t *as_view_mandate(as_mem *m, const as_mandate *md, const char *status, const char *month,
                        int64_t spent);
json_t *as_view_confirmation(as_mem *m, const as_confirmation *c, const as_order *o);
/* The 202 to an order that waits for a human (spec 4.13): the error object
 * CONFIRMATION_REQUIRED with the order, its confirmation and the signed link. */
json_t *as_view_confirmation_required(as_mem *m, const as_order *o, const as_confirmation *c,
                                      const char *url, int64_t confirm_above_cents);
/* The line AgentShopConfirmationNotify gets for a new confirmation: JSON,
 * ASCII only, no newline; NULL when it cannot be encoded. */
const char *as_view_confirmation_notice(as_mem *m, const as_order *o, const as_confirmation *c,
                                        const char *url);
/* A return (POST /returns, spec 4.12): its refund, its label (label_url:
 * the page to print) and the part suggested instead (NULL: none) with its
 * ranking rr and the order's device. */
json_t *as_view_return(as_mem *m, const as_return *r, const as_order *o, const char *label_url,
                       const as_product *replacement, const as_ranking *rr, const as_device *dev);

#endif
