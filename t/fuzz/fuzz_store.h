/* An in-memory as_store for fuzz_api.c: the catalogue of t/unit/fake_store.c
 * (without cmocka) plus agents, mandates, quotes, orders, confirmations,
 * returns and Idempotency-Key records, so every route reaches its logic.
 *
 * State that writes change (order status and timeline, stock, confirmation
 * status, quotes turned into orders) lives in fz_state, reset for every input;
 * begin/rollback snapshot and restore it. The store also checks what a real
 * store's schema and transactions would enforce, and abort()s on:
 *   - a nested begin, or a transaction left open at the end of a request;
 *   - a multi-step write (order, stock, event, confirmation, return) outside a
 *     transaction;
 *   - rows that break the schema's NOT NULL / CHECK constraints.
 * Failures can be injected: fz_db.fail_op names one store function, fail_nth
 * which call of it fails (0: every call), fail_rc the code (only codes the
 * function may return per as_store.h; otherwise AS_EDB).
 *
 * The text index's sources (search_version, index_rows, index_offers,
 * rank_changes, index_compat, offers_stock) answer as sql/as_db_search.c does:
 * a constant catalogue version; a rank version that stock_take/stock_give raise
 * when an offer's stock reaches zero or comes back from it (in fz_state, so a
 * rollback restores it, as the SQL store's bump is part of the transaction),
 * and each product's rank row the version of its last change. Rows given to a
 * callback live on an arena freed when the callback returns, so a reader that
 * keeps them past the call is caught by ASan. */
#ifndef FUZZ_STORE_H
#define FUZZ_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "as_catalog.h"
#include "as_commerce.h"
#include "as_mem.h"
#include "as_rank.h"
#include "as_store.h"
#include "as_util.h"

#define FZ_NOW 1772445600LL /* 2026-03-02T10:00:00Z */
#define FZ_TODAY (FZ_NOW / 86400)
#define FZ_N(a) (sizeof(a) / sizeof((a)[0]))

#define FZ_FAIL(...)                                                                               \
    do {                                                                                           \
        fprintf(stderr, "fuzz invariant violated: ");                                              \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        abort();                                                                                   \
    } while (0)
#define FZ_ASSERT(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) FZ_FAIL(__VA_ARGS__);                                                         \
    } while (0)

/* ---- the store functions, for failure injection ---- */
enum {
    FZ_OP_NONE,
    FZ_OP_MERCHANTS,
    FZ_OP_DEVICES,
    FZ_OP_DEVICE_BY_SLUG,
    FZ_OP_PRODUCT_BY_SKU,
    FZ_OP_SEARCH,
    FZ_OP_BEGIN,
    FZ_OP_COMMIT,
    FZ_OP_ROLLBACK,
    FZ_OP_KEY_BY_HASH,
    FZ_OP_MANDATE_CURRENT,
    FZ_OP_MANDATE_GET,
    FZ_OP_MANDATE_SPENT,
    FZ_OP_QUOTE_INSERT,
    FZ_OP_QUOTE_GET,
    FZ_OP_ORDER_INSERT,
    FZ_OP_ORDER_GET,
    FZ_OP_ORDER_MOVE,
    FZ_OP_EVENT_ADD,
    FZ_OP_ORDERS_EXPIRED,
    FZ_OP_STOCK_TAKE,
    FZ_OP_STOCK_GIVE,
    FZ_OP_CONF_INSERT,
    FZ_OP_CONF_GET,
    FZ_OP_CONF_DECIDE,
    FZ_OP_IDEM_CLAIM,
    FZ_OP_IDEM_FINISH,
    FZ_OP_RETURN_INSERT,
    FZ_OP_RETURN_GET,
    FZ_OP_RETURN_BY_ORDER,
    FZ_OP_QUESTION_INSERT,
    /* the text index's sources, last so the seeds' numbers of the others stay */
    FZ_OP_SEARCH_VERSION,
    FZ_OP_INDEX_ROWS,
    FZ_OP_INDEX_OFFERS,
    FZ_OP_RANK_CHANGES,
    FZ_OP_INDEX_COMPAT,
    FZ_OP_OFFERS_STOCK,
    /* product views from the index */
    FZ_OP_VIEW_ROWS,
    FZ_OP_PRODUCT_LIVE,
    /* passkeys (core/as_passkeys.c) */
    FZ_OP_PASSKEY_INSERT,
    FZ_OP_PASSKEYS_OF,
    FZ_OP_PASSKEY_GET,
    FZ_OP_PASSKEY_COUNT,
    FZ_OP_ENROLMENT_INSERT,
    FZ_OP_ENROLMENT_GET,
    FZ_OP_ENROLMENT_USE,
    FZ_OP_CHALLENGE_INSERT,
    FZ_OP_CHALLENGE_USE,
    FZ_OP_N
};

/* Which codes other than AS_EDB each function may return (as_store.h). */
static const unsigned fz_op_codes[FZ_OP_N] = {
    [FZ_OP_DEVICE_BY_SLUG] = 1u << AS_ENOTFOUND,  [FZ_OP_PRODUCT_BY_SKU] = 1u << AS_ENOTFOUND,
    [FZ_OP_KEY_BY_HASH] = 1u << AS_ENOTFOUND,     [FZ_OP_MANDATE_CURRENT] = 1u << AS_ENOTFOUND,
    [FZ_OP_MANDATE_GET] = 1u << AS_ENOTFOUND,     [FZ_OP_QUOTE_GET] = 1u << AS_ENOTFOUND,
    [FZ_OP_ORDER_GET] = 1u << AS_ENOTFOUND,       [FZ_OP_CONF_GET] = 1u << AS_ENOTFOUND,
    [FZ_OP_RETURN_GET] = 1u << AS_ENOTFOUND,      [FZ_OP_RETURN_BY_ORDER] = 1u << AS_ENOTFOUND,
    [FZ_OP_ORDER_INSERT] = 1u << AS_ECONFLICT,    [FZ_OP_ORDER_MOVE] = 1u << AS_ECONFLICT,
    [FZ_OP_STOCK_TAKE] = 1u << AS_ECONFLICT,      [FZ_OP_RETURN_INSERT] = 1u << AS_ECONFLICT,
    [FZ_OP_CONF_DECIDE] = 1u << AS_ECONFLICT,
    [FZ_OP_PASSKEY_INSERT] = 1u << AS_ECONFLICT,  [FZ_OP_PASSKEY_GET] = 1u << AS_ENOTFOUND,
    [FZ_OP_PASSKEY_COUNT] = 1u << AS_ECONFLICT,   [FZ_OP_ENROLMENT_GET] = 1u << AS_ENOTFOUND,
    [FZ_OP_ENROLMENT_USE] = 1u << AS_ECONFLICT,   [FZ_OP_CHALLENGE_USE] = 1u << AS_ECONFLICT,
};

/* ---- the catalogue (t/unit/fake_store.c's, plus products for questions,
 * replacements and odd evidence) ---- */

#define FZ_MERCHANT_A {"m-alpha", "Alpha Parts", "NL", "Utrecht", 0.95, 0.99}
#define FZ_MERCHANT_B {"m-beta", "Beta Supplies", "DE", "Köln", 0.90, 0.97}
#define FZ_MERCHANT_C {"m-gamma", "Gamma & Co <BE>", "BE", "Gent", 0.5, 0.0}

static const as_merchant fz_merchants[] = {FZ_MERCHANT_A, FZ_MERCHANT_B, FZ_MERCHANT_C};

static const as_device fz_devices[] = {
    {1, "dyson-v11", "V11 Absolute", "Dyson", "vacuum", "v11 sv14"},
    {2, "dyson-v8", "V8 Animal", "Dyson", "vacuum", "v8 sv10"},
    {3, "brita-marella", "Marella", "Brita", "water-jug", "marella xl"},
    {4, "dyson-v11-torque", "V11 Torque Drive", "Dyson", "vacuum", "v11 sv15"},
    {5, "hp-deskjet-2720", "DeskJet 2720", "HP", "printer", ""},
};

/* Offers point at their merchants by value, as the store fills them. */
static const as_offer fz_offers[] = {
    {"of-soap-a", FZ_MERCHANT_A, 450, 499, "agent price", 1, 40},   /* 0 SOAP-001 */
    {"of-soap-b", FZ_MERCHANT_B, 420, 449, "agent price", 3, 12},   /* 1 SOAP-001 */
    {"of-filt-a", FZ_MERCHANT_A, 2999, 3199, "agent price", 2, 5},  /* 2 FILT-002 */
    {"of-jug-b", FZ_MERCHANT_B, 1299, 1399, "agent price", 2, 0},   /* 3 JUG-003 */
    {"of-batt-a", FZ_MERCHANT_A, 15999, 16999, "agent price", 1, 3}, /* 4 BATT-004 */
    {"of-batt-c", FZ_MERCHANT_C, 14999, 15999, "agent price", 9, 0}, /* 5 BATT-004 */
    {"of-batt-b", FZ_MERCHANT_B, 15499, 15999, "agent price", 0, 1}, /* 6 BATT-004 */
    {"of-filt5-b", FZ_MERCHANT_B, 2499, 2599, "agent price", 2, 7}, /* 7 FILT-005 */
    {"of-filt5-c", FZ_MERCHANT_C, 2399, 2599, "agent price", 4, 2}, /* 8 FILT-005 */
    {"of-ink-a", FZ_MERCHANT_A, 1999, 2099, "agent price", 1, 100}, /* 9 INK-006 */
};
#define FZ_N_OFFERS FZ_N(fz_offers)

