#include "as_util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t as_utf8_seq(const char *str, size_t n)
{
    uint32_t cp;
    return as_utf8_next(str, n, &cp);
}

size_t as_utf8_next(const char *str, size_t n, uint32_t *out)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned c = s[0];
    size_t extra;
    uint32_t cp;
    if (c == 0) return 0;
    if (c < 0x80) {
        *out = c;
        return 1;
    }
    if ((c & 0xE0) == 0xC0) {
        extra = 1;
        cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        extra = 2;
        cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        extra = 3;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (extra >= n) return 0;
    for (size_t k = 1; k <= extra; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    *out = cp;
    return extra + 1;
}

bool as_utf8_valid(const char *s, size_t n)
{
    for (size_t i = 0, k; i < n; i += k)
        if (!(k = as_utf8_seq(s + i, n - i))) return false;
    return true;
}

void as_utf8_repair(char *out, const char *s, size_t n)
{
    for (size_t i = 0, k; i < n; i += k) {
        k = as_utf8_seq(s + i, n - i);
        if (k)
            memcpy(out + i, s + i, k);
        else
            out[i] = '?', k = 1;
    }
    out[n] = '\0';
}

char *as_utf8_clean(as_mem *m, const char *s)
{
    size_t n = strlen(s);
    char *d = as_alloc_raw(m, n + 1);
    as_utf8_repair(d, s, n);
    return d;
}

/* What text shown to people and agents must not hold (as_util.h), by range:
 * the controls, the line separators, the bidirectional controls, the zero-width
 * characters, then every other format character (Cf) and default-ignorable
 * code point of Unicode 15 but the variation selectors U+FE00-U+FE0F (emoji). */
static const struct {
    uint32_t lo, hi;
    const char *what;
} hidden[] = {
    {0x0000, 0x001F, "a control character"},
    {0x007F, 0x009F, "a control character"},
    {0x00AD, 0x00AD, "an invisible character (soft hyphen)"},
    {0x034F, 0x034F, "an invisible character"},
    {0x0600, 0x0605, "an invisible character"},
    {0x061C, 0x061C, "a bidirectional control"},
    {0x06DD, 0x06DD, "an invisible character"},
    {0x070F, 0x070F, "an invisible character"},
    {0x0890, 0x0891, "an invisible character"},
    {0x08E2, 0x08E2, "an invisible character"},
    {0x115F, 0x1160, "an invisible character"},
    {0x17B4, 0x17B5, "an invisible character"},
    {0x180B, 0x180F, "an invisible character"},
    {0x200B, 0x200D, "a zero-width character"},
    {0x200E, 0x200F, "a bidirectional control"},
    {0x2028, 0x2029, "a line separator"},
    {0x202A, 0x202E, "a bidirectional control"},
    {0x2060, 0x2060, "a zero-width character"},
    {0x2061, 0x2065, "an invisible character"},
    {0x2066, 0x2069, "a bidirectional control"},
    {0x206A, 0x206F, "an invisible character"},
    {0x3164, 0x3164, "an invisible character"},
    {0xFEFF, 0xFEFF, "a zero-width character"},
    {0xFFA0, 0xFFA0, "an invisible character"},
    {0xFFF0, 0xFFFB, "an invisible character"},
    {0x110BD, 0x110BD, "an invisible character"},
    {0x110CD, 0x110CD, "an invisible character"},
    {0x13430, 0x1343F, "an invisible character"},
    {0x1BCA0, 0x1BCA3, "an invisible character"},
    {0x1D173, 0x1D17A, "an invisible character"},
    {0xE0000, 0xE0FFF, "an invisible character (tag or variation selector)"},
};

const char *as_text_hidden(uint32_t cp)
{
    for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]) && cp >= hidden[i].lo; i++)
        if (cp <= hidden[i].hi) return hidden[i].what;
    return NULL;
}

static void put_u(as_buf *b, uint32_t u)
{
    as_buf_printf(b, "\\u%04x", (unsigned)u);
}

