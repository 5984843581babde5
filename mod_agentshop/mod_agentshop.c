/* mod_agentshop: the httpd glue of the Agent Shopping API. It turns HTTP into an
 * as_request, lends core a database connection from mod_dbd, and writes core's
 * as_response. Everything the API decides lives in core/. This file holds the
 * hooks and the handler; the directives are in mod_agentshop_config.c, bodies
 * and brigades in mod_agentshop_io.c, rate limits in mod_agentshop_ratelimit.c. */
#include "httpd.h"
#include "apr_atomic.h"
#include "apr_global_mutex.h"
#include "apr_optional.h"
#include "apr_shm.h"
#include "apr_strings.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "util_mutex.h"
#include "apr_dbd.h"
#include "mod_dbd.h"

#include "as_db.h"
#include "as_rank.h"

#include <limits.h>
#include <strings.h>

#include "mod_agentshop_private.h"

#define DEFAULT_VIEW_SLOTS 0 /* off: views come from the search index */
#define VIEW_MAX_BYTES 24576 /* larger views are built every time */
#define DEFAULT_SEARCH_SLOTS 256
#define SEARCH_IDS_MAX_BYTES 2048   /* a page of up to 100 products, its key and version */
#define SEARCH_PAGE_MAX_BYTES 65536 /* larger pages are built every time */

static ap_dbd_t *(*dbd_acquire)(request_rec *) = NULL;
/* A connection outside any request, for the search index's background builds. */
static ap_dbd_t *(*dbd_open)(apr_pool_t *, server_rec *) = NULL;
static void (*dbd_close)(server_rec *, ap_dbd_t *) = NULL;

/* Serializes SQLite writers across threads and child processes (see as_db.h).
 * Its mechanism can be chosen with `Mutex ... agentshop-write`. */
#define WRITE_MUTEX "agentshop-write"
static apr_global_mutex_t *write_mutex;
static apr_shm_t *versions_shm; /* the database versions' cells (make_versions) */

static int pre_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp)
{
    (void)pconf;
    (void)plog;
    (void)ptemp;
    agentshop_config_reset();
    write_mutex = NULL;
    versions_shm = NULL;
    /* before mod_dbd's first connection (the first read of the configuration;
     * on a restart SQLite is already set up, as it was the first time) */
    (void)as_db_process_init();
    if (ap_mutex_register(pconf, WRITE_MUTEX, NULL, APR_LOCK_DEFAULT, 0) != APR_SUCCESS ||
        agentshop_rate_register(pconf) != APR_SUCCESS)
        return HTTP_INTERNAL_SERVER_ERROR;
    return OK;
}

/* One cell of versions (core/store/as_versions.h) per database, in anonymous shared
 * memory made before the children fork: the hosts of one database share it. */
static int make_versions(apr_pool_t *pconf, server_rec *s)
{
    size_t n = 0;
    for (server_rec *v = s; v; v = v->next)
        n++;
    apr_status_t rv = apr_shm_create(&versions_shm, n * sizeof(as_versions_cell), NULL, pconf);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "mod_agentshop: cannot create the shared memory of the database versions");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    as_versions_cell *cells = apr_shm_baseaddr_get(versions_shm);
    apr_hash_t *of = apr_hash_make(pconf);
    size_t used = 0;
    for (server_rec *v = s; v; v = v->next) {
        srv_cfg *sc = ap_get_module_config(v->module_config, &agentshop_module);
        sc->versions = sc->db_key ? apr_hash_get(of, sc->db_key, APR_HASH_KEY_STRING) : NULL;
        if (sc->versions || !sc->db_key) continue;
        sc->versions = &cells[used++];
        as_versions_init(sc->versions);
        apr_hash_set(of, sc->db_key, APR_HASH_KEY_STRING, sc->versions);
    }
    return OK;
}

/* One program per distinct AgentShopConfirmationNotify command, shared by
 * the virtual hosts that name it; children inherit its pipe. */
