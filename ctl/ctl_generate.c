/* A synthetic catalogue for scale tests (agentshopctl catalogue generate):
 * deterministic for a seed, with the shape of the demo catalogue — every
 * category and part type, several merchants per product with spread prices
 * and delivery times, devices with compatibility, and the three verification
 * states — written by plain INSERTs of its own (prepared on its connection
 * alone: the server never runs them), in one transaction; verification and
 * the search order table by core's rules, as an import derives them. */
#include "ctl_generate.h"

#include <apr_strings.h>
#include <string.h>

#include "as_db_labels.h"
#include "as_verify.h"
#include "ctl_demo_price.h"

/* ---- statements: the generator's own, prepared on its connection alone ---- */

#define L_GEN_COUNT_PRODUCTS "gen_count_products"
#define L_GEN_MERCHANT "gen_merchant"
#define L_GEN_PRODUCT "gen_product"
#define L_GEN_SPEC "gen_spec"
#define L_GEN_OFFER "gen_offer"
#define L_GEN_DEVICE "gen_device"
#define L_GEN_VERIFICATION "gen_verification"
#define L_GEN_COMPAT_ONCE "gen_compat_once"

static const struct {
    const char *label, *sql; /* the same text on SQLite and PostgreSQL */
} gen_stmts[] = {
    {L_GEN_COUNT_PRODUCTS, "SELECT COUNT(*) FROM products"},
    {L_GEN_MERCHANT, "INSERT INTO merchants (id, name, country, city, on_time_rate, accuracy_rate) "
                     "VALUES (%s, %s, %s, %s, %lf, %lf)"},
    {L_GEN_PRODUCT,
     "INSERT INTO products (id, sku, gtin, name, brand, category, part_type, description, "
     "image_urls, source_url, source_notes, source_checked_at, source_product_id, availability, "
     "is_demo, verif_status, verif_note, measured_at, measured_node, sample_size, "
     "on_time_rate_90d, return_rate, wrong_item_rate, agent_orders_90d, orders_per_week) VALUES "
     "(%lld, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %lld, %s, %s, %s, %s, %lld, "
     "%lf, %lf, %lf, %lld, %s)"},
    {L_GEN_SPEC,
     "INSERT INTO product_specs (product_id, pos, spec, label, kind, unit, claimed, measured, "
     "tolerance_pct) VALUES (%lld, %lld, %s, %s, %s, %s, %s, %s, %lf)"},
    {L_GEN_OFFER,
     "INSERT INTO offers (id, product_id, merchant_id, price_cents, retail_price_cents, "
     "price_label, delivery_days, stock) VALUES (%s, %lld, %s, %lld, %lld, %s, %lld, %lld)"},
    {L_GEN_DEVICE,
     "INSERT INTO devices (id, slug, name, brand, kind, aliases) VALUES (%lld, %s, %s, %s, %s, "
     "%s)"},
    {L_GEN_VERIFICATION, "UPDATE products SET verif_status = %s, verif_note = %s WHERE id = %lld"},
    {L_GEN_COMPAT_ONCE,
     "INSERT INTO compat (device_id, product_id, fit_status, evidence, checked_at) VALUES "
     "(%lld, %lld, %s, %s, %s) ON CONFLICT (device_id, product_id) DO NOTHING"},
};

static int prepare_gen(as_db *db)
{
    for (size_t i = 0; i < sizeof(gen_stmts) / sizeof(gen_stmts[0]); i++)
        if (as_db_prepare(db, gen_stmts[i].label, gen_stmts[i].sql, NULL)) return -1;
    return 0;
}

typedef struct rng {
    apr_uint64_t s;
} rng;

static apr_uint64_t next(rng *r) /* xorshift64* */
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ULL;
}

static int pick(rng *r, int n)
{
    return (int)(next(r) % (apr_uint64_t)n);
}

static double unit(rng *r)
{
    return (double)(next(r) >> 11) / 9007199254740992.0;
}

