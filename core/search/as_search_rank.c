/* Search, stage 4 (rank): a product's best offer under the weights and offer
 * filters, from the index's columns: the formula of core/rules/as_rank.c (spec 2.4,
 * docs/ranking.md), component by component with the same rounding, so the
 * order of results is the order of the scores their pages show. Only which
 * offers are in stock comes from the snapshot's stock state; the page's own
 * offers are ranked again from live stock by the API. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "as_search_internal.h"
#include "as_util.h"

/* as_rank.c's scored_cmp: score, then cheaper, sooner, more punctual, offer id. */
static bool better(const sx_catalog *c, int score, const sx_offer *o, int best_score,
                   const sx_offer *b)
{
    if (!b) return true;
    if (score != best_score) return score > best_score;
    if (o->price_cents != b->price_cents) return o->price_cents < b->price_cents;
    if (o->days != b->days) return o->days < b->days;
    double ro = c->merchants[o->merchant].m.on_time_rate,
           rb = c->merchants[b->merchant].m.on_time_rate;
    if (ro != rb) return ro > rb;
    return strcmp(c->strs + o->id_at, c->strs + b->id_at) < 0;
}

static inline bool eligible(const as_search_snap *s, uint32_t o, const as_offer_filter *f,
                            int64_t today, int merchant)
{
    const sx_offer *x = &s->c->offers[o];
    if (!s->in_stock[o]) return false;
    if (merchant >= 0 && x->merchant != merchant) return false;
    if (f->max_price_cents > 0 && x->price_cents > f->max_price_cents) return false;
    if (f->deliver_by > 0 && today + x->days > f->deliver_by) return false;
    return true;
}

/* as_round(v, 1) and as_round(v, 2), the same arithmetic, inlined: the formula
 * rounds four times per offer ranked. */
static inline double round1(double v)
{
    return round(v * 10.0) / 10.0;
}

static inline double round2(double v)
{
    return round(v * 100.0) / 100.0;
}

#define FEW 32 /* eligible offers kept from the first pass (most products have fewer) */

/* The formula's sum in hundredths, from a table (sx_weights_tab): each
 * component's weighted and rounded part is round(v * w * 100) for its
 * one-decimal value v, so an integer; the float sum of the four parts rounds
 * to hundredths as exactly their integer sum H (its error is some 1e-13, far
 * from a half), and lround(H / 100.0) is (H + 50) / 100 for H >= 0 (a half
 * is exact in binary). Same scores as the float arithmetic, without its six
 * roundings per offer. */
static inline int tab_score(const sx_weights_tab *t, const sx_offer *x, int64_t cheapest,
                            double price_w, double delivery_w)
{
    double pv = round(100.0 * (double)cheapest / (double)x->price_cents * 10.0);
    int64_t h;
    if (pv >= 0 && pv <= SX_TAB_MAX)
        h = t->price[(int)pv];
    else
        h = (int64_t)round((pv / 10.0 * price_w) * 100.0);
    h += x->delivery10 <= SX_TAB_MAX ? t->delivery[x->delivery10]
                                     : (int64_t)round((x->delivery10 / 10.0 * delivery_w) * 100.0);
    h += t->merchant[x->merchant];
    return (int)((h + 50) / 100);
}

bool sx_weights_tab_make(const sx_catalog *c, as_mem *m, const as_weights *w, sx_weights_tab *t)
{
    for (int i = 0; i < AS_W_N; i++)
        if (!(w->w[i] >= 0)) return false; /* the integer sum assumes no negative part */
    for (int k = 0; k <= SX_TAB_MAX; k++) {
        t->price[k] = (int32_t)round(((double)k / 10.0 * w->w[0]) * 100.0);
        t->delivery[k] = (int32_t)round(((double)k / 10.0 * w->w[1]) * 100.0);
    }
    size_t nm = c->nmerchants ? c->nmerchants : 1;
    t->merchant = as_alloc(m, nm * sizeof(int32_t));
    t->quality = as_alloc(m, nm * sizeof(int32_t));
    t->reliability = as_alloc(m, nm * sizeof(int32_t));
    for (size_t i = 0; i < c->nmerchants; i++) {
        t->quality[i] = (int32_t)round((c->merchants[i].quality * w->w[2]) * 100.0);
        t->reliability[i] = (int32_t)round((c->merchants[i].reliability * w->w[3]) * 100.0);
        t->merchant[i] = t->quality[i] + t->reliability[i];
    }
    return true;
}

/* tab_score's sum with each part at its most: the price part of the
 * cheapest offer (100), the best delivery component, and the merchant part
 * (quality and reliability) of the best merchant with an offer in stock, or
 * where merchants_in cannot tell, the best quality's and the best
 * reliability's parts (every table is non-decreasing in its value: no
 * weight is negative), so at least the score of any offer in stock. */
