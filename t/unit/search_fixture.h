/* What the search tests (search_engine_test.c, search_body_test.c) share: the
 * catalogue's shape and its compat rows, and a search run as the handler runs
 * it. Each test keeps its own merchants, devices and products: their values
 * are what it tests (plain ones for the engine, awkward ones for the bytes). */
#ifndef SEARCH_FIXTURE_H
#define SEARCH_FIXTURE_H

#include "fake_store.h"
#include "unit_check.h"

#include "as_search.h"

/* db over the merchants, three devices (the Dyson V11 is id 7, the V8 id 9)
 * and the products, which hold HEPA-5 (fits the V11 and the V8) and GEN-6
 * (does not: a diameter 80 mm against 70). */
static inline void fixture_catalogue(fake_db *db, const as_merchant *merchants, size_t n_merchants,
                                     const as_device devices[static 3], const as_product *products,
                                     size_t n_products)
{
    static const fake_compat compat[] = {
        {"HEPA-5", 7, {"dyson-v11", "Dyson V11 Absolute", AS_FIT_FITS, "[]", "2026-01-02"}},
        {"GEN-6",
         7,
         {"dyson-v11", "Dyson V11 Absolute", AS_FIT_DOES_NOT_FIT,
          "[{\"label\":\"Diameter\",\"unit\":\"mm\",\"part_value\":80,\"device_value\":70,"
          "\"tolerance\":0.5}]",
          "2026-01-02"}},
        /* the V8 rows repeat the V11 rows' evidence, checked on another day
         * or on none: the index keeps a row's parts once per evidence, fit
         * and day */
        {"HEPA-5", 9, {"dyson-v8", "Dyson V8 Animal", AS_FIT_FITS, "[]", "2026-03-04"}},
        {"GEN-6",
         9,
         {"dyson-v8", "Dyson V8 Animal", AS_FIT_DOES_NOT_FIT,
          "[{\"label\":\"Diameter\",\"unit\":\"mm\",\"part_value\":80,\"device_value\":70,"
          "\"tolerance\":0.5}]",
          NULL}},
    };
    memset(db, 0, sizeof(*db));
    db->merchants = merchants;
    db->n_merchants = n_merchants;
    db->devices = devices;
    db->n_devices = 3;
    db->products = products;
    db->n_products = n_products;
    db->compat = compat;
    db->n_compat = N_ROWS(compat);
    db->version = (as_search_version){1, 0, 0};
}

/* ask run on snapshot s into r, its page's stock then read from st (what the
 * search handler does between the two). */
static inline void fixture_search(as_mem *m, const as_store *st, const as_search_snap *s,
                                  const as_search_ask *ask, as_search_result *r)
{
    as_search_run(s, m, ask, r);
    if (!r->n) return;
    as_offer_stock *stock;
    size_t n;
    assert_int_equal(as_store_offers_stock(st, m, r->ids, r->n, &stock, &n), AS_OK);
    as_search_apply_stock(r, stock, n);
}

#endif