static int open_notify(apr_pool_t *pconf, server_rec *s)
{
    apr_hash_t *open = apr_hash_make(pconf);
    for (server_rec *v = s; v; v = v->next) {
        srv_cfg *sc = ap_get_module_config(v->module_config, &agentshop_module);
        if (!sc->notify_cmd) continue;
        sc->notify = apr_hash_get(open, sc->notify_cmd, APR_HASH_KEY_STRING);
        if (sc->notify) continue;
        sc->notify = ap_open_piped_log_ex(pconf, sc->notify_cmd, APR_SHELLCMD_ENV);
        if (!sc->notify) {
            ap_log_error(APLOG_MARK, APLOG_CRIT, 0, v,
                         "mod_agentshop: AgentShopConfirmationNotify: cannot start '%s'",
                         sc->notify_cmd);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        apr_hash_set(open, sc->notify_cmd, APR_HASH_KEY_STRING, sc->notify);
    }
    return OK;
}

/* A confirmation's line to the notify program: one write, so lines of
 * concurrent children never interleave (a pipe keeps writes of up to
 * PIPE_BUF bytes whole; longer lines are not written). A program that died
 * is restarted by the parent; lines written meanwhile wait in the pipe. */
static void notify_write(void *baton, const char *line)
{
    request_rec *r = baton;
    srv_cfg *sc = ap_get_module_config(r->server->module_config, &agentshop_module);
    size_t n = strlen(line);
    if (!sc->notify || n + 1 > PIPE_BUF) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      "a confirmation's notice of %zu bytes was not sent to "
                      "AgentShopConfirmationNotify",
                      n);
        return;
    }
    char *buf = apr_pstrcat(r->pool, line, "\n", NULL);
    apr_size_t written = 0;
    apr_status_t rv = apr_file_write_full(ap_piped_log_write_fd(sc->notify), buf, n + 1, &written);
    if (rv != APR_SUCCESS)
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r,
                      "writing a confirmation's notice to AgentShopConfirmationNotify failed");
}

static int post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    (void)plog;
    if (agentshop_config_check(pconf, s) != OK) return HTTP_INTERNAL_SERVER_ERROR;
    dbd_acquire = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_acquire);
    dbd_open = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_open);
    dbd_close = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_close);
    if (!dbd_acquire || !dbd_open || !dbd_close) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s,
                     "mod_agentshop needs mod_dbd: add LoadModule dbd_module");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    apr_status_t rv = ap_global_mutex_create(&write_mutex, NULL, WRITE_MUTEX, NULL, s, pconf, 0);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "mod_agentshop: cannot create its mutexes or shared memory");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (agentshop_rate_create(pconf, s) != OK) return HTTP_INTERNAL_SERVER_ERROR;
    agentshop_index_dir_setup(pconf, ptemp, s);
    if (open_notify(pconf, s) != OK) return HTTP_INTERNAL_SERVER_ERROR;
    int ok = agentshop_check_databases(pconf, ptemp, s);
    return ok == OK ? make_versions(pconf, s) : ok;
}

static void index_log(void *baton, int level, const char *msg)
{
    ap_log_error(APLOG_MARK, level, 0, baton, "agentshop: %s", msg);
}

/* ---- the search index's own connection, for its background builds ---- */

typedef struct index_conn {
    apr_pool_t *pool; /* the build's: results, and the connection's check */
    server_rec *s;
    ap_dbd_t *conn;
    as_db db;
} index_conn;

static apr_status_t conn_attach(as_db *db, const ap_dbd_t *conn, const char **err);

static void index_db_log(void *baton, const char *msg)
{
    ap_log_error(APLOG_MARK, APLOG_ERR, 0, baton, "database (search index build): %s", msg);
}

/* A connection from mod_dbd's pool of the server (a once-only one without
 * DBDPersist), set up as a request's is, held by the build thread until
 * index_store_close. The pool is the thread's alone: no allocator shared with
 * the child's other threads. */