void as_text_escape_to(as_buf *b, const char *s, size_t n, bool quote)
{
    if (quote) as_buf_add(b, "\"", 1);
    size_t i = 0, from = 0, k;
    for (uint32_t cp; i < n; i += k) {
        k = as_utf8_next(s + i, n - i, &cp);
        bool q = quote && k == 1 && (s[i] == '"' || s[i] == '\\');
        if (k && !q && !as_text_hidden(cp)) continue;
        as_buf_add(b, s + from, i - from);
        if (!k) {
            as_buf_add(b, "?", 1); /* a byte that begins no character */
            k = 1;
        } else if (q) {
            as_buf_add(b, "\\", 1);
            as_buf_add(b, s + i, 1);
        } else if (cp > 0xFFFF) { /* JSON's surrogate pair */
            put_u(b, 0xD800 + ((cp - 0x10000) >> 10));
            put_u(b, 0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
            put_u(b, cp);
        }
        from = i + k;
    }
    as_buf_add(b, s + from, n - from);
    if (quote) as_buf_add(b, "\"", 1);
}

char *as_text_escape(as_mem *m, const char *s)
{
    as_buf b;
    as_buf_init(&b, m);
    as_text_escape_to(&b, s, strlen(s), false);
    return (char *)as_buf_str(&b);
}

size_t as_utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

/* Howard Hinnant's days_from_civil / civil_from_days. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static bool digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return false;
    return true;
}

static bool date_fields(const char *s, int64_t *days)
{
    if (!digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2))
        return false;
    int y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    unsigned m = (unsigned)((s[5] - '0') * 10 + (s[6] - '0'));
    unsigned d = (unsigned)((s[8] - '0') * 10 + (s[9] - '0'));
    if (y < 1970 || m < 1 || m > 12 || d < 1) return false;
    static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[m - 1] || (m == 2 && d == 29 && !leap)) return false;
    *days = days_from_civil(y, m, d);
    return true;
}

bool as_date_parse(const char *s, int64_t *days)
{
    return s && strlen(s) == 10 && date_fields(s, days);
}

size_t as_date_text(char out[AS_DATE_TEXT], int64_t days)
{
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, &y, &mo, &d);
    if (y < 0 || y > 9999) /* printf's widths, for years of other lengths */
        return (size_t)snprintf(out, AS_DATE_TEXT, "%04lld-%02u-%02u", (long long)y, mo, d);
    unsigned v[3] = {(unsigned)y, mo, d}, width[3] = {4, 2, 2};
    size_t n = 0;
    for (int k = 0; k < 3; k++) {
        if (k) out[n++] = '-';
        for (unsigned i = width[k]; i-- > 0; v[k] /= 10)
            out[n + i] = (char)('0' + v[k] % 10);
        n += width[k];
    }
    out[n] = '\0';
    return n;
}

char *as_date_format(as_mem *m, int64_t days)
{
    char s[AS_DATE_TEXT];
    size_t n = as_date_text(s, days);
    return as_strndup(m, s, n);
}

char *as_time_format(as_mem *m, int64_t t)
{
    int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
    int64_t secs = t - days * 86400;
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, &y, &mo, &d);
    return as_printf(m, "%04lld-%02u-%02uT%02d:%02d:%02dZ", (long long)y, mo, d, (int)(secs / 3600),
                     (int)(secs / 60 % 60), (int)(secs % 60));
}

bool as_time_parse(const char *s, int64_t *t)
{
    int64_t days;
    if (!s || strlen(s) != 20 || !date_fields(s, &days) || s[10] != 'T' || s[13] != ':' ||
        s[16] != ':' || s[19] != 'Z' || !digits(s + 11, 2) || !digits(s + 14, 2) ||
        !digits(s + 17, 2))
        return false;
    int hh = (s[11] - '0') * 10 + s[12] - '0', mm = (s[14] - '0') * 10 + s[15] - '0',
        ss = (s[17] - '0') * 10 + s[18] - '0';
    if (hh > 23 || mm > 59 || ss > 59) return false;
    *t = days * 86400 + hh * 3600 + mm * 60 + ss;
    return true;
}

