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

/* With f->kept: of the products in cand (bitset word w), those with an offer
 * in stock every offer filter keeps (sx_filter_kept_each, sx_filter_kept_sets). */
static inline uint64_t filter_kept(const as_search_snap *s, const sx_filter *f, size_t w,
                                   uint64_t cand)
{
    if (f->kept_each) return sx_filter_kept_each(s, f, w, cand);
    return sx_filter_kept_sets(s, f, w, cand);
}

#define MAX_UNITS 16
#define MAX_LISTED 8
#define NO_MATCH 0xFF
#define NKINDS (AS_MATCH_CORRECTED + 1)

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
    /* per kind t (as_match_kind up to AS_MATCH_CORRECTED): the products that
     * match the unit with kind t or better, a bit each (unit_bits); read
     * only once made: le[0] may be a frequent word's own bitset, shared by
     * the process's searches (tok_bits) */
    uint64_t *le[NKINDS];
    /* the words of le written (the others hold none of its products): from
     * its words' first and last products, within the filter's span */
    sx_span span;
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
    size_t len = strlen(w->text), skipped = 0, whole = n;
    if (len >= 2 && !numeric(w->text))
        for (uint32_t i = at; i < c->ntok && strncmp(sx_tok(c, i), w->text, len) == 0; i++) {
            /* a word only ever joined from a first word at least this long:
             * its products have that first word, which this one matches as
             * well or better ("filter" in "filter453"): its postings counted
             * (unless it is gathered already, in the same stem), not it */
            if (c->tok_join[i] >= len) {
                bool had = false;
                for (size_t k = 0; k < whole && !had; k++)
                    had = v[k].tok == i;
                if (!had) skipped += c->post_at[i + 1] - c->post_at[i];
                continue;
            }
            gather(m, &v, &n, &cap, i, AS_MATCH_PREFIX);
        }
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
    size_t p = skipped;
    for (size_t i = 0; i < n; i++) {
        if (l.n && l.tok[l.n - 1] == v[i].tok) continue;
        l.tok[l.n] = v[i].tok;
        l.kind[l.n++] = v[i].kind;
        p += c->post_at[v[i].tok + 1] - c->post_at[v[i].tok];
    }
    *postings = p;
    return l;
}

/* A word in at least one product in DENSE_SHARE has its products kept as a
 * bitset (sx_catalog.tok_slots): or-ing its words is cheaper than setting a
 * bit per posting once the postings outnumber the bitset's words a few times
 * over ("filter" on 100,000 products: 30,000 postings, 1,563 words). */
#define DENSE_SHARE 64

static inline size_t tok_slot(uint32_t tok)
{
    return (size_t)(tok * 2654435761u) % SX_TOK_SLOTS;
}

/* Word tok's products as a bitset of this process's (made now if need be),
 * or NULL: a rare word, or SX_TOK_BITS made already, or no memory. */
static const uint64_t *tok_bits(const sx_catalog *cat, uint32_t tok)
{
    sx_catalog *c = (sx_catalog *)cat; /* its process's own part: tok_slots, tok_made */
    uint32_t np = c->post_at[tok + 1] - c->post_at[tok];
    if (!c->tok_slots || np < 2 || (size_t)np * DENSE_SHARE < c->n) return NULL;
    for (size_t i = tok_slot(tok), k = 0; k < SX_TOK_SLOTS; i = (i + 1) % SX_TOK_SLOTS, k++) {
        unsigned key = atomic_load_explicit(&c->tok_slots[i].key, memory_order_acquire);
        if (key == tok + 1) return atomic_load_explicit(&c->tok_slots[i].bits, memory_order_relaxed);
        if (!key) break;
    }
    const uint64_t *out = NULL;
    mtx_lock(&c->tok_lock);
    for (size_t i = tok_slot(tok), k = 0; k < SX_TOK_SLOTS; i = (i + 1) % SX_TOK_SLOTS, k++) {
        struct sx_tok_slot *sl = &c->tok_slots[i];
        unsigned key = atomic_load_explicit(&sl->key, memory_order_relaxed);
        if (key == tok + 1) { /* made by another thread meanwhile */
            out = atomic_load_explicit(&sl->bits, memory_order_relaxed);
            break;
        }
        if (key) continue;
        uint64_t *b = c->tok_made < SX_TOK_BITS ? calloc(c->words ? c->words : 1, 8) : NULL;
        if (b) {
            for (uint32_t p = c->post_at[tok]; p < c->post_at[tok + 1]; p++)
                b[c->post[p] >> 6] |= 1ull << (c->post[p] & 63);
            atomic_store_explicit(&sl->bits, b, memory_order_relaxed);
            atomic_store_explicit(&sl->key, tok + 1, memory_order_release);
            c->tok_made++;
        }
        out = b;
        break;
    }
    mtx_unlock(&c->tok_lock);
    return out;
}

