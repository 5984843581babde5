/* See as_view_cache.h. A slot's buffer is allocated on first use in a size
 * class of 4 KB and kept while what the slot holds stays in that class, so the
 * cache's memory follows the size of what it holds and stops growing once
 * every slot has held a view.
 * Each set of four slots has its own lock: threads reading different views do
 * not wait for each other. */
#include "as_view_cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WAYS 4
#define CLASS 4096 /* slot buffers are whole multiples of this */

typedef struct slot {
    uint64_t hash; /* of the key; 0: empty */
    uint64_t used; /* the set's clock when last read or written */
    size_t key_len, val_len, body_len;
    char *data; /* key, validator, body */
    size_t cap; /* bytes allocated at data: the size class of what it holds */
} slot;

typedef struct set {
    pthread_mutex_t lock;
    uint64_t clock;
    slot s[WAYS];
    unsigned long long hits, misses, stores, too_large;
} set;

struct as_view_cache {
    size_t n_sets, max_bytes;
    set *sets;
};

static uint64_t hash_key(const char *k, size_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * 1099511628211ULL;
    return h ? h : 1;
}

as_view_cache *as_view_cache_create(size_t slots, size_t max_bytes)
{
    as_view_cache *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->n_sets = slots / WAYS + (slots % WAYS != 0);
    if (c->n_sets == 0) c->n_sets = 1;
    c->max_bytes = max_bytes;
    c->sets = calloc(c->n_sets, sizeof(set));
    if (!c->sets) {
        free(c);
        return NULL;
    }
    for (size_t i = 0; i < c->n_sets; i++)
        pthread_mutex_init(&c->sets[i].lock, NULL);
    return c;
}

void as_view_cache_destroy(as_view_cache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n_sets; i++) {
        for (int w = 0; w < WAYS; w++)
            free(c->sets[i].s[w].data);
        pthread_mutex_destroy(&c->sets[i].lock);
    }
    free(c->sets);
    free(c);
}

static slot *find(set *st, uint64_t h, const char *key, size_t kn)
{
    for (int w = 0; w < WAYS; w++) {
        slot *sl = &st->s[w];
        if (sl->hash == h && sl->key_len == kn && memcmp(sl->data, key, kn) == 0) return sl;
    }
    return NULL;
}

bool as_view_cache_get(as_view_cache *c, as_mem *m, const char *key, const char *validator,
                       const char **body, size_t *len)
{
    size_t kn = strlen(key), vn = strlen(validator);
    uint64_t h = hash_key(key, kn);
    set *st = &c->sets[h % c->n_sets];
    bool hit = false;
    pthread_mutex_lock(&st->lock);
    slot *sl = find(st, h, key, kn);
    if (sl && sl->val_len == vn && memcmp(sl->data + kn, validator, vn) == 0) {
        char *copy = as_alloc(m, sl->body_len + 1);
        memcpy(copy, sl->data + kn + vn, sl->body_len);
        *body = copy;
        *len = sl->body_len;
        sl->used = ++st->clock;
        hit = true;
        st->hits++;
    } else {
        st->misses++;
    }
    pthread_mutex_unlock(&st->lock);
    return hit;
}

bool as_view_cache_holds(as_view_cache *c, const char *key)
{
    size_t kn = strlen(key);
    uint64_t h = hash_key(key, kn);
    set *st = &c->sets[h % c->n_sets];
    pthread_mutex_lock(&st->lock);
    bool held = find(st, h, key, kn) != NULL;
    pthread_mutex_unlock(&st->lock);
    return held;
}

bool as_view_cache_put(as_view_cache *c, const char *key, const char *validator, const char *body,
                       size_t len)
{
    size_t kn = strlen(key), vn = strlen(validator);
    uint64_t h = hash_key(key, kn);
    set *st = &c->sets[h % c->n_sets];
    if (kn + vn + len > c->max_bytes) {
        pthread_mutex_lock(&st->lock);
        st->too_large++;
        pthread_mutex_unlock(&st->lock);
        return false;
    }
    bool ok = true;
    pthread_mutex_lock(&st->lock);
    slot *sl = find(st, h, key, kn);
    if (!sl) { /* an empty slot, else the least recently used */
        sl = &st->s[0];
        for (int w = 0; w < WAYS && sl->hash; w++)
            if (!st->s[w].hash || st->s[w].used < sl->used) sl = &st->s[w];
    }
    /* A slot's buffer is of the size class of what it holds, so the memory a
     * full cache keeps is that of its entries, and reused: a buffer changes
     * only when an entry moves to another class. */
    size_t need = (kn + vn + len + CLASS - 1) / CLASS * CLASS;
    if (sl->cap != need) {
        free(sl->data);
        sl->data = malloc(need);
        sl->cap = sl->data ? need : 0;
        if (!sl->data) sl->hash = 0; /* empty now */
    }
    if (!sl->data) {
        ok = false;
    } else {
        memcpy(sl->data, key, kn);
        memcpy(sl->data + kn, validator, vn);
        if (len) memcpy(sl->data + kn + vn, body, len); /* body may be NULL when empty */
        sl->hash = h;
        sl->key_len = kn;
        sl->val_len = vn;
        sl->body_len = len;
        sl->used = ++st->clock;
        st->stores++;
    }
    pthread_mutex_unlock(&st->lock);
    return ok;
}

void as_view_cache_stats_get(as_view_cache *c, as_view_cache_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < c->n_sets; i++) {
        set *st = &c->sets[i];
        pthread_mutex_lock(&st->lock);
        out->hits += st->hits;
        out->misses += st->misses;
        out->stores += st->stores;
        out->too_large += st->too_large;
        pthread_mutex_unlock(&st->lock);
    }
}
