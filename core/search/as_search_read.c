/* Search, stage 1: a query's text read into words, a price cap and a device
 * (as_query_read, as_search_words.h). */
#include "as_search_words.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "as_devices.h"

#define MAX_CENTS 100000000 /* €1,000,000: an amount above is not a price cap */
#define DEVICE_WORDS 32     /* a device is looked for among the first so many words */
#define DEVICE_SPAN 4       /* and named by at most so many words */

/* The query's words with what reading decides about them. */
typedef struct reader {
    as_mem *m;
    const char *q;
    as_sword *w;
    size_t n;
    size_t *whole; /* indices in w of the words that are not parts */
    size_t nw;
    bool *gone;   /* per w: taken out (the price) */
    bool *device; /* per w: named the device */
} reader;

static bool is_digits(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

/* A number as as_search_words writes one: digits, maybe a point and decimals ("2.5"). */
static bool is_number(const char *s)
{
    size_t i = 0;
    while (s[i] >= '0' && s[i] <= '9')
        i++;
    if (!i || (s[i] && s[i] != '.')) return false;
    return !s[i] || is_digits(s + i + 1);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static const char *text_at(const reader *r, size_t k) /* k-th whole word */
{
    return r->w[r->whole[k]].text;
}

static size_t start_of(const reader *r, size_t k)
{
    return r->w[r->whole[k]].at;
}

static size_t end_of(const reader *r, size_t k)
{
    const as_sword *w = &r->w[r->whole[k]];
    return w->at + strlen(w->orig);
}

/* Filler as the word was written: "in" is filler, "inch" (read as the unit "in") is not. */
static bool word_filler(as_mem *m, const as_sword *w)
{
    if (!w->unit) return as_search_filler(w->text);
    const char *t = w->text;
    if (strcmp(w->orig, w->text) != 0) {
        char *f = as_alloc(m, strlen(w->orig) + 1);
        as_text_fold(w->orig, strlen(w->orig), f);
        t = f;
    }
    return as_search_filler(t);
}

/* ---- the price cap ---- */

static bool is_currency(const char *t)
{
    return strcmp(t, "eur") == 0 || strcmp(t, "euro") == 0 || strcmp(t, "euros") == 0;
}

/* The gap between two words (or from the text's start) holds only spaces and
 * at most one euro sign; *euro tells whether it had one. With lt, it must hold a
 * "<", "<=" or "≤" before the sign. */
static bool gap_ok(const char *s, const char *e, bool lt, bool *euro)
{
    bool seen_lt = false;
    *euro = false;
    while (s < e) {
        if (is_space(*s)) {
            s++;
        } else if (lt && !seen_lt && !*euro && *s == '<') {
            seen_lt = true;
            s += (s + 1 < e && s[1] == '=') ? 2 : 1;
        } else if (lt && !seen_lt && !*euro && e - s >= 3 && memcmp(s, "\xE2\x89\xA4", 3) == 0) {
            seen_lt = true; /* ≤ */
            s += 3;
        } else if (!*euro && e - s >= 3 && memcmp(s, "\xE2\x82\xAC", 3) == 0) {
            *euro = true;
            s += 3;
        } else if (*s == ':') { /* "budget: 20" */
            s++;
        } else {
            return false;
        }
    }
    return !lt || seen_lt;
}

/* Cue words at whole word k ("under", "less than", ...): how many, else 0. */
static size_t cue_at(const reader *r, size_t k)
{
    static const char *const cues[][3] = {
        {"under"},
        {"below"},
        {"max"},
        {"maximum"},
        {"budget"},
        {"less", "than"},
        {"lower", "than"},
        {"cheaper", "than"},
        {"at", "most"},
        {"up", "to"},
        {"no", "more", "than"},
        {"not", "more", "than"},
    };
    for (size_t c = 0; c < sizeof(cues) / sizeof(cues[0]); c++) {
        size_t i = 0;
        while (i < 3 && cues[c][i] && k + i < r->nw && strcmp(text_at(r, k + i), cues[c][i]) == 0)
            i++;
        if (i == 3 || !cues[c][i]) {
            /* "budget of 20" */
            if (strcmp(cues[c][0], "budget") == 0 && k + 1 < r->nw &&
                strcmp(text_at(r, k + 1), "of") == 0)
                i++;
            return i;
        }
    }
    return 0;
}

/* Trailing cue words at k ("max", "or less", ...) after an amount with currency. */
static size_t trailing_cue_at(const reader *r, size_t k)
{
    if (k >= r->nw) return 0;
    const char *t = text_at(r, k);
    if (strcmp(t, "max") == 0 || strcmp(t, "maximum") == 0) return 1;
    if (k + 1 < r->nw && ((strcmp(t, "or") == 0 && strcmp(text_at(r, k + 1), "less") == 0) ||
                          (strcmp(t, "at") == 0 && strcmp(text_at(r, k + 1), "most") == 0)))
        return 2;
    return 0;
}

/* The word after k, when it follows k at once with only the separator sep between. */
static bool joined_by(const reader *r, size_t k, char sep)
{
    return k + 1 < r->nw && start_of(r, k + 1) == end_of(r, k) + 1 && r->q[end_of(r, k)] == sep;
}

typedef struct amount {
    int64_t cents;
    size_t last;   /* the last whole word read */
    bool currency; /* "eur" written in the amount's own word ("20eur") */
} amount;

/* A number word as written: whole euros (*euros, with the digits before the
 * separator: *int_len) and the cents of one or two decimals ("20", "20.50",
 * "20,5": as_search_words keeps a decimal number in one word); *sep the
 * decimal separator, 0 for none. False when it is not such a number or passes
 * the cap. */
static bool number_at(const char *orig, int64_t *euros, int64_t *cents, size_t *int_len, char *sep)
{
    *euros = *cents = 0;
    *sep = 0;
    size_t i = 0;
    for (; orig[i] >= '0' && orig[i] <= '9'; i++) {
        *euros = *euros * 10 + (orig[i] - '0');
        if (*euros > MAX_CENTS / 100) return false;
    }
    *int_len = i;
    if (!i) return false;
    if (!orig[i]) return true;
    if (orig[i] != '.' && orig[i] != ',') return false;
    *sep = orig[i];
    const char *d = orig + i + 1;
    size_t nd = strlen(d);
    if (nd < 1 || nd > 2 || !is_digits(d)) return false;
    *cents = (d[0] - '0') * 10 + (nd == 2 ? d[1] - '0' : 0);
    return true;
}

/* An amount at whole word k: "20", "20.50", "20,5", "1,000", "1.000,50", "20eur". */
static bool amount_at(const reader *r, size_t k, amount *a)
{
    const as_sword *w = &r->w[r->whole[k]];
    int64_t euros = 0, cents = 0;
    size_t int_len;
    char sep;
    a->currency = false;
    a->last = k;
    if (!is_number(w->text)) {
        /* a number and "eur" in one run: the run, then its two parts */
        size_t i = r->whole[k];
        if (i + 2 >= r->n || !r->w[i + 1].part || !r->w[i + 2].part ||
            (i + 3 < r->n && r->w[i + 3].part) || !is_currency(r->w[i + 2].text) ||
            !number_at(r->w[i + 1].orig, &euros, &cents, &int_len, &sep))
            return false;
        a->currency = true;
    } else {
        if (!number_at(w->orig, &euros, &cents, &int_len, &sep)) return false;
        /* groups of thousands: "1,000", "1.000.000"; then 1 or 2 decimals
         * (as_search_words keeps "1.000,50" as "1", "000", "50") */
        char group_sep = 0;
        while (!sep && int_len <= 3 && (joined_by(r, a->last, ',') || joined_by(r, a->last, '.'))) {
            char gsep = r->q[end_of(r, a->last)];
            const char *next = text_at(r, a->last + 1);
            if (!is_digits(next) || strlen(next) != 3 || (group_sep && gsep != group_sep)) break;
            int64_t g = 0;
            for (const char *c = next; *c; c++)
                g = g * 10 + (*c - '0');
            euros = euros * 1000 + g;
            if (euros > MAX_CENTS / 100) return false;
            group_sep = gsep;
            a->last++;
        }
        if (group_sep && (joined_by(r, a->last, ',') || joined_by(r, a->last, '.'))) {
            char dsep = r->q[end_of(r, a->last)];
            const char *next = text_at(r, a->last + 1);
            size_t nd = strlen(next);
            if (dsep != group_sep && is_digits(next) && nd <= 2) {
                cents = (next[0] - '0') * 10 + (nd == 2 ? next[1] - '0' : 0);
                a->last++;
            }
        }
    }
    a->cents = euros * 100 + cents;
    return a->cents > 0 && a->cents <= MAX_CENTS;
}

static void take_out(reader *r, size_t from, size_t to)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->w[i].at >= from && r->w[i].at < to) r->gone[i] = true;
}

