/* JSON views of catalogue data (spec part 2 and docs/api.md). Each function
 * returns a new reference. */
#ifndef AS_VIEW_H
#define AS_VIEW_H

#include <jansson.h>

#include "as_catalog.h"
#include "as_rank.h"

json_t *as_view_merchant(const as_merchant *m);
json_t *as_view_offer(as_mem *m, const as_scored *s);
json_t *as_view_offers(as_mem *m, const as_ranking *r);
/* device: the device the view is for, NULL when none. */
json_t *as_view_product(as_mem *m, const as_product *p, const as_ranking *r,
                        const as_device *device);
json_t *as_view_summary(as_mem *m, const as_product *p, const as_ranking *r,
                        const as_device *device);
json_t *as_view_excluded(const as_product *p, const char *reason);

/* fits | does_not_fit | unknown, for the product's compat row. */
const char *as_fit_status(const as_product *p);
/* One sentence on the evidence behind a compat row. */
const char *as_fit_summary(as_mem *m, const as_compat *c);

/* One piece of fit evidence with a "text" in words: "Filter diameter measured
 * 87 mm; device 87 mm (measured by lab-utrecht-01, 2026-10-02T10:00:00Z)". */
json_t *as_view_evidence_item(as_mem *m, const json_t *e);

/* JSON text from storage to a value; invalid or NULL text gives `fallback`. */
json_t *as_json_parse_or(const char *text, json_t *fallback);

#endif
