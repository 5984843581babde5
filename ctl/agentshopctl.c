/* bin/agentshopctl: the admin tool. Each command prints one JSON object on stdout
 * (a list of ctl/ctl_ops.c: JSON Lines, one object a line) and exits 0, or
 * prints a clear error on stderr and exits non-zero. */
#include <apr_file_io.h>
#include <apr_general.h>
#include <apr_strings.h>
#include <time.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <openssl/rand.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "as_buy_view.h"
#include "as_crypto.h"
#include "as_rank.h"
#include "as_staff.h"
#include "as_db.h"
#include "as_db_ops.h"
#include "as_util.h"
#include "as_validate.h"
#include "ctl_catalogue.h"
#include "ctl_common.h"
#include "ctl_generate.h"
#include "ctl_ops.h"

/* Where the tool looks by default, set by the Makefile: relative paths are
 * taken from the executable's directory (bin/ of a checkout), never from the
 * current directory; the installed tool has absolute ones. */
#ifndef AS_DATADIR
#define AS_DATADIR "../sql/demo"
#endif
#ifndef AS_DEFAULT_DB
#define AS_DEFAULT_DB "../var/agentshop.db"
#endif
#ifndef AS_SIGNING_KEY
#define AS_SIGNING_KEY "../var/signing.key"
#endif

/* A compiled-in default: absolute as it is, relative from the executable's
 * directory ("../var" of bin/agentshopctl is the checkout's var/). */
static const char *beside_exe(apr_pool_t *p, const char *path)
{
    if (path[0] == '/') return path;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) return path; /* no /proc: the best left is the path as given */
    exe[n] = '\0';
    char *dir = apr_pstrdup(p, dirname(exe));
    while (strncmp(path, "../", 3) == 0 && strcmp(dir, "/") != 0) {
        dir = apr_pstrdup(p, dirname(dir));
        path += 3;
    }
    return apr_pstrcat(p, strcmp(dir, "/") == 0 ? "" : dir, "/", path, NULL);
}

static int rebuild_derived(as_db *db)
{
    const char *err = NULL;
    /* A database from before the search order table, or one changed behind the
     * loader's back: build the table again from the catalogue. */
    int stale = as_db_rank_stale(db);
    if (stale < 0) return die("reading the search order table failed%s%s", "", NULL);
    if (stale) {
        apr_dbd_transaction_t *t = NULL;
        int ok = as_db_begin_t(db, &t) == 0 && as_db_rank_rebuild(db, &err) == APR_SUCCESS;
        if (as_db_end_t(db, t, ok) != 0 || !ok)
            return die("building the search order table failed: %s%s", err ? err : "", NULL);
    }
    /* A database from before the mandates' running totals, or one whose orders
     * changed without the triggers: sum the orders again. */
    if ((stale = as_db_spent_stale(db)) < 0)
        return die("reading the mandates' running totals failed%s%s", "", NULL);
    if (stale) {
        apr_dbd_transaction_t *t = NULL;
        int ok = as_db_begin_t(db, &t) == 0 && as_db_spent_rebuild(db) == APR_SUCCESS;
        if (as_db_end_t(db, t, ok) != 0 || !ok)
            return die("summing the mandates' orders failed%s%s", "", NULL);
    }
    return 0;
}

/* What init does after opening: the schema created or migrated, then the
 * tables derived from others checked. *out says from which version to which. */
static int init_schema(const opts *o, as_db *db, json_t **out)
{
    const char *err = NULL;
    int from = 0;
    apr_status_t rv = as_db_migrate(db, &from, &err);
    if (rv == APR_EINVAL) return die("%s: %s", o->params, err);
    if (rv != APR_SUCCESS)
        return die(from ? "migrating the schema of %s failed: %s"
                        : "creating the schema in %s failed: %s",
                   o->params, err);
    if (prepare(db)) return 1;
    if (rebuild_derived(db)) return 1;
    *out = json_pack("{s:o, s:i, s:s}", "from", from ? json_integer(from) : json_null(), "to",
                     AS_SCHEMA_VERSION, "action",
                     !from                      ? "created"
                     : from < AS_SCHEMA_VERSION ? "migrated"
                                                : "current");
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
    /* The demo file is opened first: run by root, open_db becomes the
     * database's owner, who may not reach it. */
    FILE *in = NULL;
    const char *path = apr_psprintf(p, "%s/catalogue.jsonl", o->data);
    if (demo && !(in = fopen(path, "r")))
        return die("init --demo: cannot read the demo catalogue %s: %s", path, strerror(errno));
    as_db db;
    json_t *schema = NULL;
    if (open_db(o, p, &db) || init_schema(o, &db, &schema)) {
        if (in) fclose(in);
        return 1;
    }
    json_t *out =
        json_pack("{s:s, s:s, s:o}", "driver", o->driver, "database", o->params, "schema", schema);
    if (demo) {
        json_t *summary = NULL;
        int rc = ctl_demo_load(o, &db, in, &summary);
        fclose(in);
        if (rc) {
            json_decref(out);
            return 1;
        }
        json_object_set_new(out, "catalogue", summary);
    }
    as_db_close(&db);
    return print_json(out);
}

