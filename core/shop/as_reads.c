/* Reading the catalogue, spec 4.1 to 4.4 (as_reads.h). */
#include "as_reads.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "as_search_body.h"
#include "as_util.h"
#include "as_view.h"
#include "as_view_cache.h"

#define MAX_PRICE_CENTS 100000000 /* one million euros */

/* A page or view that could not be encoded: the shop's fault, said as such. */
static as_shop_rc not_encoded(as_problem *p)
{
    as_problem_set(p, 500, "INTERNAL_ERROR", NULL, "The response could not be encoded.");
    return AS_SHOP_REFUSED;
}

/* ---- devices and merchants a parameter names ---- */

/* A device parameter among devs: a slug, or free text naming exactly one
 * device (else 400). */
static bool resolve_device_in(as_shop *shop, const as_device *devs, size_t n, const char *text,
                              const char *field, as_device *out, as_problem *p)
{
    const as_device *found;
    const char *cands;
    as_dev_resolution res = as_device_resolve(shop->mem, devs, n, text, &found, &cands);
    if (res == AS_DEV_FOUND) {
        *out = *found;
        return true;
    }
    const char *msg =
        res == AS_DEV_AMBIGUOUS
            ? as_printf(shop->mem, "device '%s' matches several devices; use one slug: %s", text,
                        cands)
        : cands ? as_printf(shop->mem, "no device matches '%s'; closest: %s", text, cands)
                : as_printf(shop->mem, "no device matches '%s'; see GET /v1/devices?q=", text);
    as_problem_set(p, 400, "VALIDATION_ERROR", field, msg);
    return false;
}

/* A device parameter: among the store's devices. */
as_shop_rc as_read_device(as_shop *shop, const char *text, const char *field, as_device *out,
                          as_problem *p)
{
    as_device *devs;
    size_t n;
    if (as_store_devices(shop->store, shop->mem, &devs, &n) != AS_OK) return AS_SHOP_FAILED;
    return resolve_device_in(shop, devs, n, text, field, out, p) ? AS_SHOP_DONE : AS_SHOP_REFUSED;
}

/* A merchant parameter: an id or a name (any case), among the snapshot's
 * merchants when it is of the store's catalogue (snap), else the store's. */
static as_shop_rc resolve_merchant(as_shop *shop, const as_search_snap *snap, const char *text,
                                   const char **id, as_problem *p)
{
    as_merchant *ms;
    size_t n;
    if (snap)
        as_search_snap_merchants(snap, shop->mem, &ms, &n);
    else if (as_store_merchants(shop->store, shop->mem, &ms, &n) != AS_OK)
        return AS_SHOP_FAILED;
    for (size_t i = 0; i < n; i++)
        if (strcmp(ms[i].id, text) == 0 || strcasecmp(ms[i].name, text) == 0) {
            *id = ms[i].id;
            return AS_SHOP_DONE;
        }
    as_buf b;
    as_buf_init(&b, shop->mem);
    as_buf_puts(&b, n ? "known merchants: " : "no merchant is known before a catalogue is loaded");
    for (size_t i = 0; i < n; i++)
        as_buf_printf(&b, "%s%s", i ? ", " : "", ms[i].id);
    as_problem_set(p, 400, "VALIDATION_ERROR", "merchant",
                   as_printf(shop->mem, "unknown merchant '%s'; %s", text, as_buf_str(&b)));
    return AS_SHOP_REFUSED;
}

/* The caches' key of a request: what, the day and the decoded query, each
 * part preceded by its length, so that no value (which may hold "\n", "=" or
 * "&" once decoded: q=wash%0Alimit%3D3) can stand for another request's
 * parts. */
static const char *cache_key(as_shop *shop, const char *what, const as_query *q)
{
    as_buf b;
    as_buf_init(&b, shop->mem);
    as_buf_printf(&b, "%zu:%s %lld", strlen(what), what, (long long)as_today(shop));
    for (size_t i = 0; i < q->n; i++)
        as_buf_printf(&b, " %zu:%s%zu:%s", strlen(q->items[i].key), q->items[i].key,
                      strlen(q->items[i].val), q->items[i].val);
    return as_buf_str(&b);
}

/* ---- GET /search (spec 4.1) ---- */