typedef struct spec_tpl {
    const char *spec, *label, *kind, *unit;
    double lo, hi; /* numeric range; lo == hi == 0: a yes/no claim */
} spec_tpl;

typedef struct part_tpl {
    const char *category, *part_type, *noun, *device_kind; /* device_kind NULL: none */
    int price_lo, price_hi;                                  /* retail cents */
    spec_tpl specs[3];
} part_tpl;

static const part_tpl parts[] = {
    {"hand-soap", "hand-soap", "Hand Wash", NULL, 149, 999,
     {{"volume_ml", "Volume", "performance", "ml", 250, 1000},
      {"vegan", "Vegan", "categorical", NULL, 0, 0},
      {"pack_count", "Bottles per pack", "categorical", NULL, 1, 6}}},
    {"air-filters", "filter", "HEPA Filter", "air-purifier", 1499, 8999,
     {{"filter_efficiency_pct", "Filtration efficiency (0.3 um)", "performance", "%", 95, 99.97},
      {"diameter_mm", "Filter diameter", "categorical", "mm", 150, 320},
      {"lifetime_months", "Change interval", "info", "months", 3, 12}}},
    {"vacuum-parts", "filter", "Vacuum Filter", "vacuum-cleaner", 799, 3999,
     {{"filter_efficiency_pct", "Filtration efficiency (0.3 um)", "performance", "%", 90, 99.9},
      {"diameter_mm", "Filter diameter", "categorical", "mm", 60, 140},
      {"washable", "Washable", "categorical", NULL, 0, 0}}},
    {"vacuum-parts", "dust-bag", "Dust Bags", "vacuum-cleaner", 599, 2499,
     {{"capacity_l", "Bag capacity", "performance", "l", 1, 5},
      {"pack_count", "Bags per pack", "categorical", NULL, 4, 12},
      {"washable", "Washable", "categorical", NULL, 0, 0}}},
    {"vacuum-parts", "battery", "Vacuum Battery", "vacuum-cleaner", 2999, 12999,
     {{"capacity_mah", "Capacity", "performance", "mAh", 2000, 6000},
      {"voltage_v", "Voltage", "categorical", "V", 18, 26},
      {"charge_indicator", "Charge level indicator", "categorical", NULL, 0, 0}}},
    {"vacuum-parts", "accessory-kit", "Accessory Kit", "vacuum-cleaner", 1499, 4999,
     {{"piece_count", "Number of pieces", "categorical", NULL, 3, 12},
      {"weight_g", "Weight", "info", "g", 200, 900},
      {"washable", "Washable", "categorical", NULL, 0, 0}}},
    {"coffee-kitchen", "descaler", "Descaler", "coffee-machine", 499, 1999,
     {{"volume_ml", "Volume", "performance", "ml", 250, 1000},
      {"doses", "Descaling cycles", "categorical", NULL, 2, 8},
      {"biodegradable", "Biodegradable", "categorical", NULL, 0, 0}}},
    {"coffee-kitchen", "jug-filter", "Water Filter Cartridges", "water-jug", 699, 3999,
     {{"lifetime_l", "Filter capacity per cartridge", "performance", "l", 100, 200},
      {"pack_count", "Cartridges per pack", "categorical", NULL, 1, 12},
      {"adds_magnesium", "Adds magnesium", "categorical", NULL, 0, 0}}},
    {"coffee-kitchen", "filter", "Coffee Machine Water Filter", "coffee-machine", 999, 3499,
     {{"lifetime_l", "Filter capacity per cartridge", "performance", "l", 40, 60},
      {"pack_count", "Filters per pack", "categorical", NULL, 1, 4},
      {"lifetime_months", "Change interval", "info", "months", 1, 3}}},
    {"printer-ink", "toner", "Toner Cartridge", "printer", 3999, 15999,
     {{"page_yield", "Page yield (ISO/IEC 24711)", "performance", "pages", 1200, 9000},
      {"chip", "Chip fitted", "categorical", NULL, 0, 0},
      {"toner_weight_g", "Toner weight", "info", "g", 60, 300}}},
    {"printer-ink", "ink-cartridge", "Ink Cartridge", "printer", 1299, 5999,
     {{"page_yield", "Page yield (ISO/IEC 24711)", "performance", "pages", 200, 2500},
      {"volume_ml", "Ink volume", "performance", "ml", 5, 60},
      {"xl", "High-capacity (XL)", "categorical", NULL, 0, 0}}},
    {"chargers-cables", "charger", "USB-C Charger", "laptop", 1499, 7999,
     {{"power_w", "Maximum output power", "performance", "W", 20, 140},
      {"gan", "GaN technology", "categorical", NULL, 0, 0},
      {"ports", "Ports", "categorical", NULL, 1, 4}}},
    {"chargers-cables", "cable", "USB-C Cable", "phone", 599, 2999,
     {{"length_m", "Length", "performance", "m", 0.5, 3},
      {"max_power_w", "Maximum charging power", "performance", "W", 15, 240},
      {"braided", "Braided", "categorical", NULL, 0, 0}}},
    {"batteries", "battery", "Tool Battery", "cordless-tool", 3999, 14999,
     {{"capacity_mah", "Capacity", "performance", "mAh", 1500, 8000},
      {"voltage_v", "Voltage", "categorical", "V", 12, 36},
      {"charge_indicator", "Charge level indicator", "categorical", NULL, 0, 0}}},
    {"batteries", "cell", "Rechargeable AA Cells", NULL, 599, 2499,
     {{"capacity_mah", "Capacity", "performance", "mAh", 1900, 2800},
      {"pack_count", "Cells per pack", "categorical", NULL, 2, 8},
      {"rechargeable", "Rechargeable", "categorical", NULL, 0, 0}}},
};
#define N_PARTS (sizeof(parts) / sizeof(parts[0]))