/* bits' words in sp made base's products (none when base is NULL) and word
 * tok's, in one pass: from its bitset when it is a frequent word
 * (tok_bits), else from its postings (ascending: those within sp). bits may
 * be base. */
static void tok_into(const sx_catalog *c, uint32_t tok, uint64_t *bits, const uint64_t *base,
                     sx_span sp)
{
    if (sp.hi == sp.lo) return;
    size_t nw = sp.hi - sp.lo;
    const uint64_t *dense = tok_bits(c, tok);
    if (dense) {
        if (!base)
            memcpy(bits + sp.lo, dense + sp.lo, nw * 8);
        else
            for (size_t w = sp.lo; w < sp.hi; w++)
                bits[w] = base[w] | dense[w];
        return;
    }
    if (!base)
        memset(bits + sp.lo, 0, nw * 8);
    else if (base != bits)
        memcpy(bits + sp.lo, base + sp.lo, nw * 8);
    uint32_t p = c->post_at[tok], end = c->post_at[tok + 1];
    uint64_t first = (uint64_t)sp.lo * 64, past = (uint64_t)sp.hi * 64;
    if (p < end && c->post[p] < first) { /* the first posting within sp */
        uint32_t lo = p, hi = end;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (c->post[mid] < first)
                lo = mid + 1;
            else
                hi = mid;
        }
        p = lo;
    }
    for (; p < end && c->post[p] < past; p++)
        bits[c->post[p] >> 6] |= 1ull << (c->post[p] & 63);
}

/* Per kind t, the products with a word of the list that matches with kind t
 * or better (le[t], its words in sp): from the postings of the words that
 * match (or a frequent word's bitset), not from every product's words. le[t]
 * is either le[t - 1] itself (a kind the list has no word of adds nothing:
 * unit_bits gives it no memory of its own) or memory of its own, its words
 * in sp written here (uninitialised before), as le[t - 1] and its own words:
 * the first word's set written in, not or-ed into a zeroed one. */
static void kind_bits(const sx_catalog *c, const tok_list *kind, uint64_t **le, sx_span sp,
                      size_t from)
{
    for (size_t k = from; k < NKINDS; k++) {
        if (k && le[k] == le[k - 1]) continue;
        const uint64_t *base = k ? le[k - 1] : NULL;
        for (size_t t = 0; t < kind->n; t++)
            if (kind->kind[t] == k) {
                tok_into(c, kind->tok[t], le[k], base, sp);
                base = le[k];
            }
        if (base == le[k] || sp.hi == sp.lo) continue;
        if (base)
            memcpy(le[k] + sp.lo, base + sp.lo, (sp.hi - sp.lo) * 8);
        else
            memset(le[k] + sp.lo, 0, (sp.hi - sp.lo) * 8);
    }
}

/* The words of the products of the words in l: from the first product of
 * any to the last (each word's postings are ascending). */
static sx_span list_span(const sx_catalog *c, const tok_list *l)
{
    uint32_t first = UINT32_MAX, last = 0;
    for (size_t t = 0; t < l->n; t++) {
        uint32_t p = c->post_at[l->tok[t]], end = c->post_at[l->tok[t] + 1];
        if (p == end) continue;
        if (c->post[p] < first) first = c->post[p];
        if (c->post[end - 1] > last) last = c->post[end - 1];
    }
    return sx_span_docs(first, last);
}

/* The span of x's words and y's together (from the first to the last). */
static sx_span span_or(sx_span x, sx_span y)
{
    if (x.hi == x.lo) return y;
    if (y.hi == y.lo) return x;
    return (sx_span){x.lo < y.lo ? x.lo : y.lo, x.hi > y.hi ? x.hi : y.hi};
}

