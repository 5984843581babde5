/* Loading a catalogue (the JSON files of sql/demo) into the database in one transaction.
 * Core derives what is derived (verification status, agent-only prices); the
 * data files hold only what a merchant or the lab said. */
#include "as_load.h"

#include <apr_strings.h>
#include <string.h>
#include <time.h>

#include "as_rank.h"
#include "as_validate.h"
#include "as_verify.h"

typedef struct loader {
    as_db *db;
    apr_pool_t *p;
    apr_hash_t *devices; /* slug -> id string */
    apr_hash_t *merchants;
    const char *err;
} loader;

static const char *jstr(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const char *jdump(loader *L, json_t *v)
{
    if (!v || json_is_null(v)) return NULL;
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
    const char *r = apr_pstrdup(L->p, s);
    free(s);
    return r;
}

static const char *num(loader *L, json_t *v)
{
    return apr_psprintf(L->p, "%.10g", json_number_value(v));
}

static const char *i64(loader *L, json_int_t v)
{
    return apr_psprintf(L->p, "%" APR_INT64_T_FMT, (apr_int64_t)v);
}

static int fail(loader *L, const char *what, const char *item)
{
    L->err = apr_psprintf(L->p, "%s%s%s", what, item ? ": " : "", item ? item : "");
    return -1;
}

static int exec(loader *L, const char *label, int n, const char **args, const char *item)
{
    if (as_db_exec(L->db, label, NULL, n, args))
        return fail(L,
                    apr_psprintf(L->p, "%s failed (%s)", label,
                                 apr_dbd_error(L->db->driver, L->db->handle, -1)),
                    item);
    return 0;
}

static json_t *load_file(apr_pool_t *p, const char *dir, const char *name, const char **err)
{
    json_error_t e;
    const char *path = apr_psprintf(p, "%s/%s", dir, name);
    json_t *v = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (!v) {
        *err = apr_psprintf(p, "%s:%d: %s", path, e.line, e.text);
        return NULL;
    }
    if (!json_is_array(v)) {
        json_decref(v);
        *err = apr_psprintf(p, "%s: expected a JSON array", path);
        return NULL;
    }
    return v;
}

void as_load_read(apr_pool_t *p, const char *dir, as_catalogue_files *out)
{
    out->err = NULL;
    out->merchants = load_file(p, dir, "merchants.json", &out->err);
    out->devices = out->merchants ? load_file(p, dir, "devices.json", &out->err) : NULL;
    out->products = out->devices ? load_file(p, dir, "products.json", &out->err) : NULL;
    if (!out->products) as_load_release(out);
}

void as_load_release(as_catalogue_files *files)
{
    json_decref(files->merchants);
    json_decref(files->devices);
    json_decref(files->products);
    files->merchants = files->devices = files->products = NULL;
}

static int load_merchants(loader *L, json_t *arr)
{
    size_t i;
    json_t *m;
    json_array_foreach(arr, i, m)
    {
        const char *id = jstr(m, "id");
        if (!id || !jstr(m, "name")) return fail(L, "merchant without id or name", NULL);
        const char *a[] = {id,
                           jstr(m, "name"),
                           jstr(m, "country"),
                           jstr(m, "city"),
                           num(L, json_object_get(m, "on_time_rate")),
                           num(L, json_object_get(m, "accuracy_rate"))};
        if (exec(L, "as_insert_merchant", 6, a, id)) return -1;
        apr_hash_set(L->merchants, id, APR_HASH_KEY_STRING, id);
    }
    return 0;
}

static int load_devices(loader *L, json_t *arr)
{
    size_t i;
    json_t *d;
    json_array_foreach(arr, i, d)
    {
        const char *slug = jstr(d, "slug");
        if (!slug) return fail(L, "device without slug", NULL);
        const char *aliases = "";
        size_t k;
        json_t *al;
        json_array_foreach(json_object_get(d, "aliases"), k, al) aliases =
            apr_psprintf(L->p, "%s%s%s", aliases, k ? " " : "", json_string_value(al));
        const char *id = i64(L, (json_int_t)i + 1);
        const char *a[] = {id, slug, jstr(d, "name"), jstr(d, "brand"), jstr(d, "kind"), aliases};
        if (exec(L, "as_insert_device", 6, a, slug)) return -1;
        apr_hash_set(L->devices, slug, APR_HASH_KEY_STRING, id);
    }
    return 0;
}

/* Specs: parsed first, because core derives the product's verification status
 * from them; inserted after the product row. */
typedef struct specs {
    as_spec_row *rows;
    size_t n;
    const char *status, *note;
} specs;

static int parse_specs(loader *L, json_t *p, const char *sku, bool measured, specs *out)
{
    json_t *arr = json_object_get(p, "specs");
    size_t i;
    json_t *s;
    out->n = json_array_size(arr);
    out->rows = apr_pcalloc(L->p, (out->n + 1) * sizeof(as_spec_row));
    json_array_foreach(arr, i, s)
    {
        as_spec_row *r = &out->rows[i];
        r->spec = jstr(s, "spec");
        r->label = jstr(s, "label");
        r->kind = jstr(s, "kind");
        r->unit = jstr(s, "unit");
        r->claimed = jdump(L, json_object_get(s, "claimed"));
        r->measured = measured ? jdump(L, json_object_get(s, "measured")) : NULL;
        if (!r->spec || !r->label || !r->kind) return fail(L, "spec row incomplete", sku);
        json_t *tol = json_object_get(s, "tolerance_pct");
        r->tolerance_pct = json_is_number(tol)                   ? json_number_value(tol)
                           : strcmp(r->kind, "performance") == 0 ? 2.0
                                                                 : 0.0;
    }
    as_arena *ar = as_arena_create();
    as_mem m = as_arena_mem(ar);
    const char *nt = NULL;
    out->status = as_verification_status(&m, out->rows, out->n, measured, &nt);
    out->note = nt ? apr_pstrdup(L->p, nt) : NULL;
    as_arena_destroy(ar);
    return 0;
}

static int insert_specs(loader *L, const char *pid, const specs *sp)
{
    for (size_t i = 0; i < sp->n; i++) {
        const as_spec_row *r = &sp->rows[i];
        const char *a[] = {pid,
                           i64(L, (json_int_t)i),
                           r->spec,
                           r->label,
                           r->kind,
                           r->unit,
                           r->claimed,
                           r->measured,
                           apr_psprintf(L->p, "%.10g", r->tolerance_pct)};
        if (exec(L, "as_insert_spec", 9, a, r->spec)) return -1;
    }
    return 0;
}

static int load_offers(loader *L, json_t *p, const char *pid, const char *sku)
{
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(p, "offers"), i, o)
    {
        const char *mid = jstr(o, "merchant");
        if (!mid || !apr_hash_get(L->merchants, mid, APR_HASH_KEY_STRING))
            return fail(L, "offer names an unknown merchant", sku);
        json_int_t retail = json_integer_value(json_object_get(o, "retail_price_cents"));
        if (retail <= 0) return fail(L, "offer without a retail price", sku);
        const char *a[] = {jstr(o, "offer_id"),
                           pid,
                           mid,
                           i64(L, (json_int_t)as_demo_agent_price_cents(retail)),
                           i64(L, retail),
                           "Agent-only price (demo)",
                           i64(L, json_integer_value(json_object_get(o, "delivery_days"))),
                           i64(L, json_integer_value(json_object_get(o, "stock")))};
        if (exec(L, "as_insert_offer", 8, a, sku)) return -1;
    }
    return 0;
}

