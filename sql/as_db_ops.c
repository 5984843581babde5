/* The statements of the operator's daily commands (sql/as_db_ops.h), which
 * bin/agentshopctl alone runs; httpd prepares them with the others. */
#include <string.h>

#include "as_db_ops.h"
#include "as_db_private.h"

/* An order joined to what it bought: the offer, its product and merchant
 * (a withdrawn one too: its orders keep their rows); the names as it was
 * placed (schema 8). */
#define ORDER_LIST_COLS                                                                            \
    "o.id, o.status, o.user_id, o.mandate_id, o.offer_id, p.sku, o.product_name, "                 \
    "o.merchant_name, o.quantity, "                                                                \
    "o.unit_price_cents, o.total_cents, o.created_at, o.updated_at, o.agent, o.quote_id"
#define ORDER_BOUGHT                                                                               \
    " FROM orders o JOIN offers f ON f.id = o.offer_id JOIN products p ON p.id = f.product_id "    \
    "JOIN merchants m ON m.id = f.merchant_id"
#define OFFER_GET                                                                                  \
    "SELECT o.id, o.product_id, p.sku, m.id, m.name, o.price_cents, o.retail_price_cents, "        \
    "o.stock, o.delivery_days, o.withdrawn_at, p.withdrawn_at, m.withdrawn_at FROM offers o JOIN " \
    "products p ON p.id = o.product_id JOIN merchants m ON m.id = o.merchant_id WHERE o.id = %s"
/* Each user's count of a table's rows (where the condition holds), joined
 * as `alias`: NULL when the user has none. */
#define PER_USER(table, cond, alias)                                                               \
    " LEFT JOIN (SELECT user_id, COUNT(*) AS n FROM " table cond " GROUP BY user_id) " alias       \
    " ON " alias ".user_id = u.user_id"
// clang-format off
#define USERS                                                                                      \
    "SELECT u.user_id, COALESCE(ka.n, 0), COALESCE(k.n, 0), COALESCE(ma.n, 0), COALESCE(md.n, 0), " \
    "COALESCE(o.n, 0), COALESCE(pk.n, 0) FROM (SELECT user_id FROM agent_keys UNION SELECT "       \
    "user_id FROM mandates UNION SELECT user_id FROM passkeys) u"                                  \
    PER_USER("agent_keys", " WHERE revoked_at IS NULL", "ka") PER_USER("agent_keys", "", "k")      \
    PER_USER("mandates", " WHERE status = 'active'", "ma") PER_USER("mandates", "", "md")          \
    PER_USER("orders", "", "o") PER_USER("passkeys", "", "pk") " ORDER BY u.user_id"
// clang-format on

const stmt_def as_db_ops_stmts[] = {
    /* A filter left NULL matches every row. No index on created_at: the
     * lists read the whole table, as an operator's command may. */
    {L_AS_OPS_ORDERS,
     "SELECT " ORDER_LIST_COLS ORDER_BOUGHT " WHERE (%s IS NULL OR o.status = %s) AND "
     "o.created_at >= %lld ORDER BY o.created_at, o.id",
     NULL},
    {L_AS_OPS_RETURNS,
     "SELECT r.id, r.order_id, r.user_id, r.reason_code, r.note, r.refund_status, "
     "r.refund_cents, r.carrier, r.tracking_code, r.replacement_sku, r.created_at, o.status, "
     "p.sku FROM returns r JOIN orders o ON o.id = r.order_id JOIN offers f ON f.id = o.offer_id "
     "JOIN products p ON p.id = f.product_id WHERE (%s IS NULL OR r.refund_status = %s) AND "
     "r.created_at >= %lld ORDER BY r.created_at, r.id",
     NULL},
    /* Every order has a mandate of its user, so the users with orders are
     * among these. */
    {L_AS_OPS_USERS, USERS, NULL},
    /* until the transaction ends: no order takes its stock meanwhile */
    {L_AS_OPS_OFFER_LOCK, OFFER_GET, OFFER_GET " FOR UPDATE OF o"},
    {L_AS_OPS_OFFER_SET,
     "UPDATE offers SET price_cents = %lld, stock = %lld WHERE id = %s AND withdrawn_at IS NULL",
     NULL},
};
const size_t as_db_n_ops_stmts = sizeof(as_db_ops_stmts) / sizeof(as_db_ops_stmts[0]);

#define RCOL(i) as_db_col(db, row, (i))

int as_db_ops_orders(as_db *db, const char *status, int64_t since, as_ops_order_fn each,
                     void *baton)
{
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    const char *a[] = {status, status, as_db_i64s(db, since)};
    if (as_db_select(db, L_AS_OPS_ORDERS, &res, 3, a)) return AS_EDB;
    while (as_db_next(db, res, &row)) {
        as_order o;
        memset(&o, 0, sizeof(o));
        o.id = RCOL(0);
        o.status = as_order_state_parse(RCOL(1));
        o.user_id = RCOL(2);
        o.mandate_id = RCOL(3);
        o.offer_id = RCOL(4);
        o.sku = RCOL(5);
        o.product_name = RCOL(6);
        o.merchant_name = RCOL(7);
        o.quantity = as_db_i64(RCOL(8));
        o.unit_price_cents = as_db_i64(RCOL(9));
        o.total_cents = as_db_i64(RCOL(10));
        o.created_at = as_db_i64(RCOL(11));
        o.updated_at = as_db_i64(RCOL(12));
        o.agent = RCOL(13);
        o.quote_id = RCOL(14);
        each(baton, &o);
    }
    return AS_OK;
}

