/* The order state machine: one table of (state, event) -> (new state, effects),
 * used by every path that changes an order (docs/orders.md). */
#ifndef AS_ORDER_FSM_H
#define AS_ORDER_FSM_H

#include <stdbool.h>

typedef enum {
    AS_OS_AWAITING, /* awaiting_confirmation */
    AS_OS_PLACED,
    AS_OS_SHIPPED,
    AS_OS_DELIVERED,
    AS_OS_CANCELLED,
    AS_OS_DECLINED,
    AS_OS_EXPIRED,
    AS_OS_RETURNED,
    AS_OS_N
} as_order_state;

typedef enum {
    AS_EV_APPROVE, /* a human approved the confirmation */
    AS_EV_DECLINE, /* a human declined it */
    AS_EV_EXPIRE,  /* the confirmation ran out */
    AS_EV_CANCEL,  /* the agent cancelled */
    AS_EV_SHIP,    /* the merchant shipped (simulated, or by hand) */
    AS_EV_DELIVER, /* the carrier delivered */
    AS_EV_RETURN,  /* the agent started a return */
    AS_EV_N
} as_order_event;

/* What a transition does besides changing the status. */
enum {
    AS_FX_RELEASE_BUDGET = 1 << 0,     /* the order stops holding its month's budget */
    AS_FX_RESTOCK = 1 << 1,            /* its units go back to the offer */
    AS_FX_CLOSE_CONFIRMATION = 1 << 2, /* a pending confirmation is settled */
};

typedef struct as_transition {
    as_order_state to;
    unsigned effects;
} as_transition;

/* false when the event is not allowed in that state. */
bool as_order_transition(as_order_state from, as_order_event ev, as_transition *out);
/* Whether the table lets ev happen in state s: what an order view calls
 * cancellable (AS_EV_CANCEL) and returnable (AS_EV_RETURN). */
bool as_order_allows(as_order_state s, as_order_event ev);

/* The state's name, as the API and the database spell it ("unknown" for
 * AS_OS_N), and back: AS_OS_N for a name that is none (or NULL). Only the
 * edges use these: JSON, messages and SQL. */
const char *as_order_state_name(as_order_state s);
as_order_state as_order_state_parse(const char *name);
const char *as_order_event_name(as_order_event e);

#endif