int sx_rank_bound(const as_search_snap *s, uint32_t doc, const sx_weights_tab *t,
                  const as_weights *w)
{
    if (s->prod[doc].def_off == UINT32_MAX) return 0;
    uint16_t dl = s->max_del10[doc];
    int64_t h = t->price[SX_TAB_MAX];
    h += dl <= SX_TAB_MAX ? t->delivery[dl] : (int64_t)round((dl / 10.0 * w->w[1]) * 100.0);
    uint64_t in = s->merchants_in[doc];
    if (in) {
        int32_t most = 0;
        for (; in; in &= in - 1) {
            int32_t part = t->merchant[__builtin_ctzll(in)];
            if (part > most) most = part;
        }
        h += most;
    } else {
        h += t->quality[s->best_q[doc]] + t->reliability[s->best_r[doc]];
    }
    return (int)((h + 50) / 100);
}

void sx_bound_gate_init(const sx_catalog *c, as_mem *m, const sx_weights_tab *t,
                        const as_weights *w, sx_bound_gate *g)
{
    memset(g, 0, sizeof(*g));
    g->t = t;
    g->w = w;
    g->masks = c->nmerchants <= 64;
    g->only = ~0ull;
    if (!g->masks) return;
    g->nm = c->nmerchants;
    uint8_t idx[64];
    for (size_t i = 0; i < g->nm; i++) { /* by part, highest first (insertion) */
        size_t j = i;
        for (; j && t->merchant[idx[j - 1]] < t->merchant[i]; j--)
            idx[j] = idx[j - 1];
        idx[j] = (uint8_t)i;
    }
    for (size_t j = 0; j < g->nm; j++) {
        g->part[j] = t->merchant[idx[j]];
        g->cum[j + 1] = g->cum[j] | 1ull << idx[j];
    }
    g->stamp = as_alloc(m, (SX_TAB_MAX + 1) * sizeof(*g->stamp));
    g->at_least = as_alloc_raw(m, (SX_TAB_MAX + 1) * sizeof(*g->at_least));
    g->above = as_alloc_raw(m, (SX_TAB_MAX + 1) * sizeof(*g->above));
}

/* The merchants whose part is at least x. */
static uint64_t parts_at_least(const sx_bound_gate *g, int64_t x)
{
    size_t j = 0;
    while (j < g->nm && g->part[j] >= x)
        j++;
    return g->cum[j];
}

void sx_bound_gate_fill(sx_bound_gate *g, uint16_t dl, int score)
{
    /* sx_rank_bound is (h + 50) / 100 for h = price part + delivery part +
     * the best merchant's part, all at least 0: at least score exactly when
     * the merchant's part is at least 100 * score - 50 - the others */
    int64_t need = 100 * (int64_t)score - 50 - g->t->price[SX_TAB_MAX] - g->t->delivery[dl];
    g->at_least[dl] = parts_at_least(g, need);
    g->above[dl] = parts_at_least(g, need + 100);
    g->stamp[dl] = score + 1;
}

uint64_t sx_bound_gate_any(const sx_bound_gate *g, int score)
{
    /* the delivery table does not decrease: its last value is its most */
    return parts_at_least(g, 100 * (int64_t)score - 50 - g->t->price[SX_TAB_MAX] -
                                 g->t->delivery[SX_TAB_MAX]);
}

/* The best offer's index, or UINT32_MAX when none is eligible; scored from
 * tab when given (same scores). */
static uint32_t best_offer(const as_search_snap *s, uint32_t doc, const as_weights *w,
                           const sx_weights_tab *tab, const as_offer_filter *f, int merchant,
                           int64_t today, sx_best *out)
{
    const sx_catalog *c = s->c;
    memset(out, 0, sizeof(*out));
    if (!c->avail[doc] || merchant < -1) return UINT32_MAX;
    /* one pass: the cheapest eligible price, and the eligible offers */
    uint32_t few[FEW];
    size_t n = 0;
    int64_t cheapest = 0;
    for (uint32_t o = c->off_at[doc]; o < c->off_at[doc + 1]; o++) {
        if (!eligible(s, o, f, today, merchant)) continue;
        if (n < FEW) few[n] = o;
        n++;
        if (!cheapest || c->offers[o].price_cents < cheapest) cheapest = c->offers[o].price_cents;
    }
    if (!n || !cheapest) return UINT32_MAX; /* no price: nothing to rank against (as before) */
    const sx_offer *best = NULL;
    uint32_t best_at = UINT32_MAX;
    int best_score = 0;
    uint32_t o = c->off_at[doc];
    for (size_t i = 0; i < n; i++, o++) {
        if (n <= FEW) {
            o = few[i];
        } else {
            while (!eligible(s, o, f, today, merchant))
                o++;
        }
        const sx_offer *x = &c->offers[o];
        int score;
        if (tab) {
            score = tab_score(tab, x, cheapest, w->w[0], w->w[1]);
        } else {
            const sx_merchant *mc = &c->merchants[x->merchant];
            /* as_rank.c's score: each component times its weight rounded to
             * hundredths, summed in this order, rounded */
            double sum =
                round2(round1(100.0 * (double)cheapest / (double)x->price_cents) * w->w[0]);
            sum += round2(x->delivery10 / 10.0 * w->w[1]);
            sum += round2(mc->quality * w->w[2]);
            sum += round2(mc->reliability * w->w[3]);
            score = (int)lround(round2(sum));
        }
        if (better(c, score, x, best_score, best)) {
            best = x;
            best_at = o;
            best_score = score;
        }
    }
    out->n_eligible = n;
    out->score = best_score;
    out->price_cents = best->price_cents;
    out->days = best->days;
    return best_at;
}