static int index_store_open(void *baton, as_store *st, void **out)
{
    server_rec *s = baton;
    apr_pool_t *p;
    if (apr_pool_create_unmanaged_ex(&p, NULL, NULL) != APR_SUCCESS) return AS_EDB;
    index_conn *ic = apr_pcalloc(p, sizeof(*ic));
    ic->pool = p;
    ic->s = s;
    const char *err = NULL;
    if (!(ic->conn = dbd_open(p, s))) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s,
                     "no database connection from mod_dbd for the search index build (check "
                     "DBDriver/DBDParams)");
        apr_pool_destroy(p);
        return AS_EDB;
    }
    if (conn_attach(&ic->db, ic->conn, &err) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, "database set-up failed: %s", err);
        dbd_close(s, ic->conn);
        apr_pool_destroy(p);
        return AS_EDB;
    }
    ic->db.pool = p;
    ic->db.log = index_db_log;
    ic->db.log_baton = s; /* reads only: no writer lock */
    *st = as_db_store(&ic->db);
    *out = ic;
    return AS_OK;
}

static void index_store_close(void *baton, void *conn)
{
    (void)baton;
    index_conn *ic = conn;
    dbd_close(ic->s, ic->conn);
    apr_pool_destroy(ic->pool);
}

#define INDEX_WAIT_MAX_MS 60000 /* a search with no index yet waits at most this (or Timeout) */

/* The child's caches of every virtual host, freed when the child exits. */
static apr_status_t child_caches_free(void *data)
{
    for (server_rec *v = data; v; v = v->next) {
        srv_cfg *sc = ap_get_module_config(v->module_config, &agentshop_module);
        as_view_cache_destroy(sc->views);
        as_view_cache_destroy(sc->search_ids);
        as_view_cache_destroy(sc->search_pages);
        as_search_index_destroy(sc->index);
        sc->views = sc->search_ids = sc->search_pages = NULL;
        sc->index = NULL;
    }
    return APR_SUCCESS;
}

static void child_init(apr_pool_t *p, server_rec *s)
{
    if (!write_mutex) return;
    for (server_rec *v = s; v; v = v->next) {
        srv_cfg *sc = ap_get_module_config(v->module_config, &agentshop_module);
        apr_int64_t n = sc->view_slots != UNSET ? sc->view_slots : DEFAULT_VIEW_SLOTS;
        if (n > 0) sc->views = as_view_cache_create((size_t)n, VIEW_MAX_BYTES);
        n = sc->search_slots != UNSET ? sc->search_slots : DEFAULT_SEARCH_SLOTS;
        if (n > 0) {
            sc->search_ids = as_view_cache_create((size_t)n, SEARCH_IDS_MAX_BYTES);
            sc->search_pages = as_view_cache_create((size_t)n, SEARCH_PAGE_MAX_BYTES);
        }
        /* empty until the first search, which has the background thread build it */
        sc->index = as_search_index_create(sc->index_prefix, index_log, v);
        if (sc->index && !sc->index_prefix) as_search_index_private(sc->index, sc->index_why);
        apr_int64_t wait = apr_time_as_msec(v->timeout);
        as_search_opener o = {
            index_store_open, index_store_close, v,
            (long)(wait > 0 && wait < INDEX_WAIT_MAX_MS ? wait : INDEX_WAIT_MAX_MS)};
        if (sc->index) as_search_index_background(sc->index, &o);
    }
    /* Before the child pool's subpools go, mod_dbd's connection pool among
     * them: a build under way gives its connection back first. */
    apr_pool_pre_cleanup_register(p, s, child_caches_free);
    apr_status_t rv =
        apr_global_mutex_child_init(&write_mutex, apr_global_mutex_lockfile(write_mutex), p);
    if (rv == APR_SUCCESS) rv = agentshop_rate_child_init(p);
    if (rv != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, "mod_agentshop: cannot attach its mutex");
}

/* ---- the request ---- */

typedef struct req_ctx {
    request_rec *r;
    as_db db;
} req_ctx;

static void core_log(void *baton, int level, const char *msg)
{
    request_rec *r = baton;
    ap_log_rerror(APLOG_MARK, level, 0, r, "%s", msg);
}