static int load_compat(loader *L, json_t *p, const char *pid, const char *sku)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(p, "compatibility"), i, c)
    {
        const char *slug = jstr(c, "device");
        const char *did = slug ? apr_hash_get(L->devices, slug, APR_HASH_KEY_STRING) : NULL;
        if (!did) return fail(L, apr_psprintf(L->p, "unknown device '%s'", slug), sku);
        json_t *ev = json_object_get(c, "evidence");
        const char *a[] = {did, pid, jstr(c, "fit_status"), jdump(L, ev ? ev : json_array()),
                           jstr(c, "checked_at")};
        if (!a[3]) a[3] = "[]";
        if (exec(L, "as_insert_compat", 5, a, sku)) return -1;
    }
    return 0;
}

static int load_products(loader *L, json_t *arr)
{
    size_t i;
    json_t *p;
    json_array_foreach(arr, i, p)
    {
        const char *sku = jstr(p, "sku");
        if (!sku || strlen(sku) < 3 || strlen(sku) > 20) return fail(L, "bad sku", sku);
        const char *cat = jstr(p, "category"), *pt = jstr(p, "part_type");
        if (!cat || !as_category_label(cat)) return fail(L, "unknown category", sku);
        if (!pt || !as_part_type_known(pt)) return fail(L, "unknown part_type", sku);
        const char *pid = i64(L, (json_int_t)i + 1);
        json_t *ver = json_object_get(p, "verification");
        bool measured = json_is_object(ver);
        specs sp;
        if (parse_specs(L, p, sku, measured, &sp)) return -1;
        json_t *src = json_object_get(p, "source"), *perf = json_object_get(p, "performance");
        json_t *ot = json_object_get(perf, "on_time_rate_90d");
        const char *a[] = {
            pid,
            sku,
            jstr(p, "gtin"),
            jstr(p, "name"),
            jstr(p, "brand"),
            cat,
            pt,
            jstr(p, "description"),
            jdump(L, json_object_get(p, "image_urls")),
            jstr(src, "url"),
            jdump(L, json_object_get(src, "notes")),
            jstr(src, "checked_at"),
            jstr(src, "product_id"),
            jstr(src, "availability"),
            "1",
            sp.status,
            sp.note,
            measured ? jstr(ver, "measured_at") : NULL,
            measured ? jstr(ver, "node") : NULL,
            i64(L, measured ? json_integer_value(json_object_get(ver, "sample_size")) : 0),
            json_is_number(ot) ? num(L, ot) : NULL,
            num(L, json_object_get(perf, "return_rate")),
            num(L, json_object_get(perf, "wrong_item_rate")),
            i64(L, json_integer_value(json_object_get(perf, "agent_orders_90d"))),
            jdump(L, json_object_get(perf, "orders_per_week")),
        };
        if (!a[8]) a[8] = "[]";
        if (!a[10]) a[10] = "[]";
        if (!a[24]) a[24] = "[]";
        if (exec(L, "as_insert_product", 25, a, sku)) return -1;
        if (insert_specs(L, pid, &sp) || load_offers(L, p, pid, sku) || load_compat(L, p, pid, sku))
            return -1;
    }
    return 0;
}

