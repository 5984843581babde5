/* The catalogue index's layout, shared by the stages of core/search/ (not by
 * anything outside it). Every array is flat (offsets, not pointers), so that a
 * later layout can live in one file mapped by every child. */
#ifndef AS_SEARCH_INTERNAL_H
#define AS_SEARCH_INTERNAL_H

#include <stdatomic.h>
#include <string.h>
#include <threads.h>

#include "as_search.h"

#define AS_NO_STR UINT32_MAX

/* An offer, all but its stock (the snapshot's in_stock has that). */
typedef struct sx_offer {
    int64_t price_cents, retail_price_cents;
    uint32_t id_at, label_at; /* in strs */
    int32_t days;
    uint16_t merchant;  /* into merchants */
    uint16_t delivery10; /* as_delivery_component(days) * 10, rounded as the formula rounds */
} sx_offer;

typedef struct sx_merchant {
    as_merchant m;              /* strings in strs: see merchant_at */
    uint32_t id_at, name_at, country_at, city_at;
    uint32_t json_at; /* its object in an offer (as_view_merchant_json), after its length */
    double quality, reliability; /* the formula's components, one decimal */
} sx_merchant;

/* A compat row: a product and how it fits one device. */
typedef struct sx_compat {
    uint32_t doc;
    uint32_t why_at; /* does_not_fit: as_fit_summary of the evidence; else AS_NO_STR */
    uint8_t fits;
} sx_compat;

/* The catalogue: everything but the stock state. Shared by the snapshots of
 * one catalogue version. */