/* SQLite's words for a file or directory the process may not write. */
static const char *readonly_hint(request_rec *r, const char *msg)
{
    if (!strstr(msg, "readonly") && !strstr(msg, "read-only") && !strstr(msg, "unable to open"))
        return "";
    srv_cfg *sc = ap_get_module_config(r->server->module_config, &agentshop_module);
    const char *file = sc->db_file ? sc->db_file : "(DBDParams)";
    const char *run_user = agentshop_run_user();
    return apr_psprintf(r->pool,
                        " (the database %s or its directory is not writable by the user %s "
                        "httpd's children run as; fix: chown %s %s* and its directory, or "
                        "agentshopctl setup)",
                        file, run_user ? run_user : "?", run_user ? run_user : "USER", file);
}

static void db_log(void *baton, const char *msg)
{
    request_rec *r = baton;
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "database: %s%s", msg, readonly_hint(r, msg));
}

/* Waits for the other writers no longer than the write may wait in all
 * (db->write_deadline, AgentShopWriteWait): a writer stuck on a database that
 * another process holds fails there, and those queued behind it fail at their
 * own deadlines instead of waiting for it without end. */
static int write_lock(as_db *db)
{
    request_rec *r = db->log_baton;
    apr_interval_time_t left = db->write_deadline ? db->write_deadline - apr_time_now() : -1;
    apr_status_t rv = left < 0 ? apr_global_mutex_lock(write_mutex)
                               : apr_global_mutex_timedlock(write_mutex, left);
    if (rv == APR_ENOTIMPL) rv = apr_global_mutex_lock(write_mutex);
    if (APR_STATUS_IS_TIMEUP(rv))
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      "the write waited %" APR_TIME_T_FMT " ms for other writers, as long as "
                      "AgentShopWriteWait allows; nothing was written",
                      apr_time_as_msec(db->write_wait ? db->write_wait : AS_DB_WRITE_WAIT));
    else if (rv != APR_SUCCESS)
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "cannot take the write mutex");
    return rv == APR_SUCCESS ? 0 : -1;
}

static void write_unlock(as_db *db)
{
    (void)db;
    apr_global_mutex_unlock(write_mutex);
}

/* Whatever happens, a request never leaves a transaction open on a pooled
 * connection, nor the write lock held. Runs before mod_dbd takes the
 * connection back (cleanups run last registered, first). */
static apr_status_t request_done(void *data)
{
    as_db_rollback(data);
    return APR_SUCCESS;
}

/* A mod_dbd connection ready for the store: our statements prepared on it and
 * SQLite's PRAGMAs set (once per connection), for a request (acquire) and for
 * the search index's builds (index_store_open). */
static apr_status_t conn_attach(as_db *db, const ap_dbd_t *conn, const char **err)
{
    apr_status_t rv = as_db_conn_init(conn->pool, conn->driver, conn->handle, conn->prepared, err);
    if (rv != APR_SUCCESS) return rv;
    db->driver = conn->driver;
    db->handle = conn->handle;
    db->prepared = conn->prepared;
    db->pg = strcmp(apr_dbd_name(conn->driver), "pgsql") == 0;
    return APR_SUCCESS;
}

/* Connections are taken from mod_dbd only when core first needs storage. */
static int acquire(as_db *db)
{
    request_rec *r = db->log_baton;
    ap_dbd_t *conn = dbd_acquire(r);
    if (!conn) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      "no database connection from mod_dbd (check DBDriver/DBDParams)");
        return -1;
    }
    const char *err = NULL;
    if (conn_attach(db, conn, &err) != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "database set-up failed: %s", err);
        return -1;
    }
    if (write_mutex) {
        db->lock = write_lock;
        db->unlock = write_unlock;
    }
    apr_pool_cleanup_register(r->pool, db, request_done, apr_pool_cleanup_null);
    return 0;
}

/* The raw (still percent-encoded) path below the handler's location. */
static const char *api_path(request_rec *r, const dir_cfg *c)
{
    const char *raw = r->unparsed_uri && r->unparsed_uri[0] == '/'
                          ? r->unparsed_uri
                          : ap_os_escape_path(r->pool, r->uri, 0);
    return agentshop_below(apr_pstrndup(r->pool, raw, strcspn(raw, "?#")), c->use.base);
}

