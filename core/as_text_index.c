/* The in-memory text index of the paged search: see as_text_index.h. Memory
 * comes from malloc, not from a request's as_mem: a snapshot lives as long as
 * a reader holds it, and the last release frees it. */
#include "as_text_index.h"

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <threads.h>

#include "as_devices.h"

#define MAX_TOKENS (1u << 24) /* word ids share a uint32 with the word's count */
#define MAX_EXCLUDED 100
#define BM25_K1 1.2
#define BM25_B 0.75

/* ---- the words of one catalogue, shared by its snapshots ---- */

/* An offer but its stock (which the store reads per page). */
typedef struct tix_offer {
    int64_t price_cents, retail_price_cents;
    uint32_t id_at, label_at; /* in strs */
    int32_t days;
    uint32_t merchant; /* into merchants */
} tix_offer;

/* The products' summaries and offers, as a page shows them: nothing of it
 * changes without a catalogue load, but the offers' stock. */
typedef struct tix_sum {
    char *strs;
    size_t nstrs, strscap;
    size_t cap;
    uint32_t *name_at, *brand_at, *img_at, *note_at; /* UINT32_MAX: NULL */
    uint8_t *avail, *status, *guarantee;             /* into small; 0 or 1 */
    char **small;
    size_t nsmall;
    uint32_t *off_at; /* n + 1 */
    tix_offer *offers;
    size_t noffers, offcap;
    size_t last_doc; /* the product the last offer went to */
    as_merchant *merchants;
    size_t nmerchants;
} tix_sum;

static void sum_free(tix_sum *u)
{
    if (!u) return;
    for (size_t i = 0; i < u->nsmall; i++)
        free(u->small[i]);
    for (size_t i = 0; i < u->nmerchants; i++) {
        free((char *)u->merchants[i].id);
        free((char *)u->merchants[i].name);
        free((char *)u->merchants[i].country);
        free((char *)u->merchants[i].city);
    }
    void *arrays[] = {u->strs,   u->name_at,   u->brand_at, u->img_at, u->note_at, u->avail,
                      u->status, u->guarantee, u->small,    u->off_at, u->offers,  u->merchants};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
        free(arrays[i]);
    free(u);
}

typedef struct tix_words {
    atomic_int refs;
    size_t n;           /* products */
    int64_t *ids;       /* ascending */
    uint32_t *sku_rk;   /* position of the product's sku in byte order */
    uint32_t *len;      /* tokens in name, brand and description */
    uint16_t *cat, *pt; /* into cats, pts */
    uint8_t *hidden;
    uint32_t *fwd_at; /* n + 1: each product's words in fwd */
    uint32_t *fwd;    /* word id << 8 | count (at most 255), ascending by word */
    uint32_t ntok;
    uint32_t *tok_at; /* ntok + 1: each word in tok_text */
    char *tok_text;
    uint32_t *post_at; /* ntok + 1: each word's products in post */
    uint32_t *post;    /* product positions, ascending */
    char *strs;        /* sku of each product; name and note of hidden ones */
    uint32_t *sku_at, *name_at, *note_at;
    char **cats, **pts;
    size_t ncats, npts;
    double avgdl;
    size_t bytes;
    tix_sum *sum;
} tix_words;

/* A product's search order row, compact. */
typedef struct tix_rank {
    int64_t price_cents;
    double return_rate;
    int32_t score, days;
    uint8_t buyable;
} tix_rank;

struct as_text_index {
    atomic_int refs;
    tix_words *w;
    tix_rank *rank; /* w->n */
    as_search_version v;
};

static void words_release(tix_words *w)
{
    if (!w || atomic_fetch_sub(&w->refs, 1) != 1) return;
    void *arrays[] = {w->ids,    w->sku_rk, w->len,     w->cat,      w->pt,      w->hidden,
                      w->fwd_at, w->fwd,    w->tok_at,  w->tok_text, w->post_at, w->post,
                      w->strs,   w->sku_at, w->name_at, w->note_at};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
        free(arrays[i]);
    for (size_t i = 0; i < w->ncats; i++)
        free(w->cats[i]);
    for (size_t i = 0; i < w->npts; i++)
        free(w->pts[i]);
    free(w->cats);
    free(w->pts);
    sum_free(w->sum);
    free(w);
}

/* The rank rows of a snapshot are mapped, not malloc'd: every change of stock
 * that moves a product in or out of the buyable ones makes a new snapshot
 * with a copy of them (a few MB at 100,000 products), and memory freed to
 * malloc in the middle of its heaps stays with the process, so a child's
 * memory would creep with every update (docs/performance.md, memory). */
static size_t rank_bytes(size_t n)
{
    return (n ? n : 1) * sizeof(tix_rank);
}

