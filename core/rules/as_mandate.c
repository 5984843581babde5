#include "as_mandate.h"

#include <string.h>

#include "as_util.h"

bool as_mandate_allows_category(const as_mandate *m, const char *category)
{
    size_t n = strlen(category);
    const char *p = m->categories;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, category, n) == 0) return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

as_mandate_decision as_mandate_check(const as_mandate *m, const char *category, int64_t total,
                                     int64_t spent, int64_t today)
{
    as_mandate_decision d = {AS_MANDATE_OK, false, m->monthly_cents - spent};
    if (d.remaining_cents < 0) d.remaining_cents = 0;
    int64_t last_day;
    if (m->status != AS_MS_ACTIVE)
        d.verdict = AS_MANDATE_REVOKED;
    else if (m->valid_until && as_date_parse(m->valid_until, &last_day) && today > last_day)
        d.verdict = AS_MANDATE_EXPIRED;
    else if (!as_mandate_allows_category(m, category))
        d.verdict = AS_MANDATE_CATEGORY;
    else if (total > m->per_order_cents)
        d.verdict = AS_MANDATE_PER_ORDER;
    else if (spent + total > m->monthly_cents)
        d.verdict = AS_MANDATE_MONTHLY;
    else
        d.needs_confirmation = total > m->confirm_above_cents;
    return d;
}

const char *as_mandate_message(as_mem *mem, const as_mandate *m, const as_mandate_decision *d,
                               const char *category, int64_t total)
{
    switch (d->verdict) {
    case AS_MANDATE_REVOKED:
        return as_printf(mem, "Mandate %s has been revoked.", m->id);
    case AS_MANDATE_EXPIRED:
        return as_printf(mem, "Mandate %s expired after %s.", m->id, m->valid_until);
    case AS_MANDATE_CATEGORY:
        return as_printf(mem, "Mandate %s does not allow the category '%s'; it allows: %s.", m->id,
                         category, m->categories);
    case AS_MANDATE_PER_ORDER:
        return as_printf(mem,
                         "The order total %s exceeds the per-order limit of %s of mandate %s "
                         "(remaining this month: %s).",
                         as_eur_format(mem, total), as_eur_format(mem, m->per_order_cents), m->id,
                         as_eur_format(mem, d->remaining_cents));
    case AS_MANDATE_MONTHLY:
        return as_printf(mem,
                         "The order total %s exceeds the remaining monthly budget: %s of the "
                         "monthly limit of %s of mandate %s is left.",
                         as_eur_format(mem, total), as_eur_format(mem, d->remaining_cents),
                         as_eur_format(mem, m->monthly_cents), m->id);
    case AS_MANDATE_OK:
    default:
        return "";
    }
}
