/* The fake store's buying tables (fake_shop.h): keys, mandates, quotes,
 * orders, confirmations, Idempotency-Key records, returns, questions and
 * passkeys, kept in memory over fake_store.c's catalogue, with transactions
 * that roll back, the checks of the schema's constraints and failure
 * injection (fake_faults.h). */
#include "fake_shop.h"

#include <string.h>

#include <jansson.h>

#include "as_crypto.h"
#include "as_util.h"

#define SHOP_IN_TX(g, what) FAKE_ASSERT((g)->in_tx, "%s outside a transaction", what)

/* ---- The golden shop's keys and mandates ---- */

/* u1's mandate allows hand soap and vacuum parts, u2's hand soap only (the
 * category case). */
static const fake_shop_key golden_keys[] = {
    {"agentshop_sk_test_GoldenUserOne0000000000000000001", "key_u1", "u1"},
    {"agentshop_sk_test_GoldenUserTwo0000000000000000002", "key_u2", "u2"},
};

static const as_mandate golden_mandates[] = {
    {"md_u1", "u1", AS_MS_ACTIVE, "hand-soap,vacuum-parts", 10000, 12000, 5000, "2026-12-31",
     "2026-01-01T00:00:00Z"},
    {"md_u2", "u2", AS_MS_ACTIVE, "hand-soap", 10000, 12000, 5000, NULL, "2026-01-01T00:00:00Z"},
};

static const char *shop_dup(fake_shop *g, const char *s)
{
    return s ? as_strdup(&g->mem, s) : NULL;
}

/* An order holds its units from placement until it is cancelled, declined or
 * expired (a return does not restock: the item is inspected first). */
static bool shop_holds_stock(as_order_state status)
{
    return status != AS_OS_CANCELLED && status != AS_OS_DECLINED && status != AS_OS_EXPIRED;
}

static bool shop_state_ok(as_order_state s)
{
    return (unsigned)s < AS_OS_N;
}

void fake_shop_units(const fake_shop *g, int64_t *units)
{
    const fake_live *live = &g->t.live;
    for (size_t i = 0; i < live->n_offers; i++) {
        units[i] = live->offer[i].stock;
        for (size_t k = 0; k < g->t.n_orders; k++) {
            const as_order *o = &g->t.orders[k].o;
            if (shop_holds_stock(o->status) && strcmp(o->offer_id, live->offer[i].offer_id) == 0)
                units[i] += o->quantity;
        }
    }
}

/* ---- Transactions ---- */

static int shop_begin(void *h)
{
    fake_shop *g = h;
    FAKE_ASSERT(!g->in_tx, "begin inside an open transaction"); /* core never nests them */
    FAKE_ENTER(g, FAKE_OP_BEGIN);
    g->saved = g->t;
    g->in_tx = true;
    return AS_OK;
}

static int shop_commit(void *h)
{
    fake_shop *g = h;
    FAKE_ASSERT(g->in_tx, "commit without a transaction");
    FAKE_ENTER(g, FAKE_OP_COMMIT); /* a failed commit leaves the transaction open */
    g->in_tx = false;
    return AS_OK;
}

static int shop_rollback(void *h)
{
    fake_shop *g = h;
    /* core may roll back after a failed begin: harmless, as in SQL */
    int rc = fake_enter(&g->db, FAKE_OP_ROLLBACK);
    if (g->in_tx) g->t = g->saved;
    g->in_tx = false;
    return rc;
}

/* ---- Keys and mandates ---- */

static int shop_key_by_hash(void *h, as_mem *m, const char *hash, as_key_row *out)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_KEY_BY_HASH);
    FAKE_ASSERT(hash && strlen(hash) == 64, "key_by_hash: not a hex SHA-256");
    if (g->key_user) {
        out->id = "key_1";
        out->user_id = g->key_user;
        out->key_hash = g->key_mode == 2
                            ? "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
                            : as_strdup(m, hash);
        out->revoked_at = g->key_mode == 1 ? "2026-02-01T00:00:00Z" : NULL;
        return AS_OK;
    }
    for (size_t i = 0; i < g->n_keys; i++) {
        const char *mine = as_sha256_hex(m, g->keys[i].key, strlen(g->keys[i].key));
        if (strcmp(mine, hash) == 0) {
            *out = (as_key_row){g->keys[i].id, g->keys[i].user, mine, NULL};
            return AS_OK;
        }
    }
    return AS_ENOTFOUND;
}

/* As the SQL store: the user's active mandate. */
static int shop_mandate_current(void *h, as_mem *m, const char *user_id, bool lock, as_mandate *out)
{
    (void)m;
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_MANDATE_CURRENT);
    FAKE_ASSERT(user_id, "mandate_current(NULL)");
    if (lock) SHOP_IN_TX(g, "mandate_current(lock)");
    for (size_t i = 0; i < g->n_mandates; i++)
        if (strcmp(g->mandates[i].user_id, user_id) == 0 && g->mandates[i].status == AS_MS_ACTIVE) {
            *out = g->mandates[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int shop_mandate_get(void *h, as_mem *m, const char *id, bool lock, as_mandate *out)
{
    (void)m;
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_MANDATE_GET);
    if (lock) SHOP_IN_TX(g, "mandate_get(lock)");
    for (size_t i = 0; i < g->n_mandates; i++)
        if (strcmp(g->mandates[i].id, id) == 0) {
            *out = g->mandates[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int shop_mandate_spent(void *h, const char *mandate_id, const char *month, int64_t *cents)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_MANDATE_SPENT);
    FAKE_ASSERT(month && strlen(month) == 7 && month[4] == '-', "mandate_spent: month '%s'",
                month ? month : "(null)");
    *cents = 0;
    for (size_t i = 0; i < g->t.n_orders; i++) {
        const as_order *o = &g->t.orders[i].o;
        if (strcmp(o->mandate_id, mandate_id) == 0 && strcmp(o->month, month) == 0)
            *cents += o->budget_cents;
    }
    return AS_OK;
}

/* ---- Quotes ---- */

static bool shop_valid_date(const char *s)
{
    int64_t d;
    return s && as_date_parse(s, &d);
}

static void shop_quote_check(const as_quote *q)
{
    FAKE_ASSERT(q->id && q->user_id && q->offer_id, "quote_insert: NULL id/user/offer");
    FAKE_ASSERT(q->quantity >= 1 && q->quantity <= 10, "quote_insert: quantity %lld",
                (long long)q->quantity);
    FAKE_ASSERT(q->unit_price_cents > 0 && q->total_cents == q->unit_price_cents * q->quantity,
                "quote_insert: prices %lld x %lld != %lld", (long long)q->unit_price_cents,
                (long long)q->quantity, (long long)q->total_cents);
    FAKE_ASSERT(shop_valid_date(q->delivery_by), "quote_insert: delivery_by");
    FAKE_ASSERT(q->expires_at > q->created_at, "quote_insert: expiry");
    FAKE_ASSERT(q->device_slug || q->fit_status == AS_FIT_UNKNOWN,
                "quote_insert: a fit status without a device");
}

static void shop_quote_put(fake_shop *g, const as_quote *q)
{
    as_quote *c = &g->t.quotes[g->t.n_quotes++];
    *c = *q;
    c->id = shop_dup(g, q->id), c->user_id = shop_dup(g, q->user_id),
    c->offer_id = shop_dup(g, q->offer_id);
    c->delivery_by = shop_dup(g, q->delivery_by), c->device_slug = shop_dup(g, q->device_slug);
    c->sku = shop_dup(g, q->sku);
    c->product_name = shop_dup(g, q->product_name), c->category = shop_dup(g, q->category);
    c->merchant_id = shop_dup(g, q->merchant_id), c->merchant_name = shop_dup(g, q->merchant_name);
    c->order_id = shop_dup(g, q->order_id);
}

static int shop_quote_insert(void *h, const as_quote *q)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_QUOTE_INSERT);
    shop_quote_check(q);
    if (g->t.n_quotes == FAKE_SHOP_MAX) return AS_EDB;
    as_quote c = *q;
    c.order_id = NULL; /* a new quote is no order's yet */
    shop_quote_put(g, &c);
    return AS_OK;
}

