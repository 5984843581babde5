/* The catalogue index of search: built from the store's streams (index_rows,
 * index_offers, index_compat), kept current by rank_changes (which offers are
 * in stock), swapped atomically. Memory comes from malloc (mmap for the stock
 * state), not from a request's as_mem: a snapshot lives as long as a reader
 * holds it, and the last release frees it. */
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "as_api.h"
#include "as_devices.h"
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
} bcompat;

typedef struct sx_builder {
    bool failed;
    sx_catalog *c; /* filled in place; arrays grown here */
    size_t cap;    /* products */
    size_t offcap, fwdcap, strscap, ccap;
    size_t nfwd;
    uint8_t *in_stock;
    size_t instockcap;
    size_t last_doc;
    bcompat *cr;
    size_t ncr;
    uint32_t *dev_str; /* per device: slug, name, brand, kind, aliases */
    int64_t *dev_id;
    size_t ndev;
    /* words by first appearance, found through an open-addressing hash */
    char **tok;
    size_t tokcap;
    uint32_t ntok;
    uint32_t *slots;
    size_t nslots;
    uint32_t *cur; /* the current product's word ids */
    size_t ncur, curcap;
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

static uint32_t word_id(sx_builder *b, const char *w)
{
    size_t i = (size_t)hash_str(w) & (b->nslots - 1);
    for (; b->slots[i]; i = (i + 1) & (b->nslots - 1))
        if (strcmp(b->tok[b->slots[i] - 1], w) == 0) return b->slots[i] - 1;
    if (b->ntok >= MAX_TOKENS || !grow((void **)&b->tok, &b->tokcap, b->ntok + 1, sizeof(char *)))
        return UINT32_MAX;
    char *copy = strdup(w);
    if (!copy) return UINT32_MAX;
    b->tok[b->ntok] = copy;
    b->slots[i] = ++b->ntok;
    if ((size_t)b->ntok * 2 > b->nslots && !rehash(b)) return UINT32_MAX;
    return b->ntok - 1;
}

static bool add_word(sx_builder *b, const char *w)
{
    uint32_t id = word_id(b, w);
    if (id == UINT32_MAX || !grow((void **)&b->cur, &b->curcap, b->ncur + 1, sizeof(uint32_t)))
        return false;
    b->cur[b->ncur++] = id;
    return true;
}

/* The words of text (as a query's are read); with joined, also each pair of
 * neighbours written as one ("hand soap" → "handsoap", "usb-c" → "usbc"), so a
 * query that joins them finds the product. */
static bool add_text(sx_builder *b, as_mem *m, const char *text, bool joined)
{
    as_sword *w;
    size_t n = as_search_words(m, text, &w);
    const char *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!add_word(b, w[i].text)) return false;
        if (w[i].part) continue;
        if (joined && prev && !add_word(b, as_printf(m, "%s%s", prev, w[i].text))) return false;
        prev = w[i].text;
    }
    return true;
}

/* A number as words would write it: no trailing zeros ("1000", "2.5"). */
static const char *num_text(as_mem *m, double v)
{
    if (v == floor(v) && fabs(v) < 1e15) return as_printf(m, "%.0f", v);
    return as_printf(m, "%.6g", v);
}

/* The words of a product's specifications: a true flag gives its label ("Vegan",
 * "Fragrance-free"); a text value its label and value; a number its label, its
 * value with its unit and, where a larger unit gives a round number, that too
 * (1000 ml → 1 l). A false flag or no value gives nothing: "vegan" must not
 * find a product measured not to be vegan. The measured value wins over the
 * claimed one. */
