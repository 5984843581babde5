#include "as_commerce.h"

int64_t as_order_event_at(const as_order *o, as_order_state status)
{
    int64_t at = 0;
    for (size_t i = 0; i < o->n_events; i++)
        if (o->events[i].status == status) at = o->events[i].at;
    return at;
}
