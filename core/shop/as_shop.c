#include "as_shop.h"

#include <stdarg.h>
#include <string.h>

#include "as_util.h"

void as_config_defaults(as_config *c)
{
    memset(c, 0, sizeof(*c)); /* no signing key until the caller sets one */
    c->key_prefix = "agentshop";
    c->quote_ttl = 600;
    c->confirmation_ttl = 86400;
    c->return_window_days = 30;
    c->ship_after = 3600;
    c->questions_per_day = 50;
    c->views_from_index = true;
}

void as_log(as_shop *shop, int level, const char *fmt, ...)
{
    if (!shop->log) return;
    va_list ap;
    va_start(ap, fmt);
    char *msg = as_vprintf(shop->mem, fmt, ap);
    va_end(ap);
    shop->log(shop->log_baton, level, msg);
}

int64_t as_today(const as_shop *shop)
{
    return shop->now / 86400;
}

void as_shop_problem(as_shop_rc rc, as_problem *p)
{
    if (rc == AS_SHOP_UNREADABLE)
        as_problem_set(p, 503, "SERVICE_UNAVAILABLE", NULL,
                       "The change was saved, but its result cannot be read right now; read it "
                       "again shortly.");
    else if (rc == AS_SHOP_FAILED)
        as_problem_set(p, 503, "SERVICE_UNAVAILABLE", NULL,
                       "The shop cannot complete this right now; nothing was changed. Retry "
                       "shortly.");
}

bool as_shop_can_sign(as_shop *shop, as_problem *why)
{
    if (shop->cfg->signing_key) return true;
    as_log(shop, AS_LOG_ERR, "no signing key: set AgentShopSigningKeyFile");
    *why = (as_problem){500, "INTERNAL_ERROR", NULL,
                        "The shop is misconfigured: it has no signing key "
                        "(AgentShopSigningKeyFile), so it cannot sign or check confirmation "
                        "links. Nothing was changed; tell the shop's operator."};
    return false;
}