static int shop_quote_get(void *h, as_mem *m, const char *id, as_quote *out)
{
    (void)m;
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_QUOTE_GET);
    for (size_t i = 0; i < g->t.n_quotes; i++)
        if (strcmp(g->t.quotes[i].id, id) == 0) {
            *out = g->t.quotes[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

/* ---- Orders ---- */

static fake_shop_order *shop_order_find(fake_shop *g, const char *id)
{
    for (size_t i = 0; i < g->t.n_orders; i++)
        if (strcmp(g->t.orders[i].o.id, id) == 0) return &g->t.orders[i];
    return NULL;
}

/* What the SQL store joins from the catalogue: the part type and the
 * merchant's country. */
static void shop_order_join(fake_shop *g, as_order *o)
{
    for (size_t i = 0; i < g->db.n_products; i++) {
        const as_product *p = &g->db.products[i];
        if (strcmp(p->sku, o->sku) != 0) continue;
        o->part_type = p->part_type;
        for (size_t k = 0; k < p->n_offers; k++)
            if (strcmp(p->offers[k].id, o->offer_id) == 0)
                o->merchant_country = p->offers[k].merchant.country;
    }
}

static void shop_order_check(const as_order *o)
{
    FAKE_ASSERT(o->id && o->user_id && o->mandate_id && o->quote_id && o->offer_id && o->month &&
                    o->reason && o->agent,
                "order_insert: a NOT NULL column is NULL");
    FAKE_ASSERT(shop_state_ok(o->status), "order_insert: status %d", (int)o->status);
    FAKE_ASSERT(o->quantity >= 1 && o->total_cents > 0 && o->budget_cents >= 0,
                "order_insert: amounts");
    FAKE_ASSERT(shop_holds_stock(o->status), "order_insert: status %s",
                as_order_state_name(o->status));
}

/* A copy of o (its strings on the store's arena) as the table's next row. */
static as_order *shop_order_put(fake_shop *g, const as_order *o)
{
    fake_shop_order *r = &g->t.orders[g->t.n_orders++];
    memset(r, 0, sizeof(*r));
    r->o = *o;
    as_order *c = &r->o;
    c->id = shop_dup(g, o->id), c->user_id = shop_dup(g, o->user_id);
    c->mandate_id = shop_dup(g, o->mandate_id), c->quote_id = shop_dup(g, o->quote_id);
    c->offer_id = shop_dup(g, o->offer_id), c->month = shop_dup(g, o->month);
    c->reason = shop_dup(g, o->reason), c->agent = shop_dup(g, o->agent);
    c->sku = shop_dup(g, o->sku), c->product_name = shop_dup(g, o->product_name);
    c->category = shop_dup(g, o->category), c->merchant_name = shop_dup(g, o->merchant_name);
    c->delivery_by = shop_dup(g, o->delivery_by), c->device_slug = shop_dup(g, o->device_slug);
    c->key_id = shop_dup(g, o->key_id);
    c->part_type = shop_dup(g, o->part_type);
    c->merchant_country = shop_dup(g, o->merchant_country);
    c->confirmation_id = NULL, c->key_revoked_at = NULL;
    c->events = NULL, c->n_events = 0;
    return c;
}

static int shop_order_insert(void *h, const as_order *o)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_ORDER_INSERT);
    SHOP_IN_TX(g, "order_insert");
    shop_order_check(o);
    as_quote *q = NULL;
    for (size_t i = 0; i < g->t.n_quotes; i++)
        if (strcmp(g->t.quotes[i].id, o->quote_id) == 0) q = &g->t.quotes[i];
    if (q && q->order_id) return AS_ECONFLICT;
    if (g->t.n_orders == FAKE_SHOP_MAX) return AS_EDB;
    as_order *c = shop_order_put(g, o);
    shop_order_join(g, c);
    if (q) q->order_id = c->id;
    return AS_OK;
}

static int shop_order_get(void *h, as_mem *m, const char *id, as_order *out)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_ORDER_GET);
    FAKE_ASSERT(id, "order_get(NULL)");
    fake_shop_order *r = shop_order_find(g, id);
    if (!r) return AS_ENOTFOUND;
    *out = r->o;
    out->events = as_alloc(m, (r->o.n_events + 1) * sizeof(as_event));
    memcpy(out->events, r->events, r->o.n_events * sizeof(as_event));
    for (size_t i = 0; i < g->t.n_confs; i++)
        if (strcmp(g->t.confs[i].order_id, id) == 0) out->confirmation_id = g->t.confs[i].id;
    return AS_OK;
}

