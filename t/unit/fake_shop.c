/* The fake store's buying tables (fake_shop.h): keys, mandates, quotes,
 * orders, confirmations, Idempotency-Key records and returns, kept in memory
 * over fake_store.c's catalogue, with transactions that roll back. */
#include "fake_shop.h"

#include "unit_check.h"

#include "as_crypto.h"
#include "as_util.h"

/* Two agent keys: u1's mandate allows hand soap and vacuum parts, u2's hand
 * soap only (the category case). */
static const struct {
    const char *key, *id, *user;
} shop_keys[] = {
    {"agentshop_sk_test_GoldenUserOne0000000000000000001", "key_u1", "u1"},
    {"agentshop_sk_test_GoldenUserTwo0000000000000000002", "key_u2", "u2"},
};

static const as_mandate shop_mandates[] = {
    {"md_u1", "u1", "active", "hand-soap,vacuum-parts", 10000, 12000, 5000, "2026-12-31",
     "2026-01-01T00:00:00Z"},
    {"md_u2", "u2", "active", "hand-soap", 10000, 12000, 5000, NULL, "2026-01-01T00:00:00Z"},
};

static const char *shop_dup(fake_shop *g, const char *s)
{
    return s ? as_strdup(&g->mem, s) : NULL;
}

static int64_t *shop_stock_of(fake_shop *g, const char *offer_id)
{
    for (size_t i = 0; i < g->t.n_stock; i++)
        if (strcmp(g->t.stock[i].offer_id, offer_id) == 0) return &g->t.stock[i].stock;
    return NULL;
}

static int shop_stock_row(void *baton, const as_index_offer *o)
{
    fake_shop *g = baton;
    if (g->t.n_stock == FAKE_SHOP_MAX) return 1;
    g->t.stock[g->t.n_stock].offer_id = shop_dup(g, o->id);
    g->t.stock[g->t.n_stock++].stock = o->stock;
    return 0;
}

/* The catalogue's product with the stock as orders left it. */
static int shop_product_by_sku(void *h, as_mem *m, const char *sku, int64_t device_id,
                               as_product *out)
{
    fake_shop *g = h;
    int rc = as_store_product_by_sku(&g->catalogue, m, sku, device_id, out);
    for (size_t k = 0; rc == AS_OK && k < out->n_offers; k++) {
        int64_t *stock = shop_stock_of(g, out->offers[k].id);
        if (stock) out->offers[k].stock = *stock;
    }
    return rc;
}

static int shop_begin(void *h)
{
    fake_shop *g = h;
    assert_false(g->in_tx); /* core never nests transactions */
    g->saved = g->t;
    g->in_tx = true;
    return AS_OK;
}

static int shop_commit(void *h)
{
    fake_shop *g = h;
    assert_true(g->in_tx);
    g->in_tx = false;
    return AS_OK;
}

static int shop_rollback(void *h)
{
    fake_shop *g = h;
    if (g->in_tx) g->t = g->saved;
    g->in_tx = false;
    return AS_OK;
}

static int shop_key_by_hash(void *h, as_mem *m, const char *hash, as_key_row *out)
{
    (void)h;
    for (size_t i = 0; i < N_ROWS(shop_keys); i++) {
        const char *mine = as_sha256_hex(m, shop_keys[i].key, strlen(shop_keys[i].key));
        if (strcmp(mine, hash) == 0) {
            *out = (as_key_row){shop_keys[i].id, shop_keys[i].user, mine, NULL};
            return AS_OK;
        }
    }
    return AS_ENOTFOUND;
}