static tix_rank *rank_alloc(size_t n)
{
    void *p = mmap(NULL, rank_bytes(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void rank_free(tix_rank *r, size_t n)
{
    if (r) munmap(r, rank_bytes(n));
}

void as_text_index_retain(as_text_index *ix)
{
    atomic_fetch_add(&ix->refs, 1);
}

void as_text_index_release(as_text_index *ix)
{
    if (!ix || atomic_fetch_sub(&ix->refs, 1) != 1) return;
    rank_free(ix->rank, ix->w->n);
    words_release(ix->w);
    free(ix);
}

as_search_version as_text_index_version(const as_text_index *ix)
{
    return ix->v;
}

size_t as_text_index_bytes(const as_text_index *ix)
{
    return ix->w->bytes + ix->w->n * sizeof(tix_rank) + sizeof(*ix);
}

size_t as_text_index_size(const as_text_index *ix)
{
    return ix->w->n;
}

static tix_rank rank_of(const as_rank_row *r)
{
    tix_rank k = {r->price_cents, r->return_rate, (int32_t)r->score, (int32_t)r->days,
                  r->buyable ? 1 : 0};
    return k;
}

/* ---- building ---- */

struct as_text_builder {
    bool failed;
    /* words by first appearance, found through an open-addressing hash */
    char **tok;
    uint32_t ntok, tokcap;
    uint32_t *slots; /* word id + 1; 0 empty */
    size_t nslots;
    /* products */
    size_t n, cap;
    int64_t *ids;
    uint32_t *len;
    uint16_t *cat, *pt;
    uint8_t *hidden;
    tix_rank *rank;
    uint32_t *fwd_at;
    uint32_t *sku_at, *name_at, *note_at;
    /* words of each product (ids by first appearance until finish) */
    uint32_t *fwd;
    size_t nfwd, fwdcap;
    char *strs;
    size_t nstrs, strscap;
    char **cats, **pts;
    size_t ncats, npts;
    /* scratch: the current product's word ids, and one word */
    uint32_t *cur;
    size_t ncur, curcap;
    char *word;
    size_t wordcap;
    uint64_t total_len;
    tix_sum *sum;
};

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    void *na = realloc(*arr, nc * elem);
    if (!na) return false;
    *arr = na;
    *cap = nc;
    return true;
}

as_text_builder *as_text_builder_new(void)
{
    as_text_builder *b = calloc(1, sizeof(*b));
    if (!b) return NULL;
    b->nslots = 1u << 16;
    b->slots = calloc(b->nslots, sizeof(uint32_t));
    b->sum = calloc(1, sizeof(tix_sum));
    if (!b->slots || !b->sum) {
        free(b->slots);
        free(b->sum);
        free(b);
        return NULL;
    }
    return b;
}

void as_text_builder_free(as_text_builder *b)
{
    if (!b) return;
    sum_free(b->sum);
    for (uint32_t i = 0; i < b->ntok; i++)
        free(b->tok[i]);
    for (size_t i = 0; i < b->ncats; i++)
        free(b->cats[i]);
    for (size_t i = 0; i < b->npts; i++)
        free(b->pts[i]);
    void *arrays[] = {b->tok,    b->slots, b->ids,    b->len,    b->cat,     b->pt,
                      b->hidden, b->rank,  b->fwd_at, b->sku_at, b->name_at, b->note_at,
                      b->fwd,    b->strs,  b->cats,   b->pts,    b->cur,     b->word};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
        free(arrays[i]);
    free(b);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static bool rehash(as_text_builder *b)
{
    size_t ns = b->nslots * 2;
    uint32_t *slots = calloc(ns, sizeof(uint32_t));
    if (!slots) return false;
    for (uint32_t id = 0; id < b->ntok; id++) {
        size_t i = (size_t)hash_str(b->tok[id]) & (ns - 1);
        while (slots[i])
            i = (i + 1) & (ns - 1);
        slots[i] = id + 1;
    }
    free(b->slots);
    b->slots = slots;
    b->nslots = ns;
    return true;
}

/* The id of a word, added when new; UINT32_MAX when out of memory. */
static uint32_t word_id(as_text_builder *b, const char *w)
{
    size_t i = (size_t)hash_str(w) & (b->nslots - 1);
    for (; b->slots[i]; i = (i + 1) & (b->nslots - 1))
        if (strcmp(b->tok[b->slots[i] - 1], w) == 0) return b->slots[i] - 1;
    size_t cap = b->tokcap;
    if (b->ntok >= MAX_TOKENS || !grow((void **)&b->tok, &cap, b->ntok + 1, sizeof(char *)))
        return UINT32_MAX;
    b->tokcap = (uint32_t)cap;
    char *copy = strdup(w);
    if (!copy) return UINT32_MAX;
    b->tok[b->ntok] = copy;
    b->slots[i] = ++b->ntok;
    if (b->ntok * 2 > b->nslots && !rehash(b)) return UINT32_MAX;
    return b->ntok - 1;
}

/* Adds the words of text to the current product's list; false when out of memory. */
static bool add_words(as_text_builder *b, const char *text)
{
    if (!text) return true;
    const char *p = text;
    bool word = false;
    while (*p) {
        size_t k;
        while (*p && (k = as_text_char(p, &word), !word))
            p += k;
        const char *s = p;
        while (*p && (k = as_text_char(p, &word), word))
            p += k;
        if (p == s) continue;
        size_t n = (size_t)(p - s);
        if (!grow((void **)&b->word, &b->wordcap, n + 1, 1)) return false;
        as_text_fold(s, n, b->word);
        uint32_t id = word_id(b, b->word);
        if (id == UINT32_MAX || !grow((void **)&b->cur, &b->curcap, b->ncur + 1, sizeof(uint32_t)))
            return false;
        b->cur[b->ncur++] = id;
    }
    return true;
}

/* A product's few words: insertion sort beats qsort's calls through a pointer. */
static void sort_u32(uint32_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t x = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > x; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Offset of a copy of s in strs (UINT32_MAX when out of memory or too large). */
static uint32_t add_str(as_text_builder *b, const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    if (b->nstrs + n > UINT32_MAX || !grow((void **)&b->strs, &b->strscap, b->nstrs + n, 1))
        return UINT32_MAX;
    memcpy(b->strs + b->nstrs, s ? s : "", n);
    uint32_t at = (uint32_t)b->nstrs;
    b->nstrs += n;
    return at;
}

/* The position of s in a small table of distinct strings (categories, part types). */
static bool intern(char ***tab, size_t *n, const char *s, uint16_t *out)
{
    s = s ? s : "";
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*tab)[i], s) == 0) {
            *out = (uint16_t)i;
            return true;
        }
    if (*n >= UINT16_MAX) return false;
    char **t = realloc(*tab, (*n + 1) * sizeof(char *));
    if (!t) return false;
    *tab = t;
    if (!(t[*n] = strdup(s))) return false;
    *out = (uint16_t)(*n)++;
    return true;
}

/* Room for need products in every column, and for fwd_at's closing slot. */
static bool reserve_rows(as_text_builder *b, size_t need)
{
    size_t cap = b->cap;
#define GROW_COL(f) (cap = b->cap, grow((void **)&b->f, &cap, need + 1, sizeof(*b->f)))
    if (!GROW_COL(ids) || !GROW_COL(len) || !GROW_COL(cat) || !GROW_COL(pt) || !GROW_COL(hidden) ||
        !GROW_COL(rank) || !GROW_COL(fwd_at) || !GROW_COL(sku_at) || !GROW_COL(name_at) ||
        !GROW_COL(note_at))
        return false;
#undef GROW_COL
    b->cap = cap;
    return true;
}

static bool add_row(as_text_builder *b, const as_index_row *r)
{
    if (!reserve_rows(b, b->n + 1)) return false;
    size_t i = b->n;
    if (i && r->id <= b->ids[i - 1]) return false; /* rows must come in id order */
    b->ids[i] = r->id;
    b->ncur = 0;
    if (!add_words(b, r->name) || !add_words(b, r->brand) || !add_words(b, r->description))
        return false;
    b->len[i] = (uint32_t)b->ncur;
    b->total_len += b->ncur;
    /* distinct words with their counts */
    sort_u32(b->cur, b->ncur);
    b->fwd_at[i] = (uint32_t)b->nfwd;
    for (size_t k = 0; k < b->ncur;) {
        size_t e = k;
        while (e < b->ncur && b->cur[e] == b->cur[k])
            e++;
        if (b->nfwd >= UINT32_MAX - 1 ||
            !grow((void **)&b->fwd, &b->fwdcap, b->nfwd + 1, sizeof(uint32_t)))
            return false;
        uint32_t count = e - k > 255 ? 255 : (uint32_t)(e - k);
        b->fwd[b->nfwd++] = b->cur[k] << 8 | count;
        k = e;
    }
    b->hidden[i] = r->hidden ? 1 : 0;
    b->rank[i] = rank_of(&r->rank);
    b->sku_at[i] = add_str(b, r->sku);
    b->name_at[i] = r->hidden ? add_str(b, r->name) : UINT32_MAX;
    b->note_at[i] = r->hidden && r->verif_note ? add_str(b, r->verif_note) : UINT32_MAX;
    if (b->sku_at[i] == UINT32_MAX) return false;
    if (!intern(&b->cats, &b->ncats, r->category, &b->cat[i]) ||
        !intern(&b->pts, &b->npts, r->part_type, &b->pt[i]))
        return false;
    b->n++;
    return true;
}

/* Offset of a copy of s in the summaries' strings; UINT32_MAX for NULL (and
 * when out of memory: *ok turns false). */
static uint32_t sum_str(tix_sum *u, const char *s, bool *ok)
{
    if (!s) return UINT32_MAX;
    size_t n = strlen(s) + 1;
    if (u->nstrs + n >= UINT32_MAX || !grow((void **)&u->strs, &u->strscap, u->nstrs + n, 1)) {
        *ok = false;
        return UINT32_MAX;
    }
    memcpy(u->strs + u->nstrs, s, n);
    uint32_t at = (uint32_t)u->nstrs;
    u->nstrs += n;
    return at;
}

/* Room for need products' summaries, and for off_at's closing slot. */
static bool reserve_sums(tix_sum *u, size_t need)
{
    size_t cap = u->cap;
#define GROW_SUM(f) (cap = u->cap, grow((void **)&u->f, &cap, need + 1, sizeof(*u->f)))
    if (!GROW_SUM(name_at) || !GROW_SUM(brand_at) || !GROW_SUM(img_at) || !GROW_SUM(note_at) ||
        !GROW_SUM(avail) || !GROW_SUM(status) || !GROW_SUM(guarantee) || !GROW_SUM(off_at))
        return false;
#undef GROW_SUM
    u->cap = cap;
    return true;
}

static bool sum_row(tix_sum *u, size_t d, const as_index_row *r)
{
    if (!reserve_sums(u, d + 1)) return false;
    bool ok = true;
    u->name_at[d] = sum_str(u, r->name, &ok);
    u->brand_at[d] = sum_str(u, r->brand, &ok);
    u->img_at[d] = sum_str(u, r->image_urls, &ok);
    u->note_at[d] = sum_str(u, r->verif_note, &ok);
    uint16_t a, v;
    if (!ok || !intern(&u->small, &u->nsmall, r->availability, &a) ||
        !intern(&u->small, &u->nsmall, r->verif_status, &v) || u->nsmall > UINT8_MAX)
        return false;
    u->avail[d] = (uint8_t)a;
    u->status[d] = (uint8_t)v;
    u->guarantee[d] = r->guarantee ? 1 : 0;
    u->off_at[d] = (uint32_t)u->noffers; /* offers come after every product */
    u->off_at[d + 1] = (uint32_t)u->noffers;
    return true;
}

int as_text_builder_add(void *builder, const as_index_row *row)
{
    as_text_builder *b = builder;
    if (!b->failed && !(add_row(b, row) && sum_row(b->sum, b->n - 1, row))) b->failed = true;
    return b->failed ? -1 : 0;
}

static bool add_offer(as_text_builder *b, const as_index_offer *o)
{
    tix_sum *u = b->sum;
    /* offers come by product id, after the products: move on to the owner */
    size_t d = u->last_doc;
    while (d < b->n && b->ids[d] < o->product_id)
        u->off_at[++d] = (uint32_t)u->noffers;
    if (d >= b->n || b->ids[d] != o->product_id) return true; /* no such product: skip */
    u->last_doc = d;
    uint32_t m = 0;
    while (m < u->nmerchants && strcmp(u->merchants[m].id, o->merchant_id) != 0)
        m++;
    if (m == u->nmerchants) return false; /* an offer of an unknown merchant */
    if (!grow((void **)&u->offers, &u->offcap, u->noffers + 1, sizeof(tix_offer))) return false;
    bool ok = true;
    /* the same label as the offer before is stored once */
    uint32_t label =
        u->noffers && u->offers[u->noffers - 1].label_at != UINT32_MAX && o->price_label &&
                strcmp(u->strs + u->offers[u->noffers - 1].label_at, o->price_label) == 0
            ? u->offers[u->noffers - 1].label_at
            : sum_str(u, o->price_label, &ok);
    tix_offer x = {o->price_cents, o->retail_price_cents,     sum_str(u, o->id, &ok),
                   label,          (int32_t)o->delivery_days, m};
    if (!ok) return false;
    u->offers[u->noffers++] = x;
    u->off_at[d + 1] = (uint32_t)u->noffers;
    return true;
}

int as_text_builder_offer(void *builder, const as_index_offer *offer)
{
    as_text_builder *b = builder;
    if (!b->failed && !add_offer(b, offer)) b->failed = true;
    return b->failed ? -1 : 0;
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

bool as_text_builder_merchants(as_text_builder *b, const as_merchant *ms, size_t n)
{
    tix_sum *u = b->sum;
    u->merchants = calloc(n ? n : 1, sizeof(as_merchant));
    if (!u->merchants) return !(b->failed = true);
    for (size_t i = 0; i < n; i++) {
        as_merchant *m = &u->merchants[u->nmerchants++];
        *m = ms[i];
        m->id = dup_or_empty(ms[i].id);
        m->name = dup_or_empty(ms[i].name);
        m->country = dup_or_empty(ms[i].country);
        m->city = dup_or_empty(ms[i].city);
        if (!m->id || !m->name || !m->country || !m->city) return !(b->failed = true);
    }
    return true;
}

/* Sorting with a context, in C11 (no qsort_r): a heap sort of uint32 keys. */
typedef int (*cmp_ctx_fn)(const void *ctx, uint32_t a, uint32_t b);

static void sift_down(uint32_t *a, size_t i, size_t n, cmp_ctx_fn cmp, const void *ctx)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && cmp(ctx, a[l], a[m]) > 0) m = l;
        if (l + 1 < n && cmp(ctx, a[l + 1], a[m]) > 0) m = l + 1;
        if (m == i) return;
        uint32_t t = a[i];
        a[i] = a[m];
        a[m] = t;
        i = m;
    }
}

