/* A device's compatible parts from a snapshot (GET /devices/{slug}/compatible):
 * one page of as_compat_page (core/store/as_store.h) from the compat rows the index
 * keeps by device and each product's best offer in the snapshot, without the
 * database. The page and the first left out are each kept in a heap of their
 * size as the device's rows go by: no list of every part is sorted or built.
 * The order and the reasons are the store's (sql/as_db_search.c) and the
 * handler's (compat_exclusion): part type, buyable first, best score, sku. */
#include <stdlib.h>
#include <string.h>

#include "as_search_internal.h"

/* A part as the heaps order it: its place in the list, and its id. */
typedef struct compat_key {
    const char *pt;
    int64_t id;
    uint32_t doc, sku_rk;
    uint8_t unbuyable, score;
} compat_key;

static int by_place(const compat_key *x, const compat_key *y)
{
    int c = strcmp(x->pt, y->pt);
    if (c) return c;
    if (x->unbuyable != y->unbuyable) return x->unbuyable < y->unbuyable ? -1 : 1;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->sku_rk < y->sku_rk ? -1 : x->sku_rk > y->sku_rk;
}

static int by_id(const compat_key *x, const compat_key *y)
{
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The k least keys seen by cmp: a max-heap, sorted by least_sort. */
typedef struct least_k {
    compat_key *a;
    size_t n, k;
    int (*cmp)(const compat_key *, const compat_key *);
} least_k;

static void least_sift(least_k *h, size_t i, size_t n)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && h->cmp(&h->a[l], &h->a[m]) > 0) m = l;
        if (l + 1 < n && h->cmp(&h->a[l + 1], &h->a[m]) > 0) m = l + 1;
        if (m == i) return;
        compat_key t = h->a[i];
        h->a[i] = h->a[m];
        h->a[m] = t;
        i = m;
    }
}

static void least_offer(least_k *h, const compat_key *x)
{
    if (h->n < h->k) {
        size_t i = h->n++;
        h->a[i] = *x;
        for (; i > 0 && h->cmp(&h->a[(i - 1) / 2], &h->a[i]) < 0; i = (i - 1) / 2) {
            compat_key t = h->a[i];
            h->a[i] = h->a[(i - 1) / 2];
            h->a[(i - 1) / 2] = t;
        }
    } else if (h->k && h->cmp(x, &h->a[0]) < 0) {
        h->a[0] = *x;
        least_sift(h, 0, h->n);
    }
}

/* The heap in ascending order (heapsort in place). */
static void least_sort(least_k *h)
{
    for (size_t e = h->n; e > 1; e--) {
        compat_key t = h->a[0];
        h->a[0] = h->a[e - 1];
        h->a[e - 1] = t;
        least_sift(h, 0, e - 1);
    }
}

/* Why row's product is left out of dev's list (as sx_filter_exclusion says
 * it under verified_only), or NULL when it is listed. */
static const char *left_out(const as_search_snap *s, as_mem *m, const as_device *dev,
                            const sx_compat *row)
{
    const sx_catalog *c = s->c;
    uint32_t d = row->doc;
    if (c->hidden[d]) return sx_contradiction(m, sx_str(c, c->note_at[d]));
    if (!row->fits)
        return as_printf(m, "Does not fit %s: %s", dev->name,
                         row->why_at != AS_NO_STR ? c->strs + row->why_at : "no evidence recorded");
    return NULL;
}

/* A listed part of the page: the search page's product, with what the
 * handler orders and checks it by. */
static void page_part(const as_search_snap *s, as_mem *m, const as_device *dev, uint32_t d,
                      as_product *p)
{
    const sx_catalog *c = s->c;
    sx_page_product(s, m, d, dev, true, p);
    p->part_type = c->pts[c->pt[d]];
    p->verif_status = as_verif_parse(sx_str(c, c->status_at[d]));
}

void as_search_compatible(const as_search_snap *s, as_mem *m, const as_device *dev,
                          const char *part_type, int64_t limit, int64_t offset, size_t max_excluded,
                          as_compat_page *out)
{
    const sx_catalog *c = s->c;
    memset(out, 0, sizeof(*out));
    const sx_compat *rows;
    size_t nrows;
    sx_device_rows(c, dev->id, &rows, &nrows);
    size_t want = (size_t)(offset + limit);
    least_k page = {as_alloc(m, (want + 1) * sizeof(compat_key)), 0, want, by_place};
    least_k out_k = {as_alloc(m, (max_excluded + 1) * sizeof(compat_key)), 0, max_excluded, by_id};
    for (size_t i = 0; i < nrows; i++) {
        uint32_t d = rows[i].doc;
        const char *pt = c->pts[c->pt[d]];
        if (part_type && strcmp(pt, part_type) != 0) continue;
        bool unbuyable = s->prod[d].def_off == UINT32_MAX;
        compat_key k = {pt, c->ids[d], d, c->sku_rk[d], unbuyable, unbuyable ? 0 : s->def_score[d]};
        if (c->hidden[d] || !rows[i].fits) {
            out->excluded_count++;
            least_offer(&out_k, &k);
        } else {
            out->count++;
            least_offer(&page, &k);
        }
    }
    least_sort(&page);
    out->parts = as_alloc(m, ((size_t)limit + 1) * sizeof(as_product));
    for (size_t i = (size_t)offset; i < page.n; i++)
        page_part(s, m, dev, page.a[i].doc, &out->parts[out->n++]);
    least_sort(&out_k);
    out->excluded = as_alloc(m, (out_k.n + 1) * sizeof(as_product));
    out->why = as_alloc(m, (out_k.n + 1) * sizeof(char *));
    for (size_t i = 0; i < out_k.n; i++) {
        uint32_t d = out_k.a[i].doc;
        sx_summary_fields(c, d, &out->excluded[i]);
        out->why[i] = left_out(s, m, dev, sx_compat_row(rows, nrows, d));
    }
    out->n_excluded = out_k.n;
}
