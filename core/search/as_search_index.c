/* The catalogue index of search: built from the store's stream of products
 * (index_rows, each with its offers, compat rows and view), kept current
 * by rank_changes (which offers are in stock), swapped atomically. Memory
 * comes from malloc (mmap for the stock state), not from a request's as_mem:
 * a snapshot lives as long as a reader holds it, and the last release frees
 * it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "as_devices.h"
#include "as_json_value.h"
#include "as_rank.h"
#include "as_search_internal.h"
#include "as_util.h"
#include "as_view.h"

#define MAX_TOKENS (1u << 28)

/* ---- growing arrays ---- */

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

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* ---- the builder ---- */

typedef struct bcompat {
    int64_t dev;
    uint32_t doc, why_at;
    uint8_t fits;
    /* its view members after the device's: in ctext until snapshot_of_rows, then in
     * vtext */
    uint64_t text_at, text_end;
} bcompat;

/* A compat row's view parts that do not depend on its device or product, kept
 * per build for the rows that repeat them: catalogues repeat evidence (one
 * declaration for many devices; every generated row has one of two), and
 * computing them parses the evidence twice. The part of the row's view after
 * the device (as_view_compat_rest) is written into the views' text once. */
typedef struct ev_memo {
    char *evidence; /* NULL: a free slot */
    bool fits;
    char *checked_at;          /* NULL when the rows have none */
    uint32_t why_at;           /* does_not_fit: the summary, in strs */
    uint64_t rest_at, rest_end; /* in ctext; equal when it cannot be written */
} ev_memo;

#define MEMO_SLOTS 8192 /* at most half of them used: memory bounded per build */

/* A text's words as add_text added them, kept for the next product with the
 * same text: catalogues repeat brands, category and part-type labels, spec
 * labels and values ("Volume", "500 ml", "Yes") and, generated ones,
 * descriptions, and reading a text into words was 17% of a 1,000,000-product
 * build's CPU. One entry per slot of the text's hash, the latest text kept
 * (a direct-mapped cache: bounded, and a text that recurs comes back); the
 * ids are the builder's, so a text gives the same words from either. */
typedef struct text_memo {
    char *text; /* NULL: a free slot */
    uint64_t hash;
    uint32_t *ids;
    uint32_t n;
    bool joined;
} text_memo;

#define TEXT_MEMO_SLOTS (1u << 16)
#define TEXT_MEMO_MAX 240 /* bytes of the longest text kept: memory stays bounded */

typedef struct sx_builder {
    bool failed;
    const sx_file_out *out; /* the file the views' text goes into, NULL: memory */
    bool out_failed;        /* the file had no room for it */
    as_arena *arena;        /* a row's scratch memory, cleared after it */
    sx_catalog *c; /* filled in place; arrays grown here */
    size_t cap;    /* products */
    size_t offcap, fwdcap, strscap, ccap;
    size_t nfwd;
    uint8_t *in_stock;
    size_t instockcap, stockcap;
    bcompat *cr;
    size_t ncr;
    uint32_t *dev_str; /* per device: slug, name, brand, kind, aliases */
    int64_t *dev_id;
    size_t ndev;
    /* words by first appearance, found through an open-addressing hash */
    char **tok;
    uint8_t *tok_join; /* as sx_catalog.tok_join's, by first appearance */
    size_t tokcap, joincap;
    uint32_t ntok;
    uint32_t *slots;
    size_t nslots;
    uint32_t *cur; /* the current product's word ids */
    size_t ncur, curcap;
    size_t vtextcap;
    /* the compat rows' view parts (compat_parts) until append_compat_views appends them
     * to the views' text: there each product's view parts are one run, its
     * head then its performance, which ends where the next product's head
     * begins */
    char *ctext;
    size_t nctext, ctextcap;
    /* a batch's views' parts, encoded and written into the views' text on a
     * thread of their own (on_rows), its scratch memory in view_arena: where
     * each product's went, in kept */
    as_arena *view_arena;
    struct view_kept *kept;
    size_t keptcap;
    ev_memo *memo;    /* MEMO_SLOTS, open addressing by the evidence's hash */
    size_t nmemo;
    text_memo *texts; /* TEXT_MEMO_SLOTS, by the text's hash */
    /* the contradicted products' entries of `excluded` until the products
     * are in their docs' order (xj_at: offsets here), then into strs */
    char *xj;
    size_t nxj, xjcap;
} sx_builder;

static uint32_t add_str(sx_builder *b, const char *s)
{
    if (!s) return AS_NO_STR;
    sx_catalog *c = b->c;
    size_t n = strlen(s) + 1;
    if (c->nstrs + n >= AS_NO_STR || !grow((void **)&c->strs, &b->strscap, c->nstrs + n, 1)) {
        b->failed = true;
        return AS_NO_STR;
    }
    memcpy(c->strs + c->nstrs, s, n);
    uint32_t at = (uint32_t)c->nstrs;
    c->nstrs += n;
    return at;
}

/* s (n bytes) at to + 2 after its length in two bytes (little-endian;
 * 0xFFFF from 65,535 bytes on), with a NUL after it: n + 3 bytes. */
static void put_len_str(char *to, const char *s, size_t n)
{
    size_t l = n < 0xFFFF ? n : 0xFFFF;
    to[0] = (char)(l & 0xFF);
    to[1] = (char)(l >> 8);
    memcpy(to + 2, s, n);
    to[2 + n] = '\0';
}

/* s (n bytes) into strs after its length (put_len_str; sx_str_len reads
 * it); its offset, or AS_NO_STR when out of room. */
static uint32_t add_len_str(sx_builder *b, const char *s, size_t n)
{
    sx_catalog *c = b->c;
    if (c->nstrs + n + 3 >= AS_NO_STR ||
        !grow((void **)&c->strs, &b->strscap, c->nstrs + n + 3, 1)) {
        b->failed = true;
        return AS_NO_STR;
    }
    put_len_str(c->strs + c->nstrs, s, n);
    uint32_t at = (uint32_t)(c->nstrs + 2);
    c->nstrs += n + 3;
    return at;
}

/* Appends text to the views' text, in memory or straight into the index
 * file being written; its offset, or UINT64_MAX when out of room (*out_failed
 * set when it was the file's). During the rows' read only the views' thread
 * calls it (view_span_run); the builder's, at snapshot_of_rows. */
static uint64_t add_vtext(sx_builder *b, const char *text, size_t len, bool *out_failed)
{
    sx_catalog *c = b->c;
    size_t need = c->nvtext + len + 1;
    if (b->out ? !sx_vtext_room(c, b->out, need)
               : !grow((void **)&c->vtext, &b->vtextcap, need, 1)) {
        *out_failed = b->out != NULL;
        return UINT64_MAX;
    }
    memcpy(c->vtext + c->nvtext, text, len);
    uint64_t at = c->nvtext;
    c->nvtext += len;
    return at;
}

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

static bool rehash(sx_builder *b)
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

/* Word w's id; join is 0 for a word of the text, else the length of the
 * first of the two words it joins (sx_catalog.tok_join). */
static uint32_t word_id(sx_builder *b, const char *w, size_t join)
{
    uint8_t j = join > 255 ? 255 : (uint8_t)join;
    size_t i = (size_t)hash_str(w) & (b->nslots - 1);
    for (; b->slots[i]; i = (i + 1) & (b->nslots - 1))
        if (strcmp(b->tok[b->slots[i] - 1], w) == 0) {
            uint32_t id = b->slots[i] - 1;
            if (b->tok_join[id] > j) b->tok_join[id] = j;
            return id;
        }
    if (b->ntok >= MAX_TOKENS || !grow((void **)&b->tok, &b->tokcap, b->ntok + 1, sizeof(char *)) ||
        !grow((void **)&b->tok_join, &b->joincap, b->ntok + 1, 1))
        return UINT32_MAX;
    char *copy = strdup(w);
    if (!copy) return UINT32_MAX;
    b->tok[b->ntok] = copy;
    b->tok_join[b->ntok] = j;
    b->slots[i] = ++b->ntok;
    if ((size_t)b->ntok * 2 > b->nslots && !rehash(b)) return UINT32_MAX;
    return b->ntok - 1;
}

static bool add_word(sx_builder *b, const char *w, size_t join)
{
    uint32_t id = word_id(b, w, join);
    if (id == UINT32_MAX || !grow((void **)&b->cur, &b->curcap, b->ncur + 1, sizeof(uint32_t)))
        return false;
    b->cur[b->ncur++] = id;
    return true;
}

/* a followed by b, on m (no printf: once per pair of words of the catalogue) */
static const char *joined_word(as_mem *m, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *j = as_alloc(m, la + lb + 1);
    memcpy(j, a, la);
    memcpy(j + la, b, lb + 1);
    return j;
}

/* Text's entry of the memo (text_memo): its words' ids from add_text when
 * they were kept, else the slot to keep them in; NULL for a text not kept. */
static text_memo *text_slot(sx_builder *b, const char *text, bool joined)
{
    size_t len = strnlen(text, TEXT_MEMO_MAX + 1);
    if (len > TEXT_MEMO_MAX) return NULL;
    if (!b->texts && !(b->texts = calloc(TEXT_MEMO_SLOTS, sizeof(text_memo)))) return NULL;
    uint64_t h = hash_str(text) ^ joined;
    text_memo *e = &b->texts[h & (TEXT_MEMO_SLOTS - 1)];
    if (e->text && (e->hash != h || e->joined != joined || strcmp(e->text, text) != 0)) {
        free(e->text);
        free(e->ids);
        *e = (text_memo){0};
    }
    e->hash = h;
    e->joined = joined;
    return e;
}

/* Keeps the ids from b->cur[from] on as the words of text, in slot e. */
static void text_keep(sx_builder *b, text_memo *e, const char *text, size_t from)
{
    uint32_t n = (uint32_t)(b->ncur - from);
    uint32_t *ids = malloc((n ? n : 1) * sizeof(uint32_t));
    char *copy = strdup(text);
    if (!ids || !copy) { /* not kept: read again next time */
        free(ids);
        free(copy);
        return;
    }
    memcpy(ids, b->cur + from, n * sizeof(uint32_t));
    *e = (text_memo){copy, e->hash, ids, n, e->joined};
}

/* The words of text (as a query's are read); with joined, also each pair of
 * neighbours written as one ("hand soap" → "handsoap", "usb-c" → "usbc"), so a
 * query that joins them finds the product. A text seen before gives its
 * words from the memo (text_slot), unless memo is false (a product's name,
 * which catalogues do not repeat). */
static bool add_text(sx_builder *b, as_mem *m, const char *text, bool joined, bool memo)
{
    text_memo *e = memo && text ? text_slot(b, text, joined) : NULL;
    if (e && e->text) {
        if (!grow((void **)&b->cur, &b->curcap, b->ncur + e->n, sizeof(uint32_t))) return false;
        memcpy(b->cur + b->ncur, e->ids, e->n * sizeof(uint32_t));
        b->ncur += e->n;
        return true;
    }
    size_t from = b->ncur;
    as_sword *w;
    size_t n = as_search_words_unstemmed(m, text, &w); /* stems: per distinct word, below */
    const char *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!add_word(b, w[i].text, 0)) return false;
        if (w[i].part) continue;
        if (joined && prev && !add_word(b, joined_word(m, prev, w[i].text), strlen(prev)))
            return false;
        prev = w[i].text;
    }
    if (e) text_keep(b, e, text, from);
    return true;
}

/* A number as words would write it: no trailing zeros ("1000", "2.5"). */
static const char *num_text(as_mem *m, double v)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        char t[AS_FIXED_TEXT]; /* as "%.0f" writes it, without printf */
        if (as_fixed_text(t, v, 0)) return as_strdup(m, t);
        return as_printf(m, "%.0f", v);
    }
    return as_printf(m, "%.6g", v);
}

/* The words of a product's specifications: a true flag gives its label ("Vegan",
 * "Fragrance-free"); a text value its label and value; a number its label, its
 * value with its unit and, where a larger unit gives a round number, that too
 * (1000 ml → 1 l). A false flag or no value gives nothing: "vegan" must not
 * find a product measured not to be vegan. The measured value wins over the
 * claimed one. */