static void sort_ctx(uint32_t *a, size_t n, cmp_ctx_fn cmp, const void *ctx)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(a, i, n, cmp, ctx);
    for (size_t e = n; e > 1; e--) {
        uint32_t t = a[0];
        a[0] = a[e - 1];
        a[e - 1] = t;
        sift_down(a, 0, e - 1, cmp, ctx);
    }
}

static int by_token(const void *ctx, uint32_t a, uint32_t b)
{
    char *const *tok = ctx;
    return strcmp(tok[a], tok[b]);
}

typedef struct sku_ctx {
    const char *strs;
    const uint32_t *at;
} sku_ctx;

static int by_sku(const void *ctx, uint32_t a, uint32_t b)
{
    const sku_ctx *c = ctx;
    int r = strcmp(c->strs + c->at[a], c->strs + c->at[b]);
    return r ? r : (a > b) - (a < b);
}

/* Moves a builder array into the words, trimmed to n elements. */
/* Arrays grown by doubling, cut to what they hold once built. */
static void *shrink(void *p, size_t bytes)
{
    void *q = bytes ? realloc(p, bytes) : NULL;
    return q ? q : p;
}

#define TAKE(dst, src, n)                                                                          \
    do {                                                                                           \
        (dst) = (src);                                                                             \
        (src) = NULL;                                                                              \
        w->bytes += (n) * sizeof(*(dst));                                                          \
    } while (0)

