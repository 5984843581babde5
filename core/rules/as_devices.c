#include "as_devices.h"

#include <stdlib.h>
#include <string.h>

#include "as_util.h"

/* Unicode punctuation and symbols that separate words, as SQLite's unicode61
 * tokenizer treats them (only letters, digits and private use are word
 * characters): Latin-1 punctuation and signs (but not µ, ª, º, ², ³, ¹, ¼..¾),
 * × and ÷, general punctuation, currency, arrows and mathematical and
 * technical signs, box drawing, shapes and dingbats, CJK punctuation. Other
 * code points count as letters. */
static bool separator_cp(unsigned cp)
{
    if (cp >= 0xA0 && cp <= 0xBF)
        return !(cp == 0xAA || cp == 0xB2 || cp == 0xB3 || cp == 0xB5 || cp == 0xB9 || cp == 0xBA ||
                 cp >= 0xBC);
    return cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x206F) ||
           (cp >= 0x20A0 && cp <= 0x20CF) || (cp >= 0x2190 && cp <= 0x23FF) ||
           (cp >= 0x2500 && cp <= 0x27BF) || (cp >= 0x3000 && cp <= 0x303F);
}

size_t as_text_char(const char *s, bool *word)
{
    const unsigned char *p = (const unsigned char *)s;
    if (p[0] < 0x80) {
        *word = as_text_ascii_word(p[0]);
        return 1;
    }
    size_t n = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC0 ? 2 : 1;
    unsigned cp = n == 4 ? p[0] & 0x07u : n == 3 ? p[0] & 0x0Fu : p[0] & 0x1Fu;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) { /* broken UTF-8: one byte, part of a word */
            *word = true;
            return 1;
        }
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    *word = !separator_cp(cp);
    return n;
}

/* Latin letters with diacritics (U+00C0..U+017F) folded to plain lowercase ASCII,
 * by the rules of SQLite's unicode61 tokenizer with remove_diacritics 2 (which
 * the full-text index of schema versions before 3 used): so "Aldérmoor" and
 * "ÁLDERMOOR" read like "aldermoor". NULL: a letter of its own (ß, æ, ø, ł,
 * ...), kept as it is. */
/* clang-format off */
static const char *const latin_fold[] = {
    /* U+00C0 */ "a", "a", "a", "a", "a", "a", NULL, "c", "e", "e", "e", "e", "i", "i", "i", "i",
    /* U+00D0 */ NULL, "n", "o", "o", "o", "o", "o", NULL, NULL, "u", "u", "u", "u", "y", NULL, NULL,
    /* U+00E0 */ "a", "a", "a", "a", "a", "a", NULL, "c", "e", "e", "e", "e", "i", "i", "i", "i",
    /* U+00F0 */ NULL, "n", "o", "o", "o", "o", "o", NULL, NULL, "u", "u", "u", "u", "y", NULL, "y",
    /* U+0100 */ "a", "a", "a", "a", "a", "a", "c", "c", "c", "c", "c", "c", "c", "c", "d", "d",
    /* U+0110 */ NULL, NULL, "e", "e", "e", "e", "e", "e", "e", "e", "e", "e", "g", "g", "g", "g",
    /* U+0120 */ "g", "g", "g", "g", "h", "h", NULL, NULL, "i", "i", "i", "i", "i", "i", "i", "i",
    /* U+0130 */ "i", NULL, NULL, NULL, "j", "j", "k", "k", NULL, "l", "l", "l", "l", "l", "l", NULL,
    /* U+0140 */ NULL, NULL, NULL, "n", "n", "n", "n", "n", "n", NULL, NULL, NULL, "o", "o", "o", "o",
    /* U+0150 */ "o", "o", NULL, NULL, "r", "r", "r", "r", "r", "r", "s", "s", "s", "s", "s", "s",
    /* U+0160 */ "s", "s", "t", "t", "t", "t", NULL, NULL, "u", "u", "u", "u", "u", "u", "u", "u",
    /* U+0170 */ "u", "u", "u", "u", "w", "w", "y", "y", "y", "z", "z", "z", "z", "z", "z", NULL,
};
/* clang-format on */

size_t as_text_fold(const char *s, size_t n, char *out)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    size_t k = 0;
    while (p < end) {
        /* two-byte UTF-8 sequences C3 80..C5 BF are U+00C0..U+017F */
        if (p + 1 < end && p[0] >= 0xC3 && p[0] <= 0xC5 && p[1] >= 0x80 && p[1] <= 0xBF) {
            unsigned cp = ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
            const char *f = cp >= 0xC0 ? latin_fold[cp - 0xC0] : NULL;
            if (f) {
                out[k++] = f[0];
                p += 2;
                continue;
            }
        }
        /* tolower of the C locale (a Turkish one would make 'I' a dotless ı) */
        out[k++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + ('a' - 'A') : *p);
        p++;
    }
    out[k] = '\0';
    return k;
}

size_t as_text_terms(as_mem *m, const char *s, const char ***out)
{
    size_t cap = strlen(s) / 2 + 1, n = 0;
    const char **t = as_alloc(m, cap * sizeof(char *));
    const char *p = s;
    bool word = false;
    while (*p) {
        size_t k;
        while (*p && (k = as_text_char(p, &word), !word))
            p += k;
        const char *b = p;
        while (*p && (k = as_text_char(p, &word), word))
            p += k;
        if (p > b) {
            char *f = as_alloc(m, (size_t)(p - b) + 1);
            as_text_fold(b, (size_t)(p - b), f);
            t[n++] = f;
        }
    }
    *out = t;
    return n;
}

static bool has_term(const char **terms, size_t n, const char *t)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(terms[i], t) == 0) return true;
    return false;
}