static bool add_specs(sx_builder *b, as_mem *m, const as_spec_row *rows, size_t n)
{
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++) {
        const char *label = rows[i].label, *unit = rows[i].unit;
        as_json_value measured = as_json_value_read(m, rows[i].measured);
        as_json_value v =
            measured.kind > AS_JSON_NULL ? measured : as_json_value_read(m, rows[i].claimed);
        if (v.kind <= AS_JSON_FALSE) continue;
        if (label && !(ok = add_text(b, m, label, true, true))) break;
        if (v.kind == AS_JSON_STRING) {
            ok = add_text(b, m, v.text, true, true);
        } else if (v.kind == AS_JSON_NUMBER) {
            double x = v.number;
            ok = add_text(b, m, as_printf(m, "%s %s", num_text(m, x), unit ? unit : ""), false,
                          true);
            static const struct {
                const char *from, *to;
                double by;
            } bigger[] = {{"ml", "l", 1000}, {"g", "kg", 1000},   {"mm", "cm", 10},
                          {"cm", "m", 100},  {"mah", "ah", 1000}, {"w", "kw", 1000}};
            for (size_t k = 0; ok && unit && k < sizeof(bigger) / sizeof(bigger[0]); k++) {
                double y = x / bigger[k].by;
                if (strcasecmp(unit, bigger[k].from) == 0 && y >= 1 &&
                    fabs(y * 100 - round(y * 100)) < 1e-9)
                    ok = add_text(b, m, as_printf(m, "%s %s", num_text(m, y), bigger[k].to),
                                  false, true);
            }
        }
    }
    return ok;
}

/* A product's word ids, ascending: a Shell sort (Ciura's gaps; insertion
 * sort for the short ones), in place, as qsort would allocate for each
 * product. */
static void sort_u32(uint32_t *a, size_t n)
{
    static const size_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
    for (size_t g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
        size_t gap = gaps[g];
        for (size_t i = gap; i < n; i++) {
            uint32_t x = a[i];
            size_t j = i;
            for (; j >= gap && a[j - gap] > x; j -= gap)
                a[j] = a[j - gap];
            a[j] = x;
        }
    }
}

static bool reserve_rows(sx_builder *b, size_t need)
{
    sx_catalog *c = b->c;
    size_t cap = b->cap;
#define GROW_COL(f) (cap = b->cap, grow((void **)&c->f, &cap, need + 1, sizeof(*c->f)))
    if (!GROW_COL(ids) || !GROW_COL(cat) || !GROW_COL(pt) || !GROW_COL(hidden) ||
        !GROW_COL(avail) || !GROW_COL(guarantee) || !GROW_COL(return_rate) || !GROW_COL(sku_at) ||
        !GROW_COL(name_at) || !GROW_COL(brand_at) || !GROW_COL(img_at) || !GROW_COL(note_at) ||
        !GROW_COL(xj_at) ||
        !GROW_COL(status_at) || !GROW_COL(avail_at) || !GROW_COL(fwd_at) || !GROW_COL(off_at) ||
        !GROW_COL(view_at) || !GROW_COL(perf_at))
        return false;
#undef GROW_COL
    b->cap = cap;
    return true;
}

static const char *part_type_label(const char *id)
{
    for (size_t i = 0; i < as_n_part_types; i++)
        if (strcmp(as_part_types[i].id, id) == 0) return as_part_types[i].label;
    return id;
}

static bool add_row(sx_builder *b, const as_index_row *r)
{
    sx_catalog *c = b->c;
    if (!reserve_rows(b, c->n + 1)) return false;
    size_t d = c->n;
    if (d && r->id <= c->ids[d - 1]) return false; /* rows come in id order */
    c->ids[d] = r->id;
    as_arena *a = b->arena; /* cleared after each row */
    as_mem m = as_arena_mem(a);
    b->ncur = 0;
    const char *cat_label = r->category ? as_category_label(r->category) : NULL;
    bool ok = add_text(b, &m, r->name, true, false) && add_text(b, &m, r->brand, false, true) &&
              add_text(b, &m, r->description, false, true) &&
              add_text(b, &m, cat_label ? cat_label : r->category, true, true) &&
              add_text(b, &m, r->part_type ? part_type_label(r->part_type) : NULL, true, true) &&
              add_specs(b, &m, r->specs, r->n_specs);
    as_arena_clear(a);
    if (!ok) return false;
    /* distinct words, ascending (renumbered by sort_vocabulary) */
    sort_u32(b->cur, b->ncur);
    c->fwd_at[d] = (uint32_t)b->nfwd;
    for (size_t k = 0; k < b->ncur; k++) {
        if (k && b->cur[k] == b->cur[k - 1]) continue;
        if (b->nfwd >= UINT32_MAX - 1 ||
            !grow((void **)&c->fwd, &b->fwdcap, b->nfwd + 1, sizeof(uint32_t)))
            return false;
        c->fwd[b->nfwd++] = b->cur[k];
    }
    c->hidden[d] = r->hidden ? 1 : 0;
    c->avail[d] = r->availability && strcmp(r->availability, "in_stock") == 0;
    c->guarantee[d] = 0; /* until a compat row says a device fits it (add_compat) */
    c->return_rate[d] = r->rank.return_rate;
    c->sku_at[d] = add_str(b, r->sku);
    c->name_at[d] = add_str(b, r->name ? r->name : "");
    c->brand_at[d] = add_str(b, r->brand ? r->brand : "");
    c->img_at[d] = add_str(b, r->image_urls);
    c->note_at[d] = add_str(b, r->verif_note);
    c->xj_at[d] = AS_NO_STR;
    if (r->hidden) {
        as_mem em = as_arena_mem(b->arena);
        const char *xj = sx_excluded_json(&em, r->sku, r->name ? r->name : "", r->verif_note);
        size_t n = xj ? strlen(xj) + 1 : 0;
        if (xj && b->nxj + n < AS_NO_STR && grow((void **)&b->xj, &b->xjcap, b->nxj + n, 1)) {
            memcpy(b->xj + b->nxj, xj, n);
            c->xj_at[d] = (uint32_t)b->nxj;
            b->nxj += n;
        } else if (xj) {
            b->failed = true;
        }
        as_arena_clear(b->arena);
    }
    c->status_at[d] = add_str(b, as_verif_name(r->verif_status)); /* the file keeps its name */
    c->avail_at[d] = add_str(b, r->availability ? r->availability : "out_of_stock");
    if (b->failed || !intern(&c->cats, &c->ncats, r->category, &c->cat[d]) ||
        !intern(&c->pts, &c->npts, r->part_type, &c->pt[d]))
        return false;
    c->off_at[d] = c->off_at[d + 1] = (uint32_t)c->noffers; /* its offers come next (on_row) */
    c->n++;
    return true;
}

/* The delivery component times ten, as the formula rounds it (one decimal). */
static uint16_t delivery10_of(int64_t days)
{
    return (uint16_t)lround(as_round(as_delivery_component((int)days), 1) * 10);
}