bool as_eur_parse_cents(const char *s, int64_t max_cents, int64_t *cents)
{
    if (!s || !*s) return false;
    int64_t whole = 0, frac = 0;
    size_t i = 0, nwhole = 0, nfrac = 0;
    for (; isdigit((unsigned char)s[i]); i++, nwhole++) {
        if (nwhole >= 12) return false;
        whole = whole * 10 + (s[i] - '0');
    }
    if (nwhole == 0) return false;
    if (s[i] == '.') {
        for (i++; isdigit((unsigned char)s[i]); i++, nfrac++) {
            if (nfrac >= 2) return false;
            frac = frac * 10 + (s[i] - '0');
        }
        if (nfrac == 0) return false;
        if (nfrac == 1) frac *= 10;
    }
    if (s[i] != '\0') return false;
    int64_t v = whole * 100 + frac;
    if (v > max_cents) return false;
    *cents = v;
    return true;
}

size_t as_eur_text(char out[AS_EUR_TEXT], int64_t cents)
{
    uint64_t a = cents < 0 ? 0 - (uint64_t)cents : (uint64_t)cents, units = a / 100;
    char d[24];
    size_t i = sizeof(d), n = 0;
    do {
        d[--i] = (char)('0' + units % 10);
        units /= 10;
    } while (units);
    if (cents < 0) out[n++] = '-';
    memcpy(out + n, "\xE2\x82\xAC", 3);
    n += 3;
    memcpy(out + n, d + i, sizeof(d) - i);
    n += sizeof(d) - i;
    out[n++] = '.';
    out[n++] = (char)('0' + a % 100 / 10);
    out[n++] = (char)('0' + a % 10);
    return n;
}

char *as_eur_format(as_mem *m, int64_t cents)
{
    char s[AS_EUR_TEXT];
    size_t n = as_eur_text(s, cents);
    return as_strndup(m, s, n);
}

bool as_int_parse(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (!s || !*s) return false;
    bool neg = s[0] == '-';
    size_t i = neg ? 1 : 0;
    if (!s[i]) return false;
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; s[i]; i++) {
        if (!isdigit((unsigned char)s[i])) return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10) return false;
        v = v * 10 + d;
    }
    int64_t r = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    if (r < min || r > max) return false;
    *out = r;
    return true;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Decodes s[0..n) into a new string; plus_is_space for query strings. */
static bool pct_decode(as_mem *m, const char *s, size_t n, bool plus_is_space, char **out)
{
    char *d = as_alloc(m, n + 1);
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n) return false;
            int h = hexval((unsigned char)s[i + 1]), l = hexval((unsigned char)s[i + 2]);
            if (h < 0 || l < 0) return false;
            c = (char)(h * 16 + l);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        d[j++] = c;
    }
    d[j] = '\0';
    if (!as_utf8_valid(d, j)) return false; /* also rejects embedded NUL */
    *out = d;
    return true;
}

bool as_query_parse(as_mem *m, const char *raw, as_query *q, const char **bad)
{
    q->items = NULL;
    q->n = 0;
    if (!raw || !*raw) return true;
    size_t cap = 1;
    for (const char *p = raw; *p; p++)
        if (*p == '&') cap++;
    q->items = as_alloc(m, cap * sizeof(as_kv));
    const char *p = raw;
    while (*p) {
        const char *end = strchr(p, '&');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            const char *eq = memchr(p, '=', len);
            size_t klen = eq ? (size_t)(eq - p) : len;
            char *k, *v;
            if (!pct_decode(m, p, klen, true, &k)) {
                *bad = "query";
                return false;
            }
            if (!pct_decode(m, eq ? eq + 1 : p + len, eq ? len - klen - 1 : 0, true, &v)) {
                *bad = k;
                return false;
            }
            q->items[q->n].key = k;
            q->items[q->n].val = v;
            q->n++;
        }
        if (!end) break;
        p = end + 1;
    }
    return true;
}

const char *as_query_get(const as_query *q, const char *key)
{
    for (size_t i = 0; i < q->n; i++)
        if (strcmp(q->items[i].key, key) == 0) return q->items[i].val;
    return NULL;
}

bool as_pct_decode_segment(as_mem *m, const char *s, size_t n, char **out)
{
    if (!pct_decode(m, s, n, false, out)) return false;
    return strchr(*out, '/') == NULL;
}

