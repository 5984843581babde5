/* The text index of the catalogue, in memory, one per process (shared by its
 * threads): what the paged search with `q` matches, counts, sorts and pages
 * before the store reads the page's products. docs/storage.md, "Search at
 * scale", has the design; docs/ranking.md the relevance (bm25).
 *
 * An as_text_index is an immutable snapshot of one catalogue version: the
 * words of every product (a sorted vocabulary, a posting list per word and a
 * word list per product), and each product's search order row. Readers share
 * it by reference count and never wait for each other; as_search_index keeps
 * the current snapshot and replaces it when the store's version moves on. */
#ifndef AS_TEXT_INDEX_H
#define AS_TEXT_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "as_mem.h"
#include "as_store.h"

typedef struct as_text_index as_text_index;
typedef struct as_text_builder as_text_builder;

/* Building: rows in product id order, then finish (NULL when out of memory;
 * the builder is freed either way). */
as_text_builder *as_text_builder_new(void);
bool as_text_builder_merchants(as_text_builder *b, const as_merchant *ms, size_t n); /* first */
int as_text_builder_add(void *builder, const as_index_row *row); /* an as_index_row_fn */
/* then every offer, by product id (an as_index_offer_fn) */
int as_text_builder_offer(void *builder, const as_index_offer *offer);
as_text_index *as_text_builder_finish(as_text_builder *b, const as_search_version *v);
void as_text_builder_free(as_text_builder *b);

/* A copy of ix at version v with the rank rows read by rank_changes applied
 * (the words are shared, not copied). NULL when out of memory or when the
 * store failed. */
as_text_index *as_text_index_update(as_text_index *ix, const as_store *st,
                                    const as_search_version *v);

void as_text_index_retain(as_text_index *ix);
void as_text_index_release(as_text_index *ix); /* NULL is fine */
as_search_version as_text_index_version(const as_text_index *ix);
size_t as_text_index_bytes(const as_text_index *ix); /* memory held, words and rows */
size_t as_text_index_size(const as_text_index *ix);  /* products */

/* One page of a paged text search (q->n_terms > 0): the page's products in
 * search order (summaries with their offers, but the offers' stock: 0 until
 * the store's is filled in), the totals, and the first 100 hidden matches by
 * id (sku, name, verif_status and verif_note set). Everything is copied into m. */
typedef struct as_text_page {
    int64_t *ids;
    as_product *products; /* text_rank: -bm25, lower is better */
    size_t n;
    int64_t count, excluded_count;
    as_product *excluded;
    size_t n_excluded;
} as_text_page;

void as_text_index_search(const as_text_index *ix, as_mem *m, const as_search_query *q,
                          as_text_page *out);

/* The process's current snapshot. as_search_index_get reads the store's
 * version and returns a retained snapshot of it, building or updating one when
 * the current one is older (one thread at a time builds; readers of the
 * current snapshot are never held up). NULL when the store failed. */
typedef struct as_search_index as_search_index;
as_search_index *as_search_index_create(void); /* NULL when out of memory */
void as_search_index_destroy(as_search_index *si);
as_text_index *as_search_index_get(as_search_index *si, const as_store *st);

#endif
