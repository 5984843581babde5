/* Golden request files (t/unit/golden/README.md): each directory under
 * t/unit/golden is one case, a numbered sequence of requests run through
 * as_handle, each compared, as JSON, with the response it expects. The cases
 * share one fake store: fake_store.h's catalogue plus the buying tables below
 * (keys, mandates, quotes, orders, confirmations, Idempotency-Key records,
 * returns), kept in memory for the length of a case.
 *
 * GOLDEN_UPDATE=1 rewrites the expected files from the responses (captured
 * values turned back into their placeholders); for writing a case, never in CI. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>

#include "fake_store.h"

#include "as_crypto.h"
#include "as_util.h"

/* The clock every case starts at (noon of API_TODAY, 2026-01-15), the API's
 * base URL and the signing key of the confirmation and label links. */
#define G_START ((int64_t)API_TODAY * 86400 + 12 * 3600)
#define G_BASE "https://shop.example/v1"
#define G_MAX 32    /* rows per table in one case */
#define G_EVENTS 12 /* timeline entries per order */

static const unsigned char g_signing_key[] = "golden-signing-key-0123456789abcdef";

/* ------------------------------------------------------------------ */
/* The buying store                                                    */
/* ------------------------------------------------------------------ */

/* Two agent keys: u1's mandate allows hand soap and vacuum parts, u2's hand
 * soap only (the category case). */
static const struct {
    const char *key, *id, *user;
} g_keys[] = {
    {"agentshop_sk_test_GoldenUserOne0000000000000000001", "key_u1", "u1"},
    {"agentshop_sk_test_GoldenUserTwo0000000000000000002", "key_u2", "u2"},
};

static const as_mandate g_mandates[] = {
    {"md_u1", "u1", "active", "hand-soap,vacuum-parts", 10000, 12000, 5000, "2026-12-31",
     "2026-01-01T00:00:00Z"},
    {"md_u2", "u2", "active", "hand-soap", 10000, 12000, 5000, NULL, "2026-01-01T00:00:00Z"},
};

typedef struct g_order {
    as_order o;
    as_event events[G_EVENTS];
} g_order;

typedef struct g_idem {
    const char *user, *scope, *key;
    as_idem rec;
} g_idem;

/* What writes change: copied whole by begin, put back by rollback. Strings
 * live on the store's arena, which lasts the case. */
typedef struct g_tables {
    as_quote quotes[G_MAX];
    g_order orders[G_MAX];
    as_confirmation confs[G_MAX];
    g_idem idem[G_MAX];
    as_return returns[G_MAX];
    struct {
        const char *offer_id;
        int64_t stock;
    } stock[G_MAX];
    size_t n_quotes, n_orders, n_confs, n_idem, n_returns, n_stock;
} g_tables;

typedef struct g_store {
    fake_db db; /* first: the catalogue's functions take the store as their fake_db */
    as_store catalogue;
    as_arena *arena;
    as_mem mem;
    g_tables t, saved;
    bool in_tx;
} g_store;

static const char *g_dup(g_store *g, const char *s)
{
    return s ? as_strdup(&g->mem, s) : NULL;
}

static int64_t *g_stock_of(g_store *g, const char *offer_id)
{
    for (size_t i = 0; i < g->t.n_stock; i++)
        if (strcmp(g->t.stock[i].offer_id, offer_id) == 0) return &g->t.stock[i].stock;
    return NULL;
}

static int g_stock_row(void *baton, const as_index_offer *o)
{
    g_store *g = baton;
    if (g->t.n_stock == G_MAX) return 1;
    g->t.stock[g->t.n_stock].offer_id = g_dup(g, o->id);
    g->t.stock[g->t.n_stock++].stock = o->stock;
    return 0;
}

/* The catalogue's product with the stock as orders left it. */
static int g_product_by_sku(void *h, as_mem *m, const char *sku, int64_t device_id, as_product *out)
{
    g_store *g = h;
    int rc = g->catalogue.product_by_sku(g->catalogue.h, m, sku, device_id, out);
    for (size_t k = 0; rc == AS_OK && k < out->n_offers; k++) {
        int64_t *stock = g_stock_of(g, out->offers[k].id);
        if (stock) out->offers[k].stock = *stock;
    }
    return rc;
}

static int g_begin(void *h)
{
    g_store *g = h;
    assert_false(g->in_tx); /* core never nests transactions */
    g->saved = g->t;
    g->in_tx = true;
    return AS_OK;
}

