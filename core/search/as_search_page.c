/* Search, stage 5 (page): the order of results, their count, one page of
 * them and the excluded list; and as_search_run, which runs the stages in
 * order: read_query, the filters (sx_filter_prepare, sx_filter_bitsets),
 * choose_way, match_words, then page_bits (by bitsets) or walk_matches (each
 * match filtered and ranked), collect_excluded, write_page. Results are
 * ordered by match tier (every word exact, then with prefixes, then with
 * corrections), then buyable before not, then the chosen sort (the spec's
 * score by default), then the score, then sku: never by an opaque text
 * score. */
#include <math.h>
#include <string.h>

#include "as_search_internal.h"

/* With f->kept: of the products in cand (bitset word w), those with an offer
 * in stock every offer filter keeps (sx_filter_kept_each, sx_filter_kept_sets). */
static inline uint64_t filter_kept(const as_search_snap *s, const sx_filter *f, size_t w,
                                   uint64_t cand)
{
    if (f->kept_each) return sx_filter_kept_each(s, f, w, cand);
    return sx_filter_kept_sets(s, f, w, cand);
}

#define MAX_EXCLUDED 100
#define NTIERS (AS_MATCH_CORRECTED + 1)

typedef struct hit {
    uint32_t doc, sku_rk;
    double key; /* the sort's own key, ascending */
    int32_t score;
    uint8_t tier, unbuyable;
} hit;

static int hit_cmp(const hit *x, const hit *y)
{
    if (x->tier != y->tier) return x->tier < y->tier ? -1 : 1;
    if (x->unbuyable != y->unbuyable) return x->unbuyable < y->unbuyable ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->sku_rk < y->sku_rk ? -1 : x->sku_rk > y->sku_rk;
}

static void hit_sift(hit *a, size_t i, size_t n)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && hit_cmp(&a[l], &a[m]) > 0) m = l;
        if (l + 1 < n && hit_cmp(&a[l + 1], &a[m]) > 0) m = l + 1;
        if (m == i) return;
        hit t = a[i];
        a[i] = a[m];
        a[m] = t;
        i = m;
    }
}

/* The first k hits: a max-heap of the best k seen, sorted at the end
 * (O(n log k), no sort of every match). */
typedef struct top_k {
    hit *heap;
    size_t n, k;
} top_k;

/* The words of a span that hold a result (the others are empty in every
 * tier's set), ascending: a tier's passes go over these alone. A match
 * spread over the catalogue (a brand's products in each category it sells
 * in) has a wide span and few such words: at 1,000,000 products a brand of
 * 3,000 products spans 14,600 words and fills 640. */
typedef struct sx_words {
    uint32_t *at;
    size_t n;
} sx_words;

static void top_offer(top_k *t, const hit *h)
{
    if (t->n < t->k) {
        size_t i = t->n++;
        t->heap[i] = *h;
        while (i > 0 && hit_cmp(&t->heap[(i - 1) / 2], &t->heap[i]) < 0) {
            hit x = t->heap[i];
            t->heap[i] = t->heap[(i - 1) / 2];
            t->heap[(i - 1) / 2] = x;
            i = (i - 1) / 2;
        }
    } else if (t->k && hit_cmp(h, &t->heap[0]) < 0) {
        t->heap[0] = *h;
        hit_sift(t->heap, 0, t->n);
    }
}

static void top_sort(top_k *t)
{
    for (size_t e = t->n; e > 1; e--) {
        hit x = t->heap[0];
        t->heap[0] = t->heap[e - 1];
        t->heap[e - 1] = x;
        hit_sift(t->heap, 0, e - 1);
    }
}

/* A hit's place in the score's order, tier first, as one integer (lower first). */
static inline uint64_t packed_key(const hit *h)
{
    return (uint64_t)h->tier << 48 | (uint64_t)h->unbuyable << 40 |
           (uint64_t)(255 - h->score) << 32 | h->sku_rk;
}

static double sort_key(as_sort_kind k, const sx_catalog *c, uint32_t doc, const sx_best *b)
{
    switch (k) {
    case AS_SORT_PRICE:
        return b->n_eligible ? (double)b->price_cents : 0;
    case AS_SORT_DELIVERY:
        return b->n_eligible ? b->days : 0;
    case AS_SORT_RETURN_RATE:
        return c->return_rate[doc];
    case AS_SORT_SCORE:
    default:
        return 0; /* the score comes next */
    }
}

/* A string of the catalogue's, not copied: the snapshot the result comes
 * from (and so its catalogue) is held until the response is written. */
static inline const char *dup(as_mem *m, const sx_catalog *c, uint32_t at)
{
    (void)m;
    return sx_str(c, at);
}

void sx_page_product(const as_search_snap *s, as_mem *m, uint32_t d, const as_device *dev,
                     bool fits, as_product *p)
{
    const sx_catalog *c = s->c;
    memset(p, 0, sizeof(*p));
    if (c->head_at[d] != AS_NO_STR) {
        /* the head written at the build stands for the fields it is made
         * of: only what ranking and the tests read besides, not six more
         * columns at random per result */
        p->id = c->ids[d];
        p->sku = sx_str(c, c->sku_at[d]);
        p->availability = c->avail[d] ? "in_stock" : sx_str(c, c->avail_at[d]);
        p->return_rate = c->return_rate[d];
        p->guarantee = c->guarantee[d] != 0;
        p->summary_head = sx_str(c, c->head_at[d]);
        p->summary_head_len = sx_str_len(c, c->head_at[d]);
    } else {
        sx_summary_fields(c, d, p);
    }
    p->is_demo = true;
    if (dev) {
        as_compat *k = as_alloc(m, sizeof(*k));
        k->device_slug = as_strdup(m, dev->slug); /* the device may be the snapshot's */
        k->device_name = as_strdup(m, dev->name);
        k->fit_status = fits ? AS_FIT_FITS : AS_FIT_DOES_NOT_FIT;
        k->evidence = "[]";
        p->compat = k;
    }
    p->n_offers = c->off_at[d + 1] - c->off_at[d];
    p->offers = as_alloc(m, (p->n_offers ? p->n_offers : 1) * sizeof(as_offer));
    for (size_t i = 0; i < p->n_offers; i++) {
        const sx_offer *x = &c->offers[c->off_at[d] + i];
        const sx_merchant *mc = &c->merchants[x->merchant];
        as_offer *o = &p->offers[i];
        o->id = dup(m, c, x->id_at);
        o->merchant = mc->m;
        o->merchant.id = dup(m, c, mc->id_at);
        o->merchant.name = dup(m, c, mc->name_at);
        o->merchant.country = dup(m, c, mc->country_at);
        o->merchant.city = dup(m, c, mc->city_at);
        if (mc->json_at != AS_NO_STR) {
            o->merchant.json = sx_str(c, mc->json_at);
            o->merchant.json_len = sx_str_len(c, mc->json_at);
        }
        o->price_cents = x->price_cents;
        o->retail_price_cents = x->retail_price_cents;
        o->price_label = dup(m, c, x->label_at);
        o->delivery_days = x->days;
        o->stock = 0; /* the store's, read for the page */
    }
}

/* Whether buyable product d, in the tier of last (a buyable hit in the
 * score's order), stays out of the page even at its bound (sx_rank_bound,
 * told by the gate's masks): hit_cmp's place of its bound's hit at or after
 * last (a lower score, or the same and a later sku). */
static inline bool bound_stays_out(const as_search_snap *s, sx_bound_gate *g, uint32_t d,
                                   const hit *last)
{
    int vs = sx_bound_cmp(s, g, d, last->score);
    return vs < 0 || (vs == 0 && s->c->sku_rk[d] > last->sku_rk);
}

/* Product d, kept by the offer filters, ranked and offered to got (tier t):
 * *worst the key of got's last once it is full (tier aside). */