/* An offer of product d (the last row added: add_row began its offers). */
static bool add_offer(sx_builder *b, uint32_t d, const as_index_offer *o)
{
    sx_catalog *c = b->c;
    uint32_t mi = 0;
    while (mi < c->nmerchants && strcmp(c->strs + c->merchants[mi].id_at, o->merchant_id) != 0)
        mi++;
    if (mi == c->nmerchants) return false; /* an offer of an unknown merchant */
    if (!grow((void **)&c->offers, &b->offcap, c->noffers + 1, sizeof(sx_offer)) ||
        !grow((void **)&b->in_stock, &b->instockcap, c->noffers + 1, 1) ||
        !grow((void **)&c->stock, &b->stockcap, c->noffers + 1, sizeof(int32_t)))
        return false;
    uint32_t label =
        c->noffers && c->offers[c->noffers - 1].label_at != AS_NO_STR && o->price_label &&
                strcmp(c->strs + c->offers[c->noffers - 1].label_at, o->price_label) == 0
            ? c->offers[c->noffers - 1].label_at
            : add_str(b, o->price_label);
    sx_offer x = {o->price_cents,
                  o->retail_price_cents,
                  add_str(b, o->id),
                  label,
                  (int32_t)o->delivery_days,
                  (uint16_t)mi,
                  delivery10_of(o->delivery_days)};
    if (b->failed) return false;
    b->in_stock[c->noffers] = o->in_stock ? 1 : 0;
    c->stock[c->noffers] = o->stock < 0 ? 0 : o->stock > INT32_MAX ? INT32_MAX : (int32_t)o->stock;
    c->offers[c->noffers++] = x;
    c->off_at[d + 1] = (uint32_t)c->noffers;
    return true;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* A compat row's parts with this evidence, fit and check date, from b's memo
 * or made and kept: the summary of a row that does not fit (in strs) and the
 * rest of its view (in vtext, *rest_at == *rest_end when it cannot be
 * written); false when out of memory. */
static bool compat_parts(sx_builder *b, as_mem *m, const char *evidence, bool fits,
                         const char *checked_at, uint32_t *why_at, uint64_t *rest_at,
                         uint64_t *rest_end)
{
    if (!b->memo && !(b->memo = calloc(MEMO_SLOTS, sizeof(ev_memo)))) return false;
    uint64_t h = hash_str(evidence) ^ (hash_str(checked_at ? checked_at : "") * 31) ^ fits;
    size_t i = (size_t)h & (MEMO_SLOTS - 1);
    for (; b->memo[i].evidence; i = (i + 1) & (MEMO_SLOTS - 1)) {
        const ev_memo *e = &b->memo[i];
        if (e->fits == fits && strcmp(e->evidence, evidence) == 0 &&
            same_str(e->checked_at, checked_at)) {
            *why_at = e->why_at;
            *rest_at = e->rest_at;
            *rest_end = e->rest_end;
            return true;
        }
    }
    as_fit fit = fits ? AS_FIT_FITS : AS_FIT_DOES_NOT_FIT;
    as_compat cc = {NULL, NULL, fit, evidence, NULL};
    const char *summary = as_fit_summary(m, &cc);
    size_t words_len, rest_len;
    const char *words = as_view_evidence_text(m, evidence, &words_len);
    const char *rest = words ? as_view_compat_rest(m, as_fit_name(fit), summary, checked_at, words,
                                                   words_len, &rest_len)
                             : NULL; /* cannot be written: the row has no view text (not kept) */
    *why_at = fits ? AS_NO_STR : add_str(b, summary);
    *rest_at = *rest_end = 0;
    if (rest) {
        if (!grow((void **)&b->ctext, &b->ctextcap, b->nctext + rest_len, 1)) return false;
        memcpy(b->ctext + b->nctext, rest, rest_len);
        *rest_at = b->nctext;
        *rest_end = b->nctext += rest_len;
    }
    if (b->failed) return false;
    if (b->nmemo < MEMO_SLOTS / 2) {
        ev_memo e = {strdup(evidence), fits, checked_at ? strdup(checked_at) : NULL, *why_at,
                     *rest_at, *rest_end};
        if (!e.evidence || (checked_at && !e.checked_at)) {
            free(e.evidence);
            free(e.checked_at);
            return false;
        }
        b->memo[i] = e;
        b->nmemo++;
    }
    return true;
}

/* A compat row of product d (the last row added). */
static bool add_compat(sx_builder *b, uint32_t d, const as_index_compat *x)
{
    if (!grow((void **)&b->cr, &b->ccap, b->ncr + 1, sizeof(bcompat))) return false;
    /* no evidence reads as none recorded, "[]" (as as_json_parse_or reads it) */
    const char *ev = x->evidence ? x->evidence : "[]";
    as_arena *a = b->arena; /* cleared after each row */
    as_mem m = as_arena_mem(a);
    bcompat *bc = &b->cr[b->ncr];
    *bc = (bcompat){x->device_id, d, AS_NO_STR, x->fits ? 1 : 0, 0, 0};
    if (x->fits) b->c->guarantee[d] = 1; /* the right-item guarantee: a device fits it */
    bool ok =
        compat_parts(b, &m, ev, x->fits, x->checked_at, &bc->why_at, &bc->text_at, &bc->text_end);
    if (ok) b->ncr++;
    as_arena_clear(a);
    return ok;
}

/* Where view_span_run wrote a product's views' parts into the views' text:
 * its head, then its performance, which ends where the next product's head
 * begins (both at the text's end when it has no view). */
typedef struct view_kept {
    uint64_t view_at, perf_at;
} view_kept;

/* The views' parts of a batch's products, encoded on a thread of their own
 * while the builder adds the batch's rows (they need nothing of its state)
 * and written by it into the views' text, which nothing else touches until
 * the rows are read: each product's head and performance, the scratch memory
 * cleared after each product. Kept on the arena for the whole batch, the
 * parts' memory grew between batches and each batch faulted it in again:
 * 16.7 s of CPU in a 1,000,000-product build, against 5.5 s. Copied into the
 * views' text by the builder's thread after each batch, they took 5 s of the
 * read's 23 s on that thread, most of it faulting in the file's pages. */
typedef struct view_span {
    sx_builder *b;
    const as_index_row *rows;
    size_t n;
    view_kept *kept;
    bool failed;     /* out of memory, or of room for the text */
    bool out_failed; /* of room in the file */
} view_span;

static int view_span_run(void *arg)
{
    view_span *v = arg;
    sx_builder *b = v->b;
    for (size_t i = 0; i < v->n; i++) {
        view_kept *k = &v->kept[i];
        k->view_at = k->perf_at = b->c->nvtext;
        as_mem m = as_arena_mem(b->view_arena);
        as_view_kept vk;
        if (v->rows[i].view && as_view_product_kept(&m, v->rows[i].view, &vk) && vk.head_len) {
            uint64_t at = add_vtext(b, vk.head, vk.head_len, &v->out_failed);
            uint64_t perf =
                at == UINT64_MAX ? at : add_vtext(b, vk.perf, vk.perf_len, &v->out_failed);
            if (perf == UINT64_MAX) {
                v->failed = true;
                break;
            }
            *k = (view_kept){at, perf};
        }
        as_arena_clear(b->view_arena);
    }
    return 0;
}

/* A batch of products: each one's row, then its offers and compat rows, while
 * another thread encodes and writes their views' parts; then where those
 * went. At 1,000,000 products on SQLite the builder's thread spent 23 s of
 * the read's 23 s on the rows, 5.5 s of it encoding the views, while the
 * reader's thread needed 16 s. */
static int on_rows(void *baton, const as_index_row *rows, size_t n)
{
    sx_builder *b = baton;
    if (b->failed) return -1;
    if (!grow((void **)&b->kept, &b->keptcap, n, sizeof(view_kept))) {
        b->failed = true;
        return -1;
    }
    view_span v = {b, rows, n, b->kept, false, false};
    thrd_t t;
    bool threaded = thrd_create(&t, view_span_run, &v) == thrd_success;
    uint32_t first = (uint32_t)b->c->n;
    for (size_t i = 0; !b->failed && i < n; i++) {
        const as_index_row *row = &rows[i];
        if (!add_row(b, row)) {
            b->failed = true;
            break;
        }
        uint32_t d = (uint32_t)(b->c->n - 1);
        for (size_t k = 0; !b->failed && k < row->n_offers; k++)
            if (!add_offer(b, d, &row->offers[k])) b->failed = true;
        for (size_t k = 0; !b->failed && k < row->n_compat; k++)
            if (!add_compat(b, d, &row->compat[k])) b->failed = true;
    }
    if (threaded)
        thrd_join(t, NULL);
    else if (!b->failed)
        view_span_run(&v);
    if (v.failed) {
        b->failed = true;
        b->out_failed = v.out_failed;
    }
    for (size_t i = 0; !b->failed && i < n; i++) { /* product d's view parts, where written */
        b->c->view_at[first + i] = b->kept[i].view_at;
        b->c->perf_at[first + i] = b->kept[i].perf_at;
    }
    return b->failed ? -1 : 0;
}

static bool set_merchants(sx_builder *b, const as_merchant *ms, size_t n)
{
    sx_catalog *c = b->c;
    c->merchants = calloc(n ? n : 1, sizeof(sx_merchant));
    if (!c->merchants) return false;
    for (size_t i = 0; i < n; i++) {
        sx_merchant *x = &c->merchants[c->nmerchants++];
        /* its strings are in strs (the store's go with its as_mem) */
        x->m =
            (as_merchant){.on_time_rate = ms[i].on_time_rate, .accuracy_rate = ms[i].accuracy_rate};
        x->id_at = add_str(b, ms[i].id ? ms[i].id : "");
        x->name_at = add_str(b, ms[i].name ? ms[i].name : "");
        x->country_at = add_str(b, ms[i].country ? ms[i].country : "");
        x->city_at = add_str(b, ms[i].city ? ms[i].city : "");
        /* what every offer of it shows, written once (a page writes it per
         * result): from the strings as the index keeps them */
        as_merchant kept = ms[i];
        kept.id = ms[i].id ? ms[i].id : "";
        kept.name = ms[i].name ? ms[i].name : "";
        kept.country = ms[i].country ? ms[i].country : "";
        kept.city = ms[i].city ? ms[i].city : "";
        kept.json = NULL;
        as_mem em = as_arena_mem(b->arena);
        size_t jn;
        const char *j = as_view_merchant_json(&em, &kept, &jn);
        x->json_at = j ? add_len_str(b, j, jn) : AS_NO_STR;
        as_arena_clear(b->arena);
        x->quality = as_round(100.0 * ms[i].accuracy_rate, 1);
        x->reliability = as_round(100.0 * ms[i].on_time_rate, 1);
    }
    return !b->failed;
}

static bool set_devices(sx_builder *b, const as_device *ds, size_t n)
{
    b->dev_str = malloc((n ? n : 1) * 5 * sizeof(uint32_t));
    b->dev_id = malloc((n ? n : 1) * sizeof(int64_t));
    if (!b->dev_str || !b->dev_id) return false;
    for (size_t i = 0; i < n; i++) {
        const char *f[5] = {ds[i].slug, ds[i].name, ds[i].brand, ds[i].kind, ds[i].aliases};
        for (int k = 0; k < 5; k++)
            b->dev_str[i * 5 + k] = add_str(b, f[k] ? f[k] : "");
        b->dev_id[i] = ds[i].id;
    }
    b->ndev = n;
    return !b->failed;
}

static sx_builder *builder_new(void)
{
    sx_builder *b = calloc(1, sizeof(*b));
    if (!b) return NULL;
    b->c = calloc(1, sizeof(sx_catalog));
    b->nslots = 1u << 16;
    b->slots = calloc(b->nslots, sizeof(uint32_t));
    b->arena = as_arena_create();
    b->view_arena = as_arena_create();
    if (!b->c || !b->slots || !b->arena || !b->view_arena) {
        free(b->c);
        free(b->slots);
        as_arena_destroy(b->arena);
        as_arena_destroy(b->view_arena);
        free(b);
        return NULL;
    }
    atomic_init(&b->c->refs, 1);
    b->c->base_fd = -1; /* built in memory: no base state (a file's, when mapped) */
    return b;
}

static void catalog_free(sx_catalog *c)
{
    if (!c) return;
    if (c->base_fd >= 0) close(c->base_fd);
    if (c->dev_arena) as_arena_destroy(c->dev_arena);
    free(c->bits);
    free(c->sku_below);
    for (size_t i = 0; i < SX_PAIR_SLOTS; i++)
        free(c->pair_bits[i]);
    free(c->one_each);
    free((void *)c->live_bits);
    if (c->live_lock_made) mtx_destroy(&c->live_lock);
    for (size_t i = 0; c->tok_slots && i < SX_TOK_SLOTS; i++)
        free(atomic_load(&c->tok_slots[i].bits));
    free(c->tok_slots);
    if (c->tok_lock_made) mtx_destroy(&c->tok_lock);
    for (size_t i = 0; i < c->n_scratch; i++)
        as_scratch_destroy(c->scratch[i]);
    if (c->scratch_lock_made) mtx_destroy(&c->scratch_lock);
    if (c->map) { /* only the parts with pointers are private */
        free(c->merchants);
        free(c->devs);
        free(c->cats);
        free(c->pts);
        munmap(c->map, c->map_bytes);
        free(c);
        return;
    }
    void *arrays[] = {
        c->ids,       c->sku_rk,      c->cat,          c->pt,        c->hidden,   c->avail,
        c->guarantee, c->return_rate, c->sku_at,       c->name_at,   c->brand_at, c->img_at,
        c->note_at,   c->status_at,   c->avail_at,     c->xj_at,     c->head_at,  c->off_at,
        c->offers,
        c->merchants, c->tok_at,      c->tok_text,     c->tok_join,  c->stock,    c->stem_of,
        c->stem_at,   c->stem_text,   c->stem_toks_at, c->stem_toks, c->fwd_at,   c->fwd,
        c->post_at,   c->post,        c->dev_ids,      c->dev_at,    c->compat,   c->strs,
        c->devs,      c->cat_at,      c->cat_docs,     c->pt_at,     c->pt_docs,  c->view_at,
        c->perf_at,   c->cv_at,       c->sku_docs,     c->id_docs,   c->id_rk};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
        free(arrays[i]);
    if (c->vtext_map)
        munmap(c->vtext, c->vtext_map);
    else
        free(c->vtext);
    for (size_t i = 0; i < c->ncats; i++)
        free(c->cats[i]);
    for (size_t i = 0; i < c->npts; i++)
        free(c->pts[i]);
    free(c->cats);
    free(c->pts);
    free(c);
}

static void catalog_release(sx_catalog *c)
{
    if (c && atomic_fetch_sub(&c->refs, 1) == 1) catalog_free(c);
}

static void builder_free(sx_builder *b)
{
    if (!b) return;
    catalog_free(b->c);
    as_arena_destroy(b->arena);
    as_arena_destroy(b->view_arena);
    free(b->kept);
    for (uint32_t i = 0; i < b->ntok; i++)
        free(b->tok[i]);
    free(b->tok);
    free(b->tok_join);
    free(b->slots);
    free(b->cur);
    free(b->in_stock);
    free(b->cr);
    free(b->dev_str);
    free(b->dev_id);
    if (b->memo)
        for (size_t i = 0; i < MEMO_SLOTS; i++) {
            free(b->memo[i].evidence);
            free(b->memo[i].checked_at);
        }
    free(b->memo);
    if (b->texts)
        for (size_t i = 0; i < TEXT_MEMO_SLOTS; i++) {
            free(b->texts[i].text);
            free(b->texts[i].ids);
        }
    free(b->texts);
    free(b->xj);
    free(b->ctext);
    free(b);
}

/* Sorting with a context (C11 has no qsort_r): a heap sort of uint32 keys. */
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

static int by_str(const void *ctx, uint32_t a, uint32_t b)
{
    char *const *s = ctx;
    int r = strcmp(s[a], s[b]);
    return r ? r : (a > b) - (a < b);
}

typedef struct sku_ctx {
    const char *strs;
    const uint32_t *at;
} sku_ctx;

static int by_sku(const void *ctx, uint32_t a, uint32_t b)
{
    const sku_ctx *x = ctx;
    int r = strcmp(x->strs + x->at[a], x->strs + x->at[b]);
    return r ? r : (a > b) - (a < b);
}

static int compat_cmp(const void *a, const void *b)
{
    const bcompat *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    return (x->doc > y->doc) - (x->doc < y->doc);
}

/* The compat rows as compat_cmp orders them, without comparing them: they
 * come by product (the store reads them by product id), so a stable sort by
 * device alone (a radix sort of device ids: two passes for ids below 2^22)
 * orders them. 1,000,000 products' 1.7 million rows: qsort's merge sort of
 * 40-byte rows took about half a second of the build. false when the rows are
 * not by product or a device id is negative (then qsort), or out of memory. */
static bool compat_by_device(sx_builder *b)
{
    size_t n = b->ncr;
    for (size_t i = 0; i < n; i++)
        if (b->cr[i].dev < 0 || (i && b->cr[i].doc < b->cr[i - 1].doc)) return false;
    uint32_t *v = malloc(n * sizeof(uint32_t)), *tmp = malloc(n * sizeof(uint32_t));
    uint64_t *key = malloc(n * sizeof(uint64_t));
    bcompat *sorted = malloc(n * sizeof(bcompat));
    bool ok = v && tmp && key && sorted;
    for (size_t i = 0; ok && i < n; i++) {
        v[i] = (uint32_t)i;
        key[i] = (uint64_t)b->cr[i].dev;
    }
    if (ok) sx_radix_by(v, tmp, key, n);
    for (size_t i = 0; ok && i < n; i++)
        sorted[i] = b->cr[v[i]];
    if (ok) {
        free(b->cr);
        b->cr = sorted;
        b->ccap = n;
        sorted = NULL;
    }
    free(v);
    free(tmp);
    free(key);
    free(sorted);
    return ok;
}

/* Whether the products' skus are in order already (a catalogue whose ids
 * follow its skus, as the generator's do): then by_sku's order is the
 * products' own, and heapsort's 20 million comparisons at random at
 * 1,000,000 products (about half a second) are not needed. */
static bool skus_in_order(const sx_catalog *c)
{
    for (size_t d = 1; d < c->n; d++)
        if (strcmp(c->strs + c->sku_at[d - 1], c->strs + c->sku_at[d]) > 0) return false;
    return true;
}

/* A string table: the sorted strings in one text, with offsets. */
static bool str_table(char **s, const uint32_t *order, uint32_t n, uint32_t **at, char **text,
                      size_t *bytes)
{
    size_t len = 0;
    for (uint32_t i = 0; i < n; i++)
        len += strlen(s[order[i]]) + 1;
    if (len >= UINT32_MAX) return false;
    *at = malloc(((size_t)n + 1) * sizeof(uint32_t));
    *text = malloc(len ? len : 1);
    if (!*at || !*text) return false;
    size_t o = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t l = strlen(s[order[i]]) + 1;
        (*at)[i] = (uint32_t)o;
        memcpy(*text + o, s[order[i]], l);
        o += l;
    }
    (*at)[n] = (uint32_t)o;
    *bytes += len + ((size_t)n + 1) * sizeof(uint32_t);
    return true;
}

