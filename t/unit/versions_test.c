/* as_versions: the versions one request read, reused by the server's other
 * requests only while young and only while no commit of the server's came
 * since their read began; whole (never torn) across processes. */
#include "unit_check.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "as_versions.h"

static as_search_version ver(int64_t k)
{
    return (as_search_version){k, k + 1, k + 2};
}

static void test_young_only(void **state)
{
    (void)state;
    as_versions_cell c;
    as_versions_init(&c);
    as_search_version v;
    assert_false(as_versions_get(&c, 1000, 100, &v)); /* nothing kept */
    as_versions_put(&c, as_versions_gen(&c), 1000, &(as_search_version){7, 8, 9});
    assert_true(as_versions_get(&c, 1000, 100, &v));
    assert_int_equal(v.catalogue, 7);
    assert_int_equal(v.rank, 8);
    assert_int_equal(v.live, 9);
    assert_true(as_versions_get(&c, 1099, 100, &v));
    assert_false(as_versions_get(&c, 1100, 100, &v)); /* as old as the limit */
    assert_false(as_versions_get(&c, 999, 100, &v));  /* from after now: not trusted */
    assert_false(as_versions_get(&c, 1050, 0, &v));   /* a limit of 0: never */
    assert_false(as_versions_get(NULL, 1050, 100, &v));
    /* a read begun earlier does not replace a later one; a later one does */
    as_versions_put(&c, as_versions_gen(&c), 990, &(as_search_version){1, 1, 1});
    assert_true(as_versions_get(&c, 1050, 100, &v));
    assert_int_equal(v.live, 9);
    as_versions_put(&c, as_versions_gen(&c), 1040, &(as_search_version){7, 8, 10});
    assert_true(as_versions_get(&c, 1130, 100, &v));
    assert_int_equal(v.live, 10);
}

static void test_commit_makes_stale(void **state)
{
    (void)state;
    as_versions_cell c;
    as_versions_init(&c);
    as_search_version v;
    uint64_t before = as_versions_gen(&c);
    as_versions_put(&c, before, 1000, &(as_search_version){7, 8, 9});
    as_versions_stale(&c); /* a commit */
    assert_false(as_versions_get(&c, 1001, 100, &v));
    /* a read begun before the commit is not kept, even the latest begun */
    as_versions_put(&c, before, 1005, &(as_search_version){7, 8, 9});
    assert_false(as_versions_get(&c, 1006, 100, &v));
    /* one begun after it is, even if it began earlier by the clock than
     * what was kept before the commit */
    as_versions_put(&c, as_versions_gen(&c), 999, &(as_search_version){7, 8, 11});
    assert_true(as_versions_get(&c, 1006, 100, &v));
    assert_int_equal(v.live, 11);
    /* and a late read from before the commit does not push it out */
    as_versions_put(&c, before, 1010, &(as_search_version){7, 8, 12});
    assert_true(as_versions_get(&c, 1011, 100, &v));
    assert_int_equal(v.live, 11);
}

/* Another process is writing the cell: a request keeps nothing (and reads
 * nothing half-written). */
static void test_busy_writer(void **state)
{
    (void)state;
    as_versions_cell c;
    as_versions_init(&c);
    as_search_version v;
    as_versions_put(&c, as_versions_gen(&c), 1000, &(as_search_version){7, 8, 9});
    atomic_fetch_add(&c.seq, 1); /* a writer midway */
    assert_false(as_versions_get(&c, 1001, 100, &v));
    as_versions_put(&c, as_versions_gen(&c), 1001, &(as_search_version){7, 8, 10});
    atomic_fetch_add(&c.seq, 1); /* it finished */
    assert_true(as_versions_get(&c, 1002, 100, &v));
    assert_int_equal(v.live, 9); /* the busy cell kept nothing */
}

/* Processes sharing one cell, as httpd's children do. One commits: it sets
 * the "database" to i, marks the cell stale, then "answers" (done = i).
 * The others serve requests: each notes the last answered commit when it
 * begins, and the versions it gets (the cell's, or the database's read and
 * put back) must have it, and be whole (catalogue, rank and live of the same
 * read). Some requests must have been served by the cell. */
typedef struct shared {
    as_versions_cell cell;
    _Atomic int64_t db, done, stop;
    _Atomic int64_t bad, hits, reads;
} shared;

static as_search_version get_or_read(shared *sh)
{
    as_search_version v;
    int64_t now = as_versions_now_ms();
    if (as_versions_get(&sh->cell, now, 50, &v)) {
        atomic_fetch_add(&sh->hits, 1);
        return v;
    }
    uint64_t gen = as_versions_gen(&sh->cell);
    v = ver(atomic_load(&sh->db));
    atomic_fetch_add(&sh->reads, 1);
    as_versions_put(&sh->cell, gen, now, &v);
    return v;
}

static void serve(shared *sh)
{
    while (!atomic_load(&sh->stop)) {
        int64_t answered = atomic_load(&sh->done);
        as_search_version v = get_or_read(sh);
        if (v.live < answered + 2 || v.rank != v.catalogue + 1 || v.live != v.catalogue + 2)
            atomic_fetch_add(&sh->bad, 1);
    }
}

static void test_processes(void **state)
{
    (void)state;
    shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(sh != MAP_FAILED);
    memset(sh, 0, sizeof(*sh));
    as_versions_init(&sh->cell);
    pid_t kids[3];
    for (int i = 0; i < 3; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            serve(sh);
            _exit(0);
        }
    }
    for (int64_t i = 1; i <= 3000; i++) {
        atomic_store(&sh->db, i);    /* the commit */
        as_versions_stale(&sh->cell);
        atomic_store(&sh->done, i);  /* its answer */
        if (i % 4 == 0) nanosleep(&(struct timespec){0, 200000}, NULL); /* 0.2 ms */
    }
    atomic_store(&sh->stop, 1);
    for (int i = 0; i < 3; i++) {
        int st = 0;
        assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    assert_int_equal(atomic_load(&sh->bad), 0);
    assert_true(atomic_load(&sh->hits) > 0);
    assert_true(atomic_load(&sh->reads) > 0);
    munmap(sh, sizeof(*sh));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_young_only),
        UNIT_TEST(test_commit_makes_stale),
        UNIT_TEST(test_busy_writer),
        UNIT_TEST(test_processes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