static const as_spec_row fz_soap_specs[] = {
    {"volume", "Volume", "performance", "ml", "500", "502", 2},
    {"scent", "Scent", "categorical", NULL, "\"lavender\"", "\"lavender\"", 0},
};
static const as_spec_row fz_filt_specs[] = {
    {"filtration", "Filtration", "performance", "%", "99.97", "92.1", 1},
    {"washable", "Washable", "categorical", NULL, "true", "false", 0},
};
static const as_spec_row fz_batt_specs[] = {
    {"capacity_mah", "Capacity", "performance", "mAh", "3000", "2810", 5},
    {"voltage_v", "Voltage", "categorical", "V", "25.2", "25.2", 0},
    {"chemistry", "Chemistry", "categorical", NULL, "\"Li-ion\"", "\"li-ion\"", 0},
    {"weight_g", "Weight", "info", "g", "420", "433", 0},
    {"runtime_min", "Runtime", "performance", "min", "60", NULL, 10},
    {"pack_contents", "In the box", "categorical", NULL, "[\"battery\",\"screws\"]",
     "[\"screws\",\"battery\"]", 0},
    {"colour", "Colour", "categorical", NULL, NULL, "\"purple\"", 0},
    {"ph", "pH", "info", "", "7", "\"n/a\"", 0},
};
static const as_spec_row fz_filt5_specs[] = {
    {"filter_efficiency_pct", "Filter efficiency", "performance", "%", "99.5", "99.6", 1},
    {"diameter_mm", "Diameter", "categorical", "mm", "80", "80.0", 0},
    {"lifetime_months", "Lifetime", "info", "months", "12", "[12, 6]", 0},
};
static const as_question fz_soap_questions[] = {
    {"q-1", "Is it vegan?", "{\"text\":\"Yes\"}", "2025-12-01T10:00:00Z"},
    {"q-2", "Broken answer", "{not json", "2025-12-02T10:00:00Z"},
};

static const as_product fz_products[] = {
    {.id = 1,
     .sku = "SOAP-001",
     .gtin = "8710000000011",
     .name = "Lavender hand soap 500 ml",
     .brand = "Savon",
     .category = "hand-soap",
     .part_type = "hand-soap",
     .description = "Gentle liquid hand soap refill",
     .image_urls = "[\"https://img.example/soap.jpg\"]",
     .source_url = "https://shop.example/soap",
     .source_notes = "[]",
     .source_checked_at = "2026-01-10T08:00:00Z",
     .source_product_id = "S1",
     .availability = "in_stock",
     .is_demo = true,
     .verif_status = "verified",
     .measured_at = "2026-01-05T09:00:00Z",
     .measured_node = "lab-1",
     .sample_size = 3,
     .has_on_time = true,
     .on_time_rate_90d = 0.96,
     .return_rate = 0.01,
     .wrong_item_rate = 0.002,
     .agent_orders_90d = 120,
     .orders_per_week = "[1,2,3,4,5,6,7,8,9,10,11,12,13]",
     .specs = (as_spec_row *)fz_soap_specs,
     .n_specs = FZ_N(fz_soap_specs),
     .questions = (as_question *)fz_soap_questions,
     .n_questions = FZ_N(fz_soap_questions)},
    {.id = 2,
     .sku = "FILT-002",
     .name = "HEPA filter for Dyson V11",
     .brand = "Filtra",
     .category = "vacuum-parts",
     .part_type = "filter",
     .description = "Washable post-motor HEPA filter",
     .image_urls = "[]",
     .source_url = "https://shop.example/filter",
     .source_notes = "[\"claims from the box\"]",
     .source_checked_at = "2026-01-10T08:00:00Z",
     .source_product_id = "F2",
     .availability = "in_stock",
     .verif_status = "contradicted",
     .verif_note = "Filtration: claimed 99.97 %, measured 92.1 %",
     .measured_at = "2026-01-06T09:00:00Z",
     .measured_node = "lab-1",
     .sample_size = 2,
     .return_rate = 0.08,
     .orders_per_week = "[]",
     .guarantee = true,
     .specs = (as_spec_row *)fz_filt_specs,
     .n_specs = FZ_N(fz_filt_specs)},
    {.id = 3,
     .sku = "JUG-003",
     .name = "Maxtra filter cartridge",
     .brand = "Brita",
     .category = "coffee-kitchen",
     .part_type = "jug-filter",
     .description = "Jug filter cartridge",
     .image_urls = "[]",
     .source_url = "https://shop.example/jug",
     .source_notes = "[]",
     .source_checked_at = "2026-01-10T08:00:00Z",
     .source_product_id = "J3",
     .availability = "out_of_stock",
     .verif_status = "pending",
     .orders_per_week = "[]"},
    {.id = 4,
     .sku = "BATT-004",
     .gtin = "5025155000004",
     .name = "Replacement battery for Dyson V11 (3000 mAh)",
     .brand = "PowerCell",
     .category = "batteries",
     .part_type = "battery",
     .description = "Click-in battery pack, Li-ion, with screws",
     .image_urls = "not json",
     .source_url = "https://shop.example/battery",
     .source_notes = "{\"note\":\"an object, not an array\"}",
     .source_checked_at = "2026-01-11T08:00:00Z",
     .source_product_id = "B4",
     .availability = "in_stock",
     .verif_status = "contradicted",
     .verif_note = "Capacity: claimed 3000 mAh, measured 2810 mAh",
     .measured_at = "2026-01-07T09:00:00Z",
     .sample_size = 5,
     .has_on_time = true,
     .on_time_rate_90d = 1.0,
     .return_rate = 0.0,
     .wrong_item_rate = 1.0,
     .agent_orders_90d = 0,
     .orders_per_week = "[0,0,0,0,0,0,0,0,0,0,0,0,1]",
     .guarantee = true,
     .specs = (as_spec_row *)fz_batt_specs,
     .n_specs = FZ_N(fz_batt_specs)},
    {.id = 5,
     .sku = "FILT-005",
     .name = "Pre-motor filter for Dyson V11",
     .brand = "Filtra",
     .category = "vacuum-parts",
     .part_type = "filter",
     .description = "Washable pre-motor filter",
     .image_urls = "[\"https://img.example/f5.jpg\", 3]",
     .source_url = "https://shop.example/f5",
     .source_notes = "[]",
     .source_checked_at = "2026-01-12T08:00:00Z",
     .source_product_id = "F5",
     .availability = "in_stock",
     .verif_status = "verified",
     .measured_at = "2026-01-08T09:00:00Z",
     .measured_node = "lab-2",
     .sample_size = 4,
     .return_rate = 0.02,
     .wrong_item_rate = 0.01,
     .orders_per_week = "[3]",
     .guarantee = true,
     .specs = (as_spec_row *)fz_filt5_specs,
     .n_specs = FZ_N(fz_filt5_specs)},
    {.id = 6,
     .sku = "INK-006",
     .name = "HP 305 black ink \"XL\" <cartridge>",
     .brand = "HP",
     .category = "printer-ink",
     .part_type = "ink-cartridge",
     .description = "Black ink & more",
     .image_urls = "[]",
     .source_url = "https://shop.example/ink",
     .source_notes = "[]",
     .source_checked_at = "2026-01-12T08:00:00Z",
     .source_product_id = "I6",
     .availability = "in_stock",
     .verif_status = "pending",
     .return_rate = 0.5,
     .orders_per_week = "[]"},
};
#define FZ_N_PRODUCTS FZ_N(fz_products)

/* Which offers (indexes into fz_offers) each product has. */
static const struct {
    size_t first, n;
} fz_product_offers[FZ_N_PRODUCTS] = {{0, 2}, {2, 1}, {3, 1}, {4, 3}, {7, 2}, {9, 1}};

typedef struct fz_compat {
    const char *sku;
    int64_t device_id;
    as_compat row;
} fz_compat;

static const fz_compat fz_compats[] = {
    {"FILT-002", 1,
     {"dyson-v11", "V11 Absolute", "fits",
      "[{\"label\":\"Diameter\",\"unit\":\"mm\",\"part_value\":80,\"device_value\":80,"
      "\"tolerance\":0.5}]",
      "2026-01-02"}},
    {"FILT-002", 2,
     {"dyson-v8", "V8 Animal", "does_not_fit",
      "[{\"label\":\"Diameter\",\"unit\":\"mm\",\"part_value\":80,\"device_value\":70,"
      "\"tolerance\":0.5}]",
      "2026-01-02"}},
    {"JUG-003", 3,
     {"brita-marella", "Marella", "fits", "[{\"note\":\"Brand declares fit\",\"by\":\"Brita\"}]",
      "2026-01-02"}},
    {"FILT-005", 1,
     {"dyson-v11", "V11 Absolute", "fits",
      "[{\"dimension\":\"d\",\"label\":\"Diameter\",\"unit\":\"mm\",\"part_value\":80.2,"
      "\"device_value\":80,\"tolerance\":0.5,\"method\":\"measured\",\"by\":\"lab-2\",\"at\":"
      "\"2026-01-03\"},{\"note\":\"Click fit\"},{\"part_value\":\"x\",\"device_value\":1},7]",
      "2026-01-03"}},
    {"BATT-004", 1,
     {"dyson-v11", "V11 Absolute", "fits", "{\"not\":\"an array\"}", "2026-01-04"}},
    {"BATT-004", 4,
     {"dyson-v11-torque", "V11 Torque Drive", "does_not_fit", "not json at all", "2026-01-04"}},
    {"FILT-005", 2, {"dyson-v8", "V8 Animal", "fits", "[]", "2026-01-04"}},
};

/* ---- agents, mandates, quotes, orders, confirmations, returns ---- */

static const as_mandate fz_mandates[] = {
    {"md_1", "u1", "active", "hand-soap,vacuum-parts,coffee-kitchen", 50000, 100000, 10000,
     "2026-12-31", "2026-01-01T00:00:00Z"},
    {"md_open", "u1", "active", "hand-soap,batteries", 20000, 30000, 0, NULL,
     "2026-01-01T00:00:00Z"},
    {"md_exp", "u1", "active", "hand-soap", 50000, 100000, 10000, "2026-01-31",
     "2025-01-01T00:00:00Z"},
    {"md_rev", "u1", "revoked", "hand-soap", 50000, 100000, 10000, NULL, "2025-01-01T00:00:00Z"},
    {"md_u2", "u2", "active", "hand-soap", 50000, 100000, 10000, NULL, "2025-01-01T00:00:00Z"},
    {"md_u3", "u3", "active", "hand-soap", 50000, 100000, 10000, "2025-12-31",
     "2025-01-01T00:00:00Z"},
    {"md_u4", "u4", "revoked", "hand-soap", 50000, 100000, 10000, NULL, "2025-01-01T00:00:00Z"},
};

