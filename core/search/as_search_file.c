/* The catalogue index as one file that every child maps read-only, so an
 * httpd holds the index once in the page cache however many children it runs
 * (docs/search.md, "The index's life cycle"). The layout is sx_catalog's own
 * arrays, each a section at an 8-byte aligned offset, after a header with the
 * counts; the few parts that hold pointers (merchants, devices, the category
 * and part-type tables) are rebuilt in private memory when the file is mapped.
 * The stock state at the build (which offers were in stock, each product's
 * best offer under the default weights, and every column, bitset and order
 * made from them) is a section too, the snapshot's state mapping as it was:
 * a child copies it into its snapshot and reads the changes since from the
 * store.
 *
 * A file is written under a temporary name and renamed, so it is whole or
 * absent; it is mapped only when this process's user owns it, nobody else can
 * write it, and it was written by this layout (FORMAT) and these word rules
 * (AS_SEARCH_WORDS_RULES): during a graceful restart a child of the old
 * module may still write one. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <threads.h>
#include <unistd.h>

#include "as_search_internal.h"

static const char magic[8] = {'A', 'S', 'I', 'D', 'X', 0, 0, 0};
/* 3: the product views' parts; 4: 3's from background builds lacked them; 5:
 * a compat row's view members after the device's, not the whole row (a
 * format-4 file's would be written after the device's members again); 6: the
 * offers' stock as read and the live sequence it was read at; 7: contradicted
 * products' entries of `excluded` (xj_at); 8: which words are only ever
 * joined ones (tok_join); 9: the whole stock state, not only in_stock,
 * def_off and def_score to rank every product from again; 10: the products
 * ordered by category, part type and brand (id_docs, id_rk); 11: without
 * each product's words (fwd_at, fwd); 12: the contradicted
 * products' entries in the docs' order, each after its length (add_len_str);
 * 13: each merchant's object in an offer (sx_merchant.json_at); 14: each
 * product's summary head (head_at); 15: each product's fine price step in
 * the stock state (min_fine) */
#define FORMAT 16

enum {
    SEC_IDS,
    SEC_SKU_RK,
    SEC_CAT,
    SEC_PT,
    SEC_HIDDEN,
    SEC_AVAIL,
    SEC_GUARANTEE,
    SEC_RETURN_RATE,
    SEC_SKU_AT,
    SEC_NAME_AT,
    SEC_BRAND_AT,
    SEC_IMG_AT,
    SEC_NOTE_AT,
    SEC_XJ_AT,
    SEC_HEAD_AT,
    SEC_STATUS_AT,
    SEC_AVAIL_AT,
    SEC_OFF_AT,
    SEC_OFFERS,
    SEC_STOCK,
    SEC_TOK_AT,
    SEC_TOK_TEXT,
    SEC_TOK_JOIN,
    SEC_STEM_OF,
    SEC_STEM_AT,
    SEC_STEM_TEXT,
    SEC_STEM_TOKS_AT,
    SEC_STEM_TOKS,
    SEC_POST_AT,
    SEC_POST,
    SEC_DEV_IDS,
    SEC_DEV_AT,
    SEC_COMPAT,
    SEC_CAT_AT,
    SEC_CAT_DOCS,
    SEC_PT_AT,
    SEC_PT_DOCS,
    SEC_VIEW_AT,
    SEC_PERF_AT,
    SEC_CV_AT,
    SEC_SKU_DOCS,
    SEC_ID_DOCS,
    SEC_ID_RK,
    SEC_VTEXT,
    SEC_STRS,
    /* not mapped in place */
    SEC_MERCHANTS, /* sx_merchant, its as_merchant's pointers zeroed */
    SEC_DEVICES,   /* file_device */
    SEC_CATS,      /* NUL-terminated strings, one after another */
    SEC_PTS,
    /* the stock state at the build: the snapshot's state mapping, whole */
    SEC_STATE,
    SEC_N
};

