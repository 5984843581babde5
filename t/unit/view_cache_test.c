/* as_view_cache: served only under the validator it was kept with, bounded,
 * least recently used out first, consistent under threads. */
#include "unit_check.h"

#include <pthread.h>

#include "as_view_cache.h"

static bool get(as_view_cache *c, as_mem *m, const char *key, const char *ver, const char **body)
{
    size_t n = 0;
    bool hit = as_view_cache_get(c, m, key, ver, body, &n);
    if (hit) assert_int_equal(n, strlen(*body));
    return hit;
}

static void test_validator_decides(void **state)
{
    as_mem *m = unit_mem(state);
    as_view_cache *c = as_view_cache_create(64, 1024);
    const char *b = NULL;
    assert_false(get(c, m, "BT-1", "v1/1/0", &b)); /* nothing kept yet */
    assert_true(as_view_cache_put(c, "BT-1", "v1/1/0", "{\"stock\":5}\n", 12));
    assert_true(get(c, m, "BT-1", "v1/1/0", &b));
    assert_string_equal(b, "{\"stock\":5}\n");
    assert_false(get(c, m, "BT-1", "v1/1/1", &b)); /* the product changed */
    assert_false(get(c, m, "BT-2", "v1/1/0", &b)); /* another key */
    assert_false(get(c, m, "BT-", "v1/1/0", &b));  /* a prefix of a key */
    /* held under some version, current or not; nothing else is */
    assert_true(as_view_cache_holds(c, "BT-1"));
    assert_false(as_view_cache_holds(c, "BT-2"));
    assert_false(as_view_cache_holds(c, "BT-"));
    /* a newer version replaces the entry, the old one is gone */
    assert_true(as_view_cache_put(c, "BT-1", "v1/1/1", "{\"stock\":4}\n", 12));
    assert_true(get(c, m, "BT-1", "v1/1/1", &b));
    assert_string_equal(b, "{\"stock\":4}\n");
    assert_false(get(c, m, "BT-1", "v1/1/0", &b));
    as_view_cache_stats st;
    as_view_cache_stats_get(c, &st);
    assert_int_equal(st.hits, 2);
    assert_int_equal(st.stores, 2);
    as_view_cache_destroy(c);
}

/* An entry that moves to a larger or smaller size class (its slot's buffer is
 * replaced) is kept whole, and binary bodies (the search page ids) are kept
 * byte for byte. */
static void test_size_classes(void **state)
{
    as_mem *m = unit_mem(state);
    as_view_cache *c = as_view_cache_create(4, 65536);
    size_t sizes[] = {10, 5000, 60000, 100, 4096 - 8, 4096, 12000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        char *body = malloc(n);
        for (size_t k = 0; k < n; k++)
            body[k] = (char)((k * 7 + i) % 256); /* NUL bytes among them */
        char ver[16];
        snprintf(ver, sizeof ver, "v%zu", i);
        assert_true(as_view_cache_put(c, "BT-1", ver, body, n));
        const char *got = NULL;
        size_t len = 0;
        assert_true(as_view_cache_get(c, m, "BT-1", ver, &got, &len));
        assert_int_equal(len, n);
        assert_memory_equal(got, body, n);
        free(body);
    }
    char *big = calloc(1, 65536);
    assert_false(as_view_cache_put(c, "BT-1", "v", big, 65536)); /* over max_bytes */
    free(big);
    as_view_cache_destroy(c);
}

static void test_bounded(void **state)
{
    as_mem *m = unit_mem(state);
    as_view_cache *c = as_view_cache_create(4, 64); /* one set of four */
    const char *b = NULL;
    char big[100];
    memset(big, 'x', sizeof(big));
    assert_false(as_view_cache_put(c, "K", "v", big, sizeof(big))); /* too large to keep */
    assert_false(get(c, m, "K", "v", &b));
    for (int i = 0; i < 4; i++)
        assert_true(as_view_cache_put(c, as_printf(m, "k%d", i), "v", "body", 4));
    assert_true(get(c, m, "k0", "v", &b)); /* k0 read: k1 is now the least recent */
    assert_true(as_view_cache_put(c, "k4", "v", "body", 4));
    assert_true(get(c, m, "k0", "v", &b));
    assert_false(get(c, m, "k1", "v", &b));
    assert_true(get(c, m, "k2", "v", &b));
    assert_true(get(c, m, "k3", "v", &b));
    assert_true(get(c, m, "k4", "v", &b));
    as_view_cache_stats st;
    as_view_cache_stats_get(c, &st);
    assert_int_equal(st.too_large, 1);
    as_view_cache_destroy(c);
}

/* Threads keep and read views whose body names their key and version: a
 * reader never gets another key's body, nor another version's. */
typedef struct worker {
    as_view_cache *c;
    int id;
    int bad, hits;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    as_arena *a = as_arena_create();
    as_mem m = as_arena_mem(a);
    for (int i = 0; i < 20000; i++) {
        int k = (i * 7 + w->id) % 50, v = (i / 100 + w->id) % 3;
        char key[16], ver[16], body[64];
        snprintf(key, sizeof(key), "SKU-%d", k);
        snprintf(ver, sizeof(ver), "%d", v);
        snprintf(body, sizeof(body), "{\"sku\":\"SKU-%d\",\"v\":%d}", k, v);
        const char *got = NULL;
        size_t n = 0;
        if (as_view_cache_get(w->c, &m, key, ver, &got, &n)) {
            w->hits++;
            if (n != strlen(body) || memcmp(got, body, n) != 0) w->bad++;
        } else {
            as_view_cache_put(w->c, key, ver, body, strlen(body));
        }
    }
    as_arena_destroy(a);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    as_view_cache *c = as_view_cache_create(32, 256); /* fewer slots than keys: evictions */
    worker w[8];
    pthread_t t[8];
    for (int i = 0; i < 8; i++) {
        w[i] = (worker){c, i, 0, 0};
        pthread_create(&t[i], NULL, work, &w[i]);
    }
    int bad = 0, hits = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        bad += w[i].bad;
        hits += w[i].hits;
    }
    assert_int_equal(bad, 0);
    assert_true(hits > 0);
    as_view_cache_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_validator_decides),
        UNIT_TEST(test_size_classes),
        UNIT_TEST(test_bounded),
        UNIT_TEST(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