#define EURO "\xE2\x82\xAC"

static const char *find_euro(const char *s, const char *e)
{
    for (; e - s >= 3; s++)
        if (memcmp(s, EURO, 3) == 0) return s;
    return NULL;
}

static size_t next_start(const reader *r, size_t last)
{
    return last + 1 < r->nw ? start_of(r, last + 1) : strlen(r->q);
}

/* A currency after the amount that ends at byte *end, its last word *last:
 * "20 €", "20€", "20 euros"; moves *end and *last past it. */
static bool currency_after(const reader *r, size_t *last, size_t *end)
{
    bool euro;
    const char *s = r->q + *end, *e = r->q + next_start(r, *last);
    if (gap_ok(s, e, false, &euro) && euro) {
        *end = (size_t)(find_euro(s, e) - r->q) + 3;
        return true;
    }
    if (*last + 1 < r->nw && is_currency(text_at(r, *last + 1)) && gap_ok(s, e, false, &euro)) {
        *end = end_of(r, ++*last);
        return true;
    }
    return false;
}

/* Whether what follows an amount without currency lets it be a price: the end,
 * punctuation, or a filler word ("less than 10 for my dyson"); not "up to 4
 * cups" nor "under 20%". */
static bool bare_amount_ends(const reader *r, size_t last, size_t end)
{
    bool punct = false;
    for (const char *p = r->q + end; p < r->q + next_start(r, last); p++) {
        if (is_space(*p)) continue;
        if (!strchr(",.;!?)", *p)) return false;
        punct = true;
    }
    return punct || last + 1 >= r->nw || as_search_filler(text_at(r, last + 1));
}

static void price_found(reader *r, const amount *a, size_t start, size_t end, as_query_text *out)
{
    out->max_price_cents = a->cents;
    out->price_text = as_strndup(r->m, r->q + start, end - start);
    take_out(r, start, end);
}

/* A cap with its cue before the amount at whole word k: "under 20 euros",
 * "max eur 30", "up to 25€", "< 20", "<= €15.50". */
