/* MCP (docs/mcp.md) as the router and the tests see it: POST /mcp, the
 * protocol layer (as_mcp.c), and the tools (as_mcp_tools.c): the list of tool
 * definitions, and a call that runs the shop's operation as the REST
 * operation of the same name would. */
#ifndef AS_MCP_H
#define AS_MCP_H

#include <jansson.h>

#include "as_request.h"
#include "as_shop.h"

/* POST /mcp: one JSON-RPC message in req's body, its answer in resp (the
 * router's row for /mcp names it). */
as_handler as_api_mcp;

/* The result of tools/list, {"tools": [...]} (core/mcp/mcp_tools.json): a new
 * reference, or NULL when out of memory. */
json_t *as_mcp_tools_list(void);

/* tools/call: a CallToolResult (new reference) whose isError tells a tool
 * failure (a REST error, or arguments that do not fit the input schema). NULL
 * for a protocol error, with *rpc_code and *rpc_message set (an unknown tool
 * is -32602). http is the MCP request: its Authorization, Service-Agent and
 * Idempotency-Key headers and base_url are the call's, as REST's would be. */
json_t *as_mcp_tool_call(as_shop *shop, const as_request *http, const char *name, json_t *args,
                         int *rpc_code, const char **rpc_message);

/* The i-th tool that as_mcp_tool_call knows, NULL past the last (the unit
 * tests compare them with the definitions). */
const char *as_mcp_tool_name(size_t i);

#endif