#define FZ_Q(id_, user, offer, pid, qty, unit, days, by, dev, fit, guar, created, expires, sku,   \
             name, cat, mid, mname, ord)                                                           \
    {id_,  user, offer,   pid,  qty,  unit,  (unit) * (qty), days, by,  dev, fit,                  \
     guar, created, expires, sku, name, cat, mid, mname, ord}

static const as_quote fz_quotes[] = {
    FZ_Q("q_ok", "u1", "of-soap-a", 1, 2, 450, 1, "2026-03-03", NULL, NULL, false, FZ_NOW - 60,
         FZ_NOW + 540, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "m-alpha",
         "Alpha Parts", NULL),
    FZ_Q("q_big", "u1", "of-filt-a", 2, 5, 2999, 2, "2026-03-04", "dyson-v11", "fits", true,
         FZ_NOW - 60, FZ_NOW + 540, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts",
         "m-alpha", "Alpha Parts", NULL),
    FZ_Q("q_huge", "u1", "of-filt-a", 2, 10, 9999, 2, "2026-03-04", NULL, NULL, false, FZ_NOW - 60,
         FZ_NOW + 540, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts", "m-alpha",
         "Alpha Parts", NULL),
    FZ_Q("q_used", "u1", "of-soap-a", 1, 1, 450, 1, "2026-03-03", NULL, NULL, false, FZ_NOW - 60,
         FZ_NOW + 540, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "m-alpha",
         "Alpha Parts", "ord_placed"),
    FZ_Q("q_expired", "u1", "of-soap-a", 1, 1, 450, 1, "2026-03-03", NULL, NULL, false,
         FZ_NOW - 900, FZ_NOW - 300, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap",
         "m-alpha", "Alpha Parts", NULL),
    FZ_Q("q_u2", "u2", "of-soap-a", 1, 1, 450, 1, "2026-03-03", NULL, NULL, false, FZ_NOW - 60,
         FZ_NOW + 540, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "m-alpha",
         "Alpha Parts", NULL),
    FZ_Q("q_batt", "u1", "of-batt-a", 4, 3, 15999, 1, "2026-03-03", NULL, NULL, false, FZ_NOW - 60,
         FZ_NOW + 540, "BATT-004", "Replacement battery", "batteries", "m-alpha", "Alpha Parts",
         NULL),
    FZ_Q("q_nostock", "u1", "of-jug-b", 3, 1, 1299, 2, "2026-03-04", NULL, NULL, false,
         FZ_NOW - 60, FZ_NOW + 540, "JUG-003", "Maxtra filter cartridge", "coffee-kitchen",
         "m-beta", "Beta Supplies", NULL),
};
#define FZ_N_QUOTES FZ_N(fz_quotes)

typedef struct fz_order_tpl {
    as_order o;
    as_event events[4];
    size_t n_events;
} fz_order_tpl;

#define FZ_H 3600LL
#define FZ_D 86400LL
#define FZ_O(id_, user, mid, qid, offer, qty, unit, budget, status, cexp, created, sku, name, cat, \
             ptype, mname, country, by, dev, fit, guar, conf)                                      \
    {                                                                                              \
        id_, user, mid, qid, offer, qty, unit, (unit) * (qty), budget, "2026-03",                  \
            "Restocking the bathroom soap as agreed", "shopbot/1.0", status, cexp, created,        \
            created, sku, name, cat, ptype, mname, country, by, dev, fit, guar, conf, "key_1",   \
            NULL, NULL, 0                                                                          \
    }

static const fz_order_tpl fz_orders[] = {
    {FZ_O("ord_placed", "u1", "md_1", "q_used", "of-soap-a", 1, 450, 450, AS_OS_PLACED, 0,
          FZ_NOW - 60, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "hand-soap",
          "Alpha Parts", "NL", "2026-03-03", NULL, NULL, false, "conf_done"),
     {{AS_OS_PLACED, "Placed by shopbot/1.0 within mandate md_1.", FZ_NOW - 60}},
     1},
    {FZ_O("ord_due", "u1", "md_1", "q_p2", "of-soap-b", 2, 420, 840, AS_OS_PLACED, 0,
          FZ_NOW - 3 * FZ_D, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "hand-soap",
          "Beta Supplies", "DE", "2026-03-01", NULL, NULL, false, NULL),
     {{AS_OS_PLACED, NULL, FZ_NOW - 3 * FZ_D}},
     1},
    {FZ_O("ord_shipped", "u1", "md_1", "q_p3", "of-filt-a", 1, 2999, 2999, AS_OS_SHIPPED, 0,
          FZ_NOW - 2 * FZ_H * 3, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts", "filter",
          "Alpha Parts", "NL", "2026-03-04", "dyson-v11", "fits", true, NULL),
     {{AS_OS_PLACED, "placed", FZ_NOW - 6 * FZ_H}, {AS_OS_SHIPPED, "Shipped.", FZ_NOW - 5 * FZ_H}},
     2},
    {FZ_O("ord_delivered", "u1", "md_1", "q_p4", "of-filt-a", 1, 2999, 2999, AS_OS_DELIVERED, 0,
          FZ_NOW - 5 * FZ_D, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts", "filter",
          "Alpha Parts", "BE", "2026-02-28", "dyson-v11", "fits", true, NULL),
     {{AS_OS_PLACED, "placed", FZ_NOW - 5 * FZ_D},
      {AS_OS_SHIPPED, "Shipped.", FZ_NOW - 4 * FZ_D},
      {AS_OS_DELIVERED, "Delivered.", FZ_NOW - 3 * FZ_D}},
     3},
    {FZ_O("ord_old", "u1", "md_1", "q_p5", "of-soap-a", 1, 450, 450, AS_OS_DELIVERED, 0,
          FZ_NOW - 60 * FZ_D, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "hand-soap",
          "Alpha Parts", "NL", "2026-01-02", NULL, NULL, false, NULL),
     {{AS_OS_PLACED, "placed", FZ_NOW - 60 * FZ_D},
      {AS_OS_SHIPPED, "Shipped.", FZ_NOW - 59 * FZ_D},
      {AS_OS_DELIVERED, "Delivered.", FZ_NOW - 58 * FZ_D}},
     3},
    {FZ_O("ord_await", "u1", "md_1", "q_p6", "of-filt-a", 5, 2999, 14995, AS_OS_AWAITING,
          FZ_NOW + FZ_H, FZ_NOW - 60, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts",
          "filter", "Alpha Parts", "NL", "2026-03-04", "dyson-v11", "fits", true, "conf_ok"),
     {{AS_OS_AWAITING, "Above the threshold.", FZ_NOW - 60}},
     1},
    {FZ_O("ord_await_exp", "u1", "md_1", "q_p7", "of-soap-a", 3, 4500, 13500, AS_OS_AWAITING,
          FZ_NOW - 10, FZ_NOW - FZ_D, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap",
          "hand-soap", "Alpha Parts", "NL", "2026-03-02", NULL, NULL, false, "conf_exp"),
     {{AS_OS_AWAITING, "Above the threshold.", FZ_NOW - FZ_D}},
     1},
    {FZ_O("ord_cancelled", "u1", "md_1", "q_p8", "of-soap-a", 1, 450, 0, AS_OS_CANCELLED, 0,
          FZ_NOW - 2 * FZ_D, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "hand-soap",
          "Alpha Parts", "NL", "2026-03-01", NULL, NULL, false, NULL),
     {{AS_OS_PLACED, NULL, FZ_NOW - 2 * FZ_D},
      {AS_OS_CANCELLED, "Cancelled.", FZ_NOW - 2 * FZ_D + 5}},
     2},
    {FZ_O("ord_returned", "u1", "md_1", "q_p9", "of-filt-a", 1, 2999, 0, AS_OS_RETURNED, 0,
          FZ_NOW - 10 * FZ_D, "FILT-002", "HEPA filter for Dyson V11", "vacuum-parts", "filter",
          "Alpha Parts", "DE", "2026-02-21", "dyson-v11", "fits", true, NULL),
     {{AS_OS_PLACED, NULL, FZ_NOW - 10 * FZ_D},
      {AS_OS_SHIPPED, NULL, FZ_NOW - 9 * FZ_D},
      {AS_OS_DELIVERED, NULL, FZ_NOW - 8 * FZ_D},
      {AS_OS_RETURNED, "Returned.", FZ_NOW - 7 * FZ_D}},
     4},
    {FZ_O("ord_u2", "u2", "md_u2", "q_p10", "of-soap-a", 1, 450, 450, AS_OS_SHIPPED, 0,
          FZ_NOW - 2 * FZ_D, "SOAP-001", "Lavender hand soap 500 ml", "hand-soap", "hand-soap",
          "Alpha Parts", "NL", "2026-03-05", NULL, NULL, false, NULL),
     {{AS_OS_PLACED, NULL, FZ_NOW - 2 * FZ_D}, {AS_OS_SHIPPED, NULL, FZ_NOW - FZ_D}},
     2},
};
#define FZ_N_ORDERS FZ_N(fz_orders)

