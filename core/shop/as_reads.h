/* Reading the catalogue (spec 4.1 to 4.4): a search, a product's view, the
 * devices, a device's compatible parts. Each read has its parameters (what
 * every binding takes, as GET /v1 names them, validated into typed inputs) and
 * its operation (the shop and those inputs in, the answer out: the encoded
 * page or view, or typed rows). The /v1 handlers and MCP's tools call both. */
#ifndef AS_READS_H
#define AS_READS_H

#include <jansson.h>

#include "as_device_view.h"
#include "as_devices.h"
#include "as_shop.h"

/* An encoded page or view: len bytes at data, on the shop's memory. */
typedef struct as_read_body {
    const char *data;
    size_t len;
    /* with a 503 refusal of a search: seconds until the index is built */
    int retry_after;
} as_read_body;

/* The device a parameter (field) names: a slug, or free text naming exactly
 * one device. REFUSED (400) naming the candidates, never a silent guess. */
as_shop_rc as_read_device(as_shop *shop, const char *text, const char *field, as_device *out,
                          as_problem *p);

/* ---- GET /search (spec 4.1) ---- */

typedef struct as_read_search_in {
    as_search_ask ask;     /* all but device and of.merchant, which the search resolves */
    const char *device;    /* a slug or text naming one device, or NULL */
    const char *merchant;  /* an id or a name (any case), or NULL */
    const char *postcode;  /* or NULL */
    const as_query *asked; /* the parameters as given: the page caches' key */
} as_read_search_in;

bool as_read_search_params(as_shop *shop, const as_query *q, as_read_search_in *in, as_problem *p);
/* The encoded page (kept for the next same search when the page cache is on).
 * REFUSED: an unknown device or merchant (400), the first index still being
 * built (503 with out->retry_after), a page that could not be encoded (500). */
as_shop_rc as_read_search(as_shop *shop, const as_read_search_in *in, as_read_body *out,
                          as_problem *p);

/* ---- GET /products/{sku} (spec 4.2) ---- */

typedef struct as_read_product_in {
    const char *sku;
    const char *device; /* a slug or text naming one device, or NULL */
    as_weights w;
    as_offer_filter of;    /* deliver_by alone */
    const as_query *asked; /* the parameters as given: the view cache's key */
} as_read_product_in;

bool as_read_product_params(as_shop *shop, const char *sku, const as_query *q,
                            as_read_product_in *in, as_problem *p);
/* The encoded view. REFUSED: an unknown device (400) or sku (404), a view that
 * could not be encoded (500). */
as_shop_rc as_read_product(as_shop *shop, const as_read_product_in *in, as_read_body *out,
                           as_problem *p);

/* ---- GET /devices (spec 4.3) ---- */

typedef struct as_read_devices_in {
    const char *q; /* or NULL: every device */
    size_t limit;
} as_read_devices_in;

bool as_read_devices_params(as_shop *shop, const as_query *q, as_read_devices_in *in,
                            as_problem *p);
/* The devices q matches, best first (as_view_device_candidates shows them). */
as_shop_rc as_read_devices(as_shop *shop, const as_read_devices_in *in, as_device_match **out,
                           size_t *n);

/* ---- GET /devices/{slug}/compatible (spec 4.4) ---- */

typedef struct as_read_compatible_in {
    const char *slug;
    const char *part_type; /* or NULL: any */
    as_page page;
} as_read_compatible_in;

bool as_read_compatible_params(as_shop *shop, const char *slug, const as_query *q,
                               as_read_compatible_in *in, as_problem *p);
/* The page as as_view_compatible shows it (a new reference): its rows borrow
 * the search index's snapshot, released once they are written. REFUSED: an
 * unknown slug (404). */
as_shop_rc as_read_compatible(as_shop *shop, const as_read_compatible_in *in, json_t **out,
                              as_problem *p);

#endif
