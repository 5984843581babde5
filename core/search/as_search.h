/* Search: one engine for every GET /search, whatever its parameters
 * (docs/search.md). Every file of core/search/, in the order a search meets
 * them:
 *
 *   as_search_words.c/.h  read: the words of a text (folding, units, stems,
 *                         filler), the same for products and queries
 *   as_search_read.c      read: a query's text (a price cap or a device named in it)
 *   as_search_filter.c    filter: category, part type, device, merchant, price,
 *                         delivery, verified_only; why a product is left out
 *   as_search_match.c     match: which products have the query's words, and how well
 *   as_search_rank.c      rank: each product's best offer under the weights (the
 *                         formula of core/rules/as_rank.c, from the index's columns)
 *   as_search_page.c      page: order, count, the page, the excluded list; and
 *                         as_search_run, the stages in turn:
 *                           read_query        the text's words, device and price cap
 *                           sx_filter_prepare the filters; sx_filter_bitsets theirs
 *                           choose_way        the weights' table, bitsets or a walk
 *                           match_words       sx_match_run, what the text was read as
 *                           page_bits         count and page by bitsets (no device), or
 *                           walk_matches      each match filtered, ranked, placed
 *                                             (candidates, then per product:
 *                                             place_packed, surely_excluded,
 *                                             bound_stays_off, sorted_stays_off,
 *                                             rank_offers)
 *                           collect_excluded  the excluded list's entries
 *                           write_page        the page's products and matches
 *   as_search_body.c/.h   the GET /search 200 body, written as JSON text
 *   as_search_compat.c    a device's compatible parts, a page of them
 *   as_search_kept.c      product views from the index (the parts a catalogue
 *                         load alone changes, kept in it)
 *   as_search_live.c      the live part of a page or a view, from the index when
 *                         the store says it has not moved
 *   as_search_catalog.c   what the stages share of a catalogue, built or
 *                         mapped: its process's own part (sx_catalog_private),
 *                         the searches' scratch memory, a product's summary
 *                         fields (index, file and page call it; it calls none
 *                         of them)
 *   as_search_index.c     the catalogue index: built from the store
 *                         (snapshot_of_rows: order_skus, append_compat_views,
 *                         order_docs, write_excluded_entries, write_summary_heads,
 *                         index_words = sort_vocabulary + group_stems,
 *                         make_postings, group_products, index_compat,
 *                         list_devices, new_snapshot), kept current (restock),
 *                         in the background (request_build, wait_first_build)
 *   as_search_file.c      the index as one file every child maps read-only
 *   as_search_internal.h  the index's layout, shared by these files alone
 *
 * The database is the source of truth. The index is an immutable snapshot of
 * one catalogue version plus the stock state of every offer (in stock or not)
 * at a rank version; a request takes the current snapshot, and the page's
 * offers' stock is read live from the store. */
#ifndef AS_SEARCH_H
#define AS_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "as_catalog.h"
#include "as_log.h"
#include "as_mem.h"
#include "as_rank.h"
#include "as_search_words.h"
#include "as_store.h"
#include "as_view.h"

typedef struct as_search_snap as_search_snap;

/* The process's current snapshot (one per server and child, shared by its
 * threads). as_search_index_get reads the store's versions and returns a
 * retained snapshot of them: at once when it has one of that catalogue
 * (updating its stock when that moved: cheap, one thread at a time; readers
 * of the current snapshot are never held up). When the catalogue moved, with
 * an opener (as_search_index_background) the current snapshot serves while a
 * thread of the index's own builds the new one on a store of its own, and the
 * next search after it is installed uses it; only a process that has no
 * snapshot at all waits for that build (at most wait_ms). Without an opener
 * (tests, tools) the caller builds. NULL when the store failed, or when no
 * snapshot could be had in time (as_search_index_retry_after then says so). */
typedef struct as_search_index as_search_index;
/* the index logs through an as_log_fn (as_log.h) */
/* file_prefix: the index files' path without "-<catalogue version>.idx" (in a
 * directory only this process's user can write), shared by every process of
 * one database: the first to need a catalogue version builds it into the file
 * (the others wait on "<file_prefix>.lock", or go on with the version they
 * have), and every process maps it read-only. NULL: each process builds its
 * own, in memory. log: what was built or mapped, and failures. NULL when out
 * of memory. */
as_search_index *as_search_index_create(const char *file_prefix, as_log_fn log,
                                        void *log_baton);