static const as_confirmation fz_confs[] = {
    {"conf_ok", "ord_await", "u1", "pending", FZ_NOW - 60, FZ_NOW + FZ_H, 0},
    {"conf_exp", "ord_await_exp", "u1", "pending", FZ_NOW - FZ_D, FZ_NOW - 10, 0},
    {"conf_done", "ord_placed", "u1", "approved", FZ_NOW - FZ_D, FZ_NOW + FZ_D, FZ_NOW - 100},
    {"conf_lost", "ord_missing", "u1", "pending", FZ_NOW - 60, FZ_NOW + FZ_H, 0},
};
#define FZ_N_CONFS FZ_N(fz_confs)

static const as_return fz_returns[] = {
    {"ret_1", "ord_returned", "u1", "does_not_fit", "too small <b>", "refunded", 2999, "DHL",
     "RT0123ABCD99", "FILT-005", FZ_NOW - 7 * FZ_D},
    {"ret_lost", "ord_missing", "u1", "defective", NULL, "pending_inspection", 0, "PostNL",
     "RT000000000", NULL, FZ_NOW - 7 * FZ_D},
};

/* ---- mutable state ---- */

#define FZ_MAX_EVENTS 12
#define FZ_MAX_NEW 4

typedef struct fz_state {
    as_order_state order_status[FZ_N_ORDERS];
    int64_t order_budget[FZ_N_ORDERS], order_updated[FZ_N_ORDERS];
    as_event events[FZ_N_ORDERS][FZ_MAX_EVENTS];
    size_t n_events[FZ_N_ORDERS];
    int64_t stock[FZ_N_OFFERS];
    /* search_rank and each product_rank row's version (sql/as_db_search.c) */
    int64_t rank_version, rank_row_version[FZ_N_PRODUCTS];
    const char *quote_order[FZ_N_QUOTES];
    const char *conf_status[FZ_N_CONFS];
    int64_t conf_decided[FZ_N_CONFS];
    bool returned[FZ_N_ORDERS];
    /* rows inserted by this request (ids live on the request's as_mem) */
    const char *new_orders[FZ_MAX_NEW], *new_order_offer[FZ_MAX_NEW];
    int64_t new_order_qty[FZ_MAX_NEW];
    size_t n_new_orders;
    size_t n_new_events, n_new_confs, n_new_quotes, n_new_returns, n_questions;
    /* passkeys: u1's fixture one (its counter) and those registered now;
     * the fixture enrolment's use; challenges issued now */
    int64_t fixture_pk_count;
    as_passkey new_pk[4];
    size_t n_new_pk;
    int64_t enrolment_used;
    const char *challenge[8], *challenge_subject[8];
    bool challenge_used[8];
    size_t n_challenges;
} fz_state;

typedef struct fz_db {
    fz_state st, snapshot;
    int64_t units[FZ_N_OFFERS]; /* per offer: stock + units orders hold, at the start */
    bool in_tx;
    int fail_op, fail_nth, fail_rc;
    int key_mode;     /* key_by_hash: 0 and 3 the key, 1 revoked, 2 another key's hash */
    const char *user; /* whose key it is: u1, u2, u3 (mandate expired), u4 (mandate revoked) */
    int calls[FZ_OP_N];
    int64_t rank_seen; /* the highest rank version search_version answered */
} fz_db;

static int fz_offer_index(const char *id);

/* An order holds its units from placement until it is cancelled, declined or
 * expired (a return does not restock: the item is inspected first). */
static inline bool fz_holds_stock(as_order_state status)
{
    return status != AS_OS_CANCELLED && status != AS_OS_DECLINED && status != AS_OS_EXPIRED;
}

/* Per offer: units in stock plus units held by orders. */
static inline void fz_units(const fz_db *db, int64_t *units)
{
    for (size_t i = 0; i < FZ_N_OFFERS; i++)
        units[i] = db->st.stock[i];
    for (size_t i = 0; i < FZ_N_ORDERS; i++)
        if (fz_holds_stock(db->st.order_status[i]))
            units[fz_offer_index(fz_orders[i].o.offer_id)] += fz_orders[i].o.quantity;
    for (size_t k = 0; k < db->st.n_new_orders; k++) {
        int i = fz_offer_index(db->st.new_order_offer[k]);
        if (i >= 0) units[i] += db->st.new_order_qty[k];
    }
}

/* After a request: no transaction open, no unit of stock created or lost, and
 * a released order holds no budget. */
static inline void fz_check_end(const fz_db *db)
{
    FZ_ASSERT(!db->in_tx, "a transaction was left open");
    int64_t units[FZ_N_OFFERS];
    fz_units(db, units);
    for (size_t i = 0; i < FZ_N_OFFERS; i++)
        FZ_ASSERT(units[i] == db->units[i], "offer %s: %lld units (stock + held), was %lld",
                  fz_offers[i].id, (long long)units[i], (long long)db->units[i]);
    for (size_t i = 0; i < FZ_N_ORDERS; i++)
        if (!fz_holds_stock(db->st.order_status[i]))
            FZ_ASSERT(db->st.order_budget[i] == 0, "order %s is %s but holds %lld cents of budget",
                      fz_orders[i].o.id, as_order_state_name(db->st.order_status[i]),
                      (long long)db->st.order_budget[i]);
}

static inline void fz_db_reset(fz_db *db)
{
    memset(db, 0, sizeof(*db));
    for (size_t i = 0; i < FZ_N_ORDERS; i++) {
        db->st.order_status[i] = fz_orders[i].o.status;
        db->st.order_budget[i] = fz_orders[i].o.budget_cents;
        db->st.order_updated[i] = fz_orders[i].o.updated_at;
        memcpy(db->st.events[i], fz_orders[i].events, fz_orders[i].n_events * sizeof(as_event));
        db->st.n_events[i] = fz_orders[i].n_events;
        db->st.returned[i] = fz_orders[i].o.status == AS_OS_RETURNED;
    }
    for (size_t i = 0; i < FZ_N_OFFERS; i++)
        db->st.stock[i] = fz_offers[i].stock;
    for (size_t i = 0; i < FZ_N_QUOTES; i++)
        db->st.quote_order[i] = fz_quotes[i].order_id;
    for (size_t i = 0; i < FZ_N_CONFS; i++) {
        db->st.conf_status[i] = fz_confs[i].status;
        db->st.conf_decided[i] = fz_confs[i].decided_at;
    }
    fz_units(db, db->units);
}

/* Counts the call; returns the injected code or AS_OK. */
static inline int fz_enter(fz_db *db, int op)
{
    int n = ++db->calls[op];
    if (db->fail_op != op || (db->fail_nth && db->fail_nth != n)) return AS_OK;
    if (db->fail_rc != AS_EDB && (fz_op_codes[op] & (1u << db->fail_rc))) return db->fail_rc;
    return AS_EDB;
}
#define FZ_ENTER(db, op)                                                                           \
    do {                                                                                           \
        int rc_ = fz_enter(db, op);                                                                \
        if (rc_ != AS_OK) return rc_;                                                              \
    } while (0)
#define FZ_IN_TX(db, what) FZ_ASSERT((db)->in_tx, "%s outside a transaction", what)

static inline const as_compat *fz_compat_for(const char *sku, int64_t device_id)
{
    if (device_id <= 0) return NULL;
    for (size_t i = 0; i < FZ_N(fz_compats); i++)
        if (fz_compats[i].device_id == device_id && strcmp(fz_compats[i].sku, sku) == 0)
            return &fz_compats[i].row;
    return NULL;
}

static inline void fz_copy_product(fz_db *db, as_mem *m, size_t i, int64_t device_id,
                                   as_product *out)
{
    const as_product *p = &fz_products[i];
    *out = *p;
    size_t first = fz_product_offers[i].first, n = fz_product_offers[i].n;
    out->offers = as_alloc(m, (n + 1) * sizeof(as_offer));
    for (size_t k = 0; k < n; k++) {
        out->offers[k] = fz_offers[first + k];
        out->offers[k].stock = db->st.stock[first + k];
    }
    out->n_offers = n;
    out->specs = as_alloc(m, (p->n_specs + 1) * sizeof(as_spec_row));
    if (p->n_specs) memcpy(out->specs, p->specs, p->n_specs * sizeof(as_spec_row));
    out->questions = as_alloc(m, (p->n_questions + 1) * sizeof(as_question));
    if (p->n_questions) memcpy(out->questions, p->questions, p->n_questions * sizeof(as_question));
    const as_compat *c = fz_compat_for(p->sku, device_id);
    if (c) {
        as_compat *cc = as_alloc(m, sizeof(*cc));
        *cc = *c;
        out->compat = cc;
    } else {
        out->compat = NULL;
    }
}

/* ---- catalogue reads ---- */

static int fz_merchants_fn(void *h, as_mem *m, as_merchant **out, size_t *n)
{
    FZ_ENTER(h, FZ_OP_MERCHANTS);
    as_merchant *r = as_alloc(m, sizeof(fz_merchants));
    memcpy(r, fz_merchants, sizeof(fz_merchants));
    *out = r;
    *n = FZ_N(fz_merchants);
    return AS_OK;
}

static int fz_devices_fn(void *h, as_mem *m, as_device **out, size_t *n)
{
    FZ_ENTER(h, FZ_OP_DEVICES);
    as_device *r = as_alloc(m, sizeof(fz_devices));
    memcpy(r, fz_devices, sizeof(fz_devices));
    *out = r;
    *n = FZ_N(fz_devices);
    return AS_OK;
}