/* s's columns in its state at p (sx_state_bytes of c's counts). */
static void state_layout(as_search_snap *s, sx_catalog *c, void *p)
{
    size_t stock = (c->noffers + 63) & ~(size_t)63;
    s->state = p;
    s->in_stock = p;
    s->prod = (sx_prod *)((char *)p + stock);
    s->merchants_in = (uint64_t *)(s->prod + c->n);
    s->merchant_stock = s->merchants_in + c->n;
    s->cheap_bits = s->merchant_stock + c->nmerchants * c->words;
    s->soon_bits = s->cheap_bits + SX_PRICE_STEPS * c->words;
    s->front = (sx_front *)(s->soon_bits + SX_SOON_DAYS * c->words);
    s->rank_order = (uint32_t *)(s->front + c->noffers);
    s->sort_order[0] = s->rank_order + c->n;
    s->sort_order[1] = s->sort_order[0] + c->n;
    s->sort_order[2] = s->sort_order[1] + c->n;
    s->bound_order = s->sort_order[2] + c->n;
    s->max_del10 = (uint16_t *)(s->bound_order + c->n);
    s->best_q = s->max_del10 + c->n;
    s->best_r = s->best_q + c->n;
    s->def_score = (uint8_t *)(s->best_r + c->n);
    s->bound_score = s->def_score + c->n;
    s->min_fine = s->bound_score + c->n;
    for (size_t i = 0; i < 5; i++)
        atomic_init(&s->order_state[i], 0);
    for (size_t i = 0; i < 4; i++)
        s->order_pos[i] = NULL;
    s->all_stock = NULL;
    atomic_init(&s->all_stock_state, 0);
    for (size_t i = 0; i < SX_PRICE_STEPS * SX_SOON_DAYS; i++) {
        s->stock_pair[i] = NULL;
        atomic_init(&s->stock_pair_state[i], 0);
    }
    s->stock_area = NULL;
    s->stock_area_bytes = 0;
    atomic_init(&s->stock_area_state, 0);
    s->c = c;
}

/* A state of s's own, zeroed: for a build, or a copy of another snapshot's. */
static bool state_map(as_search_snap *s, sx_catalog *c)
{
    s->state_bytes = sx_state_bytes(c->n, c->noffers, c->nmerchants);
    void *p =
        mmap(NULL, s->state_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        s->state = NULL;
        return false;
    }
#ifdef MADV_HUGEPAGE
    /* Transparent huge pages where the system gives them on request: a copy
     * of the whole state takes a page fault per page copied (a quarter of a
     * second for 100 MB on a virtual machine whose faults are dear), and a
     * search reads its columns at random (a TLB miss per read). The flag
     * also names the mapping in /proc/PID/smaps (VmFlags "hg"), so make bench
     * tells what each process adds for the index apart from its caches. */
    (void)madvise(p, s->state_bytes, MADV_HUGEPAGE);
#endif
    state_layout(s, c, p);
    return true;
}

/* A state of s's own that starts as c's base state (copy-on-write: the
 * pages it writes become its own). */
static bool state_map_base(as_search_snap *s, sx_catalog *c)
{
    s->state_bytes = sx_state_bytes(c->n, c->noffers, c->nmerchants);
    void *p = sx_base_map(c, s->state_bytes);
    if (!p) {
        s->state = NULL;
        return false;
    }
    state_layout(s, c, p);
    return true;
}

/* Products by code (a category or part type), ascending within each. */
static bool group_docs(const uint16_t *code, size_t n, size_t ncodes, uint32_t **at,
                       uint32_t **docs)
{
    *at = calloc(ncodes + 1, sizeof(uint32_t));
    *docs = malloc((n ? n : 1) * sizeof(uint32_t));
    uint32_t *fill = malloc((ncodes ? ncodes : 1) * sizeof(uint32_t));
    bool ok = *at && *docs && fill;
    for (size_t d = 0; ok && d < n; d++)
        (*at)[code[d] + 1]++;
    for (size_t i = 0; ok && i < ncodes; i++)
        (*at)[i + 1] += (*at)[i];
    if (ok) memcpy(fill, *at, ncodes * sizeof(uint32_t));
    for (size_t d = 0; ok && d < n; d++)
        (*docs)[fill[code[d]]++] = (uint32_t)d;
    free(fill);
    return ok;
}

/* Products [from, to) ranked under the default weights (sx_rank_default). */
typedef struct rank_span {
    as_search_snap *s;
    uint32_t from, to;
} rank_span;

static int rank_span_run(void *arg)
{
    const rank_span *r = arg;
    for (uint32_t d = r->from; d < r->to; d++)
        sx_rank_default(r->s, d);
    return 0;
}

/* Every product of a new snapshot ranked, the second half on a thread of its
 * own: a product's ranking writes its own columns and offer slots, and bits
 * of bitsets whose words it shares with the 63 products beside it, so the
 * halves split at a word's first product (1,000,000 products: about 1.5 s of
 * the build on one core). On one thread when none can be made. */
static void rank_all(as_search_snap *s)
{
    uint32_t n = (uint32_t)s->c->n;
    rank_span first = {s, 0, (n / 2) & ~63u}, second = {s, first.to, n};
    thrd_t t;
    bool two = first.to > 0 && thrd_create(&t, rank_span_run, &second) == thrd_success;
    if (!two) first.to = n;
    rank_span_run(&first);
    if (two) thrd_join(t, NULL);
}

/* How much room each half of the heads gets in strs, against what a sample
 * of them makes (a test sets less, to have them spill over). */
double sx_heads_room = 1.03;

/* One half of the docs' summary heads: written straight into strs (room
 * bytes at dst, set aside before the threads start, so strs does not move
 * while both read it), the heads that do not fit there into a buffer of its
 * own (from the doc `spill` on). head_at holds offsets from dst, then from
 * buf, until write_heads places them. */
typedef struct {
    const sx_catalog *c;
    uint32_t from, to, spill;
    char *dst;
    size_t room, n;
    char *buf;
    size_t nbuf, cap;
    bool failed;
} head_span;

/* Product d's summary head, as a page's result writes it (in m); NULL when
 * it is not UTF-8 (the page says so). */
static const char *summary_head_text(const sx_catalog *c, as_mem *m, uint32_t d, size_t *len)
{
    as_product p = {0};
    sx_summary_fields(c, d, &p);
    as_jw w;
    as_jw_init(&w, m);
    as_view_summary_head(&w, &p);
    return as_jw_text(&w, len);
}

static int head_span_run(void *arg)
{
    head_span *h = arg;
    const sx_catalog *c = h->c;
    as_arena *a = as_arena_create();
    h->spill = h->to;
    if (!a) {
        h->failed = true;
        return 0;
    }
    for (uint32_t d = h->from; d < h->to; d++) {
        as_mem m = as_arena_mem(a);
        size_t hn;
        const char *t = summary_head_text(c, &m, d, &hn);
        if (!t) {
            c->head_at[d] = AS_NO_STR;
        } else if (h->spill == h->to && h->n + hn + 3 <= h->room) {
            put_len_str(h->dst + h->n, t, hn);
            c->head_at[d] = (uint32_t)(h->n + 2);
            h->n += hn + 3;
        } else if (h->nbuf + hn + 3 >= AS_NO_STR ||
                   !grow((void **)&h->buf, &h->cap, h->nbuf + hn + 3, 1)) {
            h->failed = true;
            break;
        } else {
            if (h->spill == h->to) h->spill = d;
            put_len_str(h->buf + h->nbuf, t, hn);
            c->head_at[d] = (uint32_t)(h->nbuf + 2);
            h->nbuf += hn + 3;
        }
        as_arena_clear(a);
    }
    as_arena_destroy(a);
    return 0;
}

/* head_at of the docs [from, to) (offsets from some start) from `at` in
 * strs. */
static void heads_at(sx_catalog *c, uint32_t from, uint32_t to, size_t at)
{
    for (uint32_t d = from; d < to; d++)
        if (c->head_at[d] != AS_NO_STR) c->head_at[d] += (uint32_t)at;
}

/* Every product's summary head into strs after the strings there, in the
 * docs' order (1,000,000 products: 310 MB, about 1.6-2.0 s of the build on
 * one core, half of it the faults of fresh pages): the second half on a
 * thread of its own. Each half goes straight into its room in strs, sized
 * from a sample of the heads; the second is moved down to follow the first,
 * and what did not fit in its room is appended after both (as written into
 * a buffer, then copied: a slower build, the same heads). On one thread
 * when none can be made. */
static bool write_heads(sx_builder *b)
{
    sx_catalog *c = b->c;
    uint32_t n = (uint32_t)c->n;
    size_t base = c->nstrs, sample = 0;
    uint32_t step = n > 256 ? n / 256 : 1, taken = 0;
    as_mem m = as_arena_mem(b->arena);
    for (uint32_t d = 0; d < n; d += step, taken++) {
        size_t hn;
        if (summary_head_text(c, &m, d, &hn)) sample += hn + 3;
        as_arena_clear(b->arena);
    }
    double each = taken ? (double)sample / taken * sx_heads_room : 0;
    uint32_t half = n / 2;
    size_t room0 = (size_t)(each * half), room1 = (size_t)(each * (n - half));
    if (base + room0 + room1 >= AS_NO_STR ||
        !grow((void **)&c->strs, &b->strscap, base + room0 + room1, 1)) {
        room0 = room1 = 0; /* all of them in the buffers: appended, or failing there */
    }
    head_span h[2] = {{.c = c, .from = 0, .to = half, .room = room0},
                      {.c = c, .from = half, .to = n, .room = room1}};
    if (room0 + room1) {
        h[0].dst = c->strs + base;
        h[1].dst = h[0].dst + room0;
    }
    thrd_t t;
    bool two = n > 1 && thrd_create(&t, head_span_run, &h[1]) == thrd_success;
    if (!two) {
        /* one span, all of the room */
        h[0] = (head_span){.c = c, .from = 0, .to = n, .dst = h[0].dst, .room = room0 + room1};
        h[1] = (head_span){.c = c, .from = n, .to = n, .spill = n};
    }
    head_span_run(&h[0]);
    if (two) thrd_join(t, NULL);
    bool ok = !h[0].failed && !h[1].failed;
    if (ok) {
        /* the second's heads after the first's, then each's spilled ones */
        if (h[1].n && h[1].dst != c->strs + base + h[0].n)
            memmove(c->strs + base + h[0].n, h[1].dst, h[1].n);
        heads_at(c, h[0].from, h[0].spill, base);
        heads_at(c, h[1].from, h[1].spill, base + h[0].n);
        c->nstrs = base + h[0].n + h[1].n;
    }
    for (int i = 0; i < 2 && ok; i++) {
        size_t at = c->nstrs;
        if (!h[i].nbuf) continue;
        if (at + h[i].nbuf >= AS_NO_STR ||
            !grow((void **)&c->strs, &b->strscap, at + h[i].nbuf, 1)) {
            ok = false;
            break;
        }
        memcpy(c->strs + at, h[i].buf, h[i].nbuf);
        heads_at(c, h[i].spill, h[i].to, at);
        c->nstrs += h[i].nbuf;
    }
    free(h[0].buf);
    free(h[1].buf);
    if (!ok) b->failed = true;
    return ok;
}

/* *arr (n elements of es bytes, n + 1 allocated) in the docs' new order:
 * element d from old_of[d]. */
static bool permute(void **arr, size_t es, const uint32_t *old_of, size_t n)
{
    char *to = malloc((n + 1) * es);
    if (!to) return false;
    const char *from = *arr;
    switch (es) {
    case 1:
        for (size_t d = 0; d < n; d++)
            to[d] = from[old_of[d]];
        break;
    case 2:
        for (size_t d = 0; d < n; d++)
            memcpy(to + d * 2, from + (size_t)old_of[d] * 2, 2);
        break;
    case 4:
        for (size_t d = 0; d < n; d++)
            memcpy(to + d * 4, from + (size_t)old_of[d] * 4, 4);
        break;
    default:
        for (size_t d = 0; d < n; d++)
            memcpy(to + d * es, from + (size_t)old_of[d] * es, es);
    }
    free(*arr);
    *arr = to;
    return true;
}

