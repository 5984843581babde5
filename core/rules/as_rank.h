/* Offer ranking (spec 2.4, docs/ranking.md): four components 0..100, weighted,
 * summed and rounded; no paid placement anywhere in the formula. */
#ifndef AS_RANK_H
#define AS_RANK_H

#include <jansson.h>
#include <stdbool.h>

#include "as_catalog.h"
#include "as_mem.h"

enum { AS_W_PRICE, AS_W_DELIVERY, AS_W_QUALITY, AS_W_RELIABILITY, AS_W_N };
extern const char *const as_weight_names[AS_W_N];

typedef struct as_weights {
    double w[AS_W_N]; /* normalised: each 0..1, summing to 1 */
} as_weights;

void as_weights_default(as_weights *w);
bool as_weights_is_default(const as_weights *w); /* exactly the defaults */
/* Query-string form: "price:0.5,delivery:0.2" or a JSON object; "null" = defaults.
 * On failure returns false with a message on m. */
bool as_weights_parse(as_mem *m, const char *s, as_weights *out, const char **err);
/* A JSON body value: object or null. */
bool as_weights_from_json(as_mem *m, const json_t *v, as_weights *out, const char **err);
json_t *as_weights_json(const as_weights *w);

typedef struct as_offer_filter {
    int64_t deliver_by;      /* day number; 0 = no limit */
    int64_t max_price_cents; /* 0 = no limit */
    const char *merchant;    /* merchant id; NULL = any */
} as_offer_filter;

typedef struct as_scored {
    const as_offer *offer;
    double comp[AS_W_N];     /* 0..100, one decimal */
    double weighted[AS_W_N]; /* comp * weight, two decimals */
    int score;               /* round(sum of weighted) */
    int rank;
    int64_t delivery_day;
} as_scored;

/* Why an offer cannot be bought under a filter: the first test it fails, in
 * this order. AS_INEL_NONE: it passes them all (eligible). */
typedef enum {
    AS_INEL_NONE,
    AS_INEL_OUT_OF_STOCK,    /* the product is not in stock, or the offer has none */
    AS_INEL_OTHER_MERCHANT,  /* another merchant than the filter's */
    AS_INEL_ABOVE_MAX_PRICE, /* its price is above max_price */
    AS_INEL_AFTER_DELIVER_BY /* it delivers after deliver_by */
} as_inel_kind;

typedef struct as_ineligible {
    const as_offer *offer;
    as_inel_kind kind;  /* what decisions read */
    const char *reason; /* the kind in words, for people (JSON, explanations) */
    int64_t delivery_day;
} as_ineligible;

typedef struct as_ranking {
    as_weights weights;
    as_scored *ranked;
    size_t n_ranked;
    as_ineligible *inel;
    size_t n_inel;
    const char *explanation;
} as_ranking;

/* Delivery component: 100 for next-day delivery, 12.5 less per extra day. */
double as_delivery_component(int days);

void as_rank_offers(as_mem *m, const as_product *p, const as_weights *w, const as_offer_filter *f,
                    int64_t today, as_ranking *out);
/* The same ranking without the explanation (NULL), which is most of the cost
 * (formatted text): for search summaries and the search order table. */
void as_rank_offers_brief(as_mem *m, const as_product *p, const as_weights *w,
                          const as_offer_filter *f, int64_t today, as_ranking *out);
/* Only what a summary shows: n_ranked, the eligible offers' count, and
 * ranked[0], the best of them (rank 1, as as_rank_offers ranks it); the
 * other entries of ranked are in no order and unranked, and inel is empty
 * (no reason is written). For search pages, which show tens of summaries. */
void as_rank_best_offer(as_mem *m, const as_product *p, const as_weights *w,
                        const as_offer_filter *f, int64_t today, as_ranking *out);
/* A product's search order row (product_rank) under the default weights,
 * no filter: whether an offer can be bought, and the best one's score, price
 * and delivery days (0 when none); return_rate and in_stock are left as they
 * are. Storage calls it through as_db.rank when it writes the table. */
void as_rank_best(as_mem *m, const as_product *p, as_rank_row *out);

extern const char *const as_ranking_policy;

#endif