typedef struct file_device {
    int64_t id;
    uint32_t str[5]; /* slug, name, brand, kind, aliases: into strs */
    uint32_t pad;
} file_device;

typedef struct file_head {
    char magic[8];
    uint32_t format, nsec, rules, pad;
    int64_t catalogue, rank, live_base;
    uint64_t n, noffers, nmerchants, ntok, nstems, nfwd, ndev, ncompat, ndevs, ncats, npts,
        nstrs, nvtext;
    uint64_t bytes; /* the whole file */
    struct {
        uint64_t off, len;
    } sec[SEC_N];
} file_head;

/* The sections mapped in place: where each goes in sx_catalog. */
static const size_t in_place[SEC_STRS + 1] = {
    [SEC_IDS] = offsetof(sx_catalog, ids),
    [SEC_SKU_RK] = offsetof(sx_catalog, sku_rk),
    [SEC_CAT] = offsetof(sx_catalog, cat),
    [SEC_PT] = offsetof(sx_catalog, pt),
    [SEC_HIDDEN] = offsetof(sx_catalog, hidden),
    [SEC_AVAIL] = offsetof(sx_catalog, avail),
    [SEC_GUARANTEE] = offsetof(sx_catalog, guarantee),
    [SEC_RETURN_RATE] = offsetof(sx_catalog, return_rate),
    [SEC_SKU_AT] = offsetof(sx_catalog, sku_at),
    [SEC_NAME_AT] = offsetof(sx_catalog, name_at),
    [SEC_BRAND_AT] = offsetof(sx_catalog, brand_at),
    [SEC_IMG_AT] = offsetof(sx_catalog, img_at),
    [SEC_NOTE_AT] = offsetof(sx_catalog, note_at),
    [SEC_XJ_AT] = offsetof(sx_catalog, xj_at),
    [SEC_HEAD_AT] = offsetof(sx_catalog, head_at),
    [SEC_STATUS_AT] = offsetof(sx_catalog, status_at),
    [SEC_AVAIL_AT] = offsetof(sx_catalog, avail_at),
    [SEC_OFF_AT] = offsetof(sx_catalog, off_at),
    [SEC_OFFERS] = offsetof(sx_catalog, offers),
    [SEC_STOCK] = offsetof(sx_catalog, stock),
    [SEC_TOK_AT] = offsetof(sx_catalog, tok_at),
    [SEC_TOK_TEXT] = offsetof(sx_catalog, tok_text),
    [SEC_TOK_JOIN] = offsetof(sx_catalog, tok_join),
    [SEC_STEM_OF] = offsetof(sx_catalog, stem_of),
    [SEC_STEM_AT] = offsetof(sx_catalog, stem_at),
    [SEC_STEM_TEXT] = offsetof(sx_catalog, stem_text),
    [SEC_STEM_TOKS_AT] = offsetof(sx_catalog, stem_toks_at),
    [SEC_STEM_TOKS] = offsetof(sx_catalog, stem_toks),
    [SEC_POST_AT] = offsetof(sx_catalog, post_at),
    [SEC_POST] = offsetof(sx_catalog, post),
    [SEC_DEV_IDS] = offsetof(sx_catalog, dev_ids),
    [SEC_DEV_AT] = offsetof(sx_catalog, dev_at),
    [SEC_COMPAT] = offsetof(sx_catalog, compat),
    [SEC_CAT_AT] = offsetof(sx_catalog, cat_at),
    [SEC_CAT_DOCS] = offsetof(sx_catalog, cat_docs),
    [SEC_PT_AT] = offsetof(sx_catalog, pt_at),
    [SEC_PT_DOCS] = offsetof(sx_catalog, pt_docs),
    [SEC_VIEW_AT] = offsetof(sx_catalog, view_at),
    [SEC_PERF_AT] = offsetof(sx_catalog, perf_at),
    [SEC_CV_AT] = offsetof(sx_catalog, cv_at),
    [SEC_SKU_DOCS] = offsetof(sx_catalog, sku_docs),
    [SEC_ID_DOCS] = offsetof(sx_catalog, id_docs),
    [SEC_ID_RK] = offsetof(sx_catalog, id_rk),
    [SEC_VTEXT] = offsetof(sx_catalog, vtext),
    [SEC_STRS] = offsetof(sx_catalog, strs),
};