/* A query word matches a device word when equal, or as a prefix of 2+ letters. */
static bool word_matches(const char *q, const char *d)
{
    size_t lq = strlen(q);
    return strcmp(q, d) == 0 || (lq >= 2 && strncmp(q, d, lq) == 0);
}

/* A bit for a word's first two bytes (its one letter and the NUL of a word of
 * one): a query word can match a device word (equal, or a prefix of 2+
 * letters) only when both have the same bit, so a device none of whose bits a
 * query has is passed over without comparing words. */
static uint64_t head_bit(const char *w)
{
    unsigned a = (unsigned char)w[0], b = a ? (unsigned char)w[1] : 0;
    return UINT64_C(1) << ((a * 31u + b) & 63u);
}

static bool matches_any(const char *q, const char **terms, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (word_matches(q, terms[i])) return true;
    return false;
}

static int match_cmp(const void *a, const void *b)
{
    const as_device_match *x = a, *y = b;
    if (x->confidence != y->confidence) return x->confidence > y->confidence ? -1 : 1;
    return strcmp(x->device->name, y->device->name);
}

as_device_words *as_device_words_make(as_mem *m, const as_device *devs, size_t n)
{
    as_device_words *w = as_alloc(m, (n ? n : 1) * sizeof(*w));
    for (size_t i = 0; i < n; i++) {
        const as_device *d = &devs[i];
        w[i].nn = as_text_terms(m, as_printf(m, "%s %s", d->brand, d->name), &w[i].name_t);
        w[i].na = as_text_terms(
            m, as_printf(m, "%s %s %s %s", d->brand, d->name, d->slug, d->aliases), &w[i].all_t);
        w[i].heads = 0;
        for (size_t j = 0; j < w[i].na; j++)
            w[i].heads |= head_bit(w[i].all_t[j]);
    }
    return w;
}

size_t as_devices_match(as_mem *m, const as_device *devs, size_t n, const char *q,
                        as_device_match **out)
{
    return as_devices_match_words(m, devs, NULL, n, q, out);
}

size_t as_devices_match_words(as_mem *m, const as_device *devs, const as_device_words *w,
                              size_t n, const char *q, as_device_match **out)
{
    if (q && !w) w = as_device_words_make(m, devs, n);
    as_device_match *r = as_alloc(m, (n + 1) * sizeof(*r));
    size_t k = 0;
    const char **qt = NULL;
    size_t nq = q ? as_text_terms(m, q, &qt) : 0;
    uint64_t q_heads = 0;
    for (size_t j = 0; j < nq; j++)
        q_heads |= head_bit(qt[j]);
    for (size_t i = 0; i < n; i++) {
        const as_device *d = &devs[i];
        if (!q) {
            r[k++] = (as_device_match){d, 1.0, true};
            continue;
        }
        if (strcmp(q, d->slug) == 0) {
            r[k++] = (as_device_match){d, 1.0, true};
            continue;
        }
        if (!(w[i].heads & q_heads)) continue; /* no word of q can match one of d's */
        const char **name_t = w[i].name_t, **all_t = w[i].all_t;
        size_t nn = w[i].nn, na = w[i].na;
        size_t hit_q = 0, hit_name = 0;
        for (size_t j = 0; j < nq; j++)
            if (matches_any(qt[j], all_t, na)) hit_q++;
        for (size_t j = 0; j < nn; j++) {
            /* count each distinct name word once (the brand often repeats in the name) */
            if (has_term(name_t, j, name_t[j])) continue;
            for (size_t x = 0; x < nq; x++)
                if (word_matches(qt[x], name_t[j])) {
                    hit_name++;
                    break;
                }
        }
        if (!hit_q) continue;
        size_t distinct = 0;
        for (size_t j = 0; j < nn; j++)
            if (!has_term(name_t, j, name_t[j])) distinct++;
        double cq = (double)hit_q / (double)nq;
        double cd = distinct ? (double)hit_name / (double)distinct : 0;
        double conf = as_round(cq * (0.6 + 0.4 * cd), 2);
        r[k++] = (as_device_match){d, conf, hit_q == nq};
    }
    qsort(r, k, sizeof(*r), match_cmp);
    *out = r;
    return k;
}

as_dev_resolution as_device_resolve(as_mem *m, const as_device *devs, size_t n, const char *q,
                                    const as_device **found, const char **candidates_text)
{
    return as_device_resolve_words(m, devs, NULL, n, q, found, candidates_text);
}

as_dev_resolution as_device_resolve_words(as_mem *m, const as_device *devs,
                                          const as_device_words *w, size_t n, const char *q,
                                          const as_device **found,
                                          const char **candidates_text)
{
    *found = NULL;
    *candidates_text = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(devs[i].slug, q) == 0) {
            *found = &devs[i];
            return AS_DEV_FOUND;
        }
    as_device_match *c;
    size_t k = as_devices_match_words(m, devs, w, n, q, &c);
    size_t full = 0;
    for (size_t i = 0; i < k; i++)
        if (c[i].all_terms) {
            if (!full) *found = c[i].device;
            full++;
        }
    if (full == 1) return AS_DEV_FOUND;
    *found = NULL;
    if (k == 0) return AS_DEV_NONE;
    as_buf b;
    as_buf_init(&b, m);
    size_t shown = 0;
    for (size_t i = 0; i < k && shown < 8; i++) {
        if (full && !c[i].all_terms) continue;
        as_buf_printf(&b, "%s%s (%s)", shown ? ", " : "", c[i].device->slug, c[i].device->name);
        shown++;
    }
    *candidates_text = as_buf_str(&b);
    return full > 1 ? AS_DEV_AMBIGUOUS : AS_DEV_NONE;
}
