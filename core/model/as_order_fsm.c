#include "as_order_fsm.h"

#include <string.h>

static const char *const state_names[AS_OS_N] = {
    "awaiting_confirmation",
    "placed",
    "shipped",
    "delivered",
    "cancelled",
    "declined",
    "expired",
    "returned",
};

static const char *const event_names[AS_EV_N] = {
    "approve", "decline", "expire", "cancel", "ship", "deliver", "return",
};

#define NO                                                                                         \
    {                                                                                              \
        AS_OS_N, 0                                                                                 \
    }
#define RELEASE (AS_FX_RELEASE_BUDGET | AS_FX_RESTOCK | AS_FX_CLOSE_CONFIRMATION)

/* Rows: states; columns: events (approve, decline, expire, cancel, ship, deliver, return).
 * Everything not listed is forbidden. A return neither restocks (the item is
 * inspected first) nor releases budget by itself: a refund gives back what it
 * refunds. */
static const as_transition table[AS_OS_N][AS_EV_N] = {
    [AS_OS_AWAITING] = {{AS_OS_PLACED, AS_FX_CLOSE_CONFIRMATION},
                        {AS_OS_DECLINED, RELEASE},
                        {AS_OS_EXPIRED, RELEASE},
                        {AS_OS_CANCELLED, RELEASE},
                        NO,
                        NO,
                        NO},
    [AS_OS_PLACED] = {NO,
                      NO,
                      NO,
                      {AS_OS_CANCELLED, AS_FX_RELEASE_BUDGET | AS_FX_RESTOCK},
                      {AS_OS_SHIPPED, 0},
                      NO,
                      NO},
    [AS_OS_SHIPPED] = {NO, NO, NO, NO, NO, {AS_OS_DELIVERED, 0}, {AS_OS_RETURNED, 0}},
    [AS_OS_DELIVERED] = {NO, NO, NO, NO, NO, NO, {AS_OS_RETURNED, 0}},
    [AS_OS_CANCELLED] = {NO, NO, NO, NO, NO, NO, NO},
    [AS_OS_DECLINED] = {NO, NO, NO, NO, NO, NO, NO},
    [AS_OS_EXPIRED] = {NO, NO, NO, NO, NO, NO, NO},
    [AS_OS_RETURNED] = {NO, NO, NO, NO, NO, NO, NO},
};

bool as_order_transition(as_order_state from, as_order_event ev, as_transition *out)
{
    if ((unsigned)from >= AS_OS_N || (unsigned)ev >= AS_EV_N) return false;
    *out = table[from][ev];
    return out->to != AS_OS_N;
}

bool as_order_allows(as_order_state s, as_order_event ev)
{
    as_transition t;
    return as_order_transition(s, ev, &t);
}

const char *as_order_state_name(as_order_state s)
{
    return (unsigned)s < AS_OS_N ? state_names[s] : "unknown";
}

as_order_state as_order_state_parse(const char *name)
{
    int i = 0;
    while (i < AS_OS_N && !(name && strcmp(state_names[i], name) == 0))
        i++;
    return (as_order_state)i;
}

const char *as_order_event_name(as_order_event e)
{
    return (unsigned)e < AS_EV_N ? event_names[e] : "unknown";
}