static void **field(sx_catalog *c, int sec)
{
    return (void **)((char *)c + in_place[sec]);
}

/* Each section's length in bytes, from the header's counts (and, for the
 * text and posting sections, from the offsets before them). */
static uint64_t expected_len(const file_head *h, const sx_catalog *c, int sec)
{
    uint64_t n = h->n;
    switch (sec) {
    case SEC_IDS:
    case SEC_RETURN_RATE:
    case SEC_PERF_AT:
        return n * 8;
    case SEC_VIEW_AT:
        return (n + 1) * 8;
    case SEC_CV_AT:
        return h->ncompat * 16;
    case SEC_SKU_DOCS:
    case SEC_ID_DOCS:
    case SEC_ID_RK:
        return n * 4;
    case SEC_VTEXT:
        return h->nvtext;
    case SEC_SKU_RK:
    case SEC_SKU_AT:
    case SEC_NAME_AT:
    case SEC_BRAND_AT:
    case SEC_IMG_AT:
    case SEC_NOTE_AT:
    case SEC_XJ_AT:
    case SEC_HEAD_AT:
    case SEC_STATUS_AT:
    case SEC_AVAIL_AT:
    case SEC_CAT_DOCS:
    case SEC_PT_DOCS:
        return n * 4;
    case SEC_CAT_AT:
        return (h->ncats + 1) * 4;
    case SEC_PT_AT:
        return (h->npts + 1) * 4;
    case SEC_CAT:
    case SEC_PT:
        return n * 2;
    case SEC_HIDDEN:
    case SEC_AVAIL:
    case SEC_GUARANTEE:
        return n;
    case SEC_OFF_AT:
        return (n + 1) * 4;
    case SEC_OFFERS:
        return h->noffers * sizeof(sx_offer);
    case SEC_STATE:
        return sx_state_bytes(n, h->noffers, h->nmerchants);
    case SEC_TOK_JOIN:
        return h->ntok;
    case SEC_STOCK:
        return h->noffers * 4;
    case SEC_TOK_AT:
    case SEC_POST_AT:
        return (h->ntok + 1) * 4;
    case SEC_STEM_OF:
    case SEC_STEM_TOKS:
        return h->ntok * 4;
    case SEC_TOK_TEXT:
        return c->tok_at ? c->tok_at[h->ntok] : UINT64_MAX;
    case SEC_STEM_AT:
    case SEC_STEM_TOKS_AT:
        return (h->nstems + 1) * 4;
    case SEC_STEM_TEXT:
        return c->stem_at ? c->stem_at[h->nstems] : UINT64_MAX;
    case SEC_POST:
        return h->nfwd * 4;
    case SEC_DEV_IDS:
        return h->ndev * 8;
    case SEC_DEV_AT:
        return (h->ndev + 1) * 4;
    case SEC_COMPAT:
        return h->ncompat * sizeof(sx_compat);
    case SEC_STRS:
        return h->nstrs;
    case SEC_MERCHANTS:
        return h->nmerchants * sizeof(sx_merchant);
    case SEC_DEVICES:
        return h->ndevs * sizeof(file_device);
    default: /* SEC_CATS, SEC_PTS: checked by their strings */
        return UINT64_MAX;
    }
}

/* ---- writing ---- */

static char *names_blob(char *const *tab, size_t n, size_t *len)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += strlen(tab[i]) + 1;
    char *b = malloc(total ? total : 1), *p = b;
    if (!b) return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(tab[i]) + 1;
        memcpy(p, tab[i], l);
        p += l;
    }
    *len = total;
    return b;
}