typedef struct sx_catalog {
    atomic_int refs;
    size_t n;     /* products, in the index's order (docs: order_docs) */
    int64_t *ids; /* each doc's product id */
    /* The docs in id order (id_docs) and each doc's place in it (id_rk): the
     * builder reads the products by id and then orders them by category,
     * part type and brand (order_docs, as_search_index.c); both NULL until
     * then, while a doc is its place in id order. The product views' parts
     * (view_at, perf_at) stay by id: a doc's are at its id_rk. */
    uint32_t *id_docs, *id_rk;
    uint32_t *sku_rk;  /* the product's place in sku (byte) order */
    uint16_t *cat, *pt; /* into cats, pts */
    uint8_t *hidden;   /* contradicted */
    uint8_t *avail;    /* availability is in_stock */
    uint8_t *guarantee;
    double *return_rate;
    /* summaries, as a page shows them */
    uint32_t *sku_at, *name_at, *brand_at, *img_at, *note_at, *status_at, *avail_at;
    /* a contradicted product's entry of `excluded` under verified_only, its
     * JSON written at the build (sx_excluded_json), AS_NO_STR for the others:
     * the entries most searches list, copied instead of formatted; in the
     * docs' order, each after its length (sx_str_len) */
    uint32_t *xj_at;
    /* each product's members of a page's result that only a catalogue load
     * changes (as_product.summary_head), written at the build from the
     * columns above (sx_summary_fields), in the docs' order, each after its
     * length (sx_str_len); AS_NO_STR when they could not be encoded */
    uint32_t *head_at;
    /* offers, by product then offer id */
    uint32_t *off_at; /* n + 1 */
    sx_offer *offers;
    int32_t *stock; /* noffers: each offer's stock as the build read it */
    size_t noffers;
    /* The store's live sequence (as_search_version.live) when the build began:
     * what the build read of an offer's stock is still its stock while no
     * change above live_base names the product (as_search_live.c). */
    int64_t live_base;
    sx_merchant *merchants;
    size_t nmerchants;
    /* words: the vocabulary in byte order; each word's products ascending */
    uint32_t ntok;
    uint32_t *tok_at; /* ntok + 1, into tok_text */
    /* ntok: 0 for a word some product has on its own; for a word only ever
     * made by joining two neighbours ("filter" "453" → "filter453"), the
     * least length of the first of them (at most 255). Every product with
     * such a word has its first word too, so a query word no longer than
     * that, a prefix of the joined word, is a prefix of (or is) that first
     * word and finds the same products through it, as well or better: the
     * match stage does not expand it to the joined word (word_kinds). */
    uint8_t *tok_join;
    char *tok_text;
    uint32_t *stem_of;  /* ntok: the word's stem, into stems (sorted) */
    uint32_t nstems;
    uint32_t *stem_at;  /* nstems + 1, into stem_text */
    char *stem_text;
    uint32_t *stem_toks_at; /* nstems + 1, into stem_toks: the words of each stem */
    uint32_t *stem_toks;
    /* each product's words, the builder's only (by id: add_row), freed once
     * make_postings has made the postings from them; NULL in a built catalogue */
    uint32_t *fwd_at; /* n + 1 */
    uint32_t *fwd;
    uint32_t *post_at; /* ntok + 1 */
    uint32_t *post;
    /* compat rows by device (device ids ascending) */
    size_t ndev;
    int64_t *dev_ids;
    uint32_t *dev_at; /* ndev + 1, into compat */
    sx_compat *compat;
    size_t ncompat;
    as_device *devs; /* every device (for one named in a query), strings in strs */
    size_t ndevs;
    char **cats, **pts;
    size_t ncats, npts;
    /* the products of each category and part type, ascending */
    uint32_t *cat_at, *cat_docs; /* ncats + 1, n */
    uint32_t *pt_at, *pt_docs;   /* npts + 1, n */
    char *strs;
    size_t nstrs;
    /* The product views' catalogue parts (as_view_kept, as_search_kept.c), in
     * vtext: product d's head is [view_at[d], perf_at[d]), its performance
     * object [perf_at[d], view_at[d + 1]), both empty when the store gave
     * none; compat row i's members after its device's (as_view_compat_rest),
     * shared by the rows with the same evidence, fit and check date, are
     * [cv_at[2i], cv_at[2i + 1]), after every product's (from view_at[n]). */
    uint64_t *view_at; /* n + 1 */
    uint64_t *perf_at; /* n */
    uint64_t *cv_at;   /* 2 * ncompat */
    uint32_t *sku_docs; /* n: the products in sku (byte) order */
    char *vtext;
    size_t nvtext;
    /* vtext's mapping's length while it is mapped from an index file being
     * written (sx_file_out), else 0 (malloc'd, or in the mapped file) */
    size_t vtext_map;
    size_t bytes;
    /* Bitsets over the products, `words` 64-bit words each (sx_catalog_private):
     * the contradicted ones, those of each category and part type (code *
     * words on), and those with an offer of each merchant (index * words
     * on). What a search without device, merchant or offer filters counts
     * and pages by (as_search_page.c), and what the match stage narrows the
     * words' products by. */
    size_t words;
    uint64_t *bits; /* one block: hidden_bits, cat_bits, pt_bits, merchant_bits */
    /* SX_SKU_STEPS bitsets of words words, made at the first search that
     * needs them (sx_sku_below): the products whose sku_rk is below
     * (j + 1) * sku_step, j * words on; sku_below_state as order_state */
    uint64_t *sku_below;
    size_t sku_step;
    atomic_int sku_below_state;
    const uint64_t *hidden_bits, *cat_bits, *pt_bits, *merchant_bits;
    /* The price steps of offer filters' bitsets (as_search_snap.cheap_bits;
     * sx_catalog_private, price_steps): ascending, at the quantiles of the
     * products' cheapest offers (about 1/32 of them each), the last the
     * dearest of those. */
#define SX_PRICE_STEPS 32
#define SX_SOON_DAYS 16
#define SX_PAIR_MERCHANTS 64 /* merchants with pair bitsets: those the masks name */
#define SX_PAIR_MAX 128      /* pair bitsets made: 16 bytes a product */
#define SX_PAIR_SLOTS                                                                              \
    (SX_PAIR_MERCHANTS * SX_SOON_DAYS + SX_PRICE_STEPS * SX_SOON_DAYS +                            \
     SX_PAIR_MERCHANTS * SX_PRICE_STEPS)
    int64_t price_step[SX_PRICE_STEPS];
    size_t nprice_steps;
    /* Finer steps at the quantiles of the same sample (about 1/256 of the
     * products each), ascending: as_search_snap.min_fine places each
     * product's cheapest price in stock among them, so that a cap between
     * two price steps reads a byte per product of the step, and the price
     * only for those whose fine step holds the cap (sx_filter_kept_sets). */
#define SX_FINE_STEPS 255
    int64_t fine_step[SX_FINE_STEPS];
    size_t nfine_steps;
    /* For two offer filters together, made at the first search that needs
     * each (sx_pair_bits): the products with one offer that meets both,
     * stock aside. Slot (sx_pair_slot) per merchant and date step, per
     * price step and date step, and per merchant and price step; each
     * state as order_state. At most SX_PAIR_MAX are made (pairs_made), a
     * bit per product each: the first asked for. */
    uint64_t *pair_bits[SX_PAIR_SLOTS];
    atomic_int pair_state[SX_PAIR_SLOTS];
    atomic_int pairs_made;
    /* words, made at the first search that needs it (sx_one_each): the
     * products with at most one offer of each merchant (the store does not
     * require it; a generated catalogue and the demo's have it), for whom
     * a merchant's pair bitsets are about that one offer; one_each_state
     * as order_state */
    uint64_t *one_each;
    atomic_int one_each_state;
    as_arena *dev_arena;            /* qdevs' memory */
    const as_query_devices *qdevs;  /* devs' words, for a device named in a query */
    void *map; /* the index file when mapped (as_search_file.c), else NULL */
    size_t map_bytes;
    /* The stock state a new snapshot starts from (update): a private,
     * copy-on-write mapping of base_fd at base_off, with the products
     * changed since base_rank applied to it, so that a stock change costs
     * the pages it writes, not a copy of the whole state (218 MiB at
     * 1,000,000 products). The index file's own state, then a memory file
     * of a later state once the changes since have grown (sx_base_write).
     * base_fd -1: none (a build in memory, or a file whose state is not at
     * a page's offset): each update copies the snapshot before it. Read and
     * moved by one thread at a time (the index's build lock). */
    int base_fd;
    uint64_t base_off;
    int64_t base_rank;
    /* This process's (sx_catalog_private): the products whose offers' stock or
     * questions changed after live_base, or that have questions, a bit each
     * (set, never cleared), as read from the store up to live sequence
     * live_seen (INT64_MIN: not yet read). live_lock: one reader at a time. */
    _Atomic uint64_t *live_bits;
    atomic_llong live_seen;
    mtx_t live_lock;
    bool live_lock_made;
    /* This process's: the products of a frequent word as a bitset (`words`
     * long), made at the first search that needs it, in an open-addressing
     * table of SX_TOK_SLOTS (word id + 1, 0 for a free slot; the bitset set
     * before its key), at most SX_TOK_BITS of them (as_search_match.c).
     * tok_lock: one maker at a time; lookups take no lock. */
    struct sx_tok_slot {
        atomic_uint key;
        _Atomic(uint64_t *) bits;
    } *tok_slots;
    size_t tok_made;
    mtx_t tok_lock;
    bool tok_lock_made;
#define SX_SCRATCH_KEEP 8
#define SX_SCRATCH_BYTES ((size_t)24 << 20)
    /* This process's: scratch memory of the searches that ended, for the
     * next ones (sx_scratch_take), at most SX_SCRATCH_KEEP of them and
     * SX_SCRATCH_BYTES together (scratch_each: each one's), so what a child keeps is
     * bounded by bytes, not by how many searches ran at once: at 1,000,000
     * products a search takes 3-6 MiB, so a few are kept and the rest given
     * back. scratch_lock: guards the stack. */
    as_scratch *scratch[SX_SCRATCH_KEEP];
    size_t n_scratch, scratch_each[SX_SCRATCH_KEEP];
    mtx_t scratch_lock;
    bool scratch_lock_made;
} sx_catalog;
#define SX_TOK_BITS 256
#define SX_TOK_SLOTS 512