static int shop_order_move(void *h, const char *id, as_order_state from, as_order_state to,
                           int64_t budget_cents, int64_t at)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_ORDER_MOVE);
    SHOP_IN_TX(g, "order_move");
    FAKE_ASSERT(shop_state_ok(from) && shop_state_ok(to), "order_move: %d -> %d", (int)from,
                (int)to);
    FAKE_ASSERT(budget_cents >= 0, "order_move: budget %lld", (long long)budget_cents);
    fake_shop_order *r = shop_order_find(g, id);
    if (!r || r->o.status != from) return AS_ECONFLICT;
    r->o.status = to;
    r->o.budget_cents = budget_cents;
    r->o.updated_at = at;
    return AS_OK;
}

static int shop_event_add(void *h, const char *order_id, as_order_state status, int64_t at,
                          const char *note)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_EVENT_ADD);
    SHOP_IN_TX(g, "event_add");
    FAKE_ASSERT(shop_state_ok(status), "event_add: status %d", (int)status);
    fake_shop_order *r = shop_order_find(g, order_id);
    FAKE_ASSERT(r, "event_add for an order that does not exist: %s", order_id);
    if (r->o.n_events == FAKE_SHOP_EVENTS) return AS_EDB;
    r->events[r->o.n_events++] = (as_event){status, shop_dup(g, note), at};
    return AS_OK;
}

/* As the SQL store: only what expiring needs. */
static int shop_orders_expired(void *h, as_mem *m, const char *mandate_id, int64_t now,
                               as_order **out, size_t *n)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_ORDERS_EXPIRED);
    *out = as_alloc(m, (g->t.n_orders + 1) * sizeof(as_order));
    *n = 0;
    for (size_t i = 0; i < g->t.n_orders; i++) {
        const as_order *o = &g->t.orders[i].o;
        if ((mandate_id && strcmp(o->mandate_id, mandate_id) != 0) || o->status != AS_OS_AWAITING ||
            o->confirm_expires_at > now)
            continue;
        as_order *r = &(*out)[(*n)++];
        r->id = o->id;
        r->offer_id = o->offer_id;
        r->quantity = o->quantity;
        r->status = AS_OS_AWAITING;
        for (size_t k = 0; k < g->t.n_confs; k++)
            if (strcmp(g->t.confs[k].order_id, o->id) == 0) r->confirmation_id = g->t.confs[k].id;
    }
    return AS_OK;
}

/* ---- Stock: the catalogue's live stock (fake_store.h), with its rank
 * versions raised as the SQL store raises them ---- */

static int shop_stock_take(void *h, const char *offer_id, int64_t qty)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_STOCK_TAKE);
    SHOP_IN_TX(g, "stock_take");
    FAKE_ASSERT(qty > 0, "stock_take: qty %lld", (long long)qty);
    int64_t *stock = fake_live_stock(&g->db, offer_id, NULL);
    if (!stock || *stock < qty || fake_live_withdrawn(&g->db, offer_id)) return AS_ECONFLICT;
    *stock -= qty;
    fake_live_moved(&g->db, offer_id, *stock + qty);
    return AS_OK;
}

static int shop_stock_give(void *h, const char *offer_id, int64_t qty)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_STOCK_GIVE);
    SHOP_IN_TX(g, "stock_give");
    FAKE_ASSERT(qty > 0, "stock_give: qty %lld", (long long)qty);
    int64_t *stock = fake_live_stock(&g->db, offer_id, NULL);
    if (!stock) return AS_EDB;
    if (fake_live_withdrawn(&g->db, offer_id)) return AS_OK; /* as SQL: given to no one */
    *stock += qty;
    fake_live_moved(&g->db, offer_id, *stock - qty);
    return AS_OK;
}

/* As the SQL store; only offers are withdrawn here (fake_live_withdraw). */
static int shop_offer_withdrawn(void *h, const char *offer_id, unsigned *what)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_OFFER_WITHDRAWN);
    SHOP_IN_TX(g, "offer_withdrawn");
    *what = 0;
    if (!fake_live_stock(&g->db, offer_id, NULL)) return AS_ENOTFOUND;
    if (fake_live_withdrawn(&g->db, offer_id)) *what = AS_WITHDRAWN_OFFER;
    return AS_OK;
}

/* ---- Confirmations ---- */

/* As the database's CHECK: one of the statuses. */
static bool shop_conf_status(as_confirmation_state s)
{
    return (unsigned)s < AS_CS_N;
}

static void shop_conf_put(fake_shop *g, const as_confirmation *c)
{
    as_confirmation *r = &g->t.confs[g->t.n_confs++];
    *r = *c;
    r->id = shop_dup(g, c->id), r->order_id = shop_dup(g, c->order_id);
    r->user_id = shop_dup(g, c->user_id);
}

static int shop_conf_insert(void *h, const as_confirmation *c)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_CONF_INSERT);
    SHOP_IN_TX(g, "confirmation_insert");
    FAKE_ASSERT(c->id && c->order_id && c->user_id && shop_conf_status(c->status),
                "confirmation_insert: NULL column or bad status");
    FAKE_ASSERT(c->expires_at > c->created_at, "confirmation_insert: expiry");
    if (g->t.n_confs == FAKE_SHOP_MAX) return AS_EDB;
    shop_conf_put(g, c);
    return AS_OK;
}

static as_confirmation *shop_conf_find(fake_shop *g, const char *id)
{
    for (size_t i = 0; i < g->t.n_confs; i++)
        if (strcmp(g->t.confs[i].id, id) == 0) return &g->t.confs[i];
    return NULL;
}

static int shop_conf_get(void *h, as_mem *m, const char *id, as_confirmation *out)
{
    (void)m;
    FAKE_ENTER(h, FAKE_OP_CONF_GET);
    FAKE_ASSERT(id, "confirmation_get(NULL)");
    as_confirmation *c = shop_conf_find(h, id);
    if (!c) return AS_ENOTFOUND;
    *out = *c;
    return AS_OK;
}

static int shop_conf_decide(void *h, const char *id, as_confirmation_state to, int64_t at)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_CONF_DECIDE);
    SHOP_IN_TX(g, "confirmation_decide");
    FAKE_ASSERT(shop_conf_status(to), "confirmation_decide: status %d", (int)to);
    as_confirmation *c = shop_conf_find(g, id);
    if (!c) return AS_ECONFLICT;
    c->status = to;
    c->decided_at = at;
    return AS_OK;
}