static int shop_mandate_current(void *h, as_mem *m, const char *user_id, bool lock, as_mandate *out)
{
    (void)h;
    (void)m;
    (void)lock;
    for (size_t i = 0; i < N_ROWS(shop_mandates); i++)
        if (strcmp(shop_mandates[i].user_id, user_id) == 0) {
            *out = shop_mandates[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int shop_mandate_get(void *h, as_mem *m, const char *id, bool lock, as_mandate *out)
{
    (void)h;
    (void)m;
    (void)lock;
    for (size_t i = 0; i < N_ROWS(shop_mandates); i++)
        if (strcmp(shop_mandates[i].id, id) == 0) {
            *out = shop_mandates[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int shop_mandate_spent(void *h, const char *mandate_id, const char *month, int64_t *cents)
{
    fake_shop *g = h;
    *cents = 0;
    for (size_t i = 0; i < g->t.n_orders; i++) {
        const as_order *o = &g->t.orders[i].o;
        if (strcmp(o->mandate_id, mandate_id) == 0 && strcmp(o->month, month) == 0)
            *cents += o->budget_cents;
    }
    return AS_OK;
}

static int shop_quote_insert(void *h, const as_quote *q)
{
    fake_shop *g = h;
    if (g->t.n_quotes == FAKE_SHOP_MAX) return AS_EDB;
    as_quote *c = &g->t.quotes[g->t.n_quotes++];
    *c = *q;
    c->id = shop_dup(g, q->id), c->user_id = shop_dup(g, q->user_id),
    c->offer_id = shop_dup(g, q->offer_id);
    c->delivery_by = shop_dup(g, q->delivery_by), c->device_slug = shop_dup(g, q->device_slug);
    c->fit_status = shop_dup(g, q->fit_status), c->sku = shop_dup(g, q->sku);
    c->product_name = shop_dup(g, q->product_name), c->category = shop_dup(g, q->category);
    c->merchant_id = shop_dup(g, q->merchant_id), c->merchant_name = shop_dup(g, q->merchant_name);
    c->order_id = NULL;
    return AS_OK;
}

static int shop_quote_get(void *h, as_mem *m, const char *id, as_quote *out)
{
    (void)m;
    fake_shop *g = h;
    for (size_t i = 0; i < g->t.n_quotes; i++)
        if (strcmp(g->t.quotes[i].id, id) == 0) {
            *out = g->t.quotes[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

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
    as_product p;
    if (as_store_product_by_sku(&g->catalogue, &g->mem, o->sku, 0, &p) != AS_OK) return;
    o->part_type = p.part_type;
    for (size_t k = 0; k < p.n_offers; k++)
        if (strcmp(p.offers[k].id, o->offer_id) == 0)
            o->merchant_country = p.offers[k].merchant.country;
}

static int shop_order_insert(void *h, const as_order *o)
{
    fake_shop *g = h;
    assert_true(g->in_tx);
    as_quote *q = NULL;
    for (size_t i = 0; i < g->t.n_quotes; i++)
        if (strcmp(g->t.quotes[i].id, o->quote_id) == 0) q = &g->t.quotes[i];
    if (q && q->order_id) return AS_ECONFLICT;
    if (g->t.n_orders == FAKE_SHOP_MAX) return AS_EDB;
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
    c->fit_status = shop_dup(g, o->fit_status), c->key_id = shop_dup(g, o->key_id);
    c->confirmation_id = NULL, c->key_revoked_at = NULL;
    c->events = NULL, c->n_events = 0;
    shop_order_join(g, c);
    if (q) q->order_id = c->id;
    return AS_OK;
}

static int shop_order_get(void *h, as_mem *m, const char *id, as_order *out)
{
    fake_shop *g = h;
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
    assert_true(g->in_tx);
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
    assert_true(g->in_tx);
    fake_shop_order *r = shop_order_find(g, order_id);
    if (!r || r->o.n_events == FAKE_SHOP_EVENTS) return AS_EDB;
    r->events[r->o.n_events++] = (as_event){status, shop_dup(g, note), at};
    return AS_OK;
}

static int shop_orders_expired(void *h, as_mem *m, const char *mandate_id, int64_t now,
                               as_order **out, size_t *n)
{
    fake_shop *g = h;
    *out = as_alloc(m, (g->t.n_orders + 1) * sizeof(as_order));
    *n = 0;
    for (size_t i = 0; i < g->t.n_orders; i++) {
        const as_order *o = &g->t.orders[i].o;
        if ((!mandate_id || strcmp(o->mandate_id, mandate_id) == 0) &&
            o->status == AS_OS_AWAITING && o->confirm_expires_at <= now)
            shop_order_get(h, m, o->id, &(*out)[(*n)++]);
    }
    return AS_OK;
}

static int shop_stock_take(void *h, const char *offer_id, int64_t qty)
{
    fake_shop *g = h;
    assert_true(g->in_tx);
    int64_t *stock = shop_stock_of(g, offer_id);
    if (!stock || *stock < qty) return AS_ECONFLICT;
    *stock -= qty;
    return AS_OK;
}

static int shop_stock_give(void *h, const char *offer_id, int64_t qty)
{
    fake_shop *g = h;
    assert_true(g->in_tx);
    int64_t *stock = shop_stock_of(g, offer_id);
    if (!stock) return AS_EDB;
    *stock += qty;
    return AS_OK;
}

static int shop_conf_insert(void *h, const as_confirmation *c)
{
    fake_shop *g = h;
    assert_true(g->in_tx);
    if (g->t.n_confs == FAKE_SHOP_MAX) return AS_EDB;
    as_confirmation *r = &g->t.confs[g->t.n_confs++];
    *r = *c;
    r->id = shop_dup(g, c->id), r->order_id = shop_dup(g, c->order_id);
    r->user_id = shop_dup(g, c->user_id), r->status = shop_dup(g, c->status);
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
    as_confirmation *c = shop_conf_find(h, id);
    if (!c) return AS_ENOTFOUND;
    *out = *c;
    return AS_OK;
}

static int shop_conf_decide(void *h, const char *id, const char *to, int64_t at)
{
    fake_shop *g = h;
    assert_true(g->in_tx);
    as_confirmation *c = shop_conf_find(g, id);
    if (!c) return AS_ECONFLICT;
    c->status = shop_dup(g, to);
    c->decided_at = at;
    return AS_OK;
}

static fake_shop_idem *shop_idem_find(fake_shop *g, const char *user, const char *scope,
                                      const char *key)
{
    for (size_t i = 0; i < g->t.n_idem; i++) {
        fake_shop_idem *r = &g->t.idem[i];
        if (!strcmp(r->user, user) && !strcmp(r->scope, scope) && !strcmp(r->key, key)) return r;
    }
    return NULL;
}

/* As the SQL store: a record found answers (AS_ECONFLICT), unless it is a
 * claim in flight whose lease ran out, which is taken over. */
static int shop_idem_claim(void *h, as_mem *m, const char *user, const char *scope, const char *key,
                           const char *hash, int64_t now, int64_t lease_until, as_idem *existing)
{
    (void)m;
    fake_shop *g = h;
    assert_true(g->in_tx);
    fake_shop_idem *r = shop_idem_find(g, user, scope, key);
    if (r && !(strcmp(r->rec.state, "in_flight") == 0 && r->rec.lease_until < now)) {
        *existing = r->rec;
        return AS_ECONFLICT;
    }
    if (!r) {
        if (g->t.n_idem == FAKE_SHOP_MAX) return AS_EDB;
        r = &g->t.idem[g->t.n_idem++];
        *r = (fake_shop_idem){shop_dup(g, user), shop_dup(g, scope), shop_dup(g, key), {0}};
    }
    r->rec = (as_idem){shop_dup(g, hash), "in_flight", NULL, 0, now, lease_until};
    return AS_OK;
}

static int shop_idem_finish(void *h, const char *user, const char *scope, const char *key,
                            int status, const char *response)
{
    fake_shop *g = h;
    assert_true(g->in_tx);
    fake_shop_idem *r = shop_idem_find(g, user, scope, key);
    if (!r) return AS_EDB;
    r->rec.state = "done";
    r->rec.status = status;
    r->rec.response = shop_dup(g, response);
    return AS_OK;
}

static int shop_return_insert(void *h, const as_return *r)
{
    fake_shop *g = h;
    assert_true(g->in_tx);
    for (size_t i = 0; i < g->t.n_returns; i++)
        if (strcmp(g->t.returns[i].order_id, r->order_id) == 0) return AS_ECONFLICT;
    if (g->t.n_returns == FAKE_SHOP_MAX) return AS_EDB;
    as_return *c = &g->t.returns[g->t.n_returns++];
    *c = *r;
    c->id = shop_dup(g, r->id), c->order_id = shop_dup(g, r->order_id),
    c->user_id = shop_dup(g, r->user_id);
    c->reason_code = shop_dup(g, r->reason_code), c->note = shop_dup(g, r->note);
    c->refund_status = shop_dup(g, r->refund_status), c->carrier = shop_dup(g, r->carrier);
    c->tracking_code = shop_dup(g, r->tracking_code);
    c->replacement_sku = shop_dup(g, r->replacement_sku);
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
    return shop_return_find(h, id, NULL, out);
}

static int shop_return_by_order(void *h, as_mem *m, const char *order_id, as_return *out)
{
    (void)m;
    return shop_return_find(h, NULL, order_id, out);
}

/* Nobody has a passkey: approving needs one unless the case turns on
 * approval by the link alone. */
static int shop_passkeys_of(void *h, as_mem *m, const char *user_id, as_passkey **out, size_t *n)
{
    (void)h;
    (void)m;
    (void)user_id;
    *out = NULL;
    *n = 0;
    return AS_OK;
}

static int shop_passkey_get(void *h, as_mem *m, const char *id, as_passkey *out)
{
    (void)h;
    (void)m;
    (void)id;
    (void)out;
    return AS_ENOTFOUND;
}

void fake_shop_init(fake_shop *g)
{
    memset(g, 0, sizeof(*g));
    fake_db_default(&g->db);
    g->catalogue = fake_store_make(&g->db);
    g->arena = as_arena_create();
    g->mem = as_arena_mem(g->arena);
    assert_int_equal(as_store_index_offers(&g->catalogue, shop_stock_row, g), AS_OK);
}

/* Idempotency-Key records past their keeping time are forgotten, and a claim
 * whose lease ran out is taken over, when core says so (core/as_idem.c). */
static int shop_idem_forget(void *h, const char *user, const char *scope, const char *key,
                            int64_t before)
{
    fake_shop *g = h;
    assert_true(g->in_tx);
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
    assert_true(g->in_tx);
    fake_shop_idem *r = shop_idem_find(g, user, scope, key);
    if (!r) return AS_EDB;
    if (strcmp(r->rec.state, "in_flight") != 0 || r->rec.lease_until > now ||
        strcmp(r->rec.request_hash, hash) != 0) {
        *existing = r->rec;
        return AS_ECONFLICT;
    }
    r->rec.lease_until = lease_until;
    return AS_OK;
}

/* What no case of the buying tests does yet (questions, passkeys and their
 * ceremonies): a call fails the test, so a case that needs one adds it here. */
static int shop_not_kept(const char *what)
{
    fail_msg("the fake shop keeps no %s (t/unit/fake_shop.c)", what);
    return AS_EDB;
}

static int shop_question_insert(void *h, int64_t product_id, const char *id, const char *user_id,
                                const char *question, const char *answer, const char *asked_at,
                                const char *since, int64_t per_day)
{
    (void)h, (void)product_id, (void)id, (void)user_id, (void)question, (void)answer;
    (void)asked_at, (void)since, (void)per_day;
    return shop_not_kept("questions");
}

static int shop_passkey_insert(void *h, const as_passkey *k)
{
    (void)h, (void)k;
    return shop_not_kept("passkeys");
}

static int shop_passkey_count(void *h, const char *id, int64_t from, int64_t to)
{
    (void)h, (void)id, (void)from, (void)to;
    return shop_not_kept("passkeys");
}

static int shop_enrolment_insert(void *h, const as_enrolment *e)
{
    (void)h, (void)e;
    return shop_not_kept("enrolments");
}

static int shop_enrolment_get(void *h, as_mem *m, const char *id, as_enrolment *out)
{
    (void)h, (void)m, (void)id, (void)out;
    return shop_not_kept("enrolments");
}

static int shop_enrolment_use(void *h, const char *id, int64_t now)
{
    (void)h, (void)id, (void)now;
    return shop_not_kept("enrolments");
}

static int shop_challenge_insert(void *h, const char *challenge, const char *purpose,
                                 const char *subject_id, int64_t expires_at)
{
    (void)h, (void)challenge, (void)purpose, (void)subject_id, (void)expires_at;
    return shop_not_kept("challenges");
}

static int shop_challenge_use(void *h, const char *challenge, const char *purpose,
                              const char *subject_id, int64_t now)
{
    (void)h, (void)challenge, (void)purpose, (void)subject_id, (void)now;
    return shop_not_kept("challenges");
}

/* The catalogue's reads, on the shop's catalogue (the shop's handle is not
 * the catalogue's), with the stock as orders left it. */
static int shop_device_by_slug(void *h, as_mem *m, const char *slug, as_device *out)
{
    return as_store_device_by_slug(&((fake_shop *)h)->catalogue, m, slug, out);
}

static int shop_search(void *h, as_mem *m, const as_search_filter *f, as_product **out, size_t *n)
{
    return as_store_search(&((fake_shop *)h)->catalogue, m, f, out, n);
}

static int shop_product_live(void *h, as_mem *m, const char *sku, int64_t product_id,
                             as_product_live *out)
{
    return as_store_product_live(&((fake_shop *)h)->catalogue, m, sku, product_id, out);
}

static int shop_offers_stock(void *h, as_mem *m, const int64_t *product_ids, size_t n,
                             as_offer_stock **out, size_t *nout)
{
    return as_store_offers_stock(&((fake_shop *)h)->catalogue, m, product_ids, n, out, nout);
}

static const as_store_catalog_ops shop_catalog = {
    .device_by_slug = shop_device_by_slug,
    .product_by_sku = shop_product_by_sku,
    .search = shop_search,
    .product_live = shop_product_live,
    .offers_stock = shop_offers_stock,
};

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
    .challenge_use = shop_challenge_use,
};

/* The search index's sources are the catalogue's own: the shop's handle
 * starts with its fake_db. */
static const as_store_ops shop_ops = {
    .catalog = &shop_catalog, .feed = &fake_feed, .buy = &shop_buy};

as_store fake_shop_store(fake_shop *g)
{
    return (as_store){&shop_ops, g};
}

void fake_shop_free(fake_shop *g)
{
    as_arena_destroy(g->arena);
    g->arena = NULL;
}