/* Why an index made without a file prefix has none (the directory cannot be
 * used): the first copy the process builds for itself logs it, once, as a
 * warning. Copied; call before the first search. */
void as_search_index_private(as_search_index *si, const char *why);
/* At start-up: removes from the index files' directory the temporary files
 * of writers that died (those of databases whose lock nobody holds). How many
 * were removed. */
int as_search_files_sweep(const char *dir);
/* Stops a background build under way (it gives up at its next batch of rows,
 * leaving no file behind but whole ones) and waits for its thread. */
void as_search_index_destroy(as_search_index *si);
as_search_snap *as_search_index_get(as_search_index *si, const as_store *st);
/* The same, with the versions it read (for as_search_offers_stock). */
as_search_snap *as_search_index_get_read(as_search_index *si, const as_store *st,
                                         as_search_version *read);
/* The same for versions the caller read from the store itself (a product
 * view reads them with its live part: as_product_live); with a background
 * build and no snapshot yet, NULL at once (the first build is asked for, not
 * waited for). */
as_search_snap *as_search_index_at(as_search_index *si, const as_store *st,
                                   const as_search_version *read);

/* The snapshot the process has now, retained, without reading the store
 * (NULL when it has none): for a product view, which reads the versions with
 * its live part and uses this one only when they are its. */
as_search_snap *as_search_index_current(as_search_index *si);

/* A store of the index's own, for builds outside any request. open: AS_OK and
 * *st usable by the calling thread alone until close(baton, *conn). */
typedef struct as_search_opener {
    int (*open)(void *baton, as_store *st, void **conn);
    void (*close)(void *baton, void *conn);
    void *baton;
    long wait_ms; /* how long a search waits when the process has no snapshot yet */
} as_search_opener;

/* From now on new catalogues are built in the background (one thread per
 * index, made at the first build, one build at a time; a failed build is
 * retried by a later search, after 1 s, 2 s, 4 s ... at most a minute). Call
 * before the index is shared between threads. */
void as_search_index_background(as_search_index *si, const as_search_opener *opener);
/* After as_search_index_get returned NULL: the seconds after which a search
 * may find the first snapshot built (a build under way or backed off from),
 * or 0 when the store failed. */
int as_search_index_retry_after(as_search_index *si);

/* A snapshot built now, for a caller without a process index (tests). */
as_search_snap *as_search_snap_build(const as_store *st);
void as_search_snap_release(as_search_snap *s); /* NULL is fine */
as_search_version as_search_snap_version(const as_search_snap *s);
/* The devices and merchants as the store gave them to s's build, in the
 * store's order: what st->devices and st->merchants would answer while the
 * store's catalogue is s's (a catalogue load is what changes them). The
 * devices' strings are s's (hold s while they are used); the merchants are
 * copied onto m. */
void as_search_snap_devices(const as_search_snap *s, const as_device **out, size_t *n);
void as_search_snap_merchants(const as_search_snap *s, as_mem *m, as_merchant **out, size_t *n);
size_t as_search_snap_products(const as_search_snap *s);
size_t as_search_snap_bytes(const as_search_snap *s);

/* What one search asks, validated by the API. */
typedef struct as_search_ask {
    const char *q;           /* the text, NULL or "" for none */
    const char *category;    /* NULL for any */
    const char *part_type;   /* NULL for any */
    const as_device *device; /* from `device`, NULL for none (the text may name one) */
    as_offer_filter of;      /* max_price, deliver_by, merchant (id) */
    as_weights w;
    bool custom_weights; /* w is not the default (shown as such) */
    bool verified_only;
    as_sort_kind sort;
    int64_t limit, offset;
    int64_t today; /* day number: delivery days become dates */
    const as_device *devs; /* every device, for one named in the text */
    size_t n_devs;
} as_search_ask;

/* How a query word was matched. */
typedef enum {
    AS_MATCH_EXACT,     /* the word, or another form of it (same stem) */
    AS_MATCH_PREFIX,    /* the beginning of a longer word ("aa" of "aaa") */
    AS_MATCH_CORRECTED, /* a word one or two letters away */
    AS_MATCH_NONE
} as_match_kind;

typedef struct as_search_word {
    const char *word;      /* as read (folded) */
    as_match_kind how;     /* the best way any product matched it */
    const char **matched;  /* catalogue words it matched (at most 8 listed) */
    size_t n_matched;
    const char *corrected; /* for AS_MATCH_CORRECTED: the closest catalogue word */
} as_search_word;

