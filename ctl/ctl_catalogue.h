/* agentshopctl catalogue import | export, and the demo catalogue of init --demo. */
#ifndef CTL_CATALOGUE_H
#define CTL_CATALOGUE_H

#include <stdio.h>

#include "ctl_common.h"

/* catalogue import FILE|- [--dry-run] | catalogue export [FILE|-] (argv[1]
 * says which). */
int ctl_catalogue_feed(const opts *o, apr_pool_t *p);
/* The demo catalogue (o->data/catalogue.jsonl, open as in) into a database
 * without products, through the import; 0 with *summary, else 1 (said). */
int ctl_demo_load(const opts *o, as_db *db, FILE *in, json_t **summary);

#endif
