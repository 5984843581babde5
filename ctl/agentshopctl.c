/* bin/agentshopctl: the admin tool. Each command prints one JSON object on stdout
 * and exits 0, or prints a clear error on stderr and exits non-zero. */
#include <apr_general.h>
#include <apr_strings.h>
#include <errno.h>
#include <grp.h>
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "as_db.h"
#include "as_load.h"

#ifndef AS_DATADIR
#define AS_DATADIR "sql/demo"
#endif

typedef struct opts {
    const char *driver, *params, *data;
    int argc;
    char **argv; /* the command and its arguments */
} opts;

static int die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "agentshopctl: ");
    fprintf(stderr, fmt, a ? a : "", b ? b : "");
    fputc('\n', stderr);
    return 1;
}

static void log_stderr(void *baton, const char *msg)
{
    (void)baton;
    fprintf(stderr, "agentshopctl: %s\n", msg);
}

static int print_json(json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    puts(s);
    free(s);
    json_decref(o);
    return 0;
}

/* Run by root against an SQLite file httpd uses, become the file's owner (or the
 * directory's, for a new file) so that the database, -wal and -shm stay
 * writable by the httpd user. */
static int drop_to_owner(const opts *o, apr_pool_t *p)
{
    if (geteuid() != 0 || strcmp(o->driver, "sqlite3") != 0) return 0;
    struct stat st;
    const char *path = o->params;
    if (stat(path, &st) != 0) {
        char *dir = dirname(apr_pstrdup(p, path));
        if (stat(dir, &st) != 0) return die("cannot see the database directory %s%s", dir, NULL);
    }
    if (st.st_uid == 0) return 0;
    if (setgroups(0, NULL) != 0 || setgid(st.st_gid) != 0 || setuid(st.st_uid) != 0)
        return die("cannot switch to the owner of %s: %s", path, strerror(errno));
    return 0;
}

static int open_db(const opts *o, apr_pool_t *p, as_db *db)
{
    const char *err = NULL;
    if (drop_to_owner(o, p)) return 1;
    if (as_db_open(p, o->driver, o->params, db, &err) != APR_SUCCESS)
        return die("%s%s", err, NULL);
    db->log = log_stderr;
    return 0;
}

static int prepare(as_db *db)
{
    const char *err = NULL;
    if (as_db_conn_init(db->pool, db->driver, db->handle, db->prepared, &err) != APR_SUCCESS)
        return die("%s%s", err, NULL);
    return 0;
}

static int cmd_init(const opts *o, apr_pool_t *p)
{
    int demo = 0;
    for (int i = 1; i < o->argc; i++) {
        if (strcmp(o->argv[i], "--demo") == 0)
            demo = 1;
        else
            return die("init: unknown option '%s' (usage: init [--demo])", o->argv[i], NULL);
    }
    as_db db;
    if (open_db(o, p, &db)) return 1;
    const char *err = NULL;
    if (as_db_exec_script(&db, as_db_schema(db.pg), &err) != APR_SUCCESS)
        return die("creating the schema failed: %s%s", err, NULL);
    if (prepare(&db)) return 1;
    json_t *out = json_pack("{s:s, s:s, s:b}", "driver", o->driver, "database", o->params,
                            "schema", 1);
    if (demo) {
        json_t *summary = NULL;
        if (as_load_catalogue(&db, o->data, &summary, &err) != APR_SUCCESS) {
            json_decref(out);
            return die("loading the demo catalogue from %s failed: %s", o->data, err);
        }
        json_object_set_new(out, "catalogue", summary);
    }
    as_db_close(&db);
    return print_json(out);
}

static void usage(FILE *f)
{
    fputs("usage: agentshopctl [--driver sqlite3|pgsql] [--params STR] [--data DIR] COMMAND\n"
          "  init [--demo]     create the schema (idempotent); --demo loads the demo catalogue\n"
          "options:\n"
          "  --driver   apr_dbd driver (default sqlite3)\n"
          "  --params   the DBDParams string (default var/agentshop.db)\n"
          "  --data     catalogue data directory (default " AS_DATADIR ")\n",
          f);
}

int main(int argc, char **argv)
{
    opts o = {"sqlite3", "var/agentshop.db", AS_DATADIR, 0, NULL};
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) return die("option %s needs a value%s", argv[i], NULL);
        if (strcmp(argv[i], "--driver") == 0)
            o.driver = argv[++i];
        else if (strcmp(argv[i], "--params") == 0)
            o.params = argv[++i];
        else if (strcmp(argv[i], "--data") == 0)
            o.data = argv[++i];
        else
            return die("unknown option '%s'%s", argv[i], NULL);
    }
    if (strcmp(o.driver, "sqlite3") != 0 && strcmp(o.driver, "pgsql") != 0)
        return die("--driver must be sqlite3 or pgsql, not '%s'%s", o.driver, NULL);
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    o.argc = argc - i;
    o.argv = argv + i;

    apr_pool_t *p;
    apr_app_initialize(&argc, (const char *const **)&argv, NULL);
    apr_pool_create(&p, NULL);
    int rc;
    if (strcmp(o.argv[0], "init") == 0)
        rc = cmd_init(&o, p);
    else
        rc = die("unknown command '%s' (see --help)%s", o.argv[0], NULL);
    apr_pool_destroy(p);
    apr_terminate();
    return rc;
}