as_text_index *as_text_builder_finish(as_text_builder *b, const as_search_version *v)
{
    tix_words *w = NULL;
    as_text_index *ix = NULL;
    uint32_t *order = NULL, *new_id = NULL;
    if (!b || b->failed) goto fail;
    size_t n = b->n;
    /* a catalogue of no products (a fresh install) has had no row to grow
     * the columns: fwd_at and off_at still need their closing slot */
    if (!reserve_rows(b, n) || !reserve_sums(b->sum, n)) goto fail;
    b->sum->off_at[n] = (uint32_t)b->sum->noffers;
    w = calloc(1, sizeof(*w));
    ix = calloc(1, sizeof(*ix));
    order = malloc((b->ntok + 1) * sizeof(uint32_t));
    new_id = malloc((b->ntok + 1) * sizeof(uint32_t));
    if (!w || !ix || !order || !new_id) goto fail;
    atomic_init(&w->refs, 1);
    atomic_init(&ix->refs, 1);
    w->n = n;
    w->bytes = sizeof(*w);

    /* the vocabulary in byte order */
    for (uint32_t i = 0; i < b->ntok; i++)
        order[i] = i;
    sort_ctx(order, b->ntok, by_token, b->tok);
    w->ntok = b->ntok;
    size_t text = 0;
    for (uint32_t i = 0; i < b->ntok; i++) {
        new_id[order[i]] = i;
        text += strlen(b->tok[i]) + 1;
    }
    w->tok_at = malloc((b->ntok + 1) * sizeof(uint32_t));
    w->tok_text = malloc(text ? text : 1);
    w->post_at = calloc(b->ntok + 1, sizeof(uint32_t));
    w->post = malloc((b->nfwd ? b->nfwd : 1) * sizeof(uint32_t));
    if (!w->tok_at || !w->tok_text || !w->post_at || !w->post || text > UINT32_MAX) goto fail;
    w->bytes += (b->ntok + 1) * 2 * sizeof(uint32_t) + text + b->nfwd * sizeof(uint32_t);
    size_t at = 0;
    for (uint32_t i = 0; i < b->ntok; i++) {
        const char *t = b->tok[order[i]];
        size_t l = strlen(t) + 1;
        w->tok_at[i] = (uint32_t)at;
        memcpy(w->tok_text + at, t, l);
        at += l;
    }
    w->tok_at[b->ntok] = (uint32_t)at;

    /* each product's words renumbered and sorted again; postings by counting */
    b->fwd_at[n] = (uint32_t)b->nfwd;
    for (size_t d = 0; d < n; d++) {
        uint32_t *f = b->fwd + b->fwd_at[d];
        size_t k = b->fwd_at[d + 1] - b->fwd_at[d];
        for (size_t i = 0; i < k; i++) {
            f[i] = new_id[f[i] >> 8] << 8 | (f[i] & 0xFF);
            w->post_at[(f[i] >> 8) + 1]++;
        }
        sort_u32(f, k);
    }
    for (uint32_t i = 0; i < b->ntok; i++)
        w->post_at[i + 1] += w->post_at[i];
    /* each word's postings by category, then product: a category's share of
     * a posting list is one run, found by binary search */
    uint32_t *fill = order; /* reused: next free slot of each word */
    memcpy(fill, w->post_at, b->ntok * sizeof(uint32_t));
    size_t *cat_at = calloc(b->ncats + 1, sizeof(size_t));
    uint32_t *by_cat = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!cat_at || !by_cat) {
        free(cat_at);
        free(by_cat);
        goto fail;
    }
    for (size_t d = 0; d < n; d++)
        cat_at[b->cat[d] + 1]++;
    for (size_t c = 0; c < b->ncats; c++)
        cat_at[c + 1] += cat_at[c];
    for (size_t d = 0; d < n; d++)
        by_cat[cat_at[b->cat[d]]++] = (uint32_t)d;
    for (size_t k = 0; k < n; k++) {
        uint32_t d = by_cat[k];
        for (uint32_t i = b->fwd_at[d]; i < b->fwd_at[d + 1]; i++)
            w->post[fill[b->fwd[i] >> 8]++] = d;
    }
    free(cat_at);
    free(by_cat);

    /* sku order */
    w->sku_rk = malloc((n ? n : 1) * sizeof(uint32_t));
    uint32_t *by = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!w->sku_rk || !by) {
        free(by);
        goto fail;
    }
    for (size_t d = 0; d < n; d++)
        by[d] = (uint32_t)d;
    sku_ctx sc = {b->strs, b->sku_at};
    sort_ctx(by, n, by_sku, &sc);
    for (size_t i = 0; i < n; i++)
        w->sku_rk[by[i]] = (uint32_t)i;
    free(by);
    w->bytes += n * sizeof(uint32_t);

    TAKE(w->ids, b->ids, n);
    TAKE(w->len, b->len, n);
    TAKE(w->cat, b->cat, n);
    TAKE(w->pt, b->pt, n);
    TAKE(w->hidden, b->hidden, n);
    TAKE(w->fwd_at, b->fwd_at, n + 1);
    TAKE(w->fwd, b->fwd, b->nfwd);
    TAKE(w->sku_at, b->sku_at, n);
    TAKE(w->name_at, b->name_at, n);
    TAKE(w->note_at, b->note_at, n);
    TAKE(w->strs, b->strs, b->nstrs);
    w->cats = b->cats;
    w->ncats = b->ncats;
    w->pts = b->pts;
    w->npts = b->npts;
    b->cats = b->pts = NULL;
    b->ncats = b->npts = 0;
    w->avgdl = n ? (double)b->total_len / (double)n : 0;
    w->sum = b->sum;
    b->sum = NULL;
    w->fwd = shrink(w->fwd, b->nfwd * sizeof(uint32_t));
    w->strs = shrink(w->strs, b->nstrs);
    w->sum->strs = shrink(w->sum->strs, w->sum->nstrs);
    w->sum->offers = shrink(w->sum->offers, w->sum->noffers * sizeof(tix_offer));
    for (size_t d = w->sum->last_doc + 1; d < n; d++) /* products after the last offer's */
        w->sum->off_at[d + 1] = w->sum->off_at[d];
    w->bytes += w->sum->nstrs + w->sum->noffers * sizeof(tix_offer) +
                n * (4 * sizeof(uint32_t) + 3 + sizeof(uint32_t));
    ix->rank = rank_alloc(n);
    if (!ix->rank) goto fail;
    memcpy(ix->rank, b->rank, n * sizeof(tix_rank));
    ix->w = w;
    ix->v = *v;
    free(order);
    free(new_id);
    as_text_builder_free(b);
    return ix;