static int g_commit(void *h)
{
    g_store *g = h;
    assert_true(g->in_tx);
    g->in_tx = false;
    return AS_OK;
}

static int g_rollback(void *h)
{
    g_store *g = h;
    if (g->in_tx) g->t = g->saved;
    g->in_tx = false;
    return AS_OK;
}

static int g_key_by_hash(void *h, as_mem *m, const char *hash, as_key_row *out)
{
    (void)h;
    for (size_t i = 0; i < N_ROWS(g_keys); i++) {
        const char *mine = as_sha256_hex(m, g_keys[i].key, strlen(g_keys[i].key));
        if (strcmp(mine, hash) == 0) {
            *out = (as_key_row){g_keys[i].id, g_keys[i].user, mine, NULL};
            return AS_OK;
        }
    }
    return AS_ENOTFOUND;
}

static int g_mandate_current(void *h, as_mem *m, const char *user_id, bool lock, as_mandate *out)
{
    (void)h; (void)m; (void)lock;
    for (size_t i = 0; i < N_ROWS(g_mandates); i++)
        if (strcmp(g_mandates[i].user_id, user_id) == 0) {
            *out = g_mandates[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int g_mandate_get(void *h, as_mem *m, const char *id, bool lock, as_mandate *out)
{
    (void)h; (void)m; (void)lock;
    for (size_t i = 0; i < N_ROWS(g_mandates); i++)
        if (strcmp(g_mandates[i].id, id) == 0) {
            *out = g_mandates[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int g_mandate_spent(void *h, const char *mandate_id, const char *month, int64_t *cents)
{
    g_store *g = h;
    *cents = 0;
    for (size_t i = 0; i < g->t.n_orders; i++) {
        const as_order *o = &g->t.orders[i].o;
        if (strcmp(o->mandate_id, mandate_id) == 0 && strcmp(o->month, month) == 0)
            *cents += o->budget_cents;
    }
    return AS_OK;
}

static int g_quote_insert(void *h, const as_quote *q)
{
    g_store *g = h;
    if (g->t.n_quotes == G_MAX) return AS_EDB;
    as_quote *c = &g->t.quotes[g->t.n_quotes++];
    *c = *q;
    c->id = g_dup(g, q->id), c->user_id = g_dup(g, q->user_id), c->offer_id = g_dup(g, q->offer_id);
    c->delivery_by = g_dup(g, q->delivery_by), c->device_slug = g_dup(g, q->device_slug);
    c->fit_status = g_dup(g, q->fit_status), c->sku = g_dup(g, q->sku);
    c->product_name = g_dup(g, q->product_name), c->category = g_dup(g, q->category);
    c->merchant_id = g_dup(g, q->merchant_id), c->merchant_name = g_dup(g, q->merchant_name);
    c->order_id = NULL;
    return AS_OK;
}

static int g_quote_get(void *h, as_mem *m, const char *id, as_quote *out)
{
    (void)m;
    g_store *g = h;
    for (size_t i = 0; i < g->t.n_quotes; i++)
        if (strcmp(g->t.quotes[i].id, id) == 0) {
            *out = g->t.quotes[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static g_order *g_order_find(g_store *g, const char *id)
{
    for (size_t i = 0; i < g->t.n_orders; i++)
        if (strcmp(g->t.orders[i].o.id, id) == 0) return &g->t.orders[i];
    return NULL;
}

/* What the SQL store joins from the catalogue: the part type and the
 * merchant's country. */
static void g_order_join(g_store *g, as_order *o)
{
    as_product p;
    if (g->catalogue.product_by_sku(g->catalogue.h, &g->mem, o->sku, 0, &p) != AS_OK) return;
    o->part_type = p.part_type;
    for (size_t k = 0; k < p.n_offers; k++)
        if (strcmp(p.offers[k].id, o->offer_id) == 0)
            o->merchant_country = p.offers[k].merchant.country;
}

static int g_order_insert(void *h, const as_order *o)
{
    g_store *g = h;
    assert_true(g->in_tx);
    as_quote *q = NULL;
    for (size_t i = 0; i < g->t.n_quotes; i++)
        if (strcmp(g->t.quotes[i].id, o->quote_id) == 0) q = &g->t.quotes[i];
    if (q && q->order_id) return AS_ECONFLICT;
    if (g->t.n_orders == G_MAX) return AS_EDB;
    g_order *r = &g->t.orders[g->t.n_orders++];
    memset(r, 0, sizeof(*r));
    r->o = *o;
    as_order *c = &r->o;
    c->id = g_dup(g, o->id), c->user_id = g_dup(g, o->user_id);
    c->mandate_id = g_dup(g, o->mandate_id), c->quote_id = g_dup(g, o->quote_id);
    c->offer_id = g_dup(g, o->offer_id), c->month = g_dup(g, o->month);
    c->reason = g_dup(g, o->reason), c->agent = g_dup(g, o->agent);
    c->sku = g_dup(g, o->sku), c->product_name = g_dup(g, o->product_name);
    c->category = g_dup(g, o->category), c->merchant_name = g_dup(g, o->merchant_name);
    c->delivery_by = g_dup(g, o->delivery_by), c->device_slug = g_dup(g, o->device_slug);
    c->fit_status = g_dup(g, o->fit_status), c->key_id = g_dup(g, o->key_id);
    c->confirmation_id = NULL, c->key_revoked_at = NULL;
    c->events = NULL, c->n_events = 0;
    g_order_join(g, c);
    if (q) q->order_id = c->id;
    return AS_OK;
}

static int g_order_get(void *h, as_mem *m, const char *id, as_order *out)
{
    g_store *g = h;
    g_order *r = g_order_find(g, id);
    if (!r) return AS_ENOTFOUND;
    *out = r->o;
    out->events = as_alloc(m, (r->o.n_events + 1) * sizeof(as_event));
    memcpy(out->events, r->events, r->o.n_events * sizeof(as_event));
    for (size_t i = 0; i < g->t.n_confs; i++)
        if (strcmp(g->t.confs[i].order_id, id) == 0) out->confirmation_id = g->t.confs[i].id;
    return AS_OK;
}

static int g_order_move(void *h, const char *id, as_order_state from, as_order_state to,
                        int64_t budget_cents, int64_t at)
{
    g_store *g = h;
    assert_true(g->in_tx);
    g_order *r = g_order_find(g, id);
    if (!r || r->o.status != from) return AS_ECONFLICT;
    r->o.status = to;
    r->o.budget_cents = budget_cents;
    r->o.updated_at = at;
    return AS_OK;
}

static int g_event_add(void *h, const char *order_id, as_order_state status, int64_t at,
                       const char *note)
{
    g_store *g = h;
    assert_true(g->in_tx);
    g_order *r = g_order_find(g, order_id);
    if (!r || r->o.n_events == G_EVENTS) return AS_EDB;
    r->events[r->o.n_events++] = (as_event){status, g_dup(g, note), at};
    return AS_OK;
}

static int g_orders_expired(void *h, as_mem *m, const char *mandate_id, int64_t now, as_order **out,
                            size_t *n)
{
    g_store *g = h;
    *out = as_alloc(m, (g->t.n_orders + 1) * sizeof(as_order));
    *n = 0;
    for (size_t i = 0; i < g->t.n_orders; i++) {
        const as_order *o = &g->t.orders[i].o;
        if ((!mandate_id || strcmp(o->mandate_id, mandate_id) == 0) &&
            o->status == AS_OS_AWAITING && o->confirm_expires_at <= now)
            g_order_get(h, m, o->id, &(*out)[(*n)++]);
    }
    return AS_OK;
}

static int g_stock_take(void *h, const char *offer_id, int64_t qty)
{
    g_store *g = h;
    assert_true(g->in_tx);
    int64_t *stock = g_stock_of(g, offer_id);
    if (!stock || *stock < qty) return AS_ECONFLICT;
    *stock -= qty;
    return AS_OK;
}

static int g_stock_give(void *h, const char *offer_id, int64_t qty)
{
    g_store *g = h;
    assert_true(g->in_tx);
    int64_t *stock = g_stock_of(g, offer_id);
    if (!stock) return AS_EDB;
    *stock += qty;
    return AS_OK;
}

static int g_conf_insert(void *h, const as_confirmation *c)
{
    g_store *g = h;
    assert_true(g->in_tx);
    if (g->t.n_confs == G_MAX) return AS_EDB;
    as_confirmation *r = &g->t.confs[g->t.n_confs++];
    *r = *c;
    r->id = g_dup(g, c->id), r->order_id = g_dup(g, c->order_id);
    r->user_id = g_dup(g, c->user_id), r->status = g_dup(g, c->status);
    return AS_OK;
}

static as_confirmation *g_conf_find(g_store *g, const char *id)
{
    for (size_t i = 0; i < g->t.n_confs; i++)
        if (strcmp(g->t.confs[i].id, id) == 0) return &g->t.confs[i];
    return NULL;
}

static int g_conf_get(void *h, as_mem *m, const char *id, as_confirmation *out)
{
    (void)m;
    as_confirmation *c = g_conf_find(h, id);
    if (!c) return AS_ENOTFOUND;
    *out = *c;
    return AS_OK;
}

static int g_conf_decide(void *h, const char *id, const char *to, int64_t at)
{
    g_store *g = h;
    assert_true(g->in_tx);
    as_confirmation *c = g_conf_find(g, id);
    if (!c) return AS_ECONFLICT;
    c->status = g_dup(g, to);
    c->decided_at = at;
    return AS_OK;
}

static g_idem *g_idem_find(g_store *g, const char *user, const char *scope, const char *key)
{
    for (size_t i = 0; i < g->t.n_idem; i++) {
        g_idem *r = &g->t.idem[i];
        if (!strcmp(r->user, user) && !strcmp(r->scope, scope) && !strcmp(r->key, key)) return r;
    }
    return NULL;
}

/* As the SQL store: a record found answers (AS_ECONFLICT), unless it is a
 * claim in flight whose lease ran out, which is taken over. */
static int g_idem_claim(void *h, as_mem *m, const char *user, const char *scope, const char *key,
                        const char *hash, int64_t now, int64_t lease_until, as_idem *existing)
{
    (void)m;
    g_store *g = h;
    assert_true(g->in_tx);
    g_idem *r = g_idem_find(g, user, scope, key);
    if (r && !(strcmp(r->rec.state, "in_flight") == 0 && r->rec.lease_until < now)) {
        *existing = r->rec;
        return AS_ECONFLICT;
    }
    if (!r) {
        if (g->t.n_idem == G_MAX) return AS_EDB;
        r = &g->t.idem[g->t.n_idem++];
        *r = (g_idem){g_dup(g, user), g_dup(g, scope), g_dup(g, key), {0}};
    }
    r->rec = (as_idem){g_dup(g, hash), "in_flight", NULL, 0, now, lease_until};
    return AS_OK;
}

static int g_idem_finish(void *h, const char *user, const char *scope, const char *key, int status,
                         const char *response)
{
    g_store *g = h;
    assert_true(g->in_tx);
    g_idem *r = g_idem_find(g, user, scope, key);
    if (!r) return AS_EDB;
    r->rec.state = "done";
    r->rec.status = status;
    r->rec.response = g_dup(g, response);
    return AS_OK;
}

static int g_return_insert(void *h, const as_return *r)
{
    g_store *g = h;
    assert_true(g->in_tx);
    for (size_t i = 0; i < g->t.n_returns; i++)
        if (strcmp(g->t.returns[i].order_id, r->order_id) == 0) return AS_ECONFLICT;
    if (g->t.n_returns == G_MAX) return AS_EDB;
    as_return *c = &g->t.returns[g->t.n_returns++];
    *c = *r;
    c->id = g_dup(g, r->id), c->order_id = g_dup(g, r->order_id), c->user_id = g_dup(g, r->user_id);
    c->reason_code = g_dup(g, r->reason_code), c->note = g_dup(g, r->note);
    c->refund_status = g_dup(g, r->refund_status), c->carrier = g_dup(g, r->carrier);
    c->tracking_code = g_dup(g, r->tracking_code);
    c->replacement_sku = g_dup(g, r->replacement_sku);
    return AS_OK;
}

static int g_return_find(g_store *g, const char *id, const char *order_id, as_return *out)
{
    for (size_t i = 0; i < g->t.n_returns; i++)
        if (strcmp(id ? g->t.returns[i].id : g->t.returns[i].order_id, id ? id : order_id) == 0) {
            *out = g->t.returns[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int g_return_get(void *h, as_mem *m, const char *id, as_return *out)
{
    (void)m;
    return g_return_find(h, id, NULL, out);
}

static int g_return_by_order(void *h, as_mem *m, const char *order_id, as_return *out)
{
    (void)m;
    return g_return_find(h, NULL, order_id, out);
}

/* Nobody has a passkey: approving needs one unless the case turns on
 * approval by the link alone. */
static int g_passkeys_of(void *h, as_mem *m, const char *user_id, as_passkey **out, size_t *n)
{
    (void)h; (void)m; (void)user_id;
    *out = NULL;
    *n = 0;
    return AS_OK;
}

static int g_passkey_get(void *h, as_mem *m, const char *id, as_passkey *out)
{
    (void)h; (void)m; (void)id; (void)out;
    return AS_ENOTFOUND;
}

static void g_store_init(g_store *g)
{
    memset(g, 0, sizeof(*g));
    fake_db_default(&g->db);
    g->catalogue = fake_store_make(&g->db);
    g->arena = as_arena_create();
    g->mem = as_arena_mem(g->arena);
    assert_int_equal(g->catalogue.index_offers(g->catalogue.h, g_stock_row, g), AS_OK);
}

static as_store g_store_make(g_store *g)
{
    as_store s = g->catalogue;
    s.h = g;
    s.product_by_sku = g_product_by_sku;
    s.begin = g_begin;
    s.commit = g_commit;
    s.rollback = g_rollback;
    s.key_by_hash = g_key_by_hash;
    s.mandate_current = g_mandate_current;
    s.mandate_get = g_mandate_get;
    s.mandate_spent = g_mandate_spent;
    s.quote_insert = g_quote_insert;
    s.quote_get = g_quote_get;
    s.order_insert = g_order_insert;
    s.order_get = g_order_get;
    s.order_move = g_order_move;
    s.event_add = g_event_add;
    s.orders_expired = g_orders_expired;
    s.stock_take = g_stock_take;
    s.stock_give = g_stock_give;
    s.confirmation_insert = g_conf_insert;
    s.confirmation_get = g_conf_get;
    s.confirmation_decide = g_conf_decide;
    s.idem_claim = g_idem_claim;
    s.idem_finish = g_idem_finish;
    s.return_insert = g_return_insert;
    s.return_get = g_return_get;
    s.return_by_order = g_return_by_order;
    s.passkeys_of = g_passkeys_of;
    s.passkey_get = g_passkey_get;
    return s;
}

/* ------------------------------------------------------------------ */
/* Placeholders: {{name}} captures, {{*}} matches anything             */
/* ------------------------------------------------------------------ */

#define G_CAPS 64

typedef struct g_case {
    const char *dir;
    g_store store;
    as_store s;
    as_config cfg;
    as_ctx ctx;
    struct {
        const char *name, *value;
    } caps[G_CAPS];
    size_t n_caps;
    as_buf why; /* what did not match, one line each */
} g_case;

static const char *g_cap(const g_case *c, const char *name, size_t len)
{
    for (size_t i = 0; i < c->n_caps; i++)
        if (strlen(c->caps[i].name) == len && strncmp(c->caps[i].name, name, len) == 0)
            return c->caps[i].value;
    return NULL;
}

/* Whether s matches the pattern pat; binds the names it captures (a name
 * bound before must match its value again). Backtracks on failure. */
static bool g_match_text(g_case *c, const char *pat, const char *s)
{
    const char *open = strstr(pat, "{{");
    if (!open) return strcmp(pat, s) == 0;
    size_t lit = (size_t)(open - pat);
    if (strncmp(pat, s, lit) != 0) return false;
    s += lit;
    const char *close = strstr(open, "}}");
    assert_non_null(close); /* a placeholder is closed in the same string */
    const char *name = open + 2, *rest = close + 2;
    size_t len = (size_t)(close - name);
    const char *bound = g_cap(c, name, len);
    if (bound)
        return strncmp(s, bound, strlen(bound)) == 0 && g_match_text(c, rest, s + strlen(bound));
    bool any = len == 1 && *name == '*';
    for (size_t k = 1; k <= strlen(s); k++) {
        if (any) {
            if (g_match_text(c, rest, s + k)) return true;
            continue;
        }
        assert_true(c->n_caps < G_CAPS);
        size_t n = c->n_caps++;
        c->caps[n].name = as_strndup(&c->store.mem, name, len);
        c->caps[n].value = as_strndup(&c->store.mem, s, k);
        if (g_match_text(c, rest, s + k)) return true;
        c->n_caps = n;
    }
    return false;
}

/* A copy of v with every {{name}} in its strings replaced by its value. */
static json_t *g_substitute(g_case *c, const json_t *v, const char *file)
{
    if (json_is_string(v)) {
        as_buf b;
        as_buf_init(&b, &c->store.mem);
        const char *s = json_string_value(v), *open;
        while ((open = strstr(s, "{{")) != NULL) {
            const char *close = strstr(open, "}}");
            const char *val = close ? g_cap(c, open + 2, (size_t)(close - open - 2)) : NULL;
            if (!val) fail_msg("%s: %s has no value yet (nothing captured it)", file, open);
            as_buf_add(&b, s, (size_t)(open - s));
            as_buf_puts(&b, val);
            s = close + 2;
        }
        as_buf_puts(&b, s);
        return json_string(as_buf_str(&b));
    }
    json_t *out = json_is_object(v) ? json_object() : json_is_array(v) ? json_array() : NULL;
    if (!out) return json_deep_copy(v);
    const char *k;
    json_t *e;
    size_t i;
    if (json_is_object(v))
        json_object_foreach((json_t *)v, k, e)
            json_object_set_new(out, k, g_substitute(c, e, file));
    else
        json_array_foreach(v, i, e) json_array_append_new(out, g_substitute(c, e, file));
    return out;
}

/* Expected against actual, as JSON; each difference a line in c->why. */
static void g_compare(g_case *c, const json_t *exp, const json_t *act, const char *at)
{
    as_mem *m = &c->store.mem;
    if (json_is_string(exp) && json_is_string(act)) {
        if (!g_match_text(c, json_string_value(exp), json_string_value(act)))
            as_buf_printf(&c->why, "  %s: expected \"%s\", got \"%s\"\n", at,
                          json_string_value(exp), json_string_value(act));
        return;
    }
    if (json_is_object(exp) && json_is_object(act)) {
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)exp, k, e)
        {
            json_t *a = json_object_get(act, k);
            const char *sub = as_printf(m, "%s.%s", at, k);
            if (!a)
                as_buf_printf(&c->why, "  %s: missing\n", sub);
            else
                g_compare(c, e, a, sub);
        }
        json_object_foreach((json_t *)act, k, e) if (!json_object_get(exp, k))
            as_buf_printf(&c->why, "  %s.%s: not expected\n", at, k);
        return;
    }
    if (json_is_array(exp) && json_is_array(act) && json_array_size(exp) == json_array_size(act)) {
        for (size_t i = 0; i < json_array_size(exp); i++)
            g_compare(c, json_array_get(exp, i), json_array_get(act, i),
                      as_printf(m, "%s[%zu]", at, i));
        return;
    }
    if (!json_equal((json_t *)exp, (json_t *)act)) {
        char *e = json_dumps(exp, JSON_COMPACT | JSON_ENCODE_ANY),
             *a = json_dumps(act, JSON_COMPACT | JSON_ENCODE_ANY);
        as_buf_printf(&c->why, "  %s: expected %s, got %s\n", at, e ? e : "(none)",
                      a ? a : "(none)");
        free(e);
        free(a);
    }
}

/* For GOLDEN_UPDATE: the captured values in v's strings turned back into
 * their placeholders, longest value first. */
static json_t *g_placeholders(g_case *c, const json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        for (bool again = true; again;) {
            again = false;
            size_t best = c->n_caps;
            for (size_t i = 0; i < c->n_caps; i++)
                if (strstr(s, c->caps[i].value) &&
                    (best == c->n_caps || strlen(c->caps[i].value) > strlen(c->caps[best].value)))
                    best = i;
            if (best == c->n_caps) break;
            const char *at = strstr(s, c->caps[best].value);
            s = as_printf(&c->store.mem, "%.*s{{%s}}%s", (int)(at - s), s, c->caps[best].name,
                          at + strlen(c->caps[best].value));
            again = true;
        }
        return json_string(s);
    }
    json_t *out = json_is_object(v) ? json_object() : json_is_array(v) ? json_array() : NULL;
    if (!out) return json_deep_copy(v);
    const char *k;
    json_t *e;
    size_t i;
    if (json_is_object(v))
        json_object_foreach((json_t *)v, k, e) json_object_set_new(out, k, g_placeholders(c, e));
    else
        json_array_foreach(v, i, e) json_array_append_new(out, g_placeholders(c, e));
    return out;
}

/* ------------------------------------------------------------------ */
/* Steps: a request file in, its expected file out                     */
/* ------------------------------------------------------------------ */

static json_t *g_load(const char *path)
{
    json_error_t e;
    json_t *v = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (!v) fail_msg("%s:%d: %s", path, e.line, e.text);
    return v;
}

static const char *g_header(const json_t *headers, const char *name)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)headers, k,
                        v) if (strcasecmp(k, name) == 0) return json_string_value(v);
    return NULL;
}

/* The request file as core's request (valid while r is); the clock moved on
 * first by its "advance" seconds. */
static void g_request(g_case *c, const json_t *r, const char *file, as_request *req)
{
    as_mem *m = &c->store.mem;
    const json_t *h = json_object_get(r, "headers");
    const char *path = json_string_value(json_object_get(r, "path"));
    if (!json_is_string(json_object_get(r, "method")) || !path)
        fail_msg("%s: a request needs a method and a path", file);
    const char *q = strchr(path, '?');
    *req = (as_request){
        .method = json_string_value(json_object_get(r, "method")),
        .path = q ? as_strndup(m, path, (size_t)(q - path)) : path,
        .query = q ? q + 1 : NULL,
        .content_type = g_header(h, "Content-Type"),
        .accept = g_header(h, "Accept"),
        .authorization = g_header(h, "Authorization"),
        .service_agent = g_header(h, "Service-Agent"),
        .idempotency_key = g_header(h, "Idempotency-Key"),
        .base_url = G_BASE,
    };
    const json_t *body = json_object_get(r, "body");
    if (json_is_string(body)) { /* sent as it is: a form, or text that is not JSON */
        req->body = json_string_value(body);
    } else if (body) {
        char *s = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
        req->body = as_strdup(m, s);
        free(s);
    }
    req->body_len = req->body ? strlen(req->body) : 0;
    c->ctx.now += json_integer_value(json_object_get(r, "advance"));
}

/* "in_flight": KEY leaves that Idempotency-Key's record, for this request
 * only, as a claim still in flight (a lease of 30 s from now): what the
 * first request holds while it is being processed. Returns the record to put
 * back after the request, or NULL. */
static g_idem *g_hold_in_flight(g_case *c, const json_t *r, const char *file, as_idem *saved)
{
    const char *key = json_string_value(json_object_get(r, "in_flight"));
    if (!key) return NULL;
    for (size_t i = 0; i < c->store.t.n_idem; i++) {
        g_idem *rec = &c->store.t.idem[i];
        if (strcmp(rec->key, key) != 0) continue;
        *saved = rec->rec;
        rec->rec =
            (as_idem){saved->request_hash, "in_flight", NULL, 0, c->ctx.now, c->ctx.now + 30};
        return rec;
    }
    fail_msg("%s: no Idempotency-Key record '%s' to hold in flight", file, key);
    return NULL;
}

/* The response as the expected files write it: status, the headers that
 * carry meaning (absent when not sent) and the JSON body. */
static json_t *g_response(const as_response *resp)
{
    json_t *h = json_object();
    if (resp->location) json_object_set_new(h, "Location", json_string(resp->location));
    if (resp->replayed) json_object_set_new(h, "Idempotent-Replayed", json_string("true"));
    if (resp->retry_after)
        json_object_set_new(h, "Retry-After", json_sprintf("%d", resp->retry_after));
    if (resp->allow) json_object_set_new(h, "Allow", json_string(resp->allow));
    json_t *out = json_pack("{s:i}", "status", resp->status);
    if (json_object_size(h))
        json_object_set_new(out, "headers", h);
    else
        json_decref(h);
    json_object_set_new(out, "body", resp->body ? json_incref(resp->body) : json_null());
    return out;
}

static bool g_updating(void)
{
    const char *u = getenv("GOLDEN_UPDATE");
    return u && strcmp(u, "1") == 0;
}

static void g_write(const char *path, const json_t *v)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(AS_JSON_PRECISION));
    FILE *f = fopen(path, "w");
    if (!f || !s || fprintf(f, "%s\n", s) < 0 || fclose(f) != 0)
        fail_msg("%s: cannot write: %s", path, strerror(errno));
    free(s);
}

/* One request file through as_handle; false when the response differs. */
static bool g_step(g_case *c, const char *name)
{
    as_mem *m = &c->store.mem;
    const char *dir = c->dir;
    size_t stem = strlen(name) - strlen(".request.json");
    const char *req_file = as_printf(m, "%s/%s", dir, name);
    const char *exp_file = as_printf(m, "%s/%.*s.expected.json", dir, (int)stem, name);
    json_t *raw = g_load(req_file);
    json_t *r = g_substitute(c, raw, req_file);
    json_decref(raw);
    as_request req;
    g_request(c, r, req_file, &req);
    as_idem saved;
    g_idem *held = g_hold_in_flight(c, r, req_file, &saved);

    as_arena *a = as_arena_create();
    as_mem rm = as_arena_mem(a);
    c->ctx.mem = &rm;
    as_response resp;
    as_handle(&c->ctx, &req, &resp);
    if (held) held->rec = saved;
    unit_json_body(&resp);
    json_t *got = g_response(&resp);
    as_response_clear(&resp);
    as_arena_destroy(a);
    json_decref(r);

    bool ok = true;
    FILE *f = fopen(exp_file, "r");
    json_t *exp = f ? g_load(exp_file) : NULL;
    if (f) fclose(f);
    as_buf_init(&c->why, m);
    if (exp) g_compare(c, exp, got, "response");
    if (g_updating()) {
        json_t *fresh = g_placeholders(c, got);
        g_write(exp_file, fresh);
        json_decref(fresh);
    } else if (!exp) {
        print_error("%s: missing (GOLDEN_UPDATE=1 writes it)\n", exp_file);
        ok = false;
    } else if (c->why.len) {
        char *body = json_dumps(got, JSON_INDENT(2));
        print_error("%s differs:\n%sThe response was:\n%s\n", exp_file, as_buf_str(&c->why), body);
        free(body);
        ok = false;
    }
    json_decref(exp);
    json_decref(got);
    return ok;
}

static int g_is_request(const struct dirent *e)
{
    size_t n = strlen(e->d_name), k = strlen(".request.json");
    return n > k && strcmp(e->d_name + n - k, ".request.json") == 0;
}

/* case.json (optional): {"approval_link": true} turns on approval by the
 * signed link alone (AgentShopApproval link). */
static void g_case_config(g_case *c)
{
    const char *path = as_printf(&c->store.mem, "%s/case.json", c->dir);
    FILE *f = fopen(path, "r");
    if (!f) return;
    fclose(f);
    json_t *v = g_load(path);
    c->cfg.approval_link = json_is_true(json_object_get(v, "approval_link"));
    json_decref(v);
}

static void test_golden_case(void **state)
{
    g_case *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    c->dir = *state;
    g_store_init(&c->store);
    c->s = g_store_make(&c->store);
    as_config_defaults(&c->cfg);
    c->cfg.signing_key = g_signing_key;
    c->cfg.signing_key_len = sizeof(g_signing_key) - 1;
    g_case_config(c);
    c->ctx = (as_ctx){.store = &c->s, .cfg = &c->cfg, .now = G_START};
    struct dirent **steps;
    int n = scandir(c->dir, &steps, g_is_request, alphasort);
    if (n <= 0) fail_msg("%s: no request files", c->dir);
    bool ok = true;
    for (int i = 0; i < n; i++) {
        if (ok) ok = g_step(c, steps[i]->d_name);
        free(steps[i]);
    }
    free(steps);
    assert_false(c->store.in_tx); /* every request closed its transaction */
    as_arena_destroy(c->store.arena);
    free(c);
    if (!ok) fail();
}

static const char *g_root; /* the directory of cases */

static int g_is_case(const struct dirent *e)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", g_root, e->d_name);
    return e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(void)
{
    /* the cases beside this file; make runs the tests from the top directory */
    const char *root = g_root = getenv("GOLDEN_DIR") ? getenv("GOLDEN_DIR") : "t/unit/golden";
    struct dirent **cases;
    int n = scandir(root, &cases, g_is_case, alphasort);
    if (n <= 0) {
        fprintf(stderr, "[  ERROR   ] no golden cases in %s\n", root);
        return 1;
    }
    struct CMUnitTest *tests = calloc((size_t)n, sizeof(*tests));
    assert_non_null(tests);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(root) + strlen(cases[i]->d_name) + 2;
        char *dir = malloc(len);
        assert_non_null(dir);
        snprintf(dir, len, "%s/%s", root, cases[i]->d_name);
        tests[i] = (struct CMUnitTest){cases[i]->d_name, test_golden_case, NULL, NULL, dir};
    }
    int failed = _cmocka_run_group_tests("golden", tests, (size_t)n, NULL, NULL);
    for (int i = 0; i < n; i++) {
        free(tests[i].initial_state);
        free(cases[i]);
    }
    free(tests);
    free(cases);
    return failed;
}