static int64_t count_products(as_db *db)
{
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    int64_t n = -1;
    if (as_db_select(db, "as_count_products", &res, 0, NULL)) return -1;
    while (as_db_next(db, res, &row))
        n = apr_atoi64(as_db_col(db, row, 0));
    return n;
}

apr_status_t as_load_catalogue(as_db *db, const as_catalogue_files *files, json_t **summary,
                               const char **err)
{
    loader L = {db, db->pool, apr_hash_make(db->pool), apr_hash_make(db->pool), NULL};
    int64_t existing = count_products(db);
    if (existing < 0) {
        *err = "cannot count products (is the schema loaded?)";
        return APR_EGENERAL;
    }
    if (existing > 0) {
        *summary =
            json_pack("{s:b, s:b, s:I}", "loaded", 0, "kept", 1, "products", (json_int_t)existing);
        return APR_SUCCESS;
    }
    if (!files->products) {
        *err = files->err ? files->err : "the catalogue files were not read";
        return APR_EGENERAL;
    }
    json_t *ms = files->merchants, *ds = files->devices, *ps = files->products;
    apr_dbd_transaction_t *t = NULL;
    int ok = as_db_begin_t(db, &t) == 0;
    if (ok) ok = !load_merchants(&L, ms) && !load_devices(&L, ds) && !load_products(&L, ps);
    if (ok && as_db_rank_rebuild(db, &L.err) != APR_SUCCESS) ok = 0;
    if (ok) {
        const char *a[] = {"catalogue_version", apr_psprintf(L.p, "%ld", (long)time(NULL))};
        ok = !exec(&L, "as_meta_set", 2, a, NULL);
    }
    if (t && as_db_end_t(db, t, ok) != 0 && ok) {
        ok = 0;
        L.err = "commit failed";
    }
    if (ok)
        *summary =
            json_pack("{s:b, s:b, s:I, s:I, s:I}", "loaded", 1, "kept", 0, "products",
                      (json_int_t)json_array_size(ps), "merchants", (json_int_t)json_array_size(ms),
                      "devices", (json_int_t)json_array_size(ds));
    if (!ok) {
        *err = L.err ? L.err : "loading the catalogue failed";
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}
