/* The store's versions shared by a server's requests for a short while
 * (as_versions.h). */
#include <time.h>

#include "as_versions.h"

void as_versions_init(as_versions_cell *c)
{
    atomic_init(&c->seq, 0);
    atomic_init(&c->gen, 1);
    atomic_init(&c->kept_gen, 0);
    atomic_init(&c->catalogue, 0);
    atomic_init(&c->rank, 0);
    atomic_init(&c->live, 0);
    atomic_init(&c->read_ms, 0);
}

int64_t as_versions_now_ms(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) return 0;
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

bool as_versions_get(as_versions_cell *c, int64_t now_ms, int64_t max_age_ms,
                     as_search_version *out)
{
    if (!c || max_age_ms <= 0 || now_ms <= 0) return false;
    uint64_t s1 = atomic_load_explicit(&c->seq, memory_order_acquire);
    if (s1 & 1) return false;
    uint64_t kept = atomic_load_explicit(&c->kept_gen, memory_order_relaxed);
    int64_t at = atomic_load_explicit(&c->read_ms, memory_order_relaxed);
    as_search_version v = {atomic_load_explicit(&c->catalogue, memory_order_relaxed),
                           atomic_load_explicit(&c->rank, memory_order_relaxed),
                           atomic_load_explicit(&c->live, memory_order_relaxed)};
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&c->seq, memory_order_relaxed) != s1) return false;
    /* a commit since the kept read began (its request has answered before
     * this one could be asked, so its raise is seen here) */
    if (kept != atomic_load(&c->gen)) return false;
    if (!at || now_ms < at || now_ms - at >= max_age_ms) return false;
    *out = v;
    return true;
}

uint64_t as_versions_gen(as_versions_cell *c)
{
    return c ? atomic_load(&c->gen) : 0;
}

void as_versions_put(as_versions_cell *c, uint64_t gen, int64_t read_ms,
                     const as_search_version *v)
{
    if (!c || read_ms <= 0) return;
    uint64_t s = atomic_load_explicit(&c->seq, memory_order_relaxed);
    if ((s & 1) || !atomic_compare_exchange_strong(&c->seq, &s, s + 1)) return; /* another writes */
    atomic_thread_fence(memory_order_release); /* the odd number before any field */
    /* not when a commit came since the read began (it may not have seen
     * it), nor over a read begun later at the same generation */
    bool keep = atomic_load(&c->gen) == gen &&
                (atomic_load_explicit(&c->kept_gen, memory_order_relaxed) != gen ||
                 atomic_load_explicit(&c->read_ms, memory_order_relaxed) < read_ms);
    if (keep) {
        atomic_store_explicit(&c->kept_gen, gen, memory_order_relaxed);
        atomic_store_explicit(&c->read_ms, read_ms, memory_order_relaxed);
        atomic_store_explicit(&c->catalogue, v->catalogue, memory_order_relaxed);
        atomic_store_explicit(&c->rank, v->rank, memory_order_relaxed);
        atomic_store_explicit(&c->live, v->live, memory_order_relaxed);
    }
    atomic_store_explicit(&c->seq, s + 2, memory_order_release);
}

void as_versions_stale(as_versions_cell *c)
{
    if (c) atomic_fetch_add(&c->gen, 1);
}