/* How each product matches unit u (u->le): the word's own best kind, or, when
 * it has every part ("2m": "2" and "m"), the worst of its parts' best kinds,
 * whichever is better. A word without parts whose list has no word of some
 * kind shares the kind before's set (most words have no corrections, many no
 * longer words: at 1,000,000 products each set is 125 KB to zero and pass
 * over, in this and every later stage). */
static void unit_bits(const sx_catalog *c, as_mem *tmp, unit *u, sx_span within)
{
    size_t words = (c->n + 63) / 64, bytes = (words ? words : 1) * 8;
    /* its own words' products, or those with every part: within the first
     * and last of either */
    sx_span parts = {0, 0};
    for (size_t p = 0; p < u->n_parts; p++) {
        sx_span one = list_span(c, &u->part_kind[p]);
        parts = p ? sx_span_and(parts, one) : one;
    }
    sx_span sp = sx_span_and(span_or(list_span(c, &u->kind), parts), within);
    u->span = sp;
    size_t has[NKINDS] = {0};
    uint32_t exact = 0; /* the word that matches exactly, when one does */
    for (size_t t = 0; t < u->kind.n; t++)
        if (!has[u->kind.kind[t]]++ && u->kind.kind[t] == 0) exact = u->kind.tok[t];
    /* one word that matches exactly, a frequent one, and no parts: its own
     * bitset is the exact kind's set, not a copy of it (a pass of 125 KB at
     * 1,000,000 products; nothing writes a unit's sets once made) */
    const uint64_t *shared = !u->n_parts && has[0] == 1 ? tok_bits(c, exact) : NULL;
    for (size_t t = 0; t < NKINDS; t++)
        u->le[t] = t == 0 && shared                 ? (uint64_t *)shared
                   : t == 0 || has[t] || u->n_parts ? as_alloc_raw(tmp, bytes)
                                                    : u->le[t - 1];
    kind_bits(c, &u->kind, u->le, sp, shared ? 1 : 0);
    if (!u->n_parts) return;
    uint64_t *all[NKINDS], *part[NKINDS];
    for (size_t t = 0; t < NKINDS; t++) {
        all[t] = as_alloc_raw(tmp, bytes);
        part[t] = as_alloc_raw(tmp, bytes);
    }
    for (size_t p = 0; p < u->n_parts; p++) {
        kind_bits(c, &u->part_kind[p], p ? part : all, sp, 0);
        if (p)
            for (size_t t = 0; t < NKINDS; t++)
                for (size_t w = sp.lo; w < sp.hi; w++)
                    all[t][w] &= part[t][w];
    }
    for (size_t t = 0; t < NKINDS; t++)
        for (size_t w = sp.lo; w < sp.hi; w++)
            u->le[t][w] |= all[t][w];
}

/* How product doc matches unit u: its best kind, or NO_MATCH. */
static inline uint8_t unit_kind(const unit *u, uint32_t doc)
{
    for (uint8_t t = 0; t < NKINDS; t++)
        if (sx_bit(u->le[t], doc)) return t;
    return NO_MATCH;
}

/* The products that match every active unit with kind t or better, for each
 * t from `from` (tr->le[t], its words in tr->span: the filter's span and
 * the active units'; every product when no unit is active), and, from
 * `mask` (NULL for none), of the category, part type,
 * merchant and device: one pass per kind, the units' sets and-ed together.
 * A kind where no active unit has a set of its own shares the set of the
 * kind before (most words match no product by a prefix or a correction
 * only: at 1,000,000 products that is a pass of 125 KB saved per kind, in
 * this stage and in the page's); not at `from` itself, as the sets below
 * it were made for other units. */
typedef struct tiers {
    uint64_t *le[NKINDS];
    uint64_t *own[NKINDS]; /* each kind's own memory */
    /* the words of le written: the filter's span (within) and the active
     * units' */
    sx_span span, within;
} tiers;