int as_db_ops_returns(as_db *db, const char *refund_status, int64_t since, as_ops_return_fn each,
                      void *baton)
{
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    const char *a[] = {refund_status, refund_status, as_db_i64s(db, since)};
    if (as_db_select(db, L_AS_OPS_RETURNS, &res, 3, a)) return AS_EDB;
    while (as_db_next(db, res, &row)) {
        as_return r = {RCOL(0),
                       RCOL(1),
                       RCOL(2),
                       RCOL(3),
                       RCOL(4),
                       RCOL(5),
                       as_db_i64(RCOL(6)),
                       RCOL(7),
                       RCOL(8),
                       RCOL(9),
                       as_db_i64(RCOL(10))};
        each(baton, &r, RCOL(11), RCOL(12));
    }
    return AS_OK;
}

int as_db_ops_users(as_db *db, as_ops_user_fn each, void *baton)
{
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    if (as_db_select(db, L_AS_OPS_USERS, &res, 0, NULL)) return AS_EDB;
    while (as_db_next(db, res, &row)) {
        as_ops_user u = {RCOL(0),
                         as_db_i64(RCOL(1)),
                         as_db_i64(RCOL(2)),
                         as_db_i64(RCOL(3)),
                         as_db_i64(RCOL(4)),
                         as_db_i64(RCOL(5)),
                         as_db_i64(RCOL(6))};
        each(baton, &u);
    }
    return AS_OK;
}

int as_db_ops_offer_lock(as_db *db, const char *id, as_ops_offer *out)
{
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    const char *a[] = {id};
    if (as_db_select(db, L_AS_OPS_OFFER_LOCK, &res, 1, a)) return AS_EDB;
    int found = 0;
    while (as_db_next(db, res, &row))
        if (!found++) {
            out->id = RCOL(0);
            out->product_id = as_db_i64(RCOL(1));
            out->sku = RCOL(2);
            out->merchant_id = RCOL(3);
            out->merchant_name = RCOL(4);
            out->price_cents = as_db_i64(RCOL(5));
            out->retail_price_cents = as_db_i64(RCOL(6));
            out->stock = as_db_i64(RCOL(7));
            out->delivery_days = as_db_i64(RCOL(8));
            out->withdrawn = RCOL(9)    ? "offer"
                             : RCOL(10) ? "product"
                             : RCOL(11) ? "merchant"
                                        : NULL;
        }
    return found ? AS_OK : AS_ENOTFOUND;
}

int as_db_ops_offer_set(as_db *db, const char *id, int64_t price_cents, int64_t stock)
{
    int n = 0;
    const char *a[] = {as_db_i64s(db, price_cents), as_db_i64s(db, stock), id};
    if (as_db_exec(db, L_AS_OPS_OFFER_SET, &n, 3, a)) return AS_EDB;
    return n == 1 ? AS_OK : AS_ECONFLICT;
}

int as_db_ops_key_insert(as_db *db, const as_ops_key *k, const char *key_hash)
{
    const char *a[] = {k->id, k->user_id, key_hash, k->created_at};
    return as_db_exec(db, L_AS_KEY_INSERT, NULL, 4, a) ? AS_EDB : AS_OK;
}

static void read_key(as_db *db, apr_dbd_row_t *row, as_ops_key *k)
{
    k->id = RCOL(0);
    k->user_id = RCOL(1);
    k->created_at = RCOL(2);
    k->revoked_at = RCOL(3);
}

int as_db_ops_key_get(as_db *db, const char *id, as_ops_key *out)
{
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    const char *a[] = {id};
    if (as_db_select(db, L_AS_KEY_GET, &res, 1, a)) return AS_EDB;
    int found = 0;
    while (as_db_next(db, res, &row))
        if (!found++) read_key(db, row, out);
    return found ? AS_OK : AS_ENOTFOUND;
}

int as_db_ops_key_revoke(as_db *db, const char *id, const char *at)
{
    const char *a[] = {at, id};
    return as_db_exec(db, L_AS_KEY_REVOKE, NULL, 2, a) ? AS_EDB : AS_OK;
}

int as_db_ops_keys(as_db *db, const char *user, as_ops_key_fn each, void *baton)
{
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    const char *a[] = {user, user};
    if (as_db_select(db, L_AS_KEY_LIST, &res, 2, a)) return AS_EDB;
    while (as_db_next(db, res, &row)) {
        as_ops_key k;
        read_key(db, row, &k);
        each(baton, &k);
    }
    return AS_OK;
}

int as_db_ops_mandate_insert(as_db *db, const as_mandate *md)
{
    const char *a[] = {md->id,
                       md->user_id,
                       md->categories,
                       as_db_i64s(db, md->per_order_cents),
                       as_db_i64s(db, md->monthly_cents),
                       as_db_i64s(db, md->confirm_above_cents),
                       md->valid_until,
                       md->created_at};
    return as_db_exec(db, L_AS_MANDATE_INSERT, NULL, 8, a) ? AS_EDB : AS_OK;
}

int as_db_ops_mandate_revoke(as_db *db, const char *id, const char *at)
{
    const char *a[] = {at, id};
    return as_db_exec(db, L_AS_MANDATE_REVOKE, NULL, 2, a) ? AS_EDB : AS_OK;
}

int as_db_ops_mandates(as_db *db, const char *user, as_ops_mandate_fn each, void *baton)
{
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    const char *a[] = {user, user};
    if (as_db_select(db, L_AS_MANDATE_LIST, &res, 2, a)) return AS_EDB;
    as_mem m = as_db_pool_mem(db->pool);
    while (as_db_next(db, res, &row)) {
        as_mandate md;
        as_db_read_mandate(as_db_copy_row(db, &m, res, row), &md);
        each(baton, &md);
    }
    return AS_OK;
}