/* ---- Idempotency-Key records ---- */

static fake_shop_idem *shop_idem_find(fake_shop *g, const char *user, const char *scope,
                                      const char *key)
{
    for (size_t i = 0; i < g->t.n_idem; i++) {
        fake_shop_idem *r = &g->t.idem[i];
        if ((!r->user || !strcmp(r->user, user)) && (!r->scope || !strcmp(r->scope, scope)) &&
            !strcmp(r->key, key))
            return r;
    }
    return NULL;
}

/* As the SQL store: a record found answers (AS_ECONFLICT), unless it is a
 * claim in flight whose lease ran out, which is taken over. A record kept for
 * whoever claims its key first becomes that claimer's. */
static int shop_idem_claim(void *h, as_mem *m, const char *user, const char *scope, const char *key,
                           const char *hash, int64_t now, int64_t lease_until, as_idem *existing)
{
    (void)m;
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_IDEM_CLAIM);
    SHOP_IN_TX(g, "idem_claim");
    FAKE_ASSERT(user && scope && key && hash, "idem_claim: NULL argument");
    FAKE_ASSERT(lease_until > now, "idem_claim: lease");
    fake_shop_idem *r = shop_idem_find(g, user, scope, key);
    if (r && !r->user) {
        r->user = shop_dup(g, user), r->scope = shop_dup(g, scope);
        if (!r->rec.request_hash) r->rec.request_hash = shop_dup(g, hash);
    }
    if (r && !(r->rec.state == AS_IDEM_IN_FLIGHT && r->rec.lease_until < now)) {
        *existing = r->rec;
        return AS_ECONFLICT;
    }
    if (!r) {
        if (g->t.n_idem == FAKE_SHOP_MAX) return AS_EDB;
        r = &g->t.idem[g->t.n_idem++];
        *r = (fake_shop_idem){shop_dup(g, user), shop_dup(g, scope), shop_dup(g, key), {0}};
    }
    r->rec = (as_idem){shop_dup(g, hash), AS_IDEM_IN_FLIGHT, NULL, 0, now, lease_until};
    return AS_OK;
}

static int shop_idem_finish(void *h, const char *user, const char *scope, const char *key,
                            int status, const char *response)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_IDEM_FINISH);
    SHOP_IN_TX(g, "idem_finish");
    FAKE_ASSERT(status >= 200 && status <= 599, "idem_finish: status %d", status);
    json_t *v = response ? json_loads(response, 0, NULL) : NULL;
    FAKE_ASSERT(v, "idem_finish: the remembered response is not JSON");
    json_decref(v);
    fake_shop_idem *r = shop_idem_find(g, user, scope, key);
    if (!r) return AS_EDB;
    r->rec.state = AS_IDEM_DONE;
    r->rec.status = status;
    r->rec.response = shop_dup(g, response);
    return AS_OK;
}

/* Idempotency-Key records past their keeping time are forgotten, and a claim
 * whose lease ran out is taken over, when core says so (core/rules/as_idem.c). */
static int shop_idem_forget(void *h, const char *user, const char *scope, const char *key,
                            int64_t before)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_IDEM_FORGET);
    SHOP_IN_TX(g, "idem_forget");
    fake_shop_idem *r = shop_idem_find(g, user, scope, key);
    if (r && r->rec.created_at <= before) *r = g->t.idem[--g->t.n_idem];
    return AS_OK;
}

static int shop_idem_takeover(void *h, as_mem *m, const char *user, const char *scope,
                              const char *key, const char *hash, int64_t now, int64_t lease_until,
                              as_idem *existing)
{
    (void)m;
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_IDEM_TAKEOVER);
    SHOP_IN_TX(g, "idem_takeover");
    fake_shop_idem *r = shop_idem_find(g, user, scope, key);
    if (!r) return AS_EDB;
    if (r->rec.state != AS_IDEM_IN_FLIGHT || r->rec.lease_until > now ||
        strcmp(r->rec.request_hash, hash) != 0) {
        *existing = r->rec;
        return AS_ECONFLICT;
    }
    r->rec.lease_until = lease_until;
    return AS_OK;
}

/* ---- Returns ---- */

static void shop_return_put(fake_shop *g, const as_return *r)
{
    as_return *c = &g->t.returns[g->t.n_returns++];
    *c = *r;
    c->id = shop_dup(g, r->id), c->order_id = shop_dup(g, r->order_id),
    c->user_id = shop_dup(g, r->user_id);
    c->reason_code = shop_dup(g, r->reason_code), c->note = shop_dup(g, r->note);
    c->refund_status = shop_dup(g, r->refund_status), c->carrier = shop_dup(g, r->carrier);
    c->tracking_code = shop_dup(g, r->tracking_code);
    c->replacement_sku = shop_dup(g, r->replacement_sku);
}

static int shop_return_insert(void *h, const as_return *r)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_RETURN_INSERT);
    SHOP_IN_TX(g, "return_insert");
    FAKE_ASSERT(r->id && r->order_id && r->user_id && r->reason_code && r->refund_status &&
                    r->carrier && r->tracking_code,
                "return_insert: a NOT NULL column is NULL");
    FAKE_ASSERT(r->refund_cents >= 0, "return_insert: refund %lld", (long long)r->refund_cents);
    for (size_t i = 0; i < g->t.n_returns; i++)
        if (strcmp(g->t.returns[i].order_id, r->order_id) == 0) return AS_ECONFLICT;
    if (g->t.n_returns == FAKE_SHOP_MAX) return AS_EDB;
    shop_return_put(g, r);
    return AS_OK;
}

