/* What core needs from storage, as a table of functions. sql/as_db*.c
 * implements it over apr_dbd; unit tests implement it in memory. Results are
 * allocated on the as_mem passed in. */
#ifndef AS_STORE_H
#define AS_STORE_H

#include "as_catalog.h"
#include "as_commerce.h"
#include "as_mem.h"
#include "as_webauthn.h"

enum {
    AS_OK = 0,
    AS_ENOTFOUND = 1, /* no such row */
    AS_EDB = 2,       /* storage failed; the store has logged why */
    AS_ECONFLICT = 3, /* a unique key or a condition stopped the write */
};

/* The compatible parts of a device (GET /devices/{slug}/compatible, the
 * replacement offered for a return): the products with a compat row for it. */
typedef struct as_search_filter {
    int64_t device_id;     /* the device: only products with a compat row for it */
    const char *part_type; /* NULL for any */
} as_search_filter;

/* Search orders, in the order of as_sort_choices (core/search/as_search_page.c). */
typedef enum { AS_SORT_SCORE, AS_SORT_PRICE, AS_SORT_DELIVERY, AS_SORT_RETURN_RATE } as_sort_kind;

/* A product's row of the search order table (product_rank). */
typedef struct as_rank_row {
    bool buyable;        /* some offer can be bought */
    int64_t score;       /* the best offer's, under the default weights; 0 when not buyable */
    int64_t price_cents; /* the best offer's unit price; 0 when not buyable */
    int64_t days;        /* the best offer's delivery days; 0 when not buyable */
    double return_rate;
    /* rank_changes only (NULL from index_rows): the ids of the product's
     * offers with stock above zero now, separated by spaces ("" for none) */
    const char *in_stock;
} as_rank_row;

/* What the text index holds of one product (core/search/as_search_index.c): its words,
 * what search filters and sorts by, and its summary (nothing of it changes
 * without a catalogue load). */
typedef struct as_index_row {
    int64_t id;
    const char *sku, *category, *part_type;
    const char *name, *brand, *description; /* the text searched */
    bool hidden;                            /* contradicted: left out under verified_only */
    const char *verif_note;                 /* why, when contradicted; else NULL */
    as_rank_row rank;
    const char *image_urls, *availability, *verif_status;
    bool guarantee;
    /* The specifications, for words such as "vegan" or "65 W": a JSON array
     * of [label, unit, claimed, measured] per spec row in its order, claimed
     * and measured as JSON values (null when absent); NULL when none. */
    const char *specs;
} as_index_row;

/* An offer as the text index holds it: all but its stock. */
typedef struct as_index_offer {
    int64_t product_id;
    const char *id, *merchant_id, *price_label;
    int64_t price_cents, retail_price_cents;
    int64_t delivery_days;
    bool in_stock; /* stock above zero when read */
    int64_t stock; /* as read */
} as_index_offer;

/* A compat row as the search index holds it (device filters, `for my dyson v11`). */
typedef struct as_index_compat {
    int64_t product_id, device_id;
    bool fits;            /* fit_status "fits"; else "does_not_fit" */
    const char *evidence; /* JSON array text, as in as_compat */
    const char *checked_at;
} as_index_compat;

/* The stock of one offer of a page. */
typedef struct as_offer_stock {
    int64_t product_id;
    const char *offer_id;
    int64_t stock;
} as_offer_stock;

/* Versions of what the text index is built from: `catalogue` changes when a
 * catalogue is loaded (the index is built again), `rank` with every change of
 * a product_rank row (only the changed rows are read again). */
typedef struct as_search_version {
    int64_t catalogue, rank;
    /* the live sequence: raised by every change of an offer's stock or a
     * question, in the change's transaction (live_changes; 0 in a store
     * without it) */
    int64_t live;
} as_search_version;

/* What of a product's view changes without a catalogue load, read at once
 * (the search index keeps the rest of the view: core/search/as_search_view.c). */
typedef struct as_product_live {
    as_search_version version; /* the search index's versions, of the same read */
    int64_t product_id;     /* 0: no product has the sku */
    as_offer_stock *stock;  /* the product's offers' stock, in any order */
    size_t n_stock;
    as_question *questions; /* the latest AS_VIEW_QUESTIONS, as asked, then by id */
    size_t n_questions;
    int64_t questions_total; /* all the product's questions */
} as_product_live;

