#include "as_rank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "as_util.h"

const char *const as_weight_names[AS_W_N] = {"price", "delivery", "quality", "reliability"};
static const double default_weights[AS_W_N] = {0.35, 0.25, 0.25, 0.15};

const char *const as_ranking_policy =
    "Offers are ranked only by a weighted score of price, delivery, quality and reliability, "
    "computed the same way for every merchant. There is no paid placement: no merchant can pay "
    "to be ranked higher or shown first. Default weights: price 0.35, delivery 0.25, quality "
    "0.25, reliability 0.15; pass `weights` to use your own.";

void as_weights_default(as_weights *w)
{
    memcpy(w->w, default_weights, sizeof(w->w));
}

bool as_weights_is_default(const as_weights *w)
{
    return memcmp(w->w, default_weights, sizeof(w->w)) == 0;
}

static int weight_index(const char *name, size_t n)
{
    for (int i = 0; i < AS_W_N; i++)
        if (strlen(as_weight_names[i]) == n && strncmp(as_weight_names[i], name, n) == 0) return i;
    return -1;
}

/* One weight, in either encoding: a JSON number from 0 to 1 (spec 4.1), so
 * that the query string's pairs and JSON accept and refuse the same values. */
static bool weight_value(as_mem *m, int i, const json_t *val, double raw[AS_W_N], const char **err)
{
    double x = json_is_number(val) ? json_number_value(val) : -1;
    if (!(x >= 0 && x <= 1)) {
        *err = as_printf(m, "weight '%s' must be a number from 0 to 1", as_weight_names[i]);
        return false;
    }
    raw[i] = x;
    return true;
}

/* Both encodings: at least one weight above 0, normalised to sum 1. */
static bool weights_finish(double raw[AS_W_N], as_weights *out, const char **err)
{
    double sum = 0;
    for (int i = 0; i < AS_W_N; i++)
        sum += raw[i];
    if (sum <= 0) {
        *err = "at least one weight must be above 0";
        return false;
    }
    for (int i = 0; i < AS_W_N; i++)
        out->w[i] = raw[i] / sum;
    return true;
}

bool as_weights_from_json(as_mem *m, const json_t *v, as_weights *out, const char **err)
{
    if (!v || json_is_null(v)) {
        as_weights_default(out);
        return true;
    }
    if (!json_is_object(v)) {
        *err = "weights must be an object with keys price, delivery, quality, reliability";
        return false;
    }
    if (json_object_size(v) == 0) {
        *err = "weights must name at least one of price, delivery, quality, reliability";
        return false;
    }
    double raw[AS_W_N] = {0};
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        int i = weight_index(key, strlen(key));
        if (i < 0) {
            *err = as_printf(m,
                             "unknown weight '%s'; the keys are price, delivery, quality, "
                             "reliability",
                             key);
            return false;
        }
        if (!weight_value(m, i, val, raw, err)) return false;
    }
    return weights_finish(raw, out, err);
}

/* A pair's number, read as JSON reads one (NULL when it is no JSON value);
 * jansson would skip blanks around it, which a pair may not have. */
static json_t *pair_number(const char *num, size_t len)
{
    if (len == 0 || strcspn(num, " \t\r\n") < len) return NULL;
    return json_loadb(num, len, JSON_DECODE_ANY, NULL);
}