/* A product's best offer under the default weights in steps, by delivery
 * date and by price (sx_rank_default), in its offers' slots (off_at): slot
 * i holds its i-th step of each. The date steps, ascending by `days`: over
 * its offers in stock that arrive within `days` days, the best one scores
 * `dscore`; `days` 0 after the last. The price steps, ascending by `price`:
 * over its offers in stock at `price` cents or less, the best one scores
 * `pscore`; `price` 0 after the last. No steps when nothing is in stock.
 * The first slot's `days` is UINT16_MAX when its offers' days do not fit
 * (below 1, or UINT16_MAX and above), its `price` UINT32_MAX when their
 * prices do not: the product is then ranked from its offers. Each slot
 * also says whether its own offer is the best of its merchant's in stock,
 * for a search with `merchant` alone. */
typedef struct sx_front {
    uint32_t price;
    uint16_t days;
    uint8_t dscore, pscore;
    /* the slot's own offer: its merchant, and whether it is the best of that
     * merchant's offers in stock (mbest 1), with that score (mscore) */
    uint16_t merchant;
    uint8_t mscore, mbest;
} sx_front;

/* A product's best offer under the default weights with no offer filters,
 * and what offer filters and the price and delivery sorts read of its offers
 * in stock, from def_off and in_stock (sx_rank_default), so that ranking
 * under offer filters or a price or delivery sort reads no offer row in the
 * common case. 32 bytes, at a multiple of 32 in the state: a product's
 * record never straddles two cache lines. */
typedef struct sx_prod {
    int64_t def_price;  /* def_off's price (0 for none) */
    int64_t min_price;  /* the cheapest price in stock (0 for none) */
    uint32_t def_off;   /* the best offer (into offers), UINT32_MAX for none */
    int32_t def_days;   /* def_off's delivery days (0 for none) */
    int32_t min_days;   /* the soonest delivery in stock */
    int32_t cheap_days; /* the soonest delivery of an offer in stock at min_price */
} sx_prod;
_Static_assert(sizeof(sx_prod) == 32, "sx_prod: two records a cache line");

/* A snapshot: the catalogue and its stock state at one rank version, in one
 * private mapping of `state_bytes`: which offers are in stock, and each
 * product's best offer under the default weights with no offer filters (what
 * most searches rank by, so they rank nothing). */
struct as_search_snap {
    atomic_int refs;
    sx_catalog *c;
    uint8_t *in_stock;  /* c->noffers: stock above zero at version v.rank */
    /* c->n: each product's columns a search reads together, in one record
     * (sx_prod: one cache miss a product, not six) */
    sx_prod *prod;
    uint8_t *def_score; /* c->n: def_off's score */
    /* c->noffers: each product's best offer by delivery date, by price and
     * by merchant (sx_front), so that a search with `deliver_by`,
     * `max_price` or `merchant` alone reads no offer row */
    sx_front *front;
    /* c->nmerchants bitsets of c->words words: the available products with
     * an offer of the merchant in stock */
    uint64_t *merchant_stock;
    /* c->n: every product in the default order without text (buyable first,
     * then the score, highest first, then sku): sx_rank_order */
    uint32_t *rank_order;
    /* c->n each, filled at the first search that needs one (sx_sort_order):
     * the products in the order of sort=price, delivery and return_rate
     * under the default weights with no offer filters (buyable first, then
     * the sort's key, then as rank_order); order_state[i] 0 while nobody
     * has made sort_order[i], 1 while a thread makes it, 2 when made, 3 when
     * it cannot be (a key outside what the order holds) */
    uint32_t *sort_order[3];
    atomic_int order_state[5]; /* [3]: bound_order's, [4]: order_pos[3]'s */
    /* each product's place in sort_order[i] (i < 3, made with it) and in
     * rank_order ([3], made at its first use): malloc'd, NULL until made or
     * when it could not be (sx_order_pos) */
    uint32_t *order_pos[4];
    /* c->words, made at the first search that needs it (sx_all_stock): the
     * available products with every offer in stock; all_stock_state as
     * order_state */
    uint64_t *all_stock;
    atomic_int all_stock_state;
    /* For a price cap with a date (no merchant), made at the first search
     * that needs each (sx_stock_pair): slot j * SX_SOON_DAYS + k holds the
     * available products with an offer in stock at or under price step j
     * that delivers within k days, exactly what such a search keeps at a
     * cap that is a step; states as order_state. Every slot may be made, a
     * bit per product each (64 bytes a product when all are: 2.4% of a
     * 1,000,000-product index; a long tail's caps and dates are spread over
     * them), each at its place in one anonymous mapping reserved at the
     * first (stock_area, stock_area_bytes; stock_area_state as
     * order_state), whose pages are the system's until written and go back
     * to it with the state: snapshots that come and go with stock changes
     * leave no freed bitsets in the heap. */
    uint64_t *stock_pair[SX_PRICE_STEPS * SX_SOON_DAYS];
    atomic_int stock_pair_state[SX_PRICE_STEPS * SX_SOON_DAYS];
    uint64_t *stock_area;
    size_t stock_area_bytes;
    atomic_int stock_area_state;
    /* c->n each, filled at the first search that needs them (sx_bound_order):
     * the buyable products by the score no offer of theirs can exceed under
     * the default weights (sx_rank_bound), highest first, then sku, and that
     * bound of each (bound_score[i] of bound_order[i]); what a search under
     * a date or a merchant pages by without ranking every match */
    uint32_t *bound_order;
    uint8_t *bound_score;
    /* c->n: the first of c->fine_step at or above min_price (c->nfine_steps
     * when it is above them all; 0 for none in stock), kept with min_price
     * (rank_columns) */
    uint8_t *min_fine;
    size_t n_bound; /* the buyable products: bound_order's length */
    /* c->n each, over the offers in stock (0 for none): the best delivery
     * component (as sx_offer.delivery10), and the merchants (into merchants)
     * of the best quality and of the best reliability: what bounds a
     * product's score under any weights (sx_rank_bound) */
    uint16_t *max_del10, *best_q, *best_r;
    /* c->n, when the catalogue has at most 64 merchants (else 0): bit m for
     * each merchant m with an offer of the product in stock, so a bound
     * takes the best merchant's quality and reliability together, not the
     * best quality of one and the best reliability of another */
    uint64_t *merchants_in;
    /* For offer filters, over the available products' offers in stock
     * (sx_rank_default): those with one at c->price_step[j] cents or less
     * (cheap_bits, j * c->words on, j < c->nprice_steps), and those with
     * one arriving within k days (soon_bits, k * c->words on, k <
     * SX_SOON_DAYS). A product outside the step at or above a price cap, or
     * outside a date's, has no offer the filter keeps: it is excluded
     * without a look at its offers (sx_filter.offer_mask). */
    uint64_t *cheap_bits, *soon_bits;
    void *state;
    size_t state_bytes;
    /* the products applied to c's base state to make this one (update), or
     * SIZE_MAX when it was copied from the snapshot before */
    size_t base_changes;
    as_search_version v;
};