static bool add_specs(sx_builder *b, as_mem *m, const char *specs)
{
    if (!specs) return true;
    json_t *arr = json_loads(specs, JSON_DECODE_ANY, NULL);
    if (!json_is_array(arr)) {
        json_decref(arr);
        return true; /* not the store's format: no spec words */
    }
    bool ok = true;
    size_t i;
    json_t *row;
    json_array_foreach(arr, i, row)
    {
        const char *label = json_string_value(json_array_get(row, 0));
        const char *unit = json_string_value(json_array_get(row, 1));
        json_t *v = json_array_get(row, 3);
        if (!v || json_is_null(v)) v = json_array_get(row, 2);
        if (!v || json_is_null(v) || json_is_false(v)) continue;
        if (label && !(ok = add_text(b, m, label, true))) break;
        if (json_is_string(v)) {
            ok = add_text(b, m, json_string_value(v), true);
        } else if (json_is_number(v)) {
            double x = json_number_value(v);
            ok = add_text(b, m, as_printf(m, "%s %s", num_text(m, x), unit ? unit : ""), false);
            static const struct {
                const char *from, *to;
                double by;
            } bigger[] = {{"ml", "l", 1000}, {"g", "kg", 1000}, {"mm", "cm", 10},
                          {"cm", "m", 100},  {"mah", "ah", 1000}, {"w", "kw", 1000}};
            for (size_t k = 0; ok && unit && k < sizeof(bigger) / sizeof(bigger[0]); k++) {
                double y = x / bigger[k].by;
                if (strcasecmp(unit, bigger[k].from) == 0 && y >= 1 && fabs(y * 100 - round(y * 100)) < 1e-9)
                    ok = add_text(b, m, as_printf(m, "%s %s", num_text(m, y), bigger[k].to), false);
            }
        }
        if (!ok) break;
    }
    json_decref(arr);
    return ok;
}

static int u32_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static void sort_u32(uint32_t *a, size_t n)
{
    if (n > 32) { /* a long description: insertion sort would be quadratic */
        qsort(a, n, sizeof(*a), u32_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        uint32_t x = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > x; j--)
            a[j] = a[j - 1];
        a[j] = x;
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
        !GROW_COL(status_at) || !GROW_COL(avail_at) || !GROW_COL(fwd_at) || !GROW_COL(off_at))
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
    as_arena *a = as_arena_create();
    as_mem m = as_arena_mem(a);
    b->ncur = 0;
    const char *cat_label = r->category ? as_category_label(r->category) : NULL;
    bool ok = add_text(b, &m, r->name, true) && add_text(b, &m, r->brand, false) &&
              add_text(b, &m, r->description, false) &&
              add_text(b, &m, cat_label ? cat_label : r->category, true) &&
              add_text(b, &m, r->part_type ? part_type_label(r->part_type) : NULL, true) &&
              add_specs(b, &m, r->specs);
    as_arena_destroy(a);
    if (!ok) return false;
    /* distinct words, ascending (renumbered at finish) */
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
    c->guarantee[d] = r->guarantee ? 1 : 0;
    c->return_rate[d] = r->rank.return_rate;
    c->sku_at[d] = add_str(b, r->sku);
    c->name_at[d] = add_str(b, r->name ? r->name : "");
    c->brand_at[d] = add_str(b, r->brand ? r->brand : "");
    c->img_at[d] = add_str(b, r->image_urls);
    c->note_at[d] = add_str(b, r->verif_note);
    c->status_at[d] = add_str(b, r->verif_status ? r->verif_status : "pending");
    c->avail_at[d] = add_str(b, r->availability ? r->availability : "out_of_stock");
    if (b->failed || !intern(&c->cats, &c->ncats, r->category, &c->cat[d]) ||
        !intern(&c->pts, &c->npts, r->part_type, &c->pt[d]))
        return false;
    c->off_at[d] = c->off_at[d + 1] = (uint32_t)c->noffers; /* offers come after the rows */
    c->n++;
    return true;
}

static int on_row(void *baton, const as_index_row *row)
{
    sx_builder *b = baton;
    if (!b->failed && !add_row(b, row)) b->failed = true;
    return b->failed ? -1 : 0;
}

/* The delivery component times ten, as the formula rounds it (one decimal). */
static uint16_t delivery10(int64_t days)
{
    return (uint16_t)lround(as_round(as_delivery_component((int)days), 1) * 10);
}

