/* One build of core and the store as a shared object for bench/ab.c: the
 * search API answered in process, as a child answers it but without httpd
 * (docs/performance.md, "In-process A/B"). ab_init opens the database (a
 * SQLite file, or a PostgreSQL connection string) and the search index (its
 * files under the prefix, as a child's AgentShopSearchIndexDir holds them);
 * ab_run answers one GET below /v1 and returns the thread CPU time it took,
 * in ns, with the body's hash. */
#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "as_api.h"
#include "as_db.h"
#include "as_search.h"

#define AB_EXPORT __attribute__((visibility("default")))

static apr_pool_t *pool;
static as_db db;
static as_store store;
static as_search_index *index_;
static as_config cfg;

static void ab_log(void *baton, int level, const char *msg)
{
    (void)baton;
    /* and the index's build or mapping, with its time */
    if (level <= AS_LOG_ERR || strncmp(msg, "search index ", 13) == 0)
        fprintf(stderr, "ab: %s\n", msg);
}

AB_EXPORT int ab_init(const char *db_file, const char *index_prefix)
{
    const char *err = NULL;
    /* SQLite's statistics off, as a child sets them: false for the second
     * build in one process (the library is one, set already) */
    (void)as_db_process_init();
    if (apr_initialize() != APR_SUCCESS || apr_pool_create(&pool, NULL) != APR_SUCCESS) return 1;
    /* a PostgreSQL connection string ("host=... dbname=...") or a SQLite file */
    const char *driver = strchr(db_file, '=') ? "pgsql" : "sqlite3";
    if (as_db_open(pool, driver, db_file, &db, &err) != APR_SUCCESS ||
        as_db_conn_init(db.pool, db.driver, db.handle, db.prepared, &err) != APR_SUCCESS) {
        fprintf(stderr, "ab: %s: %s\n", db_file, err ? err : "cannot open");
        return 1;
    }
    store = as_db_store(&db);
    index_ = as_search_index_create(index_prefix, ab_log, NULL);
    as_config_defaults(&cfg);
    return index_ ? 0 : 1;
}

static double thread_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

AB_EXPORT double ab_run(const char *path_and_query, unsigned long long *hash)
{
    apr_pool_t *rp;
    if (apr_pool_create(&rp, pool) != APR_SUCCESS) return -1;
    as_mem m = as_db_pool_mem(rp);
    char *path = apr_pstrdup(rp, path_and_query), *query = strchr(path, '?');
    if (query) *query++ = '\0';
    as_request req = {0};
    req.method = "GET";
    req.path = path;
    req.query = query;
    as_shop shop = {0};
    shop.mem = &m;
    shop.store = &store;
    shop.cfg = &cfg;
    shop.now = (int64_t)time(NULL);
    shop.log = ab_log;
    shop.index = index_;
    as_response resp = {0};
    double t0 = thread_ns();
    as_handle(&shop, &req, &resp);
    double ns = thread_ns() - t0;
    if (hash) { /* FNV-1a of the status and the body */
        unsigned long long h = 1469598103934665603ull ^ (unsigned long long)resp.status;
        for (size_t i = 0; resp.raw && i < resp.raw_len; i++)
            h = (h ^ (unsigned char)resp.raw[i]) * 1099511628211ull;
        *hash = h;
    }
    as_response_clear(&resp);
    apr_pool_destroy(rp);
    return ns;
}