static inline void offer_kept(const as_search_snap *s, const sx_filter *f, uint32_t d, uint8_t t,
                              top_k *got, uint64_t *worst)
{
    sx_best b;
    sx_rank_best_default_filtered(s, d, &f->of, f->merchant, f->today, false, &b);
    if (!b.n_eligible) return; /* not reached: the kept have an offer it keeps */
    uint64_t key = (uint64_t)(255 - b.score) << 32 | s->c->sku_rk[d];
    if (got->n == got->k && key >= *worst) return;
    hit h = {d, s->c->sku_rk[d], 0, b.score, t, 0};
    top_offer(got, &h);
    if (got->n == got->k) *worst = (uint64_t)(255 - got->heap[0].score) << 32 | got->heap[0].sku_rk;
}

/* The weights a search ranks by: custom ones (w, with tab their table) or,
 * with w NULL, the default weights. */
typedef struct ranker {
    const as_weights *w;
    const sx_weights_tab *tab;
} ranker;

/* Product d ranked by rk under the offer filters, and offered to got (tier
 * t) by sort's key (the price or days of its best offer they keep, or its
 * return rate), as walk_matches keys it. Under offer filters
 * it is one they keep; without them, one with no offer in stock is a hit
 * after the buyable ones (its score 0). */
static inline void offer_sorted(const as_search_snap *s, const sx_filter *f, const ranker *rk,
                                as_sort_kind sort, uint32_t d, uint8_t t, top_k *got)
{
    sx_best b;
    if (rk->w)
        sx_rank_best(s, d, rk->w, rk->tab, &f->of, f->merchant, f->today, &b);
    else
        sx_rank_best_default_filtered(s, d, &f->of, f->merchant, f->today,
                                      sort == AS_SORT_PRICE || sort == AS_SORT_DELIVERY, &b);
    if (!b.n_eligible && f->offer_filters)
        return; /* not reached: the kept have an offer it keeps */
    hit h = {d, s->c->sku_rk[d], sort_key(sort, s->c, d, &b), b.score, t, b.n_eligible ? 0 : 1};
    top_offer(got, &h);
}

/* What tie_mask_word keeps of a word's products once a page is full and
 * its last buyable: the merchants the gate's masks name (gate->nm of them),
 * made for the last's score and sku as they change. */
typedef struct tie_mask {
    uint64_t all, good, better; /* good: to the last's score; better: above it */
    int good_for;               /* the score good and better are for */
    const uint64_t *below, *lt; /* sx_sku_below, and its step under lt_for */
    uint32_t lt_for;            /* the sku_rk lt is for */
    bool none_lower;            /* the last's sku is the first: no tie enters */
} tie_mask;

static void tie_mask_init(const sx_catalog *c, const sx_bound_gate *gate, tie_mask *tm)
{
    tm->all = tm->good = tm->better = gate->nm < 64 ? (1ull << gate->nm) - 1 : ~0ull;
    tm->good_for = -1;
    tm->below = gate->masks ? sx_sku_below(c) : NULL;
    tm->lt = NULL;
    tm->lt_for = UINT32_MAX;
    tm->none_lower = false;
}

/* Of x, the products of word w that may enter a full page whose last is
 * `last` (buyable), when nothing before the score can put them ahead of it
 * (the tier and, under another sort, the key tie with the last's): those
 * with an offer in stock at one of the merchants that can bring their bound
 * (sx_rank_bound, the gate's masks) above the last's score (`better`), or
 * to it (`good`) with a lower sku (sku_below: the step of skus under the
 * last's), 64 products a word at a time (merchant_stock: the buyable
 * products' merchants in stock). Scores tie often at the top (100 is the
 * most, and then nothing is better): the sku step passes over most of a
 * large tier. A superset: each product's bound is told after. */
static uint64_t tie_mask_word(const as_search_snap *s, const sx_bound_gate *gate, tie_mask *tm,
                              const hit *last, size_t w, uint64_t x)
{
    const sx_catalog *c = s->c;
    if (last->score != tm->good_for) {
        tm->good_for = last->score;
        tm->good = sx_bound_gate_any(gate, tm->good_for) & gate->only;
        tm->better = sx_bound_gate_any(gate, tm->good_for + 1) & gate->only;
    }
    if (tm->below && last->sku_rk != tm->lt_for) {
        tm->lt_for = last->sku_rk;
        size_t j = ((size_t)tm->lt_for + c->sku_step - 1) / c->sku_step; /* steps to cover */
        tm->none_lower = j == 0;
        tm->lt = j && j < SX_SKU_STEPS ? tm->below + (j - 1) * c->words : NULL;
    }
    uint64_t tie = tm->none_lower ? 0 : tm->lt ? x & tm->lt[w] : x, up = x & ~tie;
    if (tie && tm->good != tm->all) {
        uint64_t y = 0;
        for (uint64_t g = tm->good; g; g &= g - 1)
            y |= s->merchant_stock[(size_t)__builtin_ctzll(g) * c->words + w];
        tie &= y;
    }
    if (up && tm->better != tm->all) {
        uint64_t y = 0;
        for (uint64_t g = tm->better; g; g &= g - 1)
            y |= s->merchant_stock[(size_t)__builtin_ctzll(g) * c->words + w];
        up &= y;
    }
    return tie | up;
}

/* Whether got is full and its last is buyable: a product with no offer in
 * stock cannot enter it, nor one whose key is above the last's. */
static inline bool full_of_buyable(const top_k *got)
{
    return got->n == got->k && got->k && !got->heap[0].unbuyable;
}

/* Whether buyable product d, whose sort key is at least `least`, stays out
 * of a page whose last (buyable) is `last`: a key above the last's, or the
 * same key and a bound on its score that cannot pass the last's (the
 * gate's, sx_rank_bound; not its score without offer filters, def_score, as
 * a filter can raise the price part of the offers it keeps). Keys tie often
 * (a delivery in days, a return rate), and then this spares ranking most of
 * the tied. */
static inline bool sorted_out(const as_search_snap *s, sx_bound_gate *gate, uint32_t d,
                              double least, const hit *last)
{
    if (least != last->key || !gate) return least > last->key;
    int vs = sx_bound_cmp(s, gate, d, last->score);
    return vs < 0 || (vs == 0 && s->c->sku_rk[d] > last->sku_rk);
}

/* One tier's results (set, `in` of them) under sort=price, delivery or
 * return_rate, and one offer filter or (custom weights) none, ranked by rk,
 * into got. A tier with few results ranks each. Else: by return rate, the
 * products in sort_order (the default weights' order of that sort: the
 * buyable first, each part by rate, a key of the product's own) until the
 * next one cannot enter; by price or delivery, step by step of the offer
 * filters' bitsets (cheap_bits, soon_bits: the products whose cheapest price
 * in stock, or soonest delivery, is within each step and not the one
 * before), since the key of a product's best offer under any weights is at
 * least its cheapest price (its soonest delivery), until a step's least key
 * is above the page's last; within a step, a product whose own cheapest
 * price (soonest delivery) is above the page's last key is passed over
 * unranked. Without offer filters the products with no offer in stock are
 * results after the buyable ones (in the last step), so these shortcuts
 * wait until got's last is buyable. */
