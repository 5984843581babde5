/* See as_json_write.h. Every function writes what jansson 2.14's dump.c writes
 * for the value: strings escaped as dump_string does without JSON_ENSURE_ASCII
 * (\" \\ \b \f \n \r \t, other control characters as \u00XX), integers with
 * %lld, reals as jsonp_dtostr with 12 digits. t/unit/json_write_test.c holds
 * the writer to jansson's own output. */
#include "as_json_write.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "as_util.h"

static inline char *reserve(as_jw *w, size_t n)
{
    if (w->b.len + n < w->b.cap) return w->b.data + w->b.len; /* nearly always */
    return as_buf_reserve(&w->b, n, 8192); /* a view or a page: kilobytes */
}

static void put(as_jw *w, const char *s, size_t n)
{
    memcpy(reserve(w, n), s, n);
    w->b.len += n;
}

static void put1(as_jw *w, char c)
{
    *reserve(w, 1) = c;
    w->b.len++;
}

void as_jw_init(as_jw *w, as_mem *m)
{
    memset(w, 0, sizeof(*w));
    as_buf_init(&w->b, m);
}

void as_jw_expect(as_jw *w, size_t n)
{
    as_buf_reserve(&w->b, n, n + 1);
}

const char *as_jw_text(as_jw *w, size_t *len)
{
    if (w->bad || w->depth != 0) return NULL;
    reserve(w, 0)[0] = '\0';
    *len = w->b.len;
    return w->b.data;
}

/* Before a value: a comma when it follows another value of its container. */
static void sep(as_jw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->more[w->depth]) put1(w, ',');
    w->more[w->depth] = true;
}

static void jw_open(as_jw *w, char c)
{
    sep(w);
    put1(w, c);
    if (w->depth == AS_JW_MAX_DEPTH) {
        w->bad = true;
        return;
    }
    w->more[++w->depth] = false;
}

static void jw_close(as_jw *w, char c)
{
    put1(w, c);
    if (w->depth > 0) w->depth--;
}

void as_jw_obj(as_jw *w)
{
    jw_open(w, '{');
}

void as_jw_obj_end(as_jw *w)
{
    jw_close(w, '}');
}

void as_jw_arr(as_jw *w)
{
    jw_open(w, '[');
}

void as_jw_arr_end(as_jw *w)
{
    jw_close(w, ']');
}

/* Whether none of the 8 bytes at s needs a look: no control character, '"',
 * '\\' or byte of a multibyte sequence (bit tricks on a word at a time). */
static bool plain8(const unsigned char *s)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t v, q, b;
    memcpy(&v, s, 8);
    q = v ^ (ones * '"');
    b = v ^ (ones * '\\');
    return (((v - ones * 0x20) & ~v) | ((q - ones) & ~q) | ((b - ones) & ~b) | v) & highs ? false
                                                                                          : true;
}

/* s[0..n) as a JSON string; false (nothing usable written) when not UTF-8. */
static bool put_string(as_jw *w, const char *str, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *)str, *end = s + n, *run = s;
    put1(w, '"');
    while (s < end) {
        while (end - s >= 8 && plain8(s))
            s += 8;
        if (s == end) break;
        unsigned c = *s;
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            s++;
            continue;
        }
        if (c >= 0x80) {
            size_t k = as_utf8_seq((const char *)s, (size_t)(end - s));
            if (!k) return false;
            s += k;
            continue;
        }
        put(w, (const char *)run, (size_t)(s - run));
        char esc[6] = {'\\', 0, '0', '0', hex[c >> 4], hex[c & 15]};
        size_t len = 2;
        switch (c) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        default:
            esc[1] = 'u';
            len = 6;
        }
        put(w, esc, len);
        run = ++s;
    }
    put(w, (const char *)run, (size_t)(s - run));
    put1(w, '"');
    return true;
}

void as_jw_key(as_jw *w, const char *key)
{
    sep(w);
    size_t n = strlen(key);
    char *d = reserve(w, n + 3);
    d[0] = '"';
    memcpy(d + 1, key, n);
    d[n + 1] = '"';
    d[n + 2] = ':';
    w->b.len += n + 3;
    w->after_key = true;
}

void as_jw_str(as_jw *w, const char *s)
{
    if (!s) {
        as_jw_null(w);
        return;
    }
    sep(w);
    if (!put_string(w, s, strlen(s))) w->bad = true;
}