/* "price:0.5,delivery:0.2": every pair name:number, no duplicates. */
static bool weights_parse_pairs(as_mem *m, const char *s, as_weights *out, const char **err)
{
    double raw[AS_W_N] = {0};
    bool seen[AS_W_N] = {false};
    const char *p = s;
    while (1) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *colon = memchr(p, ':', len);
        if (!colon) {
            *err = "weights must look like price:0.5,delivery:0.2,quality:0.2,reliability:0.1";
            return false;
        }
        int i = weight_index(p, (size_t)(colon - p));
        if (i < 0) {
            *err = as_printf(m,
                             "unknown weight '%s'; the keys are price, delivery, quality, "
                             "reliability",
                             as_strndup(m, p, (size_t)(colon - p)));
            return false;
        }
        if (seen[i]) {
            *err = as_printf(m, "weight '%s' is given twice", as_weight_names[i]);
            return false;
        }
        seen[i] = true;
        json_t *num = pair_number(colon + 1, len - (size_t)(colon - p) - 1);
        bool ok = weight_value(m, i, num, raw, err);
        json_decref(num);
        if (!ok) return false;
        if (!end) break;
        p = end + 1;
    }
    return weights_finish(raw, out, err);
}

bool as_weights_parse(as_mem *m, const char *s, as_weights *out, const char **err)
{
    if (!s || !*s) {
        *err = "weights must not be empty";
        return false;
    }
    if (strcmp(s, "null") == 0) {
        as_weights_default(out);
        return true;
    }
    if (s[0] == '{') {
        json_error_t jerr;
        json_t *v = json_loads(s, JSON_REJECT_DUPLICATES, &jerr);
        if (!v) {
            *err = as_printf(m, "weights is not valid JSON: %s", jerr.text);
            return false;
        }
        bool ok = as_weights_from_json(m, v, out, err);
        json_decref(v);
        return ok;
    }
    return weights_parse_pairs(m, s, out, err);
}

json_t *as_weights_json(const as_weights *w)
{
    json_t *o = json_object();
    for (int i = 0; i < AS_W_N; i++)
        json_object_set_new(o, as_weight_names[i], as_json_round(w->w[i], 6));
    return o;
}

double as_delivery_component(int days)
{
    double c = 100.0 - 12.5 * (days - 1);
    return c > 100 ? 100 : c < 0 ? 0 : c;
}

/* Deterministic order: score, then cheaper, sooner, more punctual, offer id. */
static int scored_cmp(const void *a, const void *b)
{
    const as_scored *x = a, *y = b;
    if (x->score != y->score) return y->score - x->score;
    if (x->offer->price_cents != y->offer->price_cents)
        return x->offer->price_cents < y->offer->price_cents ? -1 : 1;
    if (x->offer->delivery_days != y->offer->delivery_days)
        return x->offer->delivery_days - y->offer->delivery_days;
    if (x->offer->merchant.on_time_rate != y->offer->merchant.on_time_rate)
        return x->offer->merchant.on_time_rate > y->offer->merchant.on_time_rate ? -1 : 1;
    return strcmp(x->offer->id, y->offer->id);
}

/* The first of the filter's tests o fails (delivered on day), or AS_INEL_NONE. */
static as_inel_kind ineligible_kind(const as_product *p, const as_offer *o,
                                    const as_offer_filter *f, int64_t day)
{
    if (strcmp(p->availability, "in_stock") != 0 || o->stock <= 0) return AS_INEL_OUT_OF_STOCK;
    if (f->merchant && strcmp(f->merchant, o->merchant.id) != 0) return AS_INEL_OTHER_MERCHANT;
    if (f->max_price_cents > 0 && o->price_cents > f->max_price_cents)
        return AS_INEL_ABOVE_MAX_PRICE;
    if (f->deliver_by > 0 && day > f->deliver_by) return AS_INEL_AFTER_DELIVER_BY;
    return AS_INEL_NONE;
}

/* The words for an ineligibility of kind k, as the API shows them. */
static const char *ineligible_reason(as_mem *m, as_inel_kind k, const as_offer *o,
                                     const as_offer_filter *f, int64_t day)
{
    switch (k) {
    case AS_INEL_OUT_OF_STOCK:
        return "Out of stock";
    case AS_INEL_OTHER_MERCHANT:
        return as_printf(m, "Sold by %s, not by the requested merchant", o->merchant.name);
    case AS_INEL_ABOVE_MAX_PRICE:
        return as_printf(m, "Price %s is above max_price %s", as_eur_format(m, o->price_cents),
                         as_eur_format(m, f->max_price_cents));
    case AS_INEL_AFTER_DELIVER_BY:
        return as_printf(m, "Delivers %s, after deliver_by %s", as_date_format(m, day),
                         as_date_format(m, f->deliver_by));
    case AS_INEL_NONE:
        break;
    }
    return NULL;
}