static void candidates(const sx_catalog *c, const unit *us, const bool *active, size_t nu,
                       size_t from, const uint64_t *mask, tiers *tr)
{
    sx_span sp = tr->within;
    for (size_t i = 0; i < nu; i++)
        if (active[i]) sp = sx_span_and(sp, us[i].span);
    tr->span = sp;
    size_t nw = sp.hi - sp.lo;
    for (size_t t = from; t < NKINDS; t++) {
        const uint64_t *src[MAX_UNITS + 1];
        size_t ns = 0;
        bool same = t > from;
        for (size_t i = 0; i < nu; i++) {
            if (!active[i]) continue;
            src[ns++] = us[i].le[t];
            if (t && us[i].le[t] != us[i].le[t - 1]) same = false;
        }
        if (same) {
            tr->le[t] = tr->le[t - 1];
            continue;
        }
        uint64_t *bits = tr->le[t] = tr->own[t];
        if (mask) src[ns++] = mask;
        if (!nw) continue;
        if (!ns) {
            memset(bits + sp.lo, 0xFF, nw * 8);
            if (sp.hi == c->words && (c->n & 63)) bits[sp.hi - 1] = (1ull << (c->n & 63)) - 1;
        } else if (ns == 1) {
            memcpy(bits + sp.lo, src[0] + sp.lo, nw * 8);
        } else if (ns == 2) {
            const uint64_t *x = src[0], *y = src[1];
            for (size_t w = sp.lo; w < sp.hi; w++)
                bits[w] = x[w] & y[w];
        } else {
            for (size_t w = sp.lo; w < sp.hi; w++) {
                uint64_t x = src[0][w];
                for (size_t i = 1; i < ns; i++)
                    x &= src[i][w];
                bits[w] = x;
            }
        }
    }
}

/* The products of the category, the part type, the merchant (one with
 * an offer there) and the device (one it has a row for) as a bitset, the
 * intersection of those given (written within f's span); NULL for every
 * product. */
static const uint64_t *filter_mask(const sx_catalog *c, as_mem *tmp, const sx_filter *f)
{
    if (f->none) return NULL;
    const uint64_t *sets[4];
    size_t n = 0;
    if (f->has_cat) sets[n++] = c->cat_bits + f->cat * c->words;
    if (f->has_pt) sets[n++] = c->pt_bits + f->pt * c->words;
    if (f->merchant >= 0) sets[n++] = c->merchant_bits + (size_t)f->merchant * c->words;
    if (f->dev_bits) sets[n++] = f->dev_bits;
    if (n <= 1) return n ? sets[0] : NULL;
    uint64_t *all = as_alloc_raw(tmp, (c->words ? c->words : 1) * 8);
    for (size_t w = f->span.lo; w < f->span.hi; w++) {
        uint64_t x = sets[0][w];
        for (size_t i = 1; i < n; i++)
            x &= sets[i][w];
        all[w] = x;
    }
    return all;
}

/* Every product that passes the filters and matches each active unit;
 * returns how many of them would be results (not excluded), or with out, 0
 * or 1: whether any would be (the page stage counts them anyway). With out,
 * the matches (ascending), their tiers and each unit's best kind. */
SX_POPCNT static size_t evaluate(const as_search_snap *s, as_mem *tmp, const sx_filter *f,
                                 const uint64_t *mask, unit *us, const bool *active, size_t nu,
                                 const tiers *tr, sx_match *out)
{
    size_t n = 0;
    sx_span sp = tr->span;
    const uint64_t *any = tr->le[NKINDS - 1];
    /* the category, part type and merchant by the mask, a word at a time;
     * the device per product */
    bool each = f->none || f->dev;
    if (out) {
        size_t most = 0;
        for (size_t w = sp.lo; w < sp.hi; w++)
            most += (size_t)sx_pop64(mask ? any[w] & mask[w] : any[w]);
        out->docs = as_alloc(tmp, (most ? most : 1) * sizeof(uint32_t));
        out->tiers = as_alloc(tmp, most ? most : 1);
        out->ndocs = 0;
    }
    for (size_t bw = sp.lo; bw < sp.hi; bw++)
        for (uint64_t cur = mask ? any[bw] & mask[bw] : any[bw]; cur; cur &= cur - 1) {
            uint32_t d = (uint32_t)(bw * 64 + (size_t)__builtin_ctzll(cur));
            const sx_compat *row = NULL;
            if (each && !sx_filter_candidate(s, f, d, &row)) continue;
            if ((!out || !n) && sx_filter_viable(s, f, d, row)) n++;
            if (!out) continue;
            uint8_t t = 0;
            while (t < NKINDS - 1 && !sx_bit(tr->le[t], d))
                t++;
            out->docs[out->ndocs] = d;
            out->tiers[out->ndocs++] = t;
            for (size_t i = 0; i < nu; i++)
                if (active[i] && us[i].best) {
                    uint8_t k = unit_kind(&us[i], d);
                    if (k < us[i].best) us[i].best = k;
                }
        }
    return n;
}