static void sorted_tier(const as_search_snap *s, const sx_filter *f, const ranker *rk,
                        sx_bound_gate *gate, as_sort_kind sort, const uint32_t *sort_order,
                        const uint64_t *set, sx_span sp, const sx_words *ws, size_t in,
                        uint8_t t, top_k *got)
{
    const sx_catalog *c = s->c;
    size_t words = c->words, n = c->n;
    if (16.0 * (double)in * (double)in <= (double)got->k * (double)n ||
        (sort == AS_SORT_RETURN_RATE && !sort_order)) {
        for (size_t i = 0; i < ws->n; i++)
            for (uint64_t cur = set[ws->at[i]], w = ws->at[i]; cur; cur &= cur - 1)
                offer_sorted(s, f, rk, sort, (uint32_t)(w * 64 + (size_t)__builtin_ctzll(cur)), t,
                             got);
        return;
    }
    if (sort == AS_SORT_RETURN_RATE) {
        for (size_t i = 0; i < n; i++) {
            uint32_t d = sort_order[i];
            if (!sx_bit_in(set, sp, d)) continue;
            if (got->n == got->k && got->k) {
                /* sort_order: the buyable by rate, then the others by rate */
                bool none = s->prod[d].def_off == UINT32_MAX, last_none = got->heap[0].unbuyable;
                if (none && !last_none) break;
                if (none == last_none && c->return_rate[d] > got->heap[0].key) break;
                if (!none && !last_none && sorted_out(s, gate, d, c->return_rate[d], &got->heap[0]))
                    continue;
            }
            offer_sorted(s, f, rk, sort, d, t, got);
        }
        return;
    }
    bool price = sort == AS_SORT_PRICE;
    size_t nsteps = price ? c->nprice_steps : SX_SOON_DAYS;
    tie_mask tm;
    if (gate) tie_mask_init(c, gate, &tm);
    const uint64_t *steps = price ? s->cheap_bits : s->soon_bits;
    for (size_t j = 0; j <= nsteps; j++) {
        /* the least key of this step's products: above the step before */
        double least = !j ? -HUGE_VAL : price ? (double)c->price_step[j - 1] + 1 : (double)j;
        if (full_of_buyable(got) && got->heap[0].key < least) break;
        const uint64_t *within = j < nsteps ? steps + j * words : NULL;
        const uint64_t *before = j ? steps + (j - 1) * words : NULL;
        for (size_t i = 0; i < ws->n; i++) {
            size_t w = ws->at[i];
            uint64_t x = set[w] & (within ? within[w] : ~0ull) & (before ? ~before[w] : ~0ull);
            /* a day's step whose days are the last's: its products tie with
             * the last on the key or come after it */
            if (x && !price && within && gate && gate->masks && full_of_buyable(got) &&
                got->heap[0].key == least)
                x = tie_mask_word(s, gate, &tm, &got->heap[0], w, x);
            for (; x; x &= x - 1) {
                uint32_t d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x));
                /* its own least key, one column, before its offers */
                if (full_of_buyable(got) &&
                    (s->prod[d].def_off == UINT32_MAX ||
                     sorted_out(s, gate, d,
                                price ? (double)s->prod[d].min_price : (double)s->prod[d].min_days,
                                &got->heap[0])))
                    continue;
                offer_sorted(s, f, rk, sort, d, t, got);
            }
        }
    }
}

static void weighted_tier(const as_search_snap *s, const as_search_ask *ask, const sx_filter *f,
                          const ranker *rk, sx_bound_gate *gate, const uint64_t *set,
                          const sx_words *ws, uint8_t t, top_k *got);

/* A bound gate for the weights rk ranks by (the default weights' table made
 * in dtab), told a merchant filter's merchant when there is one; false, and
 * none, when no table can be made (weights that are negative). */
static bool bits_gate(const sx_catalog *c, as_mem *tmp, const as_search_ask *ask, const ranker *rk,
                      const sx_filter *f, sx_weights_tab *dtab, sx_bound_gate *gate)
{
    const sx_weights_tab *tab = rk->tab;
    if (!tab) {
        if (!sx_weights_tab_make(c, tmp, &ask->w, dtab)) return false;
        tab = dtab;
    }
    sx_bound_gate_init(c, tmp, tab, &ask->w, gate);
    if (f->merchant >= 0 && gate->masks) gate->only = 1ull << f->merchant;
    return true;
}

/* filtered_kept's first pass over bitset word w: the matches the offer
 * filters keep (not hidden, with hid) into res, the word listed in ws when
 * it has one, their number added to *count; returns the word's excluded. */
static inline uint64_t kept_word(const as_search_snap *s, const sx_filter *f,
                                 const uint64_t *any, const uint64_t *hid, size_t w,
                                 uint64_t *res, uint64_t *set, sx_words *ws, size_t *count)
{
    uint64_t a = any[w];
    uint64_t r = filter_kept(s, f, w, hid ? a & ~hid[w] : a);
    res[w] = r;
    set[w] = 0;
    ws->at[ws->n] = (uint32_t)w;
    ws->n += r != 0;
    *count += (size_t)sx_pop64(r);
    return a & ~r;
}

/* page_bits' first pass over bitset word w, kept_word's without offer
 * filters: the matches not hidden (with hid) into set, the word listed in
 * ws when it has one, their number added to *count; returns the word's
 * excluded (hidden). */
static inline uint64_t match_word(const uint64_t *any, const uint64_t *hid, size_t w,
                                  uint64_t *set, sx_words *ws, size_t *count)
{
    uint64_t out_of_it = hid ? any[w] & hid[w] : 0, r = any[w] & ~out_of_it;
    set[w] = r;
    ws->at[ws->n] = (uint32_t)w;
    ws->n += r != 0;
    *count += (size_t)sx_pop64(r);
    return out_of_it;
}

/* page_bits under offer filters (a price cap, a date, a merchant, alone or
 * together), under the default weights or custom ones (rk): the results are
 * the matches with an offer in stock they all keep (filter_kept, whatever
 * the weights), so counted by popcount and the excluded found word by word,
 * the lowest doc first; only the results that may reach the page are
 * ranked, tier by tier: under another sort than the score's by sorted_tier
 * (sort_order: that sort's, for the return rate). In the score's order,
 * under custom weights or a merchant, by weighted_tier (the gate told the
 * merchant). Else a tier with few products ranks each; otherwise its
 * products are taken in an order whose key bounds their score from above
 * (a price cap alone: rank_order, as the cap keeps the cheapest price and
 * so scores no offer higher than without it; a date, or a cap with a date:
 * bound_order, by sx_rank_bound, since the cheapest may come too late)
 * until the next one's bound cannot enter the page (ranking each while
 * another thread makes bound_order). */
SX_POPCNT static void filtered_kept(const as_search_snap *s, as_mem *m, as_mem *tmp,
                                    const as_search_ask *ask, const sx_filter *f, const ranker *rk,
                                    const uint32_t *sort_order, const uint64_t *const *tier,
                                    size_t ntiers, sx_span sp, top_k *top, uint32_t *excluded,
                                    const char **why_of, size_t *nx, as_search_result *out)
{
    const sx_catalog *c = s->c;
    size_t words = c->words, n = c->n;
    const uint64_t *any = tier[ntiers - 1];
    const uint64_t *hid = f->verified_only ? c->hidden_bits : NULL;
    /* the order to walk, made (bound_order) at the first tier that walks:
     * under a cap alone rank_order, whose score bounds the filtered one */
    bool by_price = f->of.max_price_cents > 0 && !f->of.deliver_by && f->merchant < 0;
    const uint32_t *order = by_price ? s->rank_order : NULL;
    size_t norder = n;
    uint64_t *res = as_alloc_raw(tmp, (words ? words : 1) * 8);
    /* the tiers' sets: zero where no result is (read at random by the
     * walks), the others written per tier */
    uint64_t *set = as_alloc_raw(tmp, (words ? words : 1) * 8);
    sx_words ws = {as_alloc_raw(tmp, (sp.hi - sp.lo + 1) * sizeof(uint32_t)), 0};
    size_t count = 0, ex_count = 0;
    size_t from = sp.lo;
    for (; from < sp.hi && *nx < MAX_EXCLUDED; from++) {
        size_t w = from;
        uint64_t x = kept_word(s, f, any, hid, w, res, set, &ws, &count);
        ex_count += (size_t)sx_pop64(x);
        for (; x && *nx < MAX_EXCLUDED; x &= x - 1) {
            uint32_t d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x));
            sx_best b = {0};
            excluded[*nx] = d;
            why_of[(*nx)++] = sx_filter_exclusion(s, m, f, ask, &f->of, d, NULL, &b, true);
        }
    }
    for (size_t w = from; w < sp.hi; w++) /* the excluded list full: counted only */
        ex_count += (size_t)sx_pop64(kept_word(s, f, any, hid, w, res, set, &ws, &count));
    out->count += count;
    out->excluded_count += ex_count;
    sx_bound_gate gate = {0}; /* made at the first tier that needs it */
    sx_weights_tab dtab;
    for (size_t t = 0; t < ntiers && top->n < top->k; t++) {
        if (t && tier[t] == tier[t - 1]) continue; /* no product of its own */
        size_t in = 0, need = top->k - top->n;
        for (size_t i = 0; i < ws.n; i++) {
            size_t w = ws.at[i];
            uint64_t x = res[w] & tier[t][w] & ~(t ? tier[t - 1][w] : 0);
            set[w] = x;
            in += (size_t)sx_pop64(x);
        }
        if (!in) continue;
        top_k got = {as_alloc(m, need * sizeof(hit)), 0, need};
        uint64_t worst = UINT64_MAX; /* the need-th best key so far, tier aside */
        if (ask->sort != AS_SORT_SCORE) {
            /* the bound of tied keys */
            bool gated = gate.t || bits_gate(c, tmp, ask, rk, f, &dtab, &gate);
            sorted_tier(s, f, rk, gated ? &gate : NULL, ask->sort, sort_order, set, sp, &ws, in,
                        (uint8_t)t, &got);
        } else if ((rk->w || f->merchant >= 0) &&
                   (gate.t || bits_gate(c, tmp, ask, rk, f, &dtab, &gate))) {
            /* custom weights, or a merchant (whose results' bound in
             * bound_order, over every merchant, is far above their score
             * there): each result word by word, past those that cannot
             * enter at their bound, that merchant's (gate.only) */
            weighted_tier(s, ask, f, rk, &gate, set, &ws, (uint8_t)t, &got);
        } else {
            bool few = 16.0 * (double)in * (double)in <= (double)need * (double)n;
            if (!order && !few) {
                order = sx_bound_order(s);
                norder = s->n_bound;
            }
            if (few || !order) {
                for (size_t i = 0; i < ws.n; i++) /* each ranked */
                    for (uint64_t cur = set[ws.at[i]], w = ws.at[i]; cur; cur &= cur - 1)
                        offer_kept(s, f, (uint32_t)(w * 64 + (size_t)__builtin_ctzll(cur)),
                                   (uint8_t)t, &got, &worst);
            } else {
                for (size_t i = 0; i < norder; i++) {
                    uint32_t d = order[i];
                    if (!sx_bit_in(set, sp, d)) continue;
                    /* the best score it can have; past it, none can enter */
                    uint8_t most = by_price ? s->def_score[d] : s->bound_score[i];
                    if (got.n == got.k && ((uint64_t)(255 - most) << 32 | c->sku_rk[d]) >= worst)
                        break;
                    offer_kept(s, f, d, (uint8_t)t, &got, &worst);
                }
            }
        }
        top_sort(&got);
        memcpy(top->heap + top->n, got.heap, got.n * sizeof(hit));
        top->n += got.n;
    }
}

