/* One JSON value read from its text as jansson reads it, without a JSON
 * library (as_json_value.h). jansson made a json_t of every value: in the
 * search index's build (15% of its main thread while it read the products,
 * about 2 s at 1,000,000 products), and a third of the evaluation of the
 * verification rows, which the build does for 3,000,000 rows. The reading is
 * jansson's: a text that is not valid UTF-8, not JSON, or more than one value
 * is no value; an integer too large for a 64-bit one or a real that
 * overflows is refused (jansson's "too big integer", "real number
 * overflow"); an integer is read as the integer ("-0" is 0), a real by
 * strtod; arrays and objects are read past, to a depth. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "as_json_value.h"
#include "as_util.h"

typedef struct reader {
    as_mem *m;
    const char *p;
} reader;

static void ws(reader *r)
{
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
        r->p++;
}

static int hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static char *put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | cp >> 12);
        *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | cp >> 18);
        *o++ = (char)(0x80 | (cp >> 12 & 0x3F));
        *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* A string at r->p (its '"'), decoded: its text on r->m; NULL when malformed
 * (an escape JSON has not, a lone surrogate, \u0000, a control character). */
static const char *string(reader *r)
{
    const char *s = ++r->p, *e = s;
    bool escaped = false;
    for (; *e != '"'; e++) {
        if ((unsigned char)*e < 0x20) return NULL; /* the end too */
        if (*e == '\\') {
            escaped = true;
            if (!*++e) return NULL;
        }
    }
    r->p = e + 1;
    if (!escaped) return as_strndup(r->m, s, (size_t)(e - s));
    char *out = as_alloc_raw(r->m, (size_t)(e - s) + 1), *o = out; /* escapes only shrink */
    for (const char *q = s; q < e; q++) {
        if (*q != '\\') {
            *o++ = *q;
            continue;
        }
        switch (*++q) {
        case '"':
            *o++ = '"';
            break;
        case '\\':
            *o++ = '\\';
            break;
        case '/':
            *o++ = '/';
            break;
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'n':
            *o++ = '\n';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 't':
            *o++ = '\t';
            break;
        case 'u': {
            if (e - q < 5) return NULL;
            int cp = hex4(q + 1);
            q += 4;
            if (cp <= 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) return NULL;
            if (cp >= 0xD800 && cp <= 0xDBFF) { /* a pair, or nothing */
                int lo = e - q >= 7 && q[1] == '\\' && q[2] == 'u' ? hex4(q + 3) : -1;
                if (lo < 0xDC00 || lo > 0xDFFF) return NULL;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                q += 6;
            }
            o = put_utf8(o, (unsigned)cp);
            break;
        }
        default:
            return NULL;
        }
    }
    *o = '\0';
    return out;
}

/* The C locale's numbers, made once: strtod in it reads JSON's '.' whatever
 * locale the process set (another module of httpd may set one that writes
 * a decimal comma); NULL when it could not be made (then the process's). */
static locale_t c_numbers;
static once_flag c_numbers_once = ONCE_FLAG_INIT;

static void c_numbers_make(void)
{
    c_numbers = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

static const char *digits(const char *e)
{
    while (*e >= '0' && *e <= '9')
        e++;
    return e;
}

/* A number at r->p: JSON's, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
 * as jansson reads it: without a fraction or an exponent an integer (strtoll,
 * refused when out of range), else a real (strtod in the C locale, which
 * alone would take "01" and "1." too; refused when it overflows). */
static bool number(reader *r, double *out)
{
    const char *s = r->p, *e = s;
    if (*e == '-') e++;
    if (*e < '0' || *e > '9') return false;
    e = *e == '0' ? e + 1 : digits(e);
    bool real = false;
    if (*e == '.') {
        if (e[1] < '0' || e[1] > '9') return false;
        e = digits(e + 1);
        real = true;
    }
    if (*e == 'e' || *e == 'E') {
        e++;
        if (*e == '+' || *e == '-') e++;
        if (*e < '0' || *e > '9') return false;
        e = digits(e);
        real = true;
    }
    char buf[64], *text = buf;
    size_t n = (size_t)(e - s);
    if (n < sizeof(buf)) {
        memcpy(buf, s, n);
        buf[n] = '\0';
    } else {
        text = as_strndup(r->m, s, n);
    }
    char *end;
    errno = 0;
    if (!real) {
        long long v = strtoll(text, &end, 10);
        if (errno == ERANGE || end != text + n) return false;
        *out = (double)v;
    } else {
        call_once(&c_numbers_once, c_numbers_make);
        locale_t was = c_numbers ? uselocale(c_numbers) : (locale_t)0;
        *out = strtod(text, &end);
        bool overflow = errno == ERANGE && (*out == HUGE_VAL || *out == -HUGE_VAL);
        if (c_numbers) uselocale(was);
        if (overflow || end != text + n) return false;
    }
    r->p = e;
    return true;
}

static bool word(reader *r, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(r->p, w, n) != 0) return false;
    r->p += n;
    return true;
}

/* After a member of a list that `close` ends: 1 when a ',' says another
 * follows, 0 when the list ended, -1 when neither. */
static int after_member(reader *r, char close)
{
    ws(r);
    if (*r->p == ',') {
        r->p++;
        ws(r);
        return 1;
    }
    if (*r->p != close) return -1;
    r->p++;
    return 0;
}

static bool value(reader *r, as_json_value *v, int depth);

/* An array or object: read past, to the depth JSON texts are nested here. */
static bool composite(reader *r, int depth)
{
    if (depth > 32) return false;
    char close = *r->p == '[' ? ']' : '}';
    r->p++;
    ws(r);
    if (*r->p == close) {
        r->p++;
        return true;
    }
    for (;;) {
        as_json_value ignored;
        if (close == '}') {
            if (*r->p != '"' || !string(r)) return false;
            ws(r);
            if (*r->p++ != ':') return false;
            ws(r);
        }
        if (!value(r, &ignored, depth + 1)) return false;
        int more = after_member(r, close);
        if (more <= 0) return more == 0;
    }
}

static bool value(reader *r, as_json_value *v, int depth)
{
    memset(v, 0, sizeof(*v));
    switch (*r->p) {
    case '"':
        v->kind = AS_JSON_STRING;
        return (v->text = string(r)) != NULL;
    case 't':
        v->kind = AS_JSON_TRUE;
        return word(r, "true");
    case 'f':
        v->kind = AS_JSON_FALSE;
        return word(r, "false");
    case 'n':
        v->kind = AS_JSON_NULL;
        return word(r, "null");
    case '[':
    case '{':
        v->kind = AS_JSON_OTHER;
        return composite(r, depth);
    default:
        v->kind = AS_JSON_NUMBER;
        return number(r, &v->number);
    }
}

as_json_value as_json_value_read(as_mem *m, const char *json)
{
    static const as_json_value absent = {AS_JSON_ABSENT, 0, NULL};
    if (!json || !as_utf8_valid(json, strlen(json))) return absent;
    reader r = {m, json};
    as_json_value v;
    ws(&r);
    if (!value(&r, &v, 0)) return absent;
    ws(&r);
    return *r.p ? absent : v;
}

json_t *as_json_parse_or(const char *text, json_t *fallback)
{
    json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    if (!v) return fallback;
    json_decref(fallback);
    return v;
}
