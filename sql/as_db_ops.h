/* The operator's daily reads and writes (bin/agentshopctl order list,
 * return list, user list, offer set, key, mandate; docs/deploy.md, "Daily
 * operations").
 * The lists stream: each row goes to the caller's function as it is read,
 * its texts on db->pool. */
#ifndef AS_DB_OPS_H
#define AS_DB_OPS_H

#include "as_db.h"

/* Orders created at or after `since` (Unix seconds), of one status or any
 * (NULL), oldest first (created_at, then id), so a script can go on from the
 * last one it saw. Each gets the order's own columns, sku, product and
 * merchant names; no timeline. AS_OK or AS_EDB. */
typedef void (*as_ops_order_fn)(void *baton, const as_order *o);
int as_db_ops_orders(as_db *db, const char *status, int64_t since, as_ops_order_fn each,
                     void *baton);

/* Returns created at or after `since`, of one refund status or any (NULL),
 * oldest first; with the order's status now and the product's sku. */
typedef void (*as_ops_return_fn)(void *baton, const as_return *r, const char *order_status,
                                 const char *sku);
int as_db_ops_returns(as_db *db, const char *refund_status, int64_t since, as_ops_return_fn each,
                      void *baton);

/* Users have no table (schema): every user id that has an agent key, a
 * mandate or a passkey, by id, with what it has. */
typedef struct as_ops_user {
    const char *id;
    int64_t active_keys, keys, active_mandates, mandates, orders, passkeys;
} as_ops_user;
typedef void (*as_ops_user_fn)(void *baton, const as_ops_user *u);
int as_db_ops_users(as_db *db, as_ops_user_fn each, void *baton);

/* One offer as the operator sets it. withdrawn names what of it is withdrawn
 * from sale ("offer", "product" or "merchant"; docs/catalogue.md), NULL when
 * it is sold. */
typedef struct as_ops_offer {
    const char *id, *sku, *merchant_id, *merchant_name, *withdrawn;
    int64_t product_id, price_cents, retail_price_cents, stock, delivery_days;
} as_ops_offer;

/* Reads the offer in the caller's transaction and holds it until that ends
 * (PostgreSQL: FOR UPDATE; on SQLite the transaction holds the database), so
 * no order takes its stock in between. AS_OK, AS_ENOTFOUND or AS_EDB. */
int as_db_ops_offer_lock(as_db *db, const char *id, as_ops_offer *out);
/* The offer's agent price and stock, in the caller's transaction (its
 * product's version moves on, by the triggers on offers). AS_ECONFLICT when
 * the offer is withdrawn (or gone). The caller then calls
 * as_db_catalogue_changed for its product. */
int as_db_ops_offer_set(as_db *db, const char *id, int64_t price_cents, int64_t stock);

/* Agent keys (agentshopctl key create | revoke | list). The writes: AS_OK or
 * AS_EDB; revoking a revoked key changes nothing. */
typedef struct as_ops_key {
    const char *id, *user_id, *created_at, *revoked_at; /* revoked_at NULL: active */
} as_ops_key;
int as_db_ops_key_insert(as_db *db, const as_ops_key *k, const char *key_hash);
int as_db_ops_key_get(as_db *db, const char *id, as_ops_key *out); /* or AS_ENOTFOUND */
int as_db_ops_key_revoke(as_db *db, const char *id, const char *at);
/* Every key, or the user's (user not NULL), by created_at, then id. */
typedef void (*as_ops_key_fn)(void *baton, const as_ops_key *k);
int as_db_ops_keys(as_db *db, const char *user, as_ops_key_fn each, void *baton);

/* Mandates (agentshopctl mandate create | revoke | list); reading one is
 * as_store's mandate_get. A new mandate is active; revoking one that is not
 * changes nothing. */
int as_db_ops_mandate_insert(as_db *db, const as_mandate *md);
int as_db_ops_mandate_revoke(as_db *db, const char *id, const char *at);
/* Every mandate, or the user's (user not NULL), by created_at, then id. */
typedef void (*as_ops_mandate_fn)(void *baton, const as_mandate *md);
int as_db_ops_mandates(as_db *db, const char *user, as_ops_mandate_fn each, void *baton);

#endif
