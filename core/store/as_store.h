/* What core needs from storage, as a table of functions. sql/as_db*.c
 * implements it over apr_dbd; unit tests implement it in memory. Results are
 * allocated on the as_mem passed in. */
#ifndef AS_STORE_H
#define AS_STORE_H

#include "as_catalog.h"
#include "as_commerce.h"
#include "as_mem.h"

enum {
    AS_OK = 0,
    AS_ENOTFOUND = 1, /* no such row */
    AS_EDB = 2,       /* storage failed; the store has logged why */
    AS_ECONFLICT = 3, /* a unique key or a condition stopped the write */
};

/* Which of a device's parts: the products with a compat row for it (a page
 * of GET /devices/{slug}/compatible: as_compat_page; all of them: the
 * replacement offered for a return). */
typedef struct as_search_filter {
    int64_t device_id;     /* the device: only products with a compat row for it */
    const char *part_type; /* NULL for any */
} as_search_filter;

/* One page of a device's compatible parts (GET /devices/{slug}/compatible).
 * The parts listed are those whose compat row does not say does_not_fit and
 * whose verification is not contradicted (the handler's compat_exclusion, in
 * core/api/as_catalog_api.c), in product_rank's order under the default weights:
 * part type, buyable first, best score, sku (each text by strcmp). The
 * others are left out: the first max_excluded of them by product id. */
typedef struct as_compat_page {
    as_product *parts; /* the page's (offset, limit), with offers and compat row, any order */
    size_t n;
    as_product *excluded; /* with their compat row, without offers */
    const char **why;     /* NULL (the store), or each excluded's reason (the search index) */
    size_t n_excluded;
    int64_t count, excluded_count; /* parts listed, and left out, in all */
} as_compat_page;

/* Search orders, in the order of as_sort_choices (core/search/as_search_page.c). */
typedef enum { AS_SORT_SCORE, AS_SORT_PRICE, AS_SORT_DELIVERY, AS_SORT_RETURN_RATE } as_sort_kind;

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
    const char *image_urls, *availability;
    as_verif verif_status;
    /* (no guarantee: the index sets it from the compat rows that say a
     * device fits, as_index_compat.fits) */
    /* The specification rows, for words such as "vegan" or "65 W", in any
     * order (they give a set of words): of each only label, unit, claimed
     * and measured (JSON text, NULL when absent) are read. */
    const as_spec_row *specs;
    size_t n_specs;
    /* Its offers (not withdrawn), by offer id, and its compat rows, by
     * device: read with it, so one pass over the products gives the index
     * everything it keeps of each (three passes had the build wait on the
     * database in two of them). */
    const as_index_offer *offers;
    size_t n_offers;
    const as_index_compat *compat;
    size_t n_compat;
    /* The product as product_by_sku reads it, with its spec rows (the specs
     * above) but no offers, questions or compat and without its guarantee
     * (false): the parts of its view that only a catalogue load changes,
     * which the search index keeps. Read with the row, so one read of each
     * product and spec row gives both (two reads had every one sent twice).
     * NULL when the store has none to give: the product's view is then read
     * whole from the store. */
    const as_product *view;
} as_index_row;

/* What of p's index row its product's own columns give: all but hidden,
 * rank, specs, offers, compat and view. */
static inline as_index_row as_index_row_of(const as_product *p)
{
    return (as_index_row){.id = p->id,
                          .sku = p->sku,
                          .category = p->category,
                          .part_type = p->part_type,
                          .name = p->name,
                          .brand = p->brand,
                          .description = p->description,
                          .verif_note = p->verif_note,
                          .image_urls = p->image_urls,
                          .availability = p->availability,
                          .verif_status = p->verif_status};
}

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
 * (the search index keeps the rest of the view: core/search/as_search_kept.c). */
typedef struct as_product_live {
    as_search_version version; /* the search index's versions, of the same read */
    int64_t product_id;        /* 0: no product has the sku */
    as_offer_stock *stock;     /* the product's offers' stock, in any order */
    size_t n_stock;
    as_question *questions; /* the latest AS_VIEW_QUESTIONS, as asked, then by id */
    size_t n_questions;
    int64_t questions_total; /* all the product's questions */
} as_product_live;

/* The products of index_rows, a batch at a time: rows[0..n), by id, valid
 * until the call returns; non-zero stops the stream. */
typedef int (*as_index_rows_fn)(void *baton, const as_index_row *rows, size_t n);
typedef int (*as_rank_row_fn)(void *baton, int64_t product_id, const as_rank_row *row);
typedef int (*as_live_fn)(void *baton, int64_t product_id);

