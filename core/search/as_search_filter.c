/* Search, stage 3 (filter): what a product must be to be a result. Category,
 * part type, merchant (it has an offer there) and device (it has a compat row
 * for it) decide whether it is considered at all; verified_only, a device it
 * does not fit, and offer filters no offer meets leave it out with a reason
 * (the response's `excluded`). Without offer filters a product nobody can sell
 * now stays, after the buyable ones. */
#include <string.h>

#include "as_search_internal.h"
#include "as_util.h"
#include "as_view.h"

static bool code_of(char *const *tab, size_t n, const char *s, uint16_t *out)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(tab[i], s) == 0) {
            *out = (uint16_t)i;
            return true;
        }
    return false;
}

/* The words of the products of one category or part type (code), from its
 * docs (ascending): one run in the index's order for a category, a few for a
 * part type (in several categories), spanned from the first to the last. */
static sx_span group_span(const uint32_t *at, const uint32_t *docs, uint16_t code)
{
    if (at[code] == at[code + 1]) return (sx_span){0, 0};
    return sx_span_docs(docs[at[code]], docs[at[code + 1] - 1]);
}

bool sx_filter_prepare(const as_search_snap *s, const as_search_ask *ask, const as_device *dev,
                       const as_offer_filter *of, sx_filter *f)
{
    const sx_catalog *c = s->c;
    memset(f, 0, sizeof(*f));
    f->merchant = -1;
    if (ask->category) {
        f->has_cat = true;
        if (!code_of(c->cats, c->ncats, ask->category, &f->cat)) f->none = true;
    }
    if (ask->part_type) {
        f->has_pt = true;
        if (!code_of(c->pts, c->npts, ask->part_type, &f->pt)) f->none = true;
    }
    if (of->merchant) {
        f->merchant = -2;
        for (size_t i = 0; i < c->nmerchants; i++)
            if (strcmp(c->strs + c->merchants[i].id_at, of->merchant) == 0) f->merchant = (int)i;
        if (f->merchant < 0) f->none = true;
    }
    if (dev) {
        f->dev = dev;
        /* no product is known to fit it or not */
        if (!sx_device_rows(c, dev->id, &f->dev_rows, &f->n_dev_rows)) f->none = true;
    }
    f->span = (sx_span){0, c->words};
    if (f->has_cat && !f->none)
        f->span = sx_span_and(f->span, group_span(c->cat_at, c->cat_docs, f->cat));
    if (f->has_pt && !f->none)
        f->span = sx_span_and(f->span, group_span(c->pt_at, c->pt_docs, f->pt));
    if (f->none) f->span = (sx_span){0, 0};
    f->offer_filters = of->max_price_cents || of->deliver_by || of->merchant;
    f->verified_only = ask->verified_only;
    f->of = *of;
    f->today = ask->today;
    return !f->none;
}

/* How many of c's price steps are at or under cap (the last of them is
 * step n - 1). */
static size_t steps_at_or_under(const sx_catalog *c, int64_t cap)
{
    size_t j = 0;
    while (j < c->nprice_steps && c->price_step[j] <= cap)
        j++;
    return j;
}

/* sx_filter.one_each and what goes with it, for a merchant with a price
 * cap, a date within the steps (day >= 0), or both: each of the merchant's
 * pair bitsets is about its one offer of a product of one_each, so that
 * offer is kept when it is in stock and meets both, or all three, and only
 * a cap between two steps leaves some to look at. Nothing when a bitset
 * cannot be had (the pairs made already, no memory): each is looked at. */
