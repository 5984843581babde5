/* The fake store with buying (fake_shop.c): fake_store.h's catalogue plus
 * in-memory keys, mandates, quotes, orders, confirmations, Idempotency-Key
 * records and returns, which writes change and a rollback puts back. Used by
 * the golden request files (t/unit/golden/README.md), whose keys and
 * mandates these are:
 *   agentshop_sk_test_GoldenUserOne0000000000000000001 (user u1, mandate md_u1:
 *     hand soap and vacuum parts)
 *   agentshop_sk_test_GoldenUserTwo0000000000000000002 (user u2, mandate md_u2:
 *     hand soap only) */
#ifndef FAKE_SHOP_H
#define FAKE_SHOP_H

#include "fake_store.h"

#include "as_commerce.h"
#include "as_mem.h"

#define FAKE_SHOP_MAX 32    /* rows per table */
#define FAKE_SHOP_EVENTS 12 /* timeline entries per order */

typedef struct fake_shop_order {
    as_order o;
    as_event events[FAKE_SHOP_EVENTS];
} fake_shop_order;

typedef struct fake_shop_idem {
    const char *user, *scope, *key;
    as_idem rec;
} fake_shop_idem;

/* What writes change: copied whole by begin, put back by rollback. Strings
 * live on the store's arena, which lasts the case. */
typedef struct fake_shop_tables {
    as_quote quotes[FAKE_SHOP_MAX];
    fake_shop_order orders[FAKE_SHOP_MAX];
    as_confirmation confs[FAKE_SHOP_MAX];
    fake_shop_idem idem[FAKE_SHOP_MAX];
    as_return returns[FAKE_SHOP_MAX];
    struct {
        const char *offer_id;
        int64_t stock;
    } stock[FAKE_SHOP_MAX];
    size_t n_quotes, n_orders, n_confs, n_idem, n_returns, n_stock;
} fake_shop_tables;

typedef struct fake_shop {
    fake_db db; /* first: the catalogue's functions take the store as their fake_db */
    as_store catalogue;
    as_arena *arena;
    as_mem mem;
    fake_shop_tables t, saved;
    bool in_tx;
} fake_shop;

void fake_shop_init(fake_shop *g);
as_store fake_shop_store(fake_shop *g);
void fake_shop_free(fake_shop *g);

#endif