enum {
    S_Q,
    S_DEVICE,
    S_CATEGORY,
    S_PART_TYPE,
    S_MAX_PRICE,
    S_DELIVER_BY,
    S_VERIFIED_ONLY,
    S_MERCHANT,
    S_POSTCODE,
    S_SORT,
    S_WEIGHTS,
    S_LIMIT,
    S_OFFSET,
    S_N
};

static const as_param_rule search_rules[S_N] = {
    [S_Q] = {"q", AS_V_TEXT, 0, 200, NULL},
    [S_DEVICE] = {"device", AS_V_TEXT, 1, 100, NULL},
    [S_CATEGORY] = {"category", AS_V_ENUM, 1, 50, as_category_ids},
    [S_PART_TYPE] = {"part_type", AS_V_ENUM, 1, 50, as_part_type_ids},
    [S_MAX_PRICE] = {"max_price", AS_V_EUR, 0, MAX_PRICE_CENTS, NULL},
    [S_DELIVER_BY] = {"deliver_by", AS_V_DATE, 0, 0, NULL},
    [S_VERIFIED_ONLY] = {"verified_only", AS_V_BOOL, 0, 0, NULL},
    [S_MERCHANT] = {"merchant", AS_V_TEXT, 1, 50, NULL},
    [S_POSTCODE] = {"postcode", AS_V_POSTCODE, 1, 12, NULL},
    [S_SORT] = {"sort", AS_V_ENUM, 1, 20, as_sort_choices},
    [S_WEIGHTS] = {"weights", AS_V_WEIGHTS, 0, 0, NULL},
    [S_LIMIT] = {"limit", AS_V_INT, 1, AS_PAGE_LIMIT_MAX, NULL},
    [S_OFFSET] = {"offset", AS_V_INT, 0, AS_PAGE_WINDOW - 1, NULL},
};

static const char *param_str(const as_param *v)
{
    return v->present ? v->str : NULL;
}

bool as_read_search_params(as_shop *shop, const as_query *q, as_read_search_in *in, as_problem *p)
{
    as_mem *m = shop->mem;
    as_param v[S_N];
    as_page page;
    if (!as_validate_query(m, search_rules, S_N, q, as_today(shop), v, p) ||
        !as_validate_page(m, &v[S_LIMIT], &v[S_OFFSET], &page, p))
        return false;
    memset(in, 0, sizeof(*in));
    as_search_ask *ask = &in->ask;
    if (v[S_Q].present && *v[S_Q].str) {
        const char **terms;
        if (as_text_terms(m, v[S_Q].str, &terms) == 0) {
            as_problem_set(p, 400, "VALIDATION_ERROR", "q",
                           "q must contain at least one letter or digit");
            return false;
        }
        ask->q = v[S_Q].str;
    }
    ask->category = param_str(&v[S_CATEGORY]);
    ask->part_type = param_str(&v[S_PART_TYPE]);
    ask->w = as_param_weights(&v[S_WEIGHTS]);
    ask->of = (as_offer_filter){v[S_DELIVER_BY].present ? v[S_DELIVER_BY].num : 0,
                                v[S_MAX_PRICE].present ? v[S_MAX_PRICE].num : 0, NULL};
    ask->verified_only = v[S_VERIFIED_ONLY].present ? v[S_VERIFIED_ONLY].num != 0 : true;
    ask->sort = AS_SORT_SCORE;
    if (v[S_SORT].present)
        for (int k = 0; as_sort_choices[k]; k++)
            if (strcmp(as_sort_choices[k], v[S_SORT].str) == 0) ask->sort = (as_sort_kind)k;
    ask->limit = page.limit;
    ask->offset = page.offset;
    ask->today = as_today(shop);
    in->device = param_str(&v[S_DEVICE]);
    in->merchant = param_str(&v[S_MERCHANT]);
    in->postcode = param_str(&v[S_POSTCODE]);
    in->asked = q;
    return true;
}

static int stock_cmp(const void *a, const void *b)
{
    const as_offer_stock *x = a, *y = b;
    if (x->product_id != y->product_id) return x->product_id < y->product_id ? -1 : 1;
    return strcmp(x->offer_id, y->offer_id);
}

/* One search through the engine (core/search/, docs/search.md): the snapshot
 * matches, filters, ranks and pages; the only thing of a page that changes
 * between catalogue loads, its offers' stock, is read from the store. When the
 * page cache is on, what the page is made of (the snapshot's version, the stock
 * read) validates the encoded page kept for this query and day. */
