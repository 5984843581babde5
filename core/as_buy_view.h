/* JSON views of quotes, orders, mandates and confirmations (docs/buying.md). */
#ifndef AS_BUY_VIEW_H
#define AS_BUY_VIEW_H

#include <jansson.h>

#include "as_commerce.h"
#include "as_mem.h"

json_t *as_view_quote(as_mem *m, const as_quote *q);
json_t *as_view_order(as_mem *m, const as_order *o);
json_t *as_view_mandate(as_mem *m, const as_mandate *md, const char *status, const char *month,
                        int64_t spent);
json_t *as_view_confirmation(as_mem *m, const as_confirmation *c, const as_order *o);
/* The page a human sees behind the signed link. */
const char *as_confirmation_page(as_mem *m, const as_confirmation *c, const as_order *o,
                                 const char *action, const char *token, const char *notice);
const char *as_html_escape(as_mem *m, const char *s);

#endif
