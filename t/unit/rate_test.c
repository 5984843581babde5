/* as_rate_check: the rate limits hold against any mix of agent keys (issue
 * 59), over tables small enough for a few thousand made-up keys to fill. */
#include "unit_check.h"

#include <pthread.h>

#include "as_rate.h"

#define LIMIT 5
#define CEILING (10 * LIMIT)
#define SECS 60

typedef struct rate_fx {
    as_rate_tables t;
    as_rate_slot *mem;
} rate_fx;

static rate_fx *fx_new(size_t addresses, unsigned address_probes, size_t keys, unsigned key_probes)
{
    rate_fx *fx = calloc(1, sizeof(*fx));
    fx->mem = malloc(as_rate_size(addresses + keys));
    as_rate_region_init(&fx->t.addresses, fx->mem, addresses, address_probes);
    as_rate_region_init(&fx->t.keys, fx->mem + addresses, keys, key_probes);
    return fx;
}

static void fx_free(rate_fx *fx)
{
    free(fx->mem);
    free(fx);
}

/* Keys as the glue's keyed hash gives them: spread, never 0. */
static as_rate_word next_id(as_rate_word *state)
{
    as_rate_word x = *state;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    *state = x;
    return x ? x : 1;
}

typedef struct client {
    as_rate_word all, address;
} client;

static client client_of(as_rate_word *rng)
{
    client c = {next_id(rng), next_id(rng)};
    return c;
}

static as_rate_verdict send_as(rate_fx *fx, client c, as_rate_word key, long long now, int *wait)
{
    as_rate_ids ids = {c.all, c.address, key};
    return as_rate_check(&fx->t, &ids, now, LIMIT, SECS, wait);
}

/* One address, a new made-up key on every request: its ceiling holds, the
 * rest are refused with a wait within the window. */
static void test_made_up_keys_from_one_address(void **state)
{
    (void)state;
    rate_fx *fx = fx_new(64, 16, 128, 8);
    as_rate_word rng = 0x9e3779b97f4a7c15ull;
    client a = client_of(&rng);
    int passed = 0, bad_wait = 0;
    for (int i = 0; i < 20000; i++) {
        int wait = -1;
        /* the flood spans seconds, so counters of different ages meet */
        as_rate_verdict v = send_as(fx, a, next_id(&rng), 1000 + i / 1000, &wait);
        if (v == AS_RATE_PASS)
            passed++;
        else if (v != AS_RATE_ALL || wait < 1 || wait > SECS)
            bad_wait++;
    }
    assert_int_equal(passed, CEILING);
    assert_int_equal(bad_wait, 0);
    fx_free(fx);
}

/* Made-up keys from many addresses fill the keys' table; a key counted
 * before keeps its count, and a key that finds no slot counts against its
 * address at the key's limit. No address passes more than its ceiling. */
static void test_keys_table_full(void **state)
{
    (void)state;
    rate_fx *fx = fx_new(1024, 32, 64, 8);
    as_rate_word rng = 0x2545f4914f6cdd1dull;
    client x = client_of(&rng);
    as_rate_word fixed = next_id(&rng);
    int wait = 0;
    for (int i = 0; i < LIMIT; i++)
        assert_int_equal(send_as(fx, x, fixed, 1000, &wait), AS_RATE_PASS);
    assert_int_equal(send_as(fx, x, fixed, 1000, &wait), AS_RATE_KEY);

    for (int n = 0; n < 200; n++) {
        client c = client_of(&rng);
        int passed = 0;
        for (int i = 0; i < 2 * CEILING; i++)
            passed += send_as(fx, c, next_id(&rng), 1001 + n / 50, &wait) == AS_RATE_PASS;
        assert_in_range(passed, LIMIT, CEILING);
    }
    /* the fixed key's window has not ended: still refused */
    for (int i = 0; i < 10; i++)
        assert_int_equal(send_as(fx, x, fixed, 1010, &wait), AS_RATE_KEY);

    /* a new key now finds no slot: its address's own allowance, then refused */
    client y = client_of(&rng);
    as_rate_word newcomer = next_id(&rng);
    for (int i = 0; i < LIMIT; i++)
        assert_int_equal(send_as(fx, y, newcomer, 1010, &wait), AS_RATE_PASS);
    assert_int_equal(send_as(fx, y, newcomer, 1010, &wait), AS_RATE_ADDRESS);
    assert_in_range(wait, 1, SECS);
    /* ... which its other made-up keys share */
    assert_int_equal(send_as(fx, y, next_id(&rng), 1010, &wait), AS_RATE_ADDRESS);

    /* once the windows end, slots are free again: the key's own limit */
    for (int i = 0; i < LIMIT; i++)
        assert_int_equal(send_as(fx, y, newcomer, 1100, &wait), AS_RATE_PASS);
    assert_int_equal(send_as(fx, y, newcomer, 1100, &wait), AS_RATE_KEY);
    fx_free(fx);
}

