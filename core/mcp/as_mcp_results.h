/* What an MCP tool result carries for a model (as_mcp_results.c, docs/mcp.md). */
#ifndef AS_MCP_RESULTS_H
#define AS_MCP_RESULTS_H

#include <jansson.h>

#include "as_mem.h"

/* The compact default of search_products from a GET /search body: a new
 * reference, or NULL when out of memory. */
json_t *as_mcp_search_compact(const json_t *full);

/* The text of content[0] for a client that reads structuredContent: what the
 * result says, in a few lines (an error in one; search results one a line). */
const char *as_mcp_summary(as_mem *m, const char *tool, int status, const json_t *body);

#endif