void sx_rank_best(const as_search_snap *s, uint32_t doc, const as_weights *w,
                  const sx_weights_tab *tab, const as_offer_filter *f, int merchant,
                  int64_t today, sx_best *out)
{
    best_offer(s, doc, w, tab, f, merchant, today, out);
}

static void rank_columns(as_search_snap *s, uint32_t doc);

void sx_rank_default(as_search_snap *s, uint32_t doc)
{
    as_weights w;
    as_weights_default(&w);
    as_offer_filter none = {0};
    sx_best b;
    s->prod[doc].def_off = best_offer(s, doc, &w, NULL, &none, -1, 0, &b);
    s->def_score[doc] = (uint8_t)b.score;
    rank_columns(s, doc);
}

/* One list of a product's steps (sx_front): for each value of the key its
 * offers in stock have (by_price: the price, else the delivery days), from
 * the least, the score of the best offer among those whose key is at most
 * it, by best_offer itself under that filter, so the scores are the
 * search's. */
static void front_steps(as_search_snap *s, uint32_t doc, bool by_price)
{
    const sx_catalog *c = s->c;
    uint32_t first = c->off_at[doc], slots = c->off_at[doc + 1] - first;
    sx_front *fr = s->front + first;
    as_weights w;
    as_weights_default(&w);
    int64_t after = 0; /* the key of the last step */
    for (uint32_t n = 0; n < slots; n++) {
        int64_t next = INT64_MAX;
        for (uint32_t o = first; o < first + slots; o++) {
            int64_t key = by_price ? c->offers[o].price_cents : c->offers[o].days;
            if (s->in_stock[o] && key > after && key < next) next = key;
        }
        if (next == INT64_MAX) return;
        as_offer_filter f = {0};
        if (by_price)
            f.max_price_cents = next;
        else
            f.deliver_by = next; /* today 0: within `next` days */
        sx_best b;
        best_offer(s, doc, &w, NULL, &f, -1, 0, &b);
        if (by_price) {
            fr[n].price = (uint32_t)next;
            fr[n].pscore = (uint8_t)b.score;
        } else {
            fr[n].days = (uint16_t)next;
            fr[n].dscore = (uint8_t)b.score;
        }
        after = next;
    }
}

/* The product's steps by delivery date and by price, and each merchant's
 * best offer (sx_front), with its bits in the merchants' bitsets; no steps
 * when nothing is in stock, and a list's mark in the first slot when a key
 * of an offer in stock does not fit it. A merchant with several offers in
 * stock is ranked once per offer: the same best each time. */
static void rank_front(as_search_snap *s, uint32_t doc)
{
    const sx_catalog *c = s->c;
    uint32_t first = c->off_at[doc], slots = c->off_at[doc + 1] - first;
    sx_front *fr = s->front + first;
    if (!slots) return;
    memset(fr, 0, slots * sizeof(*fr));
    uint64_t bit = 1ull << (doc & 63);
    for (uint32_t o = first; o < first + slots; o++) { /* no merchant's bit until set below */
        fr[o - first].merchant = c->offers[o].merchant;
        s->merchant_stock[fr[o - first].merchant * c->words + (doc >> 6)] &= ~bit;
    }
    if (s->prod[doc].def_off == UINT32_MAX) return; /* nothing in stock (or not available) */
    bool days_fit = true, price_fit = true;
    for (uint32_t o = first; o < first + slots; o++) {
        if (!s->in_stock[o]) continue;
        const sx_offer *x = &c->offers[o];
        if (x->days < 1 || x->days >= UINT16_MAX) days_fit = false;
        if (x->price_cents < 1 || x->price_cents >= UINT32_MAX) price_fit = false;
    }
    if (days_fit)
        front_steps(s, doc, false);
    else
        fr[0].days = UINT16_MAX;
    if (price_fit)
        front_steps(s, doc, true);
    else
        fr[0].price = UINT32_MAX;
    /* each merchant's best offer, and the merchants' bits (def_off is
     * one: the product is available) */
    as_weights w;
    as_weights_default(&w);
    for (uint32_t o = first; o < first + slots; o++) {
        uint16_t mc = fr[o - first].merchant;
        if (!s->in_stock[o]) continue;
        s->merchant_stock[mc * c->words + (doc >> 6)] |= bit;
        as_offer_filter none = {0};
        sx_best b;
        uint32_t best = best_offer(s, doc, &w, NULL, &none, mc, 0, &b);
        if (best != UINT32_MAX) {
            fr[best - first].mbest = 1;
            fr[best - first].mscore = (uint8_t)b.score;
        }
    }
}

