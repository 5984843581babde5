/* Help pages and the error object whose `docs` link leads to them
 * (as_help_view.c). */
#ifndef AS_HELP_VIEW_H
#define AS_HELP_VIEW_H

#include <jansson.h>
#include <stddef.h>

#include "as_mem.h"

/* Error object of spec 2.7 (+ field on validation errors), its texts made
 * valid UTF-8; as_respond_error answers with it, a view may extend it. */
json_t *as_error_object(const char *code, const char *field, const char *message);
/* The `docs` link of an error code: "docs/errors/CODE" (a static string). */
const char *as_error_docs(const char *code);
/* The i-th error code that has a help page, NULL past the last (for tests). */
const char *as_help_error_code(size_t i);
/* The help page: page NULL for the index, "checkout", "errors" (code NULL for
 * their list, else one code's page). back: the relative way to the API base.
 * NULL when there is no such page. */
const char *as_help_page(as_mem *m, const char *page, const char *code, const char *back);

#endif
