/* The as_store functions for buying: identity, mandates, quotes, orders,
 * confirmations and Idempotency-Key records. Conditions that decide between
 * two outcomes (enough stock, the order still in a state, a key not yet
 * claimed) are in the statements themselves and read from the row count. */
#include <apr_strings.h>
#include <string.h>

#include "as_db_private.h"

#define I64(v) as_db_i64s(db, (v))

/* ---- transactions ---- */

int st_begin(void *h)
{
    as_db *db = h;
    if (!db->handle && (!db->acquire || db->acquire(db) != 0)) return AS_EDB;
    if (db->trans) return AS_EDB; /* no nesting */
    if (as_db_write_lock(db) != 0) return AS_EDB;
    if (as_db_begin_t(db, &db->trans) != 0) {
        db->trans = NULL;
        as_db_write_unlock(db);
        return AS_EDB;
    }
    return AS_OK;
}

int st_commit(void *h)
{
    as_db *db = h;
    apr_dbd_transaction_t *t = db->trans;
    db->trans = NULL;
    if (!t) return AS_EDB;
    /* Callers commit only when every statement succeeded: the drivers would
     * silently roll back a transaction holding a failed statement. */
    int rc = as_db_end_t(db, t, 1) == 0 ? AS_OK : AS_EDB;
    if (rc != AS_OK) db->wrote = 0; /* rolled back */
    /* the server's next request reads the versions again, in any process */
    as_versions_stale(db->versions);
    /* not answered before it is on disk */
    if (as_db_write_unlock(db) != 0) rc = AS_EDB;
    return rc;
}

int st_rollback(void *h)
{
    as_db *db = h;
    apr_dbd_transaction_t *t = db->trans;
    db->trans = NULL;
    int rc = !t || as_db_end_t(db, t, 0) == 0 ? AS_OK : AS_EDB;
    db->wrote = 0; /* nothing to sync */
    as_db_write_unlock(db);
    return rc;
}

int as_db_rollback(as_db *db)
{
    return st_rollback(db);
}

/* The first row of a result, copied onto m (the result is drained, and may
 * be freed); AS_ENOTFOUND when there is none. */
static int one_row(as_db *db, as_mem *m, const char *label, int nargs, const char **args,
                   as_db_rec *rec)
{
    apr_dbd_results_t *res;
    apr_dbd_row_t *r = NULL;
    if (as_db_select(db, label, &res, nargs, args)) return AS_EDB;
    int found = 0;
    while (as_db_next(db, res, &r))
        if (!found++) *rec = as_db_copy_row(db, m, res, r);
    return found ? AS_OK : AS_ENOTFOUND;
}

static int exec_rows(as_db *db, const char *label, int nargs, const char **args, int *nrows)
{
    return as_db_exec(db, label, nrows, nargs, args) == 0 ? AS_OK : AS_EDB;
}

/* A write that must touch exactly one row; AS_ECONFLICT when it touched none. */
static int exec_one(as_db *db, const char *label, int nargs, const char **args)
{
    int n = 0;
    int rc = exec_rows(db, label, nargs, args, &n);
    return rc != AS_OK ? rc : n >= 1 ? AS_OK : AS_ECONFLICT;
}

/* exec_one as a single write: in the open transaction, or in one of its own
 * (so it waits for the database as long as a transaction may, no longer).
 * AS_ECONFLICT commits (nothing was written), any other failure rolls back. */
static int exec_one_locked(as_db *db, const char *label, int nargs, const char **args)
{
    if (db->trans) return exec_one(db, label, nargs, args);
    if (st_begin(db) != AS_OK) return AS_EDB;
    int rc = exec_one(db, label, nargs, args);
    if (rc != AS_OK && rc != AS_ECONFLICT) {
        st_rollback(db);
        return rc;
    }
    return st_commit(db) == AS_OK ? rc : AS_EDB;
}

#define COL(i) (rec[(i)])               /* a copied row (one_row) */
#define RCOL(i) as_strdup(m, as_db_col(db, row, (i))) /* a live row, onto m */

/* ---- identity and mandates ---- */

int st_key_by_hash(void *h, as_mem *m, const char *hash, as_key_row *out)
{
    as_db *db = h;
    as_db_rec rec = NULL;
    const char *a[] = {hash};
    int rc = one_row(db, m, L_AS_KEY_BY_HASH, 1, a, &rec);
    if (rc != AS_OK) return rc;
    out->id = COL(0);
    out->user_id = COL(1);
    out->key_hash = COL(2);
    out->revoked_at = COL(3);
    return AS_OK;
}