static const char *const brands[] = {
    "Aldermoor", "Brightvale", "Corvell",  "Dunstan",  "Eldrin",   "Fenwick",  "Galloway",
    "Harwell",   "Istra",      "Juniper",  "Kestral",  "Lindqvist", "Marlow",  "Norrland",
    "Ostby",     "Pellham",    "Quintor",  "Redcliff", "Solberg",  "Thorne",   "Ulvik",
    "Varenne",   "Westbrook",  "Yarrow",   "Zandvoort"};
static const char *const series[] = {"Pro", "Max", "Eco", "Plus", "Ultra", "Lite", "Prime",
                                     "Active", "Select", "Classic", "Fresh", "Power"};
static const char *const kinds[] = {"vacuum-cleaner", "air-purifier", "coffee-machine",
                                    "water-jug",      "printer",      "phone",
                                    "laptop",         "cordless-tool"};
static const struct {
    const char *id, *name, *country, *city;
} merchants[] = {
    {"g-amsterdam", "Grachtenwinkel", "NL", "Amsterdam"}, {"g-utrecht", "Domstad Supplies", "NL", "Utrecht"},
    {"g-rotterdam", "Maashaven Huis", "NL", "Rotterdam"}, {"g-groningen", "Noorderwaren", "NL", "Groningen"},
    {"g-antwerp", "Scheldemarkt", "BE", "Antwerpen"},     {"g-ghent", "Gentse Voorraad", "BE", "Gent"},
    {"g-liege", "Meuse Fournitures", "BE", "Liege"},      {"g-cologne", "Rheinlager", "DE", "Koeln"},
    {"g-hamburg", "Elbe Handel", "DE", "Hamburg"},        {"g-munich", "Isar Versand", "DE", "Muenchen"},
    {"g-leipzig", "Messestadt Shop", "DE", "Leipzig"},    {"g-bremen", "Weserkontor", "DE", "Bremen"},
};
#define N_MERCHANTS (sizeof(merchants) / sizeof(merchants[0]))

