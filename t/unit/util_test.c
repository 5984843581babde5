/* as_util: dates, times, euros, UTF-8, integers, path segments, rounding. */
#include "as_crypto.h"
#include "unit_check.h"

#include <math.h>

#include "as_util.h"

typedef struct date_row {
    const char *s;
    bool ok;
    int64_t days;
} date_row;

static void test_date_parse(void **state)
{
    as_mem *m = unit_mem(state);
    const date_row rows[] = {
        {"1970-01-01", true, 0},
        {"1970-01-02", true, 1},
        {"2000-02-29", true, 11016},
        {"2026-01-15", true, 20468},
        {"2026-03-01", true, 20513},
        {"2028-02-29", true, 21243},
        {"2100-03-01", true, 47541},
        {"2400-02-29", true, 157113},
        {"9999-12-31", true, 2932896},
        {"2026-02-29", false, 0},
        {"2100-02-29", false, 0},
        {"1900-02-29", false, 0},
        {"2026-02-30", false, 0},
        {"2026-04-31", false, 0},
        {"2026-06-31", false, 0},
        {"2026-09-31", false, 0},
        {"2026-11-31", false, 0},
        {"2026-12-32", false, 0},
        {"2026-13-01", false, 0},
        {"2026-00-01", false, 0},
        {"2026-01-00", false, 0},
        {"1969-12-31", false, 0},
        {"2026-1-15", false, 0},
        {"2026-01-5", false, 0},
        {"26-01-15", false, 0},
        {"2026/01/15", false, 0},
        {"2026-01-15 ", false, 0},
        {" 2026-01-15", false, 0},
        {"2026-01-15T00:00:00Z", false, 0},
        {"2026-0a-15", false, 0},
        {"+026-01-15", false, 0},
        {"", false, 0},
        {NULL, false, 0},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const char *label = as_printf(m, "row %zu: %s", i, rows[i].s ? rows[i].s : "NULL");
        int64_t d = -12345;
        bool ok = as_date_parse(rows[i].s, &d);
        CHECK_INT(label, ok, rows[i].ok);
        if (ok && rows[i].ok) {
            CHECK_INT(label, d, rows[i].days);
            CHECK_STR(label, as_date_format(m, d), rows[i].s);
        }
    }
    ROWS_DONE();
}