typedef struct engine_search {
    as_search_snap *snap;   /* retained for the request */
    as_search_version read; /* the store's versions as this request read them */
    bool has_read;
    bool searched; /* res holds the engine's answer */
    as_search_result res;
    const int64_t *ids; /* the page's products */
    size_t n_ids;
    as_offer_stock *stock; /* as read, NULL when not yet */
    size_t n_stock;
    const char *page_key, *validator; /* for the page cache, or NULL */
} engine_search;

/* Looks the page up in the caches: true when out holds the cached page. On a
 * miss es has the page key and validator to keep the built page under, and
 * the stock it must be built from. */
static bool engine_cached(as_shop *shop, const as_search_ask *ask, const as_query *q,
                          engine_search *es, as_read_body *out, bool *failed)
{
    as_mem *m = shop->mem;
    as_view_cache *ids = shop->cfg->search_ids, *pages = shop->cfg->search_pages;
    as_search_version sv = as_search_snap_version(es->snap);
    const char *ver = as_printf(m, "%lld.%lld", (long long)sv.catalogue, (long long)sv.rank);
    /* one key serves both caches (the page's ids, the page) */
    const char *key = cache_key(shop, "?search", q);
    const char *b;
    size_t len;
    if (as_view_cache_get(ids, m, key, ver, &b, &len)) {
        es->ids = (const int64_t *)(const void *)b; /* as_alloc'd: aligned */
        es->n_ids = len / sizeof(int64_t);
    } else {
        as_search_run(es->snap, m, ask, &es->res);
        es->searched = true;
        es->ids = es->res.ids;
        es->n_ids = es->res.n;
        as_view_cache_put(ids, key, ver, (const char *)es->ids, es->n_ids * sizeof(int64_t));
    }
    es->n_stock = 0;
    if (es->n_ids &&
        as_search_offers_stock(es->snap, shop->store, es->has_read ? &es->read : NULL, m, es->ids,
                               es->n_ids, &es->stock, &es->n_stock) != AS_OK) {
        *failed = true;
        return false;
    }
    if (es->n_stock) qsort(es->stock, es->n_stock, sizeof(*es->stock), stock_cmp);
    as_buf v;
    as_buf_init(&v, m);
    as_buf_puts(&v, ver);
    for (size_t i = 0; i < es->n_stock; i++)
        as_buf_printf(&v, "\n%lld %s %lld", (long long)es->stock[i].product_id,
                      es->stock[i].offer_id, (long long)es->stock[i].stock);
    es->validator = as_buf_str(&v);
    es->page_key = key;
    return as_view_cache_get(pages, m, es->page_key, es->validator, &out->data, &out->len);
}

/* The device and the merchant the search names, from the snapshot when it is
 * of the store's catalogue (no read of the store), else from the store. */
static as_shop_rc search_resolve(as_shop *shop, const as_read_search_in *in,
                                 const engine_search *es, as_device *dev, as_search_ask *ask,
                                 as_problem *p)
{
    const as_search_snap *cat =
        es->snap && es->has_read && as_search_snap_version(es->snap).catalogue == es->read.catalogue
            ? es->snap
            : NULL;
    if (in->device) {
        const as_device *devs = NULL;
        size_t nd = 0;
        if (cat) as_search_snap_devices(cat, &devs, &nd);
        as_shop_rc rc = cat ? (resolve_device_in(shop, devs, nd, in->device, "device", dev, p)
                                   ? AS_SHOP_DONE
                                   : AS_SHOP_REFUSED)
                            : as_read_device(shop, in->device, "device", dev, p);
        if (rc != AS_SHOP_DONE) return rc;
        ask->device = dev;
    }
    if (in->merchant) return resolve_merchant(shop, cat, in->merchant, &ask->of.merchant, p);
    return AS_SHOP_DONE;
}

/* No snapshot: the process's first index is still being built (503 with the
 * wait), or the store failed. */
static as_shop_rc no_snapshot(as_shop *shop, as_read_body *out, as_problem *p)
{
    int wait = shop->index ? as_search_index_retry_after(shop->index) : 0;
    if (wait <= 0) return AS_SHOP_FAILED;
    as_problem_set(p, 503, "SERVICE_UNAVAILABLE", NULL,
                   "The search index is being built; retry shortly.");
    out->retry_after = wait;
    return AS_SHOP_REFUSED;
}