/* One tier's results (set) in the score's order, without a device, under
 * the weights rk ranks by (gate->t their table) and no offer filter or one
 * alone (f's; its results, those it keeps, are all buyable), into got:
 * hit_cmp's order, as walk_matches ranks them (buyable first,
 * then the score under the weights, then sku). Once got is full, a product
 * that cannot enter it even at its bound (sx_rank_bound, told by
 * sx_bound_cmp; under a merchant that merchant's, gate->only) is passed
 * over unranked, and an unbuyable one (no offer in stock: score 0, after
 * every buyable one) is placed by its sku alone. Without offer filters a
 * product has an offer under the weights exactly when it has one under the
 * default weights (which offers are eligible does not depend on the
 * weights), so def_off tells the unbuyable. */
static void weighted_tier(const as_search_snap *s, const as_search_ask *ask, const sx_filter *f,
                          const ranker *rk, sx_bound_gate *gate, const uint64_t *set,
                          const sx_words *ws, uint8_t t, top_k *got)
{
    const sx_catalog *c = s->c;
    tie_mask tm;
    tie_mask_init(c, gate, &tm);
    for (size_t i = 0; i < ws->n; i++) {
        size_t w = ws->at[i];
        uint64_t x = set[w];
        if (x && gate->masks && got->n == got->k && got->k && !got->heap[0].unbuyable)
            x = tie_mask_word(s, gate, &tm, &got->heap[0], w, x);
        for (uint64_t cur = x; cur; cur &= cur - 1) {
            uint32_t d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(cur));
            bool unbuyable = s->prod[d].def_off == UINT32_MAX;
            if (got->n == got->k) {
                if (!got->k) return;
                const hit *last = &got->heap[0];
                if (unbuyable) {
                    if (!last->unbuyable || c->sku_rk[d] > last->sku_rk) continue;
                } else if (!last->unbuyable && bound_stays_out(s, gate, d, last)) {
                    continue;
                }
            }
            sx_best b;
            if (unbuyable)
                memset(&b, 0, sizeof(b));
            else if (rk->w)
                sx_rank_best(s, d, rk->w, gate->t, &f->of, f->merchant, ask->today, &b);
            else /* from the columns and steps (a merchant's slot) */
                sx_rank_best_default_filtered(s, d, &f->of, f->merchant, ask->today, false, &b);
            hit h = {d, c->sku_rk[d], 0, b.score, t, b.n_eligible ? 0 : 1};
            top_offer(got, &h);
        }
    }
}

/* x into the max-heap heap[0, n) at i: the larger children move up. */
static inline void place_sift(uint64_t *heap, size_t n, size_t i, uint64_t x)
{
    for (size_t l; (l = 2 * i + 1) < n;) {
        size_t m = l + 1 < n && heap[l + 1] > heap[l] ? l + 1 : l;
        if (heap[m] <= x) break;
        heap[i] = heap[m];
        i = m;
    }
    heap[i] = x;
}

/* The products of set (the tier t's) whose place in an order (pos) is at
 * least `from`, the first top->k - top->n of them by that place, appended to
 * top in that order: what walking the order on from `from` gives, from the
 * set's products instead of the order's. A max-heap of places keeps the
 * first ones; one comparison passes most products over. */
static void by_place(const as_search_snap *s, as_mem *tmp, const uint32_t *pos, uint32_t from,
                     const uint64_t *set, const sx_words *ws, uint8_t t, top_k *top)
{
    const sx_catalog *c = s->c;
    size_t need = top->k - top->n, got = 0;
    uint64_t *heap = as_alloc_raw(tmp, need * sizeof(*heap)); /* place << 32 | doc */
    for (size_t j = 0; j < ws->n; j++)
        for (uint64_t cur = set[ws->at[j]], w = ws->at[j]; cur; cur &= cur - 1) {
            uint32_t d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(cur));
            uint32_t p = pos[d];
            if (p < from) continue; /* walked: taken */
            uint64_t x = (uint64_t)p << 32 | d;
            if (got < need) { /* sift up */
                size_t i = got++;
                for (; i > 0 && heap[(i - 1) / 2] < x; i = (i - 1) / 2)
                    heap[i] = heap[(i - 1) / 2];
                heap[i] = x;
            } else if (x < heap[0]) {
                place_sift(heap, got, 0, x);
            }
        }
    /* the heap sorted in place, ascending */
    for (size_t e = got; e > 1; e--) {
        uint64_t x = heap[e - 1];
        heap[e - 1] = heap[0];
        place_sift(heap, e - 1, 0, x);
    }
    for (size_t j = 0; j < got; j++) {
        uint32_t d = (uint32_t)heap[j];
        top->heap[top->n++] = (hit){
            d, c->sku_rk[d], 0, s->def_score[d], t, (uint8_t)(s->prod[d].def_off == UINT32_MAX)};
    }
}

/* The page under sx_filter.bits (no device; merchant and offer filters
 * are filtered_kept's; the default weights, or with tab custom ones), by
 * bitsets instead of each match: the count and
 * the excluded (contradicted, under verified_only) by popcount; the first k
 * results, tier by tier: under custom weights by weighted_tier; else either
 * walking `order` (the snapshot's rank_order, the default order without
 * text, or the sort's, sx_sort_order) until the tier has given what is
 * missing, or, for a tier with few products, ordering its products by their
 * keys: whichever costs less (below). Into top (sorted) and the excluded
 * list; the same answers as walk_matches. */
