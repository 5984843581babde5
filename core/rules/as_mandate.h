/* Mandate checks (spec 4.9): active, category, per-order limit, monthly limit,
 * confirm-above threshold. A pure function of the mandate and the order. */
#ifndef AS_MANDATE_H
#define AS_MANDATE_H

#include <stdbool.h>
#include <stdint.h>

#include "as_commerce.h"
#include "as_mem.h"

typedef enum {
    AS_MANDATE_OK,
    AS_MANDATE_REVOKED,
    AS_MANDATE_EXPIRED,
    AS_MANDATE_CATEGORY,
    AS_MANDATE_PER_ORDER,
    AS_MANDATE_MONTHLY,
} as_mandate_verdict;

typedef struct as_mandate_decision {
    as_mandate_verdict verdict;
    bool needs_confirmation; /* total above confirm_above (only when OK) */
    int64_t remaining_cents; /* of the month, before this order */
} as_mandate_decision;

/* today: day number (UTC); spent: budget already used this month. Limits are
 * inclusive: an order of exactly the per-order limit, or that uses exactly the
 * rest of the month, passes; exactly the threshold needs no confirmation. */
as_mandate_decision as_mandate_check(const as_mandate *m, const char *category, int64_t total,
                                     int64_t spent, int64_t today);
bool as_mandate_allows_category(const as_mandate *m, const char *category);
/* The refusal in words, naming the limit and the remaining budget. */
const char *as_mandate_message(as_mem *mem, const as_mandate *m, const as_mandate_decision *d,
                               const char *category, int64_t total);

#endif