static bool add_offer(sx_builder *b, const as_index_offer *o)
{
    sx_catalog *c = b->c;
    size_t d = b->last_doc;
    while (d < c->n && c->ids[d] < o->product_id)
        c->off_at[++d] = (uint32_t)c->noffers;
    if (d >= c->n || c->ids[d] != o->product_id) return true; /* no such product: skip */
    b->last_doc = d;
    uint32_t mi = 0;
    while (mi < c->nmerchants && strcmp(c->strs + c->merchants[mi].id_at, o->merchant_id) != 0)
        mi++;
    if (mi == c->nmerchants) return false; /* an offer of an unknown merchant */
    if (!grow((void **)&c->offers, &b->offcap, c->noffers + 1, sizeof(sx_offer)) ||
        !grow((void **)&b->in_stock, &b->instockcap, c->noffers + 1, 1))
        return false;
    uint32_t label = c->noffers && c->offers[c->noffers - 1].label_at != AS_NO_STR &&
                             o->price_label &&
                             strcmp(c->strs + c->offers[c->noffers - 1].label_at,
                                    o->price_label) == 0
                         ? c->offers[c->noffers - 1].label_at
                         : add_str(b, o->price_label);
    sx_offer x = {o->price_cents,     o->retail_price_cents,     add_str(b, o->id), label,
                  (int32_t)o->delivery_days, (uint16_t)mi, delivery10(o->delivery_days)};
    if (b->failed) return false;
    b->in_stock[c->noffers] = o->in_stock ? 1 : 0;
    c->offers[c->noffers++] = x;
    c->off_at[d + 1] = (uint32_t)c->noffers;
    return true;
}

static int on_offer(void *baton, const as_index_offer *offer)
{
    sx_builder *b = baton;
    if (!b->failed && !add_offer(b, offer)) b->failed = true;
    return b->failed ? -1 : 0;
}

static uint32_t doc_of(const sx_catalog *c, int64_t id)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n && c->ids[lo] == id ? (uint32_t)lo : UINT32_MAX;
}

static int on_compat(void *baton, const as_index_compat *x)
{
    sx_builder *b = baton;
    if (b->failed) return -1;
    uint32_t d = doc_of(b->c, x->product_id);
    if (d == UINT32_MAX) return 0;
    if (!grow((void **)&b->cr, &b->ccap, b->ncr + 1, sizeof(bcompat))) return b->failed = true, -1;
    uint32_t why = AS_NO_STR;
    if (!x->fits) {
        as_arena *a = as_arena_create();
        as_mem m = as_arena_mem(a);
        as_compat cc = {NULL, NULL, "does_not_fit", x->evidence ? x->evidence : "[]", NULL};
        why = add_str(b, as_fit_summary(&m, &cc));
        as_arena_destroy(a);
    }
    b->cr[b->ncr++] = (bcompat){x->device_id, d, why, x->fits ? 1 : 0};
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
        x->m = (as_merchant){.on_time_rate = ms[i].on_time_rate,
                             .accuracy_rate = ms[i].accuracy_rate};
        x->id_at = add_str(b, ms[i].id ? ms[i].id : "");
        x->name_at = add_str(b, ms[i].name ? ms[i].name : "");
        x->country_at = add_str(b, ms[i].country ? ms[i].country : "");
        x->city_at = add_str(b, ms[i].city ? ms[i].city : "");
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
    if (!b->c || !b->slots) {
        free(b->c);
        free(b->slots);
        free(b);
        return NULL;
    }
    atomic_init(&b->c->refs, 1);
    return b;
}

bool sx_catalog_devices(sx_catalog *c)
{
    if (!(c->dev_arena = as_arena_create())) return false;
    as_mem m = as_arena_mem(c->dev_arena);
    c->qdevs = as_query_devices_make(&m, c->devs, c->ndevs);
    return true;
}

