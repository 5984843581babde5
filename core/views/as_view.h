/* JSON views of catalogue data (spec part 2 and docs/api.md). Each function
 * returns a new reference. */
#ifndef AS_VIEW_H
#define AS_VIEW_H

#include <jansson.h>

#include "as_catalog.h"
#include "as_json_value.h"
#include "as_json_write.h"
#include "as_rank.h"

json_t *as_view_merchant(const as_merchant *m);
json_t *as_view_offer(as_mem *m, const as_scored *s);
/* A merchant's object as an offer shows it ({"id": ..., "accuracy_rate":
 * ...}), *len bytes on mem (as_merchant.json); NULL when its text is not
 * UTF-8. */
const char *as_view_merchant_json(as_mem *mem, const as_merchant *m, size_t *len);
json_t *as_view_offers(as_mem *m, const as_ranking *r);
/* The product view (GET /products/{sku}) as JSON text and a newline, as
 * bodies are sent: *len bytes, written directly (as_json_write.h), the bytes
 * json_dumps would give; NULL when something in it cannot be encoded.
 * device: the device the view is for, NULL when none. */
const char *as_view_product_text(as_mem *m, const as_product *p, const as_ranking *r,
                                 const as_device *device, size_t *len);
/* The parts of a product view that only a catalogue load changes, encoded
 * once (the search index keeps them: as_search_kept.c): `head`, the members
 * from "sku" to "verification" (without braces); `perf`, the "performance"
 * object; `compat`, the device's compatibility row, for a view for a device
 * (NULL when it has none). */
typedef struct as_view_kept {
    const char *head, *perf, *compat;
    size_t head_len, perf_len, compat_len;
} as_view_kept;

/* p's head and perf (compat NULL); false when something cannot be encoded. */
bool as_view_product_kept(as_mem *m, const as_product *p, as_view_kept *out);
/* A compatibility row as the element of a view's "compatibility". */
const char *as_view_compat_text(as_mem *m, const as_compat *c, size_t *len);
/* The same in two parts, for a caller that keeps the part rows share (the
 * index keeps one per evidence, fit and check date): the members after the
 * device's (from "fit_status" on, without braces), from the summary
 * (as_fit_summary) and the evidence in words (as_view_evidence_text of
 * c->evidence); then the row with the device's members and those. NULL when
 * something cannot be written. */
const char *as_view_evidence_text(as_mem *m, const char *evidence, size_t *len);
const char *as_view_compat_rest(as_mem *m, const char *fit_status, const char *summary,
                                const char *checked_at, const char *evidence,
                                size_t evidence_len, size_t *len);
const char *as_view_compat_with(as_mem *m, const char *device_slug, const char *device_name,
                                const char *rest, size_t rest_len, size_t *len);
/* The view from kept parts and the rest: r, and of p its questions, its
 * compat's fit_status (a view for a device) and its guarantee (one without).
 * as_view_product_text is this with the parts encoded from p. */
const char *as_view_product_from(as_mem *m, const as_view_kept *k, const as_product *p,
                                 const as_ranking *r, const as_device *device, size_t *len);
/* A product in a list (search results, compatible parts): its members
 * written into an open object, or the object as a jansson value; the first
 * of them p->summary_head when it has one. */
void as_view_summary_members(as_jw *w, const as_product *p, const as_ranking *r,
                             const as_device *device);
json_t *as_view_summary(as_mem *m, const as_product *p, const as_ranking *r,
                        const as_device *device);
/* The first of those members, from "sku" to "return_rate": what only a
 * catalogue load changes (p's fields, not p->summary_head). */
void as_view_summary_head(as_jw *w, const as_product *p);
/* A product left out of a list, and why. */
void as_view_excluded_write(as_jw *w, const as_product *p, const char *reason);
json_t *as_view_excluded(as_mem *m, const as_product *p, const char *reason);
/* Weights as as_weights_json gives them, as member `key`. */
void as_view_weights_write(as_jw *w, const char *key, const as_weights *weights);

/* fits | does_not_fit | unknown, for the product's compat row. */
const char *as_fit_status(const as_product *p);
/* One sentence on the evidence behind a compat row. */
const char *as_fit_summary(as_mem *m, const as_compat *c);

/* One piece of fit evidence with a "text" in words: "Filter diameter measured
 * 87 mm; device 87 mm (measured by lab-utrecht-01, 2026-10-02T10:00:00Z)". */
json_t *as_view_evidence_item(as_mem *m, const json_t *e);

/* GET / (the API's index): its name, version and endpoints. */
typedef struct as_endpoint {
    const char *path, *methods; /* "/orders/{id}", "GET, HEAD" */
} as_endpoint;
json_t *as_view_api_index(const as_endpoint *eps, size_t n);

#endif