/* The bytes of a snapshot's stock state for these counts, laid out in this
 * order (state_layout); the file's state section is as long. */
static inline size_t sx_state_bytes(size_t n, size_t noffers, size_t nmerchants)
{
    size_t stock = (noffers + 63) & ~(size_t)63, words = (n + 63) / 64;
    /* the products' records first, after the stock bytes rounded up to a
     * cache line (the state starts on a page), then the 8-byte columns */
    return stock +
           n * (sizeof(sx_prod) + sizeof(uint64_t) + 5 * sizeof(uint32_t) + 3 * sizeof(uint16_t) +
                3) +
           (nmerchants + SX_PRICE_STEPS + SX_SOON_DAYS) * words * sizeof(uint64_t) +
           noffers * sizeof(sx_front) + 1;
}

/* Product d's bit in a bitset over the products. */
static inline bool sx_bit(const uint64_t *bits, uint32_t d)
{
    return bits[d >> 6] >> (d & 63) & 1;
}

/* A search's word range: the words [lo, hi) of its bitsets (64 products
 * each) that can hold a product. The index orders its products by category,
 * part type and brand (order_docs), so a category's products, a part type's
 * and most words' lie in a run of the catalogue: passes over a search's
 * bitsets stop at its range, and their words outside it are never written
 * (nor read). */
typedef struct sx_span {
    size_t lo, hi;
} sx_span;

/* x and y's common words (empty: lo == hi). */
static inline sx_span sx_span_and(sx_span x, sx_span y)
{
    sx_span r = {x.lo > y.lo ? x.lo : y.lo, x.hi < y.hi ? x.hi : y.hi};
    if (r.hi < r.lo) r.hi = r.lo;
    return r;
}

/* The words of products [first, last] (an empty span when last < first). */
static inline sx_span sx_span_docs(uint32_t first, uint32_t last)
{
    return last < first ? (sx_span){0, 0} : (sx_span){first >> 6, (size_t)(last >> 6) + 1};
}

/* sx_bit for a set written only within span sp. */
static inline bool sx_bit_in(const uint64_t *bits, sx_span sp, uint32_t d)
{
    size_t w = d >> 6;
    return w - sp.lo < sp.hi - sp.lo && (bits[w] >> (d & 63) & 1);
}

/* The bits set in x. Debian's x86-64 baseline has no popcnt instruction
 * (every x86-64 processor since 2008 has it): with GCC, each function that
 * counts bitsets is built twice, with the instruction and without, and the
 * loader picks the one the processor runs (SX_POPCNT: target_clones, an
 * ifunc). In the one without, __builtin_popcountll is a call into libgcc.
 * Elsewhere (other compilers and processors, sanitizer builds), a dozen
 * instructions inline. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define SX_POPCNT __attribute__((target_clones("popcnt", "default")))
static inline unsigned sx_pop64(uint64_t x)
{
    return (unsigned)__builtin_popcountll(x);
}
#else
#define SX_POPCNT
static inline unsigned sx_pop64(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (unsigned)((x * 0x0101010101010101ull) >> 56);
}
#endif

static inline const char *sx_str(const sx_catalog *c, uint32_t at)
{
    return at == AS_NO_STR ? NULL : c->strs + at;
}

/* The room a build sets aside in strs for each half of the summary heads,
 * against what a sample of them makes (as_search_index.c, write_heads): a
 * test sets less, to have them spill over into the copied buffers. */
extern double sx_heads_room;

/* The length of a string of strs written after its length (add_len_str:
 * the contradicted products' entries, xj_at). */
static inline size_t sx_str_len(const sx_catalog *c, uint32_t at)
{
    const unsigned char *p = (const unsigned char *)c->strs + at;
    size_t l = (size_t)p[-2] | (size_t)p[-1] << 8;
    return l < 0xFFFF ? l : strlen((const char *)p);
}

static inline const char *sx_tok(const sx_catalog *c, uint32_t i)
{
    return c->tok_text + c->tok_at[i];
}

/* The first place in ids[0, n) (ascending) whose id is not below id; n when
 * there is none. */
