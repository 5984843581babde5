/* The GET /search 200 body (spec 4.1, docs/search.md), written as JSON text
 * (as_json_write.h): the bytes json_dumps gives for the same response. */
#ifndef AS_SEARCH_VIEW_H
#define AS_SEARCH_VIEW_H

#include "as_search.h"

/* The body of result r of ask, and a newline, as bodies are sent: *len bytes
 * on m; NULL when something in it cannot be encoded. Each result's offers are
 * ranked here (as_rank_best_offer: the best offer and the count); r's page
 * carries its stock already. postcode: as given, NULL when none. */
const char *as_search_body(as_mem *m, const as_search_ask *ask, const as_search_result *r,
                           const char *postcode, size_t *len);

#endif