SX_POPCNT static void page_bits(const as_search_snap *s, as_mem *m, as_mem *tmp,
                                const as_search_ask *ask, const sx_filter *f, const sx_match *mt,
                                const uint32_t *order, const sx_weights_tab *tab, top_k *top,
                                uint32_t *excluded, const char **why_of, size_t *nx,
                                as_search_result *out)
{
    const sx_catalog *c = s->c;
    size_t words = c->words, n = c->n;
    sx_span sp = mt->span;
    uint64_t *all = NULL;
    const uint64_t *tier[NTIERS];
    size_t ntiers = mt->any_text ? NTIERS : 1;
    if (mt->any_text) {
        for (size_t t = 0; t < NTIERS; t++)
            tier[t] = mt->bits[t];
    } else { /* the category's, part type's and merchant's products, or every one: tier 0 */
        all = as_alloc_raw(tmp, (words ? words : 1) * 8);
        for (size_t w = sp.lo; w < sp.hi; w++) {
            uint64_t x = ~0ull;
            if (f->has_cat) x &= c->cat_bits[f->cat * words + w];
            if (f->has_pt) x &= c->pt_bits[f->pt * words + w];
            if (f->merchant >= 0) x &= c->merchant_bits[(size_t)f->merchant * words + w];
            all[w] = x;
        }
        if (sp.hi == words && sp.hi > sp.lo && (n & 63)) all[words - 1] &= (1ull << (n & 63)) - 1;
        tier[0] = all;
    }
    const uint64_t *any = tier[ntiers - 1], *hidden = c->hidden_bits;
    ranker rk = {tab ? &ask->w : NULL, tab};
    if (f->offer_filters) {
        filtered_kept(s, m, tmp, ask, f, &rk, order, tier, ntiers, sp, top, excluded, why_of, nx,
                      out);
        return;
    }
    /* counted in locals (out's fields, written each word, are stores the
     * compiler cannot keep in registers); with one tier (every set the
     * same), its results are the set the tier's loop would make */
    size_t count = 0, ex_count = 0;
    bool one_tier = true;
    for (size_t t = 1; t < ntiers; t++)
        if (tier[t] != tier[0]) one_tier = false;
    /* the tiers' sets: zero where no result is (as here), the others
     * written per tier */
    uint64_t *set = as_alloc_raw(tmp, (words ? words : 1) * 8);
    sx_words ws = {as_alloc_raw(tmp, (sp.hi - sp.lo + 1) * sizeof(uint32_t)), 0};
    const uint64_t *hid = f->verified_only ? hidden : NULL;
    size_t from = sp.lo;
    for (; from < sp.hi && *nx < MAX_EXCLUDED; from++) {
        size_t w = from;
        uint64_t out_of_it = match_word(any, hid, w, set, &ws, &count);
        ex_count += (size_t)sx_pop64(out_of_it);
        for (uint64_t cur = out_of_it; cur && *nx < MAX_EXCLUDED; cur &= cur - 1) {
            uint32_t d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(cur));
            sx_best b;
            sx_rank_best_default(s, d, false, &b);
            excluded[*nx] = d;
            why_of[(*nx)++] = sx_filter_exclusion(s, m, f, ask, &ask->of, d, NULL, &b, true);
        }
    }
    /* the excluded list full (a large match, most searches): the rest
     * counted without a branch on each word's excluded (contradicted
     * products are a few at random: mispredicted) */
    for (size_t w = from; w < sp.hi; w++)
        ex_count += (size_t)sx_pop64(match_word(any, hid, w, set, &ws, &count));
    out->count += count;
    out->excluded_count += ex_count;
    sx_bound_gate gate = {0}; /* under custom weights: made at the first tier */
    for (size_t t = 0; t < ntiers && top->n < top->k; t++) {
        /* this tier's results: in tier[t], not in the tier before, not out of
         * it (none when the tier's set is the one before's) */
        if (t && tier[t] == tier[t - 1]) continue;
        size_t in = one_tier ? count : 0, need = top->k - top->n;
        for (size_t i = 0; i < ws.n && !one_tier; i++) {
            size_t w = ws.at[i];
            uint64_t x = tier[t][w] & ~(t ? tier[t - 1][w] : 0);
            if (f->verified_only) x &= ~hidden[w];
            set[w] = x;
            in += (size_t)sx_pop64(x);
        }
        if (!in) continue;
        if (tab) {
            top_k got = {as_alloc(m, need * sizeof(hit)), 0, need};
            if (!gate.t) sx_bound_gate_init(c, tmp, tab, &ask->w, &gate);
            if (ask->sort != AS_SORT_SCORE)
                sorted_tier(s, f, &rk, &gate, ask->sort, order, set, sp, &ws, in, (uint8_t)t,
                            &got);
            else
                weighted_tier(s, ask, f, &rk, &gate, set, &ws, (uint8_t)t, &got);
            top_sort(&got);
            memcpy(top->heap + top->n, got.heap, got.n * sizeof(hit));
            top->n += got.n;
            continue;
        }
        /* the places of the products in order: with them, a walk of the
         * order (in turn: the order and the set, in cache) stops at a budget
         * of about the tier's size, and the rest is found from the places of
         * the tier's products (one column, in the set's order); without them,
         * the walk goes on to the end, or, for a tier with few products,
         * each is ranked by its key: three columns at random per product
         * and its offers under another sort, n * need / in products walked
         * against in ranked, weighed 1 to 16 */
        const uint32_t *pos = sx_order_pos(s, order);
        if (!pos && 16.0 * (double)in * (double)in <= (double)need * (double)n) {
            /* few: each by its key (as walk_matches does) */
            top_k few = {as_alloc(m, need * sizeof(hit)), 0, need};
            for (size_t j = 0; j < ws.n; j++)
                for (uint64_t cur = set[ws.at[j]], w = ws.at[j]; cur; cur &= cur - 1) {
                    uint32_t d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(cur));
                    hit h = {d,          c->sku_rk[d],
                             0,          s->def_score[d],
                             (uint8_t)t, (uint8_t)(s->prod[d].def_off == UINT32_MAX)};
                    if (ask->sort != AS_SORT_SCORE) {
                        sx_best b;
                        sx_rank_best_default(s, d, true, &b);
                        h.key = sort_key(ask->sort, c, d, &b);
                    }
                    top_offer(&few, &h);
                }
            top_sort(&few);
            memcpy(top->heap + top->n, few.heap, few.n * sizeof(hit));
            top->n += few.n;
            continue;
        }
        /* the sort's order, until the tier has given what is missing; past
         * the budget (a tier's products may come late in the order: a sort
         * by price meets every cheaper kind first), by the places of its
         * products not yet walked (by_place) */
        size_t i = 0, budget = pos ? in + 64 : n;
        for (; i < n && top->n < top->k && i < budget; i++) {
            uint32_t d = order[i];
            if (!sx_bit_in(set, sp, d)) continue;
            top->heap[top->n++] = (hit){d,          c->sku_rk[d],
                                        0,          s->def_score[d],
                                        (uint8_t)t, (uint8_t)(s->prod[d].def_off == UINT32_MAX)};
        }
        if (i < n && top->n < top->k) by_place(s, tmp, pos, (uint32_t)i, set, &ws, (uint8_t)t, top);
    }
}

/* How many products ahead the walk of the matches asks for the columns. */
#define LOOP_AHEAD 8

/* A function that only asks for memory (prefetches), inlined before GCC
 * judges it: on its own it has no effect GCC counts, and its call is dropped. */
#define PREFETCHING static inline __attribute__((always_inline))

/* The excluded products listed so far, in the index's order, with why. */
typedef struct excluded_list {
    uint32_t doc[MAX_EXCLUDED];
    const char *why[MAX_EXCLUDED];
    size_t n;
} excluded_list;

/* How a search is made, decided once from its weights and sort. */
typedef struct search_way {
    bool default_w;        /* the default weights */
    sx_weights_tab *tab;   /* custom weights: the formula's parts as integers, or NULL */
    const uint32_t *order; /* the order page_bits walks (rank_order, or the sort's) */
} search_way;