static int shop_return_find(fake_shop *g, const char *id, const char *order_id, as_return *out)
{
    for (size_t i = 0; i < g->t.n_returns; i++)
        if (strcmp(id ? g->t.returns[i].id : g->t.returns[i].order_id, id ? id : order_id) == 0) {
            *out = g->t.returns[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int shop_return_get(void *h, as_mem *m, const char *id, as_return *out)
{
    (void)m;
    FAKE_ENTER(h, FAKE_OP_RETURN_GET);
    return shop_return_find(h, id, NULL, out);
}

static int shop_return_by_order(void *h, as_mem *m, const char *order_id, as_return *out)
{
    (void)m;
    FAKE_ENTER(h, FAKE_OP_RETURN_BY_ORDER);
    return shop_return_find(h, NULL, order_id, out);
}

/* ---- Questions: counted, as the catalogue's stay as they are ---- */

static int shop_question_insert(void *h, int64_t product_id, const char *id, const char *user_id,
                                const char *question, const char *answer, const char *asked_at,
                                const char *since, int64_t per_day)
{
    (void)product_id;
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_QUESTION_INSERT);
    FAKE_ASSERT(id && user_id && question && answer && asked_at, "question_insert: NULL column");
    FAKE_ASSERT(since && strcmp(since, asked_at) <= 0 && per_day > 0,
                "question_insert: the day's limit starts after the question");
    json_t *v = json_loads(answer, 0, NULL);
    FAKE_ASSERT(json_is_object(v), "question_insert: the answer is not a JSON object");
    json_decref(v);
    g->t.n_questions++;
    return AS_OK;
}

/* ---- Passkeys, enrolments and challenges ---- */

static as_passkey *shop_passkey_find(fake_shop *g, const char *id)
{
    for (size_t i = 0; i < g->t.n_passkeys; i++)
        if (strcmp(g->t.passkeys[i].id, id) == 0) return &g->t.passkeys[i];
    return NULL;
}

static int shop_passkey_insert(void *h, const as_passkey *k)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_PASSKEY_INSERT);
    SHOP_IN_TX(g, "passkey_insert");
    FAKE_ASSERT(k->id && k->user_id && k->public_key && k->alg, "passkey_insert: NULL column");
    if (shop_passkey_find(g, k->id)) return AS_ECONFLICT;
    if (g->t.n_passkeys == FAKE_SHOP_KEEP) return AS_EDB;
    as_passkey *c = &g->t.passkeys[g->t.n_passkeys++];
    *c = *k;
    c->id = shop_dup(g, k->id), c->user_id = shop_dup(g, k->user_id);
    c->public_key = shop_dup(g, k->public_key);
    return AS_OK;
}

static int shop_passkeys_of(void *h, as_mem *m, const char *user_id, as_passkey **out, size_t *n)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_PASSKEYS_OF);
    *out = as_alloc(m, (g->t.n_passkeys + 1) * sizeof(as_passkey));
    *n = 0;
    for (size_t i = 0; i < g->t.n_passkeys; i++)
        if (strcmp(g->t.passkeys[i].user_id, user_id) == 0) (*out)[(*n)++] = g->t.passkeys[i];
    return AS_OK;
}

static int shop_passkey_get(void *h, as_mem *m, const char *id, as_passkey *out)
{
    (void)m;
    FAKE_ENTER(h, FAKE_OP_PASSKEY_GET);
    as_passkey *k = shop_passkey_find(h, id);
    if (!k) return AS_ENOTFOUND;
    *out = *k;
    return AS_OK;
}

static int shop_passkey_count(void *h, const char *id, int64_t from, int64_t to)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_PASSKEY_COUNT);
    SHOP_IN_TX(g, "passkey_count");
    FAKE_ASSERT(to > from || (to == 0 && from == 0), "passkey_count: the counter went back");
    as_passkey *k = shop_passkey_find(g, id);
    if (!k || k->sign_count != from) return AS_ECONFLICT;
    k->sign_count = to;
    return AS_OK;
}

static as_enrolment *shop_enrolment_find(fake_shop *g, const char *id)
{
    for (size_t i = 0; i < g->t.n_enrolments; i++)
        if (strcmp(g->t.enrolments[i].id, id) == 0) return &g->t.enrolments[i];
    return NULL;
}

static int shop_enrolment_insert(void *h, const as_enrolment *e)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_ENROLMENT_INSERT);
    FAKE_ASSERT(e->id && e->user_id && e->token_hash, "enrolment_insert: NULL column");
    if (g->t.n_enrolments == FAKE_SHOP_KEEP) return AS_EDB;
    as_enrolment *c = &g->t.enrolments[g->t.n_enrolments++];
    *c = *e;
    c->id = shop_dup(g, e->id), c->user_id = shop_dup(g, e->user_id);
    c->token_hash = shop_dup(g, e->token_hash);
    return AS_OK;
}

static int shop_enrolment_get(void *h, as_mem *m, const char *id, as_enrolment *out)
{
    (void)m;
    FAKE_ENTER(h, FAKE_OP_ENROLMENT_GET);
    as_enrolment *e = shop_enrolment_find(h, id);
    if (!e) return AS_ENOTFOUND;
    *out = *e;
    return AS_OK;
}

static int shop_enrolment_use(void *h, const char *id, int64_t now)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_ENROLMENT_USE);
    SHOP_IN_TX(g, "enrolment_use");
    as_enrolment *e = shop_enrolment_find(g, id);
    if (!e || e->used_at) return AS_ECONFLICT;
    e->used_at = now;
    return AS_OK;
}

static int shop_challenge_insert(void *h, const char *challenge, const char *purpose,
                                 const char *subject_id, int64_t expires_at)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_CHALLENGE_INSERT);
    FAKE_ASSERT(challenge && strlen(challenge) == 43, "challenge_insert: not 32 random bytes");
    FAKE_ASSERT(purpose && (!strcmp(purpose, "enrol") || !strcmp(purpose, "approve")),
                "challenge purpose");
    FAKE_ASSERT(subject_id && expires_at > 0, "challenge_insert: no subject or expiry");
    for (size_t i = 0; i < g->t.n_challenges; i++) {
        const fake_shop_challenge *c = &g->t.challenges[i];
        if (c->subject && !strcmp(c->subject, subject_id) && !strcmp(c->purpose, purpose) &&
            c->expires_at == expires_at)
            return AS_ECONFLICT; /* the unique index (subject_id, purpose, expires_at) */
    }
    if (g->t.n_challenges == FAKE_SHOP_KEEP) return AS_EDB;
    g->t.challenges[g->t.n_challenges++] = (fake_shop_challenge){
        shop_dup(g, challenge), shop_dup(g, purpose), shop_dup(g, subject_id), false, expires_at};
    return AS_OK;
}