/* The page built (the engine's answer unless the caches gave it already, the
 * stock read unless they read it) and encoded once: answered as it is kept.
 * With the page cache on it is kept under the validator read before the
 * body's data. The data is at least as new as that: if it changed in between,
 * the store's version has moved on for good (versions never return to an
 * earlier value) and the entry is never served. */
static as_shop_rc search_built(as_shop *shop, const as_read_search_in *in, const as_search_ask *ask,
                               engine_search *es, as_read_body *out, as_problem *p)
{
    as_mem *m = shop->mem;
    if (!es->searched) as_search_run(es->snap, m, ask, &es->res);
    as_search_result *r = &es->res;
    if (!es->stock && r->n &&
        as_search_offers_stock(es->snap, shop->store, es->has_read ? &es->read : NULL, m, r->ids,
                               r->n, &es->stock, &es->n_stock) != AS_OK)
        return AS_SHOP_FAILED;
    as_search_apply_stock(r, es->stock, es->n_stock);
    out->data = as_search_body(m, ask, r, in->postcode, &out->len);
    if (!out->data) {
        as_log(shop, AS_LOG_ERR, "a search's response could not be encoded");
        return not_encoded(p);
    }
    as_view_cache *pages = shop->cfg->search_pages;
    if (pages && es->page_key)
        as_view_cache_put(pages, es->page_key, es->validator, out->data, out->len);
    return AS_SHOP_DONE;
}

as_shop_rc as_read_search(as_shop *shop, const as_read_search_in *in, as_read_body *out,
                          as_problem *p)
{
    memset(out, 0, sizeof(*out));
    as_search_ask ask = in->ask;
    engine_search es = {0};
    es.has_read = shop->index != NULL;
    es.snap = shop->index ? as_search_index_get_read(shop->index, shop->store, &es.read)
                          : as_search_snap_build(shop->store);
    as_device dev;
    as_shop_rc rc = search_resolve(shop, in, &es, &dev, &ask, p);
    if (rc == AS_SHOP_DONE && !es.snap) rc = no_snapshot(shop, out, p);
    if (rc != AS_SHOP_DONE) {
        as_search_snap_release(es.snap);
        return rc;
    }
    bool failed = false;
    if (shop->cfg->search_pages && shop->cfg->search_ids &&
        (engine_cached(shop, &ask, in->asked, &es, out, &failed) || failed))
        rc = failed ? AS_SHOP_FAILED : AS_SHOP_DONE;
    else
        rc = search_built(shop, in, &ask, &es, out, p);
    as_search_snap_release(es.snap); /* everything used of it is copied into the body */
    return rc;
}

/* ---- GET /products/{sku} (spec 4.2) ---- */

enum { P_DEVICE, P_DELIVER_BY, P_WEIGHTS, P_N };
static const as_param_rule product_rules[P_N] = {
    [P_DEVICE] = {"device", AS_V_TEXT, 1, 100, NULL},
    [P_DELIVER_BY] = {"deliver_by", AS_V_DATE, 0, 0, NULL},
    [P_WEIGHTS] = {"weights", AS_V_WEIGHTS, 0, 0, NULL},
};
static const as_param_rule sku_rule = {"sku", AS_V_SLUG, 3, 20, NULL};

bool as_read_product_params(as_shop *shop, const char *sku, const as_query *q,
                            as_read_product_in *in, as_problem *p)
{
    as_mem *m = shop->mem;
    as_param v[P_N], skuv;
    if (!as_validate_value(m, &sku_rule, sku, as_today(shop), &skuv, p) ||
        !as_validate_query(m, product_rules, P_N, q, as_today(shop), v, p))
        return false;
    in->sku = sku;
    in->device = param_str(&v[P_DEVICE]);
    in->w = as_param_weights(&v[P_WEIGHTS]);
    in->of = (as_offer_filter){v[P_DELIVER_BY].present ? v[P_DELIVER_BY].num : 0, 0, NULL};
    in->asked = q;
    return true;
}

enum { VIEW_READ_WHOLE = -1 };

/* The view of v, found in snapshot s, with its live part (of s's catalogue). */
static int view_written(as_shop *shop, as_search_view *v, const as_product_live *live,
                        const as_device *dev, const as_weights *w, const as_offer_filter *of,
                        const char **body, size_t *n)
{
    if (!as_search_view_live(v, live)) return VIEW_READ_WHOLE;
    as_ranking r;
    as_rank_offers(shop->mem, &v->p, w, of, as_today(shop), &r);
    *body = as_view_product_from(shop->mem, &v->kept, &v->p, &r, dev, n);
    return AS_OK;
}

