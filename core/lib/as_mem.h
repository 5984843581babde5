/* Allocation for core: everything core allocates for one request comes from one
 * as_mem, so the caller frees it all at once (the glue backs it with the request's
 * APR pool; tests and the admin tool with as_arena). Core never frees piecemeal. */
#ifndef AS_MEM_H
#define AS_MEM_H

#include <stdarg.h>
#include <stddef.h>

typedef struct as_mem {
    void *(*alloc)(void *baton, size_t size); /* must return zeroed memory or abort */
    void *baton;
    /* the same without the zeroing (NULL: alloc), for memory the caller
     * writes before it reads: a buffer's text */
    void *(*alloc_raw)(void *baton, size_t size);
} as_mem;

void *as_alloc(as_mem *m, size_t size);
/* Memory whose content is undefined until the caller writes it. */
void *as_alloc_raw(as_mem *m, size_t size);
char *as_strdup(as_mem *m, const char *s);
char *as_strndup(as_mem *m, const char *s, size_t n);
char *as_printf(as_mem *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *as_vprintf(as_mem *m, const char *fmt, va_list ap);

/* A malloc-backed arena for programs without APR pools (unit tests, fuzzers). */
typedef struct as_arena as_arena;
as_arena *as_arena_create(void);
void as_arena_destroy(as_arena *a);
/* Frees what was allocated, keeping one block for what comes next. */
void as_arena_clear(as_arena *a);
as_mem as_arena_mem(as_arena *a);

/* Scratch: an arena whose blocks outlive a use. as_scratch_reset gives back
 * everything allocated and keeps the blocks (up to keep bytes of them) for
 * the next use, so large transient arrays (a search's bitsets over a
 * million products) are not fresh memory, a page fault per 4 KiB page,
 * on every request. Allocations are zeroed, as as_mem promises. One user
 * at a time. */
typedef struct as_scratch as_scratch;
as_scratch *as_scratch_create(void);
void as_scratch_destroy(as_scratch *s);
/* Returns the bytes kept. */
size_t as_scratch_reset(as_scratch *s, size_t keep);
as_mem as_scratch_mem(as_scratch *s);

/* A growable string built on an as_mem. */
typedef struct as_buf {
    as_mem *mem;
    char *data;
    size_t len, cap;
} as_buf;

void as_buf_init(as_buf *b, as_mem *m);
void as_buf_add(as_buf *b, const char *s, size_t n);
/* Room for n more bytes and a terminator; the end of the text (b->data +
 * b->len), which the caller fills and then counts in b->len. first: the
 * capacity when the buffer has none yet (0: 256). */
char *as_buf_reserve(as_buf *b, size_t n, size_t first);
void as_buf_puts(as_buf *b, const char *s);
void as_buf_printf(as_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *as_buf_str(as_buf *b);

#endif