static bool price_at(reader *r, size_t k, as_query_text *out)
{
    size_t cue = cue_at(r, k), a0 = k + cue, start;
    bool euro_before = false, euro;
    if (a0 >= r->nw) return false;
    if (cue) {
        start = start_of(r, k);
        if (is_currency(text_at(r, a0)) && a0 + 1 < r->nw &&
            gap_ok(r->q + end_of(r, a0 - 1), r->q + start_of(r, a0), false, &euro) && !euro) {
            euro_before = true; /* "under eur 20" */
            a0++;
        }
        if (!gap_ok(r->q + end_of(r, a0 - 1), r->q + start_of(r, a0), false, &euro) ||
            (euro && euro_before))
            return false;
        euro_before = euro_before || euro;
    } else {
        size_t prev_end = k ? end_of(r, k - 1) : 0;
        if (!gap_ok(r->q + prev_end, r->q + start_of(r, k), true, &euro_before)) return false;
        for (start = prev_end; is_space(r->q[start]); start++)
            ;
    }
    amount a;
    if (!amount_at(r, a0, &a)) return false;
    size_t end = end_of(r, a.last);
    bool currency = euro_before || a.currency || currency_after(r, &a.last, &end);
    if (!currency && !bare_amount_ends(r, a.last, end)) return false;
    price_found(r, &a, start, end, out);
    return true;
}

/* A cap with its cue after an amount with currency: "20 euros max", "€20 or less". */
static bool price_after(reader *r, size_t k, as_query_text *out)
{
    amount a;
    if (!amount_at(r, k, &a)) return false;
    size_t prev_end = k ? end_of(r, k - 1) : 0, start = start_of(r, k), end = end_of(r, a.last);
    bool euro;
    const char *sign = gap_ok(r->q + prev_end, r->q + start, false, &euro) && euro
                           ? find_euro(r->q + prev_end, r->q + start)
                           : NULL;
    if (sign) start = (size_t)(sign - r->q);
    if (!sign && !a.currency && !currency_after(r, &a.last, &end)) return false;
    size_t c = a.last + 1, t = trailing_cue_at(r, c);
    if (!t || !gap_ok(r->q + end, r->q + start_of(r, c), false, &euro) || euro) return false;
    price_found(r, &a, start, end_of(r, c + t - 1), out);
    return true;
}

static void read_price(reader *r, as_query_text *out)
{
    for (size_t k = 0; k < r->nw; k++)
        if (price_at(r, k, out)) return;
    for (size_t k = 0; k < r->nw; k++)
        if (price_after(r, k, out)) return;
}

/* ---- the device ---- */

/* As as_devices_match compares a query word with a device word. */
static bool word_matches(const char *q, const char *d)
{
    size_t lq = strlen(q);
    return strcmp(q, d) == 0 || (lq >= 2 && strncmp(q, d, lq) == 0);
}

typedef struct device_terms {
    const char **all; /* brand, name, slug, aliases */
    size_t n_all;
    const char **id; /* brand, slug, aliases: what names this device and no other kind */
    size_t n_id;
    const char *brand;    /* its words joined: "De'Longhi" → "delonghi" */
    const char **brand_t; /* its words: "de", "longhi" */
    size_t n_brand;
} device_terms;

static bool equals_any(const char *t, const char **terms, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(t, terms[i]) == 0) return true;
    return false;
}

/* A number and a unit ("18v", "2m", "1.5v"): a measure, not a model. */
static bool is_measure(const reader *r, size_t i)
{
    return i + 2 < r->n && r->w[i + 1].part && r->w[i + 2].part &&
           !(i + 3 < r->n && r->w[i + 3].part) && is_number(r->w[i + 1].text) && r->w[i + 2].unit;
}

static bool is_mixed(const reader *r, size_t i)
{
    return i + 1 < r->n && r->w[i + 1].part;
}

/* Whether the words [k, k+len) name device d themselves, beyond matching it: a
 * model code of letters and digits ("v11", "bgls4pow2", not a measure like
 * "18v"); in two words or more, also a number ("iphone 13", not "13 inch") or a word of the
 * device's brand, slug or aliases of 3 letters or more ("macbook air"); alone, a
 * plain word only when it is the brand ("delonghi"). So "laptop", "5" or "18v"
 * alone pick no device, though each matches one. */
static bool anchored(const reader *r, size_t k, size_t len, const device_terms *d,
                     const char **folded)
{
    for (size_t j = k; j < k + len; j++) {
        size_t i = r->whole[j];
        if (is_mixed(r, i) && !is_measure(r, i)) return true;
        if (len == 1) return strlen(folded[j]) >= 3 && strcmp(folded[j], d->brand) == 0;
        bool measure = j + 1 < k + len && r->w[r->whole[j + 1]].unit; /* "13 inch" */
        if (is_digits(r->w[i].text) && !measure) return true;
        if (strlen(folded[j]) >= 3 && equals_any(folded[j], d->id, d->n_id)) return true;
    }
    return false;
}