static void catalog_free(sx_catalog *c)
{
    if (!c) return;
    if (c->dev_arena) as_arena_destroy(c->dev_arena);
    if (c->map) { /* only the parts with pointers are private */
        free(c->merchants);
        free(c->devs);
        free(c->cats);
        free(c->pts);
        munmap(c->map, c->map_bytes);
        free(c);
        return;
    }
    void *arrays[] = {c->ids,      c->sku_rk,      c->cat,        c->pt,       c->hidden,
                      c->avail,    c->guarantee,   c->return_rate, c->sku_at,  c->name_at,
                      c->brand_at, c->img_at,      c->note_at,    c->status_at, c->avail_at,
                      c->off_at,   c->offers,      c->merchants,  c->tok_at,   c->tok_text,
                      c->stem_of,  c->stem_at,     c->stem_text,  c->stem_toks_at,
                      c->stem_toks, c->fwd_at,     c->fwd,        c->post_at,  c->post,
                      c->dev_ids,  c->dev_at,      c->compat,     c->strs,     c->devs,
                      c->cat_at,   c->cat_docs,    c->pt_at,      c->pt_docs};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
        free(arrays[i]);
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
    for (uint32_t i = 0; i < b->ntok; i++)
        free(b->tok[i]);
    free(b->tok);
    free(b->slots);
    free(b->cur);
    free(b->in_stock);
    free(b->cr);
    free(b->dev_str);
    free(b->dev_id);
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

/* The snapshot's stock state (struct as_search_snap), in one private
 * mapping: given back to the system whole when the snapshot goes. */
static bool state_map(as_search_snap *s, sx_catalog *c)
{
    size_t stock = (c->noffers + 7) & ~(size_t)7;
    s->state_bytes = stock + c->n * (sizeof(uint32_t) + 1) + 1;
    void *p = mmap(NULL, s->state_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        s->state = NULL;
        return false;
    }
    s->state = p;
    s->in_stock = p;
    s->def_off = (uint32_t *)((char *)p + stock);
    s->def_score = (uint8_t *)(s->def_off + c->n);
    s->c = c;
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

static as_search_snap *finish(sx_builder *b, const as_search_version *v)
{
    sx_catalog *c = b->c;
    size_t n = c->n;
    uint32_t nt = b->ntok;
    uint32_t *order = NULL, *new_id = NULL, *stem_order = NULL;
    char **stems = NULL;
    as_search_snap *s = NULL;
    as_arena *a = NULL;
    if (b->failed || !reserve_rows(b, n)) goto fail;
    for (size_t d = b->last_doc + 1; d <= n; d++) /* products after the last offer's */
        c->off_at[d] = (uint32_t)c->noffers;
    if (n == 0) c->off_at[0] = 0;
    c->fwd_at[n] = (uint32_t)b->nfwd;
    c->bytes = sizeof(*c) + n * (8 + 4 + 2 + 2 + 3 + 8 + 7 * 4 + 4 + 4) +
               c->noffers * sizeof(sx_offer) + b->nfwd * 4 * 2 + c->nstrs;

    /* the vocabulary in byte order, and each word's stem */
    order = malloc(((size_t)nt + 1) * sizeof(uint32_t));
    new_id = malloc(((size_t)nt + 1) * sizeof(uint32_t));
    stems = calloc((size_t)nt + 1, sizeof(char *));
    stem_order = malloc(((size_t)nt + 1) * sizeof(uint32_t));
    c->stem_of = malloc(((size_t)nt + 1) * sizeof(uint32_t));
    if (!order || !new_id || !stems || !stem_order || !c->stem_of) goto fail;
    for (uint32_t i = 0; i < nt; i++)
        order[i] = i;
    sort_ctx(order, nt, by_str, b->tok);
    for (uint32_t i = 0; i < nt; i++)
        new_id[order[i]] = i;
    if (!str_table(b->tok, order, nt, &c->tok_at, &c->tok_text, &c->bytes)) goto fail;
    c->ntok = nt;

    a = as_arena_create();
    as_mem m = as_arena_mem(a);
    for (uint32_t i = 0; i < nt; i++) { /* stems[i]: of the word with new id i */
        stems[i] = (char *)as_search_stem(&m, sx_tok(c, i));
        stem_order[i] = i;
    }
    sort_ctx(stem_order, nt, by_str, stems);
    /* distinct stems, each with its words */
    uint32_t ns = 0;
    uint32_t *distinct = order; /* reused: the first word of each distinct stem */
    for (uint32_t k = 0; k < nt; k++) {
        uint32_t w = stem_order[k];
        if (!ns || strcmp(stems[distinct[ns - 1]], stems[w]) != 0) distinct[ns++] = w;
        c->stem_of[w] = ns - 1;
    }
    if (!str_table(stems, distinct, ns, &c->stem_at, &c->stem_text, &c->bytes)) goto fail;
    c->nstems = ns;
    c->stem_toks_at = calloc((size_t)ns + 1, sizeof(uint32_t));
    c->stem_toks = malloc(((size_t)nt + 1) * sizeof(uint32_t));
    if (!c->stem_toks_at || !c->stem_toks) goto fail;
    for (uint32_t k = 0; k < nt; k++) /* stem_order groups the words of each stem */
        c->stem_toks_at[c->stem_of[stem_order[k]] + 1]++;
    for (uint32_t i = 0; i < ns; i++)
        c->stem_toks_at[i + 1] += c->stem_toks_at[i];
    for (uint32_t k = 0; k < nt; k++)
        c->stem_toks[k] = stem_order[k];
    c->bytes += ((size_t)nt * 2 + ns + 1) * sizeof(uint32_t);
    as_arena_destroy(a);
    a = NULL;

    /* each product's words renumbered and sorted; postings by counting */
    c->post_at = calloc((size_t)nt + 1, sizeof(uint32_t));
    c->post = malloc((b->nfwd ? b->nfwd : 1) * sizeof(uint32_t));
    if (!c->post_at || !c->post) goto fail;
    for (size_t d = 0; d < n; d++) {
        uint32_t *f = c->fwd + c->fwd_at[d];
        size_t k = c->fwd_at[d + 1] - c->fwd_at[d];
        for (size_t i = 0; i < k; i++) {
            f[i] = new_id[f[i]];
            c->post_at[f[i] + 1]++;
        }
        sort_u32(f, k);
    }
    for (uint32_t i = 0; i < nt; i++)
        c->post_at[i + 1] += c->post_at[i];
    uint32_t *fill = new_id; /* reused: the next free slot of each word */
    memcpy(fill, c->post_at, (size_t)nt * sizeof(uint32_t));
    for (size_t d = 0; d < n; d++)
        for (uint32_t i = c->fwd_at[d]; i < c->fwd_at[d + 1]; i++)
            c->post[fill[c->fwd[i]]++] = (uint32_t)d;

    /* sku order */
    c->sku_rk = malloc((n ? n : 1) * sizeof(uint32_t));
    uint32_t *by = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!c->sku_rk || !by) {
        free(by);
        goto fail;
    }
    for (size_t d = 0; d < n; d++)
        by[d] = (uint32_t)d;
    sku_ctx sc = {c->strs, c->sku_at};
    sort_ctx(by, n, by_sku, &sc);
    for (size_t i = 0; i < n; i++)
        c->sku_rk[by[i]] = (uint32_t)i;
    free(by);

    /* the products of each category and part type */
    if (!group_docs(c->cat, n, c->ncats, &c->cat_at, &c->cat_docs) ||
        !group_docs(c->pt, n, c->npts, &c->pt_at, &c->pt_docs))
        goto fail;
    c->bytes += (2 * n + c->ncats + c->npts + 2) * sizeof(uint32_t);

    /* compat rows by device, then product */
    if (b->ncr) qsort(b->cr, b->ncr, sizeof(bcompat), compat_cmp);
    c->compat = calloc(b->ncr ? b->ncr : 1, sizeof(sx_compat)); /* padding too: written to the file */
    c->dev_ids = malloc((b->ncr ? b->ncr : 1) * sizeof(int64_t));
    c->dev_at = malloc((b->ncr + 1) * sizeof(uint32_t));
    if (!c->compat || !c->dev_ids || !c->dev_at) goto fail;
    for (size_t i = 0; i < b->ncr; i++) {
        if (!c->ndev || c->dev_ids[c->ndev - 1] != b->cr[i].dev) {
            c->dev_ids[c->ndev] = b->cr[i].dev;
            c->dev_at[c->ndev++] = (uint32_t)i;
        }
        c->compat[i] = (sx_compat){b->cr[i].doc, b->cr[i].why_at, b->cr[i].fits};
    }
    c->dev_at[c->ndev] = (uint32_t)b->ncr;
    c->ncompat = b->ncr;
    c->devs = calloc(b->ndev ? b->ndev : 1, sizeof(as_device));
    if (!c->devs) goto fail;
    for (size_t i = 0; i < b->ndev; i++) {
        const uint32_t *f = b->dev_str + i * 5;
        c->devs[i] = (as_device){b->dev_id[i],       c->strs + f[0], c->strs + f[1],
                                 c->strs + f[2],     c->strs + f[3], c->strs + f[4]};
    }
    c->ndevs = b->ndev;
    c->bytes += b->ncr * (sizeof(sx_compat) + 12);
    if (!sx_catalog_devices(c)) goto fail;

    /* the snapshot: the stock state in its own mapping (copied on each update) */
    s = calloc(1, sizeof(*s));
    if (!s || !state_map(s, c)) goto fail;
    if (c->noffers) memcpy(s->in_stock, b->in_stock, c->noffers);
    for (uint32_t d = 0; d < n; d++)
        sx_rank_default(s, d);
    atomic_init(&s->refs, 1);
    s->c = c;
    s->v = *v;
    b->c = NULL;
    free(order);
    free(new_id);
    free(stems);
    free(stem_order);
    builder_free(b);
    return s;
fail:
    if (a) as_arena_destroy(a);
    free(order);
    free(new_id);
    free(stems);
    free(stem_order);
    free(s);
    builder_free(b);
    return NULL;
}

/* ---- snapshots ---- */

static void state_unmap(as_search_snap *s)
{
    if (s->state) munmap(s->state, s->state_bytes);
    s->state = NULL;
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

size_t as_search_snap_products(const as_search_snap *s)
{
    return s->c->n;
}

size_t as_search_snap_bytes(const as_search_snap *s)
{
    return s->c->bytes + s->state_bytes + sizeof(*s);
}

/* Every product from the store; read again when the catalogue changed while
 * it was being read. */
static as_search_snap *build(const as_store *st, as_search_version *v)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        sx_builder *b = builder_new();
        if (!b) return NULL;
        as_arena *a = as_arena_create();
        as_mem am = as_arena_mem(a);
        as_merchant *ms;
        size_t nm;
        as_device *ds;
        size_t nd;
        int rc = st->merchants(st->h, &am, &ms, &nm);
        if (rc == AS_OK && !set_merchants(b, ms, nm)) rc = AS_EDB;
        if (rc == AS_OK) rc = st->devices(st->h, &am, &ds, &nd);
        if (rc == AS_OK && !set_devices(b, ds, nd)) rc = AS_EDB;
        as_arena_destroy(a);
        if (rc == AS_OK) rc = st->index_rows(st->h, on_row, b);
        if (rc == AS_OK) rc = st->index_offers(st->h, on_offer, b);
        if (rc == AS_OK && st->index_compat) rc = st->index_compat(st->h, on_compat, b);
        if (rc == AS_OK && b->failed) rc = AS_EDB;
        as_search_version after;
        if (rc == AS_OK && st->search_version(st->h, &after) != AS_OK) rc = AS_EDB;
        if (rc != AS_OK) {
            builder_free(b);
            return NULL;
        }
        if (after.catalogue == v->catalogue) return finish(b, v);
        builder_free(b);
        *v = after;
    }
    return NULL;
}