typedef int (*as_index_row_fn)(void *baton, const as_index_row *row);
typedef int (*as_rank_row_fn)(void *baton, int64_t product_id, const as_rank_row *row);
typedef int (*as_index_offer_fn)(void *baton, const as_index_offer *offer);
typedef int (*as_index_compat_fn)(void *baton, const as_index_compat *compat);
typedef int (*as_view_row_fn)(void *baton, const as_product *p);
typedef int (*as_live_fn)(void *baton, int64_t product_id);

typedef struct as_store {
    void *h;
    int (*merchants)(void *h, as_mem *m, as_merchant **out, size_t *n);
    int (*devices)(void *h, as_mem *m, as_device **out, size_t *n);
    int (*device_by_slug)(void *h, as_mem *m, const char *slug, as_device *out);
    /* Full product with specs, offers and questions; compat for device_id when
     * > 0; and its version (product_version) as of the same read. */
    int (*product_by_sku)(void *h, as_mem *m, const char *sku, int64_t device_id, as_product *out);
    /* A string that changes whenever anything the product's view is built
     * from changes (its offers' stock, its questions, the catalogue), and never
     * returns to an earlier value; AS_ENOTFOUND for an unknown sku. NULL in a
     * store that cannot tell: views are then never cached. */
    int (*product_version)(void *h, as_mem *m, const char *sku, const char **out);
    /* A device's compatible parts: product summaries with their offers and
     * their compat row for the device, by product id. */
    int (*search)(void *h, as_mem *m, const as_search_filter *f, as_product **out, size_t *n);
    /* The search index's sources (core/search/, docs/search.md). Rows are
     * valid during the call only; a callback that returns non-zero stops the
     * stream (AS_EDB). */
    int (*search_version)(void *h, as_search_version *out);
    int (*index_rows)(void *h, as_index_row_fn each, void *baton);     /* every product, by id */
    int (*index_offers)(void *h, as_index_offer_fn each, void *baton); /* by product, offer id */
    int (*rank_changes)(void *h, int64_t since, as_rank_row_fn each, void *baton);
    int (*index_compat)(void *h, as_index_compat_fn each, void *baton); /* by product, device */
    /* Every product as product_by_sku reads it, with its spec rows but no
     * offers, questions or compat, by id: the parts of each view that only a
     * catalogue load changes, which the search index keeps. NULL in a store
     * without it: every view is then read whole. */
    int (*view_rows)(void *h, as_view_row_fn each, void *baton);
    /* The live part of the view of the product with that id (when above 0;
     * a view that found it in the search index) or else that sku, and the
     * search index's versions (search_version), in one read. */
    int (*product_live)(void *h, as_mem *m, const char *sku, int64_t product_id,
                        as_product_live *out);
    /* The current stock of every offer of these products, in any order. */
    int (*offers_stock)(void *h, as_mem *m, const int64_t *product_ids, size_t n,
                        as_offer_stock **out, size_t *nout);
    /* The products whose offers' stock or questions changed after live
     * sequence number `since` (as_search_version.live), and with `asked`
     * every product that has a question, each at least once. The changes are
     * numbered in commit order, so a reader that has seen every change up to
     * a number it read misses none by reading those above it. NULL in a store
     * that cannot number them so (PostgreSQL: docs/search.md, "The live
     * sequence"), or AS_ENOTFOUND from one that learns it only when it
     * connects: the search index then reads every page's stock and every
     * view's live part from the store. */
    int (*live_changes)(void *h, int64_t since, bool asked, as_live_fn each, void *baton);

    /* Transactions: on SQLite BEGIN IMMEDIATE (one writer at a time), on
     * PostgreSQL with the mandate row locked by mandate_get(lock = true). */
    int (*begin)(void *h);
    int (*commit)(void *h);
    int (*rollback)(void *h);

    int (*key_by_hash)(void *h, as_mem *m, const char *hash, as_key_row *out);
    /* The user's newest mandate that is active (revoked ones are skipped); lock:
     * as mandate_get, for the rest of the transaction. */
    int (*mandate_current)(void *h, as_mem *m, const char *user_id, bool lock, as_mandate *out);
    int (*mandate_get)(void *h, as_mem *m, const char *id, bool lock, as_mandate *out);
    /* Sum of budget_cents of the mandate's orders in month (yyyy-mm), from the running
     * total kept with the orders; on PostgreSQL its row stays locked until commit. */
    int (*mandate_spent)(void *h, const char *mandate_id, const char *month, int64_t *cents);

    int (*quote_insert)(void *h, const as_quote *q);
    int (*quote_get)(void *h, as_mem *m, const char *id, as_quote *out);

    /* AS_ECONFLICT when an order already uses the quote. */
    int (*order_insert)(void *h, const as_order *o);
    int (*order_get)(void *h, as_mem *m, const char *id, as_order *out);
    /* Moves the order from `from` to `to` (AS_ECONFLICT when not in `from`). */
    int (*order_move)(void *h, const char *id, as_order_state from, as_order_state to,
                      int64_t budget_cents, int64_t at);
    int (*event_add)(void *h, const char *order_id, as_order_state status, int64_t at,
                     const char *note);
    /* Orders of a mandate awaiting confirmation past their expiry; with
     * mandate_id NULL, any mandate's, at most 100, the longest expired first. */
    int (*orders_expired)(void *h, as_mem *m, const char *mandate_id, int64_t now, as_order **out,
                          size_t *n);
    /* AS_ECONFLICT when the offer has fewer than qty units. */
    int (*stock_take)(void *h, const char *offer_id, int64_t qty);
    int (*stock_give)(void *h, const char *offer_id, int64_t qty);

    int (*confirmation_insert)(void *h, const as_confirmation *c);
    int (*confirmation_get)(void *h, as_mem *m, const char *id, as_confirmation *out);
    int (*confirmation_decide)(void *h, const char *id, const char *to, int64_t at);

    /* Inside a transaction: claims (user, scope, key) for a request, AS_OK, or
     * AS_ECONFLICT with the existing record in *existing. A claim still in
     * flight whose lease has run out is taken over (AS_OK). */
    int (*idem_claim)(void *h, as_mem *m, const char *user, const char *scope, const char *key,
                      const char *hash, int64_t now, int64_t lease_until, as_idem *existing);
    int (*idem_finish)(void *h, const char *user, const char *scope, const char *key, int status,
                       const char *response);

    /* AS_ECONFLICT when the order already has a return. */
    int (*return_insert)(void *h, const as_return *r);
    int (*return_get)(void *h, as_mem *m, const char *id, as_return *out);
    int (*return_by_order)(void *h, as_mem *m, const char *order_id, as_return *out);
    /* AS_ECONFLICT, nothing written, when the user already asked per_day
     * questions at or after `since` (asked_at text, comparable as text). */
    int (*question_insert)(void *h, int64_t product_id, const char *id, const char *user_id,
                           const char *question, const char *answer, const char *asked_at,
                           const char *since, int64_t per_day);

    /* Passkeys and their ceremonies (core/as_passkeys.c). Inserting a
     * credential id that exists: AS_ECONFLICT. */
    int (*passkey_insert)(void *h, const as_passkey *k);
    int (*passkeys_of)(void *h, as_mem *m, const char *user_id, as_passkey **out, size_t *n);
    int (*passkey_get)(void *h, as_mem *m, const char *id, as_passkey *out);
    /* AS_ECONFLICT when the counter is no longer `from` (another assertion won). */
    int (*passkey_count)(void *h, const char *id, int64_t from, int64_t to);
    int (*enrolment_insert)(void *h, const as_enrolment *e);
    int (*enrolment_get)(void *h, as_mem *m, const char *id, as_enrolment *out);
    /* AS_ECONFLICT when used already or expired at `now`. */
    int (*enrolment_use)(void *h, const char *id, int64_t now);
    int (*challenge_insert)(void *h, const char *challenge, const char *purpose,
                            const char *subject_id, int64_t expires_at);
    /* Uses it: AS_ECONFLICT when unknown, for another purpose or subject, used
     * or expired. Expired ones older than `now` are pruned now and then. */
    int (*challenge_use)(void *h, const char *challenge, const char *purpose,
                         const char *subject_id, int64_t now);
} as_store;

#endif