/* What the text was read as: for the response's `query` object. */
typedef struct as_search_understood {
    const char *text;
    as_search_word *words; /* the words required to match (after any dropped) */
    size_t n_words;
    const char **ignored; /* filler: not required */
    size_t n_ignored;
    const char **dropped; /* required words left out because no product had them all */
    size_t n_dropped;
    const as_device *device;      /* named in the text, else NULL */
    const char *device_text;
    int64_t max_price_cents;      /* read from the text, else 0 */
    const char *price_text;
} as_search_understood;

typedef struct as_search_result {
    int64_t count;     /* every result, before paging */
    as_product *page;  /* the page in order: summaries and offers; stock 0 until the
                          caller fills it in from the store (as_search_apply_stock).
                          A product with summary_head has of the fields it stands
                          for only sku, availability and return_rate */
    int64_t *ids;      /* the page's product ids */
    bool *matched_all; /* per page product: it has every required word of the query */
    as_match_kind *match; /* per page product: its tier (the worst of its words' matches) */
    size_t n;
    as_product *excluded; /* left out, in the index's order, at most 100: sku, name set */
    const char **excluded_why;
    const char **excluded_json; /* per entry: the whole entry's JSON written at the
                                   index's build, or NULL: from excluded and
                                   excluded_why */
    size_t *excluded_json_len;  /* their lengths */
    size_t n_excluded;
    int64_t excluded_count;
    as_search_understood understood;
    const as_device *device;   /* the device applied (the ask's, or the text's) */
    as_offer_filter of;        /* the offer filters applied (with a price from the text) */
} as_search_result;

/* Runs a search on snapshot s; out is allocated on m, but its strings may be
 * the snapshot's: read it while s is held. */
void as_search_run(const as_search_snap *s, as_mem *m, const as_search_ask *ask,
                   as_search_result *out);

/* The stock read from the store for the page, into its offers. */
void as_search_apply_stock(as_search_result *r, const as_offer_stock *st, size_t n);
/* The same into any products of a snapshot (n_products of them). */
void as_search_apply_stock_to(as_product *ps, size_t n_products, const as_offer_stock *st,
                              size_t n);

/* One page of dev's compatible parts from snapshot s, as the store's
 * `compatible` gives it (core/store/as_store.h), with each excluded's reason in
 * out->why; the page's offers have stock 0 until the caller reads it
 * (as_search_offers_stock), and its strings are s's: read it while s is
 * held (as_search_compat.c). */
void as_search_compatible(const as_search_snap *s, as_mem *m, const as_device *dev,
                          const char *part_type, int64_t limit, int64_t offset, size_t max_excluded,
                          as_compat_page *out);

/* The stock of every offer of these products, as st->offers_stock gives it
 * (on m, in any order), live: from snapshot s for each product that no change
 * of the store's live sequence up to read->live names (its offers' stock is
 * still what s's build read), from the store for the others; all from the
 * store when the store does not number its changes (no live_changes), when s
 * is not of read's catalogue, or when read is NULL (as_search_live.c). */
int as_search_offers_stock(const as_search_snap *s, const as_store *st,
                           const as_search_version *read, as_mem *m, const int64_t *ids,
                           size_t n, as_offer_stock **out, size_t *nout);

/* ---- product views (as_search_kept.c) ---- */

/* What the index keeps of one product's view: its kept parts, and the product
 * as the live part needs it: id, sku, name, availability, guarantee, offers
 * (stock 0 until as_search_view_live) and, for a device, compat with its
 * fit_status. Points into the snapshot: hold it while this is used. */
typedef struct as_search_view {
    as_view_kept kept;
    as_product p;
} as_search_view;

/* The view parts of the product with that sku (and its row for device, NULL
 * for none); false when the snapshot has no such product or no parts for it. */
bool as_search_view_find(const as_search_snap *s, as_mem *m, const char *sku,
                         const as_device *device, as_search_view *out);
/* The live part read from the store, into v: false when its offers are not
 * the ones the snapshot has (then the view is read whole). */
bool as_search_view_live(as_search_view *v, const as_product_live *live);
/* The live part of view v (found in s) from s itself, as read would have read
 * it: true when the store numbers its changes, s is of read's catalogue and
 * no change up to read->live names the product (its offers' stock is as the
 * build read it, and it has no question); false: read it from the store. */
bool as_search_view_live_kept(const as_search_snap *s, const as_store *st,
                              const as_search_version *read, const as_search_view *v, as_mem *m,
                              as_product_live *out);

#endif