/* The snapshot's def_price, def_days and min_price of one product, and the
 * rest of its columns and bits, from its def_off and in_stock. */
static void rank_columns(as_search_snap *s, uint32_t doc)
{
    const sx_catalog *c = s->c;
    sx_prod *p = &s->prod[doc];
    uint32_t d = p->def_off;
    p->def_price = d == UINT32_MAX ? 0 : c->offers[d].price_cents;
    p->def_days = d == UINT32_MAX ? 0 : c->offers[d].days;
    int64_t min = 0;
    int32_t soonest = 0, cheap = 0;
    bool any = false;
    uint16_t del = 0, bq = 0, br = 0;
    uint64_t in = 0;
    for (uint32_t o = c->off_at[doc]; o < c->off_at[doc + 1]; o++) {
        if (!s->in_stock[o]) continue;
        const sx_offer *x = &c->offers[o];
        if (!min || x->price_cents < min) {
            min = x->price_cents;
            cheap = x->days;
        } else if (x->price_cents == min && x->days < cheap) {
            cheap = x->days;
        }
        if (!any || x->days < soonest) soonest = x->days;
        if (c->nmerchants <= 64) in |= 1ull << x->merchant;
        if (!any || x->delivery10 > del) del = x->delivery10;
        if (!any || c->merchants[x->merchant].quality > c->merchants[bq].quality)
            bq = x->merchant;
        if (!any || c->merchants[x->merchant].reliability > c->merchants[br].reliability)
            br = x->merchant;
        any = true;
    }
    p->min_price = min;
    size_t lo = 0, hi = c->nfine_steps; /* the first fine step at or above min */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->fine_step[mid] < min)
            lo = mid + 1;
        else
            hi = mid;
    }
    s->min_fine[doc] = (uint8_t)lo; /* 0 for none in stock: every step is above 0 */
    p->min_days = soonest;
    p->cheap_days = cheap;
    s->max_del10[doc] = del;
    s->best_q[doc] = bq;
    s->best_r[doc] = br;
    s->merchants_in[doc] = in;
    /* its bits in the offer filters' steps: an available product's cheapest
     * and soonest offers in stock (def_off: none when it is not available) */
    size_t w = c->words, at = doc >> 6;
    uint64_t bit = 1ull << (doc & 63);
    bool on = p->def_off != UINT32_MAX && min > 0;
    for (size_t j = 0; j < SX_PRICE_STEPS; j++) {
        uint64_t *x = &s->cheap_bits[j * w + at];
        *x = on && j < c->nprice_steps && c->price_step[j] >= min ? *x | bit : *x & ~bit;
    }
    for (int32_t k = 0; k < SX_SOON_DAYS; k++) {
        uint64_t *x = &s->soon_bits[(size_t)k * w + at];
        *x = on && soonest <= k ? *x | bit : *x & ~bit;
    }
    rank_front(s, doc);
}

/* A counting sort of the products in sku order by (buyable, score): 512
 * buckets, stable, so sku order within each. */
void sx_rank_order(as_search_snap *s)
{
    const sx_catalog *c = s->c;
    uint32_t at[513] = {0};
    for (size_t d = 0; d < c->n; d++)
        at[((s->prod[d].def_off == UINT32_MAX) << 8 | (255u - s->def_score[d])) + 1]++;
    for (size_t b = 0; b < 512; b++)
        at[b + 1] += at[b];
    for (size_t i = 0; i < c->n; i++) {
        uint32_t d = c->sku_docs[i];
        s->rank_order[at[(s->prod[d].def_off == UINT32_MAX) << 8 | (255u - s->def_score[d])]++] = d;
    }
}

#define RADIX_BUCKETS (1u << 11)

void sx_radix_by(uint32_t *v, uint32_t *tmp, const uint64_t *key, size_t n)
{
    uint64_t most = 0;
    for (size_t i = 0; i < n; i++)
        if (key[v[i]] > most) most = key[v[i]];
    uint32_t *from = v, *to = tmp;
    for (unsigned shift = 0; shift < 64 && (shift == 0 || most >> shift); shift += 11) {
        size_t at[RADIX_BUCKETS + 1];
        memset(at, 0, sizeof(at));
        for (size_t i = 0; i < n; i++)
            at[(key[from[i]] >> shift & (RADIX_BUCKETS - 1)) + 1]++;
        for (size_t b = 0; b < RADIX_BUCKETS; b++)
            at[b + 1] += at[b];
        for (size_t i = 0; i < n; i++)
            to[at[key[from[i]] >> shift & (RADIX_BUCKETS - 1)]++] = from[i];
        uint32_t *t = from;
        from = to;
        to = t;
    }
    if (from != v) memcpy(v, from, n * sizeof(*v));
}

