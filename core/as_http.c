#include "as_http.h"

#include <string.h>
#include <strings.h>

#include "as_crypto.h"

const char *as_etag_from_digest(as_mem *m, const unsigned char digest[32])
{
    return as_printf(m, "\"%s\"", as_b64url_encode(m, digest, 16));
}

const char *as_etag_of(as_mem *m, const void *p, size_t n)
{
    unsigned char d[32];
    as_sha256 *h = as_sha256_begin();
    as_sha256_add(h, p, n);
    if (!as_sha256_end(h, d)) return NULL;
    return as_etag_from_digest(m, d);
}

/* The opaque part of a tag (between its quotes) equals ours, or ours with a
 * compression filter's suffix. */
static bool same_tag(const char *opaque, size_t n, const char *etag)
{
    size_t k = strlen(etag);
    if (k < 2 || etag[0] != '"' || etag[k - 1] != '"') return false;
    const char *ours = etag + 1;
    k -= 2;
    if (n < k || memcmp(opaque, ours, k) != 0) return false;
    const char *rest = opaque + k;
    size_t rn = n - k;
    return rn == 0 || (rn == 5 && memcmp(rest, "-gzip", 5) == 0) ||
           (rn == 3 && memcmp(rest, "-br", 3) == 0);
}

bool as_etag_matches(const char *inm, const char *etag)
{
    if (!inm || !etag) return false;
    const char *p = inm;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p) return false;
        if (*p == '*') return true;
        if (strncmp(p, "W/", 2) == 0) p += 2;
        if (*p != '"') return false; /* not an entity tag: the header is malformed */
        const char *open = ++p;
        while (*p && *p != '"')
            p++;
        if (*p != '"') return false;
        if (same_tag(open, (size_t)(p - open), etag)) return true;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p && *p != ',') return false;
    }
}

const char AS_CORS_ALLOW_HEADERS[] = "Authorization, Content-Type, Idempotency-Key, "
                                     "Service-Agent, MCP-Protocol-Version, If-None-Match";
const char AS_CORS_EXPOSE_HEADERS[] = "ETag, Location, Retry-After, Idempotent-Replayed";

const char *as_cors_unlisted_header(as_mem *m, const char *hs)
{
    for (const char *p = hs ? hs : ""; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        const char *s = p;
        while (*p && *p != ',')
            p++;
        const char *e = p;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (e == s) continue;
        size_t n = (size_t)(e - s);
        bool listed = false;
        for (const char *a = AS_CORS_ALLOW_HEADERS; *a && !listed;) {
            const char *ae = strchr(a, ',');
            size_t an = ae ? (size_t)(ae - a) : strlen(a);
            listed = an == n && strncasecmp(a, s, n) == 0;
            a = ae ? ae + 2 : a + an;
        }
        if (!listed) return as_strndup(m, s, n);
    }
    return NULL;
}
