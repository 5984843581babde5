/* POST /mcp: the Model Context Protocol, Streamable HTTP transport. (To be
 * written.) */
#include "as_api.h"

void as_api_mcp(as_ctx *ctx, const as_request *req, as_response *resp)
{
    (void)ctx;
    (void)req;
    as_respond_error(resp, 501, "NOT_IMPLEMENTED", NULL, "MCP is not available yet.");
}