fail:
    free(order);
    free(new_id);
    if (w) {
        atomic_init(&w->refs, 1);
        words_release(w);
    }
    free(ix);
    as_text_builder_free(b);
    return NULL;
}

/* ---- updating the rank rows ---- */

typedef struct update_ctx {
    const tix_words *w;
    tix_rank *rank;
} update_ctx;

static int apply_rank(void *baton, int64_t id, const as_rank_row *r)
{
    update_ctx *u = baton;
    size_t lo = 0, hi = u->w->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->w->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < u->w->n && u->w->ids[lo] == id) u->rank[lo] = rank_of(r);
    return 0; /* a product the index does not know comes with a new catalogue */
}

as_text_index *as_text_index_update(as_text_index *ix, const as_store *st,
                                    const as_search_version *v)
{
    as_text_index *nx = calloc(1, sizeof(*nx));
    tix_rank *rank = rank_alloc(ix->w->n);
    if (!nx || !rank) {
        free(nx);
        rank_free(rank, ix->w->n);
        return NULL;
    }
    memcpy(rank, ix->rank, ix->w->n * sizeof(tix_rank));
    update_ctx u = {ix->w, rank};
    if (st->rank_changes(st->h, ix->v.rank, apply_rank, &u) != AS_OK) {
        free(nx);
        rank_free(rank, ix->w->n);
        return NULL;
    }
    atomic_init(&nx->refs, 1);
    atomic_fetch_add(&ix->w->refs, 1);
    nx->w = ix->w;
    nx->rank = rank;
    nx->v = *v;
    return nx;
}

