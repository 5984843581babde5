/* An in-memory as_store over small static arrays of merchants, offers,
 * products, devices and compat rows (fake_store.c), and its catalogues: the
 * default one, for the unit tests of endpoints and of the search index and
 * the golden request files, and a wide one (the default plus awkward data)
 * for the fuzzers. Its buying tables are fake_shop.c's; its failure injection
 * and invariant checks fake_faults.h's. */
#ifndef FAKE_STORE_H
#define FAKE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "as_catalog.h"
#include "as_store.h"
#include "fake_faults.h"

#define N_ROWS(a) (sizeof(a) / sizeof((a)[0]))

#define FAKE_MAX_OFFERS 32   /* offers of a catalogue with live stock */
#define FAKE_MAX_PRODUCTS 16 /* products of a catalogue with live stock */

/* A compat row of the fake catalogue: which product, which device. */
typedef struct fake_compat {
    const char *sku;
    int64_t device_id;
    as_compat row;
} fake_compat;

/* What writes change in the catalogue (fake_shop.c keeps one in the tables a
 * rollback puts back): each offer's stock, and the rank versions as
 * sql/as_db_search.c keeps them (search_rank's, and each product's rank row's
 * of its last change). */
typedef struct fake_live {
    struct {
        const char *offer_id;
        int64_t stock;
        size_t product; /* index into fake_db.products */
        bool withdrawn; /* as the feed's withdrawal leaves it: stock 0, never sold again */
    } offer[FAKE_MAX_OFFERS];
    size_t n_offers;
    int64_t rank;
    int64_t row_rank[FAKE_MAX_PRODUCTS];
} fake_live;

typedef struct fake_db {
    const as_merchant *merchants;
    size_t n_merchants;
    const as_device *devices;
    size_t n_devices;
    const as_product *products; /* offers/specs/questions point into static arrays */
    size_t n_products;
    const fake_compat *compat;
    size_t n_compat;
    /* search_version: {1, 0} by default. Without live (below) nothing here
     * changes stock, so a test that does (products pointing at its own
     * offers) raises rank itself; rank_changes then reports every product. */
    as_search_version version;
    /* When set: the stock as writes left it and the rank versions they raised
     * (fake_shop.c); the offers' own stock and version.rank otherwise. */
    fake_live *live;
    int64_t rank_seen; /* the highest rank version search_version or product_live answered */
    int fail;          /* when non-zero, every call returns this (e.g. AS_EDB) */
    int calls;
    /* Failure injection (fake_faults.h): which function, which call, what code. */
    int fail_op, fail_nth, fail_rc;
    int op_calls[FAKE_OP_N];
} fake_db;

/* Catalogue reads and the search index's sources; no buying (fake_shop.h
 * adds it), no view versions, no live sequence. A test that needs another
 * table copies these and changes what it needs. */
extern const as_store_catalog_ops fake_catalog;
extern const as_store_feed_ops fake_feed;
extern const as_store_ops fake_ops;
as_store fake_store_make(fake_db *db);

/* The index_rows of fake_feed (for a test that wraps it). */
int fake_index_rows(void *h, as_index_rows_fn each, void *baton);
/* Whether the product with that sku has a "fits" compat row. */
bool fake_guarantee(const fake_db *db, const char *sku);

/* The default catalogue: two Dysons (for ambiguity) and a jug. */
void fake_db_default(fake_db *db);
/* The default catalogue and more (fake_store.c says what): another merchant,
 * two more devices, products with odd JSON, a broken answer to a question,
 * offers out of stock, compat rows whose evidence is not what it should be. */
void fake_db_wide(fake_db *db);

/* Fills live with db's offers' own stock, every rank version 0, and points
 * db at it. False when the catalogue is larger than a fake_live holds. */
bool fake_live_init(fake_db *db, fake_live *live);
/* The live stock of an offer (NULL: no such offer), and the index of its
 * product in *product when product is not NULL. */
int64_t *fake_live_stock(fake_db *db, const char *offer_id, size_t *product);
/* As as_db_rank_stock_moved: an offer's stock running out or coming back
 * (from before to its stock now) changes its product's rank row, under a new
 * rank version. */
void fake_live_moved(fake_db *db, const char *offer_id, int64_t before);
/* The offer withdrawn as the catalogue feed withdraws one (its stock 0, its
 * product's rank row changed); false when there is no such offer. */
bool fake_live_withdraw(fake_db *db, const char *offer_id);
/* Whether the offer was withdrawn (fake_live_withdraw). */
bool fake_live_withdrawn(const fake_db *db, const char *offer_id);

#endif