/* The store's operations, in small tables of typed callbacks (mod_md's
 * md_store_t): a store defines each table it implements once, static const,
 * and an as_store is a pointer to its as_store_ops and its handle. Core calls
 * them through the as_store_* wrappers below. Every member of a table is set;
 * a store without a whole capability leaves that table out of as_store_ops
 * (as_store_has_*). Results are allocated on the as_mem passed in, or, for
 * the streams, valid during the call only. */

/* Reads of the catalogue for requests (every store that serves them). */
typedef struct as_store_catalog_ops {
    int (*device_by_slug)(void *h, as_mem *m, const char *slug, as_device *out);
    /* Full product with specs, offers and questions; compat for device_id when
     * > 0; and its version (product_version) as of the same read. */
    int (*product_by_sku)(void *h, as_mem *m, const char *sku, int64_t device_id, as_product *out);
    /* All of a device's parts: product summaries with their offers and their
     * compat row for the device, by product id. */
    int (*search)(void *h, as_mem *m, const as_search_filter *f, as_product **out, size_t *n);
    /* One page of a device's compatible parts, and how many there are. */
    int (*compatible)(void *h, as_mem *m, const as_search_filter *f, int64_t limit, int64_t offset,
                      size_t max_excluded, as_compat_page *out);
    /* The live part of the view of the product with that id (when above 0;
     * a view that found it in the search index) or else that sku, and the
     * search index's versions (search_version), in one read. */
    int (*product_live)(void *h, as_mem *m, const char *sku, int64_t product_id,
                        as_product_live *out);
    /* The current stock of every offer of these products, in any order. */
    int (*offers_stock)(void *h, as_mem *m, const int64_t *product_ids, size_t n,
                        as_offer_stock **out, size_t *nout);
} as_store_catalog_ops;

/* The search index's sources (core/search/, docs/search.md; every store has
 * them), merchants and devices read whole by requests too. Rows of the
 * streams are valid during the call only; a callback that returns non-zero
 * stops the stream (AS_EDB). */
typedef struct as_store_feed_ops {
    int (*merchants)(void *h, as_mem *m, as_merchant **out, size_t *n);
    int (*devices)(void *h, as_mem *m, as_device **out, size_t *n);
    int (*search_version)(void *h, as_search_version *out);
    /* every product, by id, with its spec rows, offers, compat rows and view */
    int (*index_rows)(void *h, as_index_rows_fn each, void *baton);
    int (*rank_changes)(void *h, int64_t since, as_rank_row_fn each, void *baton);
} as_store_feed_ops;

/* What a withdrawal (the catalogue feed) took off sale: as_store_offer_withdrawn. */
enum {
    AS_WITHDRAWN_OFFER = 1 << 0,
    AS_WITHDRAWN_PRODUCT = 1 << 1,
    AS_WITHDRAWN_MERCHANT = 1 << 2,
};

/* Transactions and the entities a purchase writes (every store that serves
 * requests). */
typedef struct as_store_buy_ops {
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
    /* What of the offer was withdrawn from sale (AS_WITHDRAWN_* bits in
     * *what, 0: it is sold); AS_ENOTFOUND for no such offer. In a
     * transaction; on PostgreSQL the offer's row stays locked until commit,
     * so a withdrawal comes wholly before or after the caller. */
    int (*offer_withdrawn)(void *h, const char *offer_id, unsigned *what);

    int (*confirmation_insert)(void *h, const as_confirmation *c);
    int (*confirmation_get)(void *h, as_mem *m, const char *id, as_confirmation *out);
    int (*confirmation_decide)(void *h, const char *id, as_confirmation_state to, int64_t at);

    /* Idempotency-Key records, inside a transaction; what they mean and when
     * one is forgotten or taken over is core's (core/rules/as_idem.c).
     * idem_claim records a claim in flight for (user, scope, key) unless the
     * key has a record: AS_OK, or AS_ECONFLICT with the record in *existing. */
    int (*idem_claim)(void *h, as_mem *m, const char *user, const char *scope, const char *key,
                      const char *hash, int64_t now, int64_t lease_until, as_idem *existing);
    /* Removes the key's record if it was created at or before `before`. */
    int (*idem_forget)(void *h, const char *user, const char *scope, const char *key,
                       int64_t before);
    /* Gives the key's claim in flight for `hash` whose lease ran out by `now`
     * the lease lease_until: AS_OK, or AS_ECONFLICT when the record is no
     * longer such a claim, with the record as it is in *existing. */
    int (*idem_takeover)(void *h, as_mem *m, const char *user, const char *scope,
                         const char *key, const char *hash, int64_t now, int64_t lease_until,
                         as_idem *existing);
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

    /* Passkeys and their ceremonies (core/api/as_passkey_api.c). Inserting a
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
    /* AS_ECONFLICT when the subject has a challenge for this purpose with
     * this very expires_at already (the schema keeps them unique). */
    int (*challenge_insert)(void *h, const char *challenge, const char *purpose,
                            const char *subject_id, int64_t expires_at);
    /* The subject's unused challenge for the purpose that expires last, if it
     * expires after `now`; AS_ENOTFOUND when there is none. */
    int (*challenge_live)(void *h, as_mem *m, const char *purpose, const char *subject_id,
                          int64_t now, as_challenge *out);
    /* Uses it: AS_ECONFLICT when unknown, for another purpose or subject, used
     * or expired. */
    int (*challenge_use)(void *h, const char *challenge, const char *purpose,
                         const char *subject_id, int64_t now);
    /* Deletes at most `limit` challenges that expired before `now`, in a
     * write of its own, and only when there are any: *n how many. */
    int (*challenges_prune)(void *h, int64_t now, int limit, int *n);
} as_store_buy_ops;