/* ---- searching ---- */

typedef struct term_range {
    uint32_t lo, hi; /* words with the term as prefix: [lo, hi) */
    size_t postings; /* their postings in all (an upper bound of the products) */
    size_t docs;     /* products with at least one of them */
    double idf;
} term_range;

static const char *tok(const tix_words *w, uint32_t i)
{
    return w->tok_text + w->tok_at[i];
}

/* The words that start with term, by binary search of the sorted vocabulary. */
static term_range prefix_range(const tix_words *w, const char *term)
{
    size_t tl = strlen(term);
    uint32_t lo = 0, hi = w->ntok;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (strcmp(tok(w, mid), term) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t first = lo;
    hi = w->ntok;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (strncmp(tok(w, mid), term, tl) == 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    term_range r = {first, lo, w->post_at[lo] - w->post_at[first], 0, 0};
    return r;
}

/* The run of a word's postings (ordered by category, then product) in category c. */
static void cat_run(const tix_words *w, uint32_t word, uint16_t c, uint32_t *from, uint32_t *to)
{
    uint32_t lo = w->post_at[word], hi = w->post_at[word + 1];
    while (lo < hi) { /* first posting of category >= c */
        uint32_t mid = lo + (hi - lo) / 2;
        if (w->cat[w->post[mid]] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    *from = lo;
    hi = w->post_at[word + 1];
    while (lo < hi) { /* first posting of category > c */
        uint32_t mid = lo + (hi - lo) / 2;
        if (w->cat[w->post[mid]] <= c)
            lo = mid + 1;
        else
            hi = mid;
    }
    *to = lo;
}

/* Sets the bits of every product (of category c, or any when c < 0) that has
 * one of the range's words. */
static void union_bits(const tix_words *w, const term_range *r, int c, uint64_t *bits)
{
    for (uint32_t word = r->lo; word < r->hi; word++) {
        uint32_t p = w->post_at[word], e = w->post_at[word + 1];
        if (c >= 0) cat_run(w, word, (uint16_t)c, &p, &e);
        for (; p < e; p++)
            bits[w->post[p] >> 6] |= 1ull << (w->post[p] & 63);
    }
}

static size_t count_bits(const uint64_t *bits, size_t words)
{
    size_t n = 0;
    for (size_t i = 0; i < words; i++)
        n += (size_t)__builtin_popcountll(bits[i]);
    return n;
}

/* FTS5's bm25 IDF: log((N - n + 0.5) / (n + 0.5)), at least 1e-6. */
static double idf(size_t n_docs, size_t n)
{
    double v = log(((double)n_docs - (double)n + 0.5) / ((double)n + 0.5));
    return v <= 0 ? 1e-6 : v;
}

typedef struct hit {
    uint32_t doc, sku_rk;
    double key; /* the sort's own key, ascending */
    double rel;
    int32_t score;
    uint8_t unbuyable;
} hit;

/* Buyable first; the sort key; score; relevance; sku: ORDER BY of the SQL pages. */
static int hit_cmp(const hit *x, const hit *y)
{
    if (x->unbuyable != y->unbuyable) return x->unbuyable < y->unbuyable ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    if (x->rel != y->rel) return x->rel < y->rel ? -1 : 1;
    return x->sku_rk < y->sku_rk ? -1 : x->sku_rk > y->sku_rk;
}

static void hit_sift(hit *a, size_t i, size_t n)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && hit_cmp(&a[l], &a[m]) > 0) m = l;
        if (l + 1 < n && hit_cmp(&a[l + 1], &a[m]) > 0) m = l + 1;
        if (m == i) return;
        hit t = a[i];
        a[i] = a[m];
        a[m] = t;
        i = m;
    }
}

/* The first k hits in order, in heap[0..k): a max-heap of the best k seen,
 * then sorted in place (O(n log k), no full sort of the matches). */
typedef struct top_k {
    hit *heap;
    size_t n, k;
} top_k;

static void top_offer(top_k *t, const hit *h)
{
    if (t->n < t->k) {
        size_t i = t->n++;
        t->heap[i] = *h;
        while (i > 0 && hit_cmp(&t->heap[(i - 1) / 2], &t->heap[i]) < 0) {
            hit x = t->heap[i];
            t->heap[i] = t->heap[(i - 1) / 2];
            t->heap[(i - 1) / 2] = x;
            i = (i - 1) / 2;
        }
    } else if (t->k && hit_cmp(h, &t->heap[0]) < 0) {
        t->heap[0] = *h;
        hit_sift(t->heap, 0, t->n);
    }
}

static void top_sort(top_k *t)
{
    for (size_t e = t->n; e > 1; e--) {
        hit x = t->heap[0];
        t->heap[0] = t->heap[e - 1];
        t->heap[e - 1] = x;
        hit_sift(t->heap, 0, e - 1);
    }
}

static double sort_key(as_sort_kind k, const tix_rank *r)
{
    switch (k) {
    case AS_SORT_PRICE:
        return (double)r->price_cents;
    case AS_SORT_DELIVERY:
        return r->days;
    case AS_SORT_RETURN_RATE:
        return r->return_rate;
    case AS_SORT_SCORE:
    default:
        return 0; /* the score comes next */
    }
}

static bool find_code(char *const *tab, size_t n, const char *s, uint16_t *out)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(tab[i], s) == 0) {
            *out = (uint16_t)i;
            return true;
        }
    return false;
}

