/* Search, stage 2 (match): which products have the query's words, and how
 * well. A word matches a catalogue word exactly or in another form of it (the
 * same stem: "filters" → "filter"), as the beginning of a longer word ("aa" →
 * "aaa"; never for numbers), or, when neither finds anything, as a word one
 * letter away (two from nine letters; the first letter as typed). A word of
 * letters and digits ("2m") also matches a product that has its parts ("2 m").
 * A product's tier is the worst of its words' best matches: exact words rank
 * ahead of prefixes and corrections ("aa" before "aaa"). When no product has
 * every word, the least telling words (those no product has, then those most
 * products have) are dropped until some product matches, and the response
 * says which. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "as_search_internal.h"

#define MAX_UNITS 16
#define MAX_LISTED 8
#define NO_MATCH 0xFF

/* The catalogue words a query word matches, each with how (as_match_kind),
 * in vocabulary order: a handful, not a byte per catalogue word. */
typedef struct tok_list {
    uint32_t *tok;
    uint8_t *kind;
    size_t n;
} tok_list;

/* One required word: its own matches, and its parts' ("2m": "2" and "m"). */
typedef struct unit {
    const as_qword *w;
    tok_list kind;
    size_t postings;
    const as_qword *parts[4];
    tok_list part_kind[4];
    size_t n_parts;
    size_t part_postings; /* the rarest part's */
    size_t part_rarest;
    uint8_t *dk;  /* per product: how it matches the unit (unit_doc_kinds) */
    int64_t docs; /* products (among the candidates) that match it */
    uint8_t best; /* the best kind of any matching product */
    const char *corrected;
} unit;

static bool numeric(const char *w)
{
    return *w >= '0' && *w <= '9';
}