static int shop_challenge_live(void *h, as_mem *m, const char *purpose, const char *subject_id,
                               int64_t now, as_challenge *out)
{
    (void)m;
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_CHALLENGE_LIVE);
    const fake_shop_challenge *best = NULL;
    for (size_t i = 0; i < g->t.n_challenges; i++) {
        const fake_shop_challenge *c = &g->t.challenges[i];
        if (c->subject && !c->used && !strcmp(c->subject, subject_id) &&
            !strcmp(c->purpose, purpose) && c->expires_at > now &&
            (!best || c->expires_at > best->expires_at))
            best = c;
    }
    if (!best) return AS_ENOTFOUND;
    *out = (as_challenge){best->challenge, best->expires_at};
    return AS_OK;
}

static int shop_challenges_prune(void *h, int64_t now, int limit, int *n)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_CHALLENGES_PRUNE);
    size_t kept = 0;
    *n = 0;
    for (size_t i = 0; i < g->t.n_challenges; i++) {
        fake_shop_challenge *c = &g->t.challenges[i];
        if (c->expires_at && c->expires_at < now && *n < limit)
            ++*n;
        else
            g->t.challenges[kept++] = *c;
    }
    g->t.n_challenges = kept;
    return AS_OK;
}

static int shop_challenge_use(void *h, const char *challenge, const char *purpose,
                              const char *subject_id, int64_t now)
{
    fake_shop *g = h;
    FAKE_ENTER(g, FAKE_OP_CHALLENGE_USE);
    SHOP_IN_TX(g, "challenge_use");
    for (size_t i = 0; i < g->t.n_challenges; i++) {
        fake_shop_challenge *c = &g->t.challenges[i];
        if (!c->used && strcmp(c->challenge, challenge) == 0 &&
            (!c->expires_at || c->expires_at > now) &&
            (!c->purpose || strcmp(c->purpose, purpose) == 0) &&
            (!c->subject || strcmp(c->subject, subject_id) == 0)) {
            c->used = true;
            return AS_OK;
        }
    }
    return AS_ECONFLICT;
}

/* ---- The store ---- */

static const as_store_buy_ops shop_buy = {
    .begin = shop_begin,
    .commit = shop_commit,
    .rollback = shop_rollback,
    .key_by_hash = shop_key_by_hash,
    .mandate_current = shop_mandate_current,
    .mandate_get = shop_mandate_get,
    .mandate_spent = shop_mandate_spent,
    .quote_insert = shop_quote_insert,
    .quote_get = shop_quote_get,
    .order_insert = shop_order_insert,
    .order_get = shop_order_get,
    .order_move = shop_order_move,
    .event_add = shop_event_add,
    .orders_expired = shop_orders_expired,
    .stock_take = shop_stock_take,
    .stock_give = shop_stock_give,
    .offer_withdrawn = shop_offer_withdrawn,
    .confirmation_insert = shop_conf_insert,
    .confirmation_get = shop_conf_get,
    .confirmation_decide = shop_conf_decide,
    .idem_claim = shop_idem_claim,
    .idem_forget = shop_idem_forget,
    .idem_takeover = shop_idem_takeover,
    .idem_finish = shop_idem_finish,
    .return_insert = shop_return_insert,
    .return_get = shop_return_get,
    .return_by_order = shop_return_by_order,
    .question_insert = shop_question_insert,
    .passkey_insert = shop_passkey_insert,
    .passkeys_of = shop_passkeys_of,
    .passkey_get = shop_passkey_get,
    .passkey_count = shop_passkey_count,
    .enrolment_insert = shop_enrolment_insert,
    .enrolment_get = shop_enrolment_get,
    .enrolment_use = shop_enrolment_use,
    .challenge_insert = shop_challenge_insert,
    .challenge_live = shop_challenge_live,
    .challenge_use = shop_challenge_use,
    .challenges_prune = shop_challenges_prune,
};

/* The catalogue's reads and the search index's sources are the catalogue's
 * own, on its live stock: the shop's handle starts with its fake_db. */
static const as_store_ops shop_ops = {
    .catalog = &fake_catalog, .feed = &fake_feed, .buy = &shop_buy};

as_store fake_shop_store(fake_shop *g)
{
    return (as_store){&shop_ops, g};
}

/* The shop over a catalogue set in g->db: its arena, live stock, and the
 * units of stock to keep. */
static void shop_open(fake_shop *g)
{
    g->arena = as_arena_create();
    g->mem = as_arena_mem(g->arena);
    FAKE_ASSERT(fake_live_init(&g->db, &g->t.live), "the catalogue is larger than a fake_live");
}

void fake_shop_init(fake_shop *g)
{
    memset(g, 0, sizeof(*g));
    fake_db_default(&g->db);
    shop_open(g);
    g->keys = golden_keys;
    g->n_keys = N_ROWS(golden_keys);
    g->mandates = golden_mandates;
    g->n_mandates = N_ROWS(golden_mandates);
    fake_shop_units(g, g->units);
}

void fake_shop_free(fake_shop *g)
{
    as_arena_destroy(g->arena);
    g->arena = NULL;
}

/* ---- The trading shop's rows, around FAKE_SHOP_NOW ---- */

#define NOW FAKE_SHOP_NOW
#define H 3600LL
#define D 86400LL

static const as_mandate trading_mandates[] = {
    {"md_1", "u1", AS_MS_ACTIVE, "hand-soap,vacuum-parts,coffee-kitchen", 50000, 100000, 10000,
     "2026-12-31", "2026-01-01T00:00:00Z"},
    {"md_open", "u1", AS_MS_ACTIVE, "hand-soap,batteries", 20000, 30000, 0, NULL,
     "2026-01-01T00:00:00Z"},
    {"md_exp", "u1", AS_MS_ACTIVE, "hand-soap", 50000, 100000, 10000, "2026-01-31",
     "2025-01-01T00:00:00Z"},
    {"md_rev", "u1", AS_MS_REVOKED, "hand-soap", 50000, 100000, 10000, NULL,
     "2025-01-01T00:00:00Z"},
    {"md_u2", "u2", AS_MS_ACTIVE, "hand-soap", 50000, 100000, 10000, NULL, "2025-01-01T00:00:00Z"},
    {"md_u3", "u3", AS_MS_ACTIVE, "hand-soap", 50000, 100000, 10000, "2025-12-31",
     "2025-01-01T00:00:00Z"},
    {"md_u4", "u4", AS_MS_REVOKED, "hand-soap", 50000, 100000, 10000, NULL, "2025-01-01T00:00:00Z"},
};