/* The host a link may name: the one the request asked for only when it is
 * one of the virtual host's configured names (ServerName, a ServerAlias
 * without wildcards), else its ServerName. Never whatever a client put in
 * Host: a link is read by a person, and MCP's own origin comes from it. */
static const char *vhost_name(request_rec *r)
{
    server_rec *s = r->server;
    const char *asked = r->hostname;
    if (asked && s->server_hostname && strcasecmp(asked, s->server_hostname) == 0) return asked;
    for (int i = 0; asked && s->names && i < s->names->nelts; i++)
        if (strcasecmp(asked, APR_ARRAY_IDX(s->names, i, const char *)) == 0) return asked;
    return s->server_hostname ? s->server_hostname : "localhost";
}

/* Where links point: AgentShopBaseURL, else this request's scheme, host and base. */
static const char *base_url(request_rec *r, const dir_cfg *c)
{
    if (c->base_url) return c->base_url;
    const char *scheme = ap_http_scheme(r);
    const char *host = vhost_name(r);
    apr_port_t port = r->connection->local_addr ? r->connection->local_addr->port : 0;
    bool usual = port == 0 || (port == 80 && strcmp(scheme, "http") == 0) ||
                 (port == 443 && strcmp(scheme, "https") == 0);
    return apr_psprintf(r->pool, "%s://%s%s%s%s%s", scheme, strchr(host, ':') ? "[" : "", host,
                        strchr(host, ':') ? "]" : "",
                        usual ? "" : apr_psprintf(r->pool, ":%u", (unsigned)port), c->use.base);
}

/* The note that keeps a request's real query string when the one httpd logs
 * was masked (mask_tokens). */
static const char *const QUERY_NOTE = "agentshop-query";
#define TOKEN_MASK "[masked]"

/* s with the value of every `token=` parameter (at the start, or after '?',
 * '&' or ';') replaced by TOKEN_MASK, up to '&', ';', '#', a space or the
 * end; NULL when s has none. */
static const char *token_masked(apr_pool_t *p, const char *s)
{
    if (!s || !strstr(s, "token=")) return NULL;
    size_t n = strlen(s);
    char *out = apr_palloc(p, n + 1 + (n / 6 + 1) * (sizeof(TOKEN_MASK) - 1));
    char *o = out;
    bool any = false;
    for (size_t i = 0; i < n;) {
        bool starts = strncmp(s + i, "token=", 6) == 0 && (i == 0 || strchr("?&;", s[i - 1]));
        if (!starts) {
            *o++ = s[i++];
            continue;
        }
        memcpy(o, "token=" TOKEN_MASK, 6 + sizeof(TOKEN_MASK) - 1);
        o += 6 + sizeof(TOKEN_MASK) - 1;
        i += 6;
        while (i < n && !strchr("&;# ", s[i]))
            i++;
        any = true;
    }
    *o = '\0';
    return any ? out : NULL;
}

/* A confirmation link's token must reach no access log, whatever its format:
 * the request line (%r), the query (%q, %{QUERY_STRING}e), the URL in a
 * Referer (the page's own POST comes from the link). The handler reads the
 * real query from a note; what httpd keeps and logs is masked. */
static void mask_tokens(request_rec *r)
{
    const char *args = token_masked(r->pool, r->args);
    if (args) {
        apr_table_setn(r->notes, QUERY_NOTE, r->args);
        r->args = (char *)args;
        r->parsed_uri.query = (char *)args;
    }
    const char *line = token_masked(r->pool, r->the_request);
    if (line) r->the_request = (char *)line;
    const char *uri = token_masked(r->pool, r->unparsed_uri);
    if (uri) r->unparsed_uri = (char *)uri;
    const char *ref = token_masked(r->pool, apr_table_get(r->headers_in, "Referer"));
    if (ref) apr_table_setn(r->headers_in, "Referer", ref);
}