static const char *pct(as_mem *m, double r)
{
    char t[AS_FIXED_TEXT];
    if (as_fixed_text(t, r * 100, 1)) {
        size_t n = strlen(t);
        char *s = as_alloc(m, n + 2);
        memcpy(s, t, n);
        s[n] = '%';
        return s;
    }
    double v = as_round(r * 100, 1);
    return v == floor(v) ? as_printf(m, "%.0f%%", v) : as_printf(m, "%.1f%%", v);
}

/* Plain words on why rank 1 beat rank 2 (or why it stands alone). */
static const char *explain(as_mem *m, const as_ranking *r, const as_product *p)
{
    if (r->n_ranked == 0) {
        if (r->n_inel == 0) return "No offer is eligible: nobody sells this product right now.";
        as_buf b;
        as_buf_init(&b, m);
        as_buf_puts(&b, "No offer is eligible: ");
        for (size_t i = 0; i < r->n_inel; i++)
            as_buf_printf(&b, "%s%s (%s)", i ? "; " : "", r->inel[i].offer->merchant.name,
                          r->inel[i].reason);
        as_buf_puts(&b, ".");
        return as_buf_str(&b);
    }
    const as_scored *a = &r->ranked[0];
    const as_offer *x = a->offer;
    if (r->n_ranked == 1)
        return as_printf(m,
                         "%s is the only eligible offer for %s: %s, delivered by %s, score %d "
                         "of 100.",
                         x->merchant.name, p->name, as_eur_format(m, x->price_cents),
                         as_date_format(m, a->delivery_day), a->score);
    const as_scored *b2 = &r->ranked[1];
    const as_offer *y = b2->offer;
    as_buf b;
    as_buf_init(&b, m);
    as_buf_printf(&b, "%s ranks first with score %d against %d for %s: ", x->merchant.name,
                  a->score, b2->score, y->merchant.name);
    int64_t d = y->price_cents - x->price_cents;
    if (d > 0)
        as_buf_printf(&b, "%s cheaper", as_eur_format(m, d));
    else if (d < 0)
        as_buf_printf(&b, "%s dearer", as_eur_format(m, -d));
    else
        as_buf_puts(&b, "the same price");
    int dd = y->delivery_days - x->delivery_days;
    if (dd > 0)
        as_buf_printf(&b, ", delivers %d day%s sooner", dd, dd == 1 ? "" : "s");
    else if (dd < 0)
        as_buf_printf(&b, ", delivers %d day%s later", -dd, dd == -1 ? "" : "s");
    else
        as_buf_puts(&b, ", delivers on the same day");
    as_buf_printf(&b, ", on time %s vs %s", pct(m, x->merchant.on_time_rate),
                  pct(m, y->merchant.on_time_rate));
    as_buf_printf(&b, ", right item %s vs %s.", pct(m, x->merchant.accuracy_rate),
                  pct(m, y->merchant.accuracy_rate));
    return as_buf_str(&b);
}

/* What rank makes: everything and the explanation (RANK_FULL), all but the
 * explanation (RANK_BRIEF), or the best offer alone (RANK_BEST). */
typedef enum { RANK_FULL, RANK_BRIEF, RANK_BEST } rank_mode;