as_search_snap *as_search_snap_build(const as_store *st)
{
    as_search_version v;
    if (!st->search_version || !st->index_rows || !st->index_offers ||
        st->search_version(st->h, &v) != AS_OK)
        return NULL;
    return build(st, &v);
}

/* ---- updates: which offers are in stock ---- */

static int apply_change(void *baton, int64_t id, const as_rank_row *r)
{
    as_search_snap *nx = baton;
    const sx_catalog *c = nx->c;
    uint32_t d = doc_of(c, id);
    if (d == UINT32_MAX) return 0; /* a product the index does not know comes with a new catalogue */
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
    return 0;
}

static as_search_snap *update(as_search_snap *s, const as_store *st, const as_search_version *v)
{
    as_search_snap *nx = calloc(1, sizeof(*nx));
    if (!nx || !state_map(nx, s->c)) {
        free(nx);
        return NULL;
    }
    memcpy(nx->state, s->state, s->state_bytes);
    if (st->rank_changes(st->h, s->v.rank, apply_change, nx) != AS_OK) {
        state_unmap(nx);
        free(nx);
        return NULL;
    }
    atomic_init(&nx->refs, 1);
    atomic_fetch_add(&s->c->refs, 1);
    nx->v = *v;
    return nx;
}

/* ---- the process's current snapshot ---- */

