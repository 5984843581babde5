/* JSON views of devices (spec 4.3, 4.4): the candidates a device search
 * found, and a device's compatible parts. Each returns a new reference. */
#ifndef AS_DEVICE_VIEW_H
#define AS_DEVICE_VIEW_H

#include <jansson.h>

#include "as_catalog.h"
#include "as_devices.h"
#include "as_rank.h"

/* GET /devices: the first `limit` of the k matches for query (NULL: none)
 * and how many matched in all. */
json_t *as_view_device_candidates(const char *query, const as_device_match *c, size_t k,
                                  size_t limit);

/* A compatible part: the product and its offers ranked under the default
 * weights. */
typedef struct as_compatible_part {
    const as_product *p;
    as_ranking r;
} as_compatible_part;

/* How a device's list was paged: the parts listed in all, the page, and
 * the parts left out in all. */
typedef struct as_compat_paging {
    int64_t count, limit, offset, excluded_count;
} as_compat_paging;

/* GET /devices/{slug}/compatible: one page of parts, ordered by part type,
 * becomes one group per part type (a group the page cuts goes on at the
 * next page's first); excluded (stolen) lists parts left out and why;
 * part_type is the filter asked for (NULL: none). */
json_t *as_view_compatible(as_mem *m, const as_device *dev, const char *part_type,
                           const as_compatible_part *parts, size_t n, json_t *excluded,
                           const as_compat_paging *pg);

#endif