static inline size_t sx_lower_id(const int64_t *ids, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The doc of the product at place r of id order in c. */
static inline uint32_t sx_id_doc(const sx_catalog *c, size_t r)
{
    return c->id_docs ? c->id_docs[r] : (uint32_t)r;
}

/* Doc d's place in id order in c: where its view's parts are. */
static inline size_t sx_id_rk(const sx_catalog *c, uint32_t d)
{
    return c->id_rk ? c->id_rk[d] : d;
}

/* The product of that id in c (its doc), UINT32_MAX when c has none. */
static inline uint32_t sx_doc_of(const sx_catalog *c, int64_t id)
{
    if (!c->n) return UINT32_MAX;
    /* ids given in sequence with none deleted between: id's place is its
     * distance from the first (one read, not a search of cold memory) */
    int64_t first = c->ids[sx_id_doc(c, 0)];
    if (id >= first && (uint64_t)(id - first) < c->n) {
        uint32_t d = sx_id_doc(c, (size_t)(id - first));
        if (c->ids[d] == id) return d;
    }
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->ids[sx_id_doc(c, mid)] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n && c->ids[sx_id_doc(c, lo)] == id ? sx_id_doc(c, lo) : UINT32_MAX;
}

/* Device id's compat rows in c (by doc) as *rows and *n; false, and none,
 * when c has no row for that device. */
static inline bool sx_device_rows(const sx_catalog *c, int64_t device, const sx_compat **rows,
                                  size_t *n)
{
    size_t i = sx_lower_id(c->dev_ids, c->ndev, device);
    if (i == c->ndev || c->dev_ids[i] != device) {
        *rows = NULL;
        *n = 0;
        return false;
    }
    *rows = c->compat + c->dev_at[i];
    *n = c->dev_at[i + 1] - c->dev_at[i];
    return true;
}

/* Product doc's row among one device's rows (by doc), NULL when it has none. */
static inline const sx_compat *sx_compat_row(const sx_compat *rows, size_t n, uint32_t doc)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rows[mid].doc < doc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && rows[lo].doc == doc ? &rows[lo] : NULL;
}

/* A stable LSD radix sort of v[0, n) by key[v[i]], 11 bits a pass, as many
 * passes as the largest key needs; tmp holds n (as_search_rank.c). */
void sx_radix_by(uint32_t *v, uint32_t *tmp, const uint64_t *key, size_t n);

/* ---- what every stage reads of a catalogue (as_search_catalog.c) ---- */

/* What each process makes for itself of a catalogue, built or mapped: c's
 * qdevs (on its own arena) and its bitsets; freed with c; false when out of
 * memory. */
bool sx_catalog_private(sx_catalog *c);
/* Scratch memory for one search's transient arrays (bitsets, the matches),
 * warm from an earlier search when one is free; given back when done. */
as_scratch *sx_scratch_take(const sx_catalog *c);
void sx_scratch_give(const sx_catalog *c, as_scratch *s);
/* Of p, the fields a page's summary reads of product d (as_view_summary_head
 * and the guarantee), pointing into c's strings. */
void sx_summary_fields(const sx_catalog *c, uint32_t d, as_product *p);

/* ---- the index file (as_search_file.c) ---- */

/* An index file being written, under a temporary name, made before the build
 * so that the views' text (three quarters of the file) goes into it as the
 * build makes it, through a shared mapping of the file at SX_VTEXT_OFF
 * (sx_vtext_room): never into private memory, never copied. */
typedef struct sx_file_out {
    int fd;
    char *tmp; /* the temporary name */
} sx_file_out;
#define SX_VTEXT_OFF 4096 /* where the views' text starts, a page into the file */
/* The stock state's section starts at a multiple of this: a page's offset
 * on every Linux (pages of 4 to 64 KiB), so that processes can map it. */
#define SX_PAGE 65536
/* Creates the temporary file for path; false when it cannot. */
bool sx_file_create(const char *path, sx_file_out *out);
/* Room for `need` bytes of c's view text in the file being written: its
 * blocks allocated (so that writing through the mapping cannot fault for want
 * of disk) and c->vtext mapped on them, keeping what it holds. */
bool sx_vtext_room(sx_catalog *c, const sx_file_out *out, size_t need);
/* Writes the rest of snapshot s (every section but a view text already in the
 * file) and the header, then renames the file to path; closes it either way
 * and removes it on failure. s stays usable: a view text mapped from the file
 * stays mapped. */
bool sx_file_commit(const as_search_snap *s, sx_file_out *out, const char *path);
void sx_file_abandon(sx_file_out *out);
/* Removes the temporary files that writers who died left in dir: every
 * writer holds its database's "<base>.lock" from creating its temporary file
 * to renaming it, so one seen while nobody holds that lock is a dead
 * writer's. base: only that database's, whose lock the caller holds; NULL:
 * every database's whose lock nobody holds. How many were removed. */
int sx_file_sweep(const char *dir, const char *base);
/* Writes snapshot s to path (create, then commit). */
bool sx_file_write(const as_search_snap *s, const char *path);
/* Maps the file at path when it holds that catalogue version: a catalogue
 * whose arrays are the file's; *at the versions it was built at, *state the
 * mapping (for sx_file_state). NULL when absent, foreign or damaged. */
sx_catalog *sx_file_map(const char *path, int64_t catalogue, as_search_version *at,
                        const uint8_t **state);
/* Whether the stock state in s (of catalogue c) indexes only what c has: the
 * state a file was built with, mapped or copied, so that no process that
 * maps the file ranks every product again (1,000,000 products: 1.5 s of CPU
 * per process); false when an index in it is out of range (a damaged file). */
bool sx_state_valid(const sx_catalog *c, const as_search_snap *s);
/* The stock state the file was built with (at `state`, its mapping), copied
 * into s: for a file whose state is not c's base (c->base_fd -1). */
bool sx_file_state(const sx_catalog *c, const uint8_t *state, as_search_snap *s);
/* c's base state (c->base_fd), `bytes` of it, mapped privately: writes to it
 * are this mapping's alone. NULL when it cannot be. */
