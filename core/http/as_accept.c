/* Content negotiation: the one reader of Accept headers, for the pages people
 * get instead of JSON and for MCP's choice of JSON or an event stream. */
#include "as_http.h"

#include <string.h>
#include <strings.h>

static bool ows(char c)
{
    return c == ' ' || c == '\t';
}

/* A qvalue of RFC 9110 (12.4.2: "0" to "1" with at most three decimals) in
 * thousandths; 0 for anything else ("nan", "-1", "2", "0.5x", ""). */
static int qvalue(const char *a, const char *end)
{
    if (a >= end || (*a != '0' && *a != '1')) return 0;
    int v = (*a - '0') * 1000, scale = 100;
    const char *p = a + 1;
    if (p < end && *p == '.') {
        for (p++; p < end && *p >= '0' && *p <= '9' && scale > 0; p++, scale /= 10)
            v += (*p - '0') * scale;
    }
    while (p < end && ows(*p))
        p++;
    if (p < end && *p != ';') return 0;
    return v > 1000 ? 0 : v;
}

/* The q parameter of a range's parameters [semi, end): the last one, 1000
 * without one. */
static int range_q(const char *semi, const char *end)
{
    int q = 1000;
    for (const char *s = semi; s; s = memchr(s + 1, ';', (size_t)(end - s - 1))) {
        const char *a = s + 1;
        while (a < end && ows(*a))
            a++;
        if (end - a >= 2 && (a[0] == 'q' || a[0] == 'Q') && a[1] == '=') q = qvalue(a + 2, end);
    }
    return q;
}

/* How the range [p, p + n) names type. */
static as_accept_match range_names(const char *p, size_t n, const char *type)
{
    size_t major = strcspn(type, "/");
    if (n == strlen(type) && strncasecmp(p, type, n) == 0) return AS_ACCEPT_EXACT;
    if (n == major + 2 && strncasecmp(p, type, major + 1) == 0 && p[major + 1] == '*')
        return AS_ACCEPT_MAJOR;
    if (n == 3 && strncmp(p, "*/*", 3) == 0) return AS_ACCEPT_ANY;
    return AS_ACCEPT_NONE;
}

int as_accept_q(const char *accept, const char *type, as_accept_match *how)
{
    as_accept_match best = AS_ACCEPT_NONE;
    int best_q = -1;
    for (const char *p = accept ? accept : ""; *p;) {
        while (ows(*p) || *p == ',')
            p++;
        const char *end = p + strcspn(p, ",");
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *rend = semi ? semi : end;
        while (rend > p && ows(rend[-1]))
            rend--;
        as_accept_match m = range_names(p, (size_t)(rend - p), type);
        if (m != AS_ACCEPT_NONE && m >= best) {
            int q = range_q(semi, end);
            if (m > best || q > best_q) best_q = q;
            best = m;
        }
        p = end;
    }
    if (how) *how = best;
    return best_q;
}

bool as_accept_html(const char *accept)
{
    as_accept_match how;
    int html = as_accept_q(accept, "text/html", &how);
    return how >= AS_ACCEPT_MAJOR && html > 0 &&
           html >= as_accept_q(accept, "application/json", NULL);
}
