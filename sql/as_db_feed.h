/* The catalogue feed into and out of the database (docs/catalogue.md):
 * agentshopctl catalogue import and export, and init --demo. */
#ifndef AS_DB_FEED_H
#define AS_DB_FEED_H

#include <jansson.h>
#include <stdio.h>

#include "as_db.h"
#include "as_feed.h"

/* Reads every record of in (named name in messages), checks them all, each
 * on its own and against each other and the database, and writes them in
 * one transaction: all or nothing. With dry_run the transaction is rolled
 * back after the writes (so every statement ran). With empty_only the file
 * is loaded only into a database without products (init --demo), else its
 * summary says the catalogue was kept.
 * APR_SUCCESS with *summary; APR_EINVAL when records were rejected (every
 * problem in probs, nothing written); APR_EGENERAL with *err otherwise. */
apr_status_t as_feed_import(as_db *db, FILE *in, const char *name, int dry_run, int empty_only,
                            as_feed_problems *probs, json_t **summary, const char **err);

/* The catalogue as sold now (what is withdrawn is left out), as feed records
 * in a fixed order: merchants, devices, then each product with its offers,
 * its measurement and its compatibility. *summary counts what was written. */
apr_status_t as_feed_export(as_db *db, FILE *out, json_t **summary, const char **err);

#endif