void as_jw_int(as_jw *w, int64_t v)
{
    char d[24];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    size_t i = sizeof(d);
    do {
        d[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) d[--i] = '-';
    sep(w);
    put(w, d + i, sizeof(d) - i);
}

void as_jw_bool(as_jw *w, bool v)
{
    sep(w);
    put(w, v ? "true" : "false", v ? 4 : 5);
}

void as_jw_null(as_jw *w)
{
    sep(w);
    put(w, "null", 4);
}

/* jsonp_dtostr: "%.12g", a ".0" when neither '.' nor 'e' is there, and the
 * exponent without '+' or leading zeros. */
static void put_real(as_jw *w, double v)
{
    char s[64];
    int n = snprintf(s, sizeof(s) - 3, "%.*g", AS_JSON_PRECISION, v);
    if (n < 0 || (size_t)n >= sizeof(s) - 3) {
        w->bad = true;
        return;
    }
    for (char *c = s; *c; c++) /* a locale's decimal comma, as jansson's from_locale */
        if (*c == ',') *c = '.';
    size_t len = (size_t)n;
    char *e = strchr(s, 'e');
    if (!e && !strchr(s, '.')) {
        memcpy(s + len, ".0", 3);
        len += 2;
    }
    if (e) {
        char *start = e + 1, *digits = start + 1;
        if (*start == '-') start++;
        while (*digits == '0')
            digits++;
        if (digits != start) {
            memmove(start, digits, len - (size_t)(digits - s) + 1);
            len -= (size_t)(digits - start);
        }
    }
    put(w, s, len);
}

void as_jw_real(as_jw *w, double v)
{
    sep(w);
    if (!isfinite(v)) { /* json_real refuses these */
        w->bad = true;
        put(w, "null", 4);
        return;
    }
    put_real(w, v);
}

static const double powers_of_ten[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};

void as_jw_round(as_jw *w, double v, int decimals)
{
    if (decimals < 0 || decimals > 6) {
        as_jw_real(w, v);
        return;
    }
    /* x: as_round(v, decimals) */
    double f = powers_of_ten[decimals], r = as_round_half(v * f), x = r / f;
    /* With at most 12 digits and no exponent, "%.12g" of x is r's digits with
     * the point put back and trailing zeros dropped. */
    if (!(fabs(r) < 1e12) || (x != 0 && fabs(x) < 1e-4)) {
        as_jw_real(w, x);
        return;
    }
    char d[40];
    uint64_t u = (uint64_t)fabs(r);
    size_t i = sizeof(d), digits = 0;
    do {
        d[--i] = (char)('0' + u % 10);
        u /= 10;
        digits++;
    } while (u || digits <= (size_t)decimals);
    /* d[i..] holds the digits, at least one before the point */
    size_t int_len = digits - (size_t)decimals, frac = (size_t)decimals;
    while (frac && d[sizeof(d) - 1 - ((size_t)decimals - frac)] == '0')
        frac--;
    char out[48];
    size_t n = 0;
    if (signbit(x)) out[n++] = '-';
    memcpy(out + n, d + i, int_len);
    n += int_len;
    out[n++] = '.';
    if (frac) {
        memcpy(out + n, d + i + int_len, frac);
        n += frac;
    } else {
        out[n++] = '0';
    }
    sep(w);
    put(w, out, n);
}

/* ---- stored JSON text, re-encoded ----
 * The usual stored values (numbers, strings without escapes, arrays of them)
 * are copied in jansson's form by a small scanner; anything else (objects,
 * escapes, exponents, more digits than a real keeps) is decoded and written by
 * jansson itself, so the result is always what json_loads + json_dumps give. */

typedef struct scan {
    const char *p;
    as_jw *w;
} scan;

static void skip_ws(scan *s)
{
    while (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')
        s->p++;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A number in jansson's form when that is the text itself, minus trailing
 * zeros of a fraction; false for anything that needs strtod. */
static bool scan_number(scan *s)
{
    const char *p = s->p, *start = p;
    bool neg = *p == '-';
    if (neg) p++;
    const char *ip = p;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (is_digit(*p))
            p++;
    else
        return false;
    size_t int_len = (size_t)(p - ip);
    if (is_digit(*p) || *p == 'e' || *p == 'E') return false;
    if (*p != '.') { /* an integer: %lld of strtoll */
        if (int_len > 18) return false;
        if (neg && int_len == 1 && ip[0] == '0') {
            put1(s->w, '0');
        } else {
            put(s->w, start, (size_t)(p - start));
        }
        s->p = p;
        return true;
    }
    const char *fp = ++p;
    while (is_digit(*p))
        p++;
    if (p == fp || *p == 'e' || *p == 'E') return false;
    size_t frac_len = (size_t)(p - fp);
    while (frac_len && fp[frac_len - 1] == '0')
        frac_len--;
    bool zero_int = int_len == 1 && ip[0] == '0';
    size_t lead = 0; /* zeros after the point before the first digit, for 0.xxx */
    if (zero_int)
        while (lead < frac_len && fp[lead] == '0')
            lead++;
    size_t sig = zero_int ? frac_len - lead : int_len + frac_len;
    /* "%.12g" keeps it as written: at most 12 digits, no exponent form */
    if (sig > AS_JSON_PRECISION || int_len > AS_JSON_PRECISION ||
        (zero_int && frac_len && lead >= 4))
        return false;
    put(s->w, start, (size_t)(ip - start) + int_len + 1);
    if (frac_len)
        put(s->w, fp, frac_len);
    else
        put1(s->w, '0');
    s->p = p;
    return true;
}

static bool scan_value(scan *s, int depth);

static bool scan_string(scan *s)
{
    const char *p = ++s->p;
    while (*p != '"') {
        if (!*p || *p == '\\' || (unsigned char)*p < 0x20) return false; /* jansson decodes */
        p++;
    }
    size_t n = (size_t)(p - s->p);
    size_t mark = s->w->b.len;
    if (!put_string(s->w, s->p, n)) {
        s->w->b.len = mark;
        return false;
    }
    s->p = p + 1;
    return true;
}

static bool scan_array(scan *s, int depth)
{
    if (depth > 64) return false;
    s->p++;
    put1(s->w, '[');
    skip_ws(s);
    if (*s->p == ']') {
        s->p++;
        put1(s->w, ']');
        return true;
    }
    for (;;) {
        if (!scan_value(s, depth + 1)) return false;
        skip_ws(s);
        if (*s->p == ']') {
            s->p++;
            put1(s->w, ']');
            return true;
        }
        if (*s->p != ',') return false;
        s->p++;
        put1(s->w, ',');
    }
}

static bool scan_word(scan *s, const char *word, size_t n)
{
    if (strncmp(s->p, word, n) != 0) return false;
    s->p += n;
    put(s->w, word, n);
    return true;
}

static bool scan_value(scan *s, int depth)
{
    skip_ws(s);
    switch (*s->p) {
    case '"':
        return scan_string(s);
    case '[':
        return scan_array(s, depth);
    case 't':
        return scan_word(s, "true", 4);
    case 'f':
        return scan_word(s, "false", 5);
    case 'n':
        return scan_word(s, "null", 4);
    default:
        return scan_number(s);
    }
}

static int dump_cb(const char *buf, size_t n, void *data)
{
    put(data, buf, n);
    return 0;
}

void as_jw_value(as_jw *w, const json_t *v)
{
    sep(w);
    if (!v || json_dump_callback(v, dump_cb, w, AS_JSON_DUMP_FLAGS | JSON_ENCODE_ANY) != 0)
        w->bad = true;
}

void as_jw_raw(as_jw *w, const char *text, size_t len)
{
    sep(w);
    put(w, text, len);
}

void as_jw_json(as_jw *w, const char *text, const char *fallback)
{
    sep(w);
    size_t mark = w->b.len;
    if (text) {
        scan s = {text, w};
        if (scan_value(&s, 0)) {
            skip_ws(&s);
            if (!*s.p) return;
        }
        w->b.len = mark;
        json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
        if (v) {
            int rc = json_dump_callback(v, dump_cb, w, AS_JSON_DUMP_FLAGS | JSON_ENCODE_ANY);
            json_decref(v);
            if (rc == 0) return;
            w->b.len = mark;
        }
    }
    put(w, fallback, strlen(fallback));
}

/* The first element, written as the scanner writes values; the rest scanned
 * and dropped, so that text that is not JSON is told apart as jansson does. */
static bool scan_first(scan *s)
{
    skip_ws(s);
    if (*s->p != '[') return false;
    s->p++;
    skip_ws(s);
    if (*s->p == ']') {
        s->p++;
        put(s->w, "null", 4);
    } else {
        if (!scan_value(s, 1)) return false;
        size_t keep = s->w->b.len;
        for (;;) {
            skip_ws(s);
            if (*s->p == ']') break;
            if (*s->p != ',' || (s->p++, !scan_value(s, 1))) return false;
            s->w->b.len = keep;
        }
        s->w->b.len = keep;
        s->p++;
    }
    skip_ws(s);
    return !*s->p;
}

void as_jw_json_first(as_jw *w, const char *text)
{
    sep(w);
    size_t mark = w->b.len;
    if (text) {
        scan s = {text, w};
        if (scan_first(&s)) return;
        w->b.len = mark;
        json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
        json_t *e = json_array_get(v, 0);
        int rc = e ? json_dump_callback(e, dump_cb, w, AS_JSON_DUMP_FLAGS | JSON_ENCODE_ANY) : -1;
        json_decref(v);
        if (rc == 0) return;
        w->b.len = mark;
    }
    put(w, "null", 4);
}

void as_jw_kstr(as_jw *w, const char *key, const char *s)
{
    as_jw_key(w, key);
    as_jw_str(w, s);
}

void as_jw_kint(as_jw *w, const char *key, int64_t v)
{
    as_jw_key(w, key);
    as_jw_int(w, v);
}

void as_jw_kbool(as_jw *w, const char *key, bool v)
{
    as_jw_key(w, key);
    as_jw_bool(w, v);
}

void as_jw_knull(as_jw *w, const char *key)
{
    as_jw_key(w, key);
    as_jw_null(w);
}

void as_jw_kround(as_jw *w, const char *key, double v, int decimals)
{
    as_jw_key(w, key);
    as_jw_round(w, v, decimals);
}

void as_jw_kjson(as_jw *w, const char *key, const char *text, const char *fallback)
{
    as_jw_key(w, key);
    as_jw_json(w, text, fallback);
}
