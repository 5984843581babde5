/* The catalogue as core sees it: plain structs filled by the store. Strings that
 * hold JSON (claimed/measured values, image URLs, notes, evidence) stay JSON text
 * until a view needs them. */
#ifndef AS_CATALOG_H
#define AS_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct as_merchant {
    const char *id, *name, *country, *city;
    double on_time_rate;  /* share of orders delivered on the promised day, 90 days */
    double accuracy_rate; /* share of orders that arrive as the right item, undamaged */
    /* Its object in an offer ("merchant": {...}) as as_view_merchant_json
     * writes it, json_len bytes, when the catalogue's reader has it (the
     * search index: written once per catalogue, not per result); NULL:
     * written from the fields above. */
    const char *json;
    size_t json_len;
} as_merchant;

typedef struct as_offer {
    const char *id;
    as_merchant merchant;
    int64_t price_cents;        /* agent-only unit price incl. VAT */
    int64_t retail_price_cents; /* the store's ordinary selling price */
    const char *price_label;
    int delivery_days;
    int64_t stock;
} as_offer;

typedef struct as_spec_row {
    const char *spec, *label, *kind, *unit; /* unit may be NULL */
    const char *claimed;                    /* JSON text, NULL when unclaimed */
    const char *measured;                   /* JSON text, NULL when not measured */
    double tolerance_pct;
} as_spec_row;

/* Whether a part fits a device: a compat row's fit_status. Named only at the
 * edges (JSON views, SQL): as_fit_name, as_fit_parse. */
typedef enum { AS_FIT_UNKNOWN, AS_FIT_FITS, AS_FIT_DOES_NOT_FIT } as_fit;
/* A product's claims against its measurements (core/rules/as_verify.h): its
 * verification_status. Named only at the edges: as_verif_name, as_verif_parse. */
typedef enum { AS_VERIF_PENDING, AS_VERIF_VERIFIED, AS_VERIF_CONTRADICTED } as_verif;

/* "unknown" (no compat row), "fits", "does_not_fit". */
const char *as_fit_name(as_fit f);
/* The fit a name says; AS_FIT_UNKNOWN for NULL or any other text. */
as_fit as_fit_parse(const char *name);
/* "pending", "verified", "contradicted". */
const char *as_verif_name(as_verif v);
/* The status a name says; AS_VERIF_PENDING for NULL or any other text. */
as_verif as_verif_parse(const char *name);

typedef struct as_compat {
    const char *device_slug, *device_name;
    as_fit fit_status;      /* FITS or DOES_NOT_FIT */
    const char *evidence;   /* JSON array text */
    const char *checked_at;
} as_compat;

typedef struct as_question {
    const char *id, *question, *answer, *asked_at; /* answer: JSON object text */
} as_question;

/* A product view shows this many of its latest questions, and the total. */
#define AS_VIEW_QUESTIONS 20
#define AS_STR_(x) #x
#define AS_STR(x) AS_STR_(x)

typedef struct as_product {
    int64_t id;
    const char *sku, *gtin, *name, *brand, *category, *part_type, *description;
    const char *image_urls; /* JSON array text */
    const char *source_url, *source_notes /* JSON */, *source_checked_at, *source_product_id;
    const char *availability; /* in_stock | out_of_stock */
    bool is_demo;
    as_verif verif_status;
    const char *verif_note;   /* why contradicted, human readable; NULL otherwise */
    const char *measured_at, *measured_node;
    int64_t sample_size;
    bool has_on_time;
    double on_time_rate_90d, return_rate, wrong_item_rate;
    int64_t agent_orders_90d;
    const char *orders_per_week; /* JSON array of 13 ints */
    bool guarantee;              /* some device is known to fit it */

    as_offer *offers;
    size_t n_offers;
    as_spec_row *specs;
    size_t n_specs;
    as_question *questions; /* the latest AS_VIEW_QUESTIONS, oldest first */
    size_t n_questions;
    int64_t questions_total; /* all the product's questions */
    as_compat *compat; /* for the device asked about, NULL when none/unknown */
    /* What store->product_version says of the data read here, from the same
     * read: the validator of a view built from it; NULL when the store cannot
     * tell. */
    const char *version;
    /* Its members of a list's summary that only a catalogue load changes
     * (as_view_summary_head: "sku" to "return_rate"), already written, and
     * their length; NULL when they are to be written from the fields above
     * (the search index keeps them, core/search/as_search_index.c). */
    const char *summary_head;
    size_t summary_head_len;
} as_product;

/* A product's fit for the device its compat row is for; UNKNOWN without one. */
static inline as_fit as_fit_of(const as_product *p)
{
    return p->compat ? p->compat->fit_status : AS_FIT_UNKNOWN;
}

typedef struct as_device {
    int64_t id;
    const char *slug, *name, *brand, *kind;
    const char *aliases; /* space separated */
} as_device;

/* Category ids and part types of spec 2.5. */
typedef struct as_enum_entry {
    const char *id, *label;
} as_enum_entry;

extern const as_enum_entry as_categories[];
extern const size_t as_n_categories;
extern const as_enum_entry as_part_types[];
extern const size_t as_n_part_types;
const char *as_category_label(const char *id); /* NULL when unknown */
bool as_part_type_known(const char *id);

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

#endif