static void one_each_filter(const as_search_snap *s, sx_filter *f, bool price, int day)
{
    const sx_catalog *c = s->c;
    const uint64_t *one_day = NULL, *one_cap = NULL, *one_up = NULL;
    bool between = false;
    if (day >= 0 && !(one_day = sx_pair_bits(c, sx_pair_slot(f->merchant, -1, day)))) return;
    if (price) {
        /* j: the steps at or under the cap; none: no offer is under it at
         * a step, so each below the first step is looked at */
        size_t j = steps_at_or_under(c, f->of.max_price_cents);
        between = !j || c->price_step[j - 1] != f->of.max_price_cents;
        if (j && !(one_cap = sx_pair_bits(c, sx_pair_slot(f->merchant, (int)j - 1, -1)))) return;
        if (between && j < c->nprice_steps &&
            !(one_up = sx_pair_bits(c, sx_pair_slot(f->merchant, (int)j, -1))))
            return;
    }
    const uint64_t *one = sx_one_each(c);
    if (!one) return;
    f->one_each = one;
    f->one_day = one_day;
    f->one_price = price;
    f->one_cap = one_cap;
    f->one_up = one_up;
    f->one_between = between;
}

/* sx_filter.stock_pairs and what goes with it, for a price cap and a date
 * within the steps (`within` days) without a merchant: the products kept
 * without a look are the stock pair of the step at or under the cap, and
 * those that may be are the one of the step above it. Nothing when one
 * cannot be had: each is looked at. */
static void stock_pairs_filter(const as_search_snap *s, sx_filter *f, size_t within)
{
    const sx_catalog *c = s->c;
    size_t j = steps_at_or_under(c, f->of.max_price_cents);
    const uint64_t *sure = NULL, *may = NULL;
    if (j && !(sure = sx_stock_pair(s, j - 1, within))) return;
    if (j && c->price_step[j - 1] == f->of.max_price_cents)
        may = sure; /* the cap a step: nothing else is kept */
    else if (j < c->nprice_steps && !(may = sx_stock_pair(s, j, within)))
        return;
    f->stock_pairs = true;
    f->stock_sure = sure;
    f->stock_may = may;
}