static bool write_all(int fd, const void *p, size_t len, uint64_t off)
{
    const char *b = p;
    while (len) {
        ssize_t w = pwrite(fd, b, len, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        b += w;
        len -= (size_t)w;
        off += (uint64_t)w;
    }
    return true;
}

/* A part of the commit's sections, copied by a thread of its own into the
 * file's mapping (base: the file's offset tail_off): the bytes from..to - 1
 * of the sections one after another (len[i] bytes each, where h places
 * section i). */
typedef struct sec_writer {
    char *base;
    uint64_t tail_off;
    const void *const *data;
    const uint64_t *len;
    const file_head *h;
    uint64_t from, to;
} sec_writer;

static int write_secs(void *arg)
{
    sec_writer *w = arg;
    uint64_t at = 0; /* where section i starts in the run of all */
    for (int i = 0; i < SEC_N && at < w->to; at += w->len[i++]) {
        uint64_t a = at > w->from ? at : w->from,
                 b = at + w->len[i] < w->to ? at + w->len[i] : w->to;
        if (a < b)
            memcpy(w->base + (w->h->sec[i].off - w->tail_off) + (a - at),
                   (const char *)w->data[i] + (a - at), b - a);
    }
    return 0;
}

bool sx_file_create(const char *path, sx_file_out *out)
{
    size_t tl = strlen(path) + 32;
    out->fd = -1;
    if (!(out->tmp = malloc(tl))) return false;
    snprintf(out->tmp, tl, "%s.tmp.%ld", path, (long)getpid());
    unlink(out->tmp); /* left by a process of this pid that died while writing */
    out->fd = open(out->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (out->fd >= 0) return true;
    free(out->tmp);
    out->tmp = NULL;
    return false;
}

void sx_file_abandon(sx_file_out *out)
{
    if (out->fd >= 0) close(out->fd);
    if (out->tmp) unlink(out->tmp);
    free(out->tmp);
    out->fd = -1;
    out->tmp = NULL;
}

/* The database part of a temporary file's name, "<base>-<version>.idx.tmp.<pid>",
 * its length; 0 when the name is not one. */
static size_t tmp_base_len(const char *name)
{
    const char *dash = name[0] != '.' ? strchr(name, '-') : NULL;
    size_t digits = dash ? strspn(dash + 1, "0123456789") : 0;
    static const char tail[] = ".idx.tmp.";
    if (!digits || strncmp(dash + 1 + digits, tail, sizeof(tail) - 1) != 0) return 0;
    const char *pid = dash + 1 + digits + sizeof(tail) - 1;
    return *pid && !pid[strspn(pid, "0123456789")] ? (size_t)(dash - name) : 0;
}

/* The lock of the database named base in dir taken, when nobody holds it:
 * its descriptor (-2 when there is no lock file: no writer ever made one), or
 * -1 when some process holds it. */
static int lock_take(const char *dir, const char *base, size_t bl)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/%.*s.lock", dir, (int)bl, base) >= (int)sizeof(path))
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return errno == ENOENT ? -2 : -1;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
    close(fd);
    return -1;
}

int sx_file_sweep(const char *dir, const char *base)
{
    DIR *d = opendir(dir);
    int removed = 0;
    size_t want = base ? strlen(base) : 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t bl = tmp_base_len(e->d_name);
        if (!bl || (base && (bl != want || strncmp(e->d_name, base, bl) != 0))) continue;
        int fd = base ? -2 : lock_take(dir, e->d_name, bl); /* held while it is removed */
        char path[PATH_MAX];
        if (fd != -1 && snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path) &&
            unlink(path) == 0)
            removed++;
        if (fd >= 0) close(fd);
    }
    if (d) closedir(d);
    return removed;
}

#define VTEXT_STEP ((size_t)64 << 20)