/* The walk's shortcuts (walk_matches), each set where it answers the same. */
typedef struct walk_mode {
    /* the default weights and no offer filters: each product's best offer
     * is the snapshot's (most searches) */
    bool defaults;
    bool price_days; /* a sort by price or delivery: the best offer's own figures */
    /* defaults in the score's order: a result's place is one integer
     * (packed_key, the same order as hit_cmp's), so most products are
     * passed over on one comparison */
    bool packed;
    /* the same under the default weights with a price cap or a date (no
     * merchant), for the products whose best offer the filters keep; the
     * others are ranked, and their hits (sort key 0) keep the packed order */
    bool kept_filtered;
    /* the score's order under custom weights, or under the default weights
     * with offer filters: once the page is full, a result that cannot enter
     * it even at its bound (sx_rank_bound, over its offers in stock, so
     * over those the offer filters keep too) is counted without ranking its
     * offers; under offer filters, a result is one with an offer they keep
     * (sx_filter_viable), and buyable */
    bool bounded;
    /* the offers' rows are read for most products ranked: under custom
     * weights (sx_rank_best), and under several offer filters, where the
     * columns seldom decide (sx_filter_viable) */
    bool rows_ahead;
} walk_mode;

/* The bound of walk_mode.bounded: it reads a weights' table, under the
 * default weights one made for it when the page is first full. */
typedef struct bound_state {
    sx_weights_tab *tab;
    bool tab_made;
    sx_bound_gate gate; /* made with tab's bound, when first needed */
} bound_state;

/* Read: the words of the text, and a device or a price cap named in it;
 * into out the device and offer filters the search applies (the ask's, a
 * lower price cap from the text). */
static void read_query(const as_search_snap *s, as_mem *m, const as_search_ask *ask,
                       as_query_text *qt, as_search_result *out)
{
    if (ask->q && *ask->q && ask->devs)
        as_query_read(m, ask->q, ask->devs, ask->n_devs, qt);
    else if (ask->q && *ask->q)
        as_query_read_with(m, ask->q, s->c->qdevs, qt); /* the devices' words, made once */
    out->device = ask->device ? ask->device : qt->device;
    out->of = ask->of;
    if (qt->max_price_cents &&
        (!out->of.max_price_cents || qt->max_price_cents < out->of.max_price_cents))
        out->of.max_price_cents = qt->max_price_cents;
}

/* No device: the matches as bitsets (page_bits); under the default weights
 * without offer filters counted and paged by them, in the score's order by
 * rank_order, in another sort's by its order (sx_sort_order, made at its
 * first use); under offer filters (a price cap, a date, a merchant, alone
 * or together), in any order, the matches they keep counted a word at a
 * time and only the results that may reach the page ranked
 * (filtered_kept); under custom weights likewise, and without offer
 * filters in the score's order by weighted_tier. The walk of each match
 * (walk_matches) is left for a device, or weights with no table. Sets
 * f->bits. */
static void choose_way(const as_search_snap *s, as_mem *m, const as_search_ask *ask, sx_filter *f,
                       search_way *way)
{
    way->default_w = as_weights_is_default(&ask->w);
    way->tab = NULL;
    if (!way->default_w) {
        way->tab = as_alloc(m, sizeof(*way->tab));
        if (!sx_weights_tab_make(s->c, m, &ask->w, way->tab)) way->tab = NULL;
    }
    f->bits = !f->dev && !f->none && (way->default_w || way->tab);
    /* another sort's order (the default weights'): what page_bits walks
     * under the default weights; under custom weights sorted_tier walks it
     * for the return rate alone (a price or delivery by the steps) */
    way->order = s->rank_order;
    if (f->bits && ask->sort != AS_SORT_SCORE &&
        (way->default_w || ask->sort == AS_SORT_RETURN_RATE))
        f->bits = (way->order = sx_sort_order(s, ask->sort)) != NULL;
}

/* Match: the products with the query's words, and what the text was read
 * as (into out->understood). */
static void match_words(const as_search_snap *s, as_mem *m, as_mem *tmp, const as_search_ask *ask,
                        const as_query_text *qt, const sx_filter *f, sx_match *mt,
                        as_search_result *out)
{
    sx_match_run(s, m, tmp, qt, ask->q, f, mt);
    out->understood = mt->u;
    out->understood.device = qt->device;
    out->understood.device_text = qt->device_text;
    out->understood.max_price_cents = qt->max_price_cents;
    out->understood.price_text = qt->price_text;
}

static walk_mode walk_mode_of(const as_search_ask *ask, const sx_filter *f, const search_way *way)
{
    walk_mode md;
    md.defaults = way->default_w && !f->offer_filters;
    md.price_days = ask->sort == AS_SORT_PRICE || ask->sort == AS_SORT_DELIVERY;
    md.packed = md.defaults && ask->sort == AS_SORT_SCORE;
    md.kept_filtered =
        way->default_w && f->offer_filters && f->merchant < 0 && ask->sort == AS_SORT_SCORE;
    md.bounded = ask->sort == AS_SORT_SCORE && !md.defaults && (way->tab || way->default_w);
    int n_filters = (f->of.max_price_cents > 0) + (f->of.deliver_by > 0) + (f->merchant >= 0);
    md.rows_ahead = !way->default_w || n_filters > 1;
    return md;
}

/* The products to consider: those the text matched (and the category,
 * part type, merchant and device let through); else a device's, a
 * category's or a part type's alone, or every product (*list NULL). */
static void candidates(const sx_catalog *c, as_mem *tmp, const sx_filter *f, const sx_match *mt,
                       const uint32_t **list, size_t *nlist)
{
    *list = NULL;
    *nlist = c->n;
    if (mt->any_text) {
        *list = mt->docs;
        *nlist = mt->ndocs;
    } else if (!f->none && f->dev) {
        /* the device's rows (by doc, as a category's products are): a few
         * hundred instead of the category's tens of thousands, the same
         * order, so the same page and excluded list */
        uint32_t *docs = as_alloc_raw(tmp, (f->n_dev_rows ? f->n_dev_rows : 1) * sizeof(uint32_t));
        for (size_t i = 0; i < f->n_dev_rows; i++)
            docs[i] = f->dev_rows[i].doc;
        *list = docs;
        *nlist = f->n_dev_rows;
    } else if (!f->none && f->has_cat) {
        *list = c->cat_docs + c->cat_at[f->cat];
        *nlist = c->cat_at[f->cat + 1] - c->cat_at[f->cat];
    } else if (!f->none && f->has_pt) {
        *list = c->pt_docs + c->pt_at[f->pt];
        *nlist = c->pt_at[f->pt + 1] - c->pt_at[f->pt];
    } else if (f->none) {
        *nlist = 0;
    }
}

/* The columns the i-th product's turn will read are cache misses at random
 * in a large catalogue: asked for LOOP_AHEAD products ahead, the misses
 * overlap instead of following each other. */
PREFETCHING void ask_ahead(const as_search_snap *s, const uint32_t *list, size_t nlist, size_t i,
                           const walk_mode *md)
{
    const sx_catalog *c = s->c;
    if (i + LOOP_AHEAD < nlist) {
        uint32_t a = list ? list[i + LOOP_AHEAD] : (uint32_t)(i + LOOP_AHEAD);
        __builtin_prefetch(s->prod + a); /* its columns: one record */
        __builtin_prefetch(c->sku_rk + a);
        if (md->bounded) {
            __builtin_prefetch(s->max_del10 + a);
            if (s->merchants_in) __builtin_prefetch(s->merchants_in + a);
        }
        if (md->rows_ahead) __builtin_prefetch(c->off_at + a);
    }
    if (md->rows_ahead && i + LOOP_AHEAD / 2 < nlist) {
        /* custom weights or several offer filters: the offers' rows and
         * stock that sx_filter_viable and the ranking read, at the place
         * asked for LOOP_AHEAD / 2 products ago */
        uint32_t a = list ? list[i + LOOP_AHEAD / 2] : (uint32_t)(i + LOOP_AHEAD / 2);
        uint32_t o = c->off_at[a];
        __builtin_prefetch(c->offers + o);
        __builtin_prefetch(s->in_stock + o);
    }
}

/* Under offer filters (the default weights, no merchant): the product's
 * result is the snapshot's best offer when the filters keep it and the
 * cheapest price in stock (as sx_rank_best_default_filtered decides). */