static const char *copy_str(as_mem *m, const tix_words *w, uint32_t at)
{
    return at == UINT32_MAX ? NULL : as_strdup(m, w->strs + at);
}

static const char *sum_copy(as_mem *m, const tix_sum *u, uint32_t at)
{
    return at == UINT32_MAX ? NULL : as_strdup(m, u->strs + at);
}

/* A page's product as the store's summary read gives it; offers without stock. */
static void page_product(as_mem *m, const as_text_index *ix, uint32_t d, as_product *p)
{
    const tix_words *w = ix->w;
    const tix_sum *u = w->sum;
    memset(p, 0, sizeof(*p));
    p->id = w->ids[d];
    p->sku = copy_str(m, w, w->sku_at[d]);
    p->name = sum_copy(m, u, u->name_at[d]);
    p->brand = sum_copy(m, u, u->brand_at[d]);
    p->category = as_strdup(m, w->cats[w->cat[d]]);
    p->part_type = as_strdup(m, w->pts[w->pt[d]]);
    p->image_urls = sum_copy(m, u, u->img_at[d]);
    p->availability = as_strdup(m, u->small[u->avail[d]]);
    p->verif_status = as_strdup(m, u->small[u->status[d]]);
    p->verif_note = sum_copy(m, u, u->note_at[d]);
    p->return_rate = ix->rank[d].return_rate;
    p->guarantee = u->guarantee[d] != 0;
    p->is_demo = true;
    p->n_offers = u->off_at[d + 1] - u->off_at[d];
    p->offers = p->n_offers ? as_alloc(m, p->n_offers * sizeof(as_offer)) : NULL;
    for (size_t i = 0; i < p->n_offers; i++) {
        const tix_offer *x = &u->offers[u->off_at[d] + i];
        const as_merchant *mc = &u->merchants[x->merchant];
        as_offer *o = &p->offers[i];
        o->id = sum_copy(m, u, x->id_at);
        o->merchant = *mc;
        o->merchant.id = as_strdup(m, mc->id);
        o->merchant.name = as_strdup(m, mc->name);
        o->merchant.country = as_strdup(m, mc->country);
        o->merchant.city = as_strdup(m, mc->city);
        o->price_cents = x->price_cents;
        o->retail_price_cents = x->retail_price_cents;
        o->price_label = sum_copy(m, u, x->label_at);
        o->delivery_days = x->days;
        o->stock = 0; /* the store's, read per page */
    }
}

void as_text_index_search(const as_text_index *ix, as_mem *m, const as_search_query *q,
                          as_text_page *out)
{
    const tix_words *w = ix->w;
    memset(out, 0, sizeof(*out));
    size_t nt = q->n_terms;
    if (!nt || !w->n) return;
    uint16_t cat = 0, pt = 0;
    if ((q->category && !find_code(w->cats, w->ncats, q->category, &cat)) ||
        (q->part_type && !find_code(w->pts, w->npts, q->part_type, &pt)))
        return;

    /* each term's words; the term with the fewest postings drives */
    term_range *tr = as_alloc(m, nt * sizeof(term_range));
    size_t drive = 0;
    for (size_t i = 0; i < nt; i++) {
        tr[i] = prefix_range(w, q->terms[i]);
        if (tr[i].postings == 0) return;
        if (tr[i].postings < tr[drive].postings) drive = i;
    }
    /* IDF needs each term's products in the whole catalogue: a posting count
     * for one word, a union for several (not needed for one term alone: it
     * scales every score alike) */
    size_t words = (w->n + 63) / 64;
    for (size_t i = 0; i < nt; i++) {
        if (tr[i].hi - tr[i].lo == 1) {
            tr[i].docs = tr[i].postings;
        } else if (nt > 1) {
            uint64_t *b = as_alloc(m, words * 8);
            union_bits(w, &tr[i], -1, b);
            tr[i].docs = count_bits(b, words);
        }
        tr[i].idf = idf(w->n, tr[i].docs);
    }

    size_t k = (size_t)(q->offset + q->limit);
    top_k top = {NULL, 0, 0};
    size_t cap = tr[drive].postings;
    top.k = k < cap ? k : cap;
    top.heap = as_alloc(m, (top.k ? top.k : 1) * sizeof(hit));
    uint32_t hidden[MAX_EXCLUDED];
    size_t n_hidden = 0;
    double *freq = as_alloc(m, nt * sizeof(double));

    /* Candidates in product (id) order: one word in one category is a run of
     * its postings; otherwise a bitmap of the driving term's products. */
    uint32_t p = 0, pend = 0;
    uint64_t *bits = NULL;
    if (tr[drive].hi - tr[drive].lo == 1 && q->category) {
        cat_run(w, tr[drive].lo, cat, &p, &pend);
    } else {
        bits = as_alloc(m, words * 8);
        union_bits(w, &tr[drive], q->category ? cat : -1, bits);
    }
    size_t bw = 0;
    uint64_t cur = bits ? bits[0] : 0;
    for (;;) {
        uint32_t d;
        if (bits) {
            while (!cur && ++bw < words)
                cur = bits[bw];
            if (!cur) break;
            d = (uint32_t)(bw * 64 + (size_t)__builtin_ctzll(cur));
            cur &= cur - 1;
        } else {
            if (p >= pend) break;
            d = w->post[p++];
        }
        if ((q->category && w->cat[d] != cat) || (q->part_type && w->pt[d] != pt)) continue;
        /* every term, as a prefix of some word of the product, with its count */
        bool all = true;
        const uint32_t *f = w->fwd + w->fwd_at[d], *fe = w->fwd + w->fwd_at[d + 1];
        for (size_t i = 0; i < nt && all; i++) {
            uint32_t c = 0;
            for (const uint32_t *x = f; x < fe; x++) {
                uint32_t id = *x >> 8;
                if (id >= tr[i].hi) break;
                if (id >= tr[i].lo) c += *x & 0xFF;
            }
            freq[i] = c;
            all = c > 0;
        }
        if (!all) continue;
        if (q->verified_only && w->hidden[d]) {
            if (n_hidden < MAX_EXCLUDED) hidden[n_hidden++] = d;
            out->excluded_count++;
            continue;
        }
        out->count++;
        /* bm25 as FTS5 computes it: every column weighs 1, D and avgdl count
         * the tokens of all three columns */
        double score = 0, norm = BM25_K1 * (1 - BM25_B + BM25_B * w->len[d] / w->avgdl);
        for (size_t i = 0; i < nt; i++)
            score += tr[i].idf * (freq[i] * (BM25_K1 + 1)) / (freq[i] + norm);
        const tix_rank *r = &ix->rank[d];
        hit h = {d, w->sku_rk[d], sort_key(q->sort, r), -score, r->score, r->buyable ? 0 : 1};
        top_offer(&top, &h);
    }
    top_sort(&top);

    out->excluded = as_alloc(m, (n_hidden ? n_hidden : 1) * sizeof(as_product));
    for (size_t i = 0; i < n_hidden; i++) {
        as_product *x = &out->excluded[out->n_excluded++];
        uint32_t d = hidden[i];
        x->id = w->ids[d];
        x->sku = copy_str(m, w, w->sku_at[d]);
        x->name = copy_str(m, w, w->name_at[d]);
        x->verif_status = "contradicted";
        x->verif_note = copy_str(m, w, w->note_at[d]);
    }

    size_t first = (size_t)q->offset;
    size_t n = top.n > first ? top.n - first : 0;
    out->ids = as_alloc(m, (n ? n : 1) * sizeof(int64_t));
    out->products = as_alloc(m, (n ? n : 1) * sizeof(as_product));
    for (size_t i = 0; i < n; i++) {
        out->ids[i] = w->ids[top.heap[first + i].doc];
        page_product(m, ix, top.heap[first + i].doc, &out->products[i]);
        out->products[i].text_rank = top.heap[first + i].rel;
    }
    out->n = n;
}