static int fz_device_by_slug(void *h, as_mem *m, const char *slug, as_device *out)
{
    (void)m;
    FZ_ENTER(h, FZ_OP_DEVICE_BY_SLUG);
    FZ_ASSERT(slug, "device_by_slug(NULL)");
    for (size_t i = 0; i < FZ_N(fz_devices); i++)
        if (strcmp(fz_devices[i].slug, slug) == 0) {
            *out = fz_devices[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int fz_product_by_sku(void *h, as_mem *m, const char *sku, int64_t device_id,
                             as_product *out)
{
    FZ_ENTER(h, FZ_OP_PRODUCT_BY_SKU);
    FZ_ASSERT(sku, "product_by_sku(NULL)");
    for (size_t i = 0; i < FZ_N_PRODUCTS; i++)
        if (strcmp(fz_products[i].sku, sku) == 0) {
            fz_copy_product(h, m, i, device_id, out);
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int fz_search_fn(void *h, as_mem *m, const as_search_filter *f, as_product **out,
                        size_t *n)
{
    FZ_ENTER(h, FZ_OP_SEARCH);
    FZ_ASSERT(f->device_id > 0, "search: no device");
    as_product *r = as_alloc(m, (FZ_N_PRODUCTS + 1) * sizeof(*r));
    size_t k = 0;
    for (size_t i = 0; i < FZ_N_PRODUCTS; i++) {
        const as_product *p = &fz_products[i];
        if (f->part_type && strcmp(f->part_type, p->part_type) != 0) continue;
        if (fz_compat_for(p->sku, f->device_id)) fz_copy_product(h, m, i, f->device_id, &r[k++]);
    }
    *out = r;
    *n = k;
    return AS_OK;
}

/* ---- the text index's sources ---- */

static int fz_search_version(void *h, as_search_version *out)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_SEARCH_VERSION);
    out->catalogue = 1;
    out->rank = db->st.rank_version;
    if (out->rank > db->rank_seen) db->rank_seen = out->rank;
    return AS_OK;
}

/* Product i as the store has it now (offers with their stock), ranked as
 * rank_store does: default weights, no filter, day 0. */
static as_rank_row fz_rank_row(fz_db *db, as_mem *m, size_t i, as_product *p)
{
    fz_copy_product(db, m, i, 0, p);
    as_weights w;
    as_weights_default(&w);
    as_offer_filter none = {0, 0, NULL};
    as_ranking r;
    as_rank_offers_brief(m, p, &w, &none, 0, &r);
    const as_scored *best = r.n_ranked ? &r.ranked[0] : NULL;
    as_rank_row row = {best != NULL,
                       best ? best->score : 0,
                       best ? best->offer->price_cents : 0,
                       best ? best->offer->delivery_days : 0,
                       p->return_rate,
                       NULL};
    return row;
}

static void fz_json_str(as_buf *b, const char *s)
{
    json_t *v = s ? json_string(s) : NULL;
    char *t = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
    as_buf_puts(b, t ? t : "null");
    free(t);
    json_decref(v);
}

/* [[label, unit, claimed, measured], ...], claimed and measured the JSON the
 * columns hold (null when NULL); NULL without spec rows. False when a value is
 * not JSON, which the SQL store fails on too. */
static bool fz_specs_json(as_mem *m, const as_product *p, const char **out)
{
    *out = NULL;
    if (!p->n_specs) return true;
    as_buf b;
    as_buf_init(&b, m);
    as_buf_puts(&b, "[");
    for (size_t i = 0; i < p->n_specs; i++) {
        const as_spec_row *r = &p->specs[i];
        FZ_ASSERT(r->label, "product_specs.label is NULL");
        as_buf_puts(&b, i ? ",[" : "[");
        fz_json_str(&b, r->label);
        as_buf_puts(&b, ",");
        fz_json_str(&b, r->unit);
        const char *vals[2] = {r->claimed, r->measured};
        for (int k = 0; k < 2; k++) {
            json_t *v = vals[k] ? json_loads(vals[k], JSON_DECODE_ANY, NULL) : NULL;
            if (vals[k] && !v) return false;
            json_decref(v);
            as_buf_puts(&b, ",");
            as_buf_puts(&b, vals[k] ? vals[k] : "null");
        }
        as_buf_puts(&b, "]");
    }
    as_buf_puts(&b, "]");
    *out = as_buf_str(&b);
    return true;
}

static bool fz_guarantee(const char *sku)
{
    for (size_t i = 0; i < FZ_N(fz_compats); i++)
        if (strcmp(fz_compats[i].sku, sku) == 0 &&
            strcmp(fz_compats[i].row.fit_status, "fits") == 0)
            return true;
    return false;
}

/* fz_products is in id order. */
static int fz_index_rows(void *h, as_index_row_fn each, void *baton)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_INDEX_ROWS);
    FZ_ASSERT(each, "index_rows: no callback");
    int rc = AS_OK;
    for (size_t i = 0; rc == AS_OK && i < FZ_N_PRODUCTS; i++) {
        as_arena *a = as_arena_create();
        as_mem m = as_arena_mem(a);
        as_product p;
        as_index_row r = {.rank = fz_rank_row(db, &m, i, &p)};
        r.id = p.id;
        r.sku = p.sku;
        r.category = p.category;
        r.part_type = p.part_type;
        r.name = p.name;
        r.brand = p.brand;
        r.description = p.description;
        r.hidden = strcmp(p.verif_status, "contradicted") == 0;
        r.verif_note = p.verif_note;
        r.image_urls = p.image_urls;
        r.availability = p.availability;
        r.verif_status = p.verif_status;
        r.guarantee = fz_guarantee(p.sku);
        if (!fz_specs_json(&m, &p, &r.specs) || each(baton, &r) != 0) rc = AS_EDB;
        as_arena_destroy(a);
    }
    return rc;
}

static int fz_cmp_offer(const void *a, const void *b)
{
    return strcmp(fz_offers[*(const size_t *)a].id, fz_offers[*(const size_t *)b].id);
}

/* Product i's offers (indexes into fz_offers) by id; returns how many. */
static size_t fz_offers_by_id(size_t i, size_t *out)
{
    size_t n = fz_product_offers[i].n;
    for (size_t k = 0; k < n; k++)
        out[k] = fz_product_offers[i].first + k;
    qsort(out, n, sizeof(*out), fz_cmp_offer);
    return n;
}

static int fz_index_offers(void *h, as_index_offer_fn each, void *baton)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_INDEX_OFFERS);
    FZ_ASSERT(each, "index_offers: no callback");
    for (size_t i = 0; i < FZ_N_PRODUCTS; i++) {
        size_t ids[FZ_N_OFFERS];
        size_t n = fz_offers_by_id(i, ids);
        for (size_t k = 0; k < n; k++) {
            const as_offer *o = &fz_offers[ids[k]];
            as_index_offer x = {fz_products[i].id, o->id,
                                o->merchant.id,    o->price_label,
                                o->price_cents,    o->retail_price_cents,
                                o->delivery_days,  db->st.stock[ids[k]] > 0,
                                db->st.stock[ids[k]]};
            if (each(baton, &x) != 0) return AS_EDB;
        }
    }
    return AS_OK;
}

/* The rank rows changed since `since`, each with its in-stock offer ids. */
static int fz_rank_changes(void *h, int64_t since, as_rank_row_fn each, void *baton)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_RANK_CHANGES);
    FZ_ASSERT(each, "rank_changes: no callback");
    int rc = AS_OK;
    for (size_t i = 0; rc == AS_OK && i < FZ_N_PRODUCTS; i++) {
        if (db->st.rank_row_version[i] <= since) continue;
        as_arena *a = as_arena_create();
        as_mem m = as_arena_mem(a);
        as_product p;
        as_rank_row r = fz_rank_row(db, &m, i, &p);
        size_t ids[FZ_N_OFFERS];
        size_t n = fz_offers_by_id(i, ids);
        as_buf b;
        as_buf_init(&b, &m);
        for (size_t k = 0; k < n; k++)
            if (db->st.stock[ids[k]] > 0) {
                if (b.len) as_buf_puts(&b, " ");
                as_buf_puts(&b, fz_offers[ids[k]].id);
            }
        r.in_stock = as_strdup(&m, as_buf_str(&b)); /* on the arena even when "" */
        if (each(baton, p.id, &r) != 0) rc = AS_EDB;
        as_arena_destroy(a);
    }
    return rc;
}

static int64_t fz_product_id(const char *sku)
{
    for (size_t i = 0; i < FZ_N_PRODUCTS; i++)
        if (strcmp(fz_products[i].sku, sku) == 0) return fz_products[i].id;
    FZ_FAIL("compat row of an unknown product %s", sku);
}

static int fz_cmp_compat(const void *a, const void *b)
{
    const fz_compat *x = &fz_compats[*(const size_t *)a], *y = &fz_compats[*(const size_t *)b];
    int64_t px = fz_product_id(x->sku), py = fz_product_id(y->sku);
    if (px != py) return px > py ? 1 : -1;
    return (x->device_id > y->device_id) - (x->device_id < y->device_id);
}

static int fz_index_compat(void *h, as_index_compat_fn each, void *baton)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_INDEX_COMPAT);
    FZ_ASSERT(each, "index_compat: no callback");
    size_t order[FZ_N(fz_compats)];
    for (size_t i = 0; i < FZ_N(fz_compats); i++)
        order[i] = i;
    qsort(order, FZ_N(fz_compats), sizeof(*order), fz_cmp_compat);
    for (size_t k = 0; k < FZ_N(fz_compats); k++) {
        const fz_compat *c = &fz_compats[order[k]];
        as_index_compat x = {fz_product_id(c->sku), c->device_id,
                             strcmp(c->row.fit_status, "fits") == 0, c->row.evidence,
                             c->row.checked_at};
        if (each(baton, &x) != 0) return AS_EDB;
    }
    return AS_OK;
}

static int fz_offers_stock(void *h, as_mem *m, const int64_t *ids, size_t n, as_offer_stock **out,
                           size_t *nout)
{
    fz_db *db = h;
    *out = NULL;
    *nout = 0;
    FZ_ENTER(db, FZ_OP_OFFERS_STOCK);
    FZ_ASSERT(ids || n == 0, "offers_stock: NULL ids");
    as_offer_stock *r = as_alloc(m, (FZ_N_OFFERS + 1) * sizeof(*r));
    size_t k = 0;
    for (size_t i = 0; i < FZ_N_PRODUCTS; i++) {
        bool asked = false;
        for (size_t j = 0; j < n && !asked; j++)
            asked = ids[j] == fz_products[i].id;
        for (size_t o = 0; asked && o < fz_product_offers[i].n; o++) {
            size_t x = fz_product_offers[i].first + o;
            r[k++] = (as_offer_stock){fz_products[i].id, fz_offers[x].id, db->st.stock[x]};
        }
    }
    *out = r;
    *nout = k;
    return AS_OK;
}