/* The first catalogue word >= s (the vocabulary is in byte order). */
static uint32_t lower_bound(const sx_catalog *c, const char *s)
{
    uint32_t lo = 0, hi = c->ntok;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (strcmp(sx_tok(c, mid), s) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool find_stem(const sx_catalog *c, const char *stem, uint32_t *out)
{
    uint32_t lo = 0, hi = c->nstems;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int r = strcmp(c->stem_text + c->stem_at[mid], stem);
        if (r == 0) {
            *out = mid;
            return true;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

typedef struct tok_kind {
    uint32_t tok;
    uint8_t kind;
} tok_kind;

static int tok_kind_cmp(const void *a, const void *b)
{
    const tok_kind *x = a, *y = b;
    if (x->tok != y->tok) return x->tok < y->tok ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

/* Adds (tok, kind) to the pairs being gathered, growing them on m. */
static void gather(as_mem *m, tok_kind **v, size_t *n, size_t *cap, uint32_t tok, uint8_t kind)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        tok_kind *nv = as_alloc(m, nc * sizeof(*nv));
        if (*n) memcpy(nv, *v, *n * sizeof(*nv));
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = (tok_kind){tok, kind};
}

/* The catalogue words of one query word, each with how it matches (the best
 * way, when it matches in several). */
static tok_list word_kinds(const sx_catalog *c, as_mem *m, const as_qword *w, size_t *postings,
                           const char **corrected)
{
    tok_kind *v = NULL;
    size_t n = 0, cap = 0;
    uint32_t at = lower_bound(c, w->text);
    if (at < c->ntok && strcmp(sx_tok(c, at), w->text) == 0)
        gather(m, &v, &n, &cap, at, AS_MATCH_EXACT);
    uint32_t st;
    if (w->stem && find_stem(c, w->stem, &st))
        for (uint32_t i = c->stem_toks_at[st]; i < c->stem_toks_at[st + 1]; i++)
            gather(m, &v, &n, &cap, c->stem_toks[i], AS_MATCH_EXACT);
    size_t len = strlen(w->text);
    if (len >= 2 && !numeric(w->text))
        for (uint32_t i = at; i < c->ntok && strncmp(sx_tok(c, i), w->text, len) == 0; i++)
            gather(m, &v, &n, &cap, i, AS_MATCH_PREFIX);
    if (!n && as_search_typo_max(w->text)) {
        /* the rule of as_search_typo (as_search_words.c), over the words with
         * the same first letter */
        int best = INT_MAX;
        uint32_t best_posts = 0;
        char first[2] = {w->text[0], '\0'};
        for (uint32_t i = lower_bound(c, first); i < c->ntok && sx_tok(c, i)[0] == w->text[0];
             i++) {
            const char *t = sx_tok(c, i);
            int dd = as_search_typo(w->text, t);
            if (dd < 0) continue;
            gather(m, &v, &n, &cap, i, AS_MATCH_CORRECTED);
            /* the closest, then the most common, is the one named */
            uint32_t posts = c->post_at[i + 1] - c->post_at[i];
            if (dd < best || (dd == best && posts > best_posts)) {
                best = dd;
                best_posts = posts;
                *corrected = t;
            }
        }
    }
    /* each word once, with its best kind (the pairs sort by word, then kind) */
    if (n > 1) qsort(v, n, sizeof(*v), tok_kind_cmp);
    tok_list l = {as_alloc(m, (n ? n : 1) * sizeof(uint32_t)), as_alloc(m, n ? n : 1), 0};
    size_t p = 0;
    for (size_t i = 0; i < n; i++) {
        if (l.n && l.tok[l.n - 1] == v[i].tok) continue;
        l.tok[l.n] = v[i].tok;
        l.kind[l.n++] = v[i].kind;
        p += c->post_at[v[i].tok + 1] - c->post_at[v[i].tok];
    }
    *postings = p;
    return l;
}

/* Per product, the best kind of any of its words in kind (NO_MATCH for none):
 * from the postings of the words that match, not from every product's words. */
static uint8_t *doc_kinds(const sx_catalog *c, as_mem *m, const tok_list *kind)
{
    uint8_t *dk = as_alloc(m, c->n ? c->n : 1);
    memset(dk, NO_MATCH, c->n);
    for (size_t t = 0; t < kind->n; t++) {
        uint32_t i = kind->tok[t];
        uint8_t k = kind->kind[t];
        for (uint32_t p = c->post_at[i]; p < c->post_at[i + 1]; p++)
            if (k < dk[c->post[p]]) dk[c->post[p]] = k;
    }
    return dk;
}

/* How each product matches unit u: the word's own best kind, or, when it has
 * every part ("2m": "2" and "m"), the worst of its parts' best kinds. */
static void unit_doc_kinds(const sx_catalog *c, as_mem *m, unit *u)
{
    u->dk = doc_kinds(c, m, &u->kind);
    if (!u->n_parts) return;
    uint8_t *worst = as_alloc(m, c->n ? c->n : 1);
    memset(worst, 0, c->n);
    for (size_t p = 0; p < u->n_parts; p++) {
        uint8_t *pk = doc_kinds(c, m, &u->part_kind[p]);
        for (size_t d = 0; d < c->n; d++)
            if (pk[d] > worst[d]) worst[d] = pk[d];
    }
    for (size_t d = 0; d < c->n; d++)
        if (worst[d] < u->dk[d]) u->dk[d] = worst[d];
}

/* How product doc matches unit u: its best kind, or NO_MATCH. */
static inline uint8_t unit_kind(const unit *u, uint32_t doc)
{
    return u->dk[doc];
}

static void mark_postings(const sx_catalog *c, const tok_list *kind, uint64_t *bits)
{
    for (size_t t = 0; t < kind->n; t++)
        for (uint32_t p = c->post_at[kind->tok[t]]; p < c->post_at[kind->tok[t] + 1]; p++)
            bits[c->post[p] >> 6] |= 1ull << (c->post[p] & 63);
}

/* The products that may match every active unit: the postings of the unit
 * with the fewest. */
static uint64_t *candidates(const sx_catalog *c, as_mem *m, unit *us, const bool *active, size_t nu)
{
    size_t words = (c->n + 63) / 64, drive = nu;
    size_t cost = SIZE_MAX;
    for (size_t i = 0; i < nu; i++) {
        if (!active[i]) continue;
        size_t k = us[i].postings + (us[i].n_parts ? us[i].part_postings : 0);
        if (k < cost) {
            cost = k;
            drive = i;
        }
    }
    uint64_t *bits = as_alloc(m, (words ? words : 1) * 8);
    if (drive == nu) return bits;
    mark_postings(c, &us[drive].kind, bits);
    if (us[drive].n_parts) mark_postings(c, &us[drive].part_kind[us[drive].part_rarest], bits);
    return bits;
}

/* Every product that passes the filters and matches each active unit, with its
 * tier; returns how many of them would be results (not excluded), or with
 * record, 0 or 1: whether any would be (the page stage counts them anyway). */
static size_t evaluate(const as_search_snap *s, const sx_filter *f, unit *us, const bool *active,
                       size_t nu, const uint64_t *bits, uint8_t *tier, bool record)
{
    const sx_catalog *c = s->c;
    size_t words = (c->n + 63) / 64, n = 0;
    for (size_t bw = 0; bw < words; bw++)
        for (uint64_t cur = bits[bw]; cur; cur &= cur - 1) {
            uint32_t d = (uint32_t)(bw * 64 + (size_t)__builtin_ctzll(cur));
            const sx_compat *row;
            if (!sx_filter_candidate(s, f, d, &row)) continue;
            uint8_t t = 0, kind[MAX_UNITS];
            for (size_t i = 0; i < nu && t != NO_MATCH; i++) {
                if (!active[i]) continue;
                kind[i] = unit_kind(&us[i], d);
                if (kind[i] > t) t = kind[i];
            }
            if (t == NO_MATCH) continue;
            tier[d] = t;
            if ((!record || !n) && sx_filter_viable(s, f, d, row)) n++;
            if (record)
                for (size_t i = 0; i < nu; i++)
                    if (active[i] && kind[i] < us[i].best) us[i].best = kind[i];
        }
    return n;
}

/* Products (among those the filters let through) that match unit u alone. */
static int64_t unit_docs(const as_search_snap *s, as_mem *m, const sx_filter *f, unit *u)
{
    const sx_catalog *c = s->c;
    size_t words = (c->n + 63) / 64;
    uint64_t *bits = as_alloc(m, (words ? words : 1) * 8);
    mark_postings(c, &u->kind, bits);
    if (u->n_parts) mark_postings(c, &u->part_kind[u->part_rarest], bits);
    int64_t n = 0;
    for (size_t bw = 0; bw < words; bw++)
        for (uint64_t cur = bits[bw]; cur; cur &= cur - 1) {
            uint32_t d = (uint32_t)(bw * 64 + (size_t)__builtin_ctzll(cur));
            const sx_compat *row;
            if (sx_filter_candidate(s, f, d, &row) && sx_filter_viable(s, f, d, row) &&
                unit_kind(u, d) != NO_MATCH)
                n++;
        }
    return n;
}

static void list_matched(const sx_catalog *c, as_mem *m, const unit *u, as_search_word *w)
{
    w->matched = as_alloc(m, MAX_LISTED * sizeof(char *));
    for (uint8_t k = 0; k <= AS_MATCH_CORRECTED && w->n_matched < MAX_LISTED; k++)
        for (size_t t = 0; t < u->kind.n && w->n_matched < MAX_LISTED; t++)
            if (u->kind.kind[t] == k)
                w->matched[w->n_matched++] = as_strdup(m, sx_tok(c, u->kind.tok[t]));
}

void sx_match_run(const as_search_snap *s, as_mem *m, const as_query_text *qt, const char *text,
                  const sx_filter *f, sx_match *out)
{
    const sx_catalog *c = s->c;
    memset(out, 0, sizeof(*out));
    out->u.text = text;
    out->u.ignored = as_alloc(m, (qt->n + 1) * sizeof(char *));
    /* the required words: not filler (all of them when every word is filler) */
    bool all_filler = true;
    for (size_t i = 0; i < qt->n; i++)
        if (!qt->words[i].filler && !qt->words[i].part) all_filler = false;
    unit *us = as_alloc(m, MAX_UNITS * sizeof(unit));
    size_t nu = 0;
    for (size_t i = 0; i < qt->n; i++) {
        const as_qword *w = &qt->words[i];
        if (w->part) {
            if (nu && us[nu - 1].w == &qt->words[i - us[nu - 1].n_parts - 1] &&
                us[nu - 1].n_parts < 4)
                us[nu - 1].parts[us[nu - 1].n_parts++] = w;
            continue;
        }
        if (w->filler && !all_filler) {
            out->u.ignored[out->u.n_ignored++] = w->orig ? w->orig : w->text;
            continue;
        }
        if (nu == MAX_UNITS) continue;
        us[nu].w = w;
        us[nu].best = NO_MATCH;
        nu++;
    }
    if (nu == 0) return; /* no words: every product, tier 0 */
    out->any_text = true;
    out->tier = as_alloc(m, c->n ? c->n : 1);
    memset(out->tier, NO_MATCH, c->n);
    for (size_t i = 0; i < nu; i++) {
        unit *u = &us[i];
        u->kind = word_kinds(c, m, u->w, &u->postings, &u->corrected);
        u->part_postings = SIZE_MAX;
        for (size_t p = 0; p < u->n_parts; p++) {
            size_t pp;
            const char *ignored = NULL;
            u->part_kind[p] = word_kinds(c, m, u->parts[p], &pp, &ignored);
            if (pp < u->part_postings) {
                u->part_postings = pp;
                u->part_rarest = p;
            }
        }
        if (!u->n_parts) u->part_postings = 0;
        unit_doc_kinds(c, m, u);
    }
    bool active[MAX_UNITS];
    for (size_t i = 0; i < nu; i++)
        active[i] = true;
    size_t n = evaluate(s, f, us, active, nu, candidates(c, m, us, active, nu), out->tier, true);
    out->u.dropped = as_alloc(m, (nu + 1) * sizeof(char *));
    if (n == 0 && nu > 1) {
        /* Drop words until something matches: first those no product has;
         * then, one at a time, the word whose absence lets the most products
         * match (of equals, the one most products have: the least telling).
         * On the relevance set (t/relevance) this beat dropping the most
         * common word first: "coffee machine water filter" keeps "water". */
        for (size_t i = 0; i < nu; i++)
            us[i].docs = unit_docs(s, m, f, &us[i]);
        size_t left = nu;
        for (size_t i = 0; i < nu && left > 1; i++)
            if (us[i].docs == 0) {
                active[i] = false;
                left--;
            }
        n = evaluate(s, f, us, active, nu, candidates(c, m, us, active, nu), out->tier, false);
        while (n == 0 && left > 1) {
            size_t pick = nu, pick_n = 0;
            for (size_t i = 0; i < nu; i++) {
                if (!active[i]) continue;
                active[i] = false;
                size_t k = evaluate(s, f, us, active, nu, candidates(c, m, us, active, nu),
                                    out->tier, false);
                active[i] = true;
                if (pick == nu || k > pick_n || (k == pick_n && us[i].docs > us[pick].docs)) {
                    pick = i;
                    pick_n = k;
                }
            }
            active[pick] = false;
            left--;
            n = pick_n;
        }
        /* the tiers and best kinds of the words kept, afresh */
        memset(out->tier, NO_MATCH, c->n);
        for (size_t i = 0; i < nu; i++)
            us[i].best = NO_MATCH;
        evaluate(s, f, us, active, nu, candidates(c, m, us, active, nu), out->tier, true);
        for (size_t i = 0; i < nu; i++)
            if (!active[i])
                out->u.dropped[out->u.n_dropped++] = us[i].w->orig ? us[i].w->orig : us[i].w->text;
        out->dropped_any = out->u.n_dropped > 0;
    }
    out->u.words = as_alloc(m, nu * sizeof(as_search_word));
    for (size_t i = 0; i < nu; i++) {
        if (!active[i]) continue;
        as_search_word *w = &out->u.words[out->u.n_words++];
        w->word = us[i].w->text;
        w->how = us[i].best == NO_MATCH ? AS_MATCH_NONE : (as_match_kind)us[i].best;
        list_matched(c, m, &us[i], w);
        if (w->how == AS_MATCH_CORRECTED && us[i].corrected)
            w->corrected = as_strdup(m, us[i].corrected);
    }
}
