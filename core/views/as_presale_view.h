/* Views of the answers before a sale: a fit check, a question's answer
 * (docs/api.md). Each returns a new reference. */
#ifndef AS_PRESALE_VIEW_H
#define AS_PRESALE_VIEW_H

#include <jansson.h>

#include "as_catalog.h"
#include "as_mem.h"

/* POST /compatibility/check (spec 4.5): p read for dev, its fit status and
 * summary, its evidence in words and, per measured dimension, the delta
 * against the tolerance. */
json_t *as_view_fit_check(as_mem *m, const as_product *p, const as_device *dev);
/* POST /questions (spec 4.6): the question as asked and its answer (stolen). */
json_t *as_view_question(const char *id, const char *sku, const char *question, json_t *answer,
                         const char *asked_at);

#endif
