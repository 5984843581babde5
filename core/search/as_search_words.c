/* Search, stage 1: the words of a text (as_search_words.h). The same code
 * reads products and queries, so both sides fold, split, write units and stem
 * the same way. */
#include "as_search_words.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <libstemmer.h>

#include "as_devices.h"

/* ---- folding ---- */

/* as_text_fold (lower case, Latin diacritics), then ß and ẞ as "ss".
 * as_text_fold keeps ß as a letter of its own (the rules of the full-text index
 * it was written to mirror; devices and questions still read words with it),
 * so search does this last step itself. Never longer. */
static char *fold(as_mem *m, const char *s, size_t n)
{
    char *f = as_alloc(m, n + 1);
    size_t k = as_text_fold(s, n, f), r = 0, w = 0;
    while (r < k) {
        if (f[r] == '\xC3' && r + 1 < k && f[r + 1] == '\x9F') { /* ß U+00DF */
            f[w++] = 's', f[w++] = 's', r += 2;
        } else if (f[r] == '\xE1' && r + 2 < k && f[r + 1] == '\xBA' &&
                   f[r + 2] == '\x9E') { /* ẞ U+1E9E */
            f[w++] = 's', f[w++] = 's', r += 3;
        } else {
            f[w++] = f[r++];
        }
    }
    f[w] = '\0';
    return f;
}

/* ---- units ---- */

/* Units written one way. Kept small: the units consumables are sold by
 * (volume, length, power, voltage, weight, capacity, count), in English
 * singular and plural, US and British spelling, and the usual abbreviations. */
static const struct unit_word {
    const char *written;
    size_t len; /* of written */
    const char *unit;
} units[] = {
// clang-format off
#define U(written, unit) {written, sizeof(written) - 1, unit}
    U("l", "l"), U("liter", "l"), U("liters", "l"), U("litre", "l"), U("litres", "l"),
    U("ltr", "l"), U("ml", "ml"), U("mls", "ml"), U("milliliter", "ml"), U("milliliters", "ml"),
    U("millilitre", "ml"), U("millilitres", "ml"), U("m", "m"), U("meter", "m"), U("meters", "m"),
    U("metre", "m"), U("metres", "m"), U("cm", "cm"), U("centimeter", "cm"),
    U("centimeters", "cm"), U("centimetre", "cm"), U("centimetres", "cm"), U("mm", "mm"),
    U("millimeter", "mm"), U("millimeters", "mm"), U("millimetre", "mm"), U("millimetres", "mm"),
    U("w", "w"), U("watt", "w"), U("watts", "w"), U("v", "v"), U("volt", "v"), U("volts", "v"),
    U("g", "g"), U("gram", "g"), U("grams", "g"), U("kg", "kg"), U("kilogram", "kg"),
    U("kilograms", "kg"), U("inch", "in"), U("inches", "in"), U("mah", "mah"), U("pc", "pcs"),
    U("pcs", "pcs"), U("piece", "pcs"), U("pieces", "pcs"), U("pack", "pack"), U("packs", "pack"),
#undef U
// clang-format on
};

#define N_UNITS (sizeof(units) / sizeof(units[0]))

/* For each first byte, the lengths (below 32) of the units written with it:
 * every word of a catalogue asks unit_of, and almost none is a unit (the
 * scan of the table for each was 6% of reading a catalogue's products). */
static uint32_t unit_lens[256];
static pthread_once_t unit_lens_once = PTHREAD_ONCE_INIT;

static void unit_lens_make(void)
{
    for (size_t i = 0; i < N_UNITS; i++)
        if (units[i].len < 32) unit_lens[(unsigned char)units[i].written[0]] |= 1u << units[i].len;
}

static const char *unit_of(const char *folded)
{
    size_t n = strlen(folded);
    pthread_once(&unit_lens_once, unit_lens_make);
    if (n >= 32 || !(unit_lens[(unsigned char)folded[0]] >> n & 1)) return NULL;
    for (size_t i = 0; i < N_UNITS; i++)
        if (units[i].len == n && units[i].written[0] == folded[0] &&
            memcmp(units[i].written, folded, n) == 0)
            return units[i].unit;
    return NULL;
}