/* The view from the search index (docs/search.md, "Product views"): the parts
 * only a catalogue load changes as the index keeps them; the offers' stock,
 * the questions and the index's versions read live, in one statement, and
 * used only with a snapshot of the catalogue those versions name, so a view
 * never mixes two catalogues. The process's snapshot is tried first: when it
 * has the sku, the live part is read by the product's id (no lookup of the
 * sku in the database). Otherwise (an unknown sku, or a snapshot of another
 * catalogue) the live part is read by sku and the snapshot taken for its
 * versions. VIEW_READ_WHOLE when the process has no index, or its snapshot
 * has not the catalogue the store has now (a new one still being built) or
 * not this product. */
static int view_from_index(as_shop *shop, const char *sku, const as_device *dev,
                           const as_weights *w, const as_offer_filter *of, const char **body,
                           size_t *n)
{
    if (!shop->index || !shop->cfg->views_from_index) return VIEW_READ_WHOLE;
    as_product_live live;
    as_search_view v;
    as_search_snap *s = as_search_index_current(shop->index);
    if (s && as_search_view_find(s, shop->mem, sku, dev, &v)) {
        /* unmoved since the index's build: the versions alone are read */
        as_search_version now;
        if (as_store_has_live(shop->store) && as_store_search_version(shop->store, &now) == AS_OK &&
            as_search_view_live_kept(s, shop->store, &now, &v, shop->mem, &live)) {
            int rc = view_written(shop, &v, &live, dev, w, of, body, n);
            as_search_snap_release(s);
            return rc;
        }
        int rc = as_store_product_live(shop->store, shop->mem, sku, v.p.id, &live);
        bool ours = rc == AS_OK && live.product_id == v.p.id &&
                    as_search_snap_version(s).catalogue == live.version.catalogue;
        if (ours) rc = view_written(shop, &v, &live, dev, w, of, body, n);
        as_search_snap_release(s); /* the body is a copy */
        if (ours || rc != AS_OK) return rc;
    } else {
        as_search_snap_release(s);
    }
    /* another catalogue, or a sku the snapshot has not */
    int rc = as_store_product_live(shop->store, shop->mem, sku, 0, &live);
    if (rc != AS_OK) return rc;
    if (!live.product_id) return AS_ENOTFOUND;
    s = as_search_index_at(shop->index, shop->store, &live.version);
    if (!s) return VIEW_READ_WHOLE;
    rc = VIEW_READ_WHOLE;
    if (as_search_snap_version(s).catalogue == live.version.catalogue &&
        as_search_view_find(s, shop->mem, sku, dev, &v))
        rc = view_written(shop, &v, &live, dev, w, of, body, n);
    as_search_snap_release(s);
    return rc;
}

/* The view read whole from the store, in one statement. A kept view
 * (AgentShopViewCache) is served while the product's version is the one it
 * was built at: the same data, the same query, the same day (delivery dates).
 * The version is read alone only for a view the cache holds; otherwise it
 * comes with the data, from the same read. */
static int view_from_store(as_shop *shop, const char *sku, const as_query *q, const as_device *dev,
                           const as_weights *w, const as_offer_filter *of, const char **body,
                           size_t *n)
{
    as_mem *m = shop->mem;
    as_view_cache *cache = as_store_has_version(shop->store) ? shop->cfg->product_views : NULL;
    const char *key = cache ? cache_key(shop, sku, q) : NULL;
    if (key && as_view_cache_holds(cache, key)) {
        const char *version = NULL;
        int rc = as_store_product_version(shop->store, m, sku, &version);
        if (rc == AS_OK && as_view_cache_get(cache, m, key, version, body, n)) return AS_OK;
        if (rc != AS_OK) return rc;
    }
    as_product p;
    int rc = as_store_product_by_sku(shop->store, m, sku, dev ? dev->id : 0, &p);
    if (rc != AS_OK) return rc;
    as_ranking r;
    as_rank_offers(m, &p, w, of, as_today(shop), &r);
    *body = as_view_product_text(m, &p, &r, dev, n);
    if (*body && key && p.version) as_view_cache_put(cache, key, p.version, *body, *n);
    return AS_OK;
}