bool sx_vtext_room(sx_catalog *c, const sx_file_out *out, size_t need)
{
    if (need <= c->vtext_map) return true;
    size_t cap = c->vtext_map ? c->vtext_map : VTEXT_STEP;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) return false;
        cap *= 2;
    }
    /* blocks, not a hole: a store through the mapping into a hole the disk
     * has no room for would be a SIGBUS, not an error */
    if (posix_fallocate(out->fd, SX_VTEXT_OFF, (off_t)cap) != 0) return false;
    void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED, out->fd, SX_VTEXT_OFF);
    if (p == MAP_FAILED) return false;
    if (c->vtext_map) munmap(c->vtext, c->vtext_map); /* its pages stay in the file */
    c->vtext = p;
    c->vtext_map = cap;
    return true;
}

bool sx_file_commit(const as_search_snap *s, sx_file_out *out, const char *path)
{
    const sx_catalog *c = s->c;
    file_head h = {.format = FORMAT, .nsec = SEC_N, .rules = AS_SEARCH_WORDS_RULES};
    _Static_assert(sizeof(h) <= SX_VTEXT_OFF, "the header fits before the views' text");
    memcpy(h.magic, magic, sizeof(magic));
    h.catalogue = s->v.catalogue;
    h.rank = s->v.rank;
    h.live_base = c->live_base;
    h.n = c->n;
    h.noffers = c->noffers;
    h.nmerchants = c->nmerchants;
    h.ntok = c->ntok;
    h.nstems = c->nstems;
    h.nfwd = c->post_at[c->ntok];
    h.ndev = c->ndev;
    h.ncompat = c->ncompat;
    h.ndevs = c->ndevs;
    h.ncats = c->ncats;
    h.npts = c->npts;
    h.nstrs = c->nstrs;
    h.nvtext = c->nvtext;

    const void *data[SEC_N] = {0};
    uint64_t len[SEC_N] = {0};
    for (int i = 0; i <= SEC_STRS; i++) {
        data[i] = *field((sx_catalog *)c, i);
        len[i] = expected_len(&h, c, i);
    }
    sx_merchant *ms = calloc(c->nmerchants ? c->nmerchants : 1, sizeof(*ms));
    file_device *ds = calloc(c->ndevs ? c->ndevs : 1, sizeof(*ds));
    size_t cats_len = 0, pts_len = 0;
    char *cats = names_blob(c->cats, c->ncats, &cats_len);
    char *pts = names_blob(c->pts, c->npts, &pts_len);
    bool ok = ms && ds && cats && pts;
    for (size_t i = 0; ok && i < c->nmerchants; i++) {
        ms[i] = c->merchants[i];
        ms[i].m = (as_merchant){.accuracy_rate = c->merchants[i].m.accuracy_rate,
                                .on_time_rate = c->merchants[i].m.on_time_rate};
    }
    for (size_t i = 0; ok && i < c->ndevs; i++) {
        const as_device *d = &c->devs[i];
        const char *f[5] = {d->slug, d->name, d->brand, d->kind, d->aliases};
        ds[i].id = d->id;
        for (int k = 0; k < 5; k++)
            ds[i].str[k] = f[k] ? (uint32_t)(f[k] - c->strs) : AS_NO_STR;
    }
    data[SEC_MERCHANTS] = ms;
    len[SEC_MERCHANTS] = c->nmerchants * sizeof(*ms);
    data[SEC_DEVICES] = ds;
    len[SEC_DEVICES] = c->ndevs * sizeof(*ds);
    data[SEC_CATS] = cats;
    len[SEC_CATS] = cats_len;
    data[SEC_PTS] = pts;
    len[SEC_PTS] = pts_len;
    data[SEC_STATE] = s->state;
    len[SEC_STATE] = s->state_bytes;

    /* the views' text first, where sx_vtext_room maps it; the rest after it */
    h.sec[SEC_VTEXT].off = SX_VTEXT_OFF;
    h.sec[SEC_VTEXT].len = len[SEC_VTEXT];
    uint64_t at = (SX_VTEXT_OFF + len[SEC_VTEXT] + 63) & ~(uint64_t)63;
    for (int i = 0; i < SEC_N; i++) {
        if (i == SEC_VTEXT) continue;
        /* the stock state at a page's offset: processes map it privately,
         * copy-on-write, as the base of their snapshots' states */
        if (i == SEC_STATE) at = (at + SX_PAGE - 1) & ~(uint64_t)(SX_PAGE - 1);
        h.sec[i].off = at;
        h.sec[i].len = len[i];
        at = (at + len[i] + 63) & ~(uint64_t)63;
    }
    h.bytes = at;

    ok = ok && ftruncate(out->fd, (off_t)h.bytes) == 0;
    /* A view text mapped from the file is there already (and the file may be
     * longer than it: the mapping's room). The other sections are copied into
     * the file's mapping on two threads, each about half of the bytes: pwrite
     * takes the file's lock, and copying a gigabyte into the page cache took
     * one core 2.35 s at 1,000,000 products (1.07 s on two). Blocks are
     * reserved first, so that a full disk is an error, not a SIGBUS; without
     * a mapping (no address space for it) they are written in turn. */
    uint64_t tail = c->vtext_map ? SX_VTEXT_OFF + h.sec[SEC_VTEXT].len : SX_VTEXT_OFF;
    tail &= ~(uint64_t)(SX_PAGE - 1);
    if (c->vtext_map) len[SEC_VTEXT] = 0;
    uint64_t total = 0;
    for (int i = 0; i < SEC_N; i++)
        total += len[i];
    char *base = MAP_FAILED;
    if (ok && h.bytes > tail && posix_fallocate(out->fd, (off_t)tail, (off_t)(h.bytes - tail)) == 0)
        base = mmap(NULL, h.bytes - tail, PROT_READ | PROT_WRITE, MAP_SHARED, out->fd, (off_t)tail);
    if (base != MAP_FAILED) {
        sec_writer w[2] = {{base, tail, data, len, &h, 0, total / 2},
                           {base, tail, data, len, &h, total / 2, total}};
        thrd_t t;
        bool two = thrd_create(&t, write_secs, &w[0]) == thrd_success;
        if (!two) write_secs(&w[0]);
        write_secs(&w[1]);
        if (two) thrd_join(t, NULL);
        munmap(base, h.bytes - tail);
    } else {
        for (int i = 0; ok && i < SEC_N; i++)
            if (len[i]) ok = write_all(out->fd, data[i], len[i], h.sec[i].off);
    }
    ok = ok && write_all(out->fd, &h, sizeof(h), 0); /* the header last */
    ok = close(out->fd) == 0 && ok;
    out->fd = -1;
    if (ok) ok = rename(out->tmp, path) == 0;
    if (ok) { /* nothing to remove */
        free(out->tmp);
        out->tmp = NULL;
    }
    sx_file_abandon(out);
    free(ms);
    free(ds);
    free(cats);
    free(pts);
    return ok;
}