/* A capability: a version of each product's view, for the view cache. */
typedef struct as_store_version_ops {
    /* A string that changes whenever anything the product's view is built
     * from changes (its offers' stock, its questions, the catalogue), and never
     * returns to an earlier value; AS_ENOTFOUND for an unknown sku. */
    int (*product_version)(void *h, as_mem *m, const char *sku, const char **out);
} as_store_version_ops;

/* A capability: the live sequence (as_search_version.live). */
typedef struct as_store_live_ops {
    /* The products whose offers' stock or questions changed after live
     * sequence number `since`, and with `asked` every product that has a
     * question, each at least once. The changes are numbered in commit
     * order, so a reader that has seen every change up to a number it read
     * misses none by reading those above it. AS_ENOTFOUND from a store that
     * learns only when it connects that it cannot number them so
     * (PostgreSQL: docs/search.md, "The live sequence"): the search index
     * then reads every page's stock and every view's live part from the store. */
    int (*live_changes)(void *h, int64_t since, bool asked, as_live_fn each, void *baton);
} as_store_live_ops;

/* catalog and buy are NULL only in a store that feeds the search index alone
 * (the index's background builder wraps its connection's store in one). */
typedef struct as_store_ops {
    const as_store_catalog_ops *catalog;
    const as_store_feed_ops *feed;
    const as_store_buy_ops *buy;
    const as_store_version_ops *version; /* NULL: views are never cached */
    const as_store_live_ops *live;       /* NULL: no live sequence (see live_changes) */
} as_store_ops;

typedef struct as_store {
    const as_store_ops *ops;
    void *h;
} as_store;

static inline bool as_store_has_version(const as_store *s)
{
    return s->ops->version != NULL;
}

static inline bool as_store_has_live(const as_store *s)
{
    return s->ops->live != NULL;
}

/* ---- the wrappers core calls ---- */

static inline int as_store_merchants(const as_store *s, as_mem *m, as_merchant **out, size_t *n)
{
    return s->ops->feed->merchants(s->h, m, out, n);
}

static inline int as_store_devices(const as_store *s, as_mem *m, as_device **out, size_t *n)
{
    return s->ops->feed->devices(s->h, m, out, n);
}

static inline int as_store_device_by_slug(const as_store *s, as_mem *m, const char *slug,
                                          as_device *out)
{
    return s->ops->catalog->device_by_slug(s->h, m, slug, out);
}

static inline int as_store_product_by_sku(const as_store *s, as_mem *m, const char *sku,
                                          int64_t device_id, as_product *out)
{
    return s->ops->catalog->product_by_sku(s->h, m, sku, device_id, out);
}

static inline int as_store_search(const as_store *s, as_mem *m, const as_search_filter *f,
                                  as_product **out, size_t *n)
{
    return s->ops->catalog->search(s->h, m, f, out, n);
}

static inline int as_store_compatible(const as_store *s, as_mem *m, const as_search_filter *f,
                                      int64_t limit, int64_t offset, size_t max_excluded,
                                      as_compat_page *out)
{
    return s->ops->catalog->compatible(s->h, m, f, limit, offset, max_excluded, out);
}