void sx_filter_bitsets(const as_search_snap *s, as_mem *tmp, sx_filter *f)
{
    const sx_catalog *c = s->c;
    size_t w = c->words ? c->words : 1;
    const uint64_t *cheap = NULL, *soon = NULL;
    f->offer_mask = f->kept_sure = f->kept_maybe = NULL;
    f->kept_rest = false;
    f->stock_pairs = false;
    f->stock_sure = f->stock_may = NULL;
    bool price = f->of.max_price_cents > 0, date = f->of.deliver_by > 0, mer = f->merchant >= 0;
    f->kept = !f->none && price + date + mer > 0;
    f->kept_each = f->kept && price + date + mer > 1; /* a date too far alone: below */
    if (f->none) return;
    if (f->dev) {
        uint64_t *has = as_alloc(tmp, w * sizeof(uint64_t));
        uint64_t *unfit = as_alloc(tmp, w * sizeof(uint64_t));
        for (size_t i = 0; i < f->n_dev_rows; i++) {
            uint32_t d = f->dev_rows[i].doc;
            has[d / 64] |= 1ull << (d % 64);
            if (!f->dev_rows[i].fits) unfit[d / 64] |= 1ull << (d % 64);
        }
        f->dev_bits = has;
        f->dev_unfit = unfit;
        /* its rows are by doc */
        f->span =
            sx_span_and(f->span, f->n_dev_rows ? sx_span_docs(f->dev_rows[0].doc,
                                                              f->dev_rows[f->n_dev_rows - 1].doc)
                                               : (sx_span){0, 0});
    }
    if (mer) f->kept_sure = s->merchant_stock + (size_t)f->merchant * c->words;
    if (price) {
        size_t j = 0;
        while (j < c->nprice_steps && c->price_step[j] < f->of.max_price_cents)
            j++;
        if (j < c->nprice_steps) cheap = s->cheap_bits + j * w;
        if (cheap && c->price_step[j] == f->of.max_price_cents) {
            f->kept_sure = cheap; /* the cap is a step */
        } else {
            f->kept_sure = j ? s->cheap_bits + (j - 1) * w : NULL;
            f->kept_maybe = cheap;
            f->kept_rest = !cheap; /* above every step */
            f->fine_cap = 0;
            while (f->fine_cap < c->nfine_steps &&
                   c->fine_step[f->fine_cap] <= f->of.max_price_cents)
                f->fine_cap++;
        }
    }
    int64_t within = date ? f->of.deliver_by - f->today : INT64_MAX;
    if (within < 0) { /* a date already past: no offer arrives by it */
        f->offer_mask = as_alloc(tmp, w * sizeof(uint64_t)); /* zeroed */
        return;
    }
    if (within < SX_SOON_DAYS) soon = s->soon_bits + (size_t)within * w;
    if (date) {
        f->kept_sure = soon; /* exact */
        if (!soon) f->kept_each = true;
    }
    if (f->kept_each && price && date && !mer && within < SX_SOON_DAYS)
        stock_pairs_filter(s, f, (size_t)within);
    if (f->kept_each && price + date + mer == 2 && !f->stock_pairs) {
        /* two filters: the products with one offer that meets both (a
         * price step at or under the cap, the date's step), once every
         * offer of theirs is in stock, are kept without a look */
        /* the last step at or under the cap */
        int ps = price ? (int)steps_at_or_under(c, f->of.max_price_cents) - 1 : -1;
        int slot = (price && ps < 0) || (date && within >= SX_SOON_DAYS)
                       ? -1
                       : sx_pair_slot(f->merchant, ps, date ? (int)within : -1);
        const uint64_t *pair = slot >= 0 ? sx_pair_bits(c, slot) : NULL;
        const uint64_t *all = pair ? sx_all_stock(s) : NULL;
        if (all) {
            f->pair_sure = pair;
            f->all_stock = all;
        }
    }
    if (f->kept_each && mer && f->merchant < SX_PAIR_MERCHANTS && (!date || within < SX_SOON_DAYS))
        one_each_filter(s, f, price, date ? (int)within : -1);
    /* with a cap or a date, a merchant's products with an offer in stock
     * there (merchant_stock): the others have none that meets them all */
    const uint64_t *sets[3];
    size_t n = 0;
    if (cheap) sets[n++] = cheap;
    if (soon) sets[n++] = soon;
    if (mer && (price || date)) sets[n++] = s->merchant_stock + (size_t)f->merchant * c->words;
    if (n <= 1) {
        f->offer_mask = n ? sets[0] : NULL;
        return;
    }
    /* their products in common, within the span (where every candidate is) */
    uint64_t *all = as_alloc_raw(tmp, w * sizeof(uint64_t));
    for (size_t i = f->span.lo; i < f->span.hi; i++) {
        uint64_t x = sets[0][i] & sets[1][i];
        all[i] = n == 3 ? x & sets[2][i] : x;
    }
    f->offer_mask = all;
}

const char sx_contradicted[] = "Measurements contradict the merchant's claims";

const char *sx_contradiction(as_mem *m, const char *note)
{
    return as_printf(m, "%s: %s", sx_contradicted,
                     note ? note : "see the product's verification rows");
}

const char *sx_excluded_json(as_mem *m, const char *sku, const char *name, const char *note)
{
    as_jw w;
    as_jw_init(&w, m);
    as_product p = {.sku = sku, .name = name};
    as_view_excluded_write(&w, &p, sx_contradiction(m, note));
    size_t len;
    return as_jw_text(&w, &len);
}

/* Whether available product doc has an offer in stock that every offer
 * filter keeps. */
