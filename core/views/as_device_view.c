#include "as_device_view.h"

#include <string.h>

#include "as_util.h"
#include "as_view.h"

json_t *as_view_device_candidates(const char *query, const as_device_match *c, size_t k,
                                  size_t limit)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < k && i < limit; i++)
        json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:o}", "slug", c[i].device->slug,
                                             "name", c[i].device->name, "brand", c[i].device->brand,
                                             "kind", c[i].device->kind, "confidence",
                                             as_json_round(c[i].confidence, 2)));
    return json_pack("{s:o, s:o, s:I}", "query", query ? json_string(query) : json_null(),
                     "candidates", arr, "count", (json_int_t)k);
}

json_t *as_view_compatible(as_mem *m, const as_device *dev, const char *part_type,
                           const as_compatible_part *parts, size_t n, json_t *excluded,
                           const as_compat_paging *pg)
{
    json_t *groups = json_array(), *group = NULL;
    const char *cur = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!cur || strcmp(cur, parts[i].p->part_type) != 0) {
            cur = parts[i].p->part_type;
            group = json_array();
            json_array_append_new(groups,
                                  json_pack("{s:s, s:o}", "part_type", cur, "parts", group));
        }
        json_array_append_new(group, as_view_summary(m, parts[i].p, &parts[i].r, dev));
    }
    return json_pack("{s:{s:s, s:s, s:s, s:s}, s:o, s:I, s:I, s:I, s:o, s:o, s:I}", "device",
                     "slug", dev->slug, "name", dev->name, "brand", dev->brand, "kind", dev->kind,
                     "part_type", part_type ? json_string(part_type) : json_null(), "count",
                     (json_int_t)pg->count, "limit", (json_int_t)pg->limit, "offset",
                     (json_int_t)pg->offset, "groups", groups, "excluded", excluded,
                     "excluded_count", (json_int_t)pg->excluded_count);
}
