#include "as_http.h"

#include <string.h>
#include <strings.h>

#include "as_crypto.h"

/* XXH3 (xxHash, Debian's libxxhash-dev), compiled in from its header: no
 * library to load at run time. */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* as_etag_hash is XXH3's own streaming state (made aligned as it needs by
 * XXH3_createState, not by malloc). */
as_etag_hash *as_etag_begin(void)
{
    XXH3_state_t *st = XXH3_createState();
    if (st && XXH3_128bits_reset(st) != XXH_OK) {
        XXH3_freeState(st);
        st = NULL;
    }
    return (as_etag_hash *)st;
}

void as_etag_add(as_etag_hash *h, const void *p, size_t n)
{
    /* XXH3 fails only on a NULL input of non-zero length */
    if (h && n) (void)XXH3_128bits_update((XXH3_state_t *)h, p, n);
}

static const char *etag_of_hash(as_mem *m, XXH128_hash_t v)
{
    XXH128_canonical_t c; /* big-endian: the same tag on every machine */
    XXH128_canonicalFromHash(&c, v);
    return as_printf(m, "\"%s\"", as_b64url_encode(m, c.digest, sizeof(c.digest)));
}

const char *as_etag_end(as_etag_hash *h, as_mem *m)
{
    if (!h) return NULL;
    const char *tag = etag_of_hash(m, XXH3_128bits_digest((XXH3_state_t *)h));
    XXH3_freeState((XXH3_state_t *)h);
    return tag;
}

const char *as_etag_of(as_mem *m, const void *p, size_t n)
{
    return etag_of_hash(m, XXH3_128bits(p, n));
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