/* evaluate with sx_filter.bits, on bitsets instead of each product: the
 * tiers' sets narrowed to the mask (category, part type, merchant), the
 * count of those that would be results (with out, 0 or 1), and with out,
 * the sets and each unit's best kind. */
SX_POPCNT static size_t evaluate_bits(const as_search_snap *s, const sx_filter *f,
                                      const uint64_t *mask, unit *us, const bool *active, size_t nu,
                                      tiers *tr, sx_match *out)
{
    const sx_catalog *c = s->c;
    size_t n = 0;
    sx_span sp = tr->span;
    if (mask && nu == 1) /* one word: its sets masked (candidates masks the others) */
        for (size_t t = 0; t < NKINDS; t++) {
            if (t && tr->le[t] == tr->le[t - 1]) { /* a set shared with the kind before */
                tr->le[t] = tr->le[t - 1];
                continue;
            }
            const uint64_t *from = tr->le[t];
            tr->le[t] = tr->own[t];
            for (size_t w = sp.lo; w < sp.hi; w++)
                tr->le[t][w] = from[w] & mask[w];
        }
    const uint64_t *any = tr->le[NKINDS - 1];
    if (f->kept) {
        /* offer filters: the matches they keep, a word at a time
         * (filter_kept, as filtered_kept counts them) */
        for (size_t w = sp.lo; w < sp.hi && !(out && n); w++) {
            uint64_t x = f->verified_only ? any[w] & ~c->hidden_bits[w] : any[w];
            if (x) n += (size_t)sx_pop64(filter_kept(s, f, w, x));
        }
    } else if (out) { /* whether any: the page stage counts them */
        for (size_t w = sp.lo; w < sp.hi && !n; w++)
            n = (f->verified_only ? any[w] & ~c->hidden_bits[w] : any[w]) != 0;
    } else {
        for (size_t w = sp.lo; w < sp.hi; w++)
            n += (size_t)sx_pop64(f->verified_only ? any[w] & ~c->hidden_bits[w] : any[w]);
    }
    if (!out) return n;
    for (size_t t = 0; t < NKINDS; t++)
        out->bits[t] = tr->le[t];
    for (size_t i = 0; i < nu; i++) {
        if (!active[i]) continue;
        for (uint8_t t = 0; t < NKINDS && us[i].best == NO_MATCH; t++)
            for (size_t w = sp.lo; w < sp.hi; w++)
                if (us[i].le[t][w] & any[w]) {
                    us[i].best = t;
                    break;
                }
    }
    return n;
}