/* The key of sort k for one product under the default weights (hit_cmp's
 * `key` of as_search_page.c, as an integer that orders the same way), or
 * false when it has none that does (a negative or not-a-number return rate). */
static bool order_key(const as_search_snap *s, as_sort_kind k, uint32_t d, uint64_t *key)
{
    const sx_catalog *c = s->c;
    switch (k) {
    case AS_SORT_PRICE:
        *key = (uint64_t)s->prod[d].def_price;
        return s->prod[d].def_price >= 0;
    case AS_SORT_DELIVERY:
        *key = (uint64_t)(int64_t)s->prod[d].def_days;
        return s->prod[d].def_days >= 0;
    default: { /* a double at or above zero orders as its bits do */
        double r = c->return_rate[d];
        if (!(r >= 0)) return false;
        r += 0.0; /* -0.0 as 0.0 */
        memcpy(key, &r, sizeof(r));
        return true;
    }
    }
}

/* sort_order[i] from rank_order (buyable first, then the score, highest
 * first, then sku): the buyable ones sorted stably by the sort's key; the
 * others, whose key is 0 for price and delivery, left in place, and sorted by
 * the return rate for return_rate. */
static bool make_order(const as_search_snap *s, as_sort_kind k, uint32_t *out)
{
    const sx_catalog *c = s->c;
    size_t n = c->n, nb = 0;
    while (nb < n && s->prod[s->rank_order[nb]].def_off != UINT32_MAX)
        nb++;
    uint64_t *key = malloc((n ? n : 1) * sizeof(*key));
    uint32_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
    bool ok = key && tmp;
    for (size_t d = 0; ok && d < n; d++)
        ok = order_key(s, k, (uint32_t)d, &key[d]);
    if (ok) {
        memcpy(out, s->rank_order, n * sizeof(*out));
        sx_radix_by(out, tmp, key, nb);
        if (k == AS_SORT_RETURN_RATE) sx_radix_by(out + nb, tmp, key, n - nb);
    }
    free(key);
    free(tmp);
    return ok;
}

static bool make_bound_order(as_search_snap *s);

/* Each product's place in order (c->n products), malloc'd; NULL when
 * there is no memory (the callers walk the order instead). */
static uint32_t *order_places(const uint32_t *order, size_t n)
{
    uint32_t *pos = malloc((n ? n : 1) * sizeof(*pos));
    if (pos)
        for (size_t i = 0; i < n; i++)
            pos[order[i]] = (uint32_t)i;
    return pos;
}

/* Something made once, by the first thread to ask, told by its state st
 * (0 not made, 1 being made, 2 made, 3 cannot be made): whether it is made;
 * else *mine when this thread is to make it now (and then once_done). */
static bool once_made(atomic_int *st, bool *mine)
{
    int v = atomic_load_explicit(st, memory_order_acquire);
    *mine = v == 0 && atomic_compare_exchange_strong(st, &v, 1);
    return v == 2;
}

static void once_done(atomic_int *st, bool ok)
{
    atomic_store_explicit(st, ok ? 2 : 3, memory_order_release);
}

/* Order i of the snapshot (order_state[i]: sort_order[0..2] by sort k, with
 * their places; 3 bound_order; 4 the places in rank_order), made by the
 * first thread to ask (make_order, make_bound_order or order_places): true
 * once it is made; false while another thread makes it or when it cannot be
 * made. The orders live in the snapshot's state, filled once, and the
 * places beside it: the snapshot is otherwise read-only to searches. */
static bool order_made(const as_search_snap *cs, size_t i, as_sort_kind k)
{
    as_search_snap *s = (as_search_snap *)cs;
    bool mine, ok;
    if (once_made(&s->order_state[i], &mine)) return true;
    if (!mine) return false;
    if (i == 4) {
        ok = (s->order_pos[3] = order_places(s->rank_order, s->c->n)) != NULL;
    } else if (i == 3) {
        ok = make_bound_order(s);
    } else {
        ok = make_order(s, k, s->sort_order[i]);
        /* without places the order is still walked */
        if (ok) s->order_pos[i] = order_places(s->sort_order[i], s->c->n);
    }
    once_done(&s->order_state[i], ok);
    return ok;
}

const uint64_t *sx_sku_below(const sx_catalog *cc)
{
    sx_catalog *c = (sx_catalog *)cc;
    bool mine;
    if (once_made(&c->sku_below_state, &mine)) return c->sku_below;
    if (!mine) return NULL;
    size_t words = c->words, step = (c->n + SX_SKU_STEPS - 1) / SX_SKU_STEPS;
    uint64_t *b = calloc(SX_SKU_STEPS * (words ? words : 1), sizeof(*b));
    if (b && step) {
        /* each product in the step of its sku_rk, then each step with the
         * ones below it */
        for (size_t d = 0; d < c->n; d++)
            b[(size_t)(c->sku_rk[d] / step) * words + d / 64] |= 1ull << (d % 64);
        for (size_t j = 1; j < SX_SKU_STEPS; j++)
            for (size_t w = 0; w < words; w++)
                b[j * words + w] |= b[(j - 1) * words + w];
    }
    c->sku_below = b;
    c->sku_step = step ? step : 1;
    once_done(&c->sku_below_state, b != NULL);
    return b;
}