/* The products in the index's order (the docs): by category, part type and
 * brand, each group in id order. A search's matches are mostly products of
 * one kind (a part type's words, a brand's, a category asked for), so in this
 * order they are runs of neighbouring docs: their columns share cache lines
 * and pages and their bitsets' words are full or empty, where in id order
 * each was a cache miss at random (at 1,000,000 products the long tail took
 * a third less CPU). The builder reads the products by id, their docs until
 * here; every column by product, its offers and its compat rows move with
 * it; its words and the views' parts stay by id (id_rk leads to them: make_postings
 * makes the postings from the words in the new order), and sku order is
 * made before (skus mostly follow ids: no sort). The brand's part of the key
 * is its name's hash: it groups, the groups' order does not matter. */
static bool order_docs(sx_builder *b)
{
    sx_catalog *c = b->c;
    size_t n = c->n;
    uint32_t *old_of = malloc((n + 1) * sizeof(uint32_t));
    uint32_t *new_of = malloc((n + 1) * sizeof(uint32_t));
    uint32_t *tmp = malloc((n + 1) * sizeof(uint32_t));
    uint64_t *key = malloc((n + 1) * sizeof(uint64_t));
    bool ok = old_of && new_of && tmp && key;
    for (size_t d = 0; ok && d < n; d++) {
        old_of[d] = (uint32_t)d;
        key[d] = (uint64_t)c->cat[d] << 48 | (uint64_t)c->pt[d] << 32 |
                 (hash_str(c->strs + c->brand_at[d]) & 0xffffffffu);
    }
    if (ok) sx_radix_by(old_of, tmp, key, n); /* stable: id order within a group */
    free(key);
    free(tmp);
    for (size_t d = 0; ok && d < n; d++)
        new_of[old_of[d]] = (uint32_t)d;
#define MOVE(f) (ok = ok && permute((void **)&c->f, sizeof(*c->f), old_of, n))
    MOVE(ids);
    MOVE(sku_rk);
    MOVE(cat);
    MOVE(pt);
    MOVE(hidden);
    MOVE(avail);
    MOVE(guarantee);
    MOVE(return_rate);
    MOVE(sku_at);
    MOVE(name_at);
    MOVE(brand_at);
    MOVE(img_at);
    MOVE(note_at);
    MOVE(xj_at);
    MOVE(status_at);
    MOVE(avail_at);
#undef MOVE
    /* each product's offers, in the new order (its words stay by id: make_postings
     * makes the postings from them, in the new order, and frees them) */
    size_t noff = c->noffers;
    uint32_t *off_at = malloc((n + 1) * sizeof(uint32_t));
    sx_offer *offers = malloc((noff ? noff : 1) * sizeof(sx_offer));
    int32_t *stock = malloc((noff ? noff : 1) * sizeof(int32_t));
    uint8_t *in_stock = malloc(noff ? noff : 1);
    ok = ok && off_at && offers && stock && in_stock;
    for (size_t d = 0, o = 0; ok && d <= n; d++) {
        off_at[d] = (uint32_t)o;
        if (d == n) break;
        uint32_t p = old_of[d];
        size_t no = c->off_at[p + 1] - c->off_at[p];
        memcpy(offers + o, c->offers + c->off_at[p], no * sizeof(sx_offer));
        memcpy(stock + o, c->stock + c->off_at[p], no * sizeof(int32_t));
        memcpy(in_stock + o, b->in_stock + c->off_at[p], no);
        o += no;
    }
    if (ok) {
#define SWAP(dst, src) (free(dst), (dst) = (src), (src) = NULL)
        SWAP(c->off_at, off_at);
        SWAP(c->offers, offers);
        SWAP(c->stock, stock);
        SWAP(b->in_stock, in_stock);
#undef SWAP
        b->cap = n + 1;
        b->offcap = b->stockcap = b->instockcap = noff ? noff : 1;
    }
    free(off_at);
    free(offers);
    free(stock);
    free(in_stock);
    /* the compat rows by new doc (each product's in the store's order), as
     * compat_by_device wants them */
    uint32_t *cr_at = ok ? calloc(n + 1, sizeof(uint32_t)) : NULL;
    bcompat *cr = ok ? malloc((b->ncr ? b->ncr : 1) * sizeof(bcompat)) : NULL;
    ok = ok && cr_at && cr;
    for (size_t i = 0; ok && i < b->ncr; i++)
        cr_at[b->cr[i].doc + 1]++;
    for (size_t d = 0; ok && d < n; d++)
        cr_at[d + 1] += cr_at[d];
    for (size_t d = 0, k = 0; ok && d < n; d++)
        for (uint32_t i = cr_at[old_of[d]]; i < cr_at[old_of[d] + 1]; i++) {
            cr[k] = b->cr[i];
            cr[k++].doc = (uint32_t)d;
        }
    if (ok) {
        free(b->cr);
        b->cr = cr;
        b->ccap = b->ncr ? b->ncr : 1;
        cr = NULL;
        /* sku order: made in id order, its docs renamed */
        for (size_t i = 0; i < n; i++)
            c->sku_docs[i] = new_of[c->sku_docs[i]];
        c->id_docs = new_of;
        c->id_rk = old_of;
        c->bytes += 2 * n * sizeof(uint32_t);
        new_of = old_of = NULL;
    }
    free(cr_at);
    free(cr);
    free(new_of);
    free(old_of);
    return ok;
}

/* The products in sku order: each one's rank in it (sku_rk), and the docs
 * in it (sku_docs, where a product view finds a sku). */
static bool order_skus(sx_catalog *c)
{
    size_t n = c->n;
    c->sku_rk = malloc((n ? n : 1) * sizeof(uint32_t));
    uint32_t *by = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!c->sku_rk || !by) {
        free(by);
        return false;
    }
    for (size_t d = 0; d < n; d++)
        by[d] = (uint32_t)d;
    sku_ctx sc = {c->strs, c->sku_at};
    if (!skus_in_order(c)) sort_ctx(by, n, by_sku, &sc);
    for (size_t i = 0; i < n; i++)
        c->sku_rk[by[i]] = (uint32_t)i;
    c->sku_docs = by;
    c->bytes += n * sizeof(uint32_t);
    return true;
}

/* The product views' parts (each product's set by on_rows), then the
 * compat rows' after them. */
static bool append_compat_views(sx_builder *b)
{
    sx_catalog *c = b->c;
    size_t n = c->n;
    c->view_at[n] = c->nvtext; /* reserve_rows gave it n + 1 */
    uint64_t ctext_at = c->nvtext;
    if (b->nctext && add_vtext(b, b->ctext, b->nctext, &b->out_failed) == UINT64_MAX) return false;
    for (size_t i = 0; i < b->ncr; i++) {
        b->cr[i].text_at += ctext_at;
        b->cr[i].text_end += ctext_at;
    }
    free(b->ctext);
    b->ctext = NULL;
    if (!c->vtext && !(c->vtext = malloc(1))) return false;
    c->bytes += (2 * n + 1) * sizeof(uint64_t) + c->nvtext;
    return true;
}

/* The contradicted products' entries, in the docs' order and each after its
 * length: a search's excluded list is of neighbouring docs (the lowest
 * first), so its entries are read from a few runs of strs, not from a page
 * each, and copied without a strlen. */
static bool write_excluded_entries(sx_builder *b)
{
    sx_catalog *c = b->c;
    for (size_t d = 0; d < c->n; d++)
        if (c->xj_at[d] != AS_NO_STR) {
            const char *x = b->xj + c->xj_at[d];
            c->xj_at[d] = add_len_str(b, x, strlen(x));
        }
    if (b->failed) return false;
    free(b->xj);
    b->xj = NULL;
    return true;
}

/* Each product's summary head, likewise: a page's results copy it instead
 * of writing ten members from six strings. */
static bool write_summary_heads(sx_builder *b)
{
    sx_catalog *c = b->c;
    if (!(c->head_at = malloc((c->n ? c->n : 1) * sizeof(uint32_t)))) return false;
    size_t heads_from = c->nstrs;
    if (!write_heads(b)) return false;
    c->bytes += c->n * sizeof(uint32_t) + (c->nstrs - heads_from);
    return true;
}

/* The vocabulary in byte order (tok_at, tok_text, tok_join); new_id[w] the
 * new id of the builder's word w (nt + 1 of them). */
static bool sort_vocabulary(sx_builder *b, uint32_t *new_id)
{
    sx_catalog *c = b->c;
    uint32_t nt = b->ntok;
    uint32_t *order = malloc(((size_t)nt + 1) * sizeof(uint32_t));
    if (!order) return false;
    for (uint32_t i = 0; i < nt; i++)
        order[i] = i;
    sort_ctx(order, nt, by_str, b->tok);
    for (uint32_t i = 0; i < nt; i++)
        new_id[order[i]] = i;
    bool ok = str_table(b->tok, order, nt, &c->tok_at, &c->tok_text, &c->bytes);
    free(order);
    if (!ok) return false;
    c->ntok = nt;
    if (!(c->tok_join = malloc((size_t)nt + 1))) return false;
    for (uint32_t i = 0; i < nt; i++)
        c->tok_join[new_id[i]] = b->tok_join[i];
    c->bytes += nt;
    return true;
}

/* Each word's stem (stem_of), the distinct stems in byte order (stem_at,
 * stem_text), each with its words (stem_toks_at, stem_toks); stems[i] and
 * stem_order (nt + 1 each) are the caller's scratch. */
static bool group_stems(sx_catalog *c, char **stems, uint32_t *stem_order, uint32_t *distinct)
{
    uint32_t nt = c->ntok;
    as_arena *a = as_arena_create();
    if (!a) return false;
    as_mem m = as_arena_mem(a);
    for (uint32_t i = 0; i < nt; i++) { /* stems[i]: of the word with new id i */
        stems[i] = (char *)as_search_stem(&m, sx_tok(c, i));
        stem_order[i] = i;
    }
    sort_ctx(stem_order, nt, by_str, stems);
    /* distinct stems, each with its words (distinct: the first word of each) */
    uint32_t ns = 0;
    for (uint32_t k = 0; k < nt; k++) {
        uint32_t w = stem_order[k];
        if (!ns || strcmp(stems[distinct[ns - 1]], stems[w]) != 0) distinct[ns++] = w;
        c->stem_of[w] = ns - 1;
    }
    bool ok = str_table(stems, distinct, ns, &c->stem_at, &c->stem_text, &c->bytes);
    as_arena_destroy(a);
    if (!ok) return false;
    c->nstems = ns;
    c->stem_toks_at = calloc((size_t)ns + 1, sizeof(uint32_t));
    c->stem_toks = malloc(((size_t)nt + 1) * sizeof(uint32_t));
    if (!c->stem_toks_at || !c->stem_toks) return false;
    for (uint32_t k = 0; k < nt; k++) /* stem_order groups the words of each stem */
        c->stem_toks_at[c->stem_of[stem_order[k]] + 1]++;
    for (uint32_t i = 0; i < ns; i++)
        c->stem_toks_at[i + 1] += c->stem_toks_at[i];
    for (uint32_t k = 0; k < nt; k++)
        c->stem_toks[k] = stem_order[k];
    c->bytes += ((size_t)nt * 2 + ns + 1) * sizeof(uint32_t);
    return true;
}

/* The vocabulary sorted and its stems grouped (new_id as sort_vocabulary
 * gives it). */
static bool index_words(sx_builder *b, uint32_t *new_id)
{
    sx_catalog *c = b->c;
    size_t nt1 = (size_t)b->ntok + 1;
    char **stems = calloc(nt1, sizeof(char *));
    uint32_t *stem_order = malloc(nt1 * sizeof(uint32_t));
    uint32_t *distinct = malloc(nt1 * sizeof(uint32_t));
    c->stem_of = malloc(nt1 * sizeof(uint32_t));
    bool ok = stems && stem_order && distinct && c->stem_of && sort_vocabulary(b, new_id) &&
              group_stems(c, stems, stem_order, distinct);
    free(stems);
    free(stem_order);
    free(distinct);
    return ok;
}

/* Each product's words renumbered (new_id); postings by counting, each
 * word's products in the docs' order. The words by id are the builder's
 * only: freed once the postings are made; new_id is reused as the next free
 * slot of each word. */
static bool make_postings(sx_builder *b, uint32_t *new_id)
{
    sx_catalog *c = b->c;
    uint32_t nt = c->ntok;
    c->post_at = calloc((size_t)nt + 1, sizeof(uint32_t));
    c->post = malloc((b->nfwd ? b->nfwd : 1) * sizeof(uint32_t));
    if (!c->post_at || !c->post) return false;
    for (size_t i = 0; i < b->nfwd; i++) {
        c->fwd[i] = new_id[c->fwd[i]];
        c->post_at[c->fwd[i] + 1]++;
    }
    for (uint32_t i = 0; i < nt; i++)
        c->post_at[i + 1] += c->post_at[i];
    uint32_t *fill = new_id;
    memcpy(fill, c->post_at, (size_t)nt * sizeof(uint32_t));
    for (size_t d = 0; d < c->n; d++) {
        size_t r = sx_id_rk(c, (uint32_t)d);
        for (uint32_t i = c->fwd_at[r]; i < c->fwd_at[r + 1]; i++)
            c->post[fill[c->fwd[i]]++] = (uint32_t)d;
    }
    free(c->fwd);
    free(c->fwd_at);
    c->fwd = c->fwd_at = NULL;
    return true;
}