static inline bool offer_met(const as_search_snap *s, const sx_filter *f, uint32_t doc)
{
    const sx_catalog *c = s->c;
    if (f->merchant >= 0 && !f->of.max_price_cents && !f->of.deliver_by) {
        /* a merchant alone: its bit of the snapshot's (sx_rank_default) */
        return sx_bit(s->merchant_stock + (size_t)f->merchant * c->words, doc);
    }
    if (f->merchant < 0) {
        /* from the snapshot's columns over the offers in stock (every price
         * is above zero: min_price 0 is none in stock): the cheapest under
         * a price cap, the soonest by a date; with both, the offer the
         * columns name that meets both, else each offer */
        int64_t cap = f->of.max_price_cents, by = f->of.deliver_by;
        const sx_prod *p = &s->prod[doc];
        if (!p->min_price) return false;
        bool price_ok = !cap || p->min_price <= cap;
        bool date_ok = !by || f->today + p->min_days <= by;
        if (!price_ok || !date_ok) return false;
        if (!cap || !by) return true;
        if (f->today + p->cheap_days <= by) return true; /* the cheapest, in time */
        if (p->def_off != UINT32_MAX && p->def_price <= cap && f->today + p->def_days <= by)
            return true;
    }
    for (uint32_t o = c->off_at[doc]; o < c->off_at[doc + 1]; o++) {
        const sx_offer *x = &c->offers[o];
        if (s->in_stock[o] && (f->merchant < 0 || x->merchant == f->merchant) &&
            (!f->of.max_price_cents || x->price_cents <= f->of.max_price_cents) &&
            (!f->of.deliver_by || f->today + x->days <= f->of.deliver_by))
            return true;
    }
    return false;
}

bool sx_filter_viable(const as_search_snap *s, const sx_filter *f, uint32_t doc,
                      const sx_compat *row)
{
    const sx_catalog *c = s->c;
    if (f->verified_only && c->hidden[doc]) return false;
    if (row && !row->fits) return false;
    if (!f->offer_filters) return true;
    if (sx_filter_unmet(f, doc) || !c->avail[doc]) return false;
    return offer_met(s, f, doc);
}

uint64_t sx_filter_kept_each(const as_search_snap *s, const sx_filter *f, size_t w, uint64_t cand)
{
    const sx_catalog *c = s->c;
    uint64_t look = f->offer_mask ? cand & f->offer_mask[w] : cand, x = 0;
    if (f->stock_pairs) {
        /* those at a step at or under the cap kept, those not even at the
         * step above it left out: only those between are looked at */
        x = f->stock_sure ? look & f->stock_sure[w] : 0;
        look &= ~x;
        if (f->stock_may) look &= f->stock_may[w];
    } else if (f->pair_sure) { /* kept without a look */
        x = look & f->pair_sure[w] & f->all_stock[w];
        look &= ~x;
    }
    if (f->one_each) {
        /* one offer of the merchant, in stock (look is within offer_mask,
         * and so merchant_stock): kept when it meets the date and the cap
         * (a step at or under it), looked at when the cap is between steps
         * and it may meet it, else left out */
        uint64_t one = look & f->one_each[w], ok = one;
        if (f->one_day) ok &= f->one_day[w];
        uint64_t sure = !f->one_price ? ok : f->one_cap ? ok & f->one_cap[w] : 0;
        uint64_t may = f->one_between ? (f->one_up ? ok & f->one_up[w] : ok) & ~sure : 0;
        x |= sure;
        look = (look & ~one) | may;
    }
    /* what offer_met reads of the word's products, cache misses at random
     * in a large catalogue, asked for together so that they overlap: with
     * a merchant its offers' rows (their place first), else the columns,
     * which mostly decide */
    bool rows = f->merchant >= 0;
    for (uint64_t cur = look; cur; cur &= cur - 1) {
        uint32_t d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(cur));
        if (rows) {
            __builtin_prefetch(c->off_at + d);
            continue;
        }
        __builtin_prefetch(s->prod + d); /* its columns: one record */
    }
    if (rows)
        for (uint64_t cur = look; cur; cur &= cur - 1) {
            uint32_t o = c->off_at[w * 64 + (size_t)__builtin_ctzll(cur)];
            __builtin_prefetch(c->offers + o);
            __builtin_prefetch(s->in_stock + o);
        }
    for (uint64_t cur = look; cur; cur &= cur - 1) {
        uint32_t d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(cur));
        if (c->avail[d] && offer_met(s, f, d)) x |= cur & -cur;
    }
    return x;
}