typedef struct gen {
    as_db *db;
    apr_pool_t *p;
    rng r;
    const char *err;
    const char *checked_at;
} gen;

static const char *i64(gen *g, apr_int64_t v)
{
    return apr_psprintf(g->p, "%" APR_INT64_T_FMT, v);
}

static int exec(gen *g, const char *label, int n, const char **args)
{
    if (as_db_exec(g->db, label, NULL, n, args) == 0) return 0;
    g->err = apr_psprintf(g->p, "%s failed", label);
    return -1;
}

static const char *num(gen *g, double v, int decimals)
{
    return apr_psprintf(g->p, "%.*f", decimals, v);
}

/* A claim and (unless pending) a measurement; contradicted products fall short
 * on their first performance row by 8 to 15 percent. */
static int spec_rows(gen *g, apr_pool_t *tp, const part_tpl *t, const char *pid, int state,
                     const char **status, const char **note)
{
    as_spec_row rows[3];
    for (int i = 0; i < 3; i++) {
        const spec_tpl *s = &t->specs[i];
        as_spec_row *r = &rows[i];
        memset(r, 0, sizeof(*r));
        r->spec = s->spec;
        r->label = s->label;
        r->kind = s->kind;
        r->unit = s->unit;
        r->tolerance_pct = strcmp(s->kind, "performance") == 0 ? 2 : 0;
        int integral = s->hi >= 10;
        if (s->lo == 0 && s->hi == 0) {
            r->claimed = pick(&g->r, 3) ? "true" : "false";
            r->measured = state ? r->claimed : NULL;
        } else {
            double c = s->lo + unit(&g->r) * (s->hi - s->lo);
            r->claimed = num(g, c, integral ? 0 : 2);
            double m = c * (1.0 + (unit(&g->r) * 0.03 - 0.005));
            if (state == 2 && i == 0) m = c * (0.85 + unit(&g->r) * 0.07);
            if (strcmp(s->kind, "categorical") == 0) m = c;
            r->measured = state ? (strcmp(s->kind, "categorical") == 0 ? r->claimed
                                                                         : num(g, m, integral ? 0 : 2))
                                : NULL;
        }
        const char *a[] = {pid, i64(g, i), r->spec, r->label, r->kind, r->unit,
                           r->claimed, r->measured, num(g, r->tolerance_pct, 1)};
        if (exec(g, L_GEN_SPEC, 9, a)) return -1;
    }
    as_arena *ar = as_arena_create();
    as_mem m = as_arena_mem(ar);
    const char *n = NULL;
    *status = as_verif_name(as_verification_status(&m, rows, 3, state != 0, &n));
    *note = n ? apr_pstrdup(tp, n) : NULL;
    as_arena_destroy(ar);
    return 0;
}