/* ---- transactions ---- */

static int fz_begin(void *h)
{
    fz_db *db = h;
    FZ_ASSERT(!db->in_tx, "begin inside an open transaction");
    FZ_ENTER(db, FZ_OP_BEGIN);
    db->snapshot = db->st;
    db->in_tx = true;
    return AS_OK;
}

static int fz_commit(void *h)
{
    fz_db *db = h;
    FZ_ASSERT(db->in_tx, "commit without a transaction");
    FZ_ENTER(db, FZ_OP_COMMIT); /* a failed commit leaves the transaction open */
    db->in_tx = false;
    return AS_OK;
}

static int fz_rollback(void *h)
{
    fz_db *db = h;
    /* core may roll back after a failed begin: harmless, as in SQL */
    int rc = fz_enter(db, FZ_OP_ROLLBACK);
    if (db->in_tx) {
        db->st = db->snapshot;
        db->in_tx = false;
    }
    return rc;
}

/* ---- agents and mandates ---- */

static int fz_key_by_hash(void *h, as_mem *m, const char *hash, as_key_row *out)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_KEY_BY_HASH);
    FZ_ASSERT(hash && strlen(hash) == 64, "key_by_hash: not a hex SHA-256");
    /* any well-formed key is accepted, for user u1 unless key_mode says otherwise */
    out->id = "key_1";
    out->user_id = db->user ? db->user : "u1";
    out->key_hash = db->key_mode == 2 ? "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
                                      : as_strdup(m, hash);
    out->revoked_at = db->key_mode == 1 ? "2026-02-01T00:00:00Z" : NULL;
    return AS_OK;
}

static const as_mandate *fz_mandate_find(const char *id)
{
    for (size_t i = 0; i < FZ_N(fz_mandates); i++)
        if (strcmp(fz_mandates[i].id, id) == 0) return &fz_mandates[i];
    return NULL;
}

static int fz_mandate_current(void *h, as_mem *m, const char *user_id, bool lock,
                              as_mandate *out)
{
    (void)m;
    FZ_ENTER(h, FZ_OP_MANDATE_CURRENT);
    FZ_ASSERT(user_id, "mandate_current(NULL)");
    if (lock) FZ_IN_TX((fz_db *)h, "mandate_current(lock)");
    for (size_t i = 0; i < FZ_N(fz_mandates); i++)
        if (strcmp(fz_mandates[i].user_id, user_id) == 0 &&
            strcmp(fz_mandates[i].status, "active") == 0) {
            *out = fz_mandates[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int fz_mandate_get(void *h, as_mem *m, const char *id, bool lock, as_mandate *out)
{
    (void)m;
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_MANDATE_GET);
    if (lock) FZ_IN_TX(db, "mandate_get(lock)");
    const as_mandate *md = fz_mandate_find(id);
    if (!md) return AS_ENOTFOUND;
    *out = *md;
    return AS_OK;
}

static int fz_mandate_spent(void *h, const char *mandate_id, const char *month, int64_t *cents)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_MANDATE_SPENT);
    FZ_ASSERT(month && strlen(month) == 7 && month[4] == '-', "mandate_spent: month '%s'",
              month ? month : "(null)");
    int64_t sum = 0;
    for (size_t i = 0; i < FZ_N_ORDERS; i++)
        if (strcmp(fz_orders[i].o.mandate_id, mandate_id) == 0 &&
            strcmp(fz_orders[i].o.month, month) == 0)
            sum += db->st.order_budget[i];
    *cents = sum;
    return AS_OK;
}

/* ---- quotes ---- */

static bool fz_valid_date(const char *s)
{
    int64_t d;
    return s && as_date_parse(s, &d);
}

static int fz_quote_insert(void *h, const as_quote *q)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_QUOTE_INSERT);
    FZ_ASSERT(q->id && q->user_id && q->offer_id, "quote_insert: NULL id/user/offer");
    FZ_ASSERT(q->quantity >= 1 && q->quantity <= 10, "quote_insert: quantity %lld",
              (long long)q->quantity);
    FZ_ASSERT(q->unit_price_cents > 0 && q->total_cents == q->unit_price_cents * q->quantity,
              "quote_insert: prices %lld x %lld != %lld", (long long)q->unit_price_cents,
              (long long)q->quantity, (long long)q->total_cents);
    FZ_ASSERT(fz_valid_date(q->delivery_by), "quote_insert: delivery_by");
    FZ_ASSERT(q->expires_at > q->created_at, "quote_insert: expiry");
    FZ_ASSERT(!q->device_slug == !q->fit_status, "quote_insert: device without fit status");
    db->st.n_new_quotes++;
    return AS_OK;
}

static int fz_quote_get(void *h, as_mem *m, const char *id, as_quote *out)
{
    (void)m;
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_QUOTE_GET);
    for (size_t i = 0; i < FZ_N_QUOTES; i++)
        if (strcmp(fz_quotes[i].id, id) == 0) {
            *out = fz_quotes[i];
            out->order_id = db->st.quote_order[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

/* ---- orders ---- */

static bool fz_order_state_ok(as_order_state s)
{
    return (unsigned)s < AS_OS_N;
}

static int fz_order_index(const char *id)
{
    for (size_t i = 0; i < FZ_N_ORDERS; i++)
        if (strcmp(fz_orders[i].o.id, id) == 0) return (int)i;
    return -1;
}

static int fz_order_insert(void *h, const as_order *o)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_ORDER_INSERT);
    FZ_IN_TX(db, "order_insert");
    FZ_ASSERT(o->id && o->user_id && o->mandate_id && o->quote_id && o->offer_id && o->month &&
                  o->reason && o->agent,
              "order_insert: a NOT NULL column is NULL");
    FZ_ASSERT(fz_order_state_ok(o->status), "order_insert: status %d", (int)o->status);
    FZ_ASSERT(o->quantity >= 1 && o->total_cents > 0 && o->budget_cents >= 0,
              "order_insert: amounts");
    for (size_t i = 0; i < FZ_N_QUOTES; i++)
        if (strcmp(fz_quotes[i].id, o->quote_id) == 0) {
            if (db->st.quote_order[i]) return AS_ECONFLICT;
            db->st.quote_order[i] = o->id;
        }
    if (db->st.n_new_orders == FZ_MAX_NEW) return AS_EDB;
    FZ_ASSERT(fz_holds_stock(o->status), "order_insert: status %s", as_order_state_name(o->status));
    db->st.new_order_offer[db->st.n_new_orders] = o->offer_id;
    db->st.new_order_qty[db->st.n_new_orders] = o->quantity;
    db->st.new_orders[db->st.n_new_orders++] = o->id;
    return AS_OK;
}

static int fz_order_get(void *h, as_mem *m, const char *id, as_order *out)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_ORDER_GET);
    FZ_ASSERT(id, "order_get(NULL)");
    int i = fz_order_index(id);
    if (i < 0) return AS_ENOTFOUND;
    *out = fz_orders[i].o;
    out->status = db->st.order_status[i];
    out->budget_cents = db->st.order_budget[i];
    out->updated_at = db->st.order_updated[i];
    out->n_events = db->st.n_events[i];
    out->events = as_alloc(m, (out->n_events + 1) * sizeof(as_event));
    memcpy(out->events, db->st.events[i], out->n_events * sizeof(as_event));
    return AS_OK;
}

static int fz_order_move(void *h, const char *id, as_order_state from, as_order_state to,
                         int64_t budget_cents, int64_t at)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_ORDER_MOVE);
    FZ_IN_TX(db, "order_move");
    FZ_ASSERT(fz_order_state_ok(from) && fz_order_state_ok(to), "order_move: %d -> %d", (int)from,
              (int)to);
    FZ_ASSERT(budget_cents >= 0, "order_move: budget %lld", (long long)budget_cents);
    int i = fz_order_index(id);
    if (i < 0 || db->st.order_status[i] != from) return AS_ECONFLICT;
    db->st.order_status[i] = to;
    db->st.order_budget[i] = budget_cents;
    db->st.order_updated[i] = at;
    return AS_OK;
}

static int fz_event_add(void *h, const char *order_id, as_order_state status, int64_t at,
                        const char *note)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_EVENT_ADD);
    FZ_IN_TX(db, "event_add");
    FZ_ASSERT(fz_order_state_ok(status), "event_add: status %d", (int)status);
    int i = fz_order_index(order_id);
    if (i < 0) {
        bool known = false;
        for (size_t k = 0; k < db->st.n_new_orders; k++)
            if (strcmp(db->st.new_orders[k], order_id) == 0) known = true;
        FZ_ASSERT(known, "event_add for an order that does not exist: %s", order_id);
        db->st.n_new_events++;
        return AS_OK;
    }
    if (db->st.n_events[i] == FZ_MAX_EVENTS) return AS_EDB;
    db->st.events[i][db->st.n_events[i]++] = (as_event){status, note, at};
    return AS_OK;
}

static int fz_orders_expired(void *h, as_mem *m, const char *mandate_id, int64_t now,
                             as_order **out, size_t *n)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_ORDERS_EXPIRED);
    as_order *r = as_alloc(m, (FZ_N_ORDERS + 1) * sizeof(*r));
    size_t k = 0;
    for (size_t i = 0; i < FZ_N_ORDERS; i++) {
        const as_order *o = &fz_orders[i].o;
        if ((mandate_id && strcmp(o->mandate_id, mandate_id) != 0) ||
            db->st.order_status[i] != AS_OS_AWAITING || o->confirm_expires_at > now)
            continue;
        /* as the SQL store: only what expiring needs */
        r[k].id = o->id;
        r[k].offer_id = o->offer_id;
        r[k].quantity = o->quantity;
        r[k].confirmation_id = o->confirmation_id;
        r[k].status = AS_OS_AWAITING;
        k++;
    }
    *out = r;
    *n = k;
    return AS_OK;
}