bool sx_file_write(const as_search_snap *s, const char *path)
{
    sx_file_out out;
    return sx_file_create(path, &out) && sx_file_commit(s, &out, path);
}

/* ---- mapping ---- */

static bool names_table(const char *blob, uint64_t len, size_t n, char ***out)
{
    char **t = calloc(n ? n : 1, sizeof(char *));
    if (!t) return false;
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = at < len ? memchr(blob + at, '\0', len - at) : NULL;
        if (!e) {
            free(t);
            return false;
        }
        t[i] = (char *)blob + at;
        at = (uint64_t)(e - blob) + 1;
    }
    *out = t;
    return true;
}

static bool sections_ok(const file_head *h, size_t size)
{
    if (memcmp(h->magic, magic, sizeof(magic)) != 0 || h->format != FORMAT || h->nsec != SEC_N ||
        h->rules != AS_SEARCH_WORDS_RULES || h->bytes != size)
        return false;
    for (int i = 0; i < SEC_N; i++)
        if (h->sec[i].off % 8 || h->sec[i].off > size || h->sec[i].len > size - h->sec[i].off)
            return false;
    return h->n < UINT32_MAX && h->noffers < UINT32_MAX && h->ntok < UINT32_MAX &&
           h->nstems < UINT32_MAX && h->nfwd < UINT32_MAX && h->ncats <= UINT16_MAX &&
           h->npts <= UINT16_MAX && h->nmerchants <= UINT16_MAX;
}