void as_db_read_mandate(as_db_rec rec, as_mandate *md)
{
    md->id = COL(0);
    md->user_id = COL(1);
    md->status = as_mandate_state_parse(COL(2));
    md->categories = COL(3);
    md->per_order_cents = as_db_i64(COL(4));
    md->monthly_cents = as_db_i64(COL(5));
    md->confirm_above_cents = as_db_i64(COL(6));
    md->valid_until = COL(7);
    md->created_at = COL(8);
}

int st_mandate_current(void *h, as_mem *m, const char *user_id, bool lock, as_mandate *out)
{
    as_db *db = h;
    as_db_rec rec = NULL;
    const char *a[] = {user_id};
    int rc = one_row(db, m, lock ? L_AS_MANDATE_CURRENT_LOCK : L_AS_MANDATE_CURRENT, 1, a, &rec);
    if (rc == AS_OK) as_db_read_mandate(rec, out);
    return rc;
}

int st_mandate_get(void *h, as_mem *m, const char *id, bool lock, as_mandate *out)
{
    as_db *db = h;
    as_db_rec rec = NULL;
    const char *a[] = {id};
    int rc = one_row(db, m, lock ? L_AS_MANDATE_LOCK : L_AS_MANDATE_GET, 1, a, &rec);
    if (rc == AS_OK) as_db_read_mandate(rec, out);
    return rc;
}

int as_db_spent_stale(as_db *db)
{
    as_mem pm = as_db_pool_mem(db->pool); /* numbers only */
    as_db_rec rec = NULL;
    int rc = one_row(db, &pm, L_AS_SPENT_STALE, 0, NULL, &rec);
    return rc != AS_OK ? -1 : as_db_i64(COL(0)) != 0;
}

apr_status_t as_db_spent_rebuild(as_db *db)
{
    return as_db_exec(db, L_AS_SPENT_CLEAR, NULL, 0, NULL) == 0 &&
                   as_db_exec(db, L_AS_SPENT_FILL, NULL, 0, NULL) == 0
               ? APR_SUCCESS
               : APR_EGENERAL;
}

int st_mandate_spent(void *h, const char *mandate_id, const char *month, int64_t *cents)
{
    as_db *db = h;
    as_mem pm = as_db_pool_mem(db->pool); /* numbers only */
    as_db_rec rec = NULL;
    const char *a[] = {mandate_id, month};
    int rc = one_row(db, &pm, L_AS_MANDATE_SPENT, 2, a, &rec);
    *cents = rc == AS_OK ? as_db_i64(COL(0)) : 0;
    return rc == AS_ENOTFOUND ? AS_OK : rc;
}

/* ---- quotes ---- */

int st_quote_insert(void *h, const as_quote *q)
{
    as_db *db = h;
    const char *a[] = {q->id,
                       q->user_id,
                       I64(q->product_id),
                       q->offer_id,
                       I64(q->quantity),
                       I64(q->unit_price_cents),
                       I64(q->total_cents),
                       I64(q->delivery_days),
                       q->delivery_by,
                       q->device_slug,
                       q->device_slug ? as_fit_name(q->fit_status) : NULL,
                       I64(q->guarantee),
                       I64(q->created_at),
                       I64(q->expires_at)};
    return exec_one_locked(db, L_AS_QUOTE_INSERT, 14, a) == AS_OK ? AS_OK : AS_EDB;
}

int st_quote_get(void *h, as_mem *m, const char *id, as_quote *q)
{
    as_db *db = h;
    as_db_rec rec = NULL;
    const char *a[] = {id};
    int rc = one_row(db, m, L_AS_QUOTE_GET, 1, a, &rec);
    if (rc != AS_OK) return rc;
    q->id = COL(0);
    q->user_id = COL(1);
    q->offer_id = COL(2);
    q->product_id = as_db_i64(COL(3));
    q->quantity = as_db_i64(COL(4));
    q->unit_price_cents = as_db_i64(COL(5));
    q->total_cents = as_db_i64(COL(6));
    q->delivery_days = (int)as_db_i64(COL(7));
    q->delivery_by = COL(8);
    q->device_slug = COL(9);
    q->fit_status = as_fit_parse(COL(10));
    q->guarantee = as_db_bool(COL(11));
    q->created_at = as_db_i64(COL(12));
    q->expires_at = as_db_i64(COL(13));
    q->sku = COL(14);
    q->product_name = COL(15);
    q->category = COL(16);
    q->merchant_id = COL(17);
    q->merchant_name = COL(18);
    q->order_id = COL(19);
    return AS_OK;
}

