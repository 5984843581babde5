/* The live part of a search page or a product view, from the index when the
 * store says it has not moved (docs/search.md, "The live sequence").
 *
 * An index is built from the store as it was at some live sequence number
 * (sx_catalog.live_base): the offers' stock is what the build read. Every
 * change of an offer's stock and every question raises the store's live
 * sequence in the change's own transaction and gives the product that number
 * (SQLite: triggers on offers and questions). A process reads, once per
 * catalogue, the products changed after live_base and those with a question,
 * then, whenever a request has read a higher number, only the changes above
 * the last it read; each product named gets a bit, never cleared. A product
 * without a bit has the stock the build read and no question: its page offers
 * and its view's live part come from the index, with no read of the store. */
#include <stdlib.h>
#include <string.h>

#include "as_search_internal.h"
#include "as_util.h"

static int mark(void *baton, int64_t product_id)
{
    const sx_catalog *c = baton;
    uint32_t d = sx_doc_of(c, product_id);
    if (d != UINT32_MAX)
        atomic_fetch_or_explicit(&c->live_bits[d >> 6], 1ull << (d & 63), memory_order_relaxed);
    return 0;
}

/* c's bits brought up to live sequence number upto (as a request read it);
 * false when the store cannot tell (the caller reads from the store). */
static bool live_sync(sx_catalog *c, const as_store *st, int64_t upto)
{
    if (!as_store_has_live(st) || !c->live_bits || upto < c->live_base) return false;
    if (atomic_load_explicit(&c->live_seen, memory_order_acquire) >= upto) return true;
    mtx_lock(&c->live_lock);
    int64_t seen = atomic_load_explicit(&c->live_seen, memory_order_relaxed);
    bool ok = true;
    if (seen < upto) {
        bool first = seen == INT64_MIN;
        /* every change up to upto was committed before upto could be read:
         * reading those above `seen` now misses none of them */
        ok = as_store_live_changes(st, first ? c->live_base : seen, first, mark, c) == AS_OK;
        if (ok) atomic_store_explicit(&c->live_seen, upto, memory_order_release);
    }
    mtx_unlock(&c->live_lock);
    return ok;
}

/* Product d has a bit: its stock or questions may differ from the index's. */
static inline bool moved(const sx_catalog *c, size_t d)
{
    return atomic_load_explicit(&c->live_bits[d >> 6], memory_order_relaxed) >> (d & 63) & 1;
}

/* The product of id in c, unmoved since the build up to read (synced), or
 * SIZE_MAX. */
static size_t kept_doc(const sx_catalog *c, int64_t id)
{
    uint32_t d = sx_doc_of(c, id);
    return d != UINT32_MAX && !moved(c, d) ? d : SIZE_MAX;
}

static bool usable(const as_search_snap *s, const as_store *st, const as_search_version *read)
{
    return s && read && as_store_has_live(st) && read->catalogue == s->v.catalogue &&
           live_sync(s->c, st, read->live);
}

int as_search_offers_stock(const as_search_snap *s, const as_store *st,
                           const as_search_version *read, as_mem *m, const int64_t *ids,
                           size_t n, as_offer_stock **out, size_t *nout)
{
    if (!usable(s, st, read)) return as_store_offers_stock(st, m, ids, n, out, nout);
    const sx_catalog *c = s->c;
    size_t total = 0, nread = 0, k = 0;
    size_t *docs = as_alloc(m, (n ? n : 1) * sizeof(*docs));
    int64_t *from_store = as_alloc(m, (n ? n : 1) * sizeof(*from_store));
    for (size_t i = 0; i < n; i++) {
        docs[i] = kept_doc(c, ids[i]);
        if (docs[i] == SIZE_MAX)
            from_store[nread++] = ids[i];
        else
            total += c->off_at[docs[i] + 1] - c->off_at[docs[i]];
    }
    as_offer_stock *more = NULL;
    size_t nmore = 0;
    if (nread && as_store_offers_stock(st, m, from_store, nread, &more, &nmore) != AS_OK)
        return AS_EDB;
    as_offer_stock *all = as_alloc(m, (total + nmore ? total + nmore : 1) * sizeof(*all));
    for (size_t i = 0; i < n; i++) {
        if (docs[i] == SIZE_MAX) continue;
        for (uint32_t o = c->off_at[docs[i]]; o < c->off_at[docs[i] + 1]; o++)
            all[k++] = (as_offer_stock){ids[i], sx_str(c, c->offers[o].id_at), c->stock[o]};
    }
    if (nmore) memcpy(all + k, more, nmore * sizeof(*all));
    *out = all;
    *nout = k + nmore;
    return AS_OK;
}

bool as_search_view_live_kept(const as_search_snap *s, const as_store *st,
                              const as_search_version *read, const as_search_view *v, as_mem *m,
                              as_product_live *out)
{
    if (!usable(s, st, read)) return false;
    const sx_catalog *c = s->c;
    size_t d = kept_doc(c, v->p.id);
    if (d == SIZE_MAX) return false;
    memset(out, 0, sizeof(*out));
    out->version = *read;
    out->product_id = v->p.id;
    out->n_stock = c->off_at[d + 1] - c->off_at[d];
    out->stock = as_alloc(m, (out->n_stock ? out->n_stock : 1) * sizeof(*out->stock));
    for (size_t i = 0; i < out->n_stock; i++) {
        const sx_offer *x = &c->offers[c->off_at[d] + i];
        out->stock[i] = (as_offer_stock){v->p.id, sx_str(c, x->id_at), c->stock[c->off_at[d] + i]};
    }
    return true;
}
