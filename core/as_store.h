/* What core needs from storage, as a table of functions. sql/as_store_dbd.c
 * implements it over apr_dbd; unit tests implement it in memory. Results are
 * allocated on the as_mem passed in. */
#ifndef AS_STORE_H
#define AS_STORE_H

#include "as_catalog.h"
#include "as_mem.h"

enum {
    AS_OK = 0,
    AS_ENOTFOUND = 1, /* no such row */
    AS_EDB = 2,       /* storage failed; the store has logged why */
};

/* Catalogue filters that the store applies with its indexes. */
typedef struct as_search_filter {
    const char *const *terms; /* words that must all match name, brand or description */
    size_t n_terms;           /* 0: no text filter */
    const char *category;  /* NULL for any */
    const char *part_type; /* NULL for any */
    int64_t device_id;     /* 0 for none: else only products with a compat row */
    const char *merchant;  /* merchant id, NULL for any: products it offers */
} as_search_filter;

typedef struct as_store {
    void *h;
    int (*merchants)(void *h, as_mem *m, as_merchant **out, size_t *n);
    int (*devices)(void *h, as_mem *m, as_device **out, size_t *n);
    int (*device_by_slug)(void *h, as_mem *m, const char *slug, as_device *out);
    /* Full product with specs, offers and questions; compat for device_id when > 0. */
    int (*product_by_sku)(void *h, as_mem *m, const char *sku, int64_t device_id,
                          as_product *out);
    /* Product summaries with their offers (and compat when filtering by device). */
    int (*search)(void *h, as_mem *m, const as_search_filter *f, as_product **out, size_t *n);
} as_store;

#endif