/* ---- orders ---- */

int st_order_insert(void *h, const as_order *o)
{
    as_db *db = h;
    const char *a[] = {o->id,
                       o->user_id,
                       o->mandate_id,
                       o->quote_id,
                       o->offer_id,
                       I64(o->quantity),
                       I64(o->unit_price_cents),
                       I64(o->total_cents),
                       I64(o->budget_cents),
                       o->month,
                       o->reason,
                       o->agent,
                       as_order_state_name(o->status),
                       o->confirm_expires_at ? I64(o->confirm_expires_at) : NULL,
                       I64(o->created_at),
                       I64(o->updated_at),
                       o->key_id,
                       o->product_name,
                       o->category,
                       o->merchant_name};
    return exec_one(db, L_AS_ORDER_INSERT, 20, a);
}

int st_order_get(void *h, as_mem *m, const char *id, as_order *o)
{
    as_db *db = h;
    as_db_rec rec = NULL;
    const char *a[] = {id};
    memset(o, 0, sizeof(*o));
    int rc = one_row(db, m, L_AS_ORDER_GET, 1, a, &rec);
    if (rc != AS_OK) return rc;
    o->id = COL(0);
    o->user_id = COL(1);
    o->mandate_id = COL(2);
    o->quote_id = COL(3);
    o->offer_id = COL(4);
    o->quantity = as_db_i64(COL(5));
    o->unit_price_cents = as_db_i64(COL(6));
    o->total_cents = as_db_i64(COL(7));
    o->budget_cents = as_db_i64(COL(8));
    o->month = COL(9);
    o->reason = COL(10);
    o->agent = COL(11);
    o->status = as_order_state_parse(COL(12));
    o->confirm_expires_at = as_db_i64(COL(13));
    o->created_at = as_db_i64(COL(14));
    o->updated_at = as_db_i64(COL(15));
    o->sku = COL(16);
    o->product_name = COL(17);
    o->category = COL(18);
    o->merchant_name = COL(19);
    o->delivery_by = COL(20);
    o->device_slug = COL(21);
    o->fit_status = as_fit_parse(COL(22));
    o->guarantee = as_db_bool(COL(23));
    o->confirmation_id = COL(24);
    o->part_type = COL(25);
    o->merchant_country = COL(26);
    o->key_id = COL(27);
    o->key_revoked_at = COL(28);

    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    size_t cap = 0;
    if (as_db_select(db, L_AS_ORDER_EVENTS, &res, 1, a)) return AS_EDB;
    while (as_db_next(db, res, &row)) {
        o->events = as_db_grow(m, o->events, &cap, o->n_events, sizeof(as_event));
        as_event *e = &o->events[o->n_events++];
        e->status = as_order_state_parse(RCOL(0));
        e->at = as_db_i64(RCOL(1));
        e->note = RCOL(2);
    }
    return AS_OK;
}

int st_order_move(void *h, const char *id, as_order_state from, as_order_state to, int64_t budget,
                  int64_t at)
{
    as_db *db = h;
    const char *a[] = {as_order_state_name(to), I64(budget), I64(at), id,
                       as_order_state_name(from)};
    return exec_one(db, L_AS_ORDER_MOVE, 5, a);
}

int st_event_add(void *h, const char *order_id, as_order_state status, int64_t at, const char *note)
{
    as_db *db = h;
    const char *a[] = {order_id, order_id, as_order_state_name(status), I64(at), note};
    return exec_one(db, L_AS_EVENT_ADD, 5, a) == AS_OK ? AS_OK : AS_EDB;
}

int st_orders_expired(void *h, as_mem *m, const char *mandate_id, int64_t now, as_order **out,
                      size_t *n)
{
    as_db *db = h;
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    const char *a[] = {mandate_id, I64(now)};
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    if (mandate_id ? as_db_select(db, L_AS_ORDERS_EXPIRED, &res, 2, a)
                   : as_db_select(db, L_AS_ORDERS_EXPIRED_ANY, &res, 1, a + 1))
        return AS_EDB;
    while (as_db_next(db, res, &row)) {
        *out = as_db_grow(m, *out, &cap, *n, sizeof(as_order));
        as_order *o = &(*out)[(*n)++];
        memset(o, 0, sizeof(*o));
        o->id = RCOL(0);
        o->offer_id = RCOL(1);
        o->quantity = as_db_i64(RCOL(2));
        o->confirmation_id = RCOL(3);
        o->status = AS_OS_AWAITING;
    }
    return AS_OK;
}