struct as_search_index {
    mtx_t lock;  /* guards cur: held only to take or swap the pointer */
    mtx_t build; /* one thread builds or updates at a time */
    as_search_snap *cur;
    char *prefix; /* the index files' path without "-<version>.idx"; NULL: in memory */
    as_search_log_fn log;
    void *log_baton;
};

as_search_index *as_search_index_create(const char *file_prefix, as_search_log_fn log,
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
    if (mtx_init(&si->lock, mtx_plain) != thrd_success) {
        free(si->prefix);
        free(si);
        return NULL;
    }
    if (mtx_init(&si->build, mtx_plain) != thrd_success) {
        mtx_destroy(&si->lock);
        free(si->prefix);
        free(si);
        return NULL;
    }
    return si;
}

void as_search_index_destroy(as_search_index *si)
{
    if (!si) return;
    as_search_snap_release(si->cur);
    mtx_destroy(&si->lock);
    mtx_destroy(&si->build);
    free(si->prefix);
    free(si);
}

static void say(const as_search_index *si, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(const as_search_index *si, int level, const char *fmt, ...)
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
    if (!s || !state_map(s, c)) {
        free(s);
        catalog_free(c);
        return NULL;
    }
    sx_file_state(c, state, s);
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

static void mapped(const as_search_index *si, const as_search_snap *s)
{
    char *path = file_path(si, s->v.catalogue);
    say(si, AS_LOG_INFO, "search index %zu products, %zu bytes, mapped (%s)", s->c->n,
        s->c->map_bytes, path ? path : "?");
    free(path);
}

/* A snapshot of a catalogue version this process does not have: the index
 * file's, or one built from the store and written as the file, one process at
 * a time (flock). Returns NULL with *busy set when another process is building
 * and this one has a snapshot to serve meanwhile (have). */
static as_search_snap *replace(as_search_index *si, const as_store *st, as_search_version *v,
                               bool have, bool *busy)
{
    *busy = false;
    if (!si->prefix) return build(st, v);
    as_search_snap *s = map_file(si, v->catalogue);
    if (s) {
        mapped(si, s);
        return s;
    }
    char *lock = malloc(strlen(si->prefix) + 8);
    if (!lock) return NULL;
    sprintf(lock, "%s.lock", si->prefix);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    free(lock);
    if (fd >= 0 && flock(fd, have ? LOCK_EX | LOCK_NB : LOCK_EX) != 0) {
        close(fd);
        *busy = have;
        return NULL;
    }
    s = map_file(si, v->catalogue); /* another process wrote it meanwhile */
    if (!s) {
        double t0 = now_ms();
        as_search_snap *b = build(st, v); /* v: the version it was built at */
        char *path = b ? file_path(si, b->v.catalogue) : NULL;
        if (path && sx_file_write(b, path)) s = map_file(si, b->v.catalogue);
        if (s) {
            say(si, AS_LOG_INFO, "search index %zu products, %zu bytes, built in %.0f ms (%s)",
                s->c->n, s->c->map_bytes, now_ms() - t0, path);
            remove_others(si, b->v.catalogue);
            as_search_snap_release(b);
        } else if (b) {
            say(si, AS_LOG_WARN,
                "search index %zu products built in %.0f ms, but %s could not be written "
                "or mapped: this process keeps its own copy",
                b->c->n, now_ms() - t0, path ? path : "its file");
            s = b;
        }
        free(path);
    } else {
        mapped(si, s);
    }
    if (fd >= 0) close(fd); /* and the lock with it */
    return s;
}

as_search_snap *as_search_index_get(as_search_index *si, const as_store *st)
{
    as_search_version v;
    if (st->search_version(st->h, &v) != AS_OK) return NULL;
    as_search_snap *s = current(si);
    if (fresh(s, &v)) return s;
    if (s && s->v.catalogue != v.catalogue) {
        /* a new catalogue: the old one serves while one thread gets the new */
        if (mtx_trylock(&si->build) != thrd_success) return s;
    } else {
        mtx_lock(&si->build);
    }
    as_search_snap_release(s);
    s = current(si); /* another thread may have refreshed it meanwhile */
    if (!fresh(s, &v)) {
        as_search_snap *nx = NULL;
        bool busy = false;
        if (s && s->v.catalogue == v.catalogue)
            /* Stock read after v was read is at least as new as v: the
             * snapshot says v, and the next update reads those rows again
             * if need be. */
            nx = update(s, st, &v);
        else
            nx = replace(si, st, &v, s != NULL, &busy);
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
