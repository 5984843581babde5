/* The demo's agent-only prices (agentshopctl catalogue generate): not a rule
 * of the shop, which sells at the prices a catalogue gives. */
#ifndef CTL_DEMO_PRICE_H
#define CTL_DEMO_PRICE_H

#include <stdint.h>

/* Demo offers: agent-only price 5% below the store price, to the nearest cent. */
static inline int64_t as_demo_agent_price_cents(int64_t retail_cents)
{
    return (retail_cents * 95 + 50) / 100;
}

#endif