/* ---- setup: an installed system prepared, as root ---- */

/* The signing secret: 32 random bytes as 64 hex characters, root's alone.
 * An existing non-empty file is kept. */
static int signing_key(const char *path, json_t **out)
{
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size > 0) {
        *out = json_pack("{s:s, s:b}", "path", path, "created", 0);
        return 0;
    }
    unsigned char raw[32];
    char hex[65];
    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return die("setup: cannot get random bytes for the signing secret %s%s", path, NULL);
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
    int ok = fd >= 0 && fchown(fd, 0, 0) == 0 && fchmod(fd, 0600) == 0 &&
             write(fd, hex, 64) == 64 && fsync(fd) == 0;
    int saved = errno;
    if (fd >= 0) close(fd);
    if (!ok) return die("setup: cannot write the signing secret %s: %s", path, strerror(saved));
    *out = json_pack("{s:s, s:b}", "path", path, "created", 1);
    return 0;
}

/* The database's directory, USER's, mode 0750, when it is missing. */
static int state_dir(const char *dir, const struct passwd *pw, json_t **out)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) return die("setup: %s is not a directory%s", dir, NULL);
        *out = json_pack("{s:s, s:b}", "path", dir, "created", 0);
        return 0;
    }
    char *parent = dirname(strdup(dir));
    apr_pool_t *p;
    apr_pool_create(&p, NULL);
    apr_status_t rv = apr_dir_make_recursive(parent, APR_FPROT_OS_DEFAULT, p);
    apr_pool_destroy(p);
    free(parent);
    if (rv != APR_SUCCESS || mkdir(dir, 0750) != 0 || chown(dir, pw->pw_uid, pw->pw_gid) != 0 ||
        chmod(dir, 0750) != 0)
        return die("setup: cannot create the directory %s: %s", dir, strerror(errno));
    *out = json_pack("{s:s, s:b}", "path", dir, "created", 1);
    return 0;
}