/* The products of each category and part type. */
static bool group_products(sx_catalog *c)
{
    if (!group_docs(c->cat, c->n, c->ncats, &c->cat_at, &c->cat_docs) ||
        !group_docs(c->pt, c->n, c->npts, &c->pt_at, &c->pt_docs))
        return false;
    c->bytes += (2 * c->n + c->ncats + c->npts + 2) * sizeof(uint32_t);
    return true;
}

/* The compat rows by device, then product, and where each device's begin. */
static bool index_compat(sx_builder *b)
{
    sx_catalog *c = b->c;
    if (b->ncr && !compat_by_device(b)) qsort(b->cr, b->ncr, sizeof(bcompat), compat_cmp);
    c->compat =
        calloc(b->ncr ? b->ncr : 1, sizeof(sx_compat)); /* padding too: written to the file */
    c->cv_at = malloc((b->ncr ? b->ncr : 1) * 2 * sizeof(uint64_t));
    c->dev_ids = malloc((b->ncr ? b->ncr : 1) * sizeof(int64_t));
    c->dev_at = malloc((b->ncr + 1) * sizeof(uint32_t));
    if (!c->compat || !c->dev_ids || !c->dev_at || !c->cv_at) return false;
    for (size_t i = 0; i < b->ncr; i++) {
        if (!c->ndev || c->dev_ids[c->ndev - 1] != b->cr[i].dev) {
            c->dev_ids[c->ndev] = b->cr[i].dev;
            c->dev_at[c->ndev++] = (uint32_t)i;
        }
        c->compat[i] = (sx_compat){b->cr[i].doc, b->cr[i].why_at, b->cr[i].fits};
        c->cv_at[2 * i] = b->cr[i].text_at;
        c->cv_at[2 * i + 1] = b->cr[i].text_end;
    }
    c->bytes += b->ncr * 2 * sizeof(uint64_t);
    c->dev_at[c->ndev] = (uint32_t)b->ncr;
    c->ncompat = b->ncr;
    return true;
}

/* The devices as the store gave them, their strings the catalogue's. */
static bool list_devices(sx_builder *b)
{
    sx_catalog *c = b->c;
    c->devs = calloc(b->ndev ? b->ndev : 1, sizeof(as_device));
    if (!c->devs) return false;
    for (size_t i = 0; i < b->ndev; i++) {
        const uint32_t *f = b->dev_str + i * 5;
        c->devs[i] = (as_device){b->dev_id[i],   c->strs + f[0], c->strs + f[1],
                                 c->strs + f[2], c->strs + f[3], c->strs + f[4]};
    }
    c->ndevs = b->ndev;
    c->bytes += b->ncr * (sizeof(sx_compat) + 12);
    return true;
}

/* The snapshot of the built catalogue at v: the stock state in its own
 * mapping (copied on each update), every product ranked. Takes b's
 * catalogue; NULL (b's catalogue left to it) when out of memory. */
static as_search_snap *new_snapshot(sx_builder *b, const as_search_version *v)
{
    sx_catalog *c = b->c;
    as_search_snap *s = calloc(1, sizeof(*s));
    if (!s || !state_map(s, c)) {
        free(s);
        return NULL;
    }
    if (c->noffers) memcpy(s->in_stock, b->in_stock, c->noffers);
    rank_all(s);
    sx_rank_order(s);
    atomic_init(&s->refs, 1);
    s->c = c;
    s->v = *v;
    b->c = NULL;
    return s;
}

/* The columns the builder read, laid out for searches: sku order, the views'
 * and excluded entries' text, summary heads, the docs' order, the words,
 * postings, groups and compat rows. */
static bool lay_out_catalog(sx_builder *b, const as_search_version *v, uint32_t *new_id)
{
    sx_catalog *c = b->c;
    size_t n = c->n;
    if (b->failed || !reserve_rows(b, n)) return false;
    c->live_base = v->live;
    if (n == 0) c->off_at[0] = 0; /* else each add_row set its product's off_at, and the next's */
    c->fwd_at[n] = (uint32_t)b->nfwd;
    c->bytes = sizeof(*c) + n * (8 + 4 + 2 + 2 + 3 + 8 + 8 * 4 + 4 + 4) +
               c->noffers * (sizeof(sx_offer) + 4) + b->nfwd * 4 + c->nstrs;
    return order_skus(c) && append_compat_views(b) && order_docs(b) && write_excluded_entries(b) &&
           write_summary_heads(b) && index_words(b, new_id) && make_postings(b, new_id) &&
           group_products(c) && index_compat(b) && list_devices(b) && sx_catalog_private(c);
}

/* The builder's rows made a snapshot at v; b is freed either way (NULL when
 * out of memory). */
static as_search_snap *snapshot_of_rows(sx_builder *b, const as_search_version *v)
{
    uint32_t *new_id = malloc(((size_t)b->ntok + 1) * sizeof(uint32_t));
    as_search_snap *s = new_id && lay_out_catalog(b, v, new_id) ? new_snapshot(b, v) : NULL;
    free(new_id);
    builder_free(b);
    return s;
}

/* ---- snapshots ---- */

static void state_unmap(as_search_snap *s)
{
    if (s->state) munmap(s->state, s->state_bytes);
    s->state = NULL;
    for (size_t i = 0; i < 4; i++) { /* the places in its orders */
        free(s->order_pos[i]);
        s->order_pos[i] = NULL;
    }
    free(s->all_stock);
    s->all_stock = NULL;
    if (s->stock_area) munmap(s->stock_area, s->stock_area_bytes);
    s->stock_area = NULL;
    for (size_t i = 0; i < SX_PRICE_STEPS * SX_SOON_DAYS; i++)
        s->stock_pair[i] = NULL;
}

void as_search_snap_release(as_search_snap *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
    state_unmap(s);
    catalog_release(s->c);
    free(s);
}

static void snap_retain(as_search_snap *s)
{
    atomic_fetch_add(&s->refs, 1);
}

as_search_version as_search_snap_version(const as_search_snap *s)
{
    return s->v;
}

void as_search_snap_devices(const as_search_snap *s, const as_device **out, size_t *n)
{
    *out = s->c->devs;
    *n = s->c->ndevs;
}

void as_search_snap_merchants(const as_search_snap *s, as_mem *m, as_merchant **out, size_t *n)
{
    const sx_catalog *c = s->c;
    *n = c->nmerchants;
    *out = as_alloc(m, (c->nmerchants ? c->nmerchants : 1) * sizeof(**out));
    for (size_t i = 0; i < c->nmerchants; i++) {
        const sx_merchant *x = &c->merchants[i];
        (*out)[i] = x->m;
        (*out)[i].id = as_strdup(m, sx_str(c, x->id_at));
        (*out)[i].name = as_strdup(m, sx_str(c, x->name_at));
        (*out)[i].country = as_strdup(m, sx_str(c, x->country_at));
        (*out)[i].city = as_strdup(m, sx_str(c, x->city_at));
    }
}

size_t as_search_snap_products(const as_search_snap *s)
{
    return s->c->n;
}

size_t as_search_snap_bytes(const as_search_snap *s)
{
    return s->c->bytes + s->state_bytes + sizeof(*s);
}

/* glibc's allocator set, at a process's first build, as glibc sets it by
 * itself after one. Until a large block it gave by mmap is freed, glibc gives
 * blocks of 128 KiB and more by mmap and returns the top of a heap to the
 * system once 128 KiB of it is free; each such free raises both limits to
 * that block's size (the trim twice it), up to 32 MiB, and a build frees many.
 * So a process's first build faulted its memory in again and again: on
 * PostgreSQL each batch's results (libpq's, thousands of small blocks freed
 * together) went back to the system and were faulted in for the next, and
 * blocks between 128 KiB and 32 MiB were mapped and unmapped (1,000,000
 * products: the first build in a process 31.5 s, a second 20.9 s; the first
 * 21.9 s with these; SQLite's 19.7 -> 16.2 s). A process that never builds
 * (a child that maps the file another wrote) keeps glibc's defaults, and one
 * whose environment sets malloc's tunables keeps those. */