/* pow(10, d) is exact for these, so the table gives the same results; it is
 * on search's hot path (a dozen roundings per offer ranked) */
static const double tens[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};

double as_round(double v, int decimals)
{
    double f = decimals >= 0 && decimals < 7 ? tens[decimals] : pow(10.0, decimals);
    return as_round_half(v * f) / f;
}

bool as_fixed_text(char out[AS_FIXED_TEXT], double v, int decimals)
{
    if (decimals < 0 || decimals > 6) return false;
    double f = tens[decimals], k = as_round_half(v * f), r = k / f; /* r: as_round(v, decimals) */
    /* below 1e15, r is within a tenth of its last decimal of k / 10^decimals:
     * printf's digits are k's */
    if (!(fabs(k) < 1e15)) return false;
    uint64_t u = (uint64_t)fabs(k);
    char d[32];
    size_t i = sizeof(d), n = 0;
    do { /* at least one digit before the point */
        d[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u || sizeof(d) - i <= (size_t)decimals);
    size_t frac = (size_t)decimals;
    while (frac && d[sizeof(d) - 1 - ((size_t)decimals - frac)] == '0')
        frac--;
    if (signbit(r)) out[n++] = '-'; /* printf writes -0 too */
    size_t whole = sizeof(d) - i - (size_t)decimals;
    memcpy(out + n, d + i, whole);
    n += whole;
    if (frac) {
        out[n++] = '.';
        memcpy(out + n, d + i + whole, frac);
        n += frac;
    }
    out[n] = '\0';
    return true;
}

json_t *as_json_round(double v, int decimals)
{
    return json_real(as_round(v, decimals));
}

char *as_lower(as_mem *m, const char *s)
{
    char *d = as_strdup(m, s);
    for (char *p = d; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

/* ---- times as a person reads them ---- */

static const char *const WEEKDAYS[] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};
static const char *const MONTHS[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

char *as_date_human(as_mem *m, int64_t days)
{
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, &y, &mo, &d);
    int64_t wd = days % 7; /* 1970-01-01 was a Thursday */
    if (wd < 0) wd += 7;
    return as_printf(m, "%s %u %s %lld", WEEKDAYS[wd], d, MONTHS[mo - 1], (long long)y);
}

char *as_time_human(as_mem *m, int64_t t)
{
    int64_t days = floor_div(t, 86400);
    int64_t secs = t - days * 86400;
    return as_printf(m, "%s, %02d:%02d UTC", as_date_human(m, days), (int)(secs / 3600),
                     (int)(secs / 60 % 60));
}

static char *amount(as_mem *m, int64_t n, const char *unit)
{
    return as_printf(m, "%lld %s%s", (long long)n, unit, n == 1 ? "" : "s");
}

/* Rounded down, so a deadline is never shown later than it is. */
char *as_time_relative(as_mem *m, int64_t t, int64_t now)
{
    int64_t d = t >= now ? t - now : now - t;
    char *what;
    if (d == 0) return as_strdup(m, "just now"); /* a deadline reached, or an event this second */
    if (d < 60) return as_strdup(m, t >= now ? "in less than a minute" : "less than a minute ago");
    if (d < 3600)
        what = amount(m, d / 60, "minute");
    else if (d < 2 * 3600 && d % 3600 >= 60)
        what = as_printf(m, "1 hour %s", amount(m, d % 3600 / 60, "minute"));
    else if (d < 48 * 3600)
        what = amount(m, d / 3600, "hour");
    else
        what = amount(m, d / 86400, "day");
    return t >= now ? as_printf(m, "in %s", what) : as_printf(m, "%s ago", what);
}

char *as_date_relative(as_mem *m, int64_t days, int64_t today)
{
    int64_t d = days - today;
    if (d == 0) return as_strdup(m, "today");
    if (d == 1) return as_strdup(m, "tomorrow");
    if (d == -1) return as_strdup(m, "yesterday");
    return d > 0 ? as_printf(m, "in %s", amount(m, d, "day"))
                 : as_printf(m, "%s ago", amount(m, -d, "day"));
}