/* ---- stemming ---- */

/* One Snowball stemmer per thread (a stemmer is not thread-safe), made on first
 * use and deleted when the thread ends; nothing is allocated per call. */
static _Thread_local struct sb_stemmer *thread_stemmer;
static pthread_key_t stemmer_key;
static pthread_once_t stemmer_once = PTHREAD_ONCE_INIT;
static int stemmer_key_ok;

static void stemmer_delete(void *st)
{
    sb_stemmer_delete(st);
    thread_stemmer = NULL;
}

static void stemmer_key_make(void)
{
    stemmer_key_ok = pthread_key_create(&stemmer_key, stemmer_delete) == 0;
}

static struct sb_stemmer *stemmer(void)
{
    if (!thread_stemmer) {
        thread_stemmer = sb_stemmer_new("english", NULL);
        pthread_once(&stemmer_once, stemmer_key_make);
        if (thread_stemmer && stemmer_key_ok) pthread_setspecific(stemmer_key, thread_stemmer);
    }
    return thread_stemmer;
}

/* The stem of word on m, or word itself when it is its own stem, is not ASCII
 * or the stemmer fails. */
static const char *stem_or_same(as_mem *m, const char *word)
{
    size_t n = strlen(word);
    if (n == 0 || n > INT_MAX) return word;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)word[i] >= 0x80) return word;
    struct sb_stemmer *st = stemmer();
    if (!st) return word;
    const sb_symbol *s = sb_stemmer_stem(st, (const sb_symbol *)word, (int)n);
    int k = s ? sb_stemmer_length(st) : 0;
    if (k <= 0) return word;
    if ((size_t)k == n && memcmp(s, word, n) == 0) return word;
    return as_strndup(m, (const char *)s, (size_t)k);
}

const char *as_search_stem(as_mem *m, const char *word)
{
    if (!word) return NULL;
    const char *s = stem_or_same(m, word);
    return s == word ? as_strdup(m, word) : s;
}

/* ---- correction ---- */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int as_search_typo_max(const char *typed)
{
    size_t n = typed ? strlen(typed) : 0;
    if (n < 5 || is_digit(typed[0])) return 0;
    return n >= 9 ? 2 : 1;
}

/* as_search_distance with max 1: 0 when equal, 1 for one letter changed,
 * added or removed or two neighbours swapped, else 2; the edit is at their
 * first difference, and the rest must then be the same. One pass instead of
 * the table (most corrections allow one edit: words of 5 to 8 bytes). */
static int within_one(const char *a, size_t la, const char *b, size_t lb)
{
    size_t i = 0;
    while (i < la && i < lb && a[i] == b[i])
        i++;
    if (i == la && i == lb) return 0;
    if (la == lb) {
        if (memcmp(a + i + 1, b + i + 1, la - i - 1) == 0) return 1; /* changed */
        if (i + 1 < la && a[i] == b[i + 1] && a[i + 1] == b[i] &&
            memcmp(a + i + 2, b + i + 2, la - i - 2) == 0)
            return 1; /* swapped */
        return 2;
    }
    if (la == lb + 1) return memcmp(a + i + 1, b + i, lb - i) == 0 ? 1 : 2; /* a's removed */
    return memcmp(a + i, b + i + 1, la - i) == 0 ? 1 : 2;                  /* b's added */
}

int as_search_distance(const char *a, size_t la, const char *b, size_t lb, int max)
{
    if ((la > lb ? la - lb : lb - la) > (size_t)max || la > 63 || lb > 63) return max + 1;
    if (max == 1) return within_one(a, la, b, lb);
    int d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int row_min = max + 1;
        for (size_t j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
            if (v < row_min) row_min = v;
        }
        if (row_min > max) return max + 1;
    }
    return d[la][lb];
}

int as_search_typo(const char *typed, const char *word)
{
    int max = as_search_typo_max(typed);
    if (!max || !word || word[0] != typed[0]) return -1;
    int d = as_search_distance(typed, strlen(typed), word, strlen(word), max);
    return d > max ? -1 : d;
}

/* ---- filler ---- */