static void malloc_steady(void)
{
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    const char *t = getenv("GLIBC_TUNABLES");
    if ((t && strstr(t, "glibc.malloc.")) || getenv("MALLOC_MMAP_THRESHOLD_") ||
        getenv("MALLOC_TRIM_THRESHOLD_"))
        return;
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

static once_flag malloc_once = ONCE_FLAG_INIT;

/* Every product from the store, at *v; read again (and *v moved on) when the
 * catalogue changed while it was being read. The views' text goes into
 * memory or, with out, into that file (*out_failed when the file had no room
 * for it: a build in memory may still succeed). */
static as_search_snap *build(const as_store *st, as_search_version *v, const sx_file_out *out,
                             bool *out_failed)
{
    call_once(&malloc_once, malloc_steady);
    for (int attempt = 0; attempt < 3; attempt++) {
        sx_builder *b = builder_new();
        if (!b) return NULL;
        b->out = out;
        as_arena *a = as_arena_create();
        as_mem am = as_arena_mem(a);
        as_merchant *ms;
        size_t nm;
        as_device *ds;
        size_t nd;
        int rc = as_store_merchants(st, &am, &ms, &nm);
        if (rc == AS_OK && !set_merchants(b, ms, nm)) rc = AS_EDB;
        if (rc == AS_OK) rc = as_store_devices(st, &am, &ds, &nd);
        if (rc == AS_OK && !set_devices(b, ds, nd)) rc = AS_EDB;
        as_arena_destroy(a);
        if (rc == AS_OK) rc = as_store_index_rows(st, on_rows, b);
        if (rc == AS_OK && b->failed) rc = AS_EDB;
        as_search_version after;
        if (rc == AS_OK && as_store_search_version(st, &after) != AS_OK) rc = AS_EDB;
        if (rc != AS_OK) {
            if (out_failed) *out_failed = b->out_failed;
            builder_free(b);
            return NULL;
        }
        if (after.catalogue == v->catalogue) return snapshot_of_rows(b, v);
        builder_free(b);
        *v = after;
    }
    return NULL;
}

as_search_snap *as_search_snap_build(const as_store *st)
{
    as_search_version v;
    if (as_store_search_version(st, &v) != AS_OK)
        return NULL;
    return build(st, &v, NULL, NULL);
}

/* ---- updates: which offers are in stock ---- */

static int apply_change(void *baton, int64_t id, const as_rank_row *r)
{
    as_search_snap *nx = baton;
    const sx_catalog *c = nx->c;
    uint32_t d = sx_doc_of(c, id);
    if (d == UINT32_MAX)
        return 0; /* a product the index does not know comes with a new catalogue */
    const char *list = r->in_stock ? r->in_stock : "";
    for (uint32_t o = c->off_at[d]; o < c->off_at[d + 1]; o++) {
        const char *oid = c->strs + c->offers[o].id_at;
        size_t len = strlen(oid);
        bool found = false;
        for (const char *p = list; *p && !found;) {
            const char *e = strchr(p, ' ');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            found = l == len && memcmp(p, oid, len) == 0;
            p = e ? e + 1 : p + l;
        }
        nx->in_stock[o] = found ? 1 : 0;
    }
    sx_rank_default(nx, d);
    if (nx->base_changes != SIZE_MAX) nx->base_changes++;
    return 0;
}

/* A new snapshot's state is its catalogue's base state with the products
 * changed since applied (copy-on-write: it costs the pages the changes
 * write), while they are at most this many; past it, applying them all
 * again costs about what a copy of the whole state does (a change writes
 * some of the columns' and bitsets' pages, up to about 64), and the new state
 * becomes the base. */
static size_t base_changes_max(const as_search_snap *s)
{
    return s->state_bytes / (256 * 1024) + 16;
}

/* s's catalogue at stock version v: the rows changed since, applied to the
 * base state (or, without one, to a copy of s's). */
static as_search_snap *update(as_search_snap *s, const as_store *st, const as_search_version *v)
{
    sx_catalog *c = s->c;
    as_search_snap *nx = calloc(1, sizeof(*nx));
    bool from_base = c->base_fd >= 0 && s->base_changes <= base_changes_max(s);
    if (!nx || !(from_base ? state_map_base(nx, c) : state_map(nx, c))) {
        free(nx);
        return NULL;
    }
    if (!from_base) memcpy(nx->state, s->state, s->state_bytes);
    nx->base_changes = from_base ? 0 : SIZE_MAX;
    if (as_store_rank_changes(st, from_base ? c->base_rank : s->v.rank, apply_change, nx) !=
        AS_OK) {
        state_unmap(nx);
        free(nx);
        return NULL;
    }
    sx_rank_order(nx);
    /* every row above v.rank was read (and maybe newer ones: read again) */
    if (c->base_fd >= 0 && nx->base_changes > base_changes_max(nx) &&
        sx_base_write(c, nx->state, nx->state_bytes, v->rank))
        nx->base_changes = 0;
    atomic_init(&nx->refs, 1);
    atomic_fetch_add(&c->refs, 1);
    nx->v = *v;
    return nx;
}

/* ---- the process's current snapshot ---- */

struct as_search_index {
    mtx_t lock;  /* guards cur: held only to take or swap the pointer */
    mtx_t build; /* one thread updates at a time (and, without an opener, builds) */
    as_search_snap *cur;
    char *prefix; /* the index files' path without "-<version>.idx"; NULL: in memory */
    char *why;    /* why there is no prefix (as_search_index_private), for the log */
    atomic_bool said_private; /* that this process keeps its own copy: logged once */
    as_log_fn log;
    void *log_baton;
    /* Builds in the background (as_search_index_background); bg guards the
     * rest. wake: the thread has work or must stop; done: a build ended. */
    as_search_opener opener; /* open NULL: the caller of get builds */
    mtx_t bg;
    cnd_t wake, done;
    bool thread_made;
    thrd_t thread;
    bool asked;       /* a build is asked for or under way */
    int64_t again;    /* asked for during a build: this catalogue (0: none) */
    atomic_bool stop; /* the index is going away: builds give up between rows */
    int failures;     /* builds failed in a row */
    double retry_at;  /* no build asked for before this (now_ms), after a failure */
};

as_search_index *as_search_index_create(const char *file_prefix, as_log_fn log,
                                        void *log_baton)
{
    as_search_index *si = calloc(1, sizeof(*si));
    if (!si) return NULL;
    if (file_prefix && !(si->prefix = strdup(file_prefix))) {
        free(si);
        return NULL;
    }
    si->log = log;
    si->log_baton = log_baton;
    atomic_init(&si->stop, false);
    atomic_init(&si->said_private, false);
    int made = 0; /* how many of the five below exist */
    if (mtx_init(&si->lock, mtx_plain) == thrd_success && ++made &&
        mtx_init(&si->build, mtx_plain) == thrd_success && ++made &&
        mtx_init(&si->bg, mtx_plain) == thrd_success && ++made &&
        cnd_init(&si->wake) == thrd_success && ++made && cnd_init(&si->done) == thrd_success)
        return si;
    if (made > 3) cnd_destroy(&si->wake);
    if (made > 2) mtx_destroy(&si->bg);
    if (made > 1) mtx_destroy(&si->build);
    if (made > 0) mtx_destroy(&si->lock);
    free(si->prefix);
    free(si);
    return NULL;
}

int as_search_files_sweep(const char *dir)
{
    return sx_file_sweep(dir, NULL);
}

void as_search_index_private(as_search_index *si, const char *why)
{
    free(si->why);
    si->why = why ? strdup(why) : NULL;
}

/* Stops the background thread (a build under way gives up at its next row or
 * stage, closing its store) and waits for it. */
void as_search_index_destroy(as_search_index *si)
{
    if (!si) return;
    mtx_lock(&si->bg);
    atomic_store(&si->stop, true);
    cnd_broadcast(&si->wake);
    cnd_broadcast(&si->done);
    bool joined = si->thread_made;
    mtx_unlock(&si->bg);
    if (joined) thrd_join(si->thread, NULL);
    as_search_snap_release(si->cur);
    cnd_destroy(&si->done);
    cnd_destroy(&si->wake);
    mtx_destroy(&si->bg);
    mtx_destroy(&si->lock);
    mtx_destroy(&si->build);
    free(si->prefix);
    free(si->why);
    free(si);
}

static void log_index(const as_search_index *si, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void log_index(const as_search_index *si, int level, const char *fmt, ...)
{
    if (!si->log) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    si->log(si->log_baton, level, msg);
}

static as_search_snap *current(as_search_index *si)
{
    mtx_lock(&si->lock);
    as_search_snap *s = si->cur;
    if (s) snap_retain(s);
    mtx_unlock(&si->lock);
    return s;
}

static void install(as_search_index *si, as_search_snap *s)
{
    snap_retain(s); /* the reference cur holds */
    mtx_lock(&si->lock);
    as_search_snap *old = si->cur;
    si->cur = s;
    mtx_unlock(&si->lock);
    as_search_snap_release(old);
}

/* s in place of old, unless another snapshot took old's place meanwhile (the
 * background thread's, of a newer catalogue). */
static void install_over(as_search_index *si, as_search_snap *old, as_search_snap *s)
{
    snap_retain(s);
    mtx_lock(&si->lock);
    bool swap = si->cur == old;
    if (swap) si->cur = s;
    mtx_unlock(&si->lock);
    as_search_snap_release(swap ? old : s);
}

static bool fresh(const as_search_snap *s, const as_search_version *v)
{
    return s && s->v.catalogue == v->catalogue && s->v.rank >= v->rank;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

static char *file_path(const as_search_index *si, int64_t catalogue)
{
    size_t n = strlen(si->prefix) + 32;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s-%lld.idx", si->prefix, (long long)catalogue);
    return p;
}

/* The snapshot of the index file of that catalogue version, at the versions it
 * was built at; NULL when there is none. */
static as_search_snap *map_file(const as_search_index *si, int64_t catalogue)
{
    char *path = file_path(si, catalogue);
    if (!path) return NULL;
    as_search_version at;
    const uint8_t *state;
    sx_catalog *c = sx_file_map(path, catalogue, &at, &state);
    free(path);
    if (!c) return NULL;
    as_search_snap *s = calloc(1, sizeof(*s));
    /* the file's stock state, as a private mapping of it when it can be:
     * written pages only are this process's */
    bool ok = s && (c->base_fd >= 0 ? state_map_base(s, c) && sx_state_valid(c, s)
                                    : state_map(s, c) && sx_file_state(c, state, s));
    if (!ok) {
        if (s) state_unmap(s);
        free(s);
        catalog_free(c);
        return NULL;
    }
    atomic_init(&s->refs, 1);
    s->v = at;
    return s;
}

/* Files of other catalogue versions: no process maps them again (those that
 * do keep their mappings after the unlink). */
static void remove_others(const as_search_index *si, int64_t keep)
{
    const char *slash = strrchr(si->prefix, '/');
    char *dir = slash ? strndup(si->prefix, (size_t)(slash - si->prefix + 1)) : strdup("./");
    const char *base = slash ? slash + 1 : si->prefix;
    DIR *d = dir ? opendir(dir) : NULL;
    size_t bl = strlen(base);
    for (struct dirent *e; d && (e = readdir(d));) {
        long long v;
        char tail[8];
        if (strncmp(e->d_name, base, bl) != 0 || e->d_name[bl] != '-' ||
            sscanf(e->d_name + bl + 1, "%lld.%7s", &v, tail) != 2 || strcmp(tail, "idx") != 0 ||
            v == keep)
            continue;
        char *p = malloc(strlen(dir) + strlen(e->d_name) + 1);
        if (p) {
            strcpy(p, dir);
            strcat(p, e->d_name);
            unlink(p);
            free(p);
        }
    }
    if (d) closedir(d);
    free(dir);
}

static const char *where(bool bg)
{
    return bg ? " in the background" : "";
}

static void mapped(const as_search_index *si, const as_search_snap *s, bool bg)
{
    char *path = file_path(si, s->v.catalogue);
    log_index(si, AS_LOG_INFO, "search index %zu products, %zu bytes, mapped (%s)%s", s->c->n,
              s->c->map_bytes, path ? path : "?", where(bg));
    free(path);
}

/* Sleeps ms, or less when the index is going away: false then. */
static bool sleep_unless_stopped(as_search_index *si, long ms)
{
    struct timespec until;
    timespec_get(&until, TIME_UTC);
    until.tv_nsec += (ms % 1000) * 1000000L;
    until.tv_sec += ms / 1000 + until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    mtx_lock(&si->bg);
    while (!atomic_load(&si->stop) && cnd_timedwait(&si->wake, &si->bg, &until) == thrd_success) {
    }
    mtx_unlock(&si->bg);
    return !atomic_load(&si->stop);
}

#define POLL_MS 100 /* how often a background thread looks for another process's file */

/* How replace waits for another process that holds the lock: not at all
 * (a search that has a snapshot to serve), until it is free (a search with
 * none), or looking for its file every POLL_MS (the background thread, which
 * must notice that the index is going away). */
typedef enum { LOCK_TRY, LOCK_WAIT, LOCK_POLL } lock_how;

/* A copy of the index this process built for itself, in memory: the first
 * one says, as a warning, why it is not the shared file. */
static as_search_snap *kept_private(as_search_index *si, as_search_snap *b, double t0, bool bg,
                                    const char *why)
{
    if (!b) return NULL;
    if (!atomic_exchange(&si->said_private, true))
        log_index(si, AS_LOG_WARN,
                  "search index: this process keeps its own copy in memory (%zu bytes), not the "
                  "file the other processes share: %s",
                  b->c->bytes, why ? why : "no index directory");
    if (bg)
        log_index(si, AS_LOG_INFO,
                  "search index %zu products, %zu bytes, built in %.0f ms (in memory)%s", b->c->n,
                  b->c->bytes, now_ms() - t0, where(bg));
    return b;
}

/* The directory of the index files, and their database's part of a name. */
static void prefix_parts(const char *prefix, char *dir, size_t n, const char **base)
{
    const char *slash = strrchr(prefix, '/');
    if (!slash)
        snprintf(dir, n, ".");
    else
        snprintf(dir, n, "%.*s", slash == prefix ? 1 : (int)(slash - prefix), prefix);
    *base = slash ? slash + 1 : prefix;
}

/* With the lock held: the temporary files of writers of this database that
 * died while writing (killed, out of memory) are removed, not left until
 * httpd starts again. */
static void sweep_dead(const as_search_index *si)
{
    char dir[PATH_MAX];
    const char *base;
    prefix_parts(si->prefix, dir, sizeof(dir), &base);
    int n = sx_file_sweep(dir, base);
    if (n > 0)
        log_index(si, AS_LOG_INFO,
                  "search index: removed %d temporary file%s of a writer that died", n,
                  n == 1 ? "" : "s");
}

/* Builds v's catalogue and writes it as its file, with the lock held. */
static as_search_snap *build_file(as_search_index *si, const as_store *st, as_search_version *v,
                                  bool bg)
{
    double t0 = now_ms();
    /* the views' text goes into the file as it is made (no room on the disk
     * for it: built in memory, kept by this process alone) */
    char *path = file_path(si, v->catalogue);
    sx_file_out out = {-1, NULL};
    bool room_failed = false;
    bool spooled = path && sx_file_create(path, &out);
    int err = spooled ? 0 : errno;
    as_search_snap *b = spooled ? build(st, v, &out, &room_failed) : NULL;
    if (!b) sx_file_abandon(&out);
    if (!b && (!spooled || room_failed)) b = build(st, v, NULL, NULL);
    free(path);
    path = b ? file_path(si, b->v.catalogue) : NULL; /* v: the version built at */
    as_search_snap *s = NULL;
    errno = 0;
    if (path && (out.fd >= 0 ? sx_file_commit(b, &out, path) : sx_file_write(b, path)))
        s = map_file(si, b->v.catalogue);
    if (!err) err = errno;
    sx_file_abandon(&out); /* unless committed */
    if (s) {
        log_index(si, AS_LOG_INFO, "search index %zu products, %zu bytes, built in %.0f ms (%s)%s",
                  s->c->n, s->c->map_bytes, now_ms() - t0, path, where(bg));
        remove_others(si, b->v.catalogue);
        as_search_snap_release(b);
    } else if (b) {
        char why[PATH_MAX + 160];
        snprintf(why, sizeof(why), "%s could not be written or mapped (%s)",
                 path ? path : "its file", err ? strerror(err) : "a damaged or foreign file");
        s = kept_private(si, b, t0, bg, why);
    }
    free(path);
    return s;
}

/* A snapshot of a catalogue version this process does not have: the index
 * file's, or one built from the store and written as the file, one process at
 * a time (flock). Returns NULL with *busy set when another process is building
 * and how is LOCK_TRY. */
static as_search_snap *replace(as_search_index *si, const as_store *st, as_search_version *v,
                               lock_how how, bool *busy)
{
    bool bg = how == LOCK_POLL;
    *busy = false;
    double t0 = now_ms();
    if (!si->prefix) return kept_private(si, build(st, v, NULL, NULL), t0, bg, si->why);
    as_search_snap *s = map_file(si, v->catalogue);
    if (s) {
        mapped(si, s, bg);
        return s;
    }
    char lock[PATH_MAX];
    snprintf(lock, sizeof(lock), "%s.lock", si->prefix);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) { /* no lock, no file: a writer holds the lock (sx_file_sweep) */
        char why[PATH_MAX + 80];
        snprintf(why, sizeof(why), "%s cannot be opened (%s)", lock, strerror(errno));
        return kept_private(si, build(st, v, NULL, NULL), t0, bg, why);
    }
    while (flock(fd, how == LOCK_WAIT ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
        if (how == LOCK_TRY || errno != EWOULDBLOCK || !sleep_unless_stopped(si, POLL_MS) ||
            (s = map_file(si, v->catalogue))) {
            close(fd);
            *busy = how == LOCK_TRY;
            if (s) mapped(si, s, bg);
            return s; /* NULL: busy, going away, or no lock to take */
        }
    }
    sweep_dead(si);
    s = map_file(si, v->catalogue); /* another process wrote it meanwhile */
    as_search_version now;
    if (!s && as_store_search_version(st, &now) == AS_OK && now.catalogue != v->catalogue &&
        (s = map_file(si, now.catalogue)))
        *v = now; /* v's file is gone: the process that wrote a newer one removed it */
    if (!s)
        s = build_file(si, st, v, bg);
    else
        mapped(si, s, bg);
    close(fd); /* and the lock with it */
    return s;
}

/* A newer stock state of the catalogue s has (cheap: the rows changed since),
 * made by one thread at a time; NULL when the store failed. */
static as_search_snap *restock(as_search_index *si, const as_store *st, as_search_snap *s,
                               const as_search_version *v)
{
    mtx_lock(&si->build);
    as_search_snap *c = current(si); /* another thread may have done it meanwhile */
    as_search_snap *nx = NULL;
    if (c && c->v.catalogue == s->v.catalogue && !fresh(c, v)) {
        /* Stock read after v was read is at least as new as v: the snapshot
         * says v, and the next update reads those rows again if need be. */
        if ((nx = update(c, st, v))) install_over(si, c, nx);
        as_search_snap_release(c);
    } else if (c && c->v.catalogue == s->v.catalogue) {
        nx = c;
    } else { /* the background thread installed another catalogue: s serves */
        as_search_snap_release(c);
        snap_retain(s);
        nx = s;
    }
    mtx_unlock(&si->build);
    as_search_snap_release(s);
    return nx;
}

/* Without an opener: the thread that needs a new catalogue builds it. */
static as_search_snap *at_here(as_search_index *si, const as_store *st,
                               const as_search_version *read)
{
    as_search_version v = *read;
    as_search_snap *s = current(si);
    if (fresh(s, &v)) return s;
    if (s && s->v.catalogue == v.catalogue) return restock(si, st, s, &v);
    /* a new catalogue: the old one serves while one thread gets the new */
    if (s && mtx_trylock(&si->build) != thrd_success) return s;
    if (!s) mtx_lock(&si->build);
    as_search_snap_release(s);
    s = current(si); /* another thread may have got it meanwhile */
    if (!fresh(s, &v)) {
        bool busy = false;
        as_search_snap *nx = s && s->v.catalogue == v.catalogue
                                 ? update(s, st, &v)
                                 : replace(si, st, &v, s ? LOCK_TRY : LOCK_WAIT, &busy);
        if (nx && nx->v.rank < v.rank) { /* a file built before the latest stock changes */
            as_search_snap *u = update(nx, st, &v);
            as_search_snap_release(nx);
            nx = u;
        }
        if (nx) {
            install(si, nx);
            as_search_snap_release(s);
            s = nx;
        } else if (!busy) {
            as_search_snap_release(s);
            s = NULL;
        } /* busy: s, the old catalogue, until the new one is written */
    }
    mtx_unlock(&si->build);
    return s;
}

/* ---- builds in the background ---- */

/* The opener's store as the background build reads it: every call, and every
 * batch of a stream, first asks whether the index is going away, so a build
 * gives up within one batch of rows (the store reads the batch to its end). */
typedef struct bg_store {
    const as_store *in;
    const atomic_bool *stop;
    as_index_rows_fn rows; /* the stream being read: its callback, and its baton */
    void *baton;
} bg_store;

#define BG_STOPPED(b) atomic_load(((const bg_store *)(b))->stop)

static int bg_version(void *h, as_search_version *out)
{
    bg_store *b = h;
    return BG_STOPPED(b) ? AS_EDB : as_store_search_version(b->in, out);
}

static int bg_merchants(void *h, as_mem *m, as_merchant **out, size_t *n)
{
    bg_store *b = h;
    return BG_STOPPED(b) ? AS_EDB : as_store_merchants(b->in, m, out, n);
}

static int bg_devices(void *h, as_mem *m, as_device **out, size_t *n)
{
    bg_store *b = h;
    return BG_STOPPED(b) ? AS_EDB : as_store_devices(b->in, m, out, n);
}

static int bg_batch(void *h, const as_index_row *rows, size_t n)
{
    bg_store *b = h;
    return BG_STOPPED(b) ? -1 : b->rows(b->baton, rows, n);
}

static int bg_rows(void *h, as_index_rows_fn each, void *baton)
{
    bg_store *b = h;
    b->rows = each;
    b->baton = baton;
    return BG_STOPPED(b) ? AS_EDB : as_store_index_rows(b->in, bg_batch, b);
}

static int bg_changes(void *h, int64_t since, as_rank_row_fn each, void *baton)
{
    bg_store *b = h;
    return BG_STOPPED(b) ? AS_EDB : as_store_rank_changes(b->in, since, each, baton);
}

/* Only what build and update call: every stream build reads. */
static const as_store_feed_ops bg_feed = {
    .merchants = bg_merchants,
    .devices = bg_devices,
    .search_version = bg_version,
    .index_rows = bg_rows,
    .rank_changes = bg_changes,
};
static const as_store_ops bg_ops = {.feed = &bg_feed};

/* One build on the opener's store: the catalogue the database has now, from
 * its file or built (and written), brought up to its stock, installed. */
static bool bg_build(as_search_index *si)
{
    as_store own;
    void *conn = NULL;
    if (si->opener.open(si->opener.baton, &own, &conn) != AS_OK) {
        log_index(si, AS_LOG_ERR, "search index: no database connection for the background build");
        return false;
    }
    bg_store b = {.in = &own, .stop = &si->stop};
    as_store st = {&bg_ops, &b};
    as_search_version v;
    bool ok = false;
    if (as_store_search_version(&st, &v) == AS_OK) {
        as_search_snap *s = current(si);
        ok = s && s->v.catalogue == v.catalogue; /* already there: nothing to do */
        as_search_snap_release(s);
        bool busy;
        as_search_snap *nx = ok ? NULL : replace(si, &st, &v, LOCK_POLL, &busy);
        if (nx && nx->v.rank < v.rank) { /* a file built before the latest stock changes */
            as_search_snap *u = update(nx, &st, &v);
            as_search_snap_release(nx);
            nx = u;
        }
        if (nx) {
            install(si, nx);
            as_search_snap_release(nx);
            ok = true;
        }
    }
    si->opener.close(si->opener.baton, conn);
    return ok;
}

#define BACKOFF_MAX_MS 60000.0

static int bg_main(void *arg)
{
    as_search_index *si = arg;
    mtx_lock(&si->bg);
    for (;;) {
        while (!atomic_load(&si->stop) && !si->asked)
            cnd_wait(&si->wake, &si->bg);
        if (atomic_load(&si->stop)) break;
        mtx_unlock(&si->bg);
        bool ok = bg_build(si);
        mtx_lock(&si->bg);
        /* A search that saw a catalogue other than the one just installed
         * while the build ran: once more (a build already there costs one
         * read of the versions). */
        as_search_snap *s = si->again && ok ? current(si) : NULL;
        si->asked = s && s->v.catalogue != si->again;
        si->again = 0;
        as_search_snap_release(s);
        if (ok) {
            si->failures = 0;
            si->retry_at = 0;
        } else if (!atomic_load(&si->stop)) {
            /* 1 s, 2 s, 4 s ... at most a minute: a database that is down is
             * not asked again on every search */
            double wait = 1000.0 * (double)(1u << (si->failures < 6 ? si->failures : 6));
            if (wait > BACKOFF_MAX_MS) wait = BACKOFF_MAX_MS;
            si->failures++;
            si->retry_at = now_ms() + wait;
            log_index(si, AS_LOG_ERR,
                      "search index: the background build failed (%d in a row); the next one no "
                      "sooner than in %.0f s",
                      si->failures, wait / 1000);
        }
        cnd_broadcast(&si->done);
    }
    mtx_unlock(&si->bg);
    return 0;
}

/* Asks for a build of the database's catalogue (a search saw `catalogue`; 0
 * when it has none) unless one is being backed off from; makes the thread
 * the first time. Called with bg held. */
static void request_build(as_search_index *si, int64_t catalogue)
{
    if (si->asked) {
        si->again = catalogue;
        return;
    }
    if (atomic_load(&si->stop) || now_ms() < si->retry_at) return;
    if (!si->thread_made) {
        /* The thread takes no signal: they are the process's main thread's
         * (or the MPM's signal thread's) to handle. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        si->thread_made = thrd_create(&si->thread, bg_main, si) == thrd_success;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!si->thread_made) {
            log_index(si, AS_LOG_ERR, "search index: cannot start the background build thread");
            si->retry_at = now_ms() + 1000;
            return;
        }
    }
    si->asked = true;
    cnd_signal(&si->wake);
}

/* No snapshot at all (the first search of this process): waits for the
 * background build, at most the opener's wait_ms; NULL when it failed or
 * took longer. */
static as_search_snap *wait_first_build(as_search_index *si)
{
    struct timespec until;
    timespec_get(&until, TIME_UTC);
    long ms = si->opener.wait_ms > 0 ? si->opener.wait_ms : 0;
    until.tv_nsec += (ms % 1000) * 1000000L;
    until.tv_sec += ms / 1000 + until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    mtx_lock(&si->bg);
    request_build(si, 0);
    as_search_snap *s;
    while (!(s = current(si)) && si->asked && !atomic_load(&si->stop))
        if (cnd_timedwait(&si->done, &si->bg, &until) != thrd_success) {
            s = current(si);
            break;
        }
    mtx_unlock(&si->bg);
    return s;
}

void as_search_index_background(as_search_index *si, const as_search_opener *opener)
{
    mtx_lock(&si->bg);
    si->opener = *opener;
    mtx_unlock(&si->bg);
}

int as_search_index_retry_after(as_search_index *si)
{
    if (!si->opener.open) return 0;
    as_search_snap *s = current(si);
    as_search_snap_release(s);
    if (s) return 0;
    mtx_lock(&si->bg);
    double left = si->asked ? 0 : si->retry_at - now_ms();
    mtx_unlock(&si->bg);
    int secs = (int)ceil(left / 1000);
    return secs > 1 ? secs : 1; /* building: asking again soon is fine */
}

as_search_snap *as_search_index_get(as_search_index *si, const as_store *st)
{
    as_search_version v;
    return as_search_index_get_read(si, st, &v);
}

as_search_snap *as_search_index_get_read(as_search_index *si, const as_store *st,
                                         as_search_version *read)
{
    if (si->opener.open) {
        /* no snapshot yet: wait for the first build before reading the
         * versions (a snapshot that is there is only retained and let go) */
        as_search_snap *s = current(si);
        if (!s && !(s = wait_first_build(si))) return NULL;
        as_search_snap_release(s);
    }
    if (as_store_search_version(st, read) != AS_OK) return NULL;
    return as_search_index_at(si, st, read);
}

as_search_snap *as_search_index_current(as_search_index *si)
{
    return current(si);
}

as_search_snap *as_search_index_at(as_search_index *si, const as_store *st,
                                   const as_search_version *read)
{
    if (!si->opener.open) return at_here(si, st, read);
    as_search_version v = *read;
    as_search_snap *s = current(si);
    if (!s) { /* no first build yet (a search waits for it in get; a view
                 does not: it is read whole meanwhile) */
        mtx_lock(&si->bg);
        request_build(si, v.catalogue);
        mtx_unlock(&si->bg);
        return NULL;
    }
    if (fresh(s, &v)) return s;
    if (s->v.catalogue == v.catalogue) return restock(si, st, s, &v);
    /* a new catalogue: the old one serves, stock read live, until the
     * background thread installs the new one */
    mtx_lock(&si->bg);
    request_build(si, v.catalogue);
    mtx_unlock(&si->bg);
    return s;
}