#define QUOTE(id_, user, offer, pid, qty, unit, days, by, dev, fit, guar, created, expires, sku,   \
              name, cat, mid, mname, ord)                                                          \
    {                                                                                              \
        id_, user, offer, pid, qty, unit, (unit) * (qty), days, by, dev, fit, guar, created,       \
            expires, sku, name, cat, mid, mname, ord                                               \
    }

static const as_quote trading_quotes[] = {
    QUOTE("q_ok", "u1", "of-soap-a", 1, 2, 450, 1, "2026-03-03", NULL, AS_FIT_UNKNOWN, false,
          NOW - 60, NOW + 540, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "m-alpha",
          "Alpha Parts", NULL),
    QUOTE("q_big", "u1", "of-filt-a", 2, 5, 2999, 2, "2026-03-04", "dyson-v11", AS_FIT_FITS, true,
          NOW - 60, NOW + 540, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts", "m-alpha",
          "Alpha Parts", NULL),
    QUOTE("q_huge", "u1", "of-filt-a", 2, 10, 9999, 2, "2026-03-04", NULL, AS_FIT_UNKNOWN, false,
          NOW - 60, NOW + 540, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts", "m-alpha",
          "Alpha Parts", NULL),
    QUOTE("q_used", "u1", "of-soap-a", 1, 1, 450, 1, "2026-03-03", NULL, AS_FIT_UNKNOWN, false,
          NOW - 60, NOW + 540, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "m-alpha",
          "Alpha Parts", "ord_placed"),
    QUOTE("q_expired", "u1", "of-soap-a", 1, 1, 450, 1, "2026-03-03", NULL, AS_FIT_UNKNOWN, false,
          NOW - 900, NOW - 300, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "m-alpha",
          "Alpha Parts", NULL),
    QUOTE("q_u2", "u2", "of-soap-a", 1, 1, 450, 1, "2026-03-03", NULL, AS_FIT_UNKNOWN, false,
          NOW - 60, NOW + 540, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "m-alpha",
          "Alpha Parts", NULL),
    QUOTE("q_batt", "u1", "of-batt-a", 4, 3, 15999, 1, "2026-03-03", NULL, AS_FIT_UNKNOWN, false,
          NOW - 60, NOW + 540, "BATT-004", "Replacement battery", "batteries", "m-alpha",
          "Alpha Parts", NULL),
    QUOTE("q_nostock", "u1", "of-jug-b", 3, 1, 1299, 2, "2026-03-04", NULL, AS_FIT_UNKNOWN, false,
          NOW - 60, NOW + 540, "JUG-003", "Maxtra filter cartridge", "coffee-kitchen", "m-beta",
          "Beta Supplies", NULL),
};

typedef struct trading_order {
    as_order o;
    as_event events[4];
    size_t n_events;
} trading_order;

/* The countries are the rows' own, not always their merchant's. */
#define ORDER(id_, user, mid, qid, offer, qty, unit, budget, status, cexp, created, sku, name,     \
              cat, ptype, mname, country, by, dev, fit, guar)                                      \
    {                                                                                              \
        id_, user, mid, qid, offer, qty, unit, (unit) * (qty), budget, "2026-03",                  \
            "Restocking the bathroom soap as agreed", "shopbot/1.0", status, cexp, created,        \
            created, sku, name, cat, ptype, mname, country, by, dev, fit, guar, NULL, "key_1",     \
            NULL, NULL, 0                                                                          \
    }

static const trading_order trading_orders[] = {
    {ORDER("ord_placed", "u1", "md_1", "q_used", "of-soap-a", 1, 450, 450, AS_OS_PLACED, 0,
           NOW - 60, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "hand-soap",
           "Alpha Parts", "NL", "2026-03-03", NULL, AS_FIT_UNKNOWN, false),
     {{AS_OS_PLACED, "Placed by shopbot/1.0 within mandate md_1.", NOW - 60}},
     1},
    {ORDER("ord_due", "u1", "md_1", "q_p2", "of-soap-b", 2, 420, 840, AS_OS_PLACED, 0, NOW - 3 * D,
           "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "hand-soap", "Beta Supplies", "DE",
           "2026-03-01", NULL, AS_FIT_UNKNOWN, false),
     {{AS_OS_PLACED, NULL, NOW - 3 * D}},
     1},
    {ORDER("ord_shipped", "u1", "md_1", "q_p3", "of-filt-a", 1, 2999, 2999, AS_OS_SHIPPED, 0,
           NOW - 6 * H, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts", "filter",
           "Alpha Parts", "NL", "2026-03-04", "dyson-v11", AS_FIT_FITS, true),
     {{AS_OS_PLACED, "placed", NOW - 6 * H}, {AS_OS_SHIPPED, "Shipped.", NOW - 5 * H}},
     2},
    {ORDER("ord_delivered", "u1", "md_1", "q_p4", "of-filt-a", 1, 2999, 2999, AS_OS_DELIVERED, 0,
           NOW - 5 * D, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts", "filter",
           "Alpha Parts", "BE", "2026-02-28", "dyson-v11", AS_FIT_FITS, true),
     {{AS_OS_PLACED, "placed", NOW - 5 * D},
      {AS_OS_SHIPPED, "Shipped.", NOW - 4 * D},
      {AS_OS_DELIVERED, "Delivered.", NOW - 3 * D}},
     3},
    {ORDER("ord_old", "u1", "md_1", "q_p5", "of-soap-a", 1, 450, 450, AS_OS_DELIVERED, 0,
           NOW - 60 * D, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "hand-soap",
           "Alpha Parts", "NL", "2026-01-02", NULL, AS_FIT_UNKNOWN, false),
     {{AS_OS_PLACED, "placed", NOW - 60 * D},
      {AS_OS_SHIPPED, "Shipped.", NOW - 59 * D},
      {AS_OS_DELIVERED, "Delivered.", NOW - 58 * D}},
     3},
    {ORDER("ord_await", "u1", "md_1", "q_p6", "of-filt-a", 5, 2999, 14995, AS_OS_AWAITING, NOW + H,
           NOW - 60, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts", "filter",
           "Alpha Parts", "NL", "2026-03-04", "dyson-v11", AS_FIT_FITS, true),
     {{AS_OS_AWAITING, "Above the threshold.", NOW - 60}},
     1},
    {ORDER("ord_await_exp", "u1", "md_1", "q_p7", "of-soap-a", 3, 4500, 13500, AS_OS_AWAITING,
           NOW - 10, NOW - D, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "hand-soap",
           "Alpha Parts", "NL", "2026-03-02", NULL, AS_FIT_UNKNOWN, false),
     {{AS_OS_AWAITING, "Above the threshold.", NOW - D}},
     1},
    {ORDER("ord_cancelled", "u1", "md_1", "q_p8", "of-soap-a", 1, 450, 0, AS_OS_CANCELLED, 0,
           NOW - 2 * D, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "hand-soap",
           "Alpha Parts", "NL", "2026-03-01", NULL, AS_FIT_UNKNOWN, false),
     {{AS_OS_PLACED, NULL, NOW - 2 * D}, {AS_OS_CANCELLED, "Cancelled.", NOW - 2 * D + 5}},
     2},
    {ORDER("ord_returned", "u1", "md_1", "q_p9", "of-filt-a", 1, 2999, 0, AS_OS_RETURNED, 0,
           NOW - 10 * D, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts", "filter",
           "Alpha Parts", "DE", "2026-02-21", "dyson-v11", AS_FIT_FITS, true),
     {{AS_OS_PLACED, NULL, NOW - 10 * D},
      {AS_OS_SHIPPED, NULL, NOW - 9 * D},
      {AS_OS_DELIVERED, NULL, NOW - 8 * D},
      {AS_OS_RETURNED, "Returned.", NOW - 7 * D}},
     4},
    {ORDER("ord_u2", "u2", "md_u2", "q_p10", "of-soap-a", 1, 450, 450, AS_OS_SHIPPED, 0,
           NOW - 2 * D, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "hand-soap",
           "Alpha Parts", "NL", "2026-03-05", NULL, AS_FIT_UNKNOWN, false),
     {{AS_OS_PLACED, NULL, NOW - 2 * D}, {AS_OS_SHIPPED, NULL, NOW - D}},
     2},
};