as_shop_rc as_read_product(as_shop *shop, const as_read_product_in *in, as_read_body *out,
                           as_problem *p)
{
    memset(out, 0, sizeof(*out));
    as_device dev;
    const as_device *d = NULL;
    if (in->device) {
        as_shop_rc rc = as_read_device(shop, in->device, "device", &dev, p);
        if (rc != AS_SHOP_DONE) return rc;
        d = &dev;
    }
    int rc = view_from_index(shop, in->sku, d, &in->w, &in->of, &out->data, &out->len);
    if (rc == VIEW_READ_WHOLE)
        rc = view_from_store(shop, in->sku, in->asked, d, &in->w, &in->of, &out->data, &out->len);
    if (rc == AS_ENOTFOUND) {
        as_problem_set(p, 404, "NOT_FOUND", NULL,
                       as_printf(shop->mem, "No product with sku '%s'.", in->sku));
        return AS_SHOP_REFUSED;
    }
    if (rc != AS_OK) return AS_SHOP_FAILED;
    if (!out->data) {
        as_log(shop, AS_LOG_ERR, "the view of product %s could not be encoded", in->sku);
        return not_encoded(p);
    }
    return AS_SHOP_DONE;
}

/* ---- GET /devices (spec 4.3) ---- */

static const as_param_rule devices_rules[] = {
    {"q", AS_V_TEXT, 1, 200, NULL},
    {"limit", AS_V_INT, 1, 100, NULL},
};

bool as_read_devices_params(as_shop *shop, const as_query *q, as_read_devices_in *in, as_problem *p)
{
    as_param v[2];
    if (!as_validate_query(shop->mem, devices_rules, 2, q, as_today(shop), v, p)) return false;
    in->q = param_str(&v[0]);
    in->limit = (size_t)(v[1].present ? v[1].num : (v[0].present ? 10 : 100));
    return true;
}

as_shop_rc as_read_devices(as_shop *shop, const as_read_devices_in *in, as_device_match **out,
                           size_t *n)
{
    as_device *devs;
    size_t nd;
    if (as_store_devices(shop->store, shop->mem, &devs, &nd) != AS_OK) return AS_SHOP_FAILED;
    *n = as_devices_match(shop->mem, devs, nd, in->q, out);
    return AS_SHOP_DONE;
}

/* ---- GET /devices/{slug}/compatible (spec 4.4) ---- */

/* The left-out parts listed (the rest counted), as search lists its own. */
#define COMPAT_MAX_EXCLUDED 100

static const as_param_rule compatible_rules[] = {
    {"part_type", AS_V_ENUM, 1, 50, as_part_type_ids},
    {"limit", AS_V_INT, 1, AS_PAGE_LIMIT_MAX, NULL},
    {"offset", AS_V_INT, 0, AS_PAGE_WINDOW - 1, NULL},
};
static const as_param_rule slug_rule = {"slug", AS_V_TEXT, 1, 100, NULL};

bool as_read_compatible_params(as_shop *shop, const char *slug, const as_query *q,
                               as_read_compatible_in *in, as_problem *p)
{
    as_mem *m = shop->mem;
    as_param v[3], sv;
    if (!as_validate_value(m, &slug_rule, slug, as_today(shop), &sv, p) ||
        !as_validate_query(m, compatible_rules, 3, q, as_today(shop), v, p) ||
        !as_validate_page(m, &v[1], &v[2], &in->page, p))
        return false;
    in->slug = slug;
    in->part_type = param_str(&v[0]);
    return true;
}

/* Part type, then buyable first, then the best offer's score, then sku: the
 * order of search results under the default weights (docs/ranking.md). */
static int by_type_then_score(const void *a, const void *b)
{
    const as_compatible_part *x = a, *y = b;
    int c = strcmp(x->p->part_type, y->p->part_type);
    if (c) return c;
    bool bx = x->r.n_ranked > 0, by = y->r.n_ranked > 0;
    if (bx != by) return bx ? -1 : 1;
    int sx = bx ? x->r.ranked[0].score : 0, sy = by ? y->r.ranked[0].score : 0;
    if (sx != sy) return sy - sx;
    return strcmp(x->p->sku, y->p->sku);
}

/* Why a compatible part is left out (contradicted, or measured not to fit),
 * or NULL to keep it. Search says the same of its own matches in
 * core/search/as_search_filter.c. */