int sx_pair_slot(int merchant, int price_step, int day_step)
{
    if (merchant >= SX_PAIR_MERCHANTS || price_step >= SX_PRICE_STEPS || day_step >= SX_SOON_DAYS)
        return -1;
    if (merchant >= 0 && day_step >= 0 && price_step < 0) return merchant * SX_SOON_DAYS + day_step;
    if (merchant < 0 && price_step >= 0 && day_step >= 0)
        return SX_PAIR_MERCHANTS * SX_SOON_DAYS + price_step * SX_SOON_DAYS + day_step;
    if (merchant >= 0 && price_step >= 0 && day_step < 0)
        return SX_PAIR_MERCHANTS * SX_SOON_DAYS + SX_PRICE_STEPS * SX_SOON_DAYS +
               merchant * SX_PRICE_STEPS + price_step;
    return -1;
}

/* Whether offer x meets the two filters of pair slot i (sx_pair_slot). */
static bool pair_meets(const sx_catalog *c, int i, const sx_offer *x)
{
    const int md = SX_PAIR_MERCHANTS * SX_SOON_DAYS, pd = SX_PRICE_STEPS * SX_SOON_DAYS;
    if (i < md) return x->merchant == i / SX_SOON_DAYS && x->days <= i % SX_SOON_DAYS;
    if (i < md + pd) {
        i -= md;
        return x->price_cents <= c->price_step[i / SX_SOON_DAYS] && x->days <= i % SX_SOON_DAYS;
    }
    i -= md + pd;
    return x->merchant == i / SX_PRICE_STEPS && x->price_cents <= c->price_step[i % SX_PRICE_STEPS];
}

const uint64_t *sx_pair_bits(const sx_catalog *cc, int i)
{
    sx_catalog *c = (sx_catalog *)cc;
    if (i < 0 || i >= SX_PAIR_SLOTS) return NULL;
    bool mine;
    if (atomic_load_explicit(&c->pair_state[i], memory_order_acquire) != 2 &&
        atomic_load_explicit(&c->pairs_made, memory_order_relaxed) >= SX_PAIR_MAX)
        return NULL; /* not made, and no more will be */
    if (once_made(&c->pair_state[i], &mine)) return c->pair_bits[i];
    if (!mine) return NULL;
    if (atomic_fetch_add(&c->pairs_made, 1) >= SX_PAIR_MAX) { /* others took the last */
        atomic_store_explicit(&c->pair_state[i], 0, memory_order_release);
        return NULL;
    }
    uint64_t *b = calloc(c->words ? c->words : 1, sizeof(*b));
    for (size_t d = 0; b && d < c->n; d++)
        for (uint32_t o = c->off_at[d]; o < c->off_at[d + 1]; o++)
            if (pair_meets(c, i, &c->offers[o])) {
                b[d / 64] |= 1ull << (d % 64);
                break;
            }
    c->pair_bits[i] = b;
    once_done(&c->pair_state[i], b != NULL);
    return b;
}

const uint64_t *sx_all_stock(const as_search_snap *cs)
{
    as_search_snap *s = (as_search_snap *)cs;
    const sx_catalog *c = s->c;
    bool mine;
    if (once_made(&s->all_stock_state, &mine)) return s->all_stock;
    if (!mine) return NULL;
    uint64_t *b = calloc(c->words ? c->words : 1, sizeof(*b));
    for (size_t d = 0; b && d < c->n; d++) {
        bool all = c->avail[d] && c->off_at[d] < c->off_at[d + 1];
        for (uint32_t o = c->off_at[d]; all && o < c->off_at[d + 1]; o++)
            all = s->in_stock[o] != 0;
        if (all) b[d / 64] |= 1ull << (d % 64);
    }
    s->all_stock = b;
    once_done(&s->all_stock_state, b != NULL);
    return b;
}

/* s's stock_area, reserved by the first thread to ask; NULL while another
 * reserves it, or when it cannot be. */
static uint64_t *stock_area(as_search_snap *s)
{
    bool mine;
    if (once_made(&s->stock_area_state, &mine)) return s->stock_area;
    if (!mine) return NULL;
    size_t bytes = (size_t)SX_PRICE_STEPS * SX_SOON_DAYS * (s->c->words ? s->c->words : 1) * 8;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    s->stock_area = p == MAP_FAILED ? NULL : p;
    s->stock_area_bytes = p == MAP_FAILED ? 0 : bytes;
    once_done(&s->stock_area_state, s->stock_area != NULL);
    return s->stock_area;
}