/* Products (among those the filters let through) that match unit u alone. */
SX_POPCNT static int64_t unit_docs(const as_search_snap *s, const sx_filter *f, const unit *u)
{
    const sx_catalog *c = s->c;
    if (f->bits) {
        /* the mask's work, word by word; offer filters by the products
         * they keep (filter_kept, as filtered_kept counts) */
        int64_t n = 0;
        const uint64_t *bits = u->le[NKINDS - 1];
        const uint64_t *cat = f->has_cat ? c->cat_bits + f->cat * c->words : NULL;
        const uint64_t *pt = f->has_pt ? c->pt_bits + f->pt * c->words : NULL;
        for (size_t w = u->span.lo; w < u->span.hi; w++) {
            uint64_t x = bits[w];
            if (cat) x &= cat[w];
            if (pt) x &= pt[w];
            if (f->verified_only) x &= ~c->hidden_bits[w];
            if (f->kept && x) x = filter_kept(s, f, w, x);
            n += sx_pop64(x);
        }
        return n;
    }
    const uint64_t *bits = u->le[NKINDS - 1];
    int64_t n = 0;
    for (size_t bw = u->span.lo; bw < u->span.hi; bw++)
        for (uint64_t cur = bits[bw]; cur; cur &= cur - 1) {
            uint32_t d = (uint32_t)(bw * 64 + (size_t)__builtin_ctzll(cur));
            const sx_compat *row;
            if (sx_filter_candidate(s, f, d, &row) && sx_filter_viable(s, f, d, row)) n++;
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

void sx_match_run(const as_search_snap *s, as_mem *m, as_mem *tmp, const as_query_text *qt,
                  const char *text, const sx_filter *f, sx_match *out)
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
    out->span = f->span;
    if (nu == 0) return; /* no words: every product, tier 0 */
    out->any_text = true;
    for (size_t i = 0; i < nu; i++) {
        unit *u = &us[i];
        u->kind = word_kinds(c, m, u->w, &u->postings, &u->corrected);
        for (size_t p = 0; p < u->n_parts; p++) {
            size_t pp;
            const char *ignored = NULL;
            u->part_kind[p] = word_kinds(c, m, u->parts[p], &pp, &ignored);
        }
        unit_bits(c, tmp, u, f->span);
    }
    bool active[MAX_UNITS];
    for (size_t i = 0; i < nu; i++)
        active[i] = true;
    /* one word: its own sets are the tiers' (candidates would copy them, and
     * no word is dropped, so nothing reads them apart afterwards); at
     * 1,000,000 products that is four passes of 125 KB saved, and four more
     * of zeroing. Under a mask evaluate_bits writes them masked into memory
     * of their own (a unit's sets are read only) */
    const uint64_t *mask = filter_mask(c, tmp, f);
    tiers tr;
    for (size_t t = 0; t < NKINDS; t++) {
        tr.own[t] = nu == 1 && !(mask && f->bits)
                        ? us[0].le[t]
                        : as_alloc_raw(tmp, (c->words ? c->words : 1) * 8);
        tr.le[t] = nu == 1 ? us[0].le[t] : tr.own[t]; /* candidates writes the others */
    }
    tr.within = f->span;
    tr.span = nu == 1 ? us[0].span : f->span;
    /* with f->bits, evaluate_bits instead of evaluate: the same answers */
#define EVALUATE(o)                                                                                \
    (f->bits ? evaluate_bits(s, f, mask, us, active, nu, &tr, (o))                                \
             : evaluate(s, tmp, f, mask, us, active, nu, &tr, (o)))
    if (nu > 1) candidates(c, us, active, nu, 0, mask, &tr);
    size_t n = EVALUATE(out);
    out->u.dropped = as_alloc(m, (nu + 1) * sizeof(char *));
    if (n == 0 && nu > 1) {
        /* Drop words until something matches: first those no product has;
         * then, one at a time, the word whose absence lets the most products
         * match (of equals, the one most products have: the least telling).
         * On the relevance set (t/relevance) this beat dropping the most
         * common word first: "coffee machine water filter" keeps "water". */
        for (size_t i = 0; i < nu; i++)
            us[i].docs = unit_docs(s, f, &us[i]);
        size_t left = nu;
        for (size_t i = 0; i < nu && left > 1; i++)
            if (us[i].docs == 0) {
                active[i] = false;
                left--;
            }
        candidates(c, us, active, nu, NKINDS - 1, mask, &tr);
        n = EVALUATE(NULL);
        while (n == 0 && left > 1) {
            size_t pick = nu, pick_n = 0;
            for (size_t i = 0; i < nu; i++) {
                if (!active[i]) continue;
                active[i] = false;
                candidates(c, us, active, nu, NKINDS - 1, mask, &tr);
                size_t k = EVALUATE(NULL);
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
        for (size_t i = 0; i < nu; i++)
            us[i].best = NO_MATCH;
        candidates(c, us, active, nu, 0, mask, &tr);
        EVALUATE(out);
        for (size_t i = 0; i < nu; i++)
            if (!active[i])
                out->u.dropped[out->u.n_dropped++] = us[i].w->orig ? us[i].w->orig : us[i].w->text;
        out->dropped_any = out->u.n_dropped > 0;
    }
#undef EVALUATE
    out->span = tr.span;
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