int st_stock_take(void *h, const char *offer_id, int64_t qty)
{
    as_db *db = h;
    const char *a[] = {I64(qty), offer_id, I64(qty)};
    as_mem pm = as_db_pool_mem(db->pool); /* numbers only */
    as_db_rec rec = NULL;
    int rc = one_row(db, &pm, L_AS_STOCK_TAKE, 3, a, &rec);
    if (rc == AS_ENOTFOUND) return AS_ECONFLICT; /* fewer than qty units */
    if (rc != AS_OK) return rc;
    return as_db_rank_stock_moved(db, as_db_i64(COL(0)), as_db_i64(COL(1)), -qty);
}

int st_stock_give(void *h, const char *offer_id, int64_t qty)
{
    as_db *db = h;
    const char *a[] = {I64(qty), offer_id};
    as_mem pm = as_db_pool_mem(db->pool); /* numbers only */
    as_db_rec rec = NULL;
    if (one_row(db, &pm, L_AS_STOCK_GIVE, 2, a, &rec) != AS_OK) return AS_EDB;
    return as_db_rank_stock_moved(db, as_db_i64(COL(0)), as_db_i64(COL(1)), qty);
}

int st_offer_withdrawn(void *h, const char *offer_id, unsigned *what)
{
    as_db *db = h;
    const char *a[] = {offer_id};
    as_mem pm = as_db_pool_mem(db->pool); /* numbers only */
    as_db_rec rec = NULL;
    int rc = one_row(db, &pm, L_AS_OFFER_WITHDRAWN, 1, a, &rec);
    *what = rc == AS_OK ? (unsigned)as_db_i64(COL(0)) : 0;
    return rc;
}

/* ---- confirmations ---- */

int st_confirmation_insert(void *h, const as_confirmation *c)
{
    as_db *db = h;
    const char *a[] = {c->id,
                       c->order_id,
                       c->user_id,
                       as_confirmation_state_name(c->status),
                       I64(c->created_at),
                       I64(c->expires_at)};
    return exec_one(db, L_AS_CONF_INSERT, 6, a) == AS_OK ? AS_OK : AS_EDB;
}

int st_confirmation_get(void *h, as_mem *m, const char *id, as_confirmation *c)
{
    as_db *db = h;
    as_db_rec rec = NULL;
    const char *a[] = {id};
    int rc = one_row(db, m, L_AS_CONF_GET, 1, a, &rec);
    if (rc != AS_OK) return rc;
    c->id = COL(0);
    c->order_id = COL(1);
    c->user_id = COL(2);
    c->status = as_confirmation_state_parse(COL(3));
    c->created_at = as_db_i64(COL(4));
    c->expires_at = as_db_i64(COL(5));
    c->decided_at = as_db_i64(COL(6));
    return AS_OK;
}

int st_confirmation_decide(void *h, const char *id, as_confirmation_state to, int64_t at)
{
    as_db *db = h;
    const char *a[] = {as_confirmation_state_name(to), I64(at), id};
    return exec_one(db, L_AS_CONF_DECIDE, 3, a) == AS_OK ? AS_OK : AS_EDB;
}

/* ---- Idempotency-Key records ---- */

static int idem_get(as_db *db, as_mem *m, const char *user, const char *scope, const char *key,
                    as_idem *x)
{
    as_db_rec rec = NULL;
    const char *a[] = {user, scope, key};
    int rc = one_row(db, m, L_AS_IDEM_GET, 3, a, &rec);
    if (rc != AS_OK) return rc;
    x->request_hash = COL(0);
    x->state = as_idem_state_parse(COL(1));
    x->status = (int)as_db_i64(COL(2));
    x->response = COL(3);
    x->created_at = as_db_i64(COL(4));
    x->lease_until = as_db_i64(COL(5));
    return AS_OK;
}

/* Runs in the caller's transaction, so the claim is committed (or rolled back)
 * with the work it guards. */