const uint64_t *sx_stock_pair(const as_search_snap *cs, size_t j, size_t k)
{
    as_search_snap *s = (as_search_snap *)cs;
    const sx_catalog *c = s->c;
    if (j >= c->nprice_steps || k >= SX_SOON_DAYS) return NULL;
    size_t i = j * SX_SOON_DAYS + k;
    bool mine;
    if (once_made(&s->stock_pair_state[i], &mine)) return s->stock_pair[i];
    if (!mine) return NULL;
    uint64_t *area = stock_area(s);
    if (!area) { /* being reserved by another thread: asked again later */
        atomic_store_explicit(
            &s->stock_pair_state[i],
            atomic_load_explicit(&s->stock_area_state, memory_order_acquire) == 3 ? 3 : 0,
            memory_order_release);
        return NULL;
    }
    uint64_t *b = area + i * (c->words ? c->words : 1); /* zeroed by the system */
    int64_t cap = c->price_step[j];
    for (size_t d = 0; d < c->n; d++) {
        /* the columns over its offers in stock first: most are decided */
        if (!c->avail[d] || !s->prod[d].min_price || s->prod[d].min_price > cap ||
            s->prod[d].min_days > (int32_t)k)
            continue;
        for (uint32_t o = c->off_at[d]; o < c->off_at[d + 1]; o++) {
            const sx_offer *x = &c->offers[o];
            if (s->in_stock[o] && x->price_cents <= cap && x->days <= (int64_t)k) {
                b[d / 64] |= 1ull << (d % 64);
                break;
            }
        }
    }
    s->stock_pair[i] = b;
    once_done(&s->stock_pair_state[i], true);
    return b;
}

const uint64_t *sx_one_each(const sx_catalog *cc)
{
    sx_catalog *c = (sx_catalog *)cc;
    bool mine;
    if (once_made(&c->one_each_state, &mine)) return c->one_each;
    if (!mine) return NULL;
    uint64_t *b = calloc(c->words ? c->words : 1, sizeof(*b));
    for (size_t d = 0; b && d < c->n; d++) {
        bool one = true; /* a product has a few offers: each pair compared */
        for (uint32_t o = c->off_at[d]; one && o < c->off_at[d + 1]; o++)
            for (uint32_t p = o + 1; one && p < c->off_at[d + 1]; p++)
                one = c->offers[o].merchant != c->offers[p].merchant;
        if (one) b[d / 64] |= 1ull << (d % 64);
    }
    c->one_each = b;
    once_done(&c->one_each_state, b != NULL);
    return b;
}

const uint32_t *sx_order_pos(const as_search_snap *s, const uint32_t *order)
{
    if (order == s->rank_order) return order_made(s, 4, AS_SORT_SCORE) ? s->order_pos[3] : NULL;
    for (size_t i = 0; i < 3; i++) /* made with the order the caller has */
        if (order == s->sort_order[i])
            return atomic_load_explicit(&s->order_state[i], memory_order_acquire) == 2
                       ? s->order_pos[i]
                       : NULL;
    return NULL;
}

const uint32_t *sx_sort_order(const as_search_snap *s, as_sort_kind k)
{
    if (k != AS_SORT_PRICE && k != AS_SORT_DELIVERY && k != AS_SORT_RETURN_RATE) return NULL;
    size_t i = k == AS_SORT_PRICE ? 0 : k == AS_SORT_DELIVERY ? 1 : 2;
    return order_made(s, i, k) ? s->sort_order[i] : NULL;
}

/* bound_order and bound_score: the buyable products of rank_order (the
 * others have no offer any filter keeps) in sku order, then a stable
 * counting sort by their bound under the default weights, highest first. */
static bool make_bound_order(as_search_snap *s)
{
    const sx_catalog *c = s->c;
    as_arena *a = as_arena_create();
    if (!a) return false;
    as_mem m = as_arena_mem(a);
    as_weights w;
    as_weights_default(&w);
    sx_weights_tab t;
    bool ok = sx_weights_tab_make(c, &m, &w, &t);
    uint8_t *bound = ok ? malloc(c->n ? c->n : 1) : NULL;
    if (!bound) {
        as_arena_destroy(a);
        return false;
    }
    uint32_t at[257] = {0};
    size_t nb = 0;
    for (size_t d = 0; d < c->n; d++) {
        if (s->prod[d].def_off == UINT32_MAX) continue;
        int b = sx_rank_bound(s, (uint32_t)d, &t, &w);
        bound[d] = (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b);
        at[255u - bound[d] + 1]++;
        nb++;
    }
    for (size_t b = 0; b < 256; b++)
        at[b + 1] += at[b];
    for (size_t i = 0; i < c->n; i++) {
        uint32_t d = c->sku_docs[i];
        if (s->prod[d].def_off == UINT32_MAX) continue;
        uint32_t k = at[255u - bound[d]]++;
        s->bound_order[k] = d;
        s->bound_score[k] = bound[d];
    }
    s->n_bound = nb;
    free(bound);
    as_arena_destroy(a);
    return true;
}

const uint32_t *sx_bound_order(const as_search_snap *s)
{
    return order_made(s, 3, AS_SORT_SCORE) ? s->bound_order : NULL;
}