static inline int as_store_product_live(const as_store *s, as_mem *m, const char *sku,
                                        int64_t product_id, as_product_live *out)
{
    return s->ops->catalog->product_live(s->h, m, sku, product_id, out);
}

static inline int as_store_offers_stock(const as_store *s, as_mem *m, const int64_t *product_ids,
                                        size_t n, as_offer_stock **out, size_t *nout)
{
    return s->ops->catalog->offers_stock(s->h, m, product_ids, n, out, nout);
}

static inline int as_store_search_version(const as_store *s, as_search_version *out)
{
    return s->ops->feed->search_version(s->h, out);
}

static inline int as_store_index_rows(const as_store *s, as_index_rows_fn each, void *baton)
{
    return s->ops->feed->index_rows(s->h, each, baton);
}

static inline int as_store_rank_changes(const as_store *s, int64_t since, as_rank_row_fn each,
                                        void *baton)
{
    return s->ops->feed->rank_changes(s->h, since, each, baton);
}

static inline int as_store_begin(const as_store *s)
{
    return s->ops->buy->begin(s->h);
}

static inline int as_store_commit(const as_store *s)
{
    return s->ops->buy->commit(s->h);
}

static inline int as_store_rollback(const as_store *s)
{
    return s->ops->buy->rollback(s->h);
}

static inline int as_store_key_by_hash(const as_store *s, as_mem *m, const char *hash,
                                       as_key_row *out)
{
    return s->ops->buy->key_by_hash(s->h, m, hash, out);
}

static inline int as_store_mandate_current(const as_store *s, as_mem *m, const char *user_id,
                                           bool lock, as_mandate *out)
{
    return s->ops->buy->mandate_current(s->h, m, user_id, lock, out);
}

static inline int as_store_mandate_get(const as_store *s, as_mem *m, const char *id, bool lock,
                                       as_mandate *out)
{
    return s->ops->buy->mandate_get(s->h, m, id, lock, out);
}

static inline int as_store_mandate_spent(const as_store *s, const char *mandate_id,
                                         const char *month, int64_t *cents)
{
    return s->ops->buy->mandate_spent(s->h, mandate_id, month, cents);
}

static inline int as_store_quote_insert(const as_store *s, const as_quote *q)
{
    return s->ops->buy->quote_insert(s->h, q);
}

static inline int as_store_quote_get(const as_store *s, as_mem *m, const char *id, as_quote *out)
{
    return s->ops->buy->quote_get(s->h, m, id, out);
}

static inline int as_store_order_insert(const as_store *s, const as_order *o)
{
    return s->ops->buy->order_insert(s->h, o);
}

static inline int as_store_order_get(const as_store *s, as_mem *m, const char *id, as_order *out)
{
    return s->ops->buy->order_get(s->h, m, id, out);
}

static inline int as_store_order_move(const as_store *s, const char *id, as_order_state from,
                                      as_order_state to, int64_t budget_cents, int64_t at)
{
    return s->ops->buy->order_move(s->h, id, from, to, budget_cents, at);
}

static inline int as_store_event_add(const as_store *s, const char *order_id,
                                     as_order_state status, int64_t at, const char *note)
{
    return s->ops->buy->event_add(s->h, order_id, status, at, note);
}

static inline int as_store_orders_expired(const as_store *s, as_mem *m, const char *mandate_id,
                                          int64_t now, as_order **out, size_t *n)
{
    return s->ops->buy->orders_expired(s->h, m, mandate_id, now, out, n);
}

static inline int as_store_stock_take(const as_store *s, const char *offer_id, int64_t qty)
{
    return s->ops->buy->stock_take(s->h, offer_id, qty);
}

static inline int as_store_stock_give(const as_store *s, const char *offer_id, int64_t qty)
{
    return s->ops->buy->stock_give(s->h, offer_id, qty);
}

static inline int as_store_offer_withdrawn(const as_store *s, const char *offer_id, unsigned *what)
{
    return s->ops->buy->offer_withdrawn(s->h, offer_id, what);
}

static inline int as_store_confirmation_insert(const as_store *s, const as_confirmation *c)
{
    return s->ops->buy->confirmation_insert(s->h, c);
}

static inline int as_store_confirmation_get(const as_store *s, as_mem *m, const char *id,
                                            as_confirmation *out)
{
    return s->ops->buy->confirmation_get(s->h, m, id, out);
}

static inline int as_store_confirmation_decide(const as_store *s, const char *id,
                                               as_confirmation_state to, int64_t at)
{
    return s->ops->buy->confirmation_decide(s->h, id, to, at);
}

