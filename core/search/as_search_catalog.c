/* What every stage reads of a catalogue besides its columns, built or
 * mapped alike: the process's own part of it (sx_catalog_private: its
 * bitsets, price steps, devices' words and locks), the scratch memory its
 * searches take and give back, and a product's summary fields read from its
 * columns. Below the index (as_search_index.c), the file (as_search_file.c)
 * and the page (as_search_page.c), which all call it; it calls none of them. */
#include <stdlib.h>

#include "as_search_internal.h"

static int cents_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* c's price steps (sx_catalog.price_step): the quantiles of up to 4,096
 * products' cheapest offers (in stock or not), spread over the catalogue,
 * and the dearest of all; the same in every process. */
static void price_steps(sx_catalog *c)
{
    int64_t sample[4096], dearest = 0;
    size_t ns = 0, with = 0, every = c->n / 4096 + 1;
    for (size_t d = 0; d < c->n; d++) {
        int64_t p = 0;
        for (uint32_t o = c->off_at[d]; o < c->off_at[d + 1]; o++)
            if (!p || c->offers[o].price_cents < p) p = c->offers[o].price_cents;
        if (!p) continue;
        if (p > dearest) dearest = p;
        if (with++ % every == 0 && ns < 4096) sample[ns++] = p;
    }
    qsort(sample, ns, sizeof(*sample), cents_cmp);
    size_t np = 0;
    for (size_t j = 1; j < SX_PRICE_STEPS && ns; j++) {
        int64_t p = sample[j * ns / SX_PRICE_STEPS];
        if (!np || p > c->price_step[np - 1]) c->price_step[np++] = p;
    }
    if (dearest && (!np || dearest > c->price_step[np - 1])) c->price_step[np++] = dearest;
    c->nprice_steps = np;
    size_t nf = 0;
    for (size_t j = 1; j <= SX_FINE_STEPS && ns; j++) {
        int64_t p = sample[j * ns / (SX_FINE_STEPS + 1)];
        if (!nf || p > c->fine_step[nf - 1]) c->fine_step[nf++] = p;
    }
    c->nfine_steps = nf;
}

bool sx_catalog_private(sx_catalog *c)
{
    atomic_init(&c->live_seen, INT64_MIN);
    if (mtx_init(&c->live_lock, mtx_plain) != thrd_success) return false;
    c->live_lock_made = true;
    if (!(c->live_bits = calloc(((c->n + 63) / 64) ? (c->n + 63) / 64 : 1, sizeof(uint64_t))))
        return false;
    if (mtx_init(&c->tok_lock, mtx_plain) != thrd_success) return false;
    c->tok_lock_made = true;
    if (!(c->tok_slots = calloc(SX_TOK_SLOTS, sizeof(*c->tok_slots)))) return false;
    if (mtx_init(&c->scratch_lock, mtx_plain) != thrd_success) return false;
    c->scratch_lock_made = true;
    if (!(c->dev_arena = as_arena_create())) return false;
    as_mem m = as_arena_mem(c->dev_arena);
    c->qdevs = as_query_devices_make(&m, c->devs, c->ndevs);
    size_t w = (c->n + 63) / 64, sets = 1 + c->ncats + c->npts + c->nmerchants;
    c->words = w;
    if (!(c->bits = calloc((w ? w : 1) * sets, sizeof(uint64_t)))) return false;
    uint64_t *hidden = c->bits, *cat = hidden + w, *pt = cat + c->ncats * w,
             *mer = pt + c->npts * w;
    for (size_t d = 0; d < c->n; d++) {
        uint64_t bit = 1ull << (d & 63);
        if (c->hidden[d]) hidden[d >> 6] |= bit;
        cat[c->cat[d] * w + (d >> 6)] |= bit;
        pt[c->pt[d] * w + (d >> 6)] |= bit;
        for (uint32_t o = c->off_at[d]; o < c->off_at[d + 1]; o++)
            mer[c->offers[o].merchant * w + (d >> 6)] |= bit;
    }
    c->hidden_bits = hidden;
    c->cat_bits = cat;
    c->pt_bits = pt;
    c->merchant_bits = mer;
    price_steps(c);
    return true;
}

as_scratch *sx_scratch_take(const sx_catalog *cat)
{
    sx_catalog *c = (sx_catalog *)cat; /* its process's own part: the stack */
    as_scratch *s = NULL;
    if (c->scratch_lock_made) {
        mtx_lock(&c->scratch_lock);
        if (c->n_scratch) s = c->scratch[--c->n_scratch];
        mtx_unlock(&c->scratch_lock);
    }
    return s ? s : as_scratch_create();
}

void sx_scratch_give(const sx_catalog *cat, as_scratch *s)
{
    sx_catalog *c = (sx_catalog *)cat;
    size_t kept = as_scratch_reset(s, SX_SCRATCH_BYTES);
    if (c->scratch_lock_made) {
        mtx_lock(&c->scratch_lock);
        size_t held = kept;
        for (size_t i = 0; i < c->n_scratch; i++)
            held += c->scratch_each[i];
        if (c->n_scratch < SX_SCRATCH_KEEP && held <= SX_SCRATCH_BYTES) {
            c->scratch_each[c->n_scratch] = kept;
            c->scratch[c->n_scratch++] = s;
            s = NULL;
        }
        mtx_unlock(&c->scratch_lock);
    }
    as_scratch_destroy(s);
}

void sx_summary_fields(const sx_catalog *c, uint32_t d, as_product *p)
{
    p->id = c->ids[d];
    p->sku = sx_str(c, c->sku_at[d]);
    p->name = sx_str(c, c->name_at[d]);
    p->brand = sx_str(c, c->brand_at[d]);
    p->category = c->cats[c->cat[d]];
    p->part_type = c->pts[c->pt[d]];
    p->image_urls = sx_str(c, c->img_at[d]);
    /* in stock: the literal, so that readers comparing it (as_rank) do not
     * wait for the index's string */
    p->availability = c->avail[d] ? "in_stock" : sx_str(c, c->avail_at[d]);
    p->verif_status = as_verif_parse(sx_str(c, c->status_at[d]));
    p->verif_note = sx_str(c, c->note_at[d]);
    p->return_rate = c->return_rate[d];
    p->guarantee = c->guarantee[d] != 0;
}