static const char *compat_exclusion(as_mem *m, const as_product *p, const as_device *dev)
{
    if (p->verif_status == AS_VERIF_CONTRADICTED)
        return as_printf(m, "Measurements contradict the merchant's claims: %s",
                         p->verif_note ? p->verif_note : "see the product's verification rows");
    if (as_fit_of(p) == AS_FIT_DOES_NOT_FIT)
        return as_printf(m, "Does not fit %s: %s", dev->name, as_fit_summary(m, p->compat));
    return NULL;
}

/* The page's parts ranked (default weights) and in the list's order; the
 * left out with their reasons, into excluded. */
static size_t compat_parts(as_shop *shop, const as_device *dev, const as_compat_page *pg,
                           as_compatible_part *hits, json_t *excluded)
{
    as_mem *m = shop->mem;
    as_weights w;
    as_weights_default(&w);
    static const as_offer_filter none = {0, 0, NULL};
    size_t nh = 0;
    for (size_t i = 0; i < pg->n; i++) {
        if (compat_exclusion(m, &pg->parts[i], dev)) continue; /* changed since it was counted */
        hits[nh].p = &pg->parts[i];
        as_rank_offers_brief(m, &pg->parts[i], &w, &none, as_today(shop), &hits[nh++].r);
    }
    qsort(hits, nh, sizeof(*hits), by_type_then_score);
    for (size_t i = 0; i < pg->n_excluded; i++) {
        const char *why = pg->why ? pg->why[i] : compat_exclusion(m, &pg->excluded[i], dev);
        if (why) json_array_append_new(excluded, as_view_excluded(m, &pg->excluded[i], why));
    }
    return nh;
}

/* The page from the process's search index when it has one of the store's
 * catalogue (*held: that snapshot, to release once the body is written), with
 * the page's stock live; else from the store. False when storage failed. */
static bool compat_page(as_shop *shop, const as_device *dev, const as_search_filter *f,
                        const as_page *page, as_compat_page *out, as_search_snap **held)
{
    as_mem *m = shop->mem;
    as_search_version read;
    as_search_snap *s =
        shop->index ? as_search_index_get_read(shop->index, shop->store, &read) : NULL;
    *held = NULL;
    if (!s || as_search_snap_version(s).catalogue != read.catalogue) {
        as_search_snap_release(s);
        return as_store_compatible(shop->store, m, f, page->limit, page->offset,
                                   COMPAT_MAX_EXCLUDED, out) == AS_OK;
    }
    as_search_compatible(s, m, dev, f->part_type, page->limit, page->offset, COMPAT_MAX_EXCLUDED,
                         out);
    int64_t *ids = as_alloc(m, (out->n + 1) * sizeof(*ids));
    for (size_t i = 0; i < out->n; i++)
        ids[i] = out->parts[i].id;
    as_offer_stock *st = NULL;
    size_t nst = 0;
    if (out->n &&
        as_search_offers_stock(s, shop->store, &read, m, ids, out->n, &st, &nst) != AS_OK) {
        as_search_snap_release(s);
        return false;
    }
    as_search_apply_stock_to(out->parts, out->n, st, nst);
    *held = s;
    return true;
}

as_shop_rc as_read_compatible(as_shop *shop, const as_read_compatible_in *in, json_t **out,
                              as_problem *p)
{
    as_mem *m = shop->mem;
    as_device dev;
    int rc = as_store_device_by_slug(shop->store, m, in->slug, &dev);
    if (rc == AS_ENOTFOUND) {
        as_problem_set(p, 404, "NOT_FOUND", NULL,
                       as_printf(m,
                                 "No device with slug '%s'; find one with GET "
                                 "/v1/devices?q=",
                                 in->slug));
        return AS_SHOP_REFUSED;
    }
    if (rc != AS_OK) return AS_SHOP_FAILED;
    as_search_filter f = {.device_id = dev.id, .part_type = in->part_type};
    as_compat_page pg;
    as_search_snap *held;
    if (!compat_page(shop, &dev, &f, &in->page, &pg, &held)) return AS_SHOP_FAILED;
    as_compatible_part *hits = as_alloc(m, (pg.n + 1) * sizeof(*hits));
    json_t *excluded = json_array();
    size_t nh = compat_parts(shop, &dev, &pg, hits, excluded);
    as_compat_paging paging = {pg.count, in->page.limit, in->page.offset, pg.excluded_count};
    *out = as_view_compatible(m, &dev, f.part_type, hits, nh, excluded, &paging);
    as_search_snap_release(held); /* the view is a copy */
    return AS_SHOP_DONE;
}