/* The query string the client sent. */
static const char *api_query(request_rec *r)
{
    const char *q = apr_table_get(r->notes, QUERY_NOTE);
    return q ? q : r->args;
}

/* A request under an API base is not mapped to the file system, as mod_proxy
 * does for the locations it serves: http_core's map_to_storage (the walk of
 * <Directory> sections and .htaccess files, a stat() per path component)
 * does nothing for the handler and cost a tenth of a product view. So
 * <Directory> rules do not apply under the base; its <Location> does
 * (docs/deploy.md). And TRACE, which http_core would answer by echoing the
 * request back, the agent key in Authorization included, goes to the handler
 * too, which refuses it (405 METHOD_NOT_ALLOWED) like any method the API does
 * not serve. */
static int api_map_to_storage(request_rec *r)
{
    return r->uri && agentshop_base_of(r->uri) ? OK : DECLINED;
}

static int post_read_request(request_rec *r)
{
    const char *path = r->unparsed_uri;
    if (!path || path[0] != '/') return DECLINED;
    const char *base = agentshop_base_of(path);
    if (!base) return DECLINED;
    mask_tokens(r);
    const char *target = apr_pstrcat(r->pool, base, "/.error", NULL);
    static const int codes[] = {400, 401, 403, 404, 405, 408, 411,
                                413, 414, 415, 431, 500, 501, 503};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        ap_custom_response(r, codes[i], target);
    return DECLINED;
}

/* At most once a second per process (threads of a worker MPM race for it):
 * this request first expires what ran out of time, whoever it belongs to. */
static bool sweep_due(srv_cfg *sc, apr_int64_t now)
{
    apr_uint32_t sec = (apr_uint32_t)now;
    apr_uint32_t last = apr_atomic_read32(&sc->sweep_sec);
    return last != sec && apr_atomic_cas32(&sc->sweep_sec, sec, last) == last;
}

/* The glue's own refusals of a confirmation link (the rate limit, a path or
 * body httpd would not take): a person's browser gets them as a page too;
 * core decides. from: the request as the client sent it. */
static void person_error(request_rec *from, const dir_cfg *c, as_mem *mem, as_response *resp)
{
    as_request req = {
        .method = from->method,
        .path = api_path(from, c),
        .query = api_query(from),
        .accept = apr_table_get(from->headers_in, "Accept"),
        .base_url = base_url(from, c),
    };
    as_person_error(mem, &req, resp);
}

/* The request's store: a connection from mod_dbd when core first needs one
 * (acquire), given back with the request's pool. */
static as_store request_store(req_ctx *rc, const dir_cfg *c, const srv_cfg *sc)
{
    request_rec *r = rc->r;
    rc->db.pool = r->pool;
    rc->db.log = db_log;
    rc->db.log_baton = r;
    rc->db.acquire = acquire;
    rc->db.rank = as_rank_best;
    rc->db.write_wait = c->use.write_wait;
    rc->db.versions = sc->versions;
    rc->db.versions_max_age =
        sc->versions_max_age != UNSET ? sc->versions_max_age : AS_VERSIONS_MAX_AGE_MS;
    return as_db_store(&rc->db);
}