int st_idem_claim(void *h, as_mem *m, const char *user, const char *scope, const char *key,
                  const char *hash, int64_t now, int64_t lease_until, as_idem *existing)
{
    as_db *db = h;
    if (!db->trans) return AS_EDB;
    for (int attempt = 0; attempt < 3; attempt++) {
        const char *a[] = {user, scope, key, hash, I64(now), I64(lease_until)};
        int rc = exec_one(db, L_AS_IDEM_CLAIM, 6, a);
        if (rc != AS_ECONFLICT) return rc; /* AS_OK: claimed */
        rc = idem_get(db, m, user, scope, key, existing);
        if (rc == AS_ENOTFOUND) continue; /* removed meanwhile: claim again */
        return rc == AS_OK ? AS_ECONFLICT : rc;
    }
    return AS_EDB;
}

int st_idem_forget(void *h, const char *user, const char *scope, const char *key, int64_t before)
{
    as_db *db = h;
    const char *a[] = {user, scope, key, I64(before)};
    return exec_rows(db, L_AS_IDEM_FORGET, 4, a, NULL);
}

int st_idem_takeover(void *h, as_mem *m, const char *user, const char *scope, const char *key,
                     const char *hash, int64_t now, int64_t lease_until, as_idem *existing)
{
    as_db *db = h;
    const char *a[] = {I64(lease_until), user, scope, key, hash, I64(now)};
    int rc = exec_one(db, L_AS_IDEM_TAKEOVER, 6, a);
    if (rc != AS_ECONFLICT) return rc;
    rc = idem_get(db, m, user, scope, key, existing);
    return rc == AS_OK ? AS_ECONFLICT : rc;
}

int st_idem_finish(void *h, const char *user, const char *scope, const char *key, int status,
                   const char *response)
{
    as_db *db = h;
    const char *a[] = {I64(status), response, user, scope, key};
    return exec_one(db, L_AS_IDEM_FINISH, 5, a) == AS_OK ? AS_OK : AS_EDB;
}

/* ---- returns and questions ---- */

int st_return_insert(void *h, const as_return *r)
{
    as_db *db = h;
    const char *a[] = {r->id,
                       r->order_id,
                       r->user_id,
                       r->reason_code,
                       r->note,
                       r->refund_status,
                       I64(r->refund_cents),
                       r->carrier,
                       r->tracking_code,
                       r->replacement_sku,
                       I64(r->created_at)};
    return exec_one(db, L_AS_RETURN_INSERT, 11, a);
}

static int return_row(as_db *db, as_mem *m, const char *label, const char *arg, as_return *r)
{
    as_db_rec rec = NULL;
    const char *a[] = {arg};
    int rc = one_row(db, m, label, 1, a, &rec);
    if (rc != AS_OK) return rc;
    r->id = COL(0);
    r->order_id = COL(1);
    r->user_id = COL(2);
    r->reason_code = COL(3);
    r->note = COL(4);
    r->refund_status = COL(5);
    r->refund_cents = as_db_i64(COL(6));
    r->carrier = COL(7);
    r->tracking_code = COL(8);
    r->replacement_sku = COL(9);
    r->created_at = as_db_i64(COL(10));
    return AS_OK;
}

int st_return_get(void *h, as_mem *m, const char *id, as_return *out)
{
    return return_row(h, m, L_AS_RETURN_GET, id, out);
}

int st_return_by_order(void *h, as_mem *m, const char *order_id, as_return *out)
{
    return return_row(h, m, L_AS_RETURN_BY_ORDER, order_id, out);
}

int st_question_insert(void *h, int64_t product_id, const char *id, const char *user_id,
                       const char *question, const char *answer, const char *asked_at,
                       const char *since, int64_t per_day)
{
    as_db *db = h;
    const char *a[] = {id, I64(product_id), user_id, question, answer, asked_at, user_id, since,
                       I64(per_day)};
    int rc = exec_one_locked(db, L_AS_QUESTION_INSERT, 9, a);
    return rc == AS_OK || rc == AS_ECONFLICT ? rc : AS_EDB;
}

/* ---- passkeys and their ceremonies ---- */

static void passkey_of(as_db_rec rec, as_passkey *k)
{
    k->id = COL(0);
    k->user_id = COL(1);
    k->alg = as_db_i64(COL(2));
    k->public_key = COL(3);
    k->sign_count = as_db_i64(COL(4));
    k->created_at = as_db_i64(COL(5));
}

int st_passkey_insert(void *h, const as_passkey *k)
{
    as_db *db = h;
    const char *a[] = {k->id,         k->user_id,          I64(k->alg),
                       k->public_key, I64(k->sign_count), I64(k->created_at)};
    return exec_one_locked(db, L_AS_PASSKEY_INSERT, 6, a);
}

