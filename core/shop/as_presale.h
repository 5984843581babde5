/* Before the sale (spec 4.5, 4.6) as the shop's operations: whether a part
 * fits a device, and a question about a product answered from measured data.
 * docs/api.md. */
#ifndef AS_PRESALE_H
#define AS_PRESALE_H

#include <jansson.h>

#include "as_catalog.h"
#include "as_shop.h"

/* The product sku as seen for device_slug (its compat row for that device).
 * REFUSED 404 NOT_FOUND naming "device" or "sku". */
as_shop_rc as_fit_check(as_shop *shop, const char *sku, const char *device_slug, as_product *p,
                        as_device *dev, as_problem *why);

/* A question asked and answered. */
typedef struct as_answered {
    const char *id, *sku, *question, *asked_at;
    json_t *answer;      /* the caller's reference */
    int64_t retry_after; /* seconds, when refused for the day's quota */
} as_answered;

/* Answers the user's question about product sku and keeps both (spec 4.6),
 * at most AgentShopQuestionsPerDay a UTC day per user. REFUSED: 404
 * NOT_FOUND naming "sku", or 429 RATE_LIMITED until the next UTC midnight
 * (out->retry_after). */
as_shop_rc as_question_ask(as_shop *shop, const char *user_id, const char *sku,
                           const char *question, as_answered *out, as_problem *why);

#endif