static void rank(as_mem *m, const as_product *p, const as_weights *w, const as_offer_filter *f,
                 int64_t today, rank_mode mode, as_ranking *out)
{
    static const as_offer_filter none = {0, 0, NULL};
    if (!f) f = &none;
    memset(out, 0, sizeof(*out));
    out->weights = *w;
    out->ranked = as_alloc(m, (p->n_offers + 1) * sizeof(as_scored));
    out->inel = as_alloc(m, (p->n_offers + 1) * sizeof(as_ineligible));

    int64_t cheapest = 0;
    for (size_t i = 0; i < p->n_offers; i++) {
        const as_offer *o = &p->offers[i];
        int64_t day = today + o->delivery_days;
        as_inel_kind why = ineligible_kind(p, o, f, day);
        if (why != AS_INEL_NONE) {
            if (mode != RANK_BEST) /* RANK_BEST lists none: no reason written */
                out->inel[out->n_inel++] =
                    (as_ineligible){o, why, ineligible_reason(m, why, o, f, day), day};
            continue;
        }
        if (!cheapest || o->price_cents < cheapest) cheapest = o->price_cents;
        out->ranked[out->n_ranked++] = (as_scored){.offer = o, .delivery_day = day};
    }
    for (size_t i = 0; i < out->n_ranked; i++) {
        as_scored *s = &out->ranked[i];
        const as_offer *o = s->offer;
        s->comp[AS_W_PRICE] = as_round(100.0 * (double)cheapest / (double)o->price_cents, 1);
        s->comp[AS_W_DELIVERY] = as_round(as_delivery_component(o->delivery_days), 1);
        s->comp[AS_W_QUALITY] = as_round(100.0 * o->merchant.accuracy_rate, 1);
        s->comp[AS_W_RELIABILITY] = as_round(100.0 * o->merchant.on_time_rate, 1);
        double sum = 0;
        for (int k = 0; k < AS_W_N; k++) {
            s->weighted[k] = as_round(s->comp[k] * w->w[k], 2);
            sum += s->weighted[k];
        }
        s->score = (int)lround(as_round(sum, 2));
    }
    if (mode == RANK_BEST) { /* the first in qsort's order, in front */
        size_t b = 0;
        for (size_t i = 1; i < out->n_ranked; i++)
            if (scored_cmp(&out->ranked[i], &out->ranked[b]) < 0) b = i;
        if (out->n_ranked) {
            as_scored x = out->ranked[0];
            out->ranked[0] = out->ranked[b];
            out->ranked[b] = x;
            out->ranked[0].rank = 1;
        }
        return;
    }
    qsort(out->ranked, out->n_ranked, sizeof(as_scored), scored_cmp);
    for (size_t i = 0; i < out->n_ranked; i++)
        out->ranked[i].rank = (int)i + 1;
    out->explanation = mode == RANK_FULL ? explain(m, out, p) : NULL;
}

void as_rank_offers(as_mem *m, const as_product *p, const as_weights *w, const as_offer_filter *f,
                    int64_t today, as_ranking *out)
{
    rank(m, p, w, f, today, RANK_FULL, out);
}

void as_rank_offers_brief(as_mem *m, const as_product *p, const as_weights *w,
                          const as_offer_filter *f, int64_t today, as_ranking *out)
{
    rank(m, p, w, f, today, RANK_BRIEF, out);
}

void as_rank_best(as_mem *m, const as_product *p, as_rank_row *out)
{
    as_weights w;
    as_weights_default(&w);
    as_offer_filter none = {0, 0, NULL};
    as_ranking r;
    as_rank_offers_brief(m, p, &w, &none, 0, &r);
    const as_scored *b = r.n_ranked ? &r.ranked[0] : NULL;
    out->buyable = b != NULL;
    out->score = b ? b->score : 0;
    out->price_cents = b ? b->offer->price_cents : 0;
    out->days = b ? b->offer->delivery_days : 0;
}

void as_rank_best_offer(as_mem *m, const as_product *p, const as_weights *w,
                        const as_offer_filter *f, int64_t today, as_ranking *out)
{
    rank(m, p, w, f, today, RANK_BEST, out);
}