void *sx_base_map(const sx_catalog *c, size_t bytes);
/* `bytes` of state at rank version `rank` made c's base, in a memory file (a
 * POSIX shared memory object, unlinked at once); false, c's base unchanged,
 * when none can be made. */
bool sx_base_write(sx_catalog *c, const void *state, size_t bytes, int64_t rank);

/* ---- stage interfaces (one file each) ---- */

/* match: the products that have the words and pass sx_filter_candidate,
 * ascending, each with its tier: the worst of its words' best match kinds. */
typedef struct sx_match {
    bool any_text;     /* the query had words to match (else every product, tier 0) */
    uint32_t *docs;    /* ndocs, when any_text (not with sx_filter.bits) */
    uint8_t *tiers;    /* ndocs */
    size_t ndocs;
    /* with sx_filter.bits and any_text: per tier t, the products that match
     * with tier t or better and pass category and part type, a bit each
     * (sx_catalog.words long) */
    const uint64_t *bits[AS_MATCH_CORRECTED + 1];
    /* the words of bits that are written: no match lies outside them (with
     * sx_filter.bits; without text, the filter's span) */
    sx_span span;
    as_search_understood u;
    bool dropped_any;
} sx_match;

typedef struct sx_filter sx_filter;
/* m: what the response reads (the words understood); tmp: the rest (the
 * bitsets, docs and tiers: read until the search ends) */
void sx_match_run(const as_search_snap *s, as_mem *m, as_mem *tmp, const as_query_text *qt,
                  const char *text, const sx_filter *f, sx_match *out);

/* rank: a product's best offer under the weights and offer filters. */
typedef struct sx_best {
    int score;        /* 0 when n_eligible == 0 */
    int64_t price_cents;
    int32_t days;
    size_t n_eligible;
} sx_best;

/* A query's weights as integer parts of the formula (hundredths): per
 * one-decimal value (tenths, 0 to SX_TAB_MAX) of the price and delivery
 * components, and per merchant its quality and reliability parts together. */
#define SX_TAB_MAX 1000
typedef struct sx_weights_tab {
    int32_t price[SX_TAB_MAX + 1], delivery[SX_TAB_MAX + 1];
    int32_t *merchant;             /* c->nmerchants: quality + reliability */
    int32_t *quality, *reliability; /* c->nmerchants: each part alone */
} sx_weights_tab;
/* false (and no table) when a weight is negative. */
bool sx_weights_tab_make(const sx_catalog *c, as_mem *m, const as_weights *w, sx_weights_tab *t);

/* merchant: into c->merchants, -1 for any (f->merchant is not read); tab:
 * w's table (sx_weights_tab_make) or NULL, the same scores either way. */
void sx_rank_best(const as_search_snap *s, uint32_t doc, const as_weights *w,
                  const sx_weights_tab *tab, const as_offer_filter *f, int merchant,
                  int64_t today, sx_best *out);
/* A score no offer of product doc in stock can exceed under t's weights, so
 * no offer that offer filters keep either (0 when none is in stock): each
 * part of the formula at its best among the product's offers in stock, from
 * the snapshot's columns. */
int sx_rank_bound(const as_search_snap *s, uint32_t doc, const sx_weights_tab *t,
                  const as_weights *w);
/* sx_rank_bound against a score without its loop over the product's
 * merchants: per value of the delivery component (max_del10), the merchants
 * whose part brings the bound to the score, and above it, as two masks
 * tested against the product's merchants_in; filled for one score at a
 * time, when a value is first met at that score. A search's own (in its
 * scratch memory): the masks change as the page's last score rises. */
typedef struct sx_bound_gate {
    const sx_weights_tab *t;
    const as_weights *w;
    bool masks;                 /* merchants_in names every merchant (64 at most) */
    /* with masks, the merchants a result's offers can be at: every one
     * (sx_bound_gate_init), or a merchant filter's alone (set by the caller):
     * the bound is then that merchant's */
    uint64_t only;
    size_t nm;                  /* merchants */
    int32_t part[64];           /* the merchants' parts, highest first */
    uint64_t cum[65];           /* cum[j]: the merchants of the j highest parts */
    int32_t *stamp;             /* per value: 1 + the score its masks are for, 0 none */
    uint64_t *at_least, *above; /* per value: bound >= score, > score */
} sx_bound_gate;
void sx_bound_gate_init(const sx_catalog *c, as_mem *m, const sx_weights_tab *t,
                        const as_weights *w, sx_bound_gate *g);
void sx_bound_gate_fill(sx_bound_gate *g, uint16_t dl, int score);
/* The merchants (g->masks) one of which, in stock, a product needs for its
 * bound to reach score at any delivery component (a delivery component is
 * at most 100: max_del10 at most SX_TAB_MAX). */
uint64_t sx_bound_gate_any(const sx_bound_gate *g, int score);
/* -1, 0 or 1 as sx_rank_bound(s, doc, g->t, g->w) is below, at or above
 * score (at least 0), for a product with an offer in stock. */
static inline int sx_bound_cmp(const as_search_snap *s, sx_bound_gate *g, uint32_t doc, int score)
{
    uint16_t dl = s->max_del10[doc];
    uint64_t in = s->merchants_in[doc] & g->only;
    if (!g->masks || !in || dl > SX_TAB_MAX) {
        int b = sx_rank_bound(s, doc, g->t, g->w);
        return b < score ? -1 : b > score;
    }
    if (g->stamp[dl] != score + 1) sx_bound_gate_fill(g, dl, score);
    if (!(in & g->at_least[dl])) return -1;
    return (in & g->above[dl]) != 0;
}
/* The snapshot's def_off and def_score of one product, from its in_stock,
 * and its other columns and bits from them. */
void sx_rank_default(as_search_snap *s, uint32_t doc);
/* s's rank_order, from its def_off and def_score and the catalogue's sku order. */
void sx_rank_order(as_search_snap *s);
/* The order of sort k (price, delivery or return_rate) in s under the
 * default weights and no offer filters, made at its first use (one thread
 * makes it, in the snapshot's state); NULL while another thread makes it or
 * when it cannot be made: the caller ranks each match instead. */
