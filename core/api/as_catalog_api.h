/* What the catalogue's endpoints (as_catalog_api.c) lend the other /v1
 * handlers. */
#ifndef AS_CATALOG_API_H
#define AS_CATALOG_API_H

#include "as_api.h"

/* A device parameter: a slug, or free text naming exactly one device; else a 400
 * naming the candidates (never a silent guess). */
bool as_resolve_device(as_shop *shop, const char *text, const char *field, as_device *out,
                       as_response *resp);

#endif