/* Words that never name, describe or measure a product: articles, pronouns,
 * prepositions, conjunctions and forms of "be"; what a shopper wants to do
 * (need, find, buy, ...); and praise or price talk (cheap, best, quality, ...).
 * A word that can be part of a product's name or specification is not filler,
 * however loosely queries use it: "replacement", "original", "small", "large",
 * "refill", "pack", "set" and "kit" are left out on purpose. Sorted (bsearch). */
static const char *const filler_words[] = {
    "a",        "about",    "affordable", "also",        "am",        "an",          "and",
    "any",      "anything", "are",        "as",          "at",        "be",          "best",
    "budget",   "buy",      "buying",     "by",          "can",       "cheap",       "cheaper",
    "cheapest", "could",    "do",         "does",        "find",      "for",         "from",
    "get",      "good",     "great",      "he",          "hello",     "her",         "hi",
    "his",      "i",        "in",         "inexpensive", "into",      "is",          "it",
    "its",      "just",     "like",       "look",        "looking",   "me",          "my",
    "need",     "needs",    "new",        "nice",        "of",        "on",          "onto",
    "or",       "order",    "our",        "please",      "quality",   "recommended", "she",
    "should",   "show",     "so",         "some",        "something", "thank",       "thanks",
    "that",     "the",      "their",      "them",        "these",     "they",        "this",
    "those",    "to",       "top",        "us",          "very",      "want",        "wants",
    "was",      "we",       "what",       "which",       "with",      "without",     "would",
    "you",      "your",
};

static int filler_cmp(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

bool as_search_filler(const char *word)
{
    if (!word || !*word) return false;
    return bsearch(word, filler_words, sizeof(filler_words) / sizeof(filler_words[0]),
                   sizeof(filler_words[0]), filler_cmp) != NULL;
}

/* ---- words ---- */

typedef struct word_list {
    as_mem *m;
    as_sword *w;
    size_t n, cap;
    bool unstemmed; /* stems are the words themselves */
} word_list;

static as_sword *word_add(word_list *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        as_sword *w = as_alloc(l->m, cap * sizeof(*w));
        if (l->n) memcpy(w, l->w, l->n * sizeof(*w));
        l->w = w;
        l->cap = cap;
    }
    as_sword *w = &l->w[l->n++];
    memset(w, 0, sizeof(*w));
    return w;
}

static bool has_digit(const char *s)
{
    for (; *s; s++)
        if (is_digit(*s)) return true;
    return false;
}

/* The end of the run's first AS_SWORD_MAX bytes, on a character boundary. */
static size_t cut_run(const char *b, size_t n)
{
    if (n <= AS_SWORD_MAX) return n;
    size_t k = 0;
    bool word;
    while (k < n) {
        size_t c = as_text_char(b + k, &word);
        if (k + c > AS_SWORD_MAX) break;
        k += c;
    }
    return k;
}

#define MAX_PARTS AS_SWORD_MAX /* a part is at least one byte */

/* ---- decimal numbers ---- */

static bool is_sep(char c)
{
    return c == '.' || c == ',';
}

/* At p, just after a digit: how many bytes of a decimal part continue the
 * number (".5", ",50"), else 0. One or two digits after the separator, and no
 * further separator and digit after them: "1,000" is a thousands group,
 * "22.110.B" and "3.1.2" are model or version codes, and stay split. */
static size_t decimal_tail(const char *p)
{
    if (!is_sep(p[0]) || !is_digit(p[1])) return 0;
    size_t nd = 1;
    while (is_digit(p[1 + nd]))
        nd++;
    if (nd > 2 || (is_sep(p[1 + nd]) && is_digit(p[2 + nd]))) return 0;
    return 1 + nd;
}

/* Whether b[i] belongs to a number: a digit, or a decimal separator between digits. */
static bool num_char(const char *b, size_t i, size_t n)
{
    return is_digit(b[i]) ||
           (is_sep(b[i]) && i > 0 && i + 1 < n && is_digit(b[i - 1]) && is_digit(b[i + 1]));
}

/* A number as written, one way: the decimal separator a point, the decimals
 * without trailing zeros ("2,50" → "2.5", "5.0" → "5"). */
