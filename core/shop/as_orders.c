#include "as_orders.h"

#include <string.h>

#include "as_util.h"

static as_confirmation_state confirmation_outcome(as_order_event ev)
{
    switch (ev) {
    case AS_EV_APPROVE:
        return AS_CS_APPROVED;
    case AS_EV_DECLINE:
        return AS_CS_DECLINED;
    case AS_EV_EXPIRE:
        return AS_CS_EXPIRED;
    case AS_EV_CANCEL:
        return AS_CS_CANCELLED;
    default:
        return AS_CS_N;
    }
}

/* The order in hand gets the event the store now holds, so that what the
 * request goes on to read of it (the delivery time a return's window counts
 * from, the view's shipped_at) is what a fresh read would give. */
static int timeline_add(as_mem *m, as_order *o, as_order_state status, int64_t at,
                        const char *note)
{
    as_event *ev = as_alloc(m, (o->n_events + 1) * sizeof(*ev));
    if (!ev) return AS_EDB;
    if (o->n_events) memcpy(ev, o->events, o->n_events * sizeof(*ev));
    ev[o->n_events++] = (as_event){.status = status, .note = note, .at = at};
    o->events = ev;
    return AS_OK;
}

int as_order_apply(as_shop *shop, as_order *o, as_order_event ev, int64_t at, int64_t budget_after,
                   const char *note)
{
    const as_store *s = shop->store;
    as_transition t;
    if (!as_order_transition(o->status, ev, &t)) return AS_ECONFLICT;
    int64_t budget = (t.effects & AS_FX_RELEASE_BUDGET) ? 0 : budget_after;
    int rc = as_store_order_move(s, o->id, o->status, t.to, budget, at);
    if (rc == AS_OK && (t.effects & AS_FX_RESTOCK))
        rc = as_store_stock_give(s, o->offer_id, o->quantity);
    if (rc == AS_OK) rc = as_store_event_add(s, o->id, t.to, at, note);
    if (rc == AS_OK && (t.effects & AS_FX_CLOSE_CONFIRMATION) && o->confirmation_id)
        rc = as_store_confirmation_decide(s, o->confirmation_id, confirmation_outcome(ev), at);
    if (rc == AS_OK) {
        o->status = t.to;
        o->budget_cents = budget;
        rc = timeline_add(shop->mem, o, t.to, at, note);
    }
    return rc;
}

int64_t as_order_ship_due(const as_shop *shop, const as_order *o)
{
    if (!as_order_allows(o->status, AS_EV_SHIP)) return 0;
    int64_t placed = as_order_event_at(o, AS_OS_PLACED);
    int64_t at = (placed ? placed : o->created_at) + shop->cfg->ship_after;
    return at <= shop->now ? at : 0;
}

static int64_t delivery_time(const as_order *o, int64_t shipped)
{
    int64_t day;
    int64_t at = as_date_parse(o->delivery_by, &day) ? day * 86400 + 12 * 3600 : shipped;
    return at > shipped ? at : shipped;
}

int64_t as_order_deliver_due(const as_shop *shop, const as_order *o)
{
    int64_t shipped;
    if (o->status == AS_OS_SHIPPED)
        shipped = as_order_event_at(o, AS_OS_SHIPPED);
    else if ((shipped = as_order_ship_due(shop, o)) == 0)
        return 0;
    int64_t at = delivery_time(o, shipped);
    return at <= shop->now ? at : 0;
}

int as_order_fulfil(as_shop *shop, as_order *o)
{
    int64_t ship = as_order_ship_due(shop, o), deliver = as_order_deliver_due(shop, o);
    int rc = AS_OK;
    if (ship)
        rc = as_order_apply(shop, o, AS_EV_SHIP, ship, o->budget_cents,
                            as_printf(shop->mem, "Shipped by %s.", o->merchant_name));
    if (rc == AS_OK && deliver)
        rc = as_order_apply(shop, o, AS_EV_DELIVER, deliver, o->budget_cents,
                            "Delivered by the carrier.");
    return rc;
}

int as_order_settle(as_shop *shop, as_order *o)
{
    if (!as_order_ship_due(shop, o) && !as_order_deliver_due(shop, o)) return AS_OK;
    const as_store *s = shop->store;
    char *id = as_strdup(shop->mem, o->id);
    int rc = as_store_begin(s);
    if (rc == AS_OK) rc = as_store_order_get(s, shop->mem, id, o); /* as it is now */
    if (rc == AS_OK) rc = as_order_fulfil(shop, o);
    if (rc == AS_ECONFLICT) rc = AS_OK; /* another request moved it on first */
    if (rc == AS_OK) rc = as_store_commit(s);
    if (rc != AS_OK) {
        as_store_rollback(s);
        return rc;
    }
    return as_store_order_get(s, shop->mem, id, o);
}