static int agentshop_handler(request_rec *r)
{
    if (!r->handler || strcmp(r->handler, "agentshop") != 0) return DECLINED;
    const dir_cfg *c = ap_get_module_config(r->per_dir_config, &agentshop_module);
    srv_cfg *sc = ap_get_module_config(r->server->module_config, &agentshop_module);
    if (!c->location) {
        /* no AgentShop directive in the request's <Location> (SetHandler
         * alone, the directives at the server's level): its base is the
         * location's path, which the tree gave at start-up */
        const char *base = agentshop_base_of(r->uri);
        if (base && strcmp(base, c->use.base) != 0) {
            dir_cfg *own = apr_pmemdup(r->pool, c, sizeof(*c));
            own->use.base = base;
            c = own;
        }
    }

    req_ctx *rc = apr_pcalloc(r->pool, sizeof(*rc)); /* outlives the handler: cleanups */
    rc->r = r;
    as_mem mem = as_db_pool_mem(r->pool);
    /* the location's settings, resolved at start-up or merge, with this
     * process's caches (made in child_init) */
    as_config cfg = c->use.core;
    cfg.product_views = sc->views;
    cfg.search_ids = sc->search_ids;
    cfg.search_pages = sc->search_pages;
    as_store store = request_store(rc, c, sc);
    as_shop shop = {&mem,
                  &store,
                  &cfg,
                  apr_time_sec(r->request_time),
                  core_log,
                  r,
                  sc->index,
                  sweep_due(sc, apr_time_sec(r->request_time)),
                  sc->notify ? notify_write : NULL,
                  r};
    as_response resp = {0};

    /* An error httpd raised inside our location arrives here via ErrorDocument. */
    if (r->prev && apr_table_get(r->subprocess_env, "REDIRECT_STATUS")) {
        /* Inside a location httpd refuses only the path with 400: a bad escape. */
        as_respond_http_refusal(&resp, r->prev->status, "path");
        person_error(r->prev, c, &mem, &resp);
        return agentshop_write_response(r, &resp);
    }
    if (agentshop_rate_refused(r, c, &resp)) {
        person_error(r, c, &mem, &resp);
        return agentshop_write_response(r, &resp);
    }
    const char *path = api_path(r, c);
    if (!path) {
        as_respond_http_status(&resp, HTTP_NOT_FOUND);
        return agentshop_write_response(r, &resp);
    }
    as_request req = {
        .method = r->method,
        .path = path,
        .query = api_query(r),
        .content_type = apr_table_get(r->headers_in, "Content-Type"),
        .accept = apr_table_get(r->headers_in, "Accept"),
        .authorization = apr_table_get(r->headers_in, "Authorization"),
        .service_agent = apr_table_get(r->headers_in, "Service-Agent"),
        .idempotency_key = apr_table_get(r->headers_in, "Idempotency-Key"),
        .if_none_match = apr_table_get(r->headers_in, "If-None-Match"),
        .cors_method = apr_table_get(r->headers_in, "Access-Control-Request-Method"),
        .cors_headers = apr_table_get(r->headers_in, "Access-Control-Request-Headers"),
        .origin = apr_table_get(r->headers_in, "Origin"),
        .mcp_protocol_version = apr_table_get(r->headers_in, "MCP-Protocol-Version"),
        .base_url = base_url(r, c),
    };
    if (r->method_number == M_POST) {
        int rb = agentshop_read_body(r, &req.body, &req.body_len);
        if (rb != OK) {
            as_respond_http_refusal(&resp, rb, "body");
            as_person_error(&mem, &req, &resp);
            return agentshop_write_response(r, &resp);
        }
    }
    as_handle(&shop, &req, &resp);
    return agentshop_write_response(r, &resp);
}

static void register_hooks(apr_pool_t *p)
{
    (void)p;
    static const char *const after_dbd[] = {"mod_dbd.c", NULL};
    ap_hook_pre_config(pre_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_config(post_config, NULL, after_dbd, APR_HOOK_MIDDLE);
    ap_hook_post_read_request(post_read_request, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_map_to_storage(api_map_to_storage, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_child_init(child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_insert_error_filter(agentshop_insert_error_filter, NULL, NULL, APR_HOOK_MIDDLE);
    ap_register_output_filter(AGENTSHOP_JSON_ERROR_FILTER, agentshop_json_error_filter, NULL,
                              AP_FTYPE_CONTENT_SET);
    ap_hook_handler(agentshop_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(agentshop) = {STANDARD20_MODULE_STUFF,
                                agentshop_create_dir_cfg,
                                agentshop_merge_dir_cfg,
                                agentshop_create_srv_cfg,
                                agentshop_merge_srv_cfg,
                                agentshop_cmds,
                                register_hooks,
#if defined(AP_MODULE_FLAG_ALWAYS_MERGE)
                                AP_MODULE_FLAG_ALWAYS_MERGE
#endif
};
