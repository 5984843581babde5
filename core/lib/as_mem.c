#include "as_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *as_alloc(as_mem *m, size_t size)
{
    return m->alloc(m->baton, size ? size : 1);
}

void *as_alloc_raw(as_mem *m, size_t size)
{
    return m->alloc_raw ? m->alloc_raw(m->baton, size ? size : 1) : as_alloc(m, size);
}

char *as_strndup(as_mem *m, const char *s, size_t n)
{
    char *d = as_alloc_raw(m, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *as_strdup(as_mem *m, const char *s)
{
    return s ? as_strndup(m, s, strlen(s)) : NULL;
}

char *as_vprintf(as_mem *m, const char *fmt, va_list ap)
{
    /* formatted once when it fits the stack buffer (nearly always), twice
     * otherwise: printf is most of the cost of short texts */
    char tmp[512];
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, cp);
    va_end(cp);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof(tmp)) return as_strndup(m, tmp, (size_t)n);
    char *d = as_alloc_raw(m, (size_t)n + 1);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    return d;
}

char *as_printf(as_mem *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = as_vprintf(m, fmt, ap);
    va_end(ap);
    return s;
}

/* Arena: a chain of malloc'd blocks, freed together. */
struct as_arena {
    struct block *head;
};
struct block {
    struct block *next;
    size_t used, cap;
    max_align_t data[];
};

#define ARENA_BLOCK 8192

static void *arena_alloc_raw(void *baton, size_t size)
{
    as_arena *a = baton;
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    struct block *b = a->head;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
        b = malloc(sizeof(*b) + cap);
        if (!b) abort();
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += size;
    return p;
}

static void *arena_alloc(void *baton, size_t size)
{
    return memset(arena_alloc_raw(baton, size), 0, size);
}

as_arena *as_arena_create(void)
{
    as_arena *a = calloc(1, sizeof(*a));
    if (!a) abort();
    return a;
}

void as_arena_destroy(as_arena *a)
{
    if (!a) return;
    struct block *b = a->head;
    while (b) {
        struct block *n = b->next;
        free(b);
        b = n;
    }
    free(a);
}

void as_arena_clear(as_arena *a)
{
    struct block *b = a->head;
    if (!b) return;
    while (b->next) { /* the newest block stays, emptied */
        struct block *n = b->next;
        b->next = n->next;
        free(n);
    }
    b->used = 0;
}

as_mem as_arena_mem(as_arena *a)
{
    as_mem m = {arena_alloc, a, arena_alloc_raw};
    return m;
}

/* Scratch: blocks in the order made; an allocation takes the first block
 * from the current one on with room, else a new block. */
struct as_scratch {
    struct block **blocks;
    size_t n, cap, cur;
};

#define SCRATCH_BLOCK (256 * 1024)

static void *scratch_alloc_raw(void *baton, size_t size)
{
    as_scratch *s = baton;
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    size_t i = s->cur;
    while (i < s->n && s->blocks[i]->cap - s->blocks[i]->used < size)
        i++;
    if (i == s->n) {
        if (s->n == s->cap) {
            size_t nc = s->cap ? s->cap * 2 : 16;
            struct block **nb = realloc(s->blocks, nc * sizeof(*nb));
            if (!nb) abort();
            s->blocks = nb;
            s->cap = nc;
        }
        size_t cap = size > SCRATCH_BLOCK ? size : SCRATCH_BLOCK;
        struct block *b = malloc(sizeof(*b) + cap);
        if (!b) abort();
        b->next = NULL;
        b->used = 0;
        b->cap = cap;
        s->blocks[s->n++] = b;
    }
    struct block *b = s->blocks[i];
    void *p = (char *)b->data + b->used;
    b->used += size;
    /* the current block, nearly full, is left behind: later allocations
     * try from the next one on */
    if (i == s->cur && b->cap - b->used < SCRATCH_BLOCK / 16) s->cur++;
    return p;
}

static void *scratch_alloc(void *baton, size_t size)
{
    return memset(scratch_alloc_raw(baton, size), 0, size);
}

as_scratch *as_scratch_create(void)
{
    as_scratch *s = calloc(1, sizeof(*s));
    if (!s) abort();
    return s;
}

void as_scratch_destroy(as_scratch *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++)
        free(s->blocks[i]);
    free(s->blocks);
    free(s);
}

size_t as_scratch_reset(as_scratch *s, size_t keep)
{
    size_t kept = 0, n = 0;
    for (size_t i = 0; i < s->n; i++) {
        struct block *b = s->blocks[i];
        if (kept + b->cap > keep) {
            free(b);
            continue;
        }
        kept += b->cap;
        b->used = 0;
        s->blocks[n++] = b;
    }
    s->n = n;
    s->cur = 0;
    return kept;
}

as_mem as_scratch_mem(as_scratch *s)
{
    as_mem m = {scratch_alloc, s, scratch_alloc_raw};
    return m;
}

void as_buf_init(as_buf *b, as_mem *m)
{
    b->mem = m;
    b->data = NULL;
    b->len = b->cap = 0;
}

char *as_buf_reserve(as_buf *b, size_t n, size_t first)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : first ? first : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = as_alloc_raw(b->mem, cap);
        if (b->len) memcpy(d, b->data, b->len);
        b->data = d;
        b->cap = cap;
    }
    return b->data + b->len;
}

void as_buf_add(as_buf *b, const char *s, size_t n)
{
    as_buf_reserve(b, n, 0);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void as_buf_puts(as_buf *b, const char *s)
{
    as_buf_add(b, s, strlen(s));
}

void as_buf_printf(as_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = as_vprintf(b->mem, fmt, ap);
    va_end(ap);
    as_buf_puts(b, s);
}

const char *as_buf_str(as_buf *b)
{
    return b->data ? b->data : "";
}