apr_status_t ctl_generate_catalogue(as_db *db, apr_int64_t n_products, apr_uint64_t seed,
                                    json_t **summary, const char **err)
{
    gen g = {db, db->pool, {seed ? seed : 88172645463325252ULL}, NULL, "2026-11-18T09:00:00Z"};
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    apr_int64_t existing = -1;
    if (prepare_gen(db)) {
        *err = "cannot prepare the generator's statements (is the schema loaded? run init)";
        return APR_EGENERAL;
    }
    if (as_db_select(db, L_GEN_COUNT_PRODUCTS, &res, 0, NULL) == 0)
        while (as_db_next(db, res, &row))
            existing = apr_atoi64(as_db_col(db, row, 0));
    if (existing != 0) {
        *err = existing < 0 ? "cannot count products (is the schema loaded? run init)"
                            : "the database has a catalogue already; generate into a new one "
                              "(init without --demo)";
        return APR_EGENERAL;
    }
    apr_dbd_transaction_t *t = NULL;
    if (as_db_begin_t(db, &t)) {
        *err = "cannot begin a transaction";
        return APR_EGENERAL;
    }
    int ok = 1;
    for (size_t i = 0; ok && i < N_MERCHANTS; i++) {
        const char *a[] = {merchants[i].id, merchants[i].name, merchants[i].country, merchants[i].city,
                           num(&g, 0.80 + unit(&g.r) * 0.19, 3), num(&g, 0.93 + unit(&g.r) * 0.068, 3)};
        ok = !exec(&g, L_GEN_MERCHANT, 6, a);
    }
    /* about one device per 400 products, at least 40, spread over the kinds */
    apr_int64_t n_dev = n_products / 400 < 40 ? 40 : n_products / 400;
    for (apr_int64_t d = 1; ok && d <= n_dev; d++) {
        const char *kind = kinds[(d - 1) % 8];
        const char *brand = brands[pick(&g.r, 25)];
        const char *model = apr_psprintf(g.p, "%s %c%" APR_INT64_T_FMT "", series[pick(&g.r, 12)],
                                         'A' + pick(&g.r, 26), (apr_int64_t)(100 + d));
        const char *a[] = {i64(&g, d), apr_psprintf(g.p, "gen-%s-%" APR_INT64_T_FMT "", kind, (apr_int64_t)d),
                           apr_psprintf(g.p, "%s %s", brand, model), brand, kind,
                           apr_psprintf(g.p, "%c%" APR_INT64_T_FMT "", 'A' + pick(&g.r, 26), (apr_int64_t)(100 + d))};
        ok = !exec(&g, L_GEN_DEVICE, 6, a);
    }
    apr_pool_t *tp;
    apr_pool_create(&tp, g.p);
    apr_int64_t n_offers = 0, n_compat = 0, states[3] = {0, 0, 0};
    for (apr_int64_t i = 1; ok && i <= n_products; i++) {
        apr_pool_clear(tp); /* per-product strings; the statements live on the db pool */
        g.p = tp;
        const part_tpl *tpl = &parts[(i - 1) % N_PARTS];
        const char *brand = brands[pick(&g.r, 25)];
        const char *pid = i64(&g, i);
        const char *sku = apr_psprintf(tp, "G%07" APR_INT64_T_FMT, (apr_int64_t)i);
        const char *name = apr_psprintf(tp, "%s %s %s %" APR_INT64_T_FMT "", brand, series[pick(&g.r, 12)],
                                        tpl->noun, (apr_int64_t)(i % 997));
        int roll = pick(&g.r, 100), state = roll < 20 ? 0 : roll < 85 ? 1 : 2;
        int out_of_stock = pick(&g.r, 100) < 3, weekly = 1 + pick(&g.r, 20);
        const char *status, *note;
        /* specs first: core derives the status from them (inserted after the product) */
        ok = 1;
        const char *a[] = {
            pid, sku, pick(&g.r, 6) ? apr_psprintf(tp, "87%011" APR_INT64_T_FMT, (apr_int64_t)(i * 7919 % 100000000000LL)) : NULL,
            name, brand, tpl->category, tpl->part_type,
            apr_psprintf(tp, "%s by %s for everyday use; part of a generated catalogue for scale tests.",
                         tpl->noun, brand),
            apr_psprintf(tp, "[\"https://img.agentshop-demo.example/g/%s.jpg\"]", sku),
            apr_psprintf(tp, "https://merchant.example/p/%s", sku), "[]", g.checked_at,
            apr_psprintf(tp, "M-%" APR_INT64_T_FMT "", (apr_int64_t)i), out_of_stock ? "out_of_stock" : "in_stock",
            "1", "pending", NULL, state ? "2026-10-01T10:00:00Z" : NULL, state ? "lab-gen-01" : NULL,
            i64(&g, state ? 3 : 0), num(&g, 0.80 + unit(&g.r) * 0.19, 3),
            num(&g, unit(&g.r) * (state == 2 ? 0.15 : 0.05), 3), num(&g, unit(&g.r) * 0.01, 3),
            i64(&g, 13 * weekly), apr_psprintf(tp, "[%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d]",
                                               weekly, weekly, weekly, weekly, weekly, weekly, weekly,
                                               weekly, weekly, weekly, weekly, weekly, weekly)};
        if (exec(&g, L_GEN_PRODUCT, 25, a)) {
            ok = 0;
            break;
        }
        if (spec_rows(&g, tp, tpl, pid, state, &status, &note)) {
            ok = 0;
            break;
        }
        /* the status core derived, now that the rows are known */
        const char *u[] = {status, note, pid};
        if (exec(&g, L_GEN_VERIFICATION, 3, u)) {
            ok = 0;
            break;
        }
        states[strcmp(status, "pending") == 0 ? 0 : strcmp(status, "verified") == 0 ? 1 : 2]++;
        int offers = 1 + pick(&g.r, 5);
        int base = tpl->price_lo + pick(&g.r, tpl->price_hi - tpl->price_lo + 1);
        int first = pick(&g.r, (int)N_MERCHANTS);
        for (int k = 0; ok && k < offers; k++) {
            apr_int64_t retail = base + base * pick(&g.r, 12) / 100;
            int stock = out_of_stock ? 0 : pick(&g.r, 10) == 0 ? 0 : 1 + pick(&g.r, 60);
            const char *m = merchants[(first + k) % N_MERCHANTS].id;
            const char *o[] = {apr_psprintf(tp, "%s-%s", sku, m + 2), pid, m,
                               i64(&g, as_demo_agent_price_cents(retail)), i64(&g, retail),
                               "Agent-only price (demo)", i64(&g, 1 + pick(&g.r, 6)), i64(&g, stock)};
            ok = !exec(&g, L_GEN_OFFER, 8, o);
            n_offers++;
        }
        if (!tpl->device_kind) continue;
        int k0 = 0;
        while (strcmp(kinds[k0], tpl->device_kind) != 0)
            k0++;
        for (int c = 0, nc = 1 + pick(&g.r, 3); ok && c < nc; c++) {
            apr_int64_t dev = 1 + k0 + 8 * (apr_int64_t)pick(&g.r, (int)(n_dev / 8));
            int fits = pick(&g.r, 100) < 85;
            const char *ev = apr_psprintf(
                tp,
                "[{\"dimension\":\"fit\",\"label\":\"Connector\",\"unit\":\"mm\",\"part_value\":%d,"
                "\"device_value\":%d,\"tolerance\":0.5,\"method\":\"measured\",\"by\":\"lab-gen-01\","
                "\"at\":\"2026-10-01T10:00:00Z\"}]",
                40, fits ? 40 : 43);
            const char *cc[] = {i64(&g, dev), pid, fits ? "fits" : "does_not_fit", ev,
                                "2026-10-01T10:00:00Z"};
            /* a device may come up twice for one product: keep the first */
            int added = 0;
            ok = as_db_exec(db, L_GEN_COMPAT_ONCE, &added, 5, cc) == 0;
            n_compat += added;
        }
    }
    g.p = db->pool;
    if (ok && as_db_rank_rebuild(db, &g.err) != APR_SUCCESS) ok = 0;
    if (ok) {
        const char *a[] = {"catalogue_version", apr_psprintf(g.p, "generated-%" APR_UINT64_T_FMT, seed)};
        ok = !exec(&g, L_AS_META_SET, 2, a);
    }
    if (as_db_end_t(db, t, ok) != 0 && ok) {
        ok = 0;
        g.err = "commit failed";
    }
    if (!ok) {
        *err = g.err ? g.err : "generating the catalogue failed";
        return APR_EGENERAL;
    }
    *summary = json_pack("{s:b, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:I}", "generated", 1,
                         "products", (json_int_t)n_products, "offers", (json_int_t)n_offers,
                         "devices", (json_int_t)n_dev, "compatibility", (json_int_t)n_compat,
                         "verification", "pending", (json_int_t)states[0], "verified",
                         (json_int_t)states[1], "contradicted", (json_int_t)states[2], "seed",
                         (json_int_t)seed);
    return APR_SUCCESS;
}