static inline int as_store_idem_claim(const as_store *s, as_mem *m, const char *user,
                                      const char *scope, const char *key, const char *hash,
                                      int64_t now, int64_t lease_until, as_idem *existing)
{
    return s->ops->buy->idem_claim(s->h, m, user, scope, key, hash, now, lease_until, existing);
}

static inline int as_store_idem_forget(const as_store *s, const char *user, const char *scope,
                                       const char *key, int64_t before)
{
    return s->ops->buy->idem_forget(s->h, user, scope, key, before);
}

static inline int as_store_idem_takeover(const as_store *s, as_mem *m, const char *user,
                                         const char *scope, const char *key, const char *hash,
                                         int64_t now, int64_t lease_until, as_idem *existing)
{
    return s->ops->buy->idem_takeover(s->h, m, user, scope, key, hash, now, lease_until, existing);
}

static inline int as_store_idem_finish(const as_store *s, const char *user, const char *scope,
                                       const char *key, int status, const char *response)
{
    return s->ops->buy->idem_finish(s->h, user, scope, key, status, response);
}

static inline int as_store_return_insert(const as_store *s, const as_return *r)
{
    return s->ops->buy->return_insert(s->h, r);
}

static inline int as_store_return_get(const as_store *s, as_mem *m, const char *id, as_return *out)
{
    return s->ops->buy->return_get(s->h, m, id, out);
}

static inline int as_store_return_by_order(const as_store *s, as_mem *m, const char *order_id,
                                           as_return *out)
{
    return s->ops->buy->return_by_order(s->h, m, order_id, out);
}

static inline int as_store_question_insert(const as_store *s, int64_t product_id, const char *id,
                                           const char *user_id, const char *question,
                                           const char *answer, const char *asked_at,
                                           const char *since, int64_t per_day)
{
    return s->ops->buy->question_insert(s->h, product_id, id, user_id, question, answer, asked_at,
                                        since, per_day);
}

static inline int as_store_passkey_insert(const as_store *s, const as_passkey *k)
{
    return s->ops->buy->passkey_insert(s->h, k);
}

static inline int as_store_passkeys_of(const as_store *s, as_mem *m, const char *user_id,
                                       as_passkey **out, size_t *n)
{
    return s->ops->buy->passkeys_of(s->h, m, user_id, out, n);
}

static inline int as_store_passkey_get(const as_store *s, as_mem *m, const char *id,
                                       as_passkey *out)
{
    return s->ops->buy->passkey_get(s->h, m, id, out);
}

static inline int as_store_passkey_count(const as_store *s, const char *id, int64_t from,
                                         int64_t to)
{
    return s->ops->buy->passkey_count(s->h, id, from, to);
}

static inline int as_store_enrolment_insert(const as_store *s, const as_enrolment *e)
{
    return s->ops->buy->enrolment_insert(s->h, e);
}

static inline int as_store_enrolment_get(const as_store *s, as_mem *m, const char *id,
                                         as_enrolment *out)
{
    return s->ops->buy->enrolment_get(s->h, m, id, out);
}

static inline int as_store_enrolment_use(const as_store *s, const char *id, int64_t now)
{
    return s->ops->buy->enrolment_use(s->h, id, now);
}

static inline int as_store_challenge_insert(const as_store *s, const char *challenge,
                                            const char *purpose, const char *subject_id,
                                            int64_t expires_at)
{
    return s->ops->buy->challenge_insert(s->h, challenge, purpose, subject_id, expires_at);
}

static inline int as_store_challenge_live(const as_store *s, as_mem *m, const char *purpose,
                                          const char *subject_id, int64_t now, as_challenge *out)
{
    return s->ops->buy->challenge_live(s->h, m, purpose, subject_id, now, out);
}

static inline int as_store_challenge_use(const as_store *s, const char *challenge,
                                         const char *purpose, const char *subject_id, int64_t now)
{
    return s->ops->buy->challenge_use(s->h, challenge, purpose, subject_id, now);
}

static inline int as_store_challenges_prune(const as_store *s, int64_t now, int limit, int *n)
{
    return s->ops->buy->challenges_prune(s->h, now, limit, n);
}

static inline int as_store_product_version(const as_store *s, as_mem *m, const char *sku,
                                           const char **out)
{
    return s->ops->version->product_version(s->h, m, sku, out);
}

static inline int as_store_live_changes(const as_store *s, int64_t since, bool asked,
                                        as_live_fn each, void *baton)
{
    return s->ops->live->live_changes(s->h, since, asked, each, baton);
}

#endif
