/* Product views from the index (docs/search.md, "Product views"): the parts of
 * a view that only a catalogue load changes are encoded once, when the index
 * is built (as_search_index.c, on_view and on_compat), and kept in it; a view
 * finds its product by sku, takes those parts, and builds only what is live:
 * the offers (their stock read from the store) and the questions. */
#include <string.h>

#include "as_search_internal.h"

/* The product with that sku, UINT32_MAX when none: a binary search of the
 * products in sku order. */
static uint32_t doc_of_sku(const sx_catalog *c, const char *sku)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(c->strs + c->sku_at[c->sku_docs[mid]], sku);
        if (r == 0) return c->sku_docs[mid];
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return UINT32_MAX;
}

/* Product doc's compat row for device id, NULL when it has none. */
static const sx_compat *compat_row(const sx_catalog *c, uint32_t doc, int64_t device)
{
    const sx_compat *rows;
    size_t n;
    return sx_device_rows(c, device, &rows, &n) ? sx_compat_row(rows, n, doc) : NULL;
}

bool as_search_view_find(const as_search_snap *s, as_mem *m, const char *sku,
                         const as_device *device, as_search_view *out)
{
    const sx_catalog *c = s->c;
    memset(out, 0, sizeof(*out));
    uint32_t d = c->sku_docs ? doc_of_sku(c, sku) : UINT32_MAX;
    if (d == UINT32_MAX) return false;
    size_t r = sx_id_rk(c, d); /* the views' parts are by id */
    if (c->perf_at[r] == c->view_at[r]) return false;
    as_view_kept *k = &out->kept;
    k->head = c->vtext + c->view_at[r];
    k->head_len = c->perf_at[r] - c->view_at[r];
    k->perf = c->vtext + c->perf_at[r];
    k->perf_len = c->view_at[r + 1] - c->perf_at[r];

    as_product *p = &out->p;
    p->id = c->ids[d];
    p->sku = sx_str(c, c->sku_at[d]);
    p->name = sx_str(c, c->name_at[d]);
    p->availability = sx_str(c, c->avail_at[d]);
    p->guarantee = c->guarantee[d] != 0;
    p->n_offers = c->off_at[d + 1] - c->off_at[d];
    p->offers = as_alloc(m, (p->n_offers + 1) * sizeof(as_offer));
    for (size_t i = 0; i < p->n_offers; i++) {
        const sx_offer *o = &c->offers[c->off_at[d] + i];
        const sx_merchant *x = &c->merchants[o->merchant];
        p->offers[i] = (as_offer){.id = sx_str(c, o->id_at),
                                  .merchant = {sx_str(c, x->id_at), sx_str(c, x->name_at),
                                               sx_str(c, x->country_at), sx_str(c, x->city_at),
                                               x->m.on_time_rate, x->m.accuracy_rate},
                                  .price_cents = o->price_cents,
                                  .retail_price_cents = o->retail_price_cents,
                                  .price_label = sx_str(c, o->label_at),
                                  .delivery_days = o->days};
    }
    const sx_compat *row = device ? compat_row(c, d, device->id) : NULL;
    if (row) {
        size_t at = (size_t)(row - c->compat); /* cv_at is by place in compat */
        if (c->cv_at[2 * at] == c->cv_at[2 * at + 1]) return false; /* not encoded */
        p->compat = as_alloc(m, sizeof(*p->compat));
        p->compat->fit_status = row->fits ? AS_FIT_FITS : AS_FIT_DOES_NOT_FIT;
        k->compat = as_view_compat_with(m, device->slug, device->name, c->vtext + c->cv_at[2 * at],
                                        c->cv_at[2 * at + 1] - c->cv_at[2 * at], &k->compat_len);
        if (!k->compat) return false;
    }
    return true;
}

bool as_search_view_live(as_search_view *v, const as_product_live *live)
{
    as_product *p = &v->p;
    if (live->product_id != p->id || live->n_stock != p->n_offers) return false;
    for (size_t i = 0; i < p->n_offers; i++) {
        as_offer *o = &p->offers[i];
        size_t k = 0;
        while (k < live->n_stock && strcmp(live->stock[k].offer_id, o->id) != 0)
            k++;
        if (k == live->n_stock) return false;
        o->stock = live->stock[k].stock;
    }
    p->questions = live->questions;
    p->n_questions = live->n_questions;
    p->questions_total = live->questions_total;
    return true;
}
