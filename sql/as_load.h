/* Loading a catalogue from JSON data files (sql/demo/) into the database. */
#ifndef AS_LOAD_H
#define AS_LOAD_H

#include <jansson.h>

#include "as_db.h"

/* Loads merchants.json, devices.json and products.json from dir in one
 * transaction. Does nothing when products exist already (idempotent);
 * *summary says which. */
apr_status_t as_load_catalogue(as_db *db, const char *dir, json_t **summary, const char **err);

#endif