/* conf_lost and ret_lost belong to an order that does not exist */
static const as_confirmation trading_confs[] = {
    {"conf_ok", "ord_await", "u1", AS_CS_PENDING, NOW - 60, NOW + H, 0},
    {"conf_exp", "ord_await_exp", "u1", AS_CS_PENDING, NOW - D, NOW - 10, 0},
    {"conf_done", "ord_placed", "u1", AS_CS_APPROVED, NOW - D, NOW + D, NOW - 100},
    {"conf_lost", "ord_missing", "u1", AS_CS_PENDING, NOW - 60, NOW + H, 0},
};

static const as_return trading_returns[] = {
    {"ret_1", "ord_returned", "u1", "does_not_fit", "too small <b>", "refunded", 2999, "DHL",
     "RT0123ABCD99", "FILT-005", NOW - 7 * D},
    {"ret_lost", "ord_missing", "u1", "defective", NULL, "pending_inspection", 0, "PostNL",
     "RT000000000", NULL, NOW - 7 * D},
};

/* Records the first claim of their key takes: a finished one for the same
 * body, a finished one whose response is not JSON, one in flight (a lease of
 * 12 s), a finished one for another body. */
static const fake_shop_idem trading_idem[] = {
    {NULL,
     NULL,
     "k-replay",
     {NULL, AS_IDEM_DONE, "{\"id\":\"ord_first\",\"status\":\"placed\"}", 201, NOW - 5, NOW + 12}},
    {NULL, NULL, "k-badjson", {NULL, AS_IDEM_DONE, "{truncated", 201, NOW - 5, NOW + 12}},
    {NULL, NULL, "k-busy", {NULL, AS_IDEM_IN_FLIGHT, NULL, 0, NOW - 5, NOW + 12}},
    {NULL,
     NULL,
     "k-other",
     {"0000000000000000000000000000000000000000000000000000000000000000", AS_IDEM_DONE, "{}", 201,
      NOW - 5, NOW + 12}},
};

#define TRADING_PK_KEY                                                                             \
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEKiODUcmn7OtxqkpgEDxIAd6mMyXi49tctUvXj3TeSo_5-pZ4BEl"      \
    "RTv7da2-4NmVY8LXavSiU8XpvmvDQ_6F8fw"

void fake_shop_init_trading(fake_shop *g)
{
    memset(g, 0, sizeof(*g));
    fake_db_wide(&g->db);
    shop_open(g);
    g->key_user = "u1";
    g->mandates = trading_mandates;
    g->n_mandates = N_ROWS(trading_mandates);
    /* the rows as they are: their strings are static (no copies for each
     * input of a fuzzer) */
    for (size_t i = 0; i < N_ROWS(trading_quotes); i++)
        g->t.quotes[g->t.n_quotes++] = trading_quotes[i];
    for (size_t i = 0; i < N_ROWS(trading_orders); i++) {
        fake_shop_order *r = &g->t.orders[g->t.n_orders++];
        r->o = trading_orders[i].o;
        memcpy(r->events, trading_orders[i].events, sizeof(trading_orders[i].events));
        r->o.n_events = trading_orders[i].n_events;
    }
    for (size_t i = 0; i < N_ROWS(trading_confs); i++)
        g->t.confs[g->t.n_confs++] = trading_confs[i];
    for (size_t i = 0; i < N_ROWS(trading_returns); i++)
        g->t.returns[g->t.n_returns++] = trading_returns[i];
    memcpy(g->t.idem, trading_idem, sizeof(trading_idem));
    g->t.n_idem = N_ROWS(trading_idem);
    g->t.passkeys[g->t.n_passkeys++] =
        (as_passkey){FAKE_SHOP_PASSKEY, "u1", AS_COSE_ES256, TRADING_PK_KEY, 0, 0};
    g->t.enrolments[g->t.n_enrolments++] =
        (as_enrolment){FAKE_SHOP_ENROLMENT,
                       "u1",
                       as_sha256_hex(&g->mem, FAKE_SHOP_ENROL_TOKEN, strlen(FAKE_SHOP_ENROL_TOKEN)),
                       NOW - H,
                       NOW + D,
                       0};
    g->t.challenges[g->t.n_challenges++] =
        (fake_shop_challenge){FAKE_SHOP_CHALLENGE, NULL, NULL, false, 0};
    fake_shop_units(g, g->units);
}
