/* An in-memory as_store over small static arrays of merchants, offers,
 * products, devices and compat rows (fake_store.c), and its default
 * catalogue, for the unit tests of endpoints and of the search index. */
#ifndef FAKE_STORE_H
#define FAKE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "as_catalog.h"
#include "as_store.h"

/* A compat row of the fake catalogue: which product, which device. */
typedef struct fake_compat {
    const char *sku;
    int64_t device_id;
    as_compat row;
} fake_compat;

typedef struct fake_db {
    const as_merchant *merchants;
    size_t n_merchants;
    const as_device *devices;
    size_t n_devices;
    const as_product *products; /* offers/specs/questions point into static arrays */
    size_t n_products;
    const fake_compat *compat;
    size_t n_compat;
    /* search_version: {1, 0} by default. Nothing here changes stock, so a test
     * that does (products pointing at its own offers) raises rank itself;
     * rank_changes then reports every product. */
    as_search_version version;
    int fail; /* when non-zero, every call returns this (e.g. AS_EDB) */
    int calls;
} fake_db;

/* Catalogue reads and the search index's sources; no buying, no view
 * versions, no live sequence. A test that needs another table copies these
 * and changes what it needs. */
extern const as_store_feed_ops fake_feed;
extern const as_store_ops fake_ops;
as_store fake_store_make(fake_db *db);

/* The index_rows of fake_feed (for a test that wraps it). */
int fake_index_rows(void *h, as_index_row_fn each, void *baton);
/* Whether the product with that sku has a "fits" compat row. */
bool fake_guarantee(const fake_db *db, const char *sku);

/* The default catalogue: two Dysons (for ambiguity) and a jug. */
void fake_db_default(fake_db *db);

#endif