static inline bool default_offer_kept(const as_search_snap *s, uint32_t d,
                                      const as_offer_filter *of, int64_t today)
{
    const sx_prod *p = &s->prod[d];
    return p->def_off != UINT32_MAX &&
           (of->max_price_cents <= 0 || p->def_price <= of->max_price_cents) &&
           (of->deliver_by <= 0 ||
            (today + p->def_days <= of->deliver_by &&
             (p->min_price == p->def_price || today + p->cheap_days <= of->deliver_by)));
}

/* A result in the default order, placed by its packed key alone; the
 * page's worst key after it (the k-th best so far). */
static inline uint64_t place_packed(const as_search_snap *s, uint32_t d, uint8_t tier, top_k *top,
                                    uint64_t worst)
{
    uint64_t key = (uint64_t)tier << 48 | (uint64_t)(s->prod[d].def_off == UINT32_MAX) << 40 |
                   (uint64_t)(255 - s->def_score[d]) << 32 | s->c->sku_rk[d];
    if (top->n == top->k && key >= worst) return worst;
    hit h = {d,    (uint32_t)key,           0, 255 - (int32_t)(key >> 32 & 0xFF),
             tier, (uint8_t)(key >> 40 & 1)};
    top_offer(top, &h);
    return top->n == top->k && top->n ? packed_key(&top->heap[0]) : worst;
}

/* Hidden under verified_only, or a device's part that does not fit. */
static inline bool left_out(const sx_catalog *c, const sx_filter *f, const as_search_ask *ask,
                            uint32_t d, const sx_compat *row)
{
    return (ask->verified_only && c->hidden[d]) || (f->dev && row && !row->fits);
}

/* With the excluded list full: excluded, known without ranking it (the
 * tests of sx_filter_exclusion, and of the columns under a price cap or a
 * date, as sx_rank_best_default_filtered reads them). */
static inline bool surely_excluded(const as_search_snap *s, const sx_filter *f,
                                   const as_search_ask *ask, const walk_mode *md,
                                   const as_offer_filter *of, uint32_t d, const sx_compat *row,
                                   bool unmet)
{
    if (unmet || left_out(s->c, f, ask, d, row)) return true;
    if (!md->kept_filtered) return false;
    const sx_prod *p = &s->prod[d];
    return p->def_off == UINT32_MAX ||
           (of->max_price_cents > 0 && p->min_price > of->max_price_cents) ||
           (of->deliver_by > 0 && ask->today + p->min_days > of->deliver_by);
}

/* The bound's table and gate, made when the page is first full; false when
 * no table can be made (nothing is then bounded). */
static bool bound_ready(const sx_catalog *c, as_mem *m, as_mem *tmp, const as_weights *w,
                        bound_state *bs)
{
    if (!bs->tab_made) {
        bs->tab_made = true;
        bs->tab = as_alloc(m, sizeof(*bs->tab));
        if (!sx_weights_tab_make(c, m, w, bs->tab)) return false;
    }
    if (!bs->gate.t) sx_bound_gate_init(c, tmp, bs->tab, w, &bs->gate);
    return true;
}

/* The page full, in the score's order: a result that stays off the page
 * even at its bound. Its hit at its bound against the page's last, as
 * hit_cmp places them: by the gate's masks when only the score and the sku
 * can tell them apart (the score's order: keys are 0). */
static inline bool bound_stays_off(const as_search_snap *s, const sx_filter *f,
                                   const as_search_ask *ask, bound_state *bs, uint32_t d,
                                   const sx_compat *row, uint8_t tier, const top_k *top)
{
    const sx_catalog *c = s->c;
    if (left_out(c, f, ask, d, row) || (f->offer_filters && !sx_filter_viable(s, f, d, row)))
        return false;
    const hit *last = &top->heap[0];
    bool unbuyable = s->prod[d].def_off == UINT32_MAX;
    if (tier == last->tier && !unbuyable && !last->unbuyable)
        return bound_stays_out(s, &bs->gate, d, last);
    hit most = {d, c->sku_rk[d], 0, sx_rank_bound(s, d, bs->tab, &ask->w), tier, unbuyable};
    return hit_cmp(&most, last) >= 0;
}

/* The page full, another sort under custom weights or offer filters: the
 * key of the best offer, whichever it is, is at least the least among the
 * product's offers in stock (the return rate is the product's), and when it
 * is that least, its score is at most the product's bound (sx_rank_bound;
 * without a weights' table, the highest score); a result that cannot enter
 * the page even at that key with that score stays off it. */
static inline bool sorted_stays_off(const as_search_snap *s, const sx_filter *f,
                                    const as_search_ask *ask, const sx_weights_tab *tab, uint32_t d,
                                    const sx_compat *row, uint8_t tier, const top_k *top)
{
    const sx_catalog *c = s->c;
    if (s->prod[d].def_off == UINT32_MAX || left_out(c, f, ask, d, row) ||
        (f->offer_filters && !sx_filter_viable(s, f, d, row)))
        return false;
    double least = ask->sort == AS_SORT_PRICE      ? (double)s->prod[d].min_price
                   : ask->sort == AS_SORT_DELIVERY ? (double)s->prod[d].min_days
                                                   : c->return_rate[d];
    hit most = {d, c->sku_rk[d], least, tab ? sx_rank_bound(s, d, tab, &ask->w) : INT32_MAX, tier,
                0};
    return hit_cmp(&most, &top->heap[0]) >= 0;
}

/* Rank: the product's best offer under the weights and offer filters
 * (none when no offer in stock meets them). */
static inline void rank_offers(const as_search_snap *s, const sx_filter *f,
                               const as_search_ask *ask, const search_way *way, const walk_mode *md,
                               const as_offer_filter *of, uint32_t d, bool unmet, sx_best *b)
{
    if (unmet)
        memset(b, 0, sizeof(*b));
    else if (md->defaults)
        sx_rank_best_default(s, d, md->price_days, b);
    else if (way->default_w)
        sx_rank_best_default_filtered(s, d, of, f->merchant, ask->today, md->price_days, b);
    else
        sx_rank_best(s, d, &ask->w, way->tab, of, f->merchant, ask->today, b);
}

/* Each match in turn (a device, or weights with no table): filtered,
 * ranked, counted and placed on the page or in the excluded list; top
 * sorted at the end. */
static void walk_matches(const as_search_snap *s, as_mem *m, as_mem *tmp, const as_search_ask *ask,
                         const sx_filter *f, const sx_match *mt, const search_way *way, top_k *top,
                         excluded_list *xl, as_search_result *out)
{
    const sx_catalog *c = s->c;
    const as_offer_filter of = out->of;
    walk_mode md = walk_mode_of(ask, f, way);
    bound_state bs = {way->tab, way->tab != NULL, {0}};
    uint64_t worst = UINT64_MAX; /* the packed key of the k-th best so far */
    const uint32_t *list;
    size_t nlist;
    candidates(c, tmp, f, mt, &list, &nlist);
    for (size_t i = 0; i < nlist; i++) {
        uint32_t d = list ? list[i] : (uint32_t)i;
        ask_ahead(s, list, nlist, i, &md);
        const sx_compat *row = NULL;
        if (!mt->any_text ? !sx_filter_candidate(s, f, d, &row)
                          : f->dev && !sx_filter_dev_row(f, d, &row))
            continue;
        uint8_t tier = mt->any_text ? mt->tiers[i] : 0;
        /* no offer of it in stock meets the cap and date: excluded */
        bool unmet = sx_filter_unmet(f, d);
        bool kept = (md.packed || md.kept_filtered) && !unmet &&
                    !(f->verified_only && c->hidden[d]) && !(row && !row->fits);
        if (kept && !md.packed) kept = default_offer_kept(s, d, &of, ask->today);
        if (kept) { /* a result, in the default order: one key decides its place */
            out->count++;
            worst = place_packed(s, d, tier, top, worst);
            continue;
        }
        if (xl->n == MAX_EXCLUDED && surely_excluded(s, f, ask, &md, &of, d, row, unmet)) {
            out->excluded_count++; /* and not listed: no need to rank it to know */
            continue;
        }
        bool full = top->n == top->k && top->k;
        if (md.bounded && full) {
            md.bounded = bound_ready(c, m, tmp, &ask->w, &bs);
            if (md.bounded && bound_stays_off(s, f, ask, &bs, d, row, tier, top)) {
                out->count++; /* a result, not on the page */
                continue;
            }
        }
        if (ask->sort != AS_SORT_SCORE && !md.defaults && full &&
            sorted_stays_off(s, f, ask, way->tab, d, row, tier, top)) {
            out->count++;
            continue;
        }
        sx_best b;
        rank_offers(s, f, ask, way, &md, &of, d, unmet, &b);
        const char *why = sx_filter_exclusion(s, m, f, ask, &of, d, row, &b, xl->n < MAX_EXCLUDED);
        if (why) {
            if (xl->n < MAX_EXCLUDED) {
                xl->doc[xl->n] = d;
                xl->why[xl->n++] = why;
            }
            out->excluded_count++;
            continue;
        }
        out->count++;
        hit h = {d,       c->sku_rk[d], sort_key(ask->sort, c, d, &b),
                 b.score, tier,         b.n_eligible ? 0 : 1};
        top_offer(top, &h);
        if (md.kept_filtered && top->n == top->k && top->n) worst = packed_key(&top->heap[0]);
    }
    top_sort(top);
}

