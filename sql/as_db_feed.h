/* The catalogue feed into and out of the database (docs/catalogue.md):
 * agentshopctl catalogue import and export, and init --demo. */
#ifndef AS_DB_FEED_H
#define AS_DB_FEED_H

#include <jansson.h>
#include <stdio.h>

#include "as_db.h"
#include "as_feed_rec.h"

/* The feed's rules, core's, given by the caller (agentshopctl: as_feed_read
 * and as_feed_line, core/rules/as_feed.h; as_verification_status,
 * core/rules/as_verify.h): storage applies them, never includes them. */
typedef struct as_feed_rules {
    /* one line: true with *out, or false with its problems added */
    bool (*read)(as_mem *m, const char *text, size_t len, size_t line, as_feed_rec *out,
                 as_feed_problems *probs);
    /* a record as export's line, NULL when it cannot be encoded */
    char *(*line)(as_mem *m, json_t *rec);
    /* a product's verification from its spec rows */
    as_verif (*verification)(as_mem *m, const as_spec_row *rows, size_t n, bool measured,
                         const char **note);
} as_feed_rules;

/* Reads every record of in (named name in messages), checks them all, each
 * on its own and against each other and the database, and writes them in
 * one transaction: all or nothing. With dry_run the transaction is rolled
 * back after the writes (so every statement ran). With empty_only the file
 * is loaded only into a database without products (init --demo), else its
 * summary says the catalogue was kept.
 * APR_SUCCESS with *summary; APR_EINVAL when records were rejected (every
 * problem in probs, nothing written); APR_EGENERAL with *err otherwise. */
apr_status_t as_feed_import(as_db *db, const as_feed_rules *rules, FILE *in, const char *name,
                            int dry_run, int empty_only, as_feed_problems *probs, json_t **summary,
                            const char **err);

/* The catalogue as sold now (what is withdrawn is left out), as feed records
 * in a fixed order: merchants, devices, then each product with its offers,
 * its measurement and its compatibility. *summary counts what was written. */
apr_status_t as_feed_export(as_db *db, const as_feed_rules *rules, FILE *out, json_t **summary,
                            const char **err);

#endif