static void test_date_format(void **state)
{
    as_mem *m = unit_mem(state);
    const struct {
        int64_t days;
        const char *want;
    } rows[] = {
        {0, "1970-01-01"},       {1, "1970-01-02"},        {-1, "1969-12-31"},
        {59, "1970-03-01"},      {11016, "2000-02-29"},    {20468, "2026-01-15"},
        {21243, "2028-02-29"},   {47541, "2100-03-01"},    {2932896, "9999-12-31"},
        {-719468, "0000-03-01"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++)
        CHECK_STR(rows[i].want, as_date_format(m, rows[i].days), rows[i].want);
    /* Round trip over sixty years, one day at a time. */
    for (int64_t d = 0; d < 366 * 60; d++) {
        int64_t back = -1;
        const char *s = as_date_format(m, d);
        if (!as_date_parse(s, &back) || back != d) {
            CHECK_INT(s, back, d);
            break;
        }
    }
    ROWS_DONE();
}

static void test_time_format(void **state)
{
    as_mem *m = unit_mem(state);
    const struct {
        int64_t t;
        const char *want;
    } rows[] = {
        {0, "1970-01-01T00:00:00Z"},
        {1, "1970-01-01T00:00:01Z"},
        {59, "1970-01-01T00:00:59Z"},
        {3600, "1970-01-01T01:00:00Z"},
        {86399, "1970-01-01T23:59:59Z"},
        {86400, "1970-01-02T00:00:00Z"},
        {-1, "1969-12-31T23:59:59Z"},
        {-86400, "1969-12-31T00:00:00Z"},
        {-86401, "1969-12-30T23:59:59Z"},
        {951782400, "2000-02-29T00:00:00Z"},
        /* `date -u -d @1795212300 +%Y-%m-%dT%H:%M:%SZ` */
        {1795212300, "2026-11-20T22:05:00Z"},
        {1798761599, "2026-12-31T23:59:59Z"},
        {2147483647, "2038-01-19T03:14:07Z"},
        {2147483648LL, "2038-01-19T03:14:08Z"},
        {253402300799LL, "9999-12-31T23:59:59Z"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const char *s = as_time_format(m, rows[i].t);
        CHECK_STR(rows[i].want, s, rows[i].want);
        int64_t back = -7;
        if (rows[i].t >= 0) {
            CHECK(rows[i].want, as_time_parse(s, &back));
            CHECK_INT(rows[i].want, back, rows[i].t);
        }
    }
    ROWS_DONE();
}

static void test_time_parse_invalid(void **state)
{
    (void)state;
    const char *rows[] = {
        "",
        "2026-11-20",
        "2026-11-20T22:05:00",
        "2026-11-20T22:05:00z",
        "2026-11-20 22:05:00Z",
        "2026-11-20T24:00:00Z",
        "2026-11-20T22:60:00Z",
        "2026-11-20T22:05:60Z",
        "2026-02-29T00:00:00Z",
        "2026-11-20T22:05:00+00:00",
        "2026-11-20T2:05:00Z",
        "2026-11-20T22:05:0aZ",
        "2026-11-20T22-05-00Z",
        NULL,
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        int64_t t;
        CHECK(rows[i] ? rows[i] : "NULL", !as_time_parse(rows[i], &t));
    }
    ROWS_DONE();
}

static void test_eur_format(void **state)
{
    as_mem *m = unit_mem(state);
    const struct {
        int64_t cents;
        const char *want;
    } rows[] = {
        {1250, "\xE2\x82\xAC" "12.50"},
        {1200, "\xE2\x82\xAC" "12.00"},
        {0, "\xE2\x82\xAC" "0.00"},
        {5, "\xE2\x82\xAC" "0.05"},
        {99, "\xE2\x82\xAC" "0.99"},
        {100, "\xE2\x82\xAC" "1.00"},
        {100000000, "\xE2\x82\xAC" "1000000.00"},
        {-1250, "-\xE2\x82\xAC" "12.50"},
        {-5, "-\xE2\x82\xAC" "0.05"},
        {-100, "-\xE2\x82\xAC" "1.00"},
        {INT64_MAX, "\xE2\x82\xAC" "92233720368547758.07"},
        {-INT64_MAX, "-\xE2\x82\xAC" "92233720368547758.07"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++)
        CHECK_STR(rows[i].want, as_eur_format(m, rows[i].cents), rows[i].want);
    ROWS_DONE();
}

static void test_eur_parse(void **state)
{
    (void)state;
    const struct {
        const char *s;
        int64_t max;
        bool ok;
        int64_t cents;
    } rows[] = {
        {"12", 100000, true, 1200},
        {"12.5", 100000, true, 1250},
        {"12.50", 100000, true, 1250},
        {"0.01", 100000, true, 1},
        {"0", 100000, true, 0},
        {"007.10", 100000, true, 710},
        {"1000", 100000, true, 100000},
        {"1000.01", 100000, false, 0},
        {"999999999999", INT64_MAX, true, 99999999999900LL},
        {"9999999999999", INT64_MAX, false, 0},
        {"12.505", 100000, false, 0},
        {"-1", 100000, false, 0},
        {"+1", 100000, false, 0},
        {"1e3", 100000, false, 0},
        {"", 100000, false, 0},
        {NULL, 100000, false, 0},
        {".5", 100000, false, 0},
        {"5.", 100000, false, 0},
        {"1,50", 100000, false, 0},
        {" 1", 100000, false, 0},
        {"1 ", 100000, false, 0},
        {"1.5.0", 100000, false, 0},
        {"0x10", 100000, false, 0},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const char *label = rows[i].s ? rows[i].s : "NULL";
        int64_t c = -1;
        bool ok = as_eur_parse_cents(rows[i].s, rows[i].max, &c);
        CHECK_INT(label, ok, rows[i].ok);
        if (ok && rows[i].ok) CHECK_INT(label, c, rows[i].cents);
    }
    ROWS_DONE();
}

typedef struct utf8_row {
    const char *name;
    const char *s;
    size_t n; /* 0: strlen(s) */
    bool ok;
} utf8_row;

static void test_utf8_valid(void **state)
{
    (void)state;
    const utf8_row rows[] = {
        {"empty", "", 0, true},
        {"ascii", "hello, world", 0, true},
        {"U+0080", "\xC2\x80", 0, true},
        {"U+00E9", "caf\xC3\xA9", 0, true},
        {"U+07FF", "\xDF\xBF", 0, true},
        {"U+0800", "\xE0\xA0\x80", 0, true},
        {"U+20AC", "\xE2\x82\xAC", 0, true},
        {"U+D7FF", "\xED\x9F\xBF", 0, true},
        {"U+E000", "\xEE\x80\x80", 0, true},
        {"U+FFFD", "\xEF\xBF\xBD", 0, true},
        {"U+FFFF", "\xEF\xBF\xBF", 0, true},
        {"U+10000", "\xF0\x90\x80\x80", 0, true},
        {"U+1F600", "\xF0\x9F\x98\x80", 0, true},
        {"U+10FFFF", "\xF4\x8F\xBF\xBF", 0, true},
        {"mixed", "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z", 0, true},
        /* overlong */
        {"overlong NUL", "\xC0\x80", 0, false},
        {"overlong /", "\xC0\xAF", 0, false},
        {"overlong C1", "\xC1\xBF", 0, false},
        {"overlong 3-byte", "\xE0\x80\xAF", 0, false},
        {"overlong 3-byte max", "\xE0\x9F\xBF", 0, false},
        {"overlong 4-byte", "\xF0\x80\x80\xAF", 0, false},
        {"overlong 4-byte max", "\xF0\x8F\xBF\xBF", 0, false},
        /* surrogates */
        {"surrogate D800", "\xED\xA0\x80", 0, false},
        {"surrogate DBFF", "\xED\xAF\xBF", 0, false},
        {"surrogate DC00", "\xED\xB0\x80", 0, false},
        {"surrogate DFFF", "\xED\xBF\xBF", 0, false},
        {"surrogate pair", "\xED\xA0\xBD\xED\xB8\x80", 0, false},
        /* beyond U+10FFFF and bytes that never occur */
        {"U+110000", "\xF4\x90\x80\x80", 0, false},
        {"F5", "\xF5\x80\x80\x80", 0, false},
        {"F8 5-byte", "\xF8\x88\x80\x80\x80", 0, false},
        {"FC 6-byte", "\xFC\x84\x80\x80\x80\x80", 0, false},
        {"FE", "\xFE", 0, false},
        {"FF", "\xFF", 0, false},
        /* stray continuation bytes */
        {"lone 80", "\x80", 0, false},
        {"lone BF", "a\xBF", 0, false},
        {"two continuations", "\xC3\xA9\xA9", 0, false},
        /* truncated sequences */
        {"truncated 2 of 2", "\xC3", 0, false},
        {"truncated at end", "abc\xC3", 0, false},
        {"truncated 2 of 3", "\xE2\x82", 0, false},
        {"truncated 1 of 3", "\xE2", 0, false},
        {"truncated 3 of 4", "\xF0\x9F\x98", 0, false},
        {"truncated then ascii", "\xE2\x82" "a", 0, false},
        {"bad continuation", "\xC3\x41", 0, false},
        {"bad continuation 3", "\xE2\x28\xA1", 0, false},
        {"bad continuation 4", "\xF0\x9F\x28\x80", 0, false},
        {"cut by n", "\xC3\xA9", 1, false},
        {"cut by n 3", "\xE2\x82\xAC", 2, false},
        {"embedded NUL", "a\0b", 3, false},
        {"NUL only", "\0", 1, false},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        size_t n = rows[i].n ? rows[i].n : strlen(rows[i].s);
        CHECK_INT(rows[i].name, as_utf8_valid(rows[i].s, n), rows[i].ok);
    }
    ROWS_DONE();
}

static void test_utf8_len(void **state)
{
    (void)state;
    const struct {
        const char *s;
        size_t len;
    } rows[] = {
        {"", 0},
        {"abc", 3},
        {"\xC3\xA9", 1},
        {"\xE2\x82\xAC" "12", 3},
        {"\xF0\x9F\x98\x80", 1},
        {"a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z", 5},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++)
        CHECK_INT(rows[i].s, as_utf8_len(rows[i].s), rows[i].len);
    ROWS_DONE();
}

/* What must not reach a person or an agent unseen: each kind found, the
 * characters around it left alone; escaped as JSON would, so nothing moves
 * a terminal, reorders a line or starts one. */
static void test_text_hidden(void **state)
{
    (void)state;
    as_arena *a = as_arena_create();
    as_mem m = as_arena_mem(a);
    const struct {
        const char *s, *plain, *quoted;
    } rows[] = {
        {"plain \xC3\xBC \xE2\x80\x93 \xC3\x97", "plain \xC3\xBC \xE2\x80\x93 \xC3\x97",
         "\"plain \xC3\xBC \xE2\x80\x93 \xC3\x97\""},
        {"a\x1b[31mb", "a\\u001b[31mb", "\"a\\u001b[31mb\""},
        {"x\nSYSTEM: y\r", "x\\u000aSYSTEM: y\\u000d", "\"x\\u000aSYSTEM: y\\u000d\""},
        {"\x7f\xC2\x85", "\\u007f\\u0085", "\"\\u007f\\u0085\""},
        {"ab\xE2\x80\xAE"
         "cd",
         "ab\\u202ecd", "\"ab\\u202ecd\""},
        {"\xE2\x81\xA6\xE2\x81\xA9\xD8\x9C\xE2\x80\x8E", "\\u2066\\u2069\\u061c\\u200e",
         "\"\\u2066\\u2069\\u061c\\u200e\""},
        {"z\xE2\x80\x8B\xE2\x80\x8D\xE2\x81\xA0\xEF\xBB\xBF", "z\\u200b\\u200d\\u2060\\ufeff",
         "\"z\\u200b\\u200d\\u2060\\ufeff\""},
        {"\xE2\x80\xA8", "\\u2028", "\"\\u2028\""},
        {"t\xF3\xA0\x81\x81", "t\\udb40\\udc41", "\"t\\udb40\\udc41\""}, /* U+E0041, a tag */
        {"say \"hi\" \\", "say \"hi\" \\", "\"say \\\"hi\\\" \\\\\""},
        {"\xE2\x9D\xA4\xEF\xB8\x8F", "\xE2\x9D\xA4\xEF\xB8\x8F", "\"\xE2\x9D\xA4\xEF\xB8\x8F\""},
        {"bad\xFF", "bad?", "\"bad?\""},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        CHECK_STR(rows[i].plain, as_text_escape(&m, rows[i].s), rows[i].plain);
        as_buf b;
        as_buf_init(&b, &m);
        as_text_escape_to(&b, rows[i].s, strlen(rows[i].s), true);
        CHECK_STR(rows[i].quoted, as_buf_str(&b), rows[i].quoted);
    }
    CHECK_STR("ESC", as_text_hidden(0x1b), "a control character");
    CHECK_STR("RLO", as_text_hidden(0x202e), "a bidirectional control");
    CHECK_STR("ZWJ", as_text_hidden(0x200d), "a zero-width character");
    CHECK("tab is a control", as_text_hidden('\t') != NULL);
    CHECK("space is not", as_text_hidden(' ') == NULL);
    CHECK("VS16 is not", as_text_hidden(0xFE0F) == NULL);
    CHECK("U+FFFC is not", as_text_hidden(0xFFFC) == NULL);
    ROWS_DONE();
    as_arena_destroy(a);
}

typedef struct int_row {
    const char *s;
    int64_t min, max;
    bool ok;
    int64_t v;
} int_row;

static void check_int_rows(const int_row *rows, size_t n, int *failures)
{
    int unit_failures_ = 0;
    for (size_t i = 0; i < n; i++) {
        const char *label = rows[i].s ? rows[i].s : "NULL";
        int64_t v = 4242;
        bool ok = as_int_parse(rows[i].s, rows[i].min, rows[i].max, &v);
        CHECK_INT(label, ok, rows[i].ok);
        if (ok && rows[i].ok) CHECK_INT(label, v, rows[i].v);
        if (!ok) CHECK_INT(label, v, 4242); /* untouched on failure */
    }
    *failures += unit_failures_;
}

static void test_int_parse(void **state)
{
    (void)state;
    const int_row rows[] = {
        {"0", INT64_MIN, INT64_MAX, true, 0},
        {"-0", INT64_MIN, INT64_MAX, true, 0},
        {"7", INT64_MIN, INT64_MAX, true, 7},
        {"007", INT64_MIN, INT64_MAX, true, 7},
        {"-123", INT64_MIN, INT64_MAX, true, -123},
        {"123456789012", INT64_MIN, INT64_MAX, true, 123456789012LL},
        {"922337203685477580", INT64_MIN, INT64_MAX, true, 922337203685477580LL},
        {"-922337203685477580", INT64_MIN, INT64_MAX, true, -922337203685477580LL},
        /* overflow */
        {"9223372036854775808", INT64_MIN, INT64_MAX, false, 0},
        {"9223372036854775810", INT64_MIN, INT64_MAX, false, 0},
        {"-9223372036854775809", INT64_MIN, INT64_MAX, false, 0},
        {"18446744073709551616", INT64_MIN, INT64_MAX, false, 0},
        {"18446744073709551615", INT64_MIN, INT64_MAX, false, 0},
        {"99999999999999999999999999", INT64_MIN, INT64_MAX, false, 0},
        {"-99999999999999999999999999", INT64_MIN, INT64_MAX, false, 0},
        /* bounds */
        {"1", 1, 100, true, 1},
        {"100", 1, 100, true, 100},
        {"0", 1, 100, false, 0},
        {"101", 1, 100, false, 0},
        {"-1", 0, 10, false, 0},
        {"-5", -5, 5, true, -5},
        {"-6", -5, 5, false, 0},
        /* syntax */
        {"", 0, 10, false, 0},
        {NULL, 0, 10, false, 0},
        {"-", 0, 10, false, 0},
        {"--1", -10, 10, false, 0},
        {"+1", 0, 10, false, 0},
        {" 1", 0, 10, false, 0},
        {"1 ", 0, 10, false, 0},
        {"1a", 0, 10, false, 0},
        {"0x1", 0, 10, false, 0},
        {"1.0", 0, 10, false, 0},
        {"1e1", 0, 100, false, 0},
        {"\xD9\xA1", 0, 10, false, 0}, /* ARABIC-INDIC DIGIT ONE */
    };
    ROWS_BEGIN;
    check_int_rows(rows, N_ROWS(rows), &unit_failures_);
    ROWS_DONE();
}

/* The extreme values themselves are in range and must parse. */
static void test_int_parse_limits(void **state)
{
    (void)state;
    const int_row rows[] = {
        {"9223372036854775807", INT64_MIN, INT64_MAX, true, INT64_MAX},
        {"-9223372036854775807", INT64_MIN, INT64_MAX, true, -INT64_MAX},
        {"-9223372036854775808", INT64_MIN, INT64_MAX, true, INT64_MIN},
        {"9223372036854775800", INT64_MIN, INT64_MAX, true, 9223372036854775800LL},
    };
    ROWS_BEGIN;
    check_int_rows(rows, N_ROWS(rows), &unit_failures_);
    ROWS_DONE();
}

/* as_fixed_text is printf's "%.Nf" of as_round(v, N), less the trailing zeros
 * of the fraction (and the point of a whole number), for every size it takes. */
static void test_fixed_text(void **state)
{
    as_mem *m = unit_mem(state);
    ROWS_BEGIN;
    static const double fixed[] = {0,      -0.0,    0.005,   -0.004,    12.5,   12.50001,
                                   0.966,  100,     -20.25,  1e-7,      2.675,  1.005,
                                   0.125,  9.995,   1e12,    9.99e12,   1e13,   -9.99e12,
                                   0.8675, INFINITY};
    unsigned long long x = 7;
    for (int i = 0; i < 200000 + (int)N_ROWS(fixed); i++) {
        double v;
        int d;
        if (i < (int)N_ROWS(fixed)) {
            v = fixed[i];
            d = 2;
        } else {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v = ldexp((double)(x % 2000001) / 1000.0 - 1000.0, (int)(x >> 58) - 30);
            d = (int)((x >> 40) % 7);
        }
        char got[AS_FIXED_TEXT];
        double r = as_round(v, d);
        bool fast = as_fixed_text(got, v, d);
        CHECK(as_printf(m, "%.17g: fast below 15 digits", v),
              fast == (fabs(round(v * pow(10, d))) < 1e15));
        if (!fast) continue;
        char *want = r == floor(r) ? as_printf(m, "%.0f", r) : as_printf(m, "%.*f", d, r);
        if (r != floor(r)) {
            size_t n = strlen(want);
            while (want[n - 1] == '0')
                want[--n] = '\0';
        }
        if (strcmp(got, want) != 0) CHECK_STR(as_printf(m, "%.17g to %d", v, d), got, want);
    }
    ROWS_DONE();
}

/* as_round_half is round(): the same double, bit for bit (a zero's sign
 * too), at the halves, near the integer conversion's limit, beyond it, and
 * over random doubles of every size. */
static void test_round_half(void **state)
{
    as_mem *m = unit_mem(state);
    ROWS_BEGIN;
    static const double edge[] = {0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
                                  0.49999999999999994, -0.49999999999999994, 0.1, -0.1,
                                  4503599627370495.5, -4503599627370495.5, 4503599627370497.0,
                                  9007199254740993.0, 4611686018427387904.0, -4611686018427387904.0,
                                  4611686018427386880.0, 9.3e18, -9.3e18, 1e300, -1e300,
                                  INFINITY, -INFINITY, 5e-324, -5e-324, 96.65 * 100, 0.035 * 100};
    unsigned long long x = 11;
    for (int i = 0; i < 400000 + (int)N_ROWS(edge); i++) {
        double v;
        if (i < (int)N_ROWS(edge)) {
            v = edge[i];
        } else {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if (i & 1) { /* halves and near-halves of small sizes, as prices and scores are */
                v = (double)((int64_t)(x % 2000001) - 1000000) / 2.0 + ((x >> 32) % 3 - 1.0) * 1e-9;
            } else { /* any bit pattern that is a finite double */
                memcpy(&v, &x, sizeof(v));
                if (!isfinite(v)) continue;
            }
        }
        double got = as_round_half(v), want = round(v);
        if (memcmp(&got, &want, sizeof(got)) != 0)
            CHECK(as_printf(m, "round(%.17g): %.17g, not %.17g", v, got, want), false);
    }
    double nan_got = as_round_half(NAN);
    CHECK("round(NaN) is NaN", isnan(nan_got));
    ROWS_DONE();
}

static void test_pct_decode_segment(void **state)
{
    as_mem *m = unit_mem(state);
    const struct {
        const char *in;
        bool ok;
        const char *out;
    } rows[] = {
        {"abc", true, "abc"},
        {"SOAP-001", true, "SOAP-001"},
        {"a%20b", true, "a b"},
        {"a+b", true, "a+b"},
        {"caf%C3%A9", true, "caf\xC3\xA9"},
        {"%41", true, "A"},
        {"", true, ""},
        {"a%2Fb", false, NULL},
        {"a%2fb", false, NULL},
        {"%00", false, NULL},
        {"%C3", false, NULL},
        {"%C0%AF", false, NULL},
        {"%zz", false, NULL},
        {"%4", false, NULL},
        {"abc%", false, NULL},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        char *out = NULL;
        bool ok = as_pct_decode_segment(m, rows[i].in, strlen(rows[i].in), &out);
        CHECK_INT(rows[i].in, ok, rows[i].ok);
        if (ok && rows[i].ok) CHECK_STR(rows[i].in, out, rows[i].out);
    }
    /* Only the first n bytes count. */
    char *out = NULL;
    CHECK("prefix", as_pct_decode_segment(m, "abc/def", 3, &out));
    CHECK_STR("prefix", out, "abc");
    ROWS_DONE();
}

static void test_round(void **state)
{
    as_mem *m = unit_mem(state);
    const struct {
        double v;
        int d;
        double want;
    } rows[] = {
        {0.35, 2, 0.35}, {2.5, 0, 3},      {-2.5, 0, -3},  {1.25, 1, 1.3},
        {87.5, 0, 88},   {21.875, 2, 21.88}, {0.333333, 3, 0.333}, {100, 1, 100},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const char *label = as_printf(m, "%g to %d", rows[i].v, rows[i].d);
        CHECK_NEAR(label, as_round(rows[i].v, rows[i].d), rows[i].want, 1e-12);
        json_t *j = as_json_round(rows[i].v, rows[i].d);
        CHECK(label, json_is_real(j));
        CHECK_NEAR(label, json_real_value(j), rows[i].want, 1e-12);
        json_decref(j);
    }
    json_t *j = as_json_round(0.35, 2);
    char *text = json_dumps(j, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    CHECK_STR("0.35 text", text, "0.35");
    free(text);
    json_decref(j);
    CHECK_STR("lower", as_lower(m, "AbC-\xC3\x89 9"), "abc-\xC3\x89 9");
    ROWS_DONE();
}

/* SipHash-2-4's published test vectors: key 00..0f, messages 00..(n-1). */
static void test_siphash24(void **state)
{
    (void)state;
    unsigned char key[16], msg[64];
    for (int i = 0; i < 16; i++)
        key[i] = (unsigned char)i;
    for (int i = 0; i < 64; i++)
        msg[i] = (unsigned char)i;
    assert_true(as_siphash24(key, msg, 0) == 0x726fdb47dd0e0e31ull);
    assert_true(as_siphash24(key, msg, 1) == 0x74f839c593dc67fdull);
    assert_true(as_siphash24(key, msg, 8) == 0x93f5f5799a932462ull);
    assert_true(as_siphash24(key, msg, 15) == 0xa129ca6149be45e5ull); /* the paper's */
    key[0] ^= 1; /* another key, another hash */
    assert_true(as_siphash24(key, msg, 15) != 0xa129ca6149be45e5ull);
}

/* Scratch memory: zeroed on every use, the blocks kept across resets up to
 * the bytes asked, and large and small allocations side by side. */
static void test_scratch(void **state)
{
    (void)state;
    as_scratch *s = as_scratch_create();
    as_mem m = as_scratch_mem(s);
    size_t kept = 0;
    for (int round = 0; round < 3; round++) {
        unsigned char *big = as_alloc(&m, 1 << 20), *small = as_alloc(&m, 100);
        unsigned char *mid = as_alloc(&m, 200000);
        for (size_t i = 0; i < (1 << 20); i++)
            assert_int_equal(big[i], 0);
        for (size_t i = 0; i < 100; i++)
            assert_int_equal(small[i], 0);
        for (size_t i = 0; i < 200000; i++)
            assert_int_equal(mid[i], 0);
        /* no two overlap */
        assert_true(small + 100 <= big || small >= big + (1 << 20));
        assert_true(mid + 200000 <= big || mid >= big + (1 << 20));
        assert_true(mid + 200000 <= small || mid >= small + 100);
        memset(big, 0xAB, 1 << 20);
        memset(small, 0xCD, 100);
        memset(mid, 0xEF, 200000);
        size_t k = as_scratch_reset(s, (size_t)8 << 20);
        assert_true(k >= (1 << 20) + 200000 + 100);
        if (round) assert_int_equal(k, kept); /* the same blocks, reused */
        kept = k;
    }
    assert_int_equal(as_scratch_reset(s, 0), 0); /* nothing kept: all given back */
    unsigned char *again = as_alloc(&m, 5000);
    for (size_t i = 0; i < 5000; i++)
        assert_int_equal(again[i], 0);
    as_scratch_destroy(s);
}

/* The confirmation page's times, checked against `date -u -d @T`. */
static void test_time_human(void **state)
{
    as_mem *m = unit_mem(state);
    const struct {
        int64_t t;
        const char *want;
    } rows[] = {
        {0, "Thu 1 Jan 1970, 00:00 UTC"},           {1795212300, "Fri 20 Nov 2026, 22:05 UTC"},
        {1795212359, "Fri 20 Nov 2026, 22:05 UTC"}, /* minutes shown, not rounded up */
        {951782400, "Tue 29 Feb 2000, 00:00 UTC"},  {-86401, "Tue 30 Dec 1969, 23:59 UTC"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++)
        CHECK_STR(rows[i].want, as_time_human(m, rows[i].t), rows[i].want);
    ROWS_DONE();
    assert_string_equal(as_date_human(m, 20468), "Thu 15 Jan 2026");
    assert_string_equal(as_date_human(m, -1), "Wed 31 Dec 1969");
}

static void test_time_relative(void **state)
{
    as_mem *m = unit_mem(state);
    const int64_t now = 1795212300;
    const struct {
        int64_t d;
        const char *want;
    } rows[] = {
        {0, "just now"},
        {1, "in less than a minute"},
        {59, "in less than a minute"},
        {60, "in 1 minute"},
        {9 * 60 + 59, "in 9 minutes"},
        {3599, "in 59 minutes"},
        {3600, "in 1 hour"},
        {3600 + 59, "in 1 hour"},
        {3600 + 30 * 60, "in 1 hour 30 minutes"},
        {2 * 3600 - 1, "in 1 hour 59 minutes"},
        {23 * 3600 + 59 * 60, "in 23 hours"}, /* a day's link, just opened */
        {86400, "in 24 hours"},
        {48 * 3600 - 1, "in 47 hours"},
        {48 * 3600, "in 2 days"},
        {-30, "less than a minute ago"},
        {-60, "1 minute ago"},
        {-5 * 3600, "5 hours ago"},
        {-3 * 86400, "3 days ago"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++)
        CHECK_STR(rows[i].want, as_time_relative(m, now + rows[i].d, now), rows[i].want);
    ROWS_DONE();
    assert_string_equal(as_date_relative(m, 100, 100), "today");
    assert_string_equal(as_date_relative(m, 101, 100), "tomorrow");
    assert_string_equal(as_date_relative(m, 99, 100), "yesterday");
    assert_string_equal(as_date_relative(m, 104, 100), "in 4 days");
    assert_string_equal(as_date_relative(m, 90, 100), "10 days ago");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_siphash24),
        UNIT_TEST(test_scratch),
        UNIT_TEST(test_date_parse),
        UNIT_TEST(test_date_format),
        UNIT_TEST(test_time_format),
        UNIT_TEST(test_time_parse_invalid),
        UNIT_TEST(test_eur_format),
        UNIT_TEST(test_eur_parse),
        UNIT_TEST(test_utf8_valid),
        UNIT_TEST(test_utf8_len),
        UNIT_TEST(test_text_hidden),
        UNIT_TEST(test_int_parse),
        UNIT_TEST(test_int_parse_limits),
        UNIT_TEST(test_pct_decode_segment),
        UNIT_TEST(test_round),
        UNIT_TEST(test_fixed_text),
        UNIT_TEST(test_round_half),
        UNIT_TEST(test_time_human),
        UNIT_TEST(test_time_relative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