/* Each result's head and offers, and the excluded entries, scattered in
 * the index and mostly not in cache: their places asked for together,
 * then what is there, so that the misses overlap instead of coming one at
 * a time as each product is made (its head's length is read first). */
PREFETCHING void ask_page_places(const sx_catalog *c, const hit *page, size_t n,
                                 const excluded_list *xl)
{
    for (size_t i = 0; i < n; i++) {
        __builtin_prefetch(c->head_at + page[i].doc);
        __builtin_prefetch(c->off_at + page[i].doc);
    }
    for (size_t i = 0; i < xl->n; i++)
        __builtin_prefetch(c->xj_at + xl->doc[i]);
    for (size_t i = 0; i < n; i++) {
        uint32_t d = page[i].doc;
        if (c->head_at[d] != AS_NO_STR) __builtin_prefetch(c->strs + c->head_at[d] - 2);
        __builtin_prefetch(c->offers + c->off_at[d]);
    }
    for (size_t i = 0; i < xl->n; i++)
        if (c->xj_at[xl->doc[i]] != AS_NO_STR)
            __builtin_prefetch(c->strs + c->xj_at[xl->doc[i]] - 2);
}

/* The excluded list's entries: sku, name and why; a contradicted
 * product's whole entry as the build wrote it. */
static void collect_excluded(const sx_catalog *c, as_mem *m, const excluded_list *xl,
                             as_search_result *out)
{
    size_t nx = xl->n;
    out->excluded = as_alloc(m, (nx ? nx : 1) * sizeof(as_product));
    out->excluded_why = as_alloc(m, (nx ? nx : 1) * sizeof(char *));
    out->excluded_json = as_alloc(m, (nx ? nx : 1) * sizeof(char *));
    out->excluded_json_len = as_alloc(m, (nx ? nx : 1) * sizeof(size_t));
    for (size_t i = 0; i < nx; i++) {
        as_product *x = &out->excluded[i];
        uint32_t d = xl->doc[i];
        x->id = c->ids[d];
        x->sku = sx_str(c, c->sku_at[d]);
        x->name = sx_str(c, c->name_at[d]);
        out->excluded_why[i] = xl->why[i];
        if (xl->why[i] == sx_contradicted) {
            out->excluded_json[i] = sx_str(c, c->xj_at[d]);
            out->excluded_json_len[i] = sx_str_len(c, c->xj_at[d]);
        }
    }
    out->n_excluded = nx;
}

/* Page: the n results from the page's first, each a product with its
 * offers (for the device applied) and its match. */
static void write_page(const as_search_snap *s, as_mem *m, const hit *page, size_t n,
                       const sx_match *mt, as_search_result *out)
{
    const sx_catalog *c = s->c;
    out->ids = as_alloc(m, (n ? n : 1) * sizeof(int64_t));
    out->page = as_alloc(m, (n ? n : 1) * sizeof(as_product));
    out->matched_all = as_alloc(m, (n ? n : 1) * sizeof(bool));
    out->match = as_alloc(m, (n ? n : 1) * sizeof(as_match_kind));
    for (size_t i = 0; i < n; i++) {
        uint32_t d = page[i].doc;
        out->ids[i] = c->ids[d];
        sx_page_product(s, m, d, out->device, true, &out->page[i]);
        out->matched_all[i] = !mt->dropped_any;
        out->match[i] = (as_match_kind)page[i].tier;
    }
    out->n = n;
}

/* The strings the response reads, scattered in the index and mostly not in
 * cache: asked for together, their misses overlap instead of coming one at
 * a time as the page is written. */
PREFETCHING void ask_response_strings(const as_search_result *out)
{
    for (size_t i = 0; i < out->n; i++) {
        const as_product *p = &out->page[i];
        if (p->summary_head) { /* a few hundred bytes, read in order */
            __builtin_prefetch(p->summary_head);
            __builtin_prefetch(p->summary_head + 64);
        } else {
            __builtin_prefetch(p->sku);
            __builtin_prefetch(p->name);
            __builtin_prefetch(p->brand);
            __builtin_prefetch(p->image_urls);
        }
        for (size_t o = 0; o < p->n_offers; o++) {
            __builtin_prefetch(p->offers[o].id);
            __builtin_prefetch(p->offers[o].price_label);
        }
    }
    for (size_t i = 0; i < out->n_excluded; i++)
        __builtin_prefetch(out->excluded_json[i] ? out->excluded_json[i] : out->excluded[i].name);
}

void as_search_run(const as_search_snap *s, as_mem *m, const as_search_ask *ask,
                   as_search_result *out)
{
    const sx_catalog *c = s->c;
    memset(out, 0, sizeof(*out));
    as_query_text qt = {0};
    read_query(s, m, ask, &qt, out);
    sx_filter f;
    sx_filter_prepare(s, ask, out->device, &out->of, &f);
    /* the bitsets and lists of matches in scratch memory, warm (given back
     * at the end) */
    as_scratch *scratch = sx_scratch_take(c);
    as_mem tmp = as_scratch_mem(scratch);
    sx_filter_bitsets(s, &tmp, &f);
    search_way way;
    choose_way(s, m, ask, &f, &way);
    sx_match mt;
    match_words(s, m, &tmp, ask, &qt, &f, &mt, out);
    size_t k = (size_t)(ask->offset + ask->limit);
    top_k top = {as_alloc(m, (k ? k : 1) * sizeof(hit)), 0, k};
    excluded_list xl;
    xl.n = 0;
    if (f.bits)
        page_bits(s, m, &tmp, ask, &f, &mt, way.order, way.default_w ? NULL : way.tab, &top, xl.doc,
                  xl.why, &xl.n, out);
    else
        walk_matches(s, m, &tmp, ask, &f, &mt, &way, &top, &xl, out);
    size_t first = (size_t)ask->offset;
    size_t n = top.n > first ? top.n - first : 0;
    ask_page_places(c, top.heap + first, n, &xl);
    collect_excluded(c, m, &xl, out);
    write_page(s, m, top.heap + first, n, &mt, out);
    ask_response_strings(out);
    sx_scratch_give(c, scratch);
}

void as_search_apply_stock(as_search_result *r, const as_offer_stock *st, size_t n)
{
    as_search_apply_stock_to(r->page, r->n, st, n);
}

void as_search_apply_stock_to(as_product *ps, size_t n_products, const as_offer_stock *st, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n_products; k++) {
            as_product *p = &ps[k];
            if (p->id != st[i].product_id) continue;
            /* the index's rows name an offer by the page's own string: by
             * pointer first, by text for the store's rows */
            size_t o = 0;
            while (o < p->n_offers && p->offers[o].id != st[i].offer_id)
                o++;
            if (o < p->n_offers) {
                p->offers[o].stock = st[i].stock;
                break;
            }
            for (o = 0; o < p->n_offers; o++)
                if (strcmp(p->offers[o].id, st[i].offer_id) == 0) p->offers[o].stock = st[i].stock;
            break;
        }
}
