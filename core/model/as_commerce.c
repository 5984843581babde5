#include "as_commerce.h"

#include <string.h>

static const char *const mandate_names[AS_MS_N] = {"active", "revoked", "expired"};
static const char *const confirmation_names[AS_CS_N] = {"pending", "approved", "declined",
                                                        "expired", "cancelled"};
static const char *const idem_names[AS_IDEM_STATE_N] = {"in_flight", "done"};

static int name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (strcmp(names[i], name) == 0) return i;
    return n;
}

const char *as_mandate_state_name(as_mandate_state s)
{
    return (unsigned)s < AS_MS_N ? mandate_names[s] : "unknown";
}

as_mandate_state as_mandate_state_parse(const char *name)
{
    return (as_mandate_state)name_index(mandate_names, AS_MS_N, name);
}

const char *as_confirmation_state_name(as_confirmation_state s)
{
    return (unsigned)s < AS_CS_N ? confirmation_names[s] : "unknown";
}

as_confirmation_state as_confirmation_state_parse(const char *name)
{
    return (as_confirmation_state)name_index(confirmation_names, AS_CS_N, name);
}

const char *as_idem_state_name(as_idem_state s)
{
    return (unsigned)s < AS_IDEM_STATE_N ? idem_names[s] : "unknown";
}

as_idem_state as_idem_state_parse(const char *name)
{
    return (as_idem_state)name_index(idem_names, AS_IDEM_STATE_N, name);
}

int64_t as_order_event_at(const as_order *o, as_order_state status)
{
    int64_t at = 0;
    for (size_t i = 0; i < o->n_events; i++)
        if (o->events[i].status == status) at = o->events[i].at;
    return at;
}