/* The product views' offsets stay inside their text, in order (the compat
 * rows' view parts after them); every sku
 * place names a product; id order and the docs' places in it are one
 * permutation and its inverse. */
static bool views_ok(const sx_catalog *c)
{
    if (c->view_at[c->n] > c->nvtext) return false;
    for (size_t d = 0; d < c->n; d++)
        if (c->view_at[d] > c->perf_at[d] || c->perf_at[d] > c->view_at[d + 1] ||
            c->sku_docs[d] >= c->n || c->id_rk[d] >= c->n || c->id_docs[c->id_rk[d]] != d)
            return false;
    for (size_t i = 0; i < c->ncompat; i++)
        if (c->cv_at[2 * i] > c->cv_at[2 * i + 1] || c->cv_at[2 * i + 1] > c->nvtext) return false;
    return true;
}

sx_catalog *sx_file_map(const char *path, int64_t catalogue, as_search_version *at,
                        const uint8_t **state)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return NULL;
    struct stat st;
    void *base = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        !(st.st_mode & (S_IWGRP | S_IWOTH)) && (size_t)st.st_size >= sizeof(file_head))
        base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    const file_head *h = base;
    sx_catalog *c = NULL;
    if (!sections_ok(h, size) || h->catalogue != catalogue) goto fail;
    c = calloc(1, sizeof(*c));
    if (!c) goto fail;
    atomic_init(&c->refs, 1);
    c->base_fd = -1;
    c->map = base;
    c->map_bytes = size;
    c->n = h->n;
    c->live_base = h->live_base;
    c->noffers = h->noffers;
    c->nmerchants = h->nmerchants;
    c->ntok = (uint32_t)h->ntok;
    c->nstems = (uint32_t)h->nstems;
    c->ndev = h->ndev;
    c->ncompat = h->ncompat;
    c->nstrs = h->nstrs;
    c->nvtext = h->nvtext;
    for (int i = 0; i <= SEC_STRS; i++) {
        *field(c, i) = (char *)base + h->sec[i].off;
        /* the text sections' lengths come from the offsets mapped before them */
        uint64_t want = expected_len(h, c, i);
        if (h->sec[i].len != want) goto fail;
    }
    if (c->off_at[c->n] != c->noffers ||
        ((uint32_t *)((char *)base + h->sec[SEC_CAT_AT].off))[h->ncats] != c->n ||
        ((uint32_t *)((char *)base + h->sec[SEC_PT_AT].off))[h->npts] != c->n ||
        c->post_at[c->ntok] != h->nfwd || c->dev_at[c->ndev] != c->ncompat ||
        (c->nstrs && c->strs[c->nstrs - 1] != '\0') ||
        (c->ntok && c->tok_text[c->tok_at[c->ntok] - 1] != '\0') ||
        (c->nstems && c->stem_text[c->stem_at[c->nstems] - 1] != '\0'))
        goto fail;
    for (int i = SEC_MERCHANTS; i < SEC_N; i++)
        if (i != SEC_CATS && i != SEC_PTS && h->sec[i].len != expected_len(h, c, i)) goto fail;
    if (!views_ok(c)) goto fail;

    /* the parts with pointers, in private memory */
    c->merchants = malloc((c->nmerchants ? c->nmerchants : 1) * sizeof(sx_merchant));
    c->devs = calloc(h->ndevs ? h->ndevs : 1, sizeof(as_device));
    if (!c->merchants || !c->devs) goto fail;
    memcpy(c->merchants, (char *)base + h->sec[SEC_MERCHANTS].off,
           c->nmerchants * sizeof(sx_merchant));
    const file_device *fd_ = (const file_device *)((char *)base + h->sec[SEC_DEVICES].off);
    for (size_t i = 0; i < h->ndevs; i++) {
        const char *f[5];
        for (int k = 0; k < 5; k++) {
            uint32_t s = fd_[i].str[k];
            if (s != AS_NO_STR && s >= c->nstrs) goto fail;
            f[k] = s == AS_NO_STR ? NULL : c->strs + s;
        }
        c->devs[i] = (as_device){fd_[i].id, f[0], f[1], f[2], f[3], f[4]};
    }
    c->ndevs = h->ndevs;
    if (!names_table((char *)base + h->sec[SEC_CATS].off, h->sec[SEC_CATS].len, h->ncats,
                     &c->cats) ||
        !names_table((char *)base + h->sec[SEC_PTS].off, h->sec[SEC_PTS].len, h->npts, &c->pts))
        goto fail;
    c->ncats = h->ncats;
    c->npts = h->npts;
    c->bytes = size;
    if (!sx_catalog_private(c)) goto fail;
    at->catalogue = h->catalogue;
    at->rank = h->rank;
    at->live = h->live_base;
    *state = (const uint8_t *)base;
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0 && h->sec[SEC_STATE].off % (uint64_t)page == 0) { /* the snapshots' base */
        c->base_fd = fd;
        c->base_off = h->sec[SEC_STATE].off;
        c->base_rank = h->rank;
    } else {
        close(fd);
    }
    return c;