static const char *number_text(as_mem *m, const char *s, size_t n)
{
    char *t = as_strndup(m, s, n), *sep = NULL;
    for (char *c = t; *c; c++)
        if (is_sep(*c)) {
            *c = '.';
            sep = c;
        }
    if (!sep) return t;
    size_t k = strlen(t);
    while (k > (size_t)(sep - t) + 1 && t[k - 1] == '0')
        k--;
    if (k == (size_t)(sep - t) + 1) k--;
    t[k] = '\0';
    return t;
}

/* One run b[0..n) at offset at: the word, then its parts if letters and digits meet. */
static void add_run(word_list *l, const char *text, size_t at, size_t n)
{
    as_mem *m = l->m;
    const char *b = text + at;
    size_t starts[MAX_PARTS + 1], np = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || num_char(b, i, n) != num_char(b, i - 1, n)) starts[np++] = i;
    starts[np] = n;

    if (np == 1) {
        as_sword *w = word_add(l);
        w->orig = as_strndup(m, b, n);
        w->at = at;
        if (is_digit(b[0])) { /* a number: its own stem, never a unit */
            w->text = w->stem = number_text(m, b, n);
            return;
        }
        const char *f = fold(m, b, n), *u = unit_of(f);
        w->text = u ? u : f;
        w->unit = u != NULL;
        w->stem = u || has_digit(f) || l->unstemmed ? w->text : stem_or_same(m, f);
        return;
    }

    size_t whole = l->n;
    word_add(l);
    as_buf joined;
    as_buf_init(&joined, m);
    bool unit = false, after_digit = false;
    for (size_t p = 0; p < np; p++) {
        size_t s = starts[p], len = starts[p + 1] - s;
        as_sword *w = word_add(l);
        w->orig = as_strndup(m, b + s, len);
        w->at = at + s;
        w->part = true;
        bool digits = is_digit(b[s]);
        const char *f = digits ? number_text(m, b + s, len) : fold(m, b + s, len),
                   *u = !digits && after_digit ? unit_of(f) : NULL;
        w->text = u ? u : f;
        w->unit = u != NULL;
        w->stem = digits || u || l->unstemmed ? w->text : stem_or_same(m, f);
        unit = unit || w->unit;
        after_digit = digits;
        as_buf_puts(&joined, w->text);
    }
    as_sword *w = &l->w[whole]; /* l->w may have moved: take it now */
    w->orig = as_strndup(m, b, n);
    w->at = at;
    w->text = as_buf_str(&joined);
    w->stem = w->text;
    w->unit = unit;
}

/* as_text_char, its ASCII letters and digits here (two calls a byte of every
 * text the index reads) */
static inline size_t text_char(const char *s, bool *word)
{
    unsigned char c = (unsigned char)*s;
    if (c >= 0x80) return as_text_char(s, word);
    *word = as_text_ascii_word(c);
    return 1;
}

static size_t words(as_mem *m, const char *text, as_sword **out, bool unstemmed)
{
    word_list l = {m, NULL, 0, 0, unstemmed};
    *out = NULL;
    if (!text) return 0;
    const char *p = text;
    bool word = false;
    while (*p) {
        size_t k;
        while (*p && (k = text_char(p, &word), !word))
            p += k;
        const char *b = p;
        /* a decimal number is one run ("1.2", "2,5l", "5.0Ah"), but not in a
         * code of numbers ("3.1.2") or after a thousands group ("1.000,50") */
        bool dotted = b - text >= 2 && is_sep(b[-1]) && is_digit(b[-2]);
        for (;;) {
            while (*p && (k = text_char(p, &word), word))
                p += k;
            size_t d = !dotted && p > b && is_digit(p[-1]) ? decimal_tail(p) : 0;
            if (!d) break;
            p += d;
        }
        if (p > b) {
            size_t n = cut_run(b, (size_t)(p - b));
            while (n > 1 && is_sep(b[n - 1])) /* a cut run does not end on a separator */
                n--;
            add_run(&l, text, (size_t)(b - text), n);
        }
    }
    *out = l.w;
    return l.n;
}

size_t as_search_words(as_mem *m, const char *text, as_sword **out)
{
    return words(m, text, out, false);
}

size_t as_search_words_unstemmed(as_mem *m, const char *text, as_sword **out)
{
    return words(m, text, out, true);
}