static void device_terms_make(as_mem *m, const as_device *d, device_terms *t)
{
    t->n_all = as_text_terms(
        m, as_printf(m, "%s %s %s %s", d->brand, d->name, d->slug, d->aliases ? d->aliases : ""),
        &t->all);
    t->n_id = as_text_terms(
        m, as_printf(m, "%s %s %s", d->brand, d->slug, d->aliases ? d->aliases : ""), &t->id);
    /* the slug often spells the device's kind ("gen-cordless-tool-200"): a
     * word of the kind says what sort of device, not which ("classic tool"
     * is not the Redcliff Classic K300 cordless tool) */
    const char **kind_t = NULL;
    size_t n_kind = d->kind ? as_text_terms(m, d->kind, &kind_t) : 0, keep = 0;
    for (size_t i = 0; i < t->n_id; i++)
        if (!equals_any(t->id[i], kind_t, n_kind)) t->id[keep++] = t->id[i];
    t->n_id = keep;
    t->n_brand = as_text_terms(m, d->brand, &t->brand_t);
    as_buf buf;
    as_buf_init(&buf, m);
    for (size_t i = 0; i < t->n_brand; i++)
        as_buf_puts(&buf, t->brand_t[i]);
    t->brand = as_buf_str(&buf);
}

/* The first 8 bytes of s as a number, the first byte highest and zeros past
 * its end: keys in the order strcmp puts strings (one before those it
 * begins), so that a sorted table is searched in an array of its keys, not
 * string by string at random in memory. */
static uint64_t key8(const char *s)
{
    uint64_t k = 0;
    size_t i = 0;
    for (; i < 8 && s[i]; i++)
        k = k << 8 | (unsigned char)s[i];
    return i ? k << (8 * (8 - i)) : 0;
}

/* Each of n strings' key8, for first_not_below. */
static uint64_t *keys8(as_mem *m, const char *const *strs, size_t n)
{
    uint64_t *k = as_alloc(m, (n ? n : 1) * sizeof(*k));
    for (size_t i = 0; i < n; i++)
        k[i] = key8(strs[i]);
    return k;
}

/* The first of n sorted strings strs (keys: their key8) not below s: by the
 * keys, then, among those whose first 8 bytes are s's, by strcmp (a key
 * with a zero byte is the whole string). */