static int become(const struct passwd *pw)
{
    if (initgroups(pw->pw_name, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 ||
        setuid(pw->pw_uid) != 0)
        return die("setup: cannot switch to the user %s: %s", pw->pw_name, strerror(errno));
    return 0;
}

static int cmd_setup(const opts *o, apr_pool_t *p)
{
    const char *usage_line = "setup [--user USER] [--signing-key FILE]";
    static const char *const names[] = {"--user", "--signing-key", NULL};
    if (only_opts(o, 1, names, usage_line)) return 1;
    const char *user = opt(o, 1, "--user"), *key = opt(o, 1, "--signing-key");
    if (!user) user = "www-data";
    if (!key) key = o->signing_key;
    if (geteuid() != 0)
        return die("setup prepares an installed system and must run as root (it creates the "
                   "signing secret and gives the database to the httpd user); as another user, "
                   "use: agentshopctl --params FILE init%s%s",
                   NULL, NULL);
    struct passwd *found = getpwnam(user);
    if (!found)
        return die("setup: there is no user '%s' (--user USER: the user httpd's children run as)",
                   user, NULL);
    struct passwd pw = *found;
    pw.pw_name = apr_pstrdup(p, found->pw_name);
    json_t *dir = NULL, *secret = NULL, *schema = NULL;
    if (is_sqlite(o) && state_dir(dirname(apr_pstrdup(p, o->params)), &pw, &dir)) return 1;
    if (signing_key(key, &secret)) {
        json_decref(dir);
        return 1;
    }
    as_db db;
    const char *err = NULL;
    int bad = is_sqlite(o) && become(&pw);
    const char *dpath = dirname(apr_pstrdup(p, o->params));
    if (!bad && is_sqlite(o) && access(dpath, W_OK | X_OK) != 0)
        bad = die("setup: the user %s cannot write the database's directory %s; give it to "
                  "that user (chown %s DIR), or remove it and run setup again",
                  pw.pw_name, dpath);
    if (!bad && as_db_open(p, o->driver, o->params, &db, &err) != APR_SUCCESS)
        bad = die("%s%s", err, NULL);
    if (!bad) {
        db.log = log_stderr;
        db.rank = as_rank_best;
        bad = init_schema(o, &db, &schema);
    }
    if (bad) {
        json_decref(dir);
        json_decref(secret);
        return 1;
    }
    as_db_close(&db);
    json_t *out = json_pack("{s:s, s:s, s:o, s:o}", "driver", o->driver, "database", o->params,
                            "signing_key", secret, "schema", schema);
    if (dir) {
        json_object_set_new(out, "user", json_string(pw.pw_name));
        json_object_set_new(out, "directory", dir);
    }
    return print_json(out);
}

static const char *now_iso(as_mem *m)
{
    return as_time_format(m, (int64_t)time(NULL));
}

/* ---- key create | revoke | list ---- */

static void key_json(void *baton, const as_ops_key *k)
{
    json_array_append_new(baton, json_pack("{s:s, s:s, s:s, s:o}", "id", k->id, "user",
                                           k->user_id, "created_at", k->created_at, "revoked_at",
                                           str_or_null(k->revoked_at)));
}

static int cmd_key(const opts *o, apr_pool_t *p)
{
    as_mem m = as_db_pool_mem(p);
    const char *sub = o->argc > 1 ? o->argv[1] : "";
    as_db db;
    if (strcmp(sub, "create") == 0) {
        static const char *const names[] = {"--user", NULL};
        if (only_opts(o, 2, names, "key create --user USER")) return 1;
        const char *user = opt(o, 2, "--user");
        if (!user) return die("key create: --user USER is required%s%s", NULL, NULL);
        if (!user_ok(user))
            return die("key create: user '%s' must be 1 to 64 letters, digits or ._@-%s", user,
                       NULL);
        if (ready(o, p, &db)) return 1;
        const char *key =
            as_printf(&m, "%s_sk_test_%s", o->key_prefix, as_random_id(&m, "", 32, true));
        const char *id = as_random_id(&m, "key_", 16, false);
        as_ops_key k = {id, user, now_iso(&m), NULL};
        if (as_db_ops_key_insert(&db, &k, as_sha256_hex(&m, key, strlen(key))) != AS_OK)
            return die("key create failed%s%s", NULL, NULL);
        as_db_close(&db);
        return print_json(json_pack("{s:s, s:s, s:s}", "id", id, "key", key, "user", user));
    }
    if (strcmp(sub, "revoke") == 0) {
        if (o->argc != 3) return die("usage: key revoke ID%s%s", NULL, NULL);
        if (ready(o, p, &db)) return 1;
        const char *id = o->argv[2];
        as_ops_key k;
        int rc = as_db_ops_key_get(&db, id, &k);
        if (rc == AS_ENOTFOUND) return die("key revoke: there is no key '%s'%s", id, NULL);
        if (rc != AS_OK) return die("key revoke failed%s%s", NULL, NULL);
        if (!k.revoked_at) {
            k.revoked_at = now_iso(&m);
            if (as_db_ops_key_revoke(&db, id, k.revoked_at) != AS_OK)
                return die("key revoke failed%s%s", NULL, NULL);
        }
        as_db_close(&db);
        return print_json(
            json_pack("{s:s, s:s, s:s}", "id", id, "user", k.user_id, "revoked_at", k.revoked_at));
    }
    if (strcmp(sub, "list") == 0) {
        static const char *const names[] = {"--user", NULL};
        if (only_opts(o, 2, names, "key list [--user USER]")) return 1;
        const char *user = opt(o, 2, "--user");
        if (ready(o, p, &db)) return 1;
        json_t *keys = json_array();
        if (as_db_ops_keys(&db, user, key_json, keys) != AS_OK) {
            json_decref(keys);
            return die("key list failed%s%s", NULL, NULL);
        }
        as_db_close(&db);
        return print_json(json_pack("{s:o}", "keys", keys));
    }
    return die("usage: key create --user USER | key revoke ID | key list [--user USER]%s%s", NULL,
               NULL);
}

/* ---- mandate create | revoke | list ---- */

static int amount(const char *name, const char *v, int allow_zero, int64_t *cents)
{
    if (!v) return die("mandate create: %s is required%s", name, NULL);
    if (v[0] == '-') return die("mandate create: %s must not be negative (got %s)", name, v);
    if (!as_eur_parse_cents(v, 100000000, cents))
        return die("mandate create: %s must be an amount in euros such as 250 or 99.95, not "
                   "'%s'",
                   name, v);
    if (!allow_zero && *cents == 0) return die("mandate create: %s must be above 0%s", name, NULL);
    return 0;
}

static int mandate_create(const opts *o, apr_pool_t *p)
{
    as_mem m = as_db_pool_mem(p);
    static const char *const names[] = {"--user",
                                        "--categories",
                                        "--per-order-eur",
                                        "--monthly-eur",
                                        "--confirm-above-eur",
                                        "--valid-until",
                                        NULL};
    const char *usage_line = "mandate create --user USER --categories a,b --per-order-eur N "
                             "--monthly-eur N --confirm-above-eur N [--valid-until yyyy-mm-dd]";
    if (only_opts(o, 2, names, usage_line)) return 1;
    const char *user = opt(o, 2, "--user"), *cats = opt(o, 2, "--categories");
    const char *until = opt(o, 2, "--valid-until");
    if (!user || !user_ok(user))
        return die("mandate create: --user USER is required (1 to 64 letters, digits or ._@-)%s%s",
                   NULL, NULL);
    if (!cats || !*cats)
        return die("mandate create: --categories is required (usage: %s)%s", usage_line, NULL);
    char *copy = apr_pstrdup(p, cats), *save = NULL;
    for (char *c = apr_strtok(copy, ",", &save); c; c = apr_strtok(NULL, ",", &save))
        if (!as_category_label(c)) {
            const char *known = "";
            for (size_t i = 0; as_category_ids[i]; i++)
                known = apr_pstrcat(p, known, i ? ", " : "", as_category_ids[i], NULL);
            return die("mandate create: unknown category '%s'; the categories are: %s", c, known);
        }
    if (strstr(cats, ",,") || cats[0] == ',' || cats[strlen(cats) - 1] == ',')
        return die("mandate create: --categories '%s' has an empty entry%s", cats, NULL);
    int64_t per_order, monthly, confirm;
    if (amount("--per-order-eur", opt(o, 2, "--per-order-eur"), 0, &per_order) ||
        amount("--monthly-eur", opt(o, 2, "--monthly-eur"), 0, &monthly) ||
        amount("--confirm-above-eur", opt(o, 2, "--confirm-above-eur"), 1, &confirm))
        return 1;
    if (confirm > per_order)
        return die("mandate create: --confirm-above-eur %s is above --per-order-eur %s; an "
                   "order above the per-order limit is refused anyway",
                   opt(o, 2, "--confirm-above-eur"), opt(o, 2, "--per-order-eur"));
    int64_t day;
    if (until && !as_date_parse(until, &day))
        return die("mandate create: --valid-until must be a date yyyy-mm-dd, not '%s'%s", until,
                   NULL);
    if (until && day < (int64_t)time(NULL) / 86400)
        return die("mandate create: --valid-until %s is in the past%s", until, NULL);
    as_db db;
    if (ready(o, p, &db)) return 1;
    as_store st = as_db_store(&db);
    as_mandate cur;
    if (as_store_mandate_current(&st, &m, user, false, &cur) == AS_OK)
        return die("mandate create: user '%s' already has the active mandate %s; revoke it "
                   "first (mandate revoke ID)",
                   user, cur.id);
    as_mandate md = {as_random_id(&m, "mdt_", 16, false),
                     user,
                     AS_MS_ACTIVE,
                     cats,
                     per_order,
                     monthly,
                     confirm,
                     until,
                     now_iso(&m)};
    if (as_db_ops_mandate_insert(&db, &md) != AS_OK)
        return die("mandate create failed%s%s", NULL, NULL);
    as_db_close(&db);
    return print_json(mandate_json(&md));
}

static void mandate_listed(void *baton, const as_mandate *md)
{
    json_array_append_new(baton, mandate_json(md));
}

static int cmd_mandate(const opts *o, apr_pool_t *p)
{
    as_mem m = as_db_pool_mem(p);
    const char *sub = o->argc > 1 ? o->argv[1] : "";
    as_db db;
    if (strcmp(sub, "create") == 0) return mandate_create(o, p);
    if (strcmp(sub, "show") == 0) return ctl_mandate_show(o, p);
    if (strcmp(sub, "revoke") == 0) {
        if (o->argc != 3) return die("usage: mandate revoke ID%s%s", NULL, NULL);
        if (ready(o, p, &db)) return 1;
        as_store st = as_db_store(&db);
        as_mandate md;
        if (as_store_mandate_get(&st, &m, o->argv[2], false, &md) != AS_OK)
            return die("mandate revoke: there is no mandate '%s'%s", o->argv[2], NULL);
        if (as_db_ops_mandate_revoke(&db, md.id, now_iso(&m)) != AS_OK)
            return die("mandate revoke failed%s%s", NULL, NULL);
        as_store_mandate_get(&st, &m, o->argv[2], false, &md);
        as_db_close(&db);
        return print_json(mandate_json(&md));
    }
    if (strcmp(sub, "list") == 0) {
        static const char *const names[] = {"--user", NULL};
        if (only_opts(o, 2, names, "mandate list [--user USER]")) return 1;
        const char *user = opt(o, 2, "--user");
        if (ready(o, p, &db)) return 1;
        json_t *list = json_array();
        if (as_db_ops_mandates(&db, user, mandate_listed, list) != AS_OK) {
            json_decref(list);
            return die("mandate list failed%s%s", NULL, NULL);
        }
        as_db_close(&db);
        return print_json(json_pack("{s:o}", "mandates", list));
    }
    return die("usage: mandate create ... | mandate revoke ID | mandate list [--user USER] | "
               "mandate show ID%s%s",
               NULL, NULL);
}

/* ---- catalogue generate: a synthetic catalogue for scale tests ---- */

static int cmd_catalogue(const opts *o, apr_pool_t *p)
{
    const char *usage_line = "catalogue generate --products N [--seed S] | catalogue import "
                             "FILE|- [--dry-run] | catalogue export [FILE|-]";
    if (o->argc >= 2 && (strcmp(o->argv[1], "import") == 0 || strcmp(o->argv[1], "export") == 0))
        return ctl_catalogue_feed(o, p);
    if (o->argc < 2 || strcmp(o->argv[1], "generate") != 0)
        return die("usage: %s%s", usage_line, NULL);
    static const char *const names[] = {"--products", "--seed", NULL};
    if (only_opts(o, 2, names, usage_line)) return 1;
    const char *ns = opt(o, 2, "--products"), *ss = opt(o, 2, "--seed");
    int64_t n, seed = 1;
    if (!ns || !as_int_parse(ns, 1, 10000000, &n))
        return die("catalogue generate: --products must be a whole number from 1 to 10000000 "
                   "(usage: %s)%s",
                   usage_line, NULL);
    if (ss && !as_int_parse(ss, 1, INT64_MAX, &seed))
        return die("catalogue generate: --seed must be a positive whole number, not '%s'%s", ss,
                   NULL);
    as_db db;
    if (ready(o, p, &db)) return 1;
    json_t *summary = NULL;
    const char *err = NULL;
    if (ctl_generate_catalogue(&db, n, (apr_uint64_t)seed, &summary, &err) != APR_SUCCESS)
        return die("catalogue generate: %s%s", err, NULL);
    as_db_close(&db);
    return print_json(summary);
}

/* ---- order ship | deliver: moving a demo order on by hand ---- */

static void ctl_log(void *baton, int level, const char *msg)
{
    (void)baton;
    (void)level;
    fprintf(stderr, "agentshopctl: %s\n", msg);
}

/* ---- user enrol | user passkeys ---- */

/* A one-time enrolment link for the person behind USER's mandates, which the
 * operator hands to that person (never to an agent): on it they register a
 * passkey, which approving orders above the threshold then needs. */
static int cmd_user(const opts *o, apr_pool_t *p)
{
    as_mem m = as_db_pool_mem(p);
    const char *sub = o->argc > 1 ? o->argv[1] : "";
    const char *usage_line =
        "user enrol USER [--base-url URL] [--hours N] | user passkeys USER | user list";
    if (strcmp(sub, "list") == 0) return ctl_user_list(o, p);
    if (o->argc < 3 || (strcmp(sub, "enrol") != 0 && strcmp(sub, "passkeys") != 0))
        return die("usage: %s%s", usage_line, NULL);
    const char *user = o->argv[2];
    if (!user_ok(user))
        return die("user: '%s' must be 1 to 64 letters, digits or ._@-%s", user, NULL);
    as_db db;
    if (strcmp(sub, "passkeys") == 0) {
        if (o->argc != 3) return die("usage: %s%s", usage_line, NULL);
        if (ready(o, p, &db)) return 1;
        as_store st = as_db_store(&db);
        as_passkey *keys;
        size_t n = 0;
        if (as_store_passkeys_of(&st, &m, user, &keys, &n) != AS_OK)
            return die("user passkeys failed%s%s", NULL, NULL);
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(
                a, json_pack("{s:s, s:I, s:I, s:s}", "id", keys[i].id, "alg",
                             (json_int_t)keys[i].alg, "sign_count", (json_int_t)keys[i].sign_count,
                             "created_at", as_time_format(&m, keys[i].created_at)));
        as_db_close(&db);
        return print_json(json_pack("{s:s, s:o}", "user", user, "passkeys", a));
    }
    static const char *const names[] = {"--base-url", "--hours", NULL};
    if (only_opts(o, 3, names, usage_line)) return 1;
    const char *base = opt(o, 3, "--base-url");
    if (!base) base = getenv("AGENTSHOP_BASE_URL");
    const char *hours_s = opt(o, 3, "--hours");
    char *end = NULL;
    long hours = hours_s ? strtol(hours_s, &end, 10) : 24;
    if (hours_s && (!*hours_s || *end || hours < 1 || hours > 24 * 14))
        return die("user enrol: --hours must be a whole number from 1 to 336, not '%s'%s",
                   hours_s, NULL);
    if (base && strncmp(base, "http://", 7) != 0 && strncmp(base, "https://", 8) != 0)
        return die("user enrol: --base-url must be the API's absolute URL, such as "
                   "https://shop.example/v1 (AgentShopBaseURL), not '%s'%s",
                   base, NULL);
    if (ready(o, p, &db)) return 1;
    as_store st = as_db_store(&db);
    int64_t now = (int64_t)apr_time_sec(apr_time_now());
    const char *token = as_random_b64url(&m, 32);
    as_enrolment e = {as_random_id(&m, "enr_", 20, false), user,
                      as_sha256_hex(&m, token, strlen(token)), now, now + hours * 3600, 0};
    if (as_store_enrolment_insert(&st, &e) != AS_OK) return die("user enrol failed%s%s", NULL, NULL);
    as_db_close(&db);
    size_t bl = base ? strlen(base) : 0;
    while (bl && base[bl - 1] == '/')
        bl--;
    const char *path = as_printf(&m, "/enrol/%s?token=%s", e.id, token);
    return print_json(json_pack(
        "{s:s, s:s, s:s, s:s, s:s?, s:s}", "user", user, "enrolment_id", e.id, "expires_at",
        as_time_format(&m, e.expires_at), "path", path, "url",
        base ? as_printf(&m, "%.*s%s", (int)bl, base, path) : NULL, "note",
        base ? "Give this link to the person, never to an agent: it works once."
             : "Give the person the API's base URL (AgentShopBaseURL) followed by path; "
               "--base-url or AGENTSHOP_BASE_URL prints it whole. Never to an agent: it works "
               "once."));
}

static int cmd_order(const opts *o, apr_pool_t *p)
{
    as_mem m = as_db_pool_mem(p);
    const char *sub = o->argc > 1 ? o->argv[1] : "";
    int ship = strcmp(sub, "ship") == 0, deliver = strcmp(sub, "deliver") == 0;
    if (strcmp(sub, "list") == 0) return ctl_order_list(o, p);
    if (strcmp(sub, "show") == 0) return ctl_order_show(o, p);
    if ((!ship && !deliver) || o->argc < 3)
        return die("usage: order ship ID | order deliver ID [--at yyyy-mm-dd] | order list "
                   "[--status S] [--since T] | order show ID%s%s",
                   NULL, NULL);
    static const char *const names[] = {"--at", NULL};
    if (only_opts(o, 3, names, "order deliver ID [--at yyyy-mm-dd]")) return 1;
    const char *at_s = opt(o, 3, "--at");
    if (at_s && ship) return die("order ship takes no --at%s%s", NULL, NULL);
    int64_t now = (int64_t)time(NULL), at = now, day = 0;
    if (at_s) {
        if (!as_date_parse(at_s, &day))
            return die("order deliver: --at must be a date yyyy-mm-dd, not '%s'%s", at_s, NULL);
        at = day * 86400 + 12 * 3600;
        if (day > now / 86400) return die("order deliver: --at %s is in the future%s", at_s, NULL);
        if (at > now) at = now;
    }
    as_db db;
    if (ready(o, p, &db)) return 1;
    as_store st = as_db_store(&db);
    as_config cfg;
    as_config_defaults(&cfg);
    as_shop shop = {&m, &st, &cfg, now, ctl_log, NULL, NULL, false, NULL, NULL};
    const char *id = o->argv[2];
    as_staff_move mv = {id, deliver, at, at_s != NULL};
    as_order ord;
    as_problem why;
    switch (as_order_move_by_hand(&shop, &mv, &ord, &why)) {
    case AS_SHOP_DONE:
        break;
    case AS_SHOP_REFUSED:
        if (why.status == 404) return die("order %s: there is no order '%s'", sub, id);
        if (why.status == 409)
            return die(ship ? "order ship: order %s is %s; only a placed order can ship"
                            : "order deliver: order %s is %s; only a placed or shipped order "
                              "can be delivered",
                       id, as_order_state_name(ord.status));
        /* a delivery before the order was made, or before its last change */
        char last[AS_DATE_TEXT];
        as_date_text(last, ord.updated_at / 86400);
        return die("order deliver: --at %s is before the last change of order %s", at_s,
                   apr_pstrcat(p, id, " (", last, "): a delivery cannot come before it", NULL));
    case AS_SHOP_UNREADABLE:
        return die("order %s: cannot read it back%s", sub, NULL);
    default:
        return die("order %s failed%s", sub, NULL);
    }
    json_t *view = as_view_order(&m, &ord);
    as_db_close(&db);
    return print_json(view);
}

/* ---- checkpoint: the WAL copied into the database, under the writer lock ---- */

static int cmd_checkpoint(const opts *o, apr_pool_t *p)
{
    if (o->argc != 1) return die("usage: checkpoint%s%s", NULL, NULL);
    if (!is_sqlite(o)) return die("checkpoint: only a SQLite database has a WAL%s%s", NULL, NULL);
    as_db db;
    if (ready(o, p, &db)) return 1;
    int64_t frames = -1, done = -1;
    if (as_db_checkpoint(&db, &frames, &done) != 0)
        return die("checkpoint of %s failed%s", o->params, NULL);
    as_db_close(&db);
    return print_json(json_pack("{s:s, s:I, s:I}", "database", o->params, "wal_frames",
                                (json_int_t)frames, "checkpointed", (json_int_t)done));
}

static void usage(FILE *f, const opts *o)
{
    fputs("usage: agentshopctl [--driver sqlite3|pgsql] [--params STR] [--data DIR] COMMAND\n"
          "  init [--demo]     create the schema, or migrate an older one in place; --demo\n"
          "                    loads the demo catalogue into a database without one\n"
          "  setup [--user USER] [--signing-key FILE]\n"
          "                    as root, on an installed system: the database's directory\n"
          "                    (USER's, default www-data), the signing secret and the schema\n"
          "  key create --user USER | key revoke ID | key list [--user USER]\n"
          "  mandate create --user USER --categories a,b --per-order-eur N --monthly-eur N\n"
          "                 --confirm-above-eur N [--valid-until yyyy-mm-dd]\n"
          "  mandate revoke ID | mandate list [--user USER]\n"
          "  mandate show ID   with its spending this month and what is left of it\n"
          "  order ship ID | order deliver ID [--at yyyy-mm-dd]\n"
          "  order list [--status S] [--since T]   JSON Lines, one order a line, oldest\n"
          "                    first; S a status (placed, shipped...), T yyyy-mm-dd or\n"
          "                    yyyy-mm-ddThh:mm:ssZ (UTC): created at or after it\n"
          "  order show ID     the order as the API shows it, with its timeline and return\n"
          "  return list [--status refunded|pending_inspection] [--since T]   JSON Lines\n"
          "  offer set OFFER [--price-eur X] [--stock N]   the agent price (at most the\n"
          "                    retail price) and the units in stock; quotes keep theirs\n"
          "  user enrol USER [--base-url URL] [--hours N]   a one-time link on which the\n"
          "                    person registers a passkey (for approvals); for them only\n"
          "  user passkeys USER\n"
          "  user list         JSON Lines: every user id with its keys, mandates, orders\n"
          "  catalogue import FILE|- [--dry-run]   the catalogue feed (docs/catalogue.md):\n"
          "                    upserts, all or nothing; every rejected record named\n"
          "  catalogue export [FILE|-]   the catalogue as sold now, in the same format\n"
          "  catalogue generate --products N [--seed S]   (into a database without a catalogue)\n"
          "  checkpoint        SQLite: the WAL's frames copied into the database now, as\n"
          "                    httpd does every 64 writes, in turn with every writer\n"
          "Every command but init and setup needs an existing database with its schema.\n"
          "options:\n"
          "  --driver   apr_dbd driver (default sqlite3)\n",
          f);
    fprintf(f,
            "  --params   the DBDParams string: the SQLite file, or a PostgreSQL conninfo\n"
            "             (now %s, %s; env AGENTSHOP_DB when --params is absent)\n"
            "  --data     the demo catalogue's directory, of catalogue.jsonl\n"
            "             (now %s, %s; env AGENTSHOP_DATA)\n"
            "  --key-prefix  prefix of new agent keys, as AgentShopKeyPrefix (default agentshop)\n"
            "setup's signing secret defaults to %s\n",
            o->params, o->params_from, o->data, o->data_from, o->signing_key);
}

/* The option's value, else the environment's, else the compiled-in default;
 * *from says which. */
static const char *pick(apr_pool_t *p, const char *given, const char *flag, const char *env,
                        const char *def, const char **from)
{
    const char *e = getenv(env);
    if (given) {
        *from = apr_pstrcat(p, "from ", flag, NULL);
        return given;
    }
    if (e && *e) {
        *from = apr_pstrcat(p, "from ", env, NULL);
        return e;
    }
    *from = "the default of this agentshopctl";
    return beside_exe(p, def);
}

static void defaults(opts *o, apr_pool_t *p)
{
    o->params = pick(p, o->params, "--params", "AGENTSHOP_DB", AS_DEFAULT_DB, &o->params_from);
    o->data = pick(p, o->data, "--data", "AGENTSHOP_DATA", AS_DATADIR, &o->data_from);
    o->signing_key = beside_exe(p, AS_SIGNING_KEY);
}

static int run(opts *o, apr_pool_t *p, int argc, char **argv)
{
    int i = 1, help = 0;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            help = 1;
            continue;
        }
        if (i + 1 >= argc) return die("option %s needs a value%s", argv[i], NULL);
        if (strcmp(argv[i], "--driver") == 0)
            o->driver = argv[++i];
        else if (strcmp(argv[i], "--params") == 0)
            o->params = argv[++i];
        else if (strcmp(argv[i], "--data") == 0)
            o->data = argv[++i];
        else if (strcmp(argv[i], "--key-prefix") == 0)
            o->key_prefix = argv[++i];
        else
            return die("unknown option '%s'%s", argv[i], NULL);
    }
    defaults(o, p);
    if (help) {
        usage(stdout, o);
        return 0;
    }
    if (strcmp(o->driver, "sqlite3") != 0 && strcmp(o->driver, "pgsql") != 0)
        return die("--driver must be sqlite3 or pgsql, not '%s'%s", o->driver, NULL);
    if (i >= argc) {
        usage(stderr, o);
        return 2;
    }
    o->argc = argc - i;
    o->argv = argv + i;
    const char *cmd = o->argv[0];
    if (!is_sqlite(o) && strncmp(o->params_from, "the default", 11) == 0)
        return die("--driver pgsql needs --params CONNINFO (or AGENTSHOP_DB), e.g. "
                   "\"host=/run/postgresql dbname=shop\"%s%s",
                   NULL, NULL);
    if (strcmp(cmd, "init") == 0) return cmd_init(o, p);
    if (strcmp(cmd, "setup") == 0) return cmd_setup(o, p);
    if (strcmp(cmd, "key") == 0) return cmd_key(o, p);
    if (strcmp(cmd, "mandate") == 0) return cmd_mandate(o, p);
    if (strcmp(cmd, "order") == 0) return cmd_order(o, p);
    if (strcmp(cmd, "user") == 0) return cmd_user(o, p);
    if (strcmp(cmd, "catalogue") == 0) return cmd_catalogue(o, p);
    if (strcmp(cmd, "return") == 0) return ctl_return(o, p);
    if (strcmp(cmd, "offer") == 0) return ctl_offer(o, p);
    if (strcmp(cmd, "checkpoint") == 0) return cmd_checkpoint(o, p);
    return die("unknown command '%s' (see --help)%s", cmd, NULL);
}

int main(int argc, char **argv)
{
    opts o = {"sqlite3", NULL, NULL, "agentshop", NULL, NULL, NULL, 0, NULL};
    apr_pool_t *p;
    apr_app_initialize(&argc, (const char *const **)&argv, NULL);
    apr_pool_create(&p, NULL);
    int rc = run(&o, p, argc, argv);
    apr_pool_destroy(p);
    apr_terminate();
    return rc;
}
