/* Browser origins (docs/api.md, "Caching, compression and CORS"; MCP's
 * transport, "Security Warning"): which pages may call the agent endpoints. */
#include "as_http.h"

#include <string.h>
#include <strings.h>

#include "as_util.h"

static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

const char *as_origin_normalize(as_mem *m, const char *s)
{
    if (!s) return NULL;
    const char *scheme = strncasecmp(s, "http://", 7) == 0    ? "http"
                         : strncasecmp(s, "https://", 8) == 0 ? "https"
                                                              : NULL;
    if (!scheme) return NULL;
    char *host = as_lower(m, s + strlen(scheme) + 3);
    char *end = host;
    if (*end == '[') { /* an IPv6 literal */
        end++;
        while (*end && (strchr("0123456789abcdef:.", *end)))
            end++;
        if (*end != ']' || end == host + 1) return NULL;
        end++;
    } else {
        while (host_char(*end))
            end++;
        if (end == host) return NULL;
    }
    const char *port = NULL;
    if (*end == ':') {
        *end = '\0';
        port = end + 1;
        int64_t n;
        if (!as_int_parse(port, 1, 65535, &n) || port[0] == '0' || port[0] == '-') return NULL;
        if ((strcmp(scheme, "http") == 0 && n == 80) || (strcmp(scheme, "https") == 0 && n == 443))
            port = NULL;
    } else if (*end) {
        return NULL; /* a path, a user, a query: not an origin */
    }
    return as_printf(m, "%s://%s%s%s", scheme, host, port ? ":" : "", port ? port : "");
}

/* The API's own origin: scheme, host and port of its base URL. */
static const char *own_origin(as_mem *m, const char *base_url)
{
    if (!base_url) return NULL;
    const char *sep = strstr(base_url, "://");
    if (!sep) return NULL;
    const char *path = strchr(sep + 3, '/');
    return as_origin_normalize(m, path ? as_strndup(m, base_url, (size_t)(path - base_url))
                                       : base_url);
}

bool as_agent_origin_allowed(as_shop *shop, const as_request *req)
{
    const char *o = as_origin_normalize(shop->mem, req->origin);
    if (!o) return false; /* "null", garbage */
    const char *own = own_origin(shop->mem, req->base_url);
    if (own && strcmp(o, own) == 0) return true;
    for (size_t i = 0; i < shop->cfg->n_agent_origins; i++)
        if (strcmp(o, shop->cfg->agent_origins[i]) == 0) return true;
    return false;
}