static int fz_offer_index(const char *id)
{
    if (!id) return -1;
    for (size_t i = 0; i < FZ_N_OFFERS; i++)
        if (strcmp(fz_offers[i].id, id) == 0) return (int)i;
    return -1;
}

/* The product of offer i (fz_product_offers). */
static size_t fz_offer_product(size_t i)
{
    size_t p = 0;
    while (p + 1 < FZ_N_PRODUCTS && i >= fz_product_offers[p + 1].first)
        p++;
    return p;
}

/* As as_db_rank_stock_moved: running out or coming back changes the product's
 * rank row, under a new rank version. */
static void fz_rank_moved(fz_db *db, size_t i, int64_t delta)
{
    int64_t stock = db->st.stock[i];
    if ((stock - delta > 0) == (stock > 0)) return;
    db->st.rank_version++;
    db->st.rank_row_version[fz_offer_product(i)] = db->st.rank_version;
}

static int fz_stock_take(void *h, const char *offer_id, int64_t qty)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_STOCK_TAKE);
    FZ_IN_TX(db, "stock_take");
    FZ_ASSERT(qty > 0, "stock_take: qty %lld", (long long)qty);
    int i = fz_offer_index(offer_id);
    if (i < 0 || db->st.stock[i] < qty) return AS_ECONFLICT;
    db->st.stock[i] -= qty;
    fz_rank_moved(db, (size_t)i, -qty);
    return AS_OK;
}

static int fz_stock_give(void *h, const char *offer_id, int64_t qty)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_STOCK_GIVE);
    FZ_IN_TX(db, "stock_give");
    FZ_ASSERT(qty > 0, "stock_give: qty %lld", (long long)qty);
    int i = fz_offer_index(offer_id);
    if (i < 0) return AS_EDB;
    db->st.stock[i] += qty;
    fz_rank_moved(db, (size_t)i, qty);
    return AS_OK;
}

/* ---- confirmations ---- */

static bool fz_conf_status(const char *s)
{
    return s && (!strcmp(s, "pending") || !strcmp(s, "approved") || !strcmp(s, "declined") ||
                 !strcmp(s, "expired") || !strcmp(s, "cancelled"));
}

static int fz_conf_insert(void *h, const as_confirmation *c)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_CONF_INSERT);
    FZ_IN_TX(db, "confirmation_insert");
    FZ_ASSERT(c->id && c->order_id && c->user_id && fz_conf_status(c->status),
              "confirmation_insert: NULL column or bad status");
    FZ_ASSERT(c->expires_at > c->created_at, "confirmation_insert: expiry");
    db->st.n_new_confs++;
    return AS_OK;
}

static int fz_conf_get(void *h, as_mem *m, const char *id, as_confirmation *out)
{
    (void)m;
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_CONF_GET);
    FZ_ASSERT(id, "confirmation_get(NULL)");
    for (size_t i = 0; i < FZ_N_CONFS; i++)
        if (strcmp(fz_confs[i].id, id) == 0) {
            *out = fz_confs[i];
            out->status = db->st.conf_status[i];
            out->decided_at = db->st.conf_decided[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int fz_conf_decide(void *h, const char *id, const char *to, int64_t at)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_CONF_DECIDE);
    FZ_IN_TX(db, "confirmation_decide");
    FZ_ASSERT(fz_conf_status(to), "confirmation_decide: status '%s'", to ? to : "(null)");
    for (size_t i = 0; i < FZ_N_CONFS; i++)
        if (strcmp(fz_confs[i].id, id) == 0) {
            db->st.conf_status[i] = to;
            db->st.conf_decided[i] = at;
            return AS_OK;
        }
    return AS_ECONFLICT;
}

/* ---- Idempotency-Key records: the key's text picks the record ---- */

static int fz_idem_claim(void *h, as_mem *m, const char *user, const char *scope, const char *key,
                         const char *hash, int64_t now, int64_t lease_until, as_idem *existing)
{
    FZ_ENTER(h, FZ_OP_IDEM_CLAIM);
    FZ_IN_TX((fz_db *)h, "idem_claim");
    FZ_ASSERT(user && scope && key && hash, "idem_claim: NULL argument");
    FZ_ASSERT(lease_until > now, "idem_claim: lease");
    memset(existing, 0, sizeof(*existing));
    existing->created_at = now - 5;
    existing->lease_until = now + 12;
    if (strcmp(key, "k-replay") == 0) {
        existing->request_hash = as_strdup(m, hash);
        existing->state = "done";
        existing->status = 201;
        existing->response = "{\"id\":\"ord_first\",\"status\":\"placed\"}";
    } else if (strcmp(key, "k-badjson") == 0) {
        existing->request_hash = as_strdup(m, hash);
        existing->state = "done";
        existing->status = 201;
        existing->response = "{truncated";
    } else if (strcmp(key, "k-busy") == 0) {
        existing->request_hash = as_strdup(m, hash);
        existing->state = "in_flight";
    } else if (strcmp(key, "k-other") == 0) {
        existing->request_hash = "0000000000000000000000000000000000000000000000000000000000000000";
        existing->state = "done";
        existing->status = 201;
        existing->response = "{}";
    } else {
        return AS_OK;
    }
    return AS_ECONFLICT;
}

/* The records above are fixed: none is past its keeping time or a claim
 * whose lease ran out, so core never forgets or takes one over. */
static int fz_idem_forget(void *h, const char *user, const char *scope, const char *key,
                          int64_t before)
{
    (void)user, (void)scope, (void)key, (void)before;
    FZ_IN_TX((fz_db *)h, "idem_forget");
    FZ_ASSERT(false, "idem_forget: no record is that old");
    return AS_EDB;
}

static int fz_idem_takeover(void *h, as_mem *m, const char *user, const char *scope,
                            const char *key, const char *hash, int64_t now, int64_t lease_until,
                            as_idem *existing)
{
    (void)m, (void)user, (void)scope, (void)key, (void)hash, (void)now, (void)lease_until;
    (void)existing;
    FZ_IN_TX((fz_db *)h, "idem_takeover");
    FZ_ASSERT(false, "idem_takeover: no lease has run out");
    return AS_EDB;
}

static int fz_idem_finish(void *h, const char *user, const char *scope, const char *key,
                          int status, const char *response)
{
    (void)user;
    (void)scope;
    (void)key;
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_IDEM_FINISH);
    FZ_IN_TX(db, "idem_finish");
    FZ_ASSERT(status >= 200 && status <= 599, "idem_finish: status %d", status);
    json_t *v = response ? json_loads(response, 0, NULL) : NULL;
    FZ_ASSERT(v, "idem_finish: the remembered response is not JSON");
    json_decref(v);
    return AS_OK;
}

/* ---- returns and questions ---- */

static int fz_return_insert(void *h, const as_return *r)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_RETURN_INSERT);
    FZ_IN_TX(db, "return_insert");
    FZ_ASSERT(r->id && r->order_id && r->user_id && r->reason_code && r->refund_status &&
                  r->carrier && r->tracking_code,
              "return_insert: a NOT NULL column is NULL");
    FZ_ASSERT(r->refund_cents >= 0, "return_insert: refund %lld", (long long)r->refund_cents);
    int i = fz_order_index(r->order_id);
    if (i >= 0) {
        if (db->st.returned[i]) return AS_ECONFLICT;
        db->st.returned[i] = true;
    }
    db->st.n_new_returns++;
    return AS_OK;
}

static int fz_return_get(void *h, as_mem *m, const char *id, as_return *out)
{
    (void)m;
    FZ_ENTER(h, FZ_OP_RETURN_GET);
    for (size_t i = 0; i < FZ_N(fz_returns); i++)
        if (strcmp(fz_returns[i].id, id) == 0) {
            *out = fz_returns[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int fz_return_by_order(void *h, as_mem *m, const char *order_id, as_return *out)
{
    (void)m;
    FZ_ENTER(h, FZ_OP_RETURN_BY_ORDER);
    for (size_t i = 0; i < FZ_N(fz_returns); i++)
        if (strcmp(fz_returns[i].order_id, order_id) == 0) {
            *out = fz_returns[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

/* ---- passkeys ---- */

/* u1's passkey (a P-256 key nobody holds: assertions reach the signature
 * check and fail there), the enrolment enr_fz of u1 whose token is
 * "fz-enrol-token", and a challenge any ceremony may answer: "fzchallenge",
 * base64url (a fuzzer can reach registration's CBOR with it). */
#define FZ_PK_ID "ZnotcGFzc2tleQ"
#define FZ_PK_KEY                                                                                  \
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEKiODUcmn7OtxqkpgEDxIAd6mMyXi49tctUvXj3TeSo_5-pZ4BEl"      \
    "RTv7da2-4NmVY8LXavSiU8XpvmvDQ_6F8fw"
#define FZ_CHALLENGE "ZnpjaGFsbGVuZ2U"

static int fz_passkey_insert(void *h, const as_passkey *k)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_PASSKEY_INSERT);
    FZ_IN_TX(db, "passkey_insert");
    FZ_ASSERT(k->id && k->user_id && k->public_key && k->alg, "passkey_insert: NULL column");
    if (strcmp(k->id, FZ_PK_ID) == 0) return AS_ECONFLICT;
    for (size_t i = 0; i < db->st.n_new_pk; i++)
        if (strcmp(db->st.new_pk[i].id, k->id) == 0) return AS_ECONFLICT;
    if (db->st.n_new_pk == FZ_N(db->st.new_pk)) return AS_EDB;
    db->st.new_pk[db->st.n_new_pk++] = *k;
    return AS_OK;
}

static bool fz_passkey_at(fz_db *db, size_t i, as_passkey *out)
{
    if (i == 0) {
        *out = (as_passkey){FZ_PK_ID, "u1", AS_COSE_ES256, FZ_PK_KEY, db->st.fixture_pk_count, 0};
        return true;
    }
    if (i - 1 >= db->st.n_new_pk) return false;
    *out = db->st.new_pk[i - 1];
    return true;
}

static int fz_passkeys_of(void *h, as_mem *m, const char *user_id, as_passkey **out, size_t *n)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_PASSKEYS_OF);
    *out = as_alloc(m, (FZ_N(db->st.new_pk) + 1) * sizeof(as_passkey));
    *n = 0;
    as_passkey k;
    for (size_t i = 0; fz_passkey_at(db, i, &k); i++)
        if (strcmp(k.user_id, user_id) == 0) (*out)[(*n)++] = k;
    return AS_OK;
}

static int fz_passkey_get(void *h, as_mem *m, const char *id, as_passkey *out)
{
    (void)m;
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_PASSKEY_GET);
    for (size_t i = 0; fz_passkey_at(db, i, out); i++)
        if (strcmp(out->id, id) == 0) return AS_OK;
    return AS_ENOTFOUND;
}

static int fz_passkey_count(void *h, const char *id, int64_t from, int64_t to)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_PASSKEY_COUNT);
    FZ_IN_TX(db, "passkey_count");
    FZ_ASSERT(to > from || (to == 0 && from == 0), "passkey_count: the counter went back");
    if (strcmp(id, FZ_PK_ID) == 0) {
        if (db->st.fixture_pk_count != from) return AS_ECONFLICT;
        db->st.fixture_pk_count = to;
        return AS_OK;
    }
    for (size_t i = 0; i < db->st.n_new_pk; i++)
        if (strcmp(db->st.new_pk[i].id, id) == 0) {
            if (db->st.new_pk[i].sign_count != from) return AS_ECONFLICT;
            db->st.new_pk[i].sign_count = to;
            return AS_OK;
        }
    return AS_ECONFLICT;
}