const uint32_t *sx_sort_order(const as_search_snap *s, as_sort_kind k);
/* s's bound_order (and bound_score), made at the first use as sx_sort_order's
 * orders are; NULL while another thread makes it or when it cannot be made. */
const uint32_t *sx_bound_order(const as_search_snap *s);
/* The pair bitsets' slot of a merchant (or -1) with a price step (or -1)
 * and a date step (or -1), two of the three given: -1 when there is none
 * (a merchant from SX_PAIR_MERCHANTS on). */
int sx_pair_slot(int merchant, int price_step, int day_step);
/* c's pair bitset of slot i, made by the first thread to ask; NULL while
 * another thread makes it or when it cannot be made (no memory, or
 * SX_PAIR_MAX made already). */
const uint64_t *sx_pair_bits(const sx_catalog *c, int slot);
/* s's all_stock, likewise. */
const uint64_t *sx_all_stock(const as_search_snap *s);
/* s's stock_pair of price step j and k days (under SX_SOON_DAYS), made now
 * when it is not; NULL when another thread is making it (or the mapping),
 * or it cannot be (no mapping, no such step). */
const uint64_t *sx_stock_pair(const as_search_snap *s, size_t j, size_t k);
/* c's one_each, likewise. */
const uint64_t *sx_one_each(const sx_catalog *c);
#define SX_SKU_STEPS 32
/* c's sku_below, made by the first thread to ask; NULL while another thread
 * makes it or when it cannot be made (no memory). */
const uint64_t *sx_sku_below(const sx_catalog *c);
/* Each product's place in order (the snapshot's rank_order or one of its
 * sort orders, as sx_sort_order gave it): made at the first use like the
 * orders; NULL while another thread makes it or when it cannot be made. */
const uint32_t *sx_order_pos(const as_search_snap *s, const uint32_t *order);
/* sx_rank_best under the default weights and no offer filters, from them;
 * price_cents and days only when price_days (else 0). */
void sx_rank_best_default(const as_search_snap *s, uint32_t doc, bool price_days, sx_best *out);
/* sx_rank_best under the default weights and offer filters: from def_off when
 * the filters keep it and the cheapest price in stock, else ranked; price_cents
 * and days as sx_rank_best_default's, n_eligible only zero or not. */
void sx_rank_best_default_filtered(const as_search_snap *s, uint32_t doc,
                                   const as_offer_filter *f, int merchant, int64_t today,
                                   bool price_days, sx_best *out);

/* filter: whether a matched product is a result; NULL, or why it is left out
 * (on m; computed only when want_reason). */
struct sx_filter {
    uint16_t cat, pt;
    bool has_cat, has_pt, none; /* none: an unknown category or part type: nothing */
    /* the words of the catalogue's bitsets that hold the category's, the
     * part type's and (set by sx_filter_bitsets) the device's products: a
     * candidate lies within them */
    sx_span span;
    int merchant;               /* into merchants, -1 for any */
    const as_device *dev;
    const sx_compat *dev_rows;  /* the device's compat rows, by doc */
    size_t n_dev_rows;
    bool offer_filters;
    bool verified_only;
    as_offer_filter of;
    int64_t today;
    /* set by the caller (sx_filter_bitsets): the products that may have
     * an offer in stock the price cap, the date and (with either) the
     * merchant keep, written within span (a snapshot's bitset when one
     * alone), or NULL when they keep every product; one outside it is
     * excluded */
    const uint64_t *offer_mask;
    /* with a device, set by sx_filter_bitsets: the products it has a
     * row for (fitting or not) and those whose row says they do not fit,
     * `words` long, so that a product's row is looked up only to say why
     * it does not fit */
    const uint64_t *dev_bits, *dev_unfit;
    /* set by sx_filter_bitsets: offer filters (read on the bitsets' road,
     * without a device), whose kept products (those with an offer in stock
     * that every filter keeps) are told a bitset word at a time
     * (sx_filter_kept_sets or _each). One offer filter alone
     * (a price cap, a date within SX_SOON_DAYS days, or a merchant) from
     * the stock state's bitsets: every product in kept_sure (none when
     * NULL) has an offer in stock it keeps; of the others, those in
     * kept_maybe (every one with kept_rest) are each looked at, their
     * cheapest price in stock against the cap. A merchant is its
     * merchant_stock, a date its step of soon_bits; a cap the step below
     * it, then the step at or above it (above every step: the rest). Two
     * or three filters, or a date too far for the steps (kept_each): each
     * product of offer_mask looked at (sx_filter_kept_each). */
    bool kept, kept_each;
    const uint64_t *kept_sure, *kept_maybe;
    bool kept_rest;
    /* with kept_maybe: how many of c->fine_step are at or under the cap
     * (as_search_snap.min_fine below it: kept; at it: looked at) */
    unsigned fine_cap;
    /* with kept_each and two filters: the products sure to be kept once
     * they have every offer in stock (a pair bitset, and all_stock), or
     * NULL */
    const uint64_t *pair_sure, *all_stock;
    /* with kept_each, a cap and a date alone: stock pairs (sx_stock_pair)
     * instead (stock_pairs). Kept without a look: those of stock_sure, the
     * step at or under the cap (NULL: none is); left out without one: those
     * not in stock_may, the step above it (NULL: none is, each looked at);
     * the cap a step, no other look. */
    bool stock_pairs;
    const uint64_t *stock_sure, *stock_may;
    /* with kept_each and a merchant (two or three filters): the products
     * with one offer of each merchant (one_each), whose merchant's offer
     * is the only one that can be kept, and the pair bitsets that tell it
     * meets the date (one_day) and the cap (one_cap: its price is at or
     * under the step at or under the cap; with one_between, the cap between
     * two steps, one_up those at or under the step above it, NULL above
     * every step: they are looked at); NULL one_each: each looked at */
    const uint64_t *one_each, *one_day, *one_cap, *one_up;
    bool one_price, one_between;
    /* set by the caller: no device and not none, under the default
     * weights or custom ones with a table (sx_weights_tab); the page stage
     * counts and pages by bitsets (sx_match.bits), under offer filters
     * ranking only the kept matches that may reach the page (page_bits) */
    bool bits;
};