static size_t first_not_below(const uint64_t *keys, const char *const *strs, size_t n,
                              const char *s)
{
    uint64_t k = key8(s);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n || keys[lo] != k || (k & 0xFF) == 0) return lo;
    for (hi = n; lo < hi;) { /* the string's first 8 bytes are s's */
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < k || (keys[mid] == k && strcmp(strs[mid], s) < 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The device word that typed, matching none, was meant to be: the closest by
 * the rule that corrects the catalogue's words (as_search_typo: "macbok" →
 * "macbook"); NULL when there is none or two different words are as close.
 * Among terms (every device word, sorted, each once; term_len their lengths,
 * first_at where those of each first byte start), those with typed's first
 * letter: as_search_typo keeps the first letter as typed. A term whose length
 * is further from typed's than the edits allowed is passed over unread, as
 * as_search_distance would refuse it (and one of 255 bytes or more, which it
 * refuses from 64). */
static const char *device_correction(const char *typed, const char *const *terms,
                                     const uint8_t *term_len, const size_t *first_at)
{
    int max = as_search_typo_max(typed);
    if (!max) return NULL;
    size_t tl = strlen(typed);
    unsigned char c0 = (unsigned char)typed[0];
    const char *best = NULL;
    int best_d = -1;
    bool tie = false;
    for (size_t i = first_at[c0]; i < first_at[c0 + 1]; i++) {
        size_t l = term_len[i];
        if ((l > tl ? l - tl : tl - l) > (size_t)max) continue;
        int e = as_search_distance(typed, tl, terms[i], l, max);
        if (e > max || (best && e > best_d)) continue;
        if (best && e == best_d) {
            tie = true; /* the terms are each once: another word as close */
            continue;
        }
        best = terms[i];
        best_d = e;
        tie = false;
    }
    return tie ? NULL : best;
}

/* The words [k, k+len) as the device matcher reads them: as written, but a
 * corrected word as the device word it was meant to be. */
static const char *span_text(const reader *r, size_t k, size_t len, const char **folded,
                             const bool *fixed)
{
    size_t from = start_of(r, k), to = end_of(r, k + len - 1);
    bool any = false;
    for (size_t j = k; j < k + len; j++)
        any = any || fixed[j];
    if (!any) return as_strndup(r->m, r->q + from, to - from);
    as_buf b;
    as_buf_init(&b, r->m);
    for (size_t j = k; j < k + len; j++) {
        if (j > k) as_buf_add(&b, r->q + end_of(r, j - 1), start_of(r, j) - end_of(r, j - 1));
        if (fixed[j])
            as_buf_puts(&b, folded[j]);
        else
            as_buf_add(&b, r->q + start_of(r, j), end_of(r, j) - start_of(r, j));
    }
    return as_buf_str(&b);
}

/* ---- a device named by its brand and its kind ---- */

/* What people call each kind of device (sql/demo/README.md lists the kinds),
 * so that a device can be named by its brand and kind: "bosch drill", "jura
 * coffee machine", "my brita jug". A kind not listed is named by its own words
 * ("air-purifier": "air purifier"). */
static const struct kind_names {
    const char *kind;
    const char *names[8];
} kind_names[] = {
    {"vacuum-cleaner", {"vacuum cleaner", "vacuum", "hoover"}},
    {"air-purifier", {"air purifier", "purifier"}},
    {"coffee-machine", {"coffee machine", "espresso machine", "coffee maker", "espresso maker"}},
    {"water-jug", {"water jug", "filter jug", "jug", "pitcher"}},
    {"printer", {"printer"}},
    {"phone", {"mobile phone", "phone", "smartphone", "mobile"}},
    {"laptop", {"laptop", "notebook"}},
    {"cordless-tool",
     {"cordless tool", "cordless drill", "combi drill", "drill driver", "impact driver", "drill",
      "screwdriver"}},
};

/* A kind's names as words (stemmed), made once per set of devices
 * (as_query_devices_make): what kind_span compares a query's words with. */
typedef struct kind_words {
    const char *kind;
    size_t n_names;
    as_sword *w[8];
    size_t n[8];
} kind_words;

static void kind_words_make(as_mem *m, const char *kind, kind_words *out)
{
    const char *own[2] = {NULL, NULL};
    const char *const *names = own;
    size_t n_names = 1;
    for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
        if (strcmp(kind_names[i].kind, kind) == 0) {
            names = kind_names[i].names;
            for (n_names = 0; n_names < 8 && names[n_names]; n_names++)
                ;
        }
    if (names == own) {
        char *k2 = as_strdup(m, kind);
        for (char *p = k2; *p; p++)
            if (*p == '-') *p = ' ';
        own[0] = k2;
    }
    out->kind = kind;
    out->n_names = n_names;
    for (size_t i = 0; i < n_names; i++)
        out->n[i] = as_search_words(m, names[i], &out->w[i]);
}

/* How many whole words from k say what kind a device is ("drill", "coffee
 * machine"), compared by stem ("drills"); the longest name wins; 0 for none. */
static size_t kind_span(const reader *r, size_t k, size_t nw, const kind_words *kw)
{
    size_t best = 0;
    for (size_t i = 0; kw && i < kw->n_names; i++) {
        size_t n = kw->n[i], j = 0;
        while (j < n && k + j < nw && !r->gone[r->whole[k + j]] &&
               strcmp(r->w[r->whole[k + j]].stem, kw->w[i][j].stem) == 0)
            j++;
        if (j == n && n > best) best = n;
    }
    return best;
}

/* How many whole words from k are device d's brand ("bosch", "delonghi", "de
 * longhi"); 0 for none. */
static size_t brand_span(const reader *r, size_t k, size_t nw, const device_terms *d,
                         const char **folded)
{
    if (r->gone[r->whole[k]] || !*d->brand) return 0;
    if (strcmp(folded[k], d->brand) == 0) return 1;
    if (d->n_brand < 2 || k + d->n_brand > nw) return 0;
    for (size_t j = 0; j < d->n_brand; j++)
        if (r->gone[r->whole[k + j]] || strcmp(folded[k + j], d->brand_t[j]) != 0) return 0;
    return d->n_brand;
}

/* A device's brand as a key of as_query_devices.brands: its brand's words
 * run together ("delonghi"), and, for a brand of several words, its first
 * word ("de" of "de longhi"): the word at which brand_span can match it. */
typedef struct brand_key {
    const char *key;
    size_t dev;
    /* what brand_kind_at reads of the device: its brand's words and its
     * kind; the keys sort by them after the key, so that the devices of one
     * brand and kind are one run, of `run` entries from its first */
    const device_terms *dt;
    const char *kind;
    size_t run;
} brand_key;

/* Whether two devices' brands are the same words. */
static int brand_terms_cmp(const device_terms *x, const device_terms *y)
{
    int c = strcmp(x->brand, y->brand);
    if (c || x->n_brand != y->n_brand) return c ? c : x->n_brand < y->n_brand ? -1 : 1;
    for (size_t j = 0; j < x->n_brand; j++)
        if ((c = strcmp(x->brand_t[j], y->brand_t[j])) != 0) return c;
    return 0;
}

/* By key, then brand and kind: 0 for two devices of one run. */
static int brand_run_cmp(const brand_key *x, const brand_key *y)
{
    int c = strcmp(x->key, y->key);
    if (!c) c = brand_terms_cmp(x->dt, y->dt);
    if (!c && x->kind != y->kind) c = !x->kind ? -1 : !y->kind ? 1 : strcmp(x->kind, y->kind);
    return c;
}

/* By run (brand_kind_at reads one device of each), then device. */
static int brand_key_cmp(const void *a, const void *b)
{
    const brand_key *x = a, *y = b;
    int c = brand_run_cmp(x, y);
    return c ? c : x->dev < y->dev ? -1 : x->dev > y->dev;
}

/* The device that words from k name by brand and kind, when exactly one
 * device has that brand and kind; *len its words. Only the devices whose
 * brand can start at word k are tried (brands, sorted by key), one of each
 * run of one brand and kind (a brand has a hundred devices and a few kinds):
 * the others of a run match as far as it does. */
static const as_device *brand_kind_at(const reader *r, size_t k, size_t nw, const as_device *devs,
                                      const brand_key *brands, const uint64_t *brand_keys,
                                      const char *const *brand_strs, size_t n_brands,
                                      const device_terms *dt, const kind_words *const *dev_kind,
                                      const char **folded, size_t *len)
{
    const as_device *found = NULL;
    size_t best = 0;
    bool two = false;
    size_t lo = first_not_below(brand_keys, brand_strs, n_brands, folded[k]);
    /* a brand has many devices and few kinds: each kind's span after each
     * brand length is read once */
    struct kind_seen {
        const char *kind;
        size_t b, span;
    } seen[16];
    size_t nseen = 0;
    uint64_t key = key8(folded[k]);
    for (size_t i = lo;
         i < n_brands && brand_keys[i] == key && strcmp(brands[i].key, folded[k]) == 0;
         i += brands[i].run) {
        size_t d = brands[i].dev;
        size_t b = brand_span(r, k, nw, &dt[d], folded);
        if (!b || !devs[d].kind) continue;
        size_t j = 0;
        while (j < nseen && (seen[j].b != b || strcmp(seen[j].kind, devs[d].kind) != 0))
            j++;
        size_t kl = j < nseen ? seen[j].span : kind_span(r, k + b, nw, dev_kind[d]);
        if (j == nseen && nseen < sizeof(seen) / sizeof(seen[0]))
            seen[nseen++] = (struct kind_seen){devs[d].kind, b, kl};
        if (!kl) continue;
        if (b + kl > best) {
            found = &devs[d];
            best = b + kl;
            two = brands[i].run > 1; /* the run's next matches as far */
        } else if (b + kl == best) {
            two = true;
        }
    }
    *len = best;
    return two ? NULL : found;
}

static void device_found(reader *r, const as_device *dev, size_t k, size_t len, as_query_text *out)
{
    size_t from = start_of(r, k), to = end_of(r, k + len - 1);
    out->device = dev;
    out->device_text = as_strndup(r->m, r->q + from, to - from);
    for (size_t i = 0; i < r->n; i++)
        if (r->w[i].at >= from && r->w[i].at < to) r->device[i] = true;
}

/* The devices' words, made once per set of devices (per index snapshot). */
struct as_query_devices {
    const as_device *devs;
    size_t n;
    device_terms *dt;
    as_device_words *w;
    const char **terms;  /* every device's `all` terms, sorted, each once */
    uint64_t *term_keys; /* their key8 */
    size_t n_terms;
    uint8_t *term_len;              /* each term's length, UINT8_MAX from 255 bytes */
    size_t first_at[UCHAR_MAX + 2]; /* the terms from each first byte on */
    /* as_query_devices_resolve's: every distinct word of the devices' as_device_words
     * all_t, sorted, each with the devices that have it (a bit each, dwords
     * 64-bit words per word); and the devices by slug */
    const char **rterms;
    uint64_t *rterm_keys; /* their key8 */
    uint64_t *rbits;
    size_t n_rterms, dwords;
    const as_device **by_slug;
    const char **slugs;      /* by_slug's slugs */
    uint64_t *slug_keys;     /* their key8 */
    brand_key *brands;       /* brand_kind_at's */
    const char **brand_strs; /* brands' keys */
    uint64_t *brand_keys;    /* their key8 */
    size_t n_brands;
    /* each device's kind's names as words (NULL: no kind), one per kind */
    const kind_words **dev_kind;
};

static int term_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether some device has a term that word_matches t: the terms that t is a
 * prefix of sort together, from the first term not below t. */
static bool some_device_has(const as_query_devices *qd, const char *t)
{
    size_t lo = first_not_below(qd->term_keys, qd->terms, qd->n_terms, t);
    if (lo == qd->n_terms) return false;
    /* told by the keys when t is shorter than 8 bytes: the term begins with
     * t, and then equals it or t has 2 bytes or more (word_matches) */
    size_t lt = strnlen(t, 8);
    if (lt < 8) {
        uint64_t mask = lt ? ~0ull << (8 * (8 - lt)) : 0;
        uint64_t tk = key8(t), dk = qd->term_keys[lo];
        return (dk & mask) == tk && (lt >= 2 || dk == tk);
    }
    return word_matches(t, qd->terms[lo]);
}

typedef struct term_dev {
    const char *t;
    size_t dev;
} term_dev;

static int term_dev_cmp(const void *a, const void *b)
{
    return strcmp(((const term_dev *)a)->t, ((const term_dev *)b)->t);
}

static int slug_cmp(const void *a, const void *b)
{
    return strcmp((*(const as_device *const *)a)->slug, (*(const as_device *const *)b)->slug);
}

/* as_query_devices_resolve's tables, from qd->w. */
static void resolve_tables(as_mem *m, as_query_devices *qd)
{
    size_t n = qd->n, total = 0;
    qd->dwords = (n + 63) / 64;
    for (size_t d = 0; d < n; d++)
        total += qd->w[d].na;
    term_dev *td = as_alloc(m, (total ? total : 1) * sizeof(*td));
    size_t k = 0;
    for (size_t d = 0; d < n; d++)
        for (size_t j = 0; j < qd->w[d].na; j++)
            td[k++] = (term_dev){qd->w[d].all_t[j], d};
    qsort(td, k, sizeof(*td), term_dev_cmp);
    qd->rterms = as_alloc(m, (k ? k : 1) * sizeof(*qd->rterms));
    qd->rbits = as_alloc(m, (k ? k : 1) * (qd->dwords ? qd->dwords : 1) * sizeof(uint64_t));
    for (size_t i = 0; i < k; i++) {
        if (!qd->n_rterms || strcmp(qd->rterms[qd->n_rterms - 1], td[i].t) != 0) {
            qd->rterms[qd->n_rterms] = td[i].t;
            memset(qd->rbits + qd->n_rterms * qd->dwords, 0, qd->dwords * sizeof(uint64_t));
            qd->n_rterms++;
        }
        qd->rbits[(qd->n_rterms - 1) * qd->dwords + td[i].dev / 64] |= 1ull << (td[i].dev % 64);
    }
    qd->by_slug = as_alloc(m, (n ? n : 1) * sizeof(*qd->by_slug));
    for (size_t d = 0; d < n; d++)
        qd->by_slug[d] = &qd->devs[d];
    qsort(qd->by_slug, n, sizeof(*qd->by_slug), slug_cmp);
    qd->slugs = as_alloc(m, (n ? n : 1) * sizeof(*qd->slugs));
    for (size_t d = 0; d < n; d++)
        qd->slugs[d] = qd->by_slug[d]->slug;
    qd->slug_keys = keys8(m, qd->slugs, n);
    qd->rterm_keys = keys8(m, qd->rterms, qd->n_rterms);
}

/* Without as_device_resolve_words's pass over every device: the slug looked
 * up, then the devices that have, for every word of q, a word it matches
 * (equal, or its beginning from 2 letters): an intersection of the words'
 * bits. */
const as_device *as_query_devices_resolve(as_mem *m, const as_query_devices *qd, const char *q)
{
    size_t lo = first_not_below(qd->slug_keys, qd->slugs, qd->n, q);
    if (lo < qd->n && strcmp(qd->slugs[lo], q) == 0) return qd->by_slug[lo];
    const char **qt;
    size_t nq = as_text_terms(m, q, &qt), dw = qd->dwords;
    if (!nq || !dw) return NULL;
    uint64_t *all = as_alloc(m, dw * sizeof(uint64_t)), *one = as_alloc(m, dw * sizeof(uint64_t));
    for (size_t j = 0; j < nq; j++) {
        memset(one, 0, dw * sizeof(uint64_t));
        size_t len = strlen(qt[j]);
        lo = first_not_below(qd->rterm_keys, qd->rterms, qd->n_rterms, qt[j]);
        for (size_t i = lo; i < qd->n_rterms && strncmp(qd->rterms[i], qt[j], len) == 0; i++) {
            if (len < 2 && strcmp(qd->rterms[i], qt[j]) != 0) break; /* equal only */
            for (size_t w = 0; w < dw; w++)
                one[w] |= qd->rbits[i * dw + w];
        }
        for (size_t w = 0; w < dw; w++)
            all[w] = j ? all[w] & one[w] : one[w];
    }
    const as_device *found = NULL;
    for (size_t w = 0; w < dw; w++)
        for (uint64_t cur = all[w]; cur; cur &= cur - 1) {
            if (found) return NULL; /* two: not named */
            found = &qd->devs[w * 64 + (size_t)__builtin_ctzll(cur)];
        }
    return found;
}

const as_query_devices *as_query_devices_make(as_mem *m, const as_device *devs, size_t n)
{
    as_query_devices *qd = as_alloc(m, sizeof(*qd));
    qd->devs = devs;
    qd->n = n;
    qd->dt = as_alloc(m, (n ? n : 1) * sizeof(*qd->dt));
    size_t total = 0;
    for (size_t d = 0; d < n; d++) {
        device_terms_make(m, &devs[d], &qd->dt[d]);
        total += qd->dt[d].n_all;
    }
    qd->terms = as_alloc(m, (total ? total : 1) * sizeof(*qd->terms));
    for (size_t d = 0; d < n; d++)
        for (size_t i = 0; i < qd->dt[d].n_all; i++)
            qd->terms[qd->n_terms++] = qd->dt[d].all[i];
    qsort(qd->terms, qd->n_terms, sizeof(*qd->terms), term_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < qd->n_terms; i++)
        if (!kept || strcmp(qd->terms[kept - 1], qd->terms[i]) != 0)
            qd->terms[kept++] = qd->terms[i];
    qd->n_terms = kept;
    qd->term_keys = keys8(m, qd->terms, kept);
    qd->term_len = as_alloc(m, (kept ? kept : 1));
    for (size_t i = 0; i < kept; i++) {
        size_t l = strlen(qd->terms[i]);
        qd->term_len[i] = (uint8_t)(l < UINT8_MAX ? l : UINT8_MAX);
    }
    for (size_t b = 0, i = 0; b <= UCHAR_MAX + 1; b++) {
        while (i < kept && (unsigned char)qd->terms[i][0] < b)
            i++;
        qd->first_at[b] = i;
    }
    qd->brands = as_alloc(m, (n ? 2 * n : 1) * sizeof(*qd->brands));
    for (size_t d = 0; d < n; d++) {
        if (!*qd->dt[d].brand) continue;
        qd->brands[qd->n_brands++] = (brand_key){qd->dt[d].brand, d, &qd->dt[d], devs[d].kind, 1};
        if (qd->dt[d].n_brand >= 2)
            qd->brands[qd->n_brands++] =
                (brand_key){qd->dt[d].brand_t[0], d, &qd->dt[d], devs[d].kind, 1};
    }
    qsort(qd->brands, qd->n_brands, sizeof(*qd->brands), brand_key_cmp);
    for (size_t i = qd->n_brands; i-- > 1;)
        if (brand_run_cmp(&qd->brands[i - 1], &qd->brands[i]) == 0)
            qd->brands[i - 1].run = qd->brands[i].run + 1;
    qd->brand_strs = as_alloc(m, (qd->n_brands ? qd->n_brands : 1) * sizeof(*qd->brand_strs));
    for (size_t i = 0; i < qd->n_brands; i++)
        qd->brand_strs[i] = qd->brands[i].key;
    qd->brand_keys = keys8(m, qd->brand_strs, qd->n_brands);
    /* each kind's words once (a catalogue has thousands of devices and a
     * few kinds): the kinds first, then each device's */
    qd->dev_kind = as_alloc(m, (n ? n : 1) * sizeof(*qd->dev_kind));
    size_t *kind_of = as_alloc(m, (n ? n : 1) * sizeof(*kind_of)), n_kinds = 0;
    for (size_t d = 0; d < n; d++) {
        if (!devs[d].kind) continue;
        size_t i = 0; /* the first device of its kind */
        while (i < d && !(devs[i].kind && strcmp(devs[i].kind, devs[d].kind) == 0))
            i++;
        kind_of[d] = i == d ? n_kinds++ : kind_of[i];
    }
    kind_words *kinds = as_alloc(m, (n_kinds ? n_kinds : 1) * sizeof(*kinds));
    for (size_t d = 0; d < n; d++) {
        if (!devs[d].kind) continue;
        kind_words *k = &kinds[kind_of[d]];
        if (!k->kind) kind_words_make(m, devs[d].kind, k);
        qd->dev_kind[d] = k;
    }
    qd->w = as_device_words_make(m, devs, n);
    resolve_tables(m, qd);
    return qd;
}

static void read_device(reader *r, const as_query_devices *qd, as_query_text *out)
{
    const as_device *devs = qd->devs;
    size_t n_devs = qd->n;
    size_t nw = r->nw < DEVICE_WORDS ? r->nw : DEVICE_WORDS;
    if (!n_devs || !nw) return;
    const device_terms *dt = qd->dt;
    /* per word: folded as the device matcher folds it (or the device word it
     * was meant to be: fixed), whether some device has it, whether it is
     * filler or taken out */
    const char **folded = as_alloc(r->m, nw * sizeof(*folded));
    bool *usable = as_alloc(r->m, nw * sizeof(*usable)), *filler = as_alloc(r->m, nw);
    bool *fixed = as_alloc(r->m, nw);
    for (size_t k = 0; k < nw; k++) {
        const as_sword *w = &r->w[r->whole[k]];
        char *f = as_alloc(r->m, strlen(w->orig) + 1);
        as_text_fold(w->orig, strlen(w->orig), f);
        folded[k] = f;
        filler[k] = word_filler(r->m, w);
        usable[k] = !r->gone[r->whole[k]];
        bool any = usable[k] && some_device_has(qd, f);
        if (!any && usable[k] && !filler[k]) {
            const char *to = device_correction(f, qd->terms, qd->term_len, qd->first_at);
            if (to) {
                folded[k] = to;
                fixed[k] = any = true;
            }
        }
        usable[k] = any;
    }
    const as_device *found = NULL;
    size_t at = 0, len = 0;
    for (size_t l = DEVICE_SPAN; l >= 1 && !found; l--) {
        for (size_t k = 0; k + l <= nw && !found; k++) {
            bool ok = !filler[k] && !filler[k + l - 1];
            for (size_t j = k; j < k + l && ok; j++)
                ok = usable[j];
            if (!ok) continue;
            const as_device *dev =
                as_query_devices_resolve(r->m, qd, span_text(r, k, l, folded, fixed));
            if (!dev || !anchored(r, k, l, &dt[dev - devs], folded)) continue;
            found = dev;
            at = k;
            len = l;
        }
    }
    /* by brand and kind ("bosch drill"): when no span named a device, or to
     * take in the same device's brand and kind around the span that did
     * ("delonghi coffee machine") */
    for (size_t k = 0; k < nw; k++) {
        size_t bl;
        const as_device *dev =
            brand_kind_at(r, k, nw, devs, qd->brands, qd->brand_keys, qd->brand_strs, qd->n_brands,
                          dt, qd->dev_kind, folded, &bl);
        if (!dev || (found && (dev != found || k > at + len || k + bl < at))) continue;
        if (found) {
            size_t end = k + bl > at + len ? k + bl : at + len;
            at = k < at ? k : at;
            len = end - at;
        } else {
            found = dev;
            at = k;
            len = bl;
        }
        break;
    }
    if (!found) return;
    /* the kind right after the device's own name is part of it ("jura e8 coffee machine") */
    if (found->kind && at + len < nw) len += kind_span(r, at + len, nw, qd->dev_kind[found - devs]);
    device_found(r, found, at, len, out);
}

/* ---- the query ---- */

void as_query_read(as_mem *m, const char *q, const as_device *devs, size_t n_devs,
                   as_query_text *out)
{
    as_query_read_with(m, q, devs && q ? as_query_devices_make(m, devs, n_devs) : NULL, out);
}

void as_query_read_with(as_mem *m, const char *q, const as_query_devices *qd, as_query_text *out)
{
    memset(out, 0, sizeof(*out));
    if (!q) return;
    reader r = {.m = m, .q = q};
    r.n = as_search_words(m, q, &r.w);
    if (!r.n) return;
    r.whole = as_alloc(m, r.n * sizeof(*r.whole));
    r.gone = as_alloc(m, r.n);
    r.device = as_alloc(m, r.n);
    for (size_t i = 0; i < r.n; i++)
        if (!r.w[i].part) r.whole[r.nw++] = i;

    read_price(&r, out);
    if (qd) read_device(&r, qd, out);

    out->words = as_alloc(m, r.n * sizeof(*out->words));
    for (size_t i = 0; i < r.n; i++) {
        if (r.gone[i]) continue;
        const as_sword *w = &r.w[i];
        out->words[out->n++] = (as_qword){
            .text = w->text,
            .stem = w->stem,
            .orig = w->orig,
            .filler = r.device[i] || word_filler(m, w),
            .part = w->part,
            .at = w->at,
            .device = r.device[i],
        };
    }
}