static int fz_enrolment_insert(void *h, const as_enrolment *e)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_ENROLMENT_INSERT);
    FZ_ASSERT(e->id && e->user_id && e->token_hash, "enrolment_insert: NULL column");
    return AS_OK;
}

static int fz_enrolment_get(void *h, as_mem *m, const char *id, as_enrolment *out)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_ENROLMENT_GET);
    if (strcmp(id, "enr_fz") != 0) return AS_ENOTFOUND;
    *out = (as_enrolment){"enr_fz", "u1", as_sha256_hex(m, "fz-enrol-token", 14),
                          FZ_NOW - 3600, FZ_NOW + 86400, db->st.enrolment_used};
    return AS_OK;
}

static int fz_enrolment_use(void *h, const char *id, int64_t now)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_ENROLMENT_USE);
    FZ_IN_TX(db, "enrolment_use");
    if (strcmp(id, "enr_fz") != 0 || db->st.enrolment_used) return AS_ECONFLICT;
    db->st.enrolment_used = now;
    return AS_OK;
}

static int fz_challenge_insert(void *h, const char *challenge, const char *purpose,
                               const char *subject_id, int64_t expires_at)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_CHALLENGE_INSERT);
    FZ_ASSERT(challenge && strlen(challenge) == 43, "challenge_insert: not 32 random bytes");
    FZ_ASSERT(!strcmp(purpose, "enrol") || !strcmp(purpose, "approve"), "challenge purpose");
    FZ_ASSERT(subject_id && expires_at > 0, "challenge_insert: no subject or expiry");
    if (db->st.n_challenges == FZ_N(db->st.challenge)) return AS_EDB;
    db->st.challenge_subject[db->st.n_challenges] = subject_id;
    db->st.challenge[db->st.n_challenges++] = challenge;
    return AS_OK;
}

static int fz_challenge_use(void *h, const char *challenge, const char *purpose,
                            const char *subject_id, int64_t now)
{
    (void)purpose;
    (void)now;
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_CHALLENGE_USE);
    FZ_IN_TX(db, "challenge_use");
    if (strcmp(challenge, FZ_CHALLENGE) == 0) return AS_OK;
    for (size_t i = 0; i < db->st.n_challenges; i++)
        if (strcmp(db->st.challenge[i], challenge) == 0 &&
            strcmp(db->st.challenge_subject[i], subject_id) == 0 && !db->st.challenge_used[i]) {
            db->st.challenge_used[i] = true;
            return AS_OK;
        }
    return AS_ECONFLICT;
}

static int fz_question_insert(void *h, int64_t product_id, const char *id, const char *user_id,
                              const char *question, const char *answer, const char *asked_at,
                              const char *since, int64_t per_day)
{
    (void)product_id;
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_QUESTION_INSERT);
    FZ_ASSERT(id && user_id && question && answer && asked_at, "question_insert: NULL column");
    FZ_ASSERT(since && strcmp(since, asked_at) <= 0 && per_day > 0,
              "question_insert: the day's limit starts after the question");
    json_t *v = json_loads(answer, 0, NULL);
    FZ_ASSERT(json_is_object(v), "question_insert: the answer is not a JSON object");
    json_decref(v);
    db->st.n_questions++;
    return AS_OK;
}

/* ---- product views from the index (core/search/as_search_view.c) ---- */

/* Every product with its specs, by id: what the index keeps of its view. */
static int fz_view_rows(void *h, as_view_row_fn each, void *baton)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_VIEW_ROWS);
    FZ_ASSERT(each, "view_rows: no callback");
    int rc = AS_OK;
    for (size_t i = 0; rc == AS_OK && i < FZ_N_PRODUCTS; i++) {
        as_arena *a = as_arena_create();
        as_mem m = as_arena_mem(a);
        as_product p;
        fz_copy_product(db, &m, i, 0, &p);
        p.offers = NULL, p.n_offers = 0, p.questions = NULL, p.n_questions = 0;
        if (each(baton, &p) != 0) rc = AS_EDB;
        as_arena_destroy(a);
    }
    return rc;
}

/* The stock of the product's offers, its questions and the index's versions. */
static int fz_product_live(void *h, as_mem *m, const char *sku, int64_t product_id,
                           as_product_live *out)
{
    fz_db *db = h;
    FZ_ENTER(db, FZ_OP_PRODUCT_LIVE);
    FZ_ASSERT((sku || product_id > 0) && out, "product_live(NULL)");
    memset(out, 0, sizeof(*out));
    out->version = (as_search_version){.catalogue = 1, .rank = db->st.rank_version};
    if (out->version.rank > db->rank_seen) db->rank_seen = out->version.rank;
    for (size_t i = 0; i < FZ_N_PRODUCTS; i++) {
        if (product_id <= 0 && strcmp(fz_products[i].sku, sku) != 0) continue;
        as_product p;
        fz_copy_product(db, m, i, 0, &p);
        if (product_id > 0 && p.id != product_id) continue;
        out->product_id = p.id;
        out->stock = as_alloc(m, (p.n_offers + 1) * sizeof(*out->stock));
        for (size_t k = 0; k < p.n_offers; k++)
            out->stock[out->n_stock++] = (as_offer_stock){p.id, p.offers[k].id, p.offers[k].stock};
        out->questions = p.questions;
        out->n_questions = p.n_questions;
    }
    return AS_OK;
}

/* Every table but the view versions and the live sequence. */
static const as_store_catalog_ops fz_catalog = {
    .device_by_slug = fz_device_by_slug,
    .product_by_sku = fz_product_by_sku,
    .search = fz_search_fn,
    .product_live = fz_product_live,
    .offers_stock = fz_offers_stock,
};
static const as_store_feed_ops fz_feed = {
    .merchants = fz_merchants_fn,
    .devices = fz_devices_fn,
    .search_version = fz_search_version,
    .index_rows = fz_index_rows,
    .index_offers = fz_index_offers,
    .rank_changes = fz_rank_changes,
    .index_compat = fz_index_compat,
    .view_rows = fz_view_rows,
};
static const as_store_buy_ops fz_buy = {
    .begin = fz_begin,
    .commit = fz_commit,
    .rollback = fz_rollback,
    .key_by_hash = fz_key_by_hash,
    .mandate_current = fz_mandate_current,
    .mandate_get = fz_mandate_get,
    .mandate_spent = fz_mandate_spent,
    .quote_insert = fz_quote_insert,
    .quote_get = fz_quote_get,
    .order_insert = fz_order_insert,
    .order_get = fz_order_get,
    .order_move = fz_order_move,
    .event_add = fz_event_add,
    .orders_expired = fz_orders_expired,
    .stock_take = fz_stock_take,
    .stock_give = fz_stock_give,
    .confirmation_insert = fz_conf_insert,
    .confirmation_get = fz_conf_get,
    .confirmation_decide = fz_conf_decide,
    .idem_claim = fz_idem_claim,
    .idem_forget = fz_idem_forget,
    .idem_takeover = fz_idem_takeover,
    .idem_finish = fz_idem_finish,
    .return_insert = fz_return_insert,
    .return_get = fz_return_get,
    .return_by_order = fz_return_by_order,
    .question_insert = fz_question_insert,
    .passkey_insert = fz_passkey_insert,
    .passkeys_of = fz_passkeys_of,
    .passkey_get = fz_passkey_get,
    .passkey_count = fz_passkey_count,
    .enrolment_insert = fz_enrolment_insert,
    .enrolment_get = fz_enrolment_get,
    .enrolment_use = fz_enrolment_use,
    .challenge_insert = fz_challenge_insert,
    .challenge_use = fz_challenge_use,
};
static const as_store_ops fz_ops = {.catalog = &fz_catalog, .feed = &fz_feed, .buy = &fz_buy};

static inline as_store fz_store_make(fz_db *db)
{
    return (as_store){&fz_ops, db};
}

#endif