bool sx_filter_prepare(const as_search_snap *s, const as_search_ask *ask, const as_device *dev,
                       const as_offer_filter *of, sx_filter *f);
/* f's per-search bitsets, in tmp: offer_mask from the catalogue's steps
 * (its own only when it takes two), how the products the offer filters
 * keep are told (f->kept; with one alone its sets, else f->kept_each), and
 * with a device dev_bits and dev_unfit from its rows. */
void sx_filter_bitsets(const as_search_snap *s, as_mem *tmp, sx_filter *f);
/* With f->kept: of the products in cand (bitset word w), those with an offer
 * in stock every offer filter keeps. Its caller chooses (filter_kept, in match
 * and page: this header calls no filter function): under two or three offer
 * filters, or a date too far for the steps (f->kept_each),
 * sx_filter_kept_each; else sx_filter_kept_sets. */
uint64_t sx_filter_kept_each(const as_search_snap *s, const sx_filter *f, size_t w, uint64_t cand);
/* One offer filter alone, from the stock state's sets (f->kept_sure,
 * f->kept_maybe, f->kept_rest). Always inlined, so that GCC weighs the
 * caller's filter_kept whole, as one function (its code as before). */
static inline __attribute__((always_inline)) uint64_t
sx_filter_kept_sets(const as_search_snap *s, const sx_filter *f, size_t w, uint64_t cand)
{
    uint64_t x = f->kept_sure ? cand & f->kept_sure[w] : 0;
    int64_t cap = f->of.max_price_cents;
    if (f->kept_maybe) {
        /* in a step: available, with a cheapest price in stock; kept when
         * its fine step is below the cap's (f->fine_cap: those at or under
         * the cap), its price read only when its fine step holds the cap;
         * without a branch on the first, so that the reads of one word's
         * products (cache misses on a large catalogue) overlap */
        uint64_t between = 0;
        for (uint64_t look = cand & ~x & f->kept_maybe[w]; look; look &= look - 1) {
            unsigned b = (unsigned)__builtin_ctzll(look);
            unsigned k = s->min_fine[w * 64 + b];
            x |= (uint64_t)(k < f->fine_cap) << b;
            between |= (uint64_t)(k == f->fine_cap) << b;
        }
        for (; between; between &= between - 1) {
            unsigned b = (unsigned)__builtin_ctzll(between);
            x |= (uint64_t)(s->prod[w * 64 + b].min_price <= cap) << b;
        }
    } else if (f->kept_rest) {
        for (uint64_t look = cand & ~x; look; look &= look - 1) {
            uint32_t d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(look));
            if (s->prod[d].def_off != UINT32_MAX && s->prod[d].min_price &&
                s->prod[d].min_price <= cap)
                x |= look & -look;
        }
    }
    return x;
}
/* Has product doc no offer at all that f's price cap and date keep? */
static inline bool sx_filter_unmet(const sx_filter *f, uint32_t doc)
{
    return f->offer_mask && !sx_bit(f->offer_mask, doc);
}
/* Has the device a row for product doc? *row: the row when it says the
 * product does not fit, else NULL (every reader asks `row && !row->fits`). */
static inline bool sx_filter_dev_row(const sx_filter *f, uint32_t doc, const sx_compat **row)
{
    *row = NULL;
    if (!sx_bit(f->dev_bits, doc)) return false;
    if (sx_bit(f->dev_unfit, doc)) *row = sx_compat_row(f->dev_rows, f->n_dev_rows, doc);
    return true;
}
/* Does the product pass category, part type, merchant and device? (Cheap
 * checks first; inline, as the scan of every match calls it.) */
static inline bool sx_filter_candidate(const as_search_snap *s, const sx_filter *f, uint32_t doc,
                                       const sx_compat **row)
{
    const sx_catalog *c = s->c;
    *row = NULL;
    if (f->none) return false;
    if ((f->has_cat && c->cat[doc] != f->cat) || (f->has_pt && c->pt[doc] != f->pt)) return false;
    /* an offer of the merchant, in stock or not: its bitset (sx_catalog_private) */
    if (f->merchant >= 0 && !sx_bit(c->merchant_bits + (size_t)f->merchant * c->words, doc))
        return false;
    if (f->dev && !sx_filter_dev_row(f, doc, row)) return false;
    return true;
}
/* Would a candidate be a result (not excluded)? What dropping words counts. */
bool sx_filter_viable(const as_search_snap *s, const sx_filter *f, uint32_t doc,
                      const sx_compat *row);
/* The reason a contradicted product is left out under verified_only, from its
 * note (NULL: none recorded). */
const char *sx_contradiction(as_mem *m, const char *note);
/* Its whole entry of `excluded`, as as_view_excluded_write writes it. */
const char *sx_excluded_json(as_mem *m, const char *sku, const char *name, const char *note);
/* What sx_filter_exclusion answers for a product whose entry is xj_at's. */
extern const char sx_contradicted[];

const char *sx_filter_exclusion(const as_search_snap *s, as_mem *m, const sx_filter *f,
                                const as_search_ask *ask, const as_offer_filter *of, uint32_t doc,
                                const sx_compat *row, const sx_best *best, bool want_reason);

/* page: a page product as the store's summary read gives it (stock 0). */
void sx_page_product(const as_search_snap *s, as_mem *m, uint32_t doc, const as_device *dev,
                     bool fits, as_product *p);

#endif