/* a, then x (nx bytes), b, y (ny bytes) and c, on m. */
static const char *reason(as_mem *m, const char *a, const char *x, size_t nx, const char *b,
                          const char *y, size_t ny, const char *c)
{
    size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
    char *r = as_alloc_raw(m, na + nx + nb + ny + nc + 1), *p = r;
    memcpy(p, a, na);
    memcpy(p += na, x, nx);
    memcpy(p += nx, b, nb);
    memcpy(p += nb, y, ny);
    memcpy(p += ny, c, nc);
    p[nc] = '\0';
    return r;
}

const char *sx_filter_exclusion(const as_search_snap *s, as_mem *m, const sx_filter *f,
                                const as_search_ask *ask, const as_offer_filter *of, uint32_t doc,
                                const sx_compat *row, const sx_best *best, bool want_reason)
{
    const sx_catalog *c = s->c;
    if (!want_reason) /* whether, not why: nothing formatted for the unlisted */
        return (ask->verified_only && c->hidden[doc]) || (f->dev && row && !row->fits) ||
                       (best->n_eligible == 0 && f->offer_filters)
                   ? "excluded"
                   : NULL;
    if (ask->verified_only && c->hidden[doc])
        return c->xj_at[doc] != AS_NO_STR ? sx_contradicted
                                          : sx_contradiction(m, sx_str(c, c->note_at[doc]));
    if (f->dev && row && !row->fits)
        return as_printf(m, "Does not fit %s: %s", f->dev->name,
                         row->why_at != AS_NO_STR ? c->strs + row->why_at : "no evidence recorded");
    if (best->n_eligible > 0 || !f->offer_filters) return NULL;
    /* nothing meets the offer filters: say which one stops it */
    int64_t cheapest = 0, soonest = 0;
    bool stock = false;
    if (f->merchant < 0 && s->prod[doc].min_price > 0) {
        /* the columns over its offers in stock, made by the same rules */
        stock = true;
        cheapest = s->prod[doc].min_price;
        soonest = ask->today + s->prod[doc].min_days;
    } else {
        for (uint32_t o = c->off_at[doc]; o < c->off_at[doc + 1]; o++) {
            const sx_offer *x = &c->offers[o];
            if (!s->in_stock[o] || (f->merchant >= 0 && x->merchant != f->merchant)) continue;
            stock = true;
            if (!cheapest || x->price_cents < cheapest) cheapest = x->price_cents;
            int64_t day = ask->today + x->days;
            if (!soonest || day < soonest) soonest = day;
        }
    }
    if (!stock || !c->avail[doc])
        return of->merchant ? "Out of stock at the requested merchant" : "Out of stock";
    /* written from its parts (up to a hundred entries a page), not by as_printf */
    if (of->max_price_cents && cheapest > of->max_price_cents) {
        char cap[AS_EUR_TEXT], low[AS_EUR_TEXT];
        size_t nc = as_eur_text(cap, of->max_price_cents), nl = as_eur_text(low, cheapest);
        return reason(m, "Every offer is above max_price ", cap, nc, " (cheapest in stock: ", low,
                      nl, ")");
    }
    if (of->deliver_by && soonest > of->deliver_by) {
        char by[AS_DATE_TEXT], first[AS_DATE_TEXT];
        size_t nb = as_date_text(by, of->deliver_by), nf = as_date_text(first, soonest);
        return reason(m, "No offer delivers by ", by, nb, " (earliest: ", first, nf, ")");
    }
    return "No offer meets the requested filters together";
}