void sx_rank_best_default(const as_search_snap *s, uint32_t doc, bool price_days, sx_best *out)
{
    if (s->prod[doc].def_off == UINT32_MAX) {
        memset(out, 0, sizeof(*out));
        return;
    }
    out->score = s->def_score[doc];
    out->n_eligible = 1; /* at least: only whether there is one is read */
    /* from the columns: the offer's row would be another cache line */
    out->price_cents = price_days ? s->prod[doc].def_price : 0;
    out->days = price_days ? s->prod[doc].def_days : 0;
}

/* Under the default weights an offer's score depends on the offers beside it
 * only through the cheapest price. When the filters keep that price, every
 * offer they keep scores as it does without them, and def_off, the best of all
 * the offers in stock, is the best of those kept whenever it is one of them:
 * no offer needs scoring. A price cap alone that keeps def_off keeps the
 * cheapest too; a delivery date or a merchant needs one look at the prices. */
void sx_rank_best_default_filtered(const as_search_snap *s, uint32_t doc,
                                   const as_offer_filter *f, int merchant, int64_t today,
                                   bool price_days, sx_best *out)
{
    const sx_catalog *c = s->c;
    const sx_prod *col = &s->prod[doc];
    uint32_t d = col->def_off;
    /* No offer in stock (or not available): none under any filter either
     * (every price is above zero, so def_off is none only then). */
    if (d == UINT32_MAX) {
        memset(out, 0, sizeof(*out));
        return;
    }
    if (!price_days && merchant >= 0 && f->deliver_by <= 0 && f->max_price_cents <= 0) {
        /* a merchant alone: the slot of its best offer (sx_front), without
         * the offers' rows */
        uint32_t first = c->off_at[doc], slots = c->off_at[doc + 1] - first;
        const sx_front *fr = s->front + first;
        memset(out, 0, sizeof(*out));
        for (uint32_t i = 0; i < slots; i++)
            if (fr[i].merchant == merchant && fr[i].mbest) {
                out->score = fr[i].mscore;
                out->n_eligible = 1;
            }
        return;
    }
    /* def_off is in stock: whether the filters keep it, from the columns */
    if (merchant >= -1 && (f->max_price_cents <= 0 || col->def_price <= f->max_price_cents) &&
        (f->deliver_by <= 0 || today + col->def_days <= f->deliver_by) &&
        (merchant < 0 || c->offers[d].merchant == merchant)) {
        /* a price cap keeps the cheapest too; so does a date when def_off
         * is the cheapest, or when an offer at the cheapest price arrives
         * by it (cheap_days); without a merchant, nothing else does */
        bool same = merchant < 0 && (f->deliver_by <= 0 || col->min_price == col->def_price ||
                                     today + col->cheap_days <= f->deliver_by);
        if (!same && merchant >= 0) {
            int64_t all = 0, kept = 0;
            for (uint32_t o = c->off_at[doc]; o < c->off_at[doc + 1]; o++) {
                if (!s->in_stock[o]) continue;
                int64_t p = c->offers[o].price_cents;
                if (!all || p < all) all = p;
                if ((!kept || p < kept) && eligible(s, o, f, today, merchant)) kept = p;
            }
            same = all == kept;
        }
        if (same) {
            sx_rank_best_default(s, doc, price_days, out);
            return;
        }
    } else if ((f->max_price_cents > 0 && col->min_price > f->max_price_cents) ||
               (f->deliver_by > 0 && today + col->min_days > f->deliver_by)) {
        /* every offer in stock is above the cap, or none arrives in time */
        memset(out, 0, sizeof(*out));
        return;
    }
    /* a date alone, or a price cap alone: the product's last step within
     * it (sx_front), without its offers' rows */
    uint32_t first = c->off_at[doc], slots = c->off_at[doc + 1] - first;
    const sx_front *fr = s->front + first;
    bool by_date = f->deliver_by > 0 && f->max_price_cents <= 0,
         by_price = f->max_price_cents > 0 && f->deliver_by <= 0;
    if (!price_days && merchant < 0 && slots && by_date && fr[0].days != UINT16_MAX) {
        int64_t within = f->deliver_by - today;
        memset(out, 0, sizeof(*out));
        for (uint32_t i = 0; i < slots && fr[i].days && fr[i].days <= within; i++) {
            out->score = fr[i].dscore;
            out->n_eligible = 1; /* at least: only whether there is one is read */
        }
        return;
    }
    if (!price_days && merchant < 0 && slots && by_price && fr[0].price != UINT32_MAX) {
        memset(out, 0, sizeof(*out));
        for (uint32_t i = 0; i < slots && fr[i].price && fr[i].price <= f->max_price_cents; i++) {
            out->score = fr[i].pscore;
            out->n_eligible = 1;
        }
        return;
    }
    as_weights w;
    as_weights_default(&w);
    best_offer(s, doc, &w, NULL, f, merchant, today, out);
}