fail:
    if (c) {
        if (c->dev_arena) as_arena_destroy(c->dev_arena);
        free(c->bits);
        free(c->merchants);
        free(c->devs);
        free(c->cats);
        free(c->pts);
        free(c);
    }
    munmap(base, size);
    close(fd);
    return NULL;
}

bool sx_file_state(const sx_catalog *c, const uint8_t *base, as_search_snap *s)
{
    const file_head *h = (const file_head *)base;
    if (h->sec[SEC_STATE].len != s->state_bytes) return false;
    memcpy(s->state, base + h->sec[SEC_STATE].off, s->state_bytes);
    return sx_state_valid(c, s);
}

void *sx_base_map(const sx_catalog *c, size_t bytes)
{
    if (c->base_fd < 0 || !bytes) return NULL;
    void *p =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, c->base_fd, (off_t)c->base_off);
    return p == MAP_FAILED ? NULL : p;
}

bool sx_base_write(sx_catalog *c, const void *state, size_t bytes, int64_t rank)
{
    static atomic_uint serial;
    char name[64];
    snprintf(name, sizeof(name), "/agentshop-search-state-%ld-%u", (long)getpid(),
             atomic_fetch_add(&serial, 1));
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return false;
    shm_unlink(name); /* this process's alone, gone with its last mapping (and
                       * shm_open's descriptor is close-on-exec) */
    if (ftruncate(fd, (off_t)bytes) != 0 || !write_all(fd, state, bytes, 0)) {
        close(fd);
        return false;
    }
    if (c->base_fd >= 0) close(c->base_fd); /* the snapshots that map it keep it */
    c->base_fd = fd;
    c->base_off = 0;
    c->base_rank = rank;
    return true;
}

bool sx_state_valid(const sx_catalog *c, const as_search_snap *s)
{
    /* what the state says that indexes something else: the best offer
     * among the product's own, the products in the order, the merchants */
    size_t nm = c->nmerchants;
    for (size_t d = 0; d < c->n; d++) {
        uint32_t o = s->prod[d].def_off;
        if ((o != UINT32_MAX && (o < c->off_at[d] || o >= c->off_at[d + 1])) ||
            s->rank_order[d] >= c->n || (nm && (s->best_q[d] >= nm || s->best_r[d] >= nm)) ||
            (nm < 64 && s->merchants_in[d] >> nm))
            return false;
    }
    for (size_t o = 0; o < c->noffers; o++)
        if (s->front[o].merchant >= (nm ? nm : 1)) return false;
    return true;
}