/* More live addresses than the table holds: the one without a slot is
 * refused, never let through uncounted, until a window ends. */
static void test_addresses_table_full(void **state)
{
    (void)state;
    rate_fx *fx = fx_new(16, 16, 64, 8);
    as_rate_word rng = 0x853c49e6748fea9bull;
    int wait = 0, full = 0;
    for (int n = 0; n < 8; n++) /* two counters each: the table is full */
        assert_int_equal(send_as(fx, client_of(&rng), 0, 1000 + n, &wait), AS_RATE_PASS);
    client late = client_of(&rng);
    for (int i = 0; i < 100; i++) {
        as_rate_verdict v = send_as(fx, late, 0, 1030, &wait);
        assert_int_equal(v, AS_RATE_FULL);
        full++;
    }
    assert_int_equal(full, 100);
    assert_int_equal(wait, 1000 + SECS - 1030); /* until the first window ends */
    assert_int_equal(send_as(fx, late, 0, 1000 + SECS, &wait), AS_RATE_PASS);
    fx_free(fx);
}

typedef struct burst {
    rate_fx *fx;
    client c;
    as_rate_word key; /* 0: a new made-up key every request */
    as_rate_word rng;
    int passed;
} burst;

static void *burst_run(void *arg)
{
    burst *b = arg;
    int wait;
    for (int i = 0; i < 2000; i++) {
        as_rate_word key = b->key ? b->key : next_id(&b->rng);
        b->passed += send_as(b->fx, b->c, key, 1000, &wait) == AS_RATE_PASS;
    }
    return NULL;
}

/* Threads at once, without a lock: counted exactly, one key or many. */
static void test_concurrent_exact(void **state)
{
    (void)state;
    for (int many = 0; many < 2; many++) {
        rate_fx *fx = fx_new(256, 32, 512, 8);
        as_rate_word rng = 0xda942042e4dd58b5ull;
        client c = client_of(&rng);
        as_rate_word key = many ? 0 : next_id(&rng);
        burst b[4];
        pthread_t th[4];
        for (int i = 0; i < 4; i++) {
            b[i] = (burst){fx, c, key, rng + (as_rate_word)i * 7919u, 0};
            assert_int_equal(pthread_create(&th[i], NULL, burst_run, &b[i]), 0);
        }
        int passed = 0;
        for (int i = 0; i < 4; i++) {
            pthread_join(th[i], NULL);
            passed += b[i].passed;
        }
        assert_int_equal(passed, many ? CEILING : LIMIT);
        fx_free(fx);
    }
}

/* An IPv6 client is counted by its /64: one subscriber's block is one address. */
static void test_client_address(void **state)
{
    (void)state;
    char a[AS_RATE_CLIENT_MAX], b[AS_RATE_CLIENT_MAX];
    assert_string_equal(as_rate_client(a, "2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
    assert_string_equal(as_rate_client(b, "2001:0db8:0001:0002:ffff:1:2:3"), "2001:db8:1:2::/64");
    assert_string_equal(as_rate_client(a, "2001:db8:1:3::1"), "2001:db8:1:3::/64");
    assert_string_equal(as_rate_client(a, "::1"), "::/64");
    assert_string_equal(as_rate_client(a, "::ffff:192.0.2.7"), "192.0.2.7");
    assert_string_equal(as_rate_client(a, "192.0.2.7"), "192.0.2.7");
    assert_string_equal(as_rate_client(a, "unknown"), "unknown");
    assert_string_equal(as_rate_client(a, "fe80::1%eth0"), "fe80::1%eth0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_made_up_keys_from_one_address),
        cmocka_unit_test(test_keys_table_full),
        cmocka_unit_test(test_addresses_table_full),
        cmocka_unit_test(test_concurrent_exact),
        cmocka_unit_test(test_client_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