int st_passkeys_of(void *h, as_mem *m, const char *user_id, as_passkey **out, size_t *n)
{
    as_db *db = h;
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    const char *a[] = {user_id};
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    if (as_db_select(db, L_AS_PASSKEYS_OF, &res, 1, a)) return AS_EDB;
    while (as_db_next(db, res, &row)) {
        *out = as_db_grow(m, *out, &cap, *n, sizeof(as_passkey));
        passkey_of(as_db_copy_row(db, m, res, row), &(*out)[(*n)++]);
    }
    return AS_OK;
}

int st_passkey_get(void *h, as_mem *m, const char *id, as_passkey *out)
{
    as_db *db = h;
    as_db_rec rec = NULL;
    const char *a[] = {id};
    int rc = one_row(db, m, L_AS_PASSKEY_GET, 1, a, &rec);
    if (rc == AS_OK) passkey_of(rec, out);
    return rc;
}

int st_passkey_count(void *h, const char *id, int64_t from, int64_t to)
{
    as_db *db = h;
    const char *a[] = {I64(to), id, I64(from)};
    return exec_one_locked(db, L_AS_PASSKEY_COUNT, 3, a);
}

int st_enrolment_insert(void *h, const as_enrolment *e)
{
    as_db *db = h;
    const char *a[] = {e->id, e->user_id, e->token_hash, I64(e->created_at), I64(e->expires_at)};
    return exec_one_locked(db, L_AS_ENROLMENT_INSERT, 5, a);
}

int st_enrolment_get(void *h, as_mem *m, const char *id, as_enrolment *out)
{
    as_db *db = h;
    as_db_rec rec = NULL;
    const char *a[] = {id};
    int rc = one_row(db, m, L_AS_ENROLMENT_GET, 1, a, &rec);
    if (rc != AS_OK) return rc;
    out->id = COL(0);
    out->user_id = COL(1);
    out->token_hash = COL(2);
    out->created_at = as_db_i64(COL(3));
    out->expires_at = as_db_i64(COL(4));
    out->used_at = COL(5) ? as_db_i64(COL(5)) : 0;
    return AS_OK;
}

int st_enrolment_use(void *h, const char *id, int64_t now)
{
    as_db *db = h;
    const char *a[] = {I64(now), id, I64(now)};
    return exec_one_locked(db, L_AS_ENROLMENT_USE, 3, a);
}

int st_challenge_insert(void *h, const char *challenge, const char *purpose,
                        const char *subject_id, int64_t expires_at)
{
    as_db *db = h;
    const char *a[] = {challenge, purpose, subject_id, I64(expires_at)};
    return exec_one_locked(db, L_AS_CHALLENGE_INSERT, 4, a);
}

int st_challenge_use(void *h, const char *challenge, const char *purpose, const char *subject_id,
                     int64_t now)
{
    as_db *db = h;
    const char *a[] = {I64(now), challenge, purpose, subject_id, I64(now)};
    return exec_one_locked(db, L_AS_CHALLENGE_USE, 5, a);
}

int st_challenge_live(void *h, as_mem *m, const char *purpose, const char *subject_id, int64_t now,
                      as_challenge *out)
{
    as_db *db = h;
    as_db_rec rec = NULL;
    const char *a[] = {purpose, subject_id, I64(now)};
    int rc = one_row(db, m, L_AS_CHALLENGE_LIVE, 3, a, &rec);
    if (rc != AS_OK) return rc;
    out->challenge = COL(0);
    out->expires_at = as_db_i64(COL(1));
    return AS_OK;
}

int st_challenges_prune(void *h, int64_t now, int limit, int *n)
{
    as_db *db = h;
    as_db_rec rec = NULL;
    as_mem pm = as_db_pool_mem(db->pool); /* one short column */
    const char *due[] = {I64(now)};
    *n = 0;
    /* the look takes no write lock: nearly always nothing is due */
    int rc = one_row(db, &pm, L_AS_CHALLENGES_DUE, 1, due, &rec);
    if (rc != AS_OK) return rc == AS_ENOTFOUND ? AS_OK : rc;
    const char *a[] = {I64(now), I64(limit)};
    if (db->trans) return exec_rows(db, L_AS_CHALLENGES_PRUNE, 2, a, n);
    if (st_begin(db) != AS_OK) return AS_EDB;
    rc = exec_rows(db, L_AS_CHALLENGES_PRUNE, 2, a, n);
    if (rc != AS_OK) {
        st_rollback(db);
        return rc;
    }
    return st_commit(db);
}