/* ---- the process's current snapshot ---- */

struct as_search_index {
    mtx_t lock;  /* guards cur: held only to take or swap the pointer */
    mtx_t build; /* one thread builds or updates at a time */
    as_text_index *cur;
};

as_search_index *as_search_index_create(void)
{
    as_search_index *si = calloc(1, sizeof(*si));
    if (!si) return NULL;
    if (mtx_init(&si->lock, mtx_plain) != thrd_success) {
        free(si);
        return NULL;
    }
    if (mtx_init(&si->build, mtx_plain) != thrd_success) {
        mtx_destroy(&si->lock);
        free(si);
        return NULL;
    }
    return si;
}

void as_search_index_destroy(as_search_index *si)
{
    if (!si) return;
    as_text_index_release(si->cur);
    mtx_destroy(&si->lock);
    mtx_destroy(&si->build);
    free(si);
}

static as_text_index *current(as_search_index *si)
{
    mtx_lock(&si->lock);
    as_text_index *ix = si->cur;
    if (ix) as_text_index_retain(ix);
    mtx_unlock(&si->lock);
    return ix;
}

static void install(as_search_index *si, as_text_index *ix)
{
    as_text_index_retain(ix); /* the reference cur holds */
    mtx_lock(&si->lock);
    as_text_index *old = si->cur;
    si->cur = ix;
    mtx_unlock(&si->lock);
    as_text_index_release(old);
}

static bool fresh(const as_text_index *ix, const as_search_version *v)
{
    return ix && ix->v.catalogue == v->catalogue && ix->v.rank >= v->rank;
}

/* Every product from the store; read again when the catalogue changed while
 * it was being read. */
static as_text_index *build(const as_store *st, as_search_version *v)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        as_text_builder *b = as_text_builder_new();
        if (!b) return NULL;
        as_arena *a = as_arena_create();
        as_mem am = as_arena_mem(a);
        as_merchant *ms;
        size_t nm;
        int rc = st->merchants(st->h, &am, &ms, &nm);
        if (rc == AS_OK) as_text_builder_merchants(b, ms, nm);
        as_arena_destroy(a);
        if (rc == AS_OK) rc = st->index_rows(st->h, as_text_builder_add, b);
        if (rc == AS_OK) rc = st->index_offers(st->h, as_text_builder_offer, b);
        if (rc != AS_OK) {
            as_text_builder_free(b);
            return NULL;
        }
        as_search_version after;
        if (st->search_version(st->h, &after) != AS_OK) {
            as_text_builder_free(b);
            return NULL;
        }
        if (after.catalogue == v->catalogue) return as_text_builder_finish(b, v);
        as_text_builder_free(b);
        *v = after;
    }
    return NULL;
}

as_text_index *as_search_index_get(as_search_index *si, const as_store *st)
{
    as_search_version v;
    if (st->search_version(st->h, &v) != AS_OK) return NULL;
    as_text_index *ix = current(si);
    if (fresh(ix, &v)) return ix;
    as_text_index_release(ix);

    mtx_lock(&si->build);
    ix = current(si); /* another thread may have refreshed it meanwhile */
    if (!fresh(ix, &v)) {
        /* Rank rows read after v was read are at least as new as v: the
         * snapshot says v, and the next update reads them again if need be. */
        as_text_index *nx = ix && ix->v.catalogue == v.catalogue && ix->v.rank < v.rank
                                ? as_text_index_update(ix, st, &v)
                                : build(st, &v);
        as_text_index_release(ix);
        ix = nx;
        if (ix) install(si, ix);
    }
    mtx_unlock(&si->build);
    return ix;
}
