#include "as_presale.h"

#include <stdlib.h>

#include "as_crypto.h"
#include "as_questions.h"
#include "as_util.h"

static as_shop_rc no_product(as_shop *shop, const char *sku, as_problem *why)
{
    as_problem_set(why, 404, "NOT_FOUND", "sku",
                   as_printf(shop->mem, "No product with sku '%s'.", sku));
    return AS_SHOP_REFUSED;
}

/* ---- fit check (spec 4.5) ---- */

as_shop_rc as_fit_check(as_shop *shop, const char *sku, const char *device_slug, as_product *p,
                        as_device *dev, as_problem *why)
{
    as_mem *m = shop->mem;
    int rc = as_store_device_by_slug(shop->store, m, device_slug, dev);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    if (rc != AS_OK) {
        as_problem_set(why, 404, "NOT_FOUND", "device",
                       as_printf(m, "No device with slug '%s'; find one with GET /v1/devices?q=",
                                 device_slug));
        return AS_SHOP_REFUSED;
    }
    rc = as_store_product_by_sku(shop->store, m, sku, dev->id, p);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    return rc == AS_OK ? AS_SHOP_DONE : no_product(shop, sku, why);
}

/* ---- questions (spec 4.6) ---- */

/* The day's quota is spent: asking again waits for the next UTC midnight. */
static as_shop_rc quota_spent(as_shop *shop, as_answered *out, as_problem *why)
{
    as_mem *m = shop->mem;
    int64_t day = shop->now / 86400, per_day = shop->cfg->questions_per_day;
    out->retry_after = (day + 1) * 86400 - shop->now;
    as_problem_set(why, 429, "RATE_LIMITED", NULL,
                   as_printf(m,
                             "This user has asked %lld questions today, the most a day "
                             "allows; ask again after %s (in %lld seconds).",
                             (long long)per_day, as_time_format(m, (day + 1) * 86400),
                             (long long)out->retry_after));
    return AS_SHOP_REFUSED;
}

as_shop_rc as_question_ask(as_shop *shop, const char *user_id, const char *sku,
                           const char *question, as_answered *out, as_problem *why)
{
    as_mem *m = shop->mem;
    as_product p;
    int rc = as_store_product_by_sku(shop->store, m, sku, 0, &p);
    if (rc == AS_EDB) return AS_SHOP_FAILED;
    if (rc != AS_OK) return no_product(shop, sku, why);
    json_t *answer = as_question_answer(m, &p, question);
    char *text = json_dumps(answer, JSON_COMPACT | JSON_REAL_PRECISION(12));
    *out = (as_answered){.id = as_random_id(m, "qa_", 20, false),
                         .sku = p.sku,
                         .question = question,
                         .asked_at = as_time_format(m, shop->now)};
    /* the user's questions are counted per UTC day, from its midnight */
    const char *since = as_time_format(m, shop->now / 86400 * 86400);
    rc = text ? as_store_question_insert(shop->store, p.id, out->id, user_id, question, text,
                                         out->asked_at, since, shop->cfg->questions_per_day)
              : AS_EDB;
    free(text);
    if (rc != AS_OK) json_decref(answer);
    if (rc == AS_ECONFLICT) return quota_spent(shop, out, why);
    if (rc != AS_OK) return AS_SHOP_FAILED;
    out->answer = answer;
    return AS_SHOP_DONE;
}
